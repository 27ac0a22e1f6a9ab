/* test_tcp_unit_segments.c — the TCP engine's unit tests that edit or
 * forge what is on the wire (netstack_tcp): RST validation, PAWS, ICMP
 * errors quoting our segments, thousands of mangled segments; and the
 * listener's edges: event callbacks, deferred accept, accept-any, SYN
 * backlog drops. Separate from test_tcp_unit.c (the state machine through
 * the socket API); both share tcp_unit.h's fixture. */
#include <check.h>
#include <poll.h>
#include <stdlib.h>

#include "tests/unit/netstack/tcp_unit.h"

START_TEST(test_rst_validation)
{
	struct ns_sock *c, *s;
	struct frame f, r;
	uint32_t nxt;

	connect_pair(&c, &s, 100);
	client_segment(c, &f);
	nxt = ntohl(f_tcp(&f)->seq) + 1;
	/* In the window but not rcv_nxt: a challenge ACK, nothing else. */
	r = f;
	r.len = ETH_HLEN + 40;
	f_ip(&r)->len = htons(40);
	f_ip(&r)->csum = 0;
	f_ip(&r)->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, f_ip(&r), 20));
	f_tcp(&r)->off = 5 << 4;
	f_tcp(&r)->flags = TH_RST;
	f_tcp(&r)->seq = htonl(nxt + 1000);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 1);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	/* Out of the window: ignored silently. */
	f_tcp(&r)->seq = htonl(nxt + 10000000);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 1);
	/* A SYN on the established connection: challenge ACK (RFC 5961 4). */
	f_tcp(&r)->flags = TH_SYN;
	f_tcp(&r)->seq = htonl(nxt + 5);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 2);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	/* Exactly rcv_nxt: the connection is reset. */
	f_tcp(&r)->flags = TH_RST;
	f_tcp(&r)->seq = htonl(nxt);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSED);
	drop_wire();
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_paws)
{
	struct ns_sock *c, *s;
	struct frame old, f;
	char buf[8];

	connect_pair(&c, &s, 101);
	client_segment(c, &old);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	run_ms(50);
	client_segment(c, &f);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	/* The old segment, moved to the next sequence number, still carries
	 * the old TSval: PAWS drops it (RFC 7323 5). */
	f_tcp(&old)->seq = htonl(ntohl(f_tcp(&f)->seq) + 1);
	f_fix(&old);
	ns_stack_input(sb, lb, old.b, old.len);
	ck_assert_uint_eq(stats_of(sb).tcp_paws_drop, 1);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), -EAGAIN);
	pump();
	ns_close(c);
	ns_close(s);
}
END_TEST

/* An ICMP unreachable from b to a quoting the grabbed frame q. */
static void icmp_about(struct frame *e, struct frame *q, uint8_t code, uint16_t mtu)
{
	struct ip_hdr *ih = f_ip(e);
	uint8_t *icmp = e->b + ETH_HLEN + 20;
	uint16_t cs;

	memset(e, 0, sizeof(*e));
	memcpy(e->b, la->mac, 6);
	memcpy(e->b + 6, lb->mac, 6);
	e->b[12] = 8;
	ih->vhl = 0x45;
	ih->ttl = 64;
	ih->proto = NS_PROTO_ICMP;
	ih->src = htonl(B);
	ih->dst = htonl(A);
	ih->len = htons(20 + 8 + 28);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
	icmp[0] = ICMP_UNREACH;
	icmp[1] = code;
	icmp[6] = (uint8_t)(mtu >> 8);
	icmp[7] = (uint8_t)mtu;
	memcpy(icmp + 8, q->b + ETH_HLEN, 28);
	cs = (uint16_t)~ns_csum_fold(ns_csum_add(0, icmp, 36));
	memcpy(icmp + 2, &cs, 2);
	e->len = ETH_HLEN + 20 + 36;
}

START_TEST(test_icmp_refused_syn_sent)
{
	struct ns_sock *c = stream(sa);
	struct ns_sockaddr to = {.addr = B, .port = 4444};
	struct frame syn, e;
	int v;

	ns_arp_add_static(sa, B, lb->mac);
	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	ck_assert(grab(lb, &syn));
	ck_assert(f_tcp(&syn)->flags == TH_SYN);
	/* b answers with ICMP port unreachable quoting the SYN. */
	icmp_about(&e, &syn, ICMP_UNREACH_PORT, 0);
	ns_stack_input(sa, la, e.b, e.len);
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ECONNREFUSED);
	ns_close(c);
}
END_TEST

START_TEST(test_icmp_frag_needed)
{
	struct ns_sock *c, *s;
	static uint8_t big[20000], in[20000];
	struct frame seg, e;
	struct ns_tcp_info ti;
	ssize_t n, got = 0;

	connect_pair(&c, &s, 105);
	ck_assert_int_eq(ns_send(c, big, sizeof(big), 0), (ssize_t)sizeof(big));
	ck_assert(grab(lb, &seg)); /* a full-sized segment "does not fit" */
	ck_assert_uint_eq(f_paylen(&seg), 1460 - 12);
	icmp_about(&e, &seg, ICMP_UNREACH_NEEDFRAG, 1000);
	ns_stack_input(sa, la, e.b, e.len);
	ns_tcp_info(c, &ti);
	ck_assert_uint_eq(ti.snd_mss, 1000 - 40);
	for (int i = 0; i < 100 && got < (ssize_t)sizeof(in); i++) {
		run_ms(1);
		while ((n = ns_recv(s, in + got, sizeof(in) - (size_t)got, 0)) > 0)
			got += n;
	}
	ck_assert_int_eq((int)got, (int)sizeof(in));
	ns_close(c);
	ns_close(s);
}
END_TEST

static unsigned cb_events, cb_calls;

static void on_event(struct ns_sock *s, unsigned ev, void *ctx)
{
	(void)s;
	ck_assert_ptr_eq(ctx, &cb_calls);
	cb_events |= ev;
	cb_calls++;
}

START_TEST(test_events_fd_callback)
{
	struct ns_sock *c, *s;
	struct pollfd p;
	char buf[8];
	int fd;

	connect_pair(&c, &s, 106);
	ck_assert_uint_eq(ns_sock_events(s), NS_EV_OUT);
	fd = ns_sock_fd(s);
	ck_assert_int_ge(fd, 0);
	ns_sock_events(s); /* clears the fd */
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	ns_sock_set_callback(s, on_event, &cb_calls);
	ck_assert_int_eq(ns_send(c, "ev", 2, 0), 2);
	pump();
	ck_assert_uint_gt(cb_calls, 0);
	ck_assert(cb_events & NS_EV_IN);
	ck_assert_int_eq(poll(&p, 1, 0), 1);
	ck_assert_uint_eq(ns_sock_events(s), NS_EV_IN | NS_EV_OUT);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 2);
	ns_sock_set_callback(s, NULL, NULL);
	ns_close(c);
	pump();
	ck_assert_uint_eq(ns_sock_events(s) & (NS_EV_IN | NS_EV_HUP), NS_EV_IN);
	ns_shutdown(s, NS_SHUT_WR);
	ck_assert(ns_sock_events(s) & NS_EV_HUP);
	ns_close(s);
}
END_TEST

/* A deferred-accept listener on b; the client's SYN waits for a verdict. */
static struct ns_sock *deferred(struct ns_sock **l, struct ns_sock **c, uint16_t port)
{
	struct ns_sockaddr to = {.addr = B, .port = port};
	struct ns_sock *s;
	int err;

	*l = stream(sb);
	ck_assert_int_eq(ns_setsockopt(*l, NS_TCP_DEFER_ACCEPT, 1), 0);
	/* The previous round left a TIME-WAIT on the port. */
	ck_assert_int_eq(ns_setsockopt(*l, NS_SO_REUSEADDR, 1), 0);
	ck_assert_int_eq(ns_bind(*l, &to), 0);
	ck_assert_int_eq(ns_listen(*l, 4), 0);
	*c = stream(sa);
	ck_assert_int_eq(ns_connect(*c, &to), -EINPROGRESS);
	pump();
	s = ns_accept(*l, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(state_of(s), NS_TCP_SYN_RECEIVED);
	run_ms(500); /* nothing answers the SYN meanwhile */
	ck_assert_int_eq(state_of(*c), NS_TCP_SYN_SENT);
	return s;
}

/* Refused with a RST or an ICMP port unreachable: ECONNREFUSED. */
static void refuse_deferred(bool icmp)
{
	struct ns_sock *l, *c, *s = deferred(&l, &c, 102);
	int v;

	ck_assert_int_eq(ns_accept_refuse(s, icmp, ICMP_UNREACH_PORT), 0);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ECONNREFUSED);
	ns_close(s);
	ns_close(c);
	ns_close(l);
}

START_TEST(test_defer_accept)
{
	struct ns_sock *l, *c, *s;
	char buf[4];

	s = deferred(&l, &c, 102);
	ck_assert_int_eq(ns_accept_complete(s), 0);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(ns_send(c, "ok", 2, 0), 2);
	pump();
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 2);
	ns_close(s);
	ns_close(c);
	ns_close(l);

	refuse_deferred(false);
	refuse_deferred(true);
}
END_TEST

START_TEST(test_accept_any)
{
	struct ns_sock *any, *l22, *c1, *c2, *s;
	struct ns_sockaddr zero = {.addr = 0, .port = 0}, b22 = {.addr = B, .port = 22}, far, name;
	int err;
	char buf[8];

	ns_parse_hostport("93.184.216.34:443", &far);
	/* Rebuild b's interface as a NAT front: any destination is local. */
	teardown();
	setup_flags(NS_IF_ACCEPT_ANY);
	ck_assert_int_eq(ns_route_add(sa, 0, 0, B, la), 0);
	any = stream(sb);
	ck_assert_int_eq(ns_bind(any, &zero), 0);
	ck_assert_int_eq(ns_listen(any, 8), 0);
	l22 = listener(sb, B, 22);
	c1 = stream(sa);
	c2 = stream(sa);
	ck_assert_int_eq(ns_connect(c1, &far), -EINPROGRESS);
	ck_assert_int_eq(ns_connect(c2, &b22), -EINPROGRESS);
	pump();
	ck_assert_int_eq(state_of(c1), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(state_of(c2), NS_TCP_ESTABLISHED);
	s = ns_accept(any, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(ns_accept(any, NULL, &err)); /* the :22 one is not ours */
	ck_assert_int_eq(ns_getsockname(s, &name), 0);
	ck_assert_uint_eq(name.addr, far.addr); /* the original destination */
	ck_assert_uint_eq(name.port, 443);
	ck_assert_int_eq(ns_send(c1, "nat", 3, 0), 3);
	pump();
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 3);
	ns_close(s);
	s = ns_accept(l22, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ns_close(s);
	ns_close(c1);
	ns_close(c2);
	ns_close(any);
	ns_close(l22);
	pump();
}
END_TEST

START_TEST(test_backlog_syn_drop)
{
	struct ns_sock *l = listener(sb, 0, 103), *c[4];
	struct ns_sockaddr to = {.addr = B, .port = 103};
	int err, accepted = 0;
	struct ns_sock *s;

	ck_assert_int_eq(ns_listen(l, 1), 0);
	for (int i = 0; i < 4; i++) {
		c[i] = stream(sa);
		ck_assert_int_eq(ns_connect(c[i], &to), -EINPROGRESS);
	}
	pump();
	ck_assert_uint_ge(stats_of(sb).tcp_syn_drop, 2);
	/* Accepting makes room; the dropped SYNs are retried and get in. */
	for (int i = 0; i < 30000 && accepted < 4; i++) {
		while ((s = ns_accept(l, NULL, &err))) {
			accepted++;
			ns_close(s);
		}
		run_ms(1);
	}
	ck_assert_int_eq(accepted, 4);
	for (int i = 0; i < 4; i++)
		ns_close(c[i]);
	ns_close(l);
}
END_TEST

START_TEST(test_random_segments)
{
	/* Mangled copies of a real segment (flags, numbers, options, length)
	 * at an established connection: never a crash, the out-of-order
	 * memory stays inside the receive buffer. */
	struct ns_sock *c, *s;
	struct frame f, r;
	uint64_t x = 12345;
	char buf[4096];

	connect_pair(&c, &s, 117);
	ck_assert_int_eq(ns_send(c, buf, 1200, 0), 1200);
	ck_assert(grab(lb, &f));
	ns_stack_input(sb, lb, f.b, f.len);
	for (int i = 0; i < 20000; i++) {
		uint32_t base = ntohl(f_tcp(&f)->seq), hl, len;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		r = f;
		f_tcp(&r)->flags = (uint8_t)(x >> 11);
		f_tcp(&r)->seq = htonl(base + (uint32_t)((x >> 20) % 600000) - 300000);
		f_tcp(&r)->ack = htonl(ntohl(f_tcp(&f)->ack) + (uint32_t)((x >> 40) % 64) - 32);
		f_tcp(&r)->win = (uint16_t)(x >> 48);
		hl = 20 + 4 * (uint32_t)((x >> 33) % 11);
		f_tcp(&r)->off = (uint8_t)(hl / 4) << 4;
		for (uint32_t k = 20; k < hl; k++)
			((uint8_t *)f_tcp(&r))[k] = (uint8_t)(x >> (k % 56));
		len = hl + (uint32_t)((x >> 5) % 1200);
		f_ip(&r)->len = htons((uint16_t)(20 + len));
		f_ip(&r)->csum = 0;
		f_ip(&r)->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, f_ip(&r), 20));
		r.len = ETH_HLEN + 20 + len;
		f_fix(&r);
		ns_stack_input(sb, lb, r.b, r.len);
		ck_assert_uint_le(stats_of(sb).ooo_mem, TCP_DEFAULT_RCVBUF);
		drop_wire();
		if (state_of(s) == NS_TCP_CLOSED)
			break;
		if (i % 1000 == 0)
			run_ms(100);
	}
	while (ns_recv(s, buf, sizeof(buf), 0) > 0)
		;
	ns_close(c);
	ns_close(s);
	run_ms(200000);
	ck_assert_uint_eq(stats_of(sb).ooo_mem, 0);
	ck_assert_uint_eq(conns(sa), 0);
}
END_TEST

void tcp_unit_add_segment_tests(TCase *tc)
{
	tcase_add_test(tc, test_rst_validation);
	tcase_add_test(tc, test_paws);
	tcase_add_test(tc, test_icmp_refused_syn_sent);
	tcase_add_test(tc, test_defer_accept);
	tcase_add_test(tc, test_accept_any);
	tcase_add_test(tc, test_backlog_syn_drop);
	tcase_add_test(tc, test_icmp_frag_needed);
	tcase_add_test(tc, test_events_fd_callback);
	tcase_add_test(tc, test_random_segments);
}
