/* cli.h — the parsed command line (vmm/cli/cli.c holds the option table).
 *
 * To add an option: add a field here and a row to `options[]` in cli.c,
 * usually with one of the generic parsers (cli_parse_string, cli_parse_flag,
 * cli_parse_uint) and offsetof(struct vmm_config, field).
 */
#ifndef VMM_CLI_H
#define VMM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/cli/cpuid.h"

#define CLI_MAX_SERIALS 4
#define CLI_MAX_DEVICES 16
#define CLI_MAX_SMP 255
/* IDE slots (-drive if=ide,index=N): on the PC index = channel * 2 + slave,
 * 0 to 3; on q35 the ich9-ahci port, 0 to 5, as QEMU's q35 puts them. */
#define CLI_MAX_DRIVES 6
#define CLI_PC_IDE_DRIVES 4

/* A listening socket for QMP or the gdbstub: unix:PATH, tcp:HOST:PORT, or
 * an inherited listening fd (libvirt's -chardev socket,fd=N); or, for
 * -qmp stdio only, one client on stdin/stdout. */
enum listen_kind { LISTEN_UNIX, LISTEN_TCP, LISTEN_FD, LISTEN_STDIO };

struct listen_spec {
	enum listen_kind kind;
	char path[108]; /* UNIX */
	char host[64];	/* TCP; "" is every address */
	char port[8];	/* TCP */
	int fd;		/* FD */
	bool wait;	/* block at start-up until a client connects */
	bool telnet;	/* chardevs: telnet negotiation on each connection */
	bool client;	/* chardevs: connect to path/host:port instead of listening */
	unsigned reconnect; /* client: seconds between attempts once down; 0: never */
};

/* A character device spec: -serial, -monitor. */
enum chardev_kind {
	CHARDEV_NONE,
	CHARDEV_NULL,
	CHARDEV_STDIO,
	CHARDEV_MON_STDIO, /* stdio, multiplexed with the monitor (Ctrl-A c) */
	CHARDEV_FILE,
	CHARDEV_UNIX,	 /* a unix socket server */
	CHARDEV_PTY,	 /* a new pseudo-terminal (-chardev pty): libvirt's console */
	CHARDEV_TCP,	 /* a TCP server (sock), plain or telnet */
	CHARDEV_RINGBUF, /* output kept in memory, read with QMP/HMP ringbuf-read */
};

struct chardev_spec {
	enum chardev_kind kind;
	char path[108];	  /* FILE, UNIX (a sockaddr_un path fits) */
	bool wait;	  /* UNIX: block at start-up until a client connects */
	char id[32];	  /* -chardev id=: query-chardev's label; "" for -serial */
	struct listen_spec sock; /* TCP */
	bool append;		 /* FILE: append=on */
	uint32_t ring_size;	 /* RINGBUF: bytes kept, a power of two */
	bool memory;		 /* RINGBUF: spelt "memory" (query-chardev says so) */
};

enum device_kind {
	DEVICE_ISA_DEBUG_EXIT,
	DEVICE_PVPANIC,
	DEVICE_PC_TESTDEV,
	DEVICE_EDU,
	DEVICE_PCI_TESTDEV,
	DEVICE_USB_UHCI, /* piix3-usb-uhci, -usb */
	DEVICE_USB_XHCI	 /* qemu-xhci */
};

struct device_spec {
	enum device_kind kind;
	uint16_t iobase, iosize;
	int devfn; /* PCI devices: addr=, or -1 for the first free slot */
	char bus[32]; /* PCI devices: a pcie-root-port id, "" the root bus */
	uint8_t usb_p2, usb_p3; /* qemu-xhci: USB 2 and USB 3 ports */
};

/* -device pcie-root-port,id=ID[,bus=pcie.0][,chassis=N][,slot=N][,port=N]
 * [,addr=SLOT[.FN]][,multifunction=on|off] (cli_pcie.c; q35 only). */
#define CLI_MAX_ROOT_PORTS 16
struct root_port_spec {
	char id[32];
	int devfn; /* -1: first free slot */
	unsigned chassis, slot, port;
	bool multifunction;
};

/* -device intel-iommu[,intremap=on|off][,eim=on|off] (cli_iommu.c). */
struct iommu_spec {
	bool present, intremap, eim;
};

/* -hda..-hdd, -drive: a raw image on an IDE slot, a virtio-blk device
 * (if=virtio) or for a -device (if=none). The cache modes are QEMU's, in
 * the order of enum block_cache. */
enum drive_cache {
	DRIVE_CACHE_WRITEBACK,
	DRIVE_CACHE_WRITETHROUGH,
	DRIVE_CACHE_UNSAFE,
	DRIVE_CACHE_NONE,
	DRIVE_CACHE_DIRECTSYNC,
};
enum drive_if { DRIVE_IF_IDE, DRIVE_IF_VIRTIO, DRIVE_IF_NONE };
/* aio=: in the order of enum block_aio_mode (DEFAULT: not given). */
enum drive_aio { DRIVE_AIO_DEFAULT, DRIVE_AIO_THREADS, DRIVE_AIO_IO_URING };

/* As backends.h's enum block_format: auto probes as QEMU does. */
enum drive_format { DRIVE_FORMAT_AUTO, DRIVE_FORMAT_RAW, DRIVE_FORMAT_QCOW2 };
struct drive_spec {
	const char *file; /* NULL: the slot is empty (or an empty CD-ROM drive) */
	bool cdrom;	  /* media=cdrom, -cdrom: an ATAPI drive, read-only */
	enum drive_format format;
	bool no_lock; /* file.locking=off */
	char node_file[32]; /* -blockdev: the protocol node under id (the format node) */
	bool read_only;
	enum drive_cache cache;
	enum drive_aio aio;
	enum drive_if iface;
	char id[32];
	char file_buf[256];
};

/* -device virtio-blk-pci (and each -drive if=virtio). */
#define CLI_MAX_VIRTIO_DRIVES 8
struct virtio_blk_spec {
	unsigned drive;	 /* index in vmm_config.vdrives */
	int bootindex;	 /* -1: none */
	int devfn;	 /* addr=SLOT[.FN]; -1: first free slot */
	unsigned num_queues;
	char serial[21];
	char drive_id[32]; /* drive=ID until cli_parse resolves it */
	char id[32];	   /* the device's id= (libvirt's alias, qom-list /machine/peripheral) */
	char bus[32];	   /* bus=: a pcie-root-port's id; "": the root bus */
	int write_cache;   /* write-cache=: -1 auto (the drive's cache mode), 0 off, 1 on */
};

/* -device ahci / ich9-ahci, and the ide-hd / ide-cd devices on its ports
 * (bus=ID.PORT) or on the PIIX3 IDE (bus=ide.N,unit=U) (cli_sata.c). */
#define CLI_MAX_AHCI 2
#define CLI_MAX_SATA_DEVS 12
struct ahci_spec {
	char id[32];
	int devfn; /* addr=; -1: first free slot */
};
struct sata_dev_spec {
	bool cdrom;	   /* ide-cd */
	char bus[40];	   /* as given: "sata0.1", "ide.0" */
	unsigned unit;	   /* unit= (IDE) */
	char drive_id[32]; /* drive=; empty: an empty CD-ROM drive */
	char id[32];
	int bootindex;
	int write_cache; /* ide-hd's write-cache=: as virtio_blk_spec's */
	/* resolved: the controller (index in vmm_config.ahci) and port, or
	 * for bus=ide.N the IDE slot taken (index in vmm_config.drives; -1:
	 * an AHCI port), and the drive (index in vmm_config.vdrives, -1: none) */
	unsigned ahci, port;
	int ide_index;
	int drive;
};

/* -netdev TYPE,id=ID,... (user, tap): the options go to the backend
 * (backends/net/net_user.c, net_tap.c), which checks them at start-up. */
#define CLI_MAX_NETDEVS 8
#define CLI_MAX_NICS 8
struct netdev_spec {
	char id[32];
	char type[8];	/* "user", "tap" */
	char opts[512]; /* what follows TYPE, */
};

/* -device virtio-net-pci,netdev=ID[,mac=][,addr=][,id=][,mq=on], -nic. */
struct nic_spec {
	char netdev_id[32]; /* resolved to netdev by cli_resolve_nics */
	unsigned netdev;
	char id[32];	/* "" : virtio-net-pci.N */
	uint8_t mac[6]; /* default 52:54:00:12:34:56 + N */
	bool mac_given;
	int devfn; /* -1: first free slot */
	char bus[32]; /* a pcie-root-port id; "": the root bus */
	bool mq;
};

/* -object wlan-medium and -device virtio-wlan-pci (cli_wlan.c). */
#define CLI_MAX_WLAN 4
struct wlan_medium_spec {
	char id[32], country[64], regdb[256], socket[108];
	bool outdoor, no_enforce;
	int cac_s, nop_s; /* -1: the rule's CAC, 1800 s */
	int txpower_dbm;  /* 0: 20 dBm */
	double distance_m; /* 0: 10 m */
};

struct wlan_dev_spec {
	char medium[32];
	unsigned medium_idx; /* resolved by cli_parse */
	int devfn;	     /* -1: first free slot */
};

struct wlan_config {
	struct wlan_medium_spec media[CLI_MAX_WLAN];
	unsigned n_media;
	struct wlan_dev_spec devs[CLI_MAX_WLAN];
	unsigned n_devs;
};

/* -object rng-random / rng-builtin and -device virtio-rng-pci (cli_rng.c). */
#define CLI_MAX_RNG 4
struct rng_object_spec {
	char id[32];
	char filename[256]; /* "": rng-builtin (getrandom) */
	int fd;		    /* the file, opened by cli_resolve_rng; -1 builtin */
};

struct rng_dev_spec {
	char rng[32];	    /* rng=ID; "": a builtin source of its own */
	int object;	    /* resolved index into objects, or -1 */
	uint64_t max_bytes; /* QEMU's defaults: INT64_MAX per 65536 ms */
	uint32_t period_ms;
	int devfn; /* -1: first free slot */
	char id[32];
	char bus[32]; /* bus=: a pcie-root-port's id; "": the root bus */
};

struct rng_config {
	struct rng_object_spec objects[CLI_MAX_RNG];
	unsigned n_objects;
	struct rng_dev_spec devs[CLI_MAX_RNG];
	unsigned n_devs;
};

/* -device virtio-serial-pci and its virtserialport / virtconsole ports
 * (cli_vserial.c). A port's chardev is looked up as it is parsed. */
#define CLI_MAX_VSERIAL 2
#define CLI_MAX_VSERPORTS 8
#define CLI_VSERIAL_MAX_PORTS 31 /* max_ports: QEMU's default and limit */

struct vserial_bus_spec {
	char id[32];	    /* its bus is "ID.0" */
	int devfn;	    /* -1: first free slot */
	char bus[32];	    /* a pcie-root-port id; "": the root bus */
	unsigned max_ports; /* QEMU's default is 31; vmm's ceiling is 7 */
};

struct vserport_spec {
	char id[32];	      /* VSERPORT_CHANGE's id; "" for none */
	char name[128];	      /* name=: /dev/virtio-ports/NAME */
	unsigned bus;	      /* index into buses */
	int nr;		      /* port id; -1 until resolved */
	bool console;	      /* virtconsole */
	struct chardev_spec chr;
};

struct vserial_config {
	struct vserial_bus_spec buses[CLI_MAX_VSERIAL];
	unsigned n_buses;
	struct vserport_spec ports[CLI_MAX_VSERPORTS];
	unsigned n_ports;
};

/* -device virtio-balloon-pci (cli_balloon.c): at most one. */
struct balloon_spec {
	bool present;
	bool deflate_on_oom, free_page_reporting;
	int devfn;	    /* -1: first free slot */
	uint32_t poll_secs; /* guest-stats-polling-interval */
	char id[32];
	char bus[32]; /* a pcie-root-port id; "": the root bus */
};

/* -action (QEMU's): what guest resets, shutdowns and panics do. */
enum action_reboot { ACTION_REBOOT_RESET, ACTION_REBOOT_SHUTDOWN };
enum action_shutdown { ACTION_SHUTDOWN_POWEROFF, ACTION_SHUTDOWN_PAUSE };
enum action_panic {
	ACTION_PANIC_SHUTDOWN, /* QEMU's default */
	ACTION_PANIC_PAUSE,
	ACTION_PANIC_EXIT_FAILURE,
	ACTION_PANIC_NONE,
};

#define CLI_MAX_CHARDEVS 8
#define CLI_RINGBUF_DEFAULT 65536u /* -chardev ringbuf without size=, as QEMU */
#define CLI_RINGBUF_MAX (16u << 20)
#define CLI_MAX_QMP 4

/* -chardev BACKEND,id=ID,...: a named socket for -mon chardev=ID, or
 * (is_serial_backend) a pty, file or null for -device isa-serial. */
struct chardev_def {
	char id[32];
	struct listen_spec sock;
	bool used;
	bool is_serial_backend;
	struct chardev_spec spec;
};

/* The control plane's options (vmm/cli/cli_control.c parses them). */
/* -sandbox on[,obsolete=deny|allow][,elevateprivileges=deny|allow|children]
 * [,spawn=deny|allow][,resourcecontrol=deny|allow] (QEMU's spelling and
 * defaults: obsolete denied, the rest allowed). vmm/sandbox.c. */
struct sandbox_config {
	bool on;
	bool allow_obsolete, allow_elevate, allow_spawn, allow_resource;
};

struct control_config {
	enum action_reboot reboot;
	enum action_shutdown shutdown;
	enum action_panic panic;
	struct listen_spec qmp[CLI_MAX_QMP];
	unsigned n_qmp;
	struct chardev_def chardevs[CLI_MAX_CHARDEVS];
	unsigned n_chardevs;
	bool gdb_given;
	struct listen_spec gdb;
	bool daemonize;
	const char *pidfile;
	struct sandbox_config sandbox;
	const char *runas;  /* -runas USER: setuid/setgid after set-up */
	const char *chroot; /* -chroot DIR: chroot after set-up */
};

/* What the options libvirt adds to every command line set (cli_libvirt.c). */
#define CLI_MAX_OBJECTS 4
#define CLI_JSON_ARGS 64 /* virt-install's q35 domain has 14 root ports and more */
struct libvirt_config {
	bool machine_none;	 /* -machine none: QMP only (libvirt's probe) */
	bool no_acpi;		 /* -no-acpi: no ACPI tables for a -kernel boot */
	bool no_dump_guest_core; /* -machine dump-guest-core=off */
	bool default_usb;	 /* -usb or -machine usb=on: QEMU's piix3-usb-uhci */
	bool no_s3;		 /* -global PIIX4_PM.disable_s3=1 (ICH9-LPC on q35) */
	bool mem_lock;		 /* -overcommit mem-lock=on */
	bool boot_strict;	 /* -boot strict=on */
	bool has_uuid;
	uint8_t uuid[16];	 /* -uuid */
	char memory_backend[32]; /* -machine memory-backend=ID */
	struct {
		char id[32];
		uint64_t size;
	} ram_objects[CLI_MAX_OBJECTS]; /* -object memory-backend-ram */
	unsigned n_ram_objects;
	/* The key=value form of each JSON option value, kept for the parsers
	 * that store pointers into their argument. */
	char json_args[CLI_JSON_ARGS][512];
	unsigned n_json_args;
};

/* -machine kernel_irqchip=: where the interrupt controllers live. */
enum irqchip_mode {
	IRQCHIP_ON,    /* all in KVM (the default) */
	IRQCHIP_SPLIT, /* local APICs in KVM; PIC, I/O APIC, PIT in vmm */
	IRQCHIP_OFF,   /* everything in vmm */
};

/* The help verbs (cli_help.c): -cpu help, -machine help, -device help,
 * -device NAME,help, -netdev help ("?" for help too). */
enum cli_help_topic {
	CLI_HELP_NONE,
	CLI_HELP_CPU,
	CLI_HELP_MACHINE,
	CLI_HELP_DEVICES,
	CLI_HELP_DEVICE,
	CLI_HELP_NETDEV,
};

/* A -device's entry in the help: its properties with QEMU's type names,
 * and what the unit test needs to parse each (setup: an option and value
 * the device depends on; base: its required properties; sample: a valid
 * value). */
#define CLI_DEVICE_MAX_PROPS 8
struct cli_device_prop {
	const char *name, *type, *desc, *def, *sample;
};

struct cli_device_help {
	const char *name, *bus, *alias, *desc;
	int category;
	const char *setup[4]; /* up to two options and their values */
	const char *base;
	struct cli_device_prop props[CLI_DEVICE_MAX_PROPS];
};

struct vmm_config {
	uint64_t ram_size; /* bytes */
	struct smp_request smp_req; /* -smp as given */
	struct cpu_topology topo;   /* resolved (vmm/topology.c) */
	unsigned smp;		    /* topo.cpus: the vCPUs */
	const char *kernel, *initrd, *append;
	bool nographic;
	struct chardev_spec serial[CLI_MAX_SERIALS];
	unsigned n_serial;
	struct chardev_spec monitor;
	bool monitor_given;
	struct device_spec devices[CLI_MAX_DEVICES];
	unsigned n_devices;
	bool no_reboot;
	bool start_paused; /* -S */
	const char *incoming; /* -incoming URI|defer: load a migration stream */
	const char *name;
	char name_buf[64];
	bool help, version; /* --help / --version: print and exit 0 */
	enum cli_help_topic help_topic; /* a help verb: print it, exit 0 */
	char help_device[32];		/* CLI_HELP_DEVICE: -device NAME,help */
	struct cpu_spec cpu; /* -cpu; default model host */
	struct drive_spec drives[CLI_MAX_DRIVES];
	struct drive_spec vdrives[CLI_MAX_VIRTIO_DRIVES]; /* if=virtio and if=none */
	unsigned n_vdrives;
	struct virtio_blk_spec vblk[CLI_MAX_VIRTIO_DRIVES];
	unsigned n_vblk;
	bool snapshot;
	const char *bios;	/* NULL: SEABIOS_DEFAULT_PATH */
	const char *boot_order; /* -boot order=; NULL: "cdn" */
	char boot_order_buf[16];
	struct chardev_spec debugcon;
	bool debugcon_given;
	struct control_config control;
	enum irqchip_mode irqchip; /* -machine kernel_irqchip= */
	bool no_pit;		   /* -machine pit=off */
	bool q35;		   /* -machine q35: see cli_iommu.c for what it is */
	struct iommu_spec iommu;
	struct root_port_spec root_ports[CLI_MAX_ROOT_PORTS];
	unsigned n_root_ports;
	/* Networking (cli_net.c). Without any -netdev/-nic/-net option the
	 * guest gets one virtio-net NIC on user networking, as in QEMU. */
	struct netdev_spec netdevs[CLI_MAX_NETDEVS];
	unsigned n_netdevs;
	struct nic_spec nics[CLI_MAX_NICS];
	unsigned n_nics;
	bool net_given; /* any -netdev, -nic or -net: no default NIC */
	bool nodefaults;
	struct libvirt_config lv; /* cli_libvirt.c */
	struct wlan_config wlan;
	struct rng_config rng;
	struct vserial_config vserial;
	struct balloon_spec balloon;
	struct ahci_spec ahci[CLI_MAX_AHCI];
	unsigned n_ahci;
	struct sata_dev_spec sata[CLI_MAX_SATA_DEVS];
	unsigned n_sata;
};

/* 0 with cfg filled (defaults applied); -1 with a one-line message in err
 * ("-m: ..."), which the caller prints before exiting 1. */
int cli_parse(int argc, char **argv, struct vmm_config *cfg, char *err, size_t errlen);
/* The --help text: every row of the option table. */
void cli_usage(FILE *out, const char *argv0);
/* The table's option names, in order (NULL past the end): for tests. */
const char *cli_option_name(size_t i);
/* Print cfg->help_topic's list; -1 with err for an unknown -device NAME. */
int cli_print_help_topic(FILE *out, const struct vmm_config *cfg, char *err, size_t errlen);
/* The devices -device help lists (NULL past the end), and by name or
 * alias (NULL: not a device vmm has). */
const struct cli_device_help *cli_device_help_at(size_t i);
const struct cli_device_help *cli_device_help_find(const char *name);

/* Value parsers, exported for unit tests. */
int cli_parse_size(const char *s, uint64_t *bytes);
/* Strict unsigned decimal or 0x-hex, the whole string: 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
/* on/true/yes (or no value) and off/false/no: 0, or -1 with err naming key. */
int cli_bool_value(const char *key, const char *v, bool *out, char *err, size_t errlen);

/* cli_drive.c: the disk options (0, or -1 with err set). */
int cli_set_cdrom(struct vmm_config *cfg, const char *file, char *err, size_t errlen);
int cli_set_drive(struct vmm_config *cfg, unsigned index, const char *file, char *err,
		  size_t errlen);
int cli_parse_drive(struct vmm_config *cfg, const char *val, char *err, size_t errlen);
/* A disk device's write-cache=on|off|auto (QEMU's): *write_cache 1, 0 or
 * -1; -1 for anything else. */
int cli_parse_write_cache(const char *val, int *write_cache);
/* The drive's cache mode as the device's write-cache= (1 on, 0 off, -1
 * auto: the drive's own) makes it. */
enum drive_cache cli_device_cache(enum drive_cache c, int write_cache);
/* props: what follows "virtio-blk-pci," (modified). */
int cli_parse_virtio_blk(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* After parsing: each -device virtio-blk-pci's drive= found. */
int cli_resolve_drives(struct vmm_config *cfg, char *err, size_t errlen);
/* cli_sata.c: -device ahci/ich9-ahci and ide-hd/ide-cd (props: what
 * follows the name, modified); after parsing, their bus= and drive=
 * resolved (IDE ones moved to their slot in cfg->drives). */
int cli_parse_ahci(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_parse_ide_device(struct vmm_config *cfg, char *props, bool cdrom, char *err,
			 size_t errlen);
int cli_resolve_sata(struct vmm_config *cfg, char *err, size_t errlen);
/* addr=SLOT[.FN] in hex (04.0, 0x4, 4): 0 or -1. */
int cli_parse_pci_addr(const char *s, int *devfn);
/* cli_net.c: -netdev, -nic, -net none, -device virtio-net-pci (props:
 * what follows the name, modified); then the default NIC and each NIC's
 * netdev= resolved. 0, or -1 with err set. */
int cli_parse_netdev(struct vmm_config *cfg, const char *val, char *err, size_t errlen);
int cli_parse_nic(struct vmm_config *cfg, const char *val, char *err, size_t errlen);
int cli_parse_net(struct vmm_config *cfg, const char *val, char *err, size_t errlen);
int cli_parse_virtio_net(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_resolve_nics(struct vmm_config *cfg, char *err, size_t errlen);
/* cli_wlan.c: props is what follows "virtio-wlan-pci,". */
int cli_parse_virtio_wlan(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* -object wlan-medium (props: what follows "wlan-medium,"), from the
 * one -object parser in cli_libvirt.c. */
int cli_parse_wlan_medium(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* After parsing: each virtio-wlan-pci's medium= found. */
int cli_resolve_wlan(struct vmm_config *cfg, char *err, size_t errlen);
/* cli_rng.c: -device virtio-rng-pci (props: what follows the name) and
 * -object rng-random / rng-builtin (type: which; props: what follows it). */
int cli_parse_virtio_rng(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* cli_balloon.c: -device virtio-balloon-pci (props: what follows the name). */
int cli_parse_virtio_balloon(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* cli_parse_rng_object returns the object's index. */
int cli_parse_rng_object(struct vmm_config *cfg, const char *type, char *props, char *err,
			 size_t errlen);
/* cli_vserial.c: -device virtio-serial-pci (virtio-serial), virtserialport,
 * virtconsole (name: which; props: what follows the name). */
int cli_parse_virtio_serial(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_parse_vserport(struct vmm_config *cfg, const char *name, char *props, char *err,
		       size_t errlen);
/* After parsing: each port's nr= checked against its bus, free ones given. */
int cli_resolve_vserial(struct vmm_config *cfg, char *err, size_t errlen);
/* device_add of a port at run time: its properties parsed into p (its
 * chardev marked used), and, once it is entry i, its nr= checked or given. */
int cli_parse_vserport_spec(struct vmm_config *cfg, const char *name, char *props,
			    struct vserport_spec *p, char *err, size_t errlen);
int cli_resolve_vserport(struct vmm_config *cfg, unsigned i, char *err, size_t errlen);
/* After parsing: each rng= found, each rng-random file opened (before the
 * machine opens /dev/kvm, so a bad path is the error a user sees). */
int cli_resolve_rng(struct vmm_config *cfg, char *err, size_t errlen);
/* Close the files cli_resolve_rng opened (a config that is not run). */
void cli_close_rng(struct vmm_config *cfg);
/* At run time (object-add, object-del): an rng-random (its file opened) or
 * rng-builtin object, into a free entry: its index, or -1 with err; and an
 * object's removal, its file closed (no device may use it). */
int cli_add_rng_object(struct vmm_config *cfg, const char *type, const char *props, char *err,
		       size_t errlen);
void cli_remove_rng_object(struct vmm_config *cfg, unsigned i);
int cli_find_rng_object(const struct rng_config *r, const char *id);
int cli_parse_machine(const char *s, struct vmm_config *cfg, char *err, size_t errlen);
int cli_parse_chardev(const char *s, bool allow_mon, struct chardev_spec *spec, char *err,
		      size_t errlen);

/* The control plane's option parsers (cli_control.c), rows of cli.c's
 * table: -action, -no-shutdown, -qmp, -chardev, -mon, -gdb, -s,
 * -daemonize, -pidfile, -sandbox, -runas, -chroot, and -device pvpanic's
 * properties. */
struct cli_option;
#define CLI_CONTROL_PARSER(name)                                                              \
	int name(struct vmm_config *cfg, const struct cli_option *opt, const char *val, char *err, \
		 size_t errlen)
CLI_CONTROL_PARSER(cli_parse_action);
/* cli_device.c: -device, and "help" or "?" (QEMU's help words). */
CLI_CONTROL_PARSER(cli_parse_device);
bool cli_is_help(const char *s);
CLI_CONTROL_PARSER(cli_parse_no_shutdown);
CLI_CONTROL_PARSER(cli_parse_qmp);
CLI_CONTROL_PARSER(cli_parse_chardev_opt);
CLI_CONTROL_PARSER(cli_parse_mon);
CLI_CONTROL_PARSER(cli_parse_gdb);
CLI_CONTROL_PARSER(cli_parse_gdb_default);
CLI_CONTROL_PARSER(cli_parse_daemonize);
CLI_CONTROL_PARSER(cli_parse_pidfile);
CLI_CONTROL_PARSER(cli_parse_sandbox);
CLI_CONTROL_PARSER(cli_parse_runas);
CLI_CONTROL_PARSER(cli_parse_chroot);
/* -device pvpanic[,ioport=N]: fills d. */
int cli_parse_pvpanic(struct device_spec *d, char *props, char *err, size_t errlen);
/* cli_iommu.c: -device intel-iommu and edu (props: what follows the
 * name), and after parsing the checks of the q35 subset. 0 or -1. */
int cli_parse_intel_iommu(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_parse_edu(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* cli_usb.c: -device piix3-usb-uhci / qemu-xhci (props: what follows the
 * name) and -usb (a piix3-usb-uhci at 01.2, as QEMU's pc machine adds). */
int cli_parse_usb_uhci(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_parse_usb_xhci(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_add_default_usb(struct vmm_config *cfg, char *err, size_t errlen);
int cli_parse_pci_testdev(struct vmm_config *cfg, char *props, char *err, size_t errlen);
int cli_check_q35(const struct vmm_config *cfg, char *err, size_t errlen);
int cli_parse_pcie_root_port(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* A device's bus=: the root bus, or a pcie-root-port id= (kept in out,
 * checked once every -device is read). 0 or -1. */
int cli_parse_bus(const char *val, char *out, size_t outlen);
/* A PCI device's bus= and addr= (slot min_slot-31, or 0 behind a root
 * port): 1 taken, 0 not one of them, -1 an invalid value. */
int cli_pci_place(const char *key, const char *v, char *bus, size_t buslen, int *devfn,
		  unsigned min_slot);
/* QEMU's virtio-pci transport switches, which libvirt probes for and
 * writes for its non-transitional models: vmm's virtio devices are modern
 * only (virtio 1.x, no legacy I/O BAR), so disable-legacy=on/auto and
 * disable-modern=off are what they already are, and the opposites are
 * refused. 1 taken, 0 not one of them, -1 a value vmm cannot honour. */
int cli_virtio_transport_prop(const char *key, const char *v);
/* QEMU's VIRTIO-pci-non-transitional device names (libvirt's model
 * virtio-non-transitional) are what vmm's virtio-pci devices are: true
 * with the base name ("virtio-blk-pci") in base. */
bool cli_virtio_non_transitional(const char *name, char *base, size_t len);
/* The index of the root port named id, or -1. */
int cli_find_root_port(const struct vmm_config *cfg, const char *id);
/* The root PCI bus's names: pci.0 (i440FX) or pcie.0 (q35), as libvirt
 * writes them in bus=. */
bool cli_is_root_bus(const char *name);
/* q35 or QEMU's versioned pc-q35-X.Y. */
bool cli_is_q35_name(const char *name);
/* The spec a frontend opens a -chardev with. 0, or -1 with err. */
int cli_chardev_spec(const struct chardev_def *d, struct chardev_spec *spec, char *err,
		     size_t errlen);
/* The -chardev with this id as a frontend's backend (marks it used). */
int cli_chardev_lookup(struct vmm_config *cfg, const char *id, struct chardev_spec *spec, char *err,
		       size_t errlen);
/* -mon chardev=ID,mode=readline: the HMP monitor on that chardev. */
int cli_monitor_on_chardev(struct vmm_config *cfg, const char *id, char *err, size_t errlen);
/* unix:PATH[,server][,nowait], tcp:[HOST]:PORT[,...] (server=on and
 * wait=off spellings too). With LISTEN_NEED_SERVER (QMP) the server option
 * must be given and wait defaults on, as in QEMU; else (gdb) it is implied
 * and wait is off. LISTEN_MAY_DIAL (-serial/-monitor tcp:): without server,
 * a client (spec->client), reconnect=S allowed. 0, or -1 with err. */
#define LISTEN_NEED_SERVER 1u
#define LISTEN_MAY_DIAL 2u
int cli_parse_listen(const char *s, unsigned flags, struct listen_spec *spec, char *err,
		     size_t errlen);

/* Split "a=b,c=d" in place: the next key and value (NULL for a bare
 * key), or false at the end. */
bool cli_next_kv(char **cursor, char **key, char **value);
/* Copy a non-empty value that fits in size into dst: 0, or -1 with err
 * ("WHAT: too long", "WHAT: missing value"). */
int cli_copy_value(char *dst, size_t size, const char *val, const char *what, char *err,
		   size_t errlen);

/* cli_libvirt.c: the options libvirt's QEMU driver puts on every command
 * line (-no-user-config, -nodefaults, -accel, -object, -overcommit, -uuid,
 * -display, -audiodev, -rtc, -no-acpi, -msg, -blockdev). */
CLI_CONTROL_PARSER(cli_parse_no_user_config);
CLI_CONTROL_PARSER(cli_parse_accel);
CLI_CONTROL_PARSER(cli_parse_object);
CLI_CONTROL_PARSER(cli_parse_overcommit);
CLI_CONTROL_PARSER(cli_parse_uuid);
CLI_CONTROL_PARSER(cli_parse_display);
CLI_CONTROL_PARSER(cli_parse_usb);
CLI_CONTROL_PARSER(cli_parse_no_hpet);
CLI_CONTROL_PARSER(cli_parse_audiodev);
CLI_CONTROL_PARSER(cli_parse_rtc);
CLI_CONTROL_PARSER(cli_parse_no_acpi);
CLI_CONTROL_PARSER(cli_parse_msg);
CLI_CONTROL_PARSER(cli_parse_blockdev);
/* A JSON option value ({"driver": ...}) as QEMU's key=value text, the
 * object's `type_key` member first without its key ("virtio-blk-pci,
 * drive=d0"); other values are returned unchanged. NULL with err. */
const char *cli_json_to_opts(struct vmm_config *cfg, const char *val, const char *type_key,
			     char *err, size_t errlen);
/* -machine keys libvirt adds (none, pc-i440fx-N, accel=kvm:tcg, usb,
 * dump-guest-core, memory-backend): 1 when handled, 0 when the key is
 * not one of these, -1 with err. */
int cli_machine_key(struct vmm_config *cfg, const char *key, const char *val, char *err,
		    size_t errlen);
/* -device isa-serial,chardev=ID[,index=N][,id=..]: props after the name. */
int cli_parse_isa_serial(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* -chardev pty|file|null|stdio,id=ID[,path=P]: a serial port backend. rest
 * is what follows the backend name (modified). 0 or -1 with err. */
int cli_chardev_serial_backend(struct chardev_def *d, const char *backend, char *rest, char *err,
			       size_t errlen);
/* After every option: -machine memory-backend= resolved to its -object. */
int cli_libvirt_finish(struct vmm_config *cfg, char *err, size_t errlen);
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (all zero without -uuid). */
void cli_uuid_string(const struct vmm_config *cfg, char out[37]);

#endif /* VMM_CLI_H */
