/* hwsim.c — virtio-wlan-pci: Linux's mac80211_hwsim over virtio (device
 * id 29, VIRTIO_ID_MAC80211_HWSIM). Queue 0 (HWSIM_VQ_TX) carries the
 * guest's generic-netlink messages to the medium, queue 1 (HWSIM_VQ_RX)
 * holds the buffers the driver fills the ring with (fill_vq) for the
 * medium's answers. There is no device config.
 *
 * The device does not look inside messages: it hands each one to its
 * medium (wlan/, through opts->send) and queues what the medium
 * sends back in an outbox until the guest has a receive buffer. A receive
 * buffer with nothing to put in it stays available (VIRTIO_HANDLE_LATER);
 * a new message kicks the receive queue. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

#define HWSIM_VQ_TX 0
#define HWSIM_VQ_RX 1
#define HWSIM_QUEUE_SIZE 64
#define OUTBOX_SIZE 256 /* messages waiting for receive buffers */

struct outbox_msg {
	uint32_t len;
	uint8_t *data;
};

struct virtio_hwsim {
	struct virtio_pci *vp;
	struct virtio_dev_ops ops;
	struct virtio_hwsim_opts o;
	pthread_mutex_t lock; /* the outbox and the counters */
	struct outbox_msg box[OUTBOX_SIZE];
	unsigned head, count;
	struct virtio_hwsim_stats st;
	uint8_t tx_buf[VIRTIO_HWSIM_MAX_MSG]; /* the I/O thread's scratch */
};

/* Guest -> medium: one message per chain, copied out of guest RAM first so
 * the guest cannot change it while the medium parses it. */
static void serve_tx(struct virtio_hwsim *h, struct virtq_chain *c)
{
	size_t n;

	if (c->out_len == 0 || c->out_len > sizeof(h->tx_buf)) {
		pthread_mutex_lock(&h->lock);
		h->st.tx_oversize++;
		pthread_mutex_unlock(&h->lock);
		return;
	}
	n = virtq_chain_read(c, 0, h->tx_buf, (size_t)c->out_len);
	pthread_mutex_lock(&h->lock);
	h->st.tx++;
	pthread_mutex_unlock(&h->lock);
	h->o.send(h->o.opaque, h->tx_buf, n);
}

/* Medium -> guest: the oldest queued message that fits this buffer. */
static int serve_rx(struct virtio_hwsim *h, struct virtq_chain *c, uint32_t *written)
{
	int rc = VIRTIO_HANDLE_LATER;

	pthread_mutex_lock(&h->lock);
	while (h->count) {
		struct outbox_msg *m = &h->box[h->head];

		h->head = (h->head + 1) % OUTBOX_SIZE;
		h->count--;
		if (m->len <= c->in_len) {
			*written = (uint32_t)virtq_chain_write(c, 0, m->data, m->len);
			h->st.rx++;
			rc = 0;
		} else {
			h->st.rx_too_big++;
		}
		free(m->data);
		m->data = NULL;
		if (rc == 0)
			break;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static int hwsim_handle(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
			const char **why)
{
	struct virtio_hwsim *h = opaque;

	*written = 0;
	if (qi == HWSIM_VQ_RX)
		return serve_rx(h, c, written);
	serve_tx(h, c);
	return 0;
}

static void drop_outbox(struct virtio_hwsim *h)
{
	while (h->count) {
		free(h->box[h->head].data);
		h->box[h->head].data = NULL;
		h->head = (h->head + 1) % OUTBOX_SIZE;
		h->count--;
	}
}

/* A reset driver has no pending frames: what was queued for it is stale. */
static void hwsim_reset(void *opaque)
{
	struct virtio_hwsim *h = opaque;

	pthread_mutex_lock(&h->lock);
	drop_outbox(h);
	pthread_mutex_unlock(&h->lock);
}

/* Snapshots: the outbox, oldest first, as one property of (u32 big-endian
 * length, message) records: frames the medium delivered that the guest
 * has not taken yet are on the air, and a migration must not lose them. */
#define OUTBOX_MAX_BYTES (OUTBOX_SIZE * (4 + VIRTIO_HWSIM_MAX_MSG))

static void hwsim_save(void *opaque, struct state_writer *w)
{
	struct virtio_hwsim *h = opaque;
	size_t total = 0, off = 0;
	uint8_t *buf;

	pthread_mutex_lock(&h->lock);
	for (unsigned i = 0; i < h->count; i++)
		total += 4 + h->box[(h->head + i) % OUTBOX_SIZE].len;
	buf = malloc(total ? total : 1);
	for (unsigned i = 0; buf && i < h->count; i++) {
		const struct outbox_msg *m = &h->box[(h->head + i) % OUTBOX_SIZE];

		uint32_t be = htobe32(m->len);

		memcpy(buf + off, &be, 4);
		memcpy(buf + off + 4, m->data, m->len);
		off += 4 + m->len;
	}
	state_put_u32(w, "outbox-count", buf ? h->count : 0);
	state_put_u32(w, "outbox-bytes", (uint32_t)off);
	state_put_bytes(w, "outbox", buf, off);
	pthread_mutex_unlock(&h->lock);
	free(buf);
}

/* Split the records into box[]; the count and every length checked. */
static int split_outbox(struct state_node *n, const uint8_t *buf, uint32_t bytes, uint32_t count,
			struct outbox_msg *box)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;

		if (bytes - off < 4)
			return state_node_fail(n, "outbox message %u is cut short", i);
		memcpy(&len, buf + off, 4);
		len = be32toh(len);
		off += 4;
		if (len == 0 || len > VIRTIO_HWSIM_MAX_MSG || len > bytes - off)
			return state_node_fail(n, "outbox message %u is %u bytes", i, len);
		box[i] = (struct outbox_msg){len, malloc(len)};
		if (!box[i].data)
			return state_node_fail(n, "out of memory");
		memcpy(box[i].data, buf + off, len);
		off += len;
	}
	if (off != bytes)
		return state_node_fail(n, "outbox has %u bytes after its %u messages", bytes - off,
				       count);
	return 0;
}

static int hwsim_load(void *opaque, struct state_node *n)
{
	struct virtio_hwsim *h = opaque;
	struct outbox_msg *box = calloc(OUTBOX_SIZE, sizeof(*box));
	uint32_t count, bytes;
	uint8_t *buf = NULL;
	int rc = -1;

	if (!box)
		return state_node_fail(n, "out of memory");
	if (state_get_u32_max(n, "outbox-count", OUTBOX_SIZE, &count) == 0 &&
	    state_get_u32_max(n, "outbox-bytes", OUTBOX_MAX_BYTES, &bytes) == 0) {
		buf = malloc(bytes ? bytes : 1);
		if (!buf)
			state_node_fail(n, "out of memory");
		else if (state_get_bytes(n, "outbox", buf, bytes) == 0)
			rc = split_outbox(n, buf, bytes, count, box);
	}
	if (rc == 0) {
		pthread_mutex_lock(&h->lock);
		drop_outbox(h);
		memcpy(h->box, box, count * sizeof(*box));
		h->head = 0;
		h->count = count;
		pthread_mutex_unlock(&h->lock);
	} else {
		for (unsigned i = 0; i < OUTBOX_SIZE; i++)
			free(box[i].data);
	}
	free(box);
	free(buf);
	return rc;
}

bool virtio_hwsim_receive(struct virtio_hwsim *h, const void *msg, size_t len)
{
	uint8_t *copy = len && len <= VIRTIO_HWSIM_MAX_MSG ? malloc(len) : NULL;
	bool queued = false;

	pthread_mutex_lock(&h->lock);
	if (copy && h->count < OUTBOX_SIZE) {
		memcpy(copy, msg, len);
		h->box[(h->head + h->count) % OUTBOX_SIZE] =
			(struct outbox_msg){(uint32_t)len, copy};
		h->count++;
		queued = true;
	} else {
		h->st.rx_overflow++;
	}
	pthread_mutex_unlock(&h->lock);
	if (!queued)
		free(copy);
	else
		virtio_pci_kick(h->vp, HWSIM_VQ_RX);
	return queued;
}

void virtio_hwsim_stats(struct virtio_hwsim *h, struct virtio_hwsim_stats *st)
{
	pthread_mutex_lock(&h->lock);
	*st = h->st;
	pthread_mutex_unlock(&h->lock);
}

struct virtio_hwsim *virtio_hwsim_new(struct dev_host *host, struct pci_bus *bus,
				      const struct virtio_hwsim_opts *o, char *err, size_t errlen)
{
	struct virtio_hwsim *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errlen, "virtio-wlan: out of memory");
		return NULL;
	}
	h->o = *o;
	pthread_mutex_init(&h->lock, NULL);
	h->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_MAC80211_HWSIM,
		.class_code = 0x028000, /* network controller, other */
		.num_queues = 2,
		.queue_size = HWSIM_QUEUE_SIZE,
		.handle = hwsim_handle,
		.reset = hwsim_reset,
		.save = hwsim_save,
		.load = hwsim_load,
	};
	h->vp = virtio_pci_new(host, bus, o->devfn, "virtio-wlan-pci", &h->ops, h, NULL, err,
			       errlen);
	if (!h->vp) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return NULL;
	}
	return h;
}

void virtio_hwsim_free(struct virtio_hwsim *h)
{
	if (!h)
		return;
	virtio_pci_free(h->vp); /* stops the I/O thread first */
	drop_outbox(h);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct virtio_pci *virtio_hwsim_transport(struct virtio_hwsim *h)
{
	return h->vp;
}
