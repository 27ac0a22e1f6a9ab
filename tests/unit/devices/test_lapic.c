/* Unit tests for the local APIC model on a fake clock, two APICs on one
 * bus: reset state, acceptance and priorities (TPR/PPR, ISR nesting),
 * EOI and the level-triggered EOI broadcast, IPIs (physical, logical
 * flat and cluster, shorthands, lowest priority, NMI/INIT/SIPI), the
 * error register, the timer in one-shot, periodic and TSC-deadline
 * modes, x2APIC MSRs, the MMIO page (relocated by IA32_APIC_BASE, absent
 * while disabled) and `info lapic`. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/intc/lapic.h"
#include "tests/unit/devices/pc_host.h"

struct apic_fixture {
	struct apic_bus *bus;
	struct lapic *a[2];
	uint64_t now, tsc;
	uint64_t deadline[2];
	unsigned kicks[2];
	int eoi[8];
	unsigned n_eoi;
};

static void f_kick(void *opaque, unsigned cpu)
{
	((struct apic_fixture *)opaque)->kicks[cpu]++;
}

static void f_eoi(void *opaque, uint8_t vector)
{
	struct apic_fixture *f = opaque;

	ck_assert_uint_lt(f->n_eoi, 8);
	f->eoi[f->n_eoi++] = vector;
}

static uint64_t f_now(void *opaque)
{
	return ((struct apic_fixture *)opaque)->now;
}

static void f_arm(void *opaque, unsigned cpu, uint64_t deadline)
{
	((struct apic_fixture *)opaque)->deadline[cpu] = deadline;
}

static uint64_t f_tsc(void *opaque)
{
	return ((struct apic_fixture *)opaque)->tsc;
}

static void apic_init(struct apic_fixture *f, bool enable)
{
	struct lapic_host h = {f_kick, f_eoi, f_now, f_arm, f_tsc, 2000000 /* 2 GHz */, f};

	memset(f, 0, sizeof(*f));
	f->now = 1000000000ull;
	f->tsc = 5000000000ull;
	f->bus = apic_bus_new(2, NULL, &h);
	ck_assert_ptr_nonnull(f->bus);
	f->a[0] = apic_bus_cpu(f->bus, 0);
	f->a[1] = apic_bus_cpu(f->bus, 1);
	ck_assert_ptr_null(apic_bus_cpu(f->bus, 2));
	if (enable) {
		lapic_write(f->a[0], 0xf0, 0x1ff);
		lapic_write(f->a[1], 0xf0, 0x1ff);
	}
}

static void apic_fini(struct apic_fixture *f)
{
	apic_bus_free(f->bus);
}

/* An MSI: fixed/edge unless said, physical destination. */
static void msi(struct apic_fixture *f, unsigned dest, uint32_t data)
{
	apic_bus_msi(f->bus, 0xfee00000ull | dest << 12, data);
}

/* Take the next interrupt and end it (EOI): the vector or -1. */
static int take(struct lapic *a)
{
	int v = lapic_get_interrupt(a);

	if (v >= 0)
		lapic_write(a, 0xb0, 0);
	return v;
}

static void send_ipi(struct apic_fixture *f, unsigned from, unsigned dest, uint32_t icr)
{
	lapic_write(f->a[from], 0x310, dest << 24);
	lapic_write(f->a[from], 0x300, icr);
}

START_TEST(reset_state)
{
	struct apic_fixture f;

	apic_init(&f, false);
	ck_assert_uint_eq(lapic_read(f.a[1], 0x20), 1u << 24);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x30), 0x01060014);
	ck_assert_uint_eq(lapic_read(f.a[0], 0xf0), 0xff);
	ck_assert_uint_eq(lapic_read(f.a[0], 0xe0), 0xffffffff);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x320), 0x10000);
	/* the BSP's LINT0 is in virtual wire mode, the AP's masked */
	ck_assert_uint_eq(lapic_read(f.a[0], 0x350), 0x700);
	ck_assert(lapic_accepts_pic(f.a[0]));
	ck_assert(!lapic_accepts_pic(f.a[1]));
	ck_assert_uint_eq(lapic_get_base(f.a[0]), 0xfee00900ull);
	ck_assert_uint_eq(lapic_get_base(f.a[1]), 0xfee00800ull);
	/* software-disabled: fixed interrupts are dropped, LVTs stay masked */
	msi(&f, 0, 0x40);
	ck_assert(!lapic_has_interrupt(f.a[0]));
	lapic_write(f.a[0], 0x370, 0xfe);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x370), 0x100fe);
	/* a hardware-disabled APIC passes the PIC through */
	lapic_set_base(f.a[1], 0);
	ck_assert(lapic_accepts_pic(f.a[1]));
	apic_fini(&f);
}
END_TEST

START_TEST(priorities_and_eoi)
{
	struct apic_fixture f;

	apic_init(&f, true);
	msi(&f, 1, 0x41);
	ck_assert_uint_eq(f.kicks[1], 1);
	ck_assert_uint_eq(f.kicks[0], 0);
	ck_assert(!lapic_has_interrupt(f.a[0]));
	/* TPR 0x40 blocks class 4; PPR follows */
	lapic_set_tpr(f.a[1], 0x40);
	ck_assert_uint_eq(lapic_read(f.a[1], 0xa0), 0x40);
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), -1);
	lapic_set_tpr(f.a[1], 0x3f);
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), 0x41);
	ck_assert_uint_eq(lapic_read(f.a[1], 0x100 + 2 * 16), 1u << 1); /* ISR */
	ck_assert_uint_eq(lapic_read(f.a[1], 0xa0), 0x40);		/* PPR = ISR class */
	/* same class waits, a higher class nests */
	msi(&f, 1, 0x45);
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), -1);
	msi(&f, 1, 0x61);
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), 0x61);
	lapic_write(f.a[1], 0xb0, 0); /* EOI ends 0x61 */
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), -1);
	lapic_write(f.a[1], 0xb0, 0); /* EOI ends 0x41 */
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), 0x45);
	ck_assert_uint_eq(f.n_eoi, 0); /* edge: no broadcast */
	/* vectors below 16 are illegal: dropped, receive error */
	msi(&f, 1, 0x05);
	ck_assert(!lapic_has_interrupt(f.a[1]));
	lapic_write(f.a[1], 0x280, 0);
	ck_assert_uint_eq(lapic_read(f.a[1], 0x280), 0x40);
	apic_fini(&f);
}
END_TEST

START_TEST(level_eoi_broadcast)
{
	struct apic_fixture f;

	apic_init(&f, true);
	msi(&f, 0, 0xc039);					     /* level, assert */
	ck_assert_uint_eq(lapic_read(f.a[0], 0x180 + 16), 1u << 25); /* TMR */
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x39);
	lapic_write(f.a[0], 0xb0, 0);
	ck_assert_uint_eq(f.n_eoi, 1);
	ck_assert_int_eq(f.eoi[0], 0x39);
	/* the TMR keeps the trigger mode past the EOI (kvm-unit-tests
	 * ioapic.c "TMR for ioapic level interrupts (expected true)"); the
	 * next acceptance of the vector sets it again, edge or level */
	ck_assert_uint_eq(lapic_read(f.a[0], 0x180 + 16), 1u << 25);
	msi(&f, 0, 0x0039); /* edge */
	ck_assert_uint_eq(lapic_read(f.a[0], 0x180 + 16), 0);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x39);
	lapic_write(f.a[0], 0xb0, 0);
	ck_assert_uint_eq(f.n_eoi, 1); /* an edge EOI is not broadcast */
	/* a level de-assert message does nothing */
	msi(&f, 0, 0x8039);
	ck_assert(!lapic_has_interrupt(f.a[0]));
	/* suppressed EOI broadcast (SVR bit 12) */
	lapic_write(f.a[0], 0xf0, 0x11ff);
	msi(&f, 0, 0xc039);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x39);
	lapic_write(f.a[0], 0xb0, 0);
	ck_assert_uint_eq(f.n_eoi, 1);
	apic_fini(&f);
}
END_TEST

START_TEST(ipi_destinations)
{
	struct apic_fixture f;

	apic_init(&f, true);
	send_ipi(&f, 0, 1, 0x4050); /* fixed, physical 1 */
	ck_assert_int_eq(take(f.a[1]), 0x50);
	ck_assert(!lapic_has_interrupt(f.a[0]));
	ck_assert_uint_eq(lapic_read(f.a[0], 0x300) & (1u << 12), 0); /* idle */
	/* logical flat: LDR bits */
	lapic_write(f.a[0], 0xd0, 0x01000000);
	lapic_write(f.a[1], 0xd0, 0x02000000);
	send_ipi(&f, 1, 0x03, 0x4851);
	ck_assert_int_eq(take(f.a[0]), 0x51);
	ck_assert_int_eq(take(f.a[1]), 0x51);
	/* logical cluster: cluster 2, members 1 and 2 */
	lapic_write(f.a[0], 0xe0, 0x0fffffff);
	lapic_write(f.a[1], 0xe0, 0x0fffffff);
	lapic_write(f.a[0], 0xd0, 0x21000000);
	lapic_write(f.a[1], 0xd0, 0x31000000);
	send_ipi(&f, 0, 0x21, 0x4852);
	ck_assert_int_eq(take(f.a[0]), 0x52);
	ck_assert(!lapic_has_interrupt(f.a[1]));
	/* shorthands: self, all-including-self, all-excluding-self */
	send_ipi(&f, 1, 0, 0x44053);
	ck_assert_int_eq(take(f.a[1]), 0x53);
	ck_assert(!lapic_has_interrupt(f.a[0]));
	send_ipi(&f, 1, 0, 0x84054);
	ck_assert(lapic_has_interrupt(f.a[0]) && lapic_has_interrupt(f.a[1]));
	take(f.a[0]);
	take(f.a[1]);
	send_ipi(&f, 1, 0, 0xc4055);
	ck_assert(!lapic_has_interrupt(f.a[1]));
	ck_assert_int_eq(take(f.a[0]), 0x55);
	/* broadcast 0xff, physical */
	send_ipi(&f, 0, 0xff, 0x4070);
	ck_assert(lapic_has_interrupt(f.a[0]) && lapic_has_interrupt(f.a[1]));
	apic_fini(&f);
}
END_TEST

/* -smp sockets=2,cores=3 numbers its vCPUs 0,1,2,4,5,6: the APIC IDs
 * follow the list, IPIs and MSIs find vCPUs by them, x2APIC too. */
START_TEST(sparse_apic_ids)
{
	struct lapic_host h = {NULL, NULL, NULL, NULL, NULL, 2000000, NULL};
	const uint8_t ids[2] = {0, 4};
	struct apic_bus *bus = apic_bus_new(2, ids, &h);
	struct lapic *a0 = apic_bus_cpu(bus, 0), *a1 = apic_bus_cpu(bus, 1);
	uint64_t v;

	lapic_write(a0, 0xf0, 0x1ff);
	lapic_write(a1, 0xf0, 0x1ff);
	ck_assert_uint_eq(lapic_read(a1, 0x20), 4u << 24);
	lapic_write(a0, 0x310, 4u << 24);
	lapic_write(a0, 0x300, 0x4050);
	ck_assert_int_eq(take(a1), 0x50);
	lapic_write(a0, 0x310, 1u << 24); /* no vCPU has APIC ID 1 */
	lapic_write(a0, 0x300, 0x4051);
	ck_assert(!lapic_has_interrupt(a1) && !lapic_has_interrupt(a0));
	apic_bus_msi(bus, 0xfee00000ull | 4u << 12, 0x52);
	ck_assert_int_eq(take(a1), 0x52);
	lapic_set_base(a1, 0xfee00c00ull);
	ck_assert_int_eq(lapic_msr_read(a1, 0x802, &v), 0);
	ck_assert_uint_eq(v, 4);
	lapic_msr_read(a1, 0x80d, &v); /* LDR: cluster 0, bit 4 */
	ck_assert_uint_eq(v, 1u << 4);
	lapic_reset(a1);
	ck_assert_uint_eq(lapic_read(a1, 0x20), 4u << 24);
	apic_bus_free(bus);
}
END_TEST

START_TEST(ipi_lowest_priority_and_special_modes)
{
	struct apic_fixture f;
	uint8_t sipi;
	unsigned nmis;

	apic_init(&f, true);
	lapic_write(f.a[0], 0xd0, 0x01000000);
	lapic_write(f.a[1], 0xd0, 0x02000000);
	lapic_set_tpr(f.a[0], 0x20);
	send_ipi(&f, 0, 0x03, 0x4960); /* lowest priority, logical 0x03 */
	ck_assert(!lapic_has_interrupt(f.a[0]));
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), 0x60);
	lapic_set_tpr(f.a[1], 0x30);
	send_ipi(&f, 0, 0x03, 0x4961);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x61);
	/* a tie goes to the lowest APIC */
	lapic_set_tpr(f.a[0], 0x30);
	lapic_write(f.a[0], 0xb0, 0);
	send_ipi(&f, 1, 0x03, 0x4962);
	ck_assert(!lapic_has_interrupt(f.a[1]));
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x62);
	/* NMI, INIT, SIPI become events */
	send_ipi(&f, 0, 1, 0x4400);
	ck_assert_uint_eq(lapic_take_events(f.a[1], &sipi, &nmis), LAPIC_EV_NMI);
	ck_assert_uint_eq(nmis, 1);
	/* two NMIs before the vCPU looks: both reach it (apic.c "multiple
	 * nmi"); a third merges */
	for (unsigned i = 0; i < 3; i++)
		send_ipi(&f, 0, 1, 0x4400);
	ck_assert_uint_eq(lapic_take_events(f.a[1], &sipi, &nmis), LAPIC_EV_NMI);
	ck_assert_uint_eq(nmis, 2);
	/* an NMI, then a fixed IPI (apic.c "multiple nmi"): the interrupt
	 * waits until the vCPU has taken the NMI, which goes first */
	send_ipi(&f, 0, 1, 0x4400);
	send_ipi(&f, 0, 1, 0x4070);
	ck_assert(lapic_has_interrupt(f.a[1]));
	ck_assert_int_eq(lapic_get_interrupt(f.a[1]), -1);
	ck_assert_uint_eq(lapic_take_events(f.a[1], &sipi, &nmis), LAPIC_EV_NMI);
	ck_assert_uint_eq(nmis, 1);
	ck_assert_int_eq(take(f.a[1]), 0x70);
	send_ipi(&f, 0, 1, 0x8500); /* INIT level de-assert: ignored */
	ck_assert(!lapic_events_pending(f.a[1]));
	send_ipi(&f, 0, 1, 0x4500);
	send_ipi(&f, 0, 1, 0x4608);
	ck_assert_uint_eq(lapic_take_events(f.a[1], &sipi, &nmis), LAPIC_EV_INIT | LAPIC_EV_SIPI);
	ck_assert_uint_eq(sipi, 0x08);
	ck_assert_uint_eq(nmis, 0);
	ck_assert_uint_eq(lapic_take_events(f.a[1], &sipi, &nmis), 0);
	/* a fixed IPI with an illegal vector: send error on the sender */
	send_ipi(&f, 0, 1, 0x4007);
	ck_assert(!lapic_has_interrupt(f.a[1]) || lapic_get_interrupt(f.a[1]) != 7);
	lapic_write(f.a[0], 0x280, 0);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x280), 0x20);
	apic_fini(&f);
}
END_TEST

START_TEST(error_register_and_lvt)
{
	struct apic_fixture f;

	apic_init(&f, true);
	lapic_write(f.a[0], 0x370, 0xfe); /* error LVT: vector 0xfe */
	lapic_write(f.a[0], 0x3a0, 1);	  /* no register there */
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0xfe);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x280), 0); /* until the ESR write */
	lapic_write(f.a[0], 0x280, 0);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x280), 0x80);
	lapic_write(f.a[0], 0x280, 0);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x280), 0);
	/* LINT1 as NMI, LINT0 as fixed vector; masked LINT does nothing */
	lapic_write(f.a[1], 0x360, 0x400);
	lapic_set_lint(f.a[1], 1, true);
	ck_assert(lapic_events_pending(f.a[1]));
	lapic_write(f.a[1], 0x350, 0x10031);
	lapic_set_lint(f.a[1], 0, true);
	ck_assert(!lapic_has_interrupt(f.a[1]));
	/* disabling the APIC masks every LVT */
	lapic_write(f.a[1], 0xf0, 0xff);
	ck_assert_uint_eq(lapic_read(f.a[1], 0x360), 0x10400);
	apic_fini(&f);
}
END_TEST

START_TEST(timer_oneshot_and_periodic)
{
	struct apic_fixture f;
	uint64_t first;

	apic_init(&f, true);
	lapic_write(f.a[0], 0x3e0, 0xb);     /* divide by 1 */
	lapic_write(f.a[0], 0x320, 0x00030); /* one-shot, vector 0x30 */
	lapic_write(f.a[0], 0x380, 100000);  /* 100 us at 1 GHz */
	ck_assert_uint_eq(f.deadline[0], f.now + 100000);
	f.now += 40000;
	ck_assert_uint_eq(lapic_read(f.a[0], 0x390), 60000);
	lapic_timer_expired(f.a[0]); /* early: re-armed, nothing delivered */
	ck_assert(!lapic_has_interrupt(f.a[0]));
	f.now += 60000;
	lapic_timer_expired(f.a[0]);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x30);
	ck_assert_uint_eq(f.deadline[0], UINT64_MAX);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x390), 0);
	lapic_write(f.a[0], 0xb0, 0);
	/* divide by 16 */
	lapic_write(f.a[0], 0x3e0, 0x3);
	lapic_write(f.a[0], 0x380, 1000);
	ck_assert_uint_eq(f.deadline[0], f.now + 16000);
	/* periodic, 1 ms: one interrupt per period, missed ones coalesce */
	lapic_write(f.a[0], 0x3e0, 0xb);
	lapic_write(f.a[0], 0x320, 0x20031);
	lapic_write(f.a[0], 0x380, 1000000);
	first = f.now = f.deadline[0];
	lapic_timer_expired(f.a[0]);
	ck_assert_uint_eq(f.deadline[0], first + 1000000);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x31);
	lapic_write(f.a[0], 0xb0, 0);
	f.now += 5500000;
	lapic_timer_expired(f.a[0]);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x31);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), -1);
	ck_assert_uint_eq(lapic_read(f.a[0], 0x390), 500000);
	ck_assert_uint_eq(f.deadline[0], first + 6000000);
	/* a period of one tick is rate-limited to 50 us */
	lapic_write(f.a[0], 0x380, 1);
	ck_assert_uint_eq(f.deadline[0], f.now + 50000);
	/* writing 0 stops it */
	lapic_write(f.a[0], 0x380, 0);
	ck_assert_uint_eq(f.deadline[0], UINT64_MAX);
	apic_fini(&f);
}
END_TEST

START_TEST(timer_tsc_deadline)
{
	struct apic_fixture f;
	uint64_t v;

	apic_init(&f, true);
	/* the MSR is ignored outside TSC-deadline mode */
	ck_assert_int_eq(lapic_msr_write(f.a[0], 0x6e0, f.tsc + 1000), 0);
	ck_assert_int_eq(lapic_msr_read(f.a[0], 0x6e0, &v), 0);
	ck_assert_uint_eq(v, 0);
	lapic_write(f.a[0], 0x320, 0x40032);
	lapic_write(f.a[0], 0x380, 5); /* TMICT is ignored in this mode */
	ck_assert_uint_eq(lapic_read(f.a[0], 0x380), 0);
	lapic_msr_write(f.a[0], 0x6e0, f.tsc + 2000000); /* 1 ms at 2 GHz */
	ck_assert_uint_eq(f.deadline[0], f.now + 1000000);
	lapic_msr_read(f.a[0], 0x6e0, &v);
	ck_assert_uint_eq(v, f.tsc + 2000000);
	f.now += 1000000;
	lapic_timer_expired(f.a[0]);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x32);
	lapic_msr_read(f.a[0], 0x6e0, &v);
	ck_assert_uint_eq(v, 0);
	/* a deadline in the past (or now) fires during the WRMSR, without
	 * waiting for the host timer, and reads back 0; 0 disarms */
	ck_assert(!lapic_has_interrupt(f.a[0]));
	lapic_write(f.a[0], 0xb0, 0);
	lapic_msr_write(f.a[0], 0x6e0, f.tsc);
	ck_assert_uint_eq(f.deadline[0], UINT64_MAX);
	ck_assert_int_eq(lapic_get_interrupt(f.a[0]), 0x32);
	lapic_write(f.a[0], 0xb0, 0);
	lapic_msr_read(f.a[0], 0x6e0, &v);
	ck_assert_uint_eq(v, 0);
	lapic_msr_write(f.a[0], 0x6e0, 0);
	ck_assert_uint_eq(f.deadline[0], UINT64_MAX);
	/* leaving the mode disarms */
	lapic_msr_write(f.a[0], 0x6e0, f.tsc + 10);
	lapic_write(f.a[0], 0x320, 0x00032);
	ck_assert_uint_eq(f.deadline[0], UINT64_MAX);
	apic_fini(&f);
}
END_TEST

START_TEST(x2apic_msrs)
{
	struct apic_fixture f;
	uint64_t v;

	apic_init(&f, true);
	/* xAPIC mode: the x2APIC MSRs #GP */
	ck_assert_int_eq(lapic_msr_read(f.a[1], 0x802, &v), -1);
	lapic_set_base(f.a[0], 0xfee00d00ull);
	lapic_set_base(f.a[1], 0xfee00c00ull);
	ck_assert_int_eq(lapic_msr_read(f.a[1], 0x802, &v), 0);
	ck_assert_uint_eq(v, 1);
	lapic_msr_read(f.a[1], 0x80d, &v); /* LDR: cluster 0, bit 1 */
	ck_assert_uint_eq(v, 0x2);
	ck_assert_int_eq(lapic_msr_read(f.a[1], 0x80e, &v), -1); /* no DFR */
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x80d, 5), -1); /* LDR read-only */
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x802, 5), -1); /* ID read-only */
	ck_assert_int_eq(lapic_msr_read(f.a[1], 0x80b, &v), -1); /* EOI write-only */
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x808, 1ull << 32), -1);
	/* ICR is one 64-bit MSR: fixed IPI to x2APIC ID 1 */
	ck_assert_int_eq(lapic_msr_write(f.a[0], 0x830, 1ull << 32 | 0x4066), 0);
	ck_assert_int_eq(take(f.a[1]), 0x66);
	lapic_msr_read(f.a[0], 0x830, &v);
	ck_assert_uint_eq(v, 1ull << 32 | 0x4066);
	/* logical x2APIC: cluster 0, member bits 0 and 1 */
	lapic_msr_write(f.a[1], 0x830, 3ull << 32 | 0x4867);
	ck_assert_int_eq(take(f.a[0]), 0x67);
	ck_assert_int_eq(take(f.a[1]), 0x67);
	/* self IPI */
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x83f, 0x68), 0);
	ck_assert_int_eq(take(f.a[1]), 0x68);
	/* TPR and EOI through MSRs */
	lapic_msr_write(f.a[1], 0x808, 0x70);
	ck_assert_uint_eq(lapic_get_tpr(f.a[1]), 0x70);
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x80b, 0), 0);
	ck_assert_int_eq(lapic_msr_write(f.a[1], 0x80b, 1), -1);
	apic_fini(&f);
}
END_TEST

START_TEST(mmio_page_and_info)
{
	struct apic_fixture f;
	struct iobus *mmio = iobus_new("mmio");
	uint32_t v = 0;
	uint8_t page[LAPIC_PAGE_SIZE];
	char buf[2048];
	size_t n;

	apic_init(&f, true);
	ck_assert_int_eq(apic_bus_map(f.bus, mmio), 0);
	lapic_set_thread_cpu(1);
	iobus_read(mmio, 0xfee00020, &v, 4);
	ck_assert_uint_eq(v, 1u << 24);
	v = 0x20;
	iobus_write(mmio, 0xfee00080, &v, 4);
	ck_assert_uint_eq(lapic_get_tpr(f.a[1]), 0x20);
	ck_assert_uint_eq(lapic_get_tpr(f.a[0]), 0);
	lapic_set_thread_cpu(-1);
	msi(&f, 1, 0xc045);
	lapic_copy_page(f.a[1], page);
	n = lapic_format(page, 1, false, buf, sizeof(buf));
	ck_assert_uint_lt(n, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "dumping local APIC state for CPU 1 \n\n"));
	ck_assert_ptr_nonnull(strstr(buf, "LVT0\t 0x00010000 active-hi edge  masked"));
	ck_assert_ptr_nonnull(strstr(buf, "SPIV\t 0x000001ff APIC enabled, focus=off, spurious "
					  "vec 255\n"));
	ck_assert_ptr_nonnull(strstr(buf, "IRR\t69(level) \n"));
	ck_assert_ptr_nonnull(strstr(buf, "ISR\t(none)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "TPR 0x20"));
	ck_assert_uint_eq(lapic_format(page, 1, false, buf, 10), n);
	apic_fini(&f);
	iobus_free(mmio);
}
END_TEST

static uint32_t mmio_read32(struct iobus *mmio, unsigned cpu, uint64_t addr)
{
	uint32_t v = 0;

	lapic_set_thread_cpu((int)cpu);
	iobus_read(mmio, addr, &v, 4);
	lapic_set_thread_cpu(-1);
	return v;
}

static void mmio_write32(struct iobus *mmio, unsigned cpu, uint64_t addr, uint32_t v)
{
	lapic_set_thread_cpu((int)cpu);
	iobus_write(mmio, addr, &v, 4);
	lapic_set_thread_cpu(-1);
}

/* IA32_APIC_BASE moves one vCPU's page (kvm-unit-tests apic.c
 * test_apicbase): its APIC answers there, the others and the old page
 * answer all-ones; moving back unmaps the new page. */
START_TEST(base_relocation)
{
	struct apic_fixture f;
	struct iobus *mmio = iobus_new("mmio");
	uint32_t ver, v;

	iobus_set_miss_log(mmio, false);
	apic_init(&f, true);
	ck_assert_int_eq(apic_bus_map(f.bus, mmio), 0);
	ver = mmio_read32(mmio, 1, 0xfee00030);
	ck_assert_uint_eq(ver & 0xff, 0x14);
	lapic_set_base(f.a[1], 0xfed40000ull | 1u << 11);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfed40030), ver);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00030), 0xffffffff);
	ck_assert_uint_eq(mmio_read32(mmio, 0, 0xfee00030), ver);
	ck_assert_uint_eq(mmio_read32(mmio, 0, 0xfed40030), 0xffffffff);
	mmio_write32(mmio, 1, 0xfed40080, 0x30);
	ck_assert_uint_eq(lapic_get_tpr(f.a[1]), 0x30);
	mmio_write32(mmio, 1, 0xfee00080, 0x50); /* not its page any more */
	ck_assert_uint_eq(lapic_get_tpr(f.a[1]), 0x30);
	ck_assert_uint_eq(lapic_get_tpr(f.a[0]), 0);
	lapic_set_base(f.a[1], LAPIC_DEFAULT_BASE | 1u << 11);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00030), ver);
	ck_assert(!iobus_read(mmio, 0xfed40030, &v, 4));
	/* a system reset puts the page back too */
	lapic_set_base(f.a[0], 0xfed80000ull | 1u << 11 | 1u << 8);
	ck_assert_uint_eq(mmio_read32(mmio, 0, 0xfed80030), ver);
	lapic_reset(f.a[0]);
	ck_assert(!iobus_read(mmio, 0xfed80030, &v, 4));
	ck_assert_uint_eq(mmio_read32(mmio, 0, 0xfee00030), ver);
	apic_fini(&f);
	iobus_free(mmio);
}
END_TEST

/* A hardware-disabled or x2APIC-mode APIC does not decode its page: reads
 * all-ones, writes ignored (kvm-unit-tests apic.c test_apic_disable);
 * re-enabling restores the initial xAPIC ID (as KVM). */
START_TEST(disabled_page_and_reenable)
{
	struct apic_fixture f;
	struct iobus *mmio = iobus_new("mmio");

	apic_init(&f, true);
	ck_assert_int_eq(apic_bus_map(f.bus, mmio), 0);
	mmio_write32(mmio, 1, 0xfee00020, 7u << 24);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00020), 7u << 24);
	lapic_set_base(f.a[1], LAPIC_DEFAULT_BASE);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00030), 0xffffffff);
	mmio_write32(mmio, 1, 0xfee00080, 0x40);
	ck_assert_uint_eq(lapic_get_tpr(f.a[1]), 0);
	lapic_set_base(f.a[1], LAPIC_DEFAULT_BASE | 1u << 11);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00020), 1u << 24);
	lapic_set_base(f.a[1], LAPIC_DEFAULT_BASE | 3u << 10);
	ck_assert_uint_eq(mmio_read32(mmio, 1, 0xfee00030), 0xffffffff);
	ck_assert_uint_eq(mmio_read32(mmio, 0, 0xfee00020), 0);
	apic_fini(&f);
	iobus_free(mmio);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lapic");
	TCase *tc = tcase_create("lapic");

	tcase_add_test(tc, reset_state);
	tcase_add_test(tc, priorities_and_eoi);
	tcase_add_test(tc, level_eoi_broadcast);
	tcase_add_test(tc, ipi_destinations);
	tcase_add_test(tc, ipi_lowest_priority_and_special_modes);
	tcase_add_test(tc, error_register_and_lvt);
	tcase_add_test(tc, timer_oneshot_and_periodic);
	tcase_add_test(tc, timer_tsc_deadline);
	tcase_add_test(tc, x2apic_msrs);
	tcase_add_test(tc, mmio_page_and_info);
	tcase_add_test(tc, base_relocation);
	tcase_add_test(tc, disabled_page_and_reenable);
	tcase_add_test(tc, sparse_apic_ids);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
