/* Unit tests for the devices' snapshot hooks (state/state.h): a UART, the
 * RTC and the PIC pair are driven through their ports into a busy state,
 * saved, loaded into fresh devices on a second fake host, and then every
 * port read (with its side effects: FIFO pops, acknowledges, polls) and
 * every interrupt line must match between the two. Then the error cases:
 * a missing node, a newer version, and values the device could never hold
 * (patched into a valid tree with libfdt) are refused with the device
 * left as it was. */
#include <check.h>
#include <libfdt.h>
#include <stdio.h>
#include <time.h>

#include "devices/dev_host.h"
#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "devices/isa/serial.h"
#include "devices/timer/rtc.h"
#include "state/state.h"
#include "tests/unit/devices/state_tree.h"
#include "tests/unit/devices/pc_host.h"

/* Both hosts' port reads, compared; returns the value. */
static uint32_t same_in(struct fake_host *a, struct fake_host *b, uint16_t port)
{
	uint32_t va = pio_in(a, port, 1), vb = pio_in(b, port, 1);

	ck_assert_msg(va == vb, "port %#x: saved device reads %#x, loaded one %#x", port, va, vb);
	return va;
}

static void both_out(struct fake_host *a, struct fake_host *b, uint16_t port, uint8_t v)
{
	pio_out(a, port, 1, v);
	pio_out(b, port, 1, v);
}

static void same_lines(struct fake_host *a, struct fake_host *b)
{
	for (unsigned gsi = 0; gsi < FAKE_HOST_GSIS; gsi++)
		ck_assert_msg(a->level[gsi] == b->level[gsi], "GSI %u: %d vs %d", gsi,
			      a->level[gsi], b->level[gsi]);
}

/* ---- 16550A ---- */

static void serial_save_fn(void *dev, struct state_writer *w)
{
	serial_save(dev, w);
}

static int serial_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return serial_load(dev, r, e, elen);
}

static struct serial *uart(struct fake_host *t)
{
	struct serial *s;

	test_host_init(t);
	s = serial_new(&t->host, SERIAL_COM1_BASE, SERIAL_COM1_IRQ, NULL);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* Divisor, FIFO at trigger 14, all interrupts, a wrapped receive FIFO
 * filled to overrun by loopback, a modem-status delta, the scratch byte. */
static void uart_busy(struct fake_host *t, struct serial *s)
{
	const uint8_t in[12] = "abcdefghijkl";
	const uint16_t base = SERIAL_COM1_BASE;

	pio_out(t, base + 3, 1, 0x83);
	pio_out(t, base + 0, 1, 0x03);
	pio_out(t, base + 1, 1, 0x02);
	pio_out(t, base + 3, 1, 0x1b);
	pio_out(t, base + 2, 1, 0xc1);
	pio_out(t, base + 1, 1, 0x0f);
	ck_assert_uint_eq(serial_receive(s, in, sizeof(in)), sizeof(in));
	for (unsigned i = 0; i < 7; i++)
		pio_in(t, base, 1);
	ck_assert_uint_eq(serial_receive(s, in, 9), 9); /* wraps */
	pio_out(t, base + 7, 1, 0x5a);
	pio_out(t, base + 4, 1, 0x13); /* loopback, DCD drops: a delta */
	pio_out(t, base, 1, 'x');
	pio_out(t, base, 1, 'y');
	pio_out(t, base, 1, 'z'); /* overrun */
}

START_TEST(serial_round_trip)
{
	struct fake_host a, b;
	struct serial *sa = uart(&a), *sb = uart(&b);
	const uint16_t base = SERIAL_COM1_BASE;
	size_t len;
	void *blob;

	uart_busy(&a, sa);
	ck_assert(a.level[SERIAL_COM1_IRQ]);
	blob = save_tree(serial_save_fn, sa, &len);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, blob, len), 0);
	same_lines(&a, &b);
	/* every register, round after round: pops, acknowledges, clears */
	for (unsigned round = 0; round < 20; round++) {
		for (uint16_t reg = 0; reg < 8; reg++) {
			same_in(&a, &b, base + reg);
			same_lines(&a, &b);
		}
	}
	/* the divisor latch */
	both_out(&a, &b, base + 3, 0x9b);
	same_in(&a, &b, base);
	same_in(&a, &b, base + 1);
	both_out(&a, &b, base + 3, 0x1b);
	/* the FIFO mode survived: 17 loopback bytes overrun again */
	for (unsigned i = 0; i < 17; i++)
		both_out(&a, &b, base, (uint8_t)i);
	for (unsigned round = 0; round < 18; round++)
		for (uint16_t reg = 0; reg < 8; reg++)
			same_in(&a, &b, base + reg);
	same_lines(&a, &b);
	free(blob);
	serial_free(sa);
	serial_free(sb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

START_TEST(serial_bad_trees)
{
	struct fake_host a, b;
	struct serial *sa = uart(&a), *sb = uart(&b);
	const char *node = "/devices/serial@3f8";
	size_t len;
	uint8_t *blob, *bad;

	uart_busy(&a, sa);
	blob = save_tree(serial_save_fn, sa, &len);
	bad = malloc(len);
	pio_out(&b, SERIAL_COM1_BASE + 7, 1, 0x33);
	/* each bad tree is refused and leaves the UART as it was */
	memcpy(bad, blob, len);
	patch_u32(bad, node, "rx-count", 17);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/serial@3f8: property 'rx-count' is 17, at most 16");
	memcpy(bad, blob, len);
	patch_u32(bad, node, "rx-head", 16);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	memcpy(bad, blob, len);
	patch_u8(bad, node, "fcr", 0xc3);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/serial@3f8: fcr 0xc3 has bits the FCR never keeps");
	memcpy(bad, blob, len);
	patch_u8(bad, node, "fcr", 0x00); /* FIFO off: 16 bytes cannot fit */
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/serial@3f8: 16 bytes in a receive FIFO of 1");
	memcpy(bad, blob, len);
	patch_u8(bad, node, "lsr", 0x60);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	memcpy(bad, blob, len);
	patch_u8(bad, node, "thr-ipending", 2);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	memcpy(bad, blob, len);
	patch_u32(bad, node, "version", 2);
	ck_assert_int_eq(load_tree(serial_load_fn, sb, bad, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/serial@3f8: version 2 is newer than the 1 this vmm knows");
	ck_assert_uint_eq(pio_in(&b, SERIAL_COM1_BASE + 7, 1), 0x33);
	ck_assert_uint_eq(pio_in(&b, SERIAL_COM1_BASE + 5, 1), 0x60);
	ck_assert(!b.level[SERIAL_COM1_IRQ]);
	free(bad);
	free(blob);
	/* a tree without the UART */
	{
		struct state_writer *w = state_writer_new();

		state_begin(w, "devices", 1);
		state_end(w);
		ck_assert_int_eq(state_writer_finish(w, (void **)&blob, &len, state_err, sizeof(state_err)), 0);
		ck_assert_int_eq(load_tree(serial_load_fn, sb, blob, len), -1);
		ck_assert_str_eq(state_err, "state: /devices/serial@3f8: no such node");
		free(blob);
	}
	serial_free(sa);
	serial_free(sb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

/* ---- MC146818 RTC ---- */

static void rtc_save_fn(void *dev, struct state_writer *w)
{
	rtc_save(dev, w);
}

static int rtc_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return rtc_load(dev, r, e, elen);
}

static void cmos_write(struct fake_host *t, uint8_t idx, uint8_t v)
{
	pio_out(t, 0x70, 1, idx);
	pio_out(t, 0x71, 1, v);
}

static uint8_t cmos_read(struct fake_host *t, uint8_t idx)
{
	pio_out(t, 0x70, 1, idx);
	return (uint8_t)pio_in(t, 0x71, 1);
}

static struct rtc *rtc(struct fake_host *t)
{
	struct rtc *r;

	test_host_init(t);
	r = rtc_new(&t->host);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* The guest clock in seconds (BCD, 24 h). */
static time_t guest_time(struct fake_host *t)
{
	static const uint8_t regs[6] = {0, 2, 4, 7, 8, 9};
	int v[6];
	struct tm tm = {0};

	for (unsigned i = 0; i < 6; i++) {
		uint8_t x = cmos_read(t, regs[i]);

		v[i] = (x >> 4) * 10 + (x & 15);
	}
	tm = (struct tm){.tm_sec = v[0], .tm_min = v[1], .tm_hour = v[2], .tm_mday = v[3],
			 .tm_mon = v[4] - 1, .tm_year = 100 + v[5]};
	return timegm(&tm);
}

/* CMOS memory, a clock set to 2031, a pending periodic interrupt, an index. */
static void rtc_busy(struct fake_host *t, struct rtc *r)
{
	for (unsigned i = 0x0e; i < 0x80; i++)
		if (i != 0x32)
			cmos_write(t, (uint8_t)i, (uint8_t)(i * 13 + 1));
	cmos_write(t, 0x0b, 0x82);
	cmos_write(t, 0x00, 0x09);
	cmos_write(t, 0x02, 0x08);
	cmos_write(t, 0x04, 0x07);
	cmos_write(t, 0x07, 0x06);
	cmos_write(t, 0x08, 0x05);
	cmos_write(t, 0x09, 0x31);
	cmos_write(t, 0x01, 0xc0); /* alarm "don't care" */
	cmos_write(t, 0x0b, 0x02);
	cmos_write(t, 0x0a, 0x23);
	/* a periodic tick happened (no event loop here); PIE then raises IRQ 8 */
	rtc_cmos_set(r, 0x0c, 0x40);
	cmos_write(t, 0x0b, 0x42);
	pio_out(t, 0x70, 1, 0x2a);
}

START_TEST(rtc_round_trip)
{
	struct fake_host a, b;
	struct rtc *ra = rtc(&a), *rb = rtc(&b);
	size_t len;
	void *blob;
	time_t ta, tb;

	rtc_busy(&a, ra);
	ck_assert(a.level[RTC_IRQ]);
	blob = save_tree(rtc_save_fn, ra, &len);
	ck_assert_int_eq(load_tree(rtc_load_fn, rb, blob, len), 0);
	same_lines(&a, &b);
	same_in(&a, &b, 0x70); /* the index */
	same_in(&a, &b, 0x71); /* the byte it selects */
	/* the clock runs on from the same guest time */
	ta = guest_time(&a);
	tb = guest_time(&b);
	ck_assert_int_le(labs((long)(ta - tb)), 1);
	ck_assert_int_gt(ta, 1900000000); /* 2030: the guest's, not the host's */
	for (unsigned i = 0x0a; i < 0x80; i++) {
		uint8_t va = cmos_read(&a, (uint8_t)i), vb = cmos_read(&b, (uint8_t)i);

		if (i == 0x0a) { /* UIP follows each host's clock */
			va &= 0x7f;
			vb &= 0x7f;
		}
		ck_assert_msg(va == vb, "CMOS %#x: %#x vs %#x", i, va, vb);
		same_lines(&a, &b); /* reading C lowers IRQ 8 on both */
	}
	ck_assert(!b.level[RTC_IRQ]);
	/* freezing the clock (SET) shows the same registers */
	cmos_write(&a, 0x0b, 0x82);
	cmos_write(&b, 0x0b, 0x82);
	for (unsigned i = 0; i < 0x0a; i++)
		if (cmos_read(&a, 0) == cmos_read(&b, 0))
			ck_assert_uint_eq(cmos_read(&a, (uint8_t)i), cmos_read(&b, (uint8_t)i));
	free(blob);
	rtc_free(ra);
	rtc_free(rb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

START_TEST(rtc_bad_trees)
{
	struct fake_host a, b;
	struct rtc *ra = rtc(&a), *rb = rtc(&b);
	const char *node = "/devices/rtc@70";
	fdt64_t huge = cpu_to_fdt64((uint64_t)1 << 50);
	size_t len;
	uint8_t *blob, *bad;

	rtc_busy(&a, ra);
	blob = save_tree(rtc_save_fn, ra, &len);
	bad = malloc(len);
	cmos_write(&b, 0x40, 0x77);
	memcpy(bad, blob, len);
	patch_u8(bad, node, "index", 0x80);
	ck_assert_int_eq(load_tree(rtc_load_fn, rb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/rtc@70: property 'index' is 128, at most 127");
	memcpy(bad, blob, len);
	patch(bad, node, "offset", &huge, 8);
	ck_assert_int_eq(load_tree(rtc_load_fn, rb, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "clock offset"));
	ck_assert_uint_eq(cmos_read(&b, 0x40), 0x77);
	ck_assert(!b.level[RTC_IRQ]);
	free(bad);
	free(blob);
	rtc_free(ra);
	rtc_free(rb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

/* ---- 8259A pair ---- */

static void pic_save_fn(void *dev, struct state_writer *w)
{
	i8259_save(dev, w);
}

static int pic_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return i8259_load(dev, r, e, elen);
}

static struct i8259 *pic(struct fake_host *t)
{
	struct i8259 *p;

	test_host_init(t);
	p = i8259_new(&t->host, NULL, NULL);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void pic_init(struct fake_host *t)
{
	static const uint8_t seq[][2] = {
		{0x20, 0x11}, {0x21, 0x08}, {0x21, 0x04}, {0x21, 0x01}, {0xa0, 0x11},
		{0xa1, 0x70}, {0xa1, 0x02}, {0xa1, 0x01}, {0x21, 0xb8}, {0xa1, 0x05}};

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		pio_out(t, seq[i][0], 1, seq[i][1]);
	pio_out(t, 0x4d0, 1, 0x20);
	pio_out(t, 0x4d1, 1, 0x0a);
}

/* Requests in service and pending, a level IRQ held on the slave, the
 * slave's priority rotated, the master reading its ISR. */
static void pic_busy(struct fake_host *t, struct i8259 *p)
{
	pic_init(t);
	i8259_set_irq(p, 1, true);
	i8259_set_irq(p, 1, false);
	ck_assert_int_eq(i8259_ack(p), 0x09);
	i8259_set_irq(p, 6, true);
	i8259_set_irq(p, 0, true);
	i8259_set_irq(p, 9, true); /* level (ELCR) on the slave */
	i8259_set_irq(p, 12, true); /* before IRQ 9 only once rotated */
	pio_out(t, 0xa0, 1, 0xc3); /* slave: IRQ 3 lowest */
	pio_out(t, 0x20, 1, 0x0b); /* master: read ISR */
}

static void same_pic_ports(struct fake_host *a, struct fake_host *b)
{
	static const uint16_t ports[] = {0x20, 0x21, 0xa0, 0xa1, 0x4d0, 0x4d1};

	for (unsigned i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		same_in(a, b, ports[i]);
}

/* Edges on many lines, INTA cycles, ISR and IRR views, EOIs: the same on
 * the saved pair and the loaded one. */
static void pic_exercise(struct fake_host *a, struct fake_host *b, struct i8259 *pa,
			 struct i8259 *pb)
{
	same_pic_ports(a, b); /* first: a pending poll answers this read */
	for (unsigned round = 0; round < 12; round++) {
		unsigned irq = (round * 5 + 3) % 16;

		if (irq != 2) {
			i8259_set_irq(pa, irq, true);
			i8259_set_irq(pb, irq, true);
			i8259_set_irq(pa, irq, false);
			i8259_set_irq(pb, irq, false);
		}
		ck_assert_int_eq(i8259_intr(pa), i8259_intr(pb));
		if (i8259_intr(pa) && round % 3 != 2)
			ck_assert_int_eq(i8259_ack(pa), i8259_ack(pb));
		for (uint16_t port = 0x20; port <= 0xa0; port += 0x80) {
			both_out(a, b, port, 0x0b);
			same_in(a, b, port);
			both_out(a, b, port, 0x0a);
			same_in(a, b, port);
			if (round % 3 == 1)
				both_out(a, b, port, 0x20);
		}
	}
}

/* The less common modes: AEOI with rotation, special mask, special fully
 * nested, a pending poll. */
static void pic_modes(uint8_t master_icw4, uint8_t slave_icw4, uint8_t master_ocw,
		      uint8_t slave_ocw)
{
	struct fake_host a, b;
	struct i8259 *pa = pic(&a), *pb = pic(&b);
	size_t len;
	void *blob;

	pic_init(&a);
	pio_out(&a, 0x20, 1, 0x11);
	pio_out(&a, 0x21, 1, 0x08);
	pio_out(&a, 0x21, 1, 0x04);
	pio_out(&a, 0x21, 1, master_icw4);
	pio_out(&a, 0xa0, 1, 0x11);
	pio_out(&a, 0xa1, 1, 0x70);
	pio_out(&a, 0xa1, 1, 0x02);
	pio_out(&a, 0xa1, 1, slave_icw4);
	i8259_set_irq(pa, 3, true);
	i8259_set_irq(pa, 13, true);
	i8259_ack(pa);
	i8259_set_irq(pa, 15, true); /* below IRQ 13: only special mask lets it in */
	i8259_set_irq(pa, 4, true);
	i8259_ack(pa);
	pio_out(&a, 0xa1, 1, 0x20); /* mask IRQ 13, which may be in service */
	if (master_ocw)
		pio_out(&a, 0x20, 1, master_ocw);
	if (slave_ocw)
		pio_out(&a, 0xa0, 1, slave_ocw);
	blob = save_tree(pic_save_fn, pa, &len);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, blob, len), 0);
	pic_exercise(&a, &b, pa, pb);
	free(blob);
	i8259_free(pa);
	i8259_free(pb);
	test_host_fini(&a);
	test_host_fini(&b);
}

START_TEST(pic_aeoi_rotation_special_mask_poll)
{
	pic_modes(0x03, 0x01, 0x80, 0x68); /* master AEOI + rotate; slave SMM */
	pic_modes(0x01, 0x01, 0x0c, 0x0c); /* both polled */
}
END_TEST

START_TEST(pic_special_fully_nested)
{
	pic_modes(0x11, 0x01, 0, 0);
}
END_TEST

START_TEST(pic_round_trip)
{
	struct fake_host a, b;
	struct i8259 *pa = pic(&a), *pb = pic(&b);
	size_t len;
	void *blob;

	pic_busy(&a, pa);
	ck_assert(i8259_intr(pa));
	blob = save_tree(pic_save_fn, pa, &len);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, blob, len), 0);
	ck_assert_int_eq(i8259_intr(pa), i8259_intr(pb));
	same_pic_ports(&a, &b);
	/* deliver everything, EOI by EOI (IRQ 9 dropped on the way) */
	for (unsigned round = 0; round < 10; round++) {
		if (round == 3) {
			i8259_set_irq(pa, 9, false);
			i8259_set_irq(pb, 9, false);
		}
		ck_assert_int_eq(i8259_intr(pa), i8259_intr(pb));
		if (i8259_intr(pa))
			ck_assert_int_eq(i8259_ack(pa), i8259_ack(pb));
		same_pic_ports(&a, &b);
		both_out(&a, &b, 0x20, 0x20);
		both_out(&a, &b, 0xa0, 0x20);
		same_pic_ports(&a, &b);
	}
	ck_assert(!i8259_intr(pa));
	/* the edge latches: IRQ 6 and 12 are still high, so no new edge */
	i8259_set_irq(pa, 6, true);
	i8259_set_irq(pb, 6, true);
	i8259_set_irq(pa, 12, true);
	i8259_set_irq(pb, 12, true);
	both_out(&a, &b, 0x20, 0x0a); /* read IRR */
	both_out(&a, &b, 0xa0, 0x0a);
	same_pic_ports(&a, &b);
	ck_assert_int_eq(i8259_intr(pa), i8259_intr(pb));
	pic_exercise(&a, &b, pa, pb);
	free(blob);
	i8259_free(pa);
	i8259_free(pb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

/* Saved between ICW1 and ICW2: the next data bytes are still ICWs. */
START_TEST(pic_mid_initialisation)
{
	struct fake_host a, b;
	struct i8259 *pa = pic(&a), *pb = pic(&b);
	size_t len;
	void *blob;

	pic_init(&a);
	pio_out(&a, 0x20, 1, 0x19); /* ICW1, level-triggered, ICW4 needed */
	pio_out(&a, 0x21, 1, 0x40);
	blob = save_tree(pic_save_fn, pa, &len);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, blob, len), 0);
	both_out(&a, &b, 0x21, 0x04); /* ICW3 */
	both_out(&a, &b, 0x21, 0x03); /* ICW4: AEOI */
	both_out(&a, &b, 0x21, 0xf0); /* IMR */
	same_pic_ports(&a, &b);
	i8259_set_irq(pa, 3, true);
	i8259_set_irq(pb, 3, true);
	ck_assert(i8259_intr(pb));
	ck_assert_int_eq(i8259_ack(pa), 0x43);
	ck_assert_int_eq(i8259_ack(pb), 0x43);
	same_pic_ports(&a, &b);
	pic_exercise(&a, &b, pa, pb);
	free(blob);
	i8259_free(pa);
	i8259_free(pb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

START_TEST(pic_bad_trees)
{
	struct fake_host a, b;
	struct i8259 *pa = pic(&a), *pb = pic(&b);
	size_t len;
	uint8_t *blob, *bad;

	pic_busy(&a, pa);
	blob = save_tree(pic_save_fn, pa, &len);
	bad = malloc(len);
	pio_out(&b, 0x21, 1, 0x5a);
	memcpy(bad, blob, len);
	patch_u8(bad, "/devices/pic@a0", "priority-add", 8);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/pic@a0: property 'priority-add' is 8, at most 7");
	memcpy(bad, blob, len);
	patch_u8(bad, "/devices/pic@20", "init-step", 1);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, bad, len), -1);
	memcpy(bad, blob, len);
	patch_u8(bad, "/devices/pic@20", "elcr", 0x01);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/pic@20: elcr 0x1 sets fixed edge-triggered IRQs");
	memcpy(bad, blob, len);
	patch_u8(bad, "/devices/pic@a0", "base", 0x71);
	ck_assert_int_eq(load_tree(pic_load_fn, pb, bad, len), -1);
	/* the master loaded fine before the slave failed: still nothing applied */
	ck_assert_uint_eq(pio_in(&b, 0x21, 1), 0x5a);
	ck_assert(!i8259_intr(pb));
	free(bad);
	free(blob);
	i8259_free(pa);
	i8259_free(pb);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

/* ---- I/O APIC ---- */

#define IOAPIC_GPA 0xfec00000u

static void ioapic_save_fn(void *dev, struct state_writer *w)
{
	ioapic_save(dev, w);
}

static int ioapic_load_fn(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return ioapic_load(dev, r, e, elen);
}

/* The MSIs each host saw, in order. */
struct msi_log {
	unsigned n;
	uint64_t addr[64];
	uint32_t data[64];
};
static struct msi_log msi_a, msi_b;
static struct fake_host *host_a;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct msi_log *l = opaque == host_a ? &msi_a : &msi_b;

	if (l->n < 64) {
		l->addr[l->n] = addr;
		l->data[l->n] = data;
	}
	l->n++;
}

static struct ioapic *ioapic(struct fake_host *t)
{
	struct ioapic *io;

	test_host_init(t);
	t->host.irq.msi = record_msi;
	io = ioapic_new(&t->host, IOAPIC_GPA);
	ck_assert_ptr_nonnull(io);
	return io;
}

static void ioapic_write(struct fake_host *t, uint8_t reg, uint32_t v)
{
	uint32_t sel = reg;

	iobus_write(t->host.mmio, IOAPIC_GPA, &sel, 4);
	iobus_write(t->host.mmio, IOAPIC_GPA + 0x10, &v, 4);
}

static uint32_t window(struct fake_host *t)
{
	uint32_t v = 0;

	iobus_read(t->host.mmio, IOAPIC_GPA + 0x10, &v, 4);
	return v;
}

static void same_msis(void)
{
	ck_assert_uint_eq(msi_a.n, msi_b.n);
	for (unsigned i = 0; i < msi_a.n && i < 64; i++) {
		ck_assert_uint_eq(msi_a.addr[i], msi_b.addr[i]);
		ck_assert_uint_eq(msi_a.data[i], msi_b.data[i]);
	}
}

START_TEST(ioapic_round_trip)
{
	struct fake_host a, b;
	struct ioapic *ia, *ib;
	size_t len;
	void *blob;

	host_a = &a;
	ia = ioapic(&a);
	ib = ioapic(&b);
	ioapic_write(&a, 0x00, 5u << 24);		 /* ID */
	ioapic_write(&a, 0x10 + 2 * 4, 0x34);		 /* pin 4: edge, fixed */
	ioapic_write(&a, 0x11 + 2 * 4, 1u << 24);	 /* to APIC 1 */
	ioapic_write(&a, 0x10 + 2 * 9, 0x8039);		 /* pin 9: level */
	ioapic_write(&a, 0x10 + 2 * 10, 0x1803a);	 /* pin 10: level, masked */
	ioapic_set_irq(ia, 9, true);			 /* delivered: remote IRR */
	ioapic_set_irq(ia, 10, true);			 /* held while masked */
	ioapic_write(&a, 0x13, 0x02000000);		 /* leaves IOREGSEL at 0x13 */
	blob = save_tree(ioapic_save_fn, ia, &len);
	ck_assert_int_eq(load_tree(ioapic_load_fn, ib, blob, len), 0);
	msi_a.n = msi_b.n = 0;
	ck_assert_uint_eq(window(&a), window(&b)); /* the saved IOREGSEL */
	for (uint8_t reg = 0; reg < 0x40; reg++) {
		uint32_t sel = reg, va, vb;

		iobus_write(a.host.mmio, IOAPIC_GPA, &sel, 4);
		iobus_write(b.host.mmio, IOAPIC_GPA, &sel, 4);
		va = window(&a);
		vb = window(&b);
		ck_assert_msg(va == vb, "I/O APIC register %#x: %#x vs %#x", reg, va, vb);
	}
	/* EOI with the line still high delivers again; unmasking pin 10 too */
	ioapic_eoi(ia, 0x39);
	ioapic_eoi(ib, 0x39);
	same_msis();
	ck_assert_uint_eq(msi_b.n, 1);
	ioapic_write(&a, 0x10 + 2 * 10, 0x803a);
	ioapic_write(&b, 0x10 + 2 * 10, 0x803a);
	ioapic_set_irq(ia, 4, true);
	ioapic_set_irq(ib, 4, true);
	ioapic_set_irq(ia, 9, false);
	ioapic_set_irq(ib, 9, false);
	ioapic_eoi(ia, 0x39);
	ioapic_eoi(ib, 0x39);
	same_msis();
	free(blob);
	ioapic_free(ia);
	ioapic_free(ib);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

START_TEST(ioapic_bad_trees)
{
	struct fake_host a, b;
	struct ioapic *ia, *ib;
	const char *node = "/devices/ioapic@fec00000";
	size_t len;
	uint8_t *blob, *bad;

	host_a = &a;
	ia = ioapic(&a);
	ib = ioapic(&b);
	blob = save_tree(ioapic_save_fn, ia, &len);
	bad = malloc(len);
	memcpy(bad, blob, len);
	patch_u32(bad, node, "line", 1u << 24);
	ck_assert_int_eq(load_tree(ioapic_load_fn, ib, bad, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/ioapic@fec00000: property 'line' is 16777216, at most 16777215");
	memcpy(bad, blob, len);
	patch_u8(bad, node, "id", 0x10);
	ck_assert_int_eq(load_tree(ioapic_load_fn, ib, bad, len), -1);
	free(bad);
	free(blob);
	ioapic_free(ia);
	ioapic_free(ib);
	test_host_fini(&a);
	test_host_fini(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("devstate");
	TCase *tc = tcase_create("devstate");

	tcase_add_test(tc, serial_round_trip);
	tcase_add_test(tc, serial_bad_trees);
	tcase_add_test(tc, rtc_round_trip);
	tcase_add_test(tc, rtc_bad_trees);
	tcase_add_test(tc, pic_round_trip);
	tcase_add_test(tc, pic_mid_initialisation);
	tcase_add_test(tc, pic_aeoi_rotation_special_mask_poll);
	tcase_add_test(tc, pic_special_fully_nested);
	tcase_add_test(tc, pic_bad_trees);
	tcase_add_test(tc, ioapic_round_trip);
	tcase_add_test(tc, ioapic_bad_trees);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
