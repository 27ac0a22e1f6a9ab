/* tsc-khz.c — print this machine's TSC rate in kHz.
 *
 * QEMU's software emulation hands the L1 guest the host's TSC as it is, but
 * L1's kernel calibrates its rate against emulated timers while the host is
 * busy, and got it wrong by factors of 3 and more: L1's clocks then run fast
 * or slow, and every timeout inside it with them. The runner passes this
 * figure as tsc_early_khz= instead (the kernel's later refinement only
 * adjusts within 1 %). Median of five 100 ms windows against
 * CLOCK_MONOTONIC_RAW.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t window_khz(void)
{
	struct timespec pause = {0, 100 * 1000 * 1000};
	uint64_t t0 = now_ns(), c0 = __rdtsc();

	nanosleep(&pause, NULL);
	uint64_t t1 = now_ns(), c1 = __rdtsc();
	return (c1 - c0) * 1000000u / (t1 - t0);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	uint64_t khz[5];

	for (int i = 0; i < 5; i++)
		khz[i] = window_khz();
	qsort(khz, 5, sizeof(khz[0]), by_value);
	printf("%llu\n", (unsigned long long)khz[2]);
	return 0;
}
