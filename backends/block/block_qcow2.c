/* block_qcow2.c — qcow2 images (QEMU's format, versions 2 and 3):
 * opening and checking the header, the backing chain, and reads.
 * Writes, allocation and refcounts are in block_qcow2_meta.c, requests
 * that go to the io_uring engine in block_qcow2_direct.c.
 *
 * Requests come as iovecs (guest memory): runs of clusters that lie one
 * after the other in the file move with one preadv/pwritev straight
 * between the file and those buffers; only partial, compressed, zero or
 * backing-file clusters go through a cluster-sized buffer. With
 * cache=none (O_DIRECT) the metadata buffers are block-aligned, and the
 * few unaligned accesses (header fields, L1 and refcount tables of odd
 * sizes) go through an aligned copy (block_qcow2_io.c).
 *
 * Images are untrusted: every offset and size from the header and the
 * tables is checked against the file and the format's limits before it
 * is used; a bad image is refused at open with one line naming the file,
 * a bad table met later fails that request with -EIO. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "backends/block/block_qcow2.h"

#define HDR_V2_LEN 72
#define HDR_V3_LEN 104
#define MAX_L1_BYTES (32u << 20) /* QEMU's limits */
#define MAX_RT_BYTES (8u << 20)
#define MAX_BACKING_NAME 1023
#define MAX_CHAIN 64

#define EXT_END 0
#define EXT_BACKING_FMT 0xe2792acau
#define EXT_DATA_FILE 0x44415441u

/* incompatible feature bits */
#define INCOMPAT_DIRTY 1ull
#define INCOMPAT_CORRUPT 2ull
#define INCOMPAT_DATA_FILE 4ull
#define INCOMPAT_COMPRESSION 8ull
#define INCOMPAT_EXTL2 16ull

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

void qcow2_complain(struct qcow2 *q, const char *what, uint64_t val)
{
	fprintf(stderr, "vmm: qcow2 image '%s': %s (0x%llx)\n", q->path, what,
		(unsigned long long)val);
}

/* ------------------------------------------------------------ open */

struct hdr {
	uint32_t magic, version, backing_size, cluster_bits, crypt, l1_size, rt_clusters, nb_snap;
	uint32_t refcount_order, header_len;
	uint64_t backing_off, size, l1_off, rt_off, snap_off, incompat, compat, autoclear;
	uint8_t compression;
};

static void parse_header(const uint8_t *b, struct hdr *h)
{
	*h = (struct hdr){0};
	h->magic = be32(b);
	h->version = be32(b + 4);
	h->backing_off = be64(b + 8);
	h->backing_size = be32(b + 16);
	h->cluster_bits = be32(b + 20);
	h->size = be64(b + 24);
	h->crypt = be32(b + 32);
	h->l1_size = be32(b + 36);
	h->l1_off = be64(b + 40);
	h->rt_off = be64(b + 48);
	h->rt_clusters = be32(b + 56);
	h->nb_snap = be32(b + 60);
	h->snap_off = be64(b + 64);
	h->refcount_order = 4;
	h->header_len = HDR_V2_LEN;
	if (h->version < 3)
		return;
	h->incompat = be64(b + 72);
	h->compat = be64(b + 80);
	h->autoclear = be64(b + 88);
	h->refcount_order = be32(b + 96);
	h->header_len = be32(b + 100);
	if (h->header_len > HDR_V3_LEN)
		h->compression = b[104];
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), false)

/* [off, off+len) inside the file and not over the header cluster. */
static bool region_ok(uint64_t off, uint64_t len, uint64_t cs, uint64_t fsize)
{
	return off >= cs && off % cs == 0 && off <= fsize && len <= fsize - off;
}

static bool check_features(const struct hdr *h, const char *path, bool ro, char *err,
			   size_t errlen)
{
	uint64_t known = INCOMPAT_DIRTY | INCOMPAT_CORRUPT | INCOMPAT_COMPRESSION;

	if (h->crypt)
		return BAD("'%s': encrypted qcow2 images are not supported", path);
	if (h->incompat & INCOMPAT_DATA_FILE)
		return BAD("'%s': qcow2 external data files are not supported", path);
	if (h->incompat & INCOMPAT_EXTL2)
		return BAD("'%s': qcow2 extended L2 entries (subclusters) are not supported", path);
	if (h->incompat & ~known)
		return BAD("'%s': unsupported qcow2 feature(s) 0x%llx", path,
			   (unsigned long long)(h->incompat & ~known));
	if (h->compression > 1 || (h->compression && !(h->incompat & INCOMPAT_COMPRESSION)))
		return BAD("'%s': unknown qcow2 compression type %u", path, h->compression);
	if (!ro && (h->incompat & INCOMPAT_CORRUPT))
		return BAD("'%s': qcow2 image is marked corrupt; open it read-only or repair it "
			   "with 'qemu-img check -r all'", path);
	if (!ro && (h->incompat & INCOMPAT_DIRTY))
		return BAD("'%s': qcow2 image is dirty (lazy refcounts, not closed cleanly); "
			   "repair it with 'qemu-img check -r all'", path);
	if (!ro && h->nb_snap)
		return BAD("'%s': qcow2 image has internal snapshots; vmm opens those read-only "
			   "(readonly=on or -snapshot)", path);
	return true;
}

static bool check_header(const struct hdr *h, const char *path, uint64_t fsize, bool ro,
			 char *err, size_t errlen)
{
	uint64_t cs, l2_entries, need_l1;

	if (h->version != 2 && h->version != 3)
		return BAD("'%s': qcow2 version %u is not supported", path, h->version);
	if (h->cluster_bits < 9 || h->cluster_bits > 21)
		return BAD("'%s': bad qcow2 cluster size (2^%u)", path, h->cluster_bits);
	cs = 1ull << h->cluster_bits;
	if (h->version == 3 && (h->header_len < HDR_V3_LEN || h->header_len > cs ||
				h->header_len % 8))
		return BAD("'%s': bad qcow2 header length %u", path, h->header_len);
	if (h->refcount_order > 6)
		return BAD("'%s': bad qcow2 refcount order %u", path, h->refcount_order);
	if (!check_features(h, path, ro, err, errlen))
		return false;
	if (h->size % 512 || h->size > (1ull << 56))
		return BAD("'%s': bad qcow2 virtual size %llu", path, (unsigned long long)h->size);
	l2_entries = cs / 8;
	need_l1 = (h->size + cs * l2_entries - 1) / (cs * l2_entries);
	if (h->l1_size < need_l1 || (uint64_t)h->l1_size * 8 > MAX_L1_BYTES)
		return BAD("'%s': qcow2 L1 table size %u does not fit the disk size", path,
			   h->l1_size);
	if (h->l1_size && !region_ok(h->l1_off, (uint64_t)h->l1_size * 8, cs, fsize))
		return BAD("'%s': qcow2 L1 table outside the file", path);
	if (!h->rt_clusters || h->rt_clusters * cs > MAX_RT_BYTES ||
	    !region_ok(h->rt_off, h->rt_clusters * cs, cs, fsize))
		return BAD("'%s': qcow2 refcount table outside the file", path);
	if (h->l1_size && h->l1_off < h->rt_off + h->rt_clusters * cs &&
	    h->rt_off < h->l1_off + (uint64_t)h->l1_size * 8)
		return BAD("'%s': qcow2 L1 and refcount tables overlap", path);
	if (h->backing_off && (h->backing_size > MAX_BACKING_NAME || h->backing_off >= cs ||
			       h->backing_size > cs - h->backing_off || !h->backing_size))
		return BAD("'%s': bad qcow2 backing file name", path);
	return true;
}

/* Header extensions: the backing format; an external data file is
 * refused here too, whatever the feature bits say. */
static bool parse_extensions(struct qcow2 *q, const uint8_t *c, uint32_t start, char *err,
			     size_t errlen)
{
	uint64_t pos = start;

	while (pos + 8 <= q->cs) {
		uint32_t type = be32(c + pos), len = be32(c + pos + 4);

		if (type == EXT_END)
			return true;
		if (len > q->cs - pos - 8)
			return BAD("'%s': qcow2 header extension overruns the header", q->path);
		if (type == EXT_BACKING_FMT) {
			free(q->backing_fmt);
			q->backing_fmt = strndup((const char *)c + pos + 8, len);
			if (!q->backing_fmt)
				return BAD("out of memory opening '%s'", q->path);
		} else if (type == EXT_DATA_FILE) {
			return BAD("'%s': qcow2 external data files are not supported", q->path);
		}
		pos += 8 + (((uint64_t)len + 7) & ~7ull);
	}
	return true;
}

static bool load_table(int fd, uint64_t off, uint64_t n, uint64_t **out)
{
	uint8_t *raw = malloc(n ? n * 8 : 1);
	uint64_t *t = calloc(n ? n : 1, 8);

	if (!raw || !t || qcow2_pread(fd, off, raw, n * 8)) {
		free(raw);
		free(t);
		return false;
	}
	for (uint64_t i = 0; i < n; i++)
		t[i] = be64(raw + i * 8);
	free(raw);
	*out = t;
	return true;
}

/* ---------------------------------------------------------- backing */

/* QEMU's rule: a relative backing name is relative to the directory of
 * the image that names it. */
static char *backing_path(const char *overlay, const char *name)
{
	char *dup, *dir, *out;

	if (name[0] == '/')
		return strdup(name);
	dup = strdup(overlay);
	if (!dup)
		return NULL;
	dir = dirname(dup);
	if (asprintf(&out, "%s/%s", dir, name) < 0)
		out = NULL;
	free(dup);
	return out;
}

static bool open_backing(struct qcow2 *q, const struct qcow2_open_opts *o, char *err,
			 size_t errlen)
{
	char *path = backing_path(q->path, q->backing_name);
	uint8_t magic[4] = {0};
	bool is_qcow2;
	struct stat st;
	int fd;

	if (!path)
		return BAD("out of memory opening '%s'", q->path);
	if (o->depth + 1 >= MAX_CHAIN) {
		free(path);
		return BAD("'%s': backing chain deeper than %d (a loop?)", q->path, MAX_CHAIN);
	}
	/* non-blocking: a name in an untrusted image may be a FIFO */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd >= 0 && fcntl(fd, F_SETFL, o->direct ? O_DIRECT : 0) < 0) {
		snprintf(err, errlen,
			 "cache=none: the file system of backing file '%s' does not "
			 "support O_DIRECT",
			 path);
		close(fd);
		free(path);
		return false;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot open backing file '%s' of '%s': %s", path, q->path,
			 strerror(errno));
		free(path);
		return false;
	}
	if (o->lock && block_lock_for(fd, path, false, err, errlen) < 0) {
		close(fd);
		free(path);
		return false;
	}
	qcow2_pread(fd, 0, magic, 4);
	is_qcow2 = be32(magic) == QCOW2_MAGIC;
	if (q->backing_fmt && strcmp(q->backing_fmt, "raw") && strcmp(q->backing_fmt, "qcow2")) {
		snprintf(err, errlen, "'%s': backing format '%s' is not supported (raw, qcow2)",
			 q->path, q->backing_fmt);
		close(fd);
		free(path);
		return false;
	}
	if (q->backing_fmt)
		is_qcow2 = !strcmp(q->backing_fmt, "qcow2");
	if (is_qcow2) {
		struct qcow2_open_opts bo = {.read_only = true,
					     .lock = o->lock,
					     .direct = o->direct,
					     .depth = o->depth + 1};

		q->bq = qcow2_open(fd, path, &bo, err, errlen);
		free(path);
		return q->bq != NULL;
	}
	free(path);
	q->bfd = fd;
	q->bsize = (uint64_t)st.st_size;
	return true;
}

/* len bytes of the backing file at off; zeroes past its end. */
static int backing_read(struct qcow2 *q, uint64_t off, uint8_t *buf, size_t len)
{
	uint64_t bsize = q->bq ? q->bq->size : q->bsize;
	size_t n = off >= bsize ? 0 : (size_t)(bsize - off < len ? bsize - off : len);
	int r = 0;

	memset(buf + n, 0, len - n);
	if (n && q->bq) {
		size_t whole = n & ~(size_t)511; /* a qcow2 reads whole sectors */

		if (whole)
			r = qcow2_read(q->bq, off, buf, whole);
		if (!r && n > whole) {
			uint8_t sec[512];

			r = qcow2_read(q->bq, off + whole, sec, 512);
			memcpy(buf + whole, sec, n - whole);
		}
	} else if (n) {
		r = qcow2_pread(q->bfd, off, buf, n);
	}
	return r;
}

/* ------------------------------------------------------------ open */

static bool setup(struct qcow2 *q, const struct hdr *h, const uint8_t *c0, uint64_t fsize,
		  const struct qcow2_open_opts *o, char *err, size_t errlen)
{
	q->version = h->version;
	q->cluster_bits = h->cluster_bits;
	q->l2_bits = h->cluster_bits - 3;
	q->cs = 1ull << h->cluster_bits;
	q->size = h->size;
	q->incompat = h->incompat;
	q->compat = h->compat;
	q->autoclear = h->autoclear;
	q->compression = h->compression;
	q->refcount_bits = 1u << h->refcount_order;
	q->rb_entries = q->cs * 8 / q->refcount_bits;
	q->l1_size = h->l1_size;
	q->l1_off = h->l1_off;
	q->rt_off = h->rt_off;
	q->rt_entries = h->rt_clusters * q->cs / 8;
	q->file_end = (fsize + q->cs - 1) & ~(q->cs - 1);
	q->cache_cap = (unsigned)((4u << 20) / q->cs);
	q->cache_cap = q->cache_cap < 16 ? 16 : q->cache_cap > 512 ? 512 : q->cache_cap;
	q->cow = qcow2_alloc_block(q->cs);
	q->dbuf = malloc(q->cs);
	q->cbuf = malloc(2 * q->cs + 512);
	if (!q->cow || !q->dbuf || !q->cbuf || !load_table(q->fd, q->l1_off, q->l1_size, &q->l1) ||
	    !load_table(q->fd, q->rt_off, q->rt_entries, &q->rt))
		return BAD("cannot read the qcow2 tables of '%s'", q->path);
	if (!parse_extensions(q, c0, h->header_len, err, errlen))
		return false;
	if (h->backing_off) {
		q->backing_name = strndup((const char *)c0 + h->backing_off, h->backing_size);
		if (!q->backing_name || !open_backing(q, o, err, errlen))
			return false;
	}
	return true;
}

/* A writer clears the autoclear bits it does not know (all of them:
 * vmm keeps no bitmaps), as the format asks. */
static bool clear_autoclear(struct qcow2 *q, char *err, size_t errlen)
{
	uint8_t zero[8] = {0};

	if (q->read_only || q->version < 3 || !q->autoclear)
		return true;
	if (qcow2_pwrite(q->fd, 88, zero, 8) || fdatasync(q->fd))
		return BAD("cannot update the header of '%s': %s", q->path, strerror(errno));
	q->autoclear = 0;
	return true;
}

struct qcow2 *qcow2_open(int fd, const char *path, const struct qcow2_open_opts *o, char *err,
			 size_t errlen)
{
	struct qcow2 *q = calloc(1, sizeof(*q));
	uint8_t *c0 = NULL;
	struct stat st;
	struct hdr h;

	if (!q || !(q->path = strdup(path))) {
		snprintf(err, errlen, "out of memory opening '%s'", path);
		free(q);
		close(fd);
		return NULL;
	}
	q->fd = fd;
	q->bfd = -1;
	q->read_only = o->read_only;
	q->depth = o->depth;
	pthread_mutex_init(&q->lock, NULL);
	c0 = calloc(1, 1u << 21);
	if (!c0 || fstat(fd, &st) < 0 || qcow2_pread(fd, 0, c0, 1u << 21)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		goto fail;
	}
	parse_header(c0, &h);
	if (h.magic != QCOW2_MAGIC) {
		snprintf(err, errlen, "'%s' is not a qcow2 image", path);
		goto fail;
	}
	if (!check_header(&h, path, (uint64_t)st.st_size, o->read_only, err, errlen) ||
	    !setup(q, &h, c0, (uint64_t)st.st_size, o, err, errlen) ||
	    !clear_autoclear(q, err, errlen))
		goto fail;
	free(c0);
	return q;
fail:
	free(c0);
	q->read_only = true; /* nothing to write back */
	qcow2_close(q);
	return NULL;
}

void qcow2_close(struct qcow2 *q)
{
	if (!q)
		return;
	if (!q->read_only) {
		pthread_mutex_lock(&q->lock);
		qcow2_flush_locked(q);
		pthread_mutex_unlock(&q->lock);
	}
	qcow2_close(q->bq);
	if (q->bfd >= 0)
		close(q->bfd);
	qcow2_cache_free(q);
	close(q->fd);
	pthread_mutex_destroy(&q->lock);
	free(q->l1);
	free(q->rt);
	free(q->frees);
	free(q->allocs);
	free(q->cow);
	free(q->sub);
	free(q->dbuf);
	free(q->cbuf);
	free(q->backing_name);
	free(q->backing_fmt);
	free(q->path);
	free(q);
}

/* ------------------------------------------------------------ reads */

int qcow2_entry(struct qcow2 *q, uint64_t cl, uint64_t *entry)
{
	uint64_t l1i = cl >> q->l2_bits, l2off;
	struct qcow2_table *t;

	*entry = 0;
	if (l1i >= q->l1_size)
		return -EIO;
	l2off = q->l1[l1i] & QCOW2_OFFSET_MASK;
	if (!l2off)
		return 0;
	if (l2off % q->cs || l2off >= q->file_end) {
		qcow2_complain(q, "L2 table offset invalid", l2off);
		return -EIO;
	}
	t = qcow2_table_get(q, l2off, false, false);
	if (!t)
		return -EIO;
	*entry = be64(t->data + (cl & ((1ull << q->l2_bits) - 1)) * 8);
	return 0;
}

/* A cluster's compressed bytes into out (cs bytes): 0, or -EIO/-ENOMEM.
 * Only the image's constants: callable without its lock. */
static int decompress(const struct qcow2 *q, const uint8_t *in, size_t inlen, uint8_t *out)
{
	if (q->compression == 1) {
		ZSTD_DStream *z = ZSTD_createDStream();
		ZSTD_inBuffer ib = {in, inlen, 0};
		ZSTD_outBuffer ob = {out, q->cs, 0};
		size_t r = 1;

		if (!z)
			return -ENOMEM;
		while (ob.pos < ob.size && ib.pos < ib.size && r) {
			r = ZSTD_decompressStream(z, &ob, &ib);
			if (ZSTD_isError(r))
				break;
		}
		ZSTD_freeDStream(z);
		return ob.pos == ob.size ? 0 : -EIO;
	}
	z_stream s = {.next_in = (Bytef *)in,
		      .avail_in = (uInt)inlen,
		      .next_out = out,
		      .avail_out = (uInt)q->cs};
	int r;

	if (inflateInit2(&s, -12) != Z_OK)
		return -ENOMEM;
	r = inflate(&s, Z_FINISH);
	inflateEnd(&s);
	/* a full cluster out is success, whatever is left of the input */
	return (r == Z_STREAM_END || r == Z_BUF_ERROR || r == Z_OK) && !s.avail_out ? 0 : -EIO;
}

int qcow2_compressed_span(const struct qcow2 *q, uint64_t entry, uint64_t *off, size_t *len)
{
	unsigned x = 62 - (q->cluster_bits - 8);
	uint64_t nsec = (entry & ~QCOW2_OFLAG_COPIED & ~QCOW2_OFLAG_COMPRESSED) >> x;

	*off = entry & ((1ull << x) - 1);
	*len = (size_t)((nsec + 1) * 512 - (*off & 511));
	return *off < q->cs || *off >= q->file_end || *len > 2 * q->cs + 512 ? -1 : 0;
}

static int read_compressed(struct qcow2 *q, uint64_t entry)
{
	uint64_t off;
	size_t len;
	int r;

	if (q->dbuf_entry == entry)
		return 0;
	if (qcow2_compressed_span(q, entry, &off, &len)) {
		qcow2_complain(q, "compressed cluster descriptor invalid", entry);
		return -EIO;
	}
	r = qcow2_pread(q->fd, off, q->cbuf, len);
	if (!r)
		r = decompress(q, q->cbuf, len, q->dbuf);
	if (r)
		qcow2_complain(q, "compressed cluster does not decompress", entry);
	q->dbuf_entry = r ? 0 : entry;
	return r;
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

int qcow2_zrun_decode(struct qcow2 *q, uint64_t entry, const uint8_t *in, size_t len, size_t skip,
		      const struct iovec *iov, int n)
{
	size_t want = iov_total(iov, n);

	uint8_t *c = malloc(q->cs), *old;
	struct qcow2_iov to = {iov, n, 0};

	if (!c || skip + want > q->cs || decompress(q, in, len, c)) {
		qcow2_complain(q, "compressed cluster does not decompress", entry);
		free(c);
		return -EIO;
	}
	qcow2_iov_copy(&to, c + skip, want, true);
	/* kept: the next reads of this cluster are served from it at once */
	pthread_mutex_lock(&q->lock);
	old = q->dbuf;
	q->dbuf = c;
	q->dbuf_entry = entry;
	pthread_mutex_unlock(&q->lock);
	free(old);
	return 0;
}

int qcow2_read_cluster(struct qcow2 *q, uint64_t cl, uint64_t entry, uint64_t in_off, void *buf,
		       size_t n)
{
	uint64_t host = entry & QCOW2_OFFSET_MASK;
	int r;

	if (entry & QCOW2_OFLAG_COMPRESSED) {
		r = read_compressed(q, entry);
		if (!r)
			memcpy(buf, q->dbuf + in_off, n);
		return r;
	}
	if ((entry & QCOW2_OFLAG_ZERO) && q->version >= 3) {
		memset(buf, 0, n);
		return 0;
	}
	if (entry & 0x3f000000000001feull) {
		qcow2_complain(q, "L2 entry has reserved bits set", entry);
		return -EIO;
	}
	if (!host) {
		if (q->bq || q->bfd >= 0)
			return backing_read(q, (cl << q->cluster_bits) + in_off, buf, n);
		memset(buf, 0, n);
		return 0;
	}
	if (host % q->cs || host >= q->file_end) {
		qcow2_complain(q, "data cluster offset invalid", host);
		return -EIO;
	}
	return qcow2_pread(q->fd, host + in_off, buf, n);
}

uint64_t qcow2_plain_host(const struct qcow2 *q, uint64_t entry)
{
	uint64_t host = entry & QCOW2_OFFSET_MASK;

	if (entry & (QCOW2_OFLAG_COMPRESSED | 0x3f000000000001feull))
		return 0;
	if (((entry & QCOW2_OFLAG_ZERO) && q->version >= 3) || host % q->cs ||
	    host >= q->file_end)
		return 0;
	return host;
}

/* A freshly written image lays its clusters out in order: one preadv
 * (or pwritev) then serves them all. */
size_t qcow2_contiguous_run(struct qcow2 *q, uint64_t cl, uint64_t host, size_t n, size_t len,
			    bool write)
{
	uint64_t entry;

	while (n < len && qcow2_entry(q, cl + 1, &entry) == 0 &&
	       qcow2_plain_host(q, entry) == host + q->cs &&
	       (!write || ((entry & QCOW2_OFLAG_COPIED) && !qcow2_overlaps_metadata(q, host + q->cs)))) {
		size_t more = (size_t)(q->cs < len - n ? q->cs : len - n);

		cl++;
		host += q->cs;
		n += more;
	}
	return n;
}

int qcow2_sub_room(struct qcow2 *q, int n)
{
	struct iovec *v;

	if (n <= q->sub_cap)
		return 0;
	v = realloc(q->sub, (size_t)n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	q->sub = v;
	q->sub_cap = n;
	return 0;
}

int qcow2_readv(struct qcow2 *q, uint64_t off, const struct iovec *iov, int niov)
{
	struct qcow2_iov c = {iov, niov, 0};
	size_t len = iov_total(iov, niov);
	int r;

	if (off > q->size || len > q->size - off)
		return -ERANGE;
	pthread_mutex_lock(&q->lock);
	r = qcow2_sub_room(q, niov);
	while (len && !r) {
		uint64_t cl = off >> q->cluster_bits, in = off & (q->cs - 1), entry, host;
		size_t n = (size_t)(q->cs - in < len ? q->cs - in : len);
		int k;

		r = qcow2_entry(q, cl, &entry);
		if (r)
			break;
		host = qcow2_plain_host(q, entry);
		if (host) {
			n = qcow2_contiguous_run(q, cl, host, n, len, false);
			qcow2_iov_take(&c, n, q->sub, &k);
			r = qcow2_rwv(q->fd, false, host + in, q->sub, k);
		} else {
			r = qcow2_read_cluster(q, cl, entry, in, q->cow, n);
			qcow2_iov_copy(&c, q->cow, n, true);
		}
		off += n;
		len -= n;
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

int qcow2_read(struct qcow2 *q, uint64_t off, void *buf, size_t len)
{
	struct iovec v = {buf, len};

	return qcow2_readv(q, off, &v, 1);
}

/* ------------------------------------------------------------- info */

uint64_t qcow2_size(const struct qcow2 *q)
{
	return q->size;
}

const char *qcow2_backing_file(const struct qcow2 *q)
{
	return q->backing_name;
}

const char *qcow2_backing_format(const struct qcow2 *q)
{
	return q->bq ? "qcow2" : q->bfd >= 0 ? "raw" : NULL;
}

unsigned qcow2_backing_depth(const struct qcow2 *q)
{
	return q->bq ? 1 + qcow2_backing_depth(q->bq) : q->bfd >= 0 ? 1 : 0;
}

unsigned qcow2_version(const struct qcow2 *q)
{
	return q->version;
}

uint64_t qcow2_cluster_size(const struct qcow2 *q)
{
	return q->cs;
}
