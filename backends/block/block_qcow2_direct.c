/* block_qcow2_direct.c — qcow2 requests that go straight to the image
 * file on the io_uring engine (block_aio.c), past the image's lock: the
 * clusters a request touches are looked up (or, for whole new clusters,
 * allocated) under the lock, the data moves without it, and an
 * allocating request's L2 entries are set once its data is written.
 * Counting what is in flight keeps freed clusters from being reused
 * under a write still going to them (block_qcow2_meta.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/block/block_qcow2.h"

/* With the lock held: the runs of a request to allocated clusters. */
static int map_allocated(struct qcow2 *q, bool write, uint64_t off, size_t len, uint64_t *host,
			 size_t *run, int max)
{
	int n = 0;

	while (len && n < max) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1), entry, h = 0;
		size_t chunk = (size_t)(q->cs - in < len ? q->cs - in : len);

		if (qcow2_entry(q, cl, &entry))
			break;
		h = write ? (qcow2_in_place(q, entry) ? entry & QCOW2_OFFSET_MASK : 0)
			  : qcow2_plain_host(q, entry);
		if (!h)
			break;
		chunk = qcow2_contiguous_run(q, cl, h, chunk, len, write);
		host[n] = h + in;
		run[n++] = chunk;
		off += chunk;
		len -= chunk;
	}
	return len ? -1 : n;
}

int qcow2_direct_map(struct qcow2 *q, bool write, uint64_t off, size_t len, uint64_t *host,
		     size_t *run, int max, bool *alloc)
{
	bool whole = !((off | len) & (q->cs - 1));
	int n;

	*alloc = false;
	if (!len || off > q->size || len > q->size - off || (write && q->read_only))
		return -1;
	pthread_mutex_lock(&q->lock);
	n = map_allocated(q, write, off, len, host, run, max);
	if (n < 0 && write && whole) {
		n = qcow2_alloc_run(q, off >> q->cluster_bits, len, host, run, max);
		*alloc = n > 0;
	}
	if (n > 0)
		__atomic_add_fetch(&q->direct, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
	return n > 0 ? n : -1;
}

int qcow2_direct_done(struct qcow2 *q, bool alloc, uint64_t off, const uint64_t *host,
		      const size_t *run, int n, int res)
{
	if (alloc) {
		pthread_mutex_lock(&q->lock);
		res = qcow2_commit_run(q, off >> q->cluster_bits, host, run, n, res);
		pthread_mutex_unlock(&q->lock);
	}
	/* release: the request's I/O is over before a flush sees it gone */
	__atomic_sub_fetch(&q->direct, 1, __ATOMIC_RELEASE);
	return res;
}

unsigned qcow2_direct_in_flight(struct qcow2 *q)
{
	return __atomic_load_n(&q->direct, __ATOMIC_ACQUIRE);
}
