/* fuzz_multiboot.c — the Multiboot v1 loader (multiboot.c: the header search, ELF32 program headers
 * and the a.out kludge) on an arbitrary kernel file, loaded into fuzz_boot.h's guest. */
#include "tests/fuzz/fuzz_boot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_boot(multiboot_load, data, size);
	return 0;
}
