/* fuzz_migration_stream.c — the migration stream's reader
 * (vmm/migration_stream.c): the input is a stream, read from a memfd into
 * two RAM blocks of 16 and 3 pages, as -incoming does (any number of
 * passes, pages resent). An accepted stream is written again (one pass)
 * from what loaded and must read back the same. The input's start is also
 * a return-path reply (mig_rp_parse). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"
#include "vmm/migration.h"

#define PAGES_A 16
#define PAGES_B 3

static uint8_t ram_a[PAGES_A * MIG_PAGE], ram_b[PAGES_B * MIG_PAGE];
static uint8_t again_a[PAGES_A * MIG_PAGE], again_b[PAGES_B * MIG_PAGE];

/* Read fd into (a, b) from offset 0: 0 and the tree, or -1. */
static int load(int fd, uint8_t *a, uint8_t *b, void **tree, size_t *len)
{
	struct mig_ram ram[2] = {{a, sizeof(ram_a)}, {b, sizeof(ram_b)}};
	struct mig_stats st = {0};
	struct mig_in in;
	char err[256];

	memset(a, 0, sizeof(ram_a));
	memset(b, 0, sizeof(ram_b));
	lseek(fd, 0, SEEK_SET);
	if (mig_stream_read_header(&in, fd, err, sizeof(err)) < 0 ||
	    mig_stream_read_ram(&in, ram, 2, &st, err, sizeof(err)) < 0)
		return -1;
	return mig_stream_read_tree(&in, tree, len, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0), fd2;
	struct mig_ram ram[2] = {{ram_a, sizeof(ram_a)}, {ram_b, sizeof(ram_b)}};
	struct mig_stats st = {0};
	void *tree, *tree2;
	size_t len, len2;
	char err[256];

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	if (mig_rp_parse(data, size < MIG_RP_SIZE ? size : MIG_RP_SIZE, err, sizeof(err)) == 0 &&
	    (size < MIG_RP_SIZE || memcmp(data, MIG_RP_MAGIC, 8)))
		abort(); /* only a whole "loaded" reply is success */
	if (load(fd, ram_a, ram_b, &tree, &len) == 0) {
		fd2 = memfd_create("fuzz2", 0);
		if (fd2 < 0 ||
		    mig_stream_write(fd2, tree, len, ram, 2, &st, err, sizeof(err)) < 0 ||
		    load(fd2, again_a, again_b, &tree2, &len2) < 0)
			abort();
		if (len2 != len || memcmp(tree, tree2, len) ||
		    memcmp(ram_a, again_a, sizeof(ram_a)) || memcmp(ram_b, again_b, sizeof(ram_b)))
			abort();
		free(tree);
		free(tree2);
		close(fd2);
	}
	close(fd);
	return 0;
}
