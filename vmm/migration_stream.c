/* migration_stream.c — the migration stream's framing: header, tree, RAM
 * with zero pages as bitmap bits, trailer (format in migration.h). Plain
 * libc on a file descriptor, so tests and the fuzz target use it alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/migration.h"

#define HEADER_SIZE 32
#define REGION_HEADER_SIZE 16
#define TRAILER_SIZE 16

static const uint8_t zero_page[MIG_PAGE];

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static uint64_t round_page(uint64_t n)
{
	return (n + MIG_PAGE - 1) & ~(uint64_t)(MIG_PAGE - 1);
}

/* ------------------------------------------------------------ writing */

struct out {
	int fd;
	struct mig_stats *st;
	char *err;
	size_t errlen;
	bool failed;
};

static void out_write(struct out *o, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (!o->failed && len) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(o->err, o->errlen, "writing the migration stream: %s",
				 n < 0 ? strerror(errno) : "no progress");
			o->failed = true;
			return;
		}
		p += n;
		len -= (size_t)n;
		o->st->transferred += (uint64_t)n;
	}
}

/* Zeros up to the next page boundary of the stream. */
static void out_pad(struct out *o)
{
	uint64_t pad = round_page(o->st->transferred) - o->st->transferred;

	out_write(o, zero_page, (size_t)pad);
}

static bool page_is_zero(const uint8_t *p)
{
	return memcmp(p, zero_page, MIG_PAGE) == 0;
}

static void write_region(struct out *o, const struct mig_ram *r)
{
	uint64_t pages = r->size / MIG_PAGE;
	size_t maplen = (size_t)((pages + 7) / 8);
	uint8_t *map = calloc(1, maplen ? maplen : 1);
	uint8_t hdr[REGION_HEADER_SIZE] = {0};

	if (!map) {
		snprintf(o->err, o->errlen, "out of memory for the page bitmap");
		o->failed = true;
		return;
	}
	for (uint64_t i = 0; i < pages; i++) {
		if (page_is_zero(r->hva + i * MIG_PAGE)) {
			o->st->zero_pages++;
			continue;
		}
		map[i / 8] |= (uint8_t)(1u << (i % 8));
		o->st->normal_pages++;
	}
	put_le(hdr, r->size, 8);
	out_write(o, hdr, sizeof(hdr));
	out_write(o, map, maplen);
	out_pad(o);
	/* Runs of stored pages go out in one write each. */
	for (uint64_t i = 0; i < pages && !o->failed;) {
		uint64_t j = i;

		while (j < pages && (map[j / 8] >> (j % 8) & 1))
			j++;
		if (j > i)
			out_write(o, r->hva + i * MIG_PAGE, (size_t)((j - i) * MIG_PAGE));
		i = j + 1;
	}
	free(map);
}

int mig_stream_write(int fd, const void *tree, size_t tree_len, const struct mig_ram *ram,
		     unsigned nram, struct mig_stats *st, char *err, size_t errlen)
{
	struct out o = {.fd = fd, .st = st, .err = err, .errlen = errlen};
	uint8_t hdr[HEADER_SIZE] = {0}, end[TRAILER_SIZE];

	if (tree_len > MIG_TREE_MAX || nram > MIG_MAX_REGIONS) {
		snprintf(err, errlen, "migration: state tree or RAM layout too large");
		return -1;
	}
	st->total = round_page(HEADER_SIZE + tree_len) + TRAILER_SIZE;
	for (unsigned i = 0; i < nram; i++) {
		if (ram[i].size % MIG_PAGE) {
			snprintf(err, errlen, "migration: RAM block %u is not page-sized", i);
			return -1;
		}
		st->total += round_page(REGION_HEADER_SIZE + (ram[i].size / MIG_PAGE + 7) / 8) +
			     ram[i].size;
	}
	memcpy(hdr, MIG_MAGIC, 8);
	put_le(hdr + 8, MIG_VERSION, 4);
	put_le(hdr + 12, MIG_PAGE, 4);
	put_le(hdr + 16, tree_len, 8);
	put_le(hdr + 24, nram, 4);
	out_write(&o, hdr, sizeof(hdr));
	out_write(&o, tree, tree_len);
	out_pad(&o);
	for (unsigned i = 0; i < nram && !o.failed; i++)
		write_region(&o, &ram[i]);
	memcpy(end, MIG_END_MAGIC, 8);
	put_le(end + 8, st->transferred, 8);
	out_write(&o, end, sizeof(end));
	if (!o.failed)
		st->total = st->transferred; /* zero pages made it shorter */
	return o.failed ? -1 : 0;
}

/* ------------------------------------------------------------ reading */

static int in_fail(struct mig_in *in, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "migration stream: %s (at byte %llu)", what,
		 (unsigned long long)in->off);
	return -1;
}

/* Exactly len bytes, or an error saying the stream is truncated. */
static int in_read(struct mig_in *in, void *buf, size_t len, char *err, size_t errlen)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(in->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "reading the migration stream: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			return in_fail(in, err, errlen, "truncated");
		p += n;
		len -= (size_t)n;
		in->off += (uint64_t)n;
	}
	return 0;
}

/* The zero padding up to the next page boundary. */
static int in_skip_pad(struct mig_in *in, char *err, size_t errlen)
{
	uint8_t pad[MIG_PAGE];
	size_t len = (size_t)(round_page(in->off) - in->off);

	if (in_read(in, pad, len, err, errlen) < 0)
		return -1;
	if (len && memcmp(pad, zero_page, len))
		return in_fail(in, err, errlen, "non-zero padding");
	return 0;
}

int mig_stream_read_tree(struct mig_in *in, int fd, void **tree, size_t *tree_len, char *err,
			 size_t errlen)
{
	uint8_t hdr[HEADER_SIZE];
	uint64_t len;

	*in = (struct mig_in){.fd = fd};
	*tree = NULL;
	if (in_read(in, hdr, sizeof(hdr), err, errlen) < 0)
		return -1;
	if (memcmp(hdr, MIG_MAGIC, 8))
		return in_fail(in, err, errlen, "not a vmm migration stream (bad magic)");
	if (get_le(hdr + 8, 4) != MIG_VERSION) {
		snprintf(err, errlen, "migration stream: version %u, this vmm reads %u",
			 (unsigned)get_le(hdr + 8, 4), MIG_VERSION);
		return -1;
	}
	len = get_le(hdr + 16, 8);
	in->nregions = (uint32_t)get_le(hdr + 24, 4);
	if (get_le(hdr + 12, 4) != MIG_PAGE || get_le(hdr + 28, 4) != 0)
		return in_fail(in, err, errlen, "bad header");
	if (len == 0 || len > MIG_TREE_MAX || in->nregions > MIG_MAX_REGIONS)
		return in_fail(in, err, errlen, "state tree length or region count out of range");
	*tree = malloc((size_t)len);
	if (!*tree)
		return in_fail(in, err, errlen, "out of memory for the state tree");
	if (in_read(in, *tree, (size_t)len, err, errlen) < 0 || in_skip_pad(in, err, errlen) < 0) {
		free(*tree);
		*tree = NULL;
		return -1;
	}
	*tree_len = (size_t)len;
	return 0;
}

/* More mappings than this and the reader reads instead: each run of stored
 * pages is a mapping, and the kernel caps them (vm.max_map_count). */
#define MAP_RUNS_MAX 8192

/* Map len bytes of the file at the stream's position onto hva (private:
 * the guest's writes never reach the file). 0, or -1 when the file is
 * shorter than that (a mapping past its end would fault later). */
static int in_map(struct mig_in *in, uint8_t *hva, size_t len, char *err, size_t errlen)
{
	struct stat sb;

	if (fstat(in->fd, &sb) < 0 || (uint64_t)sb.st_size < in->off + len)
		return in_fail(in, err, errlen, "truncated");
	if (mmap(hva, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, in->fd,
		 (off_t)in->off) == MAP_FAILED) {
		snprintf(err, errlen, "mapping the migration stream: %s", strerror(errno));
		return -1;
	}
	if (lseek(in->fd, (off_t)len, SEEK_CUR) < 0) {
		snprintf(err, errlen, "seeking in the migration stream: %s", strerror(errno));
		return -1;
	}
	in->off += len;
	in->mapped_bytes += len;
	return 0;
}

static uint64_t count_runs(const uint8_t *map, uint64_t pages)
{
	uint64_t runs = 0;

	for (uint64_t i = 0; i < pages; i++)
		runs += (map[i / 8] >> (i % 8) & 1) &&
			(i == 0 || !(map[(i - 1) / 8] >> ((i - 1) % 8) & 1));
	return runs;
}

static int read_region(struct mig_in *in, const struct mig_ram *r, struct mig_stats *st, char *err,
		       size_t errlen)
{
	uint8_t hdr[REGION_HEADER_SIZE];
	uint64_t pages = r->size / MIG_PAGE;
	size_t maplen = (size_t)((pages + 7) / 8);
	uint8_t *map;
	bool mapping;
	int ret = 0;

	if (in_read(in, hdr, sizeof(hdr), err, errlen) < 0)
		return -1;
	if (get_le(hdr, 8) != r->size || get_le(hdr + 8, 8) != 0) {
		snprintf(err, errlen,
			 "migration stream: a RAM block of %llu bytes, this machine has %llu "
			 "(start vmm with the same -m)",
			 (unsigned long long)get_le(hdr, 8), (unsigned long long)r->size);
		return -1;
	}
	map = malloc(maplen ? maplen : 1);
	if (!map)
		return in_fail(in, err, errlen, "out of memory for the page bitmap");
	if (in_read(in, map, maplen, err, errlen) < 0 || in_skip_pad(in, err, errlen) < 0) {
		free(map);
		return -1;
	}
	if (pages % 8 && map[maplen - 1] >> (pages % 8)) {
		free(map);
		return in_fail(in, err, errlen, "page bitmap has bits past the block's end");
	}
	mapping = in->map_file && count_runs(map, pages) <= MAP_RUNS_MAX;
	for (uint64_t i = 0; i < pages && ret == 0;) {
		uint64_t j = i;

		while (j < pages && (map[j / 8] >> (j % 8) & 1))
			j++;
		if (j > i) {
			size_t len = (size_t)((j - i) * MIG_PAGE);

			ret = mapping ? in_map(in, r->hva + i * MIG_PAGE, len, err, errlen)
				      : in_read(in, r->hva + i * MIG_PAGE, len, err, errlen);
			st->normal_pages += j - i;
			st->transferred = in->off;
		}
		st->zero_pages += j < pages;
		i = j + 1;
	}
	free(map);
	return ret;
}

int mig_stream_read_ram(struct mig_in *in, const struct mig_ram *ram, unsigned nram,
			struct mig_stats *st, char *err, size_t errlen)
{
	uint8_t end[TRAILER_SIZE], extra;
	uint64_t at;

	if (in->nregions != nram) {
		snprintf(err, errlen,
			 "migration stream: %u RAM blocks, this machine has %u (start vmm with "
			 "the same command line)",
			 in->nregions, nram);
		return -1;
	}
	for (unsigned i = 0; i < nram; i++)
		if (read_region(in, &ram[i], st, err, errlen) < 0)
			return -1;
	at = in->off;
	if (in_read(in, end, sizeof(end), err, errlen) < 0)
		return -1;
	if (memcmp(end, MIG_END_MAGIC, 8) || get_le(end + 8, 8) != at)
		return in_fail(in, err, errlen, "bad trailer");
	if (read(in->fd, &extra, 1) > 0)
		return in_fail(in, err, errlen, "bytes after the trailer");
	st->transferred = st->total = in->off;
	return 0;
}
