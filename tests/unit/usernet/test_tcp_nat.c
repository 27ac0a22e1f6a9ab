/* test_tcp_nat.c — usernet's TCP NAT through the frame interface, no root:
 * a guest netstack (10.0.2.15) on a frame queue toward usernet connects to
 * 10.0.2.2:PORT and reaches a kernel TCP server on 127.0.0.1; bytes both
 * ways and half-close; a refused host port refuses the guest's connect;
 * the flow limit refuses and counts. IPv6: the guest gets its address by
 * SLAAC from usernet's router advertisement, its DNS server by stateless
 * DHCPv6, reaches TCP and UDP servers on the host's ::1 through
 * [fd00::2], and a hostfwd on [::1] reaches it. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"
#include "tests/unit/check_run.h"
#include "tests/unit/usernet/guest_link.h"

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
	pump(5);
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
	pump(5);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), NS_MSG_DONTWAIT), 0); /* EOF */
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp_flows, 1);
	ck_assert_uint_eq(st.tcp_bytes_out, 11);
	ck_assert_uint_eq(st.tcp_bytes_in, 11);
	ns_close(s);
	pump(5);
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

/* The TCP segment in an Ethernet frame (IPv4), or NULL; *seq, *ack and
 * *payload from its header. */
static const uint8_t *tcp_of(const uint8_t *f, size_t len, uint32_t *seq, uint32_t *ack,
			     size_t *payload)
{
	const uint8_t *ip = f + 14, *t;
	size_t ihl, tot;

	if (len < 54 || f[12] != 0x08 || f[13] != 0x00 || ip[9] != IPPROTO_TCP)
		return NULL;
	ihl = (size_t)(ip[0] & 15) * 4;
	tot = (size_t)ip[2] << 8 | ip[3];
	t = ip + ihl;
	*seq = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 | t[7];
	*ack = (uint32_t)t[8] << 24 | (uint32_t)t[9] << 16 | (uint32_t)t[10] << 8 | t[11];
	*payload = tot - ihl - (size_t)(t[12] >> 4) * 4;
	return t;
}

/* A guest's lone small segment is ACKed in the same turn of usernet's loop,
 * not after a delayed-ACK timer: a guest writing small PSH segments under
 * Nagle waits for that ACK before its next write (libslirp ACKs at once
 * too), which cost 40 ms per write with netstack's default delayed ACK. */
START_TEST(test_tcp_guest_segment_acked_at_once)
{
	uint16_t port;
	int lfd = host_listener(&port), cfd;
	struct ns_sock *s;
	uint32_t seq = 0, ack, end = 0;
	size_t plen;
	bool sent = false, acked = false;

	ck_assert_int_eq(guest_connect(port, &s), 0);
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	pump(50); /* the handshake's last ACK settles */
	ck_assert_int_eq(ns_send(s, "x", 1, 0), 1);
	ns_stack_poll(guest);
	for (unsigned k = 0; k < to_usernet.n; k++) {
		if (tcp_of(to_usernet.f[k], to_usernet.len[k], &seq, &ack, &plen) && plen == 1)
			sent = true, end = seq + 1;
		usernet_input(u, to_usernet.f[k], to_usernet.len[k]);
		free(to_usernet.f[k]);
	}
	to_usernet.n = 0;
	ck_assert_msg(sent, "the guest sent no 1-byte segment");
	usernet_poll(u); /* one turn: no time for a timer to fire */
	for (unsigned k = 0; k < to_guest.n; k++)
		if (tcp_of(to_guest.f[k], to_guest.len[k], &seq, &ack, &plen) && ack == end)
			acked = true;
	ck_assert_msg(acked, "usernet did not ACK the guest's segment at once");
	close(cfd);
	ns_close(s);
	pump(5);
	close(lfd);
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

/* ------------------------------------------------------- save/restore */

/* usernet is saved with a guest connection open, and loaded into a fresh
 * usernet, as on another host: no host socket came along, so the guest
 * gets a RST it accepts and its read fails at once with ECONNRESET. With
 * in_flight, bytes the old usernet sent never reached the guest (its RST
 * sequence number is then past the guest's and only in its window: the
 * guest's challenge ACK draws the exact RST). */
static bool have_ipv6_loopback(void);
static int host6_socket(int type, uint16_t *port);
static int guest6_connect(struct ns_sock **out, uint16_t port);

static void state_reset(bool in_flight, bool v6)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1", .send = usernet_tx};
	uint16_t port;
	int lfd, cfd;
	struct ns_sock *s;
	char buf[16], err[256] = "";
	void *snap;
	size_t slen;
	int state = -1;
	struct ns_stats gst;

	if (v6) {
		/* libcheck cannot skip: an early return would count as a pass */
		ck_assert_msg(have_ipv6_loopback(), "no IPv6 loopback (::1) on this host");
		pump(20); /* usernet's first RA: the guest's SLAAC address */
		lfd = host6_socket(SOCK_STREAM, &port);
		ck_assert_int_eq(guest6_connect(&s, port), 0);
	} else {
		lfd = host_listener(&port);
		ck_assert_int_eq(guest_connect(port, &s), 0);
	}
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(send(cfd, "pong", 4, 0), 4);
	ck_assert_int_eq(guest_read(s, buf, 4), 4);
	pump(200); /* the guest's delayed ACK goes out: it is quiet from now */
	if (in_flight) {
		ck_assert_int_eq(send(cfd, "lost", 4, 0), 4);
		for (int i = 0; i < 50 && !to_guest.n; i++) {
			poll(&(struct pollfd){.fd = usernet_fd(u), .events = POLLIN}, 1, 10);
			usernet_poll(u);
		}
		ck_assert_uint_gt(to_guest.n, 0);
	}
	ck_assert_int_eq(usernet_save(u, &snap, &slen, err, sizeof(err)), 0);
	/* The old usernet's last frames (the data in flight, its RSTs as it
	 * closes) never reach the guest: it is already elsewhere. */
	usernet_free(u);
	fq_drop(&to_guest);
	fq_drop(&to_usernet);
	u = usernet_new(&c, err, sizeof(err));
	ck_assert_msg(u != NULL, "%s", err);
	ck_assert_msg(usernet_load(u, snap, slen, err, sizeof(err)) == 0, "%s", err);
	free(snap);
	ck_assert_int_eq(usernet_timeout_ms(u), 0);
	/* A few turns of both loops, far below any guest timer: the RST is
	 * usernet's doing, not an answer to something the guest sent. */
	pump(5);
	ns_stack_stats(guest, &gst);
	ck_assert_uint_eq(gst.tcp_challenge_ack, (in_flight ? 1u : 0u));
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), NS_MSG_DONTWAIT), -ECONNRESET);
	ns_getsockopt(s, NS_TCP_STATE, &state);
	ck_assert_int_eq(state, NS_TCP_CLOSED);
	ns_close(s);
	close(cfd);
	close(lfd);
}

START_TEST(test_state_resets_guest_tcp)
{
	state_reset(false, false);
}
END_TEST

START_TEST(test_state_resets_guest_tcp_in_flight)
{
	state_reset(true, false);
}
END_TEST

START_TEST(test_state_resets_guest_tcp6)
{
	state_reset(false, true);
}
END_TEST

/* One direction of a checked transfer: the bytes are a pattern of their
 * offset, so loss, duplication and reordering all show. */
struct stream {
	size_t sent, got, total;
	bool eof;
};

static uint8_t pat(size_t i, unsigned salt)
{
	return (uint8_t)(i * 131u + (i >> 9) + salt);
}

static void fill(uint8_t *b, size_t off, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(off + i, salt);
}

static void check(const uint8_t *b, size_t off, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(off + i, salt))
			ck_abort_msg("byte %zu is wrong", off + i);
}

/* One round of both applications: write what fits, read and check what
 * came; the writer half-closes once all is out. */
static void transfer_step(struct ns_sock *s, int fd, struct stream *g2h, struct stream *h2g,
			  bool reading)
{
	uint8_t b[8192];
	ssize_t r;

	for (int k = 0; k < 32 && g2h->sent < g2h->total; k++) {
		size_t n = g2h->total - g2h->sent < sizeof(b) ? g2h->total - g2h->sent : sizeof(b);

		fill(b, g2h->sent, n, 1);
		r = ns_send(s, b, n, NS_MSG_DONTWAIT);
		ck_assert_msg(r > 0 || r == -EAGAIN, "guest send: %zd", r);
		if (r <= 0)
			break;
		if ((g2h->sent += (size_t)r) == g2h->total)
			ns_shutdown(s, NS_SHUT_WR);
	}
	for (int k = 0; k < 32 && h2g->sent < h2g->total; k++) {
		size_t n = h2g->total - h2g->sent < sizeof(b) ? h2g->total - h2g->sent : sizeof(b);

		fill(b, h2g->sent, n, 2);
		r = send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		ck_assert_msg(r > 0 || errno == EAGAIN, "host send: %s", strerror(errno));
		if (r <= 0)
			break;
		if ((h2g->sent += (size_t)r) == h2g->total)
			shutdown(fd, SHUT_WR);
	}
	if (!reading)
		return;
	while ((r = ns_recv(s, b, sizeof(b), NS_MSG_DONTWAIT)) > 0) {
		check(b, h2g->got, (size_t)r, 2);
		h2g->got += (size_t)r;
	}
	ck_assert_msg(r == 0 || r == -EAGAIN, "guest recv: %zd", r);
	h2g->eof |= r == 0;
	while ((r = recv(fd, b, sizeof(b), MSG_DONTWAIT)) > 0) {
		check(b, g2h->got, (size_t)r, 1);
		g2h->got += (size_t)r;
	}
	ck_assert_msg(r == 0 || errno == EAGAIN, "host recv: %s", strerror(errno));
	g2h->eof |= r == 0;
}

/* Within one host a connection goes on: usernet A is saved with its host
 * socket's fd while data flows both ways, B loads the snapshot with a dup
 * of that fd, A hands over and is freed, and both transfers finish
 * through B with every byte once and in order. */
START_TEST(test_state_carries_tcp_on)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1", .send = usernet_tx};
	struct stream g2h = {.total = 16000000}, h2g = {.total = 12000000};
	uint16_t port;
	int lfd = host_listener(&port), cfd, *fds, dupfd, i, small = 16384;
	struct ns_sock *s;
	char err[256] = "";
	void *snap;
	size_t slen;
	unsigned nfds;

	/* Small host buffers: the guest's bytes back up into usernet. */
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	ck_assert_int_eq(guest_connect(port, &s), 0);
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	for (i = 0; i < 1000 && (g2h.got < 100000 || h2g.got < 100000); i++) {
		transfer_step(s, cfd, &g2h, &h2g, true);
		pump(1);
	}
	/* Both readers pause, the writers go on: every buffer on the way
	 * fills (the kernel's, the guest-side socket's rings in usernet,
	 * the host-to-guest relay buffer) and goes into the snapshot. */
	for (i = 0; i < 300; i++) {
		transfer_step(s, cfd, &g2h, &h2g, false);
		pump(1);
	}
	ck_assert_uint_gt(g2h.got, 0);
	ck_assert_uint_gt(h2g.got, 0);
	ck_assert_uint_lt(g2h.got, g2h.total);
	ck_assert_uint_lt(h2g.got, h2g.total);
	ck_assert_msg(usernet_save_fds(u, &snap, &slen, &fds, &nfds, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(nfds, 1);
	ck_assert_uint_gt(slen, 1 << 20); /* the bytes buffered on the way */
	dupfd = dup(fds[0]);		  /* as SCM_RIGHTS would hand it over */
	free(fds);
	/* The guest's frames toward A that A never took are lost; A's frames
	 * already on their way still reach the guest. */
	fq_drop(&to_usernet);
	{
		struct usernet *a = u;

		u = usernet_new(&c, err, sizeof(err));
		ck_assert_msg(u != NULL, "%s", err);
		ck_assert_msg(usernet_load_fds(u, snap, slen, &dupfd, 1, err, sizeof(err)) == 0,
			      "%s", err);
		usernet_hand_over(a);
		usernet_free(a);
	}
	close(dupfd);
	free(snap);
	for (i = 0; i < 20000 && !(g2h.eof && h2g.eof); i++) {
		transfer_step(s, cfd, &g2h, &h2g, true);
		pump(1);
	}
	ck_assert_uint_eq(g2h.got, g2h.total);
	ck_assert_uint_eq(h2g.got, h2g.total);
	ck_assert(g2h.eof && h2g.eof);
	ns_close(s);
	close(cfd);
	close(lfd);
}
END_TEST

/* ------------------------------------------------------------------ IPv6 */

static bool have_ipv6_loopback(void)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

static int host6_socket(int type, uint16_t *port)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET6, type, 0);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		ck_assert_int_eq(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&sa, &l);
	*port = ntohs(sa.sin6_port);
	return fd;
}

static struct ns_sockaddr gw6(uint16_t port)
{
	struct ns_sockaddr a = {.port = port, .family = NS_AF_INET6};

	ns_parse_addr6("fd00::2", a.addr6);
	return a;
}

/* Connect from the guest to [fd00::2]:port; the socket error when done. */
static int guest6_connect(struct ns_sock **out, uint16_t port)
{
	struct ns_sockaddr dst = gw6(port);
	int err = 0;
	struct ns_sock *s = ns_socket(guest, NS_SOCK_STREAM, &err);

	ns_setsockopt(s, NS_SO_NONBLOCK, 1);
	ns_connect(s, &dst);
	for (int i = 0; i < 300 && !(ns_sock_events(s) & (NS_EV_OUT | NS_EV_ERR)); i++)
		pump(10);
	ns_getsockopt(s, NS_SO_ERROR, &err);
	*out = s;
	return err;
}

START_TEST(test_ipv6_slaac_and_tcp)
{
	uint8_t addr[16], want[16];
	struct usernet_stats st;
	struct ns_sock *s;
	uint16_t port;
	int lfd, cfd;
	char buf[16];

	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(have_ipv6_loopback(), "no IPv6 loopback (::1) on this host");
	pump(20); /* usernet's first RA */
	/* fd00::/64 + the interface identifier of 02:00:00:00:00:0f */
	ck_assert_int_eq(ns_iface_get6(guest, glink, 1, addr, NULL), 0);
	ns_parse_addr6("fd00::ff:fe00:f", want);
	ck_assert_mem_eq(addr, want, 16);
	lfd = host6_socket(SOCK_STREAM, &port);
	ck_assert_int_eq(guest6_connect(&s, port), 0);
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(ns_send(s, "over v6", 7, 0), 7);
	pump(30);
	ck_assert_int_eq(recv(cfd, buf, sizeof(buf), MSG_DONTWAIT), 7);
	ck_assert_mem_eq(buf, "over v6", 7);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.tcp6_flows, 1);
	ns_abort(s);
	close(cfd);
	close(lfd);
}
END_TEST

/* A host service on 127.0.0.1 only is reached over the guest's IPv6 too
 * (::1 refuses, usernet retries on IPv4 loopback); a port closed on both
 * stays refused. */
START_TEST(test_ipv6_host_falls_back_to_ipv4_loopback)
{
	struct ns_sock *s;
	uint16_t port;
	int lfd = host_listener(&port), cfd;
	char buf[16];

	pump(20); /* usernet's first RA: the guest's address */
	ck_assert_int_eq(guest6_connect(&s, port), 0);
	cfd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(ns_send(s, "v6 to v4", 8, 0), 8);
	pump(30);
	ck_assert_int_eq(recv(cfd, buf, sizeof(buf), MSG_DONTWAIT), 8);
	ck_assert_mem_eq(buf, "v6 to v4", 8);
	ns_abort(s);
	close(cfd);
	close(lfd); /* now nothing listens on that port in either family */
	ck_assert_int_eq(guest6_connect(&s, port), -ECONNREFUSED);
	ns_abort(s);
}
END_TEST

START_TEST(test_ipv6_dhcp6_dns_and_udp)
{
	struct ns_sockaddr c546 = {.port = 546, .family = NS_AF_INET6},
			   any6 = {.family = NS_AF_INET6};
	/* Information-Request, transaction 0xabcdef, a client ID option */
	uint8_t ir[] = {11, 0xab, 0xcd, 0xef, 0, 1, 0, 4, 0, 3, 0, 1};
	struct ns_pktinfo to = {0}, from;
	uint8_t buf[512], dns[16];
	struct ns_chan *ch, *uc;
	struct usernet_stats st;
	uint16_t port;
	ssize_t n;
	int err, hfd;

	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(have_ipv6_loopback(), "no IPv6 loopback (::1) on this host");
	pump(20);
	ch = ns_chan_create(guest, NS_PROTO_UDP, &c546, NULL, &err);
	ck_assert_ptr_nonnull(ch);
	to.dst.family = NS_AF_INET6;
	to.dst.port = 547;
	ns_parse_addr6("ff02::1:2", to.dst.addr6);
	ck_assert_int_eq(ns_chan_sendto(ch, ir, sizeof(ir), &to), (int)sizeof(ir));
	pump(20);
	n = ns_chan_recv_nb(ch, buf, sizeof(buf), &from);
	ck_assert_int_gt(n, 4);
	ck_assert_uint_eq(buf[0], 7); /* Reply */
	ck_assert_mem_eq(buf + 1, ir + 1, 3);
	ns_parse_addr6("fd00::3", dns);
	ck_assert(memmem(buf, (size_t)n, (uint8_t[]){0, 23, 0, 16}, 4) != NULL);
	ck_assert(memmem(buf, (size_t)n, dns, 16) != NULL);
	ns_chan_close(ch);
	/* UDP through [fd00::2] to a host socket on ::1, and back. */
	hfd = host6_socket(SOCK_DGRAM, &port);
	uc = ns_chan_create(guest, NS_PROTO_UDP, &any6, NULL, &err);
	ck_assert_ptr_nonnull(uc);
	memset(&to, 0, sizeof(to));
	to.dst = gw6(port);
	to.src.family = NS_AF_INET6;
	to.src.port = 4242;
	ns_chan_close(uc);
	any6.port = 4242;
	uc = ns_chan_create(guest, NS_PROTO_UDP, &any6, NULL, &err);
	ck_assert_int_eq(ns_chan_sendto(uc, "ping6", 5, &to), 5);
	pump(20);
	{
		struct sockaddr_in6 peer;
		socklen_t pl = sizeof(peer);

		ck_assert_int_eq(recvfrom(hfd, buf, sizeof(buf), MSG_DONTWAIT,
					  (struct sockaddr *)&peer, &pl),
				 5);
		ck_assert_int_eq(sendto(hfd, "pong6", 5, 0, (struct sockaddr *)&peer, pl), 5);
	}
	pump(20);
	ck_assert_int_eq(ns_chan_recv_nb(uc, buf, sizeof(buf), &from), 5);
	ck_assert_mem_eq(buf, "pong6", 5);
	ck_assert_uint_eq(from.src.family, NS_AF_INET6);
	ck_assert_mem_eq(from.src.addr6, to.dst.addr6, 16);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.dhcp6_info, 1);
	ck_assert_uint_eq(st.udp6_tx, 1);
	ns_chan_close(uc);
	close(hfd);
}
END_TEST

START_TEST(test_ipv6_hostfwd)
{
	struct ns_sockaddr any = {.port = 22};
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	struct ns_sock *l, *s = NULL;
	char err[256], spec[64];
	uint16_t port;
	int fd, e;

	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(have_ipv6_loopback(), "no IPv6 loopback (::1) on this host");
	/* A free port on ::1 for the forward. */
	fd = host6_socket(SOCK_STREAM, &port);
	close(fd);
	snprintf(spec, sizeof(spec), "tcp:[::1]:%u-:22", port);
	ck_assert_msg(usernet_hostfwd_add(u, spec, err, sizeof(err)) == 0, "%s", err);
	l = ns_socket(guest, NS_SOCK_STREAM, &e);
	ns_setsockopt(l, NS_SO_NONBLOCK, 1);
	ck_assert_int_eq(ns_bind(l, &any), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
	sa.sin6_port = htons(port);
	connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	for (int i = 0; i < 200 && !s; i++) {
		pump(5);
		s = ns_accept(l, NULL, &e);
	}
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(usernet_hostfwd_remove(u, spec, err, sizeof(err)), 0);
	ck_assert_int_eq(usernet_hostfwd_add(u, "tcp:[::1:2222-:22", err, sizeof(err)), -EINVAL);
	ns_abort(s);
	ns_close(l);
	close(fd);
}
END_TEST

/* The guest pings a remote IPv6 host: usernet's ICMPv6 echo NAT sends it
 * from a host socket and the reply comes back with the guest's own echo
 * id and payload. ([fd00::2] is usernet's own address, answered by its
 * stack, so the "remote" is 2001:db8::1 on the loopback of a network
 * namespace of this test's own; there net.ipv4.ping_group_range is "1 0",
 * so this is the raw-socket path.) Needs root, as the tests run. */
START_TEST(test_ipv6_ping_host)
{
	struct ns_sockaddr local = {.family = NS_AF_INET6, .port = 0x1234};
	uint8_t req[16] = {128, 0, 0, 0, 0x12, 0x34, 0, 7, 'p', 'i', 'n', 'g', '-', 'v', '6', '!'};
	struct ns_pktinfo to = {0}, from;
	struct usernet_stats st;
	struct ns_chan *ch;
	uint8_t buf[64];
	ssize_t n = -1;
	int err;

	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s (not root?)",
		      strerror(errno));
	ck_assert_int_eq(system("ip link set lo up && "
				"ip -6 addr add 2001:db8::1/128 dev lo nodad"),
			 0);
	pump(20); /* SLAAC */
	ch = ns_chan_create(guest, NS_PROTO_ICMPV6, &local, NULL, &err);
	ck_assert_ptr_nonnull(ch);
	to.dst.family = NS_AF_INET6;
	to.dst.port = 0x1234;
	ns_parse_addr6("2001:db8::1", to.dst.addr6);
	ck_assert_int_eq(ns_chan_sendto(ch, req, sizeof(req), &to), (int)sizeof(req));
	for (int i = 0; i < 100 && n < 0; i++) {
		pump(5);
		n = ns_chan_recv_nb(ch, buf, sizeof(buf), &from);
	}
	usernet_stats(u, &st);
	ck_assert_msg(st.icmp_unsupported == 0,
		      "no ICMP socket: net.ipv4.ping_group_range excludes us and no CAP_NET_RAW");
	ck_assert_int_eq(n, (ssize_t)sizeof(req));
	ck_assert_uint_eq(buf[0], 129);
	ck_assert_mem_eq(buf + 4, req + 4, sizeof(req) - 4);
	ck_assert_mem_eq(from.src.addr6, to.dst.addr6, 16);
	ck_assert_uint_eq(st.icmp6_echo, 1);
	ck_assert_uint_eq(st.icmp_reply, 1);
	ns_chan_close(ch);
}
END_TEST

/* A UDP forward on [::1] to the guest's IPv4 address (default) and to
 * its SLAAC IPv6 address: a host datagram reaches the guest's channel,
 * and the guest's answer reaches the host peer. */
static void udp6_fwd_roundtrip(const char *guest_part)
{
	struct ns_sockaddr any6 = {.family = NS_AF_INET6, .port = 7777};
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	struct ns_pktinfo from, to;
	char err[256], spec[96], buf[16];
	struct ns_chan *ch;
	uint16_t port;
	ssize_t n = -1;
	int fd, e;

	fd = host6_socket(SOCK_DGRAM, &port);
	close(fd); /* a free port on ::1 for the forward */
	snprintf(spec, sizeof(spec), "udp:[::1]:%u-%s:7777", port, guest_part);
	ck_assert_msg(usernet_hostfwd_add(u, spec, err, sizeof(err)) == 0, "%s", err);
	ch = ns_chan_create(guest, NS_PROTO_UDP, &any6, NULL, &e);
	ck_assert_ptr_nonnull(ch);
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	sa.sin6_port = htons(port);
	ck_assert_int_eq(sendto(fd, "fwd6", 4, 0, (struct sockaddr *)&sa, sizeof(sa)), 4);
	for (int i = 0; i < 100 && n < 0; i++) {
		pump(5);
		n = ns_chan_recv_nb(ch, buf, sizeof(buf), &from);
	}
	ck_assert_int_eq(n, 4);
	ck_assert_mem_eq(buf, "fwd6", 4);
	memset(&to, 0, sizeof(to));
	to.dst = from.src;
	ck_assert_int_eq(ns_chan_sendto(ch, "back", 4, &to), 4);
	pump(20);
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 4);
	ck_assert_mem_eq(buf, "back", 4);
	ck_assert_int_eq(usernet_hostfwd_remove(u, spec, err, sizeof(err)), 0);
	ns_chan_close(ch);
	close(fd);
}

START_TEST(test_ipv6_udp_hostfwd)
{
	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(have_ipv6_loopback(), "no IPv6 loopback (::1) on this host");
	pump(20); /* SLAAC */
	udp6_fwd_roundtrip("");
	udp6_fwd_roundtrip("[fd00::ff:fe00:f]");
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
	tcase_add_test(t, test_tcp_guest_segment_acked_at_once);
	tcase_add_test(t, test_state_resets_guest_tcp);
	tcase_add_test(t, test_state_resets_guest_tcp_in_flight);
	tcase_add_test(t, test_state_carries_tcp_on);
	tcase_add_test(t, test_state_resets_guest_tcp6);
	tcase_add_test(t, test_ipv6_slaac_and_tcp);
	tcase_add_test(t, test_ipv6_host_falls_back_to_ipv4_loopback);
	tcase_add_test(t, test_ipv6_dhcp6_dns_and_udp);
	tcase_add_test(t, test_ipv6_hostfwd);
	tcase_add_test(t, test_ipv6_udp_hostfwd);
	tcase_add_test(t, test_ipv6_ping_host);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(tcp_nat_suite());
}
