/* dhcp.c — DHCP server for the virtual LAN (RFC 2131, options RFC 2132).
 *
 * Works on UDP payloads only: the caller receives requests on a netstack
 * channel and sends replies to where struct dhcp_dest says (the client has
 * no address yet, so they go to its MAC or the broadcast, not through
 * ARP: ns_chan_sendto_link). Every guest-supplied length is checked before use; anything
 * malformed is counted in dhcp_bad and dropped without a reply. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/internal.h"

enum {
	BOOTREQUEST = 1,
	BOOTREPLY = 2,
	HTYPE_ETHER = 1,
	BOOTP_FLAG_BROADCAST = 0x8000,
	OFFER_HOLD_S = 60,   /* an offer reserves its address this long */
	DECLINE_HOLD_S = 600 /* an address a client declined stays out */
};

enum dhcp_msg_type {
	DHCPDISCOVER = 1,
	DHCPOFFER,
	DHCPREQUEST,
	DHCPDECLINE,
	DHCPACK,
	DHCPNAK,
	DHCPRELEASE,
	DHCPINFORM,
};

enum dhcp_opt {
	OPT_PAD = 0,
	OPT_SUBNET_MASK = 1,
	OPT_ROUTER = 3,
	OPT_DNS = 6,
	OPT_HOSTNAME = 12,
	OPT_DOMAIN = 15,
	OPT_MTU = 26,
	OPT_BROADCAST = 28,
	OPT_REQUESTED_IP = 50,
	OPT_LEASE_TIME = 51,
	OPT_OVERLOAD = 52,
	OPT_MSG_TYPE = 53,
	OPT_SERVER_ID = 54,
	OPT_RENEWAL_T1 = 58,
	OPT_REBIND_T2 = 59,
	OPT_END = 255,
};

/* Fixed BOOTP header (RFC 2131 figure 1), network byte order. */
struct bootp {
	uint8_t op, htype, hlen, hops;
	uint32_t xid;
	uint16_t secs, flags;
	uint32_t ciaddr, yiaddr, siaddr, giaddr;
	uint8_t chaddr[16];
	uint8_t sname[64];
	uint8_t file[128];
	uint8_t cookie[4];
} __attribute__((packed));

static const uint8_t magic_cookie[4] = {99, 130, 83, 99};

/* What the server needs from a request's options. */
struct dhcp_req {
	int type;
	uint32_t requested, server_id; /* host order; 0 = absent */
	bool have_end;
};

static uint32_t get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, sizeof(v));
}

/* Parse one option area. Returns 0, or -EINVAL when an option runs past
 * the area. *overload collects option 52. */
static int parse_area(const uint8_t *p, size_t len, struct dhcp_req *r, int *overload)
{
	size_t i = 0;

	while (i < len) {
		uint8_t code = p[i], olen;
		const uint8_t *v;

		if (code == OPT_PAD) {
			i++;
			continue;
		}
		if (code == OPT_END) {
			r->have_end = true;
			return 0;
		}
		if (i + 2 > len || i + 2 + (size_t)p[i + 1] > len)
			return -EINVAL;
		olen = p[i + 1];
		v = p + i + 2;
		if (code == OPT_MSG_TYPE && olen == 1)
			r->type = v[0];
		else if (code == OPT_REQUESTED_IP && olen == 4)
			r->requested = get_be32(v);
		else if (code == OPT_SERVER_ID && olen == 4)
			r->server_id = get_be32(v);
		else if (code == OPT_OVERLOAD && olen == 1 && overload)
			*overload = v[0];
		i += 2 + (size_t)olen;
	}
	return 0;
}

/* Options, then file and sname when option 52 says they carry options. */
static int parse_options(const struct bootp *b, const uint8_t *opts, size_t len, struct dhcp_req *r)
{
	int overload = 0;

	memset(r, 0, sizeof(*r));
	if (parse_area(opts, len, r, &overload) < 0 || !r->have_end)
		return -EINVAL;
	if (overload & 1) {
		r->have_end = false;
		if (parse_area(b->file, sizeof(b->file), r, NULL) < 0 || !r->have_end)
			return -EINVAL;
	}
	if (overload & 2) {
		r->have_end = false;
		if (parse_area(b->sname, sizeof(b->sname), r, NULL) < 0 || !r->have_end)
			return -EINVAL;
	}
	return r->type >= DHCPDISCOVER && r->type <= DHCPINFORM ? 0 : -EINVAL;
}

int dhcp_server_init(struct dhcp_server *d, const struct usernet_cfg *cfg,
		     struct usernet_stats *stats)
{
	memset(d, 0, sizeof(*d));
	d->server_id = cfg->gateway;
	d->router = cfg->gateway;
	d->dns = cfg->dns;
	d->mask = 0xffffffffu << (32 - cfg->prefix);
	d->start = cfg->dhcp_start;
	d->count = cfg->dhcp_count;
	d->lease_time_s = cfg->lease_time_s;
	d->mtu = cfg->mtu;
	if (cfg->hostname)
		snprintf(d->hostname, sizeof(d->hostname), "%s", cfg->hostname);
	if (cfg->domain)
		snprintf(d->domain, sizeof(d->domain), "%s", cfg->domain);
	d->stats = stats;
	d->leases = calloc(d->count, sizeof(*d->leases));
	return d->leases ? 0 : -ENOMEM;
}

void dhcp_server_free(struct dhcp_server *d)
{
	free(d->leases);
	d->leases = NULL;
}

static bool lease_live(const struct dhcp_lease *l, uint64_t now_s)
{
	return l->state != LEASE_FREE && now_s < l->expires_s;
}

static struct dhcp_lease *lease_at(struct dhcp_server *d, uint32_t addr)
{
	if (addr < d->start || addr - d->start >= d->count)
		return NULL;
	return &d->leases[addr - d->start];
}

static uint32_t lease_addr(struct dhcp_server *d, const struct dhcp_lease *l)
{
	return d->start + (uint32_t)(l - d->leases);
}

/* May this client have addr? In range, and free or already its own. */
static bool lease_available(struct dhcp_server *d, uint32_t addr, const uint8_t mac[6],
			    uint64_t now_s)
{
	struct dhcp_lease *l = lease_at(d, addr);

	if (!l)
		return false;
	if (!lease_live(l, now_s))
		return true;
	return l->state != LEASE_DECLINED && !memcmp(l->mac, mac, 6);
}

/* The lease for a DISCOVER: the client's own, the one it asks for, the
 * first free one, else the oldest expired one. NULL when exhausted. */
static struct dhcp_lease *lease_choose(struct dhcp_server *d, const uint8_t mac[6],
				       uint32_t requested, uint64_t now_s)
{
	struct dhcp_lease *free_l = NULL;

	for (unsigned i = 0; i < d->count; i++) {
		struct dhcp_lease *l = &d->leases[i];

		if (lease_live(l, now_s) && l->state != LEASE_DECLINED && !memcmp(l->mac, mac, 6))
			return l;
	}
	if (requested && lease_available(d, requested, mac, now_s))
		return lease_at(d, requested);
	for (unsigned i = 0; i < d->count && !free_l; i++)
		if (!lease_live(&d->leases[i], now_s))
			free_l = &d->leases[i];
	return free_l;
}

/* Reply options; returns the end offset inside the options area. */
static size_t put_options(struct dhcp_server *d, uint8_t *o, size_t cap, int type, bool lease)
{
	size_t n = 0;

#define PUT32(code, v)                                                                             \
	do {                                                                                       \
		o[n] = (code);                                                                     \
		o[n + 1] = 4;                                                                      \
		put_be32(o + n + 2, (v));                                                          \
		n += 6;                                                                            \
	} while (0)
	o[n++] = OPT_MSG_TYPE;
	o[n++] = 1;
	o[n++] = (uint8_t)type;
	PUT32(OPT_SERVER_ID, d->server_id);
	if (type != DHCPNAK) {
		if (lease) {
			PUT32(OPT_LEASE_TIME, d->lease_time_s);
			PUT32(OPT_RENEWAL_T1, d->lease_time_s / 2);
			PUT32(OPT_REBIND_T2, d->lease_time_s / 8 * 7);
		}
		PUT32(OPT_SUBNET_MASK, d->mask);
		PUT32(OPT_ROUTER, d->router);
		PUT32(OPT_DNS, d->dns);
		PUT32(OPT_BROADCAST, (d->start & d->mask) | ~d->mask);
		o[n++] = OPT_MTU;
		o[n++] = 2;
		o[n++] = (uint8_t)(d->mtu >> 8);
		o[n++] = (uint8_t)d->mtu;
		for (int i = 0; i < 2; i++) {
			const char *s = i ? d->domain : d->hostname;
			size_t l = strlen(s);

			if (!l || n + 2 + l + 1 > cap)
				continue;
			o[n++] = i ? OPT_DOMAIN : OPT_HOSTNAME;
			o[n++] = (uint8_t)l;
			memcpy(o + n, s, l);
			n += l;
		}
	}
#undef PUT32
	o[n++] = OPT_END;
	return n;
}

static size_t build_reply(struct dhcp_server *d, const struct bootp *req, int type, uint32_t yiaddr,
			  uint8_t *out, size_t cap, struct dhcp_dest *dest)
{
	struct bootp *r = (void *)out;
	size_t n;

	memset(out, 0, DHCP_REPLY_MAX);
	r->op = BOOTREPLY;
	r->htype = HTYPE_ETHER;
	r->hlen = 6;
	r->xid = req->xid;
	r->flags = req->flags;
	r->giaddr = req->giaddr;
	memcpy(r->chaddr, req->chaddr, 6);
	if (type != DHCPNAK) {
		r->yiaddr = htonl(yiaddr);
		r->siaddr = htonl(d->server_id);
		if (type == DHCPACK && req->ciaddr && !yiaddr)
			r->ciaddr = req->ciaddr; /* INFORM */
	}
	memcpy(r->cookie, magic_cookie, 4);
	n = put_options(d, out + sizeof(*r), cap - sizeof(*r), type, yiaddr != 0);
	memcpy(dest->mac, req->chaddr, 6);
	/* RFC 2131 4.1: NAKs and clients that ask for it get broadcasts;
	 * a renewing client (ciaddr set) gets unicast to ciaddr. */
	dest->broadcast = type == DHCPNAK || (ntohs(req->flags) & BOOTP_FLAG_BROADCAST);
	dest->addr = req->ciaddr ? ntohl(req->ciaddr) : yiaddr;
	if (!dest->addr)
		dest->broadcast = true;
	if (type == DHCPOFFER)
		d->stats->dhcp_offer++;
	else if (type == DHCPACK)
		d->stats->dhcp_ack++;
	else if (type == DHCPNAK)
		d->stats->dhcp_nak++;
	n += sizeof(*r);
	return n < 300 ? 300 : n; /* BOOTP minimum message size */
}

static size_t on_discover(struct dhcp_server *d, const struct bootp *b, const struct dhcp_req *r,
			  uint64_t now_s, uint8_t *out, size_t cap, struct dhcp_dest *dest)
{
	struct dhcp_lease *l;

	d->stats->dhcp_discover++;
	l = lease_choose(d, b->chaddr, r->requested, now_s);
	if (!l) {
		d->stats->dhcp_exhausted++;
		return 0;
	}
	if (l->state != LEASE_BOUND || !lease_live(l, now_s)) {
		l->state = LEASE_OFFERED;
		l->expires_s = now_s + OFFER_HOLD_S;
	}
	memcpy(l->mac, b->chaddr, 6);
	return build_reply(d, b, DHCPOFFER, lease_addr(d, l), out, cap, dest);
}

static size_t on_request(struct dhcp_server *d, const struct bootp *b, const struct dhcp_req *r,
			 uint64_t now_s, uint8_t *out, size_t cap, struct dhcp_dest *dest)
{
	uint32_t want = r->requested ? r->requested : ntohl(b->ciaddr);
	struct dhcp_lease *l;

	d->stats->dhcp_request++;
	if (r->server_id && r->server_id != d->server_id) {
		/* The client took another server's offer: drop ours. */
		for (unsigned i = 0; i < d->count; i++) {
			l = &d->leases[i];
			if (l->state == LEASE_OFFERED && !memcmp(l->mac, b->chaddr, 6))
				l->state = LEASE_FREE;
		}
		return 0;
	}
	if (!want || !lease_available(d, want, b->chaddr, now_s))
		return build_reply(d, b, DHCPNAK, 0, out, cap, dest);
	l = lease_at(d, want);
	l->state = LEASE_BOUND;
	l->expires_s = now_s + d->lease_time_s;
	memcpy(l->mac, b->chaddr, 6);
	return build_reply(d, b, DHCPACK, want, out, cap, dest);
}

static void on_release(struct dhcp_server *d, const struct bootp *b, bool decline,
		       const struct dhcp_req *r, uint64_t now_s)
{
	uint32_t addr = decline ? r->requested : ntohl(b->ciaddr);
	struct dhcp_lease *l = lease_at(d, addr);

	d->stats->dhcp_release++;
	if (!l || !lease_live(l, now_s) || memcmp(l->mac, b->chaddr, 6))
		return;
	if (decline) {
		l->state = LEASE_DECLINED;
		l->expires_s = now_s + DECLINE_HOLD_S;
	} else {
		l->state = LEASE_FREE;
	}
}

size_t dhcp_handle(struct dhcp_server *d, const uint8_t *msg, size_t len, uint64_t now_s,
		   uint8_t *out, size_t cap, struct dhcp_dest *dest)
{
	struct bootp b;
	struct dhcp_req r;

	if (len < DHCP_MSG_MIN || cap < DHCP_REPLY_MAX)
		goto bad;
	memcpy(&b, msg, sizeof(b));
	if (b.op != BOOTREQUEST || b.htype != HTYPE_ETHER || b.hlen != 6 ||
	    memcmp(b.cookie, magic_cookie, 4) || (b.chaddr[0] & 1))
		goto bad;
	if (parse_options(&b, msg + sizeof(b), len - sizeof(b), &r) < 0)
		goto bad;
	switch (r.type) {
	case DHCPDISCOVER:
		return on_discover(d, &b, &r, now_s, out, cap, dest);
	case DHCPREQUEST:
		return on_request(d, &b, &r, now_s, out, cap, dest);
	case DHCPDECLINE:
	case DHCPRELEASE:
		on_release(d, &b, r.type == DHCPDECLINE, &r, now_s);
		return 0;
	case DHCPINFORM:
		return build_reply(d, &b, DHCPACK, 0, out, cap, dest);
	default:
		break; /* server-to-client types from a client */
	}
bad:
	d->stats->dhcp_bad++;
	return 0;
}
