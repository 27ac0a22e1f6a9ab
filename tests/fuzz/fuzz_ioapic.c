/* fuzz_ioapic.c — the userspace I/O APIC (devices/intc/ioapic.c): IOREGSEL and
 * IOWIN at any size and offset (ID, version, arbitration, the 24
 * redirection entries' halves), the EOI register, with pin levels and EOI
 * broadcasts mixed in (remote IRR, level re-delivery). Input: fuzz_dev.h's
 * ops on its MMIO page; its own step (op % 4 == 3) drives pin (arg % 24)
 * to level (arg & 32) or, with arg & 32 and arg & 16, broadcasts an EOI
 * of vector 0x20 + arg % 16. A fresh I/O APIC per input. */
#include "devices/intc/ioapic.h"
#include "tests/fuzz/fuzz_dev.h"

#define IOAPIC_GPA 0xfec00000u

static struct ioapic *io;
static void step(struct fuzz_dev *d, unsigned arg)
{
	if ((arg & 48) == 48)
		ioapic_eoi(io, (uint8_t)(0x20 + arg % 16));
	else
		ioapic_set_irq(io, arg % 24, arg & 32);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, true, IOAPIC_GPA, 0x20);
		d.step = step;
	}
	io = ioapic_new(&d.fake.host, IOAPIC_GPA);
	fuzz_dev_run(&d, data, size);
	ioapic_free(io);
	return 0;
}
