/* block_lock.c — image locking that QEMU understands.
 *
 * QEMU's file-posix takes open-file-description locks on single bytes:
 * a shared lock on byte 100 + n for each permission n it holds, and on
 * byte 200 + n for each permission it does not let others have. Taking
 * the same locks means vmm and QEMU (and qemu-img) see each other: a
 * second writer is refused, and so is a reader that would not share
 * writing with the writer already there. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "backends/block/block_qcow2.h"

#define PERM_BASE 100
#define SHARED_BASE 200

static const char *const perm_names[] = {"consistent read", "write", "write unchanged",
					 "resize"};

static int lock_byte(int fd, int cmd, short type, off_t byte, short *held)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};

	if (fcntl(fd, cmd, &fl) < 0)
		return -errno;
	if (held)
		*held = fl.l_type;
	return 0;
}

/* Would an exclusive lock on byte conflict with someone else's? */
static bool taken(int fd, off_t byte)
{
	short type = F_UNLCK;

	if (lock_byte(fd, F_OFD_GETLK, F_WRLCK, byte, &type) < 0)
		return false;
	return type != F_UNLCK;
}

int block_lock_image(int fd, const char *path, unsigned perm, unsigned shared, char *err,
		     size_t errlen)
{
	for (unsigned n = 0; n < 4; n++) {
		unsigned bit = 1u << n;
		int r;

		/* as QEMU: the conflict is named after the other side's lock */
		if ((perm & bit) && taken(fd, SHARED_BASE + n)) {
			snprintf(err, errlen,
				 "Failed to get \"%s\" lock: is another process using the image "
				 "[%s]?", perm_names[n], path);
			return -1;
		}
		if (!(shared & bit) && taken(fd, PERM_BASE + n)) {
			snprintf(err, errlen,
				 "Failed to get shared \"%s\" lock: is another process using the "
				 "image [%s]?", perm_names[n], path);
			return -1;
		}
		r = 0;
		if (perm & bit)
			r = lock_byte(fd, F_OFD_SETLK, F_RDLCK, PERM_BASE + n, NULL);
		if (!r && !(shared & bit))
			r = lock_byte(fd, F_OFD_SETLK, F_RDLCK, SHARED_BASE + n, NULL);
		if (r == -EAGAIN || r == -EACCES) {
			snprintf(err, errlen, "Failed to lock byte %u: is another process using the "
				 "image [%s]?", (perm & bit ? PERM_BASE : SHARED_BASE) + n, path);
			return -1;
		}
		/* a file system without locks: go on unlocked, as QEMU does */
		if (r)
			return 0;
	}
	return 0;
}

int block_lock_for(int fd, const char *path, bool write, char *err, size_t errlen)
{
	/* what QEMU holds for a -drive: a writer may also resize */
	unsigned perm = BLOCK_PERM_CONSISTENT_READ |
			(write ? BLOCK_PERM_WRITE | BLOCK_PERM_RESIZE : 0);

	return block_lock_image(fd, path, perm,
				BLOCK_PERM_CONSISTENT_READ | BLOCK_PERM_WRITE_UNCHANGED, err,
				errlen);
}

void block_unlock(int fd)
{
	for (unsigned n = 0; n < 4; n++) {
		lock_byte(fd, F_OFD_SETLK, F_UNLCK, PERM_BASE + n, NULL);
		lock_byte(fd, F_OFD_SETLK, F_UNLCK, SHARED_BASE + n, NULL);
	}
}
