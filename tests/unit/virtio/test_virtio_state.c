/* Unit tests for virtio-pci snapshots (devices/virtio/state.c) with a
 * fake host: a virtio-blk served requests through MSI-X, is saved, freed,
 * and a fresh one loads the tree and serves the driver's next request on
 * the same rings (the used index continues, the same vector fires); a
 * save waits for a request the device holds (drain, not re-submit); a
 * virtio-rng keeps its rate-limit budget, a virtio-net its MAC and link; trees that disagree with
 * the rings in guest RAM, the image or the device are refused. */
#include <check.h>
#include <endian.h>
#include <libfdt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define DEVFN (2 << 3)
#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define DESC 0x10000u
#define AVAIL 0x11000u
#define USED 0x12000u
#define HDR 0x20000u
#define DATA 0x21000u
#define STATUS 0x30000u
#define IMG_SECTORS 64
#define MSI_ADDR 0xfee00000u
#define MSI_DATA 0x4041u
#define NODE "/devices/virtio-blk@0"

static struct fake_host th;
static struct pci_bus *bus;
static struct block_dev *disk;
static struct virtio_blk *vb;
static char img[64];
static uint32_t msi_data;
static unsigned msi_count;
static uint16_t next_avail;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	if (addr == MSI_ADDR)
		msi_data = data;
	__atomic_add_fetch(&msi_count, 1, __ATOMIC_SEQ_CST);
}

static uint8_t *g(uint64_t gpa)
{
	return th.ram + gpa;
}

static uint32_t rd(uint32_t off, unsigned size)
{
	uint32_t v = 0;

	iobus_read(th.host.mmio, BAR4 + off, &v, size);
	return v;
}

static void wr(uint32_t base, uint32_t off, unsigned size, uint32_t v)
{
	iobus_write(th.host.mmio, base + off, &v, size);
}

#define COMMON(f) (VIRTIO_PCI_COMMON_OFF + VIRTIO_PCI_COMMON_##f)

static struct virtio_blk *make_blk(uint64_t sectors)
{
	struct block_opts o = {.path = img, .format = BLOCK_FORMAT_RAW, .no_lock = true};
	struct virtio_blk_opts vo = {NULL, NULL, 1, DEVFN, "vd", BLOCK_AIO_IO_URING};
	char err[256];
	struct virtio_blk *b;

	ck_assert_int_eq(truncate(img, (off_t)sectors * 512), 0);
	disk = block_open(&o, err, sizeof(err));
	ck_assert_msg(disk, "%s", err);
	vo.disk = disk;
	b = virtio_blk_new(&th.host, bus, &vo, err, sizeof(err));
	ck_assert_msg(b, "%s", err);
	return b;
}

static void drop_blk(void)
{
	virtio_blk_free(vb);
	block_close(disk);
	vb = NULL;
}

static void setup(void)
{
	uint8_t sector[512];
	FILE *f;

	test_host_init(&th);
	th.host.irq.msi = record_msi;
	bus = pci_bus_new(&th.host);
	strcpy(img, "/tmp/vmm-virtio-state-XXXXXX");
	close(mkstemp(img));
	f = fopen(img, "wb");
	for (unsigned s = 0; s < IMG_SECTORS; s++) {
		memset(sector, (int)s, sizeof(sector));
		fwrite(sector, 1, sizeof(sector), f);
	}
	fclose(f);
	vb = make_blk(IMG_SECTORS);
	msi_count = 0;
	next_avail = 0;
}

static void teardown(void)
{
	if (vb)
		drop_blk();
	pci_bus_free(bus);
	test_host_fini(&th);
	unlink(img);
}

static unsigned msix_cap(void)
{
	for (unsigned c = pci_cfg_read(bus, DEVFN, 0x34, 1); c;
	     c = pci_cfg_read(bus, DEVFN, c + 1, 1))
		if (pci_cfg_read(bus, DEVFN, c, 1) == 0x11)
			return c;
	ck_abort_msg("no MSI-X capability");
	return 0;
}

/* BARs, MSI-X with vector 1 for queue 0, VERSION_1|EVENT_IDX, one queue. */
static void bring_up(void)
{
	uint64_t f = 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_RING_F_EVENT_IDX;

	pci_cfg_write(bus, DEVFN, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, DEVFN, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, DEVFN, 0x04, 2, 0x2);
	pci_cfg_write(bus, DEVFN, msix_cap() + 2, 2, 0x8000); /* MSI-X on */
	wr(BAR1, 16, 4, MSI_ADDR);
	wr(BAR1, 16 + 8, 4, MSI_DATA);
	wr(BAR1, 16 + 12, 4, 0); /* vector 1 unmasked */
	wr(BAR4, COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(BAR4, COMMON(GFSELECT), 4, 0);
	wr(BAR4, COMMON(GF), 4, (uint32_t)f);
	wr(BAR4, COMMON(GFSELECT), 4, 1);
	wr(BAR4, COMMON(GF), 4, (uint32_t)(f >> 32));
	wr(BAR4, COMMON(STATUS), 1, 0x0b);
	wr(BAR4, COMMON(Q_SELECT), 2, 0);
	wr(BAR4, COMMON(Q_SIZE), 2, QSIZE);
	wr(BAR4, COMMON(Q_MSIX), 2, 1);
	wr(BAR4, COMMON(Q_DESCLO), 4, DESC);
	wr(BAR4, COMMON(Q_AVAILLO), 4, AVAIL);
	wr(BAR4, COMMON(Q_USEDLO), 4, USED);
	wr(BAR4, COMMON(Q_ENABLE), 2, 1);
	wr(BAR4, COMMON(STATUS), 1, 0x0f);
}

static uint16_t used_idx(void)
{
	struct vring_used *u = (struct vring_used *)g(USED);

	return le16toh(__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE));
}

/* Read sector into DATA through a 3-descriptor chain at slot next_avail
 * % QSIZE (so the descriptors differ per request): whether it completed
 * with used index want. */
static bool read_sector(uint64_t sector)
{
	struct vring_desc *d = (struct vring_desc *)g(DESC);
	struct vring_avail *a = (struct vring_avail *)g(AVAIL);
	struct virtio_blk_outhdr *h = (struct virtio_blk_outhdr *)g(HDR);
	uint16_t want = (uint16_t)(next_avail + 1), head = 0;

	h->type = htole32(VIRTIO_BLK_T_IN);
	h->sector = htole64(sector);
	*g(STATUS) = 0xee;
	memset(g(DATA), 0xaa, 512);
	d[0] = (struct vring_desc){htole64(HDR), htole32(sizeof(*h)), htole16(VRING_DESC_F_NEXT),
				   htole16(1)};
	d[1] = (struct vring_desc){htole64(DATA), htole32(512),
				   htole16(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE), htole16(2)};
	d[2] = (struct vring_desc){htole64(STATUS), htole32(1), htole16(VRING_DESC_F_WRITE), 0};
	a->ring[next_avail % QSIZE] = htole16(head);
	/* used_event: an interrupt for every completion */
	a->ring[QSIZE] = htole16(next_avail);
	__atomic_store_n(&a->idx, htole16(++next_avail), __ATOMIC_RELEASE);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	for (int i = 0; i < 2000 && used_idx() != want; i++)
		usleep(1000);
	return used_idx() == want && *g(STATUS) == VIRTIO_BLK_S_OK && g(DATA)[0] == sector &&
	       g(DATA)[511] == sector;
}

static void save_blk(void *dev, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_blk_transport(dev), w, "virtio-blk@0", state_err,
					 sizeof(state_err)),
			 0);
}

static int load_blk(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return virtio_pci_load(virtio_blk_transport(dev), r, "virtio-blk@0", e, elen);
}

static void save_slow(void *dev, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(dev, w, "virtio-blk@0", state_err, sizeof(state_err)), 0);
}

/* Three requests served, then the tree. */
static void *busy_tree(size_t *len)
{
	bring_up();
	for (unsigned s = 1; s <= 3; s++)
		ck_assert(read_sector(s));
	ck_assert_uint_eq(msi_data, MSI_DATA);
	return save_tree(save_blk, vb, len);
}

static void patch_u16(void *blob, const char *node, const char *prop, uint16_t v)
{
	fdt16_t be = cpu_to_fdt16(v);

	patch(blob, node, prop, &be, 2);
}

static void patch_u64(void *blob, const char *node, const char *prop, uint64_t v)
{
	fdt64_t be = cpu_to_fdt64(v);

	patch(blob, node, prop, &be, 8);
}

START_TEST(blk_queue_continues_after_load)
{
	size_t len;
	void *blob = busy_tree(&len);

	drop_blk();
	vb = make_blk(IMG_SECTORS);
	ck_assert_msg(load_tree(load_blk, vb, blob, len) == 0, "%s", state_err);
	/* the registers the driver reads back */
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0f);
	ck_assert_uint_eq(rd(COMMON(Q_DESCLO), 4), DESC);
	ck_assert_uint_eq(rd(COMMON(Q_ENABLE), 2), 1);
	ck_assert_uint_eq(rd(COMMON(Q_MSIX), 2), 1);
	/* the next request: used index 4, through the same MSI-X vector */
	msi_data = 0;
	ck_assert(read_sector(7));
	ck_assert_uint_eq(used_idx(), 4);
	for (int i = 0; i < 1000 && msi_data != MSI_DATA; i++)
		usleep(1000);
	ck_assert_uint_eq(msi_data, MSI_DATA);
	free(blob);
}
END_TEST

/* Each tree is refused with a message naming what is wrong, and the
 * device is not left serving. */
static void refused(void *blob, size_t len, const char *what)
{
	drop_blk();
	vb = make_blk(IMG_SECTORS);
	ck_assert_int_eq(load_tree(load_blk, vb, blob, len), -1);
	ck_assert_msg(strstr(state_err, what), "'%s' lacks '%s'", state_err, what);
}

START_TEST(bad_trees_refused)
{
	size_t len;
	void *good = busy_tree(&len), *b = malloc(len);

	memcpy(b, good, len);
	/* one behind the used ring in RAM (and within the ring of last-avail) */
	patch_u16(b, NODE "/queue@0", "used-idx", 2);
	refused(b, len, "differs from the used ring");
	memcpy(b, good, len);
	patch_u16(b, NODE "/queue@0", "used-idx", 3);
	patch_u16(b, NODE "/queue@0", "last-avail", 12);
	refused(b, len, "next available");
	memcpy(b, good, len);
	patch_u64(b, NODE, "features", 1);
	refused(b, len, "differ from");
	memcpy(b, good, len);
	patch_u16(b, NODE "/queue@0", "last-avail", 200);
	refused(b, len, "next available");
	memcpy(b, good, len);
	patch_u64(b, NODE "/queue@0", "desc", 1ull << 40);
	refused(b, len, "outside guest RAM");
	memcpy(b, good, len);
	patch_u16(b, NODE "/queue@0", "size", 6);
	refused(b, len, "power of two");
	memcpy(b, good, len);
	patch_u16(b, NODE "/queue@0", "vector", 40);
	refused(b, len, "not a vector");
	memcpy(b, good, len);
	patch_u64(b, NODE, "driver-features", 1ull << 50);
	refused(b, len, "never offered");
	memcpy(b, good, len);
	patch_u8(b, NODE, "status", 0x07);
	refused(b, len, "DRIVER_OK without FEATURES_OK");
	memcpy(b, good, len);
	patch_u64(b, NODE, "msix-pba", 1ull << 40);
	refused(b, len, "msix-pba");
	/* an image of another size */
	drop_blk();
	vb = make_blk(IMG_SECTORS * 2);
	ck_assert_int_eq(load_tree(load_blk, vb, good, len), -1);
	ck_assert_msg(strstr(state_err, "capacity"), "%s", state_err);
	free(b);
	free(good);
}
END_TEST

/* ------------------------------------------------ requests in flight */

/* A device that keeps every chain (VIRTIO_REQ_PENDING) until its
 * eventfd fires, as virtio-blk does with io_uring. */
struct slow_dev {
	struct virtio_pci *vp;
	int efd;
	int head; /* the chain it holds, or -1 */
};

static int slow_handle(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
		       const char **why)
{
	struct slow_dev *d = opaque;

	__atomic_store_n(&d->head, c->head, __ATOMIC_SEQ_CST);
	return VIRTIO_REQ_PENDING;
}

static void slow_ready(void *opaque)
{
	struct slow_dev *d = opaque;
	uint64_t v;

	if (read(d->efd, &v, sizeof(v)) == sizeof(v) && d->head >= 0)
		virtio_pci_complete(d->vp, 0, (uint16_t)d->head, 0);
	d->head = -1;
}

static const struct virtio_dev_ops slow_ops = {
	.device_id = VIRTIO_ID_RNG, .num_queues = 1, .queue_size = QSIZE, .handle = slow_handle};

static void *complete_later(void *opaque)
{
	struct slow_dev *d = opaque;
	uint64_t one = 1;

	usleep(300 * 1000);
	ck_assert_int_eq(write(d->efd, &one, sizeof(one)), 8);
	return NULL;
}

START_TEST(save_waits_for_requests_in_flight)
{
	struct slow_dev d = {.head = -1};
	struct vring_avail *a = (struct vring_avail *)g(AVAIL);
	struct vring_desc *desc = (struct vring_desc *)g(DESC);
	char err[256];
	pthread_t t;
	size_t len;
	void *blob;
	fdt16_t idx;
	int off;

	drop_blk();
	d.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	d.vp = virtio_pci_new(&th.host, bus, DEVFN, "slow", &slow_ops, &d, NULL, err, sizeof(err));
	ck_assert_msg(d.vp, "%s", err);
	ck_assert_int_eq(virtio_pci_watch(d.vp, d.efd, slow_ready, &d), 0);
	bring_up();
	desc[0] = (struct vring_desc){htole64(DATA), htole32(16), htole16(VRING_DESC_F_WRITE), 0};
	a->ring[0] = 0;
	__atomic_store_n(&a->idx, htole16(1), __ATOMIC_RELEASE);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	for (int i = 0; i < 2000 && __atomic_load_n(&d.head, __ATOMIC_SEQ_CST) < 0; i++)
		usleep(1000);
	ck_assert_int_eq(d.head, 0);
	ck_assert_uint_eq(used_idx(), 0);
	/* the save waits for the completion: the tree and RAM both have it */
	pthread_create(&t, NULL, complete_later, &d);
	blob = save_tree(save_slow, d.vp, &len);
	pthread_join(t, NULL);
	off = fdt_path_offset(blob, "/devices/virtio-blk@0/queue@0");
	ck_assert_int_ge(off, 0);
	memcpy(&idx, fdt_getprop(blob, off, "used-idx", NULL), 2);
	ck_assert_uint_eq(fdt16_to_cpu(idx), 1);
	ck_assert_uint_eq(used_idx(), 1);
	/* frozen until thawed: the RAM after the tree must not change */
	a->ring[1] = 0;
	__atomic_store_n(&a->idx, htole16(2), __ATOMIC_RELEASE);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	usleep(100 * 1000);
	ck_assert_int_eq(__atomic_load_n(&d.head, __ATOMIC_SEQ_CST), -1);
	virtio_pci_thaw(d.vp);
	for (int i = 0; i < 2000 && __atomic_load_n(&d.head, __ATOMIC_SEQ_CST) < 0; i++)
		usleep(1000);
	ck_assert_int_eq(d.head, 0);
	free(blob);
	virtio_pci_free(d.vp);
	close(d.efd);
}
END_TEST

/* ------------------------------------------------------------ virtio-rng */

static void save_rng(void *dev, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_rng_transport(dev), w, "virtio-rng@0", state_err,
					 sizeof(state_err)),
			 0);
}

static int load_rng(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return virtio_pci_load(virtio_rng_transport(dev), r, "virtio-rng@0", e, elen);
}

static struct virtio_rng *make_rng(void)
{
	struct virtio_rng_opts o = {
		.fd = -1, .max_bytes = 100, .period_ms = 60000, .devfn = 3 << 3};
	char err[256];
	struct virtio_rng *r = virtio_rng_new(&th.host, bus, &o, err, sizeof(err));

	ck_assert_msg(r, "%s", err);
	return r;
}

START_TEST(rng_budget_kept_and_checked)
{
	struct virtio_rng *r = make_rng();
	size_t len;
	void *blob;
	fdt64_t quota;
	int off;

	blob = save_tree(save_rng, r, &len);
	off = fdt_path_offset(blob, "/devices/virtio-rng@0");
	ck_assert_int_ge(off, 0);
	memcpy(&quota, fdt_getprop(blob, off, "rng-quota", NULL), 8);
	virtio_rng_free(r);
	/* a budget of 42 bytes comes back as 42 bytes */
	patch_u64(blob, "/devices/virtio-rng@0", "rng-quota", 42);
	patch_u8(blob, "/devices/virtio-rng@0", "rng-period-running", 1);
	r = make_rng();
	ck_assert_msg(load_tree(load_rng, r, blob, len) == 0, "%s", state_err);
	free(blob);
	blob = save_tree(save_rng, r, &len);
	off = fdt_path_offset(blob, "/devices/virtio-rng@0");
	memcpy(&quota, fdt_getprop(blob, off, "rng-quota", NULL), 8);
	ck_assert_uint_eq(fdt64_to_cpu(quota), 42);
	/* more than max-bytes, a period longer than period_ms: refused */
	patch_u64(blob, "/devices/virtio-rng@0", "rng-quota", 101);
	ck_assert_int_eq(load_tree(load_rng, r, blob, len), -1);
	ck_assert_msg(strstr(state_err, "max-bytes"), "%s", state_err);
	patch_u64(blob, "/devices/virtio-rng@0", "rng-quota", 1);
	patch_u32(blob, "/devices/virtio-rng@0", "rng-period-left-ms", 60001);
	ck_assert_int_eq(load_tree(load_rng, r, blob, len), -1);
	free(blob);
	virtio_rng_free(r);
}
END_TEST

/* ------------------------------------------------------------ virtio-net */

static int null_send(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		     const struct iovec *iov, int iovcnt, size_t len)
{
	return 0;
}

static int null_fd(struct netdev *nd)
{
	return -1;
}

static int null_info(struct netdev *nd, char *buf, size_t len)
{
	return snprintf(buf, len, "null");
}

static void null_free(struct netdev *nd)
{
}

static const struct netdev_ops null_ops = {
	.type = "null", .send = null_send, .fd = null_fd, .info = null_info, .free = null_free};
static struct netdev null_nd = {.ops = &null_ops, .queues = 1};

static struct virtio_net *make_net(void)
{
	struct virtio_net_opts o = {&null_nd, {0x52, 0x54, 0, 1, 2, 3}, 1500, 4 << 3, "net0",
				    false};
	char err[256];
	struct virtio_net *n = virtio_net_new(&th.host, bus, &o, err, sizeof(err));

	ck_assert_msg(n, "%s", err);
	return n;
}

static void save_net(void *dev, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_net_transport(dev), w, "virtio-net@0", state_err,
					 sizeof(state_err)),
			 0);
}

static int load_net(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return virtio_pci_load(virtio_net_transport(dev), r, "virtio-net@0", e, elen);
}

#define NET_NODE "/devices/virtio-net@0"

START_TEST(net_mac_link_and_filter_kept)
{
	static const uint8_t set_mac[6] = {0x02, 0, 0, 0xaa, 0xbb, 0xcc};
	struct virtio_net *n = make_net();
	struct virtio_net_info info;
	size_t len;
	void *blob = save_tree(save_net, n, &len);

	virtio_net_free(n);
	/* as if the driver had set a MAC (CTRL_MAC_ADDR_SET) and the link
	 * were down */
	patch(blob, NET_NODE, "mac", set_mac, 6);
	patch_u8(blob, NET_NODE, "link-up", 0);
	n = make_net();
	ck_assert_msg(load_tree(load_net, n, blob, len) == 0, "%s", state_err);
	virtio_net_get_info(n, &info);
	ck_assert_mem_eq(info.mac, set_mac, 6);
	ck_assert(!info.link_up);
	ck_assert_uint_eq(info.pairs, 1);
	/* more pairs than the device has, a MAC table past its size */
	patch_u32(blob, NET_NODE, "pairs", 2);
	ck_assert_int_eq(load_tree(load_net, n, blob, len), -1);
	ck_assert_msg(strstr(state_err, "pairs"), "%s", state_err);
	patch_u32(blob, NET_NODE, "pairs", 1);
	patch_u32(blob, NET_NODE, "mac-uni-count", 65);
	ck_assert_int_eq(load_tree(load_net, n, blob, len), -1);
	ck_assert_msg(strstr(state_err, "mac-uni-count"), "%s", state_err);
	free(blob);
	virtio_net_free(n);
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("virtio_state");
	TCase *tc = tcase_create("virtio-pci snapshots");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, blk_queue_continues_after_load);
	tcase_add_test(tc, bad_trees_refused);
	tcase_add_test(tc, save_waits_for_requests_in_flight);
	tcase_add_test(tc, rng_budget_kept_and_checked);
	tcase_add_test(tc, net_mac_link_and_filter_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(state_suite());
}
