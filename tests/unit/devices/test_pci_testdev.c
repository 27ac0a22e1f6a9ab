/* Unit tests for QEMU's pci-testdev: the header each BAR shows
 * per test, the no-eventfd test's count, the eventfd tests' ioeventfds
 * (port I/O or memory, with or without datamatch) following the test and
 * the BAR, and the end of the list; snapshots keep the test and its count
 * and register the ioeventfd again, and bad trees are refused. No KVM: a
 * recorder stands in for dev_fast_ops. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/testdev/pci_testdev.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define MEMBAR 0xfeb00000u
#define IOBAR 0xc000u
#define DEVFN 0x18u /* 00:03.0 */

static struct fake_host t;
static struct pci_bus *pci;
static struct pci_testdev *d;

static struct {
	uint64_t addr;
	unsigned len;
	bool pio;
	int64_t datamatch;
	int n; /* registered now */
	int calls;
} ev;

static int record_ioeventfd(void *o, uint64_t addr, unsigned len, bool pio, int64_t datamatch,
			    int fd, bool assign)
{
	ck_assert_int_ge(fd, 0);
	ev.calls++;
	if (!assign) { /* KVM drops only the exact registration */
		ck_assert_int_eq(ev.n, 1);
		ck_assert_uint_eq(ev.addr, addr);
		ck_assert(ev.pio == pio);
		ck_assert_int_eq(ev.datamatch, datamatch);
		ev.n--;
		return 0;
	}
	ck_assert_int_eq(ev.n, 0); /* one test at a time */
	ev.addr = addr;
	ev.len = len;
	ev.pio = pio;
	ev.datamatch = datamatch;
	ev.n = 1;
	return 0;
}

static uint64_t rd(bool io, unsigned off, unsigned size)
{
	uint64_t v = 0;

	if (io)
		return pio_in(&t, IOBAR + off, size);
	iobus_read(t.host.mmio, MEMBAR + off, &v, size);
	return v;
}

static void wr(bool io, unsigned off, unsigned size, uint64_t v)
{
	if (io)
		pio_out(&t, IOBAR + off, size, (uint32_t)v);
	else
		iobus_write(t.host.mmio, MEMBAR + off, &v, size);
}

static void setup(void)
{
	test_host_init(&t);
	memset(&ev, 0, sizeof(ev));
	t.host.fast.ioeventfd_match = record_ioeventfd;
	pci = pci_bus_new(&t.host);
	ck_assert_ptr_nonnull(pci);
	d = pci_testdev_new(&t.host, pci, DEVFN);
	ck_assert_ptr_nonnull(d);
	pci_cfg_write(pci, DEVFN, 0x10, 4, MEMBAR);
	pci_cfg_write(pci, DEVFN, 0x14, 4, IOBAR);
	pci_cfg_write(pci, DEVFN, 0x04, 2, 0x3); /* I/O and memory decoding */
}

static void teardown(void)
{
	pci_testdev_free(d);
	ck_assert_int_eq(ev.n, 0); /* freeing drops the ioeventfd */
	pci_bus_free(pci);
	test_host_fini(&t);
}

static void name_of(bool io, char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (!(buf[i] = (char)rd(io, 16 + (unsigned)i, 1)))
			return;
	buf[len - 1] = 0;
}

START_TEST(identity_and_bars)
{
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, 0, 4), 0x00051b36);
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, 0x10, 4) & 1, 0); /* memory */
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, 0x14, 4) & 1, 1); /* port I/O */
	ck_assert_uint_eq(rd(false, 1, 1), 0);			     /* no test selected: width 0 */
}
END_TEST

/* Test 0 on either BAR: the header, and every write to the target counted. */
START_TEST(no_eventfd_counts_writes)
{
	bool io = _i;
	char name[40];

	wr(io, 0, 1, 0);
	ck_assert_uint_eq(rd(io, 1, 1), 4);
	ck_assert_uint_eq(rd(io, 12, 4), 0);
	name_of(io, name, sizeof(name));
	ck_assert_str_eq(name, io ? "portio-no-eventfd" : "mmio-no-eventfd");
	unsigned off = (unsigned)rd(io, 4, 4);
	ck_assert_uint_gt(off, 16 + strlen(name));
	for (int i = 0; i < 16; i++)
		wr(io, off, 4, rd(io, 8, 4));
	ck_assert_uint_eq(rd(io, 12, 4), 16);
	ck_assert_uint_eq(rd(!io, 1, 1), 0); /* the other BAR shows no test */
	ck_assert_int_eq(ev.n, 0);
	wr(io, 0, 1, 0); /* selecting again starts the count again */
	ck_assert_uint_eq(rd(io, 12, 4), 0);
}
END_TEST

/* Tests 1 and 2: an ioeventfd on the target, with datamatch for 2; writes
 * that still reach the device are not counted; test 3 ends the list. */
START_TEST(eventfd_tests_register_ioeventfds)
{
	bool io = _i;
	char name[40];
	unsigned off;

	wr(io, 0, 1, 1);
	off = (unsigned)rd(io, 4, 4);
	ck_assert_int_eq(ev.n, 1);
	ck_assert_uint_eq(ev.addr, (io ? IOBAR : MEMBAR) + off);
	ck_assert(ev.pio == io);
	ck_assert_uint_eq(ev.len, rd(io, 1, 1));
	ck_assert_int_eq(ev.datamatch, -1);
	wr(io, off, 4, 7);
	ck_assert_uint_eq(rd(io, 12, 4), 0);
	wr(io, 0, 1, 2);
	name_of(io, name, sizeof(name));
	ck_assert_str_eq(name, io ? "portio-datamatch-eventfd" : "mmio-datamatch-eventfd");
	ck_assert_int_eq(ev.n, 1); /* test 1's went */
	ck_assert_int_eq(ev.datamatch, (int64_t)rd(io, 8, 4));
	wr(io, 0, 1, 3);
	ck_assert_uint_eq(rd(io, 1, 1), 0);
	ck_assert_int_eq(ev.n, 0);
}
END_TEST

/* The guest moves the BAR while a test is on: the ioeventfd follows. */
START_TEST(ioeventfd_follows_the_bar)
{
	unsigned off;

	wr(false, 0, 1, 1);
	off = (unsigned)rd(false, 4, 4);
	ck_assert_uint_eq(ev.addr, MEMBAR + off);
	pci_cfg_write(pci, DEVFN, 0x10, 4, MEMBAR + 0x10000);
	ck_assert_int_eq(ev.n, 1);
	ck_assert_uint_eq(ev.addr, MEMBAR + 0x10000 + off);
	pci_cfg_write(pci, DEVFN, 0x04, 2, 0x1); /* memory decoding off */
	ck_assert_int_eq(ev.n, 0);
}
END_TEST

/* ----------------------------------------------------------- snapshots */

#define NODE "/devices/pci-testdev@0"

static void save_pt(void *dev, struct state_writer *w)
{
	pci_testdev_save(dev, w, "pci-testdev@0");
}

static int load_pt(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return pci_testdev_load(dev, r, "pci-testdev@0", e, elen);
}

/* A fresh device in the slot (its BARs unprogrammed: the tree has them). */
static void replace_dev(void)
{
	pci_testdev_free(d);
	ck_assert_int_eq(ev.n, 0);
	d = pci_testdev_new(&t.host, pci, DEVFN);
	ck_assert_ptr_nonnull(d);
}

START_TEST(snapshot_keeps_test_and_count)
{
	unsigned off;
	size_t len;
	void *blob;

	wr(true, 0, 1, 0);
	off = (unsigned)rd(true, 4, 4);
	for (int i = 0; i < 5; i++)
		wr(true, off, 4, rd(true, 8, 4));
	blob = save_tree(save_pt, d, &len);
	replace_dev();
	ck_assert_msg(load_tree(load_pt, d, blob, len) == 0, "%s", state_err);
	ck_assert_uint_eq(rd(true, 1, 1), 4);
	ck_assert_uint_eq(rd(true, 12, 4), 5);
	wr(true, off, 4, rd(true, 8, 4));
	ck_assert_uint_eq(rd(true, 12, 4), 6);
	free(blob);
	/* an eventfd test: the loaded device registers its ioeventfd again */
	wr(false, 0, 1, 2);
	off = (unsigned)rd(false, 4, 4);
	blob = save_tree(save_pt, d, &len);
	replace_dev();
	ck_assert_msg(load_tree(load_pt, d, blob, len) == 0, "%s", state_err);
	ck_assert_int_eq(ev.n, 1);
	ck_assert_uint_eq(ev.addr, MEMBAR + off);
	ck_assert_int_eq(ev.datamatch, (int64_t)rd(false, 8, 4));
	free(blob);
}
END_TEST

static void pt_refused(const void *good, size_t len, const char *prop, uint32_t v, int size,
		       const char *what)
{
	void *b = patched_copy(good, len, NODE, prop, v, size);

	replace_dev();
	ck_assert_int_eq(load_tree(load_pt, d, b, len), -1);
	ck_assert_msg(strstr(state_err, what), "'%s' lacks '%s'", state_err, what);
	free(b);
}

START_TEST(snapshot_bad_trees_refused)
{
	size_t len;
	void *good;

	wr(false, 0, 1, 1);
	good = save_tree(save_pt, d, &len);
	pt_refused(good, len, "bar", 2, 1, "bar 2");
	pt_refused(good, len, "test", 3, 1, "no test on");
	pt_refused(good, len, "bar", 0xff, 1, "without");
	pt_refused(good, len, "count", 1, 4, "only test 0");
	free(good);
}
END_TEST

static Suite *pci_testdev_suite(void)
{
	Suite *s = suite_create("devices_pci_testdev");
	TCase *tc = tcase_create("pci_testdev");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, identity_and_bars);
	tcase_add_loop_test(tc, no_eventfd_counts_writes, 0, 2);
	tcase_add_loop_test(tc, eventfd_tests_register_ioeventfds, 0, 2);
	tcase_add_test(tc, ioeventfd_follows_the_bar);
	tcase_add_test(tc, snapshot_keeps_test_and_count);
	tcase_add_test(tc, snapshot_bad_trees_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(pci_testdev_suite());
}
