/* disk-flush.elf — writes a pattern over the first SECTORS sectors of a
 * disk, flushes it, prints "FLUSHED", then tries one write just past the
 * disk's end (which must fail) and halts, for the host to kill the VMM
 * (tests/integration/disk-durable.sh). Command line:
 *   disk=0  IDE primary master: PIO WRITE SECTORS, FLUSH CACHE (0xe7)
 *   disk=1  the first virtio-blk: OUT, FLUSH
 *   seed=N  sector s, byte i holds (s * 7 + i + N) & 0xff */
#include "kit.h"
#include "vblk.h"

#define SECTORS 16
#define ATA_DATA 0x1f0
#define ATA_STATUS 0x1f7
#define ST_BSY 0x80
#define ST_DRQ 0x08
#define ST_ERR 0x01

static uint8_t buf[SECTORS * 512] __attribute__((aligned(4096)));

static uint8_t ata_wait(uint8_t want)
{
	uint8_t st;

	while ((st = inb(ATA_STATUS)) & ST_BSY || (want && !(st & want) && !(st & ST_ERR)))
		cpu_relax();
	return st;
}

/* LBA28 command with count sectors at lba on the master. */
static void ata_command(uint8_t cmd, uint32_t lba, uint8_t count)
{
	outb(ATA_DATA + 6, 0xe0 | (lba >> 24 & 0xf));
	ata_wait(0);
	outb(ATA_DATA + 2, count);
	outb(ATA_DATA + 3, (uint8_t)lba);
	outb(ATA_DATA + 4, (uint8_t)(lba >> 8));
	outb(ATA_DATA + 5, (uint8_t)(lba >> 16));
	outb(ATA_STATUS, cmd);
}

/* 0, or the status with ERR. */
static uint8_t ata_write(uint32_t lba, const uint8_t *data, unsigned count)
{
	ata_command(0x30, lba, (uint8_t)count);
	for (unsigned s = 0; s < count; s++) {
		uint8_t st = ata_wait(ST_DRQ);

		if (st & ST_ERR)
			return st;
		for (unsigned i = 0; i < 512; i += 2)
			outw(ATA_DATA, (uint16_t)(data[s * 512 + i] | data[s * 512 + i + 1] << 8));
	}
	return ata_wait(0) & ST_ERR;
}

static uint32_t ata_sectors(void)
{
	uint16_t id[256];

	ata_command(0xec, 0, 0);
	ata_wait(ST_DRQ);
	for (unsigned i = 0; i < 256; i++)
		id[i] = inw(ATA_DATA);
	return id[60] | (uint32_t)id[61] << 16;
}

static int ide(void)
{
	uint32_t end = ata_sectors();

	if (ata_write(0, buf, SECTORS))
		return printf("FAIL: IDE write\n"), 1;
	ata_command(0xe7, 0, 0);
	if (ata_wait(0) & ST_ERR)
		return printf("FAIL: IDE flush\n"), 1;
	printf("FLUSHED ide\n");
	printf("past the end (%u): %s\n", end, ata_write(end, buf, 1) ? "refused" : "ACCEPTED");
	return 0;
}

static int virtio(void)
{
	static struct vblk b;

	if (!vblk_open(&b, VBLK_FEATURES, 64))
		return printf("FAIL: no virtio-blk\n"), 1;
	if (vblk_io(&b, VIRTIO_BLK_T_OUT, 0, buf, sizeof(buf)) != VIRTIO_BLK_S_OK)
		return printf("FAIL: virtio-blk write\n"), 1;
	if (vblk_io(&b, VIRTIO_BLK_T_FLUSH, 0, NULL, 0) != VIRTIO_BLK_S_OK)
		return printf("FAIL: virtio-blk flush\n"), 1;
	printf("FLUSHED virtio\n");
	printf("past the end (%u): %s\n", (unsigned)b.capacity,
	       vblk_io(&b, VIRTIO_BLK_T_OUT, b.capacity, buf, 512) != VIRTIO_BLK_S_OK ? "refused"
										      : "ACCEPTED");
	return 0;
}

int guest_main(void)
{
	uint64_t seed = kit_cmdline_uint("seed", 0);
	int rc;

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)((i / 512) * 7 + i % 512 + seed);
	rc = kit_cmdline_uint("disk", 0) ? virtio() : ide();
	printf("halting\n");
	for (;;)
		__asm__ volatile("cli; hlt");
	return rc;
}
