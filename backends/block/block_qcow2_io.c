/* block_qcow2_io.c — the qcow2 layer's file I/O: whole reads and writes
 * that retry short transfers, O_DIRECT's alignment met through an
 * aligned copy where a caller's buffer or offset does not have it, and
 * iovec runs (guest memory) moved with one preadv/pwritev. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/block/block_qcow2.h"

/* O_DIRECT: buffers, offsets and lengths in multiples of this */
#define DIRECT_ALIGN 4096ull

static bool misaligned(const void *buf, uint64_t off, size_t len)
{
	return ((uintptr_t)buf | off | len) & (DIRECT_ALIGN - 1);
}

static int plain_pread(int fd, uint64_t off, uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) { /* past the end of the file: zeroes, as QEMU */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int plain_pwrite(int fd, uint64_t off, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* O_DIRECT (cache=none) refuses buffers, offsets and lengths off the
 * block alignment, which the header, the L1 and refcount tables and
 * small buffers are: those go through an aligned copy of the blocks
 * around them (read, patched, written back for a write). */
static int aligned_rw(int fd, bool write, uint64_t off, void *buf, size_t len)
{
	uint64_t start = off & ~(DIRECT_ALIGN - 1);
	size_t span = (size_t)(((off + len + DIRECT_ALIGN - 1) & ~(DIRECT_ALIGN - 1)) - start);
	uint8_t *tmp = aligned_alloc(DIRECT_ALIGN, span);
	int r;

	if (!tmp)
		return -ENOMEM;
	r = plain_pread(fd, start, tmp, span);
	if (!r && write) {
		memcpy(tmp + (off - start), buf, len);
		r = plain_pwrite(fd, start, tmp, span);
	} else if (!r) {
		memcpy(buf, tmp + (off - start), len);
	}
	free(tmp);
	return r;
}

int qcow2_pread(int fd, uint64_t off, void *buf, size_t len)
{
	int r = plain_pread(fd, off, buf, len);

	if (r == -EINVAL && misaligned(buf, off, len))
		r = aligned_rw(fd, false, off, buf, len);
	return r;
}

int qcow2_pwrite(int fd, uint64_t off, const void *buf, size_t len)
{
	int r = plain_pwrite(fd, off, buf, len);

	if (r == -EINVAL && misaligned(buf, off, len))
		r = aligned_rw(fd, true, off, (void *)buf, len);
	return r;
}

void *qcow2_alloc_block(size_t len)
{
	void *p = NULL;

	return posix_memalign(&p, DIRECT_ALIGN, len) ? NULL : p;
}

size_t qcow2_iov_take(struct qcow2_iov *c, size_t len, struct iovec *out, int *nout)
{
	size_t got = 0;
	int k = 0;

	while (got < len && c->n > 0) {
		size_t avail = c->iov->iov_len - c->skip, take = avail < len - got ? avail : len - got;

		out[k++] = (struct iovec){(uint8_t *)c->iov->iov_base + c->skip, take};
		got += take;
		c->skip += take;
		if (c->skip == c->iov->iov_len) {
			c->iov++;
			c->n--;
			c->skip = 0;
		}
	}
	*nout = k;
	return got;
}

void qcow2_iov_copy(struct qcow2_iov *c, void *buf, size_t len, bool to_iov)
{
	uint8_t *p = buf;

	while (len && c->n > 0) {
		uint8_t *at = (uint8_t *)c->iov->iov_base + c->skip;
		size_t avail = c->iov->iov_len - c->skip, take = avail < len ? avail : len;

		if (to_iov)
			memcpy(at, p, take);
		else
			memcpy(p, at, take);
		p += take;
		len -= take;
		c->skip += take;
		if (c->skip == c->iov->iov_len) {
			c->iov++;
			c->n--;
			c->skip = 0;
		}
	}
}

/* All of iov at off; on O_DIRECT refusing its alignment, through an
 * aligned copy. */
int qcow2_rwv(int fd, bool write, uint64_t off, const struct iovec *iov, int n)
{
	struct iovec local[64], *v = n <= 64 ? local : malloc((size_t)n * sizeof(*v));
	struct iovec *cur = v;
	const int count = n;
	uint64_t start = off;
	size_t total = 0;
	int r = 0;

	if (!v)
		return -ENOMEM;
	memcpy(v, iov, (size_t)n * sizeof(*v));
	for (int i = 0; i < n; i++)
		total += v[i].iov_len;
	while (n > 0 && !r) {
		ssize_t got = write ? pwritev(fd, cur, n, (off_t)off) : preadv(fd, cur, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			r = -errno;
		else if (got == 0 && write)
			r = -EIO;
		else if (got == 0) { /* past the end of the file: zeroes */
			for (int i = 0; i < n; i++)
				memset(cur[i].iov_base, 0, cur[i].iov_len);
			break;
		}
		off += got > 0 ? (uint64_t)got : 0;
		while (got > 0 && n > 0 && (size_t)got >= cur->iov_len) {
			got -= (ssize_t)cur->iov_len;
			cur++;
			n--;
		}
		if (got > 0) {
			cur->iov_base = (uint8_t *)cur->iov_base + got;
			cur->iov_len -= (size_t)got;
		}
	}
	if (r == -EINVAL) { /* O_DIRECT and a buffer off its alignment */
		uint8_t *tmp = qcow2_alloc_block(total ? total : 1);
		struct qcow2_iov c = {iov, count, 0};

		r = tmp ? 0 : -ENOMEM;
		if (!r && write) {
			qcow2_iov_copy(&c, tmp, total, false);
			r = qcow2_pwrite(fd, start, tmp, total);
		} else if (!r) {
			r = qcow2_pread(fd, start, tmp, total);
			if (!r)
				qcow2_iov_copy(&c, tmp, total, true);
		}
		free(tmp);
	}
	if (v != local)
		free(v);
	return r;
}
