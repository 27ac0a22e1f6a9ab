/* xhci_state.c — snapshots of a qemu-xhci controller (see usb.h): its
 * configuration space, operational registers, port status, enabled slots
 * and interrupter 0 with its event ring position. */
#include <stdio.h>
#include <string.h>

#include "devices/usb/xhci_internal.h"
#include "state/state.h"

/* ------------------------------------------------------------ snapshot */

#define XHCI_STATE_VERSION 1

static uint64_t enabled_slots(const struct xhci *x)
{
	uint64_t bits = 0;

	for (unsigned s = 1; s <= XHCI_SLOTS; s++)
		bits |= (uint64_t)x->slot_enabled[s] << (s - 1);
	return bits;
}

static void intr_save(const struct xhci_intr *in, struct state_writer *w)
{
	state_begin(w, "interrupter@0", XHCI_STATE_VERSION);
	state_put_u32(w, "iman", in->iman);
	state_put_u32(w, "imod", in->imod);
	state_put_u32(w, "erstsz", in->erstsz);
	state_put_u64(w, "erstba", in->erstba);
	state_put_u64(w, "erdp", in->erdp);
	state_put_u64(w, "segment", in->seg_base);
	state_put_u32(w, "segment-trbs", in->seg_trbs);
	state_put_u32(w, "enqueue", in->enq);
	state_put_u8(w, "cycle", in->pcs);
	state_put_u8(w, "ring-ok", in->ring_ok);
	state_end(w);
}

void xhci_save(struct xhci *x, struct state_writer *w, const char *name)
{
	state_begin(w, name, XHCI_STATE_VERSION);
	pci_dev_save(&x->pci, w);
	pthread_mutex_lock(&x->lock);
	state_put_u32(w, "ports", x->nports);
	state_put_u32(w, "usbcmd", x->usbcmd);
	state_put_u32(w, "usbsts", x->usbsts);
	state_put_u32(w, "dnctrl", x->dnctrl);
	state_put_u32(w, "config", x->config);
	state_put_u64(w, "dcbaap", x->dcbaap);
	state_put_u64(w, "command-dequeue", x->cmd_deq);
	state_put_u8(w, "command-cycle", x->cmd_ccs);
	state_put_u8(w, "command-running", x->cmd_running);
	state_put_u32(w, "mfindex", xhci_mfindex(x));
	state_put_u64(w, "slots-enabled", enabled_slots(x));
	state_put_bytes(w, "portsc", x->portsc, x->nports * sizeof(x->portsc[0]));
	intr_save(&x->intr, w);
	pthread_mutex_unlock(&x->lock);
	state_end(w);
}

static int intr_load(struct xhci_intr *in, const struct state_reader *r, const char *parent,
		     char *err, size_t errlen)
{
	char path[96];
	struct state_node n;
	uint8_t pcs, ok;

	snprintf(path, sizeof(path), "%s/interrupter@0", parent);
	if (state_node_open(&n, r, path, XHCI_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "iman", &in->iman) < 0 || state_get_u32(&n, "imod", &in->imod) < 0 ||
	    state_get_u32(&n, "erstsz", &in->erstsz) < 0 ||
	    state_get_u64(&n, "erstba", &in->erstba) < 0 ||
	    state_get_u64(&n, "erdp", &in->erdp) < 0 ||
	    state_get_u64(&n, "segment", &in->seg_base) < 0 ||
	    state_get_u32(&n, "segment-trbs", &in->seg_trbs) < 0 ||
	    state_get_u32(&n, "enqueue", &in->enq) < 0 || state_get_u8(&n, "cycle", &pcs) < 0 ||
	    state_get_u8(&n, "ring-ok", &ok) < 0)
		return -1;
	in->pcs = pcs;
	in->ring_ok = ok;
	/* what event_ring_setup would have accepted, and a place in it */
	if (in->ring_ok && (in->seg_trbs < 16 || in->seg_trbs > 4096 || in->enq >= in->seg_trbs ||
			    (in->seg_base & 63)))
		return state_node_fail(&n, "event ring of %u TRBs at %#llx, enqueue %u",
				       in->seg_trbs, (unsigned long long)in->seg_base, in->enq);
	return state_node_close(&n);
}

/* MFINDEX counts on from the saved microframe. */
static void rebase_mfindex(struct xhci *x, uint32_t frame)
{
	int64_t ns = (int64_t)frame * 125000;

	clock_gettime(CLOCK_MONOTONIC, &x->run_start);
	x->run_start.tv_sec -= ns / 1000000000;
	x->run_start.tv_nsec -= ns % 1000000000;
	if (x->run_start.tv_nsec < 0) {
		x->run_start.tv_nsec += 1000000000;
		x->run_start.tv_sec--;
	}
}

int xhci_load(struct xhci *x, const struct state_reader *r, const char *name, char *err,
	      size_t errlen)
{
	struct xhci v = {.nports = x->nports};
	struct state_node n;
	uint8_t ccs, running;
	uint32_t ports, frame;
	uint64_t slots;

	if (state_node_open(&n, r, name, XHCI_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "ports", &ports) < 0)
		return -1;
	if (ports != x->nports)
		return state_node_fail(&n, "%u ports, this controller has %u", ports, x->nports);
	if (state_get_u32(&n, "usbcmd", &v.usbcmd) < 0 ||
	    state_get_u32(&n, "usbsts", &v.usbsts) < 0 ||
	    state_get_u32(&n, "dnctrl", &v.dnctrl) < 0 ||
	    state_get_u32(&n, "config", &v.config) < 0 ||
	    state_get_u64(&n, "dcbaap", &v.dcbaap) < 0 ||
	    state_get_u64(&n, "command-dequeue", &v.cmd_deq) < 0 ||
	    state_get_u8(&n, "command-cycle", &ccs) < 0 ||
	    state_get_u8(&n, "command-running", &running) < 0 ||
	    state_get_u32(&n, "mfindex", &frame) < 0 ||
	    state_get_u64(&n, "slots-enabled", &slots) < 0 ||
	    state_get_bytes(&n, "portsc", v.portsc, ports * sizeof(v.portsc[0])) < 0 ||
	    intr_load(&v.intr, r, name, err, errlen) < 0 || pci_dev_load(&x->pci, &n) < 0 ||
	    state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&x->lock);
	x->usbcmd = v.usbcmd & CMD_MASK;
	x->usbsts = v.usbsts;
	x->dnctrl = v.dnctrl;
	x->config = v.config;
	x->dcbaap = v.dcbaap;
	x->cmd_deq = v.cmd_deq;
	x->cmd_ccs = ccs;
	x->cmd_running = running;
	for (unsigned s = 1; s <= XHCI_SLOTS; s++)
		x->slot_enabled[s] = slots >> (s - 1) & 1;
	memcpy(x->portsc, v.portsc, ports * sizeof(v.portsc[0]));
	x->intr = v.intr;
	x->irq_level = (x->intr.iman & IMAN_IP) && (x->intr.iman & IMAN_IE) &&
		       (x->usbcmd & CMD_INTE); /* the line itself came with pci-irq */
	rebase_mfindex(x, frame & 0x3fff);
	pthread_mutex_unlock(&x->lock);
	return 0;
}
