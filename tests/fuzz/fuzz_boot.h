/* fuzz_boot.h — the guest a boot-loader fuzz target loads into: 16 MiB of
 * RAM with the PC's e820 layout, reused across inputs (a loader must cope
 * with whatever the previous image left there). */
#ifndef FUZZ_BOOT_H
#define FUZZ_BOOT_H

#include <stdlib.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_BOOT_RAM (16u << 20)

static inline int fuzz_boot(boot_loader_fn load, const uint8_t *data, size_t size)
{
	static struct guest_mem mem;
	static struct e820_map e820;
	struct boot_request req = {.kernel_path = "fuzz",
				   .kernel = data,
				   .kernel_size = size,
				   .cmdline = "console=ttyS0",
				   .ncpus = 2,
				   .mem = &mem,
				   .e820 = &e820};
	struct boot_cpu_state cpu = {0};
	char err[256];

	if (!mem.n) {
		mem = (struct guest_mem){.n = 1, .ram_size = FUZZ_BOOT_RAM};
		mem.r[0] = (struct guest_ram_region){0, FUZZ_BOOT_RAM, calloc(1, FUZZ_BOOT_RAM)};
		e820 = (struct e820_map){.n = 3};
		e820.e[0] = (struct e820_entry){0, 0xa0000, E820_RAM};
		e820.e[1] = (struct e820_entry){0xf0000, 0x10000, E820_RESERVED};
		e820.e[2] = (struct e820_entry){0x100000, FUZZ_BOOT_RAM - 0x100000, E820_RAM};
	}
	return load(&req, &cpu, err, sizeof(err));
}

#endif
