/* virtio.h — virtio 1.x devices: split virtqueues (queue.c), the modern
 * PCI transport with MSI-X (pci.c, msix.c) and the devices on it (blk.c,
 * net.c, hwsim.c, rng.c, console.c, balloon.c).
 *
 * The layouts come from Linux's UAPI headers (linux-libc-dev). Everything
 * in a ring is guest-controlled: queue.c validates each descriptor before
 * the device sees a host pointer, and a malformed queue only marks its
 * device DEVICE_NEEDS_RESET.
 *
 * Threads: register accesses arrive on vCPU threads; each device serves
 * its queues on its own I/O thread, woken by ioeventfds (KVM signals them
 * on the guest's doorbell write, no exit to userspace), and completes
 * through irqfds on MSI routes (dev_fast_ops). Without those the bus
 * handlers kick the thread and MSIs go through irq_sink.
 */
#ifndef VMM_DEVICES_VIRTIO_H
#define VMM_DEVICES_VIRTIO_H

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"

struct state_writer;
struct state_reader;
struct state_node;

/* ------------------------------------------------------------ queue.c */

#define VIRTQ_MAX_SIZE 1024
/* Longest chain accepted (direct plus one indirect table). */
#define VIRTQ_MAX_CHAIN VIRTQ_MAX_SIZE

/* One split virtqueue. The transport fills size, the addresses and
 * msix_vector from the driver's writes; virtq_start maps the rings. */
struct virtq {
	uint16_t max_size, size;
	uint16_t msix_vector;
	bool enabled;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	/* device side, valid after virtq_start */
	const struct guest_mem *mem;
	struct vring vr; /* host pointers to the three rings */
	bool event_idx, indirect;
	uint16_t last_avail; /* next avail entry to take */
	uint16_t used_idx;   /* next used entry to fill */
	uint16_t signalled_used;
	bool signalled_valid;
	const char *broken; /* why the queue stopped, or NULL */
};

/* A host view of one descriptor chain: the device-readable buffers
 * first (n_out), then the device-writable ones (n_in). */
struct virtq_buf {
	uint8_t *ptr;
	uint32_t len;
};

struct virtq_chain {
	uint16_t head;
	unsigned n_out, n_in;
	uint64_t out_len, in_len;
	struct virtq_buf buf[VIRTQ_MAX_CHAIN];
};

/* Power-on state: disabled, size max_size, no vector. */
void virtq_reset(struct virtq *q, uint16_t max_size);
/* Check and map the rings the driver configured: 0, or -EINVAL with
 * q->broken set (size not a power of two, rings outside RAM, misaligned). */
int virtq_start(struct virtq *q, const struct guest_mem *mem, bool event_idx, bool indirect);
/* A snapshot's queue (size and addresses set): map the rings and take
 * the indices after checking them against the rings in guest RAM: 0, or
 * -EINVAL with q->broken saying why. */
int virtq_restore(struct virtq *q, const struct guest_mem *mem, bool event_idx, bool indirect,
		  uint16_t last_avail, uint16_t used_idx);
/* Take the next available chain: 1, 0 when none, -EINVAL when the ring
 * is malformed (q->broken says why; the queue stays stopped). */
int virtq_pop(struct virtq *q, struct virtq_chain *c);
/* Give back the last n chains popped, unused (a receive that did not
 * fit): the next pops return them again. */
void virtq_unpop(struct virtq *q, uint16_t n);
/* Return a chain with len bytes written to its writable buffers. */
void virtq_push(struct virtq *q, uint16_t head, uint32_t len);
/* After pushes: does the driver want an interrupt (EVENT_IDX or
 * VRING_AVAIL_F_NO_INTERRUPT)? */
bool virtq_should_notify(struct virtq *q);
/* Ask the driver for doorbells (enable) or not while draining. */
void virtq_set_notify(struct virtq *q, bool enable);
bool virtq_has_avail(const struct virtq *q);
/* Copy from the readable part at offset off / into the writable part:
 * bytes copied (short at the end of the chain). */
size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst, size_t len);
size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off, const void *src, size_t len);

/* ------------------------------------------------------------- msix.c */

/* An MSI-X table and PBA (in a BAR) plus the capability that enables
 * them. Vectors go out through irqfds on MSI routes when the host has
 * them, else through irq_sink.msi. */
struct msix;
/* Vectors a table can hold: one PBA word. */
#define MSIX_MAX_VECTORS 64

struct msix *msix_new(struct dev_host *host, struct pci_dev *d, unsigned nvec, unsigned bar,
		      uint32_t table_off, uint32_t pba_off);
void msix_free(struct msix *mx);
/* The BAR's handlers (table and PBA). */
extern const struct io_ops msix_bar_ops;
/* From the device's cfg_written: the capability's control word changed. */
void msix_cfg_written(struct msix *mx, unsigned off, unsigned size);
bool msix_enabled(struct msix *mx);
/* Snapshots: the table and PBA ("msix-table", "msix-pba"); load after the
 * configuration space (its control word enables MSI-X). */
void msix_save(struct msix *mx, struct state_writer *w);
int msix_load(struct msix *mx, struct state_node *n);
unsigned msix_vectors(const struct msix *mx);
/* Deliver vector (or set its pending bit while masked). */
void msix_notify(struct msix *mx, unsigned vector);
/* Function reset: every vector masked, nothing pending, disabled. */
void msix_reset(struct msix *mx);
/* "MSI-X: enabled, 3 vectors (3 unmasked)" for `info pci`. */
size_t msix_info(struct msix *mx, char *buf, size_t len);

/* -------------------------------------------------------------- pci.c */

#define VIRTIO_MAX_QUEUES 64
#define VIRTIO_HANDLE_LATER 1
#define VIRTIO_REQ_PENDING 2
#define VIRTIO_REQ_HELD 3

struct virtio_pci;

/* What a device plugs into the transport. */
struct virtio_dev_ops {
	uint16_t device_id;  /* VIRTIO_ID_* */
	uint32_t class_code; /* PCI class << 16 | subclass << 8 */
	uint64_t features;   /* device-specific bits; the transport adds its own */
	unsigned num_queues;
	uint16_t queue_size;
	unsigned config_len; /* device-specific config bytes */
	/* Serve one chain of queue qi (I/O thread, transport lock held).
	 * *written = bytes put in the writable buffers. 0, or -EINVAL when
	 * the request is malformed beyond an error status (the device then
	 * needs a reset; *why says why), or VIRTIO_HANDLE_LATER: nothing for
	 * this buffer yet, leave it (and the rest) available until the device
	 * kicks the queue (virtio_pci_kick), or VIRTIO_REQ_PENDING: the device
	 * keeps the chain's buffers (host pointers, valid until a reset) and
	 * completes it later with virtio_pci_complete, or VIRTIO_REQ_HELD:
	 * the device keeps the chain as part of its own state (the balloon's
	 * stats buffer, returned at the next poll with virtq_push): not a
	 * request in flight, so a snapshot does not wait for it; the device
	 * saves its head instead. */
	int (*handle)(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
		      const char **why);
	/* After each pass over queue qi's available chains (optional): hand
	 * what handle queued to the backend, once per batch. */
	void (*submit)(void *opaque, unsigned qi);
	/* Driver write to the device config (optional). */
	void (*config_write)(void *opaque, unsigned off, const void *data, unsigned size);
	/* Device reset by the driver or the machine (transport lock held). */
	void (*reset)(void *opaque);
	/* Optional, for devices whose queues are not request/response
	 * (virtio-net's receive queue fills from a backend): serve queue qi
	 * itself on a doorbell (I/O thread, lock held, queue live), popping
	 * with virtio_pci_queue() and ending with virtio_pci_notify().
	 * handle is then unused. */
	void (*serve)(void *opaque, unsigned qi);
	/* Optional backend work on the I/O thread: io_fd (asked once at
	 * creation; -1 none) is watched beside the doorbells; io_event runs
	 * (lock held) when it is readable, when io_timeout_ms (asked before
	 * every wait, lock held; -1 none) passed, or after virtio_pci_wake. */
	int (*io_fd)(void *opaque);
	int (*io_timeout_ms)(void *opaque);
	void (*io_event)(void *opaque);
	/* Snapshots (optional): put the device's own registers into its
	 * node / take them back (transport lock held; load checks each value
	 * and fails with state_node_fail). */
	void (*save)(void *opaque, struct state_writer *w);
	int (*load)(void *opaque, struct state_node *n);
	/* While io events stream in (< 1 ms apart), wait this long before
	 * serving one, so each wake-up serves a batch (0: never). */
	unsigned io_coalesce_us;
};

/* A virtio-pci function at devfn (or the first free slot when devfn < 0)
 * with its I/O thread. config points at config_len bytes the device owns
 * (read by the guest under the transport lock). NULL with err set. */
struct virtio_pci *virtio_pci_new(struct dev_host *host, struct pci_bus *bus, int devfn,
				  const char *name, const struct virtio_dev_ops *ops, void *opaque,
				  const void *config, char *err, size_t errlen);
void virtio_pci_free(struct virtio_pci *vp);
/* The features the driver accepted (valid once FEATURES_OK is set). */
uint64_t virtio_pci_features(const struct virtio_pci *vp);
uint8_t virtio_pci_status(struct virtio_pci *vp);
uint8_t virtio_pci_devfn(const struct virtio_pci *vp);
/* The device config changed: new generation, config interrupt. */
void virtio_pci_config_changed(struct virtio_pci *vp);
/* Serve queue qi now, as a doorbell would (tests, no ioeventfd). */
void virtio_pci_kick(struct virtio_pci *vp, unsigned qi);
/* For serve/io_event (transport lock held): queue qi when it may be
 * used (driver ready, enabled, not broken), else NULL; an interrupt for
 * it if the driver wants one after pushes; mark the device broken. */
struct virtq *virtio_pci_queue(struct virtio_pci *vp, unsigned qi);
/* For a device's load: the queue as loaded if the driver uses it, live or
 * still frozen (loading freezes the queues until the machine is loaded). */
struct virtq *virtio_pci_loaded_queue(struct virtio_pci *vp, unsigned qi);
void virtio_pci_notify(struct virtio_pci *vp, unsigned qi);
void virtio_pci_fail(struct virtio_pci *vp, unsigned qi, const char *why);
/* Watch io_fd or not (a backend with nowhere to put what it reads). */
void virtio_pci_io_watch(struct virtio_pci *vp, bool on);
/* Any thread: run io_event soon (and ask io_timeout_ms again). */
void virtio_pci_wake(struct virtio_pci *vp);
/* Other threads touching what serve/io_event use (the monitor). */
void virtio_pci_lock(struct virtio_pci *vp);
void virtio_pci_unlock(struct virtio_pci *vp);
/* Call ready(opaque) on the I/O thread, transport lock held, whenever fd
 * is readable (a backend's completion eventfd). 0 or -errno. */
int virtio_pci_watch(struct virtio_pci *vp, int fd, void (*ready)(void *opaque), void *opaque);
/* From ready: a pending chain of queue qi is done. The
 * interrupts go out after ready returns, at most one per queue, as the
 * driver asked (EVENT_IDX). Dropped when the queue was reset or broke. */
void virtio_pci_complete(struct virtio_pci *vp, unsigned qi, uint16_t head, uint32_t written);
/* Snapshots (pci_state.c) of a stopped machine: the configuration space,
 * the transport's registers, MSI-X and each queue, then the device's own
 * (ops->save/load), in node `name` under w's current node / r. Saving
 * waits for the requests in flight and then freezes the queues until
 * virtio_pci_thaw (the guest RAM written after the tree must not change
 * under it): 0, or -1 with err. Loading checks every value and the
 * queues against the guest RAM already loaded. */
int virtio_pci_save(struct virtio_pci *vp, struct state_writer *w, const char *name, char *err,
		    size_t errlen);
int virtio_pci_load(struct virtio_pci *vp, const struct state_reader *r, const char *name,
		    char *err, size_t errlen);
void virtio_pci_thaw(struct virtio_pci *vp);
/* Loading a machine: the queues stay frozen from before the device loads
 * until virtio_pci_thaw, once the interrupt controllers are loaded too (an
 * interrupt raised earlier is overwritten by their loaded state, and the
 * guest would never look at what the device wrote). */
void virtio_pci_freeze(struct virtio_pci *vp);
/* Whether the queues are frozen (a device holds its output meanwhile). */
bool virtio_pci_frozen(struct virtio_pci *vp);
/* The BAR 4 (virtio structures) offsets, for tests. */
#define VIRTIO_PCI_COMMON_OFF 0x0000
#define VIRTIO_PCI_ISR_OFF 0x1000
#define VIRTIO_PCI_DEVICE_OFF 0x2000
#define VIRTIO_PCI_NOTIFY_OFF 0x3000
#define VIRTIO_PCI_NOTIFY_MULT 4
#define VIRTIO_PCI_BAR_SIZE 0x4000
#define VIRTIO_PCI_MSIX_BAR 1
#define VIRTIO_PCI_CFG_BAR 4

/* -------------------------------------------------------------- blk.c */

struct virtio_blk_opts {
	struct block_dev *disk; /* owned by the caller; outlives the device */
	const char *serial;	/* GET_ID answer, or NULL */
	unsigned num_queues;	/* 1..VIRTIO_MAX_QUEUES */
	int devfn;		/* < 0: first free slot */
	const char *id;		/* node name for `info block` */
	enum block_aio_mode aio; /* DEFAULT: io_uring where the kernel allows it */
};

struct virtio_blk;
struct virtio_blk *virtio_blk_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_blk_opts *o, char *err, size_t errlen);
void virtio_blk_free(struct virtio_blk *vb);
struct virtio_pci *virtio_blk_transport(struct virtio_blk *vb);
/* The engine serving its requests: io_uring, or threads (its I/O thread
 * with blocking calls, also where io_uring was refused). */
enum block_aio_mode virtio_blk_aio(const struct virtio_blk *vb);

/* -------------------------------------------------------------- net.c */

struct virtio_net_opts {
	struct netdev *netdev; /* owned by the caller; outlives the device */
	uint8_t mac[6];
	unsigned mtu; /* 0: 1500 */
	int devfn;    /* < 0: first free slot */
	const char *id; /* `info network` name */
	bool mq;	/* mq=on: as many queue pairs as the netdev has */
};

#define VIRTIO_NET_STAT_PAIRS 8 /* >= NET_MAX_PAIRS */

/* Counters (`info network`): what was dropped and why. */
struct virtio_net_stats {
	uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
	uint64_t tx_dropped;   /* link down, backend refused */
	uint64_t tx_bad_hdr;   /* virtio_net_check_hdr failed */
	uint64_t tx_bad_chain; /* shorter than the header */
	uint64_t rx_dropped;   /* link down, driver not ready, backlog full */
	uint64_t rx_filtered;  /* RX mode / MAC table */
	uint64_t rx_too_big;   /* does not fit the buffers / offload not negotiated */
	uint64_t ctrl_bad;     /* control commands answered VIRTIO_NET_ERR */
	/* per queue pair (multiqueue): frames each way */
	uint64_t pair_tx_frames[VIRTIO_NET_STAT_PAIRS], pair_rx_frames[VIRTIO_NET_STAT_PAIRS];
};

struct virtio_net_info {
	uint8_t mac[6];
	bool link_up;
	unsigned max_pairs, pairs; /* queue pairs offered, in use */
	struct virtio_net_stats stats;
};

struct virtio_net;
struct virtio_net *virtio_net_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_net_opts *o, char *err, size_t errlen);
void virtio_net_free(struct virtio_net *n);
struct virtio_pci *virtio_net_transport(struct virtio_net *n);
struct netdev *virtio_net_netdev(struct virtio_net *n);
const char *virtio_net_id(const struct virtio_net *n);
/* `set_link`: STATUS and a config interrupt. Any thread. */
void virtio_net_set_link(struct virtio_net *n, bool up);
void virtio_net_get_info(struct virtio_net *n, struct virtio_net_info *info);
/* Check a transmitted frame's header (len: the frame after it) against
 * the negotiated features and the MTU: 0, or -EINVAL with *why. */
int virtio_net_check_hdr(const struct virtio_net_hdr *h, size_t len, uint64_t features,
			 unsigned mtu, const char **why);

/* ------------------------------------------------------------ hwsim.c */

/* virtio-wlan-pci: mac80211_hwsim's virtio transport. The device moves
 * whole messages; the medium (wlan/) interprets them. */
#define VIRTIO_HWSIM_MAX_MSG 4096

struct virtio_hwsim_opts {
	int devfn; /* < 0: first free slot */
	/* A message the guest sent (I/O thread; the transport lock is held,
	 * so send may call virtio_hwsim_receive but nothing that waits for
	 * this device). */
	void (*send)(void *opaque, const void *msg, size_t len);
	void *opaque;
};

struct virtio_hwsim_stats {
	uint64_t tx, rx;	 /* messages from / to the guest */
	uint64_t tx_oversize; /* empty or longer than VIRTIO_HWSIM_MAX_MSG */
	uint64_t rx_overflow; /* outbox full */
	uint64_t rx_too_big;	 /* longer than the guest's receive buffer */
};

struct virtio_hwsim;
struct virtio_hwsim *virtio_hwsim_new(struct dev_host *host, struct pci_bus *bus,
				      const struct virtio_hwsim_opts *o, char *err, size_t errlen);
void virtio_hwsim_free(struct virtio_hwsim *h);
/* Queue a message for the guest (any thread): false when the outbox is full. */
bool virtio_hwsim_receive(struct virtio_hwsim *h, const void *msg, size_t len);
void virtio_hwsim_stats(struct virtio_hwsim *h, struct virtio_hwsim_stats *st);
struct virtio_pci *virtio_hwsim_transport(struct virtio_hwsim *h);

/* -------------------------------------------------------------- rng.c */

/* virtio-rng-pci: random bytes for the guest's hw_random, rate-limited
 * like QEMU's (max-bytes per period). */
struct virtio_rng_opts {
	int fd;		    /* the source (rng-random), non-blocking; the device
			     * owns it from now on. -1: getrandom(2) (rng-builtin) */
	uint64_t max_bytes; /* per period (QEMU's default: INT64_MAX) */
	uint32_t period_ms; /* > 0 (QEMU's default: 65536) */
	int devfn;	    /* < 0: first free slot */
};

struct virtio_rng_stats {
	uint64_t bytes, requests; /* handed to the guest */
	uint64_t quota_waits;	  /* a buffer found the period's quota spent */
	uint64_t source_waits;	  /* the source had nothing to read */
	uint64_t bad_requests;	  /* malformed chains (then the device needs a reset) */
};

struct virtio_rng;
struct virtio_rng *virtio_rng_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_rng_opts *o, char *err, size_t errlen);
void virtio_rng_free(struct virtio_rng *r);
struct virtio_pci *virtio_rng_transport(struct virtio_rng *r);
void virtio_rng_get_stats(struct virtio_rng *r, struct virtio_rng_stats *st);

/* ---------------------------------------------------------- console.c */

/* virtio-serial-pci: ports (virtserialport, virtconsole) each joined to a
 * host byte stream. At most 31 ports, QEMU's default and limit: the
 * transport's 64 queues hold 2 * (max_ports + 1). */
#define VIRTIO_CONSOLE_MAX_PORTS ((VIRTIO_MAX_QUEUES - 2) / 2)
#define VIRTIO_CONSOLE_NAME_MAX 127

struct virtio_console_port_opts {
	unsigned id;	  /* nr=: 0 .. max_ports - 1 */
	const char *name; /* PORT_NAME (/dev/virtio-ports/NAME), or NULL */
	bool console;	  /* virtconsole: the guest's hvc */
	/* The backend (I/O thread, transport lock held): take up to len
	 * bytes the guest sent, return how many were taken (fewer: the
	 * rest is offered again a little later). */
	size_t (*write)(void *opaque, const void *buf, size_t len);
	/* Room again after virtio_console_can_receive said 0 (I/O thread). */
	void (*rx_ready)(void *opaque);
	/* A guest program opened (true) or closed the port (I/O thread). */
	void (*guest_open)(void *opaque, bool open);
	void *opaque;
};

struct virtio_console_opts {
	int devfn;	    /* < 0: first free slot */
	unsigned max_ports; /* 1 .. VIRTIO_CONSOLE_MAX_PORTS */
	const struct virtio_console_port_opts *ports;
	unsigned n_ports;
};

struct virtio_console_stats {
	uint64_t rx_bytes, tx_bytes;	 /* to / from the guest, every port */
	uint64_t ctrl_in, ctrl_out;	 /* control messages each way */
	uint64_t ctrl_bad;		 /* malformed (the device then needs a reset) */
	uint64_t ctrl_ignored;		 /* unknown event or port id */
	uint64_t ctrl_dropped;		 /* outbox full */
	uint64_t rx_dropped;		 /* host bytes beyond can_receive */
};

struct virtio_console;
struct virtio_console *virtio_console_new(struct dev_host *host, struct pci_bus *bus,
					  const struct virtio_console_opts *o, char *err,
					  size_t errlen);
void virtio_console_free(struct virtio_console *vc);
struct virtio_pci *virtio_console_transport(struct virtio_console *vc);
/* Host side of port id (any thread): room for input (0 until the guest
 * opened the port), the input, the host end connected or gone. */
size_t virtio_console_can_receive(struct virtio_console *vc, unsigned id);
void virtio_console_receive(struct virtio_console *vc, unsigned id, const void *buf, size_t len);
void virtio_console_host_open(struct virtio_console *vc, unsigned id, bool open);
bool virtio_console_guest_open(struct virtio_console *vc, unsigned id);
void virtio_console_get_stats(struct virtio_console *vc, struct virtio_console_stats *st);
/* console_ports.c: a port's options checked against a bus of max_ports;
 * a port added while the guest runs (PORT_ADD once the driver is up;
 * o->name must outlive the port), and one removed (PORT_REMOVE; its
 * callbacks are not called after). 0, or -1 (with err for add). */
int virtio_console_check_port(unsigned max_ports, const struct virtio_console_port_opts *p,
			      char *err, size_t errlen);
int virtio_console_port_add(struct virtio_console *vc, const struct virtio_console_port_opts *o,
			    char *err, size_t errlen);
int virtio_console_port_remove(struct virtio_console *vc, unsigned id);

/* ---------------------------------------------------------- balloon.c */

/* virtio-balloon-pci: the guest gives memory back on request (QEMU's
 * `balloon`), reports its memory figures and, optionally, free pages. */
struct virtio_balloon_opts {
	bool deflate_on_oom;	  /* offer VIRTIO_BALLOON_F_DEFLATE_ON_OOM */
	bool free_page_reporting; /* offer VIRTIO_BALLOON_F_REPORTING (a 4th queue) */
	int devfn;		  /* < 0: first free slot */
	/* The guest changed `actual`: guest RAM minus the balloon, in bytes
	 * (vCPU or I/O thread, the transport lock held: never call back into
	 * the device from here). */
	void (*actual_changed)(void *opaque, uint64_t actual_bytes);
	void *opaque;
};

/* The tags QEMU 7.2 knows (swap-in .. htlb-pgfail); later ones are ignored. */
#define VIRTIO_BALLOON_NSTATS 10

/* The guest's last report (QOM guest-stats). */
struct virtio_balloon_guest_stats {
	uint64_t stat[VIRTIO_BALLOON_NSTATS]; /* by tag; UINT64_MAX: not reported */
	int64_t last_update;		      /* wall-clock seconds; 0: never */
};

struct virtio_balloon_counters {
	uint64_t inflated_pages, deflated_pages; /* 4 KiB PFNs taken from the queues */
	uint64_t bad_pfns;			 /* outside guest RAM: skipped */
	uint64_t discarded_bytes;		 /* given back with MADV_DONTNEED */
	uint64_t reported_bytes;		 /* of those, by free page reporting */
	uint64_t madvise_errors;
	uint64_t discard_calls; /* madvise and process_madvise calls made */
	uint64_t stats_updates; /* stats buffers received */
};

struct virtio_balloon;
struct virtio_balloon *virtio_balloon_new(struct dev_host *host, struct pci_bus *bus,
					  const struct virtio_balloon_opts *o, char *err,
					  size_t errlen);
void virtio_balloon_free(struct virtio_balloon *b);
struct virtio_pci *virtio_balloon_transport(struct virtio_balloon *b);
/* Any thread. The guest should keep guest_bytes (clamped to RAM): 0, or
 * -EINVAL for 0. */
int virtio_balloon_set_target(struct virtio_balloon *b, uint64_t guest_bytes);
/* Guest RAM minus what the guest says the balloon holds (query-balloon). */
uint64_t virtio_balloon_actual(struct virtio_balloon *b);
/* Stats polling every secs seconds (0: off); -EINVAL outside 0..2^32-1. */
int virtio_balloon_set_poll_interval(struct virtio_balloon *b, int64_t secs);
uint32_t virtio_balloon_poll_interval(struct virtio_balloon *b);
void virtio_balloon_guest_stats(struct virtio_balloon *b, struct virtio_balloon_guest_stats *gs);
void virtio_balloon_get_counters(struct virtio_balloon *b, struct virtio_balloon_counters *ct);
/* Is the 4 KiB page at gpa in the balloon (tests)? */
bool virtio_balloon_page_inflated(struct virtio_balloon *b, uint64_t gpa);
/* QEMU's guest-stats member name for a tag ("stat-free-memory"), or NULL. */
const char *virtio_balloon_stat_name(unsigned tag);
/* Fold a stats buffer (the chain's readable part: packed le16 tag, le64
 * value) into gs; unknown tags and a partial last entry are ignored. */
void virtio_balloon_parse_stats(const struct virtq_chain *c, struct virtio_balloon_guest_stats *gs);

#endif /* VMM_DEVICES_VIRTIO_H */
