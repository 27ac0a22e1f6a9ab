/* clock.c — the one time source of a stack: real or virtual microseconds. */
#include <stdlib.h>
#include <time.h>

#include "netstack/internal.h"

struct ns_clock {
	bool is_virtual;
	pthread_mutex_t lock;
	uint64_t now_us;
};

static struct ns_clock monotonic = { .is_virtual = false };

struct ns_clock *ns_clock_monotonic(void)
{
	return &monotonic;
}

struct ns_clock *ns_clock_virtual_new(uint64_t start_us)
{
	struct ns_clock *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->is_virtual = true;
	c->now_us = start_us;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void ns_clock_advance(struct ns_clock *c, uint64_t us)
{
	if (!c->is_virtual)
		return;
	pthread_mutex_lock(&c->lock);
	c->now_us += us;
	pthread_mutex_unlock(&c->lock);
}

uint64_t ns_clock_now(struct ns_clock *c)
{
	struct timespec ts;
	uint64_t v;

	if (c && c->is_virtual) {
		pthread_mutex_lock(&c->lock);
		v = c->now_us;
		pthread_mutex_unlock(&c->lock);
		return v;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void ns_clock_free(struct ns_clock *c)
{
	if (c && c->is_virtual) {
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
}
