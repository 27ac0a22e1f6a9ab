/* evloop.c — the main thread's event loop: epoll for file descriptors,
 * one timerfd per timer, and an eventfd that wakes the loop for
 * evloop_call and evloop_stop from other threads. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "backends/backends.h"

#define EVLOOP_MAX_EVENTS 32

/* What an epoll event points to: a watched fd, a timer or the wakeup. */
enum watch_kind { WATCH_FD, WATCH_TIMER, WATCH_WAKE };

struct watch {
	enum watch_kind kind;
	int fd;
	ev_fd_fn fn;
	void *opaque;
	struct watch *next;
	bool dead; /* deleted while the loop may still hold the pointer */
};

struct ev_timer {
	struct watch w; /* first: an epoll event's pointer is the timer */
	struct evloop *loop;
	ev_timer_fn fn;
	void *opaque;
};

struct call {
	void (*fn)(void *);
	void *opaque;
	struct call *next;
};

struct evloop {
	int epfd;
	struct watch wake;
	pthread_mutex_t lock; /* calls, stop, the watch list */
	struct call *calls, **calls_tail;
	struct watch *watches;
	struct watch *graveyard; /* freed after the current dispatch round */
	bool stop;
};

uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wake(struct evloop *loop)
{
	uint64_t one = 1;

	if (write(loop->wake.fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the loop will wake. */
	}
}

struct evloop *evloop_new(void)
{
	struct evloop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev = {.events = EPOLLIN};

	if (!loop)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->wake.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	loop->wake.kind = WATCH_WAKE;
	loop->calls_tail = &loop->calls;
	pthread_mutex_init(&loop->lock, NULL);
	ev.data.ptr = &loop->wake;
	if (loop->epfd < 0 || loop->wake.fd < 0 ||
	    epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wake.fd, &ev) < 0) {
		evloop_free(loop);
		return NULL;
	}
	return loop;
}

static void free_list(struct watch *w)
{
	while (w) {
		struct watch *next = w->next;

		free(w); /* an ev_timer starts with its watch */
		w = next;
	}
}

void evloop_free(struct evloop *loop)
{
	struct call *c;

	if (!loop)
		return;
	free_list(loop->watches);
	free_list(loop->graveyard);
	while ((c = loop->calls)) {
		loop->calls = c->next;
		free(c);
	}
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->wake.fd >= 0)
		close(loop->wake.fd);
	pthread_mutex_destroy(&loop->lock);
	free(loop);
}

static uint32_t epoll_mask(unsigned events)
{
	return (events & EV_READ ? EPOLLIN | EPOLLRDHUP : 0) | (events & EV_WRITE ? EPOLLOUT : 0);
}

static struct watch *find_fd(struct evloop *loop, int fd)
{
	for (struct watch *w = loop->watches; w; w = w->next)
		if (w->kind == WATCH_FD && w->fd == fd)
			return w;
	return NULL;
}

int evloop_add_fd(struct evloop *loop, int fd, unsigned events, ev_fd_fn fn, void *opaque)
{
	struct epoll_event ev = {.events = epoll_mask(events)};
	struct watch *w;
	int ret = 0;

	pthread_mutex_lock(&loop->lock);
	w = find_fd(loop, fd);
	if (w) {
		w->fn = fn;
		w->opaque = opaque;
		ev.data.ptr = w;
		if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
			ret = -errno;
		goto out;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto out;
	}
	*w = (struct watch){WATCH_FD, fd, fn, opaque, loop->watches, false};
	ev.data.ptr = w;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		ret = -errno;
		free(w);
		goto out;
	}
	loop->watches = w;
out:
	pthread_mutex_unlock(&loop->lock);
	return ret;
}

/* Unlink w from the live list; it is freed after the dispatch round. */
static void bury(struct evloop *loop, struct watch *w)
{
	for (struct watch **p = &loop->watches; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	w->dead = true;
	w->next = loop->graveyard;
	loop->graveyard = w;
}

int evloop_del_fd(struct evloop *loop, int fd)
{
	struct watch *w;
	int ret = -ENOENT;

	pthread_mutex_lock(&loop->lock);
	w = find_fd(loop, fd);
	if (w) {
		epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
		bury(loop, w);
		ret = 0;
	}
	pthread_mutex_unlock(&loop->lock);
	return ret;
}

struct ev_timer *ev_timer_new(struct evloop *loop, ev_timer_fn fn, void *opaque)
{
	struct ev_timer *t = calloc(1, sizeof(*t));
	struct epoll_event ev = {.events = EPOLLIN};

	if (!t)
		return NULL;
	t->w.kind = WATCH_TIMER;
	t->w.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	t->loop = loop;
	t->fn = fn;
	t->opaque = opaque;
	ev.data.ptr = &t->w;
	if (t->w.fd < 0 || epoll_ctl(loop->epfd, EPOLL_CTL_ADD, t->w.fd, &ev) < 0) {
		if (t->w.fd >= 0)
			close(t->w.fd);
		free(t);
		return NULL;
	}
	pthread_mutex_lock(&loop->lock);
	t->w.next = loop->watches;
	loop->watches = &t->w;
	pthread_mutex_unlock(&loop->lock);
	return t;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
}

void ev_timer_arm(struct ev_timer *t, uint64_t delay_ns, uint64_t period_ns)
{
	struct itimerspec its = {.it_value = ns_to_ts(delay_ns ? delay_ns : 1),
				 .it_interval = ns_to_ts(period_ns)};

	timerfd_settime(t->w.fd, 0, &its, NULL);
}

void ev_timer_disarm(struct ev_timer *t)
{
	struct itimerspec its = {0};

	timerfd_settime(t->w.fd, 0, &its, NULL);
}

void ev_timer_free(struct ev_timer *t)
{
	struct evloop *loop;

	if (!t)
		return;
	loop = t->loop;
	pthread_mutex_lock(&loop->lock);
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, t->w.fd, NULL);
	close(t->w.fd);
	t->w.fd = -1;
	bury(loop, &t->w);
	pthread_mutex_unlock(&loop->lock);
}

int evloop_call(struct evloop *loop, void (*fn)(void *), void *opaque)
{
	struct call *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	*c = (struct call){fn, opaque, NULL};
	pthread_mutex_lock(&loop->lock);
	*loop->calls_tail = c;
	loop->calls_tail = &c->next;
	pthread_mutex_unlock(&loop->lock);
	wake(loop);
	return 0;
}

void evloop_stop(struct evloop *loop)
{
	pthread_mutex_lock(&loop->lock);
	loop->stop = true;
	pthread_mutex_unlock(&loop->lock);
	wake(loop);
}

static void run_calls(struct evloop *loop)
{
	struct call *c;
	uint64_t count;

	if (read(loop->wake.fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing pending */
	}
	pthread_mutex_lock(&loop->lock);
	c = loop->calls;
	loop->calls = NULL;
	loop->calls_tail = &loop->calls;
	pthread_mutex_unlock(&loop->lock);
	while (c) {
		struct call *next = c->next;

		c->fn(c->opaque);
		free(c);
		c = next;
	}
}

static void dispatch(struct evloop *loop, struct watch *w, uint32_t events)
{
	struct ev_timer *t;
	uint64_t expirations;

	if (w->dead)
		return;
	switch (w->kind) {
	case WATCH_WAKE:
		run_calls(loop);
		break;
	case WATCH_TIMER:
		t = (struct ev_timer *)w;
		if (read(w->fd, &expirations, sizeof(expirations)) == sizeof(expirations))
			t->fn(t->opaque);
		break;
	case WATCH_FD:
		w->fn(w->opaque, w->fd,
		      (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR) ? EV_READ : 0) |
			      (events & EPOLLOUT ? EV_WRITE : 0));
		break;
	}
}

static bool stop_requested(struct evloop *loop)
{
	bool stop;

	pthread_mutex_lock(&loop->lock);
	stop = loop->stop;
	loop->stop = false;
	pthread_mutex_unlock(&loop->lock);
	return stop;
}

static void empty_graveyard(struct evloop *loop)
{
	struct watch *dead;

	pthread_mutex_lock(&loop->lock);
	dead = loop->graveyard;
	loop->graveyard = NULL;
	pthread_mutex_unlock(&loop->lock);
	free_list(dead);
}

int evloop_run(struct evloop *loop)
{
	struct epoll_event evs[EVLOOP_MAX_EVENTS];

	while (!stop_requested(loop)) {
		int n = epoll_wait(loop->epfd, evs, EVLOOP_MAX_EVENTS, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++)
			dispatch(loop, evs[i].data.ptr, evs[i].events);
		empty_graveyard(loop);
	}
	return 0;
}
