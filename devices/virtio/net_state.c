/* net_state.c — virtio-net's own registers in a snapshot: the MAC the
 * driver set, the link, the queue pairs in use and the receive filter
 * (rx mode, MAC tables). Frames in the receive backlog are not saved: they
 * are lost as on a wire. The backend's state (user networking's NAT'd
 * connections) is not either: the guest's TCP connections through it are
 * reset after a restore into a new process. */
#include <string.h>

#include "devices/virtio/net_internal.h"
#include "state/state.h"

enum {
	RXF_PROMISC = 1 << 0,
	RXF_ALLMULTI = 1 << 1,
	RXF_ALLUNI = 1 << 2,
	RXF_NOMULTI = 1 << 3,
	RXF_NOUNI = 1 << 4,
	RXF_NOBCAST = 1 << 5,
	RXF_UNI_OVERFLOW = 1 << 6,
	RXF_MULTI_OVERFLOW = 1 << 7,
};

static uint8_t rx_mode(const struct net_rx_filter *f)
{
	return (uint8_t)((f->promisc ? RXF_PROMISC : 0) | (f->allmulti ? RXF_ALLMULTI : 0) |
			 (f->alluni ? RXF_ALLUNI : 0) | (f->nomulti ? RXF_NOMULTI : 0) |
			 (f->nouni ? RXF_NOUNI : 0) | (f->nobcast ? RXF_NOBCAST : 0) |
			 (f->uni_overflow ? RXF_UNI_OVERFLOW : 0) |
			 (f->multi_overflow ? RXF_MULTI_OVERFLOW : 0));
}

void vnet_state_save(void *opaque, struct state_writer *w)
{
	struct virtio_net *n = opaque;

	state_put_bytes(w, "mac", n->cfg.mac, 6);
	state_put_u8(w, "link-up", n->link_up);
	state_put_u32(w, "pairs", n->pairs);
	state_put_u8(w, "rx-mode", rx_mode(&n->rxf));
	state_put_u32(w, "mac-uni-count", n->rxf.n_uni);
	state_put_bytes(w, "mac-uni", n->rxf.uni, sizeof(n->rxf.uni));
	state_put_u32(w, "mac-multi-count", n->rxf.n_multi);
	state_put_bytes(w, "mac-multi", n->rxf.multi, sizeof(n->rxf.multi));
}

int vnet_state_load(void *opaque, struct state_node *nd)
{
	struct virtio_net *n = opaque;
	struct net_rx_filter f = {0};
	uint8_t mac[6], mode;
	uint32_t pairs;
	bool link;

	if (state_get_bytes(nd, "mac", mac, 6) < 0 || state_get_bool(nd, "link-up", &link) < 0 ||
	    state_get_u32(nd, "pairs", &pairs) < 0 || state_get_u8(nd, "rx-mode", &mode) < 0 ||
	    state_get_u32_max(nd, "mac-uni-count", NET_MAC_TABLE, &f.n_uni) < 0 ||
	    state_get_bytes(nd, "mac-uni", f.uni, sizeof(f.uni)) < 0 ||
	    state_get_u32_max(nd, "mac-multi-count", NET_MAC_TABLE, &f.n_multi) < 0 ||
	    state_get_bytes(nd, "mac-multi", f.multi, sizeof(f.multi)) < 0)
		return -1;
	if (pairs < 1 || pairs > n->max_pairs)
		return state_node_fail(nd, "pairs %u: this device has 1 to %u", pairs,
				       n->max_pairs);
	f.promisc = mode & RXF_PROMISC;
	f.allmulti = mode & RXF_ALLMULTI;
	f.alluni = mode & RXF_ALLUNI;
	f.nomulti = mode & RXF_NOMULTI;
	f.nouni = mode & RXF_NOUNI;
	f.nobcast = mode & RXF_NOBCAST;
	f.uni_overflow = mode & RXF_UNI_OVERFLOW;
	f.multi_overflow = mode & RXF_MULTI_OVERFLOW;
	memcpy(n->cfg.mac, mac, 6);
	n->link_up = link;
	n->cfg.status = htole16(link ? VIRTIO_NET_S_LINK_UP : 0);
	n->pairs = pairs;
	n->rxf = f;
	return 0;
}
