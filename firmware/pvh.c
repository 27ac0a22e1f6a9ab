/* pvh.c — PVH direct boot of an ELF vmlinux: the kernel announces a 32-bit
 * entry point in an ELF note (name "Xen", type XEN_ELFNOTE_PHYS32_ENTRY);
 * the loader copies the PT_LOAD segments to their physical addresses and
 * enters in flat 32-bit protected mode, paging off, with ebx pointing at
 * an hvm_start_info (memory map, command line, initrd as module 0, RSDP). */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC 0x336ec578u

/* Guest-physical layout below 1 MiB (beside the shared GDT and cmdline). */
#define START_INFO_GPA 0x6000ull
#define MODLIST_GPA (START_INFO_GPA + 0x100)
#define MEMMAP_GPA (START_INFO_GPA + 0x200)

struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr, size, cmdline_paddr, reserved;
};

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

struct elf_image {
	const uint8_t *f;
	size_t size;
	const Elf64_Phdr *ph;
	unsigned phnum;
	uint32_t entry;
};

/* 1 when a PVH note was found in the note segment [off, off+len). */
static int scan_notes(const struct elf_image *img, uint64_t off, uint64_t len, uint32_t *entry)
{
	uint64_t at = off, end = off + len;

	while (at + sizeof(Elf64_Nhdr) <= end) {
		Elf64_Nhdr n;
		uint64_t name = at + sizeof(n), desc, next;

		memcpy(&n, img->f + at, sizeof(n));
		desc = name + ((n.n_namesz + 3ull) & ~3ull);
		next = desc + ((n.n_descsz + 3ull) & ~3ull);
		if (next > end)
			return 0;
		if (n.n_type == XEN_ELFNOTE_PHYS32_ENTRY && n.n_namesz == 4 &&
		    !memcmp(img->f + name, "Xen", 4) && n.n_descsz >= 4) {
			memcpy(entry, img->f + desc, 4); /* low 32 bits, 4 or 8 byte desc */
			return 1;
		}
		at = next;
	}
	return 0;
}

static int parse_elf(const struct boot_request *req, struct elf_image *img, char *err,
		     size_t errlen)
{
	const Elf64_Ehdr *eh = (const void *)req->kernel;
	bool found = false;

	if (req->kernel_size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64)
		return -ENOEXEC; /* ELF32 is multiboot's to take */
	img->f = req->kernel;
	img->size = req->kernel_size;
	img->phnum = eh->e_phnum;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > img->size ||
	    (uint64_t)img->phnum * sizeof(Elf64_Phdr) > img->size - eh->e_phoff) {
		snprintf(err, errlen, "%s: truncated ELF program headers", req->kernel_path);
		return -EINVAL;
	}
	/* the headers are read in place: the ELF spec aligns them */
	if (eh->e_phoff % _Alignof(Elf64_Phdr)) {
		snprintf(err, errlen, "%s: misaligned ELF program headers", req->kernel_path);
		return -EINVAL;
	}
	img->ph = (const void *)(img->f + eh->e_phoff);
	for (unsigned i = 0; i < img->phnum && !found; i++) {
		const Elf64_Phdr *p = &img->ph[i];

		if (p->p_type != PT_NOTE)
			continue;
		if (p->p_offset > img->size || p->p_filesz > img->size - p->p_offset) {
			snprintf(err, errlen, "%s: truncated ELF note segment", req->kernel_path);
			return -EINVAL;
		}
		found = scan_notes(img, p->p_offset, p->p_filesz, &img->entry);
	}
	if (!found) {
		snprintf(err, errlen,
			 "%s: 64-bit ELF without a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY; "
			 "build with CONFIG_PVH=y or pass the bzImage)",
			 req->kernel_path);
		return -EINVAL;
	}
	return 0;
}

int fw_elf_load_segments(const struct boot_request *req, const uint8_t *f, size_t size,
			 uint64_t *end, char *err, size_t errlen)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Phdr *ph;

	if (size < sizeof(*eh) || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff ||
	    eh->e_phoff % _Alignof(Elf64_Phdr))
		return snprintf(err, errlen, "%s: truncated or misaligned ELF program headers",
				req->kernel_path),
		       -EINVAL;
	ph = (const void *)(f + eh->e_phoff);
	*end = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		uint8_t *dst;

		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		if (p->p_offset > size || p->p_filesz > size - p->p_offset ||
		    p->p_filesz > p->p_memsz) {
			snprintf(err, errlen, "%s: truncated ELF segment %u", req->kernel_path, i);
			return -EINVAL;
		}
		dst = guest_mem_ptr(req->mem, p->p_paddr, p->p_memsz);
		if (!dst) {
			snprintf(err, errlen,
				 "-m %llu MiB is too small for %s (segment at %#llx, %llu KiB)",
				 (unsigned long long)req->mem->ram_size >> 20, req->kernel_path,
				 (unsigned long long)p->p_paddr,
				 (unsigned long long)p->p_memsz >> 10);
			return -ENOMEM;
		}
		memcpy(dst, f + p->p_offset, p->p_filesz);
		memset(dst + p->p_filesz, 0, p->p_memsz - p->p_filesz);
		if (p->p_paddr + p->p_memsz > *end)
			*end = p->p_paddr + p->p_memsz;
	}
	return 0;
}

static int write_start_info(const struct boot_request *req, const struct e820_map *e820,
			    uint64_t initrd, uint64_t initrd_size, uint64_t rsdp)
{
	struct hvm_start_info si = {
		.magic = HVM_START_MAGIC,
		.version = 1,
		.cmdline_paddr = FW_CMDLINE_GPA,
		.rsdp_paddr = rsdp,
		.memmap_paddr = MEMMAP_GPA,
		.memmap_entries = e820->n,
	};
	struct hvm_modlist_entry mod = {.paddr = initrd, .size = initrd_size};
	struct hvm_memmap_entry mm[E820_MAX_ENTRIES];

	for (unsigned i = 0; i < e820->n; i++)
		mm[i] = (struct hvm_memmap_entry){e820->e[i].addr, e820->e[i].size, e820->e[i].type,
						  0};
	if (initrd_size) {
		si.nr_modules = 1;
		si.modlist_paddr = MODLIST_GPA;
	}
	if (guest_mem_write(req->mem, START_INFO_GPA, &si, sizeof(si)) < 0 ||
	    guest_mem_write(req->mem, MODLIST_GPA, &mod, sizeof(mod)) < 0 ||
	    guest_mem_write(req->mem, MEMMAP_GPA, mm, e820->n * sizeof(mm[0])) < 0)
		return -EFAULT;
	return 0;
}

int pvh_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err, size_t errlen)
{
	uint64_t end, initrd, initrd_size, rsdp;
	struct e820_map e820;
	struct elf_image img;
	int ret;

	ret = parse_elf(req, &img, err, errlen);
	if (ret)
		return ret;
	if (fw_e820_with_tables(req->e820, &e820) < 0)
		return snprintf(err, errlen, "e820: too many entries"), -ENOSPC;
	ret = fw_elf_load_segments(req, req->kernel, req->kernel_size, &end, err, errlen);
	if (!ret)
		ret = fw_tables_build(req, &rsdp, err, errlen);
	if (!ret)
		ret = fw_write_cmdline(req, 2048, err, errlen);
	if (!ret)
		ret = fw_load_initrd(req, &e820, end, UINT64_MAX, &initrd, &initrd_size, err,
				     errlen);
	if (ret)
		return ret;
	if (write_start_info(req, &e820, initrd, initrd_size, rsdp) < 0 ||
	    fw_write_boot_gdt(req->mem, cpu) < 0) {
		snprintf(err, errlen, "guest RAM does not cover the PVH start info");
		return -EFAULT;
	}
	cpu->mode = BOOT_MODE_PROT32_FLAT;
	cpu->rip = img.entry;
	cpu->rbx = START_INFO_GPA;
	return 0;
}
