/* Unit tests for the direct-boot firmware: ACPI and MP tables, the bzImage
 * and PVH loaders on crafted images, and the ACPI PM1 power-off device. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build/config.h"
#include "devices/dev_host.h"
#include "devices/isa/acpi_pm.h"
#include "firmware/firmware.h"
#include "tests/unit/check_run.h"

#define RAM (64u << 20)

static uint8_t *ram;
static struct guest_mem mem;
static struct e820_map e820;
static char err[256];

static void setup(void)
{
	ram = calloc(1, RAM);
	mem = (struct guest_mem){.n = 1, .ram_size = RAM};
	mem.r[0] = (struct guest_ram_region){0, RAM, ram};
	e820 = (struct e820_map){.n = 3};
	e820.e[0] = (struct e820_entry){0, 0xa0000, E820_RAM};
	e820.e[1] = (struct e820_entry){0xf0000, 0x10000, E820_RESERVED};
	e820.e[2] = (struct e820_entry){0x100000, RAM - 0x100000, E820_RAM};
	err[0] = 0;
}

static void teardown(void)
{
	free(ram);
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

/* The table the XSDT lists with signature sig, or NULL. */
static const uint8_t *find_table(const uint8_t *buf, uint32_t gpa, const char *sig)
{
	const uint8_t *xsdt = buf + (rd32(buf + 24) - gpa);

	for (uint32_t off = 36; off < rd32(xsdt + 4); off += 8) {
		const uint8_t *t = buf + (rd32(xsdt + off) - gpa);

		if (!memcmp(t, sig, 4))
			return t;
	}
	return NULL;
}

/* The DSDT of acpi_build(ncpus, pvpanic_port); buf holds the tables. */
static const uint8_t *check_acpi(uint8_t *buf, unsigned ncpus, uint16_t pvpanic_port)
{
	const uint32_t gpa = 0x9f000;
	int n = acpi_build(buf, 4096, gpa, ncpus, pvpanic_port);
	const uint8_t *madt, *fadt, *dsdt, *rsdt;
	unsigned lapics = 0;

	ck_assert_int_gt(n, 0);
	ck_assert_mem_eq(buf, "RSD PTR ", 8);
	ck_assert_uint_eq(sum(buf, 20), 0);
	ck_assert_uint_eq(sum(buf, 36), 0);
	rsdt = buf + (rd32(buf + 16) - gpa);
	ck_assert_mem_eq(rsdt, "RSDT", 4);
	ck_assert_uint_eq(sum(rsdt, rd32(rsdt + 4)), 0);
	madt = find_table(buf, gpa, "APIC");
	fadt = find_table(buf, gpa, "FACP");
	ck_assert_ptr_nonnull(madt);
	ck_assert_ptr_nonnull(fadt);
	ck_assert_uint_eq(sum(madt, rd32(madt + 4)), 0);
	ck_assert_uint_eq(sum(fadt, rd32(fadt + 4)), 0);
	ck_assert_uint_eq(rd32(fadt + 64), ACPI_PM_BASE + 4);
	dsdt = buf + (rd32(fadt + 40) - gpa);
	ck_assert_mem_eq(dsdt, "DSDT", 4);
	ck_assert_uint_eq(sum(dsdt, rd32(dsdt + 4)), 0);
	ck_assert_ptr_nonnull(memmem(dsdt, rd32(dsdt + 4), "_S5_", 4));
	for (uint32_t off = 44; off < rd32(madt + 4); off += madt[off + 1]) {
		ck_assert_uint_gt(madt[off + 1], 0);
		if (madt[off] == 0) {
			ck_assert_uint_eq(madt[off + 3], lapics);	/* APIC ids 0..n-1 */
			lapics++;
		}
		if (madt[off] == 1)
			ck_assert_uint_eq(rd32(madt + off + 4), FW_IOAPIC_GPA);
	}
	ck_assert_uint_eq(lapics, ncpus);
	return dsdt;
}

START_TEST(acpi_one_and_four_cpus)
{
	uint8_t buf[4096];
	const uint8_t *dsdt = check_acpi(buf, 1, 0);

	ck_assert_ptr_null(memmem(dsdt, rd32(dsdt + 4), "QEMU0001", 8));
	check_acpi(buf, 4, 0);
	ck_assert_int_eq(acpi_build(ram, 64, 0, 1, 0), -ENOSPC);
	ck_assert_int_eq(acpi_build(ram, 4096, 0, 0, 0), -EINVAL);
}
END_TEST

/* -device intel-iommu: a DMAR table with one DRHD at the VT-d
 * registers, INCLUDE_PCI_ALL, the I/O APIC (id = ncpus) as 0xff:00.0. */
START_TEST(acpi_dmar_table)
{
	const uint32_t gpa = 0x9f000;
	uint8_t buf[4096];
	const uint8_t *dmar;

	ck_assert_int_gt(acpi_build_dmar(buf, sizeof(buf), gpa, 4, NULL, 0, 0), 0);
	ck_assert_ptr_null(find_table(buf, gpa, "DMAR"));
	ck_assert_int_gt(acpi_build_dmar(buf, sizeof(buf), gpa, 4, NULL, 0,
					 ACPI_DMAR_PRESENT | ACPI_DMAR_INTR_REMAP),
			 0);
	dmar = find_table(buf, gpa, "DMAR");
	ck_assert_ptr_nonnull(dmar);
	ck_assert_uint_eq(rd32(dmar + 4), 48 + 16 + 8);
	ck_assert_uint_eq(sum(dmar, rd32(dmar + 4)), 0);
	ck_assert_uint_eq(dmar[36], 47); /* host address width - 1 */
	ck_assert_uint_eq(dmar[37], 1);	 /* INTR_REMAP */
	ck_assert_uint_eq(dmar[48], 0);	 /* DRHD */
	ck_assert_uint_eq(dmar[48 + 4], 1); /* INCLUDE_PCI_ALL */
	ck_assert_uint_eq(rd32(dmar + 48 + 8), 0xfed90000u);
	ck_assert_uint_eq(dmar[64], 3);	     /* scope: I/O APIC */
	ck_assert_uint_eq(dmar[64 + 4], 4);  /* its id */
	ck_assert_uint_eq(dmar[64 + 5], 0xff); /* bus */
	ck_assert_uint_eq(sum(buf + (rd32(buf + 16) - gpa), rd32(buf + (rd32(buf + 16) - gpa) + 4)),
			  0);
}
END_TEST

/* -device pvpanic,ioport=0x567: Device (PEVT) with _HID "QEMU0001" and
 * an I/O resource of one byte at 0x567, inside a well-formed Device. */
START_TEST(acpi_pvpanic_device)
{
	static const uint8_t io[] = {0x47, 0x01, 0x67, 0x05, 0x67, 0x05, 0x01, 0x01};
	uint8_t buf[4096];
	const uint8_t *dsdt = check_acpi(buf, 2, 0x567), *hid, *dev;
	uint32_t len = rd32(dsdt + 4);

	hid = memmem(dsdt, len, "_HID\x0dQEMU0001", 13);
	ck_assert_ptr_nonnull(hid);
	ck_assert_ptr_nonnull(memmem(hid, len - (uint32_t)(hid - dsdt), io, sizeof(io)));
	/* DeviceOp, a one-byte PkgLength that ends at the DSDT's end, PEVT */
	dev = memmem(dsdt, len, "PEVT", 4);
	ck_assert_ptr_nonnull(dev);
	ck_assert_uint_eq(dev[-3], 0x5b);
	ck_assert_uint_eq(dev[-2], 0x82);
	ck_assert_ptr_eq(dev - 1 + dev[-1], dsdt + len);
}
END_TEST

static void check_mp(unsigned ncpus)
{
	uint8_t buf[1024];
	int n = mptable_build(buf, sizeof(buf), 0x9fc00, ncpus, NULL);
	const uint8_t *cfg = buf + 16;
	unsigned cpus = 0, off = 44;

	ck_assert_int_gt(n, 0);
	ck_assert_mem_eq(buf, "_MP_", 4);
	ck_assert_uint_eq(sum(buf, 16), 0);
	ck_assert_uint_eq(rd32(buf + 4), 0x9fc10);
	ck_assert_mem_eq(cfg, "PCMP", 4);
	ck_assert_uint_eq(sum(cfg, cfg[4] | cfg[5] << 8), 0);
	for (unsigned i = 0; i < (unsigned)(cfg[34] | cfg[35] << 8); i++) {
		if (cfg[off] == 0) {
			ck_assert_uint_eq(cfg[off + 1], cpus);
			ck_assert_uint_eq(!!(cfg[off + 3] & 2), cpus == 0); /* BSP flag */
			cpus++;
		}
		off += cfg[off] == 0 ? 20 : 8;
	}
	ck_assert_uint_eq(off, (unsigned)(cfg[4] | cfg[5] << 8));
	ck_assert_uint_eq(cpus, ncpus);
}

START_TEST(mptable_one_and_four_cpus)
{
	check_mp(1);
	check_mp(4);
	ck_assert_int_eq(mptable_build(ram, 32, 0, 4, NULL), -ENOSPC);
}
END_TEST

/* -smp sockets=2,cores=3: the APIC IDs skip 3 (QEMU's bit fields), and
 * the MADT, the MP table and the I/O APIC after the last CPU say so. */
START_TEST(tables_list_sparse_apic_ids)
{
	static const uint8_t ids[] = {0, 1, 2, 4, 5, 6};
	const uint32_t gpa = 0x9f000;
	uint8_t buf[4096];
	const uint8_t *madt, *p, *cfg = buf + 16;
	unsigned cpus = 0, off = 44;

	ck_assert_int_gt(acpi_build_dmar(buf, sizeof(buf), gpa, 6, ids, 0, 0), 0);
	madt = find_table(buf, gpa, "APIC");
	ck_assert_ptr_nonnull(madt);
	for (p = madt + 44; p < madt + rd32(madt + 4); p += p[1]) {
		if (p[0] == 0) { /* processor local APIC: UID, APIC ID */
			ck_assert_uint_eq(p[2], cpus);
			ck_assert_uint_eq(p[3], ids[cpus]);
			cpus++;
		} else if (p[0] == 1) {
			ck_assert_uint_eq(p[2], 7); /* the I/O APIC's id */
		}
	}
	ck_assert_uint_eq(cpus, 6);
	ck_assert_int_gt(mptable_build(buf, 1024, 0x9fc00, 6, ids), 0);
	for (cpus = 0; off < (unsigned)(cfg[4] | cfg[5] << 8); off += cfg[off] == 0 ? 20 : 8) {
		if (cfg[off] == 0)
			ck_assert_uint_eq(cfg[off + 1], ids[cpus++]);
		else if (cfg[off] == 2)
			ck_assert_uint_eq(cfg[off + 1], 7);
	}
	ck_assert_uint_eq(cpus, 6);
	/* no room for an I/O APIC id after 254 */
	ck_assert_int_eq(mptable_build(buf, 1024, 0x9fc00, 1, (const uint8_t[]){255}), -EINVAL);
}
END_TEST

START_TEST(tables_in_guest_ram_and_e820)
{
	struct e820_map out;
	uint64_t rsdp = 0;

	ck_assert_int_eq(fw_tables_build(&(struct boot_request){.mem = &mem, .ncpus = 2}, &rsdp, err,
				  sizeof(err)),
			 0);
	ck_assert_uint_eq(rsdp, FW_TABLES_GPA);
	ck_assert_mem_eq(ram + FW_TABLES_GPA, "RSD PTR ", 8);
	ck_assert_mem_eq(ram + FW_TABLES_GPA + 0xc00, "_MP_", 4);
	ck_assert_uint_eq(ram[0x40e] | ram[0x40f] << 8, FW_TABLES_GPA >> 4);
	ck_assert_int_eq(fw_e820_with_tables(&e820, &out), 0);
	ck_assert_uint_eq(out.n, 4);
	ck_assert_uint_eq(out.e[0].addr + out.e[0].size, FW_TABLES_GPA);
	ck_assert_uint_eq(out.e[3].addr, FW_TABLES_GPA);
	ck_assert_uint_eq(out.e[3].type, E820_RESERVED);
	/* -no-acpi: the MP table alone, and no RSDP left from the boot before */
	ck_assert_int_eq(fw_tables_build(&(struct boot_request){.mem = &mem, .ncpus = 2, .no_acpi = true},
					 &rsdp, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(rsdp, 0);
	ck_assert_mem_ne(ram + FW_TABLES_GPA, "RSD PTR ", 8);
	ck_assert_mem_eq(ram + FW_TABLES_GPA + 0xc00, "_MP_", 4);
}
END_TEST

/* A synthetic bzImage: 4 setup sectors + kernel bytes. */
#define BZ_SETUP (5 * 512)
#define BZ_KERNEL 8192
static uint8_t bz[BZ_SETUP + BZ_KERNEL];

static void make_bzimage(uint16_t version, uint8_t relocatable)
{
	memset(bz, 0, sizeof(bz));
	bz[0x1f1] = 4;
	*(uint32_t *)(bz + 0x1f4) = BZ_KERNEL / 16;	/* syssize */
	bz[0x1fe] = 0x55;
	bz[0x1ff] = 0xaa;
	bz[0x200] = 0xeb;
	bz[0x201] = 0x6a;			/* header ends at 0x26c */
	memcpy(bz + 0x202, "HdrS", 4);
	bz[0x206] = version & 0xff;
	bz[0x207] = version >> 8;
	*(uint32_t *)(bz + 0x22c) = 0x7fffffff; /* initrd_addr_max */
	*(uint32_t *)(bz + 0x230) = 0x200000;	/* kernel_alignment */
	bz[0x234] = relocatable;
	bz[0x236] = 1;				/* XLF_KERNEL_64 */
	*(uint32_t *)(bz + 0x238) = 2047;	/* cmdline_size */
	*(uint64_t *)(bz + 0x258) = 0x1000000;	/* pref_address */
	*(uint32_t *)(bz + 0x260) = 0x400000;	/* init_size */
	memset(bz + BZ_SETUP, 0x90, BZ_KERNEL);
}

static char initrd_path[] = "/tmp/vmm-test-initrd-XXXXXX";

static int write_initrd(size_t size)
{
	int fd = mkstemp(initrd_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	if (size)
		ck_assert_int_eq(pwrite(fd, "070701", 6, 0), 6);
	close(fd);
	return 0;
}

static int boot_bz(size_t len, const char *initrd, struct boot_cpu_state *cpu)
{
	struct boot_request req = {
		.kernel_path = "bzImage", .kernel = bz, .kernel_size = len,
		.initrd_path = initrd, .cmdline = "console=ttyS0", .ncpus = 1,
		.mem = &mem, .e820 = &e820,
	};

	memset(cpu, 0, sizeof(*cpu));
	return linux_load(&req, cpu, err, sizeof(err));
}

START_TEST(bzimage_good)
{
	struct boot_cpu_state cpu;
	const uint8_t *bp;

	make_bzimage(0x20f, 1);
	write_initrd(1 << 20);
	ck_assert_int_eq(boot_bz(sizeof(bz), initrd_path, &cpu), 0);
	unlink(initrd_path);
	ck_assert_int_eq(cpu.mode, BOOT_MODE_LONG64);
	ck_assert_uint_eq(cpu.rip, 0x1000000 + 0x200);
	bp = ram + cpu.rsi;
	ck_assert_uint_eq(rd32(bp + 0x214), 0x1000000);		/* code32_start */
	ck_assert_str_eq((const char *)ram + rd32(bp + 0x228), "console=ttyS0");
	ck_assert_uint_eq(rd32(bp + 0x21c), 1 << 20);		/* ramdisk_size */
	ck_assert_uint_ge(rd32(bp + 0x218), 0x1000000 + 0x400000); /* above the kernel */
	ck_assert_uint_le(rd32(bp + 0x218) + (1 << 20), RAM);
	ck_assert_mem_eq(ram + rd32(bp + 0x218), "070701", 6);
	ck_assert_uint_eq(bp[0x1e8], 4);				/* e820 entries */
	ck_assert_uint_eq(bp[0x211] & 1, 1);			/* LOADED_HIGH */
	ck_assert_uint_eq(*(uint64_t *)(bp + 0x70), FW_TABLES_GPA); /* acpi_rsdp_addr */
	ck_assert_uint_eq(ram[0x1000000], 0x90);
	/* identity map: PML4 -> PDPT -> PD with 2 MiB pages */
	ck_assert_uint_eq(*(uint64_t *)(ram + cpu.cr3) & ~0xfffull, 0xa000);
}
END_TEST

START_TEST(bzimage_bad_inputs)
{
	struct boot_cpu_state cpu;

	make_bzimage(0x20f, 1);
	ck_assert_int_eq(boot_bz(0x300, NULL, &cpu), -EINVAL);		/* truncated */
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(boot_bz(sizeof(bz) - 16, NULL, &cpu), -EINVAL);	/* kernel cut */
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(boot_bz(0x100, NULL, &cpu), -ENOEXEC);		/* not a bzImage */
	make_bzimage(0x205, 1);
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "2.05 is too old"));
	make_bzimage(0x20f, 0);
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not relocatable"));
	make_bzimage(0x20f, 1);
	write_initrd(80u << 20);					/* > RAM */
	ck_assert_int_eq(boot_bz(sizeof(bz), initrd_path, &cpu), -ENOMEM);
	unlink(initrd_path);
	ck_assert_ptr_nonnull(strstr(err, "does not fit"));
	ck_assert_ptr_null(strchr(err, '\n'));
	/* a preferred address whose end wraps past 2^64 into RAM (fuzz
	 * finding): placed nowhere, not "fitted" at 16 EiB */
	*(uint64_t *)(bz + 0x258) = 0xffffffff00800000ull;
	*(uint32_t *)(bz + 0x260) = 0xffbfffff;
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), -ENOMEM);
	ck_assert_ptr_nonnull(strstr(err, "it needs")); /* refused by the placement */
	make_bzimage(0x20f, 1);
	mem.r[0].size = mem.ram_size = 4u << 20;			/* -m too small */
	e820.e[2].size = (4u << 20) - 0x100000;
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), -ENOMEM);
	ck_assert_ptr_nonnull(strstr(err, "too small"));
}
END_TEST

/* A 64-bit ELF with one PT_LOAD and, optionally, the PVH note. */
static uint8_t elf[4096];

static size_t make_elf(bool with_note)
{
	Elf64_Ehdr *eh = (void *)elf;
	Elf64_Phdr *ph = (void *)(elf + sizeof(*eh));
	Elf64_Nhdr *nh = (void *)(elf + 0x200);
	uint64_t entry = 0x1000123;

	memset(elf, 0, sizeof(elf));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_machine = EM_X86_64;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 2;
	ph[0] = (Elf64_Phdr){.p_type = PT_LOAD, .p_offset = 0x400, .p_paddr = 0x1000000,
			     .p_filesz = 0x100, .p_memsz = 0x2000};
	ph[1] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = 0x200, .p_filesz = 24};
	nh->n_namesz = 4;
	nh->n_descsz = 8;
	nh->n_type = with_note ? 18 : 1;
	memcpy(elf + 0x200 + sizeof(*nh), "Xen", 4);
	memcpy(elf + 0x200 + sizeof(*nh) + 4, &entry, 8);
	memset(elf + 0x400, 0xcc, 0x100);
	return sizeof(elf);
}

static int boot_pvh(size_t len, const char *initrd, struct boot_cpu_state *cpu)
{
	struct boot_request req = {
		.kernel_path = "vmlinux", .kernel = elf, .kernel_size = len,
		.initrd_path = initrd, .cmdline = "quiet", .ncpus = 4,
		.mem = &mem, .e820 = &e820,
	};

	memset(cpu, 0, sizeof(*cpu));
	return pvh_load(&req, cpu, err, sizeof(err));
}

START_TEST(pvh_note_present_and_absent)
{
	struct boot_cpu_state cpu;
	const uint8_t *si;

	write_initrd(4096);
	ck_assert_int_eq(boot_pvh(make_elf(true), initrd_path, &cpu), 0);
	ck_assert_int_eq(cpu.mode, BOOT_MODE_PROT32_FLAT);
	ck_assert_uint_eq(cpu.rip, 0x1000123);
	si = ram + cpu.rbx;
	ck_assert_uint_eq(rd32(si), 0x336ec578);
	ck_assert_uint_eq(rd32(si + 12), 1);				/* nr_modules */
	ck_assert_str_eq((const char *)ram + rd32(si + 24), "quiet");
	ck_assert_uint_eq(rd32(si + 32), FW_TABLES_GPA);		/* rsdp */
	ck_assert_uint_eq(rd32(si + 48), 4);				/* memmap entries */
	ck_assert_uint_eq(ram[0x1000000], 0xcc);
	ck_assert_uint_eq(ram[0x1001000], 0);				/* bss cleared */
	ck_assert_int_eq(boot_pvh(make_elf(false), initrd_path, &cpu), -EINVAL);
	unlink(initrd_path);
	ck_assert_ptr_nonnull(strstr(err, "PVH"));
	ck_assert_int_eq(boot_pvh(0x30, NULL, &cpu), -ENOEXEC);	/* shorter than a header */
	make_elf(true);
	((Elf64_Ehdr *)elf)->e_phnum = 200;
	ck_assert_int_eq(boot_pvh(sizeof(elf), NULL, &cpu), -EINVAL);	/* truncated */
}
END_TEST

/* The payload as the kernel's "lz4 -l" writes it (legacy magic, one
 * block of literals only, the unpacked size appended), at offset 0x100 of
 * the protected-mode kernel. */
static void set_lz4_payload(const uint8_t *data, size_t n)
{
	uint8_t *p = bz + BZ_SETUP + 0x100, *q = p;
	size_t rest = n - 15;
	uint32_t v;

	memcpy(q, (uint32_t[]){0x184c2102}, 4);
	q += 8;					/* block size filled below */
	*q++ = 0xf0;				/* token: 15+ literals, no match */
	for (; rest >= 255; rest -= 255)
		*q++ = 255;
	*q++ = (uint8_t)rest;
	memcpy(q, data, n);
	q += n;
	v = (uint32_t)(q - p - 8);
	memcpy(p + 4, &v, 4);
	v = (uint32_t)n;
	memcpy(q, &v, 4);
	q += 4;
	*(uint32_t *)(bz + 0x248) = 0x100;			/* payload_offset */
	*(uint32_t *)(bz + 0x24c) = (uint32_t)(q - p);	/* payload_length */
}

START_TEST(bzimage_lz4_payload_unpacked_natively)
{
	struct boot_cpu_state cpu;

	make_bzimage(0x20f, 1);
	make_elf(false);
	((Elf64_Ehdr *)elf)->e_entry = 0x1000040;
	((Elf64_Ehdr *)elf)->e_shoff = sizeof(elf) - 64;	/* section headers end it */
	((Elf64_Ehdr *)elf)->e_shnum = 1;
	((Elf64_Ehdr *)elf)->e_shentsize = 64;
	set_lz4_payload(elf, sizeof(elf));
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), 0);
#if HAVE_LZ4
	ck_assert_uint_eq(cpu.rip, 0x1000040);			/* the kernel proper */
	ck_assert_uint_eq(ram[0x1000000], 0xcc);		/* its segment */
	ck_assert_uint_eq(ram[0x1001fff], 0);			/* and bss */
#else
	ck_assert_uint_eq(cpu.rip, 0x1000000 + 0x200);		/* without liblz4: its decompressor */
#endif

	memset(ram, 0, RAM);
	((Elf64_Ehdr *)elf)->e_shoff -= 64;			/* 64 bytes of relocs after it */
	set_lz4_payload(elf, sizeof(elf));
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), 0);
	ck_assert_uint_eq(cpu.rip, 0x1000000 + 0x200);		/* KASLR: its decompressor */

	memset(ram, 0, RAM);
	((Elf64_Ehdr *)elf)->e_shoff += 64;
	set_lz4_payload(elf, sizeof(elf));
	bz[BZ_SETUP + 0x100 + 8] = 0x00;			/* corrupt the block */
	ck_assert_int_eq(boot_bz(sizeof(bz), NULL, &cpu), 0);
	ck_assert_uint_eq(cpu.rip, 0x1000000 + 0x200);		/* kernel's decompressor */
	ck_assert_uint_eq(ram[0x1000000], 0x90);
}
END_TEST

static int powered_off;

static void on_poweroff(void *opaque)
{
	powered_off++;
}

START_TEST(acpi_pm_poweroff)
{
	struct dev_host host = {.pio = iobus_new("io")};
	struct acpi_pm *pm = acpi_pm_new(&host, ACPI_PM_BASE, ACPI_S5_SLP_TYP, on_poweroff, NULL);
	uint16_t v = 0;

	ck_assert_ptr_nonnull(pm);
	iobus_read(host.pio, ACPI_PM_BASE + 4, &v, 2);
	ck_assert_uint_eq(v & 1, 1);					/* SCI_EN */
	v = 3 << 10 | 1 << 13;						/* S3: ignored */
	iobus_write(host.pio, ACPI_PM_BASE + 4, &v, 2);
	ck_assert_int_eq(powered_off, 0);
	v = ACPI_S5_SLP_TYP << 10;					/* no SLP_EN */
	iobus_write(host.pio, ACPI_PM_BASE + 4, &v, 2);
	ck_assert_int_eq(powered_off, 0);
	v |= 1 << 13;
	iobus_write(host.pio, ACPI_PM_BASE + 4, &v, 2);
	ck_assert_int_eq(powered_off, 1);
	acpi_pm_free(pm);
	iobus_free(host.pio);
}
END_TEST

/* Issue 22: the RSDP also in the BIOS area, _S3 in the DSDT, the FACS
 * waking vector found through the tables. */
START_TEST(acpi_rsdp_in_bios_area_s3_and_waking_vector)
{
	uint32_t rsdt, fadt = 0, facs, dsdt;
	bool s3 = false;

	ck_assert_int_eq(fw_tables_build(&(struct boot_request){.mem = &mem, .ncpus = 1}, NULL, err, sizeof(err)), 0);
	ck_assert_mem_eq(ram + 0xe0000, ram + FW_TABLES_GPA, 36);
	rsdt = *(uint32_t *)(ram + FW_TABLES_GPA + 16);
	for (uint32_t at = rsdt + 36; at < rsdt + *(uint32_t *)(ram + rsdt + 4); at += 4)
		if (!memcmp(ram + *(uint32_t *)(ram + at), "FACP", 4))
			fadt = *(uint32_t *)(ram + at);
	ck_assert_uint_ne(fadt, 0);
	facs = *(uint32_t *)(ram + fadt + 36);
	dsdt = *(uint32_t *)(ram + fadt + 40);
	ck_assert_mem_eq(ram + facs, "FACS", 4);
	ck_assert_uint_eq(*(uint32_t *)(ram + fadt + 76), ACPI_PM_BASE + ACPI_PM_TMR_OFF);
	ck_assert_uint_eq(ram[fadt + 91], 4); /* PM_TMR_LEN */
	for (uint32_t i = 36; i + 10 < *(uint32_t *)(ram + dsdt + 4); i++)
		s3 |= !memcmp(ram + dsdt + i, "_S3_\x12\x08\x04\x0a\x01", 9);
	ck_assert(s3);
	ck_assert_uint_eq(fw_acpi_waking_vector(&mem), 0);
	*(uint32_t *)(ram + facs + 12) = 0x1000;
	ck_assert_uint_eq(fw_acpi_waking_vector(&mem), 0x1000);
	/* disable_s3=1 (libvirt's <suspend-to-mem enabled='no'/>): no _S3 */
	ck_assert_int_eq(fw_tables_build(&(struct boot_request){.mem = &mem, .ncpus = 1, .no_s3 = true},
					 NULL, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(*(uint32_t *)(ram + fadt + 40), dsdt);
	ck_assert(!memmem(ram + dsdt, *(uint32_t *)(ram + dsdt + 4), "_S3_", 4));
	ck_assert(memmem(ram + dsdt, *(uint32_t *)(ram + dsdt + 4), "_S5_", 4));
}
END_TEST

static int slept;

static void on_sleep(void *opaque)
{
	slept++;
}

START_TEST(acpi_pm_s3_and_rtc_wake)
{
	struct dev_host host = {.pio = iobus_new("io")};
	struct acpi_pm *pm = acpi_pm_new(&host, ACPI_PM_BASE, ACPI_S5_SLP_TYP, on_poweroff, NULL);
	uint16_t v;

	acpi_pm_set_sleep(pm, ACPI_S3_SLP_TYP, on_sleep, NULL);
	powered_off = 0;
	v = ACPI_S3_SLP_TYP << 10 | 1 << 13; /* what s3.flat writes: 0x2400 */
	iobus_write(host.pio, ACPI_PM_BASE + 4, &v, 2);
	ck_assert_int_eq(slept, 1);
	ck_assert_int_eq(powered_off, 0);
	ck_assert(!acpi_pm_rtc_wake(pm)); /* RTC_EN clear: no wake */
	v = 0x400;
	iobus_write(host.pio, ACPI_PM_BASE + 2, &v, 2);
	ck_assert(acpi_pm_rtc_wake(pm));
	iobus_read(host.pio, ACPI_PM_BASE, &v, 2);
	ck_assert_uint_eq(v, 0x8400); /* WAK_STS | RTC_STS */
	{ /* the PM timer: 3.579545 MHz, 24 bits */
		uint32_t t0 = 0, t1 = 0;

		iobus_read(host.pio, ACPI_PM_BASE + ACPI_PM_TMR_OFF, &t0, 4);
		usleep(20000);
		iobus_read(host.pio, ACPI_PM_BASE + ACPI_PM_TMR_OFF, &t1, 4);
		ck_assert_uint_lt(t0 | t1, 1u << 24);
		ck_assert_uint_ge((t1 - t0) & 0xffffff, 71590);	 /* >= 20 ms */
		ck_assert_uint_lt((t1 - t0) & 0xffffff, 3579545); /* < 1 s */
	}
	acpi_pm_free(pm);
	iobus_free(host.pio);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("direct_boot");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, acpi_one_and_four_cpus);
	tcase_add_test(tc, acpi_pvpanic_device);
	tcase_add_test(tc, acpi_dmar_table);
	tcase_add_test(tc, mptable_one_and_four_cpus);
	tcase_add_test(tc, tables_list_sparse_apic_ids);
	tcase_add_test(tc, tables_in_guest_ram_and_e820);
	tcase_add_test(tc, bzimage_good);
	tcase_add_test(tc, bzimage_bad_inputs);
	tcase_add_test(tc, pvh_note_present_and_absent);
	tcase_add_test(tc, bzimage_lz4_payload_unpacked_natively);
	tcase_add_test(tc, acpi_pm_poweroff);
	tcase_add_test(tc, acpi_rsdp_in_bios_area_s3_and_waking_vector);
	tcase_add_test(tc, acpi_pm_s3_and_rtc_wake);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
