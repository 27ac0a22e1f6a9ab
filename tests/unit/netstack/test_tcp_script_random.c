/* test_tcp_script_random.c — randomized segment-script TCP tests (see
 * tcpscript.h) on virtual time, from fixed seeds: the peer as a go-back-N
 * sender into small and scaled receive buffers (the window edge never
 * moves left, every byte read is right), and bulk sends through a peer
 * that drops, reorders and duplicates, with SACK and with NewReno. Separate
 * from the one-behaviour-per-test suites (test_tcp_script_data.c,
 * test_tcp_script_loss.c) because these explore, rather than pin down. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_suite.h"

/* -------------------------------------------- randomized receive side */

static uint64_t prng; /* the pseudo-random generators' state */

static uint32_t rnd_below(uint32_t n)
{
	prng = prng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((prng >> 33) % n);
}

/* The peer as a simple go-back-N sender (segments of random size inside
 * the advertised window, some skipped to make holes, some sent twice;
 * back to the cumulative ACK on 3 duplicates or 200 ms of silence, a
 * zero-window probe when the window is closed); the application reads
 * random amounts at random moments. Every ACK must keep the right window
 * edge from moving left (RFC 9293 3.8.6, SHLD-14; by less than the scale
 * granularity is rounding, RFC 7323 2.4) and never acknowledge
 * more than was sent; every byte read must be right. */
static void random_receive(uint32_t total, int rcvbuf, uint64_t seed)
{
	struct ns_sock *l = ts_stream(t), *s;
	uint32_t nxt = 1, sent = 1, acked = 1, right, ws, rd = 1, dups = 0;
	uint64_t start, quiet_since;
	static uint8_t buf[8192];

	prng = seed;
	ck_assert_int_eq(ns_setsockopt(l, NS_SO_RCVBUF, rcvbuf), 0);
	ts_bind_listen(t, l, 80, 4);
	ts_new_conn(t, 80, 40000);
	t->ts_base_us = ns_clock_now(t->clk);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460,sackOK,TS val * ecr 100,wscale *>");
	ws = t->last.ws;
	right = 1 + t->last.win; /* a SYN's window is never scaled (RFC 7323 2.2) */
	t->auto_ts = true;
	TS_IN(t, ". 1:1(0) ack 1 win 1024");
	s = ts_accept(t, l);
	start = quiet_since = ns_clock_now(t->clk);
	while (rd < total + 1) {
		struct ts_frame *f;
		struct ts_seg g;
		char why[128];

		/* the peer sends what the window allows */
		while (nxt < total + 1 && nxt < right && t->qlen < 64) {
			uint32_t len = 1 + rnd_below(1448);

			len = len < right - nxt ? len : right - nxt;
			len = len < total + 1 - nxt ? len : total + 1 - nxt;
			if (rnd_below(100) >= 3) /* 3 %: "lost" on the way */
				TS_IN(t, ". %u:%u(%u) ack 1", nxt, nxt + len, len);
			if (rnd_below(100) < 2)
				TS_IN(t, ". %u:%u(%u) ack 1", nxt, nxt + len, len);
			nxt += len;
			sent = nxt > sent ? nxt : sent;
		}
		/* the application reads now and then */
		if (rnd_below(100) < 30) {
			ssize_t n = ns_recv(s, buf, 1 + rnd_below(sizeof(buf)), 0);
			ssize_t bad = n;

			for (ssize_t i = 0; i < n && bad == n; i++)
				if (buf[i] != ts_pattern(rd + (uint32_t)i))
					bad = i;
			ck_assert_msg(bad == n, "read byte %u wrong", rd + (uint32_t)bad);
			if (n > 0)
				rd += (uint32_t)n;
			else
				ck_assert_int_eq(n, -EAGAIN);
		}
		/* the stack's answers */
		while ((f = ts_pop(t))) {
			uint32_t edge;

			ck_assert_msg(ts_decode(t, f->data, f->len, &g, why, sizeof(why)), "%s",
				      why);
			free(f);
			ck_assert(g.flags & TH_ACK);
			ck_assert_uint_le(g.ack, sent);
			edge = g.ack + ((uint32_t)g.win << ws);
			/* less than the scale's granularity is rounding (RFC 7323 2.4) */
			ck_assert_msg(edge + (1u << ws) > right, "window edge moved left: %u -> %u",
				      right, edge);
			right = edge > right ? edge : right;
			dups = g.ack == acked ? dups + 1 : 0;
			if (g.ack > acked) {
				acked = g.ack;
				quiet_since = ns_clock_now(t->clk);
			}
			if (dups >= 3) { /* go back N */
				nxt = acked;
				dups = 0;
			}
		}
		ts_wait(t, 1 + rnd_below(20));
		if (ns_clock_now(t->clk) - quiet_since > 200000) {
			if (acked == right) /* zero window: probe */
				TS_IN(t, ". %u:%u(0) ack 1", acked, acked);
			nxt = acked;
			quiet_since = ns_clock_now(t->clk);
		}
		ck_assert_msg(ns_clock_now(t->clk) - start < 600 * 1000000ull,
			      "stalled: read %u, acked %u of %u", rd - 1, acked - 1, total);
	}
	ck_assert_uint_eq(ts_stats(t).ooo_mem, 0);
	ns_close(s);
	ns_close(l);
}

START_TEST(test_random_receive_small_buffer)
{
	random_receive(1 << 20, 16384, 11);
}
END_TEST

START_TEST(test_random_receive_scaled_buffer)
{
	random_receive(4 << 20, 1 << 20, 12);
}
END_TEST

/* ------------------------------------------------ randomized transfers */

/* The peer's receive state: in order up to nxt, then disjoint ranges. */
struct peer_rx {
	uint32_t nxt;
	uint32_t r[64][2];
	unsigned n;
};

static void rx_absorb(struct peer_rx *p)
{
	unsigned k = 0;

	while (k < p->n && p->r[k][0] <= p->nxt) {
		if (p->r[k][1] > p->nxt)
			p->nxt = p->r[k][1];
		k++;
	}
	memmove(p->r, p->r + k, (p->n - k) * sizeof(p->r[0]));
	p->n -= k;
}

/* Record [a, b); returns the index of the range now holding it, or -1
 * when it is in order. */
static int rx_add(struct peer_rx *p, uint32_t a, uint32_t b)
{
	unsigned i = 0, j;

	if (a <= p->nxt) {
		if (b > p->nxt)
			p->nxt = b;
		rx_absorb(p);
		return -1;
	}
	while (i < p->n && p->r[i][1] < a)
		i++;
	if (i < p->n && p->r[i][0] <= b) { /* overlaps or touches range i */
		if (a < p->r[i][0])
			p->r[i][0] = a;
		if (b > p->r[i][1])
			p->r[i][1] = b;
		for (j = i + 1; j < p->n && p->r[j][0] <= p->r[i][1]; j++)
			if (p->r[j][1] > p->r[i][1])
				p->r[i][1] = p->r[j][1];
		memmove(p->r + i + 1, p->r + j, (p->n - j) * sizeof(p->r[0]));
		p->n -= j - i - 1;
		return (int)i;
	}
	ck_assert_uint_lt(p->n, 64);
	memmove(p->r + i + 1, p->r + i, (p->n - i) * sizeof(p->r[0]));
	p->r[i][0] = a;
	p->r[i][1] = b;
	p->n++;
	return (int)i;
}

/* The peer's ACK: cumulative, with up to 3 SACK blocks (the one just
 * changed first, then the highest others, RFC 2018 4). */
static void peer_ack(const struct peer_rx *p, int latest, bool sack)
{
	char opts[256];
	uint32_t tsval = 100 + (uint32_t)((ns_clock_now(t->clk) - t->ts_base_us) / 1000);
	int n = snprintf(opts, sizeof(opts), "nop,nop,TS val %u ecr *", tsval);
	unsigned blocks = 0;

	if (sack && p->n) {
		n += snprintf(opts + n, sizeof(opts) - (size_t)n, ",nop,nop,sack");
		if (latest >= 0) {
			n += snprintf(opts + n, sizeof(opts) - (size_t)n, " %u:%u", p->r[latest][0],
				      p->r[latest][1]);
			blocks++;
		}
		for (int k = (int)p->n - 1; k >= 0 && blocks < 3; k--)
			if (k != latest) {
				n += snprintf(opts + n, sizeof(opts) - (size_t)n, " %u:%u",
					      p->r[k][0], p->r[k][1]);
				blocks++;
			}
	}
	TS_IN(t, ". 1:1(0) ack %u <%s>", p->nxt, opts);
}

struct impair {
	unsigned loss, reorder, dup; /* per mille */
	bool sack;
	uint64_t seed;
};

static unsigned per_mille(void)
{
	prng = prng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((prng >> 33) % 1000);
}

/* Send `total` bytes through a peer that drops, holds back (reorders) and
 * duplicates data segments; every byte must arrive intact, in bounded
 * virtual time. */
static void random_transfer(const struct impair *im, uint32_t total, uint64_t max_s)
{
	struct ns_sock *s = im->sack ? ts_passive_open(t, 80, NULL)
				     : ts_passive_open_with(t, 80, NULL, NO_SACK);
	struct peer_rx p = {.nxt = 1};
	uint64_t start = ns_clock_now(t->clk), deadline = start + max_s * 1000000;
	uint32_t written = 0, held_a = 0, held_b = 0;
	unsigned segs = 0, dropped = 0;

	prng = im->seed;
	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_USER_TIMEOUT, 0), 0);
	while (p.nxt < total + 1) {
		struct ts_frame *f;
		struct ts_seg g;
		char why[128];
		uint32_t bad;
		int latest;

		while (written < total) {
			ssize_t n =
				ts_send(t, s, total - written < 65536 ? total - written : 65536);

			if (n <= 0)
				break;
			written += (uint32_t)n;
		}
		ck_assert_msg(t->qhead || ts_run_until_output(t, deadline),
			      "stalled at %u of %u bytes", p.nxt - 1, total);
		f = ts_pop(t);
		ck_assert_msg(ts_decode(t, f->data, f->len, &g, why, sizeof(why)), "%s", why);
		bad = g.len;
		for (uint32_t i = 0; i < g.len && bad == g.len; i++)
			if (g.payload[i] != ts_pattern(g.seq + i))
				bad = i;
		free(f);
		/* (one libcheck assertion per segment: each costs a syscall) */
		ck_assert_msg(bad == g.len, "wrong byte at seq %u", g.seq + bad);
		if (!g.len)
			continue;
		segs++;
		if (per_mille() < im->loss) {
			dropped++;
			continue;
		}
		if (!held_b && per_mille() < im->reorder) {
			held_a = g.seq;
			held_b = g.seq + g.len;
			continue;
		}
		latest = rx_add(&p, g.seq, g.seq + g.len);
		peer_ack(&p, latest, im->sack);
		if (per_mille() < im->dup)
			peer_ack(&p, rx_add(&p, g.seq, g.seq + g.len), im->sack);
		if (held_b) {
			peer_ack(&p, rx_add(&p, held_a, held_b), im->sack);
			held_b = 0;
		}
	}
	ck_assert_uint_eq(p.nxt, total + 1);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_uint_lt(ns_clock_now(t->clk) - start, max_s * 1000000);
	ck_assert_uint_ge(segs, total / SMSS);
	if (im->loss)
		ck_assert_uint_gt(dropped, 0);
	ns_close(s);
}

START_TEST(test_random_loss_sack)
{
	random_transfer(&(struct impair){.loss = 50, .sack = true, .seed = 1}, 2 << 20, 120);
}
END_TEST

START_TEST(test_random_loss_newreno)
{
	random_transfer(&(struct impair){.loss = 50, .seed = 2}, 2 << 20, 120);
}
END_TEST

START_TEST(test_random_reorder_dup_sack)
{
	random_transfer(
		&(struct impair){.loss = 10, .reorder = 50, .dup = 20, .sack = true, .seed = 3},
		2 << 20, 120);
}
END_TEST

START_TEST(test_random_reorder_dup_newreno)
{
	random_transfer(&(struct impair){.loss = 10, .reorder = 50, .dup = 20, .seed = 4}, 2 << 20,
			120);
}
END_TEST

/* Tests failing on an engine bug (entry named in the comment, in
 * /work/notes/bugs/tcp-core.md); moved to cases[] once fixed. */
static const struct ts_case pending_cases[] = {
	{NULL}, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE(test_random_receive_small_buffer),
	TS_CASE(test_random_receive_scaled_buffer),
	TS_CASE(test_random_loss_sack),
	TS_CASE(test_random_loss_newreno),
	TS_CASE(test_random_reorder_dup_sack),
	TS_CASE(test_random_reorder_dup_newreno),
};

TS_MAIN("netstack_tcp_script_random", cases, pending_cases, setup, teardown, 60)
