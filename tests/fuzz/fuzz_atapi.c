/* fuzz_atapi.c — ATAPI packets (devices/storage/atapi.c) through the IDE
 * transport (ide_atapi.c): a CD-ROM drive with a 16-sector medium on the
 * primary master, an empty one on the primary slave. Input: records of
 * 16 bytes — flags (bit 0: DMA, bit 1: the slave, bits 2-4: a monitor
 * media operation first: eject, force eject, change, open, close), the
 * byte count limit (2, little-endian), a PRD length (1) and the 12-byte
 * CDB. Each record issues PACKET, sends the CDB and drains the data phase
 * by PIO (bounded) or starts the DMA engine on a one-entry PRD table. */
#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "devices/storage/atapi.h"
#include "devices/storage/ide.h"
#include "tests/fuzz/fuzz_dev.h"

#define BM_BASE 0xc000
#define PRD_GPA 0x1000
#define BUF_GPA 0x2000
#define REC 16

static void media_op(struct atapi *a, unsigned op)
{
	struct block_dev *b;

	switch (op) {
	case 1: atapi_eject(a, false); break;
	case 2: atapi_eject(a, true); break;
	case 3:
		b = fuzz_medium();
		if (atapi_change(a, b, false) < 0) /* locked: the drive did not take it */
			block_close(b);
		break;
	case 4: atapi_open_tray(a, false); break;
	case 5: atapi_close_tray(a); break;
	default: break;
	}
}

static void one_packet(struct fuzz_dev *d, struct atapi *drives[2], const uint8_t *rec)
{
	bool dma = rec[0] & 1, slave = rec[0] & 2;
	uint8_t prd[8] = {0};
	uint8_t v = slave ? 0xb0 : 0xa0;

	media_op(drives[slave], (rec[0] >> 2) & 7);
	iobus_write(d->fake.host.pio, 0x1f6, &v, 1);
	v = dma;
	iobus_write(d->fake.host.pio, 0x1f1, &v, 1);
	iobus_write(d->fake.host.pio, 0x1f4, &rec[1], 1);
	iobus_write(d->fake.host.pio, 0x1f5, &rec[2], 1);
	v = 0;
	iobus_write(d->fake.host.pio, BM_BASE, &v, 1); /* engine stopped */
	v = 0xa0;
	iobus_write(d->fake.host.pio, 0x1f7, &v, 1);
	for (unsigned i = 0; i < 12; i += 2)
		iobus_write(d->fake.host.pio, 0x1f0, &rec[4 + i], 2);
	if (dma) {
		io_data_put(prd, 4, BUF_GPA);
		io_data_put(prd + 4, 4, (uint32_t)rec[3] << 8 | 0x80000000u);
		memcpy(d->fake.ram + PRD_GPA, prd, 8);
		io_data_put(prd, 4, PRD_GPA);
		iobus_write(d->fake.host.pio, BM_BASE + 4, prd, 4);
		v = 0x09;
		iobus_write(d->fake.host.pio, BM_BASE, &v, 1);
		return;
	}
	for (unsigned i = 0; i < 40000; i++) {
		uint8_t st;
		uint16_t w;

		iobus_read(d->fake.host.pio, 0x1f7, &st, 1);
		if (!(st & 0x08))
			break;
		iobus_read(d->fake.host.pio, 0x1f0, &w, 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	struct block_dev *disks[IDE_MAX_DRIVES] = {NULL};
	struct atapi *cds[IDE_MAX_DRIVES] = {NULL};
	struct pci_bus *bus;
	struct ide *ide;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, false, 0x1f0, 8);
		fuzz_dev_window(&d, false, 0x3f6, 1);
		fuzz_dev_window(&d, false, BM_BASE, 16);
	}
	cds[0] = atapi_new(fuzz_medium());
	cds[1] = atapi_new(NULL);
	bus = pci_bus_new(&d.fake.host);
	ide = ide_new_with_cdroms(&d.fake.host, bus, disks, cds);
	pci_cfg_write(bus, 0x09, 0x20, 4, BM_BASE | 1);
	pci_cfg_write(bus, 0x09, 0x04, 2, 0x05);
	for (size_t off = 0; off + REC <= size; off += REC)
		one_packet(&d, cds, data + off);
	ide_free(ide);
	pci_bus_free(bus);
	atapi_free(cds[0]);
	atapi_free(cds[1]);
	return 0;
}
