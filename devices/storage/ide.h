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
/* Snapshot (ide_state.c): node "ide@1,1" (config space) and one node per
 * channel, "ide-channel@1f0" and "ide-channel@170": task file, status, the
 * PIO buffer and position, ATAPI packet and sense, bus-master registers.
 * Block I/O runs to completion inside the port access that starts it, with
 * the channel locked, so a save (which takes the lock) never sees a
 * request in flight: a stopped machine has none. */
struct state_writer;
struct state_reader;
void ide_save(struct ide *ide, struct state_writer *w);
int ide_load(struct ide *ide, const struct state_reader *r, char *err, size_t errlen);
void ide_free(struct ide *ide);

#endif /* VMM_DEVICES_STORAGE_IDE_H */
