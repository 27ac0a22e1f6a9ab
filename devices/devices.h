/* devices.h — the device model's one public header.
 *
 * A device sees the machine only through struct dev_host: two I/O buses
 * (port I/O and MMIO) it registers its regions into, the guest RAM map for
 * DMA, interrupt lines, the main thread's event loop and a reset list.
 * Devices never issue /dev/kvm ioctls; the machine (vmm/) wires the
 * callbacks to kernel/kvm.
 *
 * Threading: bus handlers run on vCPU threads, event-loop callbacks on the
 * main thread. Every device guards its own state with its own lock.
 */
#ifndef VMM_DEVICES_H
#define VMM_DEVICES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
};

struct iobus;

struct iobus *iobus_new(const char *name);
void iobus_free(struct iobus *bus);
/* 0, or -EEXIST when [base, base+len) overlaps a region, -EINVAL for len 0
 * or wrap-around, -ENOMEM. name must outlive the registration. */
int iobus_register(struct iobus *bus, uint64_t base, uint64_t len, const struct io_ops *ops,
		   void *opaque, const char *name);
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
};

/* Host pointer for [gpa, gpa+len) when that range lies inside one RAM
 * region, else NULL: every guest-supplied address goes through here. */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);
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

/* Little-endian helpers for handlers: load/store `size` bytes. */
uint64_t io_data_get(const void *data, unsigned size);
void io_data_put(void *data, unsigned size, uint64_t value);

/* -------------------------------------- consoles and machine control
 * Byte streams to the host (the UARTs, the debug console) and the ports a
 * guest uses to stop, reset or report on the machine. */

/* Where a device's byte stream goes and how it asks for more input. The
 * machine connects it to a chardev (stdio, file, socket, mux). */
struct char_backend {
	/* Bytes the guest sent; called on vCPU threads, must not block long. */
	void (*write)(void *opaque, const uint8_t *buf, size_t len);
	/* The device has room for input again (called with no device lock held). */
	void (*rx_ready)(void *opaque);
	void *opaque;
};

/* 16550A UART: 16-byte FIFOs, interrupts on `irq`, loopback, scratch. */
#define SERIAL_COM1_BASE 0x3f8
#define SERIAL_COM1_IRQ 4
struct serial;
struct serial *serial_new(struct dev_host *host, uint16_t base, unsigned irq,
			  const struct char_backend *be);
void serial_free(struct serial *s);
/* Host input: queues what fits in the receive FIFO, returns bytes taken. */
size_t serial_receive(struct serial *s, const uint8_t *buf, size_t len);
/* Room left in the receive FIFO. */
size_t serial_can_receive(struct serial *s);

/* Bochs/QEMU debug console at 0x402: bytes written go to fd (or nowhere
 * when fd < 0); reads return 0xe9. */
struct debugcon;
struct debugcon *debugcon_new(struct dev_host *host, int fd);
void debugcon_free(struct debugcon *d);

/* QEMU's isa-debug-exit: a write of value v makes the VMM exit with
 * status (v << 1) | 1; exit_fn performs the exit. */
struct debug_exit;
struct debug_exit *debug_exit_new(struct dev_host *host, uint16_t iobase, uint16_t iosize,
				  void (*exit_fn)(void *opaque, int status), void *opaque);
void debug_exit_free(struct debug_exit *d);

/* Port 0x80 (POST codes / I/O delay): writes ignored, reads all-ones. */
int port80_new(struct dev_host *host);

/* Minimal i8042 keyboard controller at 0x60/0x64: status, command byte,
 * self tests; pulse of the reset line (0x64 <- 0xfe, or output port bit 0
 * cleared) calls reset_fn, which resets the machine or exits (-no-reboot). */
struct i8042;
struct i8042 *i8042_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque);
void i8042_free(struct i8042 *k);

/* System control port A (0x92): fast A20 gate; bit 0 0 -> 1 calls reset_fn. */
struct port92;
struct port92 *port92_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque);
void port92_free(struct port92 *p);

/* QEMU's pvpanic ISA device: reads return the supported events, a guest
 * write of events calls event_fn (on the vCPU thread). */
#define PVPANIC_DEFAULT_PORT 0x505
#define PVPANIC_PANICKED 1u
#define PVPANIC_CRASH_LOADED 2u
struct pvpanic;
struct pvpanic *pvpanic_new(struct dev_host *host, uint16_t iobase,
			    void (*event_fn)(void *opaque, unsigned events), void *opaque);
void pvpanic_free(struct pvpanic *p);

/* --------------------------------------------------------------- PCI */

/* PCI: configuration mechanism #1 at 0xcf8/0xcfc, one bus (bus 0). */
#define PCI_CFG_SPACE_SIZE 256
#define PCI_NUM_BARS 6
#define PCI_BAR_UNMAPPED UINT64_MAX

struct pci_bus;
struct pci_dev;

struct pci_bar {
	uint64_t size;		/* power of two; 0 when the BAR is not implemented */
	bool io;		/* port I/O BAR, else 32-bit memory */
	const struct io_ops *ops; /* handlers; offset is relative to the BAR */
	void *opaque;
	uint64_t mapped;	/* where it is registered now, or PCI_BAR_UNMAPPED */
};

/* Devices embed a pci_dev. Fields are protected by the bus lock; the
 * callbacks below run with it held (they may take their own lock). */
struct pci_dev {
	const char *name;
	uint8_t devfn;		/* slot << 3 | function */
	struct pci_bus *bus;
	uint8_t cfg[PCI_CFG_SPACE_SIZE];
	uint8_t wmask[PCI_CFG_SPACE_SIZE]; /* bits guest writes may change */
	struct pci_bar bar[PCI_NUM_BARS];
	bool irq_level;
	unsigned cap_end;	/* first free config byte after the capabilities */
	/* Called after a guest config write was applied (optional). */
	void (*cfg_written)(struct pci_dev *d, unsigned off, unsigned size);
	/* Extra `info pci` lines (optional; snprintf style, bus lock held). */
	size_t (*info)(struct pci_dev *d, char *buf, size_t len);
	void *opaque;
};

/* Routes INTx pin (0 = INTA) of device slot to an ISA IRQ (GSI), or -1. */
typedef int (*pci_route_fn)(void *opaque, unsigned slot, unsigned pin);

struct pci_bus *pci_bus_new(struct dev_host *host);
void pci_bus_free(struct pci_bus *bus);
/* An ISA device's fixed ports inside the bus's I/O window (0x1000-0xffff,
 * where BARs are decoded): claimed like a BAR that never moves, so a BAR
 * placed over them fails to map. 0, -EEXIST, -ENOSPC or -ERANGE. */
int pci_bus_add_isa_io(struct pci_bus *bus, uint16_t base, uint16_t len, const struct io_ops *ops,
		       void *opaque);
void pci_bus_del_isa_io(struct pci_bus *bus, uint16_t base);
void pci_bus_set_route(struct pci_bus *bus, pci_route_fn fn, void *opaque);
/* The PIIX reset control register (0xcf9, bit 2) calls fn (any thread). */
void pci_bus_set_reset(struct pci_bus *bus, void (*fn)(void *opaque), void *opaque);
/* Fill the identity of d (header type 0; vendor, device, class code as
 * class << 16 | subclass << 8 | prog_if, revision); subsystem 1af4:1100. */
void pci_dev_init(struct pci_dev *d, const char *name, uint16_t vendor, uint16_t device,
		  uint32_t class_code, uint8_t revision);
/* Declare BAR n (before pci_bus_add). size is a power of two >= 4 (io)
 * or >= 16 (memory). */
void pci_dev_set_bar(struct pci_dev *d, unsigned n, uint64_t size, bool io,
		     const struct io_ops *ops, void *opaque);
/* Add a capability of len bytes (id, next filled in); returns its config
 * offset, or 0 when config space is full. */
unsigned pci_dev_add_cap(struct pci_dev *d, uint8_t id, unsigned len);
/* 0, -EEXIST when devfn is taken, -EINVAL. */
int pci_bus_add(struct pci_bus *bus, struct pci_dev *d, uint8_t devfn);
struct pci_dev *pci_bus_find(struct pci_bus *bus, uint8_t devfn);
/* The devfn of the first empty slot from 1 (function 0), or -1. */
int pci_bus_free_slot(struct pci_bus *bus);
/* Take d off its bus (unmapping its BARs); devices call it when freed. */
void pci_bus_remove(struct pci_dev *d);
/* Drive the device's INTx line (through the bus route). */
void pci_dev_set_irq(struct pci_dev *d, bool level);
/* Config accesses as the 0xcf8/0xcfc ports do them (for tests and tools). */
uint32_t pci_cfg_read(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size);
void pci_cfg_write(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size,
		   uint32_t val);
/* `info pci`: one block per device, like QEMU's. Returns the length that
 * was needed (snprintf style). */
size_t pci_bus_info(struct pci_bus *bus, char *buf, size_t len);

/* An IOMMU sits between PCI devices and the machine: their DMA through
 * pci_dma_read/write and their MSIs through pci_msi_send reach it with the
 * device's requester ID (source ID, bus << 8 | devfn). Without an IOMMU
 * those go straight to guest RAM and host->irq.msi. */
#define PCI_SID_UNKNOWN 0xffffffffu /* a message with no PCI requester (I/O APIC) */
struct pci_iommu_ops {
	/* Copy len bytes between buf and device address iova: 0, or -EFAULT
	 * when the translation faulted (recorded by the IOMMU). */
	int (*dma)(void *opaque, uint16_t sid, uint64_t iova, void *buf, uint64_t len, bool write);
	/* The guest-physical address of iova, *len cut to what is contiguous
	 * there: 0, or -EFAULT (fault recorded). */
	int (*translate)(void *opaque, uint16_t sid, uint64_t iova, bool write, uint64_t *gpa,
			 uint64_t *len);
	void (*msi)(void *opaque, uint32_t sid, uint64_t addr, uint32_t data);
	void *opaque;
};
void pci_bus_set_iommu(struct pci_bus *bus, const struct pci_iommu_ops *ops);
/* A bus master access of d (only while its command register allows bus
 * mastering): 0, or -EFAULT (outside RAM, IOMMU fault, mastering off). */
int pci_dma_read(struct pci_dev *d, uint64_t addr, void *buf, uint64_t len);
int pci_dma_write(struct pci_dev *d, uint64_t addr, const void *buf, uint64_t len);
void pci_msi_send(struct pci_dev *d, uint64_t addr, uint32_t data);
/* For devices that move data in place (IDE): host memory for bus address
 * addr, *len cut to what is contiguous (one IOMMU page); NULL outside RAM
 * or on an IOMMU fault. Bus mastering is the caller's to check. */
void *pci_dma_ptr(struct pci_dev *d, uint64_t addr, uint64_t *len, bool write);

/* ------------------------------------ chipset and firmware interface
 * The i440FX/Q35 host bridge and PIIX3, fw_cfg, the CMOS RTC, ACPI power
 * management and the legacy ISA leftovers a PC still decodes. */

/* The machine maps guest-physical ranges onto host memory for devices that
 * switch what backs a range (the i440FX PAM registers, the BIOS ROM). The
 * machine owns the KVM memory slots and implements this with them. */
struct pc_mem_map {
	/* Back [gpa, gpa+size) with host memory at hva (page aligned), or
	 * unmap it when hva is NULL, so accesses reach the MMIO bus. With
	 * read_only, guest writes are not stored but reach the MMIO bus.
	 * A later call for the same gpa and size replaces the mapping.
	 * 0 or -errno. */
	int (*map)(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool read_only);
	void *opaque;
};

/* i440FX host bridge at 00:00.0 with PAM shadow-RAM control of
 * 0xc0000-0xfffff and the SMRAM register. */
struct i440fx;
struct i440fx *i440fx_new(struct dev_host *host, struct pci_bus *bus,
			  const struct pc_mem_map *map);
/* The BIOS alias shown where PAM selects ROM: [1 MiB - size, 1 MiB) reads
 * hva (size a multiple of 16 KiB, at most 256 KiB). 0 or -errno. */
int i440fx_set_bios_alias(struct i440fx *nb, void *hva, uint64_t size);
/* The Q35 MCH (8086:29c0) for -machine q35: the same model with its PAM
 * registers at 0x90-0x96 and SMRAM at 0x9d. */
struct i440fx *q35_mch_new(struct dev_host *host, struct pci_bus *bus,
			   const struct pc_mem_map *map);
/* What a BIOS leaves behind: read-write shadow RAM in every PAM segment. */
void i440fx_shadow_all(struct i440fx *nb);
void i440fx_free(struct i440fx *nb);

/* PIIX3 PCI-ISA bridge at 00:01.0: PIRQ routing (0x60-0x63), ELCR. */
struct piix3;
struct piix3 *piix3_new(struct dev_host *host, struct pci_bus *bus);
void piix3_free(struct piix3 *p);

/* QEMU firmware configuration device: 0x510 selector, 0x511 data,
 * 0x514/0x518 DMA address (big-endian; a write to 0x518 starts it). */
enum {
	FW_CFG_SIGNATURE = 0x00,
	FW_CFG_ID = 0x01,
	FW_CFG_UUID = 0x02,
	FW_CFG_RAM_SIZE = 0x03,
	FW_CFG_NOGRAPHIC = 0x04,
	FW_CFG_NB_CPUS = 0x05,
	FW_CFG_NUMA = 0x0d,
	FW_CFG_BOOT_MENU = 0x0e,
	FW_CFG_MAX_CPUS = 0x0f,
	FW_CFG_FILE_DIR = 0x19,
	FW_CFG_FILE_FIRST = 0x20,
	FW_CFG_ACPI_TABLES = 0x8000,
	FW_CFG_SMBIOS_ENTRIES = 0x8001,
	FW_CFG_IRQ0_OVERRIDE = 0x8002,
	FW_CFG_E820_TABLE = 0x8003,
};
#define FW_CFG_MAX_FILES 64
#define FW_CFG_FILE_NAME_LEN 56
struct fw_cfg;
struct fw_cfg *fw_cfg_new(struct dev_host *host);
void fw_cfg_free(struct fw_cfg *f);
/* Add or replace an item (the data is copied). 0 or -errno. */
int fw_cfg_add(struct fw_cfg *f, uint16_t key, const void *data, size_t len);
int fw_cfg_add_u16(struct fw_cfg *f, uint16_t key, uint16_t v);
int fw_cfg_add_u32(struct fw_cfg *f, uint16_t key, uint32_t v);
int fw_cfg_add_u64(struct fw_cfg *f, uint16_t key, uint64_t v);
/* Add a named file to the directory; -EEXIST, -ENOSPC, -ENAMETOOLONG. */
int fw_cfg_add_file(struct fw_cfg *f, const char *name, const void *data, size_t len);

/* MC146818 CMOS RTC at 0x70/0x71, IRQ 8. */
#define RTC_IRQ 8
struct rtc;
struct rtc *rtc_new(struct dev_host *host);
/* Called on the main thread when an enabled (AIE) alarm fires: the ACPI
 * wake source for S3. */
void rtc_set_alarm_fn(struct rtc *r, void (*fn)(void *opaque), void *opaque);
void rtc_free(struct rtc *r);
void rtc_cmos_set(struct rtc *r, unsigned index, uint8_t val);
uint8_t rtc_cmos_get(struct rtc *r, unsigned index);
/* The CMOS bytes firmware without fw_cfg reads: base/extended memory,
 * memory above 16 MiB and 4 GiB, CPU count. */
void rtc_set_pc_config(struct rtc *r, uint64_t ram_below_4g, uint64_t ram_above_4g,
		       unsigned ncpus);

/* PM1a_EVT (status/enable, 2+2 bytes) at base, PM1a_CNT (2 bytes) at
 * base + 4; SCI_EN always reads set. A write of SLP_EN with SLP_TYP equal
 * to s5_typ calls poweroff_fn (the machine exits with status 0). */
struct acpi_pm;
struct acpi_pm *acpi_pm_new(struct dev_host *host, uint16_t base, unsigned s5_typ,
			    void (*poweroff_fn)(void *opaque), void *opaque);
void acpi_pm_free(struct acpi_pm *pm);

/* Press the power button: PWRBTN_STS is set in PM1 status and, when the
 * guest enabled it (PWRBTN_EN), the SCI (GSI sci_irq) is raised until the
 * guest clears the status. Any thread. */
void acpi_pm_power_button(struct acpi_pm *pm, unsigned sci_irq);
/* The PM timer, 24 bits at 3.579545 MHz, at base + ACPI_PM_TMR_OFF. */
#define ACPI_PM_TMR_OFF 8u
/* ACPI S3: a guest write of SLP_TYP = s3_typ | SLP_EN calls
 * sleep_fn on the vCPU thread. acpi_pm_rtc_wake: the RTC alarm fired while
 * asleep; true (and RTC_STS | WAK_STS set) when the guest enabled it as a
 * wake event (RTC_EN). */
void acpi_pm_set_sleep(struct acpi_pm *pm, unsigned s3_typ, void (*sleep_fn)(void *opaque),
		       void *opaque);
bool acpi_pm_rtc_wake(struct acpi_pm *pm);

/* ISA addresses with no device behind them (LPT, unconfigured COM ports,
 * 0x402 without -debugcon; on the MMIO bus the VGA window): reads
 * all-ones, writes ignored, not logged. bus is host->pio or host->mmio. */
int isa_empty_new(struct iobus *bus, uint64_t base, uint64_t len, const char *name);

/* The two 8237A DMA controllers (0x00-0x0f, 0xc0-0xdf) and page registers
 * (0x81-0x8f): registers only, no device does ISA DMA. */
struct dma8237;
struct dma8237 *dma8237_new(struct dev_host *host);
void dma8237_free(struct dma8237 *d);

/* ---------------------------------- interrupt controllers and timers
 * The userspace 8259A pair, I/O APIC, 8254 PIT and local APIC used by
 * -machine kernel_irqchip=split|off. Time and interrupt outputs go through
 * callbacks, so unit tests drive the models on a fake clock. */

/* 8259A master (0x20) + slave (0xa0, on master IRQ 2) and the ELCR
 * (0x4d0/0x4d1). intr_changed runs, without the PIC's lock, whenever the
 * INTR output may have changed; read it with i8259_intr(). */
struct i8259;
struct i8259 *i8259_new(struct dev_host *host, void (*intr_changed)(void *opaque), void *opaque);
void i8259_free(struct i8259 *p);
/* Drive ISA IRQ line irq (0-15). */
void i8259_set_irq(struct i8259 *p, unsigned irq, bool level);
bool i8259_intr(struct i8259 *p);
/* The INTA cycle: the vector to deliver (a spurious IRQ 7 when none). */
int i8259_ack(struct i8259 *p);
/* `info pic` in QEMU's layout; snprintf-style length. */
size_t i8259_info(struct i8259 *p, char *buf, size_t len);
/* The same layout for any PIC pair's registers (KVM's in-kernel one). */
struct i8259_state {
	uint8_t irr, imr, isr, priority_add, irq_base, read_reg_select, elcr;
	uint8_t special_fully_nested_mode;
};
size_t i8259_format(const struct i8259_state st[2], char *buf, size_t len);
/* Rising edges seen on irq since reset (`info irq`). */
uint64_t i8259_irq_count(struct i8259 *p, unsigned irq);

/* 82093AA I/O APIC, 24 pins, registers at base (0xfec00000). Pins send
 * MSI-shaped messages through host->irq.msi; report EOIs of level
 * triggered vectors (the EOI broadcast) with ioapic_eoi(). */
#define IOAPIC_BASE 0xfec00000ull
#define IOAPIC_NUM_PINS 24
struct ioapic;
struct ioapic *ioapic_new(struct dev_host *host, uint64_t base);
void ioapic_free(struct ioapic *io);
void ioapic_set_irq(struct ioapic *io, unsigned pin, bool level);
void ioapic_eoi(struct ioapic *io, uint8_t vector);
/* fn runs (without the I/O APIC's lock) after the guest rewrote a
 * redirection entry, and on reset: the split irqchip mirrors the entries
 * into KVM's GSI routes so the kernel knows the level-triggered vectors. */
void ioapic_set_routes_changed(struct ioapic *io, void (*fn)(void *opaque), void *opaque);
/* The message pin would send now, and whether it is masked. */
void ioapic_pin_msi(struct ioapic *io, unsigned pin, uint64_t *addr, uint32_t *data,
		    bool *masked);
/* A redirection entry as an MSI address/data pair. */
void ioapic_rte_to_msi(uint64_t rte, uint64_t *addr, uint32_t *data);
size_t ioapic_info(struct ioapic *io, char *buf, size_t len);
/* The `info ioapic` layout for any I/O APIC's registers (KVM's too). */
size_t ioapic_format(uint8_t id, uint8_t regsel, const uint64_t rte[IOAPIC_NUM_PINS],
		     uint32_t irr, char *buf, size_t len);
uint64_t ioapic_irq_count(struct ioapic *io, unsigned pin);

/* 8254 PIT at 0x40-0x43 and port B (0x61). OUT0 drives GSI 0 through
 * host->irq. The clock gives the time (ns) and arms a one-shot call of
 * i8254_timer() at an absolute deadline (UINT64_MAX: cancel); with clk
 * NULL the PIT uses CLOCK_MONOTONIC and a timer on host->loop. */
struct i8254_clock {
	uint64_t (*now_ns)(void *opaque);
	void (*arm)(void *opaque, uint64_t deadline_ns);
	void *opaque;
};
struct i8254;
struct i8254 *i8254_new(struct dev_host *host, const struct i8254_clock *clk);
void i8254_free(struct i8254 *p);
/* The armed deadline passed. */
void i8254_timer(struct i8254 *p);
/* A channel's OUT pin now. */
bool i8254_out(struct i8254 *p, unsigned ch);

/* Local APICs and the APIC bus between them (kernel_irqchip=off). The
 * register page is laid out like the xAPIC MMIO page and KVM's
 * struct kvm_lapic_state. Callbacks run without any APIC lock. */
#define LAPIC_PAGE_SIZE 1024
#define LAPIC_DEFAULT_BASE 0xfee00000ull
#define LAPIC_MSR_TSC_DEADLINE 0x6e0
struct lapic_host {
	/* cpu has a new interrupt or event: wake it (HLT) or make it look */
	void (*kick)(void *opaque, unsigned cpu);
	/* EOI of a level-triggered vector: the broadcast to the I/O APIC */
	void (*eoi)(void *opaque, uint8_t vector);
	uint64_t (*now_ns)(void *opaque);
	/* call lapic_timer_expired(cpu's APIC) at deadline_ns; UINT64_MAX: cancel */
	void (*arm_timer)(void *opaque, unsigned cpu, uint64_t deadline_ns);
	uint64_t (*tsc_now)(void *opaque); /* the guest's TSC now */
	uint64_t tsc_khz;
	void *opaque;
};
/* Events for the vCPU thread (lapic_take_events). */
enum { LAPIC_EV_NMI = 1, LAPIC_EV_INIT = 2, LAPIC_EV_SIPI = 4, LAPIC_EV_EXTINT = 8 };
struct lapic;
struct apic_bus;
struct apic_bus *apic_bus_new(unsigned ncpus, const struct lapic_host *host);
void apic_bus_free(struct apic_bus *bus);
struct lapic *apic_bus_cpu(struct apic_bus *bus, unsigned cpu);
/* Register the xAPIC page (LAPIC_DEFAULT_BASE) on mmio; pages an
 * IA32_APIC_BASE write moves come and go there too. */
int apic_bus_map(struct apic_bus *bus, struct iobus *mmio);
/* Deliver an MSI / I/O APIC message. */
void apic_bus_msi(struct apic_bus *bus, uint64_t addr, uint32_t data);
/* The APIC the calling thread's MMIO accesses reach (-1: none). */
void lapic_set_thread_cpu(int cpu);
/* xAPIC register access by offset (aligned 32-bit). */
uint32_t lapic_read(struct lapic *a, unsigned off);
void lapic_write(struct lapic *a, unsigned off, uint32_t v);
/* x2APIC MSRs 0x800-0x8ff and IA32_TSC_DEADLINE: 0, or -1 for #GP. */
int lapic_msr_read(struct lapic *a, uint32_t msr, uint64_t *value);
int lapic_msr_write(struct lapic *a, uint32_t msr, uint64_t value);
/* IA32_APIC_BASE (enable, x2APIC mode, BSP). */
uint64_t lapic_get_base(struct lapic *a);
void lapic_set_base(struct lapic *a, uint64_t value);
/* The highest interrupt above the processor priority: has / take (moves
 * it from IRR to ISR, returns the vector or -1; none while an NMI waits
 * for lapic_take_events, as an NMI goes first). */
bool lapic_has_interrupt(struct lapic *a);
int lapic_get_interrupt(struct lapic *a);
/* An interrupt waits only because of the TPR (CR8). */
bool lapic_blocked_by_tpr(struct lapic *a);
/* The PIC's INTR reaches this CPU (APIC off, or LINT0 unmasked ExtINT). */
bool lapic_accepts_pic(struct lapic *a);
/* An edge on LINT0/LINT1, delivered as its LVT entry says. */
void lapic_set_lint(struct lapic *a, unsigned pin, bool level);
/* TPR (CR8 << 4 in 64-bit mode). */
uint8_t lapic_get_tpr(struct lapic *a);
void lapic_set_tpr(struct lapic *a, uint8_t tpr);
/* The LAPIC_EV_* bits since the last call; *nmis: how many NMIs (1-2). */
unsigned lapic_take_events(struct lapic *a, uint8_t *sipi_vector, unsigned *nmis);
bool lapic_events_pending(struct lapic *a);
void lapic_timer_expired(struct lapic *a);
/* INIT: registers to their INIT state (ID and base kept). Reset: also
 * the base MSR (enabled, BSP for CPU 0) and pending events. */
void lapic_init(struct lapic *a);
void lapic_reset(struct lapic *a);
/* A snapshot of the register page (current count filled in). */
void lapic_copy_page(struct lapic *a, uint8_t page[LAPIC_PAGE_SIZE]);
/* `info lapic` for a register page (lapic_copy_page or KVM_GET_LAPIC). */
size_t lapic_format(const uint8_t page[LAPIC_PAGE_SIZE], unsigned cpu, bool x2apic, char *buf,
		    size_t len);

/* ----------------------------------------------------------- storage */

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
};
struct block_dev;
/* NULL with a one-line reason in err (missing, unreadable, a directory,
 * a size that is zero or not a multiple of 512). */
struct block_dev *block_open(const struct block_opts *o, char *err, size_t errlen);
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
 * itself. block_direct_fd: the descriptor a vectored request can go to
 * as it is (writable, in range, whole sectors, no -snapshot overlay,
 * buffers O_DIRECT accepts), else -1: use block_readv/block_writev.
 * block_account/_failed: count a request served that way in
 * block_get_stats. block_flush_fd: counts a flush; the descriptor to
 * fdatasync, or -1 when there is nothing to make durable. */
int block_direct_fd(struct block_dev *b, bool write, uint64_t sector, const struct iovec *iov,
		    int iovcnt);
void block_account(struct block_dev *b, bool write, uint64_t bytes);
void block_account_failed(struct block_dev *b);
int block_flush_fd(struct block_dev *b); /* another negative: -errno of a flush done here */

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
 * the completion): 0, or -1 when block_direct_fd refuses it (the caller
 * uses block_readv/block_writev). */
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

/* PIIX3 IDE at 00:01.1: two channels in compatibility mode (0x1f0/0x3f6
 * IRQ 14, 0x170/0x376 IRQ 15) and bus-master DMA through BAR 4. Drive
 * index = channel * 2 + slave; disks may be NULL. */
#define IDE_MAX_DRIVES 4
struct ide;
struct ide *ide_new(struct dev_host *host, struct pci_bus *bus,
		    struct block_dev *disks[IDE_MAX_DRIVES]);
void ide_free(struct ide *ide);

/* ------------------------------------------------------------- IOMMU */

/* Intel VT-d remapping hardware unit (-device intel-iommu): registers at
 * INTEL_IOMMU_BASE, queued invalidation, DMA remapping (legacy root and
 * context tables, second-level 3/4-level tables with 2 MiB/1 GiB pages,
 * pass-through) and, with intremap, interrupt remapping of MSIs and I/O
 * APIC messages (it then wraps host->irq.msi). Translations are not
 * cached: every access walks the guest's tables, so invalidations complete
 * at once. A bad guest table is a recorded fault, never a crash. */
#define INTEL_IOMMU_BASE 0xfed90000ull
#define INTEL_IOMMU_SIZE 0x1000
struct intel_iommu_opts {
	bool intremap; /* interrupt remapping (ECAP.IR) */
	bool eim;      /* x2APIC destinations (ECAP.EIM); needs intremap */
};
struct intel_iommu;
struct intel_iommu *intel_iommu_new(struct dev_host *host, struct pci_bus *bus,
				    const struct intel_iommu_opts *o);
void intel_iommu_free(struct intel_iommu *v);
/* Translate one device access at iova: 0 with *gpa and *len (the bytes
 * contiguous from there, <= len on input), or -EFAULT (fault recorded). */
int intel_iommu_translate(struct intel_iommu *v, uint16_t sid, uint64_t iova, bool write,
			  uint64_t *gpa, uint64_t *len);
/* Remap one interrupt message: 0 with addr/data rewritten for the APICs
 * (unchanged while remapping is off), or -EINVAL when it is blocked (a
 * fault recorded when record). sid: PCI_SID_UNKNOWN for the I/O APIC,
 * whose source ID is not checked (as QEMU does). */
int intel_iommu_remap_msi(struct intel_iommu *v, uint32_t sid, uint64_t *addr, uint32_t *data,
			  bool record);
/* fn runs after the guest changed interrupt remapping (IR enable, table,
 * IEC invalidation): the split irqchip re-mirrors the I/O APIC routes. */
void intel_iommu_set_ir_changed(struct intel_iommu *v, void (*fn)(void *opaque), void *opaque);

/* -------------------------------------------------- network backends
 * Network backends (-netdev user|tap) behind one small interface. A NIC
 * (virtio-net) hands over the guest's frames with their virtio-net header
 * (the offload request: partial checksum, TSO) and takes the host's
 * frames through its rx callback. Everything runs on the NIC's I/O
 * thread (under its transport lock): send/flush when the guest
 * transmits, poll when fd is readable or timeout_ms passed. */

struct iovec;
struct virtio_net_hdr;
struct usernet;
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
	struct usernet *usernet; /* type user: for the monitor (hostfwd, stats) */
};

void netdev_free(struct netdev *nd);

/* -netdev user,id=ID,OPTIONS (QEMU's: net=A/LEN, host=, dns=,
 * dhcpstart=, hostfwd= (repeatable), restrict=on|off, ipv6=on|off,
 * ipv6-net=, ipv6-host=, ipv6-dns=, hostname=, domainname=, plus
 * impl=netstack|slirp). opts is the text after "user," (id= included
 * or not). NULL with a one-line reason in err. */
struct netdev *netdev_user_new(const char *id, const char *opts, char *err, size_t errlen);
/* -netdev tap,id=ID,ifname=NAME,script=no,downscript=no[,vnet_hdr=on|off]. */
struct netdev *netdev_tap_new(const char *id, const char *opts, char *err, size_t errlen);

/* ------------------------------------------------------ test devices
 * What kvm-unit-tests and QEMU's own tests drive: they check the platform,
 * they are not part of a product machine. */

/* QEMU's pc-testdev: scratch port 0xe0 (byte-wide copy at 0xe8), page
 * flush port 0xe4, interrupt line ports 0x2000-0x2017, scratch MMIO at
 * 0xff000000 (64 KiB). NULL when a port or range is taken. */
struct pc_testdev;
struct pc_testdev *pc_testdev_new(struct dev_host *host, struct pci_bus *pci);
void pc_testdev_free(struct pc_testdev *t);

/* QEMU's pci-testdev (1b36:0005): BAR 0 memory, BAR 1 port I/O, each with
 * the test header kvm-unit-tests' vmexit reads (pci_testdev.c). devfn -1:
 * the first free slot. NULL when the slot is taken. */
struct pci_testdev;
struct pci_testdev *pci_testdev_new(struct dev_host *host, struct pci_bus *bus, int devfn);
void pci_testdev_free(struct pci_testdev *t);
struct pci_dev *pci_testdev_pci(struct pci_testdev *t);

/* QEMU's edu device (1234:11e8): BAR0 1 MiB MMIO with the ID, liveness,
 * factorial, interrupt raise/ack and DMA registers, a 4 KiB DMA buffer at
 * device address 0x40000, INTx or MSI. NULL when no slot is free. */
#define EDU_DMA_BASE 0x40000u
#define EDU_DMA_SIZE 4096u
struct edu;
struct edu *edu_new(struct dev_host *host, struct pci_bus *bus, int devfn);
void edu_free(struct edu *e);
struct pci_dev *edu_pci(struct edu *e);

#endif /* VMM_DEVICES_H */
