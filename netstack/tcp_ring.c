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
