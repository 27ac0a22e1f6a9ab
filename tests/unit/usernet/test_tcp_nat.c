/* test_tcp_nat.c — usernet's TCP NAT through the frame interface, no root:
 * a guest netstack (10.0.2.15) on a frame queue toward usernet connects to
 * 10.0.2.2:PORT and reaches a kernel TCP server on 127.0.0.1; bytes both
 * ways and half-close; a refused host port refuses the guest's connect;
 * the flow limit refuses and counts. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"
#include "tests/unit/check_run.h"

#define GUEST 0x0a00020fu
#define GW 0x0a000202u

/* Frames in flight each way. */
struct fq {
	uint8_t *f[512];
	size_t len[512];
	unsigned n;
};

static struct fq to_usernet, to_guest;
static struct ns_stack *guest;
static struct ns_link *glink;
static struct usernet *u;

static void fq_push(struct fq *q, const void *frame, size_t len)
{
	if (q->n == 512)
		return; /* a full ring drops, TCP recovers */
	q->f[q->n] = malloc(len);
	memcpy(q->f[q->n], frame, len);
	q->len[q->n++] = len;
}

static int guest_tx(struct ns_link *l, const void *frame, size_t len)
{
	(void)l;
	fq_push(&to_usernet, frame, len);
	return 0;
}

static const struct ns_link_ops guest_ops = {.transmit = guest_tx};

static void usernet_tx(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	fq_push(&to_guest, frame, len);
}

/* Move frames both ways and run both event loops for about ms. */
static void pump(int ms)
{
	for (int i = 0; i < ms; i++) {
		struct pollfd p = {.fd = usernet_fd(u), .events = POLLIN};
		struct fq a = to_usernet, b = to_guest;

		to_usernet.n = to_guest.n = 0;
		for (unsigned k = 0; k < a.n; k++) {
			usernet_input(u, a.f[k], a.len[k]);
			free(a.f[k]);
		}
		usernet_poll(u);
		for (unsigned k = 0; k < b.n; k++) {
			ns_stack_input(guest, glink, b.f[k], b.len[k]);
			free(b.f[k]);
		}
		ns_stack_poll(guest);
		if (!to_usernet.n && !to_guest.n)
			poll(&p, 1, 1);
	}
}

static void setup_limits(unsigned max_tcp)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1", .send = usernet_tx};
	struct ns_stack_cfg sc = {0};
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x0f};
	char err[256];

	c.max_tcp_flows = max_tcp;
	u = usernet_new(&c, err, sizeof(err));
	ck_assert_msg(u != NULL, "%s", err);
	guest = ns_stack_new(&sc);
	glink = ns_link_new(&guest_ops, NULL, 1500, mac, "guest");
	ck_assert_int_eq(ns_iface_add(guest, glink, GUEST, 24, 0), 0);
	ck_assert_int_eq(ns_route_add(guest, 0, 0, GW, glink), 0);
}

static void setup(void)
{
	setup_limits(0);
}

static void teardown(void)
{
	ns_stack_free(guest);
	ns_link_destroy(glink);
	usernet_free(u);
	for (unsigned k = 0; k < to_usernet.n; k++)
		free(to_usernet.f[k]);
	for (unsigned k = 0; k < to_guest.n; k++)
		free(to_guest.f[k]);
	to_usernet.n = to_guest.n = 0;
}

static int host_listener(uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 64), 0);
	getsockname(fd, (struct sockaddr *)&sa, &l);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Non-blocking guest connect to 10.0.2.2:port; the final NS_SO_ERROR. */
static int guest_connect(uint16_t port, struct ns_sock **out)
{
	struct ns_sockaddr dst = { .addr = GW, .port = port };
	struct ns_sock *s;
	int err = 0, rc;

	s = ns_socket(guest, NS_SOCK_STREAM, &err);
	ck_assert_ptr_nonnull(s);
	ns_setsockopt(s, NS_SO_NONBLOCK, 1);
	rc = ns_connect(s, &dst);
	ck_assert(rc == 0 || rc == -EINPROGRESS);
	for (int i = 0; i < 3000 && !(ns_sock_events(s) & (NS_EV_OUT | NS_EV_ERR)); i += 10)
		pump(10);
	ns_getsockopt(s, NS_SO_ERROR, &err);
	*out = s;
	return err;
}

START_TEST(test_tcp_both_ways_and_half_close)
{
	uint16_t port;
	int lfd = host_listener(&port), cfd;
	struct ns_sock *s;
	char buf[64];
	ssize_t n = 0;
	struct usernet_stats st;

	ck_assert_int_eq(guest_connect(port, &s), 0);
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(ns_send(s, "guest->host", 11, 0), 11);
	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	pump(50);
	ck_assert_int_eq(recv(cfd, buf, sizeof(buf), MSG_WAITALL), 11);
	ck_assert_mem_eq(buf, "guest->host", 11);
	ck_assert_int_eq(recv(cfd, buf, sizeof(buf), 0), 0); /* FIN relayed */
	ck_assert_int_eq(send(cfd, "host->guest", 11, 0), 11);
	close(cfd);
	for (int i = 0; i < 100 && n < 11; i++) {
		ssize_t r;

		pump(10);
		r = ns_recv(s, buf + n, sizeof(buf) - (size_t)n, NS_MSG_DONTWAIT);
		if (r > 0)
			n += r;
	}
	ck_assert_int_eq(n, 11);
	ck_assert_mem_eq(buf, "host->guest", 11);
	pump(50);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), NS_MSG_DONTWAIT), 0); /* EOF */
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp_flows, 1);
	ck_assert_uint_eq(st.tcp_bytes_out, 11);
	ck_assert_uint_eq(st.tcp_bytes_in, 11);
	ns_close(s);
	pump(50);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp_flows_now, 0);
	close(lfd);
}
END_TEST

START_TEST(test_tcp_refused)
{
	uint16_t port;
	int lfd = host_listener(&port);
	struct ns_sock *s;
	struct usernet_stats st;

	close(lfd); /* nothing listens there now */
	ck_assert_int_eq(guest_connect(port, &s), -ECONNREFUSED);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp_connect_fail, 1);
	ck_assert_uint_eq(st.tcp_flows_now, 0);
	ns_close(s);
}
END_TEST

START_TEST(test_tcp_flow_limit)
{
	uint16_t port;
	int lfd;
	struct ns_sock *s[3];
	struct usernet_stats st;

	teardown();
	setup_limits(2);
	lfd = host_listener(&port);
	ck_assert_int_eq(guest_connect(port, &s[0]), 0);
	ck_assert_int_eq(guest_connect(port, &s[1]), 0);
	ck_assert_int_eq(guest_connect(port, &s[2]), -ECONNREFUSED);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp_limit_refused, 1);
	ck_assert_uint_eq(st.tcp_flows_now, 2);
	for (int i = 0; i < 3; i++)
		ns_abort(s[i]);
	pump(20);
	close(lfd);
}
END_TEST

static Suite *tcp_nat_suite(void)
{
	Suite *s = suite_create("usernet_tcp_nat");
	TCase *t = tcase_create("tcp");

	tcase_set_timeout(t, 30);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_tcp_both_ways_and_half_close);
	tcase_add_test(t, test_tcp_refused);
	tcase_add_test(t, test_tcp_flow_limit);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(tcp_nat_suite());
}
