/* Unit tests for virtio-wlan-pci (devices/virtio/hwsim.c) with the fake
 * host of the virtio-blk tests: receive buffers are held until the medium
 * has a message (VIRTIO_HANDLE_LATER in the transport), messages queue in
 * the outbox while the guest has no buffer, guest messages reach the
 * medium whole, oversize ones are counted and dropped, a reset empties the
 * outbox, a snapshot carries the outbox and a bad one is refused. */
#include <check.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/check_run.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define RINGS(q) (0x10000u + (q)*0x4000u) /* desc, avail +0x1000, used +0x2000 */
#define BUFS 0x40000u			  /* 8 receive buffers of 1 KiB */
#define TXBUF 0x80000u

static struct fake_host th;
static struct pci_bus *bus;
static struct virtio_hwsim *dev;
static uint8_t sent[8192];
static size_t sent_len;
static unsigned sends;
static uint16_t avail_idx[2];

static void on_send(void *opaque, const void *msg, size_t len)
{
	memcpy(sent, msg, len < sizeof(sent) ? len : sizeof(sent));
	sent_len = len;
	__atomic_add_fetch(&sends, 1, __ATOMIC_SEQ_CST);
}

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

static void queue_up(unsigned q)
{
	wr(COMMON(Q_SELECT), 2, q);
	wr(COMMON(Q_SIZE), 2, QSIZE);
	wr(COMMON(Q_DESCLO), 4, RINGS(q));
	wr(COMMON(Q_AVAILLO), 4, RINGS(q) + 0x1000);
	wr(COMMON(Q_USEDLO), 4, RINGS(q) + 0x2000);
	wr(COMMON(Q_ENABLE), 2, 1);
}

/* VERSION_1 only, both queues, DRIVER_OK. */
static void bring_up(void)
{
	memset(th.ram + RINGS(0), 0, 0x8000);
	avail_idx[0] = avail_idx[1] = 0;
	wr(COMMON(STATUS), 1, 0);
	wr(COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(COMMON(GFSELECT), 4, 1);
	wr(COMMON(GF), 4, 1); /* VIRTIO_F_VERSION_1 is bit 32 */
	wr(COMMON(STATUS), 1, 0x0b);
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0b);
	queue_up(0);
	queue_up(1);
	wr(COMMON(STATUS), 1, 0x0f);
}

static struct vring_used *used(unsigned q)
{
	return (struct vring_used *)(th.ram + RINGS(q) + 0x2000);
}

static uint16_t used_idx(unsigned q)
{
	return le16toh(__atomic_load_n(&used(q)->idx, __ATOMIC_ACQUIRE));
}

/* One descriptor (slot = its index) on queue q, then the doorbell. */
static void post(unsigned q, uint16_t slot, uint64_t gpa, uint32_t len, bool writable)
{
	struct vring_desc *d = (struct vring_desc *)(th.ram + RINGS(q));
	struct vring_avail *a = (struct vring_avail *)(th.ram + RINGS(q) + 0x1000);

	d[slot] = (struct vring_desc){htole64(gpa), htole32(len),
				      htole16(writable ? VRING_DESC_F_WRITE : 0), 0};
	a->ring[avail_idx[q] % QSIZE] = htole16(slot);
	__atomic_store_n(&a->idx, htole16(++avail_idx[q]), __ATOMIC_RELEASE);
	wr(COMMON(Q_SELECT), 2, q);
	wr(VIRTIO_PCI_NOTIFY_OFF + rd(COMMON(Q_NOFF), 2) * VIRTIO_PCI_NOTIFY_MULT, 2, q);
}

static bool wait_used(unsigned q, uint16_t want)
{
	for (int i = 0; i < 2000 && used_idx(q) != want; i++)
		usleep(1000);
	return used_idx(q) == want;
}

static void new_dev(void)
{
	struct virtio_hwsim_opts o = {2 << 3, on_send, NULL};
	char err[256];

	dev = virtio_hwsim_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
}

static void setup(void)
{
	struct virtio_hwsim_opts o = {2 << 3, on_send, NULL};
	char err[256];

	test_host_init(&th);
	bus = pci_bus_new(&th.host);
	dev = virtio_hwsim_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
	sends = 0;
	bring_up();
}

static void teardown(void)
{
	virtio_hwsim_free(dev);
	pci_bus_free(bus);
	test_host_fini(&th);
}

START_TEST(identity)
{
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0, 4), 0x105d1af4); /* 0x1040 + 29 */
}
END_TEST

START_TEST(receive_buffers_held_until_a_message)
{
	uint8_t msg[300];

	post(1, 0, BUFS, 1024, true);
	post(1, 1, BUFS + 1024, 1024, true);
	usleep(50000);
	ck_assert_uint_eq(used_idx(1), 0); /* nothing to say yet: both held */
	for (unsigned i = 0; i < 3; i++) {
		memset(msg, 'a' + i, sizeof(msg));
		ck_assert(virtio_hwsim_receive(dev, msg, 100 + 100 * i));
	}
	ck_assert(wait_used(1, 2));
	ck_assert_uint_eq(le32toh(used(1)->ring[0].len), 100);
	ck_assert_uint_eq(th.ram[BUFS + 99], 'a');
	ck_assert_uint_eq(le32toh(used(1)->ring[1].len), 200);
	ck_assert_uint_eq(th.ram[BUFS + 1024 + 199], 'b');
	usleep(20000);
	ck_assert_uint_eq(used_idx(1), 2); /* the third waits for a buffer */
	post(1, 2, BUFS + 2048, 1024, true);
	ck_assert(wait_used(1, 3));
	ck_assert_uint_eq(th.ram[BUFS + 2048 + 299], 'c');
}
END_TEST

START_TEST(guest_messages_reach_the_medium_whole)
{
	struct virtio_hwsim_stats st;

	for (unsigned i = 0; i < 64; i++)
		th.ram[TXBUF + i] = (uint8_t)i;
	post(0, 0, TXBUF, 64, false);
	ck_assert(wait_used(0, 1));
	ck_assert_uint_eq(sends, 1);
	ck_assert_uint_eq(sent_len, 64);
	ck_assert_uint_eq(sent[63], 63);
	post(0, 1, TXBUF, VIRTIO_HWSIM_MAX_MSG + 1, false); /* oversize: dropped */
	ck_assert(wait_used(0, 2));
	ck_assert_uint_eq(sends, 1);
	virtio_hwsim_stats(dev, &st);
	ck_assert_uint_eq(st.tx, 1);
	ck_assert_uint_eq(st.tx_oversize, 1);
}
END_TEST

START_TEST(outbox_overflow_and_too_big)
{
	struct virtio_hwsim_stats st;
	uint8_t msg[200] = {0};
	unsigned ok = 0;

	for (unsigned i = 0; i < 300; i++)
		ok += virtio_hwsim_receive(dev, msg, sizeof(msg));
	ck_assert_uint_eq(ok, 256);
	post(1, 0, BUFS, 100, true); /* smaller than every message */
	usleep(50000);
	virtio_hwsim_stats(dev, &st);
	ck_assert_uint_eq(st.rx_overflow, 44);
	ck_assert_uint_eq(st.rx_too_big, 256);
	ck_assert_uint_eq(used_idx(1), 0);
}
END_TEST

START_TEST(reset_empties_the_outbox)
{
	uint8_t msg[50] = {1};

	ck_assert(virtio_hwsim_receive(dev, msg, sizeof(msg)));
	bring_up(); /* status 0 first: a device reset */
	post(1, 0, BUFS, 1024, true);
	usleep(50000);
	ck_assert_uint_eq(used_idx(1), 0);
	ck_assert(virtio_hwsim_receive(dev, msg, sizeof(msg)));
	ck_assert(wait_used(1, 1));
}
END_TEST

/* ----------------------------------------------------------- snapshots */

#define NODE "/devices/virtio-wlan@0"

static void save_hwsim(void *d, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_hwsim_transport(d), w, "virtio-wlan@0", state_err,
					 sizeof(state_err)),
			 0);
}

static int load_hwsim(void *d, const struct state_reader *r, char *e, size_t elen)
{
	virtio_pci_freeze(virtio_hwsim_transport(d));
	return virtio_pci_load(virtio_hwsim_transport(d), r, "virtio-wlan@0", e, elen);
}

/* Three messages of 100, 200 and 300 bytes waiting for receive buffers. */
static void *tree_with_outbox(size_t *len)
{
	uint8_t msg[300];

	for (unsigned i = 0; i < 3; i++) {
		memset(msg, 'a' + i, sizeof(msg));
		ck_assert(virtio_hwsim_receive(dev, msg, 100 + 100 * i));
	}
	return save_tree(save_hwsim, dev, len);
}

START_TEST(snapshot_carries_the_outbox)
{
	size_t len;
	void *blob = tree_with_outbox(&len);

	virtio_hwsim_free(dev);
	new_dev();
	ck_assert_msg(load_tree(load_hwsim, dev, blob, len) == 0, "%s", state_err);
	virtio_pci_thaw(virtio_hwsim_transport(dev));
	for (unsigned i = 0; i < 3; i++)
		post(1, (uint16_t)i, BUFS + 1024 * i, 1024, true);
	ck_assert(wait_used(1, 3));
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(le32toh(used(1)->ring[i].len), 100 + 100 * i);
		ck_assert_uint_eq(th.ram[BUFS + 1024 * i], 'a' + i);
		ck_assert_uint_eq(th.ram[BUFS + 1024 * i + 99 + 100 * i], 'a' + i);
	}
	free(blob);
}
END_TEST

/* Each bad outbox is refused with its reason, and the device loses
 * nothing: what it had queued is still there. */
static const struct {
	const char *prop;
	uint32_t v;
	const char *why;
} bad_outbox[] = {
	{"outbox-count", 4, "cut short"},
	{"outbox-count", 2, "bytes after its 2 messages"},
	{"outbox-count", 257, "outbox-count"},
	{"outbox-bytes", 100, "outbox"},
	{"outbox-bytes", 0x7fffffff, "outbox-bytes"},
};

START_TEST(bad_outbox_refused)
{
	size_t len;
	void *blob = tree_with_outbox(&len);
	void *b = patched_copy(blob, len, NODE, bad_outbox[_i].prop, bad_outbox[_i].v, 4);
	uint8_t msg[40] = {7};

	virtio_hwsim_free(dev);
	new_dev();
	ck_assert(virtio_hwsim_receive(dev, msg, sizeof(msg)));
	ck_assert_int_eq(load_tree(load_hwsim, dev, b, len), -1);
	ck_assert_msg(strstr(state_err, bad_outbox[_i].why), "'%s' lacks '%s'", state_err,
		      bad_outbox[_i].why);
	free(b);
	free(blob);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virtio_hwsim");
	TCase *t = tcase_create("device");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, identity);
	tcase_add_test(t, receive_buffers_held_until_a_message);
	tcase_add_test(t, guest_messages_reach_the_medium_whole);
	tcase_add_test(t, outbox_overflow_and_too_big);
	tcase_add_test(t, reset_empties_the_outbox);
	tcase_add_test(t, snapshot_carries_the_outbox);
	tcase_add_loop_test(t, bad_outbox_refused, 0, sizeof(bad_outbox) / sizeof(bad_outbox[0]));
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
