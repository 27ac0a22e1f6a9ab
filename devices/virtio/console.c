/* console.c — virtio-serial (virtio spec 5.3, "console", device id 3)
 * with VIRTIO_CONSOLE_F_MULTIPORT, as QEMU's virtio-serial-pci:
 * virtserialport and virtconsole ports on a bus of max_ports.
 *
 * Queues: port 0's receive/transmit (0, 1), the control receive/transmit
 * pair (2, 3), then a receive/transmit pair per port id >= 1 (2(id+1),
 * 2(id+1)+1). The device serves every queue itself on the transport's I/O
 * thread (the serve op): a receive buffer waits until the host has bytes
 * for that port, a transmit chain goes to the port's backend.
 *
 * The control handshake (Linux's virtio_console driver): the driver says
 * DEVICE_READY; the device announces each port (PORT_ADD); the driver
 * answers PORT_READY per port; the device then says CONSOLE_PORT for a
 * console, PORT_NAME for a named port (name after the 8-byte header) and
 * PORT_OPEN when the host end is connected. The driver says PORT_OPEN 1/0
 * when a guest program opens or closes the port (the VSERPORT_CHANGE
 * event's source), and the device says PORT_OPEN 1/0 when the host end
 * connects or goes away.
 *
 * Host input arrives on another thread (the chardev event loop) into a
 * per-port buffer that the I/O thread moves into receive buffers; while
 * the guest has not opened the port the buffer takes nothing, so the
 * host is held back rather than its bytes lost (as QEMU does). A
 * transmit chain the backend takes only part of stays at the head of its
 * queue until the backend has room (retried on the I/O thread's timer).
 *
 * A control message shorter than its header, or a receive buffer with no
 * writable part, breaks the device (NEEDS_RESET); unknown events or port
 * ids are counted and ignored, as QEMU does. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/console_internal.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

static unsigned port_rxq(unsigned id)
{
	return id == 0 ? 0 : 2 * (id + 1);
}

/* Queue qi's port (its receive or transmit queue), or NULL. */
static struct console_port *queue_port(struct virtio_console *vc, unsigned qi, bool *is_rx)
{
	unsigned id = qi < 2 ? 0 : qi / 2 - 1;

	*is_rx = !(qi & 1);
	if (qi == CTRL_RXQ || qi == CTRL_TXQ || id >= vc->max_ports || !vc->port[id].present)
		return NULL;
	return &vc->port[id];
}

static bool multiport(struct virtio_console *vc)
{
	return virtio_pci_features(vc->vp) & (1ull << VIRTIO_CONSOLE_F_MULTIPORT);
}

/* Transport lock held. The port's receive queue is live (the driver is
 * up, the device not broken) and the guest has the port open; without
 * MULTIPORT port 0 is a console the guest always has open. */
static bool guest_takes_input(struct virtio_console *vc, const struct console_port *p)
{
	if (!virtio_pci_queue(vc->vp, port_rxq(p->o.id)))
		return false;
	return multiport(vc) ? p->guest_open : p->o.id == 0;
}

/* After a pass over q: ask for the driver's next doorbell (with EVENT_IDX
 * the driver rings only when avail_event says so), then whether a buffer
 * came meanwhile, which that doorbell would not announce. */
static bool rearm(struct virtq *q)
{
	virtq_set_notify(q, true);
	return virtq_has_avail(q);
}

/* ------------------------------------------------------ control messages */

void console_queue_ctrl(struct virtio_console *vc, uint32_t id, uint16_t event, uint16_t value,
			const char *name)
{
	struct ctrl_msg *m;
	size_t nlen = name ? strlen(name) : 0;

	if (vc->ob_count == OUTBOX_SIZE || nlen > VIRTIO_CONSOLE_NAME_MAX) {
		vc->st.ctrl_dropped++;
		return;
	}
	m = &vc->outbox[(vc->ob_head + vc->ob_count++) % OUTBOX_SIZE];
	id = htole32(id);
	event = htole16(event);
	value = htole16(value);
	memcpy(m->data, &id, 4);
	memcpy(m->data + 4, &event, 2);
	memcpy(m->data + 6, &value, 2);
	if (nlen)
		memcpy(m->data + CTRL_HDR, name, nlen);
	m->len = (uint16_t)(CTRL_HDR + nlen);
}

static void set_guest_open(struct console_port *p, bool open)
{
	if (p->guest_open == open)
		return;
	p->guest_open = open;
	if (p->o.guest_open)
		p->o.guest_open(p->o.opaque, open);
}

/* The driver has a port: tell it what kind it is and whether the host end
 * is there. */
static void port_ready(struct virtio_console *vc, struct console_port *p)
{
	p->guest_ready = true;
	if (p->o.console)
		console_queue_ctrl(vc, p->o.id, VIRTIO_CONSOLE_CONSOLE_PORT, 1, NULL);
	if (p->o.name && p->o.name[0])
		console_queue_ctrl(vc, p->o.id, VIRTIO_CONSOLE_PORT_NAME, 1, p->o.name);
	if (p->host_open)
		console_queue_ctrl(vc, p->o.id, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
}

/* One message from the driver (len bytes at msg, copied out of guest RAM).
 * 0, or -EINVAL when it is malformed (the device then needs a reset). */
static int ctrl_message(struct virtio_console *vc, const uint8_t *msg, size_t len, const char **why)
{
	uint32_t id;
	uint16_t event, value;
	struct console_port *p;

	if (len < CTRL_HDR) {
		vc->st.ctrl_bad++;
		*why = "virtio-serial: control message shorter than 8 bytes";
		return -EINVAL;
	}
	memcpy(&id, msg, 4);
	memcpy(&event, msg + 4, 2);
	memcpy(&value, msg + 6, 2);
	id = le32toh(id);
	event = le16toh(event);
	value = le16toh(value);
	vc->st.ctrl_in++;
	if (event == VIRTIO_CONSOLE_DEVICE_READY) {
		if (value != 1) /* the driver failed to set up: nothing to announce */
			return 0;
		for (unsigned i = 0; i < vc->max_ports; i++)
			if (vc->port[i].present)
				console_queue_ctrl(vc, i, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
		return 0;
	}
	p = id < vc->max_ports && vc->port[id].present ? &vc->port[id] : NULL;
	if (!p || (event != VIRTIO_CONSOLE_PORT_READY && event != VIRTIO_CONSOLE_PORT_OPEN)) {
		vc->st.ctrl_ignored++; /* QEMU too only reports these */
		return 0;
	}
	if (event == VIRTIO_CONSOLE_PORT_READY) {
		if (value == 1)
			port_ready(vc, p);
		return 0;
	}
	set_guest_open(p, value != 0);
	return 0;
}

/* Device -> driver: as many queued messages as there are buffers. */
static void flush_outbox(struct virtio_console *vc)
{
	struct virtq *q = virtio_pci_queue(vc->vp, CTRL_RXQ);
	bool pushed = false;
	int r = 0;

	if (!q)
		return;
	do {
		while (vc->ob_count && (r = virtq_pop(q, &vc->chain)) == 1) {
			struct ctrl_msg *m = &vc->outbox[vc->ob_head];
			size_t n = virtq_chain_write(&vc->chain, 0, m->data, m->len);

			if (n < m->len) {
				virtio_pci_fail(vc->vp, CTRL_RXQ,
						"virtio-serial: control receive buffer too short");
				return;
			}
			vc->ob_head = (vc->ob_head + 1) % OUTBOX_SIZE;
			vc->ob_count--;
			vc->st.ctrl_out++;
			virtq_push(q, vc->chain.head, (uint32_t)n);
			pushed = true;
		}
	} while (r >= 0 && vc->ob_count && rearm(q));
	if (r < 0)
		virtio_pci_fail(vc->vp, CTRL_RXQ, q->broken);
	else if (pushed)
		virtio_pci_notify(vc->vp, CTRL_RXQ);
}

static void serve_ctrl_tx(struct virtio_console *vc)
{
	struct virtq *q = virtio_pci_queue(vc->vp, CTRL_TXQ);
	uint8_t msg[CTRL_HDR];
	bool pushed = false;
	int r;

	if (!q)
		return;
	do {
		while ((r = virtq_pop(q, &vc->chain)) != 0) {
			const char *why = q->broken;
			size_t n = r > 0 ? virtq_chain_read(&vc->chain, 0, msg, sizeof(msg)) : 0;

			if (r < 0 || ctrl_message(vc, msg, n, &why) < 0) {
				virtio_pci_fail(vc->vp, CTRL_TXQ, why);
				return;
			}
			virtq_push(q, vc->chain.head, 0);
			pushed = true;
		}
	} while (rearm(q));
	if (pushed)
		virtio_pci_notify(vc->vp, CTRL_TXQ);
}

/* -------------------------------------------------------------- data */

/* Host -> guest: the port's buffered bytes into its receive buffers. */
static void flush_rx(struct virtio_console *vc, struct console_port *p)
{
	struct virtq *q = virtio_pci_queue(vc->vp, port_rxq(p->o.id));
	bool pushed = false, was_full = p->rx_len == RX_BUF;
	int r = 0;

	if (!q)
		return;
	do {
		while (p->rx_len && guest_takes_input(vc, p) &&
		       (r = virtq_pop(q, &vc->chain)) == 1) {
			size_t n = virtq_chain_write(&vc->chain, 0, p->rx, p->rx_len);

			if (n == 0) {
				virtio_pci_fail(
					vc->vp, port_rxq(p->o.id),
					"virtio-serial: receive buffer with no writable part");
				return;
			}
			memmove(p->rx, p->rx + n, p->rx_len - n);
			p->rx_len -= n;
			p->st_rx += n;
			virtq_push(q, vc->chain.head, (uint32_t)n);
			pushed = true;
		}
	} while (r >= 0 && p->rx_len && guest_takes_input(vc, p) && rearm(q));
	if (r < 0) {
		virtio_pci_fail(vc->vp, port_rxq(p->o.id), q->broken);
		return;
	}
	if (pushed)
		virtio_pci_notify(vc->vp, port_rxq(p->o.id));
	if ((was_full || p->host_waiting) && p->rx_len < RX_BUF && guest_takes_input(vc, p)) {
		p->host_waiting = false;
		if (p->o.rx_ready)
			p->o.rx_ready(p->o.opaque);
	}
}

/* The readable part of the chain from *off to the backend: true when it
 * took everything. */
static bool write_chain(struct console_port *p, const struct virtq_chain *c)
{
	uint64_t skip = p->tx_off;

	for (unsigned i = 0; i < c->n_out; i++) {
		const struct virtq_buf *b = &c->buf[i];
		size_t taken;

		if (skip >= b->len) {
			skip -= b->len;
			continue;
		}
		taken = p->o.write ? p->o.write(p->o.opaque, b->ptr + skip, b->len - skip)
				   : b->len - skip;
		p->tx_off += (uint32_t)taken;
		p->st_tx += taken;
		if (taken < b->len - skip)
			return false;
		skip = 0;
	}
	return true;
}

/* Guest -> host: each chain's readable bytes to the backend, in order. */
static void serve_tx(struct virtio_console *vc, struct console_port *p)
{
	unsigned qi = port_rxq(p->o.id) + 1;
	struct virtq *q = virtio_pci_queue(vc->vp, qi);
	bool pushed = false;
	int r = 0;

	p->tx_stalled = false;
	if (!q)
		return;
	do {
		while ((r = virtq_pop(q, &vc->chain)) == 1) {
			if (!write_chain(p, &vc->chain)) {
				virtq_unpop(q, 1);
				p->tx_stalled = true; /* the timer retries: no doorbell needed */
				break;
			}
			p->tx_off = 0;
			virtq_push(q, vc->chain.head, 0);
			pushed = true;
		}
	} while (r == 0 && rearm(q));
	if (r < 0) {
		virtio_pci_fail(vc->vp, qi, q->broken);
		return;
	}
	if (pushed)
		virtio_pci_notify(vc->vp, qi);
}

/* ------------------------------------------------------ transport ops */

static void flush_all(struct virtio_console *vc)
{
	flush_outbox(vc);
	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].present)
			flush_rx(vc, &vc->port[i]);
}

static void console_serve(void *opaque, unsigned qi)
{
	struct virtio_console *vc = opaque;
	struct console_port *p;
	bool is_rx;

	if (qi == CTRL_TXQ) {
		serve_ctrl_tx(vc);
		flush_all(vc); /* answers, and input for ports just opened */
	} else if (qi == CTRL_RXQ) {
		flush_outbox(vc);
	} else if ((p = queue_port(vc, qi, &is_rx)) != NULL) {
		if (is_rx)
			flush_rx(vc, p);
		else
			serve_tx(vc, p);
	}
	/* a queue of a port that does not exist: its buffers stay unused */
}

static int console_io_timeout_ms(void *opaque)
{
	struct virtio_console *vc = opaque;

	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].tx_stalled)
			return TX_RETRY_MS;
	return -1;
}

static void console_io_event(void *opaque)
{
	struct virtio_console *vc = opaque;

	flush_all(vc);
	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].tx_stalled)
			serve_tx(vc, &vc->port[i]);
}

/* The driver starts over: no port is open on its side, nothing it was
 * sent is pending. Host input already buffered is kept. */
static void console_reset(void *opaque)
{
	struct virtio_console *vc = opaque;

	for (unsigned i = 0; i < vc->max_ports; i++) {
		struct console_port *p = &vc->port[i];

		set_guest_open(p, false);
		p->guest_ready = p->tx_stalled = false;
		p->tx_off = 0;
	}
	vc->ob_head = vc->ob_count = 0;
}

/* ----------------------------------------------------------- snapshots */

/* What a snapshot holds (transport lock held, queues frozen): which ports
 * exist and what the guest was told of each (name, console), the control
 * messages not yet delivered, and per port the guest's side (ready, open),
 * whether the guest was told the host end is connected, the host bytes
 * not yet in a receive buffer and how much of the head transmit chain the
 * backend already took. Nothing else is in flight: every control and data
 * chain the device pops is pushed back at once, or given back unpopped.
 *
 * The host ends are this process's: the loaded device keeps the
 * destination's chardev connections (a unix socket the agent's client
 * reconnects to) and tells the guest where they differ from what it was
 * told; a port the guest had open is reported open again (VSERPORT_CHANGE
 * on the destination, as QEMU does). */
#define PORT_STATE_VERSION 1
#define CTRL_STATE_VERSION 1

static void save_port(const struct console_port *p, struct state_writer *w)
{
	char node[16], name[VIRTIO_CONSOLE_NAME_MAX + 1] = {0};

	if (p->o.name)
		strncpy(name, p->o.name, VIRTIO_CONSOLE_NAME_MAX);
	snprintf(node, sizeof(node), "port@%u", p->o.id);
	state_begin(w, node, PORT_STATE_VERSION);
	state_put_bytes(w, "name", name, sizeof(name));
	state_put_u8(w, "console", p->o.console);
	state_put_u8(w, "guest-ready", p->guest_ready);
	state_put_u8(w, "guest-open", p->guest_open);
	state_put_u8(w, "host-open", p->host_open);
	state_put_u32(w, "tx-offset", p->tx_off);
	state_put_u32(w, "rx-len", (uint32_t)p->rx_len);
	state_put_bytes(w, "rx", p->rx, sizeof(p->rx));
	state_end(w);
}

static uint32_t present_ports(const struct virtio_console *vc)
{
	uint32_t mask = 0;

	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].present)
			mask |= 1u << i;
	return mask;
}

static void console_save(void *opaque, struct state_writer *w)
{
	struct virtio_console *vc = opaque;
	char node[16];

	state_put_u32(w, "max-ports", vc->max_ports);
	state_put_u32(w, "ports", present_ports(vc));
	state_put_u32(w, "ctrl-pending", vc->ob_count);
	for (unsigned i = 0; i < vc->ob_count; i++) {
		const struct ctrl_msg *m = &vc->outbox[(vc->ob_head + i) % OUTBOX_SIZE];

		snprintf(node, sizeof(node), "ctrl@%u", i);
		state_begin(w, node, CTRL_STATE_VERSION);
		state_put_u16(w, "len", m->len);
		state_put_bytes(w, "data", m->data, sizeof(m->data));
		state_end(w);
	}
	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].present)
			save_port(&vc->port[i], w);
}

struct port_state {
	bool guest_ready, guest_open, host_told;
	uint32_t tx_off, rx_len;
};

static int load_port(struct console_port *p, struct state_node *dev, struct port_state *ps)
{
	char node[16], name[VIRTIO_CONSOLE_NAME_MAX + 1], here[VIRTIO_CONSOLE_NAME_MAX + 1] = {0};
	struct state_node n;
	bool console;

	snprintf(node, sizeof(node), "port@%u", p->o.id);
	if (state_node_open(&n, &dev->at, node, PORT_STATE_VERSION, dev->err, dev->errlen) < 0 ||
	    state_get_bytes(&n, "name", name, sizeof(name)) < 0 ||
	    state_get_bool(&n, "console", &console) < 0 ||
	    state_get_bool(&n, "guest-ready", &ps->guest_ready) < 0 ||
	    state_get_bool(&n, "guest-open", &ps->guest_open) < 0 ||
	    state_get_bool(&n, "host-open", &ps->host_told) < 0 ||
	    state_get_u32(&n, "tx-offset", &ps->tx_off) < 0 ||
	    state_get_u32_max(&n, "rx-len", RX_BUF, &ps->rx_len) < 0 ||
	    state_get_bytes(&n, "rx", p->rx, sizeof(p->rx)) < 0 || state_node_close(&n) < 0)
		return -1;
	if (p->o.name)
		strncpy(here, p->o.name, VIRTIO_CONSOLE_NAME_MAX);
	if (memcmp(name, here, sizeof(name)) || console != p->o.console)
		return state_node_fail(&n, "the guest knows this port as another %s",
				       console != p->o.console ? "kind" : "name");
	return 0;
}

static int load_ctrl(struct virtio_console *vc, struct state_node *dev, unsigned i)
{
	struct ctrl_msg *m = &vc->outbox[i];
	struct state_node n;
	char node[16];

	snprintf(node, sizeof(node), "ctrl@%u", i);
	if (state_node_open(&n, &dev->at, node, CTRL_STATE_VERSION, dev->err, dev->errlen) < 0 ||
	    state_get_u16(&n, "len", &m->len) < 0 ||
	    state_get_bytes(&n, "data", m->data, sizeof(m->data)) < 0 || state_node_close(&n) < 0)
		return -1;
	if (m->len < CTRL_HDR || m->len > sizeof(m->data))
		return state_node_fail(&n, "len %u is not %d to %zu", m->len, CTRL_HDR,
				       sizeof(m->data));
	return 0;
}

/* The port as loaded; the host end as it is here. */
static void apply_port(struct virtio_console *vc, struct console_port *p,
		       const struct port_state *ps)
{
	p->guest_ready = ps->guest_ready;
	p->tx_off = ps->tx_off;
	p->rx_len = ps->rx_len;
	p->host_waiting = false;
	set_guest_open(p, ps->guest_open);
	if (p->guest_ready && ps->host_told != p->host_open)
		console_queue_ctrl(vc, p->o.id, VIRTIO_CONSOLE_PORT_OPEN, p->host_open, NULL);
}

static int console_load(void *opaque, struct state_node *n)
{
	struct virtio_console *vc = opaque;
	struct port_state ps[VIRTIO_CONSOLE_MAX_PORTS];
	uint32_t max_ports, ports, pending;

	if (state_get_u32(n, "max-ports", &max_ports) < 0 ||
	    state_get_u32(n, "ports", &ports) < 0 ||
	    state_get_u32_max(n, "ctrl-pending", OUTBOX_SIZE, &pending) < 0)
		return -1;
	if (max_ports != vc->max_ports || ports != present_ports(vc))
		return state_node_fail(n, "max-ports %u, ports %#x: this device has %u, %#x",
				       max_ports, ports, vc->max_ports, present_ports(vc));
	for (unsigned i = 0; i < pending; i++)
		if (load_ctrl(vc, n, i) < 0)
			return -1;
	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].present && load_port(&vc->port[i], n, &ps[i]) < 0)
			return -1;
	vc->ob_head = 0;
	vc->ob_count = pending;
	for (unsigned i = 0; i < vc->max_ports; i++)
		if (vc->port[i].present)
			apply_port(vc, &vc->port[i], &ps[i]);
	return 0;
}

/* ------------------------------------------------------- host side */

static struct console_port *host_port(struct virtio_console *vc, unsigned id)
{
	return id < vc->max_ports && vc->port[id].present ? &vc->port[id] : NULL;
}

size_t virtio_console_can_receive(struct virtio_console *vc, unsigned id)
{
	struct console_port *p = host_port(vc, id);
	size_t room = 0;

	if (!p)
		return 0;
	virtio_pci_lock(vc->vp);
	if (guest_takes_input(vc, p))
		room = RX_BUF - p->rx_len;
	p->host_waiting = room == 0;
	virtio_pci_unlock(vc->vp);
	return room;
}

void virtio_console_receive(struct virtio_console *vc, unsigned id, const void *buf, size_t len)
{
	struct console_port *p = host_port(vc, id);

	if (!p)
		return;
	virtio_pci_lock(vc->vp);
	if (len > RX_BUF - p->rx_len) {
		vc->st.rx_dropped += len - (RX_BUF - p->rx_len);
		len = RX_BUF - p->rx_len;
	}
	memcpy(p->rx + p->rx_len, buf, len);
	p->rx_len += len;
	virtio_pci_unlock(vc->vp);
	virtio_pci_wake(vc->vp);
}

void virtio_console_host_open(struct virtio_console *vc, unsigned id, bool open)
{
	struct console_port *p = host_port(vc, id);

	if (!p)
		return;
	virtio_pci_lock(vc->vp);
	if (p->host_open != open) {
		p->host_open = open;
		if (p->guest_ready)
			console_queue_ctrl(vc, id, VIRTIO_CONSOLE_PORT_OPEN, open, NULL);
	}
	virtio_pci_unlock(vc->vp);
	virtio_pci_wake(vc->vp);
}

bool virtio_console_guest_open(struct virtio_console *vc, unsigned id)
{
	struct console_port *p = host_port(vc, id);
	bool open;

	if (!p)
		return false;
	virtio_pci_lock(vc->vp);
	open = p->guest_open;
	virtio_pci_unlock(vc->vp);
	return open;
}

void virtio_console_get_stats(struct virtio_console *vc, struct virtio_console_stats *st)
{
	virtio_pci_lock(vc->vp);
	*st = vc->st;
	st->rx_bytes = st->tx_bytes = 0;
	for (unsigned i = 0; i < vc->max_ports; i++) {
		st->rx_bytes += vc->port[i].st_rx;
		st->tx_bytes += vc->port[i].st_tx;
	}
	virtio_pci_unlock(vc->vp);
}

/* ------------------------------------------------------------ lifecycle */

static int check_opts(const struct virtio_console_opts *o, char *err, size_t errlen)
{
	if (o->max_ports < 1 || o->max_ports > VIRTIO_CONSOLE_MAX_PORTS) {
		snprintf(err, errlen, "virtio-serial: max_ports must be 1..%d",
			 VIRTIO_CONSOLE_MAX_PORTS);
		return -1;
	}
	for (unsigned i = 0; i < o->n_ports; i++) {
		if (virtio_console_check_port(o->max_ports, &o->ports[i], err, errlen) < 0)
			return -1;
		for (unsigned j = 0; j < i; j++)
			if (o->ports[j].id == o->ports[i].id) {
				snprintf(err, errlen, "virtio-serial: two ports with nr %u",
					 o->ports[i].id);
				return -1;
			}
	}
	return 0;
}

struct virtio_console *virtio_console_new(struct dev_host *host, struct pci_bus *bus,
					  const struct virtio_console_opts *o, char *err,
					  size_t errlen)
{
	struct virtio_console *vc;

	if (check_opts(o, err, errlen) < 0)
		return NULL;
	vc = calloc(1, sizeof(*vc));
	if (!vc) {
		snprintf(err, errlen, "virtio-serial: out of memory");
		return NULL;
	}
	vc->max_ports = o->max_ports;
	vc->cfg.max_nr_ports = htole32(o->max_ports);
	for (unsigned i = 0; i < o->n_ports; i++) {
		struct console_port *p = &vc->port[o->ports[i].id];

		p->o = o->ports[i];
		p->present = true;
	}
	vc->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_CONSOLE,
		.class_code = 0x078000, /* simple communication controller, other */
		.features = 1ull << VIRTIO_CONSOLE_F_MULTIPORT,
		.num_queues = 2 * (o->max_ports + 1),
		.queue_size = CONSOLE_QUEUE_SIZE,
		.config_len = sizeof(vc->cfg),
		.serve = console_serve,
		.reset = console_reset,
		.io_timeout_ms = console_io_timeout_ms,
		.io_event = console_io_event,
		.save = console_save,
		.load = console_load,
	};
	vc->vp = virtio_pci_new(host, bus, o->devfn, "virtio-serial-pci", &vc->ops, vc, &vc->cfg,
				err, errlen);
	if (!vc->vp) {
		free(vc);
		return NULL;
	}
	return vc;
}

void virtio_console_free(struct virtio_console *vc)
{
	if (!vc)
		return;
	virtio_pci_free(vc->vp); /* stops the I/O thread first */
	free(vc);
}

struct virtio_pci *virtio_console_transport(struct virtio_console *vc)
{
	return vc->vp;
}
