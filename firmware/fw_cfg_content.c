/* fw_cfg_content.c — what SeaBIOS learns about the machine: fw_cfg items
 * and files (RAM size, CPUs, etc/e820, bootorder, boot menu, SMBIOS and
 * ACPI tables). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/fw_cfg.h"
#include "firmware/firmware.h"

#define DEFAULT_ORDER "cdn"
#define FOUR_GIB 0x100000000ull

static bool is_boot_device(char c)
{
	return c == 'c' || c == 'd' || c == 'n';
}

int boot_order_check(const char *order, char *err, size_t errlen)
{
	size_t n = strlen(order);

	if (n == 0 || n > 3) {
		snprintf(err, errlen, "-boot order=%s: give 1 to 3 devices out of c, d, n", order);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_boot_device(order[i])) {
			snprintf(err, errlen,
				 "-boot order=%s: '%c' is not a boot device (c disk, d CD-ROM, n network)",
				 order, order[i]);
			return -EINVAL;
		}
		if (memchr(order, order[i], i)) {
			snprintf(err, errlen, "-boot order=%s: '%c' is given twice", order, order[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* "/NAME@SLOT" or "/NAME@SLOT,FN", as SeaBIOS's build_pci_path. */
static int pci_part(char *buf, size_t len, const char *name, unsigned devfn)
{
	return devfn & 7 ? snprintf(buf, len, "/%s@%x,%x", name, devfn >> 3, devfn & 7)
			 : snprintf(buf, len, "/%s@%x", name, devfn >> 3);
}

/* SeaBIOS names an ATA or ATAPI drive by its controller, channel or AHCI
 * port (drive@) and unit (disk@); its own path has "*" for the PCI names,
 * so only the addresses must agree. */
int fw_ahci_drive_path(char *buf, size_t len, uint8_t devfn, unsigned port)
{
	char ctl[24];

	pci_part(ctl, sizeof(ctl), "sata", devfn);
	return snprintf(buf, len, "/pci@i0cf8%s/drive@%x/disk@0", ctl, port);
}

int fw_ide_drive_path(char *buf, size_t len, bool q35, unsigned index)
{
	if (q35)
		return fw_ahci_drive_path(buf, len, 0x1f << 3 | 2, index);
	return snprintf(buf, len, "/pci@i0cf8/ide@1,1/drive@%x/disk@%x", index / 2, index % 2);
}

int fw_virtio_disk_path(char *buf, size_t len, int bridge, uint8_t devfn)
{
	char port[24] = "", dev[24];

	if (bridge >= 0)
		pci_part(port, sizeof(port), "pci-bridge", (unsigned)bridge);
	pci_part(dev, sizeof(dev), "scsi", devfn);
	return snprintf(buf, len, "/pci@i0cf8%s%s/disk@0,0", port, dev);
}

size_t boot_order_paths(const char *order, unsigned cdrom, bool q35, char *buf, size_t len)
{
	size_t n = 0;

	for (; *order; order++) {
		char path[64];
		int w;

		if (*order == 'c')
			fw_ide_drive_path(path, sizeof(path), q35, 0);
		else if (*order == 'd')
			fw_ide_drive_path(path, sizeof(path), q35, cdrom);
		else
			continue; /* no network card to name yet */
		w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s\n", path);
		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}

/* QEMU's etc/e820: packed { u64 address; u64 length; u32 type; }, RAM
 * only: all RAM below 4 GiB as one entry from 0 (SeaBIOS punches its own
 * holes), then the RAM above 4 GiB. */
static size_t build_e820(const struct e820_map *m, uint8_t *out, size_t max_entries,
			 uint64_t *below, uint64_t *above)
{
	size_t n = 0;

	*below = *above = 0;
	for (unsigned i = 0; m && i < m->n; i++) {
		const struct e820_entry *e = &m->e[i];

		if (e->type != E820_RAM)
			continue;
		if (e->addr < FOUR_GIB && e->addr + e->size > *below)
			*below = e->addr + e->size < FOUR_GIB ? e->addr + e->size : FOUR_GIB;
		if (e->addr + e->size > FOUR_GIB)
			*above += e->addr + e->size - (e->addr > FOUR_GIB ? e->addr : FOUR_GIB);
	}
	if (*below && n < max_entries) {
		io_data_put(out + 20 * n, 8, 0);
		io_data_put(out + 20 * n + 8, 8, *below);
		io_data_put(out + 20 * n + 16, 4, E820_RAM);
		n++;
	}
	if (*above && n < max_entries) {
		io_data_put(out + 20 * n, 8, FOUR_GIB);
		io_data_put(out + 20 * n + 8, 8, *above);
		io_data_put(out + 20 * n + 16, 4, E820_RAM);
		n++;
	}
	return n;
}

void pc_ram_split(const struct pc_fw_config *c, uint64_t *below, uint64_t *above)
{
	uint8_t e820[2 * 20];

	build_e820(c->e820, e820, 2, below, above);
	if (!*below) /* no map given: derive it from -m like QEMU's pc */
		*below = c->ram_size;
}

/* SMBIOS as QEMU passes it: SeaBIOS then copies instead of building. */
static int add_smbios(struct fw_cfg *f, const struct pc_fw_config *c)
{
	size_t max = 1024 + 64 * (size_t)c->ncpus, len;
	uint8_t anchor[SMBIOS_ANCHOR_LEN], *tables = malloc(max);
	int ret = -ENOMEM;

	if (tables && smbios_build(c, anchor, tables, max, &len) == 0)
		ret = fw_cfg_add_file(f, "etc/smbios/smbios-tables", tables, len) |
		      fw_cfg_add_file(f, "etc/smbios/smbios-anchor", anchor, sizeof(anchor));
	free(tables);
	return ret;
}

/* ACPI as QEMU passes it: SeaBIOS runs the table loader and, once that
 * installed an RSDP, builds no ACPI tables of its own. */
static int add_acpi(struct fw_cfg *f, const struct pc_fw_config *c)
{
	struct acpi_fw_blobs *b = malloc(sizeof(*b));
	int ret = -ENOMEM;

	if (b && acpi_build_fw_cfg(b, c->ncpus, c->apic_ids, c->pvpanic_port,
					c->dmar | (c->q35 ? ACPI_MACHINE_Q35 : 0) | (c->no_s3 ? ACPI_NO_S3 : 0)) == 0)
		ret = fw_cfg_add_file(f, ACPI_FW_TABLES_FILE, b->tables, b->tables_len) |
		      fw_cfg_add_file(f, ACPI_FW_RSDP_FILE, b->rsdp, sizeof(b->rsdp)) |
		      fw_cfg_add_file(f, ACPI_FW_LOADER_FILE, b->loader, b->loader_len);
	free(b);
	return ret;
}

int pc_fw_cfg_setup(struct fw_cfg *f, const struct pc_fw_config *c, char *err, size_t errlen)
{
	const char *order = c->boot_order ? c->boot_order : DEFAULT_ORDER;
	uint8_t e820[2 * 20], uuid[16] = {0}, zero8[8] = {0};
	char paths[1024];
	uint64_t below, above;
	size_t n_e820, n_paths;
	int ret = 0;

	if (boot_order_check(order, err, errlen))
		return -EINVAL;
	n_e820 = build_e820(c->e820, e820, 2, &below, &above);
	n_paths = (size_t)snprintf(paths, sizeof(paths), "%s",
				   c->bootindex_paths ? c->bootindex_paths : "");
	if (n_paths < sizeof(paths))
		n_paths += boot_order_paths(order, c->cdrom_slot ? c->cdrom_slot - 1 : 2, c->q35,
					    paths + n_paths, sizeof(paths) - n_paths);
	if (c->boot_strict && n_paths < sizeof(paths)) /* SeaBIOS tries nothing else */
		n_paths += (size_t)snprintf(paths + n_paths, sizeof(paths) - n_paths, "HALT\n");
	if (c->uuid)
		memcpy(uuid, c->uuid, sizeof(uuid));
	ret |= fw_cfg_add_u64(f, FW_CFG_RAM_SIZE, c->ram_size);
	ret |= fw_cfg_add_u16(f, FW_CFG_NB_CPUS, (uint16_t)c->ncpus);
	/* SeaBIOS sizes its CPU list by the APIC IDs, as QEMU's apic_id_limit */
	ret |= fw_cfg_add_u16(f, FW_CFG_MAX_CPUS,
			      (uint16_t)(c->ncpus ? fw_ioapic_id(c->apic_ids, c->ncpus) : 0));
	ret |= fw_cfg_add_u16(f, FW_CFG_NOGRAPHIC, c->nographic);
	ret |= fw_cfg_add_u16(f, FW_CFG_BOOT_MENU, c->boot_menu);
	ret |= fw_cfg_add(f, FW_CFG_UUID, uuid, sizeof(uuid));
	ret |= fw_cfg_add(f, FW_CFG_NUMA, zero8, sizeof(zero8));
	/* 0: SeaBIOS's MP table then routes ISA IRQ 0 to I/O APIC pin 0, as
	 * every mode wires the PIT (KVM's default GSI routing in `on`, the
	 * models in split/off) and as vmm's own MADT says (no IRQ 0 source
	 * override). 1 (QEMU's) would claim pin 2, where no timer comes. */
	ret |= fw_cfg_add_u32(f, FW_CFG_IRQ0_OVERRIDE, 0);
	ret |= fw_cfg_add_u16(f, FW_CFG_ACPI_TABLES, 0);
	ret |= fw_cfg_add_u16(f, FW_CFG_SMBIOS_ENTRIES, 0);
	ret |= fw_cfg_add_u32(f, FW_CFG_E820_TABLE, 0);
	if (n_e820)
		ret |= fw_cfg_add_file(f, "etc/e820", e820, n_e820 * 20);
	if (n_paths && n_paths < sizeof(paths))
		ret |= fw_cfg_add_file(f, "bootorder", paths, n_paths + 1);
	{
		uint8_t wait[2];

		/* no menu: no 2.5 s wait for F12 */
		io_data_put(wait, 2, c->boot_menu ? 2500 : 0);
		ret |= fw_cfg_add_file(f, "etc/boot-menu-wait", wait, sizeof(wait));
	}
	ret |= add_smbios(f, c);
	if (c->acpi)
		ret |= add_acpi(f, c);
	if (c->nographic) {
		uint8_t port[2];

		/* SeaBIOS mirrors its screen output on COM1, as under QEMU -nographic */
		io_data_put(port, 2, 0x3f8);
		ret |= fw_cfg_add_file(f, "etc/sercon-port", port, sizeof(port));
	}
	if (ret) {
		snprintf(err, errlen, "cannot fill fw_cfg: out of memory or too many files");
		return -ENOMEM;
	}
	return 0;
}
