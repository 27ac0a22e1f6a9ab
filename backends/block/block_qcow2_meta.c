/* block_qcow2_meta.c — qcow2 writes: the L2/refcount-block cache,
 * refcounts, cluster allocation, copy-on-write, discard and the
 * ordered flush.
 *
 * Crash safety without a journal, as QEMU's qcow2 driver does it: a
 * cluster's refcount (and the data written into it) reach the disk
 * before any L2 entry names it; L2 tables before the L1 entries naming
 * them; and a cluster dropped from an L2 table has its refcount lowered
 * only after that table is on the disk. A crash at any moment therefore
 * leaves clusters counted but unused (leaks, which qemu-img check
 * reports and repairs) but never a cluster used and not counted.
 * Metadata changes stay in the cache until a flush (the guest's, the
 * cache filling up, or close) writes them out in that order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/block/block_qcow2.h"

/* A big-endian number of `bytes` bytes (no more: a refcount at the end
 * of its block has nothing after it). */
static uint64_t get_be(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* ------------------------------------------------------------ cache */

/* The table at off (loaded, or zeroed when fresh). Only clean tables
 * are evicted here: the cache may grow past its size inside one
 * request, and qcow2_trim writes it out afterwards. */
struct qcow2_table *qcow2_table_get(struct qcow2 *q, uint64_t off, bool refblock, bool fresh)
{
	struct qcow2_table *t = NULL;
	unsigned victim = q->ncache;

	for (unsigned i = 0; i < q->ncache; i++) {
		if (q->cache[i]->off == off) {
			q->cache[i]->used = ++q->tick;
			return q->cache[i];
		}
		if (!q->cache[i]->dirty &&
		    (victim == q->ncache || q->cache[i]->used < q->cache[victim]->used))
			victim = i;
	}
	if (q->ncache >= q->cache_cap && victim < q->ncache) {
		t = q->cache[victim];
	} else {
		struct qcow2_table **c = realloc(q->cache, (q->ncache + 1) * sizeof(*c));

		if (!c)
			return NULL;
		q->cache = c;
		t = calloc(1, sizeof(*t));
		if (!t || !(t->data = qcow2_alloc_block(q->cs))) {
			free(t);
			return NULL;
		}
		q->cache[q->ncache++] = t;
	}
	t->off = 0; /* invalid until loaded */
	if (fresh)
		memset(t->data, 0, q->cs);
	else if (qcow2_pread(q->fd, off, t->data, q->cs))
		return NULL;
	t->off = off;
	t->refblock = refblock;
	t->dirty = fresh;
	t->used = ++q->tick;
	return t;
}

void qcow2_cache_free(struct qcow2 *q)
{
	for (unsigned i = 0; i < q->ncache; i++) {
		free(q->cache[i]->data);
		free(q->cache[i]);
	}
	free(q->cache);
	q->cache = NULL;
	q->ncache = 0;
}

/* ------------------------------------------------------- refcounts */

static bool refblock_offset_ok(struct qcow2 *q, uint64_t off)
{
	if (off & ~QCOW2_OFFSET_MASK || off % q->cs || off < q->cs || off >= q->file_end) {
		qcow2_complain(q, "refcount block offset invalid", off);
		return false;
	}
	return true;
}

static uint64_t rc_get(struct qcow2 *q, const uint8_t *b, uint64_t i)
{
	unsigned bits = q->refcount_bits;

	if (bits < 8)
		return b[i * bits / 8] >> (i * bits % 8) & ((1u << bits) - 1);
	return get_be(b + i * bits / 8, bits / 8);
}

static void rc_put(struct qcow2 *q, uint8_t *b, uint64_t i, uint64_t v)
{
	unsigned bits = q->refcount_bits;

	if (bits < 8) {
		unsigned sh = (unsigned)(i * bits % 8), mask = ((1u << bits) - 1) << sh;

		b[i * bits / 8] = (uint8_t)((b[i * bits / 8] & ~mask) | (v << sh & mask));
		return;
	}
	put_be(b + i * bits / 8, v, bits / 8);
}

/* Refcount of host cluster c; -1 on a bad table. */
static int64_t refcount(struct qcow2 *q, uint64_t c)
{
	uint64_t idx = c / q->rb_entries, off;
	struct qcow2_table *t;

	if (idx >= q->rt_entries || !(off = q->rt[idx] & QCOW2_OFFSET_MASK))
		return 0;
	if (!refblock_offset_ok(q, off) || !(t = qcow2_table_get(q, off, true, false)))
		return -1;
	return (int64_t)rc_get(q, t->data, c % q->rb_entries);
}

static int set_refcount(struct qcow2 *q, uint64_t c, uint64_t v);

/* A bigger refcount table at the end of the file; the header moves to
 * it at the next flush, after it is on the disk. */
static int grow_reftable(struct qcow2 *q, uint64_t min_entries)
{
	uint64_t per = q->cs / 8, n = q->rt_entries * 2 > min_entries ? q->rt_entries * 2 : min_entries;
	uint64_t clusters = (n + per - 1) / per, off = q->file_end, old = q->rt_off;
	uint64_t old_clusters = q->rt_entries / per;
	uint64_t *rt;

	if (clusters * q->cs > (8u << 20))
		return -ENOSPC;
	rt = realloc(q->rt, clusters * per * 8);
	if (!rt)
		return -ENOMEM;
	memset(rt + q->rt_entries, 0, (clusters * per - q->rt_entries) * 8);
	q->rt = rt;
	q->rt_entries = clusters * per;
	q->rt_off = off;
	q->file_end += clusters * q->cs;
	q->rt_dirty = q->rt_moved = true;
	for (uint64_t i = 0; i < clusters; i++) {
		int r = set_refcount(q, off / q->cs + i, 1);

		if (r)
			return r;
	}
	/* the old table is freed once the header names the new one */
	for (uint64_t i = 0; i < old_clusters; i++) {
		if (q->nfrees == q->cap_frees) {
			size_t cap = q->cap_frees ? q->cap_frees * 2 : 64;
			uint64_t *f = realloc(q->frees, cap * sizeof(*f));

			if (!f)
				return 0; /* leaked, harmless */
			q->frees = f;
			q->cap_frees = cap;
		}
		q->frees[q->nfrees++] = old + i * q->cs;
	}
	return 0;
}

static int set_refcount(struct qcow2 *q, uint64_t c, uint64_t v)
{
	uint64_t idx = c / q->rb_entries, off;
	struct qcow2_table *t;

	if (idx >= q->rt_entries) {
		int r = grow_reftable(q, idx + 1);

		if (r)
			return r;
	}
	off = q->rt[idx] & QCOW2_OFFSET_MASK;
	if (!off) {
		if (!v)
			return 0;
		/* a new block, appended; it may count itself */
		off = q->file_end;
		q->file_end += q->cs;
		if (!qcow2_table_get(q, off, true, true))
			return -ENOMEM;
		q->rt[idx] = off;
		q->rt_dirty = true;
		int r = set_refcount(q, off / q->cs, 1);

		if (r)
			return r;
	}
	if (!refblock_offset_ok(q, off) || !(t = qcow2_table_get(q, off, true, false)))
		return -EIO;
	rc_put(q, t->data, c % q->rb_entries, v);
	t->dirty = true;
	return 0;
}

static int add_free(struct qcow2 *q, uint64_t host)
{
	if (q->nfrees == q->cap_frees) {
		size_t cap = q->cap_frees ? q->cap_frees * 2 : 64;
		uint64_t *f = realloc(q->frees, cap * sizeof(*f));

		if (!f)
			return 0; /* the cluster leaks: harmless */
		q->frees = f;
		q->cap_frees = cap;
	}
	q->frees[q->nfrees++] = host;
	return 0;
}

/* The host clusters an L2 entry held, for unref after the next flush. */
static void release_entry(struct qcow2 *q, uint64_t entry)
{
	if (entry & QCOW2_OFLAG_COMPRESSED) {
		unsigned x = 62 - (q->cluster_bits - 8);
		uint64_t off = entry & ((1ull << x) - 1);
		uint64_t nsec = (entry & ~(3ull << 62)) >> x;
		uint64_t end = (off & ~511ull) + (nsec + 1) * 512;

		for (uint64_t c = off & ~(q->cs - 1); c < end && c < q->file_end; c += q->cs)
			add_free(q, c);
	} else if (entry & QCOW2_OFFSET_MASK) {
		add_free(q, entry & QCOW2_OFFSET_MASK);
	}
}

/* A free host cluster (refcount 0 inside the file, or appended), its
 * refcount set to 1. */
static int alloc_cluster(struct qcow2 *q, uint64_t *host)
{
	uint64_t end = q->file_end / q->cs;
	int r;

	for (uint64_t c = q->free_hint ? q->free_hint : 1; c < end; c++) {
		int64_t rc = refcount(q, c);

		if (rc < 0)
			return -EIO;
		if (rc == 0) {
			q->free_hint = c + 1;
			*host = c * q->cs;
			return set_refcount(q, c, 1);
		}
	}
	q->free_hint = end + 1;
	*host = q->file_end;
	q->file_end += q->cs;
	r = set_refcount(q, *host / q->cs, 1);
	return r;
}

/* ------------------------------------------------------------ flush */

/* A refcount block as the disk may hold it now: without the clusters
 * that requests in flight allocated (their L2 entries come only when
 * their data is written; counted on the disk before that, a crash would
 * leak them). In out, if any; the block stays dirty then, for the
 * flush after they are named. */
static bool without_in_flight(struct qcow2 *q, const struct qcow2_table *t, uint8_t *out)
{
	bool any = false;

	for (unsigned i = 0; i < q->nallocs; i++) {
		const struct qcow2_alloc_span *sp = &q->allocs[i];

		for (int k = 0; k < sp->runs; k++) {
			for (uint64_t h = sp->host[k]; h < sp->host[k] + sp->len[k]; h += q->cs) {
				uint64_t c = h / q->cs, idx = c / q->rb_entries;

				if (idx >= q->rt_entries || (q->rt[idx] & QCOW2_OFFSET_MASK) != t->off)
					continue;
				if (!any)
					memcpy(out, t->data, q->cs);
				any = true;
				rc_put(q, out, c % q->rb_entries, 0);
			}
		}
	}
	return any;
}

static int write_tables(struct qcow2 *q, bool refblocks)
{
	uint8_t *tmp = NULL;
	int r = 0;

	for (unsigned i = 0; i < q->ncache && !r; i++) {
		struct qcow2_table *t = q->cache[i];
		bool held;

		if (!t->dirty || t->refblock != refblocks)
			continue;
		if (refblocks && q->nallocs && !tmp && !(tmp = qcow2_alloc_block(q->cs)))
			return -ENOMEM;
		held = refblocks && q->nallocs && without_in_flight(q, t, tmp);
		r = qcow2_pwrite(q->fd, t->off, held ? tmp : t->data, q->cs);
		if (!r)
			t->dirty = held;
	}
	free(tmp);
	return r;
}

static int write_array(struct qcow2 *q, uint64_t off, const uint64_t *a, uint64_t n)
{
	uint8_t *raw = malloc(n * 8);
	int r;

	if (!raw)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		put_be(raw + i * 8, a[i], 8);
	r = qcow2_pwrite(q->fd, off, raw, n * 8);
	free(raw);
	return r;
}

static int sync_file(struct qcow2 *q)
{
	return fdatasync(q->fd) < 0 ? -errno : 0;
}

/* refcount blocks and the refcount table (and the header if the table
 * moved): all on the disk, with the data, before anything names them */
static int flush_refcounts(struct qcow2 *q)
{
	int r = write_tables(q, true);

	if (!r && q->rt_dirty) {
		r = sync_file(q);
		if (!r)
			r = write_array(q, q->rt_off, q->rt, q->rt_entries);
		q->rt_dirty = r != 0;
	}
	if (!r && q->rt_moved) {
		uint8_t h[12];

		put_be(h, q->rt_off, 8);
		put_be(h + 8, q->rt_entries * 8 / q->cs, 4);
		r = sync_file(q);
		if (!r)
			r = qcow2_pwrite(q->fd, 48, h, sizeof(h));
		q->rt_moved = r != 0;
	}
	return r ? r : sync_file(q);
}

int qcow2_flush_locked(struct qcow2 *q)
{
	int r;
	size_t n;

	if (q->read_only)
		return 0;
	r = flush_refcounts(q);
	if (!r)
		r = write_tables(q, false);
	if (!r)
		r = sync_file(q);
	if (!r && q->l1_dirty) {
		r = write_array(q, q->l1_off, q->l1, q->l1_size);
		if (!r)
			r = sync_file(q);
		q->l1_dirty = r != 0;
	}
	if (r)
		return r;
	/* nothing on the disk names these any more, but a request mapped
	 * before may still be writing one: reused now, that write would
	 * land in whatever the cluster holds next */
	if (qcow2_direct_in_flight(q))
		return 0;
	n = q->nfrees;
	q->nfrees = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = q->frees[i] / q->cs;
		int64_t rc = refcount(q, c);

		if (rc > 0)
			set_refcount(q, c, (uint64_t)rc - 1);
		if (rc == 1 && c < q->free_hint)
			q->free_hint = c;
	}
	/* the lowered counts out too (no sync needed: if lost, leaks) */
	return n ? write_tables(q, true) : 0;
}

int qcow2_flush_dirty(struct qcow2 *q)
{
	bool dirty;
	int r = 0;

	pthread_mutex_lock(&q->lock);
	dirty = q->l1_dirty || q->rt_dirty || q->rt_moved;
	for (unsigned i = 0; i < q->ncache && !dirty; i++)
		dirty = q->cache[i]->dirty;
	if (dirty)
		r = qcow2_flush_locked(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int qcow2_flush(struct qcow2 *q)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = qcow2_flush_locked(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

/* After a request: a cache grown past its size is written out and the
 * clean tables beyond it dropped. */
static int trim(struct qcow2 *q)
{
	int r = 0;

	if (q->ncache <= q->cache_cap && (q->nfrees < 4096 || qcow2_direct_in_flight(q)))
		return 0;
	r = qcow2_flush_locked(q);
	while (!r && q->ncache > q->cache_cap) {
		unsigned v = 0;

		for (unsigned i = 1; i < q->ncache; i++)
			if (q->cache[i]->used < q->cache[v]->used)
				v = i;
		if (q->cache[v]->dirty)
			break;
		free(q->cache[v]->data);
		free(q->cache[v]);
		q->cache[v] = q->cache[--q->ncache];
	}
	return r;
}

/* ----------------------------------------------------------- writes */

/* The L2 table for guest cluster cl, allocated when missing. */
static int l2_table(struct qcow2 *q, uint64_t cl, struct qcow2_table **out)
{
	uint64_t l1i = cl >> q->l2_bits, off;
	int r;

	if (l1i >= q->l1_size)
		return -EIO;
	off = q->l1[l1i] & QCOW2_OFFSET_MASK;
	if (off && !(q->l1[l1i] & QCOW2_OFLAG_COPIED)) {
		qcow2_complain(q, "shared L2 table (snapshot) cannot be written", off);
		return -EIO;
	}
	if (!off) {
		r = alloc_cluster(q, &off);
		if (r)
			return r;
		if (!qcow2_table_get(q, off, false, true))
			return -ENOMEM;
		q->l1[l1i] = off | QCOW2_OFLAG_COPIED;
		q->l1_dirty = true;
	} else if (off % q->cs || off >= q->file_end) {
		qcow2_complain(q, "L2 table offset invalid", off);
		return -EIO;
	}
	*out = qcow2_table_get(q, off, false, false);
	return *out ? 0 : -EIO;
}

static int set_entry(struct qcow2 *q, uint64_t cl, uint64_t entry)
{
	struct qcow2_table *t;
	int r = l2_table(q, cl, &t);

	if (r)
		return r;
	put_be(t->data + (cl & ((1ull << q->l2_bits) - 1)) * 8, entry, 8);
	t->dirty = true;
	return 0;
}

bool qcow2_overlaps_metadata(struct qcow2 *q, uint64_t host)
{
	uint64_t l1_end = q->l1_off + (uint64_t)q->l1_size * 8;
	uint64_t rt_end = q->rt_off + q->rt_entries * 8;

	return host < q->cs || (host + q->cs > q->l1_off && host < l1_end) ||
	       (host + q->cs > q->rt_off && host < rt_end);
}

/* The next n bytes of c at in_off of guest cluster cl. */
static int write_cluster(struct qcow2 *q, uint64_t cl, uint64_t in_off, struct qcow2_iov *c,
			 size_t n)
{
	uint64_t entry, host;
	bool zero_flag;
	int k, r = qcow2_entry(q, cl, &entry);

	if (r)
		return r;
	host = entry & QCOW2_OFFSET_MASK;
	zero_flag = (entry & QCOW2_OFLAG_ZERO) && q->version >= 3;
	if (host && !(entry & QCOW2_OFLAG_COMPRESSED) && (entry & QCOW2_OFLAG_COPIED)) {
		if (host % q->cs || host >= q->file_end || qcow2_overlaps_metadata(q, host)) {
			qcow2_complain(q, "data cluster offset invalid", host);
			return -EIO;
		}
		if (!zero_flag) {
			qcow2_iov_take(c, n, q->sub, &k);
			return qcow2_rwv(q->fd, true, host + in_off, q->sub, k);
		}
		/* a preallocated zero cluster becomes a normal one */
		memset(q->cow, 0, q->cs);
		qcow2_iov_copy(c, q->cow + in_off, n, false);
		r = qcow2_pwrite(q->fd, host, q->cow, q->cs);
		return r ? r : set_entry(q, cl, host | QCOW2_OFLAG_COPIED);
	}
	/* a new cluster: what the guest sees there now, then the new bytes */
	if (n < q->cs) {
		r = qcow2_read_cluster(q, cl, entry, 0, q->cow, q->cs);
		if (r)
			return r;
	}
	qcow2_iov_copy(c, q->cow + in_off, n, false);
	r = alloc_cluster(q, &host);
	if (!r)
		r = qcow2_pwrite(q->fd, host, q->cow, q->cs);
	if (!r)
		r = set_entry(q, cl, host | QCOW2_OFLAG_COPIED);
	if (!r)
		release_entry(q, entry);
	return r;
}

/* Whether a write to a cluster with this L2 entry goes to a new cluster:
 * anything but an allocated, unshared, uncompressed data cluster. */
static bool needs_new_cluster(uint64_t entry)
{
	return !((entry & QCOW2_OFFSET_MASK) && !(entry & QCOW2_OFLAG_COMPRESSED) &&
		 (entry & QCOW2_OFLAG_COPIED));
}

#define NEW_RUN_MAX 256 /* clusters per pwrite of write_new_run */

/* Whole clusters from cl on that all need new clusters (a fresh image
 * written in order): allocated one after another in the file, so one
 * pwrite carries them, data before the L2 entries that point at it, as
 * write_cluster orders it. entry: cl's L2 entry, already looked up. At
 * least the first cluster; *done: bytes. */
static int write_new_run(struct qcow2 *q, uint64_t cl, uint64_t entry, struct qcow2_iov *c,
			 size_t len, size_t *done)
{
	uint64_t old[NEW_RUN_MAX], first, host;
	size_t k, max = len >> q->cluster_bits;
	int nsub, r = alloc_cluster(q, &first);

	old[0] = entry;
	for (k = 1; !r && k < max && k < NEW_RUN_MAX; k++) {
		if (qcow2_entry(q, cl + k, &old[k]) || !needs_new_cluster(old[k]))
			break;
		r = alloc_cluster(q, &host);
		if (!r && host != first + k * q->cs) { /* a refcount block came between */
			release_entry(q, host);
			break;
		}
	}
	qcow2_iov_take(c, k * q->cs, q->sub, &nsub);
	if (!r)
		r = qcow2_rwv(q->fd, true, first, q->sub, nsub);
	for (size_t i = 0; !r && i < k; i++) {
		r = set_entry(q, cl + i, (first + i * q->cs) | QCOW2_OFLAG_COPIED);
		if (!r)
			release_entry(q, old[i]);
	}
	*done = k * q->cs;
	return r;
}

/* ------------------------------------- allocation for requests in flight */

int qcow2_alloc_run(struct qcow2 *q, uint64_t cl, size_t len, uint64_t *host, size_t *run,
		    int max)
{
	size_t k = len >> q->cluster_bits;
	int n = 0;

	for (size_t i = 0; i < k; i++) {
		uint64_t entry, h;

		if (qcow2_entry(q, cl + i, &entry) || !needs_new_cluster(entry) ||
		    alloc_cluster(q, &h))
			goto undo;
		if (n && host[n - 1] + run[n - 1] == h) {
			run[n - 1] += q->cs;
		} else if (n == max) {
			add_free(q, h);
			goto undo;
		} else {
			host[n] = h;
			run[n++] = q->cs;
		}
	}
	return n;
undo: /* unreferenced: freed by the next flush with nothing in flight */
	for (int i = 0; i < n; i++)
		for (uint64_t c = 0; c < run[i]; c += q->cs)
			add_free(q, host[i] + c);
	return -1;
}

int qcow2_commit_run(struct qcow2 *q, uint64_t cl, const uint64_t *host, const size_t *run,
		     int n, int res)
{
	for (int i = 0; i < n; i++) {
		for (uint64_t c = 0; c < run[i]; c += q->cs, cl++) {
			uint64_t cur;

			/* whatever names the cluster now (a discard or another
			 * write may have come between) is what it stops using */
			if (!res)
				res = qcow2_entry(q, cl, &cur);
			if (!res)
				res = set_entry(q, cl, (host[i] + c) | QCOW2_OFLAG_COPIED);
			if (!res)
				release_entry(q, cur);
			else
				add_free(q, host[i] + c);
		}
	}
	q->dbuf_entry = 0;
	return res ? res : trim(q);
}

/* A write or discard: -EROFS, -ERANGE past the end, or 0. */
static int check_change(const struct qcow2 *q, uint64_t off, uint64_t len)
{
	if (q->read_only)
		return -EROFS;
	if (off > q->size || len > q->size - off)
		return -ERANGE;
	return 0;
}

/* An allocated, unshared cluster (and those after it in the file):
 * overwritten in place with one pwritev. */
bool qcow2_in_place(struct qcow2 *q, uint64_t entry)
{
	uint64_t host = entry & QCOW2_OFFSET_MASK;

	return host && (entry & QCOW2_OFLAG_COPIED) &&
	       !(entry & (QCOW2_OFLAG_COMPRESSED | QCOW2_OFLAG_ZERO | 0x3f000000000001feull)) &&
	       host % q->cs == 0 && host < q->file_end && !qcow2_overlaps_metadata(q, host);
}

int qcow2_writev(struct qcow2 *q, uint64_t off, const struct iovec *iov, int niov)
{
	struct qcow2_iov c = {iov, niov, 0};
	size_t len = 0;
	int r, bad, k;

	for (int i = 0; i < niov; i++)
		len += iov[i].iov_len;
	bad = check_change(q, off, len);
	if (bad)
		return bad;
	pthread_mutex_lock(&q->lock);
	r = qcow2_sub_room(q, niov);
	while (len && !r) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1), entry;
		size_t n = (size_t)(q->cs - in < len ? q->cs - in : len);
		bool known = !qcow2_entry(q, cl, &entry);

		if (known && qcow2_in_place(q, entry)) {
			uint64_t host = entry & QCOW2_OFFSET_MASK;

			n = qcow2_contiguous_run(q, cl, host, n, len, true);
			qcow2_iov_take(&c, n, q->sub, &k);
			r = qcow2_rwv(q->fd, true, host + in, q->sub, k);
		} else if (known && !in && n == q->cs && needs_new_cluster(entry)) {
			r = write_new_run(q, cl, entry, &c, len, &n);
		} else {
			r = write_cluster(q, cl, in, &c, n);
		}
		off += n;
		len -= n;
	}
	q->dbuf_entry = 0;
	if (!r)
		r = trim(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int qcow2_write(struct qcow2 *q, uint64_t off, const void *buf, size_t len)
{
	struct iovec v = {(void *)buf, len};

	return qcow2_writev(q, off, &v, 1);
}

/* ---------------------------------------------------------- discard */

static bool has_backing(const struct qcow2 *q)
{
	return q->bq || q->bfd >= 0;
}

static int discard_cluster(struct qcow2 *q, uint64_t cl, bool zero)
{
	uint64_t entry, next;
	int r = qcow2_entry(q, cl, &entry);

	if (r)
		return r;
	if (!has_backing(q))
		next = 0;
	else if (q->version >= 3)
		next = QCOW2_OFLAG_ZERO;
	else if (zero) /* v2 has no zero flag: write the zeroes */
		return -EAGAIN;
	else
		next = 0; /* discarded: the backing file shows again */
	if (entry == next)
		return 0;
	if (entry & QCOW2_OFFSET_MASK && !(entry & QCOW2_OFLAG_COMPRESSED) &&
	    !(entry & QCOW2_OFLAG_COPIED))
		return 0; /* shared with a snapshot: leave it */
	r = set_entry(q, cl, next);
	if (!r)
		release_entry(q, entry);
	return r;
}

static int zero_bytes(struct qcow2 *q, uint64_t off, uint64_t len)
{
	/* write_cluster splits c into q->sub, which only the synchronous
	 * reads and writes size: with io_uring serving those, it may be none */
	int r = qcow2_sub_room(q, 1);

	while (len && !r) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1);
		size_t n = (size_t)(q->cs - in < len ? q->cs - in : len);
		uint8_t *z = calloc(1, n);
		struct iovec v = {z, n};
		struct qcow2_iov c = {&v, 1, 0};

		r = z ? write_cluster(q, cl, in, &c, n) : -ENOMEM;
		free(z);
		off += n;
		len -= n;
	}
	return r;
}

int qcow2_discard(struct qcow2 *q, uint64_t off, uint64_t len, bool zero)
{
	int r = 0;
	int bad = check_change(q, off, len);

	if (bad)
		return bad;
	pthread_mutex_lock(&q->lock);
	while (len && !r) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1);
		uint64_t n = q->cs - in < len ? q->cs - in : len;

		if (n == q->cs || (off + n == q->size && !in)) {
			r = discard_cluster(q, cl, zero);
			if (r == -EAGAIN)
				r = zero_bytes(q, off, n);
		} else if (zero) {
			r = zero_bytes(q, off, n);
		}
		off += n;
		len -= n;
	}
	q->dbuf_entry = 0;
	if (!r)
		r = trim(q);
	pthread_mutex_unlock(&q->lock);
	return r;
}
