/* test_hostfwd_state.c — hostfwd rules across a save and load: within one
 * host the listening socket goes with the snapshot's fds, so the
 * destination serves the port the source held (also the connection
 * waiting in its listen queue); a destination made with hostfwd_wait
 * holds its rules unbound until the load and binds a busy port once the
 * source lets go; a rule added at run time goes along with its socket,
 * and a stream without sockets opens no port; a bad forward record is
 * refused. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/usernet/guest_link.h"

static uint16_t free_port(void)
{
	uint16_t port;
	int fd = host_listener(&port);

	close(fd);
	return port;
}

static struct usernet *make_usernet(bool wait)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1", .send = usernet_tx};
	char err[256];
	struct usernet *n;

	c.hostfwd_wait = wait;
	n = usernet_new(&c, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	return n;
}

static void add_rule(struct usernet *n, uint16_t port)
{
	char spec[64], err[256] = "";

	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%u-:22", port);
	ck_assert_msg(usernet_hostfwd_add(n, spec, err, sizeof(err)) == 0, "%s", err);
}

/* The guest's server on port 22. */
static struct ns_sock *guest_server(void)
{
	struct ns_sockaddr any = {.port = 22};
	int e;
	struct ns_sock *l = ns_socket(guest, NS_SOCK_STREAM, &e);

	ck_assert_ptr_nonnull(l);
	ns_setsockopt(l, NS_SO_NONBLOCK, 1);
	ck_assert_int_eq(ns_bind(l, &any), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	return l;
}

/* A host client of 127.0.0.1:port; the handshake is the kernel's, so it
 * connects while the connection waits in the listen queue. */
static int host_client(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect to %u: %s",
		      port, strerror(errno));
	return fd;
}

/* The guest's server accepts fd's connection and reads what fd sends. */
static void reaches_guest(struct ns_sock *l, int fd, const char *msg)
{
	struct ns_sock *s = NULL;
	char buf[32] = "";
	int e;

	for (int i = 0; i < 300 && !s; i++) {
		pump(5);
		s = ns_accept(l, NULL, &e);
	}
	ck_assert_msg(s != NULL, "the guest got no connection");
	ck_assert_int_eq(send(fd, msg, strlen(msg), 0), (ssize_t)strlen(msg));
	ck_assert_int_eq(guest_read(s, buf, strlen(msg)), (ssize_t)strlen(msg));
	ck_assert_str_eq(buf, msg);
	ns_abort(s);
}

static uint64_t waiting(struct usernet *n)
{
	struct usernet_stats st;

	usernet_stats(n, &st);
	return st.hostfwd_waiting;
}

/* Source u saved with its fds; the destination loads a dup of each (as
 * SCM_RIGHTS hands them over), the source hands over, and the
 * destination becomes u. Returns the source, which may only be polled
 * or freed now. */
static struct usernet *migrate_with_fds(struct usernet *dst, unsigned want_fds)
{
	struct usernet *src = u;
	void *snap;
	size_t len;
	int *fds, dups[4];
	unsigned n;
	char err[256] = "";

	ck_assert_msg(usernet_save_fds(u, &snap, &len, &fds, &n, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(n, want_fds);
	for (unsigned i = 0; i < n; i++)
		dups[i] = dup(fds[i]);
	free(fds);
	ck_assert_msg(usernet_load_fds(dst, snap, len, dups, n, err, sizeof(err)) == 0, "%s", err);
	usernet_hand_over(src);
	u = dst;
	for (unsigned i = 0; i < n; i++)
		close(dups[i]);
	free(snap);
	return src;
}

/* The destination's rule names the port the source listens on: without
 * hostfwd_wait it cannot bind it; with it, it takes the source's socket,
 * and a client that connected before the migration (in the listen
 * queue, never accepted by the source) reaches the guest through it. */
START_TEST(test_listener_goes_with_fds)
{
	uint16_t port = free_port();
	struct ns_sock *l = guest_server();
	struct usernet *dst, *src, *eager = make_usernet(false);
	char spec[64], err[256];
	int early, late;
	struct usernet_stats st;

	add_rule(u, port);
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%u-:22", port);
	ck_assert_int_eq(usernet_hostfwd_add(eager, spec, err, sizeof(err)), -EADDRINUSE);
	usernet_free(eager);
	dst = make_usernet(true);
	add_rule(dst, port);
	early = host_client(port);
	src = migrate_with_fds(dst, 1);
	reaches_guest(l, early, "queued");
	/* The source runs its loop on (a QEMU source stays until libvirt
	 * quits it): the next client is still the destination's. */
	late = host_client(port);
	usernet_poll(src);
	reaches_guest(l, late, "after");
	usernet_free(src);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.hostfwd_accepted, 2);
	ck_assert_uint_eq(st.hostfwd_waiting, 0);
	close(early);
	close(late);
	ns_close(l);
}
END_TEST

/* Without the sockets (a file, another host's stream) the destination
 * binds its rule once the source lets go of the port: waiting, then
 * bound at the next retry, and the guest is reachable. */
START_TEST(test_busy_port_bound_once_free)
{
	uint16_t port = free_port();
	struct ns_sock *l = guest_server();
	struct usernet *dst = make_usernet(true);
	char err[256] = "";
	void *snap;
	size_t len;
	int fd;

	add_rule(u, port);
	add_rule(dst, port);
	ck_assert_uint_eq(waiting(dst), 0); /* unbound, but not tried yet */
	ck_assert_msg(usernet_save(u, &snap, &len, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(usernet_load(dst, snap, len, err, sizeof(err)) == 0, "%s", err);
	free(snap);
	ck_assert_uint_eq(waiting(dst), 1);
	usernet_free(u);
	u = dst;
	for (int i = 0; i < 300 && waiting(u); i++)
		pump(10);
	ck_assert_uint_eq(waiting(u), 0);
	fd = host_client(port);
	reaches_guest(l, fd, "bound");
	close(fd);
	ns_close(l);
}
END_TEST

/* A rule added at run time on the source is served by a destination
 * whose command line lacks it when its socket comes along; without the
 * socket the stream opens no port. */
START_TEST(test_run_time_rule)
{
	uint16_t port = free_port(), other = free_port();
	struct ns_sock *l = guest_server();
	struct usernet *dst = make_usernet(true), *plain = make_usernet(true);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(other)};
	char err[256] = "";
	void *snap;
	size_t len;
	int fd, *fds;
	unsigned n;

	add_rule(u, port);
	usernet_free(migrate_with_fds(dst, 1));
	fd = host_client(port);
	reaches_guest(l, fd, "run time");
	close(fd);

	/* A plain save of a rule on port other, loaded where no rule names
	 * it: nothing listens there once the source is gone. */
	add_rule(u, other);
	ck_assert_msg(usernet_save_fds(u, &snap, &len, &fds, &n, err, sizeof(err)) == 0, "%s", err);
	free(fds);
	ck_assert_msg(usernet_load(plain, snap, len, err, sizeof(err)) == 0, "%s", err);
	free(snap);
	usernet_free(u);
	u = plain;
	pump(20);
	sa.sin_addr.s_addr = htonl(0x7f000001);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), -1);
	ck_assert_int_eq(errno, ECONNREFUSED);
	close(fd);
	ns_close(l);
}
END_TEST

/* A forward record with unknown flags, one in a version 1 snapshot, one
 * whose socket is not a listening TCP socket: the first two are refused
 * whole, the last leaves the rule to be bound by the destination. */
START_TEST(test_bad_forward_records)
{
	uint16_t port = free_port();
	struct usernet *dst;
	char err[256] = "";
	uint8_t *snap;
	void *p;
	size_t len;
	int *fds, sv[2];
	unsigned n;

	add_rule(u, port);
	ck_assert_msg(usernet_save_fds(u, &p, &len, &fds, &n, err, sizeof(err)) == 0, "%s", err);
	free(fds);
	snap = p;
	ck_assert_uint_ge(len, 8 + 8 + 42);
	/* The forward record is the last: its flags byte opens its body. */
	snap[len - 42] = 0x80;
	dst = make_usernet(true);
	ck_assert_int_eq(usernet_load_fds(dst, snap, len, NULL, 0, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "bad hostfwd record"), "%s", err);
	usernet_free(dst);
	snap[len - 42] = 0;
	snap[7] = 1; /* version 1 had no forward records */
	dst = make_usernet(true);
	ck_assert_int_eq(usernet_load_fds(dst, snap, len, NULL, 0, err, sizeof(err)), -EINVAL);
	usernet_free(dst);
	snap[7] = 2;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	dst = make_usernet(true);
	add_rule(dst, port);
	ck_assert_msg(usernet_load_fds(dst, snap, len, sv, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(waiting(dst), 1); /* the source still has the port */
	usernet_free(dst);
	close(sv[0]);
	close(sv[1]);
	free(snap);
}
END_TEST

static Suite *hostfwd_state_suite(void)
{
	Suite *s = suite_create("usernet_hostfwd_state");
	TCase *t = tcase_create("hostfwd_state");

	tcase_set_timeout(t, 30);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_listener_goes_with_fds);
	tcase_add_test(t, test_busy_port_bound_once_free);
	tcase_add_test(t, test_run_time_rule);
	tcase_add_test(t, test_bad_forward_records);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(hostfwd_state_suite());
}
