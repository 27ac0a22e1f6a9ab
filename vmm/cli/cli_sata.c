/* cli_sata.c — -device ahci (ich9-ahci) and the ATA devices QEMU puts on
 * its ports or on the IDE channels: -device ide-hd,drive=ID,bus=sata0.0
 * and -device ide-cd[,drive=ID],bus=sata0.1, as libvirt writes them
 * (also in JSON, and over -blockdev nodes); bus=ide.N,unit=U puts the
 * drive on the PIIX3 IDE slot N * 2 + U instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

#define AHCI_PORTS 6

int cli_parse_ahci(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct ahci_spec a = {.devfn = -1};
	char *key, *v;

	while (cli_next_kv(&props, &key, &v)) {
		if (!strcmp(key, "id")) {
			if (cli_copy_value(a.id, sizeof(a.id), v, "ahci: id", err, errlen) < 0)
				return -1;
		} else if (!strcmp(key, "addr") && v && cli_parse_pci_addr(v, &a.devfn) == 0 &&
			   a.devfn >= 2 << 3) {
			/* slots 0 and 1 hold the host and ISA bridges */
		} else if ((!strcmp(key, "bus") && v && !strcmp(v, "pci.0")) ||
			   !strcmp(key, "multifunction")) {
			/* the only PCI bus; functions need no declaring here */
		} else {
			snprintf(err, errlen,
				 "ahci: invalid %s '%s' (id=NAME, addr=SLOT[.FN] (slot 2-31))", key,
				 v ? v : "");
			return -1;
		}
	}
	if (cfg->n_ahci == CLI_MAX_AHCI) {
		snprintf(err, errlen, "too many AHCI controllers (at most %d)", CLI_MAX_AHCI);
		return -1;
	}
	if (!a.id[0]) /* QEMU's bus name for an anonymous controller */
		snprintf(a.id, sizeof(a.id), "ahci%u", cfg->n_ahci);
	cfg->ahci[cfg->n_ahci++] = a;
	return 0;
}

static int ide_device_prop(struct sata_dev_spec *s, const char *key, const char *v, char *err,
			   size_t errlen)
{
	uint64_t n;

	if (!strcmp(key, "drive"))
		return cli_copy_value(s->drive_id, sizeof(s->drive_id), v, "drive", err, errlen);
	if (!strcmp(key, "bus"))
		return cli_copy_value(s->bus, sizeof(s->bus), v, "bus", err, errlen);
	if (!strcmp(key, "id"))
		return cli_copy_value(s->id, sizeof(s->id), v, "id", err, errlen);
	if (!strcmp(key, "unit") && v && cli_parse_u64(v, &n) == 0 && n < 2) {
		s->unit = (unsigned)n;
	} else if (!strcmp(key, "bootindex") && v && cli_parse_u64(v, &n) == 0 && n < 1000) {
		s->bootindex = (int)n;
	} else if (!strcmp(key, "write-cache") && cli_parse_write_cache(v, &s->write_cache) == 0) {
		/* as virtio-blk-pci's: libvirt's -blockdev form of cache= (a
		 * CD-ROM's medium is read-only: nothing to write through) */
	} else if (!strcmp(key, "serial") || !strcmp(key, "model")) {
		/* the strings are vmm's own */
	} else {
		snprintf(err, errlen,
			 "invalid %s '%s' (drive=ID, bus=CONTROLLER.PORT or ide.N, unit=0|1, "
			 "id=NAME, bootindex=N, write-cache=on|off|auto)",
			 key, v ? v : "");
		return -1;
	}
	return 0;
}

int cli_parse_ide_device(struct vmm_config *cfg, char *props, bool cdrom, char *err, size_t errlen)
{
	struct sata_dev_spec s = {
		.cdrom = cdrom, .bootindex = -1, .ide_index = -1, .drive = -1, .write_cache = -1};
	const char *name = cdrom ? "ide-cd" : "ide-hd";
	char *key, *v;

	while (cli_next_kv(&props, &key, &v))
		if (ide_device_prop(&s, key, v, err, errlen) < 0) {
			char msg[256];

			snprintf(msg, sizeof(msg), "%s: %s", name, err);
			snprintf(err, errlen, "%s", msg);
			return -1;
		}
	if (!cdrom && !s.drive_id[0]) {
		snprintf(err, errlen, "ide-hd: needs drive=ID (a -drive if=none or -blockdev)");
		return -1;
	}
	if (!s.bus[0]) {
		snprintf(err, errlen, "%s: needs bus=CONTROLLER.PORT (e.g. sata0.0) or ide.N",
			 name);
		return -1;
	}
	if (cfg->n_sata == CLI_MAX_SATA_DEVS) {
		snprintf(err, errlen, "too many ide-hd/ide-cd devices");
		return -1;
	}
	cfg->sata[cfg->n_sata++] = s;
	return 0;
}

/* ------------------------------------------------------------- resolve */

static int find_drive(const struct vmm_config *cfg, const struct sata_dev_spec *s, char *err,
		      size_t errlen)
{
	unsigned d;

	if (!s->drive_id[0])
		return -1;
	for (d = 0; d < cfg->n_vdrives && strcmp(cfg->vdrives[d].id, s->drive_id); d++)
		;
	if (d == cfg->n_vdrives || cfg->vdrives[d].iface != DRIVE_IF_NONE) {
		snprintf(err, errlen, "%s: no -drive if=none,id=%s (or -blockdev node)",
			 s->cdrom ? "ide-cd" : "ide-hd", s->drive_id);
		return -2;
	}
	for (unsigned i = 0; i < cfg->n_vblk; i++)
		if (cfg->vblk[i].drive == d && cfg->vblk[i].drive_id[0]) {
			snprintf(err, errlen, "drive '%s' is already in use", s->drive_id);
			return -2;
		}
	return (int)d;
}

/* The IDE slot (index of -drive if=ide) of bus=ide.N,unit=U. On the PC,
 * PIIX3's two channels of two units: N * 2 + U. On q35 the ich9-ahci's
 * buses are its ports, one drive each, as QEMU's -drive if=ide,index=N
 * and libvirt's sataC-0-N (bus=ide.N) put them: port N is index N. */
static int ide_bus_index(const struct vmm_config *cfg, const struct sata_dev_spec *s,
			 unsigned channel, char *err, size_t errlen)
{
	if (!cfg->q35) {
		if (channel > 1) {
			snprintf(err, errlen, "bus '%s': the IDE buses are ide.0, ide.1", s->bus);
			return -1;
		}
		return (int)(channel * 2 + s->unit);
	}
	if (channel >= CLI_MAX_DRIVES) {
		snprintf(err, errlen, "bus '%s': vmm's ich9-ahci takes drives on ide.0 to ide.%d",
			 s->bus, CLI_MAX_DRIVES - 1);
		return -1;
	}
	if (s->unit) {
		snprintf(err, errlen, "bus '%s': an AHCI port has one drive (unit=0)", s->bus);
		return -1;
	}
	return (int)channel;
}

/* bus=ide.N: the drive moves to the IDE slot, as -drive if=ide puts it. */
static int to_ide_slot(struct vmm_config *cfg, struct sata_dev_spec *s, unsigned channel, char *err,
		       size_t errlen)
{
	int index = ide_bus_index(cfg, s, channel, err, errlen);
	struct drive_spec *slot;

	if (index < 0)
		return -1;
	s->ide_index = index;
	slot = &cfg->drives[index];
	if (slot->file || slot->cdrom) {
		snprintf(err, errlen, "%s: IDE bus ide.%u unit %u is already taken", s->bus,
			 channel, s->unit);
		return -1;
	}
	if (s->drive >= 0) {
		*slot = cfg->vdrives[s->drive];
		slot->file = slot->file_buf;
		slot->iface = DRIVE_IF_IDE;
		slot->cache = cli_device_cache(slot->cache, s->write_cache);
	}
	slot->cdrom = s->cdrom;
	return 0;
}

/* bus=ID.PORT: the controller with that id, a free port below six. */
static int to_ahci_port(struct vmm_config *cfg, struct sata_dev_spec *s, char *err, size_t errlen)
{
	char *dot = strrchr(s->bus, '.');
	uint64_t port;

	for (s->ahci = 0; s->ahci < cfg->n_ahci; s->ahci++)
		if (dot && strlen(cfg->ahci[s->ahci].id) == (size_t)(dot - s->bus) &&
		    !strncmp(cfg->ahci[s->ahci].id, s->bus, (size_t)(dot - s->bus)))
			break;
	if (s->ahci == cfg->n_ahci || cli_parse_u64(dot + 1, &port) < 0 || port >= AHCI_PORTS) {
		snprintf(err, errlen, "bus '%s': no such bus (an AHCI port is ID.0 to ID.%d)",
			 s->bus, AHCI_PORTS - 1);
		return -1;
	}
	s->port = (unsigned)port;
	for (unsigned i = 0; i < cfg->n_sata && &cfg->sata[i] != s; i++)
		if (cfg->sata[i].bus[0] && !strcmp(cfg->sata[i].bus, s->bus)) {
			snprintf(err, errlen, "bus '%s' already has a device", s->bus);
			return -1;
		}
	return 0;
}

int cli_resolve_sata(struct vmm_config *cfg, char *err, size_t errlen)
{
	for (unsigned i = 0; i < cfg->n_sata; i++) {
		struct sata_dev_spec *s = &cfg->sata[i];
		unsigned channel;
		char tail;

		s->drive = find_drive(cfg, s, err, errlen);
		if (s->drive == -2)
			return -1;
		for (unsigned j = 0; j < i; j++)
			if (s->drive >= 0 && cfg->sata[j].drive == s->drive) {
				snprintf(err, errlen, "drive '%s' is already in use", s->drive_id);
				return -1;
			}
		if (sscanf(s->bus, "ide.%u%c", &channel, &tail) == 1) {
			if (to_ide_slot(cfg, s, channel, err, errlen) < 0)
				return -1;
			continue;
		}
		if (to_ahci_port(cfg, s, err, errlen) < 0)
			return -1;
	}
	return 0;
}
