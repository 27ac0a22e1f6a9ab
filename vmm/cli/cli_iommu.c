/* cli_iommu.c — -device intel-iommu, -device edu and -machine q35's checks.
 *
 * What -machine q35 is in vmm: QEMU's Q35 chipset as SeaBIOS and Linux
 * see it: the Q35 MCH at 00:00.0 (PAM, SMRAM, PCIEXBAR with the ECAM
 * window at 0xb0000000 and an MCFG table), the ICH9 LPC bridge at 00:1f.0
 * (PMBASE/ACPI_CNTL, PIRQA-H to GSIs 16-23, RCBA) and SMBus at 00:1f.3,
 * with the usual ISA devices; the VT-d unit (0xfed90000) of -device
 * intel-iommu, and -device pcie-root-port (cli_pcie.c). Not there yet: the
 * ICH9 AHCI at 00:1f.2 (so no IDE-style disks: -hda/-cdrom are refused),
 * hot-plug at run time, TCO, the 8259 routing of the PIRQ registers,
 * extended (4 KiB) configuration space, _OSC in the DSDT. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cli.h"

bool cli_is_root_bus(const char *name)
{
	return !strcmp(name, "pci.0") || !strcmp(name, "pcie.0");
}

bool cli_is_q35_name(const char *name)
{
	return !strcmp(name, "q35") || !strncmp(name, "pc-q35-", 7);
}

static int on_off(const char *dev, const char *key, const char *v, bool *out, char *err,
		  size_t errlen)
{
	if (v && (!strcmp(v, "on") || !strcmp(v, "true"))) {
		*out = true;
	} else if (v && (!strcmp(v, "off") || !strcmp(v, "false"))) {
		*out = false;
	} else {
		snprintf(err, errlen, "%s: %s must be on or off, not '%s'", dev, key, v ? v : "");
		return -1;
	}
	return 0;
}

/* intremap=on|off (default off, as QEMU), eim=on|off (default: as
 * intremap, QEMU's "auto" with a split irqchip). */
int cli_parse_intel_iommu(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct iommu_spec s = {.present = true};
	bool eim_given = false;
	char *key, *v;

	if (cfg->iommu.present) {
		snprintf(err, errlen, "intel-iommu: only one is supported");
		return -1;
	}
	while (cli_next_kv(&props, &key, &v)) {
		if (!strcmp(key, "intremap")) {
			if (on_off("intel-iommu", key, v, &s.intremap, err, errlen) < 0)
				return -1;
		} else if (!strcmp(key, "eim")) {
			if (on_off("intel-iommu", key, v, &s.eim, err, errlen) < 0)
				return -1;
			eim_given = true;
		} else if (strcmp(key, "id")) {
			snprintf(err, errlen,
				 "intel-iommu: unsupported property '%s' (intremap=on|off, "
				 "eim=on|off)",
				 key);
			return -1;
		}
	}
	if (!eim_given)
		s.eim = s.intremap;
	if (s.eim && !s.intremap) {
		snprintf(err, errlen, "intel-iommu: eim=on cannot be selected without intremap=on");
		return -1;
	}
	cfg->iommu = s;
	return 0;
}

/* A PCI test device whose only properties are addr= and id=. */
static int parse_test_pci(struct vmm_config *cfg, enum device_kind kind, const char *name,
			  char *props, char *err, size_t errlen)
{
	struct device_spec d = {.kind = kind, .devfn = -1};
	char *key, *v;

	while (cli_next_kv(&props, &key, &v)) {
		if (!strcmp(key, "addr") && v) {
			if (cli_parse_pci_addr(v, &d.devfn) < 0) {
				snprintf(err, errlen, "%s: invalid addr '%s'", name, v);
				return -1;
			}
		} else if (strcmp(key, "id")) {
			snprintf(err, errlen, "%s: unsupported property '%s' (addr=SLOT[.FN])",
				 name, key);
			return -1;
		}
	}
	if (cfg->n_devices == CLI_MAX_DEVICES) {
		snprintf(err, errlen, "too many devices");
		return -1;
	}
	cfg->devices[cfg->n_devices++] = d;
	return 0;
}

int cli_parse_edu(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	return parse_test_pci(cfg, DEVICE_EDU, "edu", props, err, errlen);
}

int cli_parse_pci_testdev(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	return parse_test_pci(cfg, DEVICE_PCI_TESTDEV, "pci-testdev", props, err, errlen);
}

/* A device's bus= names a pcie-root-port. */
static int check_bus(const struct vmm_config *cfg, const char *dev, const char *bus, char *err,
		     size_t errlen)
{
	if (!bus[0] || cli_find_root_port(cfg, bus) >= 0)
		return 0;
	snprintf(err, errlen, "%s: bus '%s' not found (pci.0/pcie.0 or a pcie-root-port id)", dev,
		 bus);
	return -1;
}

int cli_check_q35(const struct vmm_config *cfg, char *err, size_t errlen)
{
	if (cfg->iommu.present && !cfg->q35) {
		snprintf(err, errlen, "-device intel-iommu needs -machine q35 (as in QEMU)");
		return -1;
	}
	if (cfg->iommu.intremap && cfg->irqchip == IRQCHIP_ON) {
		snprintf(err, errlen,
			 "intel-iommu: intremap=on cannot work with kernel_irqchip=on (the I/O "
			 "APIC must be vmm's): use -machine kernel_irqchip=split");
		return -1;
	}
	for (unsigned i = CLI_PC_IDE_DRIVES; !cfg->q35 && i < CLI_MAX_DRIVES; i++)
		if (cfg->drives[i].file || cfg->drives[i].cdrom) {
			snprintf(err, errlen,
				 "IDE index %u: the PC's IDE has %d drives (index 0 to %d); "
				 "-machine q35's AHCI has %d",
				 i, CLI_PC_IDE_DRIVES, CLI_PC_IDE_DRIVES - 1, CLI_MAX_DRIVES);
			return -1;
		}
	if (cfg->n_root_ports && !cfg->q35) {
		snprintf(err, errlen, "-device pcie-root-port needs -machine q35 (as in QEMU)");
		return -1;
	}
	for (unsigned i = 0; i < cfg->n_vblk; i++)
		if (check_bus(cfg, "virtio-blk-pci", cfg->vblk[i].bus, err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < cfg->rng.n_devs; i++)
		if (check_bus(cfg, "virtio-rng-pci", cfg->rng.devs[i].bus, err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < cfg->n_nics; i++)
		if (check_bus(cfg, "virtio-net-pci", cfg->nics[i].bus, err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < cfg->vserial.n_buses; i++)
		if (check_bus(cfg, "virtio-serial-pci", cfg->vserial.buses[i].bus, err, errlen) < 0)
			return -1;
	if (cfg->balloon.present &&
	    check_bus(cfg, "virtio-balloon-pci", cfg->balloon.bus, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < cfg->n_devices; i++)
		if (check_bus(cfg, "-device", cfg->devices[i].bus, err, errlen) < 0)
			return -1;
	return 0;
}
