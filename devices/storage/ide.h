/* ide.h — the PIIX3 IDE controller (PIO and bus-master DMA). */
#ifndef VMM_DEVICES_STORAGE_IDE_H
#define VMM_DEVICES_STORAGE_IDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* PIIX3 IDE at 00:01.1: two channels in compatibility mode (0x1f0/0x3f6
 * IRQ 14, 0x170/0x376 IRQ 15) and bus-master DMA through BAR 4. Drive
 * index = channel * 2 + slave; disks may be NULL. */
#define IDE_MAX_DRIVES 4
struct ide;
struct ide *ide_new(struct dev_host *host, struct pci_bus *bus,
		    struct block_dev *disks[IDE_MAX_DRIVES]);
/* The same with ATAPI CD-ROM drives (atapi.h; the caller keeps them and
 * frees them after the controller): a slot with a drive in cdroms is a
 * packet device, whatever disks holds there. */
struct atapi;
struct ide *ide_new_with_cdroms(struct dev_host *host, struct pci_bus *bus,
				struct block_dev *const disks[IDE_MAX_DRIVES],
				struct atapi *const cdroms[IDE_MAX_DRIVES]);
void ide_free(struct ide *ide);

#endif /* VMM_DEVICES_STORAGE_IDE_H */
