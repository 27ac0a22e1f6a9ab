/* fuzz_ide.c — the PIIX3 IDE controller (ide.c): both channels' command
 * blocks and control registers (ATA commands, sector counts and LBA/CHS
 * addresses, IDENTIFY, PIO data transfers) and bus-master DMA with PRD
 * tables in guest RAM, over a 64-sector disk on the primary master and an
 * empty secondary. Input: fuzz_dev.h's ops on 0x1f0-0x1f7, 0x3f6,
 * 0x170-0x177, 0x376 and the bus-master block at 0xc000; a fresh
 * controller per input, its PCI function set up as SeaBIOS leaves it. */
#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "devices/storage/ide.h"
#include "tests/fuzz/fuzz_dev.h"

#define BM_BASE 0xc000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	static struct block_dev *disk;
	struct block_dev *disks[IDE_MAX_DRIVES] = {NULL, NULL, NULL, NULL};
	struct pci_bus *bus;
	struct ide *ide;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, false, 0x1f0, 8);
		fuzz_dev_window(&d, false, 0x3f6, 1);
		fuzz_dev_window(&d, false, 0x170, 8);
		fuzz_dev_window(&d, false, 0x376, 1);
		fuzz_dev_window(&d, false, BM_BASE, 16);
		disk = fuzz_disk();
	}
	disks[0] = disk;
	bus = pci_bus_new(&d.fake.host);
	ide = ide_new(&d.fake.host, bus, disks);
	pci_cfg_write(bus, 0x09, 0x20, 4, BM_BASE | 1);
	pci_cfg_write(bus, 0x09, 0x04, 2, 0x05);
	fuzz_dev_run(&d, data, size);
	ide_free(ide);
	pci_bus_free(bus);
	return 0;
}
