/* block.c — raw disk images for IDE and virtio-blk.
 *
 * Sector I/O with pread/pwrite. With snapshot, the image is opened
 * read-only and every written sector goes to an unlinked temporary file of
 * the same size, tracked by a bitmap; reads take each sector from wherever
 * its newest copy is. The image is never written, so it stays
 * byte-identical. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/devices.h"

struct block_dev {
	char *path;
	int fd;
	int overlay_fd;	  /* -1 unless snapshot */
	uint64_t *dirty;  /* snapshot: bit per sector present in the overlay */
	uint64_t sectors;
	bool read_only;
	enum block_cache cache;
	pthread_mutex_t lock; /* guards the bitmap */
};

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

struct block_dev *block_open(const struct block_opts *o, char *err, size_t errlen)
{
	bool write_image = !o->read_only && !o->snapshot;
	int flags = (write_image ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	struct block_dev *b;
	uint64_t size;
	int fd;

	if (write_image && o->cache == BLOCK_CACHE_WRITETHROUGH)
		flags |= O_DSYNC;
	fd = open(o->path, flags);
	if (fd < 0 && errno == EISDIR) {
		snprintf(err, errlen, "disk image '%s' is a directory", o->path);
		return NULL;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot open disk image '%s'%s: %s", o->path,
			 write_image ? " for writing" : "", strerror(errno));
		return NULL;
	}
	if (!check_image(fd, o->path, &size, err, errlen)) {
		close(fd);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(o->path))) {
		free(b);
		close(fd);
		snprintf(err, errlen, "out of memory opening '%s'", o->path);
		return NULL;
	}
	b->fd = fd;
	b->overlay_fd = -1;
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
	close(b->fd);
	if (b->overlay_fd >= 0)
		close(b->overlay_fd);
	pthread_mutex_destroy(&b->lock);
	free(b->dirty);
	free(b->path);
	free(b);
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

static bool in_range(const struct block_dev *b, uint64_t sector, uint32_t count)
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

static bool is_dirty(const struct block_dev *b, uint64_t s)
{
	return b->dirty[s / 64] >> (s % 64) & 1;
}

int block_read(struct block_dev *b, uint64_t sector, void *buf, uint32_t count)
{
	uint8_t *p = buf;
	int ret = 0;

	if (!in_range(b, sector, count))
		return -ERANGE;
	if (b->overlay_fd < 0)
		return xfer(b->fd, false, sector * BLOCK_SECTOR_SIZE, buf,
			    (size_t)count * BLOCK_SECTOR_SIZE);
	/* snapshot: read runs of sectors from the overlay or the image */
	pthread_mutex_lock(&b->lock);
	for (uint32_t i = 0; i < count && !ret;) {
		bool d = is_dirty(b, sector + i);
		uint32_t n = 1;

		while (i + n < count && is_dirty(b, sector + i + n) == d)
			n++;
		ret = xfer(d ? b->overlay_fd : b->fd, false, (sector + i) * BLOCK_SECTOR_SIZE,
			   p + (size_t)i * BLOCK_SECTOR_SIZE, (size_t)n * BLOCK_SECTOR_SIZE);
		i += n;
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int block_write(struct block_dev *b, uint64_t sector, const void *buf, uint32_t count)
{
	int ret;

	if (b->read_only)
		return -EROFS;
	if (!in_range(b, sector, count))
		return -ERANGE;
	if (b->overlay_fd < 0)
		return xfer(b->fd, true, sector * BLOCK_SECTOR_SIZE, (void *)buf,
			    (size_t)count * BLOCK_SECTOR_SIZE);
	pthread_mutex_lock(&b->lock);
	ret = xfer(b->overlay_fd, true, sector * BLOCK_SECTOR_SIZE, (void *)buf,
		   (size_t)count * BLOCK_SECTOR_SIZE);
	for (uint32_t i = 0; i < count && !ret; i++)
		b->dirty[(sector + i) / 64] |= 1ull << ((sector + i) % 64);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int block_flush(struct block_dev *b)
{
	/* a snapshot's overlay dies with the process: nothing to make durable */
	if (b->read_only || b->overlay_fd >= 0 || b->cache == BLOCK_CACHE_UNSAFE)
		return 0;
	return fdatasync(b->fd) < 0 ? -errno : 0;
}
