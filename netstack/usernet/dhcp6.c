/* dhcp6.c — stateless DHCPv6 (RFC 8415 6.1, 18.2.6): the router
 * advertisement says O=1, the guest sends an Information-Request, the
 * reply carries the DNS server (RFC 3646). Addresses come from SLAAC, so
 * Solicit and the stateful messages are not answered. */
#include <string.h>

#include "netstack/usernet/internal.h"

enum {
	MSG_REPLY = 7,
	MSG_INFORMATION_REQUEST = 11,
	OPT_CLIENTID = 1,
	OPT_SERVERID = 2,
	OPT_ORO = 6,
	OPT_DNS_SERVERS = 23,
};

static size_t put_opt(uint8_t *p, uint16_t code, const void *data, uint16_t len)
{
	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + 4, data, len);
	return 4u + len;
}

/* The option code's data in msg's options (from off), NULL if absent or
 * if the options run past the end. */
static const uint8_t *find_opt(const uint8_t *msg, size_t len, uint16_t code, uint16_t *olen,
			       bool *bad)
{
	const uint8_t *found = NULL;

	for (size_t off = 4; off < len;) {
		uint16_t c, l;

		if (off + 4 > len) {
			*bad = true;
			return NULL;
		}
		c = (uint16_t)(msg[off] << 8 | msg[off + 1]);
		l = (uint16_t)(msg[off + 2] << 8 | msg[off + 3]);
		if (off + 4 + l > len) {
			*bad = true;
			return NULL;
		}
		if (c == code && !found) {
			found = msg + off + 4;
			*olen = l;
		}
		off += 4u + l;
	}
	return found;
}

size_t dhcp6_handle(const uint8_t server_mac[6], const uint8_t dns[16], const uint8_t *msg,
		    size_t len, uint8_t *out, size_t cap, struct usernet_stats *stats)
{
	/* DUID-LL (RFC 8415 11.4): type 3, hardware type 1, the MAC. */
	uint8_t duid[10] = {0, 3, 0, 1};
	const uint8_t *cid, *sid;
	uint16_t cidlen = 0, sidlen = 0;
	bool bad = false;
	size_t n = 4;

	if (len < 4 || msg[0] != MSG_INFORMATION_REQUEST || cap < 4 + 14 + 4 + 16 + 4 + 128)
		return 0;
	memcpy(duid + 4, server_mac, 6);
	cid = find_opt(msg, len, OPT_CLIENTID, &cidlen, &bad);
	sid = find_opt(msg, len, OPT_SERVERID, &sidlen, &bad);
	/* RFC 8415 16.12: a server ID, when present, must be ours. */
	if (bad || cidlen > 128 || (sid && (sidlen != sizeof(duid) || memcmp(sid, duid, 10)))) {
		stats->dhcp_bad++;
		return 0;
	}
	out[0] = MSG_REPLY;
	memcpy(out + 1, msg + 1, 3); /* transaction id */
	n += put_opt(out + n, OPT_SERVERID, duid, sizeof(duid));
	if (cid)
		n += put_opt(out + n, OPT_CLIENTID, cid, cidlen);
	n += put_opt(out + n, OPT_DNS_SERVERS, dns, 16);
	stats->dhcp6_info++;
	return n;
}
