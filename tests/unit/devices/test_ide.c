/* Unit tests for the PIIX3 IDE model, driven through its ports like a
 * driver would: every ATA command in PIO mode, bad LBAs, reset in the
 * middle of a transfer, nIEN, a read-only disk, the PCI identity. The disk
 * is a temporary raw image (ide_rig.h). The bus-master DMA engine, with
 * bad PRD tables, has its own suite, test_ide_dma.c, as it has its own
 * file, devices/storage/ide_dma.c. */
#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "tests/unit/devices/ide_rig.h"

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
	ck_assert_uint_eq(id[100] | (uint64_t)id[101] << 16 | (uint64_t)id[102] << 32,
			  DISK_SECTORS);
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
	tcase_add_test(tc, flush_and_verify);
	tcase_add_test(tc, initialize_device_parameters_sets_chs);
	tcase_add_test(tc, read_only_disk_rejects_writes);
	tcase_add_test(tc, pci_identity);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
