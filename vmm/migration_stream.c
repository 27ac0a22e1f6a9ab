/* migration_stream.c — the migration stream's framing: header, passes of
 * RAM pages with zero pages as bitmap bits, the state tree, trailer (format
 * in migration.h). Plain libc on a file descriptor, so tests and the fuzz
 * target use it alone. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/migration.h"

#define HEADER_SIZE 32
#define SECTION_SIZE 16
#define REGION_HEADER_SIZE 16
#define PASS_MAGIC "VMMPASS!"
#define STATE_MAGIC "VMMSTATE"
/* A throttled or cancellable writer looks up between chunks this big. */
#define CHUNK (256u << 10)

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

static bool bit(const uint8_t *map, uint64_t i)
{
	return map[i / 8] >> (i % 8) & 1;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ writing */

static int out_fail(struct mig_out *o, const char *what, const char *why)
{
	if (!o->failed)
		snprintf(o->err, o->errlen, "%s%s%s", what, why ? ": " : "", why ? why : "");
	o->failed = true;
	return -1;
}

/* Sleep as long as max_bps says the bytes sent so far should have taken. */
static void out_throttle(struct mig_out *o, uint64_t sent)
{
	uint64_t due, now;
	struct timespec ts;

	if (!o->max_bps)
		return;
	if (!o->window_ns) {
		o->window_ns = monotonic_ns();
		o->window_bytes = 0;
	}
	o->window_bytes += sent;
	due = o->window_ns + (uint64_t)((double)o->window_bytes * 1e9 / (double)o->max_bps);
	now = monotonic_ns();
	if (due > now) {
		ts.tv_sec = (time_t)((due - now) / 1000000000ull);
		ts.tv_nsec = (long)((due - now) % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

static void out_write(struct mig_out *o, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (!o->failed && len) {
		size_t want = o->max_bps || o->cancel ? (len < CHUNK ? len : CHUNK) : len;
		ssize_t n;

		if (o->cancel && __atomic_load_n(o->cancel, __ATOMIC_RELAXED)) {
			out_fail(o, "migration cancelled", NULL);
			return;
		}
		n = write(o->fd, p, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out_fail(o, "writing the migration stream",
				 n < 0 ? strerror(errno) : "no progress");
			return;
		}
		p += n;
		len -= (size_t)n;
		o->st->transferred += (uint64_t)n;
		out_throttle(o, (uint64_t)n);
	}
}

/* Zeros up to the next page boundary of the stream. */
static void out_pad(struct mig_out *o)
{
	uint64_t pad = round_page(o->st->transferred) - o->st->transferred;

	out_write(o, zero_page, (size_t)pad);
}

static void out_section(struct mig_out *o, const char *magic, uint64_t arg)
{
	uint8_t sec[SECTION_SIZE];

	memcpy(sec, magic, 8);
	put_le(sec + 8, arg, 8);
	out_write(o, sec, sizeof(sec));
}

/* One byte of the stream with up to MIG_FDS_PER_BYTE descriptors. */
static void out_byte_fds(struct mig_out *o, const uint8_t *byte, const int *fds, unsigned n)
{
	union {
		char buf[CMSG_SPACE(MIG_FDS_PER_BYTE * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {(void *)byte, 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE(n * sizeof(int))};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t r;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	do
		r = sendmsg(o->fd, &msg, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r != 1) {
		out_fail(o, "passing host sockets with the stream",
			 r < 0 ? strerror(errno) : "no progress");
		return;
	}
	o->st->transferred++;
}

/* The state section's header, its first bytes carrying o->fds. */
static void out_state_section(struct mig_out *o, uint64_t tree_len)
{
	uint8_t sec[SECTION_SIZE];
	unsigned i = 0, sent = 0;

	memcpy(sec, STATE_MAGIC, 8);
	put_le(sec + 8, tree_len, 8);
	for (; sent < o->nfds && !o->failed; i++) {
		unsigned n = o->nfds - sent < MIG_FDS_PER_BYTE ? o->nfds - sent : MIG_FDS_PER_BYTE;

		out_byte_fds(o, &sec[i], o->fds + sent, n);
		sent += n;
	}
	out_write(o, sec + i, sizeof(sec) - i);
}

static bool page_is_zero(const uint8_t *p)
{
	return memcmp(p, zero_page, MIG_PAGE) == 0;
}

int mig_out_header(struct mig_out *o, unsigned nram)
{
	uint8_t hdr[HEADER_SIZE] = {0};

	if (nram > MIG_MAX_REGIONS)
		return out_fail(o, "migration: too many RAM blocks", NULL);
	memcpy(hdr, MIG_MAGIC, 8);
	put_le(hdr + 8, MIG_VERSION, 4);
	put_le(hdr + 12, MIG_PAGE, 4);
	put_le(hdr + 24, nram, 4);
	out_write(o, hdr, sizeof(hdr));
	out_pad(o);
	return o->failed ? -1 : 0;
}

/* One block's part of a pass: the pages set in dirty (all when NULL). */
static void write_region(struct mig_out *o, const struct mig_ram *r, const uint64_t *dirty)
{
	uint64_t pages = r->size / MIG_PAGE;
	size_t maplen = (size_t)((pages + 7) / 8);
	uint8_t *sent = calloc(2, maplen ? maplen : 1), *data = sent + maplen;
	uint8_t hdr[REGION_HEADER_SIZE] = {0};

	if (!sent) {
		out_fail(o, "out of memory for the page bitmap", NULL);
		return;
	}
	for (uint64_t i = 0; i < pages; i++) {
		/* The final pass's set is a few pages of a million: skip
		 * clean words whole (it runs while the guest is stopped). */
		if (dirty && i % 64 == 0 && !dirty[i / 64]) {
			i += 63;
			continue;
		}
		if (dirty && !(dirty[i / 64] >> (i % 64) & 1))
			continue;
		sent[i / 8] |= (uint8_t)(1u << (i % 8));
		/* A page the guest writes after this test is in the next
		 * pass's dirty set: what goes now need not be its last word. */
		if (page_is_zero(r->hva + i * MIG_PAGE)) {
			o->st->zero_pages++;
			continue;
		}
		data[i / 8] |= (uint8_t)(1u << (i % 8));
		o->st->normal_pages++;
	}
	put_le(hdr, r->size, 8);
	out_write(o, hdr, sizeof(hdr));
	out_write(o, sent, 2 * maplen);
	out_pad(o);
	/* Runs of stored pages go out in one write each. */
	for (uint64_t i = 0; i < pages && !o->failed;) {
		uint64_t j = i;

		if (i % 8 == 0 && !data[i / 8]) { /* eight pages without data */
			i += 8;
			continue;
		}
		while (j < pages && bit(data, j))
			j++;
		if (j > i)
			out_write(o, r->hva + i * MIG_PAGE, (size_t)((j - i) * MIG_PAGE));
		i = j + 1;
	}
	free(sent);
}

int mig_out_pass(struct mig_out *o, uint32_t pass, const struct mig_ram *ram, unsigned nram,
		 uint64_t *const *dirty)
{
	for (unsigned i = 0; i < nram; i++)
		if (ram[i].size % MIG_PAGE)
			return out_fail(o, "migration: a RAM block is not page-sized", NULL);
	out_section(o, PASS_MAGIC, pass);
	for (unsigned i = 0; i < nram && !o->failed; i++)
		write_region(o, &ram[i], dirty ? dirty[i] : NULL);
	return o->failed ? -1 : 0;
}

int mig_out_end(struct mig_out *o, const void *tree, size_t tree_len)
{
	if (tree_len == 0 || tree_len > MIG_TREE_MAX)
		return out_fail(o, "migration: state tree empty or too large", NULL);
	if (o->nfds > MIG_MAX_FDS)
		return out_fail(o, "migration: too many host sockets to pass", NULL);
	out_state_section(o, tree_len);
	out_write(o, tree, tree_len);
	out_pad(o);
	out_section(o, MIG_END_MAGIC, o->st->transferred);
	return o->failed ? -1 : 0;
}

int mig_stream_write(int fd, const void *tree, size_t tree_len, const struct mig_ram *ram,
		     unsigned nram, struct mig_stats *st, char *err, size_t errlen)
{
	struct mig_out o = {.fd = fd, .st = st, .err = err, .errlen = errlen};

	if (mig_out_header(&o, nram) < 0 || mig_out_pass(&o, 1, ram, nram, NULL) < 0 ||
	    mig_out_end(&o, tree, tree_len) < 0)
		return -1;
	st->total = st->transferred;
	return 0;
}

/* ------------------------------------------------------------ reading */

static int in_fail(struct mig_in *in, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "migration stream: %s (at byte %llu)", what,
		 (unsigned long long)in->off);
	return -1;
}

/* Keep the descriptors a message brought (close what does not fit). */
static void in_take_fds(struct mig_in *in, struct msghdr *msg)
{
	if (msg->msg_flags & MSG_CTRUNC)
		in->fds_lost = true;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (in->nfds < MIG_MAX_FDS) {
				in->fds[in->nfds++] = fd;
			} else {
				close(fd);
				in->fds_lost = true;
			}
		}
	}
}

/* read(), or on a unix socket recvmsg() taking what descriptors come. */
static ssize_t in_read_some(struct mig_in *in, void *p, size_t len)
{
	union {
		char buf[CMSG_SPACE(MIG_FDS_PER_BYTE * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {p, len};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	ssize_t n;

	if (!in->unix_socket)
		return read(in->fd, p, len);
	n = recvmsg(in->fd, &msg, MSG_CMSG_CLOEXEC);
	if (n >= 0)
		in_take_fds(in, &msg);
	return n;
}

void mig_in_close_fds(struct mig_in *in)
{
	for (unsigned i = 0; i < in->nfds; i++)
		close(in->fds[i]);
	in->nfds = 0;
}

/* Exactly len bytes, or an error saying the stream is truncated. */
static int in_read(struct mig_in *in, void *buf, size_t len, char *err, size_t errlen)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = in_read_some(in, p, len);

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

int mig_stream_read_header(struct mig_in *in, int fd, char *err, size_t errlen)
{
	uint8_t hdr[HEADER_SIZE];
	off_t base = lseek(fd, 0, SEEK_CUR);
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);

	*in = (struct mig_in){.fd = fd, .base = base > 0 ? (uint64_t)base : 0};
	in->unix_socket =
		getsockname(fd, (struct sockaddr *)&sa, &salen) == 0 && sa.ss_family == AF_UNIX;
	if (in_read(in, hdr, sizeof(hdr), err, errlen) < 0)
		return -1;
	if (memcmp(hdr, MIG_MAGIC, 8))
		return in_fail(in, err, errlen, "not a vmm migration stream (bad magic)");
	if (get_le(hdr + 8, 4) != MIG_VERSION) {
		snprintf(err, errlen, "migration stream: version %u, this vmm reads %u",
			 (unsigned)get_le(hdr + 8, 4), MIG_VERSION);
		return -1;
	}
	in->nregions = (uint32_t)get_le(hdr + 24, 4);
	if (get_le(hdr + 12, 4) != MIG_PAGE || get_le(hdr + 16, 8) || get_le(hdr + 28, 4))
		return in_fail(in, err, errlen, "bad header");
	if (in->nregions > MIG_MAX_REGIONS)
		return in_fail(in, err, errlen, "region count out of range");
	return in_skip_pad(in, err, errlen);
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

	if (fstat(in->fd, &sb) < 0 || (uint64_t)sb.st_size < in->base + in->off + len)
		return in_fail(in, err, errlen, "truncated");
	if (mmap(hva, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, in->fd,
		 (off_t)(in->base + in->off)) == MAP_FAILED) {
		snprintf(err, errlen, "mapping the migration stream: %s", strerror(errno));
		return -1;
	}
	if (lseek(in->fd, (off_t)len, SEEK_CUR) < 0) {
		snprintf(err, errlen, "seeking in the migration stream: %s", strerror(errno));
		return -1;
	}
	in->off += len;
	in->mapped_bytes += len;
	in->map_runs++;
	return 0;
}

/* Check a pass's bitmaps: data pages are sent pages, none past the end. */
static int check_maps(struct mig_in *in, const uint8_t *sent, const uint8_t *data, uint64_t pages,
		      char *err, size_t errlen)
{
	size_t maplen = (size_t)((pages + 7) / 8);

	for (size_t i = 0; i < maplen; i++)
		if (data[i] & ~sent[i])
			return in_fail(in, err, errlen, "a stored page that is not sent");
	if (pages % 8 && sent[maplen - 1] >> (pages % 8))
		return in_fail(in, err, errlen, "page bitmap has bits past the block's end");
	return 0;
}

static void set_bits(uint64_t *bits, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++)
		bits[i / 64] |= 1ull << (i % 64);
}

/* A sent page without data is zeros. Only a page that may hold something
 * (set in stored: resident when the stream began, see mark_resident, or
 * stored in by an earlier pass) needs clearing: testing every other page
 * would fault each one in, a whole block's worth for the first pass. */
static void load_zero_page(uint8_t *p, uint64_t *stored, uint64_t i)
{
	if (!(stored[i / 64] >> (i % 64) & 1))
		return;
	stored[i / 64] &= ~(1ull << (i % 64));
	if (!page_is_zero(p))
		memset(p, 0, MIG_PAGE);
}

static int read_pages(struct mig_in *in, const struct mig_ram *r, const uint8_t *sent,
		      const uint8_t *data, uint64_t *stored, struct mig_stats *st, char *err,
		      size_t errlen)
{
	uint64_t pages = r->size / MIG_PAGE;
	int ret = 0;

	for (uint64_t i = 0; i < pages && ret == 0;) {
		uint64_t j = i;

		while (j < pages && bit(data, j))
			j++;
		if (j > i) {
			size_t len = (size_t)((j - i) * MIG_PAGE);
			bool mapping = in->map_file && in->map_runs < MAP_RUNS_MAX;

			ret = mapping ? in_map(in, r->hva + i * MIG_PAGE, len, err, errlen)
				      : in_read(in, r->hva + i * MIG_PAGE, len, err, errlen);
			st->normal_pages += j - i;
			st->transferred = in->off;
			set_bits(stored, i, j);
		}
		if (j < pages && bit(sent, j)) {
			load_zero_page(r->hva + j * MIG_PAGE, stored, j);
			st->zero_pages++;
		}
		i = j + 1;
	}
	return ret;
}

static int read_region(struct mig_in *in, const struct mig_ram *r, uint64_t *stored,
		       struct mig_stats *st, char *err, size_t errlen)
{
	uint8_t hdr[REGION_HEADER_SIZE];
	uint64_t pages = r->size / MIG_PAGE;
	size_t maplen = (size_t)((pages + 7) / 8);
	uint8_t *maps;
	int ret;

	if (in_read(in, hdr, sizeof(hdr), err, errlen) < 0)
		return -1;
	if (get_le(hdr, 8) != r->size || get_le(hdr + 8, 8) != 0) {
		snprintf(err, errlen,
			 "migration stream: a RAM block of %llu bytes, this machine has %llu "
			 "(start vmm with the same -m)",
			 (unsigned long long)get_le(hdr, 8), (unsigned long long)r->size);
		return -1;
	}
	maps = malloc(maplen ? 2 * maplen : 1);
	if (!maps)
		return in_fail(in, err, errlen, "out of memory for the page bitmap");
	ret = in_read(in, maps, 2 * maplen, err, errlen);
	if (ret == 0)
		ret = in_skip_pad(in, err, errlen);
	if (ret == 0)
		ret = check_maps(in, maps, maps + maplen, pages, err, errlen);
	if (ret == 0) {
		struct mig_prefault pf = {.started = false};

		if (!in->map_file) /* a mapped file's pages are the file's */
			mig_prefault_start(&pf, r->hva, maps + maplen, pages);
		ret = read_pages(in, r, maps, maps + maplen, stored, st, err, errlen);
		mig_prefault_stop(&pf);
	}
	free(maps);
	return ret;
}

/* The pages of [hva, hva+size) that hold something before the stream
 * does: those in memory (mincore). A destination writes some at its start
 * (-kernel's image, initrd and boot tables); vmm's incoming path drops
 * them with MADV_DONTNEED first, and this keeps the loader right for a
 * caller that does not. A page never touched is not in memory and reads
 * as zeros. If mincore cannot tell, every page counts. */
static void mark_resident(uint64_t *stored, uint8_t *hva, uint64_t size)
{
	uint64_t pages = size / MIG_PAGE;
	unsigned char *vec = malloc(pages ? pages : 1);

	if (!vec || mincore(hva, size, vec) < 0) {
		set_bits(stored, 0, pages);
		free(vec);
		return;
	}
	for (uint64_t i = 0; i < pages; i++)
		if (vec[i] & 1)
			stored[i / 64] |= 1ull << (i % 64);
	free(vec);
}

/* The passes up to the state section's header, left in sec: 0 or -1.
 * stored[i]: block i's pages holding data from this stream. */
static int read_passes(struct mig_in *in, const struct mig_ram *ram, unsigned nram,
		       uint64_t **stored, uint8_t *sec, struct mig_stats *st, char *err,
		       size_t errlen)
{
	if (in->nregions != nram) {
		snprintf(err, errlen,
			 "migration stream: %u RAM blocks, this machine has %u (start vmm with "
			 "the same command line)",
			 in->nregions, nram);
		return -1;
	}
	for (unsigned i = 0; i < nram; i++) {
		stored[i] = calloc((ram[i].size / MIG_PAGE + 63) / 64 + 1, sizeof(uint64_t));
		if (!stored[i])
			return in_fail(in, err, errlen, "out of memory for the page bitmap");
		mark_resident(stored[i], ram[i].hva, ram[i].size);
	}
	for (;;) {
		if (in_read(in, sec, SECTION_SIZE, err, errlen) < 0)
			return -1;
		if (!memcmp(sec, STATE_MAGIC, 8))
			return 0;
		if (memcmp(sec, PASS_MAGIC, 8))
			return in_fail(in, err, errlen, "expected a RAM pass or the state");
		/* Passes count up from 1: a repeated or skipped one is damage. */
		if (get_le(sec + 8, 8) != (uint64_t)in->passes + 1)
			return in_fail(in, err, errlen, "RAM pass out of order");
		in->passes++;
		for (unsigned i = 0; i < nram; i++)
			if (read_region(in, &ram[i], stored[i], st, err, errlen) < 0)
				return -1;
	}
}

int mig_stream_read_ram(struct mig_in *in, const struct mig_ram *ram, unsigned nram,
			struct mig_stats *st, char *err, size_t errlen)
{
	uint8_t sec[SECTION_SIZE];
	uint64_t *stored[MIG_MAX_REGIONS] = {0};
	int r = read_passes(in, ram, nram, stored, sec, st, err, errlen);

	for (unsigned i = 0; i < nram && i < MIG_MAX_REGIONS; i++)
		free(stored[i]);
	if (r < 0)
		return -1;
	if (!in->passes)
		return in_fail(in, err, errlen, "no RAM pass before the state");
	in->tree_len = get_le(sec + 8, 8);
	if (in->tree_len == 0 || in->tree_len > MIG_TREE_MAX)
		return in_fail(in, err, errlen, "state tree length out of range");
	return 0;
}

int mig_stream_read_tree(struct mig_in *in, void **tree, size_t *tree_len, char *err, size_t errlen)
{
	uint8_t end[SECTION_SIZE], extra;
	uint64_t at;

	*tree = malloc((size_t)in->tree_len);
	if (!*tree)
		return in_fail(in, err, errlen, "out of memory for the state tree");
	if (in_read(in, *tree, (size_t)in->tree_len, err, errlen) < 0 ||
	    in_skip_pad(in, err, errlen) < 0)
		goto fail;
	at = in->off;
	if (in_read(in, end, sizeof(end), err, errlen) < 0)
		goto fail;
	if (memcmp(end, MIG_END_MAGIC, 8) || get_le(end + 8, 8) != at) {
		in_fail(in, err, errlen, "bad trailer");
		goto fail;
	}
	if (in_read_some(in, &extra, 1) > 0) {
		in_fail(in, err, errlen, "bytes after the trailer");
		goto fail;
	}
	*tree_len = (size_t)in->tree_len;
	return 0;
fail:
	free(*tree);
	*tree = NULL;
	return -1;
}

/* ------------------------------------------------------------ return path */

bool mig_rp_usable(int fd)
{
	int type;
	socklen_t len = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

int mig_rp_send(int fd, bool loaded, char *err, size_t errlen)
{
	uint8_t msg[MIG_RP_SIZE];
	size_t done = 0;

	memcpy(msg, MIG_RP_MAGIC, 8);
	put_le(msg + 8, loaded ? 0 : 1, 8);
	while (done < sizeof(msg)) {
		/* MSG_NOSIGNAL: a source that went away is an error, not SIGPIPE */
		ssize_t n = send(fd, msg + done, sizeof(msg) - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "return path: cannot answer the source: %s",
				 n < 0 ? strerror(errno) : "no progress");
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

int mig_rp_parse(const uint8_t *msg, size_t len, char *err, size_t errlen)
{
	if (len != MIG_RP_SIZE || memcmp(msg, MIG_RP_MAGIC, 8)) {
		snprintf(err, errlen, "return path: the destination's reply is not vmm's");
		return -1;
	}
	switch (get_le(msg + 8, 8)) {
	case 0:
		return 0;
	case 1:
		snprintf(err, errlen, "the destination failed to load the migration stream");
		return -1;
	default:
		snprintf(err, errlen, "return path: unknown reply %llu from the destination",
			 (unsigned long long)get_le(msg + 8, 8));
		return -1;
	}
}

int mig_rp_wait(int fd, const bool *cancel, char *err, size_t errlen)
{
	uint8_t msg[MIG_RP_SIZE];
	size_t got = 0;

	/* the destination reads to this end, then answers */
	if (shutdown(fd, SHUT_WR) < 0) {
		snprintf(err, errlen, "return path: %s", strerror(errno));
		return -1;
	}
	while (got < sizeof(msg)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		int r;

		if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
			snprintf(err, errlen, "migration cancelled");
			return -1;
		}
		r = poll(&p, 1, 100);
		if (r == 0 || (r < 0 && errno == EINTR))
			continue;
		n = r < 0 ? -1 : read(fd, msg + got, sizeof(msg) - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(err, errlen,
				 "return path: the destination closed the connection without "
				 "acknowledging the load%s%s",
				 n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return -1;
		}
		got += (size_t)n;
	}
	return mig_rp_parse(msg, got, err, errlen);
}
