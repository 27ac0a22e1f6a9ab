/* Unit tests for the snapshots of vmm's own timer and interrupt models
 * (kernel_irqchip=split|off): the 8254 PIT and the local APIC, each on a
 * fake clock. A busy device is saved, loaded into a fresh one whose clock
 * reads something else entirely (later, and earlier than the counts have
 * run), and from then on both must read and interrupt alike, relative to
 * their own clocks. Then hostile values patched into a valid tree are
 * refused with one line and the device left as it was. */
#include <check.h>
#include <libfdt.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/intc/lapic.h"
#include "devices/timer/i8254.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define NO_DEADLINE UINT64_MAX

/* ---- 8254 PIT ---- */

struct pit {
	struct fake_host t;
	struct i8254 *dev;
	uint64_t now, deadline;
};

static uint64_t pit_now(void *opaque)
{
	return ((struct pit *)opaque)->now;
}

static void pit_arm(void *opaque, uint64_t deadline)
{
	((struct pit *)opaque)->deadline = deadline;
}

static void pit_init(struct pit *p, uint64_t now)
{
	struct i8254_clock clk = {pit_now, pit_arm, p};

	memset(p, 0, sizeof(*p));
	test_host_init(&p->t);
	p->now = now;
	p->dev = i8254_new(&p->t.host, &clk);
	ck_assert_ptr_nonnull(p->dev);
}

static void pit_fini(struct pit *p)
{
	i8254_free(p->dev);
	test_host_fini(&p->t);
}

static void pit_save_fn(void *dev, struct state_writer *w)
{
	i8254_save(dev, w);
}

static int pit_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return i8254_load(dev, r, e, elen);
}

/* Channel 0 periodic (mode 2, count 5000), channel 1 one-shot (mode 0)
 * with a latched count half read, channel 2 square wave gated on by port
 * B, then 1.234 ms of counting. */
static void pit_busy(struct pit *p)
{
	pio_out(&p->t, 0x43, 1, 0x34);
	pio_out(&p->t, 0x40, 1, 5000 & 0xff);
	pio_out(&p->t, 0x40, 1, 5000 >> 8);
	pio_out(&p->t, 0x43, 1, 0x70);
	pio_out(&p->t, 0x41, 1, 0x00);
	pio_out(&p->t, 0x41, 1, 0x80);
	pio_out(&p->t, 0x61, 1, 0x01);
	pio_out(&p->t, 0x43, 1, 0xb6);
	pio_out(&p->t, 0x42, 1, 100);
	pio_out(&p->t, 0x42, 1, 0);
	p->now += 1234000;
	pio_out(&p->t, 0x43, 1, 0x40); /* latch channel 1 */
	pio_in(&p->t, 0x41, 1);	       /* its low byte; the high one waits */
}

/* Both PITs' ports and IRQ 0 deadlines, each against its own clock. */
static void pit_same(struct pit *a, struct pit *b)
{
	for (uint16_t port = 0x40; port <= 0x42; port++)
		for (unsigned i = 0; i < 2; i++)
			ck_assert_uint_eq(pio_in(&a->t, port, 1), pio_in(&b->t, port, 1));
	ck_assert_uint_eq(pio_in(&a->t, 0x61, 1) & 0x2f, pio_in(&b->t, 0x61, 1) & 0x2f);
	ck_assert_uint_eq(a->deadline - a->now, b->deadline - b->now);
	ck_assert_int_eq(a->t.level[0], b->t.level[0]);
}

static void pit_round_trip_at(uint64_t dest_now)
{
	struct pit a, b;
	size_t len;
	void *blob;

	pit_init(&a, 7000000000ull);
	pit_init(&b, dest_now);
	pit_busy(&a);
	blob = save_tree(pit_save_fn, a.dev, &len);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, blob, len), 0);
	/* the half-read latch comes first: its high byte */
	ck_assert_uint_eq(pio_in(&a.t, 0x41, 1), pio_in(&b.t, 0x41, 1));
	pit_same(&a, &b);
	for (unsigned step = 0; step < 40; step++) {
		uint64_t d = 333333 + step * 17;

		a.now += d;
		b.now += d;
		if (a.deadline <= a.now) {
			ck_assert_uint_le(b.deadline, b.now);
			i8254_timer(a.dev);
			i8254_timer(b.dev);
		}
		pit_same(&a, &b);
	}
	free(blob);
	pit_fini(&a);
	pit_fini(&b);
}

START_TEST(pit_round_trip)
{
	pit_round_trip_at(90000000000ull); /* a later clock */
}
END_TEST

/* The destination's clock reads less than the counts have run (a host
 * booted a moment ago): the loaded counts must still be where they were. */
START_TEST(pit_round_trip_young_clock)
{
	pit_round_trip_at(1000);
}
END_TEST

START_TEST(pit_bad_trees)
{
	const char *ch0 = "/devices/pit@40/channel@0";
	fdt64_t huge = cpu_to_fdt64(1ull << 62);
	struct pit a, b;
	uint8_t *blob, *bad;
	uint32_t before;
	size_t len;

	pit_init(&a, 7000000000ull);
	pit_init(&b, 5000000000ull);
	pit_busy(&a);
	pio_out(&b.t, 0x43, 1, 0x34); /* b counts something of its own */
	pio_out(&b.t, 0x40, 1, 0x10);
	pio_out(&b.t, 0x40, 1, 0x27);
	b.now += 1000000;
	pio_out(&b.t, 0x43, 1, 0x00);
	before = pio_in(&b.t, 0x40, 1) | pio_in(&b.t, 0x40, 1) << 8;
	blob = save_tree(pit_save_fn, a.dev, &len);
	bad = malloc(len);
	memcpy(bad, blob, len);
	patch_u32(bad, ch0, "count", 0);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/pit@40/channel@0: count 0 is not a loadable count");
	memcpy(bad, blob, len);
	patch_u8(bad, ch0, "mode", 6);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "'mode' is 6, at most 5"));
	memcpy(bad, blob, len);
	patch_u8(bad, ch0, "access", 0);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "latch command"));
	memcpy(bad, blob, len);
	patch(bad, "/devices/pit@40/channel@2", "elapsed-ns", &huge, 8);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "out of range"));
	memcpy(bad, blob, len);
	patch_u8(bad, "/devices/pit@40", "port-b", 0x10);
	ck_assert_int_eq(load_tree(pit_load_fn, b.dev, bad, len), -1);
	/* nothing of it reached b */
	pio_out(&b.t, 0x43, 1, 0x00);
	ck_assert_uint_eq(pio_in(&b.t, 0x40, 1) | pio_in(&b.t, 0x40, 1) << 8, before);
	free(bad);
	free(blob);
	pit_fini(&a);
	pit_fini(&b);
}
END_TEST

/* ---- local APIC ---- */

struct apics {
	struct apic_bus *bus;
	uint64_t now, tsc;
	uint64_t deadline[2];
	unsigned kicks[2];
};

static void f_kick(void *opaque, unsigned cpu)
{
	((struct apics *)opaque)->kicks[cpu]++;
}

static void f_eoi(void *opaque, uint8_t vector)
{
	(void)opaque;
	(void)vector;
}

static uint64_t f_now(void *opaque)
{
	return ((struct apics *)opaque)->now;
}

static void f_arm(void *opaque, unsigned cpu, uint64_t deadline)
{
	((struct apics *)opaque)->deadline[cpu] = deadline;
}

static uint64_t f_tsc(void *opaque)
{
	return ((struct apics *)opaque)->tsc;
}

static struct lapic *apics_init(struct apics *f, uint64_t now, uint64_t tsc)
{
	struct lapic_host h = {f_kick, f_eoi, f_now, f_arm, f_tsc, 2000000 /* 2 GHz */, f};

	memset(f, 0, sizeof(*f));
	f->now = now;
	f->tsc = tsc;
	f->bus = apic_bus_new(2, NULL, &h);
	ck_assert_ptr_nonnull(f->bus);
	return apic_bus_cpu(f->bus, 1);
}

static void apic_save_fn(void *dev, struct state_writer *w)
{
	lapic_save(dev, w);
}

static int apic_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return lapic_load(dev, r, e, elen);
}

/* The AP's APIC: enabled, relocated, a TPR, a vector in service and two
 * waiting (one blocked by the TPR), a pending NMI and SIPI, the error
 * LVT and a periodic timer at divisor 4 that has run for a while. */
static void apic_busy(struct apics *f, struct lapic *a)
{
	lapic_set_base(a, 0xfed00000ull | 1u << 11);
	lapic_write(a, 0xf0, 0x1ff);
	lapic_write(a, 0x80, 0x40);
	apic_bus_msi(f->bus, 0xfee01000ull, 0x71);
	ck_assert_int_eq(lapic_get_interrupt(a), 0x71);
	apic_bus_msi(f->bus, 0xfee01000ull, 0x91);
	apic_bus_msi(f->bus, 0xfee01000ull, 0x32);
	apic_bus_msi(f->bus, 0xfee01000ull, 0x400); /* NMI */
	apic_bus_msi(f->bus, 0xfee01000ull, 0x69e); /* SIPI, vector 0x9e */
	lapic_write(a, 0x370, 0xfe);
	lapic_write(a, 0x3e0, 0x1);
	lapic_write(a, 0x320, 0x20000 | 0xec);
	lapic_write(a, 0x380, 1000000);
	f->now += 12345678;
}

/* How long until the armed timer fires (0: overdue), or NO_DEADLINE. */
static uint64_t apic_due(const struct apics *f)
{
	if (f->deadline[1] == NO_DEADLINE)
		return NO_DEADLINE;
	return f->deadline[1] > f->now ? f->deadline[1] - f->now : 0;
}

static void apic_same(struct apics *fa, struct lapic *a, struct apics *fb, struct lapic *b)
{
	for (unsigned off = 0x20; off < 0x400; off += 0x10)
		ck_assert_msg(lapic_read(a, off) == lapic_read(b, off), "register %#x: %#x vs %#x",
			      off, lapic_read(a, off), lapic_read(b, off));
	ck_assert_uint_eq(lapic_get_base(a), lapic_get_base(b));
	ck_assert_uint_eq(apic_due(fa), apic_due(fb));
	ck_assert_int_eq(lapic_has_interrupt(a), lapic_has_interrupt(b));
}

START_TEST(apic_round_trip)
{
	struct apics fa, fb;
	struct lapic *a = apics_init(&fa, 9000000000ull, 1ull << 40);
	struct lapic *b = apics_init(&fb, 3000, 7);
	uint8_t sa = 0, sb = 0;
	unsigned na = 0, nb = 0;
	size_t len;
	void *blob;

	apic_busy(&fa, a);
	blob = save_tree(apic_save_fn, a, &len);
	ck_assert_int_eq(load_tree(apic_load_fn, b, blob, len), 0);
	ck_assert_uint_gt(fb.kicks[1], 0); /* events wait: the vCPU must look */
	apic_same(&fa, a, &fb, b);
	ck_assert_uint_eq(lapic_take_events(a, &sa, &na), lapic_take_events(b, &sb, &nb));
	ck_assert_uint_eq(sa, 0x9e);
	ck_assert_uint_eq(sb, sa);
	ck_assert_uint_eq(nb, na);
	for (unsigned round = 0; round < 6; round++) {
		fa.now += apic_due(&fa); /* an overdue timer fires now */
		fb.now += apic_due(&fb);
		lapic_timer_expired(a);
		lapic_timer_expired(b);
		apic_same(&fa, a, &fb, b);
		ck_assert_int_eq(lapic_get_interrupt(a), lapic_get_interrupt(b));
		lapic_write(a, 0xb0, 0);
		lapic_write(b, 0xb0, 0);
		lapic_write(a, 0x80, 0x10 * round);
		lapic_write(b, 0x80, 0x10 * round);
		apic_same(&fa, a, &fb, b);
	}
	free(blob);
	apic_bus_free(fa.bus);
	apic_bus_free(fb.bus);
}
END_TEST

/* A TSC-deadline timer is a point on the guest's TSC, which migrates with
 * the vCPU: the destination arms it for when its TSC gets there. */
START_TEST(apic_tsc_deadline)
{
	struct apics fa, fb;
	struct lapic *a = apics_init(&fa, 9000000000ull, 1ull << 40);
	struct lapic *b = apics_init(&fb, 3000, (1ull << 40) + 1000);
	size_t len;
	void *blob;

	lapic_write(a, 0xf0, 0x1ff);
	lapic_write(a, 0x320, 0x40000 | 0xd0);
	ck_assert_int_eq(lapic_msr_write(a, LAPIC_MSR_TSC_DEADLINE, (1ull << 40) + 2000000), 0);
	ck_assert_uint_eq(fa.deadline[1], fa.now + 1000000);
	blob = save_tree(apic_save_fn, a, &len);
	ck_assert_int_eq(load_tree(apic_load_fn, b, blob, len), 0);
	/* b's TSC is 1000 cycles (500 ns) nearer the deadline */
	ck_assert_uint_eq(fb.deadline[1], fb.now + 999500);
	fb.now = fb.deadline[1];
	fb.tsc = (1ull << 40) + 2000000;
	lapic_timer_expired(b);
	ck_assert_int_eq(lapic_get_interrupt(b), 0xd0);
	free(blob);
	apic_bus_free(fa.bus);
	apic_bus_free(fb.bus);
}
END_TEST

START_TEST(apic_bad_trees)
{
	const char *node = "/devices/lapic@1";
	fdt64_t base = cpu_to_fdt64(0xfee00000ull | 1u << 11 | 1u << 8); /* BSP on an AP */
	fdt64_t tiny = cpu_to_fdt64(10);
	struct apics fa, fb;
	struct lapic *a = apics_init(&fa, 9000000000ull, 1ull << 40);
	struct lapic *b = apics_init(&fb, 3000, 7);
	uint8_t *blob, *bad;
	size_t len;

	apic_busy(&fa, a);
	lapic_write(b, 0xf0, 0x1aa);
	blob = save_tree(apic_save_fn, a, &len);
	bad = malloc(len);
	memcpy(bad, blob, len);
	patch_u32(bad, node, "apic-id", 0);
	ck_assert_int_eq(load_tree(apic_load_fn, b, bad, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/lapic@1: initial APIC ID 0, this vCPU's is 1");
	memcpy(bad, blob, len);
	patch(bad, node, "base", &base, 8);
	ck_assert_int_eq(load_tree(apic_load_fn, b, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "APIC base"));
	memcpy(bad, blob, len);
	patch_u8(bad, node, "events", 0x10);
	ck_assert_int_eq(load_tree(apic_load_fn, b, bad, len), -1);
	memcpy(bad, blob, len);
	patch_u8(bad, node, "nmis", 3);
	ck_assert_int_eq(load_tree(apic_load_fn, b, bad, len), -1);
	memcpy(bad, blob, len);
	patch(bad, node, "timer-period-ns", &tiny, 8);
	ck_assert_int_eq(load_tree(apic_load_fn, b, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "periodic timer of 10 ns"));
	/* b is as it was */
	ck_assert_uint_eq(lapic_read(b, 0xf0), 0x1aa);
	ck_assert_uint_eq(lapic_get_base(b), 0xfee00000ull | 1u << 11);
	ck_assert_uint_eq(fb.kicks[1], 0);
	free(bad);
	free(blob);
	apic_bus_free(fa.bus);
	apic_bus_free(fb.bus);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("irqstate");
	TCase *tc = tcase_create("irqstate");

	tcase_add_test(tc, pit_round_trip);
	tcase_add_test(tc, pit_round_trip_young_clock);
	tcase_add_test(tc, pit_bad_trees);
	tcase_add_test(tc, apic_round_trip);
	tcase_add_test(tc, apic_tsc_deadline);
	tcase_add_test(tc, apic_bad_trees);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
