/* Unit tests for virtio-net (devices/virtio/net.c, net_rx.c) on a fake
 * backend and a fake host (real PCI/MMIO buses, malloc'ed guest RAM, no
 * KVM): the transmit header checks, frames to the backend, mergeable and
 * single-buffer receive filling with crafted chains, the backlog, the
 * control queue (MAC address, RX mode filter), link status, malformed
 * chains (dropped and counted, or DEVICE_NEEDS_RESET), and multiqueue on
 * a two-queue backend (VQ_PAIRS_SET, frames steered by queue). */
#include <check.h>
#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/devices/pc_host.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define RING(q) (0x10000u + 0x4000u * (q))
#define BUF 0x40000u /* buffers: 0x800 bytes apart */
#define MAXF 8
/* the queues: receive, transmit, (a second pair with MQ,) control */
#define NET_RXQ_INDEX 0
#define NET_TXQ_INDEX 1
#define NET_CTRLQ_INDEX (nq - 1)
#define MAXQ 5
static unsigned nq = 3;

static const uint8_t our_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

/* ---------------------------------------------------------- fake backend */

struct fake {
	struct netdev nd;
	int efd;
	/* sent by the guest */
	unsigned n_sent;
	struct virtio_net_hdr sent_hdr[MAXF];
	unsigned sent_q[MAXF];
	uint8_t sent[MAXF][4096];
	size_t sent_len[MAXF];
	/* to inject on the next poll; the test thread adds while the
	 * device's poll thread delivers, so both hold inject_lock */
	pthread_mutex_t inject_lock;
	unsigned n_inject;
	uint8_t inject[MAXF][4096];
	size_t inject_len[MAXF];
	unsigned inject_q[MAXF]; /* the backend queue it comes from */
};

static struct fake fk;

static int fake_send(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		     const struct iovec *iov, int iovcnt, size_t len)
{
	size_t off = 0;

	if (fk.n_sent == MAXF || len > sizeof(fk.sent[0]))
		return -1;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(fk.sent[fk.n_sent] + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	ck_assert_uint_eq(off, len);
	fk.sent_hdr[fk.n_sent] = *hdr;
	fk.sent_q[fk.n_sent] = q;
	fk.sent_len[fk.n_sent++] = len;
	return 0;
}

static int fake_fd(struct netdev *nd)
{
	return fk.efd;
}

static void fake_poll(struct netdev *nd)
{
	struct virtio_net_hdr h = {.flags = VIRTIO_NET_HDR_F_DATA_VALID};
	uint64_t v;

	if (read(fk.efd, &v, sizeof(v)) < 0)
		return;
	pthread_mutex_lock(&fk.inject_lock);
	for (unsigned i = 0; i < fk.n_inject; i++)
		nd->rx(nd->rx_opaque, fk.inject_q[i], &h, fk.inject[i], fk.inject_len[i]);
	fk.n_inject = 0;
	pthread_mutex_unlock(&fk.inject_lock);
}

static int fake_info(struct netdev *nd, char *buf, size_t len)
{
	return snprintf(buf, len, "fake");
}

static void fake_free(struct netdev *nd)
{
}

static const struct netdev_ops fake_ops = {
	.type = "fake",
	.send = fake_send,
	.fd = fake_fd,
	.poll = fake_poll,
	.info = fake_info,
	.free = fake_free,
};

/* ---------------------------------------------------------- the machine */

static struct fake_host th;
static struct pci_bus *bus;
static struct virtio_net *vn;
static uint16_t next_avail[MAXQ], next_desc[MAXQ];
static bool event_idx;
static uint16_t kicked_at[MAXQ];

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

static void wr(uint32_t off, unsigned size, uint32_t v)
{
	iobus_write(th.host.mmio, BAR4 + off, &v, size);
}

#define COMMON(f) (VIRTIO_PCI_COMMON_OFF + VIRTIO_PCI_COMMON_##f)
#define WAIT(cond)                                                                                 \
	do {                                                                                       \
		bool ok_ = false;                                                                  \
		for (int w_ = 0; w_ < 2000 && !(ok_ = (cond)); w_++)                               \
			usleep(1000);                                                              \
		ck_assert_msg(ok_, "timed out waiting for %s", #cond);                             \
	} while (0)

static uint16_t used_idx(unsigned q)
{
	struct vring_used *u = (struct vring_used *)g(RING(q) + 0x2000);

	return le16toh(__atomic_load_n(&u->idx, __ATOMIC_ACQUIRE));
}

static struct vring_used_elem used_elem(unsigned q, unsigned i)
{
	struct vring_used *u = (struct vring_used *)g(RING(q) + 0x2000);

	return u->ring[i % QSIZE];
}

static void bring_up(uint64_t features)
{
	wr(COMMON(STATUS), 1, 0);
	wr(COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(COMMON(GFSELECT), 4, 0);
	wr(COMMON(GF), 4, (uint32_t)features);
	wr(COMMON(GFSELECT), 4, 1);
	wr(COMMON(GF), 4, (uint32_t)(features >> 32));
	wr(COMMON(STATUS), 1, 0x0b);
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0b);
	for (unsigned q = 0; q < nq; q++) {
		memset(g(RING(q)), 0, 0x3000); /* fresh rings, as a driver makes */
		wr(COMMON(Q_SELECT), 2, q);
		wr(COMMON(Q_SIZE), 2, QSIZE);
		wr(COMMON(Q_DESCLO), 4, RING(q));
		wr(COMMON(Q_AVAILLO), 4, RING(q) + 0x1000);
		wr(COMMON(Q_USEDLO), 4, RING(q) + 0x2000);
		wr(COMMON(Q_ENABLE), 2, 1);
		next_avail[q] = next_desc[q] = kicked_at[q] = 0;
	}
	event_idx = features >> VIRTIO_RING_F_EVENT_IDX & 1;
	wr(COMMON(STATUS), 1, 0x0f);
}

#define BASE_FEATURES                                                                              \
	(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_NET_F_MAC | 1ull << VIRTIO_NET_F_STATUS |     \
	 1ull << VIRTIO_NET_F_CTRL_VQ | 1ull << VIRTIO_NET_F_CTRL_RX |                             \
	 1ull << VIRTIO_NET_F_CTRL_MAC_ADDR | 1ull << VIRTIO_NET_F_GUEST_CSUM |                    \
	 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_HOST_TSO4)

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool writable;
};

/* Put a chain on queue q (no doorbell). */
static void post(unsigned q, const struct seg *s, unsigned n)
{
	struct vring_desc *d = (struct vring_desc *)g(RING(q));
	struct vring_avail *a = (struct vring_avail *)g(RING(q) + 0x1000);
	uint16_t head = next_desc[q] % QSIZE;

	for (unsigned i = 0; i < n; i++) {
		uint16_t k = (uint16_t)((head + i) % QSIZE);

		d[k].addr = htole64(s[i].gpa);
		d[k].len = htole32(s[i].len);
		d[k].flags = htole16((i + 1 < n ? VRING_DESC_F_NEXT : 0) |
				     (s[i].writable ? VRING_DESC_F_WRITE : 0));
		d[k].next = htole16((uint16_t)((k + 1) % QSIZE));
	}
	next_desc[q] = (uint16_t)(next_desc[q] + n);
	a->ring[next_avail[q] % QSIZE] = htole16(head);
	__atomic_store_n(&a->idx, htole16(++next_avail[q]), __ATOMIC_RELEASE);
}

/* A doorbell, unless the device suppressed it (as a driver does: with
 * EVENT_IDX only when avail->idx passed avail_event). */
static void kick(unsigned q)
{
	uint16_t *avail_event = (uint16_t *)g(RING(q) + 0x2000 + 4 + 8 * QSIZE);

	if (event_idx && !vring_need_event(le16toh(__atomic_load_n(avail_event, __ATOMIC_ACQUIRE)),
					   next_avail[q], kicked_at[q])) {
		kicked_at[q] = next_avail[q];
		return;
	}
	kicked_at[q] = next_avail[q];
	wr(VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * q, 2, (uint16_t)q);
}

/* A frame to dst from backend queue bq. */
static void inject_from(unsigned bq, const uint8_t *dst, size_t len, uint8_t fill)
{
	uint8_t *f;
	uint64_t one = 1;

	pthread_mutex_lock(&fk.inject_lock);
	ck_assert_uint_lt(fk.n_inject, MAXF);
	f = fk.inject[fk.n_inject];
	fk.inject_q[fk.n_inject] = bq;
	memcpy(f, dst, 6);
	memset(f + 6, 0x02, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(fill + i);
	fk.inject_len[fk.n_inject++] = len;
	pthread_mutex_unlock(&fk.inject_lock);
	ck_assert_int_eq(write(fk.efd, &one, sizeof(one)), 8);
}

static void inject(const uint8_t *dst, size_t len, uint8_t fill)
{
	inject_from(0, dst, len, fill);
}

/* queues: the backend's; more than one is MQ (mq=on). */
static void setup_queues(unsigned queues)
{
	struct virtio_net_opts o = {&fk.nd, {0}, 1500, 2 << 3, "net0", queues > 1};
	char err[256];

	memset(&fk, 0, sizeof(fk));
	fk.nd.ops = &fake_ops;
	fk.nd.queues = queues;
	nq = 2 * queues + 1;
	fk.nd.offloads = NETDEV_OFF_CSUM | NETDEV_OFF_TSO4;
	fk.efd = eventfd(0, EFD_NONBLOCK);
	pthread_mutex_init(&fk.inject_lock, NULL);
	memcpy(o.mac, our_mac, 6);
	test_host_init(&th);
	bus = pci_bus_new(&th.host);
	vn = virtio_net_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(vn, "%s", err);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
}

static void setup(void)
{
	setup_queues(1);
}

static void setup_mq(void)
{
	setup_queues(2);
}

static void teardown(void)
{
	virtio_net_free(vn);
	pci_bus_free(bus);
	test_host_fini(&th);
	close(fk.efd);
	pthread_mutex_destroy(&fk.inject_lock);
}

static struct virtio_net_stats stats(void)
{
	struct virtio_net_info in;

	virtio_net_get_info(vn, &in);
	return in.stats;
}

/* ------------------------------------------------------- header checks */

START_TEST(header_validation)
{
	uint64_t f = BASE_FEATURES;
	struct virtio_net_hdr h = {0};
	const char *why = NULL;

	ck_assert_int_eq(virtio_net_check_hdr(&h, 60, f, 1500, &why), 0);
	ck_assert_int_lt(virtio_net_check_hdr(&h, 10, f, 1500, &why), 0); /* runt */
	ck_assert_int_lt(virtio_net_check_hdr(&h, 1515 + 4, f, 1500, &why), 0);
	ck_assert_str_eq(why, "frame over the MTU without GSO");
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h.csum_start = htole16(34);
	h.csum_offset = htole16(16);
	ck_assert_int_eq(virtio_net_check_hdr(&h, 60, f, 1500, &why), 0);
	ck_assert_int_lt(virtio_net_check_hdr(&h, 51, f, 1500, &why), 0); /* 34+16+2 > 51 */
	ck_assert_str_eq(why, "checksum offsets past the end of the frame");
	ck_assert_int_lt(virtio_net_check_hdr(&h, 60, f & ~(1ull << VIRTIO_NET_F_CSUM), 1500, &why),
			 0);
	h.flags = 0x80; /* unknown flag */
	ck_assert_int_lt(virtio_net_check_hdr(&h, 60, f, 1500, &why), 0);
	/* TSO */
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h.gso_size = htole16(1448);
	ck_assert_int_eq(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
	h.gso_size = 0;
	ck_assert_int_lt(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
	ck_assert_str_eq(why, "GSO frame with gso_size 0");
	h.gso_size = htole16(1448);
	ck_assert_int_lt(virtio_net_check_hdr(&h, 70000, f, 1500, &why), 0);
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV6; /* HOST_TSO6 not negotiated */
	ck_assert_int_lt(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
	h.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	ck_assert_int_lt(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN; /* no HOST_ECN */
	ck_assert_int_lt(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
	h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h.flags = 0; /* GSO without a partial checksum */
	ck_assert_int_lt(virtio_net_check_hdr(&h, 30000, f, 1500, &why), 0);
}
END_TEST

/* ------------------------------------------------------------ transmit */

static void put_tx_frame(uint64_t gpa, size_t len, const struct virtio_net_hdr *h)
{
	memset(g(gpa), 0, 12);
	memcpy(g(gpa), h, sizeof(*h));
	for (size_t i = 0; i < len; i++)
		g(gpa + 12)[i] = (uint8_t)(i * 7);
}

START_TEST(transmit_to_backend_and_bad_headers)
{
	struct virtio_net_hdr ok = {0}, bad = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
					       .csum_start = htole16(500)};

	bring_up(BASE_FEATURES);
	/* header and frame in separate descriptors, the frame split in two */
	put_tx_frame(BUF, 100, &ok);
	post(NET_TXQ_INDEX,
	     (struct seg[]){{BUF, 12, false}, {BUF + 12, 40, false}, {BUF + 52, 60, false}}, 3);
	put_tx_frame(BUF + 0x800, 100, &bad); /* csum_start past the frame */
	post(NET_TXQ_INDEX, (struct seg[]){{BUF + 0x800, 112, false}}, 1);
	post(NET_TXQ_INDEX, (struct seg[]){{BUF + 0x800, 8, false}}, 1); /* no header */
	kick(NET_TXQ_INDEX);
	WAIT(used_idx(NET_TXQ_INDEX) == 3);
	ck_assert_uint_eq(fk.n_sent, 1);
	ck_assert_uint_eq(fk.sent_len[0], 100);
	for (unsigned i = 0; i < 100; i++)
		ck_assert_uint_eq(fk.sent[0][i], (uint8_t)(i * 7));
	ck_assert_uint_eq(stats().tx_bad_hdr, 1);
	ck_assert_uint_eq(stats().tx_bad_chain, 1);
	ck_assert_uint_eq(stats().tx_frames, 1);
	/* dropped frames break nothing */
	ck_assert(!(rd(COMMON(STATUS), 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	post(NET_TXQ_INDEX, (struct seg[]){{BUF, 112, false}}, 1);
	kick(NET_TXQ_INDEX);
	WAIT(used_idx(NET_TXQ_INDEX) == 4);
	ck_assert_uint_eq(fk.n_sent, 2);
}
END_TEST

START_TEST(malformed_tx_chain_needs_reset)
{
	struct vring_desc *d = (struct vring_desc *)g(RING(NET_TXQ_INDEX));

	bring_up(BASE_FEATURES);
	post(NET_TXQ_INDEX, (struct seg[]){{BUF, 60, false}, {BUF, 60, false}}, 2);
	d[1].next = htole16(0); /* a loop */
	d[1].flags = htole16(VRING_DESC_F_NEXT);
	kick(NET_TXQ_INDEX);
	WAIT(rd(COMMON(STATUS), 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(fk.n_sent, 0);
	/* a reset cures it */
	bring_up(BASE_FEATURES);
	ck_assert(!(rd(COMMON(STATUS), 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	put_tx_frame(BUF, 60, &(struct virtio_net_hdr){0});
	post(NET_TXQ_INDEX, (struct seg[]){{BUF, 72, false}}, 1);
	kick(NET_TXQ_INDEX);
	WAIT(fk.n_sent == 1);
}
END_TEST

/* ------------------------------------------------------------- receive */

static void post_rx(unsigned n, uint32_t len)
{
	static unsigned k;

	for (unsigned i = 0; i < n; i++, k++)
		post(NET_RXQ_INDEX, (struct seg[]){{BUF + 0x800u * (k % 32), len, true}}, 1);
}

/* Byte i of the frame a chain of receive buffers holds (after the header
 * in the first). */
static void check_rx(unsigned first_used, unsigned nbuf, size_t len, uint8_t fill)
{
	size_t got = 0;

	for (unsigned b = 0; b < nbuf; b++) {
		struct vring_used_elem e = used_elem(NET_RXQ_INDEX, first_used + b);
		struct vring_desc *d = (struct vring_desc *)g(RING(NET_RXQ_INDEX));
		uint8_t *p = g(le64toh(d[le32toh(e.id)].addr));
		uint32_t n = le32toh(e.len), skip = b ? 0 : 12;

		if (b == 0) {
			struct virtio_net_hdr_mrg_rxbuf *h = (void *)p;

			ck_assert_uint_eq(le16toh(h->num_buffers), nbuf);
			ck_assert_uint_eq(h->hdr.flags, VIRTIO_NET_HDR_F_DATA_VALID);
			ck_assert_mem_eq(p + 12, our_mac, 6);
		}
		for (uint32_t i = skip; i < n; i++, got++)
			if (got >= 14)
				ck_assert_uint_eq(p[i], (uint8_t)(fill + got));
	}
	ck_assert_uint_eq(got, len);
}

START_TEST(mergeable_receive_spans_buffers)
{
	bring_up(BASE_FEATURES | 1ull << VIRTIO_NET_F_MRG_RXBUF);
	post_rx(4, 1000);
	kick(NET_RXQ_INDEX);
	inject(our_mac, 2500, 3); /* 12 + 2500: 1000 + 1000 + 512 */
	WAIT(used_idx(NET_RXQ_INDEX) == 3);
	ck_assert_uint_eq(le32toh(used_elem(NET_RXQ_INDEX, 0).len), 1000);
	ck_assert_uint_eq(le32toh(used_elem(NET_RXQ_INDEX, 2).len), 512);
	check_rx(0, 3, 2500, 3);
	/* one buffer left: a 1500-byte frame waits in the backlog ... */
	inject(our_mac, 1500, 9);
	usleep(50000);
	ck_assert_uint_eq(used_idx(NET_RXQ_INDEX), 3);
	/* ... until the driver adds buffers; nothing was lost */
	post_rx(2, 1000);
	kick(NET_RXQ_INDEX);
	WAIT(used_idx(NET_RXQ_INDEX) == 5);
	check_rx(3, 2, 1500, 9);
	ck_assert_uint_eq(stats().rx_frames, 2);
	ck_assert_uint_eq(stats().rx_dropped, 0);
}
END_TEST

START_TEST(single_buffer_receive_drops_what_does_not_fit)
{
	bring_up(BASE_FEATURES); /* no MRG_RXBUF */
	post_rx(2, 1000);
	kick(NET_RXQ_INDEX);
	inject(our_mac, 1200, 1); /* 1212 > 1000: dropped, buffer kept */
	inject(our_mac, 900, 5);
	WAIT(used_idx(NET_RXQ_INDEX) == 1);
	check_rx(0, 1, 900, 5);
	ck_assert_uint_eq(stats().rx_too_big, 1);
}
END_TEST

START_TEST(short_receive_buffer_needs_reset)
{
	bring_up(BASE_FEATURES | 1ull << VIRTIO_NET_F_MRG_RXBUF);
	post_rx(1, 6); /* cannot hold the 12-byte header */
	kick(NET_RXQ_INDEX);
	inject(our_mac, 100, 0);
	WAIT(rd(COMMON(STATUS), 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(used_idx(NET_RXQ_INDEX), 0);
}
END_TEST

/* -------------------------------------------------------- control queue */

static uint8_t ctrl(const void *cmd, uint32_t len)
{
	uint16_t want = (uint16_t)(used_idx(NET_CTRLQ_INDEX) + 1);

	memcpy(g(BUF + 0x10000), cmd, len);
	*g(BUF + 0x10800) = 0xee;
	post(NET_CTRLQ_INDEX, (struct seg[]){{BUF + 0x10000, len, false}, {BUF + 0x10800, 1, true}},
	     2);
	kick(NET_CTRLQ_INDEX);
	WAIT(used_idx(NET_CTRLQ_INDEX) == want);
	return *g(BUF + 0x10800);
}

START_TEST(control_queue_mac_and_rx_mode)
{
	uint8_t set_mac[8] = {VIRTIO_NET_CTRL_MAC,
			      VIRTIO_NET_CTRL_MAC_ADDR_SET,
			      0x52,
			      0x54,
			      0x00,
			      0xab,
			      0xcd,
			      0xef};
	uint8_t promisc_off[3] = {VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 0};
	uint8_t bogus[2] = {42, 0};
	static const uint8_t other[6] = {0x52, 0x54, 0x00, 0x99, 0x99, 0x99};
	struct virtio_net_info in;

	bring_up(BASE_FEATURES | 1ull << VIRTIO_NET_F_MRG_RXBUF);
	ck_assert_uint_eq(ctrl(set_mac, sizeof(set_mac)), VIRTIO_NET_OK);
	virtio_net_get_info(vn, &in);
	ck_assert_mem_eq(in.mac, set_mac + 2, 6);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 5, 1), 0xef); /* config mac */
	ck_assert_uint_eq(ctrl(promisc_off, sizeof(promisc_off)), VIRTIO_NET_OK);
	ck_assert_uint_eq(ctrl(bogus, sizeof(bogus)), VIRTIO_NET_ERR);
	post_rx(2, 2048);
	kick(NET_RXQ_INDEX);
	inject(other, 100, 0);	     /* not ours: filtered */
	inject(set_mac + 2, 100, 0); /* the new MAC */
	WAIT(used_idx(NET_RXQ_INDEX) == 1);
	ck_assert_uint_eq(stats().rx_filtered, 1);
	/* a reset brings back the configured MAC */
	bring_up(BASE_FEATURES);
	virtio_net_get_info(vn, &in);
	ck_assert_mem_eq(in.mac, our_mac, 6);
}
END_TEST

/* EVENT_IDX: the device moves avail_event after each pass, so a driver
 * that only rings when told still gets every command and frame through. */
START_TEST(event_idx_doorbells)
{
	uint8_t promisc_on[3] = {VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 1};

	bring_up(BASE_FEATURES | 1ull << VIRTIO_RING_F_EVENT_IDX);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_uint_eq(ctrl(promisc_on, sizeof(promisc_on)), VIRTIO_NET_OK);
	for (unsigned i = 0; i < 5; i++) {
		put_tx_frame(BUF, 60, &(struct virtio_net_hdr){0});
		post(NET_TXQ_INDEX, (struct seg[]){{BUF, 72, false}}, 1);
		kick(NET_TXQ_INDEX);
		WAIT(fk.n_sent == i + 1);
	}
	/* receive: the ring runs dry, the driver's refill rings */
	post_rx(1, 2048);
	kick(NET_RXQ_INDEX);
	inject(our_mac, 100, 0);
	WAIT(used_idx(NET_RXQ_INDEX) == 1);
	inject(our_mac, 100, 0);
	usleep(20000);
	post_rx(1, 2048);
	kick(NET_RXQ_INDEX);
	WAIT(used_idx(NET_RXQ_INDEX) == 2);
}
END_TEST

START_TEST(link_status_and_config_interrupt)
{
	bring_up(BASE_FEATURES);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 6, 2), VIRTIO_NET_S_LINK_UP);
	uint32_t gen = rd(COMMON(CFGGENERATION), 1);

	virtio_net_set_link(vn, false);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 6, 2), 0);
	ck_assert_uint_ne(rd(COMMON(CFGGENERATION), 1), gen);
	ck_assert_uint_eq(rd(VIRTIO_PCI_ISR_OFF, 1) & VIRTIO_PCI_ISR_CONFIG, VIRTIO_PCI_ISR_CONFIG);
	/* link down: frames either way are dropped */
	put_tx_frame(BUF, 60, &(struct virtio_net_hdr){0});
	post(NET_TXQ_INDEX, (struct seg[]){{BUF, 72, false}}, 1);
	kick(NET_TXQ_INDEX);
	WAIT(used_idx(NET_TXQ_INDEX) == 1);
	ck_assert_uint_eq(fk.n_sent, 0);
	virtio_net_set_link(vn, true);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 6, 2), VIRTIO_NET_S_LINK_UP);
}
END_TEST

/* ---------------------------------------------------------- multiqueue */

static uint8_t pairs_set(uint16_t pairs)
{
	uint8_t cmd[4] = {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET};

	pairs = htole16(pairs);
	memcpy(cmd + 2, &pairs, 2);
	return ctrl(cmd, sizeof(cmd));
}

/* A frame from backend queue bq. */
static void inject_q(unsigned bq, uint8_t fill)
{
	inject_from(bq, our_mac, 100, fill);
}

START_TEST(multiqueue_pairs_and_steering)
{
	uint64_t mq = 1ull << VIRTIO_NET_F_MQ;

	wr(COMMON(DFSELECT), 4, 0);
	ck_assert(rd(COMMON(DF), 4) & mq); /* offered: the backend has 2 queues */
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 8, 2), 2); /* max_virtqueue_pairs */
	bring_up(BASE_FEATURES | mq);
	for (unsigned q = 0; q < 4; q += 2) {
		post(q, (struct seg[]){{BUF + 0x800u * q, 0x800, true}}, 1);
		post(q, (struct seg[]){{BUF + 0x800u * (q + 1), 0x800, true}}, 1);
	}
	/* one pair until the driver says more: queue 1's frames on pair 0 */
	inject_q(1, 1);
	WAIT(used_idx(0) == 1);
	ck_assert_uint_eq(used_idx(2), 0);
	ck_assert_uint_eq(pairs_set(0), VIRTIO_NET_ERR);
	ck_assert_uint_eq(pairs_set(3), VIRTIO_NET_ERR); /* more than max */
	ck_assert_uint_eq(pairs_set(2), VIRTIO_NET_OK);
	inject_q(1, 2);
	WAIT(used_idx(2) == 1);
	inject_q(0, 3);
	WAIT(used_idx(0) == 2);
	ck_assert_uint_eq(used_idx(2), 1);
	/* transmit: pair 1's queue (3) sends on backend queue 1 */
	put_tx_frame(BUF + 0x4000, 60, &(struct virtio_net_hdr){0});
	post(3, (struct seg[]){{BUF + 0x4000, 72, false}}, 1);
	kick(3);
	WAIT(fk.n_sent == 1);
	post(NET_TXQ_INDEX, (struct seg[]){{BUF + 0x4000, 72, false}}, 1);
	kick(NET_TXQ_INDEX);
	WAIT(fk.n_sent == 2);
	ck_assert_uint_eq(fk.sent_q[0], 1);
	ck_assert_uint_eq(fk.sent_q[1], 0);
	ck_assert_uint_eq(stats().pair_tx_frames[1], 1);
	ck_assert_uint_eq(stats().pair_rx_frames[1], 1);
	ck_assert_uint_eq(stats().pair_rx_frames[0], 2);
	/* a reset goes back to one pair */
	bring_up(BASE_FEATURES | mq);
	post(0, (struct seg[]){{BUF, 0x800, true}}, 1);
	inject_q(1, 4);
	WAIT(used_idx(0) == 1);
}
END_TEST

START_TEST(multiqueue_needs_mq_negotiated)
{
	bring_up(BASE_FEATURES); /* no MQ: one pair, VQ_PAIRS_SET refused */
	ck_assert_uint_eq(pairs_set(2), VIRTIO_NET_ERR);
	post(0, (struct seg[]){{BUF, 0x800, true}}, 1);
	inject_q(1, 5);
	WAIT(used_idx(0) == 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("virtio_net");
	TCase *t = tcase_create("net");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 20);
	tcase_add_test(t, header_validation);
	tcase_add_test(t, transmit_to_backend_and_bad_headers);
	tcase_add_test(t, malformed_tx_chain_needs_reset);
	tcase_add_test(t, mergeable_receive_spans_buffers);
	tcase_add_test(t, single_buffer_receive_drops_what_does_not_fit);
	tcase_add_test(t, short_receive_buffer_needs_reset);
	tcase_add_test(t, control_queue_mac_and_rx_mode);
	tcase_add_test(t, event_idx_doorbells);
	tcase_add_test(t, link_status_and_config_interrupt);
	suite_add_tcase(s, t);
	t = tcase_create("multiqueue");
	tcase_add_checked_fixture(t, setup_mq, teardown);
	tcase_set_timeout(t, 20);
	tcase_add_test(t, multiqueue_pairs_and_steering);
	tcase_add_test(t, multiqueue_needs_mq_negotiated);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
