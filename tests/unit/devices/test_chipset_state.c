/* Unit tests for the snapshots of the PC chipset's PCI functions and
 * fw_cfg: the i440FX (PAM shadow RAM, SMRAM lock), the PIIX3 (PIRQ
 * routes) and the fw_cfg read position. Each is driven through its ports,
 * saved, loaded into a fresh one on a second host and must then answer
 * the same; bad trees are refused with one line. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/isa/fw_cfg.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/piix3.h"
#include "state/state.h"
#include "tests/unit/devices/map_rec.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

static uint32_t cfg_in(struct fake_host *t, unsigned devfn, unsigned off, unsigned size)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | devfn << 8 | (off & 0xfc));
	return pio_in(t, (uint16_t)(0xcfc + (off & 3)), size);
}

static void cfg_out(struct fake_host *t, unsigned devfn, unsigned off, unsigned size, uint32_t v)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | devfn << 8 | (off & 0xfc));
	pio_out(t, (uint16_t)(0xcfc + (off & 3)), size, v);
}

struct board {
	struct fake_host t;
	struct map_rec rec;
	struct pc_mem_map map;
	struct pci_bus *bus;
	struct i440fx *nb;
	struct piix3 *sb;
	struct fw_cfg *fw;
};

static void board_up(struct board *b)
{
	memset(b, 0, sizeof(*b));
	test_host_init(&b->t);
	b->map = (struct pc_mem_map){map_rec_map, &b->rec};
	b->bus = pci_bus_new(&b->t.host);
	b->nb = i440fx_new(&b->t.host, b->bus, &b->map);
	b->sb = piix3_new(&b->t.host, b->bus);
	b->fw = fw_cfg_new(&b->t.host);
	ck_assert_ptr_nonnull(b->nb);
	ck_assert_ptr_nonnull(b->sb);
	ck_assert_ptr_nonnull(b->fw);
}

static void board_down(struct board *b)
{
	fw_cfg_free(b->fw);
	piix3_free(b->sb);
	i440fx_free(b->nb);
	pci_bus_free(b->bus);
	test_host_fini(&b->t);
}

static void save_board(void *dev, struct state_writer *w)
{
	struct board *b = dev;

	pci_bus_save(b->bus, w);
	i440fx_save(b->nb, w);
	piix3_save(b->sb, w);
	fw_cfg_save(b->fw, w);
}

static int load_board(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	struct board *b = dev;

	if (pci_bus_load(b->bus, r, e, elen) < 0 || i440fx_load(b->nb, r, e, elen) < 0 ||
	    piix3_load(b->sb, r, e, elen) < 0)
		return -1;
	return fw_cfg_load(b->fw, r, e, elen);
}

/* What SeaBIOS does: write-only shadow at 0xc0000 to copy a ROM there,
 * then read-only; SMRAM locked; PIRQA to IRQ 11; fw_cfg half read. */
static void drive(struct board *b)
{
	uint8_t v = 0xa5;

	cfg_out(&b->t, 0, 0x5a, 1, 0x02); /* 0xc0000: write enable only */
	iobus_write(b->t.host.mmio, 0xc0010, &v, 1);
	cfg_out(&b->t, 0, 0x5a, 1, 0x01); /* read-only shadow */
	cfg_out(&b->t, 0, 0x59, 1, 0x30); /* 0xf0000 read-write */
	cfg_out(&b->t, 0, 0x72, 1, 0x1a); /* D_LCK */
	cfg_out(&b->t, 8, 0x60, 1, 0x0b);
	pio_out(&b->t, 0x510, 2, 0x0000); /* the signature, "QEMU" */
	(void)pio_in(&b->t, 0x511, 1);
	(void)pio_in(&b->t, 0x511, 1);
}

START_TEST(chipset_round_trip)
{
	static struct board a, b;
	const struct map_call *c;
	unsigned calls;
	size_t len;
	void *blob;

	board_up(&a);
	board_up(&b);
	drive(&a);
	blob = save_tree(save_board, &a, &len);
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), 0);
	for (uint64_t gpa = 0xc0000; gpa < 0x100000; gpa += 0x4000) {
		struct map_call seen_a = *map_rec_at(&a.rec, gpa);

		c = map_rec_at(&b.rec, gpa);
		ck_assert_int_eq(!seen_a.hva, !c->hva);
		ck_assert_int_eq(seen_a.ro, c->ro);
	}
	c = map_rec_at(&b.rec, 0xc0000);
	ck_assert_ptr_nonnull(c->hva);
	ck_assert(c->ro);
	ck_assert_uint_eq(((uint8_t *)c->hva)[0x10], 0xa5); /* the shadow RAM came along */
	c = map_rec_at(&b.rec, 0xf0000);
	ck_assert_ptr_nonnull(c->hva);
	ck_assert(!c->ro);
	/* Loading what the board already shows changes no mapping (each
	 * would be a KVM slot change while the guest is stopped). */
	calls = b.rec.calls;
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), 0);
	ck_assert_uint_eq(b.rec.calls, calls);
	/* SMRAM stays locked: D_OPEN cannot be set */
	cfg_out(&b.t, 0, 0x72, 1, 0x4a);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x72, 1), 0x1a);
	ck_assert_uint_eq(cfg_in(&b.t, 8, 0x60, 4), cfg_in(&a.t, 8, 0x60, 4));
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(pio_in(&b.t, 0x511, 1), pio_in(&a.t, 0x511, 1));
	free(blob);
	board_down(&a);
	board_down(&b);
}
END_TEST

START_TEST(chipset_bad_trees)
{
	static struct board a, b;
	size_t len;
	void *blob;

	board_up(&a);
	board_up(&b);
	drive(&a);
	blob = save_tree(save_board, &a, &len);
	patch_u32(blob, "/devices/fw-cfg@510", "offset", 5);
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/fw-cfg@510: offset 5 is past the end of item 0");
	free(blob);
	cfg_out(&a.t, 8, 0x61, 1, 0x8f);
	blob = save_tree(save_board, &a, &len);
	{
		/* a PIRQ route with bits the register never keeps (0x70) */
		uint8_t cfg[256];

		for (unsigned i = 0; i < 256; i++)
			cfg[i] = (uint8_t)cfg_in(&a.t, 8, i, 1);
		cfg[0x61] = 0xff;
		patch(blob, "/devices/piix3@1,0", "pci-config", cfg, sizeof(cfg));
	}
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/piix3@1,0: PIRQB route 0xff has bits never kept");
	free(blob);
	board_down(&a);
	board_down(&b);
}
END_TEST

static Suite *chipset_state_suite(void)
{
	Suite *s = suite_create("chipset_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, chipset_round_trip);
	tcase_add_test(tc, chipset_bad_trees);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(chipset_state_suite());
}
