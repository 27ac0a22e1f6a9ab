/* fuzz_bzimage.c — the bzImage loader (linux.c: the setup header, protocol versions, setup_sects,
 * the payload and its placement) on an arbitrary kernel file, loaded into fuzz_boot.h's guest. */
#include "tests/fuzz/fuzz_boot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_boot(linux_load, data, size);
	return 0;
}
