/* fuzz_state_irqchip.c — the snapshot loaders of vmm's own interrupt and
 * timer models (kernel_irqchip=split|off) on a state tree: the 8254 PIT,
 * the I/O APIC and two local APICs on one bus, each on a fake clock. An
 * accepted tree is loaded into fresh devices, which are then driven
 * (ports, registers, timers expiring, interrupts taken), and what each
 * holds is saved again and must load back into fresh ones. */
#include <stdio.h>
#include <stdlib.h>

#include "devices/intc/ioapic.h"
#include "devices/intc/lapic.h"
#include "devices/timer/i8254.h"
#include "state/state.h"
#include "tests/fake_host.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_state.h"

static struct fake_host host;
static uint64_t clock_ns = 5000000000ull, tsc = 1ull << 36;
static uint64_t pit_deadline, apic_deadline[2];

static uint64_t fake_now(void *opaque)
{
	return clock_ns;
}

static void pit_arm(void *opaque, uint64_t deadline)
{
	pit_deadline = deadline;
}

static void apic_kick(void *opaque, unsigned cpu)
{
}

static void apic_eoi(void *opaque, uint8_t vector)
{
}

static void apic_arm(void *opaque, unsigned cpu, uint64_t deadline)
{
	apic_deadline[cpu] = deadline;
}

static uint64_t fake_tsc(void *opaque)
{
	return tsc;
}

struct devs {
	struct i8254 *pit;
	struct ioapic *ioapic;
	struct apic_bus *apics;
	bool pit_ok, ioapic_ok, apic_ok[2];
};

static void *devs_new(void)
{
	static const struct i8254_clock clk = {fake_now, pit_arm, NULL};
	static const struct lapic_host h = {apic_kick, apic_eoi,  fake_now, apic_arm,
					    fake_tsc,  2000000, NULL};
	struct devs *d = calloc(1, sizeof(*d));

	host.host.n_reset = 0; /* the freed devices' reset hooks */
	if (!d || !(d->pit = i8254_new(&host.host, &clk)) ||
	    !(d->ioapic = ioapic_new(&host.host, 0xfec00000)) ||
	    !(d->apics = apic_bus_new(2, NULL, &h)))
		abort();
	return d;
}

static void devs_free(void *opaque)
{
	struct devs *d = opaque;

	i8254_free(d->pit);
	ioapic_free(d->ioapic);
	apic_bus_free(d->apics);
	free(d);
}

static void devs_load(void *opaque, const struct state_reader *r)
{
	struct devs *d = opaque;
	char err[256];

	d->pit_ok = i8254_load(d->pit, r, err, sizeof(err)) == 0;
	d->ioapic_ok = ioapic_load(d->ioapic, r, err, sizeof(err)) == 0;
	for (unsigned i = 0; i < 2; i++)
		d->apic_ok[i] = lapic_load(apic_bus_cpu(d->apics, i), r, err, sizeof(err)) == 0;
}

/* Run the clocks past every armed deadline a few times over, reading the
 * counters and registers and taking what the APICs deliver. */
static void devs_drive(void *opaque)
{
	struct devs *d = opaque;
	uint32_t v;

	for (unsigned round = 0; round < 8; round++) {
		clock_ns += 7000000;
		tsc += 14000000;
		if (pit_deadline <= clock_ns)
			i8254_timer(d->pit);
		for (uint16_t port = 0x40; port <= 0x42; port++)
			iobus_read(host.host.pio, port, &v, 1);
		iobus_read(host.host.pio, 0x61, &v, 1);
		for (unsigned i = 0; i < 2; i++) {
			struct lapic *a = apic_bus_cpu(d->apics, i);
			uint8_t sipi;
			unsigned nmis;

			if (apic_deadline[i] <= clock_ns)
				lapic_timer_expired(a);
			for (unsigned off = 0x20; off < 0x400; off += 0x10)
				lapic_read(a, off);
			lapic_take_events(a, &sipi, &nmis);
			if (lapic_get_interrupt(a) >= 0)
				lapic_write(a, 0xb0, 0);
		}
		for (unsigned pin = 0; pin < 24; pin++)
			ioapic_set_irq(d->ioapic, pin, round & 1);
	}
}

static void devs_save(void *opaque, struct state_writer *w)
{
	struct devs *d = opaque;

	if (d->pit_ok)
		i8254_save(d->pit, w);
	if (d->ioapic_ok)
		ioapic_save(d->ioapic, w);
	for (unsigned i = 0; i < 2; i++)
		if (d->apic_ok[i])
			lapic_save(apic_bus_cpu(d->apics, i), w);
}

static unsigned devs_loaded(const void *opaque)
{
	const struct devs *d = opaque;

	return d->pit_ok | d->ioapic_ok << 1 | d->apic_ok[0] << 2 | d->apic_ok[1] << 3;
}

static const struct fuzz_state_ops ops = {"fuzz_state_irqchip", devs_new,  devs_free, devs_load,
					  devs_drive,		devs_save, devs_loaded};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!host.ram && fake_host_init(&host, 4096) < 0)
		abort();
	return fuzz_state_round(&ops, data, size);
}
