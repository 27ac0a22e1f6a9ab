/* pio-loop.elf — n=N port writes to 0x80 from ring 3 (one VM exit each). */
#include "kit.h"

__attribute__((noreturn)) static long pio_loop(void *arg)
{
	uint64_t n = *(uint64_t *)arg, t0 = rdtsc();

	for (uint64_t i = 0; i < n; i++)
		outb(0x80, (uint8_t)i);
	printf("pio-loop: done %lu exits in %lu tsc cycles\n", n, rdtsc() - t0);
	/* Exit from ring 3: the way back to ring 0 does not work on every host. */
	guest_exit(0);
}

int guest_main(void)
{
	uint64_t n = kit_cmdline_uint("n", 1000);

	printf("pio-loop: start n=%lu\n", n);
	run_user(pio_loop, &n);
	return 1; /* not reached */
}
