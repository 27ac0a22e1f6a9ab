/* board_bootorder.c — the bootorder lines of the devices given a
 * bootindex= (libvirt's <boot order='N'/>): SeaBIOS's own path of each
 * drive, lowest bootindex first, ahead of the ones -boot order= names.
 * virtio-blk-pci on the root bus or behind a pcie-root-port, and ide-hd /
 * ide-cd on PIIX3's IDE, on q35's ich9-ahci or on an -device ahci port. */
#include <stdio.h>
#include <string.h>

#include "devices/pci/pcie_root_port.h"
#include "devices/storage/ahci.h"
#include "devices/virtio/virtio.h"
#include "firmware/firmware.h"
#include "vmm/machine.h"

#define MAX_ENTRIES (CLI_MAX_VIRTIO_DRIVES + CLI_MAX_SATA_DEVS)

struct boot_entry {
	int index;
	char path[96];
};

static void virtio_disk_path(struct machine *m, unsigned i, char *buf, size_t len)
{
	const char *bus = m->cfg->vblk[i].bus;
	int port = bus[0] ? cli_find_root_port(m->cfg, bus) : -1;
	int bridge = port >= 0 ? pcie_root_port_devfn(m->root_ports[port]) : -1;

	fw_virtio_disk_path(buf, len, bridge, virtio_pci_devfn(virtio_blk_transport(m->vblk[i])));
}

/* The IDE slot cli_sata.c gave a bus=ide.N drive, else an -device ahci
 * controller's port. */
static void sata_drive_path(struct machine *m, const struct sata_dev_spec *s, char *buf, size_t len)
{
	if (s->ide_index >= 0)
		fw_ide_drive_path(buf, len, m->cfg->q35, (unsigned)s->ide_index);
	else if (m->ahci[s->ahci])
		fw_ahci_drive_path(buf, len, ahci_pci(m->ahci[s->ahci])->devfn, s->port);
	else
		buf[0] = 0;
}

/* Insertion by bootindex; equal ones keep the command line's order. */
static void add(struct boot_entry *e, unsigned *n, int index, const char *path)
{
	unsigned at = *n;

	if (!path[0] || *n == MAX_ENTRIES)
		return;
	while (at > 0 && e[at - 1].index > index) {
		e[at] = e[at - 1];
		at--;
	}
	e[at].index = index;
	snprintf(e[at].path, sizeof(e[at].path), "%s", path);
	(*n)++;
}

void board_bootindex_paths(struct machine *m)
{
	struct boot_entry e[MAX_ENTRIES];
	char path[96];
	unsigned n = 0;
	size_t used = 0;

	for (unsigned i = 0; i < m->cfg->n_vblk; i++)
		if (m->vblk[i] && m->cfg->vblk[i].bootindex >= 0) {
			virtio_disk_path(m, i, path, sizeof(path));
			add(e, &n, m->cfg->vblk[i].bootindex, path);
		}
	for (unsigned i = 0; i < m->cfg->n_sata; i++)
		if (m->cfg->sata[i].bootindex >= 0) {
			sata_drive_path(m, &m->cfg->sata[i], path, sizeof(path));
			add(e, &n, m->cfg->sata[i].bootindex, path);
		}
	m->bootindex_paths[0] = 0;
	for (unsigned i = 0; i < n; i++) {
		int w = snprintf(m->bootindex_paths + used, sizeof(m->bootindex_paths) - used,
				 "%s\n", e[i].path);

		if (w < 0 || (size_t)w >= sizeof(m->bootindex_paths) - used) {
			m->bootindex_paths[used] = 0; /* whole lines only */
			break;
		}
		used += (size_t)w;
	}
}
