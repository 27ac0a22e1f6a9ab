/* cdrom.c — the CD-ROM drives as the monitors see them: QEMU's names
 * (ide1-cd0, or the drive's id=), media changes (HMP change/eject, QMP
 * blockdev-change-medium, eject, blockdev-open-tray/-close-tray) and the
 * DEVICE_TRAY_MOVED event, whoever moved the tray. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/storage/atapi.h"
#include "vmm/control/monitor.h"
#include "vmm/machine.h"

const char *machine_ide_default_name(const struct machine *m, unsigned index, bool cdrom, char *buf,
				     size_t len)
{
	unsigned per_bus = m->cfg->q35 ? 1 : 2;

	snprintf(buf, len, "ide%u-%s%u", index / per_bus, cdrom ? "cd" : "hd", index % per_bus);
	return buf;
}

const char *machine_ide_attachment(const struct machine *m, unsigned index, char *buf, size_t len)
{
	if (m->cfg->q35)
		snprintf(buf, len, "ich9-ahci (00:1f.2) port %u", index);
	else
		snprintf(buf, len, "ide (00:01.1) channel %u %s", index / 2,
			 index % 2 ? "slave" : "master");
	return buf;
}

const char *machine_ide_name(const struct machine *m, unsigned index, bool cdrom, char *buf,
			     size_t len)
{
	if (m->cfg->drives[index].id[0])
		return m->cfg->drives[index].id;
	return machine_ide_default_name(m, index, cdrom, buf, len);
}

const char *machine_cdrom_name(struct machine *m, unsigned index, char *buf, size_t len)
{
	return machine_ide_name(m, index, true, buf, len);
}

int machine_find_cdrom(struct machine *m, const char *name)
{
	char buf[32];

	for (unsigned i = 0; name && i < CLI_MAX_DRIVES; i++) {
		if (!m->cdroms[i])
			continue;
		machine_ide_default_name(m, i, true, buf, sizeof(buf));
		if (!strcmp(name, buf) || !strcmp(name, machine_cdrom_name(m, i, buf, sizeof(buf))))
			return (int)i;
	}
	return -1;
}

static void tray_event(struct machine *m, unsigned index, bool open)
{
	char buf[32];
	const char *name = machine_cdrom_name(m, index, buf, sizeof(buf));

	machine_event(m, "DEVICE_TRAY_MOVED", "{\"device\": \"%s\", \"id\": \"%s\", \"tray-open\": %s}",
		      name, name, open ? "true" : "false");
}

struct tray_ctx {
	struct machine *m;
	unsigned index;
};
static struct tray_ctx tray_ctx[CLI_MAX_DRIVES];

/* The guest moved the tray (START STOP UNIT). */
static void guest_moved_tray(void *opaque, bool open)
{
	struct tray_ctx *c = opaque;

	tray_event(c->m, c->index, open);
}

void machine_cdrom_wire(struct machine *m)
{
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		if (!m->cdroms[i])
			continue;
		tray_ctx[i] = (struct tray_ctx){m, i};
		atapi_on_tray_moved(m->cdroms[i], guest_moved_tray, &tray_ctx[i]);
	}
}

static int find(struct machine *m, const char *name, char *err, size_t errlen)
{
	int i = machine_find_cdrom(m, name);

	if (i < 0)
		snprintf(err, errlen, "Device '%s' not found", name ? name : "");
	return i;
}

static bool tray_open(struct machine *m, unsigned i)
{
	struct atapi_state s;

	atapi_get_state(m->cdroms[i], &s);
	return s.tray_open;
}

static void locked_error(const char *name, char *err, size_t errlen)
{
	snprintf(err, errlen, "Device '%s' is locked and force was not specified, wait for tray "
			      "to open and try again", name);
}

int machine_cdrom_change(struct machine *m, const char *name, const char *file, bool force,
			 char *err, size_t errlen)
{
	struct block_opts o = {.path = file, .read_only = true};
	struct block_dev *medium;
	char why[256];
	bool was_open;
	int i = find(m, name, err, errlen);

	if (i < 0)
		return -1;
	medium = block_open(&o, why, sizeof(why));
	if (!medium) {
		snprintf(err, errlen, "Could not open '%s': %s", file, why);
		return -1;
	}
	was_open = tray_open(m, (unsigned)i);
	if (atapi_change(m->cdroms[i], medium, force) < 0) {
		block_close(medium);
		locked_error(name, err, errlen);
		return -1;
	}
	if (!was_open)
		tray_event(m, (unsigned)i, true);
	tray_event(m, (unsigned)i, false);
	return 0;
}

int machine_cdrom_eject(struct machine *m, const char *name, bool force, char *err,
			size_t errlen)
{
	bool was_open;
	int i = find(m, name, err, errlen);

	if (i < 0)
		return -1;
	was_open = tray_open(m, (unsigned)i);
	if (atapi_eject(m->cdroms[i], force) < 0) {
		locked_error(name, err, errlen);
		return -1;
	}
	if (!was_open)
		tray_event(m, (unsigned)i, true);
	return 0;
}

int machine_cdrom_tray(struct machine *m, const char *name, bool open, bool force, char *err,
		       size_t errlen)
{
	bool was_open;
	int i = find(m, name, err, errlen);

	if (i < 0)
		return -1;
	was_open = tray_open(m, (unsigned)i);
	if (open && atapi_open_tray(m->cdroms[i], force) < 0) {
		locked_error(name, err, errlen);
		return -1;
	}
	if (!open)
		atapi_close_tray(m->cdroms[i]);
	if (was_open != open)
		tray_event(m, (unsigned)i, open);
	return 0;
}

/* ----------------------------------------------------------------- HMP */

/* change DEVICE FILE [raw] */
void hmp_change(struct machine *m, int argc, char **argv, FILE *out)
{
	char err[256];

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "raw"))) {
		fprintf(out, "usage: change DEVICE FILE [raw]\n");
		return;
	}
	if (machine_cdrom_change(m, argv[1], argv[2], false, err, sizeof(err)) < 0)
		fprintf(out, "Error: %s\n", err);
}

/* eject [-f] DEVICE */
void hmp_eject(struct machine *m, int argc, char **argv, FILE *out)
{
	bool force = argc == 3 && !strcmp(argv[1], "-f");
	char err[256];

	if (argc != 2 && !force) {
		fprintf(out, "usage: eject [-f] DEVICE\n");
		return;
	}
	if (machine_cdrom_eject(m, argv[argc - 1], force, err, sizeof(err)) < 0)
		fprintf(out, "Error: %s\n", err);
}

/* info block's lines for a CD-ROM drive. */
void hmp_cdrom_info(struct machine *m, unsigned i, FILE *out)
{
	struct atapi_state s;
	char buf[32], at[64];

	atapi_get_state(m->cdroms[i], &s);
	if (s.medium)
		fprintf(out, "%s: %s (%s, read-only)\n", machine_cdrom_name(m, i, buf, sizeof(buf)),
			block_path(s.medium), block_format_name(s.medium));
	else
		fprintf(out, "%s: [not inserted]\n", machine_cdrom_name(m, i, buf, sizeof(buf)));
	fprintf(out, "    Attached to:      %s\n", machine_ide_attachment(m, i, at, sizeof(at)));
	fprintf(out, "    Removable device: %slocked, tray %s\n\n", s.locked ? "" : "not ",
		s.tray_open ? "open" : "closed");
}
