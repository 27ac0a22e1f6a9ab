/* lapic_bus.c — the APIC bus: message delivery between the local APICs
 * (IPIs, MSIs, I/O APIC messages) with destination matching and lowest
 * priority arbitration, and the xAPIC MMIO page shared by all vCPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/intc/lapic.h"
#include "devices/intc/lapic_internal.h"

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

/* The calling vCPU's APIC (lapic_set_thread_cpu), or NULL. */
static struct lapic *thread_apic(struct apic_bus *bus)
{
	return thread_cpu >= 0 && (unsigned)thread_cpu < bus->n ? bus->cpu[thread_cpu] : NULL;
}

/* A page no APIC of this vCPU decodes (disabled, x2APIC, relocated) reads
 * as all-ones and ignores writes, as KVM's APIC MMIO hole. */
static void mmio_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct apic_window *w = opaque;
	struct lapic *a = thread_apic(w->bus);
	uint32_t v = 0xffffffff;

	if (off >= LAPIC_PAGE_SIZE * 4 || !a ||
	    !lapic_mmio_read(a, w->base, (unsigned)(off & ~3ull), &v))
		v = 0xffffffff;
	io_data_put(data, size, v >> (8 * (off & 3)));
}

static void mmio_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct apic_window *w = opaque;
	struct lapic *a = thread_apic(w->bus);

	/* Only aligned 32-bit accesses are defined; others are dropped. */
	if (!a || size != 4 || (off & 3) || off >= LAPIC_PAGE_SIZE * 4)
		return;
	lapic_mmio_write(a, w->base, (unsigned)off, (uint32_t)io_data_get(data, size));
}

static const struct io_ops lapic_mmio_ops = {mmio_read, mmio_write};

void lapic_set_thread_cpu(int cpu)
{
	thread_cpu = cpu;
}

struct apic_bus *apic_bus_new(unsigned ncpus, const uint8_t *apic_ids,
			      const struct lapic_host *host)
{
	struct apic_bus *bus = calloc(1, sizeof(*bus) + ncpus * sizeof(bus->cpu[0]));

	if (!bus)
		return NULL;
	bus->host = *host;
	bus->win = calloc(ncpus + 1, sizeof(*bus->win));
	if (!bus->win) {
		free(bus);
		return NULL;
	}
	pthread_mutex_init(&bus->map_lock, NULL);
	for (unsigned i = 0; i <= ncpus; i++)
		bus->win[i].bus = bus;
	bus->win[0].base = LAPIC_DEFAULT_BASE;
	for (unsigned i = 0; i < ncpus; i++) {
		struct lapic *a = calloc(1, sizeof(*a));

		if (!a) {
			apic_bus_free(bus);
			return NULL;
		}
		a->bus = bus;
		a->cpu = i;
		a->apic_id = apic_ids ? apic_ids[i] : i;
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
	pthread_mutex_destroy(&bus->map_lock);
	free(bus->win);
	free(bus);
}

struct lapic *apic_bus_cpu(struct apic_bus *bus, unsigned cpu)
{
	return cpu < bus->n ? bus->cpu[cpu] : NULL;
}

static bool wanted(struct apic_bus *bus, const uint64_t *want, uint64_t base)
{
	for (unsigned i = 0; i < bus->n; i++)
		if (want[i] == base)
			return true;
	return false;
}

static struct apic_window *window_at(struct apic_bus *bus, uint64_t base)
{
	for (unsigned i = 0; i <= bus->n; i++)
		if (bus->win[i].mapped && bus->win[i].base == base)
			return &bus->win[i];
	return NULL;
}

static void map_window(struct apic_bus *bus, uint64_t base)
{
	struct apic_window *w = NULL;

	for (unsigned i = 1; i <= bus->n && !w; i++)
		if (!bus->win[i].mapped)
			w = &bus->win[i];
	if (!w)
		return;
	w->base = base;
	w->mapped =
		iobus_register(bus->mmio, base, APIC_WINDOW_SIZE, &lapic_mmio_ops, w, "apic") == 0;
	if (!w->mapped && !bus->overlap_logged) {
		/* (guest RAM there is KVM's: the page never exits at all) */
		bus->overlap_logged = true;
		fprintf(stderr,
			"vmm: APIC base 0x%llx overlaps another device: the APIC is not "
			"reachable there\n",
			(unsigned long long)base);
	}
}

/* IA32_APIC_BASE moves an APIC's page: each vCPU reaches its own APIC
 * through the page at its base, so one window per base in use (the
 * default one stays, answering all-ones to the vCPUs based elsewhere). */
void apic_bus_remap(struct apic_bus *bus)
{
	uint64_t want[bus->n];

	if (!bus->mmio)
		return;
	pthread_mutex_lock(&bus->map_lock);
	for (unsigned i = 0; i < bus->n; i++)
		want[i] = lapic_page_base(bus->cpu[i]);
	for (unsigned i = 1; i <= bus->n; i++) {
		struct apic_window *w = &bus->win[i];

		if (w->mapped && !wanted(bus, want, w->base)) {
			iobus_unregister(bus->mmio, w->base);
			w->mapped = false;
		}
	}
	for (unsigned i = 0; i < bus->n; i++)
		if (want[i] && !window_at(bus, want[i]))
			map_window(bus, want[i]);
	pthread_mutex_unlock(&bus->map_lock);
}

int apic_bus_map(struct apic_bus *bus, struct iobus *mmio)
{
	int r = iobus_register(mmio, LAPIC_DEFAULT_BASE, APIC_WINDOW_SIZE, &lapic_mmio_ops,
			       &bus->win[0], "apic");

	if (r < 0)
		return r;
	bus->win[0].mapped = true;
	bus->mmio = mmio;
	apic_bus_remap(bus);
	return 0;
}
