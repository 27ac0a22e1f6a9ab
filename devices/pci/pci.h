/* pci.h — the PCI bus (configuration mechanism #1), PCI devices, DMA and the IOMMU hook. */
#ifndef VMM_DEVICES_PCI_PCI_H
#define VMM_DEVICES_PCI_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* --------------------------------------------------------------- PCI */

/* PCI: configuration mechanism #1 at 0xcf8/0xcfc, one bus (bus 0). */
#define PCI_CFG_SPACE_SIZE 256
#define PCIE_CFG_SPACE_SIZE 4096 /* a PCI Express function's, through ECAM */
#define PCI_CAP_ID_EXP 0x10	 /* the PCI Express capability */
#define PCI_NUM_BARS 6
#define PCI_BAR_UNMAPPED UINT64_MAX

struct pci_bus;
struct pci_dev;

struct pci_bar {
	uint64_t size;		/* power of two; 0 when the BAR is not implemented */
	bool io;		/* port I/O BAR, else 32-bit memory */
	const struct io_ops *ops; /* handlers; offset is relative to the BAR */
	void *opaque;
	uint64_t mapped;	/* where it is registered now, or PCI_BAR_UNMAPPED */
};

/* Devices embed a pci_dev. Fields are protected by the bus lock; the
 * callbacks below run with it held (they may take their own lock). */
struct pci_dev {
	const char *name;
	uint8_t devfn;		/* slot << 3 | function */
	struct pci_bus *bus;
	uint8_t cfg[PCI_CFG_SPACE_SIZE];
	uint8_t wmask[PCI_CFG_SPACE_SIZE]; /* bits guest writes may change */
	struct pci_bar bar[PCI_NUM_BARS];
	bool irq_level;
	unsigned cap_end;	/* first free config byte after the capabilities */
	struct pci_bus *secondary; /* a bridge's: the bus behind it (pci_bus_new_secondary) */
	/* Called after a guest config write was applied (optional). */
	void (*cfg_written)(struct pci_dev *d, unsigned off, unsigned size);
	/* Called after that, with the bus lock released (optional): where a
	 * write's consequences that take the lock happen (an interrupt). */
	void (*cfg_done)(struct pci_dev *d);
	/* Extra `info pci` lines (optional; snprintf style, bus lock held). */
	size_t (*info)(struct pci_dev *d, char *buf, size_t len);
	void *opaque;
};

/* Routes INTx pin (0 = INTA) of device slot to an ISA IRQ (GSI), or -1. */
typedef int (*pci_route_fn)(void *opaque, unsigned slot, unsigned pin);

struct pci_bus *pci_bus_new(struct dev_host *host);
void pci_bus_free(struct pci_bus *bus);
/* An ISA device's fixed ports inside the bus's I/O window (0x1000-0xffff,
 * where BARs are decoded): claimed like a BAR that never moves, so a BAR
 * placed over them fails to map. 0, -EEXIST, -ENOSPC or -ERANGE. */
int pci_bus_add_isa_io(struct pci_bus *bus, uint16_t base, uint16_t len, const struct io_ops *ops,
		       void *opaque);
void pci_bus_del_isa_io(struct pci_bus *bus, uint16_t base);
void pci_bus_set_route(struct pci_bus *bus, pci_route_fn fn, void *opaque);
/* The PIIX reset control register (0xcf9, bit 2) calls fn (any thread). */
void pci_bus_set_reset(struct pci_bus *bus, void (*fn)(void *opaque), void *opaque);
/* Fill the identity of d (header type 0; vendor, device, class code as
 * class << 16 | subclass << 8 | prog_if, revision); subsystem 1af4:1100. */
void pci_dev_init(struct pci_dev *d, const char *name, uint16_t vendor, uint16_t device,
		  uint32_t class_code, uint8_t revision);
/* Declare BAR n (before pci_bus_add). size is a power of two >= 4 (io)
 * or >= 16 (memory). */
void pci_dev_set_bar(struct pci_dev *d, unsigned n, uint64_t size, bool io,
		     const struct io_ops *ops, void *opaque);
/* Add a capability of len bytes (id, next filled in); returns its config
 * offset, or 0 when config space is full. */
unsigned pci_dev_add_cap(struct pci_dev *d, uint8_t id, unsigned len);
/* 0, -EEXIST when devfn is taken, -EINVAL. */
int pci_bus_add(struct pci_bus *bus, struct pci_dev *d, uint8_t devfn);
struct pci_dev *pci_bus_find(struct pci_bus *bus, uint8_t devfn);
/* The devfn of the first empty slot from 1 (function 0), or -1. */
int pci_bus_free_slot(struct pci_bus *bus);
/* Take d off its bus (unmapping its BARs); devices call it when freed. */
void pci_bus_remove(struct pci_dev *d);
/* Hold the bus lock around changes of d's config space made outside a
 * guest access (a host-side event such as a hot-plug). */
void pci_dev_lock(struct pci_dev *d);
void pci_dev_unlock(struct pci_dev *d);
/* Drive the device's INTx line (through the bus route). */
void pci_dev_set_irq(struct pci_dev *d, bool level);
/* The PCIe ECAM (MMCONFIG) window at base, size bytes (1 MiB per bus),
 * decoding onto this bus's configuration space; size 0 removes it. May be
 * called from a cfg_written callback (takes no bus lock). 0 or -errno. */
int pci_bus_set_ecam(struct pci_bus *bus, uint64_t base, uint64_t size);
/* Config accesses as the 0xcf8/0xcfc ports do them (for tests and tools),
 * on bus 0 or on bus busno (a secondary bus, by its bridge's number). */
uint32_t pci_cfg_read(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size);
void pci_cfg_write(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size,
		   uint32_t val);
uint32_t pci_cfg_read_bdf(struct pci_bus *bus, uint8_t busno, uint8_t devfn, unsigned off,
			  unsigned size);
void pci_cfg_write_bdf(struct pci_bus *bus, uint8_t busno, uint8_t devfn, unsigned off,
		       unsigned size, uint32_t val);
/* The bus behind bridge (already on a bus), where devices are added with
 * pci_bus_add like on bus 0; its number is what the guest programs into
 * the bridge's secondary bus register (0x19). Devices behind it raise
 * INTx through the bridge's pin (the usual swizzle). Free it after its
 * devices. */
struct pci_bus *pci_bus_new_secondary(struct pci_dev *bridge);
void pci_bus_free_secondary(struct pci_bus *sec);
/* Whether bus is a secondary bus (behind a PCIe root port). */
bool pci_bus_is_secondary(const struct pci_bus *bus);
/* d's requester ID: bus << 8 | devfn. */
uint16_t pci_dev_rid(const struct pci_dev *d);
/* `info pci`: one block per device, like QEMU's. Returns the length that
 * was needed (snprintf style). */
size_t pci_bus_info(struct pci_bus *bus, char *buf, size_t len);

/* An IOMMU sits between PCI devices and the machine: their DMA through
 * pci_dma_read/write and their MSIs through pci_msi_send reach it with the
 * device's requester ID (source ID, bus << 8 | devfn). Without an IOMMU
 * those go straight to guest RAM and host->irq.msi. */
#define PCI_SID_UNKNOWN 0xffffffffu /* a message with no PCI requester (I/O APIC) */
struct pci_iommu_ops {
	/* Copy len bytes between buf and device address iova: 0, or -EFAULT
	 * when the translation faulted (recorded by the IOMMU). */
	int (*dma)(void *opaque, uint16_t sid, uint64_t iova, void *buf, uint64_t len, bool write);
	/* The guest-physical address of iova, *len cut to what is contiguous
	 * there: 0, or -EFAULT (fault recorded). */
	int (*translate)(void *opaque, uint16_t sid, uint64_t iova, bool write, uint64_t *gpa,
			 uint64_t *len);
	void (*msi)(void *opaque, uint32_t sid, uint64_t addr, uint32_t data);
	void *opaque;
};
void pci_bus_set_iommu(struct pci_bus *bus, const struct pci_iommu_ops *ops);
/* A bus master access of d (only while its command register allows bus
 * mastering): 0, or -EFAULT (outside RAM, IOMMU fault, mastering off). */
int pci_dma_read(struct pci_dev *d, uint64_t addr, void *buf, uint64_t len);
int pci_dma_write(struct pci_dev *d, uint64_t addr, const void *buf, uint64_t len);
void pci_msi_send(struct pci_dev *d, uint64_t addr, uint32_t data);
/* For devices that move data in place (IDE): host memory for bus address
 * addr, *len cut to what is contiguous (one IOMMU page); NULL outside RAM
 * or on an IOMMU fault. Bus mastering is the caller's to check. */
void *pci_dma_ptr(struct pci_dev *d, uint64_t addr, uint64_t *len, bool write);

/* A single-vector MSI capability with a 64-bit address (pci_msi.c), for
 * devices that raise one interrupt: add it before pci_bus_add; its config
 * offset, or 0 when config space is full. */
unsigned pci_msi_cap_add(struct pci_dev *d);
/* Whether the guest enabled MSI at cap, and its message. Takes the bus
 * lock: call it without a lock the bus may take (a device's own). */
bool pci_msi_message(struct pci_dev *d, unsigned cap, uint64_t *addr, uint32_t *data);
/* Signal a device's one interrupt line: an MSI on each rising edge when
 * enabled at cap, else INTx at level. Call without the device's lock. */
void pci_irq_signal(struct pci_dev *d, unsigned cap, bool level, bool rising);

/* Snapshots (pci_state.c). A PCI device's loader calls these inside its own
 * node: the 256 bytes of configuration space and the INTx level, saved as
 * properties "pci-config" and "pci-irq". Loading refuses a tree whose
 * identity (vendor, device, class, header type, subsystem, interrupt pin,
 * capability list head) differs from d's, then maps the BARs where the
 * saved registers put them and drives the INTx line; the device then
 * re-derives whatever it keeps outside config space (cfg_written is not
 * called). The host bridge's 0xcf8 latch and 0xcf9 register are the bus's
 * own node ("pci-host@cf8"). */
struct state_writer;
struct state_reader;
struct state_node;
void pci_dev_save(struct pci_dev *d, struct state_writer *w);
int pci_dev_load(struct pci_dev *d, struct state_node *n);
void pci_bus_save(struct pci_bus *bus, struct state_writer *w);
int pci_bus_load(struct pci_bus *bus, const struct state_reader *r, char *err, size_t errlen);

#endif /* VMM_DEVICES_PCI_PCI_H */
