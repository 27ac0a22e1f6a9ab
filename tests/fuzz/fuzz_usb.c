/* fuzz_usb.c — the USB host controllers as a hostile guest drives them:
 * qemu-xhci's registers, command ring (TRBs and Link TRBs in guest RAM,
 * cycle bits, doorbells), event ring segment table and event ring, and
 * the piix3-usb-uhci's registers. Input: fuzz_dev.h's ops on the xHCI BAR
 * (window 0), the UHCI's I/O BAR (window 1) and 0xcf8-0xcff (window 2);
 * fresh controllers per input. */
#include "devices/pci/pci.h"
#include "devices/usb/usb.h"
#include "tests/fuzz/fuzz_dev.h"

#define XHCI_BAR 0xe0000000u
#define UHCI_IO 0xc000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	struct pci_bus *bus;
	struct xhci *x;
	struct uhci *u;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, true, XHCI_BAR, 0x4000);
		fuzz_dev_window(&d, false, UHCI_IO, 32);
		fuzz_dev_window(&d, false, 0xcf8, 8);
	}
	bus = pci_bus_new(&d.fake.host);
	x = xhci_new(&d.fake.host, bus, 3 << 3, 4, 4);
	u = uhci_new(&d.fake.host, bus, 1 << 3 | 2);
	pci_cfg_write(bus, 3 << 3, 0x10, 4, XHCI_BAR);
	pci_cfg_write(bus, 3 << 3, 0x04, 2, 0x6);
	pci_cfg_write(bus, 1 << 3 | 2, 0x20, 4, UHCI_IO);
	pci_cfg_write(bus, 1 << 3 | 2, 0x04, 2, 0x5);
	fuzz_dev_run(&d, data, size);
	uhci_free(u);
	xhci_free(x);
	pci_bus_free(bus);
	return 0;
}
