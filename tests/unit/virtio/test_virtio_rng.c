/* Unit tests for virtio-rng-pci (devices/virtio/rng.c) on the fake host:
 * buffers and chains filled, the max-bytes/period accounting (a buffer
 * beyond the quota waits for the period's end, partial fills at its
 * edge), a source with nothing to read (a pipe) holding the buffer until
 * it has, and malformed chains (readable buffer, address outside RAM,
 * descriptor loop) setting NEEDS_RESET and nothing else. */
#include <check.h>
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/check_run.h"
#include "tests/unit/devices/pc_host.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define RINGS 0x10000u /* desc, avail +0x1000, used +0x2000 */
#define BUFS 0x40000u
#define FILL 0xa5

static struct fake_host th;
static struct pci_bus *bus;
static struct virtio_rng *dev;
static uint16_t avail_idx;

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

static void bring_up(void)
{
	memset(th.ram + RINGS, 0, 0x3000);
	memset(th.ram + BUFS, FILL, 0x10000);
	avail_idx = 0;
	wr(COMMON(STATUS), 1, 0);
	wr(COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(COMMON(GFSELECT), 4, 1);
	wr(COMMON(GF), 4, 1); /* VIRTIO_F_VERSION_1 */
	wr(COMMON(STATUS), 1, 0x0b);
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0b);
	wr(COMMON(Q_SELECT), 2, 0);
	wr(COMMON(Q_SIZE), 2, QSIZE);
	wr(COMMON(Q_DESCLO), 4, RINGS);
	wr(COMMON(Q_AVAILLO), 4, RINGS + 0x1000);
	wr(COMMON(Q_USEDLO), 4, RINGS + 0x2000);
	wr(COMMON(Q_ENABLE), 2, 1);
	wr(COMMON(STATUS), 1, 0x0f);
}

static void make_dev(int fd, uint64_t max_bytes, uint32_t period_ms)
{
	struct virtio_rng_opts o = {fd, max_bytes, period_ms, 2 << 3};
	char err[256];

	dev = virtio_rng_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
	bring_up();
}

static struct vring_used *used(void)
{
	return (struct vring_used *)(th.ram + RINGS + 0x2000);
}

static uint16_t used_idx(void)
{
	return le16toh(__atomic_load_n(&used()->idx, __ATOMIC_ACQUIRE));
}

static uint32_t used_len(unsigned i)
{
	return le32toh(used()->ring[i % QSIZE].len);
}

static void set_desc(uint16_t slot, uint64_t gpa, uint32_t len, uint16_t flags, uint16_t next)
{
	struct vring_desc *d = (struct vring_desc *)(th.ram + RINGS);

	d[slot] = (struct vring_desc){htole64(gpa), htole32(len), htole16(flags), htole16(next)};
}

/* Make the chain at head available and ring the doorbell. */
static void post_head(uint16_t head)
{
	struct vring_avail *a = (struct vring_avail *)(th.ram + RINGS + 0x1000);

	a->ring[avail_idx % QSIZE] = htole16(head);
	__atomic_store_n(&a->idx, htole16(++avail_idx), __ATOMIC_RELEASE);
	wr(VIRTIO_PCI_NOTIFY_OFF + rd(COMMON(Q_NOFF), 2) * VIRTIO_PCI_NOTIFY_MULT, 2, 0);
}

static void post(uint16_t slot, uint64_t gpa, uint32_t len)
{
	set_desc(slot, gpa, len, VRING_DESC_F_WRITE, 0);
	post_head(slot);
}

static bool wait_used(uint16_t want, int ms)
{
	for (int i = 0; i < ms && used_idx() != want; i++)
		usleep(1000);
	return used_idx() == want;
}

static bool needs_reset(void)
{
	for (int i = 0; i < 2000; i++) {
		if (virtio_pci_status(virtio_rng_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET)
			return true;
		usleep(1000);
	}
	return false;
}

/* Bytes of [gpa, gpa+len) that are no longer the fill pattern. */
static unsigned changed(uint64_t gpa, uint32_t len)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < len; i++)
		n += th.ram[gpa + i] != FILL;
	return n;
}

static void setup(void)
{
	test_host_init(&th);
	bus = pci_bus_new(&th.host);
	dev = NULL;
}

static void teardown(void)
{
	virtio_rng_free(dev);
	pci_bus_free(bus);
	test_host_fini(&th);
}

START_TEST(identity)
{
	make_dev(-1, INT64_MAX, 65536);
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0, 4), 0x10441af4); /* 0x1040 + 4 */
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 8, 4) >> 8, 0xff0000);
}
END_TEST

START_TEST(fills_a_buffer)
{
	int fd = open("/dev/urandom", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct virtio_rng_stats st;

	ck_assert_int_ge(fd, 0);
	make_dev(fd, INT64_MAX, 65536);
	post(0, BUFS, 256);
	ck_assert(wait_used(1, 2000));
	ck_assert_uint_eq(used_len(0), 256);
	ck_assert_uint_ge(changed(BUFS, 256), 200);    /* random: ~255 differ from 0xa5 */
	ck_assert_uint_eq(changed(BUFS + 256, 64), 0); /* nothing past the buffer */
	virtio_rng_get_stats(dev, &st);
	ck_assert_uint_eq(st.bytes, 256);
	ck_assert_uint_eq(st.requests, 1);
}
END_TEST

START_TEST(fills_chained_buffers)
{
	make_dev(-1, INT64_MAX, 65536);
	set_desc(0, BUFS, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, BUFS + 0x1000, 32, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
	set_desc(2, BUFS + 0x2000, 100, VRING_DESC_F_WRITE, 0);
	post_head(0);
	ck_assert(wait_used(1, 2000));
	ck_assert_uint_eq(used_len(0), 148);
	ck_assert_uint_ge(changed(BUFS, 16), 10);
	ck_assert_uint_ge(changed(BUFS + 0x1000, 32), 24);
	ck_assert_uint_ge(changed(BUFS + 0x2000, 100), 90);
	ck_assert_uint_eq(changed(BUFS + 16, 16), 0);
}
END_TEST

/* max-bytes=100 per 300 ms: 64, then the 36 left, then nothing until the
 * period ends; then a full 64 again. */
START_TEST(rate_limit_accounting)
{
	struct virtio_rng_stats st;
	uint64_t t0 = clock_now_ns(), t1;

	make_dev(-1, 100, 300);
	post(0, BUFS, 64);
	post(1, BUFS + 0x100, 64);
	post(2, BUFS + 0x200, 64);
	ck_assert(wait_used(2, 2000));
	ck_assert_uint_eq(used_len(0), 64);
	ck_assert_uint_eq(used_len(1), 36);
	usleep(100000);
	ck_assert_uint_eq(used_idx(), 2); /* the quota is spent: it waits */
	ck_assert_uint_eq(changed(BUFS + 0x200, 64), 0);
	ck_assert(wait_used(3, 2000));
	t1 = clock_now_ns();
	ck_assert_uint_ge(t1 - t0, 290000000u); /* not before the period's end */
	ck_assert_uint_eq(used_len(2), 64);
	virtio_rng_get_stats(dev, &st);
	ck_assert_uint_eq(st.bytes, 164);
	ck_assert_uint_ge(st.quota_waits, 1);
	ck_assert_uint_lt(st.quota_waits, 10); /* waited on the timer, not spinning */
}
END_TEST

/* The quota is kept across a device reset. */
START_TEST(rate_limit_survives_reset)
{
	make_dev(-1, 32, 400);
	post(0, BUFS, 64);
	ck_assert(wait_used(1, 2000));
	ck_assert_uint_eq(used_len(0), 32);
	bring_up();
	post(0, BUFS, 64);
	usleep(100000);
	ck_assert_uint_eq(used_idx(), 0);
	ck_assert(wait_used(1, 2000));
	ck_assert_uint_eq(used_len(0), 32);
}
END_TEST

/* A pipe with nothing in it: the buffer waits (no empty answer), then
 * gets exactly what was written. */
START_TEST(source_with_nothing_waits)
{
	int p[2];
	struct virtio_rng_stats st;

	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	make_dev(p[0], INT64_MAX, 65536);
	post(0, BUFS, 64);
	usleep(100000);
	ck_assert_uint_eq(used_idx(), 0);
	ck_assert_int_eq(write(p[1], "0123456789", 10), 10);
	ck_assert(wait_used(1, 2000));
	ck_assert_uint_eq(used_len(0), 10);
	ck_assert_mem_eq(th.ram + BUFS, "0123456789", 10);
	virtio_rng_get_stats(dev, &st);
	ck_assert_uint_lt(st.source_waits, 5);
	close(p[1]);
}
END_TEST

START_TEST(readable_buffer_breaks_the_device)
{
	struct virtio_rng_stats st;

	make_dev(-1, INT64_MAX, 65536);
	set_desc(0, BUFS, 16, VRING_DESC_F_NEXT, 1); /* readable */
	set_desc(1, BUFS + 0x100, 16, VRING_DESC_F_WRITE, 0);
	post_head(0);
	ck_assert(needs_reset());
	ck_assert_uint_eq(used_idx(), 0);
	ck_assert_uint_eq(changed(BUFS + 0x100, 16), 0);
	virtio_rng_get_stats(dev, &st);
	ck_assert_uint_eq(st.bad_requests, 1);
	bring_up(); /* a reset brings it back */
	post(0, BUFS, 16);
	ck_assert(wait_used(1, 2000));
}
END_TEST

START_TEST(address_outside_ram_breaks_the_device)
{
	make_dev(-1, INT64_MAX, 65536);
	post(0, TEST_RAM_SIZE - 8, 64);
	ck_assert(needs_reset());
	ck_assert_uint_eq(used_idx(), 0);
}
END_TEST

START_TEST(descriptor_loop_breaks_the_device)
{
	make_dev(-1, INT64_MAX, 65536);
	set_desc(0, BUFS, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(1, BUFS + 0x100, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0);
	post_head(0);
	ck_assert(needs_reset());
	ck_assert_uint_eq(used_idx(), 0);
}
END_TEST

START_TEST(zero_period_refused)
{
	struct virtio_rng_opts o = {-1, 100, 0, -1};
	char err[256] = "";

	ck_assert_ptr_null(virtio_rng_new(&th.host, bus, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "period"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virtio_rng");
	TCase *t = tcase_create("device");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, identity);
	tcase_add_test(t, fills_a_buffer);
	tcase_add_test(t, fills_chained_buffers);
	tcase_add_test(t, rate_limit_accounting);
	tcase_add_test(t, rate_limit_survives_reset);
	tcase_add_test(t, source_with_nothing_waits);
	tcase_add_test(t, readable_buffer_breaks_the_device);
	tcase_add_test(t, address_outside_ram_breaks_the_device);
	tcase_add_test(t, descriptor_loop_breaks_the_device);
	tcase_add_test(t, zero_period_refused);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
