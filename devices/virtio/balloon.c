/* balloon.c — virtio-balloon (virtio spec 5.5, device id 5): the host
 * asks the guest to give back memory (config num_pages) and the guest
 * hands over page frame numbers (4 KiB units) on the inflate queue; the
 * device then drops those pages from the VMM's guest RAM mapping with
 * MADV_DONTNEED, so the host gets the memory back and a later guest
 * access faults in a zero page. The deflate queue returns pages to the
 * guest: nothing to do on the host but forget them. The guest reports
 * how much it holds in config `actual`.
 *
 * Also QEMU's two companions, both optional for the driver:
 *  - the stats queue (VIRTIO_BALLOON_F_STATS_VQ): the guest posts one
 *    buffer of (tag, value) pairs; the device parses and keeps it, and
 *    every polling interval gives it back empty, which asks the guest
 *    for fresh figures;
 *  - free page reporting (VIRTIO_BALLOON_F_REPORTING): the guest lends
 *    free page ranges as writable buffers; the device discards them and
 *    gives the buffers back.
 *
 * Queue numbers follow the features the driver accepted: 0 inflate,
 * 1 deflate, then the stats queue if negotiated, then reporting.
 * Every PFN comes from the guest: one outside guest RAM is counted and
 * skipped; never does the device touch memory outside the RAM regions.
 * All queue work runs on the transport's I/O thread. */
#include <endian.h>
#include <errno.h>
#include <linux/virtio_balloon.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

#define BALLOON_QUEUE_SIZE 128
#define BALLOON_PAGE 4096ull /* the PFN unit, whatever the guest's page size */
#define Q_INFLATE 0
#define Q_DEFLATE 1

enum queue_role { ROLE_INFLATE, ROLE_DEFLATE, ROLE_STATS, ROLE_REPORTING, ROLE_NONE };

/* QEMU's names for the guest-stats members, by tag. */
static const char *const stat_names[VIRTIO_BALLOON_NSTATS] = {
	"stat-swap-in",	     "stat-swap-out",	  "stat-major-faults",	   "stat-minor-faults",
	"stat-free-memory",  "stat-total-memory", "stat-available-memory", "stat-disk-caches",
	"stat-htlb-pgalloc", "stat-htlb-pgfail",
};

/* The runs of a buffer (or of a loaded bitmap), each contiguous in the host
 * mapping, given back together. A guest's PFNs are mostly scattered, one
 * page per run, and each MADV_DONTNEED flushes the TLBs of every CPU that
 * runs this process, a vCPU in guest mode included (an exit per page on
 * the host's side). One process_madvise(2) of the whole batch flushes
 * once (Linux 6.16 and later; older kernels refuse MADV_DONTNEED there,
 * and the runs go one madvise each). */
#define DISCARD_BATCH 256 /* a Linux driver's buffer of PFNs */

struct discard_batch {
	struct iovec iov[DISCARD_BATCH];
	unsigned n;
};

struct virtio_balloon {
	struct virtio_pci *vp;
	struct virtio_dev_ops ops;
	struct virtio_balloon_opts o;
	const struct guest_mem *mem;
	struct virtio_balloon_config cfg; /* what the guest reads */
	/* the I/O thread's state, under the transport lock */
	uint64_t *inflated; /* one bit per 4 KiB of guest physical space */
	uint64_t n_frames;  /* bits in inflated */
	bool stats_held;    /* the guest's stats buffer is with the device */
	uint16_t stats_head;
	uint32_t poll_secs; /* 0: do not poll */
	uint64_t next_poll_ns;
	struct virtio_balloon_guest_stats gs;
	struct virtio_balloon_counters ct;
	struct discard_batch batch; /* the I/O thread's, empty between calls */
	int pidfd;		    /* this process, for process_madvise; or -1 */
};

const char *virtio_balloon_stat_name(unsigned tag)
{
	return tag < VIRTIO_BALLOON_NSTATS ? stat_names[tag] : NULL;
}

static enum queue_role queue_role(struct virtio_balloon *b, unsigned qi)
{
	uint64_t f = virtio_pci_features(b->vp);
	unsigned next = 2;

	if (qi == Q_INFLATE)
		return ROLE_INFLATE;
	if (qi == Q_DEFLATE)
		return ROLE_DEFLATE;
	if (f & (1ull << VIRTIO_BALLOON_F_STATS_VQ)) {
		if (qi == next)
			return ROLE_STATS;
		next++;
	}
	if ((f & (1ull << VIRTIO_BALLOON_F_REPORTING)) && qi == next)
		return ROLE_REPORTING;
	return ROLE_NONE;
}

/* ------------------------------------------------------ inflate/deflate */

static void mark(struct virtio_balloon *b, uint64_t pfn, bool on)
{
	if (on)
		b->inflated[pfn / 64] |= 1ull << (pfn % 64);
	else
		b->inflated[pfn / 64] &= ~(1ull << (pfn % 64));
}

/* Give [hva, hva + len) back to the host: the next guest access reads
 * zeroes. Guest RAM is private anonymous memory (vmm/machine.c). */
static void discard(struct virtio_balloon *b, uint8_t *hva, uint64_t len)
{
	b->ct.discard_calls++;
	if (madvise(hva, len, MADV_DONTNEED) < 0)
		b->ct.madvise_errors++;
	else
		b->ct.discarded_bytes += len;
}

/* The runs from the first, at done bytes into it, one madvise each. */
static void discard_each(struct virtio_balloon *b, const struct discard_batch *d, unsigned first,
			 size_t done)
{
	for (unsigned i = first; i < d->n; i++, done = 0)
		discard(b, (uint8_t *)d->iov[i].iov_base + done, d->iov[i].iov_len - done);
}

static void discard_flush(struct virtio_balloon *b, struct discard_batch *d)
{
	ssize_t r = -1;
	unsigned i = 0;

	if (d->n > 1 && b->pidfd >= 0) {
		b->ct.discard_calls++;
		r = syscall(SYS_process_madvise, b->pidfd, d->iov, d->n, MADV_DONTNEED, 0);
		if (r < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM)) {
			close(b->pidfd); /* this kernel cannot: one call per run */
			b->pidfd = -1;
		}
	}
	/* it stops at the first run it could not discard: the rest one by one */
	for (; r > 0 && i < d->n && (size_t)r >= d->iov[i].iov_len; i++) {
		r -= (ssize_t)d->iov[i].iov_len;
		b->ct.discarded_bytes += d->iov[i].iov_len;
	}
	discard_each(b, d, i, r > 0 ? (size_t)r : 0);
	b->ct.discarded_bytes += r > 0 ? (uint64_t)r : 0;
	d->n = 0;
}

static void discard_add(struct virtio_balloon *b, struct discard_batch *d, uint8_t *hva, size_t len)
{
	struct iovec *last = d->n ? &d->iov[d->n - 1] : NULL;

	if (last && (uint8_t *)last->iov_base + last->iov_len == hva) {
		last->iov_len += len;
		return;
	}
	if (d->n == DISCARD_BATCH)
		discard_flush(b, d);
	d->iov[d->n++] = (struct iovec){hva, len};
}

/* The chain's readable part is an array of little-endian u32 PFNs. */
static void inflate_or_deflate(struct virtio_balloon *b, const struct virtq_chain *c, bool inflate)
{
	struct discard_batch *d = &b->batch;
	uint32_t le;

	for (uint64_t off = 0; off + 4 <= c->out_len; off += 4) {
		uint64_t pfn;
		uint8_t *hva;

		virtq_chain_read(c, off, &le, 4);
		pfn = le32toh(le);
		hva = pfn < b->n_frames ? guest_mem_ptr(b->mem, pfn * BALLOON_PAGE, BALLOON_PAGE)
					: NULL;
		if (!hva) {
			b->ct.bad_pfns++;
			continue;
		}
		mark(b, pfn, inflate);
		if (inflate) {
			b->ct.inflated_pages++;
			discard_add(b, d, hva, BALLOON_PAGE);
		} else {
			b->ct.deflated_pages++;
		}
	}
	discard_flush(b, d);
}

/* ------------------------------------------------------------- stats */

static int64_t wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

void virtio_balloon_parse_stats(const struct virtq_chain *c, struct virtio_balloon_guest_stats *gs)
{
	struct virtio_balloon_stat s;

	for (uint64_t off = 0; off + sizeof(s) <= c->out_len; off += sizeof(s)) {
		uint16_t tag;

		virtq_chain_read(c, off, &s, sizeof(s));
		tag = le16toh(s.tag);
		if (tag < VIRTIO_BALLOON_NSTATS)
			gs->stat[tag] = le64toh(s.val);
	}
}

/* The guest's figures: keep the buffer until the next poll asks for new
 * ones. A second buffer while one is held goes against the spec; the
 * older one is given back, as QEMU does. */
static void take_stats(struct virtio_balloon *b, unsigned qi, const struct virtq_chain *c)
{
	struct virtq *q = virtio_pci_queue(b->vp, qi);

	virtio_balloon_parse_stats(c, &b->gs);
	b->gs.last_update = wall_seconds();
	b->ct.stats_updates++;
	if (b->stats_held && q) {
		virtq_push(q, b->stats_head, 0);
		virtio_pci_notify(b->vp, qi);
	}
	b->stats_held = true;
	b->stats_head = c->head;
}

static unsigned stats_queue(struct virtio_balloon *b)
{
	for (unsigned qi = 2; qi < b->ops.num_queues; qi++)
		if (queue_role(b, qi) == ROLE_STATS)
			return qi;
	return VIRTIO_MAX_QUEUES;
}

/* The polling interval passed: hand the buffer back for a refill. */
static void poll_stats(struct virtio_balloon *b)
{
	unsigned qi = stats_queue(b);
	struct virtq *q = virtio_pci_queue(b->vp, qi);

	if (!b->stats_held || !q)
		return;
	b->stats_held = false;
	virtq_push(q, b->stats_head, 0);
	virtio_pci_notify(b->vp, qi);
}

static int balloon_io_timeout_ms(void *opaque)
{
	struct virtio_balloon *b = opaque;
	uint64_t now = clock_now_ns();

	if (!b->poll_secs)
		return -1;
	if (now >= b->next_poll_ns)
		return 0;
	return (int)((b->next_poll_ns - now + 999999) / 1000000);
}

static void balloon_io_event(void *opaque)
{
	struct virtio_balloon *b = opaque;
	uint64_t now = clock_now_ns();

	if (!b->poll_secs || now < b->next_poll_ns)
		return;
	poll_stats(b);
	b->next_poll_ns = now + (uint64_t)b->poll_secs * 1000000000u;
}

/* ------------------------------------------------- free page reporting */

/* Each writable buffer is a free range the guest lends: discard the
 * whole 4 KiB pages inside it. */
static void report_free(struct virtio_balloon *b, const struct virtq_chain *c)
{
	struct discard_batch *d = &b->batch;

	for (unsigned i = c->n_out; i < c->n_out + c->n_in; i++) {
		uintptr_t start =
			((uintptr_t)c->buf[i].ptr + BALLOON_PAGE - 1) & ~(BALLOON_PAGE - 1);
		uintptr_t end = ((uintptr_t)c->buf[i].ptr + c->buf[i].len) & ~(BALLOON_PAGE - 1);

		if (end > start) {
			discard_add(b, d, (uint8_t *)start, end - start);
			b->ct.reported_bytes += end - start;
		}
	}
	discard_flush(b, d);
}

/* ------------------------------------------------------------ device */

static int balloon_handle(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
			  const char **why)
{
	struct virtio_balloon *b = opaque;

	*written = 0;
	switch (queue_role(b, qi)) {
	case ROLE_INFLATE:
		inflate_or_deflate(b, c, true);
		return 0;
	case ROLE_DEFLATE:
		inflate_or_deflate(b, c, false);
		return 0;
	case ROLE_STATS:
		take_stats(b, qi, c);
		return VIRTIO_REQ_HELD;
	case ROLE_REPORTING:
		report_free(b, c);
		return 0;
	default:
		*why = "virtio-balloon: a buffer on a queue the features do not define";
		return -EINVAL;
	}
}

static uint64_t actual_bytes(const struct virtio_balloon *b)
{
	uint64_t held = (uint64_t)le32toh(b->cfg.actual) * BALLOON_PAGE;

	return held < b->mem->ram_size ? b->mem->ram_size - held : 0;
}

/* The driver writes only `actual`; num_pages is the host's. */
static void balloon_config_write(void *opaque, unsigned off, const void *data, unsigned size)
{
	struct virtio_balloon *b = opaque;
	const unsigned at = offsetof(struct virtio_balloon_config, actual);
	uint32_t before = b->cfg.actual;

	if (off < at || off + size > at + sizeof(b->cfg.actual))
		return;
	memcpy((uint8_t *)&b->cfg + off, data, size);
	if (b->cfg.actual != before && b->o.actual_changed)
		b->o.actual_changed(b->o.opaque, actual_bytes(b));
}

/* A new driver starts with an empty balloon: every page is the guest's. */
static void balloon_reset(void *opaque)
{
	struct virtio_balloon *b = opaque;
	uint32_t before = b->cfg.actual;

	b->stats_held = false;
	memset(b->inflated, 0, (b->n_frames + 63) / 64 * sizeof(uint64_t));
	b->cfg.actual = 0;
	if (before && b->o.actual_changed)
		b->o.actual_changed(b->o.opaque, actual_bytes(b));
}

/* ----------------------------------------------------------- snapshots */

/* What a snapshot holds (transport lock held, queues frozen):
 *  - the config: num_pages (the host's target) and actual (the guest's);
 *  - the stats buffer the device holds between polls, by head: it is not
 *    a request in flight (the guest gave it up until the next poll), so it
 *    is recorded rather than drained, and the loaded device holds it and
 *    gives it back at its first poll;
 *  - the polling interval and the guest's last figures (the loaded device
 *    polls a full interval after the load: the monotonic clock is the
 *    process's);
 *  - which pages are in the balloon, one bit per 4 KiB: a later deflate
 *    and the tests' page queries answer as before, and the loaded device
 *    discards those pages again, so the destination's RSS is what the
 *    source's was (the RAM stream may have written their zeroes).
 * The counters are this process's diagnostics and start at zero. */
static void balloon_save(void *opaque, struct state_writer *w)
{
	struct virtio_balloon *b = opaque;
	uint64_t stats[VIRTIO_BALLOON_NSTATS];

	for (unsigned i = 0; i < VIRTIO_BALLOON_NSTATS; i++)
		stats[i] = htobe64(b->gs.stat[i]);
	state_put_u32(w, "num-pages", le32toh(b->cfg.num_pages));
	state_put_u32(w, "actual", le32toh(b->cfg.actual));
	state_put_u32(w, "poll-secs", b->poll_secs);
	state_put_u8(w, "stats-held", b->stats_held);
	state_put_u16(w, "stats-head", b->stats_held ? b->stats_head : 0);
	state_put_bytes(w, "guest-stats", stats, sizeof(stats));
	state_put_u64(w, "stats-updated", (uint64_t)b->gs.last_update);
	/* byte pfn / 8, bit pfn % 8: the words' bytes on this little-endian
	 * (x86) host */
	state_put_bytes(w, "inflated", b->inflated, (b->n_frames + 7) / 8);
}

static int load_stats_buffer(struct virtio_balloon *b, struct state_node *n, bool held,
			     uint16_t head)
{
	struct virtq *q;

	if (!held)
		return 0;
	q = virtio_pci_loaded_queue(b->vp, stats_queue(b));
	if (!q)
		return state_node_fail(n, "stats-held without a stats queue in use");
	if (head >= q->size)
		return state_node_fail(n, "stats-head %u is not below the queue size %u", head,
				       q->size);
	return 0;
}

/* Every page the loaded bitmap holds back to the host. */
static void discard_inflated(struct virtio_balloon *b)
{
	struct discard_batch *d = &b->batch;

	for (uint64_t pfn = 0; pfn < b->n_frames; pfn++) {
		uint8_t *hva;

		if (!b->inflated[pfn / 64]) {
			pfn |= 63;
			continue;
		}
		if (!(b->inflated[pfn / 64] >> (pfn % 64) & 1))
			continue;
		hva = guest_mem_ptr(b->mem, pfn * BALLOON_PAGE, BALLOON_PAGE);
		if (hva)
			discard_add(b, d, hva, BALLOON_PAGE);
	}
	discard_flush(b, d);
}

static int balloon_load(void *opaque, struct state_node *n)
{
	struct virtio_balloon *b = opaque;
	size_t map_len = (b->n_frames + 7) / 8;
	uint64_t stats[VIRTIO_BALLOON_NSTATS], updated;
	uint32_t num_pages, actual, poll_secs, before = le32toh(b->cfg.actual);
	uint64_t pages = b->mem->ram_size / BALLOON_PAGE;
	uint8_t *map = calloc(1, map_len + sizeof(uint64_t));
	uint16_t head;
	bool held;
	int r = -1;

	if (!map)
		return state_node_fail(n, "out of memory for the balloon's page map");
	if (state_get_u32(n, "num-pages", &num_pages) < 0 ||
	    state_get_u32(n, "actual", &actual) < 0 || state_get_u32(n, "poll-secs", &poll_secs) < 0 ||
	    state_get_bool(n, "stats-held", &held) < 0 || state_get_u16(n, "stats-head", &head) < 0 ||
	    state_get_bytes(n, "guest-stats", stats, sizeof(stats)) < 0 ||
	    state_get_u64(n, "stats-updated", &updated) < 0 ||
	    state_get_bytes(n, "inflated", map, map_len) < 0 ||
	    load_stats_buffer(b, n, held, head) < 0)
		goto out;
	if (num_pages > pages || actual > pages) {
		state_node_fail(n, "num-pages %u / actual %u: guest RAM has %llu pages", num_pages,
				actual, (unsigned long long)pages);
		goto out;
	}
	if (map_len && map[map_len - 1] >> (b->n_frames % 8 ? b->n_frames % 8 : 8)) {
		state_node_fail(n, "inflated marks pages past the end of guest RAM");
		goto out;
	}
	b->cfg.num_pages = htole32(num_pages);
	b->cfg.actual = htole32(actual);
	b->poll_secs = poll_secs;
	b->next_poll_ns = clock_now_ns() + (uint64_t)poll_secs * 1000000000u;
	b->stats_held = held;
	b->stats_head = head;
	for (unsigned i = 0; i < VIRTIO_BALLOON_NSTATS; i++)
		b->gs.stat[i] = be64toh(stats[i]);
	b->gs.last_update = (int64_t)updated;
	memcpy(b->inflated, map, map_len);
	discard_inflated(b);
	if (actual != before && b->o.actual_changed)
		b->o.actual_changed(b->o.opaque, actual_bytes(b));
	r = 0;
out:
	free(map);
	return r;
}

static uint64_t ram_end(const struct guest_mem *gm)
{
	uint64_t end = 0;

	for (unsigned i = 0; i < gm->n; i++)
		if (gm->r[i].gpa + gm->r[i].size > end)
			end = gm->r[i].gpa + gm->r[i].size;
	return end;
}

struct virtio_balloon *virtio_balloon_new(struct dev_host *host, struct pci_bus *bus,
					  const struct virtio_balloon_opts *o, char *err,
					  size_t errlen)
{
	struct virtio_balloon *b = calloc(1, sizeof(*b));

	if (b) {
		b->n_frames = ram_end(host->mem) / BALLOON_PAGE;
		b->inflated = calloc((b->n_frames + 63) / 64 + 1, sizeof(uint64_t));
	}
	if (!b || !b->inflated) {
		free(b);
		snprintf(err, errlen, "virtio-balloon: out of memory");
		return NULL;
	}
	b->o = *o;
	b->mem = host->mem;
	/* opened now: the sandbox (-sandbox on) allows process_madvise, not this */
	b->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	for (unsigned i = 0; i < VIRTIO_BALLOON_NSTATS; i++)
		b->gs.stat[i] = UINT64_MAX;
	b->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_BALLOON,
		.class_code = 0xff0000, /* unclassified, as QEMU's */
		.features = 1ull << VIRTIO_BALLOON_F_STATS_VQ |
			    (o->deflate_on_oom ? 1ull << VIRTIO_BALLOON_F_DEFLATE_ON_OOM : 0) |
			    (o->free_page_reporting ? 1ull << VIRTIO_BALLOON_F_REPORTING : 0),
		.num_queues = o->free_page_reporting ? 4 : 3,
		.queue_size = BALLOON_QUEUE_SIZE,
		/* num_pages and actual: no free page hinting, no poison value */
		.config_len = offsetof(struct virtio_balloon_config, free_page_hint_cmd_id),
		.handle = balloon_handle,
		.config_write = balloon_config_write,
		.reset = balloon_reset,
		.io_timeout_ms = balloon_io_timeout_ms,
		.io_event = balloon_io_event,
		.save = balloon_save,
		.load = balloon_load,
	};
	b->vp = virtio_pci_new(host, bus, o->devfn, "virtio-balloon-pci", &b->ops, b, &b->cfg, err,
			       errlen);
	if (!b->vp) {
		virtio_balloon_free(b);
		return NULL;
	}
	return b;
}

void virtio_balloon_free(struct virtio_balloon *b)
{
	if (!b)
		return;
	virtio_pci_free(b->vp); /* stops the I/O thread first */
	if (b->pidfd >= 0)
		close(b->pidfd);
	free(b->inflated);
	free(b);
}

struct virtio_pci *virtio_balloon_transport(struct virtio_balloon *b)
{
	return b->vp;
}

/* ------------------------------------------------- the monitor's side */

int virtio_balloon_set_target(struct virtio_balloon *b, uint64_t guest_bytes)
{
	uint64_t ram = b->mem->ram_size;

	if (!guest_bytes)
		return -EINVAL;
	if (guest_bytes > ram)
		guest_bytes = ram;
	virtio_pci_lock(b->vp);
	b->cfg.num_pages = htole32((uint32_t)((ram - guest_bytes) / BALLOON_PAGE));
	virtio_pci_unlock(b->vp);
	virtio_pci_config_changed(b->vp);
	return 0;
}

uint64_t virtio_balloon_actual(struct virtio_balloon *b)
{
	uint64_t v;

	virtio_pci_lock(b->vp);
	v = actual_bytes(b);
	virtio_pci_unlock(b->vp);
	return v;
}

int virtio_balloon_set_poll_interval(struct virtio_balloon *b, int64_t secs)
{
	if (secs < 0 || secs > UINT32_MAX)
		return -EINVAL;
	virtio_pci_lock(b->vp);
	if (b->poll_secs != secs) {
		b->poll_secs = (uint32_t)secs;
		b->next_poll_ns = clock_now_ns() + (uint64_t)secs * 1000000000u;
	}
	virtio_pci_unlock(b->vp);
	virtio_pci_wake(b->vp); /* ask io_timeout_ms again */
	return 0;
}

uint32_t virtio_balloon_poll_interval(struct virtio_balloon *b)
{
	uint32_t v;

	virtio_pci_lock(b->vp);
	v = b->poll_secs;
	virtio_pci_unlock(b->vp);
	return v;
}

void virtio_balloon_guest_stats(struct virtio_balloon *b, struct virtio_balloon_guest_stats *gs)
{
	virtio_pci_lock(b->vp);
	*gs = b->gs;
	virtio_pci_unlock(b->vp);
}

void virtio_balloon_get_counters(struct virtio_balloon *b, struct virtio_balloon_counters *ct)
{
	virtio_pci_lock(b->vp);
	*ct = b->ct;
	virtio_pci_unlock(b->vp);
}

bool virtio_balloon_page_inflated(struct virtio_balloon *b, uint64_t gpa)
{
	uint64_t pfn = gpa / BALLOON_PAGE;
	bool on;

	virtio_pci_lock(b->vp);
	on = pfn < b->n_frames && (b->inflated[pfn / 64] >> (pfn % 64) & 1);
	virtio_pci_unlock(b->vp);
	return on;
}
