/* timer.c — one binary min-heap of deadlines per stack. */
#include <stdlib.h>

#include "netstack/internal.h"

void timer_init(struct ns_timer *t, ns_timer_fn fn)
{
	t->when = 0;
	t->idx = -1;
	t->fn = fn;
}

static void heap_swap(struct ns_stack *st, unsigned a, unsigned b)
{
	struct ns_timer *t = st->heap[a];

	st->heap[a] = st->heap[b];
	st->heap[b] = t;
	st->heap[a]->idx = (int)a;
	st->heap[b]->idx = (int)b;
}

static void heap_up(struct ns_stack *st, unsigned i)
{
	while (i > 0) {
		unsigned p = (i - 1) / 2;

		if (st->heap[p]->when <= st->heap[i]->when)
			break;
		heap_swap(st, i, p);
		i = p;
	}
}

static void heap_down(struct ns_stack *st, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;

		if (l < st->heap_len && st->heap[l]->when < st->heap[m]->when)
			m = l;
		if (r < st->heap_len && st->heap[r]->when < st->heap[m]->when)
			m = r;
		if (m == i)
			return;
		heap_swap(st, i, m);
		i = m;
	}
}

void timer_cancel(struct ns_stack *st, struct ns_timer *t)
{
	unsigned i;

	if (t->idx < 0)
		return;
	i = (unsigned)t->idx;
	t->idx = -1;
	st->heap_len--;
	if (i == st->heap_len)
		return;
	st->heap[i] = st->heap[st->heap_len];
	st->heap[i]->idx = (int)i;
	heap_up(st, i);
	heap_down(st, (unsigned)st->heap[i]->idx);
}

void timer_arm(struct ns_stack *st, struct ns_timer *t, uint64_t when_us)
{
	bool earliest;

	if (t->idx >= 0) {
		uint64_t old = t->when;

		t->when = when_us;
		if (when_us < old)
			heap_up(st, (unsigned)t->idx);
		else
			heap_down(st, (unsigned)t->idx);
	} else {
		if (st->heap_len == st->heap_cap) {
			unsigned cap = st->heap_cap ? st->heap_cap * 2 : 64;
			struct ns_timer **h = realloc(st->heap, cap * sizeof(*h));

			if (!h)
				abort(); /* a few bytes per connection; nothing sane to do */
			st->heap = h;
			st->heap_cap = cap;
		}
		t->when = when_us;
		t->idx = (int)st->heap_len;
		st->heap[st->heap_len++] = t;
		heap_up(st, (unsigned)t->idx);
	}
	earliest = st->heap[0] == t;
	if (earliest)
		stack_timer_changed(st);
}

void timer_arm_in(struct ns_stack *st, struct ns_timer *t, uint64_t delay_us)
{
	timer_arm(st, t, st->now + delay_us);
}

void stack_run_timers(struct ns_stack *st)
{
	/* Bounded so a timer that re-arms itself for "now" cannot spin. */
	for (unsigned n = 0; n < 100000 && st->heap_len; n++) {
		struct ns_timer *t = st->heap[0];

		if (t->when > st->now)
			break;
		timer_cancel(st, t);
		t->fn(st, t);
	}
}
