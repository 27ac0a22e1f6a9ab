/* pci_testdev.h — QEMU's pci-testdev (kvm-unit-tests). */
#ifndef VMM_DEVICES_TESTDEV_PCI_TESTDEV_H
#define VMM_DEVICES_TESTDEV_PCI_TESTDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* QEMU's pci-testdev (1b36:0005): BAR 0 memory, BAR 1 port I/O, each with
 * the test header kvm-unit-tests' vmexit reads (pci_testdev.c). devfn -1:
 * the first free slot. NULL when the slot is taken. */
struct pci_testdev;
struct pci_testdev *pci_testdev_new(struct dev_host *host, struct pci_bus *bus, int devfn);
void pci_testdev_free(struct pci_testdev *t);
struct pci_dev *pci_testdev_pci(struct pci_testdev *t);
/* Snapshots: node `name` under w's current node / r; the load checks every
 * value (0, or -1 with err). */
struct state_writer;
struct state_reader;
void pci_testdev_save(struct pci_testdev *t, struct state_writer *w, const char *name);
int pci_testdev_load(struct pci_testdev *t, const struct state_reader *r, const char *name,
		     char *err, size_t errlen);

#endif /* VMM_DEVICES_TESTDEV_PCI_TESTDEV_H */
