/* tcp_ring.c — the byte rings behind every connection's send and receive
 * buffers: allocated once, copied into and out of, never per segment. */
#include <stdlib.h>

#include "netstack/tcp_internal.h"

int ring_init(struct tcp_ring *r, uint32_t cap)
{
	r->buf = malloc(cap);
	if (!r->buf)
		return -ENOMEM;
	r->cap = cap;
	r->head = 0;
	r->len = 0;
	return 0;
}

void ring_free(struct tcp_ring *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = r->len = r->head = 0;
}

/* Physical index of logical offset off. */
static uint32_t ring_pos(const struct tcp_ring *r, uint32_t off)
{
	uint32_t p = r->head + off;

	return p >= r->cap ? p - r->cap : p;
}

void ring_put(struct tcp_ring *r, uint32_t off, const void *src, uint32_t n)
{
	uint32_t p = ring_pos(r, off), first = u32_min(n, r->cap - p);

	memcpy(r->buf + p, src, first);
	memcpy(r->buf, (const uint8_t *)src + first, n - first);
}

void ring_get(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t n)
{
	uint32_t p = ring_pos(r, off), first = u32_min(n, r->cap - p);

	memcpy(dst, r->buf + p, first);
	memcpy((uint8_t *)dst + first, r->buf, n - first);
}

void ring_consume(struct tcp_ring *r, uint32_t n)
{
	r->head = ring_pos(r, n);
	r->len -= n;
}

void ring_peek(const struct tcp_ring *r, uint32_t n, struct ns_iov iov[2])
{
	uint32_t first = u32_min(n, r->cap - r->head);

	if (!n) { /* the ring may be gone (TIME-WAIT) */
		iov[0] = iov[1] = (struct ns_iov){ NULL, 0 };
		return;
	}
	iov[0] = (struct ns_iov){ r->buf + r->head, first };
	iov[1] = (struct ns_iov){ r->buf, n - first };
}

uint32_t ring_get_csum(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t n,
		       uint32_t sum)
{
	uint32_t p = ring_pos(r, off), first = u32_min(n, r->cap - p), rest;

	sum = ns_csum_copy(sum, dst, r->buf + p, first);
	if (first == n)
		return sum;
	rest = ns_csum_copy(0, (uint8_t *)dst + first, r->buf, n - first);
	/* After an odd first piece the rest starts at an odd offset of the
	 * checksummed data: its sum is byte-swapped (RFC 1071 2(B)). */
	return ns_csum_add(sum, &(uint16_t){ (uint16_t)(first & 1 ? ns_csum_swab(rest)
								  : ns_csum_fold(rest)) },
			   2);
}
