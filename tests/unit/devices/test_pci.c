/* Unit tests for the PCI bus (mechanism #1, BARs), the i440FX (PAM, SMRAM)
 * and the PIIX3 (PIRQ routing, ELCR). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "tests/unit/devices/map_rec.h"
#include "tests/unit/devices/pc_host.h"

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

/* ------------------------------------------------ recording mem map */

/* ---------------------------------------------------------------- tests */

START_TEST(address_register_reads_back)
{
	struct fake_host t;
	struct pci_bus *bus;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	pio_out(&t, 0xcf8, 4, 0x80000000u);
	ck_assert_uint_eq(pio_in(&t, 0xcf8, 4), 0x80000000u);
	pio_out(&t, 0xcf8, 4, 0x8000ab07u); /* low two bits are not stored */
	ck_assert_uint_eq(pio_in(&t, 0xcf8, 4), 0x8000ab04u);
	/* a byte write to 0xcf9 is not the address register */
	pio_out(&t, 0xcf9, 1, 0);
	ck_assert_uint_eq(pio_in(&t, 0xcf8, 4), 0x8000ab04u);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

START_TEST(chipset_identity_and_empty_slots)
{
	struct fake_host t;
	struct map_rec rec = {0};
	struct pc_mem_map map = {map_rec_map, &rec};
	struct pci_bus *bus;
	struct i440fx *nb;
	struct piix3 *sb;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	nb = i440fx_new(&t.host, bus, &map);
	sb = piix3_new(&t.host, bus);
	ck_assert_ptr_nonnull(nb);
	ck_assert_ptr_nonnull(sb);
	ck_assert_uint_eq(cfg_in(&t, 0, 0, 4), 0x12378086u);
	ck_assert_uint_eq(cfg_in(&t, 0, 0x2c, 2), 0x1af4); /* SeaBIOS checks these */
	ck_assert_uint_eq(cfg_in(&t, 0, 0x2e, 2), 0x1100);
	ck_assert_uint_eq(cfg_in(&t, 0, 0x0a, 2), 0x0600);
	ck_assert_uint_eq(cfg_in(&t, 8, 0, 4), 0x70008086u);
	ck_assert_uint_eq(cfg_in(&t, 8, 0x0e, 1) & 0x80, 0x80); /* multi-function */
	ck_assert_uint_eq(cfg_in(&t, 8, 0x0a, 2), 0x0601);
	ck_assert_uint_eq(cfg_in(&t, 3 << 3, 0, 4), 0xffffffffu);
	/* read-only identity */
	cfg_out(&t, 0, 0, 4, 0);
	ck_assert_uint_eq(cfg_in(&t, 0, 0, 4), 0x12378086u);
	/* disabled config cycle: all-ones */
	pio_out(&t, 0xcf8, 4, 0);
	ck_assert_uint_eq(pio_in(&t, 0xcfc, 4), 0xffffffffu);
	/* bus 1 does not exist */
	pio_out(&t, 0xcf8, 4, 0x80010000u);
	ck_assert_uint_eq(pio_in(&t, 0xcfc, 2), 0xffff);
	piix3_free(sb);
	i440fx_free(nb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

struct hits {
	int reads, writes;
	uint64_t off;
};

static void bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct hits *h = opaque;

	h->reads++;
	h->off = off;
	io_data_put(data, size, 0x5a);
}

static void bar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct hits *h = opaque;

	h->writes++;
	h->off = off;
}

static const struct io_ops bar_ops = {bar_read, bar_write};

START_TEST(bar_sizing_and_remap)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct pci_dev d;
	struct hits io = {0}, mem = {0};
	uint32_t v = 0;

	test_host_init(&t);
	iobus_set_miss_log(t.host.pio, false);
	iobus_set_miss_log(t.host.mmio, false);
	bus = pci_bus_new(&t.host);
	pci_dev_init(&d, "test", 0x1234, 0x5678, 0xff0000, 1);
	pci_dev_set_bar(&d, 0, 32, true, &bar_ops, &io);
	pci_dev_set_bar(&d, 1, 4096, false, &bar_ops, &mem);
	ck_assert_int_eq(pci_bus_add(bus, &d, 2 << 3), 0);
	ck_assert_int_eq(pci_bus_add(bus, &d, 2 << 3), -EEXIST);

	/* sizing */
	cfg_out(&t, 2 << 3, 0x10, 4, 0xffffffffu);
	ck_assert_uint_eq(cfg_in(&t, 2 << 3, 0x10, 4), 0xffffffe1u);
	cfg_out(&t, 2 << 3, 0x14, 4, 0xffffffffu);
	ck_assert_uint_eq(cfg_in(&t, 2 << 3, 0x14, 4), 0xfffff000u);
	/* unimplemented BAR reads 0 */
	cfg_out(&t, 2 << 3, 0x18, 4, 0xffffffffu);
	ck_assert_uint_eq(cfg_in(&t, 2 << 3, 0x18, 4), 0);

	/* program, but decoding is off */
	cfg_out(&t, 2 << 3, 0x10, 4, 0xc000);
	cfg_out(&t, 2 << 3, 0x14, 4, 0xfebf0000u);
	ck_assert_uint_eq(pio_in(&t, 0xc004, 1), 0xff);
	ck_assert_int_eq(io.reads, 0);
	/* enable I/O and memory */
	cfg_out(&t, 2 << 3, 0x04, 2, 0x3);
	ck_assert_uint_eq(pio_in(&t, 0xc004, 1), 0x5a);
	ck_assert_int_eq(io.reads, 1);
	ck_assert_uint_eq(io.off, 4);
	ck_assert(iobus_write(t.host.mmio, 0xfebf0010u, &v, 4));
	ck_assert_int_eq(mem.writes, 1);
	ck_assert_uint_eq(mem.off, 0x10);
	/* move the I/O BAR: old place is free, new place decodes */
	cfg_out(&t, 2 << 3, 0x10, 4, 0xd000);
	ck_assert_uint_eq(pio_in(&t, 0xc004, 1), 0xff);
	ck_assert_int_eq(io.reads, 1);
	ck_assert_uint_eq(pio_in(&t, 0xd01f, 1), 0x5a);
	ck_assert_uint_eq(io.off, 0x1f);
	pio_out(&t, 0xd002, 2, 7);
	ck_assert_int_eq(io.writes, 1);
	/* sizing while enabled must not map the BAR at the all-ones address */
	cfg_out(&t, 2 << 3, 0x14, 4, 0xffffffffu);
	ck_assert(!iobus_read(t.host.mmio, 0xfffff000u, &v, 4));
	ck_assert(!iobus_read(t.host.mmio, 0xfebf0010u, &v, 4));
	/* disable decoding */
	cfg_out(&t, 2 << 3, 0x04, 2, 0);
	ck_assert_uint_eq(pio_in(&t, 0xd000, 1), 0xff);
	ck_assert_int_eq(io.reads, 2);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

START_TEST(capabilities_chain)
{
	struct pci_dev d;
	unsigned a, b;

	pci_dev_init(&d, "caps", 1, 2, 0, 0);
	a = pci_dev_add_cap(&d, 0x09, 16);
	b = pci_dev_add_cap(&d, 0x05, 10);
	ck_assert_uint_eq(a, 0x40);
	ck_assert_uint_eq(b, 0x50);
	ck_assert_uint_eq(d.cfg[0x34], 0x40);
	ck_assert_uint_eq(d.cfg[0x41], 0x50);
	ck_assert_uint_eq(d.cfg[0x51], 0);
	ck_assert_uint_eq(d.cfg[0x06] & 0x10, 0x10);
	ck_assert_uint_eq(pci_dev_add_cap(&d, 0x11, 200), 0); /* no room */
}
END_TEST

/* An i440FX with a 128 KiB BIOS aliased below 1 MiB, on a recording map. */
struct pam_board {
	struct fake_host t;
	struct map_rec rec;
	struct pc_mem_map map;
	struct pci_bus *bus;
	struct i440fx *nb;
};

static uint8_t pam_rom[0x20000] __attribute__((aligned(4096)));

static void pam_board_up(struct pam_board *b)
{
	memset(b, 0, sizeof(*b));
	b->map = (struct pc_mem_map){map_rec_map, &b->rec};
	test_host_init(&b->t);
	b->bus = pci_bus_new(&b->t.host);
	b->nb = i440fx_new(&b->t.host, b->bus, &b->map);
	ck_assert_int_eq(i440fx_set_bios_alias(b->nb, pam_rom, sizeof(pam_rom)), 0);
}

static void pam_board_down(struct pam_board *b)
{
	i440fx_free(b->nb);
	pci_bus_free(b->bus);
	test_host_fini(&b->t);
}

START_TEST(pam_switches_between_rom_and_ram)
{
	static struct pam_board b;
	const uint8_t *const rom = pam_rom;
	const struct map_call *c, *f;
	uint8_t *shadow;
	uint32_t v = 0x11223344;

	pam_board_up(&b);
	ck_assert_int_eq(i440fx_set_bios_alias(b.nb, pam_rom, 1000), -EINVAL);
	/* reset state: ROM in 0xe0000-0xfffff, one mapping; nothing at 0xc0000 */
	ck_assert_uint_eq(b.rec.n, 1);
	ck_assert_uint_eq(map_rec_at(&b.rec, 0xe0000)->size, 0x20000);
	f = map_rec_at(&b.rec, 0xf0000);
	ck_assert_ptr_eq(f->hva, rom + 0x10000);
	ck_assert(f->ro);
	ck_assert_uint_eq(f->size, 0x10000);
	ck_assert_ptr_eq(map_rec_at(&b.rec, 0xe4000)->hva, rom + 0x4000);
	ck_assert_ptr_null(map_rec_at(&b.rec, 0xc0000)->hva);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x59, 1), 0);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x72, 1), 0x02);

	/* write-only (0x22) for 0xc0000: reads still ROM/none, writes to RAM */
	cfg_out(&b.t, 0, 0x5a, 1, 0x22);
	ck_assert_ptr_null(map_rec_at(&b.rec, 0xc0000)->hva);
	ck_assert(iobus_write(b.t.host.mmio, 0xc0010, &v, 4));
	iobus_read(b.t.host.mmio, 0xc0010, &v, 4);
	ck_assert_uint_eq(v, 0xffffffffu); /* read side decodes nothing */
	/* read+write enable: shadow RAM, writable, holding the earlier write */
	cfg_out(&b.t, 0, 0x5a, 1, 0x33);
	c = map_rec_at(&b.rec, 0xc0000);
	ck_assert_ptr_nonnull(c->hva);
	ck_assert(!c->ro);
	shadow = c->hva;
	ck_assert_uint_eq(shadow[0x10], 0x44);
	ck_assert_uint_eq(shadow[0x13], 0x11);
	ck_assert_ptr_eq(map_rec_at(&b.rec, 0xc4000)->hva, shadow + 0x4000);
	/* read-only RAM for 0xf0000 (0x10) */
	cfg_out(&b.t, 0, 0x59, 1, 0x10);
	f = map_rec_at(&b.rec, 0xf0000);
	ck_assert_ptr_eq(f->hva, shadow + 0x30000);
	ck_assert(f->ro);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x59, 1), 0x10);
	/* reserved bits of PAM0 do not stick */
	cfg_out(&b.t, 0, 0x59, 1, 0xff);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x59, 1), 0x30);
	ck_assert(!map_rec_at(&b.rec, 0xf0000)->ro);
	/* reset returns every segment to ROM */
	dev_reset_all(&b.t.host);
	ck_assert_ptr_eq(map_rec_at(&b.rec, 0xf0000)->hva, rom + 0x10000);
	ck_assert_ptr_null(map_rec_at(&b.rec, 0xc0000)->hva);
	ck_assert_uint_eq(cfg_in(&b.t, 0, 0x5a, 1), 0);
	pam_board_down(&b);
}
END_TEST

/* Each KVM slot change is costly: segments that continue each other
 * share one mapping, a PAM write remaps only what changed, and the
 * direct boot's shadow_all is one change however many registers it sets. */
START_TEST(pam_segments_share_mappings)
{
	static struct pam_board b;
	const struct map_call *c;
	uint8_t *shadow;
	unsigned calls;

	pam_board_up(&b);
	calls = b.rec.calls;
	i440fx_shadow_all(b.nb);
	ck_assert_uint_eq(b.rec.calls, calls + 1);
	ck_assert_uint_eq(b.rec.n, 1);
	c = map_rec_at(&b.rec, 0xc0000);
	ck_assert_uint_eq(c->size, 0x40000);
	ck_assert(!c->ro);
	/* the same value again changes nothing */
	calls = b.rec.calls;
	cfg_out(&b.t, 0, 0x5b, 1, 0x33);
	ck_assert_uint_eq(b.rec.calls, calls);
	/* 0xc8000 read-only splits the run in three */
	cfg_out(&b.t, 0, 0x5b, 1, 0x31);
	ck_assert_uint_eq(b.rec.calls, calls + 3);
	ck_assert_uint_eq(b.rec.n, 3);
	ck_assert_uint_eq(map_rec_at(&b.rec, 0xc0000)->size, 0x8000);
	ck_assert(map_rec_at(&b.rec, 0xc8000)->ro);
	ck_assert_uint_eq(map_rec_at(&b.rec, 0xc8000)->size, 0x4000);
	ck_assert(!map_rec_at(&b.rec, 0xcc000)->ro);
	ck_assert_uint_eq(map_rec_at(&b.rec, 0xcc000)->size, 0x34000);
	shadow = map_rec_at(&b.rec, 0xc0000)->hva;
	ck_assert_ptr_eq(map_rec_at(&b.rec, 0xcc000)->hva, shadow + 0xc000);
	/* and back: one mapping again */
	cfg_out(&b.t, 0, 0x5b, 1, 0x33);
	ck_assert_uint_eq(b.rec.n, 1);
	ck_assert_uint_eq(map_rec_at(&b.rec, 0xc0000)->size, 0x40000);
	pam_board_down(&b);
}
END_TEST

START_TEST(smram_lock_is_sticky)
{
	struct fake_host t;
	struct map_rec rec = {0};
	struct pc_mem_map map = {map_rec_map, &rec};
	struct pci_bus *bus;
	struct i440fx *nb;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	nb = i440fx_new(&t.host, bus, &map);
	cfg_out(&t, 0, 0x72, 1, 0x4a); /* D_OPEN | G_SMRAME */
	ck_assert_uint_eq(cfg_in(&t, 0, 0x72, 1), 0x4a);
	cfg_out(&t, 0, 0x72, 1, 0x1a); /* lock */
	ck_assert_uint_eq(cfg_in(&t, 0, 0x72, 1), 0x1a);
	cfg_out(&t, 0, 0x72, 1, 0x42); /* cannot open or unlock any more */
	ck_assert_uint_eq(cfg_in(&t, 0, 0x72, 1), 0x1a);
	i440fx_free(nb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

/* INTx lines are wired-OR: one function lowering its pin leaves the
 * line up while another on the same GSI still holds it. */
START_TEST(shared_intx_is_wired_or)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct piix3 *sb;
	struct pci_dev a, b;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	sb = piix3_new(&t.host, bus);
	pci_dev_init(&a, "a", 0x1af4, 0x1000, 0x020000, 0);
	pci_dev_init(&b, "b", 0x1af4, 0x1005, 0x00ff00, 0);
	a.cfg[0x3d] = b.cfg[0x3d] = 1; /* INTA */
	ck_assert_int_eq(pci_bus_add(bus, &a, 3 << 3), 0);
	ck_assert_int_eq(pci_bus_add(bus, &b, 7 << 3), 0);
	cfg_out(&t, 8, 0x60, 4, 0x0b0b0a0au); /* PIRQC and PIRQD -> IRQ 11 */
	pci_dev_set_irq(&a, true);
	pci_dev_set_irq(&b, true);
	ck_assert(t.level[11]);
	pci_dev_set_irq(&a, false);
	ck_assert(t.level[11]); /* b still holds it */
	pci_dev_set_irq(&b, false);
	ck_assert(!t.level[11]);
	piix3_free(sb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

START_TEST(pirq_routing)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct piix3 *sb;
	struct pci_dev d;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	sb = piix3_new(&t.host, bus);
	pci_dev_init(&d, "nic", 0x1af4, 0x1000, 0x020000, 0);
	d.cfg[0x3d] = 1; /* INTA */
	ck_assert_int_eq(pci_bus_add(bus, &d, 3 << 3), 0);
	/* routes are disabled after reset: nothing reaches a GSI */
	ck_assert_uint_eq(cfg_in(&t, 8, 0x60, 4), 0x80808080u);
	pci_dev_set_irq(&d, true);
	for (unsigned i = 0; i < 24; i++)
		ck_assert(!t.level[i]);
	pci_dev_set_irq(&d, false);
	/* slot 3 INTA -> PIRQC (0x62) */
	cfg_out(&t, 8, 0x60, 4, 0x0b0b0a0au);
	pci_dev_set_irq(&d, true);
	ck_assert(t.level[11]);
	ck_assert_uint_eq(t.raised[11], 1);
	pci_dev_set_irq(&d, false);
	ck_assert(!t.level[11]);
	/* IRQ 2 is not a valid target */
	cfg_out(&t, 8, 0x62, 1, 0x02);
	pci_dev_set_irq(&d, true);
	ck_assert_uint_eq(t.raised[2], 0);
	piix3_free(sb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

START_TEST(info_pci_lists_devices)
{
	struct fake_host t;
	struct map_rec rec = {0};
	struct pc_mem_map map = {map_rec_map, &rec};
	struct pci_bus *bus;
	struct i440fx *nb;
	struct piix3 *sb;
	char buf[1024];
	size_t n;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	nb = i440fx_new(&t.host, bus, &map);
	sb = piix3_new(&t.host, bus);
	n = pci_bus_info(bus, buf, sizeof(buf));
	ck_assert_uint_lt(n, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "Host bridge: PCI device 8086:1237"));
	ck_assert_ptr_nonnull(strstr(buf, "device   1, function 0"));
	ck_assert_ptr_nonnull(strstr(buf, "ISA bridge: PCI device 8086:7000"));
	/* truncation reports the length needed */
	ck_assert_uint_eq(pci_bus_info(bus, buf, 10), n);
	ck_assert_uint_eq(strlen(buf), 9);
	piix3_free(sb);
	i440fx_free(nb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pci");
	TCase *tc = tcase_create("pci");

	tcase_add_test(tc, address_register_reads_back);
	tcase_add_test(tc, chipset_identity_and_empty_slots);
	tcase_add_test(tc, bar_sizing_and_remap);
	tcase_add_test(tc, capabilities_chain);
	tcase_add_test(tc, pam_switches_between_rom_and_ram);
	tcase_add_test(tc, pam_segments_share_mappings);
	tcase_add_test(tc, smram_lock_is_sticky);
	tcase_add_test(tc, pirq_routing);
	tcase_add_test(tc, shared_intx_is_wired_or);
	tcase_add_test(tc, info_pci_lists_devices);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
