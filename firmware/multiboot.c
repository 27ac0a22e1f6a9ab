/* multiboot.c — Multiboot v1 loader (-kernel with a multiboot header).
 *
 * It lays guest memory out the way QEMU's multiboot loader does, so payloads
 * that run under `qemu-system-x86_64 -kernel` run here unchanged:
 *   - the kernel at its ELF32 physical addresses, or at the a.out-kludge
 *     addresses when header flag 16 is set;
 *   - right after the kernel (page aligned, counted from its lowest address):
 *     the module list, the module command lines, the kernel command line
 *     "<kernel path> <append>", the boot loader name; then each module,
 *     page aligned;
 *   - the memory map at 0x9000 and the multiboot info at 0x9500, or, when
 *     the kernel covers those (kvm-unit-tests' realmode.flat loads at
 *     0x8000), both right after the kernel, before the module list: the
 *     info is always where the kernel is not, as with QEMU.
 * ELF segments may load anywhere the PC has RAM, the BIOS area's shadow RAM
 * (0xc0000-0xfffff) included.
 * EAX = 0x2BADB002, EBX = the info address, 32-bit flat protected mode.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"

#define MB_HEADER_MAGIC 0x1BADB002u
#define MB_BOOT_MAGIC 0x2BADB002u
#define MB_SEARCH_END (8192u - 48u) /* the header is 48 bytes at most */
#define MB_HDR_VIDEO_MODE (1u << 2)
#define MB_HDR_AOUT_KLUDGE (1u << 16)

#define MB_INFO_MEMORY (1u << 0)
#define MB_INFO_BOOTDEV (1u << 1)
#define MB_INFO_CMDLINE (1u << 2)
#define MB_INFO_MODS (1u << 3)
#define MB_INFO_MMAP (1u << 6)
#define MB_INFO_LOADER_NAME (1u << 9)

#define MB_MMAP_GPA 0x9000u
#define MB_INFO_GPA 0x9500u
#define MB_INFO_SIZE 88u
#define MB_MMAP_ENTRY_SIZE 24u /* the size field (20) and 20 bytes of entry */
#define MB_MMAP_MAX (E820_MAX_ENTRIES * MB_MMAP_ENTRY_SIZE)
#define MB_MOD_ENTRY_SIZE 16u
#define MB_BOOT_DEVICE 0x8000ffffu /* "no BIOS boot device", as QEMU */
#define MB_LOADER_NAME "vmm"

#define PAGE_SIZE 4096ull

static uint64_t page_align(uint64_t v)
{
	return (v + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* One load in progress. */
struct mb_load {
	const struct boot_request *req;
	char *err;
	size_t errlen;
	uint32_t hdr_off, flags;
	uint64_t low, high; /* the kernel image: [low, high) */
	uint32_t entry;
	uint64_t buf_end;	     /* end of everything placed after the kernel so far */
	uint32_t mmap_gpa, info_gpa; /* 0 until placed after the kernel */
};

__attribute__((format(printf, 3, 4))) static int fail(struct mb_load *l, int ret,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, l->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* Guest RAM for [gpa, gpa + len), below 4 GiB (multiboot is 32-bit). */
static uint8_t *ram(struct mb_load *l, uint64_t gpa, uint64_t len)
{
	if (gpa > UINT32_MAX || len > (1ull << 32) - gpa)
		return NULL;
	return guest_mem_ptr(l->req->mem, gpa, len ? len : 1);
}

/* ---------------------------------------------------------------- header */

/* QEMU's rule: the first 32-bit aligned magic whose checksum holds, within
 * the first 8 KiB. A magic with a wrong checksum is an error only when no
 * good header follows. */
static int find_header(struct mb_load *l)
{
	const uint8_t *k = l->req->kernel;
	size_t size = l->req->kernel_size;
	long bad_at = -1;

	for (uint32_t i = 0; i < MB_SEARCH_END && i + 12 <= size; i += 4) {
		uint32_t flags;

		if (le32(k + i) != MB_HEADER_MAGIC)
			continue;
		flags = le32(k + i + 4);
		if (MB_HEADER_MAGIC + flags + le32(k + i + 8) == 0) {
			l->hdr_off = i;
			l->flags = flags;
			return 0;
		}
		if (bad_at < 0)
			bad_at = i;
	}
	if (bad_at >= 0)
		return fail(l, -EINVAL, "multiboot header at offset %ld has a bad checksum",
			    bad_at);
	return -ENOEXEC;
}

/* ------------------------------------------------------------ ELF32 image */

static int elf_check_header(struct mb_load *l, Elf32_Ehdr *eh)
{
	const struct boot_request *req = l->req;

	if (req->kernel_size < EI_NIDENT || memcmp(req->kernel, ELFMAG, SELFMAG))
		return fail(l, -EINVAL,
			    "multiboot header without load addresses (flag 16) in a non-ELF file");
	if (req->kernel[EI_CLASS] == ELFCLASS64)
		return fail(l, -EINVAL, "64-bit ELF: multiboot needs an ELF32 (i386) image");
	if (req->kernel_size < sizeof(*eh))
		return fail(l, -EINVAL, "truncated ELF header");
	memcpy(eh, req->kernel, sizeof(*eh));
	if (req->kernel[EI_CLASS] != ELFCLASS32 || req->kernel[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_386)
		return fail(l, -EINVAL, "not a little-endian ELF32 i386 image (machine %u)",
			    eh->e_machine);
	if (eh->e_phnum == 0 || eh->e_phentsize < sizeof(Elf32_Phdr))
		return fail(l, -EINVAL, "ELF image without program headers");
	if (eh->e_phoff > req->kernel_size ||
	    (uint64_t)eh->e_phnum * eh->e_phentsize > req->kernel_size - eh->e_phoff)
		return fail(l, -EINVAL, "truncated ELF program headers");
	return 0;
}

static int elf_load_segment(struct mb_load *l, unsigned idx, const Elf32_Phdr *ph)
{
	const struct boot_request *req = l->req;
	uint64_t end = (uint64_t)ph->p_paddr + ph->p_memsz;
	uint8_t *dst;

	if (ph->p_filesz > ph->p_memsz)
		return fail(l, -EINVAL, "ELF segment %u: file size above memory size", idx);
	if (ph->p_offset > req->kernel_size || ph->p_filesz > req->kernel_size - ph->p_offset)
		return fail(l, -EINVAL, "ELF segment %u: truncated file (needs %llu bytes, has %zu)",
			    idx, (unsigned long long)ph->p_offset + ph->p_filesz, req->kernel_size);
	dst = ram(l, ph->p_paddr, ph->p_memsz);
	if (!dst)
		return fail(l, -EINVAL, "ELF segment %u [%#x, %#llx) is outside guest RAM", idx,
			    ph->p_paddr, (unsigned long long)end);
	memcpy(dst, req->kernel + ph->p_offset, ph->p_filesz);
	memset(dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
	if (ph->p_paddr < l->low)
		l->low = ph->p_paddr;
	if (end > l->high)
		l->high = end;
	return 0;
}

/* e_entry is virtual: like QEMU, move it into the physical range of the
 * executable segment it lies in when that segment is linked elsewhere. */
static uint32_t elf_physical_entry(const Elf32_Ehdr *eh, const Elf32_Phdr *ph)
{
	if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_vaddr != ph->p_paddr &&
	    eh->e_entry >= ph->p_vaddr && eh->e_entry - ph->p_vaddr < ph->p_filesz)
		return eh->e_entry - ph->p_vaddr + ph->p_paddr;
	return 0;
}

static int load_elf(struct mb_load *l)
{
	Elf32_Ehdr eh;
	int ret = elf_check_header(l, &eh);

	if (ret)
		return ret;
	l->low = UINT64_MAX;
	l->high = 0;
	l->entry = eh.e_entry;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf32_Phdr ph;
		uint32_t entry;

		memcpy(&ph, l->req->kernel + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		ret = elf_load_segment(l, i, &ph);
		if (ret)
			return ret;
		entry = elf_physical_entry(&eh, &ph);
		if (entry)
			l->entry = entry;
	}
	if (l->high == 0)
		return fail(l, -EINVAL, "ELF image without a loadable segment");
	return 0;
}

/* ------------------------------------------------------ a.out kludge image */

static int load_aout(struct mb_load *l)
{
	const struct boot_request *req = l->req;
	const uint8_t *h = req->kernel + l->hdr_off;
	uint32_t header_addr, load_addr, load_end, bss_end, text_off;
	uint64_t load_size, mem_size;
	uint8_t *dst;

	if (l->hdr_off + 32 > req->kernel_size)
		return fail(l, -EINVAL, "truncated multiboot header (address fields missing)");
	header_addr = le32(h + 12);
	load_addr = le32(h + 16);
	load_end = le32(h + 20);
	bss_end = le32(h + 24);
	l->entry = le32(h + 28);
	if (header_addr < load_addr || header_addr - load_addr > l->hdr_off)
		return fail(l, -EINVAL, "multiboot header_addr %#x does not fit load_addr %#x",
			    header_addr, load_addr);
	text_off = l->hdr_off - (header_addr - load_addr);
	if (load_end && load_end < load_addr)
		return fail(l, -EINVAL, "multiboot load_end_addr %#x below load_addr %#x", load_end,
			    load_addr);
	load_size = load_end ? load_end - load_addr : req->kernel_size - text_off;
	if (load_size > req->kernel_size - text_off)
		return fail(l, -EINVAL, "truncated file: load_end_addr %#x needs %llu bytes, has %zu",
			    load_end, (unsigned long long)(text_off + load_size), req->kernel_size);
	if (bss_end && bss_end < load_addr + load_size)
		return fail(l, -EINVAL, "multiboot bss_end_addr %#x below the loaded image", bss_end);
	mem_size = bss_end ? bss_end - load_addr : load_size;
	dst = ram(l, load_addr, mem_size);
	if (!dst)
		return fail(l, -EINVAL, "kernel [%#x, %#llx) is outside guest RAM", load_addr,
			    (unsigned long long)load_addr + mem_size);
	memcpy(dst, req->kernel + text_off, load_size);
	memset(dst + load_size, 0, mem_size - load_size);
	l->low = load_addr;
	l->high = load_addr + mem_size;
	return 0;
}

/* --------------------------------------------------------------- modules */

#define MB_MAX_MODULES 64
#define MB_CMDLINE_MAX 65536

/* QEMU's -initrd list for multiboot: modules separated by ',', ",," is a
 * literal comma; in each, a space separates the file name from arguments.
 * Fills mods[] with pointers into buf (the unescaped copy of list). */
static int split_modules(struct mb_load *l, const char *list, char *buf, char **mods,
			 unsigned *n)
{
	char *out = buf;

	*n = 0;
	while (*list) {
		if (*n == MB_MAX_MODULES)
			return fail(l, -E2BIG, "-initrd: more than %d modules", MB_MAX_MODULES);
		mods[(*n)++] = out;
		for (; *list; list++) {
			if (*list == ',' && list[1] != ',')
				break;
			if (*list == ',')
				list++;
			*out++ = *list;
		}
		*out++ = '\0';
		if (*list)
			list++;
		if (mods[*n - 1][0] == '\0' || mods[*n - 1][0] == ' ')
			return fail(l, -EINVAL, "-initrd: empty module file name");
	}
	return 0;
}

/* Read the file named by a module's first word into guest RAM at gpa. */
static int load_module_file(struct mb_load *l, const char *spec, uint64_t gpa, uint64_t *len)
{
	size_t name_len = strcspn(spec, " ");
	char *name = strndup(spec, name_len);
	struct stat st;
	uint8_t *dst;
	int fd, ret = 0;

	if (!name)
		return fail(l, -ENOMEM, "out of memory");
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fail(l, fd < 0 ? -errno : -EINVAL, "module %s: %s", name,
			   fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	*len = (uint64_t)st.st_size;
	dst = ram(l, gpa, *len);
	if (!dst) {
		ret = fail(l, -ENOSPC, "module %s (%llu bytes) does not fit in guest RAM at %#llx",
			   name, (unsigned long long)*len, (unsigned long long)gpa);
		goto out;
	}
	for (uint64_t done = 0; done < *len;) {
		ssize_t n = read(fd, dst + done, *len - done);

		if (n <= 0) {
			ret = fail(l, -EIO, "module %s: read: %s", name,
				   n < 0 ? strerror(errno) : "file shrank");
			goto out;
		}
		done += (uint64_t)n;
	}
out:
	if (fd >= 0)
		close(fd);
	free(name);
	return ret;
}

/* ----------------------------------------------------------- boot info */

/* Copy a string into guest RAM at *at and advance *at past its NUL. */
static int put_string(struct mb_load *l, uint64_t *at, const char *s, uint32_t *gpa)
{
	size_t len = strlen(s) + 1;
	uint8_t *dst = ram(l, *at, len);

	if (!dst)
		return fail(l, -ENOSPC, "no guest RAM for the boot information at %#llx",
			    (unsigned long long)*at);
	memcpy(dst, s, len);
	*gpa = (uint32_t)*at;
	*at += len;
	return 0;
}

static int write_mmap(struct mb_load *l, const struct e820_map *e820, uint32_t *length)
{
	uint8_t *dst = ram(l, l->mmap_gpa, (uint64_t)e820->n * MB_MMAP_ENTRY_SIZE);

	if (!dst || e820->n * MB_MMAP_ENTRY_SIZE > MB_MMAP_MAX)
		return fail(l, -ENOSPC, "no guest RAM for the memory map at %#x", l->mmap_gpa);
	for (unsigned i = 0; i < e820->n; i++, dst += MB_MMAP_ENTRY_SIZE) {
		put_le32(dst, MB_MMAP_ENTRY_SIZE - 4);
		put_le64(dst + 4, e820->e[i].addr);
		put_le64(dst + 12, e820->e[i].size);
		put_le32(dst + 20, e820->e[i].type);
	}
	*length = e820->n * MB_MMAP_ENTRY_SIZE;
	return 0;
}

/* mem_lower: KiB of RAM from 0 (at most 640); mem_upper: KiB of RAM from
 * 1 MiB up to the first hole. */
static void memory_sizes(const struct e820_map *e820, uint32_t *lower, uint32_t *upper)
{
	uint64_t upper_end = 0x100000;

	*lower = 0;
	for (unsigned i = 0; i < e820->n; i++) {
		const struct e820_entry *e = &e820->e[i];

		if (e->type == E820_RAM && e->addr == 0)
			*lower = (uint32_t)((e->size < 0xa0000 ? e->size : 0xa0000) >> 10);
	}
	for (bool grew = true; grew;) {
		grew = false;
		for (unsigned i = 0; i < e820->n; i++) {
			const struct e820_entry *e = &e820->e[i];

			if (e->type == E820_RAM && e->addr <= upper_end &&
			    e->addr + e->size > upper_end) {
				upper_end = e->addr + e->size;
				grew = true;
			}
		}
	}
	if (upper_end > (1ull << 32))
		upper_end = 1ull << 32;
	*upper = (uint32_t)((upper_end - 0x100000) >> 10);
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

struct mb_strings {
	uint32_t mods_addr, cmdline, loader_name;
	uint32_t nmods;
};

/* The module list, the command lines and the loader name after the kernel,
 * then the modules themselves, in QEMU's order. */
static int place_after_kernel(struct mb_load *l, struct mb_strings *s)
{
	const struct boot_request *req = l->req;
	const char *initrd = req->initrd_path ? req->initrd_path : "";
	size_t cmdline_len = strlen(req->kernel_path) + strlen(req->cmdline) + 2;
	char *mods[MB_MAX_MODULES], *buf = malloc(strlen(initrd) + 1), *kcmdline = NULL;
	uint64_t strings, info_size;
	unsigned n = 0;
	int ret;

	if (!buf)
		return fail(l, -ENOMEM, "out of memory");
	ret = split_modules(l, initrd, buf, mods, &n);
	if (ret)
		goto out;
	if (cmdline_len > MB_CMDLINE_MAX) {
		ret = fail(l, -E2BIG, "command line of %zu bytes is longer than %d", cmdline_len,
			   MB_CMDLINE_MAX);
		goto out;
	}
	s->nmods = n;
	strings = l->low + page_align(l->high - l->low);
	info_size = (uint64_t)n * MB_MOD_ENTRY_SIZE + cmdline_len + strlen(initrd) + 1 +
		    sizeof(MB_LOADER_NAME);
	if (!l->info_gpa) { /* the kernel covers the fixed place */
		l->info_gpa = (uint32_t)strings;
		l->mmap_gpa = (uint32_t)strings + MB_INFO_SIZE;
		strings += MB_INFO_SIZE + MB_MMAP_MAX;
		info_size += MB_INFO_SIZE + MB_MMAP_MAX;
	}
	s->mods_addr = (uint32_t)strings;
	strings += (uint64_t)n * MB_MOD_ENTRY_SIZE;
	l->buf_end = l->low + page_align(l->high - l->low) + page_align(info_size);
	for (unsigned i = 0; i < n && !ret; i++) {
		uint32_t cmd_gpa;
		uint64_t start = l->buf_end, len = 0;
		uint8_t *entry;

		ret = put_string(l, &strings, mods[i], &cmd_gpa);
		if (!ret)
			ret = load_module_file(l, mods[i], start, &len);
		if (ret)
			break;
		entry = ram(l, s->mods_addr + (uint64_t)i * MB_MOD_ENTRY_SIZE, MB_MOD_ENTRY_SIZE);
		if (!entry) {
			ret = fail(l, -ENOSPC, "no guest RAM for the module list");
			break;
		}
		put_le32(entry, (uint32_t)start);
		put_le32(entry + 4, (uint32_t)(start + len));
		put_le32(entry + 8, cmd_gpa);
		put_le32(entry + 12, 0);
		l->buf_end = l->low + page_align(start + len - l->low);
	}
	if (ret)
		goto out;
	if (asprintf(&kcmdline, "%s %s", req->kernel_path, req->cmdline) < 0) {
		kcmdline = NULL;
		ret = fail(l, -ENOMEM, "out of memory");
		goto out;
	}
	ret = put_string(l, &strings, kcmdline, &s->cmdline);
	if (!ret)
		ret = put_string(l, &strings, MB_LOADER_NAME, &s->loader_name);
out:
	free(kcmdline);
	free(buf);
	return ret;
}

static int write_info(struct mb_load *l, const struct mb_strings *s)
{
	struct e820_map own;
	const struct e820_map *e820 = l->req->e820;
	uint8_t *info = ram(l, l->info_gpa, MB_INFO_SIZE);
	uint32_t lower, upper, mmap_len = 0;
	int ret;

	if (!e820) {
		ret = e820_build(l->req->mem, &own);
		if (ret)
			return fail(l, ret, "cannot build the memory map");
		e820 = &own;
	}
	if (!info)
		return fail(l, -ENOSPC, "no guest RAM for the multiboot info at %#x", l->info_gpa);
	ret = write_mmap(l, e820, &mmap_len);
	if (ret)
		return ret;
	memory_sizes(e820, &lower, &upper);
	memset(info, 0, MB_INFO_SIZE);
	put_le32(info + 0, MB_INFO_MEMORY | MB_INFO_BOOTDEV | MB_INFO_CMDLINE | MB_INFO_MODS |
				   MB_INFO_MMAP | MB_INFO_LOADER_NAME);
	put_le32(info + 4, lower);
	put_le32(info + 8, upper);
	put_le32(info + 12, MB_BOOT_DEVICE);
	put_le32(info + 16, s->cmdline);
	put_le32(info + 20, s->nmods);
	put_le32(info + 24, s->mods_addr);
	put_le32(info + 44, mmap_len);
	put_le32(info + 48, l->mmap_gpa);
	put_le32(info + 64, s->loader_name);
	return 0;
}

/* ------------------------------------------------------------------ entry */

int multiboot_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err,
		   size_t errlen)
{
	struct mb_load l = {.req = req, .err = err, .errlen = errlen};
	struct mb_strings s = {0};
	int ret = find_header(&l);

	if (ret)
		return ret;
	ret = (l.flags & MB_HDR_AOUT_KLUDGE) ? load_aout(&l) : load_elf(&l);
	if (ret)
		return ret;
	if (!overlaps(l.low, l.high - l.low, MB_MMAP_GPA,
		      MB_INFO_GPA + MB_INFO_SIZE - MB_MMAP_GPA)) {
		l.mmap_gpa = MB_MMAP_GPA;
		l.info_gpa = MB_INFO_GPA;
	}
	if (!ram(&l, l.entry, 1))
		return fail(&l, -EINVAL, "entry point %#x is outside guest RAM", l.entry);
	ret = place_after_kernel(&l, &s);
	if (!ret)
		ret = write_info(&l, &s);
	if (ret)
		return ret;
	*cpu = (struct boot_cpu_state){
		.mode = BOOT_MODE_PROT32_FLAT,
		.rip = l.entry,
		.rax = MB_BOOT_MAGIC,
		.rbx = l.info_gpa,
	};
	return 0;
}
