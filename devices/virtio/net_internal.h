/* net_internal.h — virtio-net's state, shared by net.c (transmit, control
 * queue, transport hooks) and net_rx.c (receive buffers, filter,
 * backlog). */
#ifndef VMM_DEVICES_VIRTIO_NET_INTERNAL_H
#define VMM_DEVICES_VIRTIO_NET_INTERNAL_H

#include <linux/if_ether.h>
#include <sys/uio.h>

#include "backends/backends.h"
#include "devices/virtio/virtio.h"

/* Queues: receive 2p and transmit 2p + 1 for each queue pair p, then
 * the control queue (virtio spec 5.1.2). Without MQ: 0, 1 and 2. */
#define NET_MAX_PAIRS VIRTIO_NET_STAT_PAIRS
_Static_assert(2 * NET_MAX_PAIRS + 1 <= VIRTIO_MAX_QUEUES, "queues");
#define NET_RXQ(p) (2 * (p))
#define NET_TXQ(p) (2 * (p) + 1)
#define NET_CTRLQ(n) (2 * (n)->max_pairs)

#define NET_QUEUE_SIZE 256
/* VERSION_1: the header always has num_buffers */
#define NET_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)
/* A GSO frame: a 64 KiB IP packet, Ethernet and VLAN headers */
#define NET_MAX_FRAME (ETH_HLEN + 4 + 65535)
#define NET_MAC_TABLE 64
#define NET_BACKLOG 256 /* frames waiting for receive buffers */

struct net_rx_filter {
	bool promisc, allmulti, alluni, nomulti, nouni, nobcast;
	uint8_t uni[NET_MAC_TABLE][6], multi[NET_MAC_TABLE][6];
	unsigned n_uni, n_multi;
	bool uni_overflow, multi_overflow; /* more than we keep: accept all */
};

struct net_rx;

struct virtio_net {
	struct virtio_pci *vp; /* NULL until virtio_pci_new returned (lock) */
	struct netdev *nd;
	struct virtio_dev_ops ops;
	struct virtio_net_config cfg; /* what the driver reads */
	uint8_t mac[6];		      /* the configured MAC (reset restores it) */
	unsigned mtu;
	char id[32];
	unsigned max_pairs; /* 1, or the netdev's queues with mq=on */
	/* Everything below: transport lock. */
	unsigned pairs; /* in use (VQ_PAIRS_SET); frames from a backend
			 * queue past it go to pair q % pairs */
	bool link_up;
	uint64_t features;
	bool features_synced;
	bool logged_bad_hdr;
	struct net_rx_filter rxf;
	struct virtio_net_stats st;
	struct virtq_chain *chain; /* scratch: TX and control chains */
	struct iovec iov[VIRTQ_MAX_CHAIN];
	struct net_rx *rx[NET_MAX_PAIRS];
};

/* net_state.c: snapshot hooks (transport lock held) */
void vnet_state_save(void *opaque, struct state_writer *w);
int vnet_state_load(void *opaque, struct state_node *n);

/* net_rx.c */
int net_rx_init(struct virtio_net *n);
void net_rx_fini(struct virtio_net *n);
/* Device reset: the backlog goes. */
void net_rx_reset(struct virtio_net *n);
/* netdev callbacks */
void net_rx_frame(void *opaque, unsigned q, const struct virtio_net_hdr *hdr, const void *frame,
		  size_t len);
bool net_can_rx(void *opaque, unsigned q);
/* End of a pass: backlog into new buffers, one interrupt, doorbells on
 * only when the ring ran dry, a flow-controlled backend's fd watched
 * only while there is room. */
void net_rx_flush(struct virtio_net *n);

#endif /* VMM_DEVICES_VIRTIO_NET_INTERNAL_H */
