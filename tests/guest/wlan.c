/* wlan.elf — the kit's virtual WLAN test: two mac80211_hwsim radios' worth
 * of hand-built generic-netlink messages on the first virtio-wlan-pci
 * device (1af4:105d), under a medium of country DE
 * (tests/integration/wlan-kit.sh):
 *
 *   radio A (42:00:00:00:00:00) sends; radio B (42:00:00:00:01:00) first
 *   announces its interface address 02:00:00:00:01:00 (ADD_MAC_ADDR).
 *   1. unicast data A->B on 5180 MHz: B gets the frame, A an ACK
 *   2. a beacon on 5180: B gets it, A's status has no ACK (broadcast)
 *   3. data on 5900 MHz (no rule), a probe request on 5500 (DFS: passive
 *      only), 80 MHz at 2442 (wider than the rule): only a status back,
 *      no ACK, nothing for B
 *   4. two malformed messages: nothing back; then 1. works again
 *   prints "wlan: phase 1 passed", then sends a beacon on 5180 every 20 ms
 *   until one is dropped (the host switches the country to 00, where 5180
 *   is NO-IR), checks data still flows there, prints "wlan: all checks
 *   passed" and waits for the host to quit. A failed check prints
 *   "wlan: FAIL ..." and exits 1.
 *
 * bench=N instead: N unicast frames A->B on 5180 MHz, up to QSIZE/2
 * awaiting their status, every one answered (frame for B, status for A); prints
 * "wlan-bench: N frames in T us" and exits 0 (bench/wlan-medium.sh runs it
 * with enforcement on and off).
 *
 * The netlink encoding here is written independently of the medium's
 * (wlan/hwsim_msg.c), so a shared mistake cannot hide.
 */
#include "virtio.h"

#define QSIZE 32
#define RX_BUF 1024
#define NLMSG_HDR 16
#define GENL_HDR 4
#define FAMILY 0x1d /* any id: the medium answers with the guest's */

enum { CMD_FRAME = 2, CMD_TX_INFO = 3, CMD_ADD_MAC = 7 };
enum {
	A_RECEIVER = 1,
	A_TRANSMITTER = 2,
	A_FRAME = 3,
	A_FLAGS = 4,
	A_RX_RATE = 5,
	A_SIGNAL = 6,
	A_TX_INFO = 7,
	A_COOKIE = 8,
	A_FREQ = 19,
	A_TX_INFO_FLAGS = 21,
};
#define STAT_ACK 4
#define REQ_TX_STATUS 1
#define RC_80_MHZ (1u << 9)

static const uint8_t HW_A[6] = {0x42, 0, 0, 0, 0, 0}, PERM_A[6] = {0x02, 0, 0, 0, 0, 0};
static const uint8_t HW_B[6] = {0x42, 0, 0, 0, 1, 0}, PERM_B[6] = {0x02, 0, 0, 0, 1, 0};
static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static struct vdev dev;
static struct vq txq, rxq;
static uint8_t rx_bufs[QSIZE][RX_BUF] __attribute__((aligned(64)));
static uint8_t tx_buf[512] __attribute__((aligned(64)));
static uint64_t tsc_hz;

/* What came back: the last messages, parsed. */
struct reply {
	uint8_t cmd;
	const uint8_t *rx, *tx;
	uint32_t flags, freq, signal, frame_len;
	uint64_t cookie;
	uint8_t raw[RX_BUF];
};
static struct reply replies[8];
static unsigned n_replies;

__attribute__((noreturn)) static void fail(const char *what, unsigned v)
{
	printf("wlan: FAIL %s (%x)\n", what, v);
	guest_exit(1);
}

/* ------------------------------------------------------------ encoding */

struct msg {
	uint8_t *b;
	uint32_t len;
};

static void put(struct msg *m, uint16_t type, const void *p, uint16_t n)
{
	uint16_t alen = 4 + n;

	memcpy(m->b + m->len, &alen, 2);
	memcpy(m->b + m->len + 2, &type, 2);
	memcpy(m->b + m->len + 4, p, n);
	m->len += (alen + 3u) & ~3u;
}

static void put32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, 4);
}

static struct msg begin(uint8_t cmd)
{
	struct msg m = {tx_buf, NLMSG_HDR + GENL_HDR};

	memset(tx_buf, 0, sizeof(tx_buf));
	tx_buf[NLMSG_HDR] = cmd;
	return m;
}

static uint32_t end(struct msg *m)
{
	uint16_t type = FAMILY;

	memcpy(m->b, &m->len, 4);
	memcpy(m->b + 4, &type, 2);
	return m->len;
}

/* ------------------------------------------------------------ the rings */

static void send_raw(uint32_t len)
{
	struct vq_buf b = {tx_buf, len, false};
	/* generous: on a loaded test host vmm's I/O thread may wait its turn */
	uint64_t limit = rdtsc() + 20 * tsc_hz;
	uint32_t used;

	if (!vq_add(&txq, &b, 1, tx_buf))
		fail("tx queue full", 0);
	vq_kick(&txq);
	while (!vq_get_used(&txq, &used))
		if (rdtsc() > limit)
			fail("tx buffer never used", 0);
}

static void rx_post(unsigned i)
{
	struct vq_buf b = {rx_bufs[i], RX_BUF, true};

	if (!vq_add(&rxq, &b, 1, rx_bufs[i]))
		fail("rx queue full", i);
}

static void parse_reply(struct reply *r, uint32_t len)
{
	uint32_t off = NLMSG_HDR + GENL_HDR;

	r->cmd = r->raw[NLMSG_HDR];
	while (off + 4 <= len) {
		uint16_t alen, type;
		const uint8_t *p = r->raw + off + 4;

		memcpy(&alen, r->raw + off, 2);
		memcpy(&type, r->raw + off + 2, 2);
		if (alen < 4 || off + alen > len)
			fail("malformed message from the device", off);
		if (type == A_RECEIVER)
			r->rx = p;
		else if (type == A_TRANSMITTER)
			r->tx = p;
		else if (type == A_FLAGS)
			memcpy(&r->flags, p, 4);
		else if (type == A_FREQ)
			memcpy(&r->freq, p, 4);
		else if (type == A_SIGNAL)
			memcpy(&r->signal, p, 4);
		else if (type == A_COOKIE)
			memcpy(&r->cookie, p, 8);
		else if (type == A_FRAME)
			r->frame_len = alen - 4u;
		off += (alen + 3u) & ~3u;
	}
}

static const struct reply *find(uint8_t cmd)
{
	for (unsigned i = 0; i < n_replies; i++)
		if (replies[i].cmd == cmd)
			return &replies[i];
	return NULL;
}

/* Collect replies until want arrived, then listen ms more for extras.
 * Every frame sent asks for a status, so with want > 0 the quiet window
 * starts only once the TX_INFO_FRAME is in: on a loaded host it can come
 * long after the delivered copy. */
static void collect(unsigned want, unsigned quiet_ms)
{
	uint64_t limit = rdtsc() + 20 * tsc_hz, quiet = 0;

	n_replies = 0;
	for (;;) {
		uint32_t len;
		uint8_t *buf = vq_get_used(&rxq, &len);

		if (buf) {
			if (n_replies == 8 || len > RX_BUF)
				fail("too many or too long replies", len);
			struct reply *r = &replies[n_replies++];

			memset(r, 0, sizeof(*r));
			memcpy(r->raw, buf, len);
			parse_reply(r, len);
			rx_post((unsigned)((buf - rx_bufs[0]) / RX_BUF));
			vq_kick(&rxq);
			continue;
		}
		if (n_replies >= want && !quiet && (!want || find(CMD_TX_INFO)))
			quiet = rdtsc() + tsc_hz / 1000 * quiet_ms;
		if ((quiet && rdtsc() > quiet) || rdtsc() > limit)
			return;
		cpu_relax();
	}
}

/* ------------------------------------------------------------- radios */

static void add_mac(const uint8_t *hw, const uint8_t *vif)
{
	struct msg m = begin(CMD_ADD_MAC);

	put(&m, A_TRANSMITTER, hw, 6);
	put(&m, A_RECEIVER, vif, 6);
	send_raw(end(&m));
}

/* One frame from radio A: 802.11 header with frame control fc0. */
static uint32_t build_frame(uint8_t fc0, const uint8_t *to, uint32_t freq, uint16_t rc_flags,
			    uint64_t cookie)
{
	uint8_t f[32] = {fc0};
	uint8_t info[8] = {0, 1, 0xff, 0, 0xff, 0, 0xff, 0}, rflags[12] = {0};
	struct msg m = begin(CMD_FRAME);

	memcpy(f + 4, to, 6);
	memcpy(f + 10, PERM_A, 6);
	memcpy(f + 16, PERM_A, 6);
	memcpy(rflags + 1, &rc_flags, 2);
	put(&m, A_TRANSMITTER, HW_A, 6);
	put(&m, A_FRAME, f, sizeof(f));
	put32(&m, A_FLAGS, REQ_TX_STATUS);
	put32(&m, A_FREQ, freq);
	put(&m, A_TX_INFO, info, 8);
	put(&m, A_TX_INFO_FLAGS, rflags, 12);
	put(&m, A_COOKIE, &cookie, 8);
	return end(&m);
}

static void send_frame(uint8_t fc0, const uint8_t *to, uint32_t freq, uint16_t rc, uint64_t c)
{
	send_raw(build_frame(fc0, to, freq, rc, c));
}

/* A's status for cookie: present, and acked as expected. */
static void expect_status(uint64_t cookie, bool acked)
{
	const struct reply *s = find(CMD_TX_INFO);

	if (!s || !s->tx || memcmp(s->tx, HW_A, 6))
		fail("no TX_INFO_FRAME for radio A; cookie", (unsigned)cookie);
	if (s->cookie != cookie)
		fail("TX_INFO_FRAME with the wrong cookie", (unsigned)s->cookie);
	if (!!(s->flags & STAT_ACK) != acked)
		fail(acked ? "no ACK; cookie" : "unexpected ACK; cookie", (unsigned)cookie);
}

static void expect_delivered(uint32_t freq)
{
	const struct reply *f = find(CMD_FRAME);

	if (!f || !f->rx || memcmp(f->rx, HW_B, 6))
		fail("no frame for radio B at", freq);
	if (f->freq != freq || f->frame_len != 32)
		fail("frame for B with the wrong frequency or length", f->freq);
	if ((int32_t)f->signal >= 0 || (int32_t)f->signal < -100)
		fail("implausible signal", f->signal);
}

static void unicast_acked(uint64_t cookie)
{
	send_frame(0x08, PERM_B, 5180, 0, cookie);
	collect(2, 20);
	expect_delivered(5180);
	expect_status(cookie, true);
	printf("wlan: unicast 5180 MHz delivered to B and acked (signal %d dBm)\n",
	       (int)(int32_t)find(CMD_FRAME)->signal);
}

static void forbidden(const char *what, uint8_t fc0, const uint8_t *to, uint32_t freq, uint16_t rc,
		      uint64_t cookie)
{
	send_frame(fc0, to, freq, rc, cookie);
	collect(1, 50);
	if (find(CMD_FRAME))
		fail("forbidden frame delivered at", freq);
	expect_status(cookie, false);
	printf("wlan: %s dropped\n", what);
}

static void malformed(void)
{
	uint32_t len = build_frame(0x08, PERM_B, 5180, 0, 50), big = 9999;

	memcpy(tx_buf, &big, 4); /* nlmsg_len beyond the buffer */
	send_raw(len);
	len = build_frame(0x08, PERM_B, 5180, 0, 51);
	tx_buf[NLMSG_HDR + GENL_HDR + 12] = 0xff; /* the frame attribute overruns */
	tx_buf[NLMSG_HDR + GENL_HDR + 13] = 0x01;
	send_raw(len);
	collect(0, 50);
	if (n_replies)
		fail("a reply to a malformed message", n_replies);
	printf("wlan: two malformed messages ignored\n");
}

static void phase1(void)
{
	add_mac(HW_B, PERM_B);
	unicast_acked(1);
	send_frame(0x80, BCAST, 5180, 0, 2);
	collect(2, 20);
	expect_delivered(5180);
	expect_status(2, false);
	printf("wlan: beacon 5180 MHz delivered to B\n");
	forbidden("data on 5900 MHz (no rule)", 0x08, PERM_B, 5900, 0, 3);
	forbidden("probe request on 5500 MHz (DFS)", 0x40, BCAST, 5500, 0, 4);
	forbidden("80 MHz at 2442 MHz (width)", 0x08, PERM_B, 2442, RC_80_MHZ, 5);
	malformed();
	unicast_acked(6);
	printf("wlan: phase 1 passed\n");
}

/* The host switches the country to 00: beacons on 5180 stop. */
static void phase2(void)
{
	uint64_t limit = rdtsc() + 120 * tsc_hz;

	for (uint64_t cookie = 100;; cookie++) {
		send_frame(0x80, BCAST, 5180, 0, cookie);
		collect(1, 20);
		expect_status(cookie, false);
		if (!find(CMD_FRAME))
			break;
		if (rdtsc() > limit)
			fail("beacons on 5180 MHz still delivered after 120 s", 0);
	}
	printf("wlan: beacon on 5180 MHz dropped after the country change\n");
	unicast_acked(1000); /* NO-IR stops beacons, not data */
}

/* Drain the receive ring, give the buffers back (and tell the device, which
 * may hold messages for want of buffers): how many TX statuses came back. */
static unsigned drain_rx(void)
{
	unsigned statuses = 0, reposted = 0;
	uint32_t len;
	uint8_t *buf;

	while ((buf = vq_get_used(&rxq, &len))) {
		statuses += buf[NLMSG_HDR] == CMD_TX_INFO;
		rx_post((unsigned)((buf - rx_bufs[0]) / RX_BUF));
		reposted++;
	}
	if (reposted)
		vq_kick(&rxq);
	return statuses;
}

static void bench(unsigned n)
{
	uint32_t len = build_frame(0x08, PERM_B, 5180, 0, 1), used;
	struct vq_buf b = {tx_buf, len, false};
	unsigned sent = 0, done = 0;
	uint64_t t0 = rdtsc(), limit = t0 + 60 * tsc_hz;

	while (done < n) {
		/* frames whose status is outstanding, not just those in the TX
		 * ring: the device's outbox is finite, as hwsim's pending queue */
		while (sent < n && sent - done < QSIZE / 2 && vq_add(&txq, &b, 1, tx_buf)) {
			sent++;
		}
		vq_kick(&txq);
		while (vq_get_used(&txq, &used))
			; /* the device has copied them: the buffer is reusable */
		done += drain_rx();
		if (rdtsc() > limit)
			fail("bench: replies missing after 60 s; got", done);
	}
	uint64_t us = (rdtsc() - t0) / (tsc_hz / 1000000);

	printf("wlan-bench: %u frames in %u us\n", n, (unsigned)us);
	guest_exit(0);
}

/* Ring 3: the kit's ring 0 is emulated instruction by instruction on some
 * hosts; ring 3 runs natively. */
__attribute__((noreturn)) static long run(void *arg)
{
	(void)arg;
	if (kit_cmdline_uint("bench", 0)) {
		add_mac(HW_B, PERM_B);
		bench((unsigned)kit_cmdline_uint("bench", 0));
	}
	phase1();
	phase2();
	printf("wlan: all checks passed\n");
	for (;;) /* until the host quits: no hlt in ring 3 */
		cpu_relax();
}

int guest_main(void)
{
	tsc_hz = kit_tsc_hz();
	if (!vdev_find(&dev, VIRTIO_ID_MAC80211_HWSIM, 0))
		fail("no virtio-wlan device", 0);
	if (!vdev_negotiate(&dev, 0))
		fail("feature negotiation", 0);
	if (!vq_init(&txq, &dev, 0, QSIZE) || !vq_init(&rxq, &dev, 1, QSIZE))
		fail("queue set-up", 0);
	vdev_ready(&dev);
	for (unsigned i = 0; i < QSIZE; i++)
		rx_post(i);
	vq_kick(&rxq);
	run_user(run, NULL);
	return 1;
}
