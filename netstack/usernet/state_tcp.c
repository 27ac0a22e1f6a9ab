/* state_tcp.c — the guest's TCP connections through the NAT in a usernet
 * snapshot (format: state.h).
 *
 * Every connection starts with the same 52 bytes (a RESET record's body):
 * family, flags, the guest's MAC, guest and remote address (16 bytes
 * each, IPv4 in the first 4), guest and remote port, and the sequence and
 * acknowledgment numbers a RST toward the guest must carry. A FLOW record
 * (a live save, usernet_save_fds) adds the index of its host fd, the
 * guest side's TCP state (ns_tcp_save) and the relay's, then the send
 * ring, the unread bytes and the host-to-guest relay bytes.
 *
 * A loaded connection whose host fd came along (usernet_load_fds: one
 * host, the fds passed with SCM_RIGHTS) is carried on: the guest sees no
 * loss and no duplicate. Any other one is reset: the loading usernet has
 * no host socket for it (another host, or a plain file), so the guest
 * gets a RST at the next usernet_poll() and its application sees
 * ECONNRESET at once instead of waiting on a connection nothing will
 * ever answer. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/usernet/state.h"

#define CONN_HDR_LEN 52
#define FLOW_FIXED_LEN 112

enum flow_flags {
	FL_FWD = 1,
	FL_HOST_UNWATCHED = 2,
	FL_G2H_EOF = 4,
	FL_G2H_SHUT = 8,
	FL_H2G_EOF = 16,
	FL_H2G_SHUT = 32,
};

enum flow_opts { FO_WS = 1, FO_SACK = 2, FO_TS = 4 };

static uint32_t get32(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static void addr_to_bytes(const struct ns_sockaddr *a, uint8_t b[16])
{
	memset(b, 0, 16);
	if (a->family == NS_AF_INET6)
		memcpy(b, a->addr6, 16);
	else
		for (int i = 0; i < 4; i++)
			b[i] = (uint8_t)(a->addr >> (24 - 8 * i));
}

static void bytes_to_addr(bool v6, const uint8_t b[16], uint16_t port, struct ns_sockaddr *a)
{
	memset(a, 0, sizeof(*a));
	a->port = port;
	if (v6) {
		a->family = NS_AF_INET6;
		memcpy(a->addr6, b, 16);
	} else {
		a->addr = get32(b);
	}
}

/* ----------------------------------------------------------------- save */

struct save_ctx {
	struct un_ns *n;
	struct wbuf *w;
	int **fds;
	unsigned *nfds, *cap;
};

static void put_conn_hdr(struct wbuf *w, const struct un_reset *x, uint8_t flags)
{
	w_u8(w, x->v6 ? 6 : 4);
	w_u8(w, flags);
	w_bytes(w, x->mac, 6);
	w_bytes(w, x->gaddr, 16);
	w_bytes(w, x->raddr, 16);
	w_u16(w, x->gport);
	w_u16(w, x->rport);
	w_u32(w, x->seq);
	w_u32(w, x->ack);
}

static uint8_t view_flags(const struct un_flow_view *v)
{
	return (uint8_t)((v->fwd ? FL_FWD : 0) | (v->host_unwatched ? FL_HOST_UNWATCHED : 0) |
			 (v->g2h_eof ? FL_G2H_EOF : 0) | (v->g2h_shut ? FL_G2H_SHUT : 0) |
			 (v->h2g_eof ? FL_H2G_EOF : 0) | (v->h2g_shut ? FL_H2G_SHUT : 0));
}

static bool push_fd(struct save_ctx *c, int fd)
{
	return state_push_fd(c->w, c->fds, c->nfds, c->cap, fd);
}

static void save_flow(struct save_ctx *c, const struct un_flow_view *v, const struct un_reset *x,
		      const struct ns_tcp_snapshot *t, const void *snd, const void *rcv)
{
	struct wbuf *w = c->w;
	uint64_t len = FLOW_FIXED_LEN + (uint64_t)t->snd_len + t->rcv_len + v->h2g_len;

	if (len > UINT32_MAX || !push_fd(c, v->fd))
		return;
	w_rec(w, REC_FLOW, (uint32_t)len);
	put_conn_hdr(w, x, view_flags(v));
	w_u32(w, *c->nfds - 1);
	w_u8(w, (uint8_t)t->state);
	w_u8(w, t->snd_wscale);
	w_u8(w, t->rcv_wscale);
	w_u8(w, (uint8_t)((t->ws_on ? FO_WS : 0) | (t->sack_on ? FO_SACK : 0) |
			  (t->ts_on ? FO_TS : 0)));
	w_u32(w, t->snd_una);
	w_u32(w, t->snd_wnd);
	w_u32(w, t->rcv_adv);
	w_u32(w, t->snd_mss);
	w_u32(w, t->rcv_mss);
	w_u32(w, t->ts_val);
	w_u32(w, t->ts_recent);
	w_u32(w, t->srtt_us);
	w_u32(w, t->sndbuf);
	w_u32(w, t->rcvbuf);
	w_u32(w, t->snd_len);
	w_u32(w, t->rcv_len);
	w_u32(w, (uint32_t)v->h2g_len);
	w_bytes(w, snd, t->snd_len);
	w_bytes(w, rcv, t->rcv_len);
	w_bytes(w, v->h2g, v->h2g_len);
}

/* A connection whose guest MAC is unknown cannot be reset (nothing to
 * address the RST to): that guest learns of the loss at its next
 * segment, which the loaded usernet's stack answers with a RST anyway. */
static void save_conn(void *ctx, const struct un_flow_view *v)
{
	struct save_ctx *c = ctx;
	struct ns_sockaddr guest, remote;
	struct ns_tcp_info ti;
	struct ns_tcp_snapshot t;
	struct un_reset x = {0};
	void *snd, *rcv;
	bool known;

	if (ns_getpeername(v->s, &guest) < 0 || ns_getsockname(v->s, &remote) < 0 ||
	    ns_tcp_info(v->s, &ti) < 0)
		return;
	x.v6 = guest.family == NS_AF_INET6;
	known = (x.v6 ? ns_nd_lookup(c->n->st, guest.addr6, x.mac)
		      : ns_arp_lookup(c->n->st, guest.addr, x.mac)) == 0;
	if (!known)
		memset(x.mac, 0, 6);
	addr_to_bytes(&guest, x.gaddr);
	addr_to_bytes(&remote, x.raddr);
	x.gport = guest.port;
	x.rport = remote.port;
	/* snd_max: everything we ever sent. When the guest has not seen all
	 * of it, the RST is in its window but not exact (RFC 5961 3.2) and
	 * draws a challenge ACK, which the loaded stack answers with a RST
	 * at exactly the ACK's number. */
	x.seq = ti.snd_max;
	x.ack = ti.rcv_nxt;
	if (c->fds && v->fd >= 0 && ns_tcp_save(v->s, &t, &snd, &rcv) == 0) {
		save_flow(c, v, &x, &t, snd, rcv);
		free(snd);
		free(rcv);
	} else if (known) {
		w_rec(c->w, REC_RESET, CONN_HDR_LEN);
		put_conn_hdr(c->w, &x, 0);
	}
}

void state_save_conns(struct un_ns *n, struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap)
{
	struct save_ctx c = {n, w, fds, nfds, cap};

	un_tcp_each_open(n, save_conn, &c);
}

/* ----------------------------------------------------------------- load */

static bool guest4_ok(struct un_ns *n, const uint8_t a[4])
{
	uint32_t v = get32(a);
	uint32_t mask = 0xffffffffu << (32 - n->cfg.prefix);

	return (v & mask) == n->cfg.net && v != n->cfg.gateway && v != n->cfg.dns &&
	       (v & ~mask) != 0 && (v & ~mask) != ~mask;
}

static int load_conn_hdr(struct un_ns *n, struct rbuf *r, struct loaded_conn *c, uint8_t *flags,
			 char *err, size_t errlen)
{
	struct un_reset *x = &c->rst;
	uint8_t fam = r_u8(r);
	bool ok;

	*flags = r_u8(r);
	x->v6 = fam == 6;
	r_bytes(r, x->mac, 6);
	r_bytes(r, x->gaddr, 16);
	r_bytes(r, x->raddr, 16);
	x->gport = r_u16(r);
	x->rport = r_u16(r);
	x->seq = r_u32(r);
	x->ack = r_u32(r);
	if (fam != 4 && fam != 6)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad address family %u",
				    fam);
	/* Only ever toward a guest address on this LAN, from elsewhere. */
	ok = x->v6 ? !n->cfg.ipv6_off && un_guest6_ok(n, x->gaddr) : guest4_ok(n, x->gaddr);
	if (!ok || (x->mac[0] & 1) || !x->gport || !x->rport)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: connection with a bad guest address or port");
	return 0;
}

/* The FLOW part after the common header; the bytes stay in the snapshot. */
static int load_flow(struct un_ns *n, struct rbuf *r, size_t len, struct loaded_conn *c,
		     uint8_t flags, char *err, size_t errlen)
{
	struct ns_tcp_snapshot *t = &c->tcp;
	struct un_flow_view *v = &c->view;
	uint8_t opts;

	c->live = true;
	c->fd_index = r_u32(r);
	t->state = r_u8(r);
	t->snd_wscale = r_u8(r);
	t->rcv_wscale = r_u8(r);
	opts = r_u8(r);
	t->ws_on = opts & FO_WS;
	t->sack_on = opts & FO_SACK;
	t->ts_on = opts & FO_TS;
	bytes_to_addr(c->rst.v6, c->rst.raddr, c->rst.rport, &t->local);
	bytes_to_addr(c->rst.v6, c->rst.gaddr, c->rst.gport, &t->remote);
	t->snd_max = c->rst.seq;
	t->rcv_nxt = c->rst.ack;
	t->snd_una = r_u32(r);
	t->snd_wnd = r_u32(r);
	t->rcv_adv = r_u32(r);
	t->snd_mss = r_u32(r);
	t->rcv_mss = r_u32(r);
	t->ts_val = r_u32(r);
	t->ts_recent = r_u32(r);
	t->srtt_us = r_u32(r);
	t->sndbuf = r_u32(r);
	t->rcvbuf = r_u32(r);
	t->snd_len = r_u32(r);
	t->rcv_len = r_u32(r);
	v->h2g_len = r_u32(r);
	if (r->bad || (uint64_t)FLOW_FIXED_LEN + t->snd_len + t->rcv_len + v->h2g_len != len ||
	    (opts & ~(FO_WS | FO_SACK | FO_TS)) || flags >= 64 || v->h2g_len > n->cfg.tcp_buf)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad connection record");
	c->snd = r_take(r, t->snd_len);
	c->rcv = r_take(r, t->rcv_len);
	v->h2g = r_take(r, v->h2g_len);
	v->fwd = flags & FL_FWD;
	v->host_unwatched = flags & FL_HOST_UNWATCHED;
	v->g2h_eof = flags & FL_G2H_EOF;
	v->g2h_shut = flags & FL_G2H_SHUT;
	v->h2g_eof = flags & FL_H2G_EOF;
	v->h2g_shut = flags & FL_H2G_SHUT;
	return 0;
}

int state_load_conn(struct un_ns *n, enum rec_type type, struct rbuf *r, size_t len,
		    struct loaded *ld, char *err, size_t errlen)
{
	struct loaded_conn *c;
	uint8_t flags;
	int rc;

	if (type == REC_RESET ? len != CONN_HDR_LEN : len < FLOW_FIXED_LEN)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad connection record");
	if (ld->nconns >= n->cfg.max_tcp_flows)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: more connections than max_tcp_flows");
	if (ld->nconns == ld->cap) {
		unsigned cap = ld->cap ? ld->cap * 2 : 16;
		struct loaded_conn *p = realloc(ld->conns, cap * sizeof(*p));

		if (!p)
			return usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
		ld->conns = p;
		ld->cap = cap;
	}
	c = &ld->conns[ld->nconns];
	memset(c, 0, sizeof(*c));
	rc = load_conn_hdr(n, r, c, &flags, err, errlen);
	if (rc == 0 && type == REC_FLOW)
		rc = load_flow(n, r, len, c, flags, err, errlen);
	if (rc == 0)
		ld->nconns++;
	return rc;
}

/* ---------------------------------------------------------------- apply */

static bool mac_known(const uint8_t mac[6])
{
	return memcmp(mac, "\0\0\0\0\0\0", 6) != 0;
}

/* What came as a connection's host socket is a stream socket (a
 * descriptor from another process may be anything: a file, a pipe). */
static bool stream_socket(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

/* The connection goes on in this usernet; false: reset it instead. Each
 * fd serves one connection; buffers beyond this usernet's tcp_window
 * (another configuration) are not taken on. */
static bool carry_on(struct un_ns *n, struct loaded_conn *c, const int *fds, unsigned nfds,
		     bool *used)
{
	struct ns_sock *s;
	int fd, e;

	if (!c->live || !used || c->fd_index >= nfds || used[c->fd_index] ||
	    c->tcp.sndbuf > n->cfg.tcp_window || c->tcp.rcvbuf > n->cfg.tcp_window)
		return false;
	used[c->fd_index] = true;
	if (!stream_socket(fds[c->fd_index]))
		return false;
	fd = fcntl(fds[c->fd_index], F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return false;
	s = ns_tcp_restore(n->st, &c->tcp, c->snd, c->rcv, &e);
	if (!s) {
		close(fd);
		return false;
	}
	c->view.s = s;
	c->view.fd = fd;
	un_tcp_adopt(n, &c->view); /* owns both now, also when it fails */
	return true;
}

void state_apply_conns(struct un_ns *n, struct loaded *ld, const int *fds, unsigned nfds)
{
	bool *used = fds && nfds ? calloc(nfds, sizeof(*used)) : NULL;

	free(n->resets);
	n->resets = ld->nconns ? calloc(ld->nconns, sizeof(*n->resets)) : NULL;
	n->nresets = 0;
	for (unsigned i = 0; i < ld->nconns; i++) {
		struct loaded_conn *c = &ld->conns[i];

		/* The stack need not resolve the guest's address first (its
		 * segments, the RST answering a challenge ACK). */
		if (mac_known(c->rst.mac)) {
			if (c->rst.v6)
				ns_nd_add_static(n->st, n->link, c->rst.gaddr, c->rst.mac);
			else
				ns_arp_add_static(n->st, get32(c->rst.gaddr), c->rst.mac);
		}
		if (!carry_on(n, c, fds, nfds, used) && mac_known(c->rst.mac) && n->resets)
			n->resets[n->nresets++] = c->rst;
	}
	free(used);
}

/* ---------------------------------------------------------- the resets */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* ns_csum_add sums the bytes as they lie: its folded result is stored as
 * is, not converted to network order. */
static void put_csum(uint8_t *p, uint32_t sum)
{
	uint16_t v = (uint16_t)~ns_csum_fold(sum);

	memcpy(p, &v, 2);
}

/* Ethernet + IPv4/IPv6 + TCP RST|ACK from the remote end to the guest. */
static size_t build_rst(struct un_ns *n, const struct un_reset *x, uint8_t *f)
{
	size_t l3 = x->v6 ? 40 : 20, alen = x->v6 ? 16 : 4;
	uint8_t *ip = f + 14, *t = ip + l3, pseudo[40] = {0};
	uint32_t sum;

	memset(f, 0, 14 + l3 + 20);
	memcpy(f, x->mac, 6);
	memcpy(f + 6, n->cfg.gateway_mac, 6);
	put16(f + 12, x->v6 ? 0x86dd : 0x0800);
	if (x->v6) {
		ip[0] = 0x60;
		put16(ip + 4, 20);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, x->raddr, 16);
		memcpy(ip + 24, x->gaddr, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, 40);
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, x->raddr, 4);
		memcpy(ip + 16, x->gaddr, 4);
		put_csum(ip + 10, ns_csum_add(0, ip, 20));
	}
	put16(t, x->rport);
	put16(t + 2, x->gport);
	put32(t + 4, x->seq);
	put32(t + 8, x->ack);
	t[12] = 5 << 4;
	t[13] = 0x14; /* RST, ACK */
	memcpy(pseudo, x->raddr, alen);
	memcpy(pseudo + alen, x->gaddr, alen);
	/* IPv4: zero, protocol, length (RFC 9293 3.1); IPv6: length (32
	 * bits), three zeros, next header (RFC 8200 8.1). */
	if (x->v6) {
		pseudo[35] = 20;
		pseudo[39] = 6;
	} else {
		pseudo[9] = 6;
		pseudo[11] = 20;
	}
	sum = ns_csum_add(0, pseudo, x->v6 ? 40 : 12);
	put_csum(t + 16, ns_csum_add(sum, t, 20));
	return 14 + l3 + 20;
}

void un_state_send_resets(struct un_ns *n)
{
	uint8_t f[14 + 40 + 20];

	for (unsigned i = 0; i < n->nresets; i++) {
		size_t len = build_rst(n, &n->resets[i], f);

		n->stats.tx_frames++;
		n->stats.tx_bytes += len;
		n->cfg.send(n->cfg.opaque, f, len);
	}
	free(n->resets);
	n->resets = NULL;
	n->nresets = 0;
}
