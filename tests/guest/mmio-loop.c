/* mmio-loop.elf — n=N 32-bit writes from ring 3 to MMIO_TARGET, an address
 * in the PCI hole that no device claims (one VM exit each). */
#include "kit.h"

#define MMIO_TARGET 0xd0000000ul

__attribute__((noreturn)) static long mmio_loop(void *arg)
{
	uint64_t n = *(uint64_t *)arg, t0 = rdtsc();
	volatile uint32_t *target = (volatile uint32_t *)MMIO_TARGET;

	for (uint64_t i = 0; i < n; i++)
		*target = (uint32_t)i;
	printf("mmio-loop: done %lu exits in %lu tsc cycles\n", n, rdtsc() - t0);
	/* Exit from ring 3: the way back to ring 0 does not work on every host. */
	guest_exit(0);
}

int guest_main(void)
{
	uint64_t n = kit_cmdline_uint("n", 1000);

	printf("mmio-loop: start n=%lu at %lx\n", n, MMIO_TARGET);
	run_user(mmio_loop, &n);
	return 1; /* not reached */
}
