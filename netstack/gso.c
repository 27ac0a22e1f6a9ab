/* gso.c — the transmit side of GRO: consecutive full-sized segments of one
 * TCP flow grow into one frame up to 64 KiB with a virtio-net header
 * (GSO TCPV4/TCPV6, partial checksum), handed on when the flow changes,
 * a segment does not follow on, or at ns_gso_flush(). A peer that takes
 * such frames (the local kernel through an offloading TAP, a guest that
 * negotiated GUEST_TSO4/6) then handles ~45 MTU-sized segments at once.
 * Everything else is handed on as it came, with an all-zero header. */
#include <linux/virtio_net.h>
#include <stdlib.h>

#include "netstack/internal.h"

enum { GSO_FRAME_MAX = ETH_HLEN + 65535 };

/* The TCP segment being grown into a GSO frame. */
struct ns_gso {
	ns_gso_emit_fn emit;
	void *opaque;
	bool v4, v6;	    /* which families may be grown */
	uint8_t *agg;	    /* GSO_FRAME_MAX bytes */
	size_t agg_len, hl; /* bytes held; Ethernet + IP + TCP header length */
	size_t il;	    /* IP header length: 20 (IPv4) or 40 (IPv6) */
	size_t mss, last;   /* first and latest segment payload */
	unsigned nseg;
	uint32_t next_seq;
};

struct ns_gso *ns_gso_new(ns_gso_emit_fn emit, void *opaque)
{
	struct ns_gso *g = calloc(1, sizeof(*g));

	if (g && !(g->agg = malloc(GSO_FRAME_MAX))) {
		free(g);
		return NULL;
	}
	if (g) {
		g->emit = emit;
		g->opaque = opaque;
		g->v4 = g->v6 = true;
	}
	return g;
}

void ns_gso_free(struct ns_gso *g)
{
	if (!g)
		return;
	ns_gso_flush(g);
	free(g->agg);
	free(g);
}

void ns_gso_families(struct ns_gso *g, bool v4, bool v6)
{
	ns_gso_flush(g);
	g->v4 = v4;
	g->v6 = v6;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A plain TCP data segment with ACK (and maybe PSH) only, over IPv4
 * without options or fragments or over IPv6 without extension headers,
 * of a family g may grow: the kind that may be coalesced. Its header
 * lengths in *hl (Ethernet + IP + TCP) and *il (IP). */
static bool coalescible(const struct ns_gso *g, const uint8_t *f, size_t len, size_t *hl,
			size_t *il)
{
	const uint8_t *ip = f + ETH_HLEN, *tcp;
	size_t thl;

	if (len < ETH_HLEN + 40)
		return false;
	if (get16(f + 12) == ETHERTYPE_IP) {
		if (!g->v4 || ip[0] != 0x45 || ip[9] != NS_PROTO_TCP || (get16(ip + 6) & 0x3fff) ||
		    get16(ip + 2) != len - ETH_HLEN)
			return false;
		*il = 20;
	} else if (get16(f + 12) == ETHERTYPE_IPV6) {
		if (!g->v6 || (ip[0] >> 4) != 6 || ip[6] != NS_PROTO_TCP ||
		    get16(ip + 4) != len - ETH_HLEN - 40)
			return false;
		*il = 40;
	} else {
		return false;
	}
	tcp = ip + *il;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || ETH_HLEN + *il + thl >= len || (tcp[13] & ~TH_PSH) != TH_ACK)
		return false;
	*hl = ETH_HLEN + *il + thl;
	return true;
}

/* The IP fields that must match between segments of one flow. */
static bool same_ip(const uint8_t *ip, const uint8_t *fip, size_t il)
{
	if (il == 40) /* version, class, flow label; next header, hop limit; addresses */
		return !memcmp(ip, fip, 4) && !memcmp(ip + 6, fip + 6, 34);
	return ip[1] == fip[1] &&	      /* TOS */
	       !memcmp(ip + 8, fip + 8, 2) && /* TTL, proto */
	       !memcmp(ip + 12, fip + 12, 8); /* addresses */
}

/* Does segment f continue the one being grown? */
static bool continues(const struct ns_gso *g, const uint8_t *f, size_t len, size_t hl, size_t il)
{
	const uint8_t *a = g->agg, *ip = ETH_HLEN + a, *fip = f + ETH_HLEN;
	const uint8_t *tcp = ip + il, *ftcp = fip + il;
	size_t payload = len - hl;

	return g->nseg && hl == g->hl && il == g->il && g->last == g->mss && payload <= g->mss &&
	       g->agg_len + payload <= GSO_FRAME_MAX && get32(ftcp + 4) == g->next_seq &&
	       !memcmp(a, f, ETH_HLEN) &&			      /* MACs, type */
	       same_ip(ip, fip, il) && !memcmp(tcp, ftcp, 4) &&	      /* ports */
	       !memcmp(tcp + 8, ftcp + 8, 5) &&			      /* ack, offset */
	       !memcmp(tcp + 14, ftcp + 14, 2) &&		      /* window */
	       !memcmp(tcp + 20, ftcp + 20, hl - ETH_HLEN - il - 20); /* options */
}

/* The grown frame's IP length fields, IPv4 header checksum and the TCP
 * checksum field preset to the pseudo header over the whole length (a
 * partial checksum the taker completes, per segment if it splits it). */
static void gso_fix_headers(struct ns_gso *g, struct virtio_net_hdr *h)
{
	uint8_t *ip = g->agg + ETH_HLEN, *tcp = ip + g->il, pseudo[40] = {0};
	size_t l4len = g->agg_len - ETH_HLEN - g->il, plen;
	uint16_t v;

	if (g->il == 40) { /* payload length; pseudo header RFC 8200 8.1 */
		put16(ip + 4, (uint16_t)l4len);
		memcpy(pseudo, ip + 8, 32);
		put16(pseudo + 34, (uint16_t)l4len);
		pseudo[39] = NS_PROTO_TCP;
		plen = 40;
		h->gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	} else {
		put16(ip + 2, (uint16_t)(g->agg_len - ETH_HLEN));
		memset(ip + 10, 0, 2);
		v = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, 20));
		memcpy(ip + 10, &v, 2);
		memcpy(pseudo, ip + 12, 8);
		pseudo[9] = NS_PROTO_TCP;
		put16(pseudo + 10, (uint16_t)l4len);
		plen = 12;
		h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	}
	v = ns_csum_fold(ns_csum_add(0, pseudo, plen));
	memcpy(tcp + 16, &v, 2);
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->hdr_len = (uint16_t)g->hl;
	h->gso_size = (uint16_t)g->mss;
	h->csum_start = (uint16_t)(ETH_HLEN + g->il);
	h->csum_offset = 16;
}

/* Hand on what is being grown: as it is for one segment (its checksums
 * are complete), else as a GSO frame. */
int ns_gso_flush(struct ns_gso *g)
{
	struct virtio_net_hdr h = {0};

	if (!g->nseg)
		return 0;
	if (g->nseg > 1)
		gso_fix_headers(g, &h);
	g->nseg = 0;
	return g->emit(g->opaque, &h, g->agg, g->agg_len);
}

int ns_gso_add(struct ns_gso *g, const void *frame, size_t len)
{
	const uint8_t *f = frame;
	struct virtio_net_hdr h = {0};
	size_t hl, il;
	int rc;

	if (!coalescible(g, f, len, &hl, &il)) {
		rc = ns_gso_flush(g);
		return rc < 0 ? rc : g->emit(g->opaque, &h, f, len);
	}
	if (continues(g, f, len, hl, il)) {
		memcpy(g->agg + g->agg_len, f + hl, len - hl);
		g->agg_len += len - hl;
		g->agg[ETH_HLEN + il + 13] |= f[ETH_HLEN + il + 13]; /* PSH */
	} else {
		rc = ns_gso_flush(g);
		if (rc < 0)
			return rc;
		memcpy(g->agg, f, len);
		g->agg_len = len;
		g->hl = hl;
		g->il = il;
		g->mss = len - hl;
	}
	g->last = len - hl;
	g->nseg++;
	g->next_seq = get32(f + ETH_HLEN + il + 4) + (uint32_t)(len - hl);
	/* PSH ends what the sender had (as GRO flushes on it): hand it on
	 * rather than wait for more that may come only after an ACK. */
	return f[ETH_HLEN + il + 13] & TH_PSH ? ns_gso_flush(g) : 0;
}
