/* state.c — usernet_save / usernet_load for the netstack implementation:
 * the byte codec, the header, the LAN and DHCP lease records, and the
 * entry points (state.h has the format; state_tcp.c the connections).
 *
 * A lease only means something on the LAN it was given on, so the LAN
 * record comes first and must match the loading usernet's. Leases keep
 * the seconds they had left: the clocks of the saving and the loading
 * process have nothing in common. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/state.h"

#define REC_LAN_LEN 20
#define REC_LEASE_LEN 16

/* ------------------------------------------------------- the byte codec */

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

void w_bytes(struct wbuf *w, const void *src, size_t n)
{
	uint8_t *d = w_room(w, n);

	if (d && n)
		memcpy(d, src, n);
}

void w_u8(struct wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

void w_u16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 2);
}

void w_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 4);
}

bool state_push_fd(struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap, int fd)
{
	if (*nfds == *cap) {
		unsigned c = *cap ? *cap * 2 : 16;
		int *p = realloc(*fds, c * sizeof(*p));

		if (!p) {
			w->oom = true;
			return false;
		}
		*fds = p;
		*cap = c;
	}
	(*fds)[(*nfds)++] = fd;
	return true;
}

void w_rec(struct wbuf *w, enum rec_type type, uint32_t len)
{
	w_u16(w, (uint16_t)type);
	w_u16(w, 0);
	w_u32(w, len);
}

const uint8_t *r_take(struct rbuf *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	r->off += n;
	return r->p + r->off - n;
}

void r_bytes(struct rbuf *r, void *dst, size_t n)
{
	const uint8_t *s = r_take(r, n);

	if (s)
		memcpy(dst, s, n);
	else
		memset(dst, 0, n);
}

uint8_t r_u8(struct rbuf *r)
{
	uint8_t v;

	r_bytes(r, &v, 1);
	return v;
}

uint16_t r_u16(struct rbuf *r)
{
	uint8_t b[2];

	r_bytes(r, b, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

uint32_t r_u32(struct rbuf *r)
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

int un_state_save(void *impl, void **buf, size_t *len, int **fds, unsigned *nfds, char *err,
		  size_t errlen)
{
	struct un_ns *n = impl;
	struct wbuf w = {0};
	unsigned cap = 0;

	if (fds) {
		*fds = NULL;
		*nfds = 0;
	}
	w_bytes(&w, STATE_MAGIC, 4);
	w_u32(&w, STATE_VERSION);
	save_lan(n, &w);
	save_leases(n, &w);
	state_save_conns(n, &w, fds, nfds, &cap);
	state_save_fwds(n, &w, fds, nfds, &cap);
	if (w.oom) {
		free(w.p);
		if (fds) {
			free(*fds);
			*fds = NULL;
			*nfds = 0;
		}
		return usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

/* ----------------------------------------------------------------- load */

static int load_lan(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	uint32_t net = r_u32(r), prefix = r_u32(r), gw = r_u32(r), start = r_u32(r),
		 count = r_u32(r);

	if (ld->have_lan)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: two LAN records");
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

static int load_record(struct un_ns *n, struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	uint16_t type = r_u16(r), zero = r_u16(r);
	uint32_t len = r_u32(r);
	size_t end;
	int rc;

	if (r->bad || len > r->len - r->off)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: truncated");
	if (zero || type < REC_LAN || type > REC_FWD || (type == REC_LAN && len != REC_LAN_LEN) ||
	    (type == REC_LEASE && len != REC_LEASE_LEN) ||
	    (type == REC_FWD && len != REC_FWD_LEN) || (type == REC_FWD && ld->version < 2))
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: bad record (type %u, length %u)", type, len);
	if (type != REC_LAN && !ld->have_lan)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: no LAN record first");
	end = r->off + len;
	if (type == REC_LAN)
		rc = load_lan(n, r, ld, err, errlen);
	else if (type == REC_LEASE)
		rc = load_lease(n, r, ld, err, errlen);
	else if (type == REC_FWD)
		rc = state_load_fwd(r, ld, err, errlen);
	else
		rc = state_load_conn(n, (enum rec_type)type, r, len, ld, err, errlen);
	if (rc == 0 && (r->bad || r->off != end))
		rc = usernet_fail(err, errlen, -EINVAL, "usernet state: bad record length");
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
	if (version < 1 || version > STATE_VERSION)
		return usernet_fail(err, errlen, -EINVAL,
				    "usernet state: version %u, expected 1 to %u", version,
				    STATE_VERSION);
	ld->version = version;
	while (r->off < r->len)
		if ((rc = load_record(n, r, ld, err, errlen)) < 0)
			return rc;
	if (!ld->have_lan)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: no LAN record");
	return 0;
}

/* Replaces the lease table and takes on the connections (a load goes
 * into a usernet just made, whose own state is its power-on state). */
int un_state_load(void *impl, const void *buf, size_t len, const int *fds, unsigned nfds, char *err,
		  size_t errlen)
{
	struct un_ns *n = impl;
	struct rbuf r = {buf, len, 0, false};
	struct loaded ld = {0};
	int rc;

	ld.leases = calloc(n->dhcp.count, sizeof(*ld.leases));
	if (!ld.leases)
		rc = usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
	else
		rc = load_all(n, &r, &ld, err, errlen);
	if (rc == 0) {
		free(n->dhcp.leases);
		n->dhcp.leases = ld.leases;
		ld.leases = NULL;
		state_apply_conns(n, &ld, fds, nfds);
		state_apply_fwds(n, &ld, fds, nfds);
	}
	free(ld.leases);
	free(ld.conns);
	free(ld.fwds);
	return rc;
}

void un_state_hand_over(void *impl)
{
	struct un_ns *n = impl;

	n->handed_over = true;
	un_tcp_hand_over(n);
	un_fwd_hand_over(n);
}
