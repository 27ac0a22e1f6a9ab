/* machine.h — the virtual machine: KVM VM, RAM, vCPU threads, devices.
 *
 * Threads: the main thread runs the event loop (chardevs, monitor, timers)
 * and is the only one that pauses, resets or reconfigures the machine.
 * Each vCPU thread loops on KVM_RUN and dispatches exits to the buses. A
 * vCPU thread asks for a reset or an exit through machine_request_*(),
 * which hand the work to the main thread.
 */
#ifndef VMM_MACHINE_H
#define VMM_MACHINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/isa/acpi_pm.h"
#include "devices/isa/debug_exit.h"
#include "devices/isa/debugcon.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/fw_cfg.h"
#include "devices/isa/i8042.h"
#include "devices/isa/port92.h"
#include "devices/isa/pvpanic.h"
#include "devices/isa/serial.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pcie_root_port.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "devices/storage/ahci.h"
#include "devices/storage/ide.h"
#include "devices/testdev/edu.h"
#include "devices/testdev/pc_testdev.h"
#include "devices/testdev/pci_testdev.h"
#include "devices/usb/usb.h"
#include "devices/timer/rtc.h"
#include "firmware/firmware.h"
#include "kernel/kvm/kvm.h"
#include "vmm/cli/cli.h"
#include "vmm/irqchip.h"

struct chardev;
struct virtio_blk;
struct virtio_rng;
struct vmm_vserial;
struct virtio_balloon;
struct vmm_balloon;
struct virtio_net;

/* The PC memory map for a RAM size: low RAM below the PCI hole (with the
 * 640K-1M legacy hole cut out), the rest above 4 GiB. */
#define PC_LOW_RAM_END 0xa0000ull     /* VGA window starts here */
#define PC_HIGH_RAM_START 0x100000ull /* 1 MiB */
#define PC_PCI_HOLE_START 0xe0000000ull
#define PC_4G 0x100000000ull

struct mem_layout {
	uint64_t below_4g; /* end of RAM below the PCI hole */
	uint64_t above_4g; /* bytes of RAM at 4 GiB */
};

void mem_layout_for(uint64_t ram_size, struct mem_layout *l);
/* -machine q35's: RAM below the ECAM window at 0xb0000000 when it fits,
 * else 2 GiB below and the rest above 4 GiB (as QEMU's q35). */
void mem_layout_q35(uint64_t ram_size, struct mem_layout *l);

/* A vCPU's power-on state, captured right after creation and put back on
 * system_reset. */
struct vcpu_reset_state {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	struct kvm_lapic_state lapic;
	uint32_t mp_state;
};

struct vcpu {
	struct machine *m;
	struct kvm_vcpu kvm; /* kvm.id: the APIC ID (topo_apic_id) */
	unsigned index;	     /* in machine.vcpus: QEMU's cpu-index */
	struct dev_thread thread; /* its stack freed by the join */
	pid_t tid;
	bool started;
	struct vcpu_reset_state reset;
	/* The last KVM_EXIT_DEBUG (debug.c); pending until the main thread
	 * has stopped the machine for it. Under machine.lock. */
	uint64_t debug_pc, debug_dr6;
	uint32_t debug_exception; /* 1 #DB (step, debug registers), 3 #BP (INT3) */
	bool debug_stop_pending;
	uint64_t throttle_at; /* CLOCK_MONOTONIC ns: its next throttle sleep */
	/* The last exit's operation (an IN's value, the RIP past an OUT, a
	 * RDMSR's result) is KVM's to finish on the next KVM_RUN (vcpu.c). */
	bool owes_completion;
};

/* Monitor-driven guest debugging (debug.c). Main thread. */
#define MACHINE_MAX_BREAKPOINTS 4

struct machine_debug {
	uint64_t bp[MACHINE_MAX_BREAKPOINTS]; /* linear addresses */
	/* what each debug register watches: execution, or a data watchpoint */
	enum kvm_hw_bp_type bp_type[MACHINE_MAX_BREAKPOINTS];
	unsigned bp_len[MACHINE_MAX_BREAKPOINTS];
	unsigned n_bp;
	bool sw_bp; /* INT3 exits to the VMM (the gdbstub's Z0) */
	int step_cpu; /* the vCPU single-stepping, or -1 */
	unsigned last_stop_cpu; /* the vCPU of the last debug stop (gdbstub) */
};

/* What the machine is doing, as QMP's query-status names it. While
 * user_paused, machine.stop_state says why. */
enum run_state {
	RUN_STATE_PAUSED,
	RUN_STATE_RUNNING,
	RUN_STATE_PRELAUNCH, /* -S, before the first cont */
	RUN_STATE_DEBUG,     /* a breakpoint or single step */
	RUN_STATE_SHUTDOWN,  /* -action shutdown=pause */
	RUN_STATE_GUEST_PANICKED,
};

/* Who hears machine events (QMP): name and data as JSON text ("{}"). */
typedef void (*machine_event_fn)(void *opaque, const char *name, const char *data_json);
#define MACHINE_MAX_LISTENERS 4

/* Extra KVM slots for firmware ROM and PAM (the pc_mem_map callback). */
#define MACHINE_MAX_MAPS 24

struct machine_map {
	bool used;
	uint64_t gpa, size;
	int slot;
};

/* A root port's context for its hot-unplug callback (hotplug.c). */
struct hotplug_port {
	struct machine *m;
	unsigned index;
};

struct machine {
	const struct vmm_config *cfg;
	/* The same configuration, for what device_add, drive_add and
	 * blockdev-add add to it at run time (main thread); NULL: none. */
	struct vmm_config *cfg_rw;
	struct kvm_sys sys;
	struct kvm_vm vm;
	struct mem_layout layout;
	uint8_t *ram;
	size_t ram_map_size;
	struct guest_mem mem;
	struct e820_map e820;
	struct dev_host host;
	struct pc_mem_map mem_map;
	struct machine_map maps[MACHINE_MAX_MAPS];
	struct kvm_cpuid2 *cpuid;
	struct kvm_irqchip reset_chips[3];
	struct vmm_irqchip *ic; /* kernel_irqchip=split|off (irqchip.c) */

	struct vcpu *vcpus;
	unsigned ncpus;
	uint8_t apic_ids[CLI_MAX_SMP]; /* each vCPU's, for the MADT and MP table */

	/* Pausing: see machine_pause(). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_int pause_req;
	unsigned pause_depth;
	unsigned n_parked;
	bool user_paused; /* `stop` / -S */
	struct machine_debug debug;
	atomic_bool quit;
	int exit_status;
	/* runstate.c: why we are stopped; a guest request (reset, panic) in
	 * flight holds every vCPU until the main thread has acted on it. */
	enum run_state stop_state;
	bool suspended; /* ACPI S3, main thread only */
	atomic_int hold;
	atomic_bool reset_queued;
	/* Auto-converge (a live migration's): each vCPU sleeps this share,
	 * in percent, of every VCPU_THROTTLE_SLICE_NS; 0 runs freely. A
	 * change is followed by a broadcast on cond. */
	atomic_uint throttle_pct;
	pthread_mutex_t event_lock;
	struct {
		machine_event_fn fn;
		void *opaque;
	} listeners[MACHINE_MAX_LISTENERS];
	unsigned n_listeners;
	int signal_fd;
	struct pvpanic *pvpanic;
	struct pc_testdev *pc_testdev; /* -device pc-testdev */
	struct intel_iommu *iommu;     /* -device intel-iommu */
	struct edu *edu[CLI_MAX_DEVICES]; /* -device edu, as cfg->devices */
	struct pci_testdev *pci_testdev[CLI_MAX_DEVICES]; /* -device pci-testdev, the same */
	struct uhci *uhci[CLI_MAX_DEVICES];		  /* -device piix3-usb-uhci, -usb */
	struct xhci *xhci[CLI_MAX_DEVICES];		  /* -device qemu-xhci */

	bool direct_boot;
	struct boot_cpu_state boot;
	/* -kernel, open from the first load on: a reset reads it again from
	 * there (after -chroot or -runas its path may no longer open). */
	int kernel_fd;

	/* Wired by board.c. */
	struct chardev *serial_chr[CLI_MAX_SERIALS];
	struct serial *serial[CLI_MAX_SERIALS];
	struct chardev *monitor_chr;
	struct monitor *monitor[2]; /* on -monitor, on the mon:stdio mux */
	/* -chardev ringbuf|null no frontend uses (QMP/HMP still reach them) */
	struct chardev *spare_chr[CLI_MAX_CHARDEVS];
	struct debug_exit *debug_exit[CLI_MAX_DEVICES];
	struct i8042 *i8042;
	struct rtc *rtc;
	struct acpi_pm *acpi_pm;
	/* PC platform (firmware boot). */
	struct pci_bus *pci;
	struct i440fx *i440fx;
	struct piix3 *piix3;
	struct ich9_lpc *lpc;	   /* -machine q35: 00:1f.0 in place of the PIIX3 */
	struct ich9_smbus *smbus; /* -machine q35: 00:1f.3 */
	struct pcie_root_port *root_ports[CLI_MAX_ROOT_PORTS]; /* as cfg->root_ports */
	struct hotplug_port hotplug[CLI_MAX_ROOT_PORTS];
	bool hotplug_changed; /* a device came or went at run time */
	struct block_dev *disks[CLI_MAX_DRIVES]; /* the IDE slots; q35: the AHCI ports */
	struct atapi *cdroms[CLI_MAX_DRIVES];	 /* ATAPI drives (they own their media) */
	struct ide *ide;
	/* -device ahci and the ide-hd/ide-cd drives on its ports (board_ahci.c) */
	struct ahci *ahci[CLI_MAX_AHCI];
	struct block_dev *sata_disks[CLI_MAX_AHCI][AHCI_PORTS];
	struct atapi *sata_cdroms[CLI_MAX_AHCI][AHCI_PORTS]; /* they own their media */
	struct ahci *ich9_ahci; /* a board's built-in one (q35's 00:1f.2) */
	/* virtio-blk-pci devices and their disks, as cfg->vblk */
	struct block_dev *vdisks[CLI_MAX_VIRTIO_DRIVES];
	struct virtio_blk *vblk[CLI_MAX_VIRTIO_DRIVES];
	struct vmm_wlan *wlan; /* -object wlan-medium, -device virtio-wlan-pci */
	struct virtio_rng *rng[CLI_MAX_RNG]; /* -device virtio-rng-pci, as cfg->rng.devs */
	struct vmm_vserial *vserial;	      /* -device virtio-serial-pci and its ports */
	struct vmm_balloon *balloon;	     /* -device virtio-balloon-pci, or NULL */
	bool board_ready; /* board_init completed: its monitor views exist */
	char bootindex_paths[512];
	/* -netdev backends and the virtio-net NICs on them (net.c), as
	 * cfg->netdevs and cfg->nics */
	struct netdev *netdevs[CLI_MAX_NETDEVS];
	struct virtio_net *nics[CLI_MAX_NICS];
	struct fw_cfg *fw_cfg;
	int debugcon_fd; /* ours to close when > 2 */
	struct debugcon *debugcon;
	struct port92 *port92;
	struct dma8237 *dma;
	struct bios_image bios;
};

/* ----------------------------------------------------------- machine.c */

/* Open KVM, create the VM, RAM and vCPUs: 0 or -1 with err set. */
int machine_init(struct machine *m, const struct vmm_config *cfg, char *err, size_t errlen);
/* -machine none (libvirt's capability probe): no KVM, RAM, vCPUs or
 * devices; the event loop for QMP only. 0 or -1 with err set. */
int machine_init_none(struct machine *m, const struct vmm_config *cfg, char *err, size_t errlen);
void machine_destroy(struct machine *m);
/* Start the vCPU threads (paused when -S). */
int machine_start(struct machine *m, char *err, size_t errlen);
/* Run the main loop until the machine exits; returns the exit status. */
int machine_run(struct machine *m);

/* Main thread only. Pausing nests; vCPUs run again at depth 0. */
void machine_pause(struct machine *m);
void machine_resume(struct machine *m);
/* `stop` / `cont`. */
void machine_user_stop(struct machine *m);
void machine_user_cont(struct machine *m);
/* Power-on reset of vCPUs, devices, irqchip; reload -kernel. Main thread. */
void machine_system_reset(struct machine *m);
/* ACPI S3: the guest's SLP_TYP=S3 write parks every vCPU (any
 * thread); an enabled RTC alarm wakes it (main thread) at the FACS waking
 * vector, through machine_s3_resume. */
void machine_guest_suspend(void *opaque);
void machine_rtc_alarm(void *opaque);
void machine_s3_resume(struct machine *m);

/* Any thread. */
void machine_request_exit(struct machine *m, int status);
/* Make the vCPU leave KVM_RUN (or not enter it) and look at its state. */
void vcpu_kick(struct vcpu *v);
/* The throttle's period: a throttled vCPU runs, then sleeps pct/(100-pct)
 * of it; a ticker kicks the vCPUs at this rate so that one running guest
 * code without exits still gets there (vmm/migration.c). */
#define VCPU_THROTTLE_SLICE_NS 10000000ull
void machine_request_reset(struct machine *m);

/* ----------------------------------------------------------- runstate.c */

/* Exit statuses (README "Exit status"): isa-debug-exit's are odd. */
#define VMM_EXIT_OK 0		/* guest poweroff, quit, host signal, -no-reboot */
#define VMM_EXIT_USAGE 1	/* bad command line or set-up, before the guest runs */
#define VMM_EXIT_FAILURE 2	/* the VMM or KVM failed while the guest ran */
#define VMM_EXIT_GUEST_PANIC 4	/* pvpanic with -action panic=exit-failure */

const char *run_state_name(enum run_state s);
enum run_state machine_run_state(const struct machine *m);
/* Before machine_start: events lock, SIGTERM/SIGINT/SIGHUP as a clean
 * shutdown (SHUTDOWN host-signal). 0 or -1 with err. */
int machine_control_init(struct machine *m, char *err, size_t errlen);
void machine_control_destroy(struct machine *m);
/* 0 or -ENOSPC. Listeners are called on any thread, under a lock. */
int machine_add_listener(struct machine *m, machine_event_fn fn, void *opaque);
/* vmm/control/cdrom.c: the CD-ROM drives' names and media changes for HMP and
 * QMP. Find a drive by its drive name (ide1-cd0) or id=: the IDE index
 * or -1. Change/eject: 0 or -1 with err (QEMU's wording). */
int machine_find_cdrom(struct machine *m, const char *name);
/* QEMU's default name of the IDE drive at index (-drive if=ide,index=):
 * ide1-cd0 on the PC (channel, unit); on q35, where each ich9-ahci port
 * is a bus, ide2-cd0. And where it is attached, for info block. */
const char *machine_ide_default_name(const struct machine *m, unsigned index, bool cdrom, char *buf,
				     size_t len);
/* Its id= when it has one, else that default name. */
const char *machine_ide_name(const struct machine *m, unsigned index, bool cdrom, char *buf,
			     size_t len);
const char *machine_ide_attachment(const struct machine *m, unsigned index, char *buf, size_t len);
const char *machine_cdrom_name(struct machine *m, unsigned index, char *buf, size_t len);
int machine_cdrom_change(struct machine *m, const char *name, const char *file, bool force,
			 char *err, size_t errlen);
int machine_cdrom_eject(struct machine *m, const char *name, bool force, char *err,
			size_t errlen);
int machine_cdrom_tray(struct machine *m, const char *name, bool open, bool force, char *err,
		       size_t errlen);
void machine_cdrom_wire(struct machine *m);
/* data_fmt: printf format of the event's JSON data object, or NULL. */
void machine_event(struct machine *m, const char *name, const char *data_fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Guest requests (any thread; a vCPU thread calling them stops until the
 * main thread has carried them out), applied through -action. */
void machine_guest_shutdown(struct machine *m, const char *reason);
void machine_guest_panic(struct machine *m, unsigned pvpanic_events);
/* The VMM cannot go on: print why, exit VMM_EXIT_FAILURE. Any thread. */
void machine_fail(struct machine *m);
/* Host requests (main thread): quit, reset, ACPI power button. */
void machine_host_quit(struct machine *m, const char *reason);
void machine_host_reset(struct machine *m);
void machine_host_powerdown(struct machine *m);
/* Stop for a reason other than `stop` (debug, shutdown, guest-panicked);
 * in machine.c. Nothing if already stopped. */
void machine_stop_for(struct machine *m, enum run_state why);

/* ----------------------------------------------------------- vcpu.c */

void *vcpu_thread(void *arg);
/* Print registers and the bytes at CS:RIP (emulation failures). */
void vcpu_dump_state(struct vcpu *v, FILE *out);
/* Guest virtual to guest physical through the vCPU's page tables. */
int vcpu_translate(struct vcpu *v, uint64_t gva, uint64_t *gpa);
/* Read n bytes at a linear address through the vCPU's page tables: 0, or
 * -1 when some byte is unmapped or outside RAM. */
int vcpu_read_linear(struct vcpu *v, uint64_t linear, void *buf, size_t n);
/* The same for writes (the gdbstub's M packet). */
int vcpu_write_linear(struct vcpu *v, uint64_t linear, const void *buf, size_t n);

/* ----------------------------------------------------------- debug.c */

/* vCPU thread, on KVM_EXIT_DEBUG: stop the machine (through the main
 * thread) and wait until it is stopped. */
void vcpu_debug_exit(struct vcpu *v);
/* Main thread. A hardware breakpoint on every vCPU: its index, or
 * -ENOSPC (all MACHINE_MAX_BREAKPOINTS used) or -EIO. */
int machine_break_insert(struct machine *m, uint64_t addr);
/* Remove the breakpoint at addr (or all, watchpoints too): 0 or -ENOENT. */
int machine_break_remove(struct machine *m, uint64_t addr, bool all);
/* A data watchpoint (KVM_HW_BP_WRITE or _ACCESS) of len 1, 2, 4 or 8
 * bytes at addr (aligned) in a debug register: its index, -ENOSPC, or
 * -EINVAL. Removed by the same addr, len and type: 0 or -ENOENT. */
int machine_watch_insert(struct machine *m, uint64_t addr, unsigned len,
			 enum kvm_hw_bp_type type);
int machine_watch_remove(struct machine *m, uint64_t addr, unsigned len,
			 enum kvm_hw_bp_type type);
/* Software breakpoints: INT3 exits to the VMM instead of reaching the
 * guest (the caller patches the bytes). 0 or -errno. */
int machine_debug_set_sw_bp(struct machine *m, bool on);
/* `cont` after a stop: steps over a breakpoint the vCPU stopped on. */
void machine_debug_cont(struct machine *m);
/* Stopped machine: run vCPU 0 for one instruction and stop again. 0 with
 * *pc, -EBUSY when running, -ETIMEDOUT when it did not stop in time. */
int machine_stepi(struct machine *m, uint64_t *pc);
/* The same for any vCPU (the gdbstub's s / vCont;s). */
int machine_step_cpu(struct machine *m, unsigned cpu, uint64_t *pc);

/* ----------------------------------------------------------- insn.c */

/* Called when KVM cannot emulate an instruction (KVM_EXIT_INTERNAL_ERROR,
 * emulation failure). Returns true when it emulated the instruction and
 * advanced RIP, false for "not handled": the VM then stops. */
bool vcpu_emulation_fallback(struct vcpu *v);

/* ----------------------------------------------------------- pagewalk.c */

/* The control registers a page walk needs. */
struct paging_mode {
	uint64_t cr0, cr3, cr4, efer;
};

/* Walk the guest page tables in mem: 0 and *gpa, or -EFAULT when unmapped
 * (or a table lies outside RAM). Paging off: identity. */
int page_walk(const struct guest_mem *mem, const struct paging_mode *pm, uint64_t gva,
	      uint64_t *gpa);

/* ----------------------------------------------------------- boot.c */

/* Run the -kernel loaders in order: 0, or -1 with err set. */
int boot_load_kernel(struct machine *m, char *err, size_t errlen);
/* What the ACPI tables describe beyond RAM and CPUs, for both boot paths:
 * -device pvpanic's port (0: none), -device intel-iommu's ACPI_DMAR_*. */
uint16_t boot_pvpanic_port(const struct vmm_config *cfg);
unsigned boot_dmar_flags(const struct iommu_spec *s);
/* Before the machine exists: -kernel readable and a format a loader takes
 * (multiboot, bzImage, ELF), each -initrd file readable. 0, or -1 with err. */
int boot_check_kernel(const struct vmm_config *cfg, char *err, size_t errlen);
/* preflight.c: every input (disks, -kernel, -initrd, -bios, user
 * networking's options) checked before /dev/kvm is opened. */
int preflight_check(const struct vmm_config *cfg, char *err, size_t errlen);
/* board.c: the block_opts a drive's image opens with (a CD-ROM's medium
 * read-only, no overlay). */
void drive_block_opts(const struct drive_spec *d, bool snapshot, struct block_opts *o);
/* Translate a loader's boot CPU state into register values. */
void boot_state_to_regs(const struct boot_cpu_state *b, struct kvm_regs *regs,
			struct kvm_sregs *sregs);
/* Apply m->boot to the boot vCPU. */
int boot_apply(struct machine *m);

/* ----------------------------------------------------------- board.c */

/* Create every device in init order. 0 or -1 with err set. */
int board_init(struct machine *m, char *err, size_t errlen);
/* The PCI bus a device's bus= names: a pcie-root-port's (by its id), or
 * the root bus ("" as cli_parse_bus keeps pci.0/pcie.0). */
struct pci_bus *board_device_bus(struct machine *m, const char *bus);
/* Open the disk of cfg->vblk[i] and build its virtio-blk-pci (m->vdisks[i],
 * m->vblk[i]): 0 or -1 with err. */
int board_add_virtio_blk(struct machine *m, unsigned i, char *err, size_t errlen);
/* Build cfg->rng.devs[i] (m->rng[i]) on its source: 0 or -1 with err. */
int board_add_virtio_rng(struct machine *m, unsigned i, char *err, size_t errlen);

/* ----------------------------------------------------------- hotplug.c */

/* Run-time device_add / device_del (main thread): a virtio-blk-pci,
 * virtio-net-pci or virtio-rng-pci into an empty pcie-root-port (props:
 * "drive=ID,id=ID,bus=PORT,...", "netdev=ID,...", "rng=ID,..."), and its
 * removal with the guest's cooperation (DEVICE_DELETED when done). 0, or
 * -1 (del: -ENOENT unknown id, other -errno) with err in QEMU's words. */
int machine_device_add(struct machine *m, const char *driver, const char *props, char *err,
		       size_t errlen);
int machine_device_del(struct machine *m, const char *id, char *err, size_t errlen);
/* The drives device_add names: drive_add's if=none -drive options, a
 * blockdev-add JSON node; blockdev-del of an unused node. 0 or -1. */
int machine_drive_add(struct machine *m, const char *opts, char *err, size_t errlen);
int machine_blockdev_add(struct machine *m, const char *json, char *err, size_t errlen);
int machine_blockdev_del(struct machine *m, const char *node, char *err, size_t errlen);
/* netdev_add (-netdev's TYPE,id=ID,... text) and netdev_del of a
 * backend no NIC uses. 0 or -1 with err. */
int machine_netdev_add(struct machine *m, const char *val, char *err, size_t errlen);
int machine_netdev_del(struct machine *m, const char *id, char *err, size_t errlen);
/* object-add of an rng-random or rng-builtin object (props: "id=ID,...")
 * and object-del (devices on it keep their source, as in QEMU): 0, or -1
 * (del: -ENOENT unknown) with err in QEMU's words. */
int machine_object_add(struct machine *m, const char *type, const char *props, char *err,
		       size_t errlen);
int machine_object_del(struct machine *m, const char *id, char *err, size_t errlen);
/* chardev_hotplug.c: chardev-add (opts: -chardev's text; *pty the new
 * terminal's path, or NULL) and chardev-remove of one no device uses:
 * the chardev's index or 0, -1 with err in QEMU's words. A port's
 * device_add takes a spare chardev (NULL: none by that id), its
 * device_del gives it back (its frontend detached). */
int machine_chardev_add(struct machine *m, const char *opts, const char **pty, char *err,
			size_t errlen);
int machine_chardev_remove(struct machine *m, const char *id, char *err, size_t errlen);
/* Is there a chardev with this id (command line or chardev-add)? */
bool machine_chardev_exists(struct machine *m, const char *id);
struct chardev *machine_chardev_take(struct machine *m, const char *id);
void machine_chardev_give_back(struct machine *m, const char *id, struct chardev *chr);
void hmp_chardev(struct machine *m, int argc, char **argv, FILE *out, bool add);
/* Board set-up: each root port's guest-approved removal reaches hotplug.c. */
void machine_hotplug_wire(struct machine *m);
/* HMP device_add, device_del, drive_add, netdev_add, netdev_del. */
void hmp_netdev(struct machine *m, int argc, char **argv, FILE *out, bool add);
void hmp_device_add(struct machine *m, int argc, char **argv, FILE *out);
void hmp_device_del(struct machine *m, int argc, char **argv, FILE *out);
void hmp_drive_add(struct machine *m, int argc, char **argv, FILE *out);
void hmp_object(struct machine *m, int argc, char **argv, FILE *out, bool add);
/* `info pci`, `info block` (opaque: the machine), for the monitor's table. */
void board_info_pci(void *opaque, FILE *out);
void board_info_block(void *opaque, FILE *out);
/* The chardev with -chardev id= (a serial port's, the monitor's, or a
 * spare ringbuf), or NULL. */
struct chardev *board_find_chardev(struct machine *m, const char *id);
/* -machine none: the serial ports' host ends (no UARTs) and the monitor. */
int board_init_none(struct machine *m, char *err, size_t errlen);

/* ----------------------------------------------------------- net.c */

/* The -netdev backends and the NICs (after the disks, so those keep
 * their slots). 0 or -1 with err. */
int board_add_nics(struct machine *m, char *err, size_t errlen);
/* One of them: open cfg->netdevs[i] (m->netdevs[i]); build NIC
 * cfg->nics[k] on its resolved netdev (m->nics[k]). 0 or -1 with err. */
int net_open_netdev(struct machine *m, unsigned i, bool incoming, char *err, size_t errlen);
int net_add_nic(struct machine *m, unsigned k, char *err, size_t errlen);
/* `info network`, `info usernet` (opaque: the machine); the monitor's
 * hostfwd_add / hostfwd_remove [netdev_id] RULE, set_link NAME on|off. */
void net_info_network(void *opaque, FILE *out);
void net_info_usernet(void *opaque, FILE *out);
void hmp_hostfwd(struct machine *m, int argc, char **argv, FILE *out, bool add);
void hmp_set_link(struct machine *m, int argc, char **argv, FILE *out);
void board_free_nics(struct machine *m);
/* Migration: each backend with guest-visible state (user networking's
 * DHCP leases and NAT'd TCP connections, see usernet.h) as "netdev@N"
 * under the writer's node; loaded into the destination's backends made
 * from the same command line. 0, or -1 with err. */
struct state_writer;
struct state_reader;
/* Within one host (a unix: migration) net_save also gathers user
 * networking's host sockets into fds, for the stream to pass with
 * SCM_RIGHTS; each such backend stays quiet from its save until
 * net_handover_end, which (done: the stream went out whole) lets go of
 * them, or leaves them to the backend that runs on (a failed migration). */
struct net_handover {
	int *fds;
	unsigned nfds;
	bool held[CLI_MAX_NETDEVS];
	unsigned first[CLI_MAX_NETDEVS], count[CLI_MAX_NETDEVS];
};
/* The descriptors that came with the stream (lost: some did not). */
struct net_fds {
	const int *fds;
	unsigned nfds;
	bool lost;
};
int net_save(struct machine *m, struct state_writer *w, struct net_handover *ho, char *err,
	     size_t errlen);
void net_handover_end(struct machine *m, struct net_handover *ho, bool done);
int net_load(struct machine *m, const struct state_reader *r, const struct net_fds *in,
	     char *err, size_t errlen);
/* board_ahci.c: AHCI controller i of cfg->ahci with its drives, at devfn
 * (-1: its addr=, else the first free slot); q35 puts one at 00:1f.2.
 * board_add_ahcis: every -device ahci on the PCI bus. */
int board_add_ahci(struct machine *m, unsigned i, int devfn, char *err, size_t errlen);
int board_add_ahcis(struct machine *m, char *err, size_t errlen);
/* board_add_ich9_ahci: a board's built-in controller at devfn (q35:
 * 0x1f << 3 | 2) whose ports 0-3 hold the -hda..-hdd / -cdrom / -drive
 * if=ide drives of index 0-3 (m->disks, m->cdroms: opened already), as
 * QEMU's q35 puts them; then the PIIX3 IDE must not get them too. */
int board_add_ich9_ahci(struct machine *m, int devfn, char *err, size_t errlen);
/* board_bootorder.c: m->bootindex_paths, SeaBIOS's paths of the devices
 * with a bootindex=, lowest first. Once every device is on its bus. */
void board_bootindex_paths(struct machine *m);
void board_free_ahcis(struct machine *m);
/* Link of the NIC named (its id or its netdev's id): 0 or -ENOENT. */
int machine_set_link(struct machine *m, const char *name, bool up);

/* ---------------------------------------------------------- balloon.c */

/* -device virtio-balloon-pci (cfg->balloon), BALLOON_CHANGE: 0 or -1. */
int vmm_balloon_init(struct machine *m, char *err, size_t errlen);
void vmm_balloon_free(struct vmm_balloon *vb);
/* The device, or NULL when the machine has none. */
struct virtio_balloon *vmm_balloon_dev(struct machine *m);
/* Its id= (its QOM path's last part), or NULL. */
const char *vmm_balloon_id(struct machine *m);
/* QMP `balloon`, HMP `balloon`: 0, or -ENODEV / -EINVAL with QEMU's *why. */
int vmm_balloon_set_target(struct machine *m, int64_t bytes, const char **why);
void hmp_balloon(struct machine *m, int argc, char **argv, FILE *out);
void hmp_info_balloon(void *opaque, FILE *out); /* opaque: the machine */

/* ------------------------------------------------------------- wlan.c */

/* The media and radios of cfg->wlan: 0 or -1. */
int vmm_wlan_init(struct machine *m, char *err, size_t errlen);
void vmm_wlan_free(struct vmm_wlan *w);
/* `info wlan`, `info regdomain` and the wlan_* commands (opaque: the
 * machine, which has m->wlan). */
void vmm_wlan_info(void *opaque, FILE *out);
void vmm_wlan_info_regdomain(void *opaque, FILE *out);
void vmm_wlan_cmd(void *opaque, int argc, char **argv, FILE *out);
/* Migration: radio device i's transport (NULL past the last), and the
 * media's and relays' own nodes under /devices (after the devices). */
struct virtio_pci *vmm_wlan_transport(struct machine *m, unsigned i);
void vmm_wlan_save(struct machine *m, struct state_writer *w);
int vmm_wlan_load(struct machine *m, const struct state_reader *devs, char *err, size_t errlen);
/* A completed migration's source lets the daemon's radios go; `cont`
 * takes them back (reconnected, their addresses told again): 0 or -1. */
void vmm_wlan_hand_over(struct machine *m);
int vmm_wlan_take_back(struct machine *m, char *err, size_t errlen);

#endif /* VMM_MACHINE_H */
