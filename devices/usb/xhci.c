/* xhci.c — QEMU's xHCI host controller (qemu-xhci, 1b36:000d) with its
 * USB 3 and USB 2 root hubs and nothing plugged in.
 *
 * BAR 0 (16 KiB) holds, as in QEMU: the capability registers with two
 * Supported Protocol capabilities at 0x20 (USB 2: ports p3+1..p3+p2) and
 * 0x30 (USB 3: ports 1..p3), the operational registers at 0x40 with the
 * port registers at 0x440, the runtime registers (MFINDEX, one
 * interrupter) at 0x1000 and the doorbells at 0x2000. The command ring
 * runs on the doorbell write: No Op, Enable Slot and Disable Slot
 * complete; a command that needs a device gets a TRB Error, since none
 * is attached. Events go to interrupter 0's one-segment event ring, with
 * MSI when enabled, else INTA. Ports read "powered, nothing connected"
 * (RxDetect). A ring in memory the guest does not have stops the
 * controller with Host System Error, as the specification has it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/usb/usb.h"

#include "devices/usb/xhci_internal.h"

/* ---------------------------------------------------------- interrupts */

/* The interrupter's line (lock held): pending, enabled, and the
 * controller's Interrupter Enable. *rising tells a new MSI is due. */
static bool intr_level(struct xhci *x, bool *rising)
{
	bool level = (x->intr.iman & IMAN_IP) && (x->intr.iman & IMAN_IE) && (x->usbcmd & CMD_INTE);

	*rising = level && !x->irq_level;
	x->irq_level = level;
	return level;
}

/* Unlock, then drive the line: the bus takes its own lock. */
static void unlock_and_signal(struct xhci *x)
{
	bool rising, level = intr_level(x, &rising);

	pthread_mutex_unlock(&x->lock);
	pci_irq_signal(&x->pci, x->msi_cap, level, rising);
}

static void ring_failed(struct xhci *x, const char *what)
{
	if (!x->ring_error_logged)
		fprintf(stderr, "vmm: qemu-xhci: %s outside guest RAM: Host System Error\n", what);
	x->ring_error_logged = true;
	x->usbsts |= STS_HSE | STS_HCH;
	x->usbcmd &= ~CMD_RS;
	x->cmd_running = false;
}

/* --------------------------------------------------------- event ring */

/* Read ERST entry 0 (the only one: ERST Max is 0). */
static void event_ring_setup(struct xhci *x)
{
	struct xhci_intr *in = &x->intr;
	uint8_t e[16];

	in->ring_ok = false;
	in->enq = 0;
	in->pcs = true;
	if (!in->erstsz)
		return;
	if (pci_dma_read(&x->pci, in->erstba, e, sizeof(e)) < 0) {
		ring_failed(x, "the event ring segment table");
		return;
	}
	in->seg_base = io_data_get(e, 8) & ~63ull;
	in->seg_trbs = (uint32_t)io_data_get(e + 8, 4) & 0xffff;
	in->ring_ok = in->seg_trbs >= 16 && in->seg_trbs <= 4096;
}

static bool event_ring_full(const struct xhci_intr *in)
{
	uint64_t deq = in->erdp & ~15ull;
	uint32_t next = (in->enq + 1) % in->seg_trbs;

	return deq == in->seg_base + (uint64_t)next * TRB_SIZE;
}

/* Post one event TRB (lock held) and raise the interrupter. */
static void post_event(struct xhci *x, uint64_t param, uint32_t status, uint32_t control)
{
	struct xhci_intr *in = &x->intr;
	uint8_t t[TRB_SIZE];

	if (!in->ring_ok || event_ring_full(in))
		return; /* nowhere to put it: dropped, as a full ring does */
	io_data_put(t, 8, param);
	io_data_put(t + 8, 4, status);
	io_data_put(t + 12, 4, control | (in->pcs ? TRB_CYCLE : 0));
	if (pci_dma_write(&x->pci, in->seg_base + (uint64_t)in->enq * TRB_SIZE, t, sizeof(t)) < 0) {
		ring_failed(x, "the event ring");
		return;
	}
	if (++in->enq == in->seg_trbs) {
		in->enq = 0;
		in->pcs = !in->pcs;
	}
	in->iman |= IMAN_IP;
	in->erdp |= ERDP_EHB;
	x->usbsts |= STS_EINT;
}

/* ------------------------------------------------------- command ring */

static uint32_t enable_slot(struct xhci *x, unsigned *slot)
{
	for (unsigned s = 1; s <= XHCI_SLOTS; s++) {
		if (!x->slot_enabled[s]) {
			x->slot_enabled[s] = true;
			*slot = s;
			return CC_SUCCESS;
		}
	}
	return CC_NO_SLOTS;
}

static uint32_t run_command(struct xhci *x, const struct trb *t, unsigned *slot)
{
	unsigned id = t->control >> 24;

	*slot = 0;
	switch (TRB_TYPE(t->control)) {
	case CMD_NOOP:
		return CC_SUCCESS;
	case CMD_ENABLE_SLOT:
		return enable_slot(x, slot);
	case CMD_DISABLE_SLOT:
		*slot = id;
		if (id < 1 || id > XHCI_SLOTS || !x->slot_enabled[id])
			return CC_SLOT_NOT_ENABLED;
		x->slot_enabled[id] = false;
		return CC_SUCCESS;
	default:
		/* every other command addresses a device, and none is attached */
		*slot = id <= XHCI_SLOTS ? id : 0;
		return CC_TRB_ERROR;
	}
}

static int read_trb(struct xhci *x, uint64_t addr, struct trb *t)
{
	uint8_t b[TRB_SIZE];

	if (pci_dma_read(&x->pci, addr, b, sizeof(b)) < 0)
		return -1;
	t->param = io_data_get(b, 8);
	t->status = (uint32_t)io_data_get(b + 8, 4);
	t->control = (uint32_t)io_data_get(b + 12, 4);
	return 0;
}

/* Doorbell 0: run what the guest queued, up to a bound so that a ring of
 * Link TRBs pointing at each other cannot hold the vCPU. */
static void process_commands(struct xhci *x)
{
	x->cmd_running = true;
	for (unsigned n = 0; n < CMD_RING_BOUND && (x->usbcmd & CMD_RS); n++) {
		struct trb t;
		unsigned slot;
		uint32_t cc;

		if (read_trb(x, x->cmd_deq, &t) < 0) {
			ring_failed(x, "the command ring");
			return;
		}
		if (!(t.control & TRB_CYCLE) != !x->cmd_ccs)
			return; /* the guest has not queued this one yet */
		if (TRB_TYPE(t.control) == TRB_LINK) {
			x->cmd_deq = t.param & ~15ull;
			if (t.control & LINK_TOGGLE)
				x->cmd_ccs = !x->cmd_ccs;
			continue;
		}
		cc = run_command(x, &t, &slot);
		post_event(x, x->cmd_deq, cc << 24,
			   EV_COMMAND_COMPLETE << 10 | (uint32_t)slot << 24);
		x->cmd_deq += TRB_SIZE;
	}
}

/* ----------------------------------------------------------- registers */

static void xhci_reset_regs(struct xhci *x)
{
	x->usbcmd = 0;
	x->usbsts = STS_HCH;
	x->dnctrl = x->config = 0;
	x->dcbaap = x->cmd_deq = 0;
	x->cmd_ccs = x->cmd_running = false;
	memset(x->slot_enabled, 0, sizeof(x->slot_enabled));
	for (unsigned i = 0; i < x->nports; i++)
		x->portsc[i] = PORTSC_PP | PLS_RX_DETECT << PORTSC_PLS_SHIFT;
	memset(&x->intr, 0, sizeof(x->intr));
	x->intr.pcs = true;
	clock_gettime(CLOCK_MONOTONIC, &x->run_start);
}

uint32_t xhci_mfindex(const struct xhci *x)
{
	struct timespec now;
	int64_t ns;

	if (!(x->usbcmd & CMD_RS))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (now.tv_sec - x->run_start.tv_sec) * 1000000000ll + now.tv_nsec - x->run_start.tv_nsec;
	return (uint32_t)(ns / 125000) & 0x3fff; /* 125 us microframes */
}

static uint32_t cap_read(const struct xhci *x, unsigned off)
{
	switch (off) {
	case CAP_LENGTH_VERSION:
		return XHCI_VERSION << 16 | OP_BASE;
	case CAP_HCSPARAMS1:
		return x->nports << 24 | XHCI_INTRS << 8 | XHCI_SLOTS;
	case CAP_HCCPARAMS1:
		return (XECP_BASE / 4) << 16 | HCC_AC64;
	case CAP_DBOFF:
		return DB_BASE;
	case CAP_RTSOFF:
		return RT_BASE;
	case XECP_BASE: /* USB 2, next capability 4 dwords on */
		return 2u << 24 | 4u << 8 | XECP_PROTOCOL;
	case XECP_BASE + 0x10: /* USB 3, the last capability */
		return 3u << 24 | XECP_PROTOCOL;
	case XECP_BASE + 0x04:
	case XECP_BASE + 0x14:
		return PROTOCOL_NAME_USB;
	case XECP_BASE + 0x08:
		return x->p2 << 8 | (x->p3 + 1);
	case XECP_BASE + 0x18:
		return x->p3 << 8 | 1;
	default:
		return 0; /* HCSPARAMS2/3 and HCCPARAMS2: nothing optional */
	}
}

static uint32_t op_read(const struct xhci *x, unsigned off)
{
	switch (off) {
	case OP_USBCMD:
		return x->usbcmd;
	case OP_USBSTS:
		return x->usbsts;
	case OP_PAGESIZE:
		return 1; /* 4 KiB */
	case OP_DNCTRL:
		return x->dnctrl;
	case OP_CRCR:
		return x->cmd_running ? CRCR_CRR : 0; /* the pointer reads 0 */
	case OP_DCBAAP:
		return (uint32_t)x->dcbaap;
	case OP_DCBAAP + 4:
		return (uint32_t)(x->dcbaap >> 32);
	case OP_CONFIG:
		return x->config;
	default:
		return 0;
	}
}

static void write_usbcmd(struct xhci *x, uint32_t v)
{
	if (v & CMD_HCRST) {
		xhci_reset_regs(x);
		return;
	}
	if ((v & CMD_RS) && !(x->usbcmd & CMD_RS) && !(x->usbsts & STS_HSE)) {
		x->usbsts &= ~STS_HCH;
		clock_gettime(CLOCK_MONOTONIC, &x->run_start);
	} else if (!(v & CMD_RS)) {
		x->usbsts |= STS_HCH;
		x->cmd_running = false;
	}
	if (v & CMD_CRS)
		x->usbsts |= STS_SRE; /* no saved state to restore: the driver starts over */
	else if (v & CMD_CSS)
		x->usbsts &= ~STS_SRE;
	x->usbcmd = v & CMD_MASK;
	if (x->usbsts & STS_HSE)
		x->usbcmd &= ~CMD_RS;
}

static void write_crcr(struct xhci *x, unsigned off, uint32_t v)
{
	if (x->cmd_running) {
		/* Command Stop / Abort: nothing is ever in flight, so stop at once */
		if (off == OP_CRCR && (v & (CRCR_CS | CRCR_CA))) {
			x->cmd_running = false;
			post_event(x, x->cmd_deq, CC_COMMAND_RING_STOPPED << 24,
				   EV_COMMAND_COMPLETE << 10);
		}
		return;
	}
	if (off == OP_CRCR) {
		x->cmd_deq = (x->cmd_deq & ~0xffffffffull) | (v & ~63u);
		x->cmd_ccs = v & CRCR_RCS;
	} else {
		x->cmd_deq = (x->cmd_deq & 0xffffffffull) | (uint64_t)v << 32;
	}
}

static void op_write(struct xhci *x, unsigned off, uint32_t v)
{
	switch (off) {
	case OP_USBCMD:
		write_usbcmd(x, v);
		break;
	case OP_USBSTS:
		x->usbsts &= ~(v & STS_W1C);
		break;
	case OP_DNCTRL:
		x->dnctrl = v & 0xffff;
		break;
	case OP_CRCR:
	case OP_CRCR + 4:
		write_crcr(x, off, v);
		break;
	case OP_DCBAAP:
		x->dcbaap = (x->dcbaap & ~0xffffffffull) | (v & ~63u);
		break;
	case OP_DCBAAP + 4:
		x->dcbaap = (x->dcbaap & 0xffffffffull) | (uint64_t)v << 32;
		break;
	case OP_CONFIG:
		x->config = v & 0xff;
		break;
	default:
		break;
	}
}

/* An empty port: reset and enable have nothing to act on; the driver
 * may clear change bits, power it, choose its wake events and ask for
 * U0 or U3 (neither reachable from RxDetect). */
static void port_write(struct xhci *x, unsigned port, uint32_t v)
{
	uint32_t sc = x->portsc[port];

	sc &= ~(v & PORTSC_W1C);
	sc &= ~PORTSC_RW;
	sc |= v & PORTSC_RW;
	x->portsc[port] = sc;
}

static uint32_t rt_read(const struct xhci *x, unsigned off)
{
	const struct xhci_intr *in = &x->intr;

	switch (off) {
	case RT_MFINDEX:
		return xhci_mfindex(x);
	case RT_IMAN:
		return in->iman;
	case RT_IMOD:
		return in->imod;
	case RT_ERSTSZ:
		return in->erstsz;
	case RT_ERSTBA:
		return (uint32_t)in->erstba;
	case RT_ERSTBA + 4:
		return (uint32_t)(in->erstba >> 32);
	case RT_ERDP:
		return (uint32_t)in->erdp;
	case RT_ERDP + 4:
		return (uint32_t)(in->erdp >> 32);
	default:
		return 0;
	}
}

static void write_erdp_low(struct xhci *x, uint32_t v)
{
	struct xhci_intr *in = &x->intr;
	uint32_t ehb = (uint32_t)in->erdp & ERDP_EHB;

	if (v & ERDP_EHB)
		ehb = 0;
	in->erdp = (in->erdp & ~0xffffffffull) | (v & ~(uint32_t)ERDP_EHB) | ehb;
	/* events the handler has not reached yet interrupt again */
	if ((v & ERDP_EHB) && in->ring_ok &&
	    (in->erdp & ~15ull) != in->seg_base + (uint64_t)in->enq * TRB_SIZE) {
		in->iman |= IMAN_IP;
		in->erdp |= ERDP_EHB;
	}
}

static void rt_write(struct xhci *x, unsigned off, uint32_t v)
{
	struct xhci_intr *in = &x->intr;

	switch (off) {
	case RT_IMAN:
		if (v & IMAN_IP)
			in->iman &= ~IMAN_IP;
		in->iman = (in->iman & ~IMAN_IE) | (v & IMAN_IE);
		break;
	case RT_IMOD:
		in->imod = v;
		break;
	case RT_ERSTSZ:
		in->erstsz = v & 0xffff;
		break;
	case RT_ERSTBA:
		in->erstba = (in->erstba & ~0xffffffffull) | (v & ~63u);
		break;
	case RT_ERSTBA + 4: /* the high half completes the address */
		in->erstba = (in->erstba & 0xffffffffull) | (uint64_t)v << 32;
		event_ring_setup(x);
		break;
	case RT_ERDP:
		write_erdp_low(x, v);
		break;
	case RT_ERDP + 4:
		in->erdp = (in->erdp & 0xffffffffull) | (uint64_t)v << 32;
		break;
	default:
		break;
	}
}

static void doorbell_write(struct xhci *x, unsigned off, uint32_t v)
{
	if (!(x->usbcmd & CMD_RS))
		return;
	if (off == 0 && v == 0)
		process_commands(x);
	/* slot doorbells: no slot has an endpoint to run */
}

static uint32_t bar_read32(struct xhci *x, unsigned off)
{
	unsigned port_end = OP_BASE + OP_PORTS + x->nports * PORT_STRIDE;

	if (off < OP_BASE)
		return cap_read(x, off);
	if (off >= OP_BASE + OP_PORTS && off < port_end)
		return (off - OP_BASE - OP_PORTS) % PORT_STRIDE
			       ? 0
			       : x->portsc[(off - OP_BASE - OP_PORTS) / PORT_STRIDE];
	if (off < RT_BASE)
		return op_read(x, off - OP_BASE);
	if (off < RT_BASE + RT_INTR0 + RT_INTR_SIZE)
		return rt_read(x, off - RT_BASE);
	return 0; /* doorbells read 0 */
}

static void bar_write32(struct xhci *x, unsigned off, uint32_t v)
{
	unsigned port_end = OP_BASE + OP_PORTS + x->nports * PORT_STRIDE;

	if (off < OP_BASE)
		return;
	if (off >= OP_BASE + OP_PORTS && off < port_end) {
		if ((off - OP_BASE - OP_PORTS) % PORT_STRIDE == 0)
			port_write(x, (off - OP_BASE - OP_PORTS) / PORT_STRIDE, v);
	} else if (off < RT_BASE) {
		op_write(x, off - OP_BASE, v);
	} else if (off < DB_BASE) {
		rt_write(x, off - RT_BASE, v);
	} else if (off <= DB_BASE + 4 * XHCI_SLOTS) {
		doorbell_write(x, off - DB_BASE, v);
	}
}

/* 64-bit accesses are two 32-bit ones, low half first (what a driver's
 * lo_hi_writeq does); smaller ones read their part of the dword. */
static void xhci_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct xhci *x = opaque;
	unsigned base = (unsigned)off & ~3u;
	uint64_t v;

	pthread_mutex_lock(&x->lock);
	v = bar_read32(x, base);
	if (size == 8)
		v |= (uint64_t)bar_read32(x, base + 4) << 32;
	else
		v >>= 8 * (off & 3);
	pthread_mutex_unlock(&x->lock);
	io_data_put(data, size, v);
}

static void xhci_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct xhci *x = opaque;
	uint64_t v = io_data_get(data, size);

	if (size < 4 || (off & 3))
		return; /* the specification allows dword and qword accesses only */
	pthread_mutex_lock(&x->lock);
	bar_write32(x, (unsigned)off, (uint32_t)v);
	if (size == 8)
		bar_write32(x, (unsigned)off + 4, (uint32_t)(v >> 32));
	unlock_and_signal(x);
}

static const struct io_ops xhci_ops = {.read = xhci_read, .write = xhci_write};

static void xhci_reset(void *opaque)
{
	struct xhci *x = opaque;

	pthread_mutex_lock(&x->lock);
	xhci_reset_regs(x);
	unlock_and_signal(x);
}

struct xhci *xhci_new(struct dev_host *host, struct pci_bus *bus, uint8_t devfn, unsigned p2,
		      unsigned p3)
{
	struct xhci *x;

	if (p2 < 1 || p2 > XHCI_MAX_PORTS_PER_PROTO || p3 < 1 || p3 > XHCI_MAX_PORTS_PER_PROTO)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->host = host;
	x->p2 = p2;
	x->p3 = p3;
	x->nports = p2 + p3;
	pthread_mutex_init(&x->lock, NULL);
	xhci_reset_regs(x);
	pci_dev_init(&x->pci, "qemu-xhci", 0x1b36, 0x000d, 0x0c0330, 0x01);
	x->pci.opaque = x;
	x->pci.cfg[0x3d] = 1;	 /* INTA */
	x->pci.cfg[0x60] = 0x30; /* Serial Bus Release Number: USB 3.0 */
	x->pci.cfg[0x61] = 0x20; /* Frame Length Adjustment: 60000 clocks */
	pci_dev_set_bar(&x->pci, 0, XHCI_BAR_SIZE, false, &xhci_ops, x);
	x->msi_cap = pci_msi_cap_add(&x->pci);
	if (!x->msi_cap || pci_bus_add(bus, &x->pci, devfn) < 0) {
		pthread_mutex_destroy(&x->lock);
		free(x);
		return NULL;
	}
	dev_on_reset(host, xhci_reset, x);
	return x;
}

void xhci_free(struct xhci *x)
{
	if (!x)
		return;
	pci_bus_remove(&x->pci);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

struct pci_dev *xhci_pci(struct xhci *x)
{
	return &x->pci;
}
