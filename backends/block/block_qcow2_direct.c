/* block_qcow2_direct.c — qcow2 requests that go straight to the image
 * file on the io_uring engine (block_aio.c), past the image's lock: the
 * clusters a request touches are looked up (or, for new clusters,
 * allocated) under the lock, the data moves without it, and an
 * allocating request's L2 entries are set once its data is written.
 * Counting what is in flight keeps freed clusters from being reused
 * under a write still going to them (block_qcow2_meta.c).
 *
 * A read goes the same way wherever its bytes are: plain clusters of
 * the image, a raw backing file, a qcow2 backing file's plain clusters
 * (to any depth), or zeroes (zero clusters, unallocated ones with no
 * backing file or past its end), each a run of its own file; of a
 * compressed cluster, its compressed bytes, decoded once they are in
 * (qcow2_zrun_decode) outside the lock. Backing files are opened
 * read-only and never change, so their runs need no count of what is in
 * flight.
 *
 * A write filling new clusters only in part carries their other bytes
 * too (copy-on-write): what the guest saw there, read from the backing
 * file (or the shared cluster) by the engine before the write, or
 * filled here (zeroes, also where a backing file reads as zeroes;
 * compressed clusters are read and decoded at once). As QEMU does, the
 * clusters a
 * request allocates are noted until it is done, and a write touching
 * one of them waits for it (-EAGAIN): two requests never both allocate
 * a cluster, each copying the other's part from the old data. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "backends/block/block_qcow2.h"

/* With the lock held: the runs of a write to allocated clusters that
 * it may overwrite in place. */
static int map_in_place(struct qcow2 *q, uint64_t off, size_t len, uint64_t *host, size_t *run,
			int max)
{
	int n = 0;

	while (len && n < max) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1), entry, h = 0;
		size_t chunk = (size_t)(q->cs - in < len ? q->cs - in : len);

		if (qcow2_entry(q, cl, &entry))
			break;
		h = qcow2_in_place(q, entry) ? entry & QCOW2_OFFSET_MASK : 0;
		if (!h)
			break;
		chunk = qcow2_contiguous_run(q, cl, h, chunk, len, true);
		host[n] = h + in;
		run[n++] = chunk;
		off += chunk;
		len -= chunk;
	}
	return len ? -1 : n;
}

/* ---------------------------------------------------------------- reads */

/* Where a read's bytes are, run by run: fd[i] (-1: zeroes) at host[i],
 * or compressed there (z[i]). */
struct read_map {
	uint64_t *host;
	size_t *run;
	int *fd;
	struct block_zrun *z;
	int n, max;
};

/* Appended, or joined to the run before when it goes on from there. */
static bool add_run(struct read_map *m, int fd, uint64_t host, size_t len)
{
	int last = m->n - 1;

	if (m->n && m->fd[last] == fd && !m->z[last].image &&
	    (fd < 0 || m->host[last] + m->run[last] == host)) {
		m->run[last] += len;
		return true;
	}
	if (m->n == m->max)
		return false;
	m->fd[m->n] = fd;
	m->host[m->n] = fd < 0 ? 0 : host;
	m->z[m->n] = (struct block_zrun){0};
	m->run[m->n++] = len;
	return true;
}

/* The len bytes at skip of q's compressed cluster (L2 entry): its
 * compressed bytes to read and decode, unless the image holds it decoded
 * already (served at once from there) or the entry is bad (served at
 * once, which complains). */
static bool add_zrun(struct read_map *m, struct qcow2 *q, uint64_t entry, uint64_t skip, size_t len)
{
	uint64_t off;
	size_t zlen;

	if (m->n == m->max || entry == q->dbuf_entry ||
	    qcow2_compressed_span(q, entry, &off, &zlen))
		return false;
	m->fd[m->n] = q->fd;
	m->host[m->n] = off;
	m->run[m->n] = len;
	m->z[m->n++] = (struct block_zrun){q, entry, zlen, (size_t)skip};
	return true;
}

/* As qcow2_read_cluster decides: an entry that reads as zeroes, and one
 * that reads from the backing file (nothing allocated, nothing odd). */
static bool reads_zero(const struct qcow2 *q, uint64_t entry)
{
	return !(entry & QCOW2_OFLAG_COMPRESSED) && (entry & QCOW2_OFLAG_ZERO) && q->version >= 3;
}

static bool reads_backing(const struct qcow2 *q, uint64_t entry)
{
	return !(entry & (QCOW2_OFLAG_COMPRESSED | 0x3f000000000001feull | QCOW2_OFFSET_MASK)) &&
	       !reads_zero(q, entry);
}

static bool map_read(struct qcow2 *q, uint64_t off, size_t len, struct read_map *m);

/* The len bytes at off of q's backing file (zeroes past its end). */
static bool map_backing(struct qcow2 *q, uint64_t off, size_t len, struct read_map *m)
{
	uint64_t bsize = q->bq ? q->bq->size : q->bfd >= 0 ? q->bsize : 0;
	size_t n = off >= bsize ? 0 : (size_t)(bsize - off < len ? bsize - off : len);
	bool ok = true;

	if (n && q->bq) {
		pthread_mutex_lock(&q->bq->lock);
		ok = map_read(q->bq, off, n, m);
		pthread_mutex_unlock(&q->bq->lock);
	} else if (n && (n == len || !(n % 512))) {
		ok = add_run(m, q->bfd, off, n);
	} else if (n) {
		ok = false; /* a raw file ending inside a sector: O_DIRECT would refuse its tail */
	}
	return ok && (n == len || add_run(m, -1, 0, len - n));
}

/* With q's lock held: the runs of a read of [off, off+len), or false
 * (a damaged cluster, the compressed one the image holds decoded, or
 * more runs than m holds). */
static bool map_read(struct qcow2 *q, uint64_t off, size_t len, struct read_map *m)
{
	while (len) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1), entry, host;
		size_t chunk = (size_t)(q->cs - in < len ? q->cs - in : len);
		bool ok;

		if (qcow2_entry(q, cl, &entry))
			return false;
		host = qcow2_plain_host(q, entry);
		if (host) {
			chunk = qcow2_contiguous_run(q, cl, host, chunk, len, false);
			ok = add_run(m, q->fd, host + in, chunk);
		} else if (reads_zero(q, entry)) {
			ok = add_run(m, -1, 0, chunk);
		} else if (reads_backing(q, entry)) {
			ok = map_backing(q, off, chunk, m);
		} else if (entry & QCOW2_OFLAG_COMPRESSED) {
			ok = add_zrun(m, q, entry, in, chunk);
		} else {
			return false; /* served at once, which complains */
		}
		if (!ok)
			return false;
		off += chunk;
		len -= chunk;
	}
	return true;
}

/* A read's runs: their number, or -1 (served at once: see map_read; or
 * all zeroes, nothing to wait for). */
static int map_read_runs(struct qcow2 *q, uint64_t off, size_t len, uint64_t *host, size_t *run,
			 int *fd, struct block_zrun *z, int max)
{
	struct read_map m = {host, run, fd, z, 0, max};

	if (!map_read(q, off, len, &m))
		return -1;
	for (int i = 0; i < m.n; i++)
		if (fd[i] >= 0)
			return m.n;
	return -1;
}

/* ------------------------------------------------------ copy-on-write */

static bool cow_read(struct block_cow *cow, int fd, uint64_t off, size_t len, size_t at,
		     bool zero_past_eof)
{
	if (cow->nreads == BLOCK_COW_READS)
		return false;
	cow->read[cow->nreads++] = (struct block_cow_read){fd, zero_past_eof, off, len, at};
	return true;
}

/* len bytes of the backing file at off into cow->buf + at: read by the
 * engine where they are data, zeroes filled now. */
static bool cow_from_backing(struct qcow2 *q, uint64_t off, size_t len, size_t at,
			     struct block_cow *cow)
{
	uint64_t host[BLOCK_COW_READS];
	size_t run[BLOCK_COW_READS];
	int fd[BLOCK_COW_READS];
	struct block_zrun z[BLOCK_COW_READS];
	struct read_map m = {host, run, fd, z, 0, BLOCK_COW_READS - cow->nreads};

	if (!map_backing(q, off, len, &m))
		return false;
	for (int i = 0; i < m.n; i++)
		if (z[i].image)
			return false; /* compressed below: copied at once */
	for (int i = 0; i < m.n; i++) {
		if (fd[i] < 0)
			memset(cow->buf + at, 0, run[i]);
		else
			cow_read(cow, fd[i], host[i], run[i], at, true);
		at += run[i];
	}
	return true;
}

/* The len bytes at in of guest cluster cl (L2 entry entry) as the guest
 * sees them now, into cow->buf + at: to read in flight where they are
 * plain data, filled now otherwise. 0 or -errno. */
static int cow_region(struct qcow2 *q, uint64_t cl, uint64_t entry, uint64_t in, size_t len,
		      size_t at, struct block_cow *cow)
{
	uint64_t host = qcow2_plain_host(q, entry);

	if (!len)
		return 0;
	if (host && cow_read(cow, q->fd, host + in, len, at, false))
		return 0; /* shared with a snapshot: freed only once nothing is in flight */
	if (!entry && cow_from_backing(q, (cl << q->cluster_bits) + in, len, at, cow))
		return 0;
	/* zeroes, compressed, a backing cluster that is no plain data */
	return qcow2_read_cluster(q, cl, entry, in, cow->buf + at, len);
}

static size_t round_block(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* With the lock held: new clusters for a write of [off, off+len) whose
 * clusters all need them, with what the parts it leaves must hold. */
static int map_new(struct qcow2 *q, uint64_t off, size_t len, uint64_t *host, size_t *run,
		   int max, struct block_cow *cow)
{
	uint64_t cl0 = off >> q->cluster_bits, cl1 = (off + len - 1) >> q->cluster_bits, e0, e1;
	size_t span = (size_t)((cl1 - cl0 + 1) << q->cluster_bits);
	size_t head = (size_t)(off & (q->cs - 1)), tail = span - head - len;
	int n;

	if (!head && !tail)
		return qcow2_alloc_run(q, cl0, len, host, run, max);
	if (qcow2_entry(q, cl0, &e0) || qcow2_entry(q, cl1, &e1))
		return -1;
	cow->head = head;
	cow->tail = tail;
	cow->tail_at = round_block(head);
	cow->buf = qcow2_alloc_block(cow->tail_at + round_block(tail ? tail : 1));
	if (!cow->buf)
		return -1;
	n = qcow2_alloc_run(q, cl0, span, host, run, max);
	if (n > 0 && (cow_region(q, cl0, e0, 0, head, 0, cow) ||
		      cow_region(q, cl1, e1, q->cs - tail, tail, cow->tail_at, cow))) {
		qcow2_commit_run(q, cl0, host, run, n, -EIO); /* frees them */
		n = -1;
	}
	if (n < 0) {
		free(cow->buf);
		*cow = (struct block_cow){0};
	}
	return n;
}

/* --------------------------------------------- allocations in flight */

static bool busy_locked(const struct qcow2 *q, uint64_t off, size_t len)
{
	uint64_t cl0 = off >> q->cluster_bits, cl1 = (off + len - 1) >> q->cluster_bits;

	for (unsigned i = 0; i < q->nallocs; i++)
		if (cl0 < q->allocs[i].cl + q->allocs[i].n && q->allocs[i].cl <= cl1)
			return true;
	return false;
}

static bool room_for_alloc(struct qcow2 *q)
{
	struct qcow2_alloc_span *a;
	unsigned cap = q->cap_allocs ? q->cap_allocs * 2 : 16;

	if (q->nallocs < q->cap_allocs)
		return true;
	a = realloc(q->allocs, cap * sizeof(*a));
	if (!a)
		return false;
	q->allocs = a;
	q->cap_allocs = cap;
	return true;
}

static void drop_alloc(struct qcow2 *q, uint64_t cl)
{
	for (unsigned i = 0; i < q->nallocs; i++) {
		if (q->allocs[i].cl == cl) {
			q->allocs[i] = q->allocs[--q->nallocs];
			return;
		}
	}
}

bool qcow2_direct_busy(struct qcow2 *q, uint64_t off, size_t len)
{
	bool busy;

	if (!len)
		return false;
	pthread_mutex_lock(&q->lock);
	busy = busy_locked(q, off, len);
	pthread_mutex_unlock(&q->lock);
	return busy;
}

/* ------------------------------------------------------------ requests */

/* With the lock held: a write's runs, in place or in new clusters
 * (noted as in flight until it is done). */
static int map_write(struct qcow2 *q, uint64_t off, size_t len, uint64_t *host, size_t *run,
		     int *fd, struct block_zrun *z, int max, bool *alloc, struct block_cow *cow)
{
	int n = map_in_place(q, off, len, host, run, max);

	if (n < 0 && room_for_alloc(q)) {
		n = map_new(q, off, len, host, run, max, cow);
		*alloc = n > 0;
	}
	if (*alloc) {
		uint64_t cl0 = off >> q->cluster_bits;
		struct qcow2_alloc_span *sp = &q->allocs[q->nallocs++];

		sp->cl = cl0;
		sp->n = ((off + len - 1) >> q->cluster_bits) - cl0 + 1;
		sp->runs = n;
		memcpy(sp->host, host, (size_t)n * sizeof(*host));
		memcpy(sp->len, run, (size_t)n * sizeof(*run));
	}
	for (int i = 0; i < n; i++) {
		fd[i] = q->fd;
		z[i] = (struct block_zrun){0};
	}
	return n;
}

int qcow2_direct_map(struct qcow2 *q, bool write, uint64_t off, size_t len, uint64_t *host,
		     size_t *run, int *fd, struct block_zrun *z, int max, bool *alloc,
		     struct block_cow *cow)
{
	int n;

	*alloc = false;
	*cow = (struct block_cow){0};
	max = max < QCOW2_SPAN_RUNS ? max : QCOW2_SPAN_RUNS;
	if (!len || off > q->size || len > q->size - off || (write && q->read_only))
		return -1;
	pthread_mutex_lock(&q->lock);
	if (write && busy_locked(q, off, len))
		n = -EAGAIN;
	else if (write)
		n = map_write(q, off, len, host, run, fd, z, max, alloc, cow);
	else
		n = map_read_runs(q, off, len, host, run, fd, z, max);
	if (n > 0)
		__atomic_add_fetch(&q->direct, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
	return n > 0 || n == -EAGAIN ? n : -1;
}

int qcow2_direct_done(struct qcow2 *q, bool alloc, uint64_t off, const uint64_t *host,
		      const size_t *run, int n, int res)
{
	if (alloc) {
		pthread_mutex_lock(&q->lock);
		res = qcow2_commit_run(q, off >> q->cluster_bits, host, run, n, res);
		drop_alloc(q, off >> q->cluster_bits);
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
