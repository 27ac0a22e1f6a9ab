/* test_zerocopy.c — netstack's copy-avoiding paths: the checksum (against
 * a byte-at-a-time reference, over random lengths, alignments and odd
 * split points), copy-and-checksum, the pair link's in-place receive,
 * and the stream socket's in-place reads (ns_recv_peek/consume, ring
 * wrap, partial consume, the window update) and direct delivery
 * (ns_sock_set_reader, partial acceptance, order). */
#include <check.h>
#include <poll.h>
#include <stdlib.h>

#include "netstack/tcp_internal.h"
#include "tests/unit/check_run.h"

/* RFC 1071 the slow way: 16-bit big-endian words, folded at the end. */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
	uint64_t s = 0;

	for (size_t i = 0; i < len; i += 2)
		s += (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The network-order value of a native sum. */
static uint16_t net(uint32_t sum)
{
	return ntohs(ns_csum_fold(sum));
}

static uint8_t *random_bytes(size_t n, unsigned seed)
{
	uint8_t *b = malloc(n);

	srand(seed);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rand();
	return b;
}

START_TEST(test_csum_matches_reference)
{
	uint8_t *buf = random_bytes(4096 + 16, 1), *dst = malloc(4096 + 16);

	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t)rand() % 4096, off = (size_t)rand() % 16;
		size_t split = len ? (size_t)rand() % len : 0;
		const uint8_t *p = buf + off;
		uint16_t want = ref_csum(p, len);
		uint32_t head = ns_csum_add(0, p, split), tail = ns_csum_add(0, p + split, len - split);

		ck_assert_uint_eq(net(ns_csum_add(0, p, len)), want);
		/* chained: an odd split leaves the tail at an odd offset */
		if (split & 1)
			tail = ns_csum_swab(tail);
		ck_assert_uint_eq(net(ns_csum_add(head, &(uint16_t){ ns_csum_fold(tail) }, 2)), want);
		/* copy-and-checksum, to a differently aligned destination */
		memset(dst, 0xee, 4096 + 16);
		ck_assert_uint_eq(net(ns_csum_copy(0, dst + (off ^ 5), p, len)), want);
		ck_assert_mem_eq(dst + (off ^ 5), p, len);
		ck_assert_uint_eq(dst[(off ^ 5) + len], 0xee); /* not one byte more */
	}
	/* all ones: the carries must wrap around */
	memset(buf, 0xff, 4096);
	ck_assert_uint_eq(net(ns_csum_add(0, buf, 4096)), 0xffff);
	ck_assert_uint_eq(net(ns_csum_copy(0xffff, dst, buf, 4095)), ref_csum(buf, 4095));
	free(buf);
	free(dst);
}
END_TEST

START_TEST(test_ring_get_csum_wraps)
{
	struct tcp_ring r;
	uint8_t *src = random_bytes(1000, 2), out[1000];

	ck_assert_int_eq(ring_init(&r, 1000), 0);
	for (uint32_t head = 0; head < 1000; head += 37) {
		for (uint32_t n = 0; n <= 1000; n += 1 + n / 3) {
			r.head = head;
			r.len = 0;
			ring_put(&r, 0, src, n);
			memset(out, 0, sizeof(out));
			ck_assert_uint_eq(net(ring_get_csum(&r, 0, out, n, 0)), ref_csum(src, n));
			ck_assert_mem_eq(out, src, n);
		}
	}
	ring_free(&r);
	free(src);
}
END_TEST

START_TEST(test_pair_borrow_in_place)
{
	struct ns_link *a, *b;
	const void *f;
	uint8_t f1[60] = { 1 }, f2[70] = { 2 }, buf[100];
	struct pollfd pfd;

	ck_assert_int_eq(ns_link_pair(1500, 0, &a, &b), 0);
	ck_assert_int_eq(b->ops->borrow(b, &f), 0);
	ck_assert_int_eq(ns_link_transmit(a, f1, sizeof(f1)), 0);
	ck_assert_int_eq(ns_link_transmit(a, f2, sizeof(f2)), 0);
	ck_assert_int_eq(b->ops->borrow(b, &f), 60);
	ck_assert_mem_eq(f, f1, 60);
	ck_assert_int_eq(ns_link_receive(b, buf, sizeof(buf)), 0); /* lent out */
	pfd = (struct pollfd){ .fd = ns_link_fd(b), .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 0), 1); /* f2 still waits */
	ck_assert_int_eq(b->ops->borrow(b, &f), 70); /* gives f1 back */
	ck_assert_mem_eq(f, f2, 70);
	ck_assert_int_eq(ns_link_transmit(a, f1, sizeof(f1)), 0); /* behind f2 */
	ck_assert_mem_eq(f, f2, 70);
	b->ops->release(b);
	ck_assert_int_eq(ns_link_receive(b, buf, sizeof(buf)), 60);
	ck_assert_mem_eq(buf, f1, 60);
	b->ops->release(b); /* nothing lent: no-op */
	ck_assert_int_eq(b->ops->borrow(b, &f), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* empty: fd quiet */
	/* the copying receive still works, and recycles the frames */
	ck_assert_int_eq(ns_link_transmit(a, f1, sizeof(f1)), 0);
	ck_assert_int_eq(ns_link_receive(b, buf, sizeof(buf)), 60);
	ck_assert_mem_eq(buf, f1, 60);
	ns_link_destroy(a);
	ns_link_destroy(b);
}
END_TEST

/* --------------------------------------------------- two stacks, TCP */

static struct ns_clock *clk;
static struct ns_link *la, *lb;
static struct ns_stack *sa, *sb;
static struct ns_sock *cli, *srv;
static uint32_t A, B;
static uint8_t *pattern; /* the byte stream the client sends */
enum { PATTERN = 1 << 20, RCVBUF = 4096 };

static void pump(void)
{
	while (ns_stack_drain(sa, 1000) + ns_stack_drain(sb, 1000) > 0)
		;
}

static struct ns_sock *stream(struct ns_stack *st)
{
	int err;
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, &err);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

/* cli on a, srv on b with a small receive buffer (so it wraps). */
static void setup(void)
{
	struct ns_stack_cfg cfg = { .seed = 7 };
	struct ns_sockaddr any = { .addr = 0, .port = 80 }, to;
	struct ns_sock *l;
	int err;

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	ck_assert_int_eq(ns_link_pair(1500, 0, &la, &lb), 0);
	sa = ns_stack_new(&cfg);
	cfg.seed = 8;
	sb = ns_stack_new(&cfg);
	ns_parse_addr("10.0.0.1", &A);
	ns_parse_addr("10.0.0.2", &B);
	ck_assert_int_eq(ns_iface_add(sa, la, A, 24, 0), 0);
	ck_assert_int_eq(ns_iface_add(sb, lb, B, 24, 0), 0);
	l = stream(sb);
	ck_assert_int_eq(ns_setsockopt(l, NS_SO_RCVBUF, RCVBUF), 0);
	ck_assert_int_eq(ns_bind(l, &any), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	cli = stream(sa);
	ck_assert_int_eq(ns_setsockopt(cli, NS_TCP_NODELAY, 1), 0);
	to = (struct ns_sockaddr){ .addr = B, .port = 80 };
	ck_assert_int_eq(ns_connect(cli, &to), -EINPROGRESS);
	pump();
	srv = ns_accept(l, NULL, &err);
	ck_assert_ptr_nonnull(srv);
	ns_close(l);
	pattern = random_bytes(PATTERN, 3);
}

static void teardown(void)
{
	ns_stack_free(sa);
	ns_stack_free(sb);
	ns_link_destroy(la);
	ns_link_destroy(lb);
	ns_clock_free(clk);
	free(pattern);
}

/* pump(), then let 100 ms of virtual time pass (delayed ACKs, persist
 * probes) and pump again. */
static void settle(void)
{
	pump();
	for (int i = 0; i < 10; i++) {
		ns_clock_advance(clk, 10000);
		ns_stack_poll(sa);
		ns_stack_poll(sb);
		pump();
	}
}

/* Queue pattern[*sent, *sent + n) (as much as fits) and deliver it, with
 * virtual time passing (settle) or not (pump only). */
static void send_some_how(size_t *sent, size_t n, void (*deliver)(void))
{
	ssize_t w = ns_send(cli, pattern + *sent, n, NS_MSG_DONTWAIT);

	if (w > 0)
		*sent += (size_t)w;
	deliver();
}

static void send_some(size_t *sent, size_t n)
{
	send_some_how(sent, n, settle);
}

/* The peeked bytes, checked against the stream from offset at. */
static size_t peek_check(size_t at, struct ns_iov iov[2])
{
	ssize_t n = ns_recv_peek(srv, iov);

	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(iov[0].len + iov[1].len, (size_t)n);
	ck_assert_mem_eq(iov[0].base, pattern + at, iov[0].len);
	if (iov[1].len)
		ck_assert_mem_eq(iov[1].base, pattern + at + iov[0].len, iov[1].len);
	return (size_t)n;
}

START_TEST(test_peek_wraps_and_partial_consume)
{
	struct ns_iov iov[2];
	size_t sent = 0, at = 0;
	bool wrapped = false;

	ck_assert_int_eq(ns_recv_peek(srv, iov), -EAGAIN);
	/* Rounds of up to 3000 bytes into a 4096-byte ring, consumed in
	 * uneven pieces and never to empty, so the readable bytes keep
	 * crossing the ring's end. */
	while (at < 60000) {
		size_t n;

		send_some(&sent, 3000);
		n = peek_check(at, iov);
		wrapped |= iov[1].len > 0;
		ck_assert_int_eq(ns_recv_consume(srv, n + 1), -EINVAL);
		ck_assert_int_eq(ns_recv_consume(srv, n / 3), 0);
		at += n / 3;
		ck_assert_uint_eq(peek_check(at, iov), n - n / 3);
		ck_assert_int_eq(ns_recv_consume(srv, n / 2 - n / 3), 0);
		at += n / 2 - n / 3;
	}
	ck_assert(wrapped);
	/* EOF after the last byte */
	ns_shutdown(cli, NS_SHUT_WR);
	while (at < sent) {
		settle();
		at += peek_check(at, iov);
		ck_assert_int_eq(ns_recv_consume(srv, iov[0].len + iov[1].len), 0);
	}
	settle();
	ck_assert_int_eq(ns_recv_peek(srv, iov), 0);
}
END_TEST

START_TEST(test_consume_opens_the_window)
{
	struct ns_iov iov[2];
	size_t sent = 0, n;

	/* Fill the receiver: the sender is stopped by the closed window
	 * (the rest of a window below one MSS it does not use: SWS). */
	for (int i = 0; i < 10; i++)
		send_some(&sent, PATTERN - sent);
	n = peek_check(0, iov);
	ck_assert_uint_gt(n, RCVBUF - 1460);
	ck_assert_uint_gt(sent, n); /* more waits in the sender */
	send_some_how(&sent, PATTERN - sent, pump);
	ck_assert_uint_eq(peek_check(0, iov), n);
	/* Consuming (no clock tick, so no persist probe) sends the window
	 * update that lets the queued bytes come. */
	ck_assert_int_eq(ns_recv_consume(srv, n), 0);
	pump();
	ck_assert_uint_gt(peek_check(n, iov), RCVBUF - 1460);
}
END_TEST

/* A reader that takes at most `take` bytes of each offer, recording them
 * in order (it runs inside the stack: no ns_* calls here). */
struct rec {
	uint8_t *got;
	size_t len, take, calls;
};

static size_t record(void *ctx, const void *data, size_t len)
{
	struct rec *r = ctx;
	size_t n = len < r->take ? len : r->take;

	memcpy(r->got + r->len, data, n);
	r->len += n;
	r->calls++;
	return n;
}

START_TEST(test_reader_partial_acceptance_keeps_order)
{
	struct rec r = { .got = malloc(PATTERN), .take = 700 };
	uint8_t buf[RCVBUF];
	size_t sent = 0, got = 0;

	ck_assert_int_eq(ns_sock_set_reader(srv, record, &r), 0);
	while (sent < 200000) {
		ssize_t n;

		send_some(&sent, 1000 + sent % 2000);
		/* what the reader left is read the ordinary way, after the
		 * reader's bytes: interleave both into one stream */
		while ((n = ns_recv(srv, buf, sizeof(buf), NS_MSG_DONTWAIT)) > 0) {
			memcpy(r.got + r.len, buf, (size_t)n);
			r.len += (size_t)n;
		}
		got = r.len;
	}
	ck_assert_uint_eq(got, sent);
	ck_assert_mem_eq(r.got, pattern, sent);
	ck_assert_uint_gt(r.calls, 10);
	free(r.got);
}
END_TEST

START_TEST(test_reader_taking_all_keeps_window_open)
{
	struct rec r = { .got = malloc(PATTERN), .take = SIZE_MAX };
	struct ns_tcp_info info;
	struct ns_iov iov[2];
	size_t sent = 0;
	int nread = -1;

	ck_assert_int_eq(ns_sock_set_reader(srv, record, &r), 0);
	while (sent < 100000)
		send_some(&sent, 1460);
	ck_assert_uint_eq(r.len, sent);
	ck_assert_mem_eq(r.got, pattern, sent);
	ck_assert_int_eq(ns_getsockopt(srv, NS_SO_NREAD, &nread), 0);
	ck_assert_int_eq(nread, 0);
	ck_assert_int_eq(ns_recv_peek(srv, iov), -EAGAIN);
	ck_assert_int_eq(ns_tcp_info(srv, &info), 0);
	ck_assert_uint_eq(info.rcv_wnd, RCVBUF);
	ck_assert_uint_eq(info.bytes_received, sent);
	/* removed: bytes go to the ring again */
	ck_assert_int_eq(ns_sock_set_reader(srv, NULL, NULL), 0);
	send_some(&sent, 100);
	ck_assert_uint_eq(peek_check(r.len, iov), 100);
	free(r.got);
}
END_TEST

static Suite *zerocopy_suite(void)
{
	Suite *s = suite_create("netstack_zerocopy");
	TCase *c = tcase_create("csum_link");
	TCase *t = tcase_create("tcp");

	tcase_add_test(c, test_csum_matches_reference);
	tcase_add_test(c, test_ring_get_csum_wraps);
	tcase_add_test(c, test_pair_borrow_in_place);
	suite_add_tcase(s, c);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_peek_wraps_and_partial_consume);
	tcase_add_test(t, test_consume_opens_the_window);
	tcase_add_test(t, test_reader_partial_acceptance_keeps_order);
	tcase_add_test(t, test_reader_taking_all_keeps_window_open);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(zerocopy_suite());
}
