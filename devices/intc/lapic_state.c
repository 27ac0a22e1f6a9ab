/* lapic_state.c — the local APIC's snapshot (kernel_irqchip=off): the
 * register page as the guest left it, the base MSR, the timer, and the
 * NMI/INIT/SIPI/ExtINT events the vCPU thread has not taken yet.
 *
 * Timers are saved relative to the clock at the save (how long the count
 * has run, how long until it expires), so the destination's clock, which
 * starts anywhere, only has to be monotonic. */
#include <stdio.h>
#include <string.h>

#include "devices/intc/lapic.h"
#include "devices/intc/lapic_internal.h"
#include "state/state.h"

/* The layout of the node; bump when a property changes. */
#define LAPIC_STATE_VERSION 1
/* what a guest may hold in IA32_APIC_BASE (BSP, EXTD, EN, the page) */
#define APIC_BASE_VALID (APIC_BASE_ADDR | APIC_BASE_EN | APIC_BASE_EXTD | APIC_BASE_BSP)
#define LAPIC_EVENTS (LAPIC_EV_NMI | LAPIC_EV_INIT | LAPIC_EV_SIPI | LAPIC_EV_EXTINT)

static void node_name(const struct lapic *a, char *buf, size_t len)
{
	snprintf(buf, len, "lapic@%u", a->cpu);
}

void lapic_save(struct lapic *a, struct state_writer *w)
{
	uint64_t now;
	char name[32];

	node_name(a, name, sizeof(name));
	pthread_mutex_lock(&a->lock);
	now = a->bus->host.now_ns(a->bus->host.opaque);
	state_begin(w, name, LAPIC_STATE_VERSION);
	state_put_u32(w, "apic-id", a->apic_id);
	state_put_bytes(w, "page", a->page, sizeof(a->page));
	state_put_u64(w, "base", a->base_msr);
	state_put_u32(w, "esr-pending", a->esr_pending);
	state_put_u64(w, "timer-elapsed-ns", now - a->timer_start);
	state_put_u64(w, "timer-period-ns", a->timer_period);
	state_put_u8(w, "timer-armed", a->timer_next != 0);
	state_put_u64(w, "timer-due-ns", a->timer_next > now ? a->timer_next - now : 0);
	state_put_u64(w, "tsc-deadline", a->tsc_deadline);
	state_put_u8(w, "events", (uint8_t)a->events);
	state_put_u8(w, "nmis", (uint8_t)a->nmis);
	state_put_u8(w, "sipi-vector", a->sipi_vector);
	state_end(w);
	pthread_mutex_unlock(&a->lock);
}

/* What lapic_load takes, read and checked before any of it is used. */
struct lapic_saved {
	uint8_t page[LAPIC_PAGE_SIZE];
	uint64_t base, elapsed, period, due, tsc_deadline;
	uint32_t apic_id, esr;
	uint8_t events, nmis, sipi;
	bool armed;
};

static int read_saved(struct lapic *a, const struct state_reader *r, struct lapic_saved *s,
		      char *err, size_t errlen)
{
	struct state_node n;
	char name[32];
	uint32_t lvt;

	node_name(a, name, sizeof(name));
	if (state_node_open(&n, r, name, LAPIC_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_u32(&n, "apic-id", &s->apic_id) ||
	    state_get_bytes(&n, "page", s->page, sizeof(s->page)) ||
	    state_get_u64(&n, "base", &s->base) || state_get_u32(&n, "esr-pending", &s->esr) ||
	    state_get_u64(&n, "timer-elapsed-ns", &s->elapsed) ||
	    state_get_u64(&n, "timer-period-ns", &s->period) ||
	    state_get_bool(&n, "timer-armed", &s->armed) ||
	    state_get_u64(&n, "timer-due-ns", &s->due) ||
	    state_get_u64(&n, "tsc-deadline", &s->tsc_deadline) ||
	    state_get_u8_max(&n, "events", LAPIC_EVENTS, &s->events) ||
	    state_get_u8_max(&n, "nmis", 2, &s->nmis) || state_get_u8(&n, "sipi-vector", &s->sipi))
		return -1;
	if (s->apic_id != a->apic_id)
		return state_node_fail(&n, "initial APIC ID %u, this vCPU's is %u", s->apic_id,
				       a->apic_id);
	if (s->base & ~APIC_BASE_VALID || !(s->base & APIC_BASE_BSP) != (a->cpu != 0))
		return state_node_fail(&n, "APIC base %#llx is not one this vCPU can hold",
				       (unsigned long long)s->base);
	/* a period of 2^32 - 1 counts at divisor 128 is the longest a guest
	 * can program; more would be no timer of ours */
	if (s->period > 0xffffffffull * 128 || s->due > 0xffffffffull * 128)
		return state_node_fail(&n, "timer period %llu ns, due in %llu ns: out of range",
				       (unsigned long long)s->period, (unsigned long long)s->due);
	memcpy(&lvt, s->page + R_LVT_TIMER, 4);
	if ((lvt & LVT_TIMER_MODE) == TIMER_PERIODIC && s->period &&
	    s->period < LAPIC_MIN_PERIOD_NS)
		return state_node_fail(&n, "periodic timer of %llu ns, below vmm's %llu ns",
				       (unsigned long long)s->period, LAPIC_MIN_PERIOD_NS);
	return state_node_close(&n);
}

int lapic_load(struct lapic *a, const struct state_reader *r, char *err, size_t errlen)
{
	struct lapic_saved s;
	uint64_t old;

	if (read_saved(a, r, &s, err, errlen) < 0)
		return -1;
	pthread_mutex_lock(&a->lock);
	old = a->base_msr;
	memcpy(a->page, s.page, sizeof(a->page));
	a->base_msr = s.base;
	a->esr_pending = s.esr;
	a->timer_period = s.period;
	a->tsc_deadline = s.tsc_deadline;
	a->events = s.events;
	a->nmis = s.nmis;
	a->sipi_vector = s.sipi;
	lapic_timer_resume(a, s.elapsed, s.armed, s.due);
	pthread_mutex_unlock(&a->lock);
	if ((old ^ s.base) & (APIC_BASE_ADDR | APIC_BASE_EN | APIC_BASE_EXTD))
		apic_bus_remap(a->bus);
	if (s.events || lapic_has_interrupt(a))
		lapic_kick(a);
	return 0;
}
