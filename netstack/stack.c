/* stack.c — the stack object: lock, interfaces, routes, the event-loop
 * entry points, waiting, packet buffers and small helpers. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "netstack/internal.h"

/* ----------------------------------------------------------------- lock */

void stack_enter(struct ns_stack *st)
{
	pthread_mutex_lock(&st->lock);
	st->now = ns_clock_now(st->clock);
}

enum { CB_BATCH = 64 };

void stack_leave(struct ns_stack *st)
{
	struct ns_waitq *batch[CB_BATCH];
	unsigned events[CB_BATCH];
	unsigned n;

	while (st->pending_cb) {
		for (n = 0; n < CB_BATCH && st->pending_cb; n++) {
			struct ns_waitq *wq = st->pending_cb;

			st->pending_cb = wq->next_pending;
			wq->cb_pending = false;
			batch[n] = wq;
			events[n] = sock_events_locked(wq->cb_sock);
			sock_ref(wq->cb_sock);
		}
		pthread_mutex_unlock(&st->lock);
		for (unsigned i = 0; i < n; i++) {
			ns_sock_cb cb = batch[i]->cb;

			if (cb)
				cb(batch[i]->cb_sock, events[i], batch[i]->cb_ctx);
		}
		pthread_mutex_lock(&st->lock);
		for (unsigned i = 0; i < n; i++)
			sock_unref(batch[i]->cb_sock);
	}
	pthread_mutex_unlock(&st->lock);
}

uint64_t stack_rand(struct ns_stack *st)
{
	/* splitmix64: small, seeded, good enough for ports and jitter. */
	uint64_t z = (st->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void stack_timer_changed(struct ns_stack *st)
{
	uint64_t one = 1;

	/* Only another thread's change can leave the loop sleeping too long. */
	if (!st->in_loop && st->efd >= 0)
		(void)!write(st->efd, &one, sizeof(one));
}

/* --------------------------------------------------------------- waiting */

void waitq_init(struct ns_waitq *wq)
{
	pthread_condattr_t a;

	memset(wq, 0, sizeof(*wq));
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wq->cv, &a);
	pthread_condattr_destroy(&a);
	wq->efd = -1;
}

void waitq_destroy(struct ns_stack *st, struct ns_waitq *wq)
{
	if (wq->cb_pending) {
		struct ns_waitq **pp = &st->pending_cb;

		while (*pp && *pp != wq)
			pp = &(*pp)->next_pending;
		if (*pp)
			*pp = wq->next_pending;
		wq->cb_pending = false;
	}
	pthread_cond_destroy(&wq->cv);
	if (wq->efd >= 0)
		close(wq->efd);
	wq->efd = -1;
}

void waitq_notify(struct ns_stack *st, struct ns_waitq *wq)
{
	pthread_cond_broadcast(&wq->cv);
	if (wq->efd >= 0 && !wq->efd_signalled) {
		uint64_t one = 1;

		wq->efd_signalled = true;
		(void)!write(wq->efd, &one, sizeof(one));
	}
	if (wq->cb && wq->cb_sock && !wq->cb_pending) {
		wq->cb_pending = true;
		wq->next_pending = st->pending_cb;
		st->pending_cb = wq;
	}
}

int waitq_wait(struct ns_stack *st, struct ns_waitq *wq, int timeout_ms)
{
	struct timespec ts;
	int rc;

	if (timeout_ms < 0) {
		pthread_cond_wait(&wq->cv, &st->lock);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		rc = pthread_cond_timedwait(&wq->cv, &st->lock, &ts);
		if (rc == ETIMEDOUT) {
			st->now = ns_clock_now(st->clock);
			return -ETIMEDOUT;
		}
	}
	st->now = ns_clock_now(st->clock);
	return 0;
}

int waitq_fd(struct ns_waitq *wq)
{
	if (wq->efd < 0) {
		wq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		/* Start signalled: the caller looks at the state once anyway. */
		if (wq->efd >= 0) {
			uint64_t one = 1;

			(void)!write(wq->efd, &one, sizeof(one));
			wq->efd_signalled = true;
		}
	}
	return wq->efd;
}

void waitq_clear_fd(struct ns_waitq *wq)
{
	uint64_t v;

	if (wq->efd >= 0 && wq->efd_signalled) {
		(void)!read(wq->efd, &v, sizeof(v));
		wq->efd_signalled = false;
	}
}

/* --------------------------------------------------------------- packets */

enum { PKT_POOL_SIZE = 2048, PKT_POOL_MAX = 256 };

struct ns_pkt *pkt_alloc(struct ns_stack *st, size_t len)
{
	struct ns_pkt *p;
	size_t cap = len <= PKT_POOL_SIZE ? PKT_POOL_SIZE : len;

	if (cap == PKT_POOL_SIZE && st->pkt_pool) {
		p = st->pkt_pool;
		st->pkt_pool = p->next;
		st->pkt_pool_len--;
	} else {
		p = malloc(sizeof(*p) + cap);
		if (!p)
			return NULL;
		p->cap = cap;
	}
	p->next = NULL;
	p->len = len;
	p->data = p->buf;
	memset(&p->info, 0, sizeof(p->info));
	return p;
}

void pkt_free(struct ns_stack *st, struct ns_pkt *p)
{
	if (!p)
		return;
	if (p->cap == PKT_POOL_SIZE && st->pkt_pool_len < PKT_POOL_MAX) {
		p->next = st->pkt_pool;
		st->pkt_pool = p;
		st->pkt_pool_len++;
		return;
	}
	free(p);
}

/* ----------------------------------------------------------------- stack */

struct ns_stack *ns_stack_new(const struct ns_stack_cfg *cfg)
{
	struct ns_stack_cfg dflt = { 0 };
	struct ns_stack *st = calloc(1, sizeof(*st));

	if (!cfg)
		cfg = &dflt;
	if (!st)
		return NULL;
	st->tx = malloc(NS_FRAME_BUF + NS_HEADROOM);
	st->frag = malloc(NS_FRAME_BUF + NS_HEADROOM);
	st->rx = malloc(NS_FRAME_BUF);
	if (!st->tx || !st->frag || !st->rx)
		goto fail;
	pthread_mutex_init(&st->lock, NULL);
	st->clock = cfg->clock ? cfg->clock : ns_clock_monotonic();
	st->now = ns_clock_now(st->clock);
	st->rng = cfg->seed;
	if (!st->rng && getrandom(&st->rng, sizeof(st->rng), 0) != sizeof(st->rng))
		st->rng = st->now ^ (uint64_t)getpid();
	st->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	st->reass_mem_max = cfg->reass_mem_max ? cfg->reass_mem_max : 1u << 20;
	st->reass_timeout_ms = cfg->reass_timeout_ms ? cfg->reass_timeout_ms : 30000;
	st->arp_timeout_s = cfg->arp_timeout_s ? cfg->arp_timeout_s : 300;
	st->tcp_max_conns = cfg->tcp_max_conns ? cfg->tcp_max_conns : 65536;
	st->next_port = (uint16_t)(49152 + stack_rand(st) % 16384);
	st->ip_id = (uint16_t)stack_rand(st);
	st->ip6_id = (uint32_t)stack_rand(st);
	arp_init(st);
	nd6_init(st);
	reass_init(st);
	tcp_init(st);
	return st;
fail:
	free(st->tx);
	free(st->frag);
	free(st->rx);
	free(st);
	return NULL;
}

void ns_stack_free(struct ns_stack *st)
{
	if (!st)
		return;
	stack_enter(st);
	tcp_free_all(st);
	sock_free_all(st);
	arp_flush(st);
	nd6_flush(st);
	reass_flush(st);
	while (st->pkt_pool) {
		struct ns_pkt *p = st->pkt_pool;

		st->pkt_pool = p->next;
		free(p);
	}
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_destroy(&st->lock);
	if (st->efd >= 0)
		close(st->efd);
	free(st->heap);
	free(st->tx);
	free(st->frag);
	free(st->rx);
	free(st);
}

struct ns_iface *iface_of_link(struct ns_stack *st, struct ns_link *l)
{
	for (unsigned i = 0; i < st->nifaces; i++)
		if (st->ifaces[i].link == l)
			return &st->ifaces[i];
	return NULL;
}

bool iface_is_local(struct ns_stack *st, uint32_t addr)
{
	for (unsigned i = 0; i < st->nifaces; i++) {
		struct ns_iface *ifc = &st->ifaces[i];

		if (ifc->addr == addr)
			return true;
		for (unsigned j = 0; j < ifc->naliases; j++)
			if (ifc->aliases[j] == addr)
				return true;
	}
	return false;
}

uint32_t iface_src_for(struct ns_stack *st, uint32_t dst)
{
	uint32_t nh;
	struct ns_link *l;
	struct ns_iface *ifc;

	if (ns_route_lookup(st, dst, &nh, &l) < 0)
		return st->nifaces ? st->ifaces[0].addr : 0;
	ifc = iface_of_link(st, l);
	return ifc ? ifc->addr : 0;
}

static int route_add_locked(struct ns_stack *st, uint32_t dst, unsigned len, uint32_t gw,
			    struct ns_iface *ifc)
{
	struct ns_route *r;
	unsigned i;

	if (len > 32)
		return -EINVAL;
	for (i = 0; i < st->nroutes; i++) {
		r = &st->routes[i];
		if (r->len == len && r->dst == (dst & prefix_mask(len))) {
			r->gw = gw;
			r->ifc = ifc;
			return 0;
		}
	}
	if (st->nroutes == NS_MAX_ROUTES)
		return -ENOSPC;
	/* Kept sorted longest prefix first: the first match is the best. */
	for (i = st->nroutes; i > 0 && st->routes[i - 1].len < len; i--)
		st->routes[i] = st->routes[i - 1];
	r = &st->routes[i];
	r->len = len;
	r->mask = prefix_mask(len);
	r->dst = dst & r->mask;
	r->gw = gw;
	r->ifc = ifc;
	st->nroutes++;
	return 0;
}

int ns_iface_add(struct ns_stack *st, struct ns_link *l, uint32_t addr, unsigned prefix_len,
		 unsigned flags)
{
	struct ns_iface *ifc;
	int rc = 0;

	if (!l || prefix_len > 32 || l->mtu < 68 || l->mtu > 65521)
		return -EINVAL;
	stack_enter(st);
	if (iface_of_link(st, l)) {
		rc = -EEXIST;
	} else if (st->nifaces == NS_MAX_IFACES) {
		rc = -ENOSPC;
	} else {
		ifc = &st->ifaces[st->nifaces];
		memset(ifc, 0, sizeof(*ifc));
		ifc->link = l;
		ifc->addr = addr;
		ifc->mask = prefix_mask(prefix_len);
		ifc->flags = flags;
		ifc->index = (int)st->nifaces++;
		rc = route_add_locked(st, addr, prefix_len, 0, ifc);
	}
	stack_leave(st);
	return rc;
}

int ns_iface_add_alias(struct ns_stack *st, struct ns_link *l, uint32_t addr)
{
	struct ns_iface *ifc;
	int rc = 0;

	stack_enter(st);
	ifc = iface_of_link(st, l);
	if (!ifc)
		rc = -ENODEV;
	else if (ifc->naliases == NS_MAX_ALIASES)
		rc = -ENOSPC;
	else
		ifc->aliases[ifc->naliases++] = addr;
	stack_leave(st);
	return rc;
}

int ns_route_add(struct ns_stack *st, uint32_t dst, unsigned prefix_len, uint32_t gw,
		 struct ns_link *l)
{
	struct ns_iface *ifc;
	int rc;

	stack_enter(st);
	ifc = l ? iface_of_link(st, l) : NULL;
	if (!ifc && l)
		rc = -ENODEV;
	else if (!ifc && !gw)
		rc = -EINVAL;
	else {
		if (!ifc) { /* find the interface the gateway is on */
			uint32_t nh;
			struct ns_link *gl;

			rc = ns_route_lookup(st, gw, &nh, &gl);
			ifc = rc == 0 ? iface_of_link(st, gl) : NULL;
		}
		rc = ifc ? route_add_locked(st, dst, prefix_len, gw, ifc) : -ENETUNREACH;
	}
	stack_leave(st);
	return rc;
}

int ns_route_del(struct ns_stack *st, uint32_t dst, unsigned prefix_len)
{
	int rc = -ESRCH;

	stack_enter(st);
	for (unsigned i = 0; i < st->nroutes; i++) {
		struct ns_route *r = &st->routes[i];

		if (r->len == prefix_len && r->dst == (dst & prefix_mask(prefix_len))) {
			memmove(r, r + 1, (st->nroutes - i - 1) * sizeof(*r));
			st->nroutes--;
			rc = 0;
			break;
		}
	}
	stack_leave(st);
	return rc;
}

/* Callers hold the lock (or own the stack single-threaded). */
int ns_route_lookup(struct ns_stack *st, uint32_t dst, uint32_t *next_hop, struct ns_link **l)
{
	for (unsigned i = 0; i < st->nroutes; i++) {
		struct ns_route *r = &st->routes[i];

		if ((dst & r->mask) == r->dst) {
			*next_hop = r->gw ? r->gw : dst;
			*l = r->ifc->link;
			return 0;
		}
	}
	return -ENETUNREACH;
}

/* ------------------------------------------------------------ event loop */

void ns_stack_input(struct ns_stack *st, struct ns_link *l, const void *frame, size_t len)
{
	struct ns_iface *ifc;

	stack_enter(st);
	st->in_loop = true;
	ifc = iface_of_link(st, l);
	st->stats.rx_frames++;
	if (ifc) {
		l->rx_frames++;
		l->rx_bytes += len;
		ether_input(st, ifc, frame, len);
	}
	st->in_loop = false;
	stack_leave(st);
}

/* The next frame of l: lent in place by links that can (valid until the
 * next call; the last one is given back by link_done()), else copied
 * into st->rx. */
static ssize_t link_next(struct ns_stack *st, struct ns_link *l, const uint8_t **frame)
{
	if (l->ops->borrow)
		return l->ops->borrow(l, (const void **)frame);
	*frame = st->rx;
	return l->ops->receive(l, st->rx, NS_FRAME_BUF);
}

static void link_done(struct ns_link *l)
{
	if (l->ops->borrow && l->ops->release)
		l->ops->release(l);
}

int ns_stack_drain(struct ns_stack *st, int max)
{
	int done = 0;

	stack_enter(st);
	st->in_loop = true;
	for (unsigned i = 0; i < st->nifaces; i++) {
		struct ns_iface *ifc = &st->ifaces[i];
		struct ns_link *l = ifc->link;

		if (!l->ops->receive && !l->ops->borrow)
			continue;
		while (done < max) {
			const uint8_t *frame;
			ssize_t n = link_next(st, l, &frame);

			if (n <= 0)
				break;
			st->now = ns_clock_now(st->clock);
			st->stats.rx_frames++;
			l->rx_frames++;
			l->rx_bytes += (uint64_t)n;
			ether_input(st, ifc, frame, (size_t)n);
			done++;
		}
		link_done(l);
	}
	st->in_loop = false;
	stack_leave(st);
	return done;
}

static uint64_t next_timer_locked(struct ns_stack *st)
{
	uint64_t next = UINT64_MAX;

	if (st->heap_len)
		next = st->heap[0]->when > st->now ? st->heap[0]->when - st->now : 0;
	for (unsigned i = 0; i < st->nifaces; i++) {
		struct ns_link *l = st->ifaces[i].link;

		if (l->ops->poll) {
			uint64_t d = l->ops->poll(l, st->now);

			if (d < next)
				next = d;
		}
	}
	return next;
}

static int us_to_ms(uint64_t us)
{
	if (us == UINT64_MAX)
		return -1;
	if (us > 3600000000ull)
		return 3600000;
	return (int)((us + 999) / 1000);
}

int ns_stack_poll(struct ns_stack *st)
{
	uint64_t next;
	uint64_t v;

	if (st->efd >= 0)
		(void)!read(st->efd, &v, sizeof(v));
	stack_enter(st);
	st->in_loop = true;
	stack_run_timers(st);
	next = next_timer_locked(st);
	st->in_loop = false;
	stack_leave(st);
	return us_to_ms(next);
}

uint64_t ns_stack_next_timer_us(struct ns_stack *st)
{
	uint64_t next;

	stack_enter(st);
	next = next_timer_locked(st);
	stack_leave(st);
	return next;
}

int ns_stack_timeout_ms(struct ns_stack *st)
{
	return us_to_ms(ns_stack_next_timer_us(st));
}

int ns_stack_fd(struct ns_stack *st)
{
	return st->efd;
}

struct ns_clock *ns_stack_clock(struct ns_stack *st)
{
	return st->clock;
}

int ns_stack_run_once(struct ns_stack *st, int timeout_ms)
{
	struct pollfd pfd[NS_MAX_IFACES + 1];
	unsigned n = 0;
	int t, rc;

	stack_enter(st);
	for (unsigned i = 0; i < st->nifaces; i++) {
		int fd = ns_link_fd(st->ifaces[i].link);

		if (fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	t = us_to_ms(next_timer_locked(st));
	stack_leave(st);
	if (st->efd >= 0)
		pfd[n++] = (struct pollfd){ .fd = st->efd, .events = POLLIN };
	if (t < 0 || (timeout_ms >= 0 && timeout_ms < t))
		t = timeout_ms;
	rc = poll(pfd, n, t);
	if (rc < 0 && errno != EINTR)
		return -errno;
	rc = ns_stack_drain(st, 256);
	ns_stack_poll(st);
	return rc;
}

void ns_stack_stats(struct ns_stack *st, struct ns_stats *out)
{
	stack_enter(st);
	*out = st->stats;
	out->reass_mem = st->reass_mem;
	out->tcp_conns = st->ntcbs;
	stack_leave(st);
}

/* --------------------------------------------------------------- parsing */

int ns_parse_addr(const char *s, uint32_t *addr)
{
	struct in_addr a;

	if (!s || inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*addr = ntohl(a.s_addr);
	return 0;
}

int ns_parse_cidr(const char *s, uint32_t *addr, unsigned *len)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	char *end;
	unsigned long l = 32;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	if (slash) {
		buf[slash - s] = 0;
		l = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || l > 32)
			return -EINVAL;
	}
	if (ns_parse_addr(buf, addr) < 0)
		return -EINVAL;
	*len = (unsigned)l;
	return 0;
}

int ns_parse_hostport(const char *s, struct ns_sockaddr *sa)
{
	char buf[64];
	const char *colon = strrchr(s, ':');
	const char *host = s;
	size_t hlen;
	char *end;
	unsigned long p;

	if (!colon)
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (s[0] == '[') { /* [v6]:port */
		if (hlen < 2 || colon[-1] != ']')
			return -EINVAL;
		host = s + 1;
		hlen -= 2;
	}
	if (hlen >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, host, hlen);
	buf[hlen] = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || p > 65535)
		return -EINVAL;
	if (host != s ? ns_parse_sockaddr(buf, sa) < 0 || sa->family != NS_AF_INET6
		      : ns_parse_addr(buf, &sa->addr) < 0)
		return -EINVAL;
	sa->port = (uint16_t)p;
	return 0;
}

char *ns_fmt_addr(uint32_t addr, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255,
		 addr & 255);
	return buf;
}
