/* rtc.c — MC146818 CMOS real-time clock at 0x70 (index, bit 7 = NMI mask)
 * and 0x71 (data), IRQ 8.
 *
 * The clock is the host's UTC clock plus an offset the guest sets by
 * writing the time registers with SET held. Register A's UIP bit is
 * derived from the host clock (set in the last 244 us of each second), so
 * firmware polling it sees a real update cycle. Periodic (PIE) and
 * update-ended/alarm (UIE/AIE) interrupts come from event-loop timers,
 * armed only while the guest enables them; reading register C clears the
 * flags and lowers the line. The other 114 bytes are plain CMOS memory
 * that the board fills with what firmware expects (memory sizes...). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/timer/rtc.h"
#include "state/state.h"

#define CMOS_SIZE 128
#define REG_SEC 0x00
#define REG_SEC_ALARM 0x01
#define REG_MIN 0x02
#define REG_MIN_ALARM 0x03
#define REG_HOUR 0x04
#define REG_HOUR_ALARM 0x05
#define REG_WDAY 0x06
#define REG_MDAY 0x07
#define REG_MON 0x08
#define REG_YEAR 0x09
#define REG_A 0x0a
#define REG_B 0x0b
#define REG_C 0x0c
#define REG_D 0x0d
#define REG_CENTURY 0x32

#define A_UIP 0x80
#define A_DV_MASK 0x70
#define A_DV_NORMAL 0x20
#define B_SET 0x80
#define B_PIE 0x40
#define B_AIE 0x20
#define B_UIE 0x10
#define B_DM_BINARY 0x04
#define B_24H 0x02
#define C_IRQF 0x80
#define C_PF 0x40
#define C_AF 0x20
#define C_UF 0x10
#define D_VRT 0x80

#define UIP_WINDOW_NS 244000ull
#define NS 1000000000ull

struct rtc {
	struct dev_host *host;
	pthread_mutex_t lock;
	uint8_t cmos[CMOS_SIZE];
	uint8_t index;
	int64_t offset; /* guest seconds - host seconds */
	struct ev_timer *periodic, *second;
	bool irq_high;
	void (*alarm_fn)(void *opaque); /* ACPI wake source (rtc_set_alarm_fn) */
	void *alarm_opaque;
};

static int64_t host_now(uint64_t *frac_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (frac_ns)
		*frac_ns = (uint64_t)ts.tv_nsec;
	return ts.tv_sec;
}

static uint8_t to_bcd(const struct rtc *r, int v)
{
	if (r->cmos[REG_B] & B_DM_BINARY)
		return (uint8_t)v;
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

static int from_bcd(const struct rtc *r, uint8_t v)
{
	if (r->cmos[REG_B] & B_DM_BINARY)
		return v;
	return (v >> 4) * 10 + (v & 0x0f);
}

static uint8_t hour_reg(const struct rtc *r, int hour)
{
	int h12;

	if (r->cmos[REG_B] & B_24H)
		return to_bcd(r, hour);
	h12 = hour % 12 ? hour % 12 : 12;
	return to_bcd(r, h12) | (hour >= 12 ? 0x80 : 0);
}

static int hour_from_reg(const struct rtc *r, uint8_t v)
{
	int h;

	if (r->cmos[REG_B] & B_24H)
		return from_bcd(r, v);
	h = from_bcd(r, v & 0x7f) % 12;
	return v & 0x80 ? h + 12 : h;
}

/* Write the current guest time into the time registers. */
static void latch_time(struct rtc *r)
{
	time_t t = (time_t)(host_now(NULL) + r->offset);
	struct tm tm;

	gmtime_r(&t, &tm);
	r->cmos[REG_SEC] = to_bcd(r, tm.tm_sec);
	r->cmos[REG_MIN] = to_bcd(r, tm.tm_min);
	r->cmos[REG_HOUR] = hour_reg(r, tm.tm_hour);
	r->cmos[REG_WDAY] = to_bcd(r, tm.tm_wday + 1);
	r->cmos[REG_MDAY] = to_bcd(r, tm.tm_mday);
	r->cmos[REG_MON] = to_bcd(r, tm.tm_mon + 1);
	r->cmos[REG_YEAR] = to_bcd(r, tm.tm_year % 100);
	r->cmos[REG_CENTURY] = to_bcd(r, (tm.tm_year + 1900) / 100);
}

/* The guest set the clock: derive the offset from the registers. */
static void take_time(struct rtc *r)
{
	struct tm tm = {0};
	int century = from_bcd(r, r->cmos[REG_CENTURY]);

	tm.tm_sec = from_bcd(r, r->cmos[REG_SEC]);
	tm.tm_min = from_bcd(r, r->cmos[REG_MIN]);
	tm.tm_hour = hour_from_reg(r, r->cmos[REG_HOUR]);
	tm.tm_mday = from_bcd(r, r->cmos[REG_MDAY]);
	tm.tm_mon = from_bcd(r, r->cmos[REG_MON]) - 1;
	if (century < 19 || century > 99)
		century = 20;
	tm.tm_year = century * 100 + from_bcd(r, r->cmos[REG_YEAR]) - 1900;
	r->offset = (int64_t)timegm(&tm) - host_now(NULL);
}

static bool is_time_reg(unsigned idx)
{
	return idx <= REG_YEAR || idx == REG_CENTURY;
}

static void update_irq(struct rtc *r)
{
	uint8_t b = r->cmos[REG_B], c = r->cmos[REG_C] & (C_PF | C_AF | C_UF);
	bool want = (c & C_PF && b & B_PIE) || (c & C_AF && b & B_AIE) || (c & C_UF && b & B_UIE);

	if (want)
		r->cmos[REG_C] |= C_IRQF;
	if (want && !r->irq_high) {
		r->irq_high = true;
		r->host->irq.set_level(r->host->irq.opaque, RTC_IRQ, true);
	} else if (!want && r->irq_high) {
		r->irq_high = false;
		r->host->irq.set_level(r->host->irq.opaque, RTC_IRQ, false);
	}
}

/* Period of the periodic interrupt for rate select rs (1-15), in ns. */
static uint64_t period_ns(unsigned rs)
{
	if (rs == 0)
		return 0;
	if (rs <= 2)
		rs += 7; /* 256 Hz and 128 Hz, as the 32.768 kHz time base gives */
	return ((uint64_t)1 << (rs - 1)) * NS / 32768;
}

static void rearm_timers(struct rtc *r)
{
	uint8_t a = r->cmos[REG_A], b = r->cmos[REG_B];
	bool running = (a & A_DV_MASK) == A_DV_NORMAL;
	uint64_t p = period_ns(a & 0x0f);
	uint64_t frac;

	if (r->periodic) {
		if (running && b & B_PIE && p)
			ev_timer_arm(r->periodic, p, p);
		else
			ev_timer_disarm(r->periodic);
	}
	if (r->second) {
		if (running && !(b & B_SET) && b & (B_UIE | B_AIE)) {
			host_now(&frac);
			ev_timer_arm(r->second, NS - frac, NS);
		} else {
			ev_timer_disarm(r->second);
		}
	}
}

static void periodic_tick(void *opaque)
{
	struct rtc *r = opaque;

	pthread_mutex_lock(&r->lock);
	r->cmos[REG_C] |= C_PF;
	update_irq(r);
	pthread_mutex_unlock(&r->lock);
}

static bool alarm_matches(struct rtc *r)
{
	static const uint8_t pairs[3][2] = {
		{REG_SEC_ALARM, REG_SEC}, {REG_MIN_ALARM, REG_MIN}, {REG_HOUR_ALARM, REG_HOUR}};

	for (unsigned i = 0; i < 3; i++) {
		uint8_t want = r->cmos[pairs[i][0]];

		/* 0xc0-0xff is "don't care" */
		if ((want & 0xc0) != 0xc0 && want != r->cmos[pairs[i][1]])
			return false;
	}
	return true;
}

static void second_tick(void *opaque)
{
	struct rtc *r = opaque;
	bool alarm;

	pthread_mutex_lock(&r->lock);
	latch_time(r);
	r->cmos[REG_C] |= C_UF;
	alarm = alarm_matches(r);
	if (alarm)
		r->cmos[REG_C] |= C_AF;
	update_irq(r);
	pthread_mutex_unlock(&r->lock);
	if (alarm && (r->cmos[REG_B] & B_AIE) && r->alarm_fn)
		r->alarm_fn(r->alarm_opaque);
}

void rtc_set_alarm_fn(struct rtc *r, void (*fn)(void *opaque), void *opaque)
{
	pthread_mutex_lock(&r->lock);
	r->alarm_fn = fn;
	r->alarm_opaque = opaque;
	pthread_mutex_unlock(&r->lock);
}

static uint8_t reg_read(struct rtc *r, unsigned idx)
{
	uint64_t frac;
	uint8_t v;

	switch (idx) {
	case REG_A:
		v = r->cmos[REG_A] & ~A_UIP;
		host_now(&frac);
		if ((v & A_DV_MASK) == A_DV_NORMAL && !(r->cmos[REG_B] & B_SET) &&
		    frac >= NS - UIP_WINDOW_NS)
			v |= A_UIP;
		return v;
	case REG_C:
		v = r->cmos[REG_C];
		r->cmos[REG_C] = 0;
		update_irq(r);
		return v;
	case REG_D:
		return D_VRT;
	default:
		if (is_time_reg(idx) && !(r->cmos[REG_B] & B_SET))
			latch_time(r);
		return r->cmos[idx];
	}
}

static void reg_write(struct rtc *r, unsigned idx, uint8_t v)
{
	uint8_t old_b = r->cmos[REG_B];

	switch (idx) {
	case REG_A:
		r->cmos[REG_A] = v & ~A_UIP;
		rearm_timers(r);
		break;
	case REG_B:
		if (v & B_SET && !(old_b & B_SET))
			latch_time(r); /* freeze the registers at the current time */
		if (v & B_SET)
			v &= ~B_UIE; /* SET clears UIE */
		r->cmos[REG_B] = v;
		if (old_b & B_SET && !(v & B_SET))
			take_time(r);
		rearm_timers(r);
		update_irq(r);
		break;
	case REG_C:
	case REG_D:
		break; /* read-only */
	default:
		if (is_time_reg(idx) && !(r->cmos[REG_B] & B_SET))
			latch_time(r);
		r->cmos[idx] = v;
		if (is_time_reg(idx) && !(r->cmos[REG_B] & B_SET))
			take_time(r);
		break;
	}
}

static void rtc_io_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct rtc *r = opaque;
	uint8_t v;

	pthread_mutex_lock(&r->lock);
	v = off == 0 ? r->index : reg_read(r, r->index);
	pthread_mutex_unlock(&r->lock);
	io_data_put(data, size, v);
}

static void rtc_io_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct rtc *r = opaque;
	uint8_t v = (uint8_t)io_data_get(data, 1);

	pthread_mutex_lock(&r->lock);
	if (off == 0)
		r->index = v & 0x7f; /* bit 7 masks NMI, which we do not raise */
	else
		reg_write(r, r->index, v);
	pthread_mutex_unlock(&r->lock);
}

static const struct io_ops rtc_ops = {rtc_io_read, rtc_io_write};

static void rtc_reset(void *opaque)
{
	struct rtc *r = opaque;

	pthread_mutex_lock(&r->lock);
	/* reset clears the interrupt enables and flags, not the clock */
	r->cmos[REG_B] &= ~(B_PIE | B_AIE | B_UIE);
	r->cmos[REG_C] = 0;
	update_irq(r);
	rearm_timers(r);
	pthread_mutex_unlock(&r->lock);
}

struct rtc *rtc_new(struct dev_host *host)
{
	struct rtc *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->host = host;
	pthread_mutex_init(&r->lock, NULL);
	r->cmos[REG_A] = A_DV_NORMAL | 0x06; /* 1024 Hz */
	r->cmos[REG_B] = B_24H;
	r->cmos[REG_D] = D_VRT;
	if (host->loop) {
		r->periodic = ev_timer_new(host->loop, periodic_tick, r);
		r->second = ev_timer_new(host->loop, second_tick, r);
	}
	if (iobus_register(host->pio, 0x70, 2, &rtc_ops, r, "rtc")) {
		rtc_free(r);
		return NULL;
	}
	dev_on_reset(host, rtc_reset, r);
	return r;
}

void rtc_free(struct rtc *r)
{
	if (!r)
		return;
	iobus_unregister(r->host->pio, 0x70);
	if (r->periodic)
		ev_timer_free(r->periodic);
	if (r->second)
		ev_timer_free(r->second);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void rtc_cmos_set(struct rtc *r, unsigned index, uint8_t val)
{
	if (index >= CMOS_SIZE)
		return;
	pthread_mutex_lock(&r->lock);
	r->cmos[index] = val;
	pthread_mutex_unlock(&r->lock);
}

uint8_t rtc_cmos_get(struct rtc *r, unsigned index)
{
	uint8_t v;

	if (index >= CMOS_SIZE)
		return 0xff;
	pthread_mutex_lock(&r->lock);
	v = reg_read(r, index);
	pthread_mutex_unlock(&r->lock);
	return v;
}

static void put16(struct rtc *r, unsigned lo, uint64_t v)
{
	if (v > 0xffff)
		v = 0xffff;
	r->cmos[lo] = (uint8_t)v;
	r->cmos[lo + 1] = (uint8_t)(v >> 8);
}

void rtc_set_pc_config(struct rtc *r, uint64_t ram_below_4g, uint64_t ram_above_4g,
		       unsigned ncpus)
{
	const uint64_t mib = 1 << 20;
	uint64_t ext_kib = ram_below_4g > mib ? (ram_below_4g - mib) / 1024 : 0;
	uint64_t over16 = ram_below_4g > 16 * mib ? (ram_below_4g - 16 * mib) >> 16 : 0;
	uint64_t over4g = ram_above_4g >> 16;

	pthread_mutex_lock(&r->lock);
	put16(r, 0x15, 640);	     /* base memory, KiB */
	put16(r, 0x17, ext_kib);     /* extended memory, KiB */
	put16(r, 0x30, ext_kib);     /* same, as POST reports it */
	put16(r, 0x34, over16);	     /* above 16 MiB, 64 KiB units */
	r->cmos[0x5b] = (uint8_t)over4g; /* above 4 GiB, 64 KiB units */
	r->cmos[0x5c] = (uint8_t)(over4g >> 8);
	r->cmos[0x5d] = (uint8_t)(over4g >> 16);
	r->cmos[0x5f] = (uint8_t)(ncpus ? ncpus - 1 : 0);
	r->cmos[0x10] = 0;    /* no floppy drives */
	r->cmos[0x14] = 0x06; /* equipment: FPU, PS/2 mouse, VGA-class display */
	pthread_mutex_unlock(&r->lock);
}

/* ------------------------------------------------------------ snapshot */

/* The layout of the node; bump when a property changes. */
#define RTC_STATE_VERSION 1
#define RTC_STATE_NODE "rtc@70"
/* Far beyond any clock the guest can set (years 1900-9999), and small
 * enough that host time plus offset neither overflows nor leaves gmtime. */
#define RTC_MAX_OFFSET (1ll << 40)

void rtc_save(struct rtc *r, struct state_writer *w)
{
	pthread_mutex_lock(&r->lock);
	state_begin(w, RTC_STATE_NODE, RTC_STATE_VERSION);
	state_put_bytes(w, "cmos", r->cmos, sizeof(r->cmos));
	state_put_u8(w, "index", r->index);
	state_put_u64(w, "offset", (uint64_t)r->offset);
	state_end(w);
	pthread_mutex_unlock(&r->lock);
}

int rtc_load(struct rtc *r, const struct state_reader *rd, char *err, size_t errlen)
{
	uint8_t cmos[CMOS_SIZE], index = 0;
	uint64_t offset = 0;
	struct state_node n;

	if (state_node_open(&n, rd, RTC_STATE_NODE, RTC_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_bytes(&n, "cmos", cmos, sizeof(cmos)) ||
	    state_get_u8_max(&n, "index", CMOS_SIZE - 1, &index) ||
	    state_get_u64(&n, "offset", &offset))
		return -1;
	if ((int64_t)offset > RTC_MAX_OFFSET || (int64_t)offset < -RTC_MAX_OFFSET)
		return state_node_fail(&n, "clock offset %lld s is out of range",
				       (long long)(int64_t)offset);
	if (state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&r->lock);
	memcpy(r->cmos, cmos, sizeof(cmos));
	r->index = index;
	r->offset = (int64_t)offset;
	rearm_timers(r);
	update_irq(r);
	pthread_mutex_unlock(&r->lock);
	return 0;
}
