/* uhci.c — the PIIX3's USB 1.1 host controller (piix3-usb-uhci, 8086:7020)
 * with its two-port root hub and nothing plugged in.
 *
 * Registers (32-byte I/O BAR 4): USBCMD 0x00, USBSTS 0x02 (write 1 to
 * clear), USBINTR 0x04, FRNUM 0x06, FRBASEADD 0x08 (32-bit), SOFMOD 0x0c
 * (8-bit), PORTSC1/2 0x10/0x12. Linux counts ports by reading PORTSC
 * registers until one lacks the always-one bit 7, so the rest of the BAR
 * reads 0. With no device on either port there is no transfer to run:
 * the controller does not walk the frame list, and FRNUM counts the
 * milliseconds since Run/Stop was set (drivers read it to time things).
 * It never interrupts: every interrupt source needs a device. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/usb/usb.h"
#include "state/state.h"

#define UHCI_BAR 4
#define UHCI_BAR_SIZE 32
#define UHCI_PORTS 2

#define CMD_RS 0x0001u
#define CMD_HCRESET 0x0002u
#define CMD_GRESET 0x0004u
#define CMD_MASK 0x00ffu
#define STS_HCH 0x0020u
#define STS_W1C 0x001fu
#define INTR_MASK 0x000fu
#define FRNUM_MASK 0x07ffu
#define PORT_ALWAYS_ONE 0x0080u
/* what a driver may set on an empty port: resume detect, reset, suspend */
#define PORT_RW (0x0040u | 0x0200u | 0x1000u)

#define PCI_SBRN 0x60
#define PCI_LEGSUP 0xc0
#define LEGSUP_DEFAULT 0x2000u	/* PIRQ enable, as after the BIOS */
#define LEGSUP_WRITABLE 0x20bfu /* neither the read-only nor the write-1-to-clear bits */

struct uhci {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	uint16_t cmd, sts, intr, frnum, portsc[UHCI_PORTS];
	uint32_t frbase;
	uint8_t sofmod;
	struct timespec run_start; /* when Run/Stop was set: FRNUM counts from here */
};

static uint64_t ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t->tv_sec) * 1000 +
	       (uint64_t)((now.tv_nsec - t->tv_nsec) / 1000000);
}

static uint16_t current_frame(const struct uhci *u)
{
	if (!(u->cmd & CMD_RS))
		return u->frnum;
	return (uint16_t)((u->frnum + ms_since(&u->run_start)) & FRNUM_MASK);
}

static void uhci_reset_regs(struct uhci *u)
{
	u->cmd = 0;
	u->sts = STS_HCH;
	u->intr = 0;
	u->frnum = 0;
	u->frbase = 0;
	u->sofmod = 0x40; /* 1 ms frames */
	for (unsigned i = 0; i < UHCI_PORTS; i++)
		u->portsc[i] = PORT_ALWAYS_ONE;
}

static void write_cmd(struct uhci *u, uint16_t v)
{
	if (v & (CMD_HCRESET | CMD_GRESET)) {
		/* both resets finish at once; GRESET stays set until cleared */
		uhci_reset_regs(u);
		u->cmd = v & CMD_GRESET;
		return;
	}
	if ((v & CMD_RS) && !(u->cmd & CMD_RS)) {
		clock_gettime(CLOCK_MONOTONIC, &u->run_start);
		u->sts &= (uint16_t)~STS_HCH;
	} else if (!(v & CMD_RS) && (u->cmd & CMD_RS)) {
		u->frnum = current_frame(u);
		u->sts |= STS_HCH;
	}
	u->cmd = v & CMD_MASK;
}

static uint16_t reg_read16(struct uhci *u, unsigned off)
{
	switch (off) {
	case 0x00:
		return u->cmd;
	case 0x02:
		return u->sts;
	case 0x04:
		return u->intr;
	case 0x06:
		return current_frame(u);
	case 0x08:
		return (uint16_t)u->frbase;
	case 0x0a:
		return (uint16_t)(u->frbase >> 16);
	case 0x0c:
		return u->sofmod;
	case 0x10:
	case 0x12:
		return u->portsc[(off - 0x10) / 2];
	default:
		return 0;
	}
}

static void reg_write16(struct uhci *u, unsigned off, uint16_t v)
{
	switch (off) {
	case 0x00:
		write_cmd(u, v);
		break;
	case 0x02:
		u->sts &= (uint16_t) ~(v & STS_W1C);
		break;
	case 0x04:
		u->intr = v & INTR_MASK;
		break;
	case 0x06:
		if (u->sts & STS_HCH) /* only a halted controller takes a frame number */
			u->frnum = v & FRNUM_MASK;
		break;
	case 0x08:
		u->frbase = (u->frbase & 0xffff0000u) | (v & 0xf000u);
		break;
	case 0x0a:
		u->frbase = (u->frbase & 0xffffu) | (uint32_t)v << 16;
		break;
	case 0x0c:
		u->sofmod = (uint8_t)(v & 0x7f);
		break;
	case 0x10:
	case 0x12:
		/* nothing connected: enable, and the change bits, stay 0 */
		u->portsc[(off - 0x10) / 2] = PORT_ALWAYS_ONE | (v & PORT_RW);
		break;
	default:
		break;
	}
}

static void uhci_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct uhci *u = opaque;
	unsigned reg = (unsigned)off & ~1u;
	uint64_t v;

	pthread_mutex_lock(&u->lock);
	v = reg_read16(u, reg);
	if (size == 4)
		v |= (uint64_t)reg_read16(u, reg + 2) << 16;
	else if (size == 1)
		v >>= 8 * (off & 1);
	pthread_mutex_unlock(&u->lock);
	io_data_put(data, size, v);
}

static void uhci_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct uhci *u = opaque;
	unsigned reg = (unsigned)off & ~1u;
	uint32_t v = (uint32_t)io_data_get(data, size);

	pthread_mutex_lock(&u->lock);
	if (size == 1) {
		/* a byte of a word register: keep the other byte, except in the
		 * write-1-to-clear status register */
		uint16_t cur = reg == 0x02 ? 0 : reg_read16(u, reg);
		unsigned shift = 8 * (off & 1);

		v = (cur & ~(0xffu << shift)) | (v & 0xff) << shift;
		reg_write16(u, reg, (uint16_t)v);
	} else {
		reg_write16(u, reg, (uint16_t)v);
		if (size == 4)
			reg_write16(u, reg + 2, (uint16_t)(v >> 16));
	}
	pthread_mutex_unlock(&u->lock);
}

static const struct io_ops uhci_ops = {.read = uhci_read, .write = uhci_write};

static void uhci_reset(void *opaque)
{
	struct uhci *u = opaque;

	pthread_mutex_lock(&u->lock);
	uhci_reset_regs(u);
	pthread_mutex_unlock(&u->lock);
}

struct uhci *uhci_new(struct dev_host *host, struct pci_bus *bus, uint8_t devfn)
{
	struct uhci *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->host = host;
	pthread_mutex_init(&u->lock, NULL);
	uhci_reset_regs(u);
	pci_dev_init(&u->pci, "piix3-usb-uhci", 0x8086, 0x7020, 0x0c0300, 0x01);
	u->pci.opaque = u;
	u->pci.cfg[0x3d] = 4;	     /* INTD, as on the PIIX3 */
	u->pci.cfg[PCI_SBRN] = 0x10; /* USB 1.0 */
	io_data_put(&u->pci.cfg[PCI_LEGSUP], 2, LEGSUP_DEFAULT);
	io_data_put(&u->pci.wmask[PCI_LEGSUP], 2, LEGSUP_WRITABLE);
	pci_dev_set_bar(&u->pci, UHCI_BAR, UHCI_BAR_SIZE, true, &uhci_ops, u);
	if (pci_bus_add(bus, &u->pci, devfn) < 0) {
		pthread_mutex_destroy(&u->lock);
		free(u);
		return NULL;
	}
	dev_on_reset(host, uhci_reset, u);
	return u;
}

void uhci_free(struct uhci *u)
{
	if (!u)
		return;
	pci_bus_remove(&u->pci);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

struct pci_dev *uhci_pci(struct uhci *u)
{
	return &u->pci;
}

/* ------------------------------------------------------------ snapshot */

#define UHCI_STATE_VERSION 1

void uhci_save(struct uhci *u, struct state_writer *w, const char *name)
{
	state_begin(w, name, UHCI_STATE_VERSION);
	pci_dev_save(&u->pci, w);
	pthread_mutex_lock(&u->lock);
	state_put_u16(w, "usbcmd", u->cmd);
	state_put_u16(w, "usbsts", u->sts);
	state_put_u16(w, "usbintr", u->intr);
	state_put_u16(w, "frnum", current_frame(u));
	state_put_u32(w, "frbaseadd", u->frbase);
	state_put_u8(w, "sofmod", u->sofmod);
	state_put_bytes(w, "portsc", u->portsc, sizeof(u->portsc));
	pthread_mutex_unlock(&u->lock);
	state_end(w);
}

int uhci_load(struct uhci *u, const struct state_reader *r, const char *name, char *err,
	      size_t errlen)
{
	struct state_node n;
	uint16_t cmd, sts, intr, frnum, portsc[UHCI_PORTS];
	uint32_t frbase;
	uint8_t sofmod;

	if (state_node_open(&n, r, name, UHCI_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u16(&n, "usbcmd", &cmd) < 0 || state_get_u16(&n, "usbsts", &sts) < 0 ||
	    state_get_u16(&n, "usbintr", &intr) < 0 || state_get_u16(&n, "frnum", &frnum) < 0 ||
	    state_get_u32(&n, "frbaseadd", &frbase) < 0 ||
	    state_get_u8(&n, "sofmod", &sofmod) < 0 ||
	    state_get_bytes(&n, "portsc", portsc, sizeof(portsc)) < 0)
		return -1;
	for (unsigned i = 0; i < UHCI_PORTS; i++)
		if (!(portsc[i] & PORT_ALWAYS_ONE) || (portsc[i] & ~(PORT_ALWAYS_ONE | PORT_RW)))
			return state_node_fail(&n, "port %u status %#x: not an empty port", i,
					       portsc[i]);
	if (pci_dev_load(&u->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&u->lock);
	u->cmd = cmd & CMD_MASK;
	u->sts = sts;
	u->intr = intr & INTR_MASK;
	u->frnum = frnum & FRNUM_MASK;
	u->frbase = frbase & ~0xfffu;
	u->sofmod = sofmod;
	memcpy(u->portsc, portsc, sizeof(portsc));
	clock_gettime(CLOCK_MONOTONIC, &u->run_start); /* FRNUM counts on from frnum */
	pthread_mutex_unlock(&u->lock);
	return 0;
}
