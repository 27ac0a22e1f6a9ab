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
void piix3_free(struct piix3 *p);

#endif /* VMM_DEVICES_PCI_PIIX3_H */
