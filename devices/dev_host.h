/* dev_host.h — the seam between the device models and the machine.
 *
 * A device sees the machine only through struct dev_host: two I/O buses
 * (port I/O and MMIO) it registers its regions into, the guest RAM map for
 * DMA, interrupt lines, the main thread's event loop (backends/) and a
 * reset list. Devices never issue /dev/kvm ioctls; the machine (vmm/)
 * wires the callbacks to kernel/kvm. Each device or device family has its
 * own header beside its source (devices/KIND/NAME.h).
 *
 * Threading: bus handlers run on vCPU threads, event-loop callbacks on the
 * main thread. Every device guards its own state with its own lock.
 */
#ifndef VMM_DEVICES_DEV_HOST_H
#define VMM_DEVICES_DEV_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evloop;

/* ---------------------------------------------------------------- buses */

struct io_ops {
	/* offset is relative to the region base; size is 1, 2, 4 or 8; data is
	 * in guest (little-endian) byte order, exactly size bytes. */
	void (*read)(void *opaque, uint64_t offset, void *data, unsigned size);
	void (*write)(void *opaque, uint64_t offset, const void *data, unsigned size);
};

struct io_region {
	uint64_t base, len;
	const struct io_ops *ops;
	void *opaque;
	const char *name;
	bool unlocked; /* handler runs with the bus unlocked (iobus_register_unlocked) */
};

struct iobus;

struct iobus *iobus_new(const char *name);
void iobus_free(struct iobus *bus);
/* 0, or -EEXIST when [base, base+len) overlaps a region, -EINVAL for len 0
 * or wrap-around, -ENOMEM. name must outlive the registration. */
int iobus_register(struct iobus *bus, uint64_t base, uint64_t len, const struct io_ops *ops,
		   void *opaque, const char *name);
/* A region whose handlers may register and unregister regions of the same
 * bus (the PCIe ECAM window: a config write there moves BARs and the
 * window itself), so they run after the bus lock is dropped. opaque must
 * outlive the bus; the handler may still run once after unregistering. */
int iobus_register_unlocked(struct iobus *bus, uint64_t base, uint64_t len,
			    const struct io_ops *ops, void *opaque, const char *name);
/* Removes the region starting at base; 0 or -ENOENT. */
int iobus_unregister(struct iobus *bus, uint64_t base);
/* Dispatch one access (O(log n)). Returns false when no region claims addr:
 * the read then yields all-ones and the miss is logged once per address. */
bool iobus_read(struct iobus *bus, uint64_t addr, void *data, unsigned size);
bool iobus_write(struct iobus *bus, uint64_t addr, const void *data, unsigned size);
/* Visit the regions in address order (for `info mtree`). */
void iobus_foreach(struct iobus *bus, void (*fn)(const struct io_region *r, void *arg),
		   void *arg);
const char *iobus_name(const struct iobus *bus);
/* Quiet the once-per-address miss log (unit tests of guest misbehaviour). */
void iobus_set_miss_log(struct iobus *bus, bool enabled);

/* ------------------------------------------------------------ guest RAM */

#define GUEST_MEM_MAX_REGIONS 8

struct guest_ram_region {
	uint64_t gpa, size;
	uint8_t *hva;
};

struct guest_mem {
	struct guest_ram_region r[GUEST_MEM_MAX_REGIONS];
	unsigned n;
	uint64_t ram_size; /* what -m asked for: sum of the RAM regions */
	/* Pages the VMM's own code may write: KVM's dirty log sees only the
	 * vCPUs' writes (one bit per 4 KiB page from touched_base, which
	 * spans touched_size bytes; NULL: nothing is tracked).
	 *  - touched: every page guest_mem_ptr handed out a pointer to since
	 *    a live migration last took the bits (vmm/migration_ram.c takes
	 *    and clears them at each dirty-log sync). A pointer used at once
	 *    is caught by the pass after the one that took its bit; one held
	 *    for a request is marked again when the request completes (a
	 *    virtio chain's buffers at virtq_push, while tracking is set).
	 *  - pinned: pages under pointers devices keep for long (virtio
	 *    rings, mapped at driver start) and write through at any time.
	 *    Never cleared: the final pass, with the machine stopped, sends
	 *    them all. */
	uint64_t *touched, *pinned;
	const uint8_t *touched_base;
	uint64_t touched_size;
	bool tracking; /* a live migration runs: completions mark again */
};

/* Host pointer for [gpa, gpa+len) when that range lies inside one RAM
 * region, else NULL: every guest-supplied address goes through here (and
 * marks the range in gm->touched when that is set). */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);
/* guest_mem_ptr for a pointer the device keeps (a ring): marked pinned. */
void *guest_mem_pin(const struct guest_mem *gm, uint64_t gpa, uint64_t len);
/* Is a live migration tracking the VMM's writes (gm->tracking)? */
bool guest_mem_tracking(const struct guest_mem *gm);
/* Copy helpers built on guest_mem_ptr; 0 or -EFAULT. */
int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *dst, uint64_t len);
int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *src, uint64_t len);

/* ----------------------------------------------------------- interrupts */

struct irq_sink {
	/* Drive GSI line `gsi` (ISA IRQs are GSIs 0-15) to `level`. */
	void (*set_level)(void *opaque, unsigned gsi, bool level);
	/* Deliver one MSI. */
	void (*msi)(void *opaque, uint64_t addr, uint32_t data);
	void *opaque;
};

/* ------------------------------------------------------------- the host */

struct dev_reset_hook {
	void (*fn)(void *opaque);
	void *opaque;
};

#define DEV_MAX_RESET_HOOKS 64

/* Notifications and interrupts that bypass userspace (KVM's ioeventfd and
 * irqfd), for devices that serve guest rings on their own threads
 * (virtio). Every member may be NULL (no KVM: unit tests); a device then
 * takes doorbells through its bus handlers and sends MSIs through irq.msi.
 * Callable from any thread; the machine wires them to kernel/kvm. */
struct dev_fast_ops {
	/* A guest write of len bytes (0: any size) to MMIO address addr
	 * signals the eventfd fd instead of exiting. 0 or -errno. */
	int (*ioeventfd)(void *opaque, uint64_t addr, unsigned len, int fd, bool assign);
	/* An MSI route: its id (>= 0) or -errno; retarget; free. */
	int (*msi_route_add)(void *opaque, uint64_t addr, uint32_t data);
	int (*msi_route_set)(void *opaque, int route, uint64_t addr, uint32_t data);
	void (*msi_route_del)(void *opaque, int route);
	/* While bound, a write to the eventfd fd delivers the route's MSI. */
	int (*irqfd)(void *opaque, int fd, int route, bool assign);
	void *opaque;
	/* ioeventfd's general form: port I/O when pio, and when datamatch
	 * >= 0 only writes of that value (len bytes) signal. */
	int (*ioeventfd_match)(void *opaque, uint64_t addr, unsigned len, bool pio,
			       int64_t datamatch, int fd, bool assign);
};

struct dev_host {
	struct iobus *pio;
	struct iobus *mmio;
	struct guest_mem *mem;
	struct irq_sink irq;
	struct dev_fast_ops fast;
	struct evloop *loop;
	struct dev_reset_hook reset[DEV_MAX_RESET_HOOKS];
	unsigned n_reset;
};

/* Called in registration order by system_reset; 0 or -ENOSPC. */
int dev_on_reset(struct dev_host *host, void (*fn)(void *), void *opaque);
void dev_reset_all(struct dev_host *host);

/* ---------------------------------------------------------------- threads */

/* A vCPU or device I/O thread (thread.c): an 8 MiB stack, as glibc's,
 * that transparent huge pages never back, so each thread costs the host
 * the few pages of stack it touches. */
struct dev_thread {
	pthread_t id;
	void *stack;
};

/* 0, or an errno value (the thread did not start). */
int dev_thread_create(struct dev_thread *t, void *(*fn)(void *), void *arg);
/* Wait for the thread to return, then free its stack. */
void dev_thread_join(struct dev_thread *t);

/* Little-endian helpers for handlers: load/store `size` bytes. */
uint64_t io_data_get(const void *data, unsigned size);
void io_data_put(void *data, unsigned size, uint64_t value);

#endif /* VMM_DEVICES_DEV_HOST_H */
