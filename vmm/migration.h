/* migration.h — saving a stopped machine to a stream and loading it into a
 * new vmm started with the same command line (QMP migrate, -incoming).
 *
 * The stream (migration_stream.c), all integers little-endian:
 *
 *   header   "VMMIGRAT", u32 version (1), u32 page size (4096),
 *            u64 tree length, u32 RAM regions, u32 0          (32 bytes)
 *   tree     the state tree (state/state.h): devices, vCPUs, KVM
 *   padding  zeros up to the next page boundary of the stream
 *   per RAM region:
 *            u64 size (a multiple of the page size), u64 0, then a bitmap
 *            with one bit per page (1: stored), zero-padded to a page;
 *            then the stored pages, in order. Pages of zeros are not
 *            stored: the bitmap's 0 bit says so.
 *   trailer  "VMMEND!!", u64 offset of the trailer               (16 bytes)
 *
 * Every stored page sits at a page-aligned offset of the stream, so a
 * loader reading a file could map them in place. The reader checks every
 * field and every padding byte, and a stream that ends early or carries
 * bytes after the trailer's place is a one-line error.
 */
#ifndef VMM_MIGRATION_H
#define VMM_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIG_MAGIC "VMMIGRAT"
#define MIG_END_MAGIC "VMMEND!!"
#define MIG_VERSION 1
#define MIG_PAGE 4096u
#define MIG_TREE_MAX (64u << 20) /* far above any machine's tree */
#define MIG_MAX_REGIONS 8

/* One block of guest RAM, as the host maps it. */
struct mig_ram {
	uint8_t *hva;
	uint64_t size;
};

/* Bytes moved so far (query-migrate's ram.transferred) and the stream's
 * whole size once known; updated as the stream goes. */
struct mig_stats {
	uint64_t transferred;
	uint64_t total;
	uint64_t zero_pages, normal_pages;
};

/* ------------------------------------------------- migration_stream.c */

/* Write the whole stream to fd (blocking). 0, or -1 with err. */
int mig_stream_write(int fd, const void *tree, size_t tree_len, const struct mig_ram *ram,
		     unsigned nram, struct mig_stats *st, char *err, size_t errlen);

/* Reading: the header and tree first (the caller checks the tree and sets
 * up the machine), then the RAM into the machine's blocks. */
struct mig_in {
	int fd;
	uint64_t off; /* bytes consumed */
	uint32_t nregions;
	/* Set by the caller after mig_stream_read_tree when fd is a regular
	 * file and the RAM blocks are page-aligned mappings it may replace:
	 * stored pages are then mapped MAP_PRIVATE from the file (read on
	 * first touch, copied on write) instead of read. */
	bool map_file;
	uint64_t mapped_bytes; /* how much was mapped rather than read */
};
/* *tree is malloc'd (the caller frees). 0, or -1 with err. */
int mig_stream_read_tree(struct mig_in *in, int fd, void **tree, size_t *tree_len, char *err,
			 size_t errlen);
/* ram must match the saved regions' number and sizes; each block must
 * hold zeros where the stream has none (fresh anonymous memory). */
int mig_stream_read_ram(struct mig_in *in, const struct mig_ram *ram, unsigned nram,
			struct mig_stats *st, char *err, size_t errlen);

/* ------------------------------------------------- cpu_state.c */
struct machine;
struct state_writer;
struct state_reader;
/* /kvm (kvmclock, kernel_irqchip=on's PIC, I/O APIC, PIT) and /cpus. The
 * machine is paused. 0, or -1 with err. */
int cpu_state_save(struct machine *m, struct state_writer *w, char *err, size_t errlen);
int cpu_state_load(struct machine *m, const struct state_reader *root, char *err, size_t errlen);

/* ------------------------------------------------- migration_virtio.c */

struct machine;
struct state_writer;
struct state_reader;
/* The virtio devices' nodes under /devices. Saving drains them and
 * freezes their queues: 0, or -1 with err; thaw after the stream is
 * written (or the save failed). */
int migration_virtio_save(struct machine *m, struct state_writer *w, char *err, size_t errlen);
int migration_virtio_load(struct machine *m, const struct state_reader *devs, char *err,
			  size_t errlen);
void migration_virtio_thaw(struct machine *m);

/* ------------------------------------------------- migration.c */

enum migration_state { MIG_NONE, MIG_SETUP, MIG_ACTIVE, MIG_COMPLETED, MIG_FAILED };

/* The last migration, for query-migrate (main thread). */
struct migration_status {
	enum migration_state state;
	struct mig_stats stats;
	uint64_t start_ms, total_ms;
	char error[256];
};
const struct migration_status *migration_status(void);
const char *migration_state_name(enum migration_state s);
/* QMP migrate: stop the guest (STOP) if it runs, write its state and RAM
 * to uri ("exec:CMD", "file:PATH", "unix:PATH", "tcp:HOST:PORT"); it stays stopped. 0, or
 * -1 with a one-line err (also for a device vmm cannot save yet). */
int migration_save(struct machine *m, const char *uri, char *err, size_t errlen);
/* -incoming URI / migrate-incoming: read the stream, load every device
 * and vCPU, run unless -S. 0, or -1 with a one-line err. */
int migration_incoming(struct machine *m, const char *uri, char *err, size_t errlen);

#endif /* VMM_MIGRATION_H */
