/* guest_link.c — the usernet unit suites' guest (guest_link.h). */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tests/unit/usernet/guest_link.h"

struct fq to_usernet, to_guest;
struct ns_stack *guest;
struct ns_link *glink;
struct usernet *u;

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

void usernet_tx(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	fq_push(&to_guest, frame, len);
}

/* Move frames both ways and run both event loops for about ms. */
void pump(int ms)
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

void setup_limits(unsigned max_tcp)
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
	/* A SLAAC host; DAD off so the test need not wait a second. */
	ck_assert_int_eq(ns_iface_ipv6(guest, glink, NS_IF6_SLAAC | NS_IF6_NODAD), 0);
}

void setup(void)
{
	setup_limits(0);
}

void teardown(void)
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

int host_listener(uint16_t *port)
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
int guest_connect(uint16_t port, struct ns_sock **out)
{
	struct ns_sockaddr dst = {.addr = GW, .port = port};
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

void fq_drop(struct fq *q)
{
	for (unsigned k = 0; k < q->n; k++)
		free(q->f[k]);
	q->n = 0;
}

/* Guest reads until it has got want bytes or an error; the last result. */
ssize_t guest_read(struct ns_sock *s, char *buf, size_t want)
{
	size_t got = 0;
	ssize_t r = -EAGAIN;

	for (int i = 0; i < 100 && got < want; i++) {
		pump(10);
		r = ns_recv(s, buf + got, want - got, NS_MSG_DONTWAIT);
		if (r > 0)
			got += (size_t)r;
		else if (r != -EAGAIN)
			break;
	}
	return r;
}
