/* pc_testdev.h — QEMU's pc-testdev (kvm-unit-tests). */
#ifndef VMM_DEVICES_TESTDEV_PC_TESTDEV_H
#define VMM_DEVICES_TESTDEV_PC_TESTDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* QEMU's pc-testdev: scratch port 0xe0 (byte-wide copy at 0xe8), page
 * flush port 0xe4, interrupt line ports 0x2000-0x2017, scratch MMIO at
 * 0xff000000 (64 KiB). NULL when a port or range is taken. */
struct pc_testdev;
struct pc_testdev *pc_testdev_new(struct dev_host *host, struct pci_bus *pci);
/* Snapshot: node "pc-testdev@e0" (data port, test memory). */
struct state_writer;
struct state_reader;
void pc_testdev_save(struct pc_testdev *t, struct state_writer *w);
int pc_testdev_load(struct pc_testdev *t, const struct state_reader *r, char *err, size_t errlen);
void pc_testdev_free(struct pc_testdev *t);

#endif /* VMM_DEVICES_TESTDEV_PC_TESTDEV_H */
