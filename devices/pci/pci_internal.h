/* pci_internal.h — the PCI bus's state, shared by pci.c and pci_bridge.c
 * (ECAM, secondary buses); devices see only pci.h. */
#ifndef VMM_DEVICES_PCI_PCI_INTERNAL_H
#define VMM_DEVICES_PCI_PCI_INTERNAL_H

#include <stdatomic.h>

#include "devices/pci/pci.h"

#define PCI_MAX_DEVFN 256
#define PCI_SECONDARY_BUS 0x19
/* What 0xcf8 keeps of a write (enable, bus, devfn, dword register) and
 * 0xcf9 of its (hard and full reset; the CPU reset bit is a trigger). */
#define PCI_CFG_ADDR_MASK 0x80fffffcu
#define PCI_RCR_KEPT 0x0a

/* I/O BARs live in one window the bus claims once: their moves happen
 * inside a port-I/O handler (a config write), where registering on the
 * port bus itself would deadlock, so the bus dispatches the window. */
#define IO_WINDOW_BASE 0x1000
#define IO_WINDOW_END 0x10000
#define MAX_IO_BARS 32

struct io_bar_map {
	uint64_t base, len;
	const struct io_ops *ops;
	void *opaque;
};

/* The root bus (bus 0, behind 0xcf8/0xcfc and ECAM) holds the state; a
 * secondary bus (behind a bridge) has only its devs and points to the
 * root, whose lock covers both. */
struct pci_bus {
	struct pci_bus *root;	/* itself for bus 0 */
	struct pci_dev *bridge; /* a secondary bus's bridge; NULL for bus 0 */
	struct dev_host *host;
	pthread_mutex_t lock;
	pthread_rwlock_t io_lock; /* guards io_bars */
	struct io_bar_map io_bars[MAX_IO_BARS];
	unsigned n_io_bars;
	/* ports of the window already reported as decoding to no BAR */
	_Atomic uint8_t io_missed[(IO_WINDOW_END - IO_WINDOW_BASE) / 8];
	uint32_t cfg_addr;
	uint8_t cfg_addr_low; /* bits 1:0 written to 0xcf8 (read back as 0) */
	struct pci_dev *devs[PCI_MAX_DEVFN];
	pci_route_fn route;
	void *route_opaque;
	unsigned intx_seq; /* INTx level changes (pci_dev_set_irq) */
	uint8_t rcr; /* PIIX reset control register at 0xcf9 */
	struct pci_iommu_ops iommu; /* ops.dma NULL: no IOMMU */
	void (*reset_fn)(void *opaque);
	void *reset_opaque;
	pthread_mutex_t ecam_lock; /* guards ecam_base/ecam_size */
	uint64_t ecam_base, ecam_size; /* ecam_size 0: no ECAM window */
};

/* The bus whose lock and state a device on bus (0 or a secondary one)
 * uses. */
static inline struct pci_bus *pci_root(struct pci_bus *bus)
{
	return bus ? bus->root : NULL;
}

/* The function at busno:devfn, or NULL (root's lock held): bus 0, or the
 * secondary bus of a bridge on bus 0 whose secondary bus number is busno. */
struct pci_dev *pci_bus_lookup(struct pci_bus *root, unsigned busno, unsigned devfn);

/* Map or move d's BARs to what its config space says (root's lock held). */
void pci_update_bars(struct pci_bus *root, struct pci_dev *d);

#endif /* VMM_DEVICES_PCI_PCI_INTERNAL_H */
