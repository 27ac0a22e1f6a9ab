/* ahci.h — the ICH9 AHCI SATA controller (8086:2922, QEMU's ahci and
 * ich9-ahci): six ports, each with an ATA disk, an ATAPI CD-ROM drive
 * or nothing. The registers are in BAR 5 (ABAR), with the index/data
 * pair in I/O BAR 4; interrupts are MSI when the guest enables it, else
 * INTA. */
#ifndef VMM_DEVICES_STORAGE_AHCI_H
#define VMM_DEVICES_STORAGE_AHCI_H

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"

#define AHCI_PORTS 6

struct atapi;
struct ahci;

/* What sits on one port: a disk, a CD-ROM drive (the caller keeps it and
 * frees it after the controller), or neither. */
struct ahci_drive {
	struct block_dev *disk;
	struct atapi *cdrom;
};

/* The controller at devfn (-1: the first free slot) with drives[port];
 * NULL when devfn is taken. The caller keeps the block devices. */
struct ahci *ahci_new(struct dev_host *host, struct pci_bus *bus, int devfn,
		      const struct ahci_drive drives[AHCI_PORTS]);
/* Snapshot (ahci_state.c): node "ahci@SLOT,FN" with the config space,
 * global registers and one "port@N" child per port (command list and FIS
 * bases, PxIS/IE/CMD/TFD/SIG/SSTS/SCTL/SERR, an ATAPI drive's sense).
 * Commands run to completion inside the PxCI write that issues them, so
 * none is in flight at a save. */
struct state_writer;
struct state_reader;
void ahci_save(struct ahci *s, struct state_writer *w);
int ahci_load(struct ahci *s, const struct state_reader *r, char *err, size_t errlen);
void ahci_free(struct ahci *s);
struct pci_dev *ahci_pci(struct ahci *s);

#endif /* VMM_DEVICES_STORAGE_AHCI_H */
