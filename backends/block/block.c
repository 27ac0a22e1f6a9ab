/* block.c — raw disk images for IDE and virtio-blk.
 *
 * Sector I/O with pread/pwrite (preadv/pwritev straight into guest
 * buffers for virtio-blk). cache=none|directsync open with O_DIRECT; a
 * request whose buffers O_DIRECT refuses (unaligned) goes through an
 * aligned bounce buffer (qcow2 images: block_qcow2*.c, also straight
 * from and into the buffers; their requests to allocated clusters also
 * go to the io_uring engine, block_aio.c). Discard and write-zeroes punch holes. With snapshot, the image is opened
 * read-only and every written sector goes to an unlinked temporary file of
 * the same size, tracked by a bitmap; reads take each sector from wherever
 * its newest copy is. The image is never written, so it stays
 * byte-identical. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "backends/block/block_qcow2.h"

struct block_dev {
	char *path;
	int fd;
	int overlay_fd;	  /* -1 unless snapshot */
	uint64_t *dirty;  /* snapshot: bit per sector present in the overlay */
	uint64_t sectors;
	bool read_only;
	enum block_cache cache;
	struct qcow2 *qcow2; /* NULL: raw */
	bool probed_raw;     /* raw by probing: sector 0 may not turn into another format */
	bool write_image, no_lock;
	bool inactive; /* handed over to (or not yet taken from) a migration peer */
	pthread_mutex_t lock; /* guards the bitmap */
	_Atomic uint64_t rd_bytes, wr_bytes, rd_ops, wr_ops, flush_ops, discard_ops, failed_ops;
};

#define DIRECT_ALIGN 4096

/* Read-only, or inactive: a migration peer owns the image now (or
 * still). A source's device must not write after the hand-over, even a
 * request it was given before: the destination may have written the same
 * blocks anew since (QEMU's inactive block nodes refuse writes too). */
static bool refuses_writes(const struct block_dev *b)
{
	return b->read_only || __atomic_load_n(&b->inactive, __ATOMIC_ACQUIRE);
}

static bool is_direct(enum block_cache c)
{
	return c == BLOCK_CACHE_NONE || c == BLOCK_CACHE_DIRECTSYNC;
}

static int open_overlay(uint64_t size)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	int fd;

	snprintf(tmpl, sizeof(tmpl), "%s/vmm-snapshot-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	if (ftruncate(fd, (off_t)size) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static bool check_image(int fd, const char *path, uint64_t *size, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat disk image '%s': %s", path, strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "disk image '%s' is a directory", path);
		return false;
	}
	if (S_ISBLK(st.st_mode)) {
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < 0) {
			snprintf(err, errlen, "cannot size '%s': %s", path, strerror(errno));
			return false;
		}
		*size = (uint64_t)end;
	} else if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
	} else {
		snprintf(err, errlen, "disk image '%s' is not a regular file or block device",
			 path);
		return false;
	}
	if (*size == 0) {
		snprintf(err, errlen, "disk image '%s' is empty", path);
		return false;
	}
	if (*size % BLOCK_SECTOR_SIZE) {
		snprintf(err, errlen,
			 "disk image '%s' is %llu bytes, not a multiple of %d-byte sectors", path,
			 (unsigned long long)*size, BLOCK_SECTOR_SIZE);
		return false;
	}
	return true;
}

static bool has_qcow2_magic(const uint8_t *p)
{
	return p[0] == 'Q' && p[1] == 'F' && p[2] == 'I' && p[3] == 0xfb;
}

/* The lock, the format (given, or probed as QEMU does) and the disk
 * size. Owns fd: closed on failure. */
static int block_open_format(struct block_dev *b, int fd, const struct block_opts *o,
			     bool write_image, uint64_t *size, char *err, size_t errlen)
{
	enum block_format fmt = o->format;
	uint8_t head[4] = {0};
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "disk image '%s' is a directory", o->path);
		goto fail;
	}
	if (!o->no_lock && !o->inactive &&
	    block_lock_for(fd, o->path, write_image, err, errlen) < 0)
		goto fail;
	if (fmt == BLOCK_FORMAT_AUTO) {
		int r = qcow2_pread(fd, 0, head, sizeof(head)); /* O_DIRECT-safe */

		if (r < 0) {
			snprintf(err, errlen, "cannot read '%s': %s", o->path, strerror(-r));
			goto fail;
		}
		fmt = has_qcow2_magic(head) ? BLOCK_FORMAT_QCOW2 : BLOCK_FORMAT_RAW;
		b->probed_raw = fmt == BLOCK_FORMAT_RAW;
		if (b->probed_raw && write_image)
			fprintf(stderr, "vmm: warning: image format was not specified for '%s' and "
					"probing guessed raw; writes to sector 0 are restricted (give "
					"format=raw to lift the restriction)\n", o->path);
	}
	if (fmt == BLOCK_FORMAT_RAW) {
		if (!check_image(fd, o->path, size, err, errlen))
			goto fail;
		b->fd = fd;
		return 0;
	}
	struct qcow2_open_opts qo = {.read_only = !write_image || o->inactive,
				     .lock = !o->no_lock && !o->inactive,
				     .direct = is_direct(o->cache)};

	b->qcow2 = qcow2_open(fd, o->path, &qo, err, errlen);
	if (!b->qcow2)
		return -1;
	b->fd = fd;
	*size = qcow2_size(b->qcow2);
	return 0;
fail:
	close(fd);
	return -1;
}

struct block_dev *block_open(const struct block_opts *o, char *err, size_t errlen)
{
	bool write_image = !o->read_only && !o->snapshot;
	int flags = (write_image ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	struct block_dev *b;
	uint64_t size;
	int fd;

	if (write_image && (o->cache == BLOCK_CACHE_WRITETHROUGH ||
			    o->cache == BLOCK_CACHE_DIRECTSYNC))
		flags |= O_DSYNC;
	if (is_direct(o->cache))
		flags |= O_DIRECT;
	fd = open(o->path, flags);
	if (fd < 0 && errno == EINVAL && is_direct(o->cache)) {
		snprintf(err, errlen, "cache=%s: the file system of '%s' does not support O_DIRECT",
			 block_cache_name(o->cache), o->path);
		return NULL;
	}
	if (fd < 0 && errno == EISDIR) {
		snprintf(err, errlen, "disk image '%s' is a directory", o->path);
		return NULL;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot open disk image '%s'%s: %s", o->path,
			 write_image ? " for writing" : "", strerror(errno));
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(o->path))) {
		free(b);
		close(fd);
		snprintf(err, errlen, "out of memory opening '%s'", o->path);
		return NULL;
	}
	if (block_open_format(b, fd, o, write_image, &size, err, errlen) < 0) {
		free(b->path);
		free(b);
		return NULL;
	}
	b->overlay_fd = -1;
	b->write_image = write_image;
	b->no_lock = o->no_lock;
	b->inactive = o->inactive;
	b->sectors = size / BLOCK_SECTOR_SIZE;
	b->read_only = o->read_only;
	b->cache = o->cache;
	pthread_mutex_init(&b->lock, NULL);
	if (o->snapshot && !o->read_only) {
		b->overlay_fd = open_overlay(size);
		b->dirty = calloc((b->sectors + 63) / 64, sizeof(uint64_t));
		if (b->overlay_fd < 0 || !b->dirty) {
			snprintf(err, errlen, "cannot create the -snapshot overlay for '%s': %s",
				 o->path, strerror(b->overlay_fd < 0 ? -b->overlay_fd : ENOMEM));
			block_close(b);
			return NULL;
		}
	}
	return b;
}

void block_close(struct block_dev *b)
{
	if (!b)
		return;
	if (b->qcow2)
		qcow2_close(b->qcow2); /* closes b->fd */
	else
		close(b->fd);
	if (b->overlay_fd >= 0)
		close(b->overlay_fd);
	pthread_mutex_destroy(&b->lock);
	free(b->dirty);
	free(b->path);
	free(b);
}

/* qcow2's view of the image afresh, on a new descriptor of the same open
 * file (its locks stay): for writing or only reading. Closing the old
 * view writes out its metadata and clears the dirty bit. */
static int reopen_qcow2(struct block_dev *b, bool write, bool lock, char *err, size_t errlen)
{
	struct qcow2_open_opts qo = {
		.read_only = !write, .lock = lock, .direct = is_direct(b->cache)};
	int fd = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
	struct qcow2 *q;

	if (fd < 0) {
		snprintf(err, errlen, "'%s': %s", b->path, strerror(errno));
		return -1;
	}
	if (!write) { /* the old view first: what it writes, the new one reads */
		qcow2_close(b->qcow2);
		b->qcow2 = NULL;
	}
	q = qcow2_open(fd, b->path, &qo, err, errlen);
	if (q && qcow2_size(q) != b->sectors * BLOCK_SECTOR_SIZE) {
		snprintf(err, errlen, "'%s' changed its size in the migration", b->path);
		qcow2_close(q);
		q = NULL;
	}
	if (!q)
		return -1; /* qcow2_open closed fd */
	qcow2_close(b->qcow2);
	b->qcow2 = q;
	b->fd = fd;
	return 0;
}

int block_inactivate(struct block_dev *b, char *err, size_t errlen)
{
	int r;

	if (b->inactive || !b->write_image)
		return 0; /* a reader's shared locks keep no other reader out */
	if ((r = block_flush(b)) < 0) {
		snprintf(err, errlen, "'%s': flush: %s", b->path, strerror(-r));
		return -1;
	}
	if (b->qcow2 && reopen_qcow2(b, false, false, err, errlen) < 0)
		return -1;
	if (!b->no_lock)
		block_unlock(b->fd);
	__atomic_store_n(&b->inactive, true, __ATOMIC_RELEASE);
	return 0;
}

int block_activate(struct block_dev *b, char *err, size_t errlen)
{
	if (!b->inactive)
		return 0;
	if (!b->no_lock && block_lock_for(b->fd, b->path, b->write_image, err, errlen) < 0)
		return -1;
	if (b->qcow2 && reopen_qcow2(b, b->write_image, !b->no_lock, err, errlen) < 0) {
		if (!b->no_lock)
			block_unlock(b->fd);
		return -1;
	}
	__atomic_store_n(&b->inactive, false, __ATOMIC_RELEASE);
	return 0;
}

uint64_t block_sectors(const struct block_dev *b)
{
	return b->sectors;
}

bool block_read_only(const struct block_dev *b)
{
	return b->read_only;
}

const char *block_path(const struct block_dev *b)
{
	return b->path;
}

const char *block_format_name(const struct block_dev *b)
{
	return b->qcow2 ? "qcow2" : "raw";
}

const char *block_backing_file(const struct block_dev *b)
{
	return b->qcow2 ? qcow2_backing_file(b->qcow2) : NULL;
}

unsigned block_backing_depth(const struct block_dev *b)
{
	return b->qcow2 ? qcow2_backing_depth(b->qcow2) : 0;
}

static bool in_range(const struct block_dev *b, uint64_t sector, uint64_t count)
{
	return sector <= b->sectors && count <= b->sectors - sector;
}

/* Full pread/pwrite of len bytes at off; 0 or -errno (-EIO on EOF). */
static int xfer(int fd, bool write, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The image's bytes, through its format. */
static int image_xfer(struct block_dev *b, bool write, uint64_t off, void *buf, size_t len)
{
	if (b->qcow2)
		return write ? qcow2_write(b->qcow2, off, buf, len) : qcow2_read(b->qcow2, off, buf, len);
	return xfer(b->fd, write, off, buf, len);
}

/* As QEMU: a guest may not make a probed raw image look like another
 * format, or the next start would open it as that (its backing file
 * could name any file on the host). */
static bool forbidden_first_sector(const struct block_dev *b, uint64_t sector, const void *buf)
{
	return b->probed_raw && sector == 0 && has_qcow2_magic(buf);
}

static bool is_dirty(const struct block_dev *b, uint64_t s)
{
	return b->dirty[s / 64] >> (s % 64) & 1;
}

static int read_sectors(struct block_dev *b, uint64_t sector, void *buf, uint32_t count)
{
	uint8_t *p = buf;
	int ret = 0;

	if (!in_range(b, sector, count))
		return -ERANGE;
	if (b->overlay_fd < 0)
		return image_xfer(b, false, sector * BLOCK_SECTOR_SIZE, buf,
				  (size_t)count * BLOCK_SECTOR_SIZE);
	/* snapshot: read runs of sectors from the overlay or the image */
	pthread_mutex_lock(&b->lock);
	for (uint32_t i = 0; i < count && !ret;) {
		bool d = is_dirty(b, sector + i);
		uint32_t n = 1;

		while (i + n < count && is_dirty(b, sector + i + n) == d)
			n++;
		if (d)
			ret = xfer(b->overlay_fd, false, (sector + i) * BLOCK_SECTOR_SIZE,
				   p + (size_t)i * BLOCK_SECTOR_SIZE, (size_t)n * BLOCK_SECTOR_SIZE);
		else
			ret = image_xfer(b, false, (sector + i) * BLOCK_SECTOR_SIZE,
					 p + (size_t)i * BLOCK_SECTOR_SIZE, (size_t)n * BLOCK_SECTOR_SIZE);
		i += n;
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}

static int write_sectors(struct block_dev *b, uint64_t sector, const void *buf, uint32_t count)
{
	int ret;

	if (refuses_writes(b))
		return -EROFS;
	if (!in_range(b, sector, count))
		return -ERANGE;
	if (count && forbidden_first_sector(b, sector, buf))
		return -EPERM;
	if (b->overlay_fd < 0)
		return image_xfer(b, true, sector * BLOCK_SECTOR_SIZE, (void *)buf,
				  (size_t)count * BLOCK_SECTOR_SIZE);
	pthread_mutex_lock(&b->lock);
	ret = xfer(b->overlay_fd, true, sector * BLOCK_SECTOR_SIZE, (void *)buf,
		   (size_t)count * BLOCK_SECTOR_SIZE);
	for (uint32_t i = 0; i < count && !ret; i++)
		b->dirty[(sector + i) / 64] |= 1ull << ((sector + i) % 64);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/* O_DIRECT refuses buffers off the sector alignment: copy through one
 * that is. */
static int direct_bounce(struct block_dev *b, bool write, uint64_t sector, void *buf,
			 uint32_t count)
{
	size_t len = (size_t)count * BLOCK_SECTOR_SIZE;
	uint8_t *tmp = aligned_alloc(DIRECT_ALIGN, (len + DIRECT_ALIGN - 1) & ~(size_t)(DIRECT_ALIGN - 1));
	int r;

	if (!tmp)
		return -ENOMEM;
	if (write)
		memcpy(tmp, buf, len);
	r = write ? write_sectors(b, sector, tmp, count) : read_sectors(b, sector, tmp, count);
	if (!r && !write)
		memcpy(buf, tmp, len);
	free(tmp);
	return r;
}

static int rw_sectors(struct block_dev *b, bool write, uint64_t sector, void *buf, uint32_t count)
{
	int r;

	if (write) {
		atomic_fetch_add_explicit(&b->wr_ops, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&b->wr_bytes, (uint64_t)count * BLOCK_SECTOR_SIZE,
					  memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(&b->rd_ops, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&b->rd_bytes, (uint64_t)count * BLOCK_SECTOR_SIZE,
					  memory_order_relaxed);
	}
	if (is_direct(b->cache) && ((uintptr_t)buf & (BLOCK_SECTOR_SIZE - 1)))
		r = direct_bounce(b, write, sector, buf, count);
	else
		r = write ? write_sectors(b, sector, buf, count) : read_sectors(b, sector, buf, count);
	if (r)
		atomic_fetch_add_explicit(&b->failed_ops, 1, memory_order_relaxed);
	return r;
}

int block_read(struct block_dev *b, uint64_t sector, void *buf, uint32_t count)
{
	return rw_sectors(b, false, sector, buf, count);
}

int block_write(struct block_dev *b, uint64_t sector, const void *buf, uint32_t count)
{
	return rw_sectors(b, true, sector, (void *)buf, count);
}

int block_flush(struct block_dev *b)
{
	atomic_fetch_add_explicit(&b->flush_ops, 1, memory_order_relaxed);
	/* a snapshot's overlay dies with the process: nothing to make durable */
	if (b->read_only || b->overlay_fd >= 0)
		return 0;
	if (b->qcow2) /* its metadata must reach the file, even with unsafe */
		return qcow2_flush(b->qcow2);
	if (b->cache == BLOCK_CACHE_UNSAFE)
		return 0;
	return fdatasync(b->fd) < 0 ? -errno : 0;
}

/* ------------------------------------------------ vectored, virtio-blk */

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

/* Full preadv/pwritev of iov at off: 0 or -errno (-EIO on EOF). */
static int xferv(int fd, bool write, uint64_t off, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t r = write ? pwritev(fd, iov, n, (off_t)off) : preadv(fd, iov, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		off += (uint64_t)r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static void iov_to_buf(const struct iovec *iov, int n, uint8_t *buf)
{
	for (int i = 0; i < n; buf += iov[i].iov_len, i++)
		memcpy(buf, iov[i].iov_base, iov[i].iov_len);
}

static void buf_to_iov(const uint8_t *buf, const struct iovec *iov, int n)
{
	for (int i = 0; i < n; buf += iov[i].iov_len, i++)
		memcpy(iov[i].iov_base, buf, iov[i].iov_len);
}

/* Through an aligned copy: snapshot overlays, and O_DIRECT with buffers
 * it refuses. */
static int bounce(struct block_dev *b, bool write, uint64_t sector, struct iovec *iov, int n,
		  size_t len)
{
	uint8_t *buf = aligned_alloc(DIRECT_ALIGN, (len + DIRECT_ALIGN - 1) & ~(size_t)(DIRECT_ALIGN - 1));
	int r;

	if (!buf)
		return -ENOMEM;
	if (write)
		iov_to_buf(iov, n, buf);
	r = write ? write_sectors(b, sector, buf, (uint32_t)(len / BLOCK_SECTOR_SIZE))
		  : read_sectors(b, sector, buf, (uint32_t)(len / BLOCK_SECTOR_SIZE));
	if (!r && !write)
		buf_to_iov(buf, iov, n);
	free(buf);
	return r;
}

static bool iov_aligned(const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & (BLOCK_SECTOR_SIZE - 1))
			return false;
	return true;
}

static int rwv(struct block_dev *b, bool write, uint64_t sector, struct iovec *iov, int n)
{
	size_t len = iov_bytes(iov, n);
	uint64_t count = len / BLOCK_SECTOR_SIZE;
	int r;

	if (write && refuses_writes(b))
		r = -EROFS;
	else if (len % BLOCK_SECTOR_SIZE || count > UINT32_MAX || !in_range(b, sector, count))
		r = -ERANGE;
	else if (b->qcow2 && b->overlay_fd < 0) /* straight from/into the buffers */
		r = write ? qcow2_writev(b->qcow2, sector * BLOCK_SECTOR_SIZE, iov, n)
			  : qcow2_readv(b->qcow2, sector * BLOCK_SECTOR_SIZE, iov, n);
	else if (b->overlay_fd >= 0 || (write && b->probed_raw && sector == 0) ||
		 (is_direct(b->cache) && !iov_aligned(iov, n)))
		r = bounce(b, write, sector, iov, n, len);
	else
		r = xferv(b->fd, write, sector * BLOCK_SECTOR_SIZE, iov, n);
	if (r)
		atomic_fetch_add_explicit(&b->failed_ops, 1, memory_order_relaxed);
	return r;
}

int block_readv(struct block_dev *b, uint64_t sector, struct iovec *iov, int iovcnt)
{
	atomic_fetch_add_explicit(&b->rd_ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->rd_bytes, iov_bytes(iov, iovcnt), memory_order_relaxed);
	return rwv(b, false, sector, iov, iovcnt);
}

int block_writev(struct block_dev *b, uint64_t sector, struct iovec *iov, int iovcnt)
{
	atomic_fetch_add_explicit(&b->wr_ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->wr_bytes, iov_bytes(iov, iovcnt), memory_order_relaxed);
	return rwv(b, true, sector, iov, iovcnt);
}

/* Zeroes written out, where the file system cannot punch or zero. */
static int write_zero_sectors(struct block_dev *b, uint64_t sector, uint64_t count)
{
	static const uint8_t zero[64 * BLOCK_SECTOR_SIZE] __attribute__((aligned(DIRECT_ALIGN)));
	int r = 0;

	while (count && !r) {
		uint32_t n = count < 64 ? (uint32_t)count : 64;

		r = write_sectors(b, sector, zero, n);
		sector += n;
		count -= n;
	}
	return r;
}

int block_discard(struct block_dev *b, uint64_t sector, uint64_t count)
{
	atomic_fetch_add_explicit(&b->discard_ops, 1, memory_order_relaxed);
	if (refuses_writes(b))
		return -EROFS;
	if (!in_range(b, sector, count))
		return -ERANGE;
	/* a hint: the snapshot overlay keeps what it has */
	if (b->overlay_fd >= 0 || !count)
		return 0;
	if (b->qcow2)
		return qcow2_discard(b->qcow2, sector * BLOCK_SECTOR_SIZE, count * BLOCK_SECTOR_SIZE,
				     false);
	if (fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)(sector * BLOCK_SECTOR_SIZE), (off_t)(count * BLOCK_SECTOR_SIZE)) < 0 &&
	    errno != EOPNOTSUPP)
		return -errno;
	return 0;
}

int block_write_zeroes(struct block_dev *b, uint64_t sector, uint64_t count, bool unmap)
{
	off_t off = (off_t)(sector * BLOCK_SECTOR_SIZE), len = (off_t)(count * BLOCK_SECTOR_SIZE);

	atomic_fetch_add_explicit(&b->wr_ops, 1, memory_order_relaxed);
	if (refuses_writes(b))
		return -EROFS;
	if (!in_range(b, sector, count))
		return -ERANGE;
	if (!count)
		return 0;
	if (b->overlay_fd < 0 && b->qcow2)
		return qcow2_discard(b->qcow2, (uint64_t)off, (uint64_t)len, true);
	if (b->overlay_fd < 0) {
		if (unmap && fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
			return 0;
		if (fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len) == 0)
			return 0;
	}
	return write_zero_sectors(b, sector, count);
}

enum block_cache block_cache_mode(const struct block_dev *b)
{
	return b->cache;
}

const char *block_cache_name(enum block_cache c)
{
	static const char *const names[] = {"writeback", "writethrough", "unsafe", "none",
					    "directsync"};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

void block_get_stats(struct block_dev *b, struct block_stats *s)
{
	s->rd_bytes = atomic_load(&b->rd_bytes);
	s->wr_bytes = atomic_load(&b->wr_bytes);
	s->rd_ops = atomic_load(&b->rd_ops);
	s->wr_ops = atomic_load(&b->wr_ops);
	s->flush_ops = atomic_load(&b->flush_ops);
	s->discard_ops = atomic_load(&b->discard_ops);
	s->failed_ops = atomic_load(&b->failed_ops);
}

/* ------------------------------------ for an asynchronous engine (aio) */

int block_direct_target(struct block_dev *b, bool write, uint64_t sector, const struct iovec *iov,
			int iovcnt, struct block_target *t)
{
	size_t len = iov_bytes(iov, iovcnt);

	t->cow = (struct block_cow){0};
	/* before any refusal: served at once, it would race the allocation */
	if (write && b->qcow2 && qcow2_direct_busy(b->qcow2, sector * BLOCK_SECTOR_SIZE, len))
		return -EAGAIN;
	if ((write && refuses_writes(b)) || len % BLOCK_SECTOR_SIZE ||
	    !in_range(b, sector, len / BLOCK_SECTOR_SIZE) || b->overlay_fd >= 0 ||
	    (write && b->probed_raw && sector == 0) ||
	    (is_direct(b->cache) && !iov_aligned(iov, iovcnt)))
		return -1;
	t->fd[0] = b->fd;
	t->z[0] = (struct block_zrun){0};
	t->zero_past_eof = b->qcow2 != NULL; /* as through qcow2_readv */
	t->alloc = false;
	t->guest_off = sector * BLOCK_SECTOR_SIZE;
	t->runs = 1;
	t->off[0] = t->guest_off;
	t->len[0] = len;
	if (b->qcow2)
		t->runs = qcow2_direct_map(b->qcow2, write, t->guest_off, len, t->off, t->len,
					   t->fd, t->z, BLOCK_TARGET_RUNS, &t->alloc, &t->cow);
	return t->runs > 0 ? 0 : t->runs == -EAGAIN ? -EAGAIN : -1;
}

int block_direct_done(struct block_dev *b, const struct block_target *t, int res)
{
	if (!b->qcow2)
		return res;
	if (!t || !t->alloc)
		return qcow2_direct_done(b->qcow2, false, 0, NULL, NULL, 0, res);
	return qcow2_direct_done(b->qcow2, true, t->guest_off, t->off, t->len, t->runs, res);
}

int block_flush_fd_done(struct block_dev *b, int res)
{
	/* requests allocating in flight at the flush named their clusters
	 * since: their metadata too, before the flush completes */
	if (!res && b->qcow2)
		res = qcow2_flush_dirty(b->qcow2);
	return res;
}

void block_account(struct block_dev *b, bool write, uint64_t bytes)
{
	atomic_fetch_add_explicit(write ? &b->wr_ops : &b->rd_ops, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(write ? &b->wr_bytes : &b->rd_bytes, bytes,
				  memory_order_relaxed);
}

void block_account_failed(struct block_dev *b)
{
	atomic_fetch_add_explicit(&b->failed_ops, 1, memory_order_relaxed);
}

int block_flush_fd(struct block_dev *b)
{
	atomic_fetch_add_explicit(&b->flush_ops, 1, memory_order_relaxed);
	if (b->read_only || b->overlay_fd >= 0)
		return -1;
	if (b->qcow2) {
		/* its metadata here, in order; then, behind the data writes
		 * still at the engine, an fdatasync for them */
		int r = qcow2_flush(b->qcow2);

		if (r)
			return r == -1 ? -EIO : r;
		if (b->cache == BLOCK_CACHE_UNSAFE || !qcow2_direct_in_flight(b->qcow2))
			return -1;
		return b->fd;
	}
	if (b->cache == BLOCK_CACHE_UNSAFE)
		return -1;
	return b->fd;
}
