/* pcie_root_port.c — the generic PCIe root port (1b36:000c) of QEMU's q35.
 *
 * A type 1 (PCI-to-PCI bridge) header: primary/secondary/subordinate bus
 * numbers (0x18-0x1a), which the firmware or the OS assigns as on real
 * hardware and by which configuration cycles reach the bus behind it; the
 * I/O, memory and prefetchable windows (0x1c-0x31), kept as written (BARs
 * behind the port decode wherever they are programmed: vmm has one flat
 * address space); bridge control (0x3e). Then the PCI Express capability
 * at 0x40: a root port with a slot that is hot-plug capable, has an
 * attention button and power controller, and no command-completed
 * notification; slot status says whether a device is present, link status
 * whether its data link layer is up. Slot status change bits are
 * write-one-to-clear. No MSI, AER or ACS: its own interrupt is INTA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/pcie_root_port.h"
#include "state/state.h"

#define PCI_CAP_ID_EXP 0x10
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
#define SLTCAP_NCCS (1u << 18)
#define SLTSTA_PDS (1u << 6)
#define SLTSTA_CHANGES 0x011f /* ABP, PFD, MRLSC, PDC, CC, DLLSC: RW1C */

struct pcie_root_port {
	struct pci_dev pci;
	struct pci_bus *secondary;
	unsigned exp; /* the PCIe capability's offset */
	uint16_t sltsta;
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

/* Bus lock held (a config write) or none taken yet (creation). */
static void refresh_slot(struct pcie_root_port *rp, bool present)
{
	uint8_t *cfg = rp->pci.cfg;
	uint16_t lnksta = get16(&cfg[rp->exp + EXP_LNKSTA]) & ~LNKSTA_DLLLA;

	rp->sltsta = (uint16_t)((rp->sltsta & ~SLTSTA_PDS) | (present ? SLTSTA_PDS : 0));
	put16(&cfg[rp->exp + EXP_SLTSTA], rp->sltsta);
	put16(&cfg[rp->exp + EXP_LNKSTA], (uint16_t)(lnksta | (present ? LNKSTA_DLLLA : 0)));
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct pcie_root_port *rp = d->opaque;
	unsigned sta = rp->exp + EXP_SLTSTA;

	/* what was written to the change bits clears them */
	if (off < sta + 2 && off + size > sta) {
		uint16_t written = get16(&d->cfg[sta]) & SLTSTA_CHANGES;

		rp->sltsta &= (uint16_t)~written;
		put16(&d->cfg[sta], rp->sltsta);
	}
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
	bridge_header(&rp->pci, o->multifunction);
	rp->exp = add_exp_cap(&rp->pci, EXP_TYPE_ROOT_PORT, true);
	cfg = rp->pci.cfg;
	put32(&cfg[rp->exp + EXP_LNKCAP],
	      LNK_SPEED_2_5 | LNK_WIDTH_X1 | LNKCAP_DLLLARC | (uint32_t)o->port << 24);
	put32(&cfg[rp->exp + EXP_SLTCAP], SLTCAP_ABP | SLTCAP_PCP | SLTCAP_AIP | SLTCAP_PIP |
						  SLTCAP_HPC | SLTCAP_NCCS |
						  (uint32_t)(o->slot & 0x1fff) << 19);
	put16(&rp->pci.wmask[rp->exp + EXP_SLTCTL], 0x1fff);
	put16(&rp->pci.wmask[rp->exp + EXP_SLTSTA], SLTSTA_CHANGES);
	put16(&rp->pci.wmask[rp->exp + EXP_RTCTL], 0x001f);
	refresh_slot(rp, false);
	if (!rp->exp || pci_bus_add(bus, &rp->pci, o->devfn)) {
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

void pcie_root_port_update_slot(struct pcie_root_port *rp)
{
	refresh_slot(rp, pci_bus_find(rp->secondary, 0) != NULL);
}

#define ROOT_PORT_STATE_VERSION 1

/* Snapshot: config space holds it all (bus numbers, windows, slot
 * control, the slot status change bits). */
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

	rp_node(rp, node, sizeof(node));
	if (state_node_open(&n, r, node, ROOT_PORT_STATE_VERSION, err, errlen) < 0 ||
	    pci_dev_load(&rp->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	/* the change bits as saved; presence is the device the destination
	 * has in the slot (the same command line) */
	rp->sltsta = get16(&rp->pci.cfg[rp->exp + EXP_SLTSTA]) & SLTSTA_CHANGES;
	pcie_root_port_update_slot(rp);
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
