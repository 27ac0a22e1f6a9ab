/* fuzz_pvh.c — the PVH loader (pvh.c: ELF64/ELF32 headers, program headers, the
 * XEN_ELFNOTE_PHYS32_ENTRY note) on an arbitrary kernel file, loaded into fuzz_boot.h's guest. */
#include "tests/fuzz/fuzz_boot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_boot(pvh_load, data, size);
	return 0;
}
