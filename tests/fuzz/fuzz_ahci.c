/* fuzz_ahci.c — the ICH9 AHCI controller (ahci.c, ahci_cmd.c): the HBA
 * and port registers through the ABAR and the index/data pair, and the
 * command engine on what the input puts in guest RAM: command headers,
 * command FISes (every ATA opcode, NCQ tags, device control), ATAPI
 * packets and PRD tables (lengths, addresses outside RAM, tables shorter
 * than the transfer). A 64-sector disk on port 0, a CD-ROM drive with a
 * 16-sector medium on port 1. Input: fuzz_dev.h's ops on the ABAR
 * (window 0) and BAR 4 (window 1); the target's step N starts port N % 6
 * as a driver does (command list at 0x10000 + port * 0x1000, FIS area
 * 0x400 after it, all interrupts enabled, FRE, ST), so that short inputs
 * reach the commands. A fresh controller per input. */
#include <stdio.h>
#include <stdlib.h>

#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "devices/storage/ahci.h"
#include "devices/storage/atapi.h"
#include "tests/fuzz/fuzz_dev.h"

#define DEVFN (4 << 3)
#define ABAR 0xfebf0000u
#define IDP 0xc040

static void abar_write(struct fuzz_dev *d, unsigned off, uint32_t v)
{
	iobus_write(d->fake.host.mmio, ABAR + off, &v, 4);
}

static void start_port(struct fuzz_dev *d, unsigned arg)
{
	unsigned p = arg % AHCI_PORTS, base = 0x100 + p * 0x80;

	abar_write(d, 0x04, 0x80000002);
	abar_write(d, base + 0x00, 0x10000 + p * 0x1000);
	abar_write(d, base + 0x08, 0x10400 + p * 0x1000);
	abar_write(d, base + 0x14, 0xffffffff);
	abar_write(d, base + 0x18, 0x17);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	static struct block_dev *disk;
	struct ahci_drive drives[AHCI_PORTS] = {{0}};
	struct pci_bus *bus;
	struct ahci *ahci;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, true, ABAR, 0x1000);
		fuzz_dev_window(&d, false, IDP, 0x20);
		d.step = start_port;
		disk = fuzz_disk();
	}
	drives[0].disk = disk;
	drives[1].cdrom = atapi_new(fuzz_medium());
	bus = pci_bus_new(&d.fake.host);
	ahci = ahci_new(&d.fake.host, bus, DEVFN, drives);
	pci_cfg_write(bus, DEVFN, 0x24, 4, ABAR);
	pci_cfg_write(bus, DEVFN, 0x20, 4, IDP);
	pci_cfg_write(bus, DEVFN, 0x04, 2, 0x07);
	fuzz_dev_run(&d, data, size);
	ahci_free(ahci);
	pci_bus_free(bus);
	atapi_free(drives[1].cdrom);
	return 0;
}
