/* migration_ram.c — live pre-copy of guest RAM: the passes, the dirty
 * page sets between them, the decision to stop the guest (migration.h).
 *
 * Which pages changed since a pass comes from two places:
 *  - the vCPUs' writes: KVM's dirty log (sync_dirty, kernel/kvm/dirty.c);
 *  - the VMM's own writes (device DMA, virtio rings, the balloon...),
 *    which KVM never sees: guest_mem_ptr marks every page it hands a
 *    pointer to (devices/guest_mem.c). Each sync takes those marks and
 *    clears them. A pointer is marked before it is written through, so a
 *    pass may send the page just before the write: the marks a sync took
 *    go in the next pass as well (a copy done at once is over by then),
 *    and requests held longer mark their buffers again on completion
 *    (virtq_push). Rings stay mapped and written at any time: those
 *    pages are pinned, and the final pass, with the machine stopped and
 *    the requests drained, sends them with the rest.
 * Plain libc over callbacks, so the unit tests drive it with a fake guest. */
#include <errno.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "vmm/migration.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t mig_bits_count(const uint64_t *bits, uint64_t nbits)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < (nbits + 63) / 64; i++)
		n += (uint64_t)__builtin_popcountll(bits[i]);
	return n;
}

bool mig_precopy_converged(uint64_t remaining, double bytes_per_s, uint64_t downtime_ms,
			   unsigned pass)
{
	if (remaining == 0 || pass >= MIG_MAX_PASSES)
		return true;
	if (bytes_per_s <= 0)
		return false;
	return (double)remaining * 1000.0 / bytes_per_s <= (double)downtime_ms;
}

/* Bytes written to fd that its reader has not taken yet: a socket's send
 * queue (a unix socket's counts until the peer reads them, a TCP one's
 * until the peer's kernel acknowledges them); 0 for a pipe or a file,
 * which do not say. */
static uint64_t queued(int fd)
{
	int n = 0;

	return ioctl(fd, SIOCOUTQ, &n) == 0 && n > 0 ? (uint64_t)n : 0;
}

uint64_t mig_out_drain(const struct mig_out *o, uint64_t slack, double max_s)
{
	double until = now_s() + max_s;
	uint64_t left;

	while ((left = queued(o->fd)) > slack && now_s() < until &&
	       !(o->cancel && __atomic_load_n(o->cancel, __ATOMIC_RELAXED)))
		nanosleep(&(struct timespec){0, 200000}, NULL);
	return left;
}

bool mig_throttle_update(struct mig_throttle *t, uint64_t dirtied, uint64_t sent)
{
	unsigned next;

	if (!t->on || dirtied * 2 <= sent) {
		t->high = 0;
		return false;
	}
	if (++t->high < 2)
		return false;
	t->high = 0;
	next = t->pct ? t->pct + t->increment : t->initial;
	if (next > t->max)
		next = t->max;
	if (next == t->pct)
		return false;
	t->pct = next;
	return true;
}

/* Pages the final pass would send now: dirty ones and pinned ones. */
static uint64_t final_pages(const uint64_t *dirty, const uint64_t *pinned, uint64_t words)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < words; i++)
		n += (uint64_t)__builtin_popcountll(dirty[i] | (pinned ? pinned[i] : 0));
	return n;
}

/* Add the VMM's writes to dirty: the marks made since the last sync
 * (taken, so cleared) and those the last sync took (in prev, replaced). */
static void take_touched(uint64_t *touched, uint64_t *prev, uint64_t *dirty, uint64_t words)
{
	for (uint64_t i = 0; touched && i < words; i++) {
		uint64_t now = __atomic_load_n(&touched[i], __ATOMIC_RELAXED)
				       ? __atomic_exchange_n(&touched[i], 0, __ATOMIC_SEQ_CST)
				       : 0;

		dirty[i] |= now | prev[i];
		prev[i] = now;
	}
}

struct pass_clock {
	double start;	 /* when pass 1 began */
	uint64_t bytes0; /* o->st->transferred then */
};

/* The bandwidth so far: everything sent since pass 1 over the time it took
 * (steadier than one short pass's figure). */
static double bandwidth(const struct pass_clock *c, const struct mig_out *o)
{
	double t = now_s() - c->start;

	return t > 0 ? (double)(o->st->transferred - c->bytes0) / t : 0;
}

static int send_pass(struct mig_precopy *p, struct mig_out *o, uint64_t *dirty)
{
	uint64_t *const maps[1] = {dirty};

	p->pass++;
	if (p->on_pass)
		p->on_pass(p->opaque, p->pass);
	return mig_out_pass(o, p->pass, &p->ram, 1, dirty ? maps : NULL);
}

/* Sync the dirty set, the VMM's writes with it: 0, or -1 with o's error
 * set. */
static int sync(struct mig_precopy *p, struct mig_out *o, uint64_t *dirty, uint64_t *prev)
{
	uint64_t words = (p->ram.size / MIG_PAGE + 63) / 64;
	int r = p->sync_dirty(p->opaque, dirty);

	p->dirty_syncs++;
	if (r < 0) {
		snprintf(o->err, o->errlen, "migration: reading the dirty page log: %s",
			 strerror(-r));
		o->failed = true;
		return -1;
	}
	take_touched(p->touched, prev, dirty, words);
	return 0;
}

/* Update the figures query-migrate shows after a sync. */
static void account(struct mig_precopy *p, const struct mig_out *o, const struct pass_clock *c,
		    uint64_t dirty_pages, uint64_t final, double pass_s)
{
	double bw = bandwidth(c, o);

	p->remaining = final * MIG_PAGE;
	p->dirty_rate = pass_s > 0 ? (uint64_t)((double)dirty_pages / pass_s) : 0;
	p->mbps = (uint64_t)(bw * 8 / 1e6);
	p->expected_downtime_ms = bw > 0 ? (uint64_t)((double)p->remaining * 1000 / bw) : 0;
}

int mig_precopy_run(struct mig_precopy *p, struct mig_out *o)
{
	uint64_t pages = p->ram.size / MIG_PAGE, words = (pages + 63) / 64, final = 0;
	uint64_t *dirty = calloc(words ? words : 1, sizeof(uint64_t));
	uint64_t *prev = calloc(words ? words : 1, sizeof(uint64_t));
	struct pass_clock c = {now_s(), o->st->transferred};
	double pass_start;
	uint64_t pass_bytes0 = o->st->transferred; /* at the pass's start */
	int r = -1;

	if (!dirty || !prev) {
		snprintf(o->err, o->errlen, "migration: out of memory for the dirty bitmap");
		return -1;
	}
	/* Logging starts before pass 1 reads a page: whatever the guest
	 * writes from here on is in the next set. */
	if (mig_out_header(o, 1) < 0 || sync(p, o, dirty, prev) < 0)
		goto out;
	memset(dirty, 0, words * sizeof(uint64_t));
	/* A stopped guest has no copy under way that pass 1 could overtake
	 * (requests still in flight mark again when they complete): the
	 * marks from before need not go twice. */
	if (p->guest_stopped)
		memset(prev, 0, words * sizeof(uint64_t));
	pass_start = now_s();
	if (send_pass(p, o, NULL) < 0)
		goto out;
	for (;;) {
		uint64_t n;

		if (sync(p, o, dirty, prev) < 0)
			goto out;
		n = mig_bits_count(dirty, pages);
		if (mig_throttle_update(&p->throttle, n * MIG_PAGE,
					o->st->transferred - pass_bytes0) &&
		    p->set_throttle)
			p->set_throttle(p->opaque, p->throttle.pct);
		final = final_pages(dirty, p->pinned, words);
		account(p, o, &c, n, final, now_s() - pass_start);
		if (p->guest_stopped ||
		    mig_precopy_converged(final * MIG_PAGE, bandwidth(&c, o), p->downtime_ms,
					  p->pass))
			break;
		pass_start = now_s();
		pass_bytes0 = o->st->transferred;
		if (send_pass(p, o, dirty) < 0)
			goto out;
		memset(dirty, 0, words * sizeof(uint64_t));
	}
	/* A socket's buffers still hold megabytes of the passes (a TCP
	 * connection's grow to several): sent after the stop, they would
	 * add their time to the downtime. Let them go while the guest runs;
	 * what it writes meanwhile is less than what drained, since it
	 * converged, and goes in the final set. */
	if (!p->guest_stopped)
		mig_out_drain(o, MIG_DRAIN_SLACK, MIG_DRAIN_MAX_S);
	/* The last set is not sent yet: with the guest stopped, add what it
	 * wrote meanwhile and every page devices may have written. */
	p->stop(p->opaque);
	if (sync(p, o, dirty, prev) < 0)
		goto out;
	for (uint64_t i = 0; p->pinned && i < words; i++)
		dirty[i] |= p->pinned[i];
	p->remaining = mig_bits_count(dirty, pages) * MIG_PAGE;
	r = send_pass(p, o, dirty);
	p->remaining = 0;
out:
	free(dirty);
	free(prev);
	return r;
}
