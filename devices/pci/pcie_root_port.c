/* pcie_root_port.c — the generic PCIe root port (1b36:000c) of QEMU's q35.
 *
 * A type 1 (PCI-to-PCI bridge) header: primary/secondary/subordinate bus
 * numbers (0x18-0x1a), which the firmware or the OS assigns as on real
 * hardware and by which configuration cycles reach the bus behind it; the
 * I/O, memory and prefetchable windows (0x1c-0x31), kept as written (BARs
 * behind the port decode wherever they are programmed: vmm has one flat
 * address space); bridge control (0x3e). Then the PCI Express capability
 * at 0x40 (a root port with a slot) and an MSI capability for its one
 * interrupt (INTA while MSI is off).
 *
 * The slot does native hot-plug as the PCIe base specification (6.7)
 * describes it and Linux's pciehp drives it: an attention button, a power
 * controller, power and attention indicators, presence detect and data
 * link layer state reporting, command completion. Slot status change bits
 * are write-one-to-clear; the hot-plug interrupt is the OR of the enabled
 * change bits while HPIE is set, sent as one MSI when it becomes true (so
 * the guest clears every bit before the next one comes). The link is up
 * while a device is present and the slot powered. A host removal request
 * (device_del) presses the button; the device goes once the guest has
 * powered the slot off with its power indicator off. No AER or ACS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/pcie_root_port.h"
#include "state/state.h"

#define PCIE_CAP_LEN 0x3c
/* offsets inside the PCIe capability */
#define EXP_FLAGS 0x02
#define EXP_DEVCAP 0x04
#define EXP_DEVCTL 0x08
#define EXP_LNKCAP 0x0c
#define EXP_LNKCTL 0x10
#define EXP_LNKSTA 0x12
#define EXP_SLTCAP 0x14
#define EXP_SLTCTL 0x18
#define EXP_SLTSTA 0x1a
#define EXP_RTCTL 0x1c
#define EXP_DEVCTL2 0x28
#define EXP_LNKCAP2 0x2c
#define EXP_LNKCTL2 0x30

#define EXP_TYPE_ENDPOINT 0x0
#define EXP_TYPE_ROOT_PORT 0x4
#define EXP_FLAGS_SLOT 0x0100
#define LNK_SPEED_2_5 1u
#define LNK_WIDTH_X1 (1u << 4)
#define LNKCAP_DLLLARC (1u << 20)
#define LNKSTA_DLLLA (1u << 13)
#define SLTCAP_ABP (1u << 0)
#define SLTCAP_PCP (1u << 1)
#define SLTCAP_AIP (1u << 3)
#define SLTCAP_PIP (1u << 4)
#define SLTCAP_HPC (1u << 6)
/* slot control: ABPE, PFDE, MRLSCE, PDCE and CCIE enable the status
 * change bits at the same positions; DLLSCE enables DLLSC (bit 8) */
#define SLTCTL_ENABLES 0x001f
#define SLTCTL_HPIE (1u << 5)
#define SLTCTL_AIC_OFF 0x00c0
#define SLTCTL_PIC 0x0300
#define SLTCTL_PIC_ON 0x0100
#define SLTCTL_PIC_BLINK 0x0200
#define SLTCTL_PIC_OFF 0x0300
#define SLTCTL_PCC (1u << 10) /* set: power off */
#define SLTCTL_DLLSCE (1u << 12)
#define SLTSTA_ABP (1u << 0)
#define SLTSTA_PDC (1u << 3)
#define SLTSTA_CC (1u << 4)
#define SLTSTA_PDS (1u << 6)
#define SLTSTA_DLLSC (1u << 8)
#define SLTSTA_CHANGES 0x011f /* ABP, PFD, MRLSC, PDC, CC, DLLSC: RW1C */

struct pcie_root_port {
	struct pci_dev pci;
	struct pci_bus *secondary;
	unsigned exp; /* the PCIe capability's offset */
	unsigned msi; /* the MSI capability's */
	/* under the bus lock */
	uint16_t sltsta;
	bool irq_level;	       /* the hot-plug interrupt condition */
	bool irq_rose;	       /* it became true and is not signalled yet */
	bool unplug_requested; /* the host pressed the button to remove */
	bool eject_due;	       /* the guest powered that slot off */
	void (*eject)(void *opaque, struct pcie_root_port *rp);
	void *eject_opaque;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* The capability's fields every PCIe function has (version 2). */
static unsigned add_exp_cap(struct pci_dev *d, unsigned type, bool slot)
{
	unsigned c = pci_dev_add_cap(d, PCI_CAP_ID_EXP, PCIE_CAP_LEN);

	if (!c)
		return 0;
	put16(&d->cfg[c + EXP_FLAGS], (uint16_t)(2 | type << 4 | (slot ? EXP_FLAGS_SLOT : 0)));
	put32(&d->cfg[c + EXP_DEVCAP], 1u << 15); /* role-based error reporting */
	put16(&d->wmask[c + EXP_DEVCTL], 0x7fff);
	put32(&d->cfg[c + EXP_LNKCAP], LNK_SPEED_2_5 | LNK_WIDTH_X1);
	put16(&d->wmask[c + EXP_LNKCTL], 0x0ffb);
	put16(&d->cfg[c + EXP_LNKSTA], LNK_SPEED_2_5 | LNK_WIDTH_X1);
	put16(&d->wmask[c + EXP_DEVCTL2], 0x041f);
	put32(&d->cfg[c + EXP_LNKCAP2], 1u << 1); /* 2.5 GT/s supported */
	put16(&d->cfg[c + EXP_LNKCTL2], LNK_SPEED_2_5);
	put16(&d->wmask[c + EXP_LNKCTL2], 0x000f);
	return c;
}

unsigned pcie_add_endpoint_cap(struct pci_dev *d)
{
	return add_exp_cap(d, EXP_TYPE_ENDPOINT, false);
}

/* ------------------------------------------------------ the slot (bus lock held) */

static uint16_t sltctl(const struct pcie_root_port *rp)
{
	return get16(&rp->pci.cfg[rp->exp + EXP_SLTCTL]);
}

static bool slot_powered(const struct pcie_root_port *rp)
{
	return !(sltctl(rp) & SLTCTL_PCC);
}

static void set_status(struct pcie_root_port *rp, uint16_t set, uint16_t clear)
{
	rp->sltsta = (uint16_t)((rp->sltsta & ~clear) | set);
	put16(&rp->pci.cfg[rp->exp + EXP_SLTSTA], rp->sltsta);
}

/* Presence detect; a change is reported (PDC) unless report is false
 * (creation, a snapshot's load). */
static void set_presence(struct pcie_root_port *rp, bool present, bool report)
{
	bool was = rp->sltsta & SLTSTA_PDS;

	if (present != was)
		set_status(rp, (uint16_t)(present ? SLTSTA_PDS : 0) |
				       (report ? SLTSTA_PDC : 0),
			   SLTSTA_PDS);
}

/* The link is up while a device is present and powered. */
static void update_link(struct pcie_root_port *rp, bool report)
{
	uint8_t *sta = &rp->pci.cfg[rp->exp + EXP_LNKSTA];
	bool up = (rp->sltsta & SLTSTA_PDS) && slot_powered(rp);

	if (up == !!(get16(sta) & LNKSTA_DLLLA))
		return;
	put16(sta, (uint16_t)((get16(sta) & ~LNKSTA_DLLLA) | (up ? LNKSTA_DLLLA : 0)));
	if (report)
		set_status(rp, SLTSTA_DLLSC, 0);
}

/* The hot-plug interrupt condition: an enabled change bit while HPIE. */
static void update_irq(struct pcie_root_port *rp)
{
	uint16_t ctl = sltctl(rp);
	uint16_t enabled = (uint16_t)((ctl & SLTCTL_ENABLES) |
				      (ctl & SLTCTL_DLLSCE ? SLTSTA_DLLSC : 0));
	bool level = (ctl & SLTCTL_HPIE) && (rp->sltsta & enabled);

	if (level && !rp->irq_level)
		rp->irq_rose = true;
	rp->irq_level = level;
}

/* ------------------------------------------------ events (no lock held) */

static void signal_irq(struct pcie_root_port *rp)
{
	bool level, rose;

	pci_dev_lock(&rp->pci);
	level = rp->irq_level;
	rose = rp->irq_rose;
	rp->irq_rose = false;
	pci_dev_unlock(&rp->pci);
	pci_irq_signal(&rp->pci, rp->msi, level, rose);
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct pcie_root_port *rp = d->opaque;
	unsigned sta = rp->exp + EXP_SLTSTA, ctl = rp->exp + EXP_SLTCTL;

	/* what was written to the change bits clears them */
	if (off < sta + 2 && off + size > sta)
		set_status(rp, 0, get16(&d->cfg[sta]) & SLTSTA_CHANGES);
	put16(&d->cfg[sta], rp->sltsta);
	if (off < ctl + 2 && off + size > ctl) {
		/* every slot control write is a command, done at once */
		set_status(rp, SLTSTA_CC, 0);
		update_link(rp, true);
		if (rp->unplug_requested && (rp->sltsta & SLTSTA_PDS) && !slot_powered(rp) &&
		    (sltctl(rp) & SLTCTL_PIC) == SLTCTL_PIC_OFF) {
			rp->unplug_requested = false;
			rp->eject_due = true;
		}
	}
	update_irq(rp);
}

/* After the write, unlocked: its interrupt, and the removal the guest
 * agreed to (the machine frees the device). */
static void cfg_done(struct pci_dev *d)
{
	struct pcie_root_port *rp = d->opaque;
	bool eject;

	signal_irq(rp);
	pci_dev_lock(d);
	eject = rp->eject_due;
	rp->eject_due = false;
	pci_dev_unlock(d);
	if (eject && rp->eject)
		rp->eject(rp->eject_opaque, rp);
}

void pcie_root_port_set_eject(struct pcie_root_port *rp,
			      void (*fn)(void *opaque, struct pcie_root_port *rp), void *opaque)
{
	rp->eject = fn;
	rp->eject_opaque = opaque;
}

/* A device arrived in the slot (already on the bus behind it). Into an
 * unpowered slot the button is pressed too, as a person would after
 * inserting a card: an OS that enables button events enables no presence
 * events (Linux), and only the button asks it to power the slot on. */
void pcie_root_port_plugged(struct pcie_root_port *rp)
{
	pci_dev_lock(&rp->pci);
	set_presence(rp, true, true);
	if (!slot_powered(rp))
		set_status(rp, SLTSTA_ABP, 0);
	update_link(rp, true);
	update_irq(rp);
	pci_dev_unlock(&rp->pci);
	signal_irq(rp);
}

/* The device was taken off the bus behind the port. */
void pcie_root_port_unplugged(struct pcie_root_port *rp)
{
	pci_dev_lock(&rp->pci);
	rp->unplug_requested = false;
	set_presence(rp, false, true);
	update_link(rp, true);
	update_irq(rp);
	pci_dev_unlock(&rp->pci);
	signal_irq(rp);
}

int pcie_root_port_request_unplug(struct pcie_root_port *rp)
{
	int ret = 0;

	pci_dev_lock(&rp->pci);
	if (!(rp->sltsta & SLTSTA_PDS))
		ret = -ENODEV;
	else if (!slot_powered(rp))
		ret = 1; /* nothing runs there: no one to ask */
	else if ((sltctl(rp) & SLTCTL_PIC) == SLTCTL_PIC_BLINK)
		ret = -EBUSY; /* a second press would cancel the first */
	else {
		rp->unplug_requested = true;
		set_status(rp, SLTSTA_ABP, 0);
		update_irq(rp);
	}
	pci_dev_unlock(&rp->pci);
	if (!ret)
		signal_irq(rp);
	return ret;
}

bool pcie_root_port_unplug_pending(struct pcie_root_port *rp)
{
	bool pending;

	pci_dev_lock(&rp->pci);
	pending = rp->unplug_requested || rp->eject_due;
	pci_dev_unlock(&rp->pci);
	return pending;
}

static void bridge_header(struct pci_dev *d, bool multifunction)
{
	d->cfg[0x0e] = (uint8_t)(0x01 | (multifunction ? 0x80 : 0));
	memset(&d->cfg[0x2c], 0, 4); /* no subsystem IDs in a type 1 header */
	memset(&d->wmask[0x18], 0xff, 4); /* bus numbers, secondary latency */
	d->wmask[0x1c] = 0xf0;		  /* I/O base and limit, 16-bit */
	d->wmask[0x1d] = 0xf0;
	put16(&d->wmask[0x20], 0xfff0); /* memory base and limit */
	put16(&d->wmask[0x22], 0xfff0);
	put16(&d->cfg[0x24], 0x0001); /* prefetchable: 64-bit */
	put16(&d->cfg[0x26], 0x0001);
	put16(&d->wmask[0x24], 0xfff0);
	put16(&d->wmask[0x26], 0xfff0);
	memset(&d->wmask[0x28], 0xff, 8); /* their upper halves */
	put16(&d->wmask[0x3e], 0x0fff);	  /* bridge control */
	d->cfg[0x3d] = 1;		  /* INTA */
}

struct pcie_root_port *pcie_root_port_new(struct dev_host *host, struct pci_bus *bus,
					  const struct pcie_root_port_opts *o)
{
	struct pcie_root_port *rp = calloc(1, sizeof(*rp));
	uint8_t *cfg;

	if (!rp)
		return NULL;
	pci_dev_init(&rp->pci, "pcie-root-port", 0x1b36, 0x000c, 0x060400, 0x00);
	rp->pci.opaque = rp;
	rp->pci.cfg_written = cfg_written;
	rp->pci.cfg_done = cfg_done;
	bridge_header(&rp->pci, o->multifunction);
	rp->exp = add_exp_cap(&rp->pci, EXP_TYPE_ROOT_PORT, true);
	cfg = rp->pci.cfg;
	put32(&cfg[rp->exp + EXP_LNKCAP],
	      LNK_SPEED_2_5 | LNK_WIDTH_X1 | LNKCAP_DLLLARC | (uint32_t)o->port << 24);
	put32(&cfg[rp->exp + EXP_SLTCAP], SLTCAP_ABP | SLTCAP_PCP | SLTCAP_AIP | SLTCAP_PIP |
						  SLTCAP_HPC | (uint32_t)(o->slot & 0x1fff) << 19);
	put16(&rp->pci.wmask[rp->exp + EXP_SLTCTL], 0x1fff);
	put16(&rp->pci.wmask[rp->exp + EXP_SLTSTA], SLTSTA_CHANGES);
	put16(&rp->pci.wmask[rp->exp + EXP_RTCTL], 0x001f);
	rp->msi = pci_msi_cap_add(&rp->pci);
	if (!rp->exp || !rp->msi || pci_bus_add(bus, &rp->pci, o->devfn)) {
		free(rp);
		return NULL;
	}
	rp->secondary = pci_bus_new_secondary(&rp->pci);
	if (!rp->secondary) {
		pcie_root_port_free(rp);
		return NULL;
	}
	return rp;
}

struct pci_bus *pcie_root_port_bus(struct pcie_root_port *rp)
{
	return rp->secondary;
}

uint8_t pcie_root_port_devfn(const struct pcie_root_port *rp)
{
	return rp->pci.devfn;
}

/* Presence and link from the device behind, no change reported. */
static void sync_slot(struct pcie_root_port *rp, bool present)
{
	set_presence(rp, present, false);
	update_link(rp, false);
	update_irq(rp);
	rp->irq_rose = false;
}

/* As a reset leaves it: an occupied slot powered with its power
 * indicator on, an empty one off (so the guest powers it on when a
 * device arrives). */
void pcie_root_port_update_slot(struct pcie_root_port *rp)
{
	bool present = pci_bus_find(rp->secondary, 0) != NULL; /* takes the lock */
	uint16_t ctl = present ? SLTCTL_AIC_OFF | SLTCTL_PIC_ON
			       : SLTCTL_AIC_OFF | SLTCTL_PIC_OFF | SLTCTL_PCC;

	pci_dev_lock(&rp->pci);
	put16(&rp->pci.cfg[rp->exp + EXP_SLTCTL], ctl);
	rp->unplug_requested = rp->eject_due = false;
	sync_slot(rp, present);
	pci_dev_unlock(&rp->pci);
}

#define ROOT_PORT_STATE_VERSION 1

/* Snapshot: config space holds it all (bus numbers, windows, slot
 * control, the slot status change bits, MSI). A removal in progress is
 * not kept (the destination's slot holds what its command line put there). */
static void rp_node(const struct pcie_root_port *rp, char *buf, size_t len)
{
	snprintf(buf, len, "pcie-root-port@%x,%x", rp->pci.devfn >> 3, rp->pci.devfn & 7);
}

void pcie_root_port_save(struct pcie_root_port *rp, struct state_writer *w)
{
	char node[40];

	rp_node(rp, node, sizeof(node));
	state_begin(w, node, ROOT_PORT_STATE_VERSION);
	pci_dev_save(&rp->pci, w);
	state_end(w);
}

int pcie_root_port_load(struct pcie_root_port *rp, const struct state_reader *r, char *err,
			size_t errlen)
{
	struct state_node n;
	char node[40];
	bool present;

	rp_node(rp, node, sizeof(node));
	if (state_node_open(&n, r, node, ROOT_PORT_STATE_VERSION, err, errlen) < 0 ||
	    pci_dev_load(&rp->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	/* the change bits as saved; presence is the device the destination
	 * has in the slot (the same command line) */
	present = pci_bus_find(rp->secondary, 0) != NULL;
	pci_dev_lock(&rp->pci);
	rp->sltsta = get16(&rp->pci.cfg[rp->exp + EXP_SLTSTA]) & SLTSTA_CHANGES;
	sync_slot(rp, present);
	pci_dev_unlock(&rp->pci);
	return 0;
}

void pcie_root_port_free(struct pcie_root_port *rp)
{
	if (!rp)
		return;
	pci_bus_free_secondary(rp->secondary);
	pci_bus_remove(&rp->pci);
	free(rp);
}
