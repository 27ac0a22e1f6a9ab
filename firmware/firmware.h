/* firmware.h — what goes into guest memory before the first instruction:
 * the boot loaders (multiboot, Linux bzImage, PVH), the e820 map they share,
 * the MP and ACPI tables for direct boot, SeaBIOS location and fw_cfg content.
 * Nothing here issues ioctls: a loader writes guest RAM through struct
 * guest_mem and describes the boot CPU's initial state in boot_cpu_state,
 * which the machine (vmm/) turns into register ioctls via kernel/kvm.
 */
#ifndef VMM_FIRMWARE_H
#define VMM_FIRMWARE_H

#include <stddef.h>
#include <stdint.h>

#include "devices/devices.h"

/* ------------------------------------------------------------------ e820 */

enum e820_type {
	E820_RAM = 1,
	E820_RESERVED = 2,
	E820_ACPI = 3,
	E820_NVS = 4,
};

#define E820_MAX_ENTRIES 32

struct e820_entry {
	uint64_t addr, size;
	uint32_t type;
};

struct e820_map {
	struct e820_entry e[E820_MAX_ENTRIES];
	unsigned n;
};

/* ---------------------------------------------------------- boot state */

enum boot_mode {
	BOOT_MODE_RESET,	 /* real mode at the reset vector (firmware boot) */
	BOOT_MODE_PROT32_FLAT,	 /* 32-bit flat segments, paging off (multiboot, PVH) */
	BOOT_MODE_LONG64,	 /* 64-bit, identity page tables at cr3 (Linux 64-bit entry) */
};

/* The boot CPU's initial state as a loader wants it. Registers not listed
 * start at zero; rflags is 0x2. Segment setup follows from mode. */
struct boot_cpu_state {
	enum boot_mode mode;
	uint64_t rip, rsp;
	uint64_t rax, rbx, rcx, rdx, rsi, rdi;
	uint64_t cr3;		/* LONG64: root of page tables the loader wrote */
	uint64_t gdt_base;	/* PROT32/LONG64: a GDT the loader wrote, or 0 */
	uint16_t gdt_limit;
};

/* What the user asked to boot, and the machine it boots on. */
struct boot_request {
	const char *kernel_path;
	const uint8_t *kernel;	/* the whole file, read by the caller */
	size_t kernel_size;
	const char *initrd_path; /* NULL when none */
	const char *cmdline;	 /* never NULL ("" when none) */
	unsigned ncpus;
	struct guest_mem *mem;
	const struct e820_map *e820;
};

/* Every loader has this shape: 0 and *cpu filled; -ENOEXEC when the image
 * is not its format (the caller tries the next loader); any other -errno
 * with a one-line reason in err. */
typedef int (*boot_loader_fn)(const struct boot_request *req, struct boot_cpu_state *cpu,
			      char *err, size_t errlen);

/* ------------------------------------------------ per-area declarations
 * Each area adds its declarations below, in its own section. */

#endif /* VMM_FIRMWARE_H */
