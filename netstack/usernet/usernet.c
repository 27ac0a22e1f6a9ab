/* usernet.c — the backend type: configuration defaults, the choice of
 * implementation, hostfwd spec parsing and the stats printer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/netstack.h"
#include "netstack/usernet/internal.h"

struct usernet {
	const struct usernet_ops *ops;
	void *impl;
	struct usernet_cfg cfg;
};

int usernet_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* libslirp's: fd00::/64, the host ::2, DNS ::3. */
static void ipv6_defaults(struct usernet_cfg *c)
{
	if (all_zero(c->ipv6_net, 16)) {
		c->ipv6_net[0] = 0xfd;
		if (!c->ipv6_prefix)
			c->ipv6_prefix = 64;
	}
	if (!c->ipv6_prefix)
		c->ipv6_prefix = 64;
	if (all_zero(c->ipv6_host, 16)) {
		memcpy(c->ipv6_host, c->ipv6_net, 16);
		c->ipv6_host[15] |= 2;
	}
	if (all_zero(c->ipv6_dns, 16)) {
		memcpy(c->ipv6_dns, c->ipv6_net, 16);
		c->ipv6_dns[15] |= 3;
	}
}

int usernet_parse_ipv6_option(struct usernet_cfg *c, const char *opt)
{
	if (!strcmp(opt, "ipv6=off"))
		c->ipv6_off = true;
	else if (!strcmp(opt, "ipv6=on"))
		c->ipv6_off = false;
	else if (!strncmp(opt, "ipv6-net=", 9))
		return ns_parse_cidr6(opt + 9, c->ipv6_net, &c->ipv6_prefix) < 0 ||
				       c->ipv6_prefix > 64 || c->ipv6_prefix < 8
			       ? -EINVAL
			       : 0;
	else if (!strncmp(opt, "ipv6-host=", 10))
		return ns_parse_addr6(opt + 10, c->ipv6_host);
	else if (!strncmp(opt, "ipv6-dns=", 9))
		return ns_parse_addr6(opt + 9, c->ipv6_dns);
	else
		return -ENOENT;
	return 0;
}

void usernet_cfg_defaults(struct usernet_cfg *c)
{
	static const uint8_t mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};

	if (!c->net) {
		c->net = 0x0a000200; /* 10.0.2.0 */
		if (!c->prefix)
			c->prefix = 24;
	}
	if (!c->prefix)
		c->prefix = 24;
	if (!c->gateway)
		c->gateway = c->net + 2;
	if (!c->dns)
		c->dns = c->net + 3;
	if (!c->dhcp_start)
		c->dhcp_start = c->net + 15;
	if (!c->dhcp_count)
		c->dhcp_count = 16;
	if (!c->lease_time_s)
		c->lease_time_s = 86400;
	if (!c->mtu)
		c->mtu = 1500;
	if (!c->max_tcp_flows)
		c->max_tcp_flows = 4096;
	if (!c->max_udp_flows)
		c->max_udp_flows = 1024;
	if (!c->udp_idle_s)
		c->udp_idle_s = 60;
	if (!c->tcp_buf)
		c->tcp_buf = 64 * 1024;
	if (!c->tcp_window)
		c->tcp_window = 1024 * 1024;
	if (!memcmp(c->gateway_mac, "\0\0\0\0\0\0", 6))
		memcpy(c->gateway_mac, mac, 6);
	ipv6_defaults(c);
}

int usernet_parse_impl(const char *s, enum usernet_impl *impl)
{
	if (!strcmp(s, "netstack"))
		*impl = USERNET_IMPL_NETSTACK;
	else if (!strcmp(s, "slirp"))
		*impl = USERNET_IMPL_SLIRP;
	else
		return -EINVAL;
	return 0;
}

const char *usernet_impl_name(enum usernet_impl impl)
{
	return impl == USERNET_IMPL_SLIRP ? "slirp" : "netstack";
}

static int check_cfg(const struct usernet_cfg *c, char *err, size_t errlen)
{
	uint32_t mask = c->prefix ? 0xffffffffu << (32 - c->prefix) : 0;

	if (c->prefix < 8 || c->prefix > 30)
		return usernet_fail(err, errlen, -EINVAL, "prefix /%u: must be 8..30", c->prefix);
	if ((c->net & ~mask) || (c->gateway & mask) != c->net || (c->dns & mask) != c->net ||
	    (c->dhcp_start & mask) != c->net ||
	    ((c->dhcp_start + c->dhcp_count - 1) & mask) != c->net)
		return usernet_fail(err, errlen, -EINVAL,
				    "gateway, DNS and DHCP range must lie inside the network");
	if (c->mtu < 576 || c->mtu > 65520)
		return usernet_fail(err, errlen, -EINVAL, "MTU %u: must be 576..65520", c->mtu);
	if (!c->send)
		return usernet_fail(err, errlen, -EINVAL, "no send-frame callback");
	return 0;
}

struct usernet *usernet_new(const struct usernet_cfg *cfg, char *err, size_t errlen)
{
	struct usernet *u = calloc(1, sizeof(*u));

	if (!u) {
		usernet_fail(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	u->cfg = *cfg;
	usernet_cfg_defaults(&u->cfg);
	if (check_cfg(&u->cfg, err, errlen) < 0) {
		free(u);
		return NULL;
	}
	u->ops = u->cfg.impl == USERNET_IMPL_SLIRP ? &usernet_slirp_ops : &usernet_netstack_ops;
	u->impl = u->ops->create(&u->cfg, err, errlen);
	if (!u->impl) {
		free(u);
		return NULL;
	}
	return u;
}

void usernet_free(struct usernet *u)
{
	if (!u)
		return;
	u->ops->destroy(u->impl);
	free(u);
}

void usernet_input(struct usernet *u, const void *frame, size_t len)
{
	u->ops->input(u->impl, frame, len);
}

int usernet_fd(struct usernet *u)
{
	return u->ops->fd(u->impl);
}

int usernet_timeout_ms(struct usernet *u)
{
	return u->ops->timeout_ms(u->impl);
}

void usernet_poll(struct usernet *u)
{
	u->ops->poll(u->impl);
}

void usernet_stats(struct usernet *u, struct usernet_stats *st)
{
	memset(st, 0, sizeof(*st));
	u->ops->stats(u->impl, st);
}

static int no_state(struct usernet *u, char *err, size_t errlen)
{
	return usernet_fail(err, errlen, -ENOTSUP, "usernet impl=%s keeps no state across a save",
			    u->ops->name);
}

int usernet_save(struct usernet *u, void **buf, size_t *len, char *err, size_t errlen)
{
	if (!u->ops->save)
		return no_state(u, err, errlen);
	return u->ops->save(u->impl, buf, len, NULL, NULL, err, errlen);
}

int usernet_load(struct usernet *u, const void *buf, size_t len, char *err, size_t errlen)
{
	if (!u->ops->load)
		return no_state(u, err, errlen);
	return u->ops->load(u->impl, buf, len, NULL, 0, err, errlen);
}

int usernet_save_fds(struct usernet *u, void **buf, size_t *len, int **fds, unsigned *nfds,
		     char *err, size_t errlen)
{
	if (!u->ops->save)
		return no_state(u, err, errlen);
	return u->ops->save(u->impl, buf, len, fds, nfds, err, errlen);
}

int usernet_load_fds(struct usernet *u, const void *buf, size_t len, const int *fds,
		     unsigned nfds, char *err, size_t errlen)
{
	if (!u->ops->load)
		return no_state(u, err, errlen);
	return u->ops->load(u->impl, buf, len, fds, nfds, err, errlen);
}

void usernet_hand_over(struct usernet *u)
{
	if (u->ops->hand_over)
		u->ops->hand_over(u->impl);
}

/* "A:PORT", "[V6]:PORT" or ":PORT" (the default address) up to end. */
static int parse_addr_port(const char *p, const char *end, uint32_t dflt, uint32_t *addr,
			   uint8_t addr6[16], bool *is6, uint16_t *port)
{
	const char *colon, *host = p, *hend;
	char buf[64], *e;
	unsigned long v;

	if (p < end && *p == '[') { /* [v6]:port */
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb || rb + 1 >= end || rb[1] != ':')
			return -EINVAL;
		host = p + 1;
		hend = rb;
		colon = rb + 1;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		hend = colon;
	}
	if (!colon || (size_t)(hend - host) >= sizeof(buf) || (size_t)(end - colon) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, host, (size_t)(hend - host));
	buf[hend - host] = 0;
	*is6 = host != p;
	if (*is6 ? ns_parse_addr6(buf, addr6) < 0 : buf[0] && ns_parse_addr(buf, addr) < 0)
		return -EINVAL;
	if (!*is6 && !buf[0])
		*addr = dflt;
	memcpy(buf, colon + 1, (size_t)(end - colon - 1));
	buf[end - colon - 1] = 0;
	v = strtoul(buf, &e, 10);
	if (!buf[0] || *e || v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int usernet_parse_fwd(const char *spec, uint32_t guest_default, struct usernet_fwd *fwd)
{
	const char *dash, *rest;

	memset(fwd, 0, sizeof(*fwd));
	if (!strncmp(spec, "tcp:", 4))
		fwd->udp = false;
	else if (!strncmp(spec, "udp:", 4))
		fwd->udp = true;
	else
		return -EINVAL;
	rest = spec + 4;
	dash = strchr(rest, '-');
	if (!dash)
		return -EINVAL;
	if (parse_addr_port(rest, dash, 0x7f000001, &fwd->host_addr, fwd->host_addr6, &fwd->host6,
			    &fwd->host_port) < 0 ||
	    parse_addr_port(dash + 1, dash + 1 + strlen(dash + 1), guest_default, &fwd->guest_addr,
			    fwd->guest_addr6, &fwd->guest6, &fwd->guest_port) < 0)
		return -EINVAL;
	return 0;
}

static int hostfwd(struct usernet *u, bool add, const char *spec, char *err, size_t errlen)
{
	struct usernet_fwd fwd;

	if (usernet_parse_fwd(spec, u->cfg.dhcp_start, &fwd) < 0)
		return usernet_fail(err, errlen, -EINVAL,
				    "hostfwd '%s': expected tcp|udp:HADDR:HPORT-GADDR:GPORT", spec);
	return u->ops->hostfwd(u->impl, add, &fwd, err, errlen);
}

int usernet_hostfwd_check(const char *spec, char *err, size_t errlen)
{
	struct usernet_fwd fwd;

	if (usernet_parse_fwd(spec, 0, &fwd) < 0)
		return usernet_fail(err, errlen, -EINVAL,
				    "hostfwd '%s': expected tcp|udp:HADDR:HPORT-GADDR:GPORT", spec);
	return 0;
}

int usernet_hostfwd_add(struct usernet *u, const char *spec, char *err, size_t errlen)
{
	return hostfwd(u, true, spec, err, errlen);
}

int usernet_hostfwd_remove(struct usernet *u, const char *spec, char *err, size_t errlen)
{
	return hostfwd(u, false, spec, err, errlen);
}

int usernet_stats_format(const struct usernet_stats *s, char *buf, size_t len)
{
	/* One table so the names stay next to the fields they print. */
	/* clang-format off */
#define F(x) { #x, offsetof(struct usernet_stats, x) }
	/* clang-format on */
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
		F(rx_frames),	     F(rx_bytes),	   F(tx_frames),	F(tx_bytes),
		F(rx_bad),	     F(dhcp_discover),	   F(dhcp_offer),	F(dhcp_request),
		F(dhcp_ack),	     F(dhcp_nak),	   F(dhcp_release),	F(dhcp_bad),
		F(dhcp_exhausted),   F(dns_queries),	   F(dns_replies),	F(dns_errors),
		F(udp_flows),	     F(udp_flows_now),	   F(udp_tx),		F(udp_rx),
		F(udp_idle_closed),  F(udp_limit_drop),	   F(udp_unreachable),	F(icmp_echo),
		F(icmp_reply),	     F(icmp_unsupported),  F(tcp_flows),	F(tcp_flows_now),
		F(tcp_connect_fail), F(tcp_limit_refused), F(tcp_rate_refused), F(tcp_bytes_out),
		F(tcp_bytes_in),     F(tcp_unsupported),   F(hostfwd_accepted), F(hostfwd_failed),
		F(hostfwd_waiting),  F(dhcp6_info),	   F(icmp6_echo),	F(udp6_tx),
		F(tcp6_flows),
	};
#undef F
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint64_t v;
		int w;

		memcpy(&v, (const char *)s + fields[i].off, sizeof(v));
		w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s %llu\n",
			     fields[i].name, (unsigned long long)v);
		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}
