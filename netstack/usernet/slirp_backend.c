/* slirp_backend.c — usernet over Debian's libslirp (impl=slirp), behind
 * the same frame interface as the netstack implementation, so the VMM and
 * the benches can swap them.
 *
 * libslirp wants a poll() array filled before every wait; usernet offers
 * one pollable fd instead, so the array is mirrored into an epoll set
 * after every fill (fds slirp stops asking for leave the set). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <libslirp.h>

#include "netstack/usernet/internal.h"

struct sl_timer {
	struct sl_timer *next;
	SlirpTimerCb cb;
	void *cb_opaque;
	int64_t expire_ms; /* -1: not armed */
};

/* What the epoll set holds for one fd. */
struct sl_fd {
	uint32_t events, want;
	unsigned gen;
	bool in_ep;
};

struct sl {
	struct usernet_cfg cfg;
	struct usernet_stats stats;
	Slirp *slirp;
	int epfd;
	struct sl_timer *timers;
	struct pollfd *pfd;
	unsigned npfd, pfd_cap;
	uint32_t slirp_timeout_ms;
	struct sl_fd *fds;
	unsigned fds_cap, gen;
	int *ep_list; /* fds in the epoll set */
	unsigned nep, ep_cap;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ------------------------------------------------------ slirp callbacks */

static ssize_t cb_send(const void *buf, size_t len, void *opaque)
{
	struct sl *s = opaque;

	s->stats.tx_frames++;
	s->stats.tx_bytes += len;
	s->cfg.send(s->cfg.opaque, buf, len);
	return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
	struct sl *s = opaque;

	s->stats.rx_bad++;
	(void)msg;
}

static int64_t cb_clock(void *opaque)
{
	(void)opaque;
	return now_ns();
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
	struct sl *s = opaque;
	struct sl_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cb = cb;
	t->cb_opaque = cb_opaque;
	t->expire_ms = -1;
	t->next = s->timers;
	s->timers = t;
	return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
	struct sl *s = opaque;

	for (struct sl_timer **pp = &s->timers; *pp; pp = &(*pp)->next)
		if (*pp == timer) {
			*pp = (*pp)->next;
			free(timer);
			return;
		}
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
	(void)opaque;
	((struct sl_timer *)timer)->expire_ms = expire_ms;
}

static void ep_del(struct sl *s, int fd)
{
	if (fd < 0 || (unsigned)fd >= s->fds_cap || !s->fds[fd].in_ep)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	s->fds[fd].in_ep = false;
	for (unsigned i = 0; i < s->nep; i++)
		if (s->ep_list[i] == fd) {
			s->ep_list[i] = s->ep_list[--s->nep];
			break;
		}
}

static void cb_register_fd(int fd, void *opaque)
{
	(void)fd;
	(void)opaque;
}

/* The fd is about to be closed: forget it, its number will be reused. */
static void cb_unregister_fd(int fd, void *opaque)
{
	ep_del(opaque, fd);
}

static void cb_notify(void *opaque)
{
	(void)opaque;
}

static const SlirpCb sl_callbacks = {
	.send_packet = cb_send,
	.guest_error = cb_guest_error,
	.clock_get_ns = cb_clock,
	.timer_new = cb_timer_new,
	.timer_free = cb_timer_free,
	.timer_mod = cb_timer_mod,
	.register_poll_fd = cb_register_fd,
	.unregister_poll_fd = cb_unregister_fd,
	.notify = cb_notify,
};

/* ----------------------------------------------------------- poll set */

static int slirp_to_poll(int ev)
{
	return (ev & SLIRP_POLL_IN ? POLLIN : 0) | (ev & SLIRP_POLL_OUT ? POLLOUT : 0) |
	       (ev & SLIRP_POLL_PRI ? POLLPRI : 0);
}

static int cb_add_poll(int fd, int events, void *opaque)
{
	struct sl *s = opaque;

	if (s->npfd == s->pfd_cap) {
		unsigned cap = s->pfd_cap ? s->pfd_cap * 2 : 64;
		struct pollfd *p = realloc(s->pfd, cap * sizeof(*p));

		if (!p)
			return -1;
		s->pfd = p;
		s->pfd_cap = cap;
	}
	s->pfd[s->npfd].fd = fd;
	s->pfd[s->npfd].events = (short)slirp_to_poll(events);
	s->pfd[s->npfd].revents = 0;
	return (int)s->npfd++;
}

static int cb_get_revents(int idx, void *opaque)
{
	struct sl *s = opaque;
	short r;

	if (idx < 0 || (unsigned)idx >= s->npfd)
		return 0;
	r = s->pfd[idx].revents;
	return (r & POLLIN ? SLIRP_POLL_IN : 0) | (r & POLLOUT ? SLIRP_POLL_OUT : 0) |
	       (r & POLLPRI ? SLIRP_POLL_PRI : 0) | (r & POLLERR ? SLIRP_POLL_ERR : 0) |
	       (r & POLLHUP ? SLIRP_POLL_HUP : 0);
}

static bool fds_reserve(struct sl *s, int fd)
{
	unsigned cap = s->fds_cap ? s->fds_cap : 64;
	struct sl_fd *p;

	if ((unsigned)fd < s->fds_cap)
		return true;
	while (cap <= (unsigned)fd)
		cap *= 2;
	p = realloc(s->fds, cap * sizeof(*p));
	if (!p)
		return false;
	memset(p + s->fds_cap, 0, (cap - s->fds_cap) * sizeof(*p));
	s->fds = p;
	s->fds_cap = cap;
	return true;
}

static void ep_put(struct sl *s, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};
	struct sl_fd *e = &s->fds[fd];

	if (e->in_ep) {
		if (e->events != events && epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
	} else {
		if (s->nep == s->ep_cap) {
			unsigned cap = s->ep_cap ? s->ep_cap * 2 : 64;
			int *l = realloc(s->ep_list, cap * sizeof(*l));

			if (!l)
				return;
			s->ep_list = l;
			s->ep_cap = cap;
		}
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 &&
		    epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
			return;
		e->in_ep = true;
		s->ep_list[s->nep++] = fd;
	}
	e->events = events;
}

/* Ask slirp what it waits for and mirror that into the epoll set. */
static void refill(struct sl *s)
{
	unsigned gen = ++s->gen;

	s->npfd = 0;
	s->slirp_timeout_ms = UINT32_MAX;
	slirp_pollfds_fill(s->slirp, &s->slirp_timeout_ms, cb_add_poll, s);
	for (unsigned i = 0; i < s->npfd; i++) {
		int fd = s->pfd[i].fd;

		if (fd < 0 || !fds_reserve(s, fd))
			continue;
		if (s->fds[fd].gen != gen) {
			s->fds[fd].gen = gen;
			s->fds[fd].want = 0;
		}
		s->fds[fd].want |= (s->pfd[i].events & POLLIN ? EPOLLIN : 0) |
				   (s->pfd[i].events & POLLOUT ? EPOLLOUT : 0) |
				   (s->pfd[i].events & POLLPRI ? EPOLLPRI : 0);
	}
	for (unsigned i = 0; i < s->nep;) {
		int fd = s->ep_list[i];

		if (s->fds[fd].gen != gen)
			ep_del(s, fd); /* swaps the last entry into slot i */
		else
			i++;
	}
	for (unsigned i = 0; i < s->npfd; i++) {
		int fd = s->pfd[i].fd;

		if (fd >= 0 && (unsigned)fd < s->fds_cap && s->fds[fd].gen == gen)
			ep_put(s, fd, s->fds[fd].want);
	}
}

static void run_timers(struct sl *s)
{
	int64_t now = now_ns() / 1000000;
	bool again = true;

	/* A callback may re-arm or free timers: restart the walk each time. */
	while (again) {
		again = false;
		for (struct sl_timer *t = s->timers; t; t = t->next)
			if (t->expire_ms >= 0 && t->expire_ms <= now) {
				t->expire_ms = -1;
				t->cb(t->cb_opaque);
				again = true;
				break;
			}
	}
}

/* ---------------------------------------------------------------- ops */

static void sl_destroy(void *impl);
static void sl_poll(void *impl);

static void *sl_create(const struct usernet_cfg *cfg, char *err, size_t errlen)
{
	struct sl *s = calloc(1, sizeof(*s));
	SlirpConfig sc = {0};

	if (!s) {
		usernet_fail(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	if (cfg->dns_upstream || cfg->resolv_conf) {
		usernet_fail(err, errlen, -EINVAL,
			     "impl=slirp: libslirp reads /etc/resolv.conf itself; no DNS override");
		free(s);
		return NULL;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	sc.version = 4;
	sc.in_enabled = true;
	sc.vnetwork.s_addr = htonl(cfg->net);
	sc.vnetmask.s_addr = htonl(0xffffffffu << (32 - cfg->prefix));
	sc.vhost.s_addr = htonl(cfg->gateway);
	sc.vdhcp_start.s_addr = htonl(cfg->dhcp_start);
	sc.vnameserver.s_addr = htonl(cfg->dns);
	/* The same IPv6 LAN as the netstack implementation: libslirp
	 * advertises the prefix and answers DHCPv6 with vnameserver6. */
	sc.in6_enabled = !cfg->ipv6_off;
	memcpy(&sc.vprefix_addr6, cfg->ipv6_net, 16);
	sc.vprefix_len = (uint8_t)cfg->ipv6_prefix;
	memcpy(&sc.vhost6, cfg->ipv6_host, 16);
	memcpy(&sc.vnameserver6, cfg->ipv6_dns, 16);
	sc.vhostname = cfg->hostname;
	sc.vdomainname = cfg->domain;
	sc.if_mtu = cfg->mtu;
	sc.if_mru = cfg->mtu;
	sc.disable_host_loopback = cfg->no_host_loopback;
	s->slirp = s->epfd >= 0 ? slirp_new(&sc, &sl_callbacks, s) : NULL;
	if (!s->slirp) {
		usernet_fail(err, errlen, -EINVAL, "libslirp: slirp_new failed");
		sl_destroy(s);
		return NULL;
	}
	/* slirp's clock (curtime) only moves in slirp_pollfds_poll: run one
	 * pass now, or flows created before the first poll expire at once. */
	sl_poll(s);
	return s;
}

static void sl_destroy(void *impl)
{
	struct sl *s = impl;

	if (s->slirp)
		slirp_cleanup(s->slirp);
	while (s->timers) {
		struct sl_timer *t = s->timers;

		s->timers = t->next;
		free(t);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->pfd);
	free(s->fds);
	free(s->ep_list);
	free(s);
}

static void sl_input(void *impl, const void *frame, size_t len)
{
	struct sl *s = impl;

	s->stats.rx_frames++;
	s->stats.rx_bytes += len;
	if (len > (size_t)INT32_MAX)
		return;
	slirp_input(s->slirp, frame, (int)len);
	refill(s);
}

static int sl_fd(void *impl)
{
	return ((struct sl *)impl)->epfd;
}

static int sl_timeout(void *impl)
{
	struct sl *s = impl;
	int64_t now = now_ns() / 1000000, best = s->slirp_timeout_ms;

	for (struct sl_timer *t = s->timers; t; t = t->next)
		if (t->expire_ms >= 0 && t->expire_ms - now < best)
			best = t->expire_ms - now < 0 ? 0 : t->expire_ms - now;
	return best >= INT32_MAX ? -1 : (int)best;
}

static void sl_poll(void *impl)
{
	struct sl *s = impl;
	int rc;

	run_timers(s);
	refill(s);
	rc = poll(s->pfd, s->npfd, 0);
	slirp_pollfds_poll(s->slirp, rc < 0, cb_get_revents, s);
	refill(s);
}

static int sl_hostfwd(void *impl, bool add, const struct usernet_fwd *f, char *err, size_t errlen)
{
	struct sl *s = impl;
	struct in_addr h = {htonl(f->host_addr)}, g = {htonl(f->guest_addr)};
	int rc;

	if (add)
		rc = slirp_add_hostfwd(s->slirp, f->udp, h, f->host_port, g, f->guest_port);
	else
		rc = slirp_remove_hostfwd(s->slirp, f->udp, h, f->host_port);
	refill(s);
	if (rc < 0)
		return usernet_fail(err, errlen, -EINVAL, "libslirp: hostfwd %s failed",
				    add ? "add" : "remove");
	return 0;
}

static void sl_stats(void *impl, struct usernet_stats *st)
{
	*st = ((struct sl *)impl)->stats;
}

const struct usernet_ops usernet_slirp_ops = {
	.name = "slirp",
	.create = sl_create,
	.destroy = sl_destroy,
	.input = sl_input,
	.fd = sl_fd,
	.timeout_ms = sl_timeout,
	.poll = sl_poll,
	.hostfwd = sl_hostfwd,
	.stats = sl_stats,
};
