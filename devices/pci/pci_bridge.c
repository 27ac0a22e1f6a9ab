/* pci_bridge.c — configuration space beyond bus 0's 0xcf8/0xcfc: the
 * PCIe ECAM window (the Q35 MCH's PCIEXBAR maps it) and secondary buses
 * behind bridges (pcie-root-port). A secondary bus is found by the
 * secondary bus number the guest (or SeaBIOS) programmed into its bridge,
 * as on real hardware; a bus whose number nobody programmed is not seen. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/pci_internal.h"

struct pci_dev *pci_bus_lookup(struct pci_bus *root, unsigned busno, unsigned devfn)
{
	if (busno == 0)
		return root->devs[devfn];
	for (unsigned i = 0; i < PCI_MAX_DEVFN; i++) {
		struct pci_dev *b = root->devs[i];

		if (b && b->secondary && b->cfg[PCI_SECONDARY_BUS] == busno)
			return b->secondary->devs[devfn];
	}
	return NULL;
}

bool pci_bus_is_secondary(const struct pci_bus *bus)
{
	return bus && bus->bridge;
}

uint16_t pci_dev_rid(const struct pci_dev *d)
{
	unsigned busno = d->bus && d->bus->bridge ? d->bus->bridge->cfg[PCI_SECONDARY_BUS] : 0;

	return (uint16_t)(busno << 8 | d->devfn);
}

struct pci_bus *pci_bus_new_secondary(struct pci_dev *bridge)
{
	struct pci_bus *sec = calloc(1, sizeof(*sec));

	if (!sec || !bridge->bus) {
		free(sec);
		return NULL;
	}
	sec->root = pci_root(bridge->bus);
	sec->host = sec->root->host;
	sec->bridge = bridge;
	bridge->secondary = sec;
	return sec;
}

void pci_bus_free_secondary(struct pci_bus *sec)
{
	if (!sec)
		return;
	if (sec->bridge)
		sec->bridge->secondary = NULL;
	free(sec);
}

/* ------------------------------------------------------------- ECAM */

/* The PCIe enhanced configuration window: bus << 20 | devfn << 12 | reg.
 * Registers past the 256 bytes a device has read as all-ones, which is
 * how Linux sees a function without extended configuration space. */
static bool ecam_target(uint64_t off, unsigned size, uint8_t *busno, uint8_t *devfn,
			unsigned *reg)
{
	if (size != 1 && size != 2 && size != 4)
		return false;
	*busno = (uint8_t)(off >> 20);
	*devfn = (uint8_t)(off >> 12);
	*reg = (unsigned)(off & 0xfff);
	return true;
}

static void ecam_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	uint8_t busno, devfn;
	unsigned reg;

	if (!ecam_target(off, size, &busno, &devfn, &reg)) {
		memset(data, 0xff, size);
		return;
	}
	io_data_put(data, size, pci_cfg_read_bdf(opaque, busno, devfn, reg, size));
}

static void ecam_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	uint8_t busno, devfn;
	unsigned reg;

	if (ecam_target(off, size, &busno, &devfn, &reg))
		pci_cfg_write_bdf(opaque, busno, devfn, reg, size, (uint32_t)io_data_get(data, size));
}

static const struct io_ops ecam_ops = {ecam_read, ecam_write};

int pci_bus_set_ecam(struct pci_bus *bus, uint64_t base, uint64_t size)
{
	int ret = 0;

	pthread_mutex_lock(&bus->ecam_lock);
	if (bus->ecam_size && (bus->ecam_base != base || bus->ecam_size != size)) {
		iobus_unregister(bus->host->mmio, bus->ecam_base);
		bus->ecam_size = 0;
	}
	if (size && !bus->ecam_size) {
		/* unlocked: a config write through it moves BARs on this bus */
		ret = iobus_register_unlocked(bus->host->mmio, base, size, &ecam_ops, bus,
					      "pcie-mmcfg");
		if (ret == 0) {
			bus->ecam_base = base;
			bus->ecam_size = size;
		}
	}
	pthread_mutex_unlock(&bus->ecam_lock);
	return ret;
}

