/* piix3.h — the PIIX3 PCI-ISA bridge (PIRQ routing, ELCR). */
#ifndef VMM_DEVICES_PCI_PIIX3_H
#define VMM_DEVICES_PCI_PIIX3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* PIIX3 PCI-ISA bridge at 00:01.0: PIRQ routing (0x60-0x63), ELCR. */
struct piix3;
struct piix3 *piix3_new(struct dev_host *host, struct pci_bus *bus);
/* Snapshot: node "piix3@1,0" (config space with the PIRQ routes). */
struct state_writer;
struct state_reader;
void piix3_save(struct piix3 *p, struct state_writer *w);
int piix3_load(struct piix3 *p, const struct state_reader *r, char *err, size_t errlen);
void piix3_free(struct piix3 *p);

#endif /* VMM_DEVICES_PCI_PIIX3_H */
