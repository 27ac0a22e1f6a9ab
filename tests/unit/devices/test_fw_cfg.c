/* Unit tests for fw_cfg (ports and DMA) and the content SeaBIOS gets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/fw_cfg.h"
#include "firmware/firmware.h"
#include "tests/unit/devices/pc_host.h"

#define DESC_GPA 0x1000
#define BUF_GPA 0x2000

static void select_key(struct fake_host *t, uint16_t key)
{
	pio_out(t, 0x510, 2, key);
}

static void read_bytes(struct fake_host *t, uint8_t *dst, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		dst[i] = (uint8_t)pio_in(t, 0x511, 1);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Run one DMA descriptor as SeaBIOS does: only the low address word. */
static uint32_t dma(struct fake_host *t, uint32_t control, uint32_t len, uint64_t addr,
		    uint32_t desc_gpa)
{
	uint8_t *d = t->ram + desc_gpa;
	uint8_t a[4];

	put_be32(d, control);
	put_be32(d + 4, len);
	put_be32(d + 8, (uint32_t)(addr >> 32));
	put_be32(d + 12, (uint32_t)addr);
	put_be32(a, desc_gpa);
	iobus_write(t->host.pio, 0x518, a, 4);
	return be32(d);
}

START_TEST(signature_id_and_items)
{
	struct fake_host t;
	struct fw_cfg *f;
	uint8_t b[8];
	uint32_t sig;

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	ck_assert_ptr_nonnull(f);
	select_key(&t, FW_CFG_SIGNATURE);
	read_bytes(&t, b, 4);
	ck_assert(!memcmp(b, "QEMU", 4));
	select_key(&t, FW_CFG_ID);
	read_bytes(&t, b, 4);
	ck_assert_uint_eq(b[0] & 2, 2); /* DMA */
	/* past the end and unknown keys read zeros */
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 0);
	select_key(&t, 0x7777);
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 0);
	ck_assert_int_eq(fw_cfg_add_u64(f, FW_CFG_RAM_SIZE, 0x20000000), 0);
	select_key(&t, FW_CFG_RAM_SIZE);
	read_bytes(&t, b, 8);
	ck_assert_uint_eq(io_data_get(b, 8), 0x20000000);
	/* DMA signature register */
	sig = pio_in(&t, 0x514, 4);
	ck_assert_uint_eq(sig, 0x51454d55u); /* "QEMU" */
	ck_assert_uint_eq(pio_in(&t, 0x518, 4), 0x20434647u); /* " CFG" */
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

START_TEST(file_directory_is_sorted)
{
	struct fake_host t;
	struct fw_cfg *f;
	uint8_t b[4 + 3 * 64];

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	ck_assert_int_eq(fw_cfg_add_file(f, "etc/zzz", "z", 1), 0);
	ck_assert_int_eq(fw_cfg_add_file(f, "bootorder", "abc", 4), 0);
	ck_assert_int_eq(fw_cfg_add_file(f, "etc/e820", "0123456789", 10), 0);
	ck_assert_int_eq(fw_cfg_add_file(f, "etc/e820", "x", 1), -EEXIST);
	ck_assert_int_eq(fw_cfg_add_file(f, "a-name-that-is-far-too-long-for-the-fw-cfg-file-directory", "", 0),
			 -ENAMETOOLONG);
	select_key(&t, FW_CFG_FILE_DIR);
	read_bytes(&t, b, sizeof(b));
	ck_assert_uint_eq(be32(b), 3);
	ck_assert_str_eq((char *)b + 4 + 8, "bootorder");
	ck_assert_uint_eq(be32(b + 4), 4);
	ck_assert_str_eq((char *)b + 4 + 64 + 8, "etc/e820");
	ck_assert_str_eq((char *)b + 4 + 128 + 8, "etc/zzz");
	/* select through the directory entry */
	select_key(&t, (uint16_t)(b[4 + 64 + 4] << 8 | b[4 + 64 + 5]));
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), '0');
	ck_assert_uint_eq(pio_in(&t, 0x511, 2), '1' | '2' << 8);
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

START_TEST(dma_select_read_skip)
{
	struct fake_host t;
	struct fw_cfg *f;

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	fw_cfg_add(f, FW_CFG_UUID, "0123456789abcdef", 16);
	memset(t.ram + BUF_GPA, 0xee, 32);
	/* select + read 4 */
	ck_assert_uint_eq(dma(&t, FW_CFG_UUID << 16 | 0x08 | 0x02, 4, BUF_GPA, DESC_GPA), 0);
	ck_assert(!memcmp(t.ram + BUF_GPA, "0123", 4));
	/* skip 4, read 4 */
	ck_assert_uint_eq(dma(&t, 0x04, 4, 0, DESC_GPA), 0);
	ck_assert_uint_eq(dma(&t, 0x02, 4, BUF_GPA, DESC_GPA), 0);
	ck_assert(!memcmp(t.ram + BUF_GPA, "89ab", 4));
	/* reading past the end pads with zeros */
	ck_assert_uint_eq(dma(&t, 0x02, 8, BUF_GPA, DESC_GPA), 0);
	ck_assert(!memcmp(t.ram + BUF_GPA, "cdef\0\0\0\0", 8));
	ck_assert_uint_eq(t.ram[BUF_GPA + 8], 0xee);
	/* the legacy data port follows the same position */
	ck_assert_uint_eq(dma(&t, FW_CFG_UUID << 16 | 0x08 | 0x04, 15, 0, DESC_GPA), 0);
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 'f');
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

START_TEST(dma_bad_addresses_fail_cleanly)
{
	struct fake_host t;
	struct fw_cfg *f;
	uint8_t a[4];

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	/* destination beyond RAM: error bit, nothing written */
	ck_assert_uint_eq(dma(&t, FW_CFG_SIGNATURE << 16 | 0x0a, 4, TEST_RAM_SIZE - 2, DESC_GPA), 1);
	ck_assert_uint_eq(dma(&t, 0x0a, 4, 0xfffffffff000ull, DESC_GPA), 1);
	/* writes are refused */
	ck_assert_uint_eq(dma(&t, 0x10, 4, BUF_GPA, DESC_GPA), 1);
	/* a descriptor outside RAM is ignored */
	put_be32(a, 0xfffffff0u);
	ck_assert(iobus_write(t.host.pio, 0x518, a, 4));
	/* the high address word is honoured: 1 << 32 + DESC_GPA is not RAM */
	put_be32(a, 1);
	iobus_write(t.host.pio, 0x514, a, 4);
	put_be32(t.ram + DESC_GPA, 0x0a);
	put_be32(a, DESC_GPA);
	iobus_write(t.host.pio, 0x518, a, 4);
	ck_assert_uint_eq(be32(t.ram + DESC_GPA), 0x0a); /* untouched */
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

START_TEST(pc_content_for_seabios)
{
	struct fake_host t;
	struct fw_cfg *f;
	struct e820_map m = {
		.e = {{0, 0x9fc00, E820_RAM}, {0x9fc00, 0x400, E820_RESERVED},
		      {0x100000, 0x1ff00000, E820_RAM}},
		.n = 3,
	};
	struct pc_fw_config c = {.ram_size = 0x20000000, .ncpus = 2, .e820 = &m, .boot_order = "dc"};
	uint8_t dir[4 + 16 * 64], e820[40];
	char err[256], order[128] = {0};
	unsigned nfiles;
	uint16_t e820_key = 0, order_key = 0, wait_key = 0;

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	ck_assert_int_eq(pc_fw_cfg_setup(f, &c, err, sizeof(err)), 0);
	select_key(&t, FW_CFG_FILE_DIR);
	read_bytes(&t, dir, sizeof(dir));
	nfiles = be32(dir);
	for (unsigned i = 0; i < nfiles; i++) {
		const uint8_t *e = dir + 4 + 64 * i;
		uint16_t key = (uint16_t)(e[4] << 8 | e[5]);

		if (!strcmp((const char *)e + 8, "etc/e820")) {
			e820_key = key;
			ck_assert_uint_eq(be32(e), 20);
		}
		if (!strcmp((const char *)e + 8, "bootorder"))
			order_key = key;
		if (!strcmp((const char *)e + 8, "etc/boot-menu-wait"))
			wait_key = key;
	}
	ck_assert_uint_ne(e820_key, 0);
	ck_assert_uint_ne(order_key, 0);
	ck_assert_uint_ne(wait_key, 0);
	select_key(&t, e820_key);
	read_bytes(&t, e820, 20);
	ck_assert_uint_eq(io_data_get(e820, 8), 0);
	ck_assert_uint_eq(io_data_get(e820 + 8, 8), 0x20000000);
	ck_assert_uint_eq(io_data_get(e820 + 16, 4), E820_RAM);
	select_key(&t, order_key);
	read_bytes(&t, (uint8_t *)order, sizeof(order) - 1);
	ck_assert_str_eq(order, "/pci@i0cf8/ide@1,1/drive@1/disk@0\n/pci@i0cf8/ide@1,1/drive@0/disk@0\n");
	select_key(&t, FW_CFG_BOOT_MENU);
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 0);
	select_key(&t, FW_CFG_NB_CPUS);
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 2);
	/* no IRQ 0 -> GSI 2 override: the PIT is on I/O APIC pin 0 */
	select_key(&t, FW_CFG_IRQ0_OVERRIDE);
	ck_assert_uint_eq(pio_in(&t, 0x511, 1), 0);
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

/* libvirt's -boot strict=on and -uuid: bootorder ends in HALT, and the
 * UUID reaches fw_cfg (raw) and SMBIOS type 1 (first fields little-endian). */
START_TEST(strict_boot_and_uuid)
{
	static const uint8_t id[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
				       1,    2,	   3,	 4,    5,    6,	   7,	 8};
	struct fake_host t;
	struct fw_cfg *f;
	struct pc_fw_config c = {.ram_size = 0x8000000,
				 .ncpus = 1,
				 .boot_order = "c",
				 .bootindex_paths = "/pci@i0cf8/scsi@2/disk@0,0\n",
				 .boot_strict = true,
				 .uuid = id};
	uint8_t dir[4 + 16 * 64], got[16], anchor[SMBIOS_ANCHOR_LEN], tables[2048];
	char err[256], order[128] = {0};
	uint16_t order_key = 0;
	size_t len;

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	ck_assert_int_eq(pc_fw_cfg_setup(f, &c, err, sizeof(err)), 0);
	select_key(&t, FW_CFG_FILE_DIR);
	read_bytes(&t, dir, sizeof(dir));
	for (unsigned i = 0; i < be32(dir); i++)
		if (!strcmp((const char *)dir + 4 + 64 * i + 8, "bootorder"))
			order_key = (uint16_t)(dir[4 + 64 * i + 4] << 8 | dir[4 + 64 * i + 5]);
	ck_assert_uint_ne(order_key, 0);
	select_key(&t, order_key);
	read_bytes(&t, (uint8_t *)order, sizeof(order) - 1);
	ck_assert_str_eq(order,
			 "/pci@i0cf8/scsi@2/disk@0,0\n/pci@i0cf8/ide@1,1/drive@0/disk@0\nHALT\n");
	select_key(&t, FW_CFG_UUID);
	read_bytes(&t, got, 16);
	ck_assert_mem_eq(got, id, 16);
	ck_assert_int_eq(smbios_build(&c, anchor, tables, sizeof(tables), &len), 0);
	ck_assert_uint_eq(tables[0], 1); /* type 1 comes first */
	ck_assert_mem_eq(tables + 8,
			 ((const uint8_t[]){0x78, 0x56, 0x34, 0x12, 0xbc, 0x9a, 0xf0, 0xde}), 8);
	ck_assert_mem_eq(tables + 16, id + 8, 8);
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

START_TEST(boot_order_is_validated)
{
	char err[256];

	ck_assert_int_eq(boot_order_check("c", err, sizeof(err)), 0);
	ck_assert_int_eq(boot_order_check("ndc", err, sizeof(err)), 0);
	ck_assert_int_eq(boot_order_check("x", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'x' is not a boot device"));
	ck_assert_int_eq(boot_order_check("cc", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "twice"));
	ck_assert_int_eq(boot_order_check("", err, sizeof(err)), -EINVAL);
}
END_TEST

/* The paths SeaBIOS gives drives (its build_pci_path and build_ata_path):
 * PIIX3 IDE by channel and unit, q35's ich9-ahci and any AHCI by port,
 * virtio-blk on the root bus or behind a root port; -boot on q35. */
START_TEST(seabios_device_paths)
{
	char p[96];

	fw_ide_drive_path(p, sizeof(p), false, 3);
	ck_assert_str_eq(p, "/pci@i0cf8/ide@1,1/drive@1/disk@1");
	fw_ide_drive_path(p, sizeof(p), true, 2);
	ck_assert_str_eq(p, "/pci@i0cf8/sata@1f,2/drive@2/disk@0");
	fw_ahci_drive_path(p, sizeof(p), 5 << 3, 4);
	ck_assert_str_eq(p, "/pci@i0cf8/sata@5/drive@4/disk@0");
	fw_virtio_disk_path(p, sizeof(p), -1, 4 << 3 | 1);
	ck_assert_str_eq(p, "/pci@i0cf8/scsi@4,1/disk@0,0");
	fw_virtio_disk_path(p, sizeof(p), 2 << 3 | 1, 0);
	ck_assert_str_eq(p, "/pci@i0cf8/pci-bridge@2,1/scsi@0/disk@0,0");
	ck_assert_uint_eq(boot_order_paths("dc", 2, true, p, sizeof(p)), 72);
	ck_assert_str_eq(
		p, "/pci@i0cf8/sata@1f,2/drive@2/disk@0\n/pci@i0cf8/sata@1f,2/drive@0/disk@0\n");
}
END_TEST

/* Walk SMBIOS structures as an OS does: formatted area, then strings up
 * to a double NUL. Returns the number of structures, or -1 when malformed. */
static int smbios_walk(const uint8_t *t, size_t len, unsigned *types, size_t *max_struct,
		       const uint8_t **type19)
{
	size_t off = 0;
	int n = 0;

	*max_struct = 0;
	while (off < len) {
		size_t start = off;

		if (len - off < 4 || t[off + 1] < 4 || off + t[off + 1] + 2 > len)
			return -1;
		types[t[off]]++;
		if (t[off] == 19 && !type19[0])
			type19[0] = t + off;
		else if (t[off] == 19)
			type19[1] = t + off;
		off += t[off + 1];
		while (off + 1 < len && (t[off] || t[off + 1]))
			off++;
		off += 2;
		if (off - start > *max_struct)
			*max_struct = off - start;
		n++;
		if (t[start] == 127)
			return off == len ? n : -1;
	}
	return -1;
}

START_TEST(smbios_tables_are_well_formed)
{
	struct e820_map m = {
		.e = {{0, 0x9fc00, E820_RAM}, {0x100000, 0x1ff00000, E820_RAM},
		      {0x100000000ull, 0x40000000, E820_RAM}},
		.n = 3,
	};
	struct pc_fw_config c = {.ram_size = 0x60000000, .ncpus = 3, .e820 = &m};
	uint8_t anchor[SMBIOS_ANCHOR_LEN], tables[2048];
	const uint8_t *t19[2] = {NULL, NULL};
	unsigned types[256] = {0};
	size_t len = 0, max_struct;
	int n;

	ck_assert_int_eq(smbios_build(&c, anchor, tables, sizeof(tables), &len), 0);
	ck_assert_mem_eq(anchor, "_SM_", 4);
	ck_assert_mem_eq(anchor + 0x10, "_DMI_", 5);
	ck_assert_uint_eq(anchor[5], SMBIOS_ANCHOR_LEN);
	ck_assert_uint_eq(io_data_get(anchor + 0x16, 2), len);
	n = smbios_walk(tables, len, types, &max_struct, t19);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(io_data_get(anchor + 0x1c, 2), (unsigned)n);
	ck_assert_uint_eq(io_data_get(anchor + 8, 2), max_struct);
	ck_assert_uint_eq(types[0], 0); /* SeaBIOS adds its own */
	ck_assert_uint_eq(types[1], 1);
	ck_assert_uint_eq(types[4], 3);
	ck_assert_uint_eq(types[16], 1);
	ck_assert_uint_eq(types[17], 1); /* 1.5 GiB: one device */
	ck_assert_uint_eq(types[19], 2);
	ck_assert_uint_eq(types[127], 1);
	/* mapped ranges in KiB: [0, 512 MiB) and [4 GiB, 5 GiB) */
	ck_assert_uint_eq(io_data_get(t19[0] + 4, 4), 0);
	ck_assert_uint_eq(io_data_get(t19[0] + 8, 4), (512u << 10) - 1);
	ck_assert_uint_eq(io_data_get(t19[1] + 4, 4), 4u << 20);
	ck_assert_uint_eq(io_data_get(t19[1] + 8, 4), (5u << 20) - 1);
	/* a buffer too small is an error, not a truncated table */
	ck_assert_int_eq(smbios_build(&c, anchor, tables, 100, &len), -ENOSPC);
}
END_TEST

START_TEST(smbios_files_in_fw_cfg)
{
	struct fake_host t;
	struct fw_cfg *f;
	struct pc_fw_config c = {.ram_size = 0x8000000, .ncpus = 1};
	uint8_t dir[4 + 64 * 64];
	char err[256];
	unsigned nfiles, found = 0;

	test_host_init(&t);
	f = fw_cfg_new(&t.host);
	ck_assert_int_eq(pc_fw_cfg_setup(f, &c, err, sizeof(err)), 0);
	select_key(&t, FW_CFG_FILE_DIR);
	read_bytes(&t, dir, sizeof(dir));
	nfiles = be32(dir);
	for (unsigned i = 0; i < nfiles && i < 64; i++) {
		const uint8_t *e = dir + 4 + 64 * i;

		if (!strcmp((const char *)e + 8, "etc/smbios/smbios-anchor")) {
			ck_assert_uint_eq(be32(e), SMBIOS_ANCHOR_LEN);
			found++;
		}
		if (!strcmp((const char *)e + 8, "etc/smbios/smbios-tables"))
			found++;
	}
	ck_assert_uint_eq(found, 2);
	fw_cfg_free(f);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fw_cfg");
	TCase *tc = tcase_create("fw_cfg");

	tcase_add_test(tc, signature_id_and_items);
	tcase_add_test(tc, file_directory_is_sorted);
	tcase_add_test(tc, dma_select_read_skip);
	tcase_add_test(tc, dma_bad_addresses_fail_cleanly);
	tcase_add_test(tc, pc_content_for_seabios);
	tcase_add_test(tc, boot_order_is_validated);
	tcase_add_test(tc, seabios_device_paths);
	tcase_add_test(tc, smbios_tables_are_well_formed);
	tcase_add_test(tc, smbios_files_in_fw_cfg);
	tcase_add_test(tc, strict_boot_and_uuid);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
