/* board_ahci.c — the AHCI controllers of -device ahci / ich9-ahci and the
 * ide-hd / ide-cd drives their ports hold: the images opened as the IDE
 * drives' are (drive_block_opts), the controller put on the PCI bus. */
#include <stdio.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/storage/ahci.h"
#include "devices/storage/atapi.h"
#include "vmm/machine.h"

static int open_port(struct machine *m, const struct sata_dev_spec *s, char *err, size_t errlen)
{
	const struct drive_spec *d = s->drive >= 0 ? &m->cfg->vdrives[s->drive] : NULL;
	struct block_dev *b = NULL;
	struct drive_spec cd;
	struct block_opts o;
	char why[256];

	if (d) {
		cd = *d;
		cd.file = cd.file_buf;
		cd.cdrom = s->cdrom;
		cd.cache = cli_device_cache(cd.cache, s->write_cache);
		drive_block_opts(&cd, m->cfg->snapshot, &o);
		o.inactive = m->cfg->incoming && !s->cdrom; /* until the stream is in */
		b = block_open(&o, why, sizeof(why));
		if (!b) {
			snprintf(err, errlen, "drive %s (%s): %s", d->id, d->file, why);
			return -1;
		}
	}
	if (!s->cdrom) {
		m->sata_disks[s->ahci][s->port] = b;
		return 0;
	}
	m->sata_cdroms[s->ahci][s->port] = atapi_new(b);
	if (!m->sata_cdroms[s->ahci][s->port]) {
		block_close(b);
		snprintf(err, errlen, "%s: out of memory", s->bus);
		return -1;
	}
	return 0;
}

int board_add_ahci(struct machine *m, unsigned i, int devfn, char *err, size_t errlen)
{
	const struct vmm_config *cfg = m->cfg;
	struct ahci_drive drives[AHCI_PORTS] = {{0}};

	for (unsigned k = 0; k < cfg->n_sata; k++) {
		const struct sata_dev_spec *s = &cfg->sata[k];

		if (!s->bus[0] || s->ahci != i || !strchr(s->bus, '.') || s->ide_index >= 0)
			continue;
		if (open_port(m, s, err, errlen) < 0)
			return -1;
	}
	for (unsigned p = 0; p < AHCI_PORTS; p++) {
		drives[p].disk = m->sata_disks[i][p];
		drives[p].cdrom = m->sata_cdroms[i][p];
	}
	if (devfn < 0)
		devfn = cfg->ahci[i].devfn;
	m->ahci[i] = ahci_new(&m->host, m->pci, devfn, drives);
	if (!m->ahci[i]) {
		snprintf(err, errlen, "ahci %s: PCI address %02x.%x is taken", cfg->ahci[i].id,
			 devfn >> 3, devfn & 7);
		return -1;
	}
	return 0;
}

int board_add_ahcis(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_ahci; i++)
		if (board_add_ahci(m, i, -1, err, errlen) < 0)
			return -1;
	return 0;
}

_Static_assert(CLI_MAX_DRIVES <= AHCI_PORTS, "q35's IDE slots are ich9-ahci's ports");

int board_add_ich9_ahci(struct machine *m, int devfn, char *err, size_t errlen)
{
	struct ahci_drive drives[AHCI_PORTS] = {{0}};

	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		drives[i].disk = m->disks[i];
		drives[i].cdrom = m->cdroms[i];
	}
	m->ich9_ahci = ahci_new(&m->host, m->pci, devfn, drives);
	if (!m->ich9_ahci) {
		snprintf(err, errlen, "ich9-ahci: PCI address %02x.%x is taken", devfn >> 3,
			 devfn & 7);
		return -1;
	}
	return 0;
}

void board_free_ahcis(struct machine *m)
{
	ahci_free(m->ich9_ahci); /* its drives are the machine's IDE ones */
	m->ich9_ahci = NULL;
	for (unsigned i = 0; i < CLI_MAX_AHCI; i++) {
		ahci_free(m->ahci[i]);
		m->ahci[i] = NULL;
		for (unsigned p = 0; p < AHCI_PORTS; p++) {
			block_close(m->sata_disks[i][p]);
			atapi_free(m->sata_cdroms[i][p]);
			m->sata_disks[i][p] = NULL;
			m->sata_cdroms[i][p] = NULL;
		}
	}
}
