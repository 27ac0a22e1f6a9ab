/* migration_devices.c — the PC and q35 chipset in the state tree: the PCI
 * host's latches, the host bridge, the ISA bridge (PIIX3, or q35's ICH9
 * LPC and SMBus), the VT-d unit, ACPI PM, the legacy ISA devices, fw_cfg,
 * pcie-root-ports, the IDE and AHCI controllers, the USB controllers
 * (`usb@N`, N their place among the -device options) and pc-testdev
 * (pvpanic holds no state). Each device writes its own node under /devices (see
 * its header); loading checks a node before the device takes any of it. */
#include <stdio.h>

#include "devices/iommu/intel_iommu.h"
#include "devices/isa/acpi_pm.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/fw_cfg.h"
#include "devices/isa/i8042.h"
#include "devices/isa/port92.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pcie_root_port.h"
#include "devices/pci/piix3.h"
#include "devices/storage/ahci.h"
#include "devices/storage/ide.h"
#include "devices/testdev/pc_testdev.h"
#include "devices/usb/usb.h"
#include "vmm/machine.h"
#include "vmm/migration_devices.h"

static void save_usb(struct machine *m, struct state_writer *w)
{
	char name[16];

	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++) {
		snprintf(name, sizeof(name), "usb@%u", i);
		if (m->uhci[i])
			uhci_save(m->uhci[i], w, name);
		if (m->xhci[i])
			xhci_save(m->xhci[i], w, name);
	}
}

static int load_usb(struct machine *m, const struct state_reader *devs, char *err, size_t errlen)
{
	char name[16];

	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++) {
		snprintf(name, sizeof(name), "usb@%u", i);
		if (m->uhci[i] && uhci_load(m->uhci[i], devs, name, err, errlen) < 0)
			return -1;
		if (m->xhci[i] && xhci_load(m->xhci[i], devs, name, err, errlen) < 0)
			return -1;
	}
	return 0;
}

void save_chipset(struct machine *m, struct state_writer *w)
{
	if (m->pci)
		pci_bus_save(m->pci, w);
	if (m->iommu)
		intel_iommu_save(m->iommu, w);
	if (m->i440fx)
		i440fx_save(m->i440fx, w);
	if (m->piix3)
		piix3_save(m->piix3, w);
	if (m->lpc)
		ich9_lpc_save(m->lpc, w);
	if (m->smbus)
		ich9_smbus_save(m->smbus, w);
	if (m->acpi_pm)
		acpi_pm_save(m->acpi_pm, w);
	if (m->i8042)
		i8042_save(m->i8042, w);
	if (m->port92)
		port92_save(m->port92, w);
	if (m->dma)
		dma8237_save(m->dma, w);
	if (m->fw_cfg)
		fw_cfg_save(m->fw_cfg, w);
	for (unsigned i = 0; i < CLI_MAX_ROOT_PORTS; i++)
		if (m->root_ports[i])
			pcie_root_port_save(m->root_ports[i], w);
	if (m->ide)
		ide_save(m->ide, w);
	if (m->pc_testdev)
		pc_testdev_save(m->pc_testdev, w);
	if (m->ich9_ahci)
		ahci_save(m->ich9_ahci, w);
	for (unsigned i = 0; i < CLI_MAX_AHCI; i++)
		if (m->ahci[i])
			ahci_save(m->ahci[i], w);
	save_usb(m, w);
}

int load_chipset(struct machine *m, const struct state_reader *devs, char *err, size_t errlen)
{
	if (m->pci && pci_bus_load(m->pci, devs, err, errlen) < 0)
		return -1;
	/* before the devices whose DMA and MSIs it remaps */
	if (m->iommu && intel_iommu_load(m->iommu, devs, err, errlen) < 0)
		return -1;
	if (m->i440fx && i440fx_load(m->i440fx, devs, err, errlen) < 0)
		return -1;
	if (m->piix3 && piix3_load(m->piix3, devs, err, errlen) < 0)
		return -1;
	if (m->lpc && ich9_lpc_load(m->lpc, devs, err, errlen) < 0)
		return -1;
	if (m->smbus && ich9_smbus_load(m->smbus, devs, err, errlen) < 0)
		return -1;
	/* after the LPC, which moved the PM block to PMBASE */
	if (m->acpi_pm && acpi_pm_load(m->acpi_pm, devs, err, errlen) < 0)
		return -1;
	if (m->i8042 && i8042_load(m->i8042, devs, err, errlen) < 0)
		return -1;
	if (m->port92 && port92_load(m->port92, devs, err, errlen) < 0)
		return -1;
	if (m->dma && dma8237_load(m->dma, devs, err, errlen) < 0)
		return -1;
	if (m->fw_cfg && fw_cfg_load(m->fw_cfg, devs, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < CLI_MAX_ROOT_PORTS; i++)
		if (m->root_ports[i] &&
		    pcie_root_port_load(m->root_ports[i], devs, err, errlen) < 0)
			return -1;
	if (m->ide && ide_load(m->ide, devs, err, errlen) < 0)
		return -1;
	if (m->pc_testdev && pc_testdev_load(m->pc_testdev, devs, err, errlen) < 0)
		return -1;
	if (m->ich9_ahci && ahci_load(m->ich9_ahci, devs, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < CLI_MAX_AHCI; i++)
		if (m->ahci[i] && ahci_load(m->ahci[i], devs, err, errlen) < 0)
			return -1;
	return load_usb(m, devs, err, errlen);
}
