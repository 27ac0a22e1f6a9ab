/* Unit tests for the multiboot v1 loader with crafted images. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"
#include "tests/unit/check_run.h"

#define RAM_SIZE (8u << 20)

static uint8_t *ram;
static struct guest_mem mem;
static uint8_t img[16384];
static char err[256];

static void setup(void)
{
	ram = calloc(1, RAM_SIZE);
	mem = (struct guest_mem){.n = 1, .r = {{0, RAM_SIZE, ram}}, .ram_size = RAM_SIZE};
	memset(img, 0, sizeof(img));
	err[0] = 0;
}

static void teardown(void)
{
	free(ram);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(uint32_t gpa)
{
	uint32_t v;

	memcpy(&v, ram + gpa, 4);
	return v;
}

/* Multiboot header at off; with addr, the a.out kludge fields follow. */
static void header(size_t off, uint32_t flags, const uint32_t *addr)
{
	put32(img + off, 0x1BADB002);
	put32(img + off + 4, flags);
	put32(img + off + 8, -(0x1BADB002u + flags));
	for (int i = 0; addr && i < 5; i++)
		put32(img + off + 12 + 4 * i, addr[i]);
}

static int load_with(size_t size, const char *cmdline, const char *modules,
		     struct boot_cpu_state *cpu)
{
	struct boot_request req = {.kernel_path = "k.elf", .kernel = img, .kernel_size = size,
				   .cmdline = cmdline, .initrd_path = modules, .ncpus = 1,
				   .mem = &mem};

	return multiboot_load(&req, cpu, err, sizeof(err));
}

static int load(size_t size, const char *cmdline, struct boot_cpu_state *cpu)
{
	return load_with(size, cmdline, NULL, cpu);
}

/* A temporary file holding len bytes of c; the caller unlinks it. */
static void temp_file(char *path, size_t pathlen, char c, size_t len)
{
	char buf[64];
	int fd;

	snprintf(path, pathlen, "/tmp/test-multiboot-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	memset(buf, c, sizeof(buf));
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* An a.out-kludge kernel: header at file offset 64, loaded at 1 MiB. */
static void aout_image(uint32_t load_end, uint32_t bss_end)
{
	uint32_t addr[5] = {0x100040, 0x100000, load_end, bss_end, 0x100080};

	header(64, 1u << 16 | 3, addr);
	img[0x80] = 0xf4; /* hlt at the entry */
}

START_TEST(aout_kludge_loads_and_fills_info)
{
	struct boot_cpu_state cpu;
	uint32_t info = 0x9500;

	aout_image(0x100100, 0x102000);
	ram[0x100100] = 0xaa; /* bss must be cleared */
	ck_assert_int_eq(load(sizeof(img), "n=5", &cpu), 0);
	ck_assert_int_eq(cpu.mode, BOOT_MODE_PROT32_FLAT);
	ck_assert_uint_eq(cpu.rip, 0x100080);
	ck_assert_uint_eq(cpu.rax, 0x2BADB002);
	ck_assert_uint_eq(cpu.rbx, info);
	ck_assert_uint_eq(ram[0x100080], 0xf4);
	ck_assert_uint_eq(ram[0x100100], 0);
	ck_assert_uint_eq(get32(info) & 0x24f, 0x24f);
	ck_assert_str_eq((char *)ram + get32(info + 16), "k.elf n=5");
	ck_assert_str_eq((char *)ram + get32(info + 64), "vmm");
	ck_assert_uint_eq(get32(info + 4), 639);
	ck_assert_uint_eq(get32(info + 8), (RAM_SIZE - 0x100000) >> 10);
	ck_assert_uint_eq(get32(info + 48), 0x9000);
	ck_assert_uint_gt(get32(info + 44), 0);
	/* The info area follows the page-aligned kernel. */
	ck_assert_uint_eq(get32(info + 16) & ~0xfffu, 0x102000);
}
END_TEST

START_TEST(elf32_segments_load_at_paddr)
{
	Elf32_Ehdr eh = {.e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
			 .e_entry = 0x200000, .e_phoff = sizeof(Elf32_Ehdr),
			 .e_ehsize = sizeof(Elf32_Ehdr), .e_phentsize = sizeof(Elf32_Phdr),
			 .e_phnum = 1};
	Elf32_Phdr ph = {.p_type = PT_LOAD, .p_offset = 0x1000, .p_vaddr = 0x200000,
			 .p_paddr = 0x200000, .p_filesz = 0x100, .p_memsz = 0x3000,
			 .p_flags = PF_R | PF_X};
	struct boot_cpu_state cpu;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	header(0x1000, 3, NULL);
	ck_assert_int_eq(load(0x2000, "", &cpu), 0);
	ck_assert_uint_eq(cpu.rip, 0x200000);
	ck_assert_uint_eq(get32(0x200000), 0x1BADB002);
	/* Segment outside RAM. */
	ph.p_paddr = RAM_SIZE - 0x1000;
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	ck_assert_int_eq(load(0x2000, "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "outside guest RAM"));
	/* Truncated file. */
	ph.p_paddr = 0x200000;
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	ck_assert_int_eq(load(0x1010, "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
}
END_TEST

/* Issue 22: realmode.flat loads at 0x8000 over the fixed info place; the
 * info, memory map and strings then follow the kernel, as with QEMU. */
START_TEST(info_follows_a_kernel_over_0x9000)
{
	uint32_t addr[5] = {0x8000, 0x8000, 0xba30, 0xba30, 0x8080};
	struct boot_cpu_state cpu;
	uint32_t info;

	header(0, 1u << 16 | 3, addr);
	img[0x1000] = 0x5a; /* lands at 0x9000 and must stay */
	ck_assert_int_eq(load(0x3a30, "x=1", &cpu), 0);
	info = (uint32_t)cpu.rbx;
	ck_assert_uint_ge(info, 0xba30);
	ck_assert_uint_eq(ram[0x9000], 0x5a);
	ck_assert_uint_eq(get32(info) & 0x24f, 0x24f);
	ck_assert_uint_ge(get32(info + 48), 0xba30); /* memory map */
	ck_assert_uint_gt(get32(info + 44), 0);
	ck_assert_uint_ge(get32(info + 16), 0xba30); /* command line */
	ck_assert_str_eq((char *)ram + get32(info + 16), "k.elf x=1");
	ck_assert_uint_eq(get32(get32(info + 48)), 20); /* first entry's size field */
}
END_TEST

/* Issue 22: a PT_LOAD in the BIOS area (0xc0000-0xfffff, shadow RAM in its
 * own region, as vmm's i440fx adds it) loads; the legacy VGA hole does not. */
START_TEST(elf_segment_in_bios_area)
{
	static uint8_t shadow[0x40000];
	Elf32_Ehdr eh = {.e_type = ET_EXEC,
			 .e_machine = EM_386,
			 .e_version = EV_CURRENT,
			 .e_entry = 0x100000,
			 .e_phoff = sizeof(Elf32_Ehdr),
			 .e_ehsize = sizeof(Elf32_Ehdr),
			 .e_phentsize = sizeof(Elf32_Phdr),
			 .e_phnum = 2};
	Elf32_Phdr ph[2] = {
		{.p_type = PT_LOAD,
		 .p_offset = 0,
		 .p_paddr = 0xff000,
		 .p_vaddr = 0xff000,
		 .p_filesz = 0x74,
		 .p_memsz = 0x74,
		 .p_flags = PF_R},
		{.p_type = PT_LOAD,
		 .p_offset = 0x1000,
		 .p_paddr = 0x100000,
		 .p_vaddr = 0x100000,
		 .p_filesz = 0x100,
		 .p_memsz = 0x100,
		 .p_flags = PF_R | PF_X},
	};
	struct boot_cpu_state cpu;

	mem = (struct guest_mem){.n = 3, .ram_size = RAM_SIZE};
	mem.r[0] = (struct guest_ram_region){0, 0xa0000, ram};
	mem.r[1] = (struct guest_ram_region){0xc0000, sizeof(shadow), shadow};
	mem.r[2] = (struct guest_ram_region){0x100000, RAM_SIZE - 0x100000, ram + 0x100000};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), ph, sizeof(ph));
	header(0x1000, 3, NULL);
	ck_assert_int_eq(load(0x2000, "", &cpu), 0);
	ck_assert_mem_eq(shadow + 0x3f000, ELFMAG, SELFMAG);
	ck_assert_uint_eq(get32(0x100000), 0x1BADB002);
	ph[0].p_paddr = 0xa8000; /* VGA window: no RAM */
	memcpy(img + sizeof(eh), ph, sizeof(ph));
	ck_assert_int_eq(load(0x2000, "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "outside guest RAM"));
}
END_TEST

START_TEST(no_header_is_enoexec)
{
	struct boot_cpu_state cpu;

	ck_assert_int_eq(load(sizeof(img), "", &cpu), -ENOEXEC);
}
END_TEST

START_TEST(bad_checksum_is_an_error)
{
	struct boot_cpu_state cpu;

	aout_image(0, 0);
	put32(img + 64 + 8, 0);
	ck_assert_int_eq(load(sizeof(img), "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "checksum"));
}
END_TEST

START_TEST(huge_bss_is_outside_ram)
{
	struct boot_cpu_state cpu;

	aout_image(0x100100, 0xfffff000);
	ck_assert_int_eq(load(sizeof(img), "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "outside guest RAM"));
}
END_TEST

START_TEST(load_end_past_file_is_truncated)
{
	struct boot_cpu_state cpu;

	aout_image(0x100000 + sizeof(img) + 1, 0);
	ck_assert_int_eq(load(sizeof(img), "", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
}
END_TEST

START_TEST(overlong_cmdline_is_refused)
{
	struct boot_cpu_state cpu;
	char *big = malloc(70000);

	memset(big, 'x', 69999);
	big[69999] = 0;
	aout_image(0, 0);
	ck_assert_int_eq(load(sizeof(img), big, &cpu), -E2BIG);
	free(big);
}
END_TEST

START_TEST(header_after_8k_is_not_found)
{
	struct boot_cpu_state cpu;

	/* A valid header, but past the first 8 KiB the spec allows. */
	header(8192, 3, NULL);
	ck_assert_int_eq(load(sizeof(img), "", &cpu), -ENOEXEC);
}
END_TEST

START_TEST(modules_load_with_their_command_lines)
{
	struct boot_cpu_state cpu;
	char a[64], b[64], list[160];
	uint32_t info = 0x9500, mods;

	temp_file(a, sizeof(a), 'A', 10);
	temp_file(b, sizeof(b), 'B', 20);
	snprintf(list, sizeof(list), "%s x=1,,2,%s", a, b);
	aout_image(0x100100, 0x102000);
	ck_assert_int_eq(load_with(sizeof(img), "", list, &cpu), 0);
	ck_assert_uint_eq(get32(info) & 8, 8); /* MB_INFO_MODS */
	ck_assert_uint_eq(get32(info + 20), 2);
	mods = get32(info + 24);
	/* Module 0: 10 bytes of 'A', page aligned, its command line with the
	 * ",," unescaped; module 1 after it. */
	ck_assert_uint_eq(get32(mods) & 0xfff, 0);
	ck_assert_uint_eq(get32(mods + 4) - get32(mods), 10);
	ck_assert_uint_eq(ram[get32(mods)], 'A');
	ck_assert_uint_eq(ram[get32(mods) + 9], 'A');
	ck_assert_ptr_nonnull(strstr((char *)ram + get32(mods + 8), " x=1,2"));
	ck_assert_uint_eq(get32(mods + 20) - get32(mods + 16), 20);
	ck_assert_uint_ge(get32(mods + 16), get32(mods + 4));
	ck_assert_uint_eq(ram[get32(mods + 16) + 19], 'B');
	ck_assert_str_eq((char *)ram + get32(mods + 24), b);
	unlink(a);
	unlink(b);
}
END_TEST

START_TEST(bad_module_lists_are_refused)
{
	struct boot_cpu_state cpu;

	aout_image(0, 0);
	ck_assert_int_lt(load_with(sizeof(img), "", "/nonexistent/module", &cpu), 0);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/module"));
	ck_assert_int_eq(load_with(sizeof(img), "", "a,,b, arg", &cpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "empty module file name"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("multiboot");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, aout_kludge_loads_and_fills_info);
	tcase_add_test(tc, elf32_segments_load_at_paddr);
	tcase_add_test(tc, no_header_is_enoexec);
	tcase_add_test(tc, info_follows_a_kernel_over_0x9000);
	tcase_add_test(tc, elf_segment_in_bios_area);
	tcase_add_test(tc, bad_checksum_is_an_error);
	tcase_add_test(tc, huge_bss_is_outside_ram);
	tcase_add_test(tc, load_end_past_file_is_truncated);
	tcase_add_test(tc, overlong_cmdline_is_refused);
	tcase_add_test(tc, header_after_8k_is_not_found);
	tcase_add_test(tc, modules_load_with_their_command_lines);
	tcase_add_test(tc, bad_module_lists_are_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
