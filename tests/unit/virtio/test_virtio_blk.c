/* Unit tests for the virtio-pci transport (register semantics, INTx and
 * MSI-X) and virtio-blk (request parsing, I/O on a temporary image) with
 * a fake host: real PCI and MMIO buses, malloc'ed guest RAM, recorded
 * interrupts, no KVM (doorbells reach the device through its BAR and
 * wake its I/O thread). */
#include <check.h>
#include <endian.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/devices/pc_host.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define INTX_GSI 11
#define QSIZE 8
#define DESC 0x10000u
#define AVAIL 0x11000u
#define USED 0x12000u
#define HDR 0x20000u
#define DATA 0x21000u
#define STATUS 0x30000u
#define IMG_SECTORS 64

static struct fake_host th;
static struct pci_bus *bus;
static struct block_dev *disk;
static struct virtio_blk *vb;
static char img[64];
static uint64_t msi_addr;
static uint32_t msi_data;
static unsigned msi_count;
static uint16_t next_avail;
static enum block_aio_mode aio_mode = BLOCK_AIO_THREADS; /* per TCase */

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	msi_addr = addr;
	msi_data = data;
	__atomic_add_fetch(&msi_count, 1, __ATOMIC_SEQ_CST);
}

static int route_all(void *opaque, unsigned slot, unsigned pin)
{
	return INTX_GSI;
}

/* The I/O thread interrupts right after it fills the used ring: poll. */
#define WAIT(cond)                                                                                 \
	do {                                                                                       \
		bool ok_ = false;                                                                  \
		for (int w_ = 0; w_ < 1000 && !(ok_ = (cond)); w_++)                               \
			usleep(1000);                                                              \
		ck_assert_msg(ok_, "timed out waiting for %s", #cond);                             \
	} while (0)

static unsigned msis(void)
{
	return __atomic_load_n(&msi_count, __ATOMIC_SEQ_CST);
}

static uint8_t *g(uint64_t gpa)
{
	return th.ram + gpa;
}

/* A virtio-blk on a fresh image whose sector s is filled with byte s. */
static struct virtio_blk *make_blk(int devfn, bool ro, const char *serial, struct block_dev **d)
{
	/* some cases open the image twice: no image locks */
	struct block_opts o = {.path = img, .read_only = ro, .no_lock = true};
	struct virtio_blk_opts vo = {NULL, serial, 1, devfn, "vd", aio_mode};
	char err[256];
	struct virtio_blk *b;

	*d = block_open(&o, err, sizeof(err));
	ck_assert_msg(*d, "%s", err);
	vo.disk = *d;
	b = virtio_blk_new(&th.host, bus, &vo, err, sizeof(err));
	ck_assert_msg(b, "%s", err);
	return b;
}

static void setup(void)
{
	uint8_t sector[512];
	FILE *f;

	test_host_init(&th);
	th.host.irq.msi = record_msi;
	bus = pci_bus_new(&th.host);
	pci_bus_set_route(bus, route_all, NULL);
	strcpy(img, "/tmp/vmm-virtio-blk-XXXXXX");
	close(mkstemp(img));
	f = fopen(img, "wb");
	for (unsigned s = 0; s < IMG_SECTORS; s++) {
		memset(sector, (int)s, sizeof(sector));
		fwrite(sector, 1, sizeof(sector), f);
	}
	fclose(f);
	vb = make_blk(2 << 3, false, "serial-1234", &disk);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2); /* memory decode */
	msi_count = 0;
	next_avail = 0;
}

static void setup_uring(void)
{
	aio_mode = BLOCK_AIO_IO_URING;
	setup();
}

static void teardown(void)
{
	virtio_blk_free(vb);
	block_close(disk);
	pci_bus_free(bus);
	test_host_fini(&th);
	unlink(img);
}

/* ------------------------------------------------------ register access */

static uint32_t rd(uint32_t base, uint32_t off, unsigned size)
{
	uint32_t v = 0;

	iobus_read(th.host.mmio, base + off, &v, size);
	return v;
}

static void wr(uint32_t base, uint32_t off, unsigned size, uint32_t v)
{
	iobus_write(th.host.mmio, base + off, &v, size);
}

#define COMMON(f) (VIRTIO_PCI_COMMON_OFF + VIRTIO_PCI_COMMON_##f)

static uint64_t device_features(uint32_t base)
{
	wr(base, COMMON(DFSELECT), 4, 0);
	uint64_t lo = rd(base, COMMON(DF), 4);
	wr(base, COMMON(DFSELECT), 4, 1);
	return lo | (uint64_t)rd(base, COMMON(DF), 4) << 32;
}

/* ACK, DRIVER, the features, FEATURES_OK: the status read back. */
static uint8_t negotiate(uint32_t base, uint64_t features)
{
	wr(base, COMMON(STATUS), 1, 0);
	wr(base, COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(base, COMMON(GFSELECT), 4, 0);
	wr(base, COMMON(GF), 4, (uint32_t)features);
	wr(base, COMMON(GFSELECT), 4, 1);
	wr(base, COMMON(GF), 4, (uint32_t)(features >> 32));
	wr(base, COMMON(STATUS), 1, 0x0b);
	return (uint8_t)rd(base, COMMON(STATUS), 1);
}

/* Negotiate VERSION_1, set up queue 0 at DESC/AVAIL/USED, DRIVER_OK. */
static void bring_up(uint32_t base, uint64_t rings)
{
	ck_assert_uint_eq(negotiate(base, 1ull << VIRTIO_F_VERSION_1), 0x0b);
	wr(base, COMMON(Q_SELECT), 2, 0);
	wr(base, COMMON(Q_SIZE), 2, QSIZE);
	wr(base, COMMON(Q_DESCLO), 4, (uint32_t)(DESC + rings));
	wr(base, COMMON(Q_AVAILLO), 4, (uint32_t)(AVAIL + rings));
	wr(base, COMMON(Q_USEDLO), 4, (uint32_t)(USED + rings));
	wr(base, COMMON(Q_ENABLE), 2, 1);
	wr(base, COMMON(STATUS), 1, 0x0f);
}

/* ------------------------------------------------------------ requests */

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool writable;
};

/* Queue a chain of segs on queue qi and ring its doorbell; wait for the
 * used ring (or give up after 2 s). Returns whether it completed. */
static bool submit_on(uint32_t base, uint64_t rings, unsigned qi, const struct seg *s, unsigned n)
{
	struct vring_desc *d = (struct vring_desc *)g(DESC + rings);
	struct vring_avail *a = (struct vring_avail *)g(AVAIL + rings);
	struct vring_used *u = (struct vring_used *)g(USED + rings);
	uint16_t want = (uint16_t)(le16toh(u->idx) + 1);

	for (unsigned i = 0; i < n; i++) {
		d[i].addr = htole64(s[i].gpa);
		d[i].len = htole32(s[i].len);
		d[i].flags = htole16((i + 1 < n ? VRING_DESC_F_NEXT : 0) |
				     (s[i].writable ? VRING_DESC_F_WRITE : 0));
		d[i].next = htole16((uint16_t)(i + 1));
	}
	a->ring[next_avail % QSIZE] = 0;
	__atomic_store_n(&a->idx, htole16(++next_avail), __ATOMIC_RELEASE);
	wr(base, VIRTIO_PCI_NOTIFY_OFF + qi * VIRTIO_PCI_NOTIFY_MULT, 2, qi);
	for (int i = 0; i < 2000; i++) {
		if (le16toh(__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE)) == want)
			return true;
		usleep(1000);
	}
	return false;
}

static bool submit(uint32_t base, uint64_t rings, const struct seg *s, unsigned n)
{
	return submit_on(base, rings, 0, s, n);
}

static uint8_t blk_request(uint32_t type, uint64_t sector, uint32_t data_len, bool data_in)
{
	struct virtio_blk_outhdr *h = (struct virtio_blk_outhdr *)g(HDR);
	struct seg s[3] = {{HDR, sizeof(*h), false}, {DATA, data_len, data_in}, {STATUS, 1, true}};

	h->type = htole32(type);
	h->sector = htole64(sector);
	*g(STATUS) = 0xee;
	if (data_len)
		ck_assert(submit(BAR4, 0, s, 3));
	else
		ck_assert(submit(BAR4, 0, (struct seg[]){s[0], s[2]}, 2));
	return *g(STATUS);
}

static uint32_t last_used_len(void)
{
	struct vring_used *u = (struct vring_used *)g(USED);

	return le32toh(u->ring[(le16toh(u->idx) - 1) % QSIZE].len);
}

/* ---------------------------------------------------------------- tests */

START_TEST(pci_identity_and_capabilities)
{
	unsigned cap, types = 0;

	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0, 4), 0x10421af4u);
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0x08, 1), 1); /* revision 1: modern */
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0x2e, 2), VIRTIO_ID_BLOCK);
	for (cap = pci_cfg_read(bus, 2 << 3, 0x34, 1); cap;
	     cap = pci_cfg_read(bus, 2 << 3, cap + 1, 1))
		if (pci_cfg_read(bus, 2 << 3, cap, 1) == 0x09)
			types |= 1u << pci_cfg_read(bus, 2 << 3, cap + 3, 1);
	ck_assert_uint_eq(types, 1u << VIRTIO_PCI_CAP_COMMON_CFG | 1u << VIRTIO_PCI_CAP_NOTIFY_CFG |
					 1u << VIRTIO_PCI_CAP_ISR_CFG |
					 1u << VIRTIO_PCI_CAP_DEVICE_CFG);
}
END_TEST

START_TEST(feature_negotiation)
{
	uint64_t f = device_features(BAR4);

	ck_assert(f >> VIRTIO_F_VERSION_1 & 1);
	ck_assert(f >> VIRTIO_RING_F_INDIRECT_DESC & 1);
	ck_assert(f >> VIRTIO_RING_F_EVENT_IDX & 1);
	ck_assert(f >> VIRTIO_BLK_F_FLUSH & 1);
	ck_assert(f >> VIRTIO_BLK_F_SEG_MAX & 1);
	ck_assert(!(f >> VIRTIO_BLK_F_RO & 1));
	/* a bit the device did not offer: FEATURES_OK does not stick */
	ck_assert_uint_eq(negotiate(BAR4, 1ull << VIRTIO_F_VERSION_1 | 1ull << 40), 0x03);
	/* legacy (no VERSION_1) is refused too */
	ck_assert_uint_eq(negotiate(BAR4, 1ull << VIRTIO_BLK_F_FLUSH), 0x03);
	ck_assert_uint_eq(negotiate(BAR4, 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_BLK_F_FLUSH),
			  0x0b);
	ck_assert_uint_eq(virtio_pci_features(virtio_blk_transport(vb)),
			  1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_BLK_F_FLUSH);
}
END_TEST

START_TEST(reset_clears_queues)
{
	bring_up(BAR4, 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_ENABLE), 2), 1);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_DESCLO), 4), DESC);
	wr(BAR4, COMMON(STATUS), 1, 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(STATUS), 1), 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_ENABLE), 2), 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_DESCLO), 4), 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_SIZE), 2), 256); /* back to the maximum */
	ck_assert_uint_eq(rd(BAR4, COMMON(NUMQ), 2), 1);
	/* a queue that does not exist reads size 0 */
	wr(BAR4, COMMON(Q_SELECT), 2, 5);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_SIZE), 2), 0);
}
END_TEST

START_TEST(config_space_and_generation)
{
	struct virtio_pci *vp = virtio_blk_transport(vb);
	uint8_t gen = (uint8_t)rd(BAR4, COMMON(CFGGENERATION), 1);

	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_DEVICE_OFF, 4), IMG_SECTORS); /* capacity */
	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_DEVICE_OFF + 20, 4), 512);    /* blk_size */
	virtio_pci_config_changed(vp);
	ck_assert_uint_eq(rd(BAR4, COMMON(CFGGENERATION), 1), (uint8_t)(gen + 1));
	/* a vector beyond the MSI-X table reads back NO_VECTOR */
	wr(BAR4, COMMON(MSIX), 2, 9);
	ck_assert_uint_eq(rd(BAR4, COMMON(MSIX), 2), VIRTIO_MSI_NO_VECTOR);
	wr(BAR4, COMMON(MSIX), 2, 0);
	ck_assert_uint_eq(rd(BAR4, COMMON(MSIX), 2), 0);
}
END_TEST

START_TEST(read_request_with_intx)
{
	bring_up(BAR4, 0);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 5, 1024, true), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 5);
	ck_assert_uint_eq(g(DATA)[1023], 6);
	ck_assert_uint_eq(last_used_len(), 1025);
	/* no MSI-X: INTA and the ISR's queue bit; reading the ISR drops it */
	WAIT(th.level[INTX_GSI]);
	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_ISR_OFF, 1), 1);
	ck_assert(!th.level[INTX_GSI]);
	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_ISR_OFF, 1), 0);
	ck_assert_uint_eq(msi_count, 0);
}
END_TEST

START_TEST(write_flush_and_errors)
{
	uint8_t buf[512];
	FILE *f;

	bring_up(BAR4, 0);
	memset(g(DATA), 0xab, 512);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_OUT, 3, 512, false), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_FLUSH, 0, 0, false), VIRTIO_BLK_S_OK);
	f = fopen(img, "rb");
	fseek(f, 3 * 512, SEEK_SET);
	ck_assert_uint_eq(fread(buf, 1, 512, f), 512);
	fclose(f);
	ck_assert_uint_eq(buf[0], 0xab);
	ck_assert_uint_eq(buf[511], 0xab);
	/* beyond the end, straddling it, not whole sectors, unknown type */
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, IMG_SECTORS, 512, true), VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, IMG_SECTORS - 1, 1024, true),
			  VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_OUT, UINT64_MAX, 512, false),
			  VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 0, 100, true), VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(blk_request(99, 0, 0, false), VIRTIO_BLK_S_UNSUPP);
	/* the device is still fine */
	ck_assert_uint_eq(virtio_pci_status(virtio_blk_transport(vb)) & 0x40, 0);
}
END_TEST

START_TEST(read_only_rejects_writes)
{
	struct block_dev *d2;
	struct virtio_blk *ro = make_blk(3 << 3, true, NULL, &d2);

	virtio_blk_free(vb);
	vb = NULL;
	pci_cfg_write(bus, 3 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 3 << 3, 0x04, 2, 0x2);
	ck_assert(device_features(BAR4) >> VIRTIO_BLK_F_RO & 1);
	bring_up(BAR4, 0);
	memset(g(DATA), 0xcd, 512);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_OUT, 1, 512, false), VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 1, 512, true), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 1); /* unchanged */
	virtio_blk_free(ro);
	block_close(d2);
}
END_TEST

/* A read on queue 63 of a 64-queue device completes and raises the
 * interrupt: the transport's record of which queues completed spans
 * every queue, not only the first 32. */
START_TEST(last_of_64_queues_interrupts)
{
	struct block_opts o = {.path = img, .read_only = true, .no_lock = true};
	struct virtio_blk_opts vo = {NULL, NULL, 64, 3 << 3, "vd", aio_mode};
	struct virtio_blk_outhdr *h = (struct virtio_blk_outhdr *)g(HDR);
	struct seg s[3] = {{HDR, sizeof(*h), false}, {DATA, 512, true}, {STATUS, 1, true}};
	struct virtio_blk *wide;
	char err[256];

	virtio_blk_free(vb);
	vb = NULL;
	vo.disk = block_open(&o, err, sizeof(err));
	ck_assert_msg(vo.disk, "%s", err);
	wide = virtio_blk_new(&th.host, bus, &vo, err, sizeof(err));
	ck_assert_msg(wide, "%s", err);
	pci_cfg_write(bus, 3 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 3 << 3, 0x04, 2, 0x2);
	ck_assert_uint_eq(rd(BAR4, COMMON(NUMQ), 2), 64);
	ck_assert_uint_eq(negotiate(BAR4, 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_BLK_F_MQ),
			  0x0b);
	wr(BAR4, COMMON(Q_SELECT), 2, 63);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_NOFF), 2), 63);
	wr(BAR4, COMMON(Q_SIZE), 2, QSIZE);
	wr(BAR4, COMMON(Q_DESCLO), 4, DESC);
	wr(BAR4, COMMON(Q_AVAILLO), 4, AVAIL);
	wr(BAR4, COMMON(Q_USEDLO), 4, USED);
	wr(BAR4, COMMON(Q_ENABLE), 2, 1);
	wr(BAR4, COMMON(STATUS), 1, 0x0f);
	h->type = htole32(VIRTIO_BLK_T_IN);
	h->sector = htole64(7);
	*g(STATUS) = 0xee;
	ck_assert(submit_on(BAR4, 0, 63, s, 3));
	ck_assert_uint_eq(*g(STATUS), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 7);
	WAIT(th.level[INTX_GSI]);
	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_ISR_OFF, 1), 1);
	virtio_blk_free(wide);
	block_close(vo.disk);
}
END_TEST

START_TEST(get_id_discard_write_zeroes)
{
	struct virtio_blk_discard_write_zeroes *r = (void *)g(DATA);

	bring_up(BAR4, 0);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_GET_ID, 0, 20, true), VIRTIO_BLK_S_OK);
	ck_assert(!memcmp(g(DATA), "serial-1234\0", 12));
	ck_assert_uint_eq(last_used_len(), 21);
	*r = (struct virtio_blk_discard_write_zeroes){htole64(8), htole32(2), 0};
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_DISCARD, 0, sizeof(*r), false), VIRTIO_BLK_S_OK);
	*r = (struct virtio_blk_discard_write_zeroes){htole64(10), htole32(1), htole32(1)};
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_WRITE_ZEROES, 0, sizeof(*r), false),
			  VIRTIO_BLK_S_OK);
	memset(g(DATA), 0x77, 2048);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 8, 2048, true), VIRTIO_BLK_S_OK);
	for (unsigned i = 0; i < 1536; i++)
		ck_assert_uint_eq(g(DATA)[i], 0); /* sectors 8-10 read zeroes */
	ck_assert_uint_eq(g(DATA)[1536], 11);
	/* a range past the end and an unknown flag */
	*r = (struct virtio_blk_discard_write_zeroes){htole64(IMG_SECTORS), htole32(1), 0};
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_DISCARD, 0, sizeof(*r), false),
			  VIRTIO_BLK_S_IOERR);
	*r = (struct virtio_blk_discard_write_zeroes){htole64(0), htole32(1), htole32(2)};
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_DISCARD, 0, sizeof(*r), false),
			  VIRTIO_BLK_S_UNSUPP);
}
END_TEST

/* A request without a whole header, or without a status byte, cannot be
 * answered: the device needs a reset; another device keeps working. */
static void malformed_request_breaks_only_its_device(const struct seg *bad, unsigned n)
{
	struct block_dev *d2;
	struct virtio_blk *other = make_blk(3 << 3, false, NULL, &d2);
	struct virtio_pci *vp = virtio_blk_transport(vb);
	const uint32_t bar2 = 0xe0020000u;

	pci_cfg_write(bus, 3 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, bar2);
	pci_cfg_write(bus, 3 << 3, 0x04, 2, 0x2);
	bring_up(BAR4, 0);
	bring_up(bar2, 0x40000);
	ck_assert(!submit(BAR4, 0, bad, n)); /* never completed */
	ck_assert_uint_eq(virtio_pci_status(vp) & VIRTIO_CONFIG_S_NEEDS_RESET,
			  VIRTIO_CONFIG_S_NEEDS_RESET);
	/* the driver heard about it: a config interrupt (ISR bit 1) */
	WAIT(th.level[INTX_GSI]);
	ck_assert_uint_eq(rd(BAR4, VIRTIO_PCI_ISR_OFF, 1), VIRTIO_PCI_ISR_CONFIG);
	/* the other device serves a read */
	((struct virtio_blk_outhdr *)g(HDR))->type = htole32(VIRTIO_BLK_T_IN);
	((struct virtio_blk_outhdr *)g(HDR))->sector = htole64(7);
	next_avail = 0;
	ck_assert(submit(bar2, 0x40000,
			 (struct seg[]){{HDR, 16, false}, {DATA, 512, true}, {STATUS, 1, true}},
			 3));
	ck_assert_uint_eq(*g(STATUS), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 7);
	/* a reset (and fresh rings) brings the broken one back */
	memset(g(AVAIL), 0, 16);
	next_avail = 0;
	bring_up(BAR4, 0);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 9, 512, true), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 9);
	ck_assert_uint_eq(virtio_pci_status(vp), 0x0f);
	virtio_blk_free(other);
	block_close(d2);
}

START_TEST(short_header_needs_reset)
{
	malformed_request_breaks_only_its_device(
		(struct seg[]){{HDR, 8, false}, {DATA, 512, true}, {STATUS, 1, true}}, 3);
}
END_TEST

START_TEST(missing_status_needs_reset)
{
	malformed_request_breaks_only_its_device(
		(struct seg[]){{HDR, 16, false}, {DATA, 512, false}}, 2);
}
END_TEST

START_TEST(descriptor_loop_needs_reset)
{
	struct vring_desc *d = (struct vring_desc *)g(DESC);

	/* submit() chains 0 -> 1; point 1 back at 0 after the fact is racy,
	 * so make both segments' links loop through next = 0 instead */
	bring_up(BAR4, 0);
	d[0] = (struct vring_desc){htole64(HDR), htole32(16), htole16(VRING_DESC_F_NEXT), 0};
	((struct vring_avail *)g(AVAIL))->ring[0] = 0;
	((struct vring_avail *)g(AVAIL))->idx = htole16(1);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	for (int i = 0; i < 2000 && !(virtio_pci_status(virtio_blk_transport(vb)) & 0x40); i++)
		usleep(1000);
	ck_assert_uint_eq(virtio_pci_status(virtio_blk_transport(vb)) & 0x40, 0x40);
}
END_TEST

/* The MSI-X capability's offset in config space. */
static unsigned msix_cap(void)
{
	for (unsigned c = pci_cfg_read(bus, 2 << 3, 0x34, 1); c;
	     c = pci_cfg_read(bus, 2 << 3, c + 1, 1))
		if (pci_cfg_read(bus, 2 << 3, c, 1) == 0x11)
			return c;
	return 0;
}

START_TEST(msix_delivery_masking_and_pending)
{
	unsigned cap = msix_cap();

	ck_assert_uint_ne(cap, 0);
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, cap + 2, 2) & 0x7ff, 1); /* 2 vectors */
	pci_cfg_write(bus, 2 << 3, cap + 2, 2, 0x8000);			     /* enable */
	/* vector 1: address and data, still masked */
	wr(BAR1, 16 + 0, 4, 0xfee00000u);
	wr(BAR1, 16 + 4, 4, 0);
	wr(BAR1, 16 + 8, 4, 0x4041);
	bring_up(BAR4, 0);
	wr(BAR4, COMMON(Q_SELECT), 2, 0);
	wr(BAR4, COMMON(Q_MSIX), 2, 1);
	ck_assert_uint_eq(rd(BAR4, COMMON(Q_MSIX), 2), 1);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 2, 512, true), VIRTIO_BLK_S_OK);
	WAIT(rd(BAR1, 0x800, 4) == 2); /* pending bit of vector 1 */
	ck_assert_uint_eq(msis(), 0);
	ck_assert(!th.level[INTX_GSI]); /* MSI-X on: no INTx */
	wr(BAR1, 16 + 12, 4, 0);	/* unmask: the pending one goes out */
	ck_assert_uint_eq(msis(), 1);
	ck_assert_uint_eq(msi_addr, 0xfee00000u);
	ck_assert_uint_eq(msi_data, 0x4041);
	ck_assert_uint_eq(rd(BAR1, 0x800, 4), 0);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 2, 512, true), VIRTIO_BLK_S_OK);
	WAIT(msis() == 2);
	/* the function mask holds everything back */
	pci_cfg_write(bus, 2 << 3, cap + 2, 2, 0xc000);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 2, 512, true), VIRTIO_BLK_S_OK);
	WAIT(rd(BAR1, 0x800, 4) == 2);
	ck_assert_uint_eq(msis(), 2);
	pci_cfg_write(bus, 2 << 3, cap + 2, 2, 0x8000);
	ck_assert_uint_eq(msis(), 3);
}
END_TEST

/* ------------------------------------- the host's fast path (recorded) */

#define MAX_IOEV 8
static struct {
	uint64_t addr[MAX_IOEV];
	int fd[MAX_IOEV];
	unsigned n; /* live registrations */
	int routes, irqfd[4];
	uint64_t route_addr[4];
	uint32_t route_data[4];
} fast;

static int fake_ioeventfd(void *o, uint64_t addr, unsigned len, int fd, bool assign)
{
	ck_assert_uint_eq(len, 2);
	if (assign) {
		fast.addr[fast.n] = addr;
		fast.fd[fast.n++] = fd;
		return 0;
	}
	for (unsigned i = 0; i < fast.n; i++)
		if (fast.addr[i] == addr && fast.fd[i] == fd) {
			fast.addr[i] = fast.addr[--fast.n];
			fast.fd[i] = fast.fd[fast.n];
			return 0;
		}
	ck_abort_msg("deassigning an ioeventfd that is not there");
	return -ENOENT;
}

static int fake_route_add(void *o, uint64_t addr, uint32_t data)
{
	return fast.routes < 4 ? fast.routes++ : -ENOSPC;
}

static int fake_route_set(void *o, int route, uint64_t addr, uint32_t data)
{
	fast.route_addr[route] = addr;
	fast.route_data[route] = data;
	return 0;
}

static int fake_irqfd(void *o, int fd, int route, bool assign)
{
	fast.irqfd[route] = assign ? fd : -1;
	return 0;
}

/* Doorbells come through the ioeventfd the device registered where the
 * guest put BAR 4 (and follow it when it moves); vectors leave through
 * irqfds whose routes follow the MSI-X table. */
START_TEST(ioeventfd_and_irqfd_path)
{
	struct block_dev *d2;
	struct virtio_blk *b;
	uint64_t one = 1, count = 0;
	unsigned cap;

	memset(&fast, 0, sizeof(fast));
	th.host.fast = (struct dev_fast_ops){fake_ioeventfd, fake_route_add, fake_route_set,
					     NULL,	     fake_irqfd,     NULL,
					     NULL};
	virtio_blk_free(vb);
	vb = NULL;
	b = make_blk(2 << 3, false, NULL, &d2);
	ck_assert_int_eq(fast.routes, 0); /* none until the guest enables MSI-X */
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, 0xe0100000u);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
	ck_assert_uint_eq(fast.n, 1);
	ck_assert_uint_eq(fast.addr[0], 0xe0100000u + VIRTIO_PCI_NOTIFY_OFF);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4); /* moved */
	ck_assert_uint_eq(fast.n, 1);
	ck_assert_uint_eq(fast.addr[0], BAR4 + VIRTIO_PCI_NOTIFY_OFF);

	cap = msix_cap();
	pci_cfg_write(bus, 2 << 3, cap + 2, 2, 0x8000);
	ck_assert_int_eq(fast.routes, 2); /* config + one queue */
	ck_assert_int_ge(fast.irqfd[1], 0);
	wr(BAR1, 16 + 0, 4, 0xfee00000u);
	wr(BAR1, 16 + 8, 4, 0x4051);
	wr(BAR1, 16 + 12, 4, 0);
	bring_up(BAR4, 0);
	wr(BAR4, COMMON(Q_MSIX), 2, 1);
	/* the request, its doorbell rung the way KVM would: on the eventfd */
	((struct virtio_blk_outhdr *)g(HDR))->type = htole32(VIRTIO_BLK_T_IN);
	((struct virtio_blk_outhdr *)g(HDR))->sector = htole64(4);
	((struct vring_desc *)g(DESC))[0] = (struct vring_desc){
		htole64(HDR), htole32(16), htole16(VRING_DESC_F_NEXT), htole16(1)};
	((struct vring_desc *)g(DESC))[1] =
		(struct vring_desc){htole64(DATA), htole32(512),
				    htole16(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE), htole16(2)};
	((struct vring_desc *)g(DESC))[2] =
		(struct vring_desc){htole64(STATUS), htole32(1), htole16(VRING_DESC_F_WRITE), 0};
	((struct vring_avail *)g(AVAIL))->idx = htole16(1);
	ck_assert_int_eq(write(fast.fd[0], &one, sizeof(one)), sizeof(one));
	WAIT(read(fast.irqfd[1], &count, sizeof(count)) == sizeof(count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(g(DATA)[0], 4);
	ck_assert_uint_eq(fast.route_addr[1], 0xfee00000u); /* installed before the write */
	ck_assert_uint_eq(fast.route_data[1], 0x4051);
	ck_assert_uint_eq(msis(), 0); /* nothing through the slow path */
	virtio_blk_free(b);
	ck_assert_uint_eq(fast.n, 0); /* the ioeventfd is gone with the device */
	block_close(d2);
}
END_TEST

/* aio=io_uring is what serves the requests (not a silent fallback);
 * aio=threads stays threads. */
START_TEST(engine_is_the_one_asked_for)
{
	ck_assert_int_eq(virtio_blk_aio(vb), aio_mode);
}
END_TEST

#define BATCH 12
#define FLUSH_AT 6

/* BATCH chains in one doorbell: writes of sectors 20.., a flush, then
 * reads of them back, each with its own header, data and status. The
 * flush's status only arrives once the writes before it are in. */
/* Queue 0 with 64 entries, the driver ready: room for a batch. */
static void bring_up_batch(void)
{
	ck_assert_uint_eq(negotiate(BAR4, 1ull << VIRTIO_F_VERSION_1), 0x0b);
	wr(BAR4, COMMON(Q_SELECT), 2, 0);
	wr(BAR4, COMMON(Q_SIZE), 2, 64);
	wr(BAR4, COMMON(Q_DESCLO), 4, DESC);
	wr(BAR4, COMMON(Q_AVAILLO), 4, AVAIL);
	wr(BAR4, COMMON(Q_USEDLO), 4, USED);
	wr(BAR4, COMMON(Q_ENABLE), 2, 1);
	wr(BAR4, COMMON(STATUS), 1, 0x0f);
}

START_TEST(batch_of_requests_in_one_kick)
{
	struct vring_desc *d = (struct vring_desc *)g(DESC);
	struct vring_avail *a = (struct vring_avail *)g(AVAIL);
	struct vring_used *u = (struct vring_used *)g(USED);

	bring_up_batch();
	for (unsigned i = 0; i < BATCH; i++) {
		struct virtio_blk_outhdr *h = (void *)g(HDR + 16 * i);
		bool flush = i == FLUSH_AT, rd_back = i > FLUSH_AT;
		uint64_t data = DATA + 512 * i;

		h->type = htole32(flush	    ? VIRTIO_BLK_T_FLUSH
				  : rd_back ? VIRTIO_BLK_T_IN
					    : VIRTIO_BLK_T_OUT);
		h->sector = htole64(rd_back ? 20 + i - FLUSH_AT - 1 : 20 + i);
		memset(g(data), rd_back ? 0 : 0xa0 + (int)i, 512);
		*g(STATUS + i) = 0xee;
		d[3 * i] = (struct vring_desc){htole64(HDR + 16 * i), htole32(16),
					       htole16(VRING_DESC_F_NEXT),
					       htole16((uint16_t)(3 * i + (flush ? 2 : 1)))};
		d[3 * i + 1] = (struct vring_desc){
			htole64(data), htole32(512),
			htole16(VRING_DESC_F_NEXT | (rd_back ? VRING_DESC_F_WRITE : 0)),
			htole16((uint16_t)(3 * i + 2))};
		d[3 * i + 2] = (struct vring_desc){htole64(STATUS + i), htole32(1),
						   htole16(VRING_DESC_F_WRITE), 0};
		a->ring[i] = htole16((uint16_t)(3 * i));
	}
	__atomic_store_n(&a->idx, htole16(BATCH), __ATOMIC_RELEASE);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	WAIT(le16toh(__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE)) == BATCH);
	for (unsigned i = 0; i < BATCH; i++)
		ck_assert_msg(*g(STATUS + i) == VIRTIO_BLK_S_OK, "request %u: status %u", i,
			      *g(STATUS + i));
	/* the reads after the flush see the writes before it */
	for (unsigned i = FLUSH_AT + 1; i < BATCH; i++) {
		ck_assert_uint_eq(g(DATA + 512 * i)[0], 0xa0 + i - FLUSH_AT - 1);
		ck_assert_uint_eq(g(DATA + 512 * i)[511], 0xa0 + i - FLUSH_AT - 1);
	}
	for (unsigned i = 0; i < BATCH; i++) {
		unsigned e = le32toh(u->ring[i].id) / 3;

		ck_assert_uint_eq(le32toh(u->ring[i].len), e > FLUSH_AT ? 513 : 1);
	}
}
END_TEST

/* On a qcow2 overlay, a write filling part of a new cluster copies the
 * rest from the backing file in flight; a WRITE_ZEROES to another part of
 * that cluster in the same kick must not be undone by that copy. */
START_TEST(write_zeroes_beside_a_write_in_flight)
{
	struct vring_desc *d = (struct vring_desc *)g(DESC);
	struct vring_avail *a = (struct vring_avail *)g(AVAIL);
	struct vring_used *u = (struct vring_used *)g(USED);
	struct virtio_blk_discard_write_zeroes *r = (void *)g(DATA + 512);
	struct virtio_blk_outhdr *h = (void *)g(HDR);
	char base[64], cmd[256];

	virtio_blk_free(vb);
	block_close(disk);
	snprintf(base, sizeof(base), "%s", img);
	strcat(img, ".qcow2");
	snprintf(cmd, sizeof(cmd), "qemu-img create -q -f qcow2 -b %s -F raw %s", base, img);
	ck_assert_int_eq(system(cmd), 0);
	vb = make_blk(2 << 3, false, NULL, &disk);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
	bring_up_batch();
	h[0] = (struct virtio_blk_outhdr){htole32(VIRTIO_BLK_T_OUT), 0, htole64(2)};
	h[1] = (struct virtio_blk_outhdr){htole32(VIRTIO_BLK_T_WRITE_ZEROES), 0, 0};
	memset(g(DATA), 0xab, 512);
	*r = (struct virtio_blk_discard_write_zeroes){htole64(8), htole32(2), 0};
	for (unsigned i = 0; i < 2; i++) {
		d[3 * i] = (struct vring_desc){htole64(HDR + 16 * i), htole32(16),
					       htole16(VRING_DESC_F_NEXT), htole16(3 * i + 1)};
		d[3 * i + 1] = (struct vring_desc){htole64(i ? DATA + 512 : DATA),
						   htole32(i ? sizeof(*r) : 512),
						   htole16(VRING_DESC_F_NEXT), htole16(3 * i + 2)};
		d[3 * i + 2] = (struct vring_desc){htole64(STATUS + i), htole32(1),
						   htole16(VRING_DESC_F_WRITE), 0};
		a->ring[i] = htole16((uint16_t)(3 * i));
		*g(STATUS + i) = 0xee;
	}
	__atomic_store_n(&a->idx, htole16(2), __ATOMIC_RELEASE);
	wr(BAR4, VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	WAIT(le16toh(__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE)) == 2);
	ck_assert_uint_eq(*g(STATUS), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(*g(STATUS + 1), VIRTIO_BLK_S_OK);
	/* sectors 0-15 read back: backing, the write, backing, zeroes, backing */
	for (unsigned s = 0; s < 16; s++) {
		uint8_t want = s == 2 ? 0xab : s == 8 || s == 9 ? 0 : (uint8_t)s;
		uint8_t sec[512];

		ck_assert_int_eq(block_read(disk, s, sec, 1), 0);
		ck_assert_msg(sec[0] == want && sec[511] == want, "sector %u reads %#x, not %#x", s,
			      sec[0], want);
	}
	unlink(base);
}
END_TEST

/* Where the kernel refuses io_uring_setup (a seccomp filter here), the
 * device says so once and serves its requests on its I/O thread. */
static void refuse_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

START_TEST(io_uring_refused_falls_back)
{
	struct block_dev *d2;
	struct virtio_blk *other;
	char msg[256] = "";
	int pipefd[2], saved = dup(2);
	ssize_t n;

	/* the filter stays with the process: only in check's forked tests */
	if (getenv("CK_FORK") && !strcmp(getenv("CK_FORK"), "no"))
		return;
	ck_assert_int_eq(pipe(pipefd), 0);
	dup2(pipefd[1], 2);
	refuse_io_uring();
	other = make_blk(3 << 3, false, NULL, &d2);
	ck_assert_int_eq(virtio_blk_aio(other), BLOCK_AIO_THREADS);
	dup2(saved, 2);
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	ck_assert_msg(n > 0 && strstr(msg, "io_uring unavailable") && strstr(msg, "aio=threads"),
		      "stderr: '%s'", msg);
	/* the first device (made before the filter) keeps its engine, and
	 * the fallback serves requests: read sector 9 on the other one */
	ck_assert_int_eq(virtio_blk_aio(vb), BLOCK_AIO_IO_URING);
	virtio_blk_free(vb);
	vb = other;
	pci_cfg_write(bus, 3 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 3 << 3, 0x04, 2, 0x2);
	bring_up(BAR4, 0);
	ck_assert_uint_eq(blk_request(VIRTIO_BLK_T_IN, 9, 512, true), VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(g(DATA)[0], 9);
	block_close(disk);
	disk = d2;
}
END_TEST

static Suite *blk_suite(void)
{
	Suite *s = suite_create("virtio_blk");
	TCase *tc = tcase_create("virtio-blk-pci");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, pci_identity_and_capabilities);
	tcase_add_test(tc, feature_negotiation);
	tcase_add_test(tc, reset_clears_queues);
	tcase_add_test(tc, config_space_and_generation);
	tcase_add_test(tc, read_request_with_intx);
	tcase_add_test(tc, write_flush_and_errors);
	tcase_add_test(tc, read_only_rejects_writes);
	tcase_add_test(tc, last_of_64_queues_interrupts);
	tcase_add_test(tc, get_id_discard_write_zeroes);
	tcase_add_test(tc, short_header_needs_reset);
	tcase_add_test(tc, missing_status_needs_reset);
	tcase_add_test(tc, descriptor_loop_needs_reset);
	tcase_add_test(tc, msix_delivery_masking_and_pending);
	tcase_add_test(tc, ioeventfd_and_irqfd_path);
	tcase_add_test(tc, engine_is_the_one_asked_for);
	tcase_add_test(tc, batch_of_requests_in_one_kick);
	suite_add_tcase(s, tc);
	/* the same requests through the io_uring engine */
	tc = tcase_create("virtio-blk-pci aio=io_uring");
	tcase_add_checked_fixture(tc, setup_uring, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, read_request_with_intx);
	tcase_add_test(tc, write_flush_and_errors);
	tcase_add_test(tc, read_only_rejects_writes);
	tcase_add_test(tc, last_of_64_queues_interrupts);
	tcase_add_test(tc, get_id_discard_write_zeroes);
	tcase_add_test(tc, short_header_needs_reset);
	tcase_add_test(tc, reset_clears_queues);
	tcase_add_test(tc, msix_delivery_masking_and_pending);
	tcase_add_test(tc, ioeventfd_and_irqfd_path);
	tcase_add_test(tc, engine_is_the_one_asked_for);
	tcase_add_test(tc, batch_of_requests_in_one_kick);
	tcase_add_test(tc, write_zeroes_beside_a_write_in_flight);
	tcase_add_test(tc, io_uring_refused_falls_back);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(blk_suite());
}
