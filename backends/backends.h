/* backends.h — the host side the device models do their I/O through:
 * the main thread's event loop, disk images (with the io_uring engine) and
 * the network backends (-netdev user|tap) behind struct netdev.
 *
 * One library (libbackends.a), one public header: a device model sees
 * struct block_dev and struct netdev and nothing of how they are served
 * (netstack/usernet, TAP, io_uring stay behind this header). */
#ifndef VMM_BACKENDS_BACKENDS_H
#define VMM_BACKENDS_BACKENDS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ----------------------------------------------------------- event loop */

/* The main thread's loop: file descriptors and timers. Callbacks run on the
 * main thread; a device's callback takes the device's lock itself. */
struct evloop;
struct ev_timer;

enum { EV_READ = 1, EV_WRITE = 2 };
typedef void (*ev_fd_fn)(void *opaque, int fd, unsigned events);
typedef void (*ev_timer_fn)(void *opaque);

struct evloop *evloop_new(void);
void evloop_free(struct evloop *loop);
/* Watch fd for events (EV_READ|EV_WRITE); re-adding an fd changes its mask. */
int evloop_add_fd(struct evloop *loop, int fd, unsigned events, ev_fd_fn fn, void *opaque);
int evloop_del_fd(struct evloop *loop, int fd);
struct ev_timer *ev_timer_new(struct evloop *loop, ev_timer_fn fn, void *opaque);
/* Fire after delay_ns, then every period_ns when non-zero. Safe from any thread. */
void ev_timer_arm(struct ev_timer *t, uint64_t delay_ns, uint64_t period_ns);
void ev_timer_disarm(struct ev_timer *t);
void ev_timer_free(struct ev_timer *t);
/* Run until evloop_stop (callable from any thread). */
int evloop_run(struct evloop *loop);
void evloop_stop(struct evloop *loop);
/* Run fn(opaque) on the main thread soon; safe from any thread. */
int evloop_call(struct evloop *loop, void (*fn)(void *), void *opaque);
uint64_t clock_now_ns(void); /* CLOCK_MONOTONIC */

/* Raw disk images: the one backend IDE and virtio-blk share. I/O is in
 * 512-byte sectors. With snapshot, writes go to an unlinked temporary
 * overlay and the image is opened read-only. */
#define BLOCK_SECTOR_SIZE 512
/* QEMU's cache modes: writeback (page cache; flush = fdatasync),
 * writethrough (O_DSYNC), unsafe (flush does nothing), none (O_DIRECT;
 * flush = fdatasync), directsync (O_DIRECT | O_DSYNC). */
enum block_cache {
	BLOCK_CACHE_WRITEBACK,
	BLOCK_CACHE_WRITETHROUGH,
	BLOCK_CACHE_UNSAFE,
	BLOCK_CACHE_NONE,
	BLOCK_CACHE_DIRECTSYNC,
};
/* BLOCK_FORMAT_AUTO probes as QEMU does: qcow2 by its magic, else raw
 * (and then the guest may not write a qcow2 header into sector 0). */
enum block_format { BLOCK_FORMAT_AUTO, BLOCK_FORMAT_RAW, BLOCK_FORMAT_QCOW2 };
struct block_opts {
	const char *path;
	bool read_only;
	bool snapshot;
	enum block_cache cache;
	enum block_format format;
	bool no_lock; /* file.locking=off: no QEMU-compatible OFD locks */
	/* an incoming migration's image, which the source still writes: no
	 * locks and no qcow2 header writes until block_activate */
	bool inactive;
};
struct block_dev;
/* NULL with a one-line reason in err (missing, unreadable, a directory,
 * a size that is zero or not a multiple of 512). */
struct block_dev *block_open(const struct block_opts *o, char *err, size_t errlen);
/* Live migration on one host: the source hands a writable image over
 * (block_inactivate: flush, qcow2's metadata written and closed, the
 * locks dropped) and the destination takes it (block_activate: the locks,
 * qcow2's metadata read afresh, as the source left it). 0, or -1 with a
 * one-line err (another process holds the image). No I/O may run on b
 * meanwhile: the guest is stopped. */
int block_inactivate(struct block_dev *b, char *err, size_t errlen);
int block_activate(struct block_dev *b, char *err, size_t errlen);
void block_close(struct block_dev *b);
uint64_t block_sectors(const struct block_dev *b);
bool block_read_only(const struct block_dev *b);
const char *block_path(const struct block_dev *b);
const char *block_format_name(const struct block_dev *b); /* "raw", "qcow2" */
const char *block_backing_file(const struct block_dev *b); /* as the image names it; NULL: none */
unsigned block_backing_depth(const struct block_dev *b);
/* 0, -ERANGE beyond the end, -EROFS, or -errno from the host. */
int block_read(struct block_dev *b, uint64_t sector, void *buf, uint32_t count);
int block_write(struct block_dev *b, uint64_t sector, const void *buf, uint32_t count);
int block_flush(struct block_dev *b);
/* Vectored I/O straight into (guest) buffers; iov is consumed (changed).
 * Same returns as block_read/block_write. */
struct iovec;
int block_readv(struct block_dev *b, uint64_t sector, struct iovec *iov, int iovcnt);
int block_writev(struct block_dev *b, uint64_t sector, struct iovec *iov, int iovcnt);
/* Deallocate (punch a hole: reads return zeroes) / zero count sectors;
 * write_zeroes with unmap may punch a hole. Same returns. */
int block_discard(struct block_dev *b, uint64_t sector, uint64_t count);
int block_write_zeroes(struct block_dev *b, uint64_t sector, uint64_t count, bool unmap);
enum block_cache block_cache_mode(const struct block_dev *b);
const char *block_cache_name(enum block_cache c); /* "writeback", ... */
struct block_stats {
	uint64_t rd_bytes, wr_bytes, rd_ops, wr_ops, flush_ops, discard_ops, failed_ops;
};
void block_get_stats(struct block_dev *b, struct block_stats *s);
/* For an asynchronous engine (block_aio.c) issuing requests on the file
 * itself. block_direct_target: where a vectored request can go as it is
 * (writable, in range, whole sectors, no -snapshot overlay, buffers
 * O_DIRECT accepts; for a qcow2, clusters already allocated that need
 * no metadata change, or whole clusters it allocates now, in a few runs
 * in the file, or a part of new clusters with the rest copied into
 * them: t->cow; a read's runs may also be in its backing files,
 * zeroes, or compressed clusters to decode: t->z): 0 with *t set, and
 * the engine calls block_direct_done
 * with t (or NULL but for a qcow2 allocating request) and the result
 * when it is over (the request's result: a qcow2 names the clusters it
 * allocated then; the engine frees t->cow.buf after); -EAGAIN: a write
 * touching clusters a request in flight is allocating, to issue again
 * once one completes; else -1: use block_readv/block_writev.
 * block_account/_failed: count a request served that way in
 * block_get_stats. block_flush_fd: counts a flush (a qcow2 writes its
 * metadata out here); the descriptor to fdatasync, or -1 when there is
 * nothing (more) to make durable. */
#define BLOCK_TARGET_RUNS 16
#define BLOCK_COW_READS 8
/* A write that fills only part of the clusters it allocates: the bytes
 * before it in its first cluster (head) and after it in its last (tail)
 * come from what the guest saw there (the backing file, zeroes...),
 * gathered in buf (head at 0, tail at tail_at), some filled already,
 * the rest read first (read[i]: len bytes of fd at off into buf + at).
 * The runs then carry head, the request's bytes and tail, in order. */
struct block_cow {
	uint8_t *buf; /* NULL: no copy-on-write */
	size_t head, tail, tail_at;
	int nreads;
	struct block_cow_read {
		int fd;
		bool zero_past_eof;
		uint64_t off;
		size_t len, at;
	} read[BLOCK_COW_READS];
};
/* A run of a read that is part of a compressed qcow2 cluster: zlen
 * bytes at off[i] of fd[i] are the compressed data, which the engine's
 * decode threads (block/block_decode.h) turn into the cluster, of which
 * the request's len[i] bytes start at skip. */
struct block_zrun {
	void *image;	/* NULL: a plain run */
	uint64_t entry; /* the cluster's L2 entry */
	size_t zlen, skip;
};
struct block_target {
	bool zero_past_eof; /* a read past the file's end gives zeroes, not -EIO */
	bool alloc;	    /* its clusters are named once it is written */
	uint64_t guest_off;
	/* the request's bytes, in order: len[i] at off[i] of fd[i] (-1:
	 * zeroes, a read's part filled at once) */
	int runs;
	int fd[BLOCK_TARGET_RUNS];
	uint64_t off[BLOCK_TARGET_RUNS];
	size_t len[BLOCK_TARGET_RUNS];
	struct block_zrun z[BLOCK_TARGET_RUNS];
	struct block_cow cow;
};
int block_direct_target(struct block_dev *b, bool write, uint64_t sector, const struct iovec *iov,
			int iovcnt, struct block_target *t);
int block_direct_done(struct block_dev *b, const struct block_target *t, int res);
void block_account(struct block_dev *b, bool write, uint64_t bytes);
void block_account_failed(struct block_dev *b);
int block_flush_fd(struct block_dev *b); /* another negative: -errno of a flush done here */
/* The fdatasync of block_flush_fd's descriptor is over (res): the flush's
 * result (a qcow2 writes out the metadata of what completed before). */
int block_flush_fd_done(struct block_dev *b, int res);

/* block_aio.c: asynchronous requests on a block_dev through io_uring
 * (QEMU's aio=io_uring), a request's own buffers straight to the file.
 * Queue any number, hand them to the kernel with one block_aio_submit,
 * and reap the completions when block_aio_fd (an eventfd) is readable.
 * Not thread-safe: one thread (a device's I/O thread) owns it. */
enum block_aio_mode { BLOCK_AIO_DEFAULT, BLOCK_AIO_THREADS, BLOCK_AIO_IO_URING };
const char *block_aio_mode_name(enum block_aio_mode m); /* "threads", "io_uring" */
struct block_aio;
/* NULL when the kernel refuses io_uring (seccomp, old kernel, limits):
 * said once per process on stderr; the caller serves requests itself. */
struct block_aio *block_aio_new(struct block_dev *b, unsigned depth);
/* Waits for what is in flight, dropping the completions. */
void block_aio_free(struct block_aio *a);
int block_aio_fd(const struct block_aio *a);
/* Queue a read/write of iov (copied; the buffers must stay valid until
 * the completion): 0, or -1 when block_direct_target refuses it (the
 * caller uses block_readv/block_writev). A write to clusters another
 * request in flight is allocating waits here for it (QEMU's rule: one
 * allocation per cluster at a time) and is issued, or served at once
 * by the engine, when that one completes. */
int block_aio_rw(struct block_aio *a, bool write, uint64_t sector, const struct iovec *iov,
		 int iovcnt, void *cookie);
/* Queue a flush (fdatasync) that starts only after every request queued
 * before it has completed: 0, or 1 when there is nothing to make
 * durable (the flush succeeded at once). */
int block_aio_flush(struct block_aio *a, void *cookie);
void block_aio_submit(struct block_aio *a);
/* Call done(opaque, cookie, 0 or -errno) for every completed request:
 * how many. */
unsigned block_aio_reap(struct block_aio *a, void (*done)(void *opaque, void *cookie, int r),
			void *opaque);
unsigned block_aio_in_flight(const struct block_aio *a);
/* Wait until nothing is in flight, reaping as block_aio_reap does. */
void block_aio_wait_all(struct block_aio *a, void (*done)(void *opaque, void *cookie, int r),
			void *opaque);
/* Tests only: hook(opaque, res) replaces each completion's result before
 * the engine looks at it (a short transfer, -EAGAIN, ...). */
void block_aio_set_res_hook(struct block_aio *a, int (*hook)(void *opaque, int res), void *opaque);

/* -------------------------------------------------- network backends
 * Network backends (-netdev user|tap) behind one small interface. A NIC
 * (virtio-net) hands over the guest's frames with their virtio-net header
 * (the offload request: partial checksum, TSO) and takes the host's
 * frames through its rx callback. Everything runs on the NIC's I/O
 * thread (under its transport lock): send/flush when the guest
 * transmits, poll when fd is readable or timeout_ms passed. */

struct iovec;
struct virtio_net_hdr;
struct netdev;

/* Offloads a backend takes on send (the NIC offers them to the guest
 * as CSUM, HOST_TSO4/6, HOST_ECN). */
enum {
	NETDEV_OFF_CSUM = 1,
	NETDEV_OFF_TSO4 = 2,
	NETDEV_OFF_TSO6 = 4,
	NETDEV_OFF_ECN = 8,
};

/* A frame for the guest. hdr: its offload state (NEEDS_CSUM/GSO from a
 * TAP with vnet_hdr, DATA_VALID from user networking), which the NIC
 * checks against what the guest negotiated. The NIC copies it: into
 * the guest's buffers, into a bounded backlog while they are full, or
 * it drops it (counted). A backend that can hold frames back (a TAP's
 * kernel queue) asks can_rx first. */
typedef void (*netdev_rx_fn)(void *opaque, unsigned q, const struct virtio_net_hdr *hdr,
			     const void *frame, size_t len);

struct netdev_ops {
	const char *type; /* QEMU's: "user", "tap" */
	/* One guest frame of len bytes in iov, checked by the NIC, from its
	 * queue pair q (< queues): 0, or -errno (dropped, counted by the
	 * NIC). */
	int (*send)(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		    const struct iovec *iov, int iovcnt, size_t len);
	/* The end of a batch of sends: relay to the host now (optional). */
	void (*flush)(struct netdev *nd);
	int (*fd)(struct netdev *nd);	      /* readable when poll has work; -1 */
	int (*timeout_ms)(struct netdev *nd); /* poll due in ms; -1 none */
	void (*poll)(struct netdev *nd);      /* host side work; frames to rx */
	/* The receive offloads the guest accepted (NETDEV_OFF_*: GUEST_CSUM,
	 * GUEST_TSO4/6, GUEST_ECN), for a backend that can produce them. */
	void (*set_rx_offloads)(struct netdev *nd, unsigned off);
	/* QEMU's `info network` details: "net=10.0.2.0,restrict=off". */
	int (*info)(struct netdev *nd, char *buf, size_t len);
	/* For a backend with port forwarding (user networking; NULL
	 * otherwise): QEMU's hostfwd_add/hostfwd_remove at run time. rule:
	 * "tcp|udp:[HADDR]:HPORT-[GADDR]:GPORT". 0, or -1 with why. Called
	 * with the NIC quiet (its transport lock held). */
	int (*hostfwd)(struct netdev *nd, bool add, const char *rule, char *why, size_t len);
	/* For a backend that keeps flows and counters (NULL otherwise):
	 * `info usernet`'s lines, newline-separated, in a malloc'd string
	 * (NULL: out of memory). Called with the NIC quiet. */
	char *(*stats)(struct netdev *nd);
	/* For a backend with guest-visible state (NULL otherwise): a
	 * snapshot for migration in a malloc'd buffer, and its load into a
	 * backend just made with the same options; -ENOTSUP when it keeps
	 * none. 0, or -errno with why. Called with the NIC quiet. */
	int (*save)(struct netdev *nd, void **buf, size_t *len, char *why, size_t wlen);
	int (*load)(struct netdev *nd, const void *buf, size_t len, char *why, size_t wlen);
	/* Within one host (NULL otherwise): save also gives the host sockets
	 * its connections run on (a malloc'd array; they stay the backend's),
	 * load takes them in that order (it dups what it uses; a connection
	 * without its fd is reset as load does), and hand_over lets go of
	 * them once the destination has them: nothing may follow but free.
	 * Until hand_over the saving backend runs on as before. */
	int (*save_fds)(struct netdev *nd, void **buf, size_t *len, int **fds, unsigned *nfds,
			char *why, size_t wlen);
	int (*load_fds)(struct netdev *nd, const void *buf, size_t len, const int *fds,
			unsigned nfds, char *why, size_t wlen);
	void (*hand_over)(struct netdev *nd);
	void (*free)(struct netdev *nd);
};

struct netdev {
	const struct netdev_ops *ops;
	char id[32];
	unsigned offloads; /* NETDEV_OFF_* taken on send */
	/* Queue pairs (>= 1): a multiqueue TAP's queues, each its own fd in
	 * the host kernel, so flows spread as the guest's vCPUs spread them;
	 * the NIC offers VIRTIO_NET_F_MQ with that many (mq=on). */
	unsigned queues;
	/* Its fd stays readable until it reads: the NIC stops watching it
	 * while can_rx is false (a TAP), instead of backlogging. */
	bool rx_flow_control;
	/* Receive moderation that suits it: while its fd signals in a stream
	 * (< 1 ms apart) the NIC waits this long before polling it, so a
	 * wake-up carries a batch (0: none). bench/README.md, virtio-net. */
	unsigned coalesce_us;
	/* Set by the NIC that uses it. */
	netdev_rx_fn rx; /* q: the backend queue it came from */
	bool (*can_rx)(void *opaque, unsigned q); /* room for a frame now? */
	void *rx_opaque;
};

void netdev_free(struct netdev *nd);

/* -netdev user,id=ID,OPTIONS (QEMU's: net=A/LEN, host=, dns=,
 * dhcpstart=, hostfwd= (repeatable), restrict=on|off, ipv6=on|off,
 * ipv6-net=, ipv6-host=, ipv6-dns=, hostname=, domainname=, plus
 * impl=netstack|slirp). opts is the text after "user," (id= included
 * or not). incoming: a migration's destination, whose hostfwd ports are
 * bound when the state comes (the source's sockets when they came along,
 * usernet.h's hostfwd_wait). NULL with a one-line reason in err. */
struct netdev *netdev_user_new(const char *id, const char *opts, bool incoming, char *err,
			       size_t errlen);
/* The same options checked without opening anything (vmm does it before
 * /dev/kvm): 0, or -1 with netdev_user_new's message. */
int netdev_user_check(const char *opts, char *err, size_t errlen);
/* -netdev tap,id=ID,ifname=NAME,script=no,downscript=no[,vnet_hdr=on|off]. */
struct netdev *netdev_tap_new(const char *id, const char *opts, char *err, size_t errlen);

#endif /* VMM_BACKENDS_BACKENDS_H */
