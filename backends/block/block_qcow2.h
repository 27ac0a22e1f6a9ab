/* block_qcow2.h — the block layer's internals shared by block.c and the
 * image formats: qcow2 (block_qcow2*.c) and QEMU-compatible image
 * locking (block_lock.c). Not a public header: backends.h is. */
#ifndef BACKENDS_BLOCK_QCOW2_H
#define BACKENDS_BLOCK_QCOW2_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --------------------------------------------------------- locking */

/* QEMU's permission bits (include/block/block-common.h); file-posix
 * takes a shared OFD lock on byte 100 + bit for each permission held
 * and on byte 200 + bit for each one it refuses to share. */
#define BLOCK_PERM_CONSISTENT_READ 0x01u
#define BLOCK_PERM_WRITE 0x02u
#define BLOCK_PERM_WRITE_UNCHANGED 0x04u
#define BLOCK_PERM_RESIZE 0x08u
#define BLOCK_PERM_ALL 0x0fu

/* Check that no other process's locks conflict with holding perm while
 * sharing only shared, then take the locks. 0, or -1 with a one-line
 * reason naming path in err. */
int block_lock_image(int fd, const char *path, unsigned perm, unsigned shared, char *err,
		     size_t errlen);
/* What vmm holds on an image it opens writable, or only reads. */
int block_lock_for(int fd, const char *path, bool write, char *err, size_t errlen);
/* Drop every lock block_lock_image took on fd's open file description. */
void block_unlock(int fd);

/* ----------------------------------------------------------- qcow2 */

#define QCOW2_MAGIC 0x514649fbu /* "QFI\xfb" */

struct qcow2;
struct qcow2_open_opts {
	bool read_only;
	bool lock;	/* OFD-lock backing files read-only */
	bool direct;	/* O_DIRECT on the backing files too (cache=none: as
			 * QEMU, whose cache.direct the backing nodes inherit) */
	unsigned depth; /* of this image in a backing chain */
};

/* Opens the qcow2 image on fd (which it owns from then on, also on
 * failure) and its backing chain. NULL with a one-line reason. */
struct qcow2 *qcow2_open(int fd, const char *path, const struct qcow2_open_opts *o, char *err,
			 size_t errlen);
/* Writes every cached change out in order; frees. */
void qcow2_close(struct qcow2 *q);
uint64_t qcow2_size(const struct qcow2 *q);
/* Byte-granular on 512-byte multiples; inside qcow2_size. 0 or -errno. */
int qcow2_read(struct qcow2 *q, uint64_t off, void *buf, size_t len);
int qcow2_write(struct qcow2 *q, uint64_t off, const void *buf, size_t len);
/* The same straight from/into iov's buffers (guest memory): no copy
 * but for partial clusters. */
struct iovec;
int qcow2_readv(struct qcow2 *q, uint64_t off, const struct iovec *iov, int n);
int qcow2_writev(struct qcow2 *q, uint64_t off, const struct iovec *iov, int n);
/* Whole clusters in [off, off+len) stop using their host clusters:
 * they read as zeroes afterwards when zero is set (or on a v3 image),
 * otherwise as the backing file. Partial clusters: zeroes written when
 * zero is set, nothing otherwise. */
int qcow2_discard(struct qcow2 *q, uint64_t off, uint64_t len, bool zero);
/* Data, then refcounts, then L2 tables, then L1: made durable in this
 * order, so a crash leaves leaked clusters at worst. */
int qcow2_flush(struct qcow2 *q);
/* The same, if any metadata changed since the last one. */
int qcow2_flush_dirty(struct qcow2 *q);
/* Where a request may go straight to the image file, past the lock (an
 * io_uring engine): every cluster of [off, off+len) plain data, and for
 * a write allocated, unshared and clear of the metadata, so it needs no
 * metadata change; or, for a write of whole clusters that all need new
 * ones (unallocated, zero, compressed, shared), new clusters allocated
 * for it now (*alloc set), which its L2 entries name only once its data
 * is written (qcow2_direct_done with its result). The number of runs
 * (at most max; each run run[i] bytes at host[i] of file fd[i], one
 * after the other in the request). A read's runs may be in backing
 * files, zeroes (fd -1: filled by the caller), or compressed clusters
 * (z[i].image set: z[i].zlen bytes of compressed data at host[i], for
 * qcow2_zrun_decode; not one the image holds decoded already). The
 * request then
 * counts as in flight until qcow2_direct_done, and no host cluster it
 * may touch is reused before that (freed clusters wait). -1: serve it
 * with qcow2_readv/_writev (a read of zeroes only, more runs than
 * max).
 * A write that fills new clusters only in part gets them too, with cow
 * set (block_cow: what the rest of them must hold, some of it to read
 * first); its runs are those clusters whole. -EAGAIN: a write touching
 * a cluster that a request in flight allocates (it waits for that). */
struct block_cow;
struct block_zrun;
int qcow2_direct_map(struct qcow2 *q, bool write, uint64_t off, size_t len, uint64_t *host,
		     size_t *run, int *fd, struct block_zrun *z, int max, bool *alloc,
		     struct block_cow *cow);
/* Where the compressed cluster of L2 entry entry lies in the file: its
 * len bytes at *off. -1 when the entry is out of bounds. */
int qcow2_compressed_span(const struct qcow2 *q, uint64_t entry, uint64_t *off, size_t *len);
/* in (len bytes, as qcow2_compressed_span gave) decoded; its bytes from
 * skip on into iov. The cluster is kept as the image's decoded one.
 * 0 or -EIO. */
int qcow2_zrun_decode(struct qcow2 *q, uint64_t entry, const uint8_t *in, size_t len, size_t skip,
		      const struct iovec *iov, int n);
/* Whether a write of [off, off+len) must wait for an allocation in
 * flight (qcow2_direct_map would say -EAGAIN). */
bool qcow2_direct_busy(struct qcow2 *q, uint64_t off, size_t len);
/* A mapped request is over (res: its result): an allocating one's L2
 * entries are set now (0 or -errno for that). */
int qcow2_direct_done(struct qcow2 *q, bool alloc, uint64_t off, const uint64_t *host,
		      const size_t *run, int n, int res);
/* Requests mapped by qcow2_direct_map and not yet done. */
unsigned qcow2_direct_in_flight(struct qcow2 *q);
/* For info block / query-block. */
const char *qcow2_backing_file(const struct qcow2 *q); /* as in the header; NULL: none */
const char *qcow2_backing_format(const struct qcow2 *q);
unsigned qcow2_backing_depth(const struct qcow2 *q);
unsigned qcow2_version(const struct qcow2 *q);
uint64_t qcow2_cluster_size(const struct qcow2 *q);

/* ------------------------------------------ shared by block_qcow2*.c */

/* One cluster-sized metadata table (an L2 table or a refcount block)
 * held in memory; its bytes are as on disk (big-endian). */
struct qcow2_table {
	uint64_t off;
	uint64_t used; /* LRU tick */
	bool dirty;
	bool refblock;
	uint8_t *data;
};

#define QCOW2_SPAN_RUNS 16 /* most runs of an allocation in flight */

struct qcow2 {
	pthread_mutex_t lock;
	int fd;
	char *path;
	bool read_only;
	unsigned version, cluster_bits, l2_bits;
	uint64_t cs; /* cluster size */
	uint64_t size;
	uint64_t incompat, compat, autoclear;
	uint8_t compression; /* 0 deflate, 1 zstd */
	unsigned refcount_bits;
	uint64_t rb_entries; /* refcounts per block */
	uint64_t *l1;	     /* host byte order */
	uint32_t l1_size;
	uint64_t l1_off;
	bool l1_dirty;
	uint64_t *rt; /* refcount table, host byte order */
	uint64_t rt_entries, rt_off;
	bool rt_dirty, rt_moved;
	uint64_t file_end; /* where the next appended cluster goes */
	uint64_t free_hint;
	struct qcow2_table **cache;
	unsigned ncache, cache_cap;
	uint64_t tick;
	uint64_t *frees; /* host clusters to unref once no L2 names them */
	size_t nfrees, cap_frees;
	uint8_t *cow, *dbuf, *cbuf;
	struct iovec *sub; /* a request's iov cut to one run of clusters */
	int sub_cap;
	uint64_t dbuf_entry; /* which compressed cluster dbuf holds; 0 none */
	/* backing: a qcow2 (bq) or a raw file (bfd) */
	char *backing_name, *backing_fmt;
	struct qcow2 *bq;
	int bfd;
	uint64_t bsize;
	unsigned depth;
	unsigned direct; /* requests qcow2_direct_map handed out, not done */
	struct qcow2_alloc_span {
		uint64_t cl, n; /* guest clusters a request in flight allocates */
		int runs;	/* the host clusters it got for them */
		uint64_t host[QCOW2_SPAN_RUNS];
		size_t len[QCOW2_SPAN_RUNS];
	} *allocs;
	unsigned nallocs, cap_allocs;
};

#define QCOW2_OFLAG_COPIED (1ull << 63)
#define QCOW2_OFLAG_COMPRESSED (1ull << 62)
#define QCOW2_OFLAG_ZERO 1ull
#define QCOW2_OFFSET_MASK 0x00fffffffffffe00ull

/* block_qcow2.c */
int qcow2_pread(int fd, uint64_t off, void *buf, size_t len); /* zeroes past EOF */
int qcow2_pwrite(int fd, uint64_t off, const void *buf, size_t len);
void qcow2_complain(struct qcow2 *q, const char *what, uint64_t val);
/* A buffer O_DIRECT accepts; free() it. */
void *qcow2_alloc_block(size_t len);
/* Where a request is in its iov: iov[0] with skip bytes of it used. */
struct qcow2_iov {
	const struct iovec *iov;
	int n;
	size_t skip;
};
/* The next len bytes as entries of out (room for c's n), consumed:
 * the bytes taken. */
size_t qcow2_iov_take(struct qcow2_iov *c, size_t len, struct iovec *out, int *nout);
/* The next len bytes copied into buf (or from buf, to_iov), consumed. */
void qcow2_iov_copy(struct qcow2_iov *c, void *buf, size_t len, bool to_iov);
/* All of iov written at off (or read: zeroes past the end). 0 or -errno. */
int qcow2_rwv(int fd, bool write, uint64_t off, const struct iovec *iov, int n);
/* Room in q->sub for n entries. */
int qcow2_sub_room(struct qcow2 *q, int n);
/* The L2 entry of guest cluster cl (0: unallocated, L1 included), or
 * -EIO for a table outside the file. */
int qcow2_entry(struct qcow2 *q, uint64_t cl, uint64_t *entry);
/* The host offset of a plain data cluster (allocated, not compressed, not
 * a zero cluster, valid), or 0 for anything qcow2_read_cluster must judge. */
uint64_t qcow2_plain_host(const struct qcow2 *q, uint64_t entry);
/* Bytes from cluster cl on (host its plain host cluster, n bytes of it
 * counted, len the most) whose clusters follow host in the file, and,
 * for a write, are unshared and clear of the metadata. */
size_t qcow2_contiguous_run(struct qcow2 *q, uint64_t cl, uint64_t host, size_t n, size_t len,
			    bool write);
/* n bytes at in_off of guest cluster cl, whose L2 entry is entry. */
int qcow2_read_cluster(struct qcow2 *q, uint64_t cl, uint64_t entry, uint64_t in_off, void *buf,
		       size_t n);
/* block_qcow2_meta.c */
/* An allocated, unshared, uncompressed data cluster a write may
 * overwrite in place. */
bool qcow2_in_place(struct qcow2 *q, uint64_t entry);
/* With the lock held: new clusters for the len bytes (whole clusters)
 * from guest cluster cl, which must all need new ones, refcounted but
 * not yet named by the L2 tables; the runs they make (as
 * qcow2_direct_map), or -1 (nothing kept). qcow2_commit_run names them
 * (res 0) or frees them (res < 0, the data write failed): 0 or -errno. */
int qcow2_alloc_run(struct qcow2 *q, uint64_t cl, size_t len, uint64_t *host, size_t *run,
		    int max);
int qcow2_commit_run(struct qcow2 *q, uint64_t cl, const uint64_t *host, const size_t *run,
		     int n, int res);
struct qcow2_table *qcow2_table_get(struct qcow2 *q, uint64_t off, bool refblock, bool fresh);
void qcow2_cache_free(struct qcow2 *q);
/* Host cluster host lies over the header, the L1 or the refcount table. */
bool qcow2_overlaps_metadata(struct qcow2 *q, uint64_t host);
int qcow2_flush_locked(struct qcow2 *q);

#endif
