/* Unit tests for the firmware delivery of the ACPI tables: the fw_cfg
 * blobs and their table-loader commands, read back by a small loader of
 * our own that does what SeaBIOS does (allocate, patch pointers with the
 * addresses it chose, compute checksums), and compared with the tables a
 * direct (-kernel) boot puts into guest RAM. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/firmware.h"
#include "tests/unit/check_run.h"

/* Where our loader "allocates" the two files: a HIGH-zone address below
 * 4 GiB and one in the F segment, as SeaBIOS would. */
#define FAKE_TABLES_GPA 0x01fe0000u
#define FAKE_RSDP_GPA 0x000f5a30u

struct file {
	const char *name;
	uint8_t *data;
	size_t len;
	uint32_t gpa;
	bool allocated;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = size; i--;)
		v = v << 8 | p[i];
	return v;
}

static void wr(uint8_t *p, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

/* The file a command names in the 56-byte field at p (NUL-terminated
 * there), or a test failure. */
static struct file *named(struct file *files, unsigned n, const uint8_t *p)
{
	ck_assert_ptr_nonnull(memchr(p, 0, ACPI_LOADER_FILESZ));
	for (unsigned i = 0; i < n; i++)
		if (!strcmp((const char *)p, files[i].name))
			return &files[i];
	ck_abort_msg("loader names an unknown file '%s'", (const char *)p);
	return NULL;
}

/* Run the loader script over files like firmware would; *pointers gets
 * the number of ADD_POINTER commands. */
static void run_loader(const uint8_t *cmds, size_t len, struct file *files, unsigned n,
		       unsigned *pointers)
{
	*pointers = 0;
	ck_assert_uint_eq(len % ACPI_LOADER_CMD_LEN, 0);
	for (const uint8_t *c = cmds; c < cmds + len; c += ACPI_LOADER_CMD_LEN) {
		const uint8_t *a = c + 4;
		struct file *f = named(files, n, a), *to;
		uint32_t off, start, size;

		switch (rd32(c)) {
		case ACPI_LOADER_ALLOCATE:
			size = rd32(a + ACPI_LOADER_FILESZ);
			ck_assert(!f->allocated);
			ck_assert(size && !(size & (size - 1)));
			ck_assert_uint_eq(f->gpa % size, 0);
			if (a[ACPI_LOADER_FILESZ + 4] == ACPI_LOADER_ZONE_FSEG)
				ck_assert(f->gpa >= 0xe0000 && f->gpa + f->len <= 0x100000);
			else
				ck_assert_uint_eq(a[ACPI_LOADER_FILESZ + 4], ACPI_LOADER_ZONE_HIGH);
			f->allocated = true;
			break;
		case ACPI_LOADER_ADD_POINTER:
			to = named(files, n, a + ACPI_LOADER_FILESZ);
			off = rd32(a + 2 * ACPI_LOADER_FILESZ);
			size = a[2 * ACPI_LOADER_FILESZ + 4];
			ck_assert(f->allocated && to->allocated);
			ck_assert(size == 1 || size == 2 || size == 4 || size == 8);
			ck_assert_uint_le(off + size, f->len); /* the field is in its file */
			/* and points at a table inside the target file */
			ck_assert_uint_lt(rd(f->data + off, size), to->len);
			wr(f->data + off, size, rd(f->data + off, size) + to->gpa);
			(*pointers)++;
			break;
		case ACPI_LOADER_ADD_CHECKSUM:
			off = rd32(a + ACPI_LOADER_FILESZ);
			start = rd32(a + ACPI_LOADER_FILESZ + 4);
			size = rd32(a + ACPI_LOADER_FILESZ + 8);
			ck_assert(f->allocated);
			ck_assert_uint_le(start + size, f->len);
			ck_assert(off >= start && off < start + size);
			ck_assert_uint_eq(f->data[off], 0); /* as QEMU leaves it */
			f->data[off] -= sum(f->data + start, size);
			break;
		default:
			ck_abort_msg("unknown loader command %u", rd32(c));
		}
	}
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(files[i].allocated, "%s never allocated", files[i].name);
}

/* Guest memory as one or two placed files: the bytes at gpa, len of them. */
static const uint8_t *at(const struct file *files, unsigned n, uint64_t gpa, size_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (gpa >= files[i].gpa && gpa + len <= files[i].gpa + files[i].len)
			return files[i].data + (gpa - files[i].gpa);
	ck_abort_msg("address %#llx is outside every table", (unsigned long long)gpa);
	return NULL;
}

/* A table at gpa: signature sig, length within its file, checksum 0. */
static const uint8_t *table(const struct file *files, unsigned n, uint64_t gpa, const char *sig)
{
	const uint8_t *t = at(files, n, gpa, 36);

	ck_assert_mem_eq(t, sig, 4);
	t = at(files, n, gpa, rd32(t + 4));
	ck_assert_uint_eq(sum(t, rd32(t + 4)), 0);
	return t;
}

/* What a table says once pointers are taken out: FADT's FACS/DSDT fields
 * and the checksum zeroed; other tables as they are. */
static void normalized(const uint8_t *t, uint8_t *out)
{
	memcpy(out, t, rd32(t + 4));
	if (!memcmp(t, "FACP", 4)) {
		memset(out + 36, 0, 8);
		memset(out + 140, 0, 8);
		out[9] = 0;
	}
}

/* Walk RSDP -> XSDT (and RSDT) -> each table, FADT -> DSDT and FACS;
 * fill sigs with the XSDT's signatures, in order, and return how many. */
static unsigned walk(const struct file *files, unsigned n, uint64_t rsdp_gpa, char sigs[][5],
		     const uint8_t **tables)
{
	const uint8_t *rsdp = at(files, n, rsdp_gpa, 36), *xsdt, *rsdt, *fadt = NULL;
	unsigned count;

	ck_assert_mem_eq(rsdp, "RSD PTR ", 8);
	ck_assert_uint_eq(sum(rsdp, 20), 0);
	ck_assert_uint_eq(sum(rsdp, 36), 0);
	xsdt = table(files, n, rd(rsdp + 24, 8), "XSDT");
	rsdt = table(files, n, rd32(rsdp + 16), "RSDT");
	count = (rd32(xsdt + 4) - 36) / 8;
	ck_assert_uint_eq((rd32(rsdt + 4) - 36) / 4, count);
	for (unsigned i = 0; i < count; i++) {
		uint64_t gpa = rd(xsdt + 36 + 8 * i, 8);
		const uint8_t *t = at(files, n, gpa, 36);

		ck_assert_uint_eq(rd32(rsdt + 36 + 4 * i), gpa); /* both list the same */
		memcpy(sigs[i], t, 4);
		sigs[i][4] = 0;
		tables[i] = table(files, n, gpa, sigs[i]);
		if (!strcmp(sigs[i], "FACP"))
			fadt = tables[i];
	}
	ck_assert_ptr_nonnull(fadt);
	ck_assert_uint_eq(rd(fadt + 140, 8), rd32(fadt + 40)); /* X_DSDT = DSDT */
	tables[count] = table(files, n, rd32(fadt + 40), "DSDT");
	ck_assert_mem_eq(at(files, n, rd32(fadt + 36), 64), "FACS", 4);
	ck_assert_uint_eq(rd32(at(files, n, rd32(fadt + 36), 64) + 4), 64);
	ck_assert_uint_eq(rd32(fadt + 36) % 64, 0);
	return count;
}

/* Place the two fw_cfg files at the fake addresses and run the loader. */
static void load(struct acpi_fw_blobs *b, struct file files[2], unsigned *pointers)
{
	files[0] = (struct file){ACPI_FW_TABLES_FILE, b->tables, b->tables_len, FAKE_TABLES_GPA,
				 false};
	files[1] = (struct file){ACPI_FW_RSDP_FILE, b->rsdp, sizeof(b->rsdp), FAKE_RSDP_GPA, false};
	run_loader(b->loader, b->loader_len, files, 2, pointers);
}

/* The fw_cfg blobs, loaded; then the same walk over the direct-boot
 * tables: same tables, same contents but for the addresses. */
static void check_both_deliveries(unsigned ncpus, const uint8_t *apic_ids, uint16_t pvpanic,
				  unsigned dmar, const char *const *want)
{
	struct acpi_fw_blobs *b = calloc(1, sizeof(*b));
	uint8_t direct[FW_TABLES_SIZE];
	char sig_fw[8][5], sig_direct[8][5];
	const uint8_t *t_fw[9], *t_direct[9];
	unsigned n_fw, n_direct, pointers;
	struct file files[2], dfile;
	uint8_t norm_a[FW_TABLES_SIZE], norm_b[FW_TABLES_SIZE];
	const uint8_t *dsdt, *prt;
	/* Package (4) { 0x0001ffff, 3, Zero, 11 } */
	static const uint8_t uhci_intd[] = {0x12, 0x0c, 4,    0x0c, 0xff, 0xff, 0x01,
					    0x00, 0x0a, 0x03, 0x00, 0x0a, 11};

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(acpi_build_fw_cfg(b, ncpus, apic_ids, pvpanic, dmar), 0);
	ck_assert_uint_gt(b->tables_len, 0);
	load(b, files, &pointers);
	/* RSDP 2, FADT 3, XSDT and RSDT one per table */
	ck_assert_uint_eq(pointers, 2 + 3 + 2 * (2 + (dmar ? 1 : 0)));
	n_fw = walk(files, 2, FAKE_RSDP_GPA, sig_fw, t_fw);

	ck_assert_int_gt(acpi_build_dmar(direct, sizeof(direct), FW_TABLES_GPA, ncpus, apic_ids,
					 pvpanic, dmar),
			 0);
	dfile = (struct file){"direct", direct, sizeof(direct), FW_TABLES_GPA, true};
	n_direct = walk(&dfile, 1, FW_TABLES_GPA, sig_direct, t_direct);

	ck_assert_uint_eq(n_fw, n_direct);
	for (unsigned i = 0; want[i]; i++)
		ck_assert_str_eq(sig_fw[i], want[i]);
	for (unsigned i = 0; i <= n_fw; i++) { /* the DSDT is the last one */
		if (i < n_fw)
			ck_assert_str_eq(sig_fw[i], sig_direct[i]);
		ck_assert_uint_eq(rd32(t_fw[i] + 4), rd32(t_direct[i] + 4));
		normalized(t_fw[i], norm_a);
		normalized(t_direct[i], norm_b);
		ck_assert_mem_eq(norm_a, norm_b, rd32(t_fw[i] + 4));
	}
	dsdt = t_fw[n_fw];
	ck_assert_ptr_nonnull(memmem(dsdt, rd32(dsdt + 4), "_S5_", 4));
	prt = memmem(dsdt, rd32(dsdt + 4), "_PRT", 4);
	ck_assert_ptr_nonnull(prt);
	/* Package (124): every pin of slots 1-31; the PIIX3's UHCI (01.2,
	 * INTD) reaches PIRQD, GSI 11 */
	ck_assert_uint_eq(prt[4], 0x12);
	ck_assert_uint_eq(prt[7], 31 * 4);
	ck_assert_ptr_nonnull(
		memmem(prt, rd32(dsdt + 4) - (size_t)(prt - dsdt), uhci_intd, sizeof(uhci_intd)));
	ck_assert(!pvpanic == !memmem(dsdt, rd32(dsdt + 4), "QEMU0001", 8));
	free(b);
}

START_TEST(loader_links_tables_like_direct_boot)
{
	static const char *const plain[] = {"FACP", "APIC", NULL};
	static const char *const iommu[] = {"FACP", "APIC", "DMAR", NULL};

	/* -smp 8,sockets=2,cores=3: the core field is 2 bits wide */
	static const uint8_t sparse[8] = {0, 1, 2, 4, 5, 6, 8, 9};

	check_both_deliveries(1, NULL, 0, 0, plain);
	check_both_deliveries(4, NULL, 0x505, 0, plain);
	check_both_deliveries(8, sparse, 0x505, ACPI_DMAR_PRESENT | ACPI_DMAR_INTR_REMAP, iommu);
}
END_TEST

/* The MADT of the loaded tables lists every vCPU. */
START_TEST(loader_madt_lists_every_cpu)
{
	struct acpi_fw_blobs *b = calloc(1, sizeof(*b));
	struct file files[2];
	char sigs[8][5];
	const uint8_t *t[9];
	unsigned n, pointers, lapics = 0;

	uint8_t ids[16];

	for (unsigned i = 0; i < 16; i++)
		ids[i] = (uint8_t)(3 * i); /* any ascending, sparse list */
	ck_assert_int_eq(acpi_build_fw_cfg(b, 16, ids, 0, 0), 0);
	load(b, files, &pointers);
	n = walk(files, 2, FAKE_RSDP_GPA, sigs, t);
	for (unsigned i = 0; i < n; i++) {
		if (strcmp(sigs[i], "APIC"))
			continue;
		for (uint32_t off = 44; off < rd32(t[i] + 4); off += t[i][off + 1]) {
			if (t[i][off] == 0 && (t[i][off + 4] & 1))
				ck_assert_uint_eq(t[i][off + 3], ids[lapics++]);
			if (t[i][off] == 1) /* the I/O APIC after the last CPU */
				ck_assert_uint_eq(t[i][off + 2], ids[15] + 1);
		}
	}
	ck_assert_uint_eq(lapics, 16);
	ck_assert_int_eq(acpi_build_fw_cfg(b, 0, NULL, 0, 0), -EINVAL);
	free(b);
}
END_TEST

/* S3 resume after a SeaBIOS boot: vmm finds the waking vector through the
 * RSDP the table loader put into the BIOS area. */
START_TEST(waking_vector_of_loaded_tables)
{
	const size_t ram_size = 32u << 20;
	struct acpi_fw_blobs *b = calloc(1, sizeof(*b));
	uint8_t *ram = calloc(1, ram_size);
	struct guest_mem mem = {.n = 1, .ram_size = ram_size};
	struct file files[2];
	char sigs[8][5];
	const uint8_t *t[9];
	unsigned n, pointers;
	uint32_t facs = 0;

	mem.r[0] = (struct guest_ram_region){0, ram_size, ram};
	ck_assert_int_eq(acpi_build_fw_cfg(b, 2, NULL, 0, 0), 0);
	load(b, files, &pointers);
	n = walk(files, 2, FAKE_RSDP_GPA, sigs, t);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(sigs[i], "FACP"))
			facs = rd32(t[i] + 36);
	for (unsigned i = 0; i < 2; i++)
		memcpy(ram + files[i].gpa, files[i].data, files[i].len);
	ck_assert_uint_eq(fw_acpi_waking_vector(&mem), 0);
	wr(ram + facs + 12, 4, 0x9a000);
	ck_assert_uint_eq(fw_acpi_waking_vector(&mem), 0x9a000);
	free(ram);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acpi_loader");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, loader_links_tables_like_direct_boot);
	tcase_add_test(tc, loader_madt_lists_every_cpu);
	tcase_add_test(tc, waking_vector_of_loaded_tables);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
