/* lapic_bus.c — the APIC bus: message delivery between the local APICs
 * (IPIs, MSIs, I/O APIC messages) with destination matching and lowest
 * priority arbitration, and the xAPIC MMIO page shared by all vCPUs. */
#include <stdlib.h>
#include <string.h>

#include "devices/devices.h"
#include "devices/lapic_internal.h"

static __thread int thread_cpu = -1;

/* ------------------------------------------------------- delivery */

static bool match_logical(const struct lapic *a, uint32_t dest)
{
	uint32_t ldr = lapic_reg(a, R_LDR);

	if (lapic_x2apic(a))
		return (dest >> 16) == (ldr >> 16) && (dest & ldr & 0xffff);
	ldr >>= 24;
	if ((lapic_reg(a, R_DFR) >> 28) == 0xf) /* flat */
		return dest & ldr;
	return (dest >> 4) == (ldr >> 4) && (dest & ldr & 0xf); /* cluster */
}

static bool match_dest(const struct lapic *a, uint32_t dest, bool logical)
{
	uint32_t broadcast = lapic_x2apic(a) ? 0xffffffff : 0xff;

	if (dest == broadcast)
		return true;
	return logical ? match_logical(a, dest) : lapic_apic_id(a) == dest;
}

/* Deliver to every APIC the destination names (no lock held). */
static void bus_deliver(struct apic_bus *bus, int self, unsigned shorthand, uint32_t dest,
			bool logical, unsigned dm, unsigned vector, bool level)
{
	struct lapic *lowest = NULL;
	unsigned lowest_prio = 0x100;

	for (unsigned i = 0; i < bus->n; i++) {
		struct lapic *a = bus->cpu[i];
		bool hit, wake = false;

		pthread_mutex_lock(&a->lock);
		switch (shorthand) {
		case 1: /* self */
			hit = (int)i == self;
			break;
		case 2: /* all including self */
			hit = true;
			break;
		case 3: /* all excluding self */
			hit = (int)i != self;
			break;
		default:
			hit = lapic_hw_enabled(a) && match_dest(a, dest, logical);
		}
		if (hit && dm == DM_LOWEST && shorthand == 0) {
			/* arbitrate: the lowest task priority wins, then the
			 * lowest index */
			unsigned prio = lapic_reg(a, R_TPR) & 0xff;

			if (prio < lowest_prio) {
				lowest_prio = prio;
				lowest = a;
			}
			hit = false;
		}
		if (hit)
			wake = lapic_accept(a, dm, vector, level);
		pthread_mutex_unlock(&a->lock);
		if (wake)
			lapic_kick(a);
	}
	if (lowest) {
		bool wake;

		pthread_mutex_lock(&lowest->lock);
		wake = lapic_accept(lowest, DM_FIXED, vector, level);
		pthread_mutex_unlock(&lowest->lock);
		if (wake)
			lapic_kick(lowest);
	}
}

void apic_bus_msi(struct apic_bus *bus, uint64_t addr, uint32_t data)
{
	uint32_t dest = (uint32_t)(addr >> 12) & 0xff;
	unsigned dm = (data >> 8) & 7;

	if ((addr & 0xfff00000ull) != 0xfee00000ull)
		return; /* not an interrupt message */
	/* A level-triggered message with the assert bit clear is a
	 * de-assert: nothing for an edge-only APIC bus to do. */
	if ((data & (1u << 15)) && !(data & (1u << 14)))
		return;
	bus_deliver(bus, -1, 0, dest, addr & (1u << 2), dm, data & 0xff, data & (1u << 15));
}

/* ICR write: send an IPI (lock NOT held). */
void lapic_send_ipi(struct lapic *a, uint32_t lo, uint32_t dest)
{
	unsigned dm = (lo >> 8) & 7, shorthand = (lo >> 18) & 3, vector = lo & 0xff;
	bool level = lo & LVT_LEVEL, assert = lo & (1u << 14);

	if (dm == DM_INIT && level && !assert)
		return; /* INIT level de-assert: only synchronises arbitration IDs */
	if ((dm == DM_FIXED || dm == DM_LOWEST) && vector < 16) {
		pthread_mutex_lock(&a->lock);
		lapic_error(a, ESR_SEND_ILLEGAL);
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (!lapic_x2apic(a))
		dest >>= 24;
	bus_deliver(a->bus, (int)a->cpu, shorthand, dest, lo & (1u << 11), dm, vector, level);
}

/* ------------------------------------------------------------- the bus */

static void mmio_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct apic_bus *bus = opaque;
	uint32_t v = 0;

	if (thread_cpu >= 0 && (unsigned)thread_cpu < bus->n)
		v = lapic_read(bus->cpu[thread_cpu], (unsigned)(off & ~3ull));
	io_data_put(data, size, v >> (8 * (off & 3)));
}

static void mmio_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct apic_bus *bus = opaque;

	/* Only aligned 32-bit accesses are defined; others are dropped. */
	if (thread_cpu < 0 || (unsigned)thread_cpu >= bus->n || size != 4 || (off & 3))
		return;
	lapic_write(bus->cpu[thread_cpu], (unsigned)off, (uint32_t)io_data_get(data, size));
}

static const struct io_ops lapic_mmio_ops = {mmio_read, mmio_write};

void lapic_set_thread_cpu(int cpu)
{
	thread_cpu = cpu;
}

struct apic_bus *apic_bus_new(unsigned ncpus, const struct lapic_host *host)
{
	struct apic_bus *bus = calloc(1, sizeof(*bus) + ncpus * sizeof(bus->cpu[0]));

	if (!bus)
		return NULL;
	bus->host = *host;
	for (unsigned i = 0; i < ncpus; i++) {
		struct lapic *a = calloc(1, sizeof(*a));

		if (!a) {
			apic_bus_free(bus);
			return NULL;
		}
		a->bus = bus;
		a->cpu = i;
		pthread_mutex_init(&a->lock, NULL);
		bus->cpu[bus->n++] = a;
		lapic_reset(a);
	}
	return bus;
}

void apic_bus_free(struct apic_bus *bus)
{
	if (!bus)
		return;
	for (unsigned i = 0; i < bus->n; i++) {
		pthread_mutex_destroy(&bus->cpu[i]->lock);
		free(bus->cpu[i]);
	}
	free(bus);
}

struct lapic *apic_bus_cpu(struct apic_bus *bus, unsigned cpu)
{
	return cpu < bus->n ? bus->cpu[cpu] : NULL;
}

int apic_bus_map(struct apic_bus *bus, struct iobus *mmio)
{
	return iobus_register(mmio, LAPIC_DEFAULT_BASE, LAPIC_PAGE_SIZE * 4, &lapic_mmio_ops, bus,
			      "apic");
}
