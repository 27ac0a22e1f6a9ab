/* Unit tests for the PIIX3 IDE model, driven through its ports like a
 * driver would: every command, bad LBAs, bad PRD tables, reset in the
 * middle of a transfer, nIEN. The disk is a temporary raw image. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/devices.h"
#include "tests/unit/devices/pc_host.h"

#define DISK_SECTORS 2048u
#define CMD 0x1f0
#define CTL 0x3f6
#define BM 0xc000
#define PRD_GPA 0x10000
#define BUF_GPA 0x20000

struct rig {
	struct test_host t;
	struct pci_bus *bus;
	struct ide *ide;
	struct block_dev *disk;
	char path[64];
};

/* Sector s, byte i of the image holds (s * 7 + i) & 0xff. */
static uint8_t pattern(uint64_t s, unsigned i)
{
	return (uint8_t)(s * 7 + i);
}

static void rig_up(struct rig *r, bool read_only)
{
	struct block_opts o = {0};
	uint8_t sec[512];
	char err[256];
	int fd;

	test_host_init(&r->t);
	strcpy(r->path, "/tmp/vmm-ide-test-XXXXXX");
	fd = mkstemp(r->path);
	ck_assert_int_ge(fd, 0);
	for (unsigned s = 0; s < DISK_SECTORS; s++) {
		for (unsigned i = 0; i < 512; i++)
			sec[i] = pattern(s, i);
		ck_assert_int_eq(write(fd, sec, 512), 512);
	}
	close(fd);
	o.path = r->path;
	o.read_only = read_only;
	r->disk = block_open(&o, err, sizeof(err));
	ck_assert_msg(r->disk != NULL, "%s", err);
	r->bus = pci_bus_new(&r->t.host);
	struct block_dev *disks[IDE_MAX_DRIVES] = {r->disk, NULL, NULL, NULL};
	r->ide = ide_new(&r->t.host, r->bus, disks);
	ck_assert_ptr_nonnull(r->ide);
	/* BAR 4 at 0xc000, I/O decode on (as SeaBIOS sets it up) */
	pci_cfg_write(r->bus, 0x09, 0x20, 4, BM);
	pci_cfg_write(r->bus, 0x09, 0x04, 2, 0x05);
}

static void rig_down(struct rig *r)
{
	ide_free(r->ide);
	pci_bus_free(r->bus);
	block_close(r->disk);
	unlink(r->path);
	test_host_fini(&r->t);
}

static uint8_t status(struct rig *r)
{
	return (uint8_t)pio_in(&r->t, CMD + 7, 1);
}

static void task_lba28(struct rig *r, uint32_t lba, uint8_t count)
{
	pio_out(&r->t, CMD + 6, 1, 0xe0 | ((lba >> 24) & 0xf));
	pio_out(&r->t, CMD + 2, 1, count);
	pio_out(&r->t, CMD + 3, 1, lba & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 8) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 16) & 0xff);
}

static void task_lba48(struct rig *r, uint64_t lba, uint16_t count)
{
	pio_out(&r->t, CMD + 6, 1, 0x40);
	pio_out(&r->t, CMD + 2, 1, count >> 8);
	pio_out(&r->t, CMD + 3, 1, (lba >> 24) & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 32) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 40) & 0xff);
	pio_out(&r->t, CMD + 2, 1, count & 0xff);
	pio_out(&r->t, CMD + 3, 1, lba & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 8) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 16) & 0xff);
}

/* Issue a command with the DMA engine stopped, as a driver leaves it
 * between transfers. */
static void command(struct rig *r, uint8_t cmd)
{
	pio_out(&r->t, BM, 1, 0);
	pio_out(&r->t, CMD + 7, 1, cmd);
}

static void read_words(struct rig *r, uint16_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		w[i] = (uint16_t)pio_in(&r->t, CMD, 2);
}

static void expect_sector(const uint8_t *buf, uint64_t s)
{
	for (unsigned i = 0; i < 512; i++)
		ck_assert_msg(buf[i] == pattern(s, i), "sector %llu byte %u", (unsigned long long)s, i);
}

static void file_sector(struct rig *r, uint64_t s, uint8_t *out)
{
	int fd = open(r->path, O_RDONLY);

	ck_assert_int_eq(pread(fd, out, 512, (off_t)(s * 512)), 512);
	close(fd);
}

static void expect_abort(struct rig *r, uint8_t err)
{
	ck_assert_uint_eq(status(r) & 0x89, 0x01); /* ERR, not BSY/DRQ */
	ck_assert_uint_eq(pio_in(&r->t, CMD + 1, 1), err);
}

/* ---------------------------------------------------------------- tests */

START_TEST(presence_probe_like_seabios)
{
	struct rig r;

	rig_up(&r, false);
	pio_out(&r.t, CMD + 6, 1, 0xa0);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 6, 1), 0xa0);
	pio_out(&r.t, CMD + 2, 1, 0x55);
	pio_out(&r.t, CMD + 3, 1, 0xaa);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 2, 1), 0x55);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 3, 1), 0xaa);
	ck_assert_uint_eq(status(&r), 0x50);
	/* the absent slave reads as zeros and ignores commands */
	pio_out(&r.t, CMD + 6, 1, 0xb0);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 6, 1), 0);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 2, 1), 0);
	ck_assert_uint_eq(status(&r), 0);
	command(&r, 0xec);
	ck_assert_uint_eq(r.t.raised[14], 0);
	/* the empty secondary channel reads as zeros */
	ck_assert_uint_eq(pio_in(&r.t, 0x177, 1), 0);
	ck_assert_uint_eq(pio_in(&r.t, 0x376, 1), 0);
	rig_down(&r);
}
END_TEST

START_TEST(identify_device)
{
	struct rig r;
	uint16_t id[256];
	char model[41];
	uint8_t sum = 0;

	rig_up(&r, false);
	pio_out(&r.t, CMD + 6, 1, 0xa0);
	command(&r, 0xec);
	ck_assert_uint_eq(r.t.raised[14], 1);
	ck_assert_uint_eq(status(&r), 0x58); /* DRDY DSC DRQ */
	ck_assert(!r.t.level[14]);	     /* reading status acknowledged it */
	read_words(&r, id, 256);
	ck_assert_uint_eq(status(&r) & 0x08, 0);
	for (unsigned i = 0; i < 20; i++) {
		model[2 * i] = (char)(id[27 + i] >> 8);
		model[2 * i + 1] = (char)id[27 + i];
	}
	model[40] = 0;
	ck_assert_str_eq(model, "VMM HARDDISK                            ");
	ck_assert_uint_eq(id[10] >> 8, 'V');
	ck_assert_uint_eq(id[0], 0x0040);
	ck_assert_uint_eq(id[49] & 0x0300, 0x0300);
	ck_assert_uint_eq(id[60] | (uint32_t)id[61] << 16, DISK_SECTORS);
	ck_assert_uint_eq(id[100] | (uint64_t)id[101] << 16 | (uint64_t)id[102] << 32, DISK_SECTORS);
	ck_assert_uint_eq(id[83] & 0x0400, 0x0400); /* LBA48 */
	ck_assert_uint_eq(id[86] & 0x0400, 0x0400);
	ck_assert_uint_eq(id[47] & 0xff, 16);
	ck_assert_uint_eq(id[93] & 0xdf61, 0x4041); /* no device 1 */
	ck_assert_uint_eq(id[255] & 0xff, 0xa5);
	for (unsigned i = 0; i < 256; i++)
		sum += (uint8_t)(id[i] + (id[i] >> 8));
	ck_assert_uint_eq(sum, 0);
	rig_down(&r);
}
END_TEST

START_TEST(identify_packet_aborts_on_a_disk)
{
	struct rig r;

	rig_up(&r, false);
	command(&r, 0xa1);
	ck_assert_uint_eq(r.t.raised[14], 1);
	expect_abort(&r, 0x04);
	command(&r, 0xa0); /* PACKET */
	expect_abort(&r, 0x04);
	command(&r, 0x00); /* NOP / unknown */
	expect_abort(&r, 0x04);
	rig_down(&r);
}
END_TEST

START_TEST(read_write_sectors_lba28)
{
	struct rig r;
	uint8_t buf[1024];

	rig_up(&r, false);
	task_lba28(&r, 100, 2);
	command(&r, 0x20);
	ck_assert_uint_eq(r.t.raised[14], 1);
	ck_assert_uint_eq(status(&r), 0x58);
	read_words(&r, (uint16_t *)buf, 256);
	ck_assert_uint_eq(r.t.raised[14], 2); /* second block ready */
	ck_assert_uint_eq(status(&r), 0x58);
	for (unsigned i = 0; i < 128; i++) /* 32-bit PIO works too */
		((uint32_t *)(buf + 512))[i] = pio_in(&r.t, CMD, 4);
	ck_assert_uint_eq(status(&r), 0x50);
	ck_assert_uint_eq(r.t.raised[14], 2);
	expect_sector(buf, 100);
	expect_sector(buf + 512, 101);

	/* write two sectors at 7 */
	task_lba28(&r, 7, 2);
	command(&r, 0x30);
	ck_assert_uint_eq(r.t.raised[14], 2); /* no interrupt for the first block */
	ck_assert_uint_eq(status(&r), 0x58);
	for (unsigned i = 0; i < 256; i++)
		pio_out(&r.t, CMD, 2, 0xbeef);
	ck_assert_uint_eq(r.t.raised[14], 3); /* second block wanted */
	ck_assert_uint_eq(status(&r), 0x58);
	for (unsigned i = 0; i < 256; i++)
		pio_out(&r.t, CMD, 2, 0xbeef);
	ck_assert_uint_eq(r.t.raised[14], 4);
	ck_assert_uint_eq(status(&r), 0x50);
	file_sector(&r, 8, buf);
	ck_assert_uint_eq(buf[0], 0xef);
	ck_assert_uint_eq(buf[511], 0xbe);
	file_sector(&r, 9, buf);
	expect_sector(buf, 9);
	command(&r, 0xe7); /* FLUSH CACHE */
	ck_assert_uint_eq(status(&r), 0x50);
	command(&r, 0xea); /* FLUSH CACHE EXT */
	ck_assert_uint_eq(status(&r), 0x50);
	rig_down(&r);
}
END_TEST

START_TEST(chs_addressing)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	/* cylinder 1, head 2, sector 3 with 16 heads x 63 sectors */
	pio_out(&r.t, CMD + 6, 1, 0xa2);
	pio_out(&r.t, CMD + 2, 1, 1);
	pio_out(&r.t, CMD + 3, 1, 3);
	pio_out(&r.t, CMD + 4, 1, 1);
	pio_out(&r.t, CMD + 5, 1, 0);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, (1 * 16 + 2) * 63 + 2);
	/* sector 0 does not exist */
	pio_out(&r.t, CMD + 3, 1, 0);
	command(&r, 0x20);
	expect_abort(&r, 0x10);
	rig_down(&r);
}
END_TEST

START_TEST(read_write_ext_lba48)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	task_lba48(&r, 2000, 1);
	/* HOB reads back the high-order bytes */
	pio_out(&r.t, CTL, 1, 0x80);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 3, 1), 0);
	pio_out(&r.t, CTL, 1, 0x00);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 3, 1), 2000 & 0xff);
	command(&r, 0x24);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, 2000);
	task_lba48(&r, 2047, 1);
	command(&r, 0x34);
	for (unsigned i = 0; i < 256; i++)
		pio_out(&r.t, CMD, 2, 0x1234);
	ck_assert_uint_eq(status(&r), 0x50);
	file_sector(&r, 2047, buf);
	ck_assert_uint_eq(buf[0], 0x34);
	/* a 48-bit address beyond 2^32 sectors */
	task_lba48(&r, 0x100000000ull, 1);
	command(&r, 0x24);
	expect_abort(&r, 0x10);
	rig_down(&r);
}
END_TEST

START_TEST(multiple_mode)
{
	struct rig r;
	uint8_t buf[8 * 512];
	uint16_t id[256];

	rig_up(&r, false);
	pio_out(&r.t, CMD + 2, 1, 3); /* not a power of two */
	command(&r, 0xc6);
	expect_abort(&r, 0x04);
	pio_out(&r.t, CMD + 2, 1, 4);
	command(&r, 0xc6);
	ck_assert_uint_eq(status(&r), 0x50);
	command(&r, 0xec);
	read_words(&r, id, 256);
	ck_assert_uint_eq(id[59], 0x104);
	status(&r);
	r.t.raised[14] = 0;
	task_lba28(&r, 10, 8);
	command(&r, 0xc4);
	ck_assert_uint_eq(r.t.raised[14], 1);
	status(&r);
	read_words(&r, (uint16_t *)buf, 4 * 256);
	status(&r);
	ck_assert_uint_eq(r.t.raised[14], 2); /* one interrupt per 4-sector block */
	read_words(&r, (uint16_t *)(buf + 2048), 4 * 256);
	ck_assert_uint_eq(r.t.raised[14], 2);
	for (unsigned s = 0; s < 8; s++)
		expect_sector(buf + 512 * s, 10 + s);
	/* WRITE MULTIPLE EXT, 5 sectors: blocks of 4 and 1 */
	task_lba48(&r, 20, 5);
	command(&r, 0x39);
	for (unsigned i = 0; i < 4 * 256; i++)
		pio_out(&r.t, CMD, 2, 0x7777);
	ck_assert_uint_eq(status(&r), 0x58);
	for (unsigned i = 0; i < 256; i++)
		pio_out(&r.t, CMD, 2, 0x7777);
	ck_assert_uint_eq(r.t.raised[14], 4);
	ck_assert_uint_eq(status(&r), 0x50);
	file_sector(&r, 24, buf);
	ck_assert_uint_eq(buf[100], 0x77);
	file_sector(&r, 25, buf);
	expect_sector(buf, 25);
	/* multiple mode off: READ MULTIPLE aborts */
	pio_out(&r.t, CMD + 2, 1, 0);
	command(&r, 0xc6);
	task_lba28(&r, 10, 1);
	command(&r, 0xc4);
	expect_abort(&r, 0x04);
	rig_down(&r);
}
END_TEST

START_TEST(bad_lba_is_an_ata_error)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	task_lba28(&r, DISK_SECTORS - 1, 2); /* runs past the end */
	command(&r, 0x30);
	expect_abort(&r, 0x10);
	ck_assert_uint_eq(pio_in(&r.t, CMD, 2), 0); /* no data phase */
	task_lba28(&r, DISK_SECTORS, 1);
	command(&r, 0x20);
	expect_abort(&r, 0x10);
	task_lba28(&r, 0x0fffffff, 1);
	command(&r, 0xc8);
	expect_abort(&r, 0x10);
	/* the last sector itself is fine */
	task_lba28(&r, DISK_SECTORS - 1, 1);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, DISK_SECTORS - 1);
	/* the image did not grow */
	ck_assert_uint_eq(block_sectors(r.disk), DISK_SECTORS);
	rig_down(&r);
}
END_TEST

START_TEST(set_features_and_misc)
{
	struct rig r;
	uint16_t id[256];

	rig_up(&r, false);
	pio_out(&r.t, CMD + 1, 1, 0x03);
	pio_out(&r.t, CMD + 2, 1, 0x42); /* UDMA 2 */
	command(&r, 0xef);
	ck_assert_uint_eq(status(&r), 0x50);
	command(&r, 0xec);
	read_words(&r, id, 256);
	ck_assert_uint_eq(id[88], 0x043f);
	pio_out(&r.t, CMD + 1, 1, 0x02); /* write cache on */
	command(&r, 0xef);
	ck_assert_uint_eq(status(&r), 0x50);
	pio_out(&r.t, CMD + 1, 1, 0x77); /* unknown feature */
	command(&r, 0xef);
	expect_abort(&r, 0x04);
	command(&r, 0xe5); /* CHECK POWER MODE */
	ck_assert_uint_eq(pio_in(&r.t, CMD + 2, 1), 0xff);
	command(&r, 0xf8); /* READ NATIVE MAX ADDRESS */
	ck_assert_uint_eq(pio_in(&r.t, CMD + 3, 1) | pio_in(&r.t, CMD + 4, 1) << 8,
			  DISK_SECTORS - 1);
	command(&r, 0x90); /* EXECUTE DEVICE DIAGNOSTIC */
	ck_assert_uint_eq(pio_in(&r.t, CMD + 1, 1), 0x01);
	rig_down(&r);
}
END_TEST

START_TEST(nien_masks_the_interrupt)
{
	struct rig r;

	rig_up(&r, false);
	pio_out(&r.t, CTL, 1, 0x02);
	command(&r, 0xec);
	ck_assert_uint_eq(r.t.raised[14], 0);
	/* the pending interrupt shows once nIEN is cleared */
	pio_out(&r.t, CTL, 1, 0x00);
	ck_assert_uint_eq(r.t.raised[14], 1);
	/* alternate status does not acknowledge, status does */
	ck_assert_uint_eq(pio_in(&r.t, CTL, 1), 0x58);
	ck_assert(r.t.level[14]);
	status(&r);
	ck_assert(!r.t.level[14]);
	rig_down(&r);
}
END_TEST

START_TEST(soft_reset_mid_transfer)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	task_lba28(&r, 50, 4);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 100);
	pio_out(&r.t, CTL, 1, 0x06); /* SRST | nIEN */
	ck_assert_uint_eq(pio_in(&r.t, CTL, 1) & 0x80, 0x80);
	command(&r, 0xec); /* ignored while in reset */
	pio_out(&r.t, CTL, 1, 0x02);
	ck_assert_uint_eq(status(&r), 0x50);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 2, 1), 1); /* ATA signature */
	ck_assert_uint_eq(pio_in(&r.t, CMD + 3, 1), 1);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 4, 1), 0);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 5, 1), 0);
	ck_assert_uint_eq(pio_in(&r.t, CMD + 1, 1), 0x01);
	ck_assert_uint_eq(pio_in(&r.t, CMD, 2), 0); /* the transfer is gone */
	/* and the drive works again */
	task_lba28(&r, 51, 1);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, 51);
	/* reset in the middle of a write leaves the disk untouched */
	task_lba28(&r, 60, 1);
	command(&r, 0x30);
	for (unsigned i = 0; i < 200; i++)
		pio_out(&r.t, CMD, 2, 0);
	pio_out(&r.t, CTL, 1, 0x04);
	pio_out(&r.t, CTL, 1, 0x00);
	for (unsigned i = 0; i < 100; i++)
		pio_out(&r.t, CMD, 2, 0);
	file_sector(&r, 60, buf);
	expect_sector(buf, 60);
	rig_down(&r);
}
END_TEST

/* ----------------------------------------------------------- DMA tests */

static void prd(struct rig *r, unsigned i, uint32_t addr, uint32_t len, bool eot)
{
	uint8_t *e = r->t.ram + PRD_GPA + 8 * i;

	io_data_put(e, 4, addr);
	io_data_put(e + 4, 4, (len & 0xffff) | (eot ? 0x80000000u : 0));
}

static void dma_go(struct rig *r, uint32_t table, bool to_mem)
{
	pio_out(&r->t, BM + 4, 4, table);
	pio_out(&r->t, BM + 2, 1, 0x06); /* clear INT, ERR */
	pio_out(&r->t, BM, 1, to_mem ? 0x09 : 0x01);
}

START_TEST(dma_read_and_write)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	/* 3 sectors split over segments that cut a sector in two */
	prd(&r, 0, BUF_GPA, 700, false);
	prd(&r, 1, BUF_GPA + 0x1000, 836, true);
	task_lba28(&r, 300, 3);
	command(&r, 0xc8);
	ck_assert_uint_eq(r.t.raised[14], 0); /* waits for the engine */
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(r.t.raised[14], 1);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x04); /* INT, not active */
	ck_assert_uint_eq(status(&r), 0x50);
	expect_sector(r.t.ram + BUF_GPA, 300);
	memcpy(buf, r.t.ram + BUF_GPA + 512, 188);
	memcpy(buf + 188, r.t.ram + BUF_GPA + 0x1000, 324);
	expect_sector(buf, 301);
	expect_sector(r.t.ram + BUF_GPA + 0x1000 + 324, 302);
	pio_out(&r.t, BM, 1, 0);

	/* write 2 sectors from memory with one PRD */
	memset(r.t.ram + BUF_GPA, 0xab, 1024);
	prd(&r, 0, BUF_GPA, 1024, true);
	task_lba28(&r, 400, 2);
	command(&r, 0xca);
	dma_go(&r, PRD_GPA, false);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x04);
	file_sector(&r, 401, buf);
	ck_assert_uint_eq(buf[511], 0xab);
	/* READ DMA EXT with the engine started first */
	prd(&r, 0, BUF_GPA, 512, true);
	pio_out(&r.t, BM + 4, 4, PRD_GPA);
	pio_out(&r.t, BM, 1, 0x09);
	task_lba48(&r, 1500, 1);
	pio_out(&r.t, CMD + 7, 1, 0x25);
	expect_sector(r.t.ram + BUF_GPA, 1500);
	pio_out(&r.t, BM, 1, 0);
	rig_down(&r);
}
END_TEST

START_TEST(dma_prd_longer_than_transfer_stays_active)
{
	struct rig r;

	rig_up(&r, false);
	prd(&r, 0, BUF_GPA, 4096, true);
	task_lba28(&r, 5, 1);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x05);
	ck_assert_uint_eq(status(&r), 0x50);
	expect_sector(r.t.ram + BUF_GPA, 5);
	rig_down(&r);
}
END_TEST

START_TEST(dma_zero_length_prd_means_64k)
{
	struct rig r;

	rig_up(&r, false);
	prd(&r, 0, BUF_GPA, 0, true);
	task_lba28(&r, 1000, 128);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x04);
	ck_assert_uint_eq(status(&r), 0x50);
	expect_sector(r.t.ram + BUF_GPA, 1000);
	expect_sector(r.t.ram + BUF_GPA + 127 * 512, 1127);
	rig_down(&r);
}
END_TEST

START_TEST(dma_prd_beyond_ram_fails)
{
	struct rig r;

	rig_up(&r, false);
	prd(&r, 0, TEST_RAM_SIZE - 256, 512, true); /* crosses the end of RAM */
	task_lba28(&r, 0, 1);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x06); /* INT ERR */
	expect_abort(&r, 0x04);
	/* the table itself beyond RAM */
	task_lba28(&r, 0, 1);
	command(&r, 0xc8);
	dma_go(&r, 0xfffffff0u, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x06);
	expect_abort(&r, 0x04);
	/* a write from beyond RAM does not touch the disk */
	prd(&r, 0, 0xf0000000u, 512, true);
	task_lba28(&r, 3, 1);
	command(&r, 0xca);
	dma_go(&r, PRD_GPA, false);
	expect_abort(&r, 0x04);
	{
		uint8_t buf[512];

		file_sector(&r, 3, buf);
		expect_sector(buf, 3);
	}
	rig_down(&r);
}
END_TEST

START_TEST(dma_prd_without_end_bit_fails)
{
	struct rig r;
	uint32_t table = 0x1fff8; /* last entry of its 64 KiB page */

	rig_up(&r, false);
	io_data_put(r.t.ram + table, 4, BUF_GPA);
	io_data_put(r.t.ram + table + 4, 4, 512); /* no EOT, transfer wants more */
	task_lba28(&r, 0, 2);
	command(&r, 0xc8);
	dma_go(&r, table, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x06);
	expect_abort(&r, 0x04);
	/* a table with an end bit that is too short also fails */
	prd(&r, 0, BUF_GPA, 512, true);
	task_lba28(&r, 0, 2);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x07, 0x06);
	expect_abort(&r, 0x04);
	/* the engine direction must match the command */
	prd(&r, 0, BUF_GPA, 512, true);
	task_lba28(&r, 0, 1);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, false);
	expect_abort(&r, 0x04);
	rig_down(&r);
}
END_TEST

START_TEST(flush_and_verify)
{
	struct rig r;

	rig_up(&r, false);
	command(&r, 0xe7); /* FLUSH CACHE */
	ck_assert_uint_eq(status(&r), 0x50);
	ck_assert_uint_eq(r.t.raised[14], 1);
	command(&r, 0xea); /* FLUSH CACHE EXT */
	ck_assert_uint_eq(status(&r), 0x50);
	ck_assert_uint_eq(r.t.raised[14], 2);
	/* READ VERIFY: no data phase, the range is checked */
	task_lba28(&r, DISK_SECTORS - 4, 4);
	command(&r, 0x40);
	ck_assert_uint_eq(status(&r), 0x50);
	task_lba28(&r, DISK_SECTORS - 4, 5);
	command(&r, 0x40);
	expect_abort(&r, 0x10); /* IDNF */
	task_lba48(&r, DISK_SECTORS - 1, 1);
	command(&r, 0x42);
	ck_assert_uint_eq(status(&r), 0x50);
	task_lba48(&r, DISK_SECTORS, 1);
	command(&r, 0x42);
	expect_abort(&r, 0x10);
	rig_down(&r);
}
END_TEST

START_TEST(initialize_device_parameters_sets_chs)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, false);
	/* 4 heads (head field + 1), 32 sectors per track */
	pio_out(&r.t, CMD + 6, 1, 0xa3);
	pio_out(&r.t, CMD + 2, 1, 32);
	command(&r, 0x91);
	ck_assert_uint_eq(status(&r), 0x50);
	/* cylinder 2, head 3, sector 5 -> LBA (2 * 4 + 3) * 32 + 4 */
	pio_out(&r.t, CMD + 6, 1, 0xa3);
	pio_out(&r.t, CMD + 2, 1, 1);
	pio_out(&r.t, CMD + 3, 1, 5);
	pio_out(&r.t, CMD + 4, 1, 2);
	pio_out(&r.t, CMD + 5, 1, 0);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, (2 * 4 + 3) * 32 + 4);
	/* zero sectors per track is refused */
	pio_out(&r.t, CMD + 2, 1, 0);
	command(&r, 0x91);
	expect_abort(&r, 0x04);
	/* a soft reset restores the default 16 x 63 translation */
	pio_out(&r.t, CTL, 1, 0x04);
	pio_out(&r.t, CTL, 1, 0x00);
	pio_out(&r.t, CMD + 6, 1, 0xa2);
	pio_out(&r.t, CMD + 2, 1, 1);
	pio_out(&r.t, CMD + 3, 1, 3);
	pio_out(&r.t, CMD + 4, 1, 1);
	pio_out(&r.t, CMD + 5, 1, 0);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, (1 * 16 + 2) * 63 + 2);
	rig_down(&r);
}
END_TEST

START_TEST(reset_while_dma_pending)
{
	struct rig r;

	rig_up(&r, false);
	memset(r.t.ram + BUF_GPA, 0x5a, 512);
	prd(&r, 0, BUF_GPA, 512, true);
	task_lba28(&r, 7, 1);
	command(&r, 0xc8); /* waits for the engine */
	pio_out(&r.t, CTL, 1, 0x04);
	pio_out(&r.t, CTL, 1, 0x00);
	/* starting the engine now moves nothing and raises nothing */
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(r.t.raised[14], 0);
	ck_assert_uint_eq(r.t.ram[BUF_GPA], 0x5a);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x06, 0);
	pio_out(&r.t, BM, 1, 0);
	/* a new command after the reset transfers normally */
	task_lba28(&r, 7, 1);
	command(&r, 0xc8);
	dma_go(&r, PRD_GPA, true);
	ck_assert_uint_eq(r.t.raised[14], 1);
	expect_sector(r.t.ram + BUF_GPA, 7);
	rig_down(&r);
}
END_TEST

START_TEST(read_only_disk_rejects_writes)
{
	struct rig r;
	uint8_t buf[512];

	rig_up(&r, true);
	task_lba28(&r, 1, 1);
	command(&r, 0x30);
	expect_abort(&r, 0x04);
	ck_assert_uint_eq(status(&r) & 0x08, 0);
	prd(&r, 0, BUF_GPA, 512, true);
	task_lba28(&r, 1, 1);
	command(&r, 0xca);
	expect_abort(&r, 0x04);
	task_lba28(&r, 1, 1);
	command(&r, 0x20);
	read_words(&r, (uint16_t *)buf, 256);
	expect_sector(buf, 1);
	rig_down(&r);
}
END_TEST

START_TEST(pci_identity)
{
	struct rig r;

	rig_up(&r, false);
	ck_assert_uint_eq(pci_cfg_read(r.bus, 0x09, 0, 4), 0x70108086u);
	ck_assert_uint_eq(pci_cfg_read(r.bus, 0x09, 0x08, 4) >> 8, 0x010180u);
	pci_cfg_write(r.bus, 0x09, 0x40, 2, 0x8000);
	ck_assert_uint_eq(pci_cfg_read(r.bus, 0x09, 0x40, 2), 0x8000);
	ck_assert_uint_eq(pci_cfg_read(r.bus, 0x09, 0x20, 4), BM | 1);
	ck_assert_uint_eq(pio_in(&r.t, BM + 2, 1) & 0x60, 0x20); /* drive 0 DMA capable */
	rig_down(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ide");
	TCase *tc = tcase_create("ide");

	tcase_add_test(tc, presence_probe_like_seabios);
	tcase_add_test(tc, identify_device);
	tcase_add_test(tc, identify_packet_aborts_on_a_disk);
	tcase_add_test(tc, read_write_sectors_lba28);
	tcase_add_test(tc, chs_addressing);
	tcase_add_test(tc, read_write_ext_lba48);
	tcase_add_test(tc, multiple_mode);
	tcase_add_test(tc, bad_lba_is_an_ata_error);
	tcase_add_test(tc, set_features_and_misc);
	tcase_add_test(tc, nien_masks_the_interrupt);
	tcase_add_test(tc, soft_reset_mid_transfer);
	tcase_add_test(tc, dma_read_and_write);
	tcase_add_test(tc, dma_prd_longer_than_transfer_stays_active);
	tcase_add_test(tc, dma_zero_length_prd_means_64k);
	tcase_add_test(tc, dma_prd_beyond_ram_fails);
	tcase_add_test(tc, dma_prd_without_end_bit_fails);
	tcase_add_test(tc, flush_and_verify);
	tcase_add_test(tc, initialize_device_parameters_sets_chs);
	tcase_add_test(tc, reset_while_dma_pending);
	tcase_add_test(tc, read_only_disk_rejects_writes);
	tcase_add_test(tc, pci_identity);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
