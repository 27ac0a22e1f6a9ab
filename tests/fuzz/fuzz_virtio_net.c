/* fuzz_virtio_net.c — virtio-net's guest-facing parsing (devices/virtio/
 * net.c, net_rx.c) on fuzz_vpci.h's stand-in transport: transmit chains
 * with their virtio_net_hdr (flags, gso_type, hdr_len, gso_size,
 * csum_start/offset, num_buffers) through the device's TX path into a stub
 * backend; receive into (mergeable) buffers of a fuzzed queue, with the
 * backlog, the filter and every offload combination; the control queue
 * (RX mode, MAC table and address, announce, and the VLAN and MQ classes
 * the device refuses).
 *
 * The stub backend checks what the NIC promises a backend (the frame's
 * length matches its iovecs, a partial checksum lies inside the frame, a
 * GSO frame has a size), reads every byte, refuses frames to a
 * destination starting 0xEE (as a full TAP queue would), and may loop
 * each frame back into the receive path, as a TAP echoing the guest would.
 *
 * Input: a config byte (bits 0-3 the backend's offloads NETDEV_OFF_*, bit
 * 4 loop back, bit 5 flow control, both: three backend queues and mq=on,
 * bits 6-7 the MTU), then fuzz_vpci.h's set-up for the queues, then
 * fuzz_dev.h's ops whose step (op % 4 == 3) takes arg = op >> 2:
 *   arg % 8: 0 TX doorbell, 1 control doorbell, 2 RX doorbell (0 and 2:
 *              of pair (arg >> 3) % queues),
 *            3 the backend's poll on the I/O thread: a frame (RAM at
 *              FRAME_GPA: the 10-byte header, a 2-byte little-endian
 *              length, the frame; the byte before FRAME_GPA picks the
 *              backend queue), then the device's flush,
 *            4 link down/up (arg bit 3), 5 device reset,
 *            6 `info network`'s counters, 7 that frame without the flush
 *              (the backlog grows) */
#include <endian.h>
#include <errno.h>

#include "backends/backends.h"
#include "devices/virtio/net_internal.h"
#include "tests/fuzz/fuzz_vpci.h"

#define FRAME_GPA 0xF0000u

struct stub_netdev {
	struct netdev nd;
	bool loop;
	unsigned rx_offloads, flushes;
	uint8_t frame[NET_MAX_FRAME];
};

static struct fuzz_dev d;
static struct stub_netdev stub;
static struct virtio_net *net;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_virtio_net: the backend got %s\n", what);
		abort();
	}
}

/* What every backend relies on (tap.c writes it out, usernet parses it). */
static void check_sent(const struct virtio_net_hdr *h, size_t len, size_t iov_len)
{
	uint8_t gso = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;

	check(iov_len == len, "a frame whose iovecs are not its length");
	check(len >= ETH_HLEN && len <= NET_MAX_FRAME, "a frame of an impossible length");
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		check((size_t)le16toh(h->csum_start) + le16toh(h->csum_offset) + 2 <= len,
		      "a partial checksum outside the frame");
	if (gso != VIRTIO_NET_HDR_GSO_NONE)
		check(le16toh(h->gso_size) && (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM),
		      "a GSO frame without a size or a partial checksum");
}

static int stub_send(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		     const struct iovec *iov, int iovcnt, size_t len)
{
	size_t have = 0;

	check(q < nd->queues, "a queue it does not have");
	for (int i = 0; i < iovcnt; i++) {
		check(iov[i].iov_len <= sizeof(stub.frame) - have, "more bytes than the frame");
		memcpy(stub.frame + have, iov[i].iov_base, iov[i].iov_len); /* ASan reads them */
		have += iov[i].iov_len;
	}
	check_sent(hdr, len, have);
	if (stub.frame[0] == 0xEE) /* a full backend (a TAP's queue): dropped, counted */
		return -ENOBUFS;
	if (stub.loop && nd->rx)
		nd->rx(nd->rx_opaque, q, hdr, stub.frame, len);
	return 0;
}

/* A frame from "the host": header and length from guest RAM. */
static void stub_poll(struct netdev *nd)
{
	struct virtio_net_hdr h;
	uint16_t len;

	memcpy(&h, d.fake.ram + FRAME_GPA, sizeof(h));
	memcpy(&len, d.fake.ram + FRAME_GPA + sizeof(h), 2);
	len = le16toh(len);
	if (len > FUZZ_RAM - FRAME_GPA - sizeof(h) - 2)
		len = (uint16_t)(FUZZ_RAM - FRAME_GPA - sizeof(h) - 2);
	if (nd->rx)
		nd->rx(nd->rx_opaque, d.fake.ram[FRAME_GPA - 1] % nd->queues, &h,
		       d.fake.ram + FRAME_GPA + sizeof(h) + 2, len);
}

static void stub_flush(struct netdev *nd)
{
	stub.flushes++;
}

static void stub_set_rx_offloads(struct netdev *nd, unsigned off)
{
	stub.rx_offloads = off;
}

static const struct netdev_ops stub_ops = {
	.type = "fuzz",
	.send = stub_send,
	.flush = stub_flush,
	.poll = stub_poll,
	.set_rx_offloads = stub_set_rx_offloads,
};

static void step(struct fuzz_dev *dev, unsigned arg)
{
	struct virtio_net_info info;

	switch (arg % 8) {
	case 0:
		fuzz_vpci_serve(fuzz_vp, NET_TXQ((arg >> 3) % stub.nd.queues));
		break;
	case 1:
		fuzz_vpci_serve(fuzz_vp, 2 * stub.nd.queues); /* control */
		break;
	case 2:
		fuzz_vpci_serve(fuzz_vp, NET_RXQ((arg >> 3) % stub.nd.queues));
		break;
	case 3:
		fuzz_vp->ops->io_event(fuzz_vp->opaque);
		break;
	case 4:
		virtio_net_set_link(net, arg >> 3 & 1);
		break;
	case 5:
		fuzz_vpci_reset(fuzz_vp);
		break;
	case 6:
		virtio_net_get_info(net, &info);
		check(info.stats.rx_bytes >= info.stats.rx_frames * ETH_HLEN,
		      "counters where a received frame was shorter than a header");
		break;
	case 7:
		stub_poll(&stub.nd);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned mtus[4] = {1500, 68, 9000, 65535};
	static bool quiet;
	struct virtio_net_opts o = {.netdev = &stub.nd, .mac = {0x52, 0x54, 0, 0x12, 0x34, 0x56}};
	struct virtio_net_info info;
	unsigned cfg;
	char err[256];

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		d.step = step;
	}
	memset(d.fake.ram, 0, FUZZ_RAM);
	cfg = (unsigned)fuzz_take(&data, &size, 1);
	memset(&stub.nd, 0, sizeof(stub.nd));
	stub.nd.ops = &stub_ops;
	stub.nd.offloads = cfg & 15;
	stub.loop = cfg >> 4 & 1;
	stub.nd.rx_flow_control = cfg >> 5 & 1;
	/* both: a multiqueue backend with mq=on (3 pairs, VQ_PAIRS_SET) */
	stub.nd.queues = (cfg & 0x30) == 0x30 ? 3 : 1;
	o.mq = stub.nd.queues > 1;
	o.mtu = mtus[cfg >> 6 & 3];
	net = virtio_net_new(&d.fake.host, NULL, &o, err, sizeof(err));
	if (!net) {
		fprintf(stderr, "fuzz_virtio_net: %s\n", err);
		abort();
	}
	net->logged_bad_hdr = quiet; /* one "dropping a bad frame" per run, not per input */
	fuzz_vpci_setup(fuzz_vp, &data, &size);
	fuzz_dev_ops(&d, data, size);
	quiet |= net->logged_bad_hdr;
	if (getenv("FUZZ_VERBOSE")) { /* for writing seeds: how far it got */
		struct virtio_net_stats *st = &info.stats;

		virtio_net_get_info(net, &info);
		fprintf(stderr,
			"tx %lu bad-hdr %lu bad-chain %lu dropped %lu; rx %lu dropped %lu "
			"filtered %lu too-big %lu; ctrl-bad %lu; needs-reset %d\n",
			(unsigned long)st->tx_frames, (unsigned long)st->tx_bad_hdr,
			(unsigned long)st->tx_bad_chain, (unsigned long)st->tx_dropped,
			(unsigned long)st->rx_frames, (unsigned long)st->rx_dropped,
			(unsigned long)st->rx_filtered, (unsigned long)st->rx_too_big,
			(unsigned long)st->ctrl_bad, fuzz_vp->needs_reset);
	}
	virtio_net_free(net);
	return 0;
}
