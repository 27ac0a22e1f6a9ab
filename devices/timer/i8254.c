/* i8254.c — the 8254 programmable interval timer at 0x40-0x43 and the
 * PC's port B at 0x61 (channel 2 gate, speaker enable, refresh toggle,
 * channel 2 output).
 *
 * Counting is computed, not ticked: each channel remembers when its count
 * was loaded and derives the counter and OUT from the host's monotonic
 * clock at 1.193182 MHz, so nothing runs while nobody looks. Only channel
 * 0's OUT, wired to IRQ 0, needs a host timer: it is armed for the next
 * rising edge of OUT0 and never more often than PIT_MIN_PERIOD_NS (a
 * guest programming a count of 1 gets its ticks coalesced, not a timer
 * storm). Modes 0-5, lobyte/hibyte/word access, counter latch, read-back
 * with status, gates (channel 2's from port 0x61) and BCD counting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/timer/i8254.h"
#include "state/state.h"

#define PIT_BASE 0x40
#define PORT_B 0x61
#define PIT_HZ 1193182ull
#define NS_PER_S 1000000000ull
#define PIT_MIN_PERIOD_NS 50000ull /* IRQ 0 at most every 50 us (20 kHz) */
#define REFRESH_HALF_NS 15085ull   /* port B bit 4 toggles at ~66 kHz */
#define NO_EDGE UINT64_MAX

/* access modes (control word bits 5-4) */
enum { RW_LATCH = 0, RW_LSB = 1, RW_MSB = 2, RW_WORD = 3 };

struct pit_channel {
	uint8_t mode, rw;
	bool bcd;
	uint32_t count;	  /* the loaded count in ticks: 1-65536 (10000 in BCD) */
	uint64_t load_ns; /* when counting started (or was triggered) */
	bool counting;	  /* a count was loaded (and, modes 1/5, triggered) */
	bool gate;
	bool paused; /* gate low in modes 0/2/3/4: counting stops */
	uint64_t paused_ticks;
	bool null_count;
	/* port access state */
	bool write_msb_next, read_msb_next;
	uint8_t write_lsb;
	bool count_latched, latch_msb_next;
	uint16_t latched;
	bool status_latched;
	uint8_t status;
};

struct i8254 {
	struct dev_host *host;
	pthread_mutex_t lock;
	struct pit_channel ch[3];
	uint8_t port_b; /* bits 0-3 as written */
	bool irq0_level;
	uint64_t irq0_next; /* the edge the timer is armed for, or NO_EDGE */
	struct i8254_clock clk;
	/* added to clk's time: a loaded snapshot's counts may have run
	 * longer than this host's monotonic clock has existed */
	uint64_t time_offset;
	struct ev_timer *timer; /* our own when no clock was given */
};

static uint64_t pit_now(const struct i8254 *p)
{
	return p->clk.now_ns(p->clk.opaque) + p->time_offset;
}

/* ------------------------------------------------------------ counting */

static uint64_t ns_to_ticks(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * PIT_HZ / NS_PER_S);
}

/* The first nanosecond at which `ticks` ticks have elapsed. */
static uint64_t ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * NS_PER_S + PIT_HZ - 1) / PIT_HZ);
}

static uint64_t elapsed(const struct pit_channel *c, uint64_t now)
{
	if (!c->counting)
		return 0;
	if (c->paused)
		return c->paused_ticks;
	return now > c->load_ns ? ns_to_ticks(now - c->load_ns) : 0;
}

static bool periodic(const struct pit_channel *c)
{
	return c->mode == 2 || c->mode == 3;
}

static uint32_t counter_value(const struct pit_channel *c, uint64_t now)
{
	uint64_t d = elapsed(c, now), half;

	if (!c->counting)
		return c->count;
	switch (c->mode) {
	case 2:
		return (uint32_t)(c->count - d % c->count);
	case 3: /* counts down by two, twice per period */
		half = (c->count + 1) / 2;
		return (uint32_t)(c->count - 2 * (d % c->count % half)) & ~1u;
	default: /* 0, 1, 4, 5: down to zero, then wrap around */
		return (uint32_t)((c->count - d % 65536) & 0xffff);
	}
}

static bool out_level(const struct pit_channel *c, uint64_t now)
{
	uint64_t d = elapsed(c, now);

	if (c->mode == 0)
		return c->counting && d >= c->count;
	if (!c->counting || (periodic(c) && !c->gate))
		return c->mode != 0;
	switch (c->mode) {
	case 1:
		return d >= c->count;
	case 2:
		return d % c->count != c->count - 1;
	case 3:
		return d % c->count < (c->count + 1) / 2;
	default: /* 4, 5: low for the one tick at the terminal count */
		return d != c->count;
	}
}

/* The tick count of OUT's next rising edge after d ticks, or NO_EDGE. */
static uint64_t next_rising_tick(const struct pit_channel *c, uint64_t d)
{
	if (!c->counting || c->paused)
		return NO_EDGE;
	switch (c->mode) {
	case 0:
	case 1:
		return d < c->count ? c->count : NO_EDGE;
	case 2:
	case 3:
		return (d / c->count + 1) * c->count;
	default:
		return d <= c->count ? c->count + 1 : NO_EDGE;
	}
}

/* -------------------------------------------------------- IRQ 0 output */

static void set_irq0(struct i8254 *p, bool level)
{
	if (p->irq0_level == level)
		return;
	p->irq0_level = level;
	p->host->irq.set_level(p->host->irq.opaque, 0, level);
}

/* Arm the host timer for OUT0's next rising edge (lock held). */
static void arm_irq0(struct i8254 *p, uint64_t now)
{
	struct pit_channel *c = &p->ch[0];
	uint64_t tick = next_rising_tick(c, elapsed(c, now)), at;

	if (tick == NO_EDGE) {
		p->irq0_next = NO_EDGE;
		p->clk.arm(p->clk.opaque, NO_EDGE);
		return;
	}
	at = c->load_ns + ticks_to_ns(tick);
	if (at < now + PIT_MIN_PERIOD_NS && periodic(c))
		at = now + PIT_MIN_PERIOD_NS;
	p->irq0_next = at;
	p->clk.arm(p->clk.opaque, at - p->time_offset);
}

void i8254_timer(struct i8254 *p)
{
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	if (p->irq0_next != NO_EDGE && now >= p->irq0_next) {
		/* A rising edge of OUT0 (missed ones coalesce into it). In the
		 * pulse modes OUT0 is high again at once: deliver the edge. */
		set_irq0(p, true);
		if (p->ch[0].mode != 0 && p->ch[0].mode != 1)
			set_irq0(p, false);
	}
	arm_irq0(p, now);
	pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------- registers */

static uint16_t to_bcd(uint32_t v)
{
	v %= 10000;
	return (uint16_t)((v / 1000) << 12 | (v / 100 % 10) << 8 | (v / 10 % 10) << 4 | v % 10);
}

static uint32_t from_bcd(uint16_t v)
{
	return (v >> 12) * 1000 + (v >> 8 & 15) % 10 * 100 + (v >> 4 & 15) % 10 * 10 +
	       (v & 15) % 10;
}

static uint16_t visible_count(const struct pit_channel *c, uint64_t now)
{
	uint32_t v = counter_value(c, now);

	return c->bcd ? to_bcd(v) : (uint16_t)v;
}

static void load_count(struct i8254 *p, unsigned n, uint16_t raw, uint64_t now)
{
	struct pit_channel *c = &p->ch[n];
	uint32_t count = c->bcd ? from_bcd(raw) : raw;

	c->count = count ? count : (c->bcd ? 10000 : 65536);
	c->load_ns = now;
	c->null_count = false;
	c->paused = false;
	/* modes 1 and 5 wait for a rising edge of the gate; the others
	 * count now, or from when the gate rises */
	c->counting = c->mode != 1 && c->mode != 5;
	if (c->counting && !c->gate) {
		c->paused = true;
		c->paused_ticks = 0;
	}
	if (n == 0) {
		set_irq0(p, false);
		arm_irq0(p, now);
	}
}

static void write_count(struct i8254 *p, unsigned n, uint8_t v, uint64_t now)
{
	struct pit_channel *c = &p->ch[n];

	switch (c->rw) {
	case RW_LSB:
		load_count(p, n, v, now);
		break;
	case RW_MSB:
		load_count(p, n, (uint16_t)(v << 8), now);
		break;
	default:
		if (!c->write_msb_next) {
			c->write_lsb = v;
			c->write_msb_next = true;
			break;
		}
		c->write_msb_next = false;
		load_count(p, n, (uint16_t)(v << 8 | c->write_lsb), now);
	}
}

static uint8_t read_count(struct pit_channel *c, uint64_t now)
{
	uint16_t v;
	bool msb;

	if (c->status_latched) {
		c->status_latched = false;
		return c->status;
	}
	if (c->count_latched) {
		v = c->latched;
		msb = c->rw == RW_MSB || (c->rw == RW_WORD && c->latch_msb_next);
		if (c->rw == RW_WORD && !c->latch_msb_next)
			c->latch_msb_next = true;
		else
			c->count_latched = false;
		return msb ? v >> 8 : v & 0xff;
	}
	v = visible_count(c, now);
	msb = c->rw == RW_MSB || (c->rw == RW_WORD && c->read_msb_next);
	if (c->rw == RW_WORD)
		c->read_msb_next = !c->read_msb_next;
	return msb ? v >> 8 : v & 0xff;
}

static void latch_count(struct pit_channel *c, uint64_t now)
{
	if (c->count_latched)
		return; /* the first latch holds until read */
	c->latched = visible_count(c, now);
	c->count_latched = true;
	c->latch_msb_next = false;
}

static void latch_status(struct pit_channel *c, uint64_t now)
{
	if (c->status_latched)
		return;
	c->status = (uint8_t)(out_level(c, now) << 7 | c->null_count << 6 | c->rw << 4 |
			      c->mode << 1 | c->bcd);
	c->status_latched = true;
}

static void write_control(struct i8254 *p, uint8_t v, uint64_t now)
{
	unsigned n = v >> 6, rw = (v >> 4) & 3;
	struct pit_channel *c;

	if (n == 3) { /* read-back: bit 5 clear latches counts, bit 4 status */
		for (unsigned i = 0; i < 3; i++) {
			if (!(v & (2u << i)))
				continue;
			if (!(v & 0x20))
				latch_count(&p->ch[i], now);
			if (!(v & 0x10))
				latch_status(&p->ch[i], now);
		}
		return;
	}
	c = &p->ch[n];
	if (rw == RW_LATCH) {
		latch_count(c, now);
		return;
	}
	c->rw = (uint8_t)rw;
	c->mode = (v >> 1) & 7;
	if (c->mode > 5)
		c->mode -= 4; /* 6 and 7 are aliases of 2 and 3 */
	c->bcd = v & 1;
	c->write_msb_next = c->read_msb_next = false;
	c->count_latched = c->status_latched = false;
	c->counting = false; /* until the new count is written */
	c->null_count = true;
	if (n == 0) {
		/* IRQ 0 carries OUT0's rising edges at the count's end only:
		 * a mode change does not interrupt (as KVM's PIT). */
		set_irq0(p, false);
		arm_irq0(p, now);
	}
}

static void set_gate(struct pit_channel *c, bool gate, uint64_t now)
{
	if (gate == c->gate)
		return;
	c->gate = gate;
	if (!gate) {
		if (c->counting && c->mode != 1 && c->mode != 5) {
			c->paused_ticks = elapsed(c, now);
			c->paused = true;
		}
		return;
	}
	/* rising edge */
	if (c->mode == 1 || c->mode == 5 || periodic(c)) {
		/* trigger (1, 5) or restart the period (2, 3) */
		c->counting = !c->null_count;
		c->paused = false;
		c->load_ns = now;
	} else if (c->paused) {
		c->paused = false;
		c->load_ns = now - ticks_to_ns(c->paused_ticks);
	}
}

static void pit_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct i8254 *p = opaque;
	uint8_t v = 0xff; /* the control port does not read back */

	pthread_mutex_lock(&p->lock);
	if (off < 3)
		v = read_count(&p->ch[off], pit_now(p));
	pthread_mutex_unlock(&p->lock);
	io_data_put(data, size, v);
}

static void pit_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct i8254 *p = opaque;
	uint8_t v = (uint8_t)io_data_get(data, size);
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	if (off < 3)
		write_count(p, (unsigned)off, v, now);
	else
		write_control(p, v, now);
	pthread_mutex_unlock(&p->lock);
}

static const struct io_ops pit_ops = {pit_read, pit_write};

/* Port B: 0 gate 2, 1 speaker data, 2-3 parity/IOCHK check disables,
 * 4 refresh toggle (read-only), 5 OUT2 (read-only). */
static void port_b_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct i8254 *p = opaque;
	uint64_t now;
	uint8_t v;

	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	v = (uint8_t)(p->port_b | ((now / REFRESH_HALF_NS) & 1) << 4 |
		      out_level(&p->ch[2], now) << 5);
	pthread_mutex_unlock(&p->lock);
	io_data_put(data, size, v);
}

static void port_b_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct i8254 *p = opaque;
	uint8_t v = (uint8_t)io_data_get(data, size);

	pthread_mutex_lock(&p->lock);
	p->port_b = v & 0x0f;
	set_gate(&p->ch[2], v & 1, pit_now(p));
	pthread_mutex_unlock(&p->lock);
}

static const struct io_ops port_b_ops = {port_b_read, port_b_write};

/* ----------------------------------------------------------- lifecycle */

static void i8254_reset(void *opaque)
{
	struct i8254 *p = opaque;
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	memset(p->ch, 0, sizeof(p->ch));
	for (unsigned i = 0; i < 3; i++) {
		p->ch[i].gate = i != 2; /* channel 2's gate is port B bit 0 */
		p->ch[i].count = 65536;
		p->ch[i].rw = RW_WORD;
	}
	p->port_b = 0;
	set_irq0(p, false);
	arm_irq0(p, now);
	pthread_mutex_unlock(&p->lock);
}

static uint64_t host_now(void *opaque)
{
	return clock_now_ns();
}

static void host_arm(void *opaque, uint64_t deadline)
{
	struct i8254 *p = opaque;
	uint64_t now = clock_now_ns();

	if (deadline == NO_EDGE)
		ev_timer_disarm(p->timer);
	else
		ev_timer_arm(p->timer, deadline > now ? deadline - now : 1, 0);
}

static void host_timer_fired(void *opaque)
{
	i8254_timer(opaque);
}

struct i8254 *i8254_new(struct dev_host *host, const struct i8254_clock *clk)
{
	struct i8254 *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->host = host;
	pthread_mutex_init(&p->lock, NULL);
	if (clk) {
		p->clk = *clk;
	} else {
		p->clk = (struct i8254_clock){host_now, host_arm, p};
		p->timer = ev_timer_new(host->loop, host_timer_fired, p);
	}
	if ((!clk && !p->timer) || iobus_register(host->pio, PIT_BASE, 4, &pit_ops, p, "pit")) {
		ev_timer_free(p->timer);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	if (iobus_register(host->pio, PORT_B, 1, &port_b_ops, p, "port b (speaker)")) {
		i8254_free(p);
		return NULL;
	}
	i8254_reset(p);
	dev_on_reset(host, i8254_reset, p);
	return p;
}

void i8254_free(struct i8254 *p)
{
	if (!p)
		return;
	iobus_unregister(p->host->pio, PIT_BASE);
	iobus_unregister(p->host->pio, PORT_B);
	ev_timer_free(p->timer);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

bool i8254_out(struct i8254 *p, unsigned ch)
{
	bool out;

	if (ch >= 3)
		return false;
	pthread_mutex_lock(&p->lock);
	out = out_level(&p->ch[ch], pit_now(p));
	pthread_mutex_unlock(&p->lock);
	return out;
}

/* ------------------------------------------------------------ snapshot */

/* The layout of the nodes; bump when a property changes. */
#define PIT_STATE_VERSION 1
#define PIT_STATE_NODE "pit@40"
#define PIT_MAX_ELAPSED_NS (315360000ull * NS_PER_S)

static void save_channel(struct state_writer *w, unsigned n, const struct pit_channel *c,
			 uint64_t now)
{
	char name[16];

	snprintf(name, sizeof(name), "channel@%u", n);
	state_begin(w, name, PIT_STATE_VERSION);
	state_put_u8(w, "mode", c->mode);
	state_put_u8(w, "access", c->rw);
	state_put_u8(w, "bcd", c->bcd);
	state_put_u32(w, "count", c->count);
	/* how long the count has run: load_ns is on this host's clock */
	state_put_u64(w, "elapsed-ns", c->counting && now > c->load_ns ? now - c->load_ns : 0);
	state_put_u8(w, "counting", c->counting);
	state_put_u8(w, "gate", c->gate);
	state_put_u8(w, "paused", c->paused);
	state_put_u64(w, "paused-ticks", c->paused_ticks);
	state_put_u8(w, "null-count", c->null_count);
	state_put_u8(w, "write-msb-next", c->write_msb_next);
	state_put_u8(w, "read-msb-next", c->read_msb_next);
	state_put_u8(w, "write-lsb", c->write_lsb);
	state_put_u8(w, "count-latched", c->count_latched);
	state_put_u8(w, "latch-msb-next", c->latch_msb_next);
	state_put_u16(w, "latched", c->latched);
	state_put_u8(w, "status-latched", c->status_latched);
	state_put_u8(w, "status", c->status);
	state_end(w);
}

void i8254_save(struct i8254 *p, struct state_writer *w)
{
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	state_begin(w, PIT_STATE_NODE, PIT_STATE_VERSION);
	state_put_u8(w, "port-b", p->port_b);
	state_put_u8(w, "irq0", p->irq0_level);
	for (unsigned i = 0; i < 3; i++)
		save_channel(w, i, &p->ch[i], now);
	state_end(w);
	pthread_mutex_unlock(&p->lock);
}

/* A saved channel, read and checked; *elapsed for load_ns. */
static int load_channel(const struct state_reader *r, unsigned i, struct pit_channel *c,
			uint64_t *elapsed, char *err, size_t errlen)
{
	uint8_t mode = 0, rw = 0;
	struct state_node n;
	char path[32];

	snprintf(path, sizeof(path), PIT_STATE_NODE "/channel@%u", i);
	if (state_node_open(&n, r, path, PIT_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_u8_max(&n, "mode", 5, &mode) || state_get_u8_max(&n, "access", RW_WORD, &rw) ||
	    state_get_bool(&n, "bcd", &c->bcd) || state_get_u32(&n, "count", &c->count) ||
	    state_get_u64(&n, "elapsed-ns", elapsed) ||
	    state_get_bool(&n, "counting", &c->counting) || state_get_bool(&n, "gate", &c->gate) ||
	    state_get_bool(&n, "paused", &c->paused) ||
	    state_get_u64(&n, "paused-ticks", &c->paused_ticks) ||
	    state_get_bool(&n, "null-count", &c->null_count) ||
	    state_get_bool(&n, "write-msb-next", &c->write_msb_next) ||
	    state_get_bool(&n, "read-msb-next", &c->read_msb_next) ||
	    state_get_u8(&n, "write-lsb", &c->write_lsb) ||
	    state_get_bool(&n, "count-latched", &c->count_latched) ||
	    state_get_bool(&n, "latch-msb-next", &c->latch_msb_next) ||
	    state_get_u16(&n, "latched", &c->latched) ||
	    state_get_bool(&n, "status-latched", &c->status_latched) ||
	    state_get_u8(&n, "status", &c->status))
		return -1;
	c->mode = mode;
	c->rw = rw;
	/* a count of 0 would divide by zero; a write stores 1-65536 */
	if (c->count < 1 || c->count > 65536 || (c->bcd && c->count > 10000))
		return state_node_fail(&n, "count %u is not a loadable count", c->count);
	if (rw == RW_LATCH)
		return state_node_fail(&n, "access mode 0 is a latch command, not a mode");
	/* ten years: a count that ran longer is no clock of ours */
	if (*elapsed > PIT_MAX_ELAPSED_NS || c->paused_ticks > ns_to_ticks(PIT_MAX_ELAPSED_NS))
		return state_node_fail(&n, "elapsed time %llu ns (%llu ticks) is out of range",
				       (unsigned long long)*elapsed,
				       (unsigned long long)c->paused_ticks);
	return state_node_close(&n);
}

int i8254_load(struct i8254 *p, const struct state_reader *r, char *err, size_t errlen)
{
	struct pit_channel ch[3] = {0};
	uint64_t elapsed[3], now;
	uint8_t port_b = 0;
	struct state_node n;
	bool irq0 = false;

	if (state_node_open(&n, r, PIT_STATE_NODE, PIT_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u8_max(&n, "port-b", 0x0f, &port_b) || state_get_bool(&n, "irq0", &irq0) ||
	    state_node_close(&n) < 0)
		return -1;
	for (unsigned i = 0; i < 3; i++)
		if (load_channel(r, i, &ch[i], &elapsed[i], err, errlen) < 0)
			return -1;
	pthread_mutex_lock(&p->lock);
	now = pit_now(p);
	/* the clock must reach back to every loaded start: set_gate
	 * restarts a paused count paused_ticks before now */
	for (unsigned i = 0; i < 3; i++) {
		uint64_t back = elapsed[i] > ticks_to_ns(ch[i].paused_ticks)
					? elapsed[i]
					: ticks_to_ns(ch[i].paused_ticks);

		if (back > now) {
			p->time_offset += back - now;
			now = back;
		}
	}
	for (unsigned i = 0; i < 3; i++) {
		ch[i].load_ns = now - elapsed[i];
		p->ch[i] = ch[i];
	}
	p->port_b = port_b;
	set_irq0(p, irq0);
	arm_irq0(p, now);
	pthread_mutex_unlock(&p->lock);
	return 0;
}
