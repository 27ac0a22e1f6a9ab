/* Unit tests for the PIIX3 IDE model's bus-master DMA engine
 * (devices/storage/ide_dma.c), driven through BAR 4 and the task file like a
 * driver would: reads and writes through PRD tables, a table longer than
 * the transfer, a zero-length entry (64 KiB), entries beyond guest RAM or
 * without the end bit, reset with a transfer pending. Separate from
 * test_ide.c (the ATA commands in PIO mode) like the code it tests; both
 * use ide_rig.h. */
#include "devices/dev_host.h"
#include "tests/unit/devices/ide_rig.h"

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

int main(void)
{
	Suite *s = suite_create("ide_dma");
	TCase *tc = tcase_create("ide_dma");

	tcase_add_test(tc, dma_read_and_write);
	tcase_add_test(tc, dma_prd_longer_than_transfer_stays_active);
	tcase_add_test(tc, dma_zero_length_prd_means_64k);
	tcase_add_test(tc, dma_prd_beyond_ram_fails);
	tcase_add_test(tc, dma_prd_without_end_bit_fails);
	tcase_add_test(tc, reset_while_dma_pending);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
