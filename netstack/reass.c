/* reass.c — IPv4 and IPv6 fragment reassembly with limits on time,
 * memory and count (one budget for both families); any overlap discards
 * the whole datagram (RFC 5722's rule, which defeats overlapping-fragment
 * attacks). */
#include <stdlib.h>

#include "netstack/internal.h"

enum { REASS_MAX_DGRAMS = 64, REASS_MAX_FRAGS = 128, FRAG_OVERHEAD = 64 };

struct frag {
	struct frag *next;
	unsigned off, len; /* bytes of the L4 payload */
	uint8_t data[];
};

struct reass {
	struct reass *next;
	struct ipaddr src, dst;
	uint32_t id;
	uint8_t proto;
	bool v6;
	uint64_t expires;
	unsigned total;	 /* payload length once the last fragment came, else 0 */
	unsigned nfrags;
	size_t mem;
	uint8_t hdr[60]; /* first fragment's header */
	unsigned hlen;
	struct frag *frags; /* sorted by offset, never overlapping */
};

static void reass_tick(struct ns_stack *st, struct ns_timer *t);
static void count_drop(struct ns_stack *st, bool v6);

void reass_init(struct ns_stack *st)
{
	timer_init(&st->reass_timer, reass_tick);
}

static void reass_drop(struct ns_stack *st, struct reass **pp)
{
	struct reass *r = *pp;

	*pp = r->next;
	while (r->frags) {
		struct frag *f = r->frags;

		r->frags = f->next;
		free(f);
	}
	st->reass_mem -= r->mem;
	st->reass_count--;
	free(r);
}

void reass_flush(struct ns_stack *st)
{
	while (st->reass)
		reass_drop(st, &st->reass);
	timer_cancel(st, &st->reass_timer);
}

static void reass_rearm(struct ns_stack *st)
{
	uint64_t next = UINT64_MAX;

	for (struct reass *r = st->reass; r; r = r->next)
		if (r->expires < next)
			next = r->expires;
	if (next == UINT64_MAX)
		timer_cancel(st, &st->reass_timer);
	else
		timer_arm(st, &st->reass_timer, next);
}

static void reass_tick(struct ns_stack *st, struct ns_timer *t)
{
	struct reass **pp = &st->reass;

	while (*pp) {
		if ((*pp)->expires <= st->now) {
			count_drop(st, (*pp)->v6);
			/* RFC 792 time exceeded in reassembly needs the first
			 * fragment; we keep its header only, so stay silent. */
			reass_drop(st, pp);
		} else {
			pp = &(*pp)->next;
		}
	}
	reass_rearm(st);
}

/* Make room by dropping the oldest datagrams. */
static bool reass_make_room(struct ns_stack *st, size_t need)
{
	while (st->reass && (st->reass_mem + need > st->reass_mem_max ||
			     st->reass_count >= REASS_MAX_DGRAMS)) {
		struct reass **oldest = &st->reass;

		for (struct reass **pp = &st->reass; *pp; pp = &(*pp)->next)
			if ((*pp)->expires < (*oldest)->expires)
				oldest = pp;
		count_drop(st, (*oldest)->v6);
		reass_drop(st, oldest);
	}
	return st->reass_mem + need <= st->reass_mem_max;
}

static uint8_t *reass_complete(struct ns_stack *st, struct reass **pp, size_t *out_len)
{
	struct reass *r = *pp;
	size_t len = r->hlen + r->total;
	uint8_t *buf = malloc(len);
	struct ip_hdr *ih = (void *)buf;

	if (buf) {
		memcpy(buf, r->hdr, r->hlen);
		for (struct frag *f = r->frags; f; f = f->next)
			memcpy(buf + r->hlen + f->off, f->data, f->len);
		if (r->v6) { /* payload length: what follows the fixed header */
			uint16_t pl = htons((uint16_t)(len - 40));

			memcpy(buf + 4, &pl, 2);
			st->stats.ip6_reass_ok++;
		} else {
			ih->len = htons((uint16_t)len);
			ih->off = 0;
			st->stats.ip_reass_ok++;
		}
		*out_len = len;
	}
	reass_drop(st, pp);
	reass_rearm(st);
	return buf;
}

uint8_t *reass_add(struct ns_stack *st, const struct ip_hdr *ih, const uint8_t *payload,
		   size_t plen, size_t *out_len)
{
	uint16_t offw = ntohs(ih->off);
	struct reass_piece pc = {
		.src = ipa_v4(ntohl(ih->src)),
		.dst = ipa_v4(ntohl(ih->dst)),
		.id = ntohs(ih->id),
		.proto = ih->proto,
		.more = offw & IP_MF,
		.off = (unsigned)(offw & IP_OFFMASK) * 8,
		.hdr = (const uint8_t *)ih,
		.hlen = (ih->vhl & 15) * 4u, /* caller guarantees hlen bytes */
		.payload = payload,
		.plen = plen,
	};

	return reass_add_piece(st, &pc, out_len);
}

static void count_drop(struct ns_stack *st, bool v6)
{
	if (v6)
		st->stats.ip6_reass_drop++;
	else
		st->stats.ip_reass_drop++;
}

static bool same_dgram(const struct reass *r, const struct reass_piece *pc)
{
	return r->id == pc->id && r->v6 == pc->v6 && r->proto == pc->proto &&
	       ipa_eq(&r->src, &pc->src) && ipa_eq(&r->dst, &pc->dst);
}

uint8_t *reass_add_piece(struct ns_stack *st, const struct reass_piece *pc, size_t *out_len)
{
	unsigned off = pc->off;
	size_t plen = pc->plen;
	bool more = pc->more;
	struct reass **pp, *r;
	struct frag *f, **fp;
	unsigned covered = 0;

	/* Every fragment but the last carries a multiple of 8 bytes; the
	 * datagram may not pass 65535 bytes (IPv6: of payload). */
	if ((more && (plen & 7)) || plen == 0 || pc->hlen > sizeof(r->hdr) ||
	    off + plen + (pc->v6 ? 0 : pc->hlen) > 65535)
		goto drop;
	for (pp = &st->reass; *pp; pp = &(*pp)->next)
		if (same_dgram(*pp, pc))
			break;
	if (!*pp) {
		if (!reass_make_room(st, sizeof(*r) + plen + FRAG_OVERHEAD))
			goto drop;
		r = calloc(1, sizeof(*r));
		if (!r)
			goto drop;
		r->src = pc->src;
		r->dst = pc->dst;
		r->id = pc->id;
		r->proto = pc->proto;
		r->v6 = pc->v6;
		r->expires = st->now + (uint64_t)st->reass_timeout_ms * 1000u;
		r->mem = sizeof(*r);
		r->next = st->reass;
		st->reass = r;
		st->reass_mem += r->mem;
		st->reass_count++;
		pp = &st->reass;
		reass_rearm(st);
	}
	r = *pp;
	if (r->nfrags >= REASS_MAX_FRAGS || (r->total && off + plen > r->total) ||
	    (!more && r->total && r->total != off + plen))
		goto drop_dgram;
	/* Find the insertion point; any overlap drops the datagram. */
	for (fp = &r->frags; *fp && (*fp)->off < off; fp = &(*fp)->next)
		;
	if (*fp && (*fp)->off < off + plen)
		goto drop_dgram;
	for (struct frag *prev = r->frags; prev && prev->off < off; prev = prev->next)
		if (prev->off + prev->len > off)
			goto drop_dgram;
	if (!more) {
		for (struct frag *g = r->frags; g; g = g->next)
			if (g->off + g->len > off + plen)
				goto drop_dgram;
		r->total = off + (unsigned)plen;
	}
	if (st->reass_mem + plen + FRAG_OVERHEAD > st->reass_mem_max)
		goto drop_dgram;
	f = malloc(sizeof(*f) + plen);
	if (!f)
		goto drop_dgram;
	f->off = off;
	f->len = (unsigned)plen;
	memcpy(f->data, pc->payload, plen);
	f->next = *fp;
	*fp = f;
	r->nfrags++;
	r->mem += plen + FRAG_OVERHEAD;
	st->reass_mem += plen + FRAG_OVERHEAD;
	if (off == 0) {
		r->hlen = pc->hlen;
		memcpy(r->hdr, pc->hdr, r->hlen);
	}
	if (!r->total || !r->hlen)
		return NULL;
	for (f = r->frags; f; f = f->next) {
		if (f->off != covered)
			return NULL;
		covered += f->len;
	}
	if (covered != r->total)
		return NULL;
	return reass_complete(st, pp, out_len);
drop_dgram:
	reass_drop(st, pp);
	reass_rearm(st);
drop:
	count_drop(st, pc->v6);
	return NULL;
}
