/* fuzz_lapic.c — the userspace local APICs (devices/intc/lapic.c, lapic_bus.c;
 * kernel_irqchip=off): xAPIC MMIO registers and x2APIC MSRs at any offset
 * and value (ICR IPIs between the two CPUs, LVTs, the timer in every mode,
 * TPR/PPR, EOI, the base MSR's enable and x2APIC transitions), with lines,
 * interrupt acknowledgement and timer expiry mixed in. Input: steps of an
 * op byte (op % 8 picks the step, bit 3 the CPU) and its operands; a
 * fresh two-CPU APIC bus per input. */
#include <string.h>

#include "devices/intc/lapic.h"
#include "tests/fuzz/fuzz_dev.h"

static uint64_t now_ns = 1000000000ull;

static void kick(void *opaque, unsigned cpu)
{
}

static void eoi(void *opaque, uint8_t vector)
{
}

static uint64_t now(void *opaque)
{
	return now_ns;
}

static void arm(void *opaque, unsigned cpu, uint64_t deadline)
{
}

static uint64_t tsc(void *opaque)
{
	return now_ns * 2;
}

static void step(struct lapic *a, unsigned op, const uint8_t **data, size_t *size)
{
	uint64_t v;
	uint8_t vec;
	unsigned nmis;

	switch (op % 8) {
	case 0:
		v = fuzz_take(data, size, 2) & 0xff0;
		lapic_write(a, (unsigned)v, (uint32_t)fuzz_take(data, size, 4));
		break;
	case 1:
		lapic_read(a, (unsigned)fuzz_take(data, size, 2) & 0xff0);
		break;
	case 2:
		v = 0x800 + fuzz_take(data, size, 1);
		lapic_msr_write(a, (uint32_t)v, fuzz_take(data, size, 8));
		break;
	case 3:
		lapic_msr_read(a, 0x800 + (uint32_t)fuzz_take(data, size, 1), &v);
		break;
	case 4:
		if (lapic_has_interrupt(a))
			lapic_get_interrupt(a);
		lapic_take_events(a, &vec, &nmis);
		break;
	case 5:
		now_ns += fuzz_take(data, size, 3) * 1000;
		lapic_timer_expired(a);
		break;
	case 6:
		v = fuzz_take(data, size, 1);
		lapic_set_lint(a, v & 1, v & 2);
		break;
	case 7:
		v = fuzz_take(data, size, 1);
		if (v & 1)
			lapic_set_base(a, LAPIC_DEFAULT_BASE | ((v << 4) & 0xc00) |
						  (v & 2 ? 0x100 : 0));
		else
			lapic_set_tpr(a, (uint8_t)(v >> 1));
		if (v & 4)
			lapic_msr_write(a, LAPIC_MSR_TSC_DEADLINE, fuzz_take(data, size, 4));
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct lapic_host h = {kick, eoi, now, arm, tsc, 2000000, NULL};
	struct apic_bus *bus = apic_bus_new(2, NULL, &h);

	now_ns = 1000000000ull;
	while (size) {
		unsigned op = (unsigned)fuzz_take(&data, &size, 1);

		step(apic_bus_cpu(bus, op >> 3 & 1), op, &data, &size);
	}
	apic_bus_free(bus);
	return 0;
}
