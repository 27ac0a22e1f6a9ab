/* unclaimed.elf — hammer ports and MMIO addresses no device claims: every
 * read must come back all-ones, the VMM must keep running (and log each
 * address once). n=N rounds (default 100) from ring 3; prints
 * "unclaimed: N rounds, all reads as expected" and exits 0, or names the first
 * read that was not all-ones and exits 1. QEMU reads unassigned MMIO as
 * zero: qemu=1 accepts that (ports are all-ones there too).
 */
#include "kit.h"

/* Ports nothing on a PC (vmm's or QEMU's) decodes. */
static const uint16_t ports[] = {0x100, 0x240, 0x2f0, 0x3e0};
/* In the PCI hole below the IOAPIC, where neither RAM nor a device is. */
static const uintptr_t mmio[] = {0xd0000000, 0xd0001000, 0xdffffffc};

static uint32_t mmio_want = 0xffffffffu;

static bool round_ok(uint64_t round)
{
	for (unsigned i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		uint16_t p = ports[i];

		outb(p, (uint8_t)round);
		outl(p, (uint32_t)round);
		if (inb(p) != 0xff || inw(p) != 0xffff || inl(p) != 0xffffffffu) {
			printf("unclaimed: port %x did not read all-ones\n", p);
			return false;
		}
	}
	for (unsigned i = 0; i < sizeof(mmio) / sizeof(mmio[0]); i++) {
		volatile uint32_t *a = (volatile uint32_t *)mmio[i];
		volatile uint8_t *b = (volatile uint8_t *)mmio[i];

		*a = (uint32_t)round;
		if (*a != mmio_want || *b != (uint8_t)mmio_want) {
			printf("unclaimed: mmio %lx read %x\n", (uint64_t)mmio[i], *a);
			return false;
		}
	}
	return true;
}

__attribute__((noreturn)) static long hammer(void *arg)
{
	uint64_t n = *(uint64_t *)arg;

	for (uint64_t r = 0; r < n; r++)
		if (!round_ok(r))
			guest_exit(1);
	printf("unclaimed: %lu rounds, all reads as expected\n", n);
	guest_exit(0);
}

int guest_main(void)
{
	uint64_t n = kit_cmdline_uint("n", 100);

	if (kit_cmdline_uint("qemu", 0))
		mmio_want = 0;

	run_user(hammer, &n);
	return 1; /* not reached */
}
