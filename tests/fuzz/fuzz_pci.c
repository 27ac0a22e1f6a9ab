/* fuzz_pci.c — PCI configuration space through mechanism #1 (pci.c: the
 * 0xcf8 address latch, 0xcfc-0xcff data at every size and offset) on a bus
 * with the i440FX (PAM, SMRAM), the PIIX3 (PIRQ routing, ELCR), the IDE
 * function and a virtio-blk (capabilities, MSI-X, BAR sizing and moving).
 * Input: fuzz_dev.h's ops on 0xcf8-0xcff; a fresh bus per input. */
#include "backends/backends.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "devices/storage/ide.h"
#include "devices/virtio/virtio.h"
#include "tests/fuzz/fuzz_dev.h"

static int ignore_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	static struct block_dev *disk;
	const struct pc_mem_map map = {ignore_map, NULL};
	struct block_dev *disks[IDE_MAX_DRIVES] = {NULL, NULL, NULL, NULL};
	struct virtio_blk_opts vo = {.serial = "fuzz", .num_queues = 2, .devfn = 3 << 3};
	struct pci_bus *bus;
	struct i440fx *nb;
	struct piix3 *sb;
	struct ide *ide;
	struct virtio_blk *vb;
	char err[256];

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, false, 0xcf8, 8);
		disk = fuzz_disk();
	}
	disks[0] = disk;
	vo.disk = disk;
	bus = pci_bus_new(&d.fake.host);
	nb = i440fx_new(&d.fake.host, bus, &map);
	sb = piix3_new(&d.fake.host, bus);
	ide = ide_new(&d.fake.host, bus, disks);
	vb = virtio_blk_new(&d.fake.host, bus, &vo, err, sizeof(err));
	fuzz_dev_run(&d, data, size);
	virtio_blk_free(vb);
	ide_free(ide);
	piix3_free(sb);
	i440fx_free(nb);
	pci_bus_free(bus);
	return 0;
}
