/* net_rx.c — virtio-net receive: frames from the backend into the
 * guest's receive buffers (virtio spec 5.1.6.3/4).
 *
 * With MRG_RXBUF a frame spreads over as many chains as it needs (the
 * first one's header says how many: num_buffers); without it one chain
 * must hold header and frame. Chains popped for a frame that does not
 * fit yet go back (virtq_unpop) and the frame waits in a bounded
 * backlog until the driver adds buffers (its doorbell serves us), so
 * user networking never has to drop what TCP flow control would hold
 * anyway; past the bound frames are dropped and counted. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/net_internal.h"

struct backlog_frame {
	struct virtio_net_hdr hdr;
	size_t len;
	uint8_t *data;
};

struct net_rx {
	struct virtq_chain *first; /* the frame's first chain (its header) */
	struct virtq_chain *more;  /* the others (net.c's scratch may be busy:
				    * a backend answers inside send) */
	uint16_t head[NET_QUEUE_SIZE];
	uint32_t used[NET_QUEUE_SIZE];
	bool pushed; /* buffers used since the last interrupt */
	struct backlog_frame q[NET_BACKLOG];
	unsigned q_head, q_count;
};

/* One receive state per queue pair (n->max_pairs of them). */
int net_rx_init(struct virtio_net *n)
{
	for (unsigned p = 0; p < n->max_pairs; p++) {
		struct net_rx *r = n->rx[p] = calloc(1, sizeof(*r));

		if (!r || !(r->first = malloc(sizeof(*r->first))) ||
		    !(r->more = malloc(sizeof(*r->more)))) {
			net_rx_fini(n);
			return -1;
		}
	}
	return 0;
}

void net_rx_reset(struct virtio_net *n)
{
	for (unsigned p = 0; p < n->max_pairs; p++) {
		struct net_rx *r = n->rx[p];

		if (!r) /* net_rx_init ran out of memory */
			continue;
		for (; r->q_count; r->q_count--, r->q_head = (r->q_head + 1) % NET_BACKLOG) {
			free(r->q[r->q_head].data);
			n->st.rx_dropped++; /* waited for a driver that reset */
		}
		r->q_head = 0;
		r->pushed = false;
	}
}

void net_rx_fini(struct virtio_net *n)
{
	net_rx_reset(n);
	for (unsigned p = 0; p < NET_MAX_PAIRS; p++) {
		struct net_rx *r = n->rx[p];

		if (!r)
			continue;
		free(r->first);
		free(r->more);
		free(r);
		n->rx[p] = NULL;
	}
}

/* ------------------------------------------------------------ filter */

static bool in_table(const uint8_t (*t)[6], unsigned n, const uint8_t *mac)
{
	for (unsigned i = 0; i < n; i++)
		if (!memcmp(t[i], mac, 6))
			return true;
	return false;
}

/* The RX mode and MAC tables the driver set (control queue). */
static bool filter_pass(const struct virtio_net *n, const uint8_t *dst)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const struct net_rx_filter *f = &n->rxf;

	if (f->promisc)
		return true;
	if (!memcmp(dst, bcast, 6))
		return !f->nobcast;
	if (dst[0] & 1)
		return !f->nomulti &&
		       (f->allmulti || f->multi_overflow || in_table(f->multi, f->n_multi, dst));
	return !f->nouni && (f->alluni || f->uni_overflow || !memcmp(dst, n->cfg.mac, 6) ||
			     in_table(f->uni, f->n_uni, dst));
}

/* ------------------------------------------------------------ filling */

/* The header the guest gets: only offloads it negotiated; false when
 * the frame needs one it did not (it cannot take the frame). */
static bool guest_hdr(const struct virtio_net *n, const struct virtio_net_hdr *in,
		      struct virtio_net_hdr_mrg_rxbuf *out)
{
	uint64_t f = n->features;
	uint8_t gso = in->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;

	memset(out, 0, sizeof(*out));
	out->hdr = *in;
	if (!(f >> VIRTIO_NET_F_GUEST_CSUM & 1)) {
		if (in->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
			return false;
		out->hdr.flags = 0;
	}
	if (gso == VIRTIO_NET_HDR_GSO_NONE)
		return true;
	if (gso == VIRTIO_NET_HDR_GSO_TCPV4 && !(f >> VIRTIO_NET_F_GUEST_TSO4 & 1))
		return false;
	if (gso == VIRTIO_NET_HDR_GSO_TCPV6 && !(f >> VIRTIO_NET_F_GUEST_TSO6 & 1))
		return false;
	if (gso != VIRTIO_NET_HDR_GSO_TCPV4 && gso != VIRTIO_NET_HDR_GSO_TCPV6)
		return false;
	return !(in->gso_type & VIRTIO_NET_HDR_GSO_ECN) || (f >> VIRTIO_NET_F_GUEST_ECN & 1);
}

/* Bytes [from, from + take) of header-then-frame into chain c. */
static void put(const struct virtq_chain *c, const struct virtio_net_hdr_mrg_rxbuf *h,
		const uint8_t *frame, size_t from, size_t take)
{
	size_t off = 0;

	if (from < NET_HDR_LEN) {
		size_t k = NET_HDR_LEN - from < take ? NET_HDR_LEN - from : take;

		virtq_chain_write(c, 0, (const uint8_t *)h + from, k);
		off = k;
		from += k;
		take -= k;
	}
	if (take)
		virtq_chain_write(c, off, frame + (from - NET_HDR_LEN), take);
}

enum { RX_DONE, RX_NO_ROOM, RX_DROPPED };

/* Pop as many chains as the frame needs and fill them; on a shortfall
 * give them all back. */
static int deliver(struct virtio_net *n, unsigned p, const struct virtio_net_hdr *hdr,
		   const uint8_t *frame, size_t len)
{
	struct virtq *q = virtio_pci_queue(n->vp, NET_RXQ(p));
	struct net_rx *r = n->rx[p];
	bool mrg = n->features >> VIRTIO_NET_F_MRG_RXBUF & 1;
	struct virtio_net_hdr_mrg_rxbuf h;
	size_t total = NET_HDR_LEN + len, done = 0;
	uint16_t nbuf = 0, nb16;
	int ret;

	if (!q) /* frozen: while a machine saves or loads, frames wait */
		return virtio_pci_frozen(n->vp) ? RX_NO_ROOM : RX_DROPPED;
	if (!n->link_up)
		return RX_DROPPED;
	if (!guest_hdr(n, hdr, &h)) {
		n->st.rx_too_big++;
		return RX_DROPPED;
	}
	while (done < total) {
		struct virtq_chain *c = nbuf ? r->more : r->first;
		size_t take;

		ret = virtq_pop(q, c);
		if (ret < 0) {
			virtio_pci_fail(n->vp, NET_RXQ(p), q->broken);
			return RX_DROPPED;
		}
		if (ret == 0 || nbuf == NET_QUEUE_SIZE) {
			virtq_unpop(q, nbuf);
			/* a frame more than the whole ring holds never fits */
			if (nbuf >= q->vr.num) {
				n->st.rx_too_big++;
				return RX_DROPPED;
			}
			return RX_NO_ROOM;
		}
		if (c->in_len < (nbuf ? 1 : NET_HDR_LEN)) {
			virtio_pci_fail(n->vp, NET_RXQ(p),
					"receive buffer shorter than the header");
			return RX_DROPPED;
		}
		take = c->in_len < total - done ? (size_t)c->in_len : total - done;
		put(c, &h, frame, done, take);
		r->head[nbuf] = c->head;
		r->used[nbuf++] = (uint32_t)take;
		done += take;
		if (!mrg && done < total) { /* one buffer must hold it all */
			virtq_unpop(q, 1);
			n->st.rx_too_big++;
			return RX_DROPPED;
		}
	}
	nb16 = htole16(nbuf);
	virtq_chain_write(r->first, offsetof(struct virtio_net_hdr_mrg_rxbuf, num_buffers), &nb16,
			  2);
	for (unsigned i = 0; i < nbuf; i++)
		virtq_push(q, r->head[i], r->used[i]);
	r->pushed = true;
	n->st.rx_frames++;
	n->st.pair_rx_frames[p]++;
	n->st.rx_bytes += len;
	return RX_DONE;
}

static bool backlog_add(struct net_rx *r, const struct virtio_net_hdr *hdr, const void *frame,
			size_t len)
{
	struct backlog_frame *b;

	if (r->q_count == NET_BACKLOG)
		return false;
	b = &r->q[(r->q_head + r->q_count) % NET_BACKLOG];
	b->data = malloc(len);
	if (!b->data)
		return false;
	memcpy(b->data, frame, len);
	b->hdr = *hdr;
	b->len = len;
	r->q_count++;
	return true;
}

/* The pair that takes a frame from backend queue q: its own while the
 * driver uses it, else one of those it uses. */
static unsigned rx_pair(const struct virtio_net *n, unsigned q)
{
	return q < n->pairs ? q : q % n->pairs;
}

void net_rx_frame(void *opaque, unsigned bq, const struct virtio_net_hdr *hdr, const void *frame,
		  size_t len)
{
	struct virtio_net *n = opaque;
	unsigned p = rx_pair(n, bq);
	int ret;

	if (len < ETH_HLEN || len > NET_MAX_FRAME) {
		n->st.rx_too_big++;
		return;
	}
	if (!filter_pass(n, frame)) {
		n->st.rx_filtered++;
		return;
	}
	/* frames keep their order: nothing overtakes the backlog */
	ret = n->rx[p]->q_count ? RX_NO_ROOM : deliver(n, p, hdr, frame, len);
	if (ret == RX_NO_ROOM && !backlog_add(n->rx[p], hdr, frame, len))
		ret = RX_DROPPED;
	if (ret == RX_DROPPED)
		n->st.rx_dropped++;
}

bool net_can_rx(void *opaque, unsigned bq)
{
	struct virtio_net *n = opaque;
	unsigned p = rx_pair(n, bq);
	struct virtq *q = virtio_pci_queue(n->vp, NET_RXQ(p));

	return q && n->link_up && !n->rx[p]->q_count && virtq_has_avail(q);
}

static void drain_backlog(struct virtio_net *n, unsigned p)
{
	struct net_rx *r = n->rx[p];

	while (r->q_count) {
		struct backlog_frame *b = &r->q[r->q_head];
		int ret = deliver(n, p, &b->hdr, b->data, b->len);

		if (ret == RX_NO_ROOM)
			return;
		if (ret == RX_DROPPED)
			n->st.rx_dropped++;
		free(b->data);
		r->q_head = (r->q_head + 1) % NET_BACKLOG;
		r->q_count--;
	}
}

static void flush_pair(struct virtio_net *n, unsigned p)
{
	struct net_rx *r = n->rx[p];
	struct virtq *q;

	for (;;) {
		drain_backlog(n, p);
		if (r->pushed) {
			virtio_pci_notify(n->vp, NET_RXQ(p));
			r->pushed = false;
		}
		q = virtio_pci_queue(n->vp, NET_RXQ(p));
		if (!q)
			break;
		if (virtq_has_avail(q)) {
			/* buffers in hand: the driver's refills need not ring */
			virtq_set_notify(q, false);
			break;
		}
		virtq_set_notify(q, true);
		/* a buffer added before the driver saw the flag rang nobody */
		if (!virtq_has_avail(q) || !r->q_count)
			break;
	}
}

void net_rx_flush(struct virtio_net *n)
{
	bool room = true;

	for (unsigned p = 0; p < n->max_pairs; p++)
		flush_pair(n, p);
	if (!n->nd->rx_flow_control)
		return;
	/* A flow-controlled backend's queues share one fd: it is watched
	 * while every pair in use has room, so a full pair holds the others'
	 * frames in the host kernel for a while rather than spin. */
	for (unsigned p = 0; p < n->pairs && room; p++)
		room = net_can_rx(n, p);
	virtio_pci_io_watch(n->vp, room);
}
