/* Unit tests for virtio-balloon-pci (devices/virtio/balloon.c) on the fake
 * host, with page-aligned anonymous guest RAM so MADV_DONTNEED acts: the
 * inflated pages read as zeroes afterwards and their neighbours keep
 * their bytes, scattered pages go a batch a call where the kernel can,
 * deflate forgets them, PFNs outside RAM are skipped without breaking the
 * device, the stats buffer is parsed, held and given back at the polling
 * interval, free page reporting discards the lent range, config
 * num_pages/actual follow set_target and the driver's write, and
 * snapshots: a device saved holding the stats buffer (not waiting for
 * it) with pages inflated comes back holding it, gives it back at its
 * next poll, knows the inflated pages and discards them again; bad trees
 * are refused. */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <linux/virtio_balloon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/check_run.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define RINGS 0x10000u /* queue qi: desc +qi*0x4000, avail +0x1000, used +0x2000 */
#define BUFS 0x40000u
#define PAGES 0x100000u /* the pages the tests balloon */
#define FILL 0xa5

static struct fake_host th;
static struct pci_bus *bus;
static struct virtio_balloon *dev;
static uint8_t *calloc_ram; /* the fake host's own, put back at teardown */
static uint16_t avail_idx[4];
static uint64_t last_actual; /* from the actual_changed callback */
static unsigned n_changes;

static void wr(uint32_t off, unsigned size, uint32_t v)
{
	iobus_write(th.host.mmio, BAR4 + off, &v, size);
}

static uint32_t rd(uint32_t off, unsigned size)
{
	uint32_t v = 0;

	iobus_read(th.host.mmio, BAR4 + off, &v, size);
	return v;
}

#define COMMON(f) (VIRTIO_PCI_COMMON_OFF + VIRTIO_PCI_COMMON_##f)
#define QBASE(qi) (RINGS + (qi)*0x4000u)

static void bring_up(uint32_t features, unsigned nq)
{
	memset(th.ram + RINGS, 0, 0x10000);
	memset(avail_idx, 0, sizeof(avail_idx));
	wr(COMMON(STATUS), 1, 0);
	wr(COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(COMMON(GFSELECT), 4, 0);
	wr(COMMON(GF), 4, features);
	wr(COMMON(GFSELECT), 4, 1);
	wr(COMMON(GF), 4, 1); /* VIRTIO_F_VERSION_1 */
	wr(COMMON(STATUS), 1, 0x0b);
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0b);
	for (unsigned qi = 0; qi < nq; qi++) {
		wr(COMMON(Q_SELECT), 2, qi);
		wr(COMMON(Q_SIZE), 2, QSIZE);
		wr(COMMON(Q_DESCLO), 4, QBASE(qi));
		wr(COMMON(Q_AVAILLO), 4, QBASE(qi) + 0x1000);
		wr(COMMON(Q_USEDLO), 4, QBASE(qi) + 0x2000);
		wr(COMMON(Q_ENABLE), 2, 1);
	}
	wr(COMMON(STATUS), 1, 0x0f);
}

static void on_actual(void *opaque, uint64_t bytes)
{
	last_actual = bytes;
	n_changes++;
}

static void new_dev(bool reporting)
{
	struct virtio_balloon_opts o = {false, reporting, 2 << 3, on_actual, NULL};
	char err[256];

	dev = virtio_balloon_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
}

static void make_dev(bool reporting, uint32_t features, unsigned nq)
{
	new_dev(reporting);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
	bring_up(features, nq);
}

static struct vring_used *used(unsigned qi)
{
	return (struct vring_used *)(th.ram + QBASE(qi) + 0x2000);
}

static uint16_t used_idx(unsigned qi)
{
	return le16toh(__atomic_load_n(&used(qi)->idx, __ATOMIC_ACQUIRE));
}

static void set_desc(unsigned qi, uint16_t slot, uint64_t gpa, uint32_t len, uint16_t flags)
{
	struct vring_desc *d = (struct vring_desc *)(th.ram + QBASE(qi));

	d[slot] = (struct vring_desc){htole64(gpa), htole32(len), htole16(flags), 0};
}

static void post(unsigned qi, uint16_t slot, uint64_t gpa, uint32_t len, uint16_t flags)
{
	struct vring_avail *a = (struct vring_avail *)(th.ram + QBASE(qi) + 0x1000);

	set_desc(qi, slot, gpa, len, flags);
	a->ring[avail_idx[qi] % QSIZE] = htole16(slot);
	__atomic_store_n(&a->idx, htole16(++avail_idx[qi]), __ATOMIC_RELEASE);
	wr(VIRTIO_PCI_NOTIFY_OFF + qi * VIRTIO_PCI_NOTIFY_MULT, 2, 0);
}

static bool wait_used(unsigned qi, uint16_t want, int ms)
{
	for (int i = 0; i < ms && used_idx(qi) != want; i++)
		usleep(1000);
	return used_idx(qi) == want;
}

/* Post the PFNs (a u32 array at BUFS) on queue qi and wait for it. */
static void send_pfns(unsigned qi, const uint32_t *pfn, unsigned n)
{
	uint16_t before = used_idx(qi);

	for (unsigned i = 0; i < n; i++)
		((uint32_t *)(th.ram + BUFS))[i] = htole32(pfn[i]);
	post(qi, 0, BUFS, n * 4, 0);
	ck_assert(wait_used(qi, before + 1, 2000));
}

static bool page_is(uint64_t gpa, uint8_t v)
{
	for (unsigned i = 0; i < 4096; i++)
		if (th.ram[gpa + i] != v)
			return false;
	return true;
}

static void setup(void)
{
	uint8_t *ram;

	test_host_init(&th);
	/* page-aligned anonymous memory, as vmm's guest RAM */
	ram = mmap(NULL, TEST_RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(ram != MAP_FAILED);
	calloc_ram = th.ram;
	th.ram = ram;
	th.mem.r[0].hva = ram;
	memset(ram + PAGES, FILL, 16 * 4096);
	bus = pci_bus_new(&th.host);
	dev = NULL;
	n_changes = 0;
}

static void teardown(void)
{
	virtio_balloon_free(dev);
	pci_bus_free(bus);
	munmap(th.ram, TEST_RAM_SIZE);
	th.ram = calloc_ram;
	th.mem.r[0].hva = calloc_ram;
	test_host_fini(&th);
}

START_TEST(identity)
{
	make_dev(false, 0, 3);
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0, 4), 0x10451af4); /* 0x1040 + 5 */
	wr(COMMON(DFSELECT), 4, 0);
	ck_assert_uint_eq(rd(COMMON(DF), 4) & 0x3f, 1u << VIRTIO_BALLOON_F_STATS_VQ);
	ck_assert_uint_eq(rd(COMMON(NUMQ), 2), 3);
}
END_TEST

START_TEST(inflate_discards_the_pages)
{
	const uint32_t pfns[] = {PAGES / 4096 + 1, PAGES / 4096 + 2, PAGES / 4096 + 5};
	struct virtio_balloon_counters ct;

	make_dev(false, 0, 2);
	send_pfns(0, pfns, 3);
	ck_assert(page_is(PAGES + 1 * 4096, 0));
	ck_assert(page_is(PAGES + 2 * 4096, 0));
	ck_assert(page_is(PAGES + 5 * 4096, 0));
	ck_assert(page_is(PAGES + 0 * 4096, FILL)); /* the neighbours keep their bytes */
	ck_assert(page_is(PAGES + 3 * 4096, FILL));
	ck_assert(page_is(PAGES + 4 * 4096, FILL));
	ck_assert(page_is(PAGES + 6 * 4096, FILL));
	ck_assert(virtio_balloon_page_inflated(dev, PAGES + 4096));
	ck_assert(!virtio_balloon_page_inflated(dev, PAGES + 3 * 4096));
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.inflated_pages, 3);
	ck_assert_uint_eq(ct.discarded_bytes, 3 * 4096);
	ck_assert_uint_eq(ct.madvise_errors, 0);
}
END_TEST

/* Whether this kernel's process_madvise takes MADV_DONTNEED (6.16 on). */
static bool kernel_batches_dontneed(void)
{
	uint8_t *p =
		mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	struct iovec iov[2] = {{p, 4096}, {p + 4096, 4096}};
	bool ok = pidfd >= 0 &&
		  syscall(SYS_process_madvise, pidfd, iov, 2, MADV_DONTNEED, 0) == 2 * 4096;

	if (pidfd >= 0)
		close(pidfd);
	munmap(p, 2 * 4096);
	return ok;
}

/* 300 pages, none after the one before it in the host mapping (the order
 * goes down): two batches of one call each where the kernel can, else
 * one madvise a page; either way every page goes, and no other. */
START_TEST(scattered_pages_go_in_batches)
{
	const unsigned top = TEST_RAM_SIZE / 4096 - 1, n = 300;
	uint32_t pfns[300];
	struct virtio_balloon_counters ct;

	memset(th.ram + (top - n - 8) * 4096ull, FILL, (n + 9) * 4096ull);
	for (unsigned i = 0; i < n; i++)
		pfns[i] = top - i;
	make_dev(false, 0, 2);
	send_pfns(0, pfns, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(page_is((top - i) * 4096ull, 0), "page %u kept its bytes", top - i);
	ck_assert(page_is((top - n) * 4096ull, FILL));
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.discarded_bytes, n * 4096ull);
	ck_assert_uint_eq(ct.madvise_errors, 0);
	ck_assert_uint_eq(ct.discard_calls, kernel_batches_dontneed() ? 2 : n);
}
END_TEST

START_TEST(deflate_forgets_them)
{
	const uint32_t pfns[] = {PAGES / 4096 + 1, PAGES / 4096 + 2};
	struct virtio_balloon_counters ct;

	make_dev(false, 0, 2);
	send_pfns(0, pfns, 2);
	send_pfns(1, pfns, 1);
	ck_assert(!virtio_balloon_page_inflated(dev, PAGES + 4096));
	ck_assert(virtio_balloon_page_inflated(dev, PAGES + 2 * 4096));
	th.ram[PAGES + 4096] = 7; /* the guest uses it again */
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.deflated_pages, 1);
	ck_assert_uint_eq(ct.discarded_bytes, 2 * 4096); /* deflate discards nothing */
}
END_TEST

START_TEST(pfn_outside_ram_is_skipped)
{
	const uint32_t pfns[] = {TEST_RAM_SIZE / 4096, 0xffffffffu, PAGES / 4096 + 3,
				 TEST_RAM_SIZE / 4096 + 1};
	struct virtio_balloon_counters ct;

	make_dev(false, 0, 2);
	send_pfns(0, pfns, 4);
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.bad_pfns, 3);
	ck_assert_uint_eq(ct.inflated_pages, 1);
	ck_assert(page_is(PAGES + 3 * 4096, 0));
	ck_assert(
		!(virtio_pci_status(virtio_balloon_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET));
	/* still serving */
	send_pfns(0, pfns + 2, 1);
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.inflated_pages, 2);
}
END_TEST

static void put_stat(unsigned i, uint16_t tag, uint64_t val)
{
	struct virtio_balloon_stat s = {htole16(tag), htole64(val)};

	memcpy(th.ram + BUFS + i * sizeof(s), &s, sizeof(s));
}

START_TEST(stats_are_parsed_held_and_polled)
{
	struct virtio_balloon_guest_stats gs;

	make_dev(false, 1u << VIRTIO_BALLOON_F_STATS_VQ, 3);
	put_stat(0, VIRTIO_BALLOON_S_MEMTOT, 512ull << 20);
	put_stat(1, VIRTIO_BALLOON_S_MEMFREE, 300ull << 20);
	put_stat(2, 77, 1); /* unknown tag: ignored */
	put_stat(3, VIRTIO_BALLOON_S_SWAP_IN, 5);
	post(2, 0, BUFS, 4 * 10 + 3, 0); /* and a partial last entry */
	for (int i = 0; i < 2000; i++) {
		virtio_balloon_guest_stats(dev, &gs);
		if (gs.last_update)
			break;
		usleep(1000);
	}
	ck_assert_int_gt(gs.last_update, 0);
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_MEMTOT], 512ull << 20);
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_MEMFREE], 300ull << 20);
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_SWAP_IN], 5);
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_CACHES], UINT64_MAX);
	ck_assert_str_eq(virtio_balloon_stat_name(VIRTIO_BALLOON_S_MEMTOT), "stat-total-memory");
	/* held: no used entry until the polling interval passes */
	usleep(50000);
	ck_assert_uint_eq(used_idx(2), 0);
	ck_assert_int_eq(virtio_balloon_set_poll_interval(dev, 1), 0);
	ck_assert_uint_eq(virtio_balloon_poll_interval(dev), 1);
	ck_assert(wait_used(2, 1, 3000));
	ck_assert_int_eq(virtio_balloon_set_poll_interval(dev, -1), -EINVAL);
}
END_TEST

START_TEST(free_page_reporting_discards)
{
	struct virtio_balloon_counters ct;

	make_dev(true, 1u << VIRTIO_BALLOON_F_STATS_VQ | 1u << VIRTIO_BALLOON_F_REPORTING, 4);
	post(3, 0, PAGES + 8 * 4096, 4 * 4096, VRING_DESC_F_WRITE);
	ck_assert(wait_used(3, 1, 2000));
	ck_assert(page_is(PAGES + 8 * 4096, 0));
	ck_assert(page_is(PAGES + 11 * 4096, 0));
	ck_assert(page_is(PAGES + 7 * 4096, FILL));
	ck_assert(page_is(PAGES + 12 * 4096, FILL));
	virtio_balloon_get_counters(dev, &ct);
	ck_assert_uint_eq(ct.reported_bytes, 4 * 4096);
}
END_TEST

START_TEST(config_num_pages_and_actual)
{
	uint32_t actual = htole32(100);

	make_dev(false, 0, 2);
	ck_assert_uint_eq(virtio_balloon_actual(dev), TEST_RAM_SIZE);
	ck_assert_int_eq(virtio_balloon_set_target(dev, TEST_RAM_SIZE / 2), 0);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF, 4), TEST_RAM_SIZE / 2 / 4096);
	ck_assert_int_eq(virtio_balloon_set_target(dev, 0), -EINVAL);
	ck_assert_int_eq(virtio_balloon_set_target(dev, 1ull << 40), 0); /* clamped */
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF, 4), 0);
	/* num_pages is the host's: a driver write there changes nothing */
	wr(VIRTIO_PCI_DEVICE_OFF, 4, 55);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF, 4), 0);
	wr(VIRTIO_PCI_DEVICE_OFF + 4, 4, actual);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 4, 4), 100);
	ck_assert_uint_eq(virtio_balloon_actual(dev), TEST_RAM_SIZE - 100 * 4096);
	ck_assert_uint_eq(n_changes, 1);
	ck_assert_uint_eq(last_actual, TEST_RAM_SIZE - 100 * 4096);
	wr(VIRTIO_PCI_DEVICE_OFF + 4, 4, actual); /* the same value: no event */
	ck_assert_uint_eq(n_changes, 1);
	wr(COMMON(STATUS), 1, 0); /* reset: the new driver's balloon is empty */
	ck_assert_uint_eq(virtio_balloon_actual(dev), TEST_RAM_SIZE);
	ck_assert_uint_eq(n_changes, 2);
}
END_TEST

START_TEST(unnegotiated_queue_breaks_only_the_device)
{
	make_dev(false, 0, 3); /* no STATS_VQ accepted: queue 2 means nothing */
	post(2, 0, BUFS, 10, 0);
	for (int i = 0; i < 2000; i++) {
		if (virtio_pci_status(virtio_balloon_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET)
			break;
		usleep(1000);
	}
	ck_assert(virtio_pci_status(virtio_balloon_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET);
}
END_TEST

/* ----------------------------------------------------------- snapshots */

#define NODE "/devices/virtio-balloon@0"
#define STATS_SLOT 3

static void save_balloon(void *d, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_balloon_transport(d), w, "virtio-balloon@0",
					 state_err, sizeof(state_err)),
			 0);
}

/* As vmm loads a machine: the queues frozen until it is whole. */
static int load_balloon(void *d, const struct state_reader *r, char *e, size_t elen)
{
	virtio_pci_freeze(virtio_balloon_transport(d));
	return virtio_pci_load(virtio_balloon_transport(d), r, "virtio-balloon@0", e, elen);
}

/* Two pages inflated, actual set, a stats buffer held (slot STATS_SLOT),
 * polling every 100 s: the tree. The save must not wait for the held
 * buffer (it is no request in flight). */
static void *busy_balloon_tree(size_t *len)
{
	const uint32_t pfns[] = {PAGES / 4096 + 1, PAGES / 4096 + 2};
	struct virtio_balloon_guest_stats gs = {0};

	make_dev(false, 1u << VIRTIO_BALLOON_F_STATS_VQ, 3);
	send_pfns(0, pfns, 2);
	wr(VIRTIO_PCI_DEVICE_OFF + 4, 4, htole32(2));
	ck_assert_int_eq(virtio_balloon_set_target(dev, TEST_RAM_SIZE - 3 * 4096), 0);
	ck_assert_int_eq(virtio_balloon_set_poll_interval(dev, 100), 0);
	put_stat(0, VIRTIO_BALLOON_S_MEMFREE, 123ull << 20);
	post(2, STATS_SLOT, BUFS, 10, 0);
	for (int i = 0; i < 2000 && !gs.last_update; i++) {
		virtio_balloon_guest_stats(dev, &gs);
		usleep(1000);
	}
	ck_assert_int_gt(gs.last_update, 0);
	return save_tree(save_balloon, dev, len);
}

START_TEST(snapshot_holds_stats_buffer_and_pages)
{
	struct virtio_balloon_guest_stats gs;
	struct vring_used_elem e;
	size_t len;
	void *blob = busy_balloon_tree(&len);

	virtio_balloon_free(dev);
	/* the RAM stream wrote the inflated pages (their bytes do not matter:
	 * FILL shows the load discarding them again) */
	memset(th.ram + PAGES + 4096, FILL, 2 * 4096);
	n_changes = 0;
	new_dev(false);
	ck_assert_msg(load_tree(load_balloon, dev, blob, len) == 0, "%s", state_err);
	ck_assert(virtio_balloon_page_inflated(dev, PAGES + 4096));
	ck_assert(virtio_balloon_page_inflated(dev, PAGES + 2 * 4096));
	ck_assert(!virtio_balloon_page_inflated(dev, PAGES + 3 * 4096));
	ck_assert(page_is(PAGES + 4096, 0));
	ck_assert(page_is(PAGES + 2 * 4096, 0));
	ck_assert(page_is(PAGES + 3 * 4096, FILL));
	ck_assert_uint_eq(virtio_balloon_actual(dev), TEST_RAM_SIZE - 2 * 4096);
	ck_assert_uint_eq(n_changes, 1); /* BALLOON_CHANGE for the new process */
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF, 4), 3); /* num_pages */
	ck_assert_uint_eq(virtio_balloon_poll_interval(dev), 100);
	virtio_balloon_guest_stats(dev, &gs);
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_MEMFREE], 123ull << 20);
	ck_assert_int_gt(gs.last_update, 0);
	/* the held buffer comes back at the first poll once the machine is
	 * loaded (thawed), by its head */
	ck_assert_int_eq(virtio_balloon_set_poll_interval(dev, 1), 0);
	ck_assert(!wait_used(2, 1, 1500));
	virtio_pci_thaw(virtio_balloon_transport(dev));
	ck_assert(wait_used(2, 1, 3000));
	e = used(2)->ring[0];
	ck_assert_uint_eq(le32toh(e.id), STATS_SLOT);
	/* and the guest's next report is taken */
	put_stat(0, VIRTIO_BALLOON_S_MEMFREE, 77ull << 20);
	post(2, STATS_SLOT, BUFS, 10, 0);
	for (int i = 0; i < 2000; i++) {
		virtio_balloon_guest_stats(dev, &gs);
		if (gs.stat[VIRTIO_BALLOON_S_MEMFREE] == 77ull << 20)
			break;
		usleep(1000);
	}
	ck_assert_uint_eq(gs.stat[VIRTIO_BALLOON_S_MEMFREE], 77ull << 20);
	free(blob);
}
END_TEST

static void balloon_refused(const void *good, size_t len, const char *prop, uint32_t v,
			    int size, const char *what)
{
	void *b = patched_copy(good, len, NODE, prop, v, size);

	virtio_balloon_free(dev);
	new_dev(false);
	ck_assert_int_eq(load_tree(load_balloon, dev, b, len), -1);
	ck_assert_msg(strstr(state_err, what), "'%s' lacks '%s'", state_err, what);
	free(b);
}

START_TEST(snapshot_bad_trees_refused)
{
	size_t len;
	void *good = busy_balloon_tree(&len);

	balloon_refused(good, len, "stats-head", QSIZE, 2, "stats-head 8");
	balloon_refused(good, len, "stats-held", 2, 1, "stats-held");
	balloon_refused(good, len, "num-pages", TEST_RAM_SIZE / 4096 + 1, 4, "guest RAM has");
	balloon_refused(good, len, "actual", UINT32_MAX, 4, "guest RAM has");
	free(good);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virtio_balloon");
	TCase *t = tcase_create("device");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, identity);
	tcase_add_test(t, inflate_discards_the_pages);
	tcase_add_test(t, scattered_pages_go_in_batches);
	tcase_add_test(t, deflate_forgets_them);
	tcase_add_test(t, pfn_outside_ram_is_skipped);
	tcase_add_test(t, stats_are_parsed_held_and_polled);
	tcase_add_test(t, free_page_reporting_discards);
	tcase_add_test(t, config_num_pages_and_actual);
	tcase_add_test(t, unnegotiated_queue_breaks_only_the_device);
	tcase_add_test(t, snapshot_holds_stats_buffer_and_pages);
	tcase_add_test(t, snapshot_bad_trees_refused);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
