/* pci_msi.c — the plain MSI capability (one vector, 64-bit address, no
 * masking) that single-interrupt devices share, and the choice between
 * it and INTx when the device's line changes. */
#include "devices/pci/pci.h"

#define PCI_CAP_ID_MSI 0x05
#define MSI_CTRL_ENABLE 0x0001u
#define MSI_CTRL_64BIT 0x0080u
#define MSI_CAP_LEN 14

unsigned pci_msi_cap_add(struct pci_dev *d)
{
	unsigned c = pci_dev_add_cap(d, PCI_CAP_ID_MSI, MSI_CAP_LEN);

	if (!c)
		return 0;
	io_data_put(&d->cfg[c + 2], 2, MSI_CTRL_64BIT);
	/* one vector: Multiple Message Enable stays 0 */
	io_data_put(&d->wmask[c + 2], 2, MSI_CTRL_ENABLE);
	io_data_put(&d->wmask[c + 4], 4, 0xfffffffcu);
	io_data_put(&d->wmask[c + 8], 4, 0xffffffffu);
	io_data_put(&d->wmask[c + 12], 2, 0xffff);
	return c;
}

bool pci_msi_message(struct pci_dev *d, unsigned cap, uint64_t *addr, uint32_t *data)
{
	struct pci_bus *bus = d->bus;
	uint8_t devfn = d->devfn;

	if (!bus || !cap)
		return false;
	*addr = pci_cfg_read(bus, devfn, cap + 4, 4) |
		(uint64_t)pci_cfg_read(bus, devfn, cap + 8, 4) << 32;
	*data = pci_cfg_read(bus, devfn, cap + 12, 2);
	return pci_cfg_read(bus, devfn, cap + 2, 2) & MSI_CTRL_ENABLE;
}

void pci_irq_signal(struct pci_dev *d, unsigned cap, bool level, bool rising)
{
	uint64_t addr;
	uint32_t data;

	if (pci_msi_message(d, cap, &addr, &data)) {
		if (d->irq_level)
			pci_dev_set_irq(d, false); /* MSI enabled while INTx was up */
		if (level && rising)
			pci_msi_send(d, addr, data);
		return;
	}
	pci_dev_set_irq(d, level);
}
