/* state.c — usernet_save / usernet_load for the netstack implementation.
 *
 * The snapshot is a byte buffer: the header "USNT", a version (u32), then
 * records of u16 type, u16 zero, u32 body length, body; every integer big
 * endian. The loader checks each length against what is left and each
 * record's exact size and values before it changes anything: hostile or
 * truncated input is refused with a one-line reason.
 *
 *   LAN    the network, prefix, gateway and DHCP range it was saved on:
 *          a lease only means something on the same LAN
 *   LEASE  one DHCP lease: address, MAC, state, seconds left
 *   RESET  one guest TCP connection through the NAT: its 4-tuple as the
 *          guest sees it, the guest's MAC, and the sequence numbers a RST
 *          must carry for the guest to accept it
 *
 * A loaded usernet has no host sockets for the saved connections, so
 * each of them is reset on the guest's side at the next usernet_poll():
 * the guest's application sees ECONNRESET at once instead of waiting on a
 * connection nothing will ever answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/backend.h"

#define STATE_MAGIC "USNT"
#define STATE_VERSION 1

enum rec_type {
	REC_LAN = 1,
	REC_LEASE = 2,
	REC_RESET = 3,
};

#define REC_LAN_LEN 20
#define REC_LEASE_LEN 16
#define REC_RESET_LEN 52

/* A guest connection to reset: addresses as the guest sees them. */
struct un_reset {
	bool v6;
	uint8_t mac[6];
	uint8_t gaddr[16], raddr[16]; /* IPv4: the first 4 bytes */
	uint16_t gport, rport;
	uint32_t seq, ack;
};

/* ------------------------------------------------------- the byte codec */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static uint8_t *w_room(struct wbuf *w, size_t n)
{
	if (w->oom)
		return NULL;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		uint8_t *p;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->oom = true;
			return NULL;
		}
		w->p = p;
		w->cap = cap;
	}
	w->len += n;
	return w->p + w->len - n;
}

static void w_bytes(struct wbuf *w, const void *src, size_t n)
{
	uint8_t *d = w_room(w, n);

	if (d)
		memcpy(d, src, n);
}

static void w_u8(struct wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void w_u16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 2);
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 4);
}

static void w_rec(struct wbuf *w, enum rec_type type, uint32_t len)
{
	w_u16(w, (uint16_t)type);
	w_u16(w, 0);
	w_u32(w, len);
}

/* Reads past the end yield zeros and set bad. */
struct rbuf {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};

static const uint8_t *r_take(struct rbuf *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	r->off += n;
	return r->p + r->off - n;
}

static void r_bytes(struct rbuf *r, void *dst, size_t n)
{
	const uint8_t *s = r_take(r, n);

	if (s)
		memcpy(dst, s, n);
	else
		memset(dst, 0, n);
}

static uint8_t r_u8(struct rbuf *r)
{
	uint8_t v;

	r_bytes(r, &v, 1);
	return v;
}

static uint16_t r_u16(struct rbuf *r)
{
	uint8_t b[2];

	r_bytes(r, b, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t r_u32(struct rbuf *r)
{
	uint8_t b[4];

	r_bytes(r, b, 4);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ----------------------------------------------------------------- save */

static void save_lan(struct un_ns *n, struct wbuf *w)
{
	w_rec(w, REC_LAN, REC_LAN_LEN);
	w_u32(w, n->cfg.net);
	w_u32(w, n->cfg.prefix);
	w_u32(w, n->cfg.gateway);
	w_u32(w, n->cfg.dhcp_start);
	w_u32(w, n->cfg.dhcp_count);
}

/* Live leases with the seconds they have left: the clocks of the saving
 * and the loading process have nothing in common. */
static void save_leases(struct un_ns *n, struct wbuf *w)
{
	uint64_t now_s = un_now(n) / 1000000;
	struct dhcp_server *d = &n->dhcp;

	for (unsigned i = 0; i < d->count; i++) {
		const struct dhcp_lease *l = &d->leases[i];
		uint64_t left;

		if (l->state == LEASE_FREE || l->expires_s <= now_s)
			continue;
		left = l->expires_s - now_s;
		w_rec(w, REC_LEASE, REC_LEASE_LEN);
		w_u32(w, d->start + i);
		w_bytes(w, l->mac, 6);
		w_u8(w, (uint8_t)l->state);
		w_u8(w, 0);
		w_u32(w, left > UINT32_MAX ? UINT32_MAX : (uint32_t)left);
	}
}

struct save_ctx {
	struct un_ns *n;
	struct wbuf *w;
};

static void put_addr(struct wbuf *w, const struct ns_sockaddr *a)
{
	uint8_t b[16] = {0};

	if (a->family == NS_AF_INET6)
		memcpy(b, a->addr6, 16);
	else
		for (int i = 0; i < 4; i++)
			b[i] = (uint8_t)(a->addr >> (24 - 8 * i));
	w_bytes(w, b, 16);
}

/* One RESET record per relaying connection whose guest MAC is known (an
 * unknown one cannot be addressed; that guest learns of the loss at its
 * next segment, which the loaded usernet answers with a RST anyway). */
static void save_conn(void *ctx, struct ns_sock *s)
{
	struct save_ctx *c = ctx;
	struct ns_sockaddr guest, remote;
	struct ns_tcp_info ti;
	uint8_t mac[6];
	bool v6;

	if (ns_getpeername(s, &guest) < 0 || ns_getsockname(s, &remote) < 0 ||
	    ns_tcp_info(s, &ti) < 0)
		return;
	v6 = guest.family == NS_AF_INET6;
	if ((v6 ? ns_nd_lookup(c->n->st, guest.addr6, mac)
		: ns_arp_lookup(c->n->st, guest.addr, mac)) < 0)
		return;
	w_rec(c->w, REC_RESET, REC_RESET_LEN);
	w_u8(c->w, v6 ? 6 : 4);
	w_u8(c->w, 0);
	w_bytes(c->w, mac, 6);
	put_addr(c->w, &guest);
	put_addr(c->w, &remote);
	w_u16(c->w, guest.port);
	w_u16(c->w, remote.port);
	/* snd_max: everything we ever sent. When the guest has not seen all
	 * of it, the RST is in its window but not exact (RFC 5961 3.2) and
	 * draws a challenge ACK, which the loaded stack answers with a RST
	 * at exactly the ACK's number. */
	w_u32(c->w, ti.snd_max);
	w_u32(c->w, ti.rcv_nxt);
}

int un_state_save(void *impl, void **buf, size_t *len, char *err, size_t errlen)
{
	struct un_ns *n = impl;
	struct wbuf w = {0};
	struct save_ctx c = {n, &w};

	w_bytes(&w, STATE_MAGIC, 4);
	w_u32(&w, STATE_VERSION);
	save_lan(n, &w);
	save_leases(n, &w);
	un_tcp_each_open(n, save_conn, &c);
	if (w.oom) {
		free(w.p);
		return usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

/* ----------------------------------------------------------------- load */

/* What a load will apply once the whole buffer has checked out. */
struct loaded {
	bool have_lan;
	struct dhcp_lease *leases; /* dhcp.count entries */
	struct un_reset *resets;
	unsigned nresets;
};

static int load_lan(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	uint32_t net = r_u32(r), prefix = r_u32(r), gw = r_u32(r), start = r_u32(r),
		 count = r_u32(r);

	if (net != n->cfg.net || prefix != n->cfg.prefix || gw != n->cfg.gateway ||
	    start != n->cfg.dhcp_start || count != n->cfg.dhcp_count)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: saved on another LAN (net, prefix, gateway or "
				    "DHCP range differ)");
	ld->have_lan = true;
	return 0;
}

static int load_lease(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	struct dhcp_server *d = &n->dhcp;
	uint32_t addr = r_u32(r);
	struct dhcp_lease l;
	uint32_t left;

	r_bytes(r, l.mac, 6);
	l.state = (enum dhcp_lease_state)r_u8(r);
	r_u8(r);
	left = r_u32(r);
	if (addr < d->start || addr - d->start >= d->count)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: lease outside the DHCP range");
	if (l.state != LEASE_OFFERED && l.state != LEASE_BOUND && l.state != LEASE_DECLINED)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad lease state %d",
				    (int)l.state);
	if (ld->leases[addr - d->start].state != LEASE_FREE)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: lease saved twice");
	l.expires_s = un_now(n) / 1000000 + left;
	ld->leases[addr - d->start] = l;
	return 0;
}

static uint32_t get32(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static bool guest4_ok(struct un_ns *n, const uint8_t a[4])
{
	uint32_t v = get32(a);
	uint32_t mask = 0xffffffffu << (32 - n->cfg.prefix);

	return (v & mask) == n->cfg.net && v != n->cfg.gateway && v != n->cfg.dns &&
	       (v & ~mask) != 0 && (v & ~mask) != ~mask;
}

static int load_reset(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	struct un_reset x;
	uint8_t fam = r_u8(r);
	bool ok;

	r_u8(r);
	x.v6 = fam == 6;
	r_bytes(r, x.mac, 6);
	r_bytes(r, x.gaddr, 16);
	r_bytes(r, x.raddr, 16);
	x.gport = r_u16(r);
	x.rport = r_u16(r);
	x.seq = r_u32(r);
	x.ack = r_u32(r);
	if (fam != 4 && fam != 6)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad address family %u",
				    fam);
	/* Only ever toward a guest address on this LAN, from elsewhere. */
	ok = x.v6 ? !n->cfg.ipv6_off && un_guest6_ok(n, x.gaddr) : guest4_ok(n, x.gaddr);
	if (!ok || (x.mac[0] & 1) || !x.gport || !x.rport)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: connection with a bad guest address or port");
	if (ld->nresets >= n->cfg.max_tcp_flows)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: more connections than max_tcp_flows");
	ld->resets[ld->nresets++] = x;
	return 0;
}

static int load_record(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	uint16_t type = r_u16(r), zero = r_u16(r);
	uint32_t len = r_u32(r);
	static const uint32_t want[] = {
		[REC_LAN] = REC_LAN_LEN, [REC_LEASE] = REC_LEASE_LEN, [REC_RESET] = REC_RESET_LEN};
	size_t end;
	int rc;

	if (r->bad || len > r->len - r->off)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: truncated");
	if (zero || type < REC_LAN || type > REC_RESET || len != want[type])
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: bad record (type %u, length %u)", type, len);
	if (type != REC_LAN && !ld->have_lan)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: no LAN record first");
	end = r->off + len;
	if (type == REC_LAN)
		rc = ld->have_lan
			     ? usernet_fail(err, errlen, -EINVAL, "usernet state: two LAN records")
			     : load_lan(n, r, ld, err, errlen);
	else if (type == REC_LEASE)
		rc = load_lease(n, r, ld, err, errlen);
	else
		rc = load_reset(n, r, ld, err, errlen);
	if (rc == 0 && (r->bad || r->off != end))
		rc = usernet_fail(err, errlen, -EINVAL, "usernet state: truncated");
	return rc;
}

static int load_all(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	uint8_t magic[4];
	uint32_t version;
	int rc;

	r_bytes(r, magic, 4);
	version = r_u32(r);
	if (r->bad || memcmp(magic, STATE_MAGIC, 4))
		return usernet_fail(err, errlen, -EINVAL, "usernet state: not a usernet snapshot");
	if (version != STATE_VERSION)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: version %u, expected %u",
				    version, STATE_VERSION);
	while (r->off < r->len)
		if ((rc = load_record(n, r, ld, err, errlen)) < 0)
			return rc;
	if (!ld->have_lan)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: no LAN record");
	return 0;
}

/* Replaces the lease table and queues the resets (a load goes into a
 * usernet just made, whose own state is its power-on state). */
int un_state_load(void *impl, const void *buf, size_t len, char *err, size_t errlen)
{
	struct un_ns *n = impl;
	struct rbuf r = {buf, len, 0, false};
	struct loaded ld = {0};
	int rc;

	ld.leases = calloc(n->dhcp.count, sizeof(*ld.leases));
	ld.resets = calloc(n->cfg.max_tcp_flows, sizeof(*ld.resets));
	if (!ld.leases || !ld.resets)
		rc = usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
	else
		rc = load_all(n, &r, &ld, err, errlen);
	if (rc < 0) {
		free(ld.leases);
		free(ld.resets);
		return rc;
	}
	free(n->dhcp.leases);
	n->dhcp.leases = ld.leases;
	free(n->resets);
	n->resets = ld.resets;
	n->nresets = ld.nresets;
	return 0;
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
		const struct un_reset *x = &n->resets[i];
		size_t len = build_rst(n, x, f);

		/* The guest may answer with a challenge ACK: the stack's RST
		 * to that need not wait for address resolution. */
		if (x->v6)
			ns_nd_add_static(n->st, n->link, x->gaddr, x->mac);
		else
			ns_arp_add_static(n->st, get32(x->gaddr), x->mac);

		n->stats.tx_frames++;
		n->stats.tx_bytes += len;
		n->cfg.send(n->cfg.opaque, f, len);
	}
	free(n->resets);
	n->resets = NULL;
	n->nresets = 0;
}
