/* link_impair.c — loss, duplication, reordering and delay in userspace,
 * both directions, from a seeded PRNG (the hosts have no sch_netem). */
#include <stdlib.h>

#include "netstack/internal.h"

struct held {
	struct held *next;
	uint64_t due;
	size_t len;
	uint8_t data[];
};

struct impair {
	struct ns_link link;
	struct ns_link *inner;
	struct ns_clock *clock;
	struct ns_impair_cfg cfg;
	uint64_t rng;
	struct held *tx, *rx; /* sorted by due time */
	struct ns_impair_stats stats;
	uint8_t *buf;
};

static uint64_t rnd(struct impair *im)
{
	uint64_t z = (im->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool chance(struct impair *im, unsigned bp)
{
	return bp && rnd(im) % 10000 < bp;
}

static void hold(struct held **q, const void *f, size_t len, uint64_t due)
{
	struct held *h = malloc(sizeof(*h) + len), **pp = q;

	if (!h)
		return;
	h->due = due;
	h->len = len;
	memcpy(h->data, f, len);
	while (*pp && (*pp)->due <= due)
		pp = &(*pp)->next;
	h->next = *pp;
	*pp = h;
}

/* Decide the fate of one frame: 0, 1 or 2 copies, each with a due time. */
static void impair_frame(struct impair *im, struct held **q, const void *f, size_t len)
{
	uint64_t now = ns_clock_now(im->clock);
	int copies = 1;

	if (chance(im, im->cfg.loss_bp)) {
		im->stats.dropped++;
		return;
	}
	if (chance(im, im->cfg.dup_bp)) {
		im->stats.duplicated++;
		copies = 2;
	}
	for (int i = 0; i < copies; i++) {
		uint64_t due = now + im->cfg.delay_us;

		if (im->cfg.jitter_us)
			due += rnd(im) % (im->cfg.jitter_us + 1);
		if (chance(im, im->cfg.reorder_bp)) {
			im->stats.reordered++;
			due += im->cfg.reorder_us ? im->cfg.reorder_us : 1000;
		}
		if (due > now)
			im->stats.delayed++;
		hold(q, f, len, due);
	}
}

static uint64_t impair_poll(struct ns_link *l, uint64_t now)
{
	struct impair *im = l->priv;
	uint64_t next = UINT64_MAX;

	now = ns_clock_now(im->clock);
	while (im->tx && im->tx->due <= now) {
		struct held *h = im->tx;

		im->tx = h->next;
		ns_link_transmit(im->inner, h->data, h->len);
		free(h);
	}
	if (im->tx)
		next = im->tx->due - now;
	if (im->rx)
		next = im->rx->due <= now ? 0 : (im->rx->due - now < next ? im->rx->due - now : next);
	return next;
}

static int impair_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct impair *im = l->priv;

	impair_frame(im, &im->tx, frame, len);
	impair_poll(l, 0);
	return 0;
}

static ssize_t impair_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct impair *im = l->priv;
	uint64_t now;
	ssize_t n;
	struct held *h;

	while ((n = ns_link_receive(im->inner, im->buf, NS_FRAME_BUF)) > 0)
		impair_frame(im, &im->rx, im->buf, (size_t)n);
	now = ns_clock_now(im->clock);
	h = im->rx;
	if (!h || h->due > now)
		return 0;
	im->rx = h->next;
	n = (ssize_t)(h->len < cap ? h->len : cap);
	memcpy(buf, h->data, (size_t)n);
	free(h);
	return n;
}

static int impair_fd(struct ns_link *l)
{
	return ns_link_fd(((struct impair *)l->priv)->inner);
}

static void free_held(struct held *h)
{
	while (h) {
		struct held *n = h->next;

		free(h);
		h = n;
	}
}

static void impair_destroy(struct ns_link *l)
{
	struct impair *im = l->priv;

	free_held(im->tx);
	free_held(im->rx);
	ns_link_destroy(im->inner);
	free(im->buf);
	free(im);
}

static const struct ns_link_ops impair_ops = {
	.transmit = impair_transmit,
	.receive = impair_receive,
	.fd = impair_fd,
	.poll = impair_poll,
	.destroy = impair_destroy,
};

struct ns_link *ns_link_impair(struct ns_link *inner, struct ns_clock *clock,
			       const struct ns_impair_cfg *cfg)
{
	struct impair *im = calloc(1, sizeof(*im));

	if (!im || !(im->buf = malloc(NS_FRAME_BUF))) {
		free(im);
		return NULL;
	}
	im->inner = inner;
	im->clock = clock ? clock : ns_clock_monotonic();
	im->cfg = *cfg;
	im->rng = cfg->seed;
	im->link = *inner;
	im->link.ops = &impair_ops;
	im->link.priv = im;
	return &im->link;
}

void ns_link_impair_stats(struct ns_link *l, struct ns_impair_stats *st)
{
	*st = ((struct impair *)l->priv)->stats;
}
