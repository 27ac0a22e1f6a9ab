/* Unit tests for the PIIX3 IDE snapshot (ide_state.c): a PIO read stopped
 * halfway through its first sector is saved and loaded into a fresh
 * controller on a second host (the same disk image); the rest of the data,
 * the task file, status, the bus-master registers and the IRQ line must
 * then be those of the source. A buffer position past its end, or a
 * transfer to an absent drive, is refused with one line. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"
#include "tests/unit/devices/ide_rig.h"
#include "tests/unit/devices/state_tree.h"

static void save_ide(void *dev, struct state_writer *w)
{
	ide_save(((struct rig *)dev)->ide, w);
}

static int load_ide(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return ide_load(((struct rig *)dev)->ide, r, e, elen);
}

/* READ SECTORS of 3 from sector 5, the first 100 words read. */
static void start_read(struct rig *r)
{
	uint16_t w[100];

	task_lba28(r, 5, 3);
	command(r, 0x20);
	read_words(r, w, 100);
	pio_out(&r->t, BM + 2, 1, 0x60); /* both drives DMA capable */
	pio_out(&r->t, BM + 4, 4, 0x12340);
}

/* BAR 4 as the config space of the loaded controller holds it. */
static uint32_t cfg_in_bm(struct rig *r)
{
	return pci_cfg_read(r->bus, 0x09, 0x20, 4);
}

START_TEST(pio_read_resumes_after_load)
{
	static struct rig a, b;
	uint16_t wa, wb;
	size_t len;
	void *blob;

	rig_up(&a, true);
	rig_up(&b, true);
	start_read(&a);
	blob = save_tree(save_ide, &a, &len);
	ck_assert_int_eq(load_tree(load_ide, &b, blob, len), 0);
	ck_assert_uint_eq(cfg_in_bm(&b), BM | 1);
	ck_assert_int_eq(b.t.level[14], a.t.level[14]);
	for (unsigned reg = 1; reg < 8; reg++)
		ck_assert_uint_eq(pio_in(&b.t, CMD + reg, 1), pio_in(&a.t, CMD + reg, 1));
	ck_assert_uint_eq(pio_in(&b.t, BM + 2, 1), pio_in(&a.t, BM + 2, 1));
	ck_assert_uint_eq(pio_in(&b.t, BM + 4, 4), 0x12340);
	/* the rest of three sectors, word by word, with the next blocks read
	 * from b's own image */
	for (unsigned i = 100; i < 3 * 256; i++) {
		wa = (uint16_t)pio_in(&a.t, CMD, 2);
		wb = (uint16_t)pio_in(&b.t, CMD, 2);
		ck_assert_msg(wa == wb, "word %u: %#x, source %#x", i, wb, wa);
		ck_assert_uint_eq(wb, pattern(5 + i / 256, (i % 256) * 2) |
					      pattern(5 + i / 256, (i % 256) * 2 + 1) << 8);
	}
	ck_assert_uint_eq(status(&b), status(&a));
	free(blob);
	rig_down(&a);
	rig_down(&b);
}
END_TEST

START_TEST(bad_trees_are_refused)
{
	static struct rig a, b;
	size_t len;
	void *blob;

	rig_up(&a, true);
	rig_up(&b, true);
	start_read(&a);
	blob = save_tree(save_ide, &a, &len);
	patch_u32(blob, "/devices/ide-channel@1f0", "pos", 600);
	ck_assert_int_eq(load_tree(load_ide, &b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/ide-channel@1f0: pos 600 is past end 512");
	patch_u32(blob, "/devices/ide-channel@1f0", "pos", 200);
	patch_u8(blob, "/devices/ide-channel@1f0", "unit", 1);
	ck_assert_int_eq(load_tree(load_ide, &b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/ide-channel@1f0: a transfer to drive 1, which is absent");
	ck_assert_uint_eq(status(&b) & 0x08, 0); /* b unchanged: no data phase */
	free(blob);
	rig_down(&a);
	rig_down(&b);
}
END_TEST

static Suite *ide_state_suite(void)
{
	Suite *s = suite_create("ide_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, pio_read_resumes_after_load);
	tcase_add_test(tc, bad_trees_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(ide_state_suite());
}
