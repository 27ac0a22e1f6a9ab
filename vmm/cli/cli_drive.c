/* cli_drive.c — the disk options of the command line: -hda..-hdd,
 * -drive (if=ide|virtio|none) and -device virtio-blk-pci, QEMU's
 * spellings. cli.c's option table calls in here. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

/* ----------------------------------------------------- -drive, -hdX */

static bool ide_slot_used(const struct drive_spec *d)
{
	return d->file || d->cdrom;
}

int cli_set_drive(struct vmm_config *cfg, unsigned index, const char *file, char *err,
		  size_t errlen)
{
	struct drive_spec *d = &cfg->drives[index];

	if (ide_slot_used(d)) { /* as QEMU: a second disk on a slot is an error */
		snprintf(err, errlen, "IDE index %u is already taken by '%s'", index,
			 d->file ? d->file : "an empty CD-ROM drive");
		return -1;
	}
	if (!*file) {
		snprintf(err, errlen, "empty file name");
		return -1;
	}
	if (strlen(file) >= sizeof(d->file_buf)) {
		snprintf(err, errlen, "file name too long");
		return -1;
	}
	strcpy(d->file_buf, file);
	d->file = d->file_buf;
	return 0;
}

static int drive_prop(struct drive_spec *d, const char *key, const char *val, char *err,
		      size_t errlen)
{
	static const char *const caches[] = {"writeback", "writethrough", "unsafe", "none",
					     "directsync"};
	static const char *const ifaces[] = {"ide", "virtio", "none"};

	if (!strcmp(key, "format")) {
		if (strcmp(val, "raw") && strcmp(val, "qcow2")) {
			snprintf(err, errlen, "unsupported format '%s' (raw, qcow2)", val);
			return -1;
		}
		d->format = strcmp(val, "raw") ? DRIVE_FORMAT_QCOW2 : DRIVE_FORMAT_RAW;
	} else if (!strcmp(key, "file.locking")) {
		/* auto: locks where the file system has them, as on */
		if (strcmp(val, "on") && strcmp(val, "off") && strcmp(val, "auto")) {
			snprintf(err, errlen, "file.locking must be on, off or auto, not '%s'",
				 val);
			return -1;
		}
		d->no_lock = !strcmp(val, "off");
	} else if (!strcmp(key, "if")) {
		for (unsigned i = 0; i < 3; i++)
			if (!strcmp(val, ifaces[i])) {
				d->iface = (enum drive_if)i;
				return 0;
			}
		snprintf(err, errlen, "unsupported if '%s' (ide, virtio, none)", val);
		return -1;
	} else if (!strcmp(key, "id")) {
		if (!*val || strlen(val) >= sizeof(d->id)) {
			snprintf(err, errlen, "id must be 1 to %zu characters", sizeof(d->id) - 1);
			return -1;
		}
		strcpy(d->id, val);
	} else if (!strcmp(key, "readonly")) {
		if (strcmp(val, "on") && strcmp(val, "off")) {
			snprintf(err, errlen, "readonly must be on or off, not '%s'", val);
			return -1;
		}
		d->read_only = !strcmp(val, "on");
	} else if (!strcmp(key, "cache")) {
		for (unsigned i = 0; i < sizeof(caches) / sizeof(caches[0]); i++)
			if (!strcmp(val, caches[i])) {
				d->cache = (enum drive_cache)i;
				return 0;
			}
		snprintf(err, errlen, "unknown cache mode '%s'", val);
		return -1;
	} else if (!strcmp(key, "aio")) {
		/* IDE serves its requests on the vCPU thread: aio= only
		 * changes virtio-blk, as native= changes nothing here */
		if (strcmp(val, "threads") && strcmp(val, "io_uring")) {
			snprintf(err, errlen, "unknown aio mode '%s' (threads, io_uring)", val);
			return -1;
		}
		d->aio = strcmp(val, "threads") ? DRIVE_AIO_IO_URING : DRIVE_AIO_THREADS;
	} else if (!strcmp(key, "media")) {
		if (strcmp(val, "disk") && strcmp(val, "cdrom")) {
			snprintf(err, errlen, "media must be disk or cdrom, not '%s'", val);
			return -1;
		}
		d->cdrom = !strcmp(val, "cdrom");
	} else {
		snprintf(err, errlen,
			 "unknown parameter '%s' (file, format, if, index, media, id, readonly, "
			 "cache, "
			 "aio, file.locking)",
			 key);
		return -1;
	}
	return 0;
}

static bool drive_id_taken(const struct vmm_config *cfg, const char *id)
{
	for (unsigned i = 0; i < cfg->n_vdrives; i++)
		if (!strcmp(cfg->vdrives[i].id, id))
			return true;
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++)
		if (ide_slot_used(&cfg->drives[i]) && !strcmp(cfg->drives[i].id, id))
			return true;
	return false;
}

/* -drive if=virtio (a virtio-blk-pci of its own) or if=none (for a -device). */
static int add_vdrive(struct vmm_config *cfg, struct drive_spec *d, const char *file,
		      bool has_index, char *err, size_t errlen)
{
	struct drive_spec *slot;

	if (has_index) {
		snprintf(err, errlen, "index= is for if=ide");
		return -1;
	}
	if (cfg->n_vdrives == CLI_MAX_VIRTIO_DRIVES) {
		snprintf(err, errlen, "too many virtio drives (at most %d)", CLI_MAX_VIRTIO_DRIVES);
		return -1;
	}
	if (d->iface == DRIVE_IF_NONE && !d->id[0]) {
		snprintf(err, errlen, "if=none needs id=NAME (for -device ...,drive=NAME)");
		return -1;
	}
	if (d->id[0] && drive_id_taken(cfg, d->id)) {
		snprintf(err, errlen, "Duplicate ID '%s' for drive", d->id);
		return -1;
	}
	if (!*file || strlen(file) >= sizeof(d->file_buf)) {
		snprintf(err, errlen, "%s file name", *file ? "too long a" : "empty");
		return -1;
	}
	slot = &cfg->vdrives[cfg->n_vdrives];
	*slot = *d;
	strcpy(slot->file_buf, file);
	slot->file = slot->file_buf;
	if (!slot->id[0]) /* QEMU's name for the n-th virtio drive */
		snprintf(slot->id, sizeof(slot->id), "virtio%u", cfg->n_vdrives);
	if (d->iface == DRIVE_IF_VIRTIO) {
		if (cfg->n_vblk == CLI_MAX_VIRTIO_DRIVES) {
			snprintf(err, errlen, "too many virtio-blk devices");
			return -1;
		}
		cfg->vblk[cfg->n_vblk++] = (struct virtio_blk_spec){.drive = cfg->n_vdrives,
								    .bootindex = -1,
								    .devfn = -1,
								    .num_queues = 1,
								    .write_cache = -1};
	}
	cfg->n_vdrives++;
	return 0;
}

/* Each -device virtio-blk-pci names an if=none drive no other device uses. */
int cli_resolve_drives(struct vmm_config *cfg, char *err, size_t errlen)
{
	for (unsigned i = 0; i < cfg->n_vblk; i++) {
		struct virtio_blk_spec *v = &cfg->vblk[i];
		unsigned d;

		if (!v->drive_id[0])
			continue; /* from -drive if=virtio */
		for (d = 0; d < cfg->n_vdrives && strcmp(cfg->vdrives[d].id, v->drive_id); d++)
			;
		if (d == cfg->n_vdrives || cfg->vdrives[d].iface != DRIVE_IF_NONE) {
			snprintf(err, errlen, "-device virtio-blk-pci: no -drive if=none,id=%s",
				 v->drive_id);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (cfg->vblk[j].drive == d && cfg->vblk[j].drive_id[0]) {
				snprintf(err, errlen,
					 "-device virtio-blk-pci: drive '%s' is already in use",
					 v->drive_id);
				return -1;
			}
		v->drive = d;
	}
	return 0;
}

int cli_parse_drive(struct vmm_config *cfg, const char *val, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;
	struct drive_spec d = {0};
	const char *file = NULL;
	uint64_t index = CLI_MAX_DRIVES;

	if (strlen(val) >= sizeof(buf)) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	strcpy(buf, val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "expected key=value, got '%s'", tok);
			return -1;
		}
		*eq = 0;
		if (!strcmp(tok, "file")) {
			file = eq + 1;
		} else if (!strcmp(tok, "index")) {
			if (cli_parse_u64(eq + 1, &index) < 0 || index >= CLI_MAX_DRIVES) {
				snprintf(err, errlen, "index must be 0 to %d, not '%s'",
					 CLI_MAX_DRIVES - 1, eq + 1);
				return -1;
			}
		} else if (drive_prop(&d, tok, eq + 1, err, errlen) < 0) {
			return -1;
		}
	}
	if (d.cdrom && d.iface != DRIVE_IF_IDE) {
		snprintf(err, errlen, "media=cdrom needs if=ide");
		return -1;
	}
	if (!file && !d.cdrom) {
		snprintf(err, errlen, "needs file=PATH");
		return -1;
	}
	if (d.iface != DRIVE_IF_IDE)
		return add_vdrive(cfg, &d, file, index != CLI_MAX_DRIVES, err, errlen);
	if (index == CLI_MAX_DRIVES) /* first free slot, as QEMU does */
		for (index = 0; index < CLI_MAX_DRIVES && ide_slot_used(&cfg->drives[index]);
		     index++)
			;
	if (index == CLI_MAX_DRIVES) {
		snprintf(err, errlen, "no free IDE slot");
		return -1;
	}
	if (d.id[0] && drive_id_taken(cfg, d.id)) {
		snprintf(err, errlen, "Duplicate ID '%s' for drive", d.id);
		return -1;
	}
	if (file && cli_set_drive(cfg, (unsigned)index, file, err, errlen) < 0)
		return -1;
	if (!file && ide_slot_used(&cfg->drives[index])) {
		snprintf(err, errlen, "IDE index %u is already taken", (unsigned)index);
		return -1;
	}
	cfg->drives[index].cdrom = d.cdrom;
	cfg->drives[index].read_only = d.read_only;
	cfg->drives[index].cache = d.cache;
	cfg->drives[index].format = d.format;
	cfg->drives[index].no_lock = d.no_lock;
	strcpy(cfg->drives[index].id, d.id);
	return 0;
}

/* -cdrom FILE: QEMU's place for it, the secondary master. */
int cli_set_cdrom(struct vmm_config *cfg, const char *file, char *err, size_t errlen)
{
	if (cli_set_drive(cfg, 2, file, err, errlen) < 0)
		return -1;
	cfg->drives[2].cdrom = true;
	return 0;
}

/* ------------------------------------------- -device virtio-blk-pci */

/* addr=SLOT[.FN], hex as in QEMU (04.0, 0x4, 4, libvirt's 0x2.0x1). */
int cli_parse_pci_addr(const char *s, int *devfn)
{
	unsigned long slot, fn = 0;
	char *end;

	if (!isxdigit((unsigned char)*s))
		return -1;
	slot = strtoul(s, &end, 16);
	if (*end == '.') {
		if (!isxdigit((unsigned char)end[1]))
			return -1;
		fn = strtoul(end + 1, &end, 16);
	}
	if (*end || slot > 31 || fn > 7)
		return -1;
	*devfn = (int)(slot << 3 | fn);
	return 0;
}

static int virtio_blk_prop(struct virtio_blk_spec *v, const char *key, const char *val, char *err,
			   size_t errlen)
{
	uint64_t n;

	if (cli_virtio_transport_prop(key, val) > 0) {
		/* modern only, as asked */
	} else if (!strcmp(key, "drive") && *val && strlen(val) < sizeof(v->drive_id)) {
		strcpy(v->drive_id, val);
	} else if (!strcmp(key, "bootindex") && cli_parse_u64(val, &n) == 0 && n < 1000) {
		v->bootindex = (int)n;
	} else if (!strcmp(key, "serial") && strlen(val) < sizeof(v->serial)) {
		strcpy(v->serial, val);
	} else if (!strcmp(key, "addr") && cli_parse_pci_addr(val, &v->devfn) == 0 &&
		   (v->devfn >= 2 << 3 || v->devfn == 0)) {
		/* slots 0 and 1 hold the host and ISA bridges; 0 is for behind
		 * a root port (the board checks the slot is free) */
	} else if (!strcmp(key, "num-queues") && cli_parse_u64(val, &n) == 0 && n >= 1 && n <= 16) {
		v->num_queues = (unsigned)n;
	} else if (!strcmp(key, "id") && *val && strlen(val) < sizeof(v->id)) {
		strcpy(v->id, val); /* QMP's qom-list /machine/peripheral */
	} else if (!strcmp(key, "bus") && cli_parse_bus(val, v->bus, sizeof(v->bus)) == 0) {
		/* the root bus, or a root port's (libvirt names them) */
	} else if (!strcmp(key, "write-cache") && cli_parse_write_cache(val, &v->write_cache) == 0) {
		/* libvirt's -blockdev form carries the cache mode's writeback
		 * half here (cache='none' is direct + write-cache=on) */
	} else {
		snprintf(err, errlen,
			 "virtio-blk-pci: invalid %s '%s' (drive=ID, bootindex=N, serial=S (20 "
			 "chars), addr=SLOT[.FN] (slot 2-31), num-queues=1-16, "
			 "write-cache=on|off|auto, disable-legacy=on, disable-modern=off)",
			 key, val);
		return -1;
	}
	return 0;
}

int cli_parse_write_cache(const char *val, int *write_cache)
{
	if (!val || (strcmp(val, "on") && strcmp(val, "off") && strcmp(val, "auto")))
		return -1;
	*write_cache = !strcmp(val, "auto") ? -1 : !strcmp(val, "on");
	return 0;
}

/* off makes every write reach the medium before it completes
 * (writethrough), on lets them sit in the host's cache until a flush; the
 * drive's direct I/O and no-flush stay. */
enum drive_cache cli_device_cache(enum drive_cache c, int write_cache)
{
	if (write_cache == 0 && c == DRIVE_CACHE_WRITEBACK)
		return DRIVE_CACHE_WRITETHROUGH;
	if (write_cache == 0 && c == DRIVE_CACHE_NONE)
		return DRIVE_CACHE_DIRECTSYNC;
	if (write_cache == 1 && c == DRIVE_CACHE_WRITETHROUGH)
		return DRIVE_CACHE_WRITEBACK;
	if (write_cache == 1 && c == DRIVE_CACHE_DIRECTSYNC)
		return DRIVE_CACHE_NONE;
	return c;
}

/* -device virtio-blk-pci,drive=ID,...: props is the rest after the name. */
int cli_parse_virtio_blk(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct virtio_blk_spec v = {
		.bootindex = -1, .devfn = -1, .num_queues = 1, .write_cache = -1};
	char *save = NULL, *tok;

	for (tok = strtok_r(props, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "virtio-blk-pci: expected key=value, got '%s'", tok);
			return -1;
		}
		*eq = 0;
		if (virtio_blk_prop(&v, tok, eq + 1, err, errlen) < 0)
			return -1;
	}
	if (!v.drive_id[0]) {
		snprintf(err, errlen, "virtio-blk-pci: needs drive=ID (a -drive if=none,id=ID)");
		return -1;
	}
	if (cfg->n_vblk == CLI_MAX_VIRTIO_DRIVES) {
		snprintf(err, errlen, "too many virtio-blk devices (at most %d)",
			 CLI_MAX_VIRTIO_DRIVES);
		return -1;
	}
	cfg->vblk[cfg->n_vblk++] = v;
	return 0;
}
