/* cli.h — the parsed command line (vmm/cli.c holds the option table).
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

#include "vmm/cpuid.h"

#define CLI_MAX_SERIALS 4
#define CLI_MAX_DEVICES 16
#define CLI_MAX_SMP 255
#define CLI_MAX_DRIVES 4 /* IDE: index = channel * 2 + slave */

/* A character device spec: -serial, -monitor. */
enum chardev_kind {
	CHARDEV_NONE,
	CHARDEV_NULL,
	CHARDEV_STDIO,
	CHARDEV_MON_STDIO, /* stdio, multiplexed with the monitor (Ctrl-A c) */
	CHARDEV_FILE,
	CHARDEV_UNIX, /* a unix socket server */
};

struct chardev_spec {
	enum chardev_kind kind;
	char path[108];	  /* FILE, UNIX (a sockaddr_un path fits) */
	bool wait;	  /* UNIX: block at start-up until a client connects */
};

enum device_kind { DEVICE_ISA_DEBUG_EXIT, DEVICE_PVPANIC, DEVICE_PC_TESTDEV };

struct device_spec {
	enum device_kind kind;
	uint16_t iobase, iosize;
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

struct drive_spec {
	const char *file; /* NULL: the slot is empty */
	bool read_only;
	enum drive_cache cache;
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

/* A listening socket for QMP or the gdbstub: unix:PATH, tcp:HOST:PORT, or
 * an inherited listening fd (libvirt's -chardev socket,fd=N). */
enum listen_kind { LISTEN_UNIX, LISTEN_TCP, LISTEN_FD };

struct listen_spec {
	enum listen_kind kind;
	char path[108]; /* UNIX */
	char host[64];	/* TCP; "" is every address */
	char port[8];	/* TCP */
	int fd;		/* FD */
	bool wait;	/* block at start-up until a client connects */
};

#define CLI_MAX_CHARDEVS 8
#define CLI_MAX_QMP 4

/* -chardev BACKEND,id=ID,...: a named socket for -mon chardev=ID. */
struct chardev_def {
	char id[32];
	struct listen_spec sock;
	bool used;
};

/* The control plane's options (vmm/cli_control.c parses them). */
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
};

/* -machine kernel_irqchip=: where the interrupt controllers live. */
enum irqchip_mode {
	IRQCHIP_ON,    /* all in KVM (the default) */
	IRQCHIP_SPLIT, /* local APICs in KVM; PIC, I/O APIC, PIT in vmm */
	IRQCHIP_OFF,   /* everything in vmm */
};

struct vmm_config {
	uint64_t ram_size; /* bytes */
	unsigned smp;
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
	const char *name;
	char name_buf[64];
	bool help, version; /* --help / --version: print and exit 0 */
	bool device_help;   /* -device help (or ?): list the devices, exit 0 */
	bool nodefaults;    /* -nodefaults: no default serial port */
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
};

/* 0 with cfg filled (defaults applied); -1 with a one-line message in err
 * ("-m: ..."), which the caller prints before exiting 1. */
int cli_parse(int argc, char **argv, struct vmm_config *cfg, char *err, size_t errlen);
/* The --help text. */
void cli_usage(FILE *out, const char *argv0);

/* Value parsers, exported for unit tests. */
int cli_parse_size(const char *s, uint64_t *bytes);
/* Strict unsigned decimal or 0x-hex, the whole string: 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);

/* cli_drive.c: the disk options (0, or -1 with err set). */
int cli_set_drive(struct vmm_config *cfg, unsigned index, const char *file, char *err,
		  size_t errlen);
int cli_parse_drive(struct vmm_config *cfg, const char *val, char *err, size_t errlen);
/* props: what follows "virtio-blk-pci," (modified). */
int cli_parse_virtio_blk(struct vmm_config *cfg, char *props, char *err, size_t errlen);
/* After parsing: each -device virtio-blk-pci's drive= found. */
int cli_resolve_drives(struct vmm_config *cfg, char *err, size_t errlen);
int cli_parse_machine(const char *s, struct vmm_config *cfg, char *err, size_t errlen);
int cli_parse_chardev(const char *s, bool allow_mon, struct chardev_spec *spec, char *err,
		      size_t errlen);

/* The control plane's option parsers (cli_control.c), rows of cli.c's
 * table: -action, -no-shutdown, -qmp, -chardev, -mon, -gdb, -s,
 * -daemonize, -pidfile, and -device pvpanic's properties. */
struct cli_option;
#define CLI_CONTROL_PARSER(name)                                                              \
	int name(struct vmm_config *cfg, const struct cli_option *opt, const char *val, char *err, \
		 size_t errlen)
CLI_CONTROL_PARSER(cli_parse_action);
CLI_CONTROL_PARSER(cli_parse_no_shutdown);
CLI_CONTROL_PARSER(cli_parse_qmp);
CLI_CONTROL_PARSER(cli_parse_chardev_opt);
CLI_CONTROL_PARSER(cli_parse_mon);
CLI_CONTROL_PARSER(cli_parse_gdb);
CLI_CONTROL_PARSER(cli_parse_gdb_default);
CLI_CONTROL_PARSER(cli_parse_daemonize);
CLI_CONTROL_PARSER(cli_parse_pidfile);
/* -device pvpanic[,ioport=N]: fills d. */
int cli_parse_pvpanic(struct device_spec *d, char *props, char *err, size_t errlen);
/* unix:PATH[,server][,nowait], tcp:[HOST]:PORT[,...] (server=on and
 * wait=off spellings too). With need_server (QMP) the server option must be
 * given and wait defaults on, as in QEMU; else (gdb) it is implied and
 * wait is off. 0, or -1 with err. */
int cli_parse_listen(const char *s, bool need_server, struct listen_spec *spec, char *err,
		     size_t errlen);

#endif /* VMM_CLI_H */
