/* Unit tests for the AHCI snapshot (ahci_state.c): a controller whose
 * port 0 a driver started (command list and FIS bases, interrupts
 * enabled, engine running) is saved and loaded into a fresh one on a
 * second host, whose BARs were never programmed: its ABAR must answer at
 * the same address with the same global and port registers. A port with a
 * command still issued, or a misaligned command list, is refused. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "devices/storage/ahci.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define DEVFN (3 << 3)
#define ABAR 0xfebf0000u

struct rig {
	struct fake_host t;
	struct pci_bus *bus;
	struct ahci *ahci;
	struct block_dev *disk;
	char path[64];
};

static void rig_up(struct rig *r, bool program)
{
	struct block_opts o = {.format = BLOCK_FORMAT_RAW};
	struct ahci_drive drives[AHCI_PORTS] = {{0}};
	char err[256];
	int fd;

	test_host_init(&r->t);
	iobus_set_miss_log(r->t.host.mmio, false);
	strcpy(r->path, "/tmp/vmm-ahci-state-XXXXXX");
	fd = mkstemp(r->path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	o.path = r->path;
	r->disk = block_open(&o, err, sizeof(err));
	ck_assert_msg(r->disk != NULL, "%s", err);
	drives[0].disk = r->disk;
	r->bus = pci_bus_new(&r->t.host);
	r->ahci = ahci_new(&r->t.host, r->bus, DEVFN, drives);
	ck_assert_ptr_nonnull(r->ahci);
	if (program) {
		pci_cfg_write(r->bus, DEVFN, 0x24, 4, ABAR);
		pci_cfg_write(r->bus, DEVFN, 0x04, 2, 0x6);
	}
}

static void rig_down(struct rig *r)
{
	ahci_free(r->ahci);
	pci_bus_free(r->bus);
	block_close(r->disk);
	unlink(r->path);
	test_host_fini(&r->t);
}

static uint32_t rd(struct rig *r, unsigned off)
{
	uint32_t v = 0xffffffff;

	iobus_read(r->t.host.mmio, ABAR + off, &v, 4);
	return v;
}

static void wr(struct rig *r, unsigned off, uint32_t v)
{
	iobus_write(r->t.host.mmio, ABAR + off, &v, 4);
}

static void save_ahci(void *dev, struct state_writer *w)
{
	ahci_save(((struct rig *)dev)->ahci, w);
}

static int load_ahci(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return ahci_load(((struct rig *)dev)->ahci, r, e, elen);
}

static void port_start(struct rig *r)
{
	wr(r, 0x04, 0x80000002); /* AE, IE */
	wr(r, 0x100, 0x10000);	 /* CLB */
	wr(r, 0x108, 0x10400);	 /* FB */
	wr(r, 0x118, 0x16);	 /* FRE, POD, SUD */
	wr(r, 0x114, 0x7dc0007f);
	wr(r, 0x118, 0x17); /* ST */
	wr(r, 0x134, 0x3);  /* SACT: two NCQ tags marked, not yet issued */
}

START_TEST(registers_come_back_at_the_bar)
{
	static struct rig a, b;
	size_t len;
	void *blob;

	rig_up(&a, true);
	rig_up(&b, false);
	port_start(&a);
	blob = save_tree(save_ahci, &a, &len);
	ck_assert_uint_eq(rd(&b, 0x04), 0xffffffff); /* no BAR there yet */
	ck_assert_int_eq(load_tree(load_ahci, &b, blob, len), 0);
	for (unsigned off = 0; off < 0x10; off += 4)
		ck_assert_uint_eq(rd(&b, off), rd(&a, off));
	for (unsigned p = 0; p < 2; p++)
		for (unsigned off = 0; off < 0x40; off += 4)
			ck_assert_msg(
				rd(&b, 0x100 + p * 0x80 + off) == rd(&a, 0x100 + p * 0x80 + off),
				"port %u register %#x: %#x, source %#x", p, off,
				rd(&b, 0x100 + p * 0x80 + off), rd(&a, 0x100 + p * 0x80 + off));
	ck_assert_uint_eq(rd(&b, 0x100), 0x10000);
	ck_assert_uint_eq(rd(&b, 0x134), 0x3);
	free(blob);
	rig_down(&a);
	rig_down(&b);
}
END_TEST

START_TEST(bad_ports_are_refused)
{
	static struct rig a, b;
	size_t len;
	void *blob;

	rig_up(&a, true);
	rig_up(&b, true);
	port_start(&a);
	blob = save_tree(save_ahci, &a, &len);
	patch_u32(blob, "/devices/ahci@3,0/port@0", "ci", 0x4);
	ck_assert_int_eq(load_tree(load_ahci, &b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/ahci@3,0/port@0: commands 0x4 still issued");
	patch_u32(blob, "/devices/ahci@3,0/port@0", "ci", 0);
	patch(blob, "/devices/ahci@3,0/port@0", "clb",
	      (const uint8_t[8]){0, 0, 0, 0, 0, 1, 0, 0x10}, 8);
	ck_assert_int_eq(load_tree(load_ahci, &b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/ahci@3,0/port@0: clb 0x10010 or fb 0x10400 misaligned");
	ck_assert_uint_eq(rd(&b, 0x100), 0); /* b unchanged */
	free(blob);
	rig_down(&a);
	rig_down(&b);
}
END_TEST

static Suite *ahci_state_suite(void)
{
	Suite *s = suite_create("ahci_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, registers_come_back_at_the_bar);
	tcase_add_test(tc, bad_ports_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(ahci_state_suite());
}
