/* usb.h — USB host controllers: the PIIX3's UHCI (piix3-usb-uhci) and
 * QEMU's xHCI (qemu-xhci), as libvirt adds them to every domain.
 *
 * Both are controllers with their root hubs and no USB devices behind
 * them yet: the guest's driver (uhci_hcd, xhci_hcd) binds, resets and
 * runs the controller, powers and polls its ports and suspends the idle
 * root hubs, all of which works without a device. Ports always read
 * "nothing connected". */
#ifndef VMM_DEVICES_USB_USB_H
#define VMM_DEVICES_USB_USB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* piix3-usb-uhci (8086:7020): two ports, registers in a 32-byte I/O BAR
 * (BAR 4), INTD. devfn as pci_bus_add (libvirt puts it at 01.2, beside
 * the PIIX3); NULL when devfn is taken. */
struct uhci;
struct uhci *uhci_new(struct dev_host *host, struct pci_bus *bus, uint8_t devfn);
void uhci_free(struct uhci *u);
struct pci_dev *uhci_pci(struct uhci *u);

/* qemu-xhci (1b36:000d): p3 USB 3 ports (numbered first) and p2 USB 2
 * ports, 1-15 each as in QEMU (p2=4, p3=4 by default), 16 KiB MMIO BAR 0,
 * MSI or INTA. NULL when devfn is taken or a count is out of range. */
#define XHCI_MAX_PORTS_PER_PROTO 15
struct xhci;
struct xhci *xhci_new(struct dev_host *host, struct pci_bus *bus, uint8_t devfn, unsigned p2,
		      unsigned p3);
void xhci_free(struct xhci *x);
struct pci_dev *xhci_pci(struct xhci *x);

/* Snapshots: node name (the machine's: "usb@N") with the configuration
 * space and the registers; the frame (UHCI) and microframe (xHCI) counters
 * go on from the saved value. Loading refuses a node whose port counts
 * or rings do not fit this controller: 0, or -1 with a one-line err. */
struct state_writer;
struct state_reader;
void uhci_save(struct uhci *u, struct state_writer *w, const char *name);
int uhci_load(struct uhci *u, const struct state_reader *r, const char *name, char *err,
	      size_t errlen);
void xhci_save(struct xhci *x, struct state_writer *w, const char *name);
int xhci_load(struct xhci *x, const struct state_reader *r, const char *name, char *err,
	      size_t errlen);

#endif /* VMM_DEVICES_USB_USB_H */
