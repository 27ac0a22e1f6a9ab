/* seabios.c — find, check and map the BIOS image (Debian's SeaBIOS by
 * default). The image sits read-only just below 4 GiB, where the reset
 * vector (0xfffffff0) is, and its last 128 KiB also appear at
 * 0xe0000-0xfffff, where real-mode code expects the BIOS. Because the
 * guest can never write the ROM slot, the image stays pristine for a
 * system_reset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/config.h"
#include "devices/pci/i440fx.h"
#include "firmware/firmware.h"

#define BIOS_GRANULE 0x10000u
#define BIOS_MAX (16u << 20)
#define ISA_BIOS_MAX 0x20000u

static int read_all(int fd, uint8_t *dst, size_t len)
{
	while (len) {
		ssize_t n = read(fd, dst, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		dst += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fail(char *err, size_t errlen, int ret, const char *fmt, const char *path,
		const char *why)
{
	snprintf(err, errlen, fmt, path, why);
	return ret;
}

int bios_load(const char *path, struct bios_image *img, char *err, size_t errlen)
{
	struct stat st = {0};
	uint8_t *mem;
	int fd, ret;

	if (!path)
		path = SEABIOS_DEFAULT_PATH;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno,
			    "cannot open BIOS '%s': %s (install Debian's seabios package or pass "
			    "-bios FILE)",
			    path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "BIOS '%s' is %s", path,
			    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	}
	if (st.st_size == 0 || st.st_size % BIOS_GRANULE || st.st_size > BIOS_MAX) {
		char why[96];

		snprintf(why, sizeof(why), "%lld bytes; a BIOS must be a multiple of 64 KiB, at most 16 MiB",
			 (long long)st.st_size);
		close(fd);
		return fail(err, errlen, -EINVAL, "BIOS '%s' is %s", path, why);
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED) {
		close(fd);
		return fail(err, errlen, -ENOMEM, "cannot allocate memory for BIOS '%s'%s", path, "");
	}
	ret = read_all(fd, mem, (size_t)st.st_size);
	close(fd);
	if (ret) {
		munmap(mem, (size_t)st.st_size);
		return fail(err, errlen, ret, "cannot read BIOS '%s': %s", path, strerror(-ret));
	}
	img->data = mem;
	img->size = (size_t)st.st_size;
	return 0;
}

void bios_free(struct bios_image *img)
{
	if (img->data)
		munmap(img->data, img->size);
	img->data = NULL;
	img->size = 0;
}

int bios_map(const struct bios_image *img, const struct pc_mem_map *map, struct i440fx *nb,
	     char *err, size_t errlen)
{
	size_t alias = img->size < ISA_BIOS_MAX ? img->size : ISA_BIOS_MAX;
	uint8_t *alias_hva = img->data + img->size - alias;
	int ret;

	ret = map->map(map->opaque, 0x100000000ull - img->size, img->size, img->data, true);
	if (ret) {
		snprintf(err, errlen, "cannot map the BIOS below 4 GiB: %s", strerror(-ret));
		return ret;
	}
	if (nb)
		ret = i440fx_set_bios_alias(nb, alias_hva, alias);
	else
		ret = map->map(map->opaque, 0x100000 - alias, alias, alias_hva, true);
	if (ret)
		snprintf(err, errlen, "cannot map the BIOS below 1 MiB: %s", strerror(-ret));
	return ret;
}
