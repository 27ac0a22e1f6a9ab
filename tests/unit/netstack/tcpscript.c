/* tcpscript.c — the segment-script harness (see tcpscript.h): the capture
 * link, setup, virtual time, sockets, the standard handshakes and the suite
 * runner. The line parser is in tcpscript_parse.c, building, decoding and
 * matching segments in tcpscript_seg.c; tcpscript_ip.c has the IP layer. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"
#include "tests/unit/netstack/tcpscript_internal.h"

static const uint8_t local_mac[6] = {2, 0, 0, 0, 0, 1};
static const uint8_t peer_mac[6] = {2, 0, 0, 0, 0, 2};

/* --------------------------------------------------------- capture link */

static int cap_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tscript *t = l->priv;
	struct ts_frame *f = malloc(sizeof(*f) + len);

	ck_assert_ptr_nonnull(f);
	f->next = NULL;
	f->len = len;
	f->when_us = ns_clock_now(t->clk);
	memcpy(f->data, frame, len);
	if (t->qtail)
		t->qtail->next = f;
	else
		t->qhead = f;
	t->qtail = f;
	t->qlen++;
	return 0;
}

static const struct ns_link_ops cap_ops = {.transmit = cap_transmit};

struct ts_frame *ts_pop(struct tscript *t)
{
	struct ts_frame *f = t->qhead;

	if (f) {
		t->qhead = f->next;
		if (!t->qhead)
			t->qtail = NULL;
		t->qlen--;
	}
	return f;
}

unsigned ts_flush(struct tscript *t)
{
	unsigned n = 0;
	struct ts_frame *f;

	while ((f = ts_pop(t))) {
		free(f);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- setup */

struct tscript *ts_new(const struct ts_cfg *cfg)
{
	struct ts_cfg dflt = {0};
	struct tscript *t = calloc(1, sizeof(*t));
	struct ns_stack_cfg sc;

	ck_assert_ptr_nonnull(t);
	if (!cfg)
		cfg = &dflt;
	sc = cfg->stack;
	t->clk = ns_clock_virtual_new(1000000);
	sc.clock = t->clk;
	if (!sc.seed)
		sc.seed = 0x5eed;
	t->st = ns_stack_new(&sc);
	ck_assert_ptr_nonnull(t->st);
	t->v6 = cfg->ipv6 || ts_ipv6_default;
	t->link = ns_link_new(&cap_ops, t, ts_link_mtu(t->v6, cfg->mtu), local_mac, "cap0");
	ck_assert_ptr_nonnull(t->link);
	memcpy(t->local_mac, local_mac, 6);
	memcpy(t->peer_mac, peer_mac, 6);
	ts_add_addresses(t, cfg->if_flags);
	t->check_payload = true;
	ts_new_conn(t, 0, cfg->pport ? cfg->pport : 40000);
	return t;
}

void ts_free(struct tscript *t)
{
	if (!t)
		return;
	ns_stack_free(t->st);
	ns_link_destroy(t->link);
	ns_clock_free(t->clk);
	ts_flush(t);
	free(t);
}

void ts_new_conn(struct tscript *t, uint16_t lport, uint16_t pport)
{
	t->lport = lport;
	t->pport = pport;
	t->liss_known = false;
	t->liss = 0;
	t->piss = 0x10000000u + pport * 0x10001u;
	t->sent = 0;
	t->peer_win = 65535;
	t->auto_ts = false;
	t->last_tsval = 0;
}

struct ns_stats ts_stats(struct tscript *t)
{
	struct ns_stats s;

	ns_stack_stats(t->st, &s);
	return s;
}

/* ----------------------------------------------------------------- time */

/* Advance to the next timer or by at most limit_us; returns the step. */
static uint64_t step_time(struct tscript *t, uint64_t limit_us)
{
	uint64_t next = ns_stack_next_timer_us(t->st);
	uint64_t step = next < limit_us ? next : limit_us;

	ns_clock_advance(t->clk, step);
	ns_stack_poll(t->st);
	return step;
}

void ts_wait(struct tscript *t, uint64_t ms)
{
	uint64_t left = ms * 1000;
	unsigned spins = 0;

	ns_stack_poll(t->st);
	while (left) {
		uint64_t s = step_time(t, left);

		left -= s;
		/* A timer due "now" that never stops being due is a bug. */
		spins = s ? 0 : spins + 1;
		ck_assert_msg(spins < 10000, "a timer keeps firing without time passing");
	}
}

uint64_t ts_since_last_us(struct tscript *t)
{
	uint64_t ref = t->last_out_us > t->last_in_us ? t->last_out_us : t->last_in_us;

	return ns_clock_now(t->clk) - ref;
}

uint32_t ts_expect_segments(struct tscript *t, uint32_t from, unsigned n, uint32_t smss)
{
	for (unsigned i = 0; i < n; i++, from += smss)
		TS_OUT(t, ". %u:%u(%u) ack 1", from, from + smss, smss);
	return from;
}

bool ts_run_until_output(struct tscript *t, uint64_t deadline_us)
{
	uint64_t now = ns_clock_now(t->clk);
	unsigned spins = 0;

	ns_stack_poll(t->st);
	while (!t->qhead && now < deadline_us) {
		now += step_time(t, deadline_us - now);
		ck_assert_msg(++spins < 100000, "timers spin without time passing");
	}
	return t->qhead != NULL;
}

uint64_t ts_out_after_at(struct tscript *t, const char *file, int line, uint64_t min_ms,
			 uint64_t max_ms, const char *fmt, ...)
{
	char text[512];
	struct ts_ctx c = {file, line, text};
	uint64_t ref = t->last_out_us > t->last_in_us ? t->last_out_us : t->last_in_us;
	uint64_t el;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!ts_run_until_output(t, ref + max_ms * 1000))
		ts_fail_at(&c, "expected this within %llu ms, nothing was sent",
			   (unsigned long long)max_ms);
	el = (t->qhead->when_us - ref) / 1000;
	if (el < min_ms || (t->qhead->when_us - ref) > max_ms * 1000)
		ts_fail_at(&c, "sent after %.3f ms, expected %llu..%llu ms",
			   (double)(t->qhead->when_us - ref) / 1000, (unsigned long long)min_ms,
			   (unsigned long long)max_ms);
	ts_match_frame(t, &c, ts_pop(t));
	return el;
}

/* -------------------------------------------------------------- sockets */

struct ns_sock *ts_stream(struct tscript *t)
{
	int err = 0;
	struct ns_sock *s = ns_socket(t->st, NS_SOCK_STREAM, &err);

	ck_assert_msg(s != NULL, "ns_socket(STREAM): %s", strerror(-err));
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

void ts_bind_listen(struct tscript *t, struct ns_sock *s, uint16_t port, int backlog)
{
	struct ns_sockaddr a = ts_sockaddr(t, true, port);

	ck_assert_int_eq(ns_bind(s, &a), 0);
	ck_assert_int_eq(ns_listen(s, backlog), 0);
}

struct ns_sock *ts_listen(struct tscript *t, uint16_t port, int backlog)
{
	struct ns_sock *s = ts_stream(t);

	ts_bind_listen(t, s, port, backlog);
	return s;
}

struct ns_sock *ts_accept(struct tscript *t, struct ns_sock *listener)
{
	struct ns_sockaddr peer;
	int err = 0;
	struct ns_sock *s = ns_accept(listener, &peer, &err);

	ck_assert_msg(s != NULL, "ns_accept: %s", strerror(-err));
	ck_assert_msg(ts_is_peer(t, &peer), "accepted a connection from another address");
	ck_assert_uint_eq(peer.port, t->pport);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

struct ns_sock *ts_connect(struct tscript *t, uint16_t lport)
{
	struct ns_sock *s = ts_stream(t);
	struct ns_sockaddr r = ts_sockaddr(t, false, t->pport);
	int rc;

	if (lport) {
		struct ns_sockaddr a = ts_sockaddr(t, true, lport);

		ck_assert_int_eq(ns_bind(s, &a), 0);
	}
	ts_new_conn(t, lport, t->pport);
	rc = ns_connect(s, &r);
	ck_assert_msg(rc == -EINPROGRESS, "ns_connect: %d, expected -EINPROGRESS", rc);
	return s;
}

ssize_t ts_send(struct tscript *t, struct ns_sock *s, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = ts_pattern(1 + t->sent + (uint32_t)i);
	n = ns_send(s, buf, len, 0);
	if (n > 0)
		t->sent += (uint32_t)n;
	free(buf);
	return n;
}

void ts_recv_at(struct tscript *t, const char *file, int line, struct ns_sock *s, uint32_t from,
		size_t len)
{
	uint8_t *buf = malloc(len + 1);
	size_t got = 0;

	(void)t;
	ck_assert_ptr_nonnull(buf);
	while (got < len) {
		ssize_t n = ns_recv(s, buf + got, len - got, NS_MSG_DONTWAIT);

		if (n <= 0) {
			free(buf);
			ck_abort_msg("%s:%d: recv got %zu of %zu bytes, then %zd", file, line, got,
				     len, n);
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ts_pattern(from + (uint32_t)i)) {
			free(buf);
			ck_abort_msg("%s:%d: received byte %zu (seq %zu) is wrong", file, line, i,
				     from + i);
		}
	free(buf);
}

int ts_state(struct ns_sock *s)
{
	int v = -1;

	ck_assert_int_eq(ns_getsockopt(s, NS_TCP_STATE, &v), 0);
	return v;
}

/* ---------------------------------------------------------- handshakes */

struct ns_tcp_info ts_info(struct ns_sock *s)
{
	struct ns_tcp_info i;

	ck_assert_int_eq(ns_tcp_info(s, &i), 0);
	return i;
}

/* The option list the stack must answer a SYN offering peer_opts (with
 * TS val 100, if any) with. */
static void answer_opts(const char *peer_opts, char *buf, size_t cap)
{
	bool sack = strstr(peer_opts, "sackOK"), ts = strstr(peer_opts, "TS val");
	bool ws = strstr(peer_opts, "wscale");

	snprintf(buf, cap, "<mss *%s%s%s>", sack ? ",sackOK" : "", ts ? ",TS val * ecr 100" : "",
		 ws ? ",wscale *" : "");
}

static void peer_wait(struct tscript *t)
{
	if (t->hs_rtt_ms)
		ts_wait(t, t->hs_rtt_ms);
}

struct ns_sock *ts_passive_open_with(struct tscript *t, uint16_t lport, struct ns_sock **listener,
				     const char *peer_opts)
{
	struct ns_sock *l = ts_listen(t, lport, 8), *s;
	char want[128];
	bool ts = strstr(peer_opts, "TS val");

	ts_new_conn(t, lport, t->pport);
	t->ts_base_us = ns_clock_now(t->clk);
	TS_IN(t, "S 0:0(0) win 65535 <%s>", peer_opts);
	answer_opts(peer_opts, want, sizeof(want));
	TS_OUT(t, "S. 0:0(0) ack 1 win * %s", want);
	t->auto_ts = ts;
	peer_wait(t);
	t->peer_win = t->hs_win ? t->hs_win : 1024;
	TS_IN(t, ". 1:1(0) ack 1");
	s = ts_accept(t, l);
	TS_STATE(s, NS_TCP_ESTABLISHED);
	if (listener)
		*listener = l;
	else
		ns_close(l);
	return s;
}

struct ns_sock *ts_passive_open(struct tscript *t, uint16_t lport, struct ns_sock **listener)
{
	struct ns_sock *s = ts_passive_open_with(t, lport, listener,
						 "mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7");

	ck_assert_uint_eq(t->last.mss, 1460);
	return s;
}

struct ns_sock *ts_active_open_with(struct tscript *t, const char *peer_opts)
{
	struct ns_sock *s = ts_connect(t, 0);

	t->ts_base_us = ns_clock_now(t->clk);
	TS_OUT(t, "S 0:0(0) <mss 1460,sackOK,TS val * ecr 0,nop,wscale *>");
	peer_wait(t);
	TS_IN(t, "S. 0:0(0) ack 1 win 65535 <%s>", peer_opts);
	t->auto_ts = strstr(peer_opts, "TS val");
	TS_OUT(t, ". 1:1(0) ack 1 %s", t->auto_ts ? "<TS val * ecr 100>" : "<>");
	TS_STATE(s, NS_TCP_ESTABLISHED);
	t->peer_win = t->hs_win ? t->hs_win : 1024;
	return s;
}

struct ns_sock *ts_active_open(struct tscript *t)
{
	return ts_active_open_with(t, "mss 1460,sackOK,TS val 100 ecr *,nop,wscale 7");
}

void ts_save(const struct tscript *t, struct ts_conn *c)
{
	*c = (struct ts_conn){.lport = t->lport,
			      .pport = t->pport,
			      .peer_win = t->peer_win,
			      .liss = t->liss,
			      .piss = t->piss,
			      .last_tsval = t->last_tsval,
			      .sent = t->sent,
			      .liss_known = t->liss_known,
			      .auto_ts = t->auto_ts,
			      .ts_base_us = t->ts_base_us};
}

void ts_restore(struct tscript *t, const struct ts_conn *c)
{
	t->lport = c->lport;
	t->pport = c->pport;
	t->peer_win = c->peer_win;
	t->liss = c->liss;
	t->piss = c->piss;
	t->last_tsval = c->last_tsval;
	t->sent = c->sent;
	t->liss_known = c->liss_known;
	t->auto_ts = c->auto_ts;
	t->ts_base_us = c->ts_base_us;
}

static void family_v4(void)
{
	ts_ipv6_default = false;
}

static void family_v6(void)
{
	ts_ipv6_default = true;
}

/* Each script once per family: TCP must not care which IP carries it. */
static TCase *family_case(const char *name, bool v6, const struct ts_case *cases, size_t n,
			  void (*setup)(void), void (*teardown)(void), int timeout_s)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, v6 ? family_v6 : family_v4, NULL);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, timeout_s);
	for (size_t i = 0; i < n; i++)
		if (cases[i].test && !(v6 && cases[i].v4_only))
			tcase_add_test(tc, *cases[i].test);
	return tc;
}

int ts_run_suite(const char *name, const struct ts_case *cases, size_t n, void (*setup)(void),
		 void (*teardown)(void), int timeout_s)
{
	Suite *s = suite_create(name);

	suite_add_tcase(s, family_case("ipv4", false, cases, n, setup, teardown, timeout_s));
	suite_add_tcase(s, family_case("ipv6", true, cases, n, setup, teardown, timeout_s));
	return check_run_suite(s);
}
