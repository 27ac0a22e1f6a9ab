/* link_pair.c — two links joined back to back in memory (tests, benches,
 * and anything that wants to be the "wire" itself). */
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "netstack/internal.h"

struct pframe {
	struct pframe *next;
	size_t len;
	uint8_t data[];
};

struct pair_end {
	struct ns_link link;
	struct pair_end *peer;
	struct pair_shared *sh;
	/* frames waiting to be received by this end */
	struct pframe *head, *tail;
	unsigned qlen;
	int efd;
	bool signalled;
	uint64_t dropped;
	struct pframe *pool; /* recycled frames of this end's frame size */
	unsigned npool;
	bool borrowed; /* the head frame is lent out (pair_borrow) */
};

struct pair_shared {
	pthread_mutex_t lock;
	unsigned queue_max;
	int refs;
};

static int pair_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct pair_end *e = l->priv, *p = e->peer;
	struct pframe *f;
	uint64_t one = 1;
	bool wake = false;

	pthread_mutex_lock(&e->sh->lock);
	if (!p || p->qlen >= e->sh->queue_max) {
		if (p)
			p->dropped++;
		pthread_mutex_unlock(&e->sh->lock);
		return p ? -ENOBUFS : -ENOTCONN;
	}
	f = p->pool;
	if (f) {
		p->pool = f->next;
		p->npool--;
	} else {
		f = malloc(sizeof(*f) + NS_FRAME_MAX(l->mtu));
		if (!f) {
			pthread_mutex_unlock(&e->sh->lock);
			return -ENOMEM;
		}
	}
	f->next = NULL;
	f->len = len;
	memcpy(f->data, frame, len);
	if (p->tail)
		p->tail->next = f;
	else
		p->head = f;
	p->tail = f;
	p->qlen++;
	if (!p->signalled) {
		p->signalled = true;
		wake = true;
	}
	pthread_mutex_unlock(&e->sh->lock);
	if (wake && p->efd >= 0)
		(void)!write(p->efd, &one, sizeof(one));
	return 0;
}

/* The head frame, or NULL with the eventfd drained (caller holds the
 * lock). */
static struct pframe *pair_head(struct pair_end *e)
{
	uint64_t v;

	if (!e->head && e->signalled) {
		e->signalled = false;
		if (e->efd >= 0)
			(void)!read(e->efd, &v, sizeof(v));
	}
	return e->head;
}

/* Take the head frame off the queue and keep it for reuse. */
static void pair_pop(struct pair_end *e)
{
	struct pframe *f = e->head;

	e->head = f->next;
	if (!e->head)
		e->tail = NULL;
	e->qlen--;
	if (e->npool < 512) {
		f->next = e->pool;
		e->pool = f;
		e->npool++;
	} else {
		free(f);
	}
}

static ssize_t pair_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct pair_end *e = l->priv;
	struct pframe *f;
	size_t n = 0;

	pthread_mutex_lock(&e->sh->lock);
	f = e->borrowed ? NULL : pair_head(e);
	if (f) {
		n = f->len < cap ? f->len : cap;
		memcpy(buf, f->data, n);
		pair_pop(e);
	}
	pthread_mutex_unlock(&e->sh->lock);
	return (ssize_t)n;
}

/* In place: the head frame stays queued (the peer only appends behind
 * it) until the next borrow or pair_release() pops it; popping on the
 * next borrow keeps it to one lock round per frame. */
static ssize_t pair_borrow(struct ns_link *l, const void **frame)
{
	struct pair_end *e = l->priv;
	struct pframe *f;

	pthread_mutex_lock(&e->sh->lock);
	if (e->borrowed)
		pair_pop(e);
	f = pair_head(e);
	e->borrowed = f != NULL;
	if (f)
		*frame = f->data;
	pthread_mutex_unlock(&e->sh->lock);
	return f ? (ssize_t)f->len : 0;
}

static void pair_release(struct ns_link *l)
{
	struct pair_end *e = l->priv;

	pthread_mutex_lock(&e->sh->lock);
	if (e->borrowed) {
		e->borrowed = false;
		pair_pop(e);
	}
	pthread_mutex_unlock(&e->sh->lock);
}

static int pair_fd(struct ns_link *l)
{
	return ((struct pair_end *)l->priv)->efd;
}

static void free_frames(struct pframe *f)
{
	while (f) {
		struct pframe *n = f->next;

		free(f);
		f = n;
	}
}

static void pair_destroy(struct ns_link *l)
{
	struct pair_end *e = l->priv;
	struct pair_shared *sh = e->sh;
	int refs;

	pthread_mutex_lock(&sh->lock);
	if (e->peer)
		e->peer->peer = NULL;
	refs = --sh->refs;
	pthread_mutex_unlock(&sh->lock);
	free_frames(e->head);
	free_frames(e->pool);
	if (e->efd >= 0)
		close(e->efd);
	free(e);
	if (refs == 0) {
		pthread_mutex_destroy(&sh->lock);
		free(sh);
	}
}

static const struct ns_link_ops pair_ops = {
	.transmit = pair_transmit,
	.receive = pair_receive,
	.fd = pair_fd,
	.destroy = pair_destroy,
	.borrow = pair_borrow,
	.release = pair_release,
};

static struct pair_end *pair_end_new(struct pair_shared *sh, unsigned mtu, uint8_t last)
{
	struct pair_end *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->sh = sh;
	e->link.ops = &pair_ops;
	e->link.priv = e;
	e->link.mtu = mtu;
	memcpy(e->link.mac, (uint8_t[6]){ 2, 0, 0, 0, 0, last }, 6);
	memcpy(e->link.name, last == 1 ? "pair0" : "pair1", 6);
	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return e;
}

int ns_link_pair(unsigned mtu, unsigned queue_max, struct ns_link **a, struct ns_link **b)
{
	struct pair_shared *sh;
	struct pair_end *ea, *eb;

	if (mtu < 68 || mtu > 65521)
		return -EINVAL;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	pthread_mutex_init(&sh->lock, NULL);
	sh->queue_max = queue_max ? queue_max : 4096;
	ea = pair_end_new(sh, mtu, 1);
	eb = pair_end_new(sh, mtu, 2);
	if (!ea || !eb) {
		free(ea);
		free(eb);
		pthread_mutex_destroy(&sh->lock);
		free(sh);
		return -ENOMEM;
	}
	sh->refs = 2;
	ea->peer = eb;
	eb->peer = ea;
	*a = &ea->link;
	*b = &eb->link;
	return 0;
}

uint64_t ns_link_pair_dropped(struct ns_link *l)
{
	struct pair_end *e = l->priv;
	uint64_t d;

	pthread_mutex_lock(&e->sh->lock);
	d = e->dropped;
	pthread_mutex_unlock(&e->sh->lock);
	return d;
}
