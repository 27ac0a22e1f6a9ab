/* lapic.c — local APICs (xAPIC MMIO page and x2APIC MSRs) and the APIC
 * bus between them, for -machine kernel_irqchip=off.
 *
 * The registers live in a 1 KiB page laid out like the xAPIC page (and
 * like KVM's struct kvm_lapic_state), so `info lapic` formats KVM's
 * in-kernel APICs and these alike. Each APIC has its own lock; delivery
 * to another APIC takes only the target's lock, never two at once, and
 * the callbacks (kick, EOI broadcast, timer arming) run without any.
 *
 * The xAPIC page is one MMIO region for all vCPUs: the vCPU thread names
 * itself with lapic_set_thread_cpu() so an access reaches its own APIC.
 * Timers: one-shot, periodic and TSC-deadline on the host's clock with a
 * 1 GHz APIC bus (as KVM); periodic timers fire at most every
 * LAPIC_MIN_PERIOD_NS. NMI, INIT and SIPI become per-APIC events the
 * vCPU thread takes with lapic_take_events().
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/intc/lapic.h"
#include "devices/intc/lapic_internal.h"

uint32_t lapic_reg(const struct lapic *a, unsigned off)
{
	uint32_t v;

	memcpy(&v, a->page + off, 4);
	return v;
}

static void set_reg(struct lapic *a, unsigned off, uint32_t v)
{
	memcpy(a->page + off, &v, 4);
}

/* The 256-bit vector registers (ISR, TMR, IRR): 8 words 16 bytes apart. */
static bool vec_test(const struct lapic *a, unsigned base, unsigned v)
{
	return lapic_reg(a, base + (v >> 5) * 16) & (1u << (v & 31));
}

static void vec_set(struct lapic *a, unsigned base, unsigned v, bool on)
{
	unsigned off = base + (v >> 5) * 16;
	uint32_t w = lapic_reg(a, off);

	set_reg(a, off, on ? w | (1u << (v & 31)) : w & ~(1u << (v & 31)));
}

static int vec_highest(const struct lapic *a, unsigned base)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t bits = lapic_reg(a, base + (unsigned)w * 16);

		if (bits)
			return w * 32 + 31 - __builtin_clz(bits);
	}
	return -1;
}

bool lapic_x2apic(const struct lapic *a)
{
	return a->base_msr & APIC_BASE_EXTD;
}

static bool sw_enabled(const struct lapic *a)
{
	return lapic_reg(a, R_SVR) & SVR_ENABLED;
}

bool lapic_hw_enabled(const struct lapic *a)
{
	return a->base_msr & APIC_BASE_EN;
}

uint32_t lapic_apic_id(const struct lapic *a)
{
	return lapic_x2apic(a) ? lapic_reg(a, R_ID) : lapic_reg(a, R_ID) >> 24;
}

static void update_ppr(struct lapic *a)
{
	uint32_t tpr = lapic_reg(a, R_TPR) & 0xff;
	int isrv = vec_highest(a, R_ISR);
	uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xf0;

	set_reg(a, R_PPR, (tpr & 0xf0) >= isr_class ? tpr : isr_class);
}

void lapic_kick(struct lapic *a)
{
	if (a->bus->host.kick)
		a->bus->host.kick(a->bus->host.opaque, a->cpu);
}

/* Accept an interrupt (lock held). Returns true when the vCPU must look. */
bool lapic_accept(struct lapic *a, unsigned dm, unsigned vector, bool level)
{
	switch (dm) {
	case DM_FIXED:
	case DM_LOWEST:
		if (!sw_enabled(a))
			return false;
		if (vector < 16) {
			lapic_error(a, ESR_RECV_ILLEGAL);
			return false;
		}
		vec_set(a, R_IRR, vector, true);
		vec_set(a, R_TMR, vector, level);
		return true;
	case DM_NMI:
		/* Counted: a second NMI while one waits is latched, not lost
		 * (as KVM queues two; apic.c "multiple nmi"). More merge. */
		a->events |= LAPIC_EV_NMI;
		if (a->nmis < 2)
			a->nmis++;
		return true;
	case DM_INIT:
		a->events |= LAPIC_EV_INIT;
		return true;
	case DM_SIPI:
		a->events |= LAPIC_EV_SIPI;
		a->sipi_vector = (uint8_t)vector;
		return true;
	case DM_EXTINT:
		a->events |= LAPIC_EV_EXTINT;
		return true;
	default: /* SMI and reserved modes: no SMM here */
		return false;
	}
}

void lapic_error(struct lapic *a, uint32_t bits)
{
	uint32_t lvt = lapic_reg(a, R_LVT_ERROR);

	a->esr_pending |= bits;
	/* An illegal LVT error vector would recurse: drop it instead. */
	if (!(lvt & LVT_MASKED) && (lvt & 0xff) >= 16)
		lapic_accept(a, DM_FIXED, lvt & 0xff, false);
}

/* Deliver through an LVT entry (lock held). */
static bool deliver_lvt(struct lapic *a, unsigned off)
{
	uint32_t lvt = lapic_reg(a, off);
	unsigned dm = (lvt >> 8) & 7;

	if (lvt & LVT_MASKED)
		return false;
	if (off == R_LVT_TIMER || off == R_LVT_ERROR)
		dm = DM_FIXED;
	return lapic_accept(a, dm, lvt & 0xff, false);
}

/* ------------------------------------------------------------- timer */

static uint64_t timer_divisor(const struct lapic *a)
{
	uint32_t d = lapic_reg(a, R_TDCR);
	unsigned v = (d & 3) | ((d & 8) >> 1);

	return 1ull << ((v + 1) & 7);
}

static uint64_t now_ns(const struct lapic *a)
{
	return a->bus->host.now_ns(a->bus->host.opaque);
}

static void arm(struct lapic *a, uint64_t deadline)
{
	a->timer_next = deadline;
	if (a->bus->host.arm_timer)
		a->bus->host.arm_timer(a->bus->host.opaque, a->cpu,
				       deadline ? deadline : UINT64_MAX);
}

static uint32_t timer_mode(const struct lapic *a)
{
	return lapic_reg(a, R_LVT_TIMER) & LVT_TIMER_MODE;
}

static void start_counter(struct lapic *a)
{
	uint64_t count = lapic_reg(a, R_TMICT), now = now_ns(a);

	if (timer_mode(a) == TIMER_TSC_DEADLINE || !count) {
		a->timer_period = 0;
		if (timer_mode(a) != TIMER_TSC_DEADLINE)
			arm(a, 0);
		return;
	}
	a->timer_start = now;
	a->timer_period = count * timer_divisor(a);
	if (timer_mode(a) == TIMER_PERIODIC && a->timer_period < LAPIC_MIN_PERIOD_NS)
		a->timer_period = LAPIC_MIN_PERIOD_NS;
	arm(a, now + a->timer_period);
}

static uint64_t tsc_to_ns(const struct lapic *a, uint64_t tsc)
{
	const struct lapic_host *h = &a->bus->host;
	uint64_t now = h->now_ns(h->opaque), cur = h->tsc_now(h->opaque);

	if (tsc <= cur)
		return now;
	return now + (uint64_t)((unsigned __int128)(tsc - cur) * 1000000 / h->tsc_khz);
}

static uint32_t current_count(const struct lapic *a)
{
	uint64_t elapsed, div = timer_divisor(a);

	if (!a->timer_period || timer_mode(a) == TIMER_TSC_DEADLINE)
		return 0;
	elapsed = now_ns(a) - a->timer_start;
	if (timer_mode(a) == TIMER_PERIODIC)
		elapsed %= a->timer_period;
	else if (elapsed >= a->timer_period)
		return 0;
	return (uint32_t)((a->timer_period - elapsed) / div);
}

void lapic_timer_expired(struct lapic *a)
{
	bool wake = false;
	uint64_t now;

	pthread_mutex_lock(&a->lock);
	now = now_ns(a);
	if (a->timer_next && now >= a->timer_next) {
		wake = deliver_lvt(a, R_LVT_TIMER);
		if (timer_mode(a) == TIMER_PERIODIC && a->timer_period) {
			/* missed periods coalesce into this one */
			uint64_t k = (now - a->timer_start) / a->timer_period + 1;

			arm(a, a->timer_start + k * a->timer_period);
		} else {
			if (timer_mode(a) == TIMER_TSC_DEADLINE)
				a->tsc_deadline = 0;
			a->timer_period = 0;
			arm(a, 0);
		}
	} else if (a->timer_next) {
		arm(a, a->timer_next); /* early: the host timer fired too soon */
	}
	pthread_mutex_unlock(&a->lock);
	if (wake)
		lapic_kick(a);
}

/* A loaded snapshot's timer (lock held): the count started since_start
 * ns ago and, when armed, expires in until_next ns; a TSC-deadline timer
 * follows tsc_deadline on the guest's TSC instead. */
void lapic_timer_resume(struct lapic *a, uint64_t since_start, bool armed, uint64_t until_next)
{
	uint64_t now = now_ns(a);

	a->timer_start = now - since_start; /* elapsed times are taken mod 2^64 */
	if (timer_mode(a) == TIMER_TSC_DEADLINE)
		arm(a, a->tsc_deadline ? tsc_to_ns(a, a->tsc_deadline) : 0);
	else
		arm(a, armed ? now + until_next : 0);
}

/* -------------------------------------------------------- registers */

/* Work left for after the lock is dropped. */
struct deferred {
	bool ipi, wake;
	uint32_t icr_lo, icr_dest;
	int eoi_vector;
};

static void write_eoi(struct lapic *a, struct deferred *d)
{
	int v = vec_highest(a, R_ISR);

	if (v < 0)
		return;
	vec_set(a, R_ISR, (unsigned)v, false);
	/* The TMR stays as it is until the vector is accepted again (as on
	 * hardware and KVM): guests read it after the EOI. */
	if (vec_test(a, R_TMR, (unsigned)v) && !(lapic_reg(a, R_SVR) & SVR_NO_EOI_BROADCAST))
		d->eoi_vector = v;
	update_ppr(a);
	d->wake = vec_highest(a, R_IRR) >= 0;
}

static uint32_t lvt_writable(unsigned off)
{
	switch (off) {
	case R_LVT_TIMER:
		return 0xff | LVT_MASKED | LVT_TIMER_MODE;
	case R_LVT_LINT0:
	case R_LVT_LINT1:
		return 0xff | 0x700 | (1u << 13) | LVT_LEVEL | LVT_MASKED;
	case R_LVT_ERROR:
		return 0xff | LVT_MASKED;
	default: /* CMCI, thermal, performance */
		return 0xff | 0x700 | LVT_MASKED;
	}
}

static void write_lvt(struct lapic *a, unsigned off, uint32_t v)
{
	uint32_t old_mode = timer_mode(a);

	v &= lvt_writable(off);
	if (!sw_enabled(a))
		v |= LVT_MASKED; /* a software-disabled APIC keeps its LVTs masked */
	if (off == R_LVT_TIMER && (v & LVT_TIMER_MODE) == LVT_TIMER_MODE)
		v &= ~LVT_TIMER_MODE; /* reserved mode 3: one-shot */
	set_reg(a, off, v);
	if (off == R_LVT_TIMER && timer_mode(a) != old_mode) {
		/* switching to or from TSC-deadline disarms the timer */
		if (old_mode == TIMER_TSC_DEADLINE || timer_mode(a) == TIMER_TSC_DEADLINE) {
			a->tsc_deadline = 0;
			set_reg(a, R_TMICT, 0);
			a->timer_period = 0;
			arm(a, 0);
		}
	}
}

static void write_svr(struct lapic *a, uint32_t v)
{
	set_reg(a, R_SVR, v & (0xff | SVR_ENABLED | SVR_NO_EOI_BROADCAST));
	if (v & SVR_ENABLED)
		return;
	for (unsigned off = R_LVT_TIMER; off <= R_LVT_ERROR; off += 0x10)
		set_reg(a, off, lapic_reg(a, off) | LVT_MASKED);
	set_reg(a, R_LVT_CMCI, lapic_reg(a, R_LVT_CMCI) | LVT_MASKED);
}

/* One register write (lock held); -1 for an x2APIC #GP. */
static int reg_write(struct lapic *a, unsigned off, uint32_t v, struct deferred *d)
{
	bool x2 = lapic_x2apic(a);

	switch (off) {
	case R_ID:
		if (x2)
			return -1;
		set_reg(a, R_ID, v & 0xff000000);
		return 0;
	case R_TPR:
		set_reg(a, R_TPR, v & 0xff);
		update_ppr(a);
		d->wake = true;
		return 0;
	case R_EOI:
		if (x2 && v)
			return -1;
		write_eoi(a, d);
		return 0;
	case R_LDR:
		if (x2)
			return -1;
		set_reg(a, R_LDR, v & 0xff000000);
		return 0;
	case R_DFR:
		if (x2)
			return -1;
		set_reg(a, R_DFR, v | 0x0fffffff);
		return 0;
	case R_SVR:
		write_svr(a, v);
		return 0;
	case R_ESR:
		if (x2 && v)
			return -1;
		set_reg(a, R_ESR, a->esr_pending);
		a->esr_pending = 0;
		return 0;
	case R_ICR:
		set_reg(a, R_ICR, v & ~(1u << 12)); /* delivery is immediate: idle */
		d->ipi = true;
		d->icr_lo = v;
		d->icr_dest = lapic_reg(a, R_ICR2);
		return 0;
	case R_ICR2:
		if (x2)
			return -1;
		set_reg(a, R_ICR2, v & 0xff000000);
		return 0;
	case R_LVT_CMCI:
	case R_LVT_TIMER:
	case R_LVT_THERMAL:
	case R_LVT_PERF:
	case R_LVT_LINT0:
	case R_LVT_LINT1:
	case R_LVT_ERROR:
		write_lvt(a, off, v);
		return 0;
	case R_TMICT:
		if (timer_mode(a) == TIMER_TSC_DEADLINE)
			return 0;
		set_reg(a, R_TMICT, v);
		start_counter(a);
		return 0;
	case R_TDCR:
		set_reg(a, R_TDCR, v & 0xb);
		return 0;
	case R_SELF_IPI:
		if (!x2)
			break;
		d->wake = lapic_accept(a, DM_FIXED, v & 0xff, false);
		return 0;
	default:
		if (off >= LAPIC_PAGE_SIZE || (off & 0xf))
			break;
		/* read-only registers: ignored (xAPIC) or #GP (x2APIC) */
		if (off == R_VER || off == R_APR || off == R_PPR || off == R_RRD ||
		    off == R_TMCCT || (off >= R_ISR && off < R_ESR))
			return x2 ? -1 : 0;
		break;
	}
	if (x2)
		return -1;
	lapic_error(a, ESR_ILLEGAL_REG);
	return 0;
}

/* One register read (lock held); -1 for an x2APIC #GP. */
static int reg_read(struct lapic *a, unsigned off, uint32_t *v)
{
	bool x2 = lapic_x2apic(a);

	*v = 0;
	if (off >= LAPIC_PAGE_SIZE || (off & 0xf))
		return x2 ? -1 : 0;
	switch (off) {
	case R_EOI:
	case R_SELF_IPI:
		return x2 ? -1 : 0;
	case R_DFR:
	case R_ICR2:
		if (x2)
			return -1;
		break;
	case R_TMCCT:
		*v = current_count(a);
		return 0;
	case R_APR:
	case R_RRD:
		return 0;
	default:
		break;
	}
	if (off < R_ID || (off > R_SVR && off < R_ISR) || (off > R_ESR && off < R_LVT_CMCI) ||
	    (off > R_TMCCT && off != R_TDCR)) {
		if (x2)
			return -1;
		return 0;
	}
	*v = lapic_reg(a, off);
	return 0;
}

static void finish(struct lapic *a, struct deferred *d)
{
	if (d->ipi)
		lapic_send_ipi(a, d->icr_lo, d->icr_dest);
	if (d->eoi_vector >= 0 && a->bus->host.eoi)
		a->bus->host.eoi(a->bus->host.opaque, (uint8_t)d->eoi_vector);
	if (d->wake)
		lapic_kick(a);
}

uint32_t lapic_read(struct lapic *a, unsigned off)
{
	uint32_t v;

	pthread_mutex_lock(&a->lock);
	reg_read(a, off, &v);
	pthread_mutex_unlock(&a->lock);
	return v;
}

void lapic_write(struct lapic *a, unsigned off, uint32_t v)
{
	struct deferred d = {.eoi_vector = -1};

	pthread_mutex_lock(&a->lock);
	reg_write(a, off, v, &d);
	pthread_mutex_unlock(&a->lock);
	finish(a, &d);
}

static bool decodes(const struct lapic *a, uint64_t base)
{
	return lapic_hw_enabled(a) && !lapic_x2apic(a) && (a->base_msr & APIC_BASE_ADDR) == base;
}

uint64_t lapic_page_base(struct lapic *a)
{
	uint64_t base;

	pthread_mutex_lock(&a->lock);
	base = decodes(a, a->base_msr & APIC_BASE_ADDR) ? a->base_msr & APIC_BASE_ADDR : 0;
	pthread_mutex_unlock(&a->lock);
	return base;
}

bool lapic_mmio_read(struct lapic *a, uint64_t base, unsigned off, uint32_t *v)
{
	bool hit;

	pthread_mutex_lock(&a->lock);
	hit = decodes(a, base);
	if (hit)
		reg_read(a, off, v);
	pthread_mutex_unlock(&a->lock);
	return hit;
}

bool lapic_mmio_write(struct lapic *a, uint64_t base, unsigned off, uint32_t v)
{
	struct deferred d = {.eoi_vector = -1};
	bool hit;

	pthread_mutex_lock(&a->lock);
	hit = decodes(a, base);
	if (hit)
		reg_write(a, off, v, &d);
	pthread_mutex_unlock(&a->lock);
	finish(a, &d);
	return hit;
}

int lapic_msr_read(struct lapic *a, uint32_t msr, uint64_t *value)
{
	uint32_t lo, hi;
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (msr == LAPIC_MSR_TSC_DEADLINE) {
		*value = timer_mode(a) == TIMER_TSC_DEADLINE ? a->tsc_deadline : 0;
	} else if (!lapic_x2apic(a) || msr < 0x800 || msr > 0x8ff) {
		r = -1;
	} else if (msr == 0x830) {
		reg_read(a, R_ICR, &lo);
		hi = lapic_reg(a, R_ICR2);
		*value = (uint64_t)hi << 32 | lo;
	} else {
		r = reg_read(a, (msr - 0x800) << 4, &lo);
		*value = lo;
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* IA32_TSC_DEADLINE (lock held): a deadline already past fires before the
 * WRMSR retires (as KVM: apic.c "tsc deadline timer" looks right after),
 * not on the next host timer tick. true: the vCPU must look. */
static bool write_tsc_deadline(struct lapic *a, uint64_t value)
{
	const struct lapic_host *h = &a->bus->host;

	if (value && value <= h->tsc_now(h->opaque)) {
		a->tsc_deadline = 0;
		arm(a, 0);
		return deliver_lvt(a, R_LVT_TIMER);
	}
	a->tsc_deadline = value;
	arm(a, value ? tsc_to_ns(a, value) : 0);
	return false;
}

int lapic_msr_write(struct lapic *a, uint32_t msr, uint64_t value)
{
	struct deferred d = {.eoi_vector = -1};
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (msr == LAPIC_MSR_TSC_DEADLINE) {
		if (timer_mode(a) == TIMER_TSC_DEADLINE)
			d.wake = write_tsc_deadline(a, value);
	} else if (!lapic_x2apic(a) || msr < 0x800 || msr > 0x8ff) {
		r = -1;
	} else if (msr == 0x830) {
		set_reg(a, R_ICR2, (uint32_t)(value >> 32));
		r = reg_write(a, R_ICR, (uint32_t)value, &d);
	} else if (value >> 32) {
		r = -1; /* the upper half of a 32-bit x2APIC register is reserved */
	} else {
		r = reg_write(a, (msr - 0x800) << 4, (uint32_t)value, &d);
	}
	pthread_mutex_unlock(&a->lock);
	finish(a, &d);
	return r;
}

/* ------------------------------------------------------- the vCPU side */

static int deliverable(const struct lapic *a)
{
	int v = vec_highest(a, R_IRR);

	if (v < 0 || ((unsigned)v & 0xf0) <= (lapic_reg(a, R_PPR) & 0xf0))
		return -1;
	return v;
}

bool lapic_blocked_by_tpr(struct lapic *a)
{
	int irr, isr;
	bool r;

	pthread_mutex_lock(&a->lock);
	irr = vec_highest(a, R_IRR);
	isr = vec_highest(a, R_ISR);
	r = irr >= 0 && (irr & 0xf0) > (isr < 0 ? 0 : isr & 0xf0) &&
	    (unsigned)(irr & 0xf0) <= (lapic_reg(a, R_TPR) & 0xf0);
	pthread_mutex_unlock(&a->lock);
	return r;
}

bool lapic_has_interrupt(struct lapic *a)
{
	bool r;

	pthread_mutex_lock(&a->lock);
	r = deliverable(a) >= 0;
	pthread_mutex_unlock(&a->lock);
	return r;
}

int lapic_get_interrupt(struct lapic *a)
{
	int v;

	pthread_mutex_lock(&a->lock);
	/* An NMI the vCPU has not taken yet outranks every interrupt: an
	 * interrupt taken now would reach the guest first (apic.c "multiple
	 * nmi" sends an NMI, then a fixed IPI that must find it handled). */
	v = (a->events & LAPIC_EV_NMI) ? -1 : deliverable(a);
	if (v >= 0) {
		vec_set(a, R_IRR, (unsigned)v, false);
		vec_set(a, R_ISR, (unsigned)v, true);
		update_ppr(a);
	}
	pthread_mutex_unlock(&a->lock);
	return v;
}

bool lapic_accepts_pic(struct lapic *a)
{
	uint32_t lvt0;
	bool r;

	pthread_mutex_lock(&a->lock);
	lvt0 = lapic_reg(a, R_LVT_LINT0);
	r = !lapic_hw_enabled(a) || (!(lvt0 & LVT_MASKED) && ((lvt0 >> 8) & 7) == DM_EXTINT);
	pthread_mutex_unlock(&a->lock);
	return r;
}

void lapic_set_lint(struct lapic *a, unsigned pin, bool level)
{
	bool wake = false;

	if (pin > 1 || !level)
		return;
	pthread_mutex_lock(&a->lock);
	wake = deliver_lvt(a, pin ? R_LVT_LINT1 : R_LVT_LINT0);
	pthread_mutex_unlock(&a->lock);
	if (wake)
		lapic_kick(a);
}

uint8_t lapic_get_tpr(struct lapic *a)
{
	uint8_t tpr;

	pthread_mutex_lock(&a->lock);
	tpr = (uint8_t)lapic_reg(a, R_TPR);
	pthread_mutex_unlock(&a->lock);
	return tpr;
}

void lapic_set_tpr(struct lapic *a, uint8_t tpr)
{
	lapic_write(a, R_TPR, tpr);
}

unsigned lapic_take_events(struct lapic *a, uint8_t *sipi_vector, unsigned *nmis)
{
	unsigned ev;

	pthread_mutex_lock(&a->lock);
	ev = a->events;
	a->events = 0;
	*sipi_vector = a->sipi_vector;
	*nmis = a->nmis;
	a->nmis = 0;
	pthread_mutex_unlock(&a->lock);
	return ev;
}

bool lapic_events_pending(struct lapic *a)
{
	bool r;

	pthread_mutex_lock(&a->lock);
	r = a->events != 0;
	pthread_mutex_unlock(&a->lock);
	return r;
}

uint64_t lapic_get_base(struct lapic *a)
{
	uint64_t b;

	pthread_mutex_lock(&a->lock);
	b = a->base_msr;
	pthread_mutex_unlock(&a->lock);
	return b;
}

/* The base MSR changed: a new xAPIC page, or none (no lock held). */
static void base_changed(struct lapic *a, uint64_t old)
{
	if ((old ^ a->base_msr) & (APIC_BASE_ADDR | APIC_BASE_EN | APIC_BASE_EXTD))
		apic_bus_remap(a->bus);
}

void lapic_set_base(struct lapic *a, uint64_t value)
{
	uint64_t old;

	pthread_mutex_lock(&a->lock);
	old = a->base_msr;
	if ((value & APIC_BASE_EN) && !(old & APIC_BASE_EN) && !(value & APIC_BASE_EXTD)) {
		/* re-enabled: the xAPIC ID is the initial one again (as KVM) */
		set_reg(a, R_ID, a->apic_id << 24);
	} else if ((value & APIC_BASE_EXTD) && !lapic_x2apic(a)) {
		/* into x2APIC mode: the full ID and a derived logical ID */
		uint32_t id = a->apic_id;

		set_reg(a, R_ID, id);
		set_reg(a, R_LDR, (id >> 4) << 16 | 1u << (id & 15));
	} else if (!(value & APIC_BASE_EXTD) && lapic_x2apic(a)) {
		set_reg(a, R_ID, a->apic_id << 24);
		set_reg(a, R_LDR, 0);
	}
	a->base_msr = value;
	pthread_mutex_unlock(&a->lock);
	base_changed(a, old);
}

/* INIT (and power-on) state; keeps the ID, the base MSR and the events. */
static void init_locked(struct lapic *a)
{
	uint64_t base = a->base_msr;

	memset(a->page, 0, sizeof(a->page));
	set_reg(a, R_ID, lapic_x2apic(a) ? a->apic_id : a->apic_id << 24);
	set_reg(a, R_VER, LAPIC_VERSION | (LVT_COUNT - 1) << 16 | 1u << 24);
	set_reg(a, R_DFR, 0xffffffff);
	set_reg(a, R_SVR, 0xff);
	for (unsigned off = R_LVT_TIMER; off <= R_LVT_ERROR; off += 0x10)
		set_reg(a, off, LVT_MASKED);
	set_reg(a, R_LVT_CMCI, LVT_MASKED);
	/* As a BIOS leaves it (and KVM, QEMU): the BSP's LINT0 in virtual
	 * wire mode, so the PIC reaches it. */
	if (base & APIC_BASE_BSP)
		set_reg(a, R_LVT_LINT0, DM_EXTINT << 8);
	if (lapic_x2apic(a))
		set_reg(a, R_LDR, (a->apic_id >> 4) << 16 | 1u << (a->apic_id & 15));
	a->esr_pending = 0;
	a->tsc_deadline = 0;
	a->timer_period = 0;
	arm(a, 0);
}

void lapic_init(struct lapic *a)
{
	pthread_mutex_lock(&a->lock);
	init_locked(a);
	pthread_mutex_unlock(&a->lock);
}

void lapic_reset(struct lapic *a)
{
	uint64_t old;

	pthread_mutex_lock(&a->lock);
	old = a->base_msr;
	a->base_msr = LAPIC_DEFAULT_BASE | APIC_BASE_EN | (a->cpu == 0 ? APIC_BASE_BSP : 0);
	a->events = 0;
	a->nmis = 0;
	init_locked(a);
	pthread_mutex_unlock(&a->lock);
	base_changed(a, old);
}

void lapic_copy_page(struct lapic *a, uint8_t page[LAPIC_PAGE_SIZE])
{
	pthread_mutex_lock(&a->lock);
	memcpy(page, a->page, LAPIC_PAGE_SIZE);
	memcpy(page + R_TMCCT, &(uint32_t){current_count(a)}, 4);
	pthread_mutex_unlock(&a->lock);
}
