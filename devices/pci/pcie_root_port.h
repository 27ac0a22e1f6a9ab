/* pcie_root_port.h — QEMU's generic PCIe root port (-device pcie-root-port). */
#ifndef VMM_DEVICES_PCI_PCIE_ROOT_PORT_H
#define VMM_DEVICES_PCI_PCIE_ROOT_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

struct pcie_root_port_opts {
	uint8_t devfn;	    /* on the root bus */
	uint8_t chassis;    /* kept for the guest's view of the slot */
	uint16_t slot;	    /* physical slot number (SLTCAP) */
	uint8_t port;	    /* port number (LNKCAP) */
	bool multifunction; /* header type bit 7 */
};

/* Root port 1b36:000c at opts->devfn of bus: a PCI-to-PCI bridge header
 * whose bus numbers and windows the guest programs, and a PCIe capability
 * (root port; a hot-plug capable slot with an attention button, power
 * controller and indicators, presence detect and the data link layer
 * state of the device behind it) and MSI. Devices
 * go on pcie_root_port_bus(); pcie_root_port_update_slot after adding
 * them. NULL when devfn is taken. */
struct pcie_root_port;
struct pcie_root_port *pcie_root_port_new(struct dev_host *host, struct pci_bus *bus,
					  const struct pcie_root_port_opts *o);
struct pci_bus *pcie_root_port_bus(struct pcie_root_port *rp);
/* Its place on the root bus (firmware device paths). */
uint8_t pcie_root_port_devfn(const struct pcie_root_port *rp);
/* Presence detect and link state follow whether device 0 is there; slot
 * power as a reset leaves it (on when occupied). Once devices are added. */
void pcie_root_port_update_slot(struct pcie_root_port *rp);

/* Native hot-plug (main thread; no device lock held). After a device is
 * added behind the port at run time: presence detect changed and, when
 * the slot is off, the attention button; the link comes up once the
 * guest powers the slot. */
void pcie_root_port_plugged(struct pcie_root_port *rp);
/* Ask the guest to release the device (the attention button): 0 asked,
 * 1 when the slot is powered off (the caller removes the device now),
 * -ENODEV empty slot, -EBUSY the guest is busy with the slot (its power
 * indicator blinks). */
int pcie_root_port_request_unplug(struct pcie_root_port *rp);
/* Whether a removal was asked and the device is still there. */
bool pcie_root_port_unplug_pending(struct pcie_root_port *rp);
/* Called (on the vCPU thread of the guest's config write) when the guest
 * powered off a slot whose device the host asked to remove: fn takes the
 * device off the bus (not from inside the call: defer it) and then calls
 * pcie_root_port_unplugged. */
void pcie_root_port_set_eject(struct pcie_root_port *rp,
			      void (*fn)(void *opaque, struct pcie_root_port *rp), void *opaque);
/* The device behind was taken off the bus: presence and link go down. */
void pcie_root_port_unplugged(struct pcie_root_port *rp);
/* Snapshot: node "pcie-root-port@SLOT,FN" (config space: bus numbers,
 * windows, slot control and status). Loading takes presence from the
 * device now in the slot. */
struct state_writer;
struct state_reader;
void pcie_root_port_save(struct pcie_root_port *rp, struct state_writer *w);
int pcie_root_port_load(struct pcie_root_port *rp, const struct state_reader *r, char *err,
			size_t errlen);
void pcie_root_port_free(struct pcie_root_port *rp);

/* A PCI Express endpoint capability (version 2, 60 bytes) for a device on
 * a PCIe bus (behind a root port); its config offset or 0. */
unsigned pcie_add_endpoint_cap(struct pci_dev *d);

#endif /* VMM_DEVICES_PCI_PCIE_ROOT_PORT_H */
