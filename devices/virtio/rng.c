/* rng.c — virtio-rng (virtio spec 5.4, device id 4): one request queue
 * whose device-writable buffers the device fills with random bytes.
 *
 * The bytes come from a file (rng-random: /dev/urandom by default, opened
 * non-blocking by the command line) or from getrandom(2) (rng-builtin),
 * read straight into guest RAM on the transport's I/O thread, never on a
 * vCPU. A source with nothing to give (a FIFO, an empty pool) leaves the
 * buffer available (VIRTIO_HANDLE_LATER) until the fd is readable.
 *
 * Rate limit, as QEMU's max-bytes and period: the first request after a
 * refill starts a period of period_ms; at most max_bytes are handed out
 * until it ends; then the quota is max_bytes again (unused bytes do not
 * carry over). A buffer that finds the quota spent waits for the period's
 * end on the I/O thread's timeout: the guest is neither spun nor answered
 * with empty buffers. The quota survives a device reset, so resetting
 * does not buy the guest more bytes.
 *
 * The requests carry nothing to the device: a chain with a readable
 * buffer is malformed and the device needs a reset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

#define RNG_QUEUE_SIZE 8
/* At most this much per request, so one chain (up to VIRTQ_MAX_CHAIN
 * buffers across guest RAM) cannot hold the I/O thread for long; the
 * driver takes the used length, a short fill is normal. */
#define RNG_MAX_PER_REQUEST (1u << 20)
/* A source with nothing that cannot be polled (rng-builtin before the
 * kernel's pool is ready, a regular file at its end): retry. */
#define RNG_RETRY_MS 10

struct virtio_rng {
	struct virtio_pci *vp;
	struct virtio_dev_ops ops;
	struct virtio_rng_opts o;
	/* the I/O thread's state, under the transport lock */
	uint64_t quota;	     /* bytes left in this period */
	bool period_running; /* a request started it; ends at period_end_ns */
	uint64_t period_end_ns;
	bool waiting_fd; /* the source had nothing: watching its fd */
	bool retry;	 /* the source had nothing: retry in RNG_RETRY_MS */
	bool pollable;	 /* the fd can be watched (a FIFO, a socket; not
			  * /dev/urandom or a regular file, never empty) */
	struct virtio_rng_stats st;
};

/* The period is over: a full quota, and the next request starts the next. */
static void refill_if_due(struct virtio_rng *r, uint64_t now)
{
	if (r->period_running && now >= r->period_end_ns) {
		r->quota = r->o.max_bytes;
		r->period_running = false;
	}
}

static void start_period(struct virtio_rng *r, uint64_t now)
{
	if (r->period_running)
		return;
	r->period_running = true;
	r->period_end_ns = now + (uint64_t)r->o.period_ms * 1000000u;
}

/* Up to len random bytes at p: bytes read, 0 when the source has none
 * now (EAGAIN, or a regular file at its end), -1 on an error. */
static ssize_t read_source(struct virtio_rng *r, uint8_t *p, size_t len)
{
	ssize_t n;

	do
		n = r->o.fd >= 0 ? read(r->o.fd, p, len) : getrandom(p, len, GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 0;
	return n;
}

/* Fill the chain's writable buffers in order with up to want bytes. */
static ssize_t fill_chain(struct virtio_rng *r, const struct virtq_chain *c, uint64_t want)
{
	uint64_t got = 0;

	for (unsigned i = c->n_out; i < c->n_out + c->n_in && got < want; i++) {
		const struct virtq_buf *b = &c->buf[i];
		size_t off = 0;

		while (off < b->len && got < want) {
			size_t chunk = b->len - off < want - got ? b->len - off : want - got;
			ssize_t n = read_source(r, b->ptr + off, chunk);

			if (n < 0)
				return -1;
			if (n == 0)
				return (ssize_t)got;
			off += (size_t)n;
			got += (uint64_t)n;
		}
	}
	return (ssize_t)got;
}

/* The source had nothing: wake when it has (fd) or a little later. */
static void wait_for_source(struct virtio_rng *r)
{
	r->st.source_waits++;
	if (r->pollable) {
		r->waiting_fd = true;
		virtio_pci_io_watch(r->vp, true);
	} else {
		r->retry = true;
	}
}

static int rng_handle(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
		      const char **why)
{
	struct virtio_rng *r = opaque;
	uint64_t now = clock_now_ns(), want;
	ssize_t got;

	*written = 0;
	if (c->n_out) {
		r->st.bad_requests++;
		*why = "virtio-rng request with a device-readable buffer";
		return -EINVAL;
	}
	refill_if_due(r, now);
	start_period(r, now);
	if (r->quota == 0) {
		r->st.quota_waits++;
		return VIRTIO_HANDLE_LATER; /* the period's end kicks the queue */
	}
	want = c->in_len < r->quota ? c->in_len : r->quota;
	if (want > RNG_MAX_PER_REQUEST)
		want = RNG_MAX_PER_REQUEST;
	got = want ? fill_chain(r, c, want) : 0;
	if (got < 0) {
		r->st.bad_requests++;
		*why = "virtio-rng: the entropy source failed";
		return -EINVAL;
	}
	if (got == 0 && want) {
		wait_for_source(r);
		return VIRTIO_HANDLE_LATER;
	}
	r->quota -= (uint64_t)got;
	r->st.bytes += (uint64_t)got;
	r->st.requests++;
	*written = (uint32_t)got;
	return 0;
}

/* Wake for the period's end only when a buffer waits for it. */
static int rng_io_timeout_ms(void *opaque)
{
	struct virtio_rng *r = opaque;
	uint64_t now = clock_now_ns();

	if (r->retry)
		return RNG_RETRY_MS;
	if (!r->period_running || r->quota)
		return -1;
	if (now >= r->period_end_ns)
		return 0;
	return (int)((r->period_end_ns - now + 999999) / 1000000);
}

static void rng_io_event(void *opaque)
{
	struct virtio_rng *r = opaque;
	bool kick = r->retry;

	r->retry = false;
	if (r->waiting_fd) { /* readable now: stop watching (/dev/urandom always is) */
		r->waiting_fd = false;
		virtio_pci_io_watch(r->vp, false);
		kick = true;
	}
	if (r->period_running && !r->quota) { /* a buffer waits for the period's end */
		refill_if_due(r, clock_now_ns());
		kick |= !r->period_running; /* refilled */
	}
	if (kick)
		virtio_pci_kick(r->vp, 0);
}

static int rng_io_fd(void *opaque)
{
	struct virtio_rng *r = opaque;

	return r->pollable ? r->o.fd : -1;
}

/* epoll refuses fds that are always ready (EPERM): those are never
 * waited for, only retried. */
static bool fd_pollable(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ep = fd >= 0 ? epoll_create1(EPOLL_CLOEXEC) : -1;
	bool ok = ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;

	if (ep >= 0)
		close(ep);
	return ok;
}

static void rng_reset(void *opaque)
{
	struct virtio_rng *r = opaque;

	r->retry = false;
	if (r->waiting_fd) {
		r->waiting_fd = false;
		virtio_pci_io_watch(r->vp, false);
	}
}

/* Snapshots: the period's budget, with the time left in it (the clock
 * of another process does not count from the same point). */
static void rng_save(void *opaque, struct state_writer *w)
{
	struct virtio_rng *r = opaque;
	uint64_t now = clock_now_ns(), left = 0;

	if (r->period_running && r->period_end_ns > now)
		left = (r->period_end_ns - now + 999999) / 1000000;
	state_put_u64(w, "rng-quota", r->quota);
	state_put_u8(w, "rng-period-running", r->period_running);
	state_put_u32(w, "rng-period-left-ms", (uint32_t)left);
}

static int rng_load(void *opaque, struct state_node *n)
{
	struct virtio_rng *r = opaque;
	uint64_t quota;
	uint32_t left;
	bool running;

	if (state_get_u64(n, "rng-quota", &quota) < 0 ||
	    state_get_bool(n, "rng-period-running", &running) < 0 ||
	    state_get_u32_max(n, "rng-period-left-ms", r->o.period_ms, &left) < 0)
		return -1;
	if (quota > r->o.max_bytes)
		return state_node_fail(n, "rng-quota %llu is more than max-bytes %llu",
				       (unsigned long long)quota,
				       (unsigned long long)r->o.max_bytes);
	r->quota = quota;
	r->period_running = running;
	r->period_end_ns = clock_now_ns() + (uint64_t)left * 1000000u;
	return 0;
}

struct virtio_rng *virtio_rng_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_rng_opts *o, char *err, size_t errlen)
{
	struct virtio_rng *r;

	if (o->period_ms == 0) {
		snprintf(err, errlen, "virtio-rng: period must be a positive number of ms");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "virtio-rng: out of memory");
		return NULL;
	}
	r->o = *o;
	r->quota = o->max_bytes;
	r->pollable = fd_pollable(o->fd);
	r->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_RNG,
		.class_code = 0xff0000, /* unclassified, as QEMU's */
		.num_queues = 1,
		.queue_size = RNG_QUEUE_SIZE,
		.handle = rng_handle,
		.reset = rng_reset,
		.save = rng_save,
		.load = rng_load,
		.io_fd = rng_io_fd,
		.io_timeout_ms = rng_io_timeout_ms,
		.io_event = rng_io_event,
	};
	r->vp = virtio_pci_new(host, bus, o->devfn, "virtio-rng-pci", &r->ops, r, NULL, err,
			       errlen);
	if (!r->vp) {
		free(r);
		return NULL;
	}
	virtio_pci_io_watch(r->vp, false); /* only while the source has nothing */
	return r;
}

void virtio_rng_free(struct virtio_rng *r)
{
	if (!r)
		return;
	virtio_pci_free(r->vp); /* stops the I/O thread first */
	if (r->o.fd >= 0)
		close(r->o.fd);
	free(r);
}

struct virtio_pci *virtio_rng_transport(struct virtio_rng *r)
{
	return r->vp;
}

void virtio_rng_get_stats(struct virtio_rng *r, struct virtio_rng_stats *st)
{
	virtio_pci_lock(r->vp);
	*st = r->st;
	virtio_pci_unlock(r->vp);
}
