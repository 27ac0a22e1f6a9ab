/* edu.h — QEMU's edu device. */
#ifndef VMM_DEVICES_TESTDEV_EDU_H
#define VMM_DEVICES_TESTDEV_EDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* QEMU's edu device (1234:11e8): BAR0 1 MiB MMIO with the ID, liveness,
 * factorial, interrupt raise/ack and DMA registers, a 4 KiB DMA buffer at
 * device address 0x40000, INTx or MSI. NULL when no slot is free. */
#define EDU_DMA_BASE 0x40000u
#define EDU_DMA_SIZE 4096u
struct edu;
struct edu *edu_new(struct dev_host *host, struct pci_bus *bus, int devfn);
void edu_free(struct edu *e);
struct pci_dev *edu_pci(struct edu *e);
/* Snapshots: configuration space and registers in node name. */
struct state_writer;
struct state_reader;
void edu_save(struct edu *e, struct state_writer *w, const char *name);
int edu_load(struct edu *e, const struct state_reader *r, const char *name, char *err,
	     size_t errlen);

#endif /* VMM_DEVICES_TESTDEV_EDU_H */
