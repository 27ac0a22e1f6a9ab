/* Unit tests for virtio-serial-pci (devices/virtio/console.c) on the fake
 * host, driving the queues as Linux's virtio_console does: feature
 * negotiation (MULTIPORT offered, max_nr_ports in the config), the
 * control handshake (DEVICE_READY -> PORT_ADD, PORT_READY -> CONSOLE_PORT
 * / PORT_NAME / PORT_OPEN), bytes both ways, the guest's PORT_OPEN 1/0
 * reported to the host side, a backend that takes bytes a few at a time,
 * malformed control messages breaking only the device, and snapshots: a
 * device saved with a port open, a control message and host bytes not yet
 * delivered comes back with all three (and tells the guest the host end
 * is gone when the new one is not connected); bad trees are refused. */
#include <check.h>
#include <endian.h>
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
#include "tests/unit/devices/state_tree.h"

#define BAR4 0xe0000000u
#define BAR1 0xe0010000u
#define QSIZE 8
#define RAM_SIZE (8u << 20) /* room for the rings and buffers of 64 queues */
#define RINGS 0x10000u	    /* queue qi: desc +qi*0x3000, avail +0x1000, used +0x2000 */
#define BUFS 0x100000u	    /* queue qi's buffers: BUFS + qi*0x10000, 0x1000 each */
#define NQ 6		    /* max_ports 2: 2 * (2 + 1) */
#define CTRL_RX 2
#define CTRL_TX 3
#define P1_RX 4
#define P1_TX 5

static struct fake_host th;
static struct pci_bus *bus;
static struct virtio_console *dev;
static uint16_t avail_idx[VIRTIO_MAX_QUEUES], seen_used[VIRTIO_MAX_QUEUES];
static uint16_t next_desc[VIRTIO_MAX_QUEUES];
static unsigned n_queues = NQ; /* the device's, with MULTIPORT */

/* the port 1 backend */
static uint8_t host_got[1 << 16];
static size_t host_len, take_at_most = SIZE_MAX;
static int open_events[16], n_open_events;

static size_t be_write(void *opaque, const void *buf, size_t len)
{
	(void)opaque;
	if (len > take_at_most)
		len = take_at_most;
	if (len > sizeof(host_got) - host_len)
		len = sizeof(host_got) - host_len;
	memcpy(host_got + host_len, buf, len);
	host_len += len;
	return len;
}

static void be_guest_open(void *opaque, bool open)
{
	(void)opaque;
	if (n_open_events < 16)
		open_events[n_open_events++] = open;
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

static uint32_t ring(unsigned qi)
{
	return RINGS + qi * 0x3000;
}

static void setup_queue(unsigned qi)
{
	wr(COMMON(Q_SELECT), 2, qi);
	wr(COMMON(Q_SIZE), 2, QSIZE);
	wr(COMMON(Q_DESCLO), 4, ring(qi));
	wr(COMMON(Q_AVAILLO), 4, ring(qi) + 0x1000);
	wr(COMMON(Q_USEDLO), 4, ring(qi) + 0x2000);
	wr(COMMON(Q_ENABLE), 2, 1);
}

/* Reset, accept VERSION_1 (and MULTIPORT when asked), enable every queue. */
static void bring_up(bool multiport)
{
	memset(th.ram + RINGS, 0, n_queues * 0x3000);
	memset(avail_idx, 0, sizeof(avail_idx));
	memset(seen_used, 0, sizeof(seen_used));
	memset(next_desc, 0, sizeof(next_desc));
	wr(COMMON(STATUS), 1, 0);
	wr(COMMON(STATUS), 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(COMMON(GFSELECT), 4, 0);
	/* EVENT_IDX as Linux takes it: the driver rings only when the device's
	 * avail_event asks (see post) */
	wr(COMMON(GF), 4,
	   (1u << VIRTIO_RING_F_EVENT_IDX) | (multiport ? 1u << VIRTIO_CONSOLE_F_MULTIPORT : 0));
	wr(COMMON(GFSELECT), 4, 1);
	wr(COMMON(GF), 4, 1); /* VIRTIO_F_VERSION_1 */
	wr(COMMON(STATUS), 1, 0x0b);
	ck_assert_uint_eq(rd(COMMON(STATUS), 1), 0x0b);
	for (unsigned qi = 0; qi < (multiport ? n_queues : 2u); qi++)
		setup_queue(qi);
	wr(COMMON(STATUS), 1, 0x0f);
}

static void map_bars(void)
{
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_CFG_BAR, 4, BAR4);
	pci_cfg_write(bus, 2 << 3, 0x10 + 4 * VIRTIO_PCI_MSIX_BAR, 4, BAR1);
	pci_cfg_write(bus, 2 << 3, 0x04, 2, 0x2);
}

static void make_dev(void)
{
	static struct virtio_console_port_opts ports[2] = {
		{.id = 0, .console = true},
		{.id = 1, .name = "org.test.0", .write = be_write, .guest_open = be_guest_open},
	};
	struct virtio_console_opts o = {2 << 3, 2, ports, 2};
	char err[256];

	dev = virtio_console_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
	map_bars();
}

/* The MSI-X capability's table size, from configuration space. */
static unsigned msix_table_size(void)
{
	for (unsigned c = pci_cfg_read(bus, 2 << 3, 0x34, 1); c;
	     c = pci_cfg_read(bus, 2 << 3, c + 1, 1))
		if (pci_cfg_read(bus, 2 << 3, c, 1) == 0x11)
			return (pci_cfg_read(bus, 2 << 3, c + 2, 2) & 0x7ff) + 1;
	return 0;
}

static struct vring_used *used(unsigned qi)
{
	return (struct vring_used *)(th.ram + ring(qi) + 0x2000);
}

static uint16_t used_idx(unsigned qi)
{
	return le16toh(__atomic_load_n(&used(qi)->idx, __ATOMIC_ACQUIRE));
}

/* Post one buffer of len bytes on queue qi (data copied in when readable);
 * returns its guest address. */
static uint64_t post(unsigned qi, const void *data, uint32_t len, bool writable)
{
	struct vring_desc *d = (struct vring_desc *)(th.ram + ring(qi));
	struct vring_avail *a = (struct vring_avail *)(th.ram + ring(qi) + 0x1000);
	uint16_t slot = next_desc[qi]++ % QSIZE;
	uint64_t gpa = BUFS + qi * 0x10000 + slot * 0x1000;

	if (data)
		memcpy(th.ram + gpa, data, len);
	d[slot] = (struct vring_desc){htole64(gpa), htole32(len),
				      htole16(writable ? VRING_DESC_F_WRITE : 0), 0};
	uint16_t old = avail_idx[qi], event;

	a->ring[avail_idx[qi] % QSIZE] = htole16(slot);
	__atomic_store_n(&a->idx, htole16(++avail_idx[qi]), __ATOMIC_SEQ_CST);
	event = le16toh(__atomic_load_n((uint16_t *)&used(qi)->ring[QSIZE], __ATOMIC_SEQ_CST));
	if (!vring_need_event(event, avail_idx[qi], old))
		return gpa; /* the device did not ask for this doorbell */
	wr(COMMON(Q_SELECT), 2, qi);
	wr(VIRTIO_PCI_NOTIFY_OFF + rd(COMMON(Q_NOFF), 2) * VIRTIO_PCI_NOTIFY_MULT, 2, 0);
	return gpa;
}

static void ctrl_send(uint32_t id, uint16_t event, uint16_t value)
{
	uint8_t m[8];
	uint32_t lid = htole32(id);
	uint16_t le = htole16(event), lv = htole16(value);

	memcpy(m, &lid, 4);
	memcpy(m + 4, &le, 2);
	memcpy(m + 6, &lv, 2);
	post(CTRL_TX, m, 8, false);
}

static bool wait_used(unsigned qi, uint16_t want)
{
	for (int i = 0; i < 2000 && used_idx(qi) < want; i++)
		usleep(1000);
	return used_idx(qi) >= want;
}

/* The next used buffer of queue qi: its bytes (at most max) and length. */
static uint32_t next_used(unsigned qi, uint8_t *out, uint32_t max)
{
	struct vring_used_elem e;
	const struct vring_desc *d = (const struct vring_desc *)(th.ram + ring(qi));
	uint32_t len;

	ck_assert_msg(wait_used(qi, seen_used[qi] + 1), "queue %u: nothing used", qi);
	e = used(qi)->ring[seen_used[qi]++ % QSIZE];
	len = le32toh(e.len);
	if (out)
		memcpy(out, th.ram + le64toh(d[le32toh(e.id)].addr), len < max ? len : max);
	return len;
}

/* The next control message to the driver: its event, id, value. */
static void expect_ctrl(uint32_t id, uint16_t event, uint16_t value, const char *name)
{
	uint8_t m[256];
	uint32_t len = next_used(CTRL_RX, m, sizeof(m)), got_id;
	uint16_t got_event, got_value;

	ck_assert_uint_ge(len, 8);
	memcpy(&got_id, m, 4);
	memcpy(&got_event, m + 4, 2);
	memcpy(&got_value, m + 6, 2);
	ck_assert_uint_eq(le16toh(got_event), event);
	ck_assert_uint_eq(le32toh(got_id), id);
	ck_assert_uint_eq(le16toh(got_value), value);
	if (name) {
		ck_assert_uint_eq(len, 8 + strlen(name));
		ck_assert_mem_eq(m + 8, name, strlen(name));
	} else {
		ck_assert_uint_eq(len, 8);
	}
}

static bool needs_reset(void)
{
	for (int i = 0; i < 2000; i++) {
		if (virtio_pci_status(virtio_console_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET)
			return true;
		usleep(1000);
	}
	return false;
}

/* The handshake up to the named port (the device's second) ready and
 * announced. */
static void handshake_named(uint32_t id, const char *name)
{
	for (int i = 0; i < 6; i++)
		post(CTRL_RX, NULL, 256, true);
	ctrl_send(0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	expect_ctrl(0, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
	expect_ctrl(id, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
	ctrl_send(id, VIRTIO_CONSOLE_PORT_READY, 1);
	expect_ctrl(id, VIRTIO_CONSOLE_PORT_NAME, 1, name);
}

static void handshake(void)
{
	handshake_named(1, "org.test.0");
}

/* Port 1's transmit queue: the bytes reach the backend (which had none). */
static void guest_sends(const char *msg)
{
	post(P1_TX, msg, (uint32_t)strlen(msg), false);
	ck_assert_uint_eq(next_used(P1_TX, NULL, 0), 0);
	ck_assert_uint_eq(host_len, strlen(msg));
	ck_assert_mem_eq(host_got, msg, strlen(msg));
}

/* Port 0 ready (a console); port 1's host end connects, the driver
 * hears PORT_OPEN, and goes away again. */
static void console_and_host_flap(void)
{
	ctrl_send(0, VIRTIO_CONSOLE_PORT_READY, 1);
	expect_ctrl(0, VIRTIO_CONSOLE_CONSOLE_PORT, 1, NULL);
	virtio_console_host_open(dev, 1, true);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
	virtio_console_host_open(dev, 1, false);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_OPEN, 0, NULL);
}

static void setup(void)
{
	ck_assert_int_eq(fake_host_init(&th, RAM_SIZE), 0);
	n_queues = NQ;
	bus = pci_bus_new(&th.host);
	dev = NULL;
	host_len = 0;
	take_at_most = SIZE_MAX;
	n_open_events = 0;
}

static void teardown(void)
{
	virtio_console_free(dev);
	pci_bus_free(bus);
	test_host_fini(&th);
}

START_TEST(identity_and_features)
{
	make_dev();
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 0, 4), 0x10431af4); /* 0x1040 + 3 */
	ck_assert_uint_eq(pci_cfg_read(bus, 2 << 3, 8, 4) >> 8, 0x078000);
	wr(COMMON(DFSELECT), 4, 0);
	ck_assert_uint_eq(rd(COMMON(DF), 4) & 7, 1u << VIRTIO_CONSOLE_F_MULTIPORT);
	wr(COMMON(DFSELECT), 4, 1);
	ck_assert_uint_eq(rd(COMMON(DF), 4) & 1, 1); /* VERSION_1 */
	ck_assert_uint_eq(rd(COMMON(NUMQ), 2), NQ);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 4, 4), 2); /* max_nr_ports */
}
END_TEST

START_TEST(control_handshake)
{
	struct virtio_console_stats st;

	make_dev();
	bring_up(true);
	handshake();
	console_and_host_flap();
	virtio_console_get_stats(dev, &st);
	ck_assert_uint_eq(st.ctrl_out, 6);
	ck_assert_uint_eq(st.ctrl_in, 3);
	ck_assert_uint_eq(used_idx(CTRL_TX), 3);
}
END_TEST

/* The host end was connected before the driver came: PORT_OPEN follows
 * the name right away. */
START_TEST(host_open_before_ready)
{
	make_dev();
	virtio_console_host_open(dev, 1, true);
	bring_up(true);
	handshake();
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
}
END_TEST

START_TEST(guest_open_close_events)
{
	make_dev();
	bring_up(true);
	handshake();
	ck_assert_uint_eq(virtio_console_can_receive(dev, 1), 0); /* not open yet */
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 3));
	ck_assert_int_eq(n_open_events, 1);
	ck_assert_int_eq(open_events[0], 1);
	ck_assert(virtio_console_guest_open(dev, 1));
	ck_assert_uint_gt(virtio_console_can_receive(dev, 1), 0);
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 0);
	ck_assert(wait_used(CTRL_TX, 4));
	ck_assert_int_eq(n_open_events, 2);
	ck_assert_int_eq(open_events[1], 0);
	ck_assert_uint_eq(virtio_console_can_receive(dev, 1), 0);
	/* a reset closes an open port too */
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 5));
	bring_up(true);
	ck_assert_int_eq(n_open_events, 4);
	ck_assert_int_eq(open_events[3], 0);
}
END_TEST

START_TEST(data_both_ways)
{
	uint8_t buf[64];
	uint32_t len;

	make_dev();
	bring_up(true);
	handshake();
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 3));
	/* host -> guest */
	post(P1_RX, NULL, 16, true);
	virtio_console_receive(dev, 1, "hello, guest", 12);
	len = next_used(P1_RX, buf, sizeof(buf));
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(buf, "hello, guest", 12);
	/* more than one buffer holds: split over two */
	post(P1_RX, NULL, 4, true);
	post(P1_RX, NULL, 16, true);
	virtio_console_receive(dev, 1, "0123456789", 10);
	ck_assert_uint_eq(next_used(P1_RX, buf, sizeof(buf)), 4);
	ck_assert_mem_eq(buf, "0123", 4);
	ck_assert_uint_eq(next_used(P1_RX, buf, sizeof(buf)), 6);
	ck_assert_mem_eq(buf, "456789", 6);
	/* guest -> host */
	guest_sends("hello, host");
}
END_TEST

/* A backend that takes 3 bytes at a time still gets every byte, in order. */
START_TEST(slow_backend_gets_everything)
{
	char msg[100];

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (char)('a' + i % 26);
	make_dev();
	bring_up(true);
	handshake();
	take_at_most = 3;
	post(P1_TX, msg, 50, false);
	post(P1_TX, msg + 50, 50, false);
	ck_assert(wait_used(P1_TX, 2));
	ck_assert_uint_eq(host_len, 100);
	ck_assert_mem_eq(host_got, msg, 100);
}
END_TEST

/* QEMU's default bus: 31 ports, so 64 queues and more vectors than the
 * MSI-X table's 64 (the driver then shares them). The last port, on
 * queues 62 and 63, carries bytes both ways. */
START_TEST(full_bus_last_port)
{
	static struct virtio_console_port_opts ports[2] = {
		{.id = 0, .console = true},
		{.id = 30, .name = "org.test.30", .write = be_write},
	};
	struct virtio_console_opts o = {2 << 3, 31, ports, 2};
	char err[256];
	uint8_t buf[16];

	dev = virtio_console_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
	map_bars();
	ck_assert_uint_eq(rd(COMMON(NUMQ), 2), 64);
	ck_assert_uint_eq(rd(VIRTIO_PCI_DEVICE_OFF + 4, 4), 31); /* max_nr_ports */
	ck_assert_uint_eq(msix_table_size(), 64);
	n_queues = 64;
	bring_up(true);
	handshake_named(30, "org.test.30");
	ctrl_send(30, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 3));
	post(62, NULL, 16, true);
	virtio_console_receive(dev, 30, "to port 30", 10);
	ck_assert_uint_eq(next_used(62, buf, sizeof(buf)), 10);
	ck_assert_mem_eq(buf, "to port 30", 10);
	post(63, "from 30", 7, false);
	ck_assert_uint_eq(next_used(63, NULL, 0), 0);
	ck_assert_uint_eq(host_len, 7);
	ck_assert_mem_eq(host_got, "from 30", 7);
}
END_TEST

/* Without MULTIPORT: port 0 only, a console the guest always has open. */
START_TEST(single_port_without_multiport)
{
	uint8_t buf[16];

	make_dev();
	bring_up(false);
	post(0, NULL, 16, true);
	ck_assert_uint_gt(virtio_console_can_receive(dev, 0), 0);
	virtio_console_receive(dev, 0, "abc", 3);
	ck_assert_uint_eq(next_used(0, buf, sizeof(buf)), 3);
	ck_assert_mem_eq(buf, "abc", 3);
}
END_TEST

START_TEST(short_control_message_breaks_the_device)
{
	struct virtio_console_stats st;

	make_dev();
	bring_up(true);
	handshake();
	post(CTRL_TX, "\1\0\0\0", 4, false);
	ck_assert(needs_reset());
	ck_assert_uint_eq(used_idx(CTRL_TX), 2);
	virtio_console_get_stats(dev, &st);
	ck_assert_uint_eq(st.ctrl_bad, 1);
	bring_up(true); /* a reset brings it back */
	handshake();
}
END_TEST

/* Unknown events and port ids are only counted; the device goes on. */
START_TEST(unknown_control_messages_ignored)
{
	struct virtio_console_stats st;

	make_dev();
	bring_up(true);
	handshake();
	ctrl_send(7, VIRTIO_CONSOLE_PORT_OPEN, 1); /* no port 7 */
	ctrl_send(1, 0x1234, 1);		   /* no such event */
	ctrl_send(0xffffffffu, VIRTIO_CONSOLE_PORT_READY, 1);
	ck_assert(wait_used(CTRL_TX, 5));
	ck_assert(
		!(virtio_pci_status(virtio_console_transport(dev)) & VIRTIO_CONFIG_S_NEEDS_RESET));
	virtio_console_get_stats(dev, &st);
	ck_assert_uint_eq(st.ctrl_ignored, 3);
	ck_assert_int_eq(n_open_events, 0);
	ctrl_send(0, VIRTIO_CONSOLE_PORT_READY, 1);
	expect_ctrl(0, VIRTIO_CONSOLE_CONSOLE_PORT, 1, NULL);
}
END_TEST

START_TEST(readonly_receive_buffer_breaks_the_device)
{
	make_dev();
	bring_up(true);
	handshake();
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 3));
	post(P1_RX, "xxxx", 4, false);
	virtio_console_receive(dev, 1, "abc", 3);
	ck_assert(needs_reset());
	ck_assert_uint_eq(used_idx(P1_RX), 0);
}
END_TEST

START_TEST(bad_options_refused)
{
	struct virtio_console_port_opts p[2] = {{.id = 1}, {.id = 1}};
	struct virtio_console_opts o = {-1, 2, p, 2};
	char err[256] = "";

	ck_assert_ptr_null(virtio_console_new(&th.host, bus, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "two ports"));
	o = (struct virtio_console_opts){-1, 2, p, 1};
	p[0].id = 2;
	ck_assert_ptr_null(virtio_console_new(&th.host, bus, &o, err, sizeof(err)));
	o.max_ports = VIRTIO_CONSOLE_MAX_PORTS + 1;
	ck_assert_ptr_null(virtio_console_new(&th.host, bus, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "max_ports"));
}
END_TEST

/* ---------------------------------------------- ports added at run time */

static const struct virtio_console_port_opts hot_port = {
	.id = 1, .name = "org.hot.0", .write = be_write, .guest_open = be_guest_open};

/* device_del then device_add of port 1 while the driver runs: PORT_REMOVE,
 * nothing of the old port served, then PORT_ADD and the new name. */
START_TEST(port_removed_and_added_live)
{
	char err[256];

	make_dev();
	bring_up(true);
	handshake();
	ck_assert_int_eq(virtio_console_port_remove(dev, 1), 0);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_REMOVE, 1, NULL);
	post(P1_TX, "lost", 4, false);
	usleep(20000);
	ck_assert_uint_eq(used_idx(P1_TX), 0);
	ck_assert_uint_eq(host_len, 0);
	ck_assert_int_eq(virtio_console_port_add(dev, &hot_port, err, sizeof(err)), 0);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
	ctrl_send(1, VIRTIO_CONSOLE_PORT_READY, 1);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_NAME, 1, "org.hot.0");
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 4)); /* the handshake's 2, READY, OPEN */
	ck_assert(virtio_console_guest_open(dev, 1));
	/* the chain posted while the port was gone goes to the new backend */
	ck_assert_uint_eq(next_used(P1_TX, NULL, 0), 0);
	ck_assert_mem_eq(host_got, "lost", 4);
}
END_TEST

/* A port added before the driver is up is announced by DEVICE_READY,
 * once. */
START_TEST(port_added_before_driver)
{
	static struct virtio_console_port_opts only_console = {.id = 0, .console = true};
	struct virtio_console_opts o = {2 << 3, 2, &only_console, 1};
	char err[256];

	dev = virtio_console_new(&th.host, bus, &o, err, sizeof(err));
	ck_assert_msg(dev, "%s", err);
	map_bars();
	ck_assert_int_eq(virtio_console_port_add(dev, &hot_port, err, sizeof(err)), 0);
	bring_up(true);
	handshake_named(1, "org.hot.0");
	ck_assert_uint_eq(used_idx(CTRL_RX), 3); /* PORT_ADD 0, 1, PORT_NAME */
}
END_TEST

START_TEST(bad_port_add_and_remove_refused)
{
	struct virtio_console_port_opts p = hot_port;
	char err[256] = "", name[VIRTIO_CONSOLE_NAME_MAX + 2];

	make_dev();
	bring_up(true);
	handshake();
	ck_assert_int_eq(virtio_console_port_add(dev, &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "already in use"));
	p.id = 2;
	ck_assert_int_eq(virtio_console_port_add(dev, &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "max_ports"));
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	p = (struct virtio_console_port_opts){.id = 1, .name = name};
	ck_assert_int_eq(virtio_console_port_remove(dev, 1), 0);
	ck_assert_int_eq(virtio_console_port_add(dev, &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "name longer"));
	ck_assert_int_eq(virtio_console_port_remove(dev, 1), -1); /* already gone */
	ck_assert_int_eq(virtio_console_port_remove(dev, 2), -1);
	ck_assert_int_eq(virtio_console_port_remove(dev, 4000000000u), -1);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_REMOVE, 1, NULL); /* one, for the one removal */
	usleep(20000);
	ck_assert_uint_eq(used_idx(CTRL_RX), 4);
	ck_assert(!needs_reset());
}
END_TEST

/* ----------------------------------------------------------- snapshots */

#define NODE "/devices/virtio-serial@0"

static void save_serial(void *d, struct state_writer *w)
{
	ck_assert_int_eq(virtio_pci_save(virtio_console_transport(d), w, "virtio-serial@0",
					 state_err, sizeof(state_err)),
			 0);
}

static int load_serial(void *d, const struct state_reader *r, char *e, size_t elen)
{
	return virtio_pci_load(virtio_console_transport(d), r, "virtio-serial@0", e, elen);
}

/* Port 1 open both ways, its host end's last PORT_OPEN still in the
 * outbox (no control buffer left), host bytes waiting for a receive
 * buffer: the tree. */
static void *busy_serial_tree(size_t *len)
{
	make_dev();
	bring_up(true);
	handshake();		 /* 3 of the 6 control buffers */
	console_and_host_flap(); /* the other 3 */
	ctrl_send(1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	ck_assert(wait_used(CTRL_TX, 4));
	virtio_console_host_open(dev, 1, true); /* no buffer for this one */
	virtio_console_receive(dev, 1, "pending", 7);
	usleep(20000);
	ck_assert_uint_eq(used_idx(CTRL_RX), 6);
	return save_tree(save_serial, dev, len);
}

START_TEST(snapshot_keeps_ports_and_pending)
{
	uint8_t buf[16];
	size_t len;
	void *blob = busy_serial_tree(&len);

	virtio_console_free(dev);
	n_open_events = 0;
	make_dev(); /* its host end is not connected */
	ck_assert_msg(load_tree(load_serial, dev, blob, len) == 0, "%s", state_err);
	/* the guest's open port is reported again */
	ck_assert_int_eq(n_open_events, 1);
	ck_assert_int_eq(open_events[0], 1);
	ck_assert(virtio_console_guest_open(dev, 1));
	/* the message the source had not delivered, then the news that the
	 * host end here is not connected */
	post(CTRL_RX, NULL, 256, true);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
	post(CTRL_RX, NULL, 256, true);
	expect_ctrl(1, VIRTIO_CONSOLE_PORT_OPEN, 0, NULL);
	/* the host's bytes, and the guest's next ones reach the backend */
	post(P1_RX, NULL, 16, true);
	ck_assert_uint_eq(next_used(P1_RX, buf, sizeof(buf)), 7);
	ck_assert_mem_eq(buf, "pending", 7);
	guest_sends("after");
	free(blob);
}
END_TEST

static void serial_refused(const void *good, size_t len, const char *node, const char *prop,
			   uint32_t v, int size, const char *what)
{
	void *b = patched_copy(good, len, node, prop, v, size);

	virtio_console_free(dev);
	make_dev();
	ck_assert_int_eq(load_tree(load_serial, dev, b, len), -1);
	ck_assert_msg(strstr(state_err, what), "'%s' lacks '%s'", state_err, what);
	free(b);
}

START_TEST(snapshot_bad_trees_refused)
{
	size_t len;
	void *good = busy_serial_tree(&len);

	serial_refused(good, len, NODE, "max-ports", 3, 4, "max-ports 3");
	serial_refused(good, len, NODE, "ports", 1, 4, "ports 0x1");
	serial_refused(good, len, NODE, "ctrl-pending", 65, 4, "ctrl-pending");
	serial_refused(good, len, NODE "/port@1", "rx-len", 4097, 4, "rx-len");
	serial_refused(good, len, NODE "/port@1", "guest-open", 2, 1, "guest-open");
	serial_refused(good, len, NODE "/port@0", "console", 0, 1, "another kind");
	serial_refused(good, len, NODE "/ctrl@0", "len", 7, 2, "len 7");
	serial_refused(good, len, NODE "/ctrl@0", "len", 200, 2, "len 200");
	free(good);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("virtio_console");
	TCase *t = tcase_create("device");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, identity_and_features);
	tcase_add_test(t, control_handshake);
	tcase_add_test(t, host_open_before_ready);
	tcase_add_test(t, guest_open_close_events);
	tcase_add_test(t, data_both_ways);
	tcase_add_test(t, slow_backend_gets_everything);
	tcase_add_test(t, single_port_without_multiport);
	tcase_add_test(t, full_bus_last_port);
	tcase_add_test(t, short_control_message_breaks_the_device);
	tcase_add_test(t, unknown_control_messages_ignored);
	tcase_add_test(t, readonly_receive_buffer_breaks_the_device);
	tcase_add_test(t, bad_options_refused);
	tcase_add_test(t, port_removed_and_added_live);
	tcase_add_test(t, port_added_before_driver);
	tcase_add_test(t, bad_port_add_and_remove_refused);
	tcase_add_test(t, snapshot_keeps_ports_and_pending);
	tcase_add_test(t, snapshot_bad_trees_refused);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
