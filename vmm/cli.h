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

enum device_kind { DEVICE_ISA_DEBUG_EXIT };

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
	struct cpu_spec cpu; /* -cpu; default model vmm */
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
int cli_parse_chardev(const char *s, bool allow_mon, struct chardev_spec *spec, char *err,
		      size_t errlen);

#endif /* VMM_CLI_H */
