/* pci_setup.c — what SeaBIOS does to the PCI bus before it boots a kernel,
 * for multiboot kernels (QEMU runs those through SeaBIOS, and kvm-unit-tests
 * use the BARs and interrupt lines they find): each BAR gets an address
 * (memory top-down below the I/O APIC, largest first so each is naturally
 * aligned; I/O from 0xc000 up), decoding is turned on, and INTERRUPT_LINE
 * names the GSI the device's pin reaches through the PIIX3 PIRQ routing
 * that direct boot sets up (pc_pirq_gsi). Linux places BARs itself. */
#include "devices/pci/ich9.h"
#include "devices/pci/pci.h"
#include "firmware/firmware.h"

#define PCI_COMMAND 0x04
#define PCI_BAR0 0x10
#define PCI_INTERRUPT_LINE 0x3c
#define PCI_INTERRUPT_PIN 0x3d
#define MEM_TOP 0xfec00000u /* the I/O APIC; the hole starts at 0xe0000000 */
#define MEM_BOTTOM 0xe0000000u
#define IO_BASE 0xc000u

struct bar_slot {
	uint8_t devfn, n;
	bool io;
	uint32_t size;
};

/* The size of BAR n by the usual all-ones probe; 0: not implemented. */
static uint32_t bar_size(struct pci_bus *bus, uint8_t devfn, unsigned n, bool *io)
{
	unsigned off = PCI_BAR0 + 4 * n;
	uint32_t old = pci_cfg_read(bus, devfn, off, 4), probe;

	pci_cfg_write(bus, devfn, off, 4, 0xffffffffu);
	probe = pci_cfg_read(bus, devfn, off, 4);
	pci_cfg_write(bus, devfn, off, 4, old);
	*io = probe & 1;
	probe &= *io ? ~3u : ~15u;
	return probe ? ~probe + 1 : 0;
}

static unsigned collect(struct pci_bus *bus, struct bar_slot *bars, unsigned max)
{
	unsigned n = 0;

	for (unsigned devfn = 0; devfn < 256; devfn++) {
		if (pci_cfg_read(bus, (uint8_t)devfn, 0, 2) == 0xffff)
			continue;
		for (unsigned b = 0; b < 6 && n < max; b++) {
			bool io;
			uint32_t size = bar_size(bus, (uint8_t)devfn, b, &io);

			if (size &&
			    !(pci_cfg_read(bus, (uint8_t)devfn, PCI_BAR0 + 4 * b, 4) & ~15u))
				bars[n++] = (struct bar_slot){(uint8_t)devfn, (uint8_t)b, io, size};
		}
	}
	return n;
}

static void set_line(struct pci_bus *bus, uint8_t devfn, bool q35)
{
	unsigned pin = pci_cfg_read(bus, devfn, PCI_INTERRUPT_PIN, 1), slot = devfn >> 3;

	/* q35: the I/O APIC input the ICH9 wires the pin's PIRQ to */
	if (q35 && pin >= 1 && pin <= 4)
		pci_cfg_write(bus, devfn, PCI_INTERRUPT_LINE, 1,
			      ICH9_PIRQ_GSI(ich9_slot_pirq(slot, pin - 1)));
	else if (pin >= 1 && pin <= 4 && slot > 0)
		pci_cfg_write(bus, devfn, PCI_INTERRUPT_LINE, 1, pc_pci_pin_gsi(slot, pin - 1));
}

void fw_pci_setup(struct pci_bus *bus, bool q35)
{
	struct bar_slot bars[64];
	unsigned n = collect(bus, bars, 64);
	uint32_t mem = MEM_TOP, io = IO_BASE;

	/* largest first: each top-down memory address stays aligned */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && bars[j].size > bars[j - 1].size; j--) {
			struct bar_slot t = bars[j];

			bars[j] = bars[j - 1];
			bars[j - 1] = t;
		}
	for (unsigned i = 0; i < n; i++) {
		struct bar_slot *b = &bars[i];
		uint32_t at;

		if (b->io) {
			at = (io + b->size - 1) & ~(b->size - 1);
			if (at + b->size > 0x10000)
				continue;
			io = at + b->size;
		} else {
			if (mem - MEM_BOTTOM < b->size)
				continue;
			at = (mem - b->size) & ~(b->size - 1);
			mem = at;
		}
		pci_cfg_write(bus, b->devfn, PCI_BAR0 + 4 * b->n, 4, at);
	}
	for (unsigned devfn = 0; devfn < 256; devfn++) {
		if (pci_cfg_read(bus, (uint8_t)devfn, 0, 2) == 0xffff)
			continue;
		set_line(bus, (uint8_t)devfn, q35);
		pci_cfg_write(bus, (uint8_t)devfn, PCI_COMMAND, 2,
			      pci_cfg_read(bus, (uint8_t)devfn, PCI_COMMAND, 2) | 3);
	}
}
