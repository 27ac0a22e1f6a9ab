/* linux.c — the Linux x86 boot protocol (Documentation/arch/x86/boot.rst)
 * for a bzImage given to -kernel: parse the setup header, copy the
 * protected-mode kernel to its preferred address, fill the zero page
 * (boot_params: e820, command line, initrd, ACPI RSDP) and enter the
 * 64-bit entry point (code32_start + 0x200) in long mode with identity
 * page tables, rsi = boot_params. The real-mode setup code never runs.
 *
 * Where the kernel's payload is LZ4 and vmm is built with Debian's liblz4
 * (HAVE_LZ4, liblz4-dev at build time), the loader unpacks it itself (natively, in milliseconds)
 * and enters the kernel proper's startup_64 the way the kernel's own decompressor would: on hosts
 * that emulate guest ring 0 that decompressor takes ~15 s. Not for KASLR kernels (relocations
 * appended): their decompressor runs. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "devices/dev_host.h"
#include "firmware/firmware.h"
#include "firmware/le.h"

#if HAVE_LZ4
#include <lz4.h>
#endif

/* Setup header fields, as offsets into the file and the zero page. */
#define HDR_SETUP_SECTS 0x1f1
#define HDR_SYSSIZE 0x1f4 /* protected-mode code size, 16-byte units */
#define HDR_BOOT_FLAG 0x1fe
#define HDR_JUMP 0x200
#define HDR_MAGIC 0x202
#define HDR_VERSION 0x206
#define HDR_TYPE_OF_LOADER 0x210
#define HDR_LOADFLAGS 0x211
#define HDR_CODE32_START 0x214
#define HDR_RAMDISK_IMAGE 0x218
#define HDR_RAMDISK_SIZE 0x21c
#define HDR_HEAP_END_PTR 0x224
#define HDR_CMD_LINE_PTR 0x228
#define HDR_INITRD_ADDR_MAX 0x22c
#define HDR_KERNEL_ALIGNMENT 0x230
#define HDR_RELOCATABLE 0x234
#define HDR_XLOADFLAGS 0x236
#define HDR_CMDLINE_SIZE 0x238
#define HDR_HARDWARE_SUBARCH 0x23c
#define HDR_PAYLOAD_OFFSET 0x248
#define HDR_PAYLOAD_LENGTH 0x24c
#define HDR_PREF_ADDRESS 0x258
#define HDR_INIT_SIZE 0x260
#define HDR_MIN_LEN 0x264

#define BP_ACPI_RSDP 0x070
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_EXT_CMD_LINE_PTR 0x0c8
#define BP_E820_ENTRIES 0x1e8
#define BP_E820_TABLE 0x2d0
#define BP_E820_MAX 128
#define BP_SIZE 4096

#define LOADED_HIGH 0x01
#define CAN_USE_HEAP 0x80
#define XLF_KERNEL_64 0x01
#define SUBARCH_PC 0

/* Guest-physical layout below 1 MiB. */
#define ZERO_PAGE_GPA 0x7000ull
#define PML4_GPA 0x9000ull
#define PDPT_GPA 0xa000ull
#define PD_GPA 0xb000ull /* four pages: 4 GiB in 2 MiB pages */
#define BOOT_STACK_GPA 0x8ff0ull
#define KERNEL_MIN_GPA 0x100000ull

struct bzimage {
	const uint8_t *file;
	size_t size;
	uint16_t version;
	size_t setup_len; /* boot sector + setup code; the kernel follows */
	size_t hdr_end;	  /* end of the setup header in the file */
	uint32_t initrd_addr_max, kernel_alignment, init_size, cmdline_size;
	uint64_t pref_address;
};

static uint16_t get16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* -ENOEXEC when it is not a bzImage; other errors say why we refuse it. */
static int parse_header(const struct boot_request *req, struct bzimage *bz, char *err,
			size_t errlen)
{
	const uint8_t *f = req->kernel;
	unsigned sects;

	if (req->kernel_size < HDR_MIN_LEN || get16(f + HDR_BOOT_FLAG) != 0xaa55 ||
	    memcmp(f + HDR_MAGIC, "HdrS", 4))
		return -ENOEXEC;
	bz->file = f;
	bz->size = req->kernel_size;
	bz->version = get16(f + HDR_VERSION);
	if (bz->version < 0x206) {
		snprintf(err, errlen, "%s: Linux boot protocol %u.%02u is too old (need 2.06+)",
			 req->kernel_path, bz->version >> 8, bz->version & 0xff);
		return -EINVAL;
	}
	if (!f[HDR_RELOCATABLE]) {
		snprintf(err, errlen, "%s: kernel is not relocatable (CONFIG_RELOCATABLE=n)",
			 req->kernel_path);
		return -EINVAL;
	}
	if (!(get16(f + HDR_XLOADFLAGS) & XLF_KERNEL_64)) {
		snprintf(err, errlen, "%s: no 64-bit entry point (not an x86-64 kernel?)",
			 req->kernel_path);
		return -EINVAL;
	}
	sects = f[HDR_SETUP_SECTS] ? f[HDR_SETUP_SECTS] : 4;
	bz->setup_len = (sects + 1) * 512ull;
	bz->hdr_end = HDR_JUMP + 2 + f[HDR_JUMP + 1];
	bz->initrd_addr_max = get32(f + HDR_INITRD_ADDR_MAX);
	bz->kernel_alignment = get32(f + HDR_KERNEL_ALIGNMENT);
	bz->cmdline_size = get32(f + HDR_CMDLINE_SIZE);
	bz->pref_address = get64(f + HDR_PREF_ADDRESS);
	bz->init_size = get32(f + HDR_INIT_SIZE);
	if (bz->setup_len >= bz->size || bz->hdr_end > bz->setup_len || bz->hdr_end > BP_SIZE ||
	    bz->size - bz->setup_len < get32(f + HDR_SYSSIZE) * 16ull) {
		snprintf(err, errlen, "%s: truncated bzImage (%zu bytes, header says %llu)",
			 req->kernel_path, bz->size,
			 bz->setup_len + get32(f + HDR_SYSSIZE) * 16ull);
		return -EINVAL;
	}
	if (bz->init_size < bz->size - bz->setup_len) {
		snprintf(err, errlen, "%s: corrupt setup header (init_size %u < kernel %zu)",
			 req->kernel_path, bz->init_size, bz->size - bz->setup_len);
		return -EINVAL;
	}
	return 0;
}

static bool fits(const struct e820_map *e820, uint64_t addr, uint64_t size)
{
	for (unsigned i = 0; i < e820->n; i++) {
		const struct e820_entry *e = &e820->e[i];

		/* no addr + size: both come from the file, and the sum can wrap */
		if (e->type == E820_RAM && addr >= e->addr && addr - e->addr <= e->size &&
		    size <= e->size - (addr - e->addr))
			return true;
	}
	return false;
}

/* The preferred address when RAM holds init_size there, else the lowest
 * aligned address above 1 MiB that does. */
static int place_kernel(const struct boot_request *req, const struct bzimage *bz,
			const struct e820_map *e820, uint64_t *load, char *err, size_t errlen)
{
	uint64_t align = bz->kernel_alignment ? bz->kernel_alignment : 0x200000;
	uint64_t low = (KERNEL_MIN_GPA + align - 1) & ~(align - 1);

	if (bz->pref_address >= KERNEL_MIN_GPA && fits(e820, bz->pref_address, bz->init_size))
		*load = bz->pref_address;
	else if (fits(e820, low, bz->init_size))
		*load = low;
	else {
		snprintf(err, errlen, "-m %llu MiB is too small for %s (it needs %llu MiB)",
			 (unsigned long long)req->mem->ram_size >> 20, req->kernel_path,
			 (unsigned long long)(low + bz->init_size + (16 << 20)) >> 20);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------- native payload unpacking */

#define LZ4_LEGACY_MAGIC 0x184c2102u
#define LZ4_LEGACY_BLOCK (8u << 20) /* what one legacy block unpacks to, at most */

/* One LZ4 block into dst (at most cap bytes): the unpacked length, or
 * negative when the block is malformed or vmm was built without liblz4. */
static int lz4_block(const uint8_t *src, size_t len, uint8_t *dst, size_t cap)
{
#if HAVE_LZ4
	return LZ4_decompress_safe((const char *)src, (char *)dst, (int)len, (int)cap);
#else
	return -1;
#endif
}

/* The kernel's "lz4 -l" payload (legacy frames: magic, then blocks each
 * prefixed by its size) followed by the unpacked size, 32-bit LE. Returns
 * a malloc'ed buffer with *out_size bytes, or NULL if anything is off,
 * including an unpacked size over max (the file's word is not trusted with
 * an allocation: the kernel proper must fit in the header's init_size). */
static uint8_t *unpack_lz4(const uint8_t *in, size_t len, size_t max, size_t *out_size)
{
	size_t at = 4, total, done = 0;
	uint8_t *out;

	if (len < 8 || get32(in) != LZ4_LEGACY_MAGIC)
		return NULL;
	if (!HAVE_LZ4) {
		fprintf(stderr, "vmm: note: built without liblz4 (liblz4-dev): the kernel "
				"unpacks itself, slowly where guest ring 0 is emulated\n");
		return NULL;
	}
	total = get32(in + len - 4);
	if (total > max)
		return NULL;
	out = malloc(total ? total : 1);
	while (out && at + 4 < len) {
		uint32_t chunk = get32(in + at);
		int n;

		at += 4;
		if (chunk == LZ4_LEGACY_MAGIC)
			continue; /* a concatenated stream */
		/* the block and the trailing size word must both fit: at may
		 * already be within 4 bytes of the end here */
		if (len - at < 4 || chunk > len - at - 4)
			break;
		n = lz4_block(in + at, chunk, out + done,
			      total - done < LZ4_LEGACY_BLOCK ? total - done : LZ4_LEGACY_BLOCK);
		if (n < 0)
			break;
		done += (size_t)n;
		at += chunk;
	}
	if (!out || at + 4 != len || done != total) {
		free(out);
		return NULL;
	}
	*out_size = total;
	return out;
}

/* A kernel built with RANDOMIZE_BASE carries its relocations after the ELF
 * (vmlinux.relocs): leave it to its own decompressor, which picks the
 * random base (KASLR) that entering the kernel proper directly would skip. */
static bool has_appended_relocs(const uint8_t *elf, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)elf;

	return eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize < size;
}

/* Load the kernel proper (an ELF64 inside the payload) at its link
 * addresses, which is where the kernel's decompressor puts it when the
 * kernel runs at its preferred address. *entry = its startup_64, or 0 when
 * this path does not apply and the compressed kernel must be loaded. */
static int load_unpacked(const struct boot_request *req, const struct bzimage *bz, uint64_t load,
			 uint64_t *entry, char *err, size_t errlen)
{
	uint64_t poff = bz->setup_len + (uint64_t)get32(bz->file + HDR_PAYLOAD_OFFSET);
	size_t plen = get32(bz->file + HDR_PAYLOAD_LENGTH), size = 0;
	uint64_t end;
	uint8_t *elf;
	int ret;

	*entry = 0;
	if (bz->version < 0x208 || load != bz->pref_address || poff > bz->size ||
	    plen > bz->size - poff ||
	    (elf = unpack_lz4(bz->file + poff, plen, bz->init_size, &size)) == NULL)
		return 0;
	ret = -ENOEXEC;
	if (size > sizeof(Elf64_Ehdr) && !memcmp(elf, ELFMAG, SELFMAG) &&
	    ((Elf64_Ehdr *)elf)->e_machine == EM_X86_64 && !has_appended_relocs(elf, size))
		ret = fw_elf_load_segments(req, elf, size, &end, err, errlen);
	if (!ret && end <= load + bz->init_size)
		*entry = ((Elf64_Ehdr *)elf)->e_entry;
	free(elf);
	return ret == -ENOEXEC ? 0 : ret;
}

/* Identity-map the first 4 GiB with 2 MiB pages. */
static int write_page_tables(struct guest_mem *mem)
{
	uint64_t *pml4 = guest_mem_ptr(mem, PML4_GPA, 4096);
	uint64_t *pdpt = guest_mem_ptr(mem, PDPT_GPA, 4096);
	uint64_t *pd = guest_mem_ptr(mem, PD_GPA, 4 * 4096);

	if (!pml4 || !pdpt || !pd)
		return -EFAULT;
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = PDPT_GPA | 0x3; /* present, writable */
	for (uint64_t i = 0; i < 4; i++)
		pdpt[i] = (PD_GPA + i * 4096) | 0x3;
	for (uint64_t i = 0; i < 4 * 512; i++)
		pd[i] = (i << 21) | 0x83; /* present, writable, 2 MiB */
	return 0;
}

static void fill_e820(uint8_t *bp, const struct e820_map *e820)
{
	unsigned n = e820->n < BP_E820_MAX ? e820->n : BP_E820_MAX;

	for (unsigned i = 0; i < n; i++) {
		uint8_t *e = bp + BP_E820_TABLE + i * 20;

		memcpy(e, &e820->e[i].addr, 8);
		memcpy(e + 8, &e820->e[i].size, 8);
		put_le32(e + 16, e820->e[i].type);
	}
	bp[BP_E820_ENTRIES] = n;
}

static void fill_zero_page(uint8_t *bp, const struct bzimage *bz, const struct e820_map *e820,
			   uint64_t load, uint64_t initrd, uint64_t initrd_size, uint64_t rsdp)
{
	memset(bp, 0, BP_SIZE);
	memcpy(bp + HDR_SETUP_SECTS, bz->file + HDR_SETUP_SECTS, bz->hdr_end - HDR_SETUP_SECTS);
	bp[HDR_TYPE_OF_LOADER] = 0xff; /* undefined boot loader */
	bp[HDR_LOADFLAGS] |= LOADED_HIGH | CAN_USE_HEAP;
	bp[HDR_HEAP_END_PTR] = 0x00; /* 0xfe00: end of setup heap (unused) */
	bp[HDR_HEAP_END_PTR + 1] = 0xfe;
	put_le32(bp + HDR_CODE32_START, load);
	put_le32(bp + HDR_CMD_LINE_PTR, FW_CMDLINE_GPA);
	put_le32(bp + HDR_RAMDISK_IMAGE, initrd);
	put_le32(bp + HDR_RAMDISK_SIZE, initrd_size);
	put_le32(bp + BP_EXT_RAMDISK_IMAGE, initrd >> 32);
	put_le32(bp + BP_EXT_RAMDISK_SIZE, initrd_size >> 32);
	if (bz->version >= 0x20a)
		put_le32(bp + HDR_HARDWARE_SUBARCH, SUBARCH_PC);
	if (bz->version >= 0x20e)
		memcpy(bp + BP_ACPI_RSDP, &rsdp, 8);
	fill_e820(bp, e820);
}

int linux_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err, size_t errlen)
{
	uint64_t load, initrd, initrd_size, rsdp, limit, entry;
	struct e820_map e820;
	struct bzimage bz;
	uint8_t *bp;
	int ret;

	ret = parse_header(req, &bz, err, errlen);
	if (ret)
		return ret;
	if (fw_e820_with_tables(req->e820, &e820) < 0)
		return snprintf(err, errlen, "e820: too many entries"), -ENOSPC;
	ret = place_kernel(req, &bz, &e820, &load, err, errlen);
	if (ret)
		return ret;
	/* Before the initrd: the kernel proper may reach to load + init_size. */
	ret = load_unpacked(req, &bz, load, &entry, err, errlen);
	if (ret)
		return ret;
	ret = fw_tables_build(req, &rsdp, err, errlen);
	if (ret)
		return ret;
	ret = fw_write_cmdline(req, bz.cmdline_size ? bz.cmdline_size : 256, err, errlen);
	if (ret)
		return ret;
	limit = bz.initrd_addr_max ? (uint64_t)bz.initrd_addr_max + 1 : 0x38000000ull;
	ret = fw_load_initrd(req, &e820, load + bz.init_size, limit, &initrd, &initrd_size, err,
			     errlen);
	if (ret)
		return ret;
	bp = guest_mem_ptr(req->mem, ZERO_PAGE_GPA, BP_SIZE);
	if (!bp || write_page_tables(req->mem) < 0 || fw_write_boot_gdt(req->mem, cpu) < 0 ||
	    (!entry &&
	     guest_mem_write(req->mem, load, bz.file + bz.setup_len, bz.size - bz.setup_len) < 0)) {
		snprintf(err, errlen, "-m %llu MiB: guest RAM too small for %s",
			 (unsigned long long)req->mem->ram_size >> 20, req->kernel_path);
		return -ENOMEM;
	}
	fill_zero_page(bp, &bz, &e820, load, initrd, initrd_size, rsdp);

	cpu->mode = BOOT_MODE_LONG64;
	cpu->rip = entry ? entry : load + 0x200;
	cpu->rsi = ZERO_PAGE_GPA;
	cpu->rsp = BOOT_STACK_GPA;
	cpu->cr3 = PML4_GPA;
	return 0;
}
