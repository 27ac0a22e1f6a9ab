/* migration.h — copying a machine to a stream and loading it into a new
 * vmm started with the same command line (QMP migrate, -incoming): live
 * (pre-copy, the guest runs while its RAM goes out in passes) or of a
 * stopped guest (one pass).
 *
 * The stream (migration_stream.c), all integers little-endian; sections
 * start page-aligned, and every gap up to a page boundary is zeros:
 *
 *   header   "VMMIGRAT", u32 version (2), u32 page size (4096), u64 0,
 *            u32 RAM regions, u32 0                             (32 bytes)
 *   passes   one or more, numbered from 1:
 *            "VMMPASS!", u64 pass number, then per RAM region:
 *              u64 size (a multiple of the page size), u64 0, a bitmap
 *              "sent" and a bitmap "stored", one bit per page each;
 *              padding; the stored pages, in order. A sent page that is
 *              not stored is a page of zeros. A page may be sent by
 *              several passes: the last one wins.
 *   state    "VMMSTATE", u64 tree length, the state tree (state/state.h:
 *            devices, vCPUs, KVM), padding
 *   trailer  "VMMEND!!", u64 offset of the trailer               (16 bytes)
 *
 * On a unix socket (both ends on one host) the state section's first
 * bytes may carry file descriptors (SCM_RIGHTS, up to MIG_FDS_PER_BYTE on
 * each byte, MIG_MAX_FDS in all): user networking's host sockets, which
 * the tree's netdev nodes name by index in the order they came. A reader
 * on anything else never sees them; a node then finds fewer than it names
 * and falls back (see net.c).
 *
 * The return path (the `return-path` capability, set on both sides or on
 * neither; tcp:, unix: or a socket fd:): after the trailer the source
 * ends its half of the connection and waits; the destination reads to
 * that end, loads, and answers on the same connection with
 *   reply    "VMMLOAD!", u64 0 (loaded: it runs the guest now) or 1 (its
 *            load failed)                                    (16 bytes)
 * The source reports `completed` only on a 0; a 1, a closed connection or
 * anything else is `failed`, and the source's guest runs on.
 *
 * Every stored page sits at a page-aligned offset of the stream, so a
 * loader reading a file can map them in place. The reader checks every
 * field and every padding byte, and a stream that ends early or carries
 * bytes after the trailer's place is a one-line error.
 */
#ifndef VMM_MIGRATION_H
#define VMM_MIGRATION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIG_MAGIC "VMMIGRAT"
#define MIG_END_MAGIC "VMMEND!!"
#define MIG_VERSION 2
#define MIG_PAGE 4096u
#define MIG_TREE_MAX (64u << 20) /* far above any machine's tree */
#define MIG_MAX_REGIONS 8
#define MIG_FDS_PER_BYTE 253 /* the kernel's SCM_MAX_FD */
#define MIG_MAX_FDS 1012     /* on the state section's first 4 bytes */
#define MIG_RP_MAGIC "VMMLOAD!"
#define MIG_RP_SIZE 16

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

/* Writing, piece by piece: header, passes, then the state and trailer. */
struct mig_out {
	int fd;
	struct mig_stats *st;
	char *err;
	size_t errlen;
	bool failed;
	uint64_t max_bps;		  /* 0: as fast as the fd takes it */
	const bool *cancel;		  /* set from another thread: stop writing */
	uint64_t window_ns, window_bytes; /* the throttle's reckoning */
	const int *fds;			  /* sent with the state section (a unix */
	unsigned nfds;			  /* socket only), at most MIG_MAX_FDS */
};
int mig_out_header(struct mig_out *o, unsigned nram);
/* Pass number pass of the blocks ram[0..nram): the pages set in dirty[i]
 * (one bit per page, 64 to a word), or all of them when dirty is NULL. */
int mig_out_pass(struct mig_out *o, uint32_t pass, const struct mig_ram *ram, unsigned nram,
		 uint64_t *const *dirty);
int mig_out_end(struct mig_out *o, const void *tree, size_t tree_len);
/* The whole stream of a stopped machine (one pass; blocking). 0, or -1
 * with err. */
int mig_stream_write(int fd, const void *tree, size_t tree_len, const struct mig_ram *ram,
		     unsigned nram, struct mig_stats *st, char *err, size_t errlen);

/* A thread faulting in, ahead of the receiver, the pages of hva that a
 * pass's data bitmap says will come (migration_prefault.c); started only
 * when enough will. Stop before the bitmap goes. */
struct mig_prefault {
	pthread_t thread;
	uint8_t *hva;
	const uint8_t *data;
	uint64_t pages;
	bool stop, started;
};
void mig_prefault_start(struct mig_prefault *pf, uint8_t *hva, const uint8_t *data, uint64_t pages);
void mig_prefault_stop(struct mig_prefault *pf);

/* Reading: the header, the RAM passes into the machine's blocks, then
 * the tree (the caller loads it) and the trailer. */
struct mig_in {
	int fd;
	uint64_t off;  /* bytes consumed */
	uint64_t base; /* the fd's file offset where the stream starts (a
			* file after libvirt's own header), 0 on a pipe */
	uint32_t nregions;
	unsigned passes;
	uint64_t tree_len;
	/* Set by the caller after mig_stream_read_header when fd is a regular
	 * file, base is page-aligned and the RAM blocks are page-aligned
	 * mappings it may replace:
	 * stored pages are then mapped MAP_PRIVATE from the file (read on
	 * first touch, copied on write) instead of read. */
	bool map_file;
	uint64_t mapped_bytes; /* how much was mapped rather than read */
	unsigned map_runs;
	/* A unix socket: the descriptors that came with the stream, in
	 * order (the reader owns them: mig_in_close_fds). fds_lost: some
	 * did not fit (more than MIG_MAX_FDS, or the kernel cut them off). */
	bool unix_socket, fds_lost;
	unsigned nfds;
	int fds[MIG_MAX_FDS];
};
int mig_stream_read_header(struct mig_in *in, int fd, char *err, size_t errlen);
/* ram must match the saved regions' number and sizes; each block must
 * hold zeros where the stream has none (fresh anonymous memory). */
int mig_stream_read_ram(struct mig_in *in, const struct mig_ram *ram, unsigned nram,
			struct mig_stats *st, char *err, size_t errlen);
/* *tree is malloc'd (the caller frees). 0, or -1 with err. */
int mig_stream_read_tree(struct mig_in *in, void **tree, size_t *tree_len, char *err,
			 size_t errlen);
void mig_in_close_fds(struct mig_in *in);

/* The return path. Whether fd can carry it (a connected socket). */
bool mig_rp_usable(int fd);
/* The destination's reply: loaded or not. 0, or -1 with err. */
int mig_rp_send(int fd, bool loaded, char *err, size_t errlen);
/* Check a reply: 0 for "loaded", or -1 with err. */
int mig_rp_parse(const uint8_t *msg, size_t len, char *err, size_t errlen);
/* The source, after the trailer: end its half of the connection and wait
 * for the reply (*cancel set from another thread stops the wait). 0 when
 * the destination loaded the stream, or -1 with err. */
int mig_rp_wait(int fd, const bool *cancel, char *err, size_t errlen);

/* ------------------------------------------------- migration_ram.c */

/* Pre-copy of one RAM block while the guest runs: pass 1 sends every
 * page, later passes the pages written since the previous pass, until
 * what is left fits the downtime limit at the measured bandwidth (or
 * after MIG_MAX_PASSES); then the guest stops and the final pass goes. */
#define MIG_MAX_PASSES 30

/* Auto-converge, QEMU's policy: when the guest dirtied more than half of
 * what a pass sent, twice in a row, its vCPUs are throttled to initial
 * percent, then increment more each time, up to max. */
struct mig_throttle {
	bool on; /* the auto-converge capability */
	unsigned initial, increment, max;
	unsigned pct;	   /* now; query-migrate's cpu-throttle-percentage */
	unsigned high;	   /* passes in a row that dirtied too much */
};
/* After a pass that sent sent bytes while the guest dirtied dirtied:
 * whether t->pct changed. */
bool mig_throttle_update(struct mig_throttle *t, uint64_t dirtied, uint64_t sent);

struct mig_precopy {
	struct mig_ram ram;
	/* OR into bits (one per page of ram) the pages the guest wrote since
	 * the previous call (the first call starts logging). 0 or -errno. */
	int (*sync_dirty)(void *opaque, uint64_t *bits);
	/* Stop the guest for the final pass. */
	void (*stop)(void *opaque);
	void *opaque;
	/* The VMM's own writes behind KVM's back (devices/dev_host.h,
	 * guest_mem), or NULL: touched is taken (and cleared) at each sync,
	 * its pages sent in that pass and the next; pinned pages all go in
	 * the final pass. */
	uint64_t *touched;
	const uint64_t *pinned;
	uint64_t downtime_ms;
	/* The guest does not run (virsh save stops it first): nothing to
	 * converge, pass 1 then the final pass (the pages devices touched). */
	bool guest_stopped;
	struct mig_throttle throttle;
	/* Throttle the vCPUs to pct percent (0: not at all). */
	void (*set_throttle)(void *opaque, unsigned pct);
	/* Progress, for query-migrate (read from another thread). */
	unsigned pass;
	uint64_t remaining, dirty_rate, mbps, expected_downtime_ms, dirty_syncs;
	void (*on_pass)(void *opaque, unsigned pass);
};
/* Wait (at most max_s, or until cancelled) until no more than slack bytes
 * of what was written wait in o's socket queue: the bytes left. The
 * pre-copy does so before it stops the guest. */
#define MIG_DRAIN_SLACK (64u << 10)
#define MIG_DRAIN_MAX_S 1.0
uint64_t mig_out_drain(const struct mig_out *o, uint64_t slack, double max_s);
/* Header and every pass, the final one with the guest stopped (p->stop
 * called). The caller then writes the state (mig_out_end). 0 or -1. */
int mig_precopy_run(struct mig_precopy *p, struct mig_out *o);
/* The policy: stop the guest now, with remaining bytes to send at
 * bytes_per_s, the downtime limit and the pass just sent? */
bool mig_precopy_converged(uint64_t remaining, double bytes_per_s, uint64_t downtime_ms,
			   unsigned pass);
uint64_t mig_bits_count(const uint64_t *bits, uint64_t nbits);

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
 * written (or the save failed). Loading freezes them too: thaw once the
 * vCPUs and interrupt controllers are loaded. */
int migration_virtio_save(struct machine *m, struct state_writer *w, char *err, size_t errlen);
/* The node of a hot-pluggable device or its backend: KIND@ID when it has
 * an id= (libvirt gives every device one, and a device hot-plugged on the
 * source comes back on the destination's command line with the same id,
 * wherever it lands in the order), else KIND@INDEX, its place on the
 * command line. IDs start with a letter, so the two never meet. */
#define MIGRATION_NODE_NAME_MAX 64
const char *migration_node_name(char *buf, size_t len, const char *kind, const char *id,
				unsigned index);
int migration_virtio_load(struct machine *m, const struct state_reader *devs, char *err,
			  size_t errlen);
void migration_virtio_thaw(struct machine *m);

/* ------------------------------------------------- migration.c */

enum migration_state {
	MIG_NONE,
	MIG_SETUP,
	MIG_ACTIVE,
	MIG_COMPLETED,
	MIG_FAILED,
	MIG_CANCELLING,
	MIG_CANCELLED,
};

/* migrate-set-parameters (QEMU's defaults) and migrate-set-capabilities;
 * a migration takes them when it starts. */
struct migration_params {
	uint64_t max_bandwidth;	 /* bytes/s */
	uint64_t downtime_limit; /* ms */
	bool events;		 /* the events are sent either way */
	bool return_path;	 /* the reply after the stream, see above */
	bool auto_converge;	 /* throttle a guest that dirties too fast */
	unsigned throttle_initial, throttle_increment, throttle_max; /* percent */
};

/* The last migration, for query-migrate (main thread; a live migration's
 * thread updates it as it goes). */
struct migration_status {
	enum migration_state state;
	struct mig_stats stats;
	uint64_t start_ms, total_ms, setup_ms, downtime_ms;
	uint64_t ram_total;
	struct mig_precopy *precopy; /* while a live migration runs */
	uint64_t dirty_syncs, mbps; /* the last live migration's, once ended */
	char error[256];
};
struct migration_params *migration_params(void);
const struct migration_status *migration_status(void);
/* A consistent copy for query-migrate, with the running pre-copy's
 * figures copied into *pre (s->precopy then points there): the migration
 * thread frees its own when it ends, at any moment. */
void migration_status_copy(struct migration_status *s, struct mig_precopy *pre);
const char *migration_state_name(enum migration_state s);
/* An outgoing or incoming migration is under way. */
bool migration_running(void);
/* QMP migrate: open uri ("exec:CMD", "file:PATH", "unix:PATH",
 * "tcp:HOST:PORT", "fd:N" an inherited fd or "fd:NAME" a getfd one) and start a migration thread, which copies the RAM
 * while the guest runs, then stops it (STOP) and writes the last pages and
 * the state; the source stays stopped. 0 once the thread runs, or -1 with
 * a one-line err (also for a device vmm cannot save yet). */
int migration_save(struct machine *m, const char *uri, char *err, size_t errlen);
/* QMP migrate_cancel: the thread stops at its next write; the guest runs
 * on (cancelled). */
void migration_cancel(struct machine *m);
/* The writable disk images back from a migration peer (block_activate):
 * on a failed migration's source, through migration_take_back, and the
 * destination once its stream is in. 0, or -1 with a one-line err. */
int migration_activate_images(struct machine *m, char *err, size_t errlen);
/* Before `cont` (QMP and HMP): refused on a destination whose stream is
 * not in; on a source whose migration completed, the disks and the
 * frozen virtio queues back. 0, or -1 with a one-line err. */
int migration_take_back(struct machine *m, char *err, size_t errlen);
/* migration_uri.c: open uri for the stream's direction (reading: for a
 * unix: or tcp: URI, listen and wait for the one peer): the fd, and *pid
 * for exec:; -1 with a one-line err. */
int mig_open_uri(const char *uri, bool writing, pid_t *pid, char *err, size_t errlen);
/* Close fd and, for exec:, wait for the command: 0 when it succeeded. */
int mig_close_uri(int fd, pid_t pid, const char *uri, char *err, size_t errlen);
/* Whether opening uri for reading waits for a peer (unix:, tcp:); such
 * a URI's listening socket (QMP migrate-incoming answers once the source
 * can connect), and its one peer (closes lfd; -1 with err). */
bool mig_uri_waits(const char *uri);
int mig_listen_uri(const char *uri, char *err, size_t errlen);
int mig_accept_uri(int lfd, const char *uri, char *err, size_t errlen);
/* -incoming URI / migrate-incoming: read the stream, load every device
 * and vCPU, run unless -S. 0, or -1 with a one-line err. */
int migration_incoming(struct machine *m, const char *uri, char *err, size_t errlen);
/* QMP migrate-incoming: the same on a thread, so that the monitor answers
 * while the source sends (a live migration takes as long as it runs);
 * MIGRATION events and query-migrate tell how it went. 0 once it is
 * under way (a unix: or tcp: URI listens then), or -1 with err. When it
 * fails later vmm exits with status 1 if exit_on_error (QEMU's default). */
int migration_incoming_start(struct machine *m, const char *uri, bool exit_on_error, char *err,
			     size_t errlen);

#endif /* VMM_MIGRATION_H */
