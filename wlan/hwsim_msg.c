/* hwsim_msg.c — MAC80211_HWSIM generic-netlink messages, parsed as hostile
 * input and built for the guest. Layout: struct nlmsghdr, struct
 * genlmsghdr, then attributes (struct nlattr, 4-byte aligned) as
 * mac80211_hwsim_tx_frame_nl() and hwsim_virtio_handle_cmd() use them. */
#include <endian.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>

#include "wlan/wlan.h"

#define HDRS_LEN (NLMSG_HDRLEN + GENL_HDRLEN)

/* Exact payload size per attribute; 0: variable (checked by the caller),
 * -1: ignored (an attribute the medium has no use for). */
static int attr_size(unsigned type)
{
	switch (type) {
	case HWSIM_ATTR_ADDR_RECEIVER:
	case HWSIM_ATTR_ADDR_TRANSMITTER:
		return ETH_ALEN_WLAN;
	case HWSIM_ATTR_FLAGS:
	case HWSIM_ATTR_RX_RATE:
	case HWSIM_ATTR_SIGNAL:
	case HWSIM_ATTR_FREQ:
		return 4;
	case HWSIM_ATTR_COOKIE:
		return 8;
	case HWSIM_ATTR_TX_INFO:
		return HWSIM_TX_INFO_LEN;
	case HWSIM_ATTR_TX_INFO_FLAGS:
		return HWSIM_TX_INFO_FLAGS_LEN;
	case HWSIM_ATTR_FRAME:
		return 0;
	default:
		return -1;
	}
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* netlink is host order; attributes may be unaligned */
	return v;
}

static void store_attr(struct hwsim_msg *m, unsigned type, const uint8_t *p, uint32_t len)
{
	m->present |= 1u << type;
	switch (type) {
	case HWSIM_ATTR_ADDR_RECEIVER:
		m->rx_addr = p;
		break;
	case HWSIM_ATTR_ADDR_TRANSMITTER:
		m->tx_addr = p;
		break;
	case HWSIM_ATTR_FRAME:
		m->frame = p;
		m->frame_len = len;
		break;
	case HWSIM_ATTR_FLAGS:
		m->flags = get_u32(p);
		break;
	case HWSIM_ATTR_RX_RATE:
		m->rx_rate = get_u32(p);
		break;
	case HWSIM_ATTR_SIGNAL:
		m->signal = get_u32(p);
		break;
	case HWSIM_ATTR_FREQ:
		m->freq = get_u32(p);
		break;
	case HWSIM_ATTR_COOKIE:
		memcpy(&m->cookie, p, 8);
		break;
	case HWSIM_ATTR_TX_INFO:
		m->tx_info = p;
		break;
	case HWSIM_ATTR_TX_INFO_FLAGS:
		m->tx_info_flags = p;
		break;
	}
}

static int fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -1;
}

/* Walk the attributes of [p, end): each header inside, each length inside,
 * each known attribute of its exact size. */
static int parse_attrs(const uint8_t *p, const uint8_t *end, struct hwsim_msg *m, const char **why)
{
	while (p < end) {
		struct nlattr a;

		if ((size_t)(end - p) < NLA_HDRLEN)
			return fail(why, "truncated attribute header");
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > (size_t)(end - p))
			return fail(why, "attribute length outside the message");
		unsigned type = a.nla_type & NLA_TYPE_MASK;
		uint32_t plen = a.nla_len - NLA_HDRLEN;
		int want = type <= HWSIM_ATTR_MAX ? attr_size(type) : -1;

		if (want > 0 && plen != (uint32_t)want)
			return fail(why, "attribute of the wrong size");
		if (type == HWSIM_ATTR_FRAME && (plen == 0 || plen > HWSIM_MAX_FRAME_LEN))
			return fail(why, "frame attribute empty or longer than 2304 bytes");
		if (want >= 0)
			store_attr(m, type, p + NLA_HDRLEN, plen);
		size_t step = NLA_ALIGN(a.nla_len);

		if (step > (size_t)(end - p))
			step = (size_t)(end - p); /* the last attribute needs no padding */
		p += step;
	}
	return 0;
}

/* The 802.11 header: protocol version 0, not the reserved type, and as
 * long as its type needs (addr1..addr3 and sequence: 24; control: 10). */
static int check_frame(const uint8_t *f, uint32_t len, const char **why)
{
	if (len < 10)
		return fail(why, "802.11 frame shorter than a header");
	unsigned fc = f[0] | f[1] << 8, type = (fc >> 2) & 3;

	if (fc & 3)
		return fail(why, "802.11 protocol version is not 0");
	if (type == 3)
		return fail(why, "802.11 frame of the reserved type");
	if (type != 1 && len < 24)
		return fail(why, "802.11 management/data frame shorter than 24 bytes");
	return 0;
}

#define HAS(m, a) ((m)->present & (1u << (a)))

static int check_command(const struct hwsim_msg *m, const char **why)
{
	switch (m->cmd) {
	case HWSIM_CMD_FRAME:
		if (!HAS(m, HWSIM_ATTR_ADDR_TRANSMITTER) || !HAS(m, HWSIM_ATTR_FRAME) ||
		    !HAS(m, HWSIM_ATTR_FLAGS) || !HAS(m, HWSIM_ATTR_COOKIE) ||
		    !HAS(m, HWSIM_ATTR_TX_INFO))
			return fail(why,
				    "frame without transmitter, frame, flags, cookie or tx info");
		if (!HAS(m, HWSIM_ATTR_FREQ) || m->freq == 0 || m->freq > 100000)
			return fail(why, "frame without a valid frequency");
		return check_frame(m->frame, m->frame_len, why);
	case HWSIM_CMD_ADD_MAC_ADDR:
	case HWSIM_CMD_DEL_MAC_ADDR:
		if (!HAS(m, HWSIM_ATTR_ADDR_TRANSMITTER) || !HAS(m, HWSIM_ATTR_ADDR_RECEIVER))
			return fail(why, "MAC address command without both addresses");
		return 0;
	default:
		return fail(why, "command a guest radio does not send");
	}
}

int hwsim_msg_parse(const void *buf, size_t len, struct hwsim_msg *m, const char **why)
{
	const uint8_t *p = buf;
	struct nlmsghdr nh;
	struct genlmsghdr gh;

	memset(m, 0, sizeof(*m));
	if (len < HDRS_LEN)
		return fail(why, "shorter than the netlink and genetlink headers");
	memcpy(&nh, p, sizeof(nh));
	memcpy(&gh, p + NLMSG_HDRLEN, sizeof(gh));
	if (nh.nlmsg_len < HDRS_LEN || nh.nlmsg_len > len)
		return fail(why, "nlmsg_len outside the buffer");
	m->cmd = gh.cmd;
	m->nl_type = nh.nlmsg_type;
	if (parse_attrs(p + HDRS_LEN, p + nh.nlmsg_len, m, why))
		return -1;
	return check_command(m, why);
}

uint32_t hwsim_msg_width_mhz(const struct hwsim_msg *m)
{
	uint16_t f;

	if (!m->tx_info_flags)
		return 20;
	memcpy(&f, m->tx_info_flags + 1, 2); /* entry 0: s8 idx, u16 flags */
	if (f & HWSIM_RC_160_MHZ)
		return 160;
	if (f & HWSIM_RC_80_MHZ)
		return 80;
	return f & HWSIM_RC_40_MHZ ? 40 : 20;
}

/* The receiver's HWSIM_ATTR_RX_RATE is an index into its band's legacy
 * rates: mac80211_hwsim drops a frame whose index is past the band's table
 * (12 at 2.4 GHz, 8 elsewhere), and an HT/VHT MCS is no legacy index. So:
 * the sender's first legacy rate where it is one, else the lowest rate. */
uint32_t hwsim_msg_rx_rate(const struct hwsim_msg *m)
{
	int8_t idx = (int8_t)m->tx_info[0];
	uint32_t n_legacy = m->freq < 3000 ? 12 : 8;
	uint16_t f = 0;

	if (m->tx_info_flags)
		memcpy(&f, m->tx_info_flags + 1, 2);
	if (idx < 0 || (uint32_t)idx >= n_legacy || (f & (HWSIM_RC_MCS | HWSIM_RC_VHT_MCS)))
		return 0;
	return (uint32_t)idx;
}

enum regdb_frame wlan_frame_kind(const uint8_t *frame, uint32_t len)
{
	if (len < 2 || ((frame[0] >> 2) & 3) != 0)
		return REGDB_FRAME_DATA; /* control and data frames */
	switch (frame[0] >> 4) {
	case 8:
		return REGDB_FRAME_BEACON;
	case 4:
		return REGDB_FRAME_PROBE;
	default:
		return REGDB_FRAME_DATA; /* responses and the rest of management */
	}
}

/* ----------------------------------------------------------- building */

struct builder {
	uint8_t *buf;
	size_t size, len;
	bool overflow;
};

static void put_attr(struct builder *b, unsigned type, const void *data, size_t len)
{
	size_t need = NLA_ALIGN(NLA_HDRLEN + len);
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = (uint16_t)type};

	if (b->overflow || b->len + need > b->size || NLA_HDRLEN + len > UINT16_MAX) {
		b->overflow = true;
		return;
	}
	memcpy(b->buf + b->len, &a, sizeof(a));
	memcpy(b->buf + b->len + NLA_HDRLEN, data, len);
	memset(b->buf + b->len + NLA_HDRLEN + len, 0, need - NLA_HDRLEN - len);
	b->len += need;
}

static void put_u32(struct builder *b, unsigned type, uint32_t v)
{
	put_attr(b, type, &v, 4);
}

static bool begin(struct builder *b, uint8_t *buf, size_t size, uint8_t cmd)
{
	*b = (struct builder){buf, size, HDRS_LEN, size < HDRS_LEN};
	if (b->overflow)
		return false;
	memset(buf, 0, HDRS_LEN);
	buf[NLMSG_HDRLEN] = cmd; /* genlmsghdr.cmd; version and reserved 0 */
	return true;
}

static size_t finish(struct builder *b, uint16_t nl_type)
{
	struct nlmsghdr nh = {.nlmsg_len = (uint32_t)b->len, .nlmsg_type = nl_type};

	if (b->overflow)
		return 0;
	memcpy(b->buf, &nh, sizeof(nh));
	return b->len;
}

size_t hwsim_build_frame(uint8_t *buf, size_t size, uint16_t nl_type, const uint8_t *rx_addr,
			 const uint8_t *frame, uint32_t frame_len, uint32_t rx_rate, int32_t signal,
			 uint32_t freq)
{
	struct builder b;

	if (!begin(&b, buf, size, HWSIM_CMD_FRAME))
		return 0;
	put_attr(&b, HWSIM_ATTR_ADDR_RECEIVER, rx_addr, ETH_ALEN_WLAN);
	put_attr(&b, HWSIM_ATTR_FRAME, frame, frame_len);
	put_u32(&b, HWSIM_ATTR_RX_RATE, rx_rate);
	put_u32(&b, HWSIM_ATTR_SIGNAL, (uint32_t)signal);
	put_u32(&b, HWSIM_ATTR_FREQ, freq);
	return finish(&b, nl_type);
}

size_t hwsim_build_tx_info(uint8_t *buf, size_t size, uint16_t nl_type, const uint8_t *tx_addr,
			   uint32_t flags, int32_t signal, const uint8_t *tx_info, uint64_t cookie)
{
	struct builder b;

	if (!begin(&b, buf, size, HWSIM_CMD_TX_INFO_FRAME))
		return 0;
	put_attr(&b, HWSIM_ATTR_ADDR_TRANSMITTER, tx_addr, ETH_ALEN_WLAN);
	put_u32(&b, HWSIM_ATTR_FLAGS, flags);
	put_u32(&b, HWSIM_ATTR_SIGNAL, (uint32_t)signal);
	put_attr(&b, HWSIM_ATTR_TX_INFO, tx_info, HWSIM_TX_INFO_LEN);
	put_attr(&b, HWSIM_ATTR_COOKIE, &cookie, 8);
	return finish(&b, nl_type);
}

size_t hwsim_build_tx(uint8_t *buf, size_t size, const uint8_t *tx_addr, const uint8_t *frame,
		      uint32_t frame_len, uint32_t flags, uint32_t freq, uint32_t width_mhz,
		      uint64_t cookie)
{
	uint8_t info[HWSIM_TX_INFO_LEN] = {0, 1, 0xff, 0, 0xff, 0, 0xff, 0};
	uint8_t rflags[HWSIM_TX_INFO_FLAGS_LEN] = {0};
	uint16_t wf = width_mhz >= 160	? HWSIM_RC_160_MHZ
		      : width_mhz >= 80 ? HWSIM_RC_80_MHZ
		      : width_mhz >= 40 ? HWSIM_RC_40_MHZ
					: 0;
	struct builder b;

	memcpy(rflags + 1, &wf, 2);
	if (!begin(&b, buf, size, HWSIM_CMD_FRAME))
		return 0;
	put_attr(&b, HWSIM_ATTR_ADDR_TRANSMITTER, tx_addr, ETH_ALEN_WLAN);
	put_attr(&b, HWSIM_ATTR_FRAME, frame, frame_len);
	put_u32(&b, HWSIM_ATTR_FLAGS, flags);
	put_u32(&b, HWSIM_ATTR_FREQ, freq);
	put_attr(&b, HWSIM_ATTR_TX_INFO, info, sizeof(info));
	put_attr(&b, HWSIM_ATTR_TX_INFO_FLAGS, rflags, sizeof(rflags));
	put_attr(&b, HWSIM_ATTR_COOKIE, &cookie, 8);
	return finish(&b, HWSIM_GENL_DEFAULT_TYPE);
}

size_t hwsim_build_mac_addr(uint8_t *buf, size_t size, bool add, const uint8_t *hw_addr,
			    const uint8_t *vif_addr)
{
	struct builder b;

	if (!begin(&b, buf, size, add ? HWSIM_CMD_ADD_MAC_ADDR : HWSIM_CMD_DEL_MAC_ADDR))
		return 0;
	put_attr(&b, HWSIM_ATTR_ADDR_TRANSMITTER, hw_addr, ETH_ALEN_WLAN);
	put_attr(&b, HWSIM_ATTR_ADDR_RECEIVER, vif_addr, ETH_ALEN_WLAN);
	return finish(&b, HWSIM_GENL_DEFAULT_TYPE);
}
