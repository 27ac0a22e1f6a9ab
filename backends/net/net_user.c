/* net_user.c — -netdev user: user-mode networking on netstack/usernet
 * (impl=netstack, the default) or Debian's libslirp (impl=slirp).
 *
 * The netstack implementation takes what virtio-net offloads: partial
 * checksums (rx_csum_trusted) and 64 KiB TSO frames (rx_gso), straight
 * from guest RAM when a frame lies in one buffer. libslirp verifies
 * every checksum, so the guest computes them itself there. usernet's
 * frames carry full checksums: the guest need not check them again
 * (DATA_VALID). When the guest takes GUEST_TSO4/6, a burst of full-sized
 * segments of one TCP flow reaches it as one GSO frame up to 64 KiB
 * (netstack's ns_gso), grown while a batch of input or a poll runs and
 * handed on at its end: the guest's stack then handles ~45 segments at
 * once. All of it runs on the NIC's I/O thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "backends/backends.h"
#include "backends/net/netdev_internal.h"
#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"

#define MAX_HOSTFWD 16
#define LINEAR_MAX (14 + 4 + 65535)

struct net_user {
	struct netdev nd;
	struct usernet *u;
	struct usernet_cfg cfg;
	bool restricted;
	char *strings;	    /* what cfg's strings point into */
	uint8_t *linear;    /* a frame spread over several descriptors */
	struct ns_gso *gso; /* frames to the guest, when it takes GUEST_TSO */
	char info[96];
};

/* ------------------------------------------------------------ options */

struct user_opts {
	struct usernet_cfg *cfg;
	bool *restricted;
	const char *hostfwd[MAX_HOSTFWD];
	unsigned n_hostfwd;
	char *strings; /* copies of hostname, domainname, dns-upstream, hostfwd */
	size_t used;
};

static const char *keep(struct user_opts *o, const char *v)
{
	size_t n = strlen(v) + 1;
	char *p = o->strings + o->used;

	memcpy(p, v, n); /* strings has room for the whole option text */
	o->used += n;
	return p;
}

/* net=A/LEN or A/MASK (QEMU), or a bare A: /24. */
static int parse_net(struct usernet_cfg *c, const char *v)
{
	char buf[40], *slash;
	uint32_t mask;

	if (snprintf(buf, sizeof(buf), "%s", v) >= (int)sizeof(buf))
		return -1;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		if (ns_parse_addr(slash + 1, &mask) == 0) {
			c->prefix = (unsigned)__builtin_popcount(mask);
			if (mask != (c->prefix ? 0xffffffffu << (32 - c->prefix) : 0))
				return -1;
		} else {
			char *e;
			unsigned long l = strtoul(slash + 1, &e, 10);

			if (*e || e == slash + 1 || l > 32)
				return -1;
			c->prefix = (unsigned)l;
		}
	} else {
		c->prefix = 24;
	}
	return ns_parse_addr(buf, &c->net);
}

static int user_opt(void *arg, const char *key, const char *v, char *err, size_t errlen)
{
	struct user_opts *o = arg;
	struct usernet_cfg *c = o->cfg;
	char full[256];
	int r;

	if (!strcmp(key, "net"))
		r = parse_net(c, v);
	else if (!strcmp(key, "host"))
		r = ns_parse_addr(v, &c->gateway);
	else if (!strcmp(key, "dns"))
		r = ns_parse_addr(v, &c->dns);
	else if (!strcmp(key, "dhcpstart"))
		r = ns_parse_addr(v, &c->dhcp_start);
	else if (!strcmp(key, "restrict"))
		return netdev_parse_bool(key, v, o->restricted, err, errlen);
	else if (!strcmp(key, "impl"))
		r = usernet_parse_impl(v, &c->impl);
	else if (!strcmp(key, "hostname"))
		r = (c->hostname = keep(o, v)) ? 0 : -1;
	else if (!strcmp(key, "domainname"))
		r = (c->domain = keep(o, v)) ? 0 : -1;
	else if (!strcmp(key, "dns-upstream")) /* vmm's: the forwarder's resolver */
		r = (c->dns_upstream = keep(o, v)) ? 0 : -1;
	else if (!strcmp(key, "ipv4"))
		r = strcmp(v, "on") ? -1 : 0;
	else if (!strcmp(key, "hostfwd")) {
		if (o->n_hostfwd == MAX_HOSTFWD) {
			snprintf(err, errlen, "user: more than %d hostfwd", MAX_HOSTFWD);
			return -1;
		}
		o->hostfwd[o->n_hostfwd++] = keep(o, v);
		r = 0;
	} else {
		snprintf(full, sizeof(full), "%s=%s", key, v);
		r = usernet_parse_ipv6_option(c, full);
		if (r == -ENOENT) {
			snprintf(err, errlen, "user: unknown option '%s'", key);
			return -1;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "user: invalid %s=%s", key, v);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- frames */

/* restrict=on: the guest talks to the virtual LAN only (DHCP, DNS, the
 * replies of host forwards), never out to the host or the world. */
static bool allowed(const struct net_user *s, const uint8_t *f, size_t len)
{
	uint16_t type;

	if (!s->restricted || len < 14)
		return true;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == 0x0800 && len >= 14 + 20) {
		uint32_t dst = (uint32_t)f[30] << 24 | (uint32_t)f[31] << 16 | f[32] << 8 | f[33];
		uint32_t mask = 0xffffffffu << (32 - s->cfg.prefix);

		return (dst & mask) == s->cfg.net || dst == 0xffffffffu;
	}
	if (type == 0x86dd && len >= 14 + 40) {
		const uint8_t *dst = f + 38;

		return dst[0] == 0xff || (dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) ||
		       !memcmp(dst, s->cfg.ipv6_net, s->cfg.ipv6_prefix / 8);
	}
	return type == 0x0806; /* ARP */
}

static int user_send(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		     const struct iovec *iov, int iovcnt, size_t len)
{
	struct net_user *s = (struct net_user *)nd;
	const uint8_t *frame = iov[0].iov_base;

	if (len > LINEAR_MAX)
		return -EMSGSIZE;
	if (iovcnt > 1) { /* usernet takes one contiguous frame */
		size_t off = 0;

		for (int i = 0; i < iovcnt && off < len; i++) {
			size_t n = iov[i].iov_len < len - off ? iov[i].iov_len : len - off;

			memcpy(s->linear + off, iov[i].iov_base, n);
			off += n;
		}
		frame = s->linear;
	}
	if (!allowed(s, frame, len))
		return -EACCES;
	usernet_input(s->u, frame, len);
	return 0;
}

/* usernet relays to host sockets in its poll, once per batch of input;
 * what the batch made for the guest goes out at its end. */
static void user_flush(struct netdev *nd)
{
	struct net_user *s = (struct net_user *)nd;

	if (usernet_timeout_ms(s->u) == 0)
		usernet_poll(s->u);
	ns_gso_flush(s->gso);
}

static int user_fd(struct netdev *nd)
{
	return usernet_fd(((struct net_user *)nd)->u);
}

static int user_timeout(struct netdev *nd)
{
	return usernet_timeout_ms(((struct net_user *)nd)->u);
}

static void user_poll(struct netdev *nd)
{
	struct net_user *s = (struct net_user *)nd;

	usernet_poll(s->u);
	ns_gso_flush(s->gso);
}

/* A frame (or a grown GSO frame) to the guest. Checksums are complete
 * but in a GSO frame's TCP header, which is partial (NEEDS_CSUM). */
static int emit_to_guest(void *opaque, const struct virtio_net_hdr *gso_hdr, const void *frame,
			 size_t len)
{
	struct net_user *s = opaque;
	struct virtio_net_hdr h = *gso_hdr;

	if (h.gso_type == VIRTIO_NET_HDR_GSO_NONE)
		h.flags = VIRTIO_NET_HDR_F_DATA_VALID;
	if (s->nd.rx)
		s->nd.rx(s->nd.rx_opaque, 0, &h, frame, len);
	return 0;
}

/* usernet's frames toward the guest. */
static void to_guest(void *opaque, const void *frame, size_t len)
{
	struct net_user *s = opaque;

	ns_gso_add(s->gso, frame, len);
}

/* GSO frames need the guest's GUEST_CSUM (a partial checksum) and its
 * GUEST_TSO4 or TSO6 for the family. */
static void user_set_rx_offloads(struct netdev *nd, unsigned off)
{
	struct net_user *s = (struct net_user *)nd;
	bool v4 = (off & NETDEV_OFF_CSUM) && (off & NETDEV_OFF_TSO4);
	bool v6 = (off & NETDEV_OFF_CSUM) && (off & NETDEV_OFF_TSO6);

	ns_gso_families(s->gso, v4, v6);
}

static int user_info(struct netdev *nd, char *buf, size_t len)
{
	struct net_user *s = (struct net_user *)nd;

	return snprintf(buf, len, "%s", s->info);
}

static int user_hostfwd(struct netdev *nd, bool add, const char *rule, char *why, size_t len)
{
	struct net_user *s = (struct net_user *)nd;

	return add ? usernet_hostfwd_add(s->u, rule, why, len)
		   : usernet_hostfwd_remove(s->u, rule, why, len);
}

static char *user_stats(struct netdev *nd)
{
	struct net_user *s = (struct net_user *)nd;
	struct usernet_stats st;
	char *buf;
	int n;

	usernet_stats(s->u, &st);
	n = usernet_stats_format(&st, NULL, 0);
	buf = n > 0 ? malloc((size_t)n + 1) : NULL;
	if (buf)
		usernet_stats_format(&st, buf, (size_t)n + 1);
	return buf;
}

/* The DHCP leases and, for each guest TCP connection through the NAT,
 * what resetting it takes: the host sockets stay with this process, so
 * the destination resets those connections cleanly (usernet.h). */
static int user_save(struct netdev *nd, void **buf, size_t *len, char *why, size_t wlen)
{
	struct net_user *s = (struct net_user *)nd;

	return usernet_save(s->u, buf, len, why, wlen);
}

static int user_load(struct netdev *nd, const void *buf, size_t len, char *why, size_t wlen)
{
	struct net_user *s = (struct net_user *)nd;

	return usernet_load(s->u, buf, len, why, wlen);
}

/* One host: the connections go on with their host sockets (usernet.h). */
static int user_save_fds(struct netdev *nd, void **buf, size_t *len, int **fds, unsigned *nfds,
			 char *why, size_t wlen)
{
	struct net_user *s = (struct net_user *)nd;

	return usernet_save_fds(s->u, buf, len, fds, nfds, why, wlen);
}

static int user_load_fds(struct netdev *nd, const void *buf, size_t len, const int *fds,
			 unsigned nfds, char *why, size_t wlen)
{
	struct net_user *s = (struct net_user *)nd;

	return usernet_load_fds(s->u, buf, len, fds, nfds, why, wlen);
}

static void user_hand_over(struct netdev *nd)
{
	usernet_hand_over(((struct net_user *)nd)->u);
}

static void user_free(struct netdev *nd)
{
	struct net_user *s = (struct net_user *)nd;

	usernet_free(s->u);
	ns_gso_free(s->gso);
	free(s->linear);
	free(s->strings);
	free(s);
}

static const struct netdev_ops user_ops = {
	.type = "user",
	.send = user_send,
	.flush = user_flush,
	.fd = user_fd,
	.timeout_ms = user_timeout,
	.poll = user_poll,
	.set_rx_offloads = user_set_rx_offloads,
	.info = user_info,
	.hostfwd = user_hostfwd,
	.stats = user_stats,
	.save = user_save,
	.load = user_load,
	.save_fds = user_save_fds,
	.load_fds = user_load_fds,
	.hand_over = user_hand_over,
	.free = user_free,
};

/* ------------------------------------------------------------- set-up */

/* A host without a resolver (a bare container, the nested test guest)
 * still gets a NIC: the forwarder then asks 127.0.0.1. */
static struct usernet *open_usernet(struct usernet_cfg *c, char *err, size_t errlen)
{
	struct usernet *u = usernet_new(c, err, errlen);

	if (u || c->dns_upstream || !strstr(err, "nameserver"))
		return u;
	fprintf(stderr, "vmm: -netdev user: %s; DNS goes to 127.0.0.1\n", err);
	c->dns_upstream = "127.0.0.1";
	return usernet_new(c, err, errlen);
}

static int add_forwards(struct net_user *s, const struct user_opts *o, char *err, size_t errlen)
{
	char why[200];

	for (unsigned i = 0; i < o->n_hostfwd; i++)
		if (usernet_hostfwd_add(s->u, o->hostfwd[i], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "user: hostfwd=%s: %s", o->hostfwd[i], why);
			return -1;
		}
	return 0;
}

static void describe(struct net_user *s)
{
	uint32_t a = s->cfg.net ? s->cfg.net : 0x0a000200;

	snprintf(s->info, sizeof(s->info), "net=%u.%u.%u.%u,restrict=%s%s", a >> 24, a >> 16 & 255,
		 a >> 8 & 255, a & 255, s->restricted ? "on" : "off",
		 s->cfg.impl == USERNET_IMPL_SLIRP ? ",impl=slirp" : "");
}

int netdev_user_check(const char *opts, char *err, size_t errlen)
{
	struct usernet_cfg cfg = {0};
	struct user_opts o = {.cfg = &cfg};
	bool restricted;
	char why[200];
	int ret = -1;

	o.restricted = &restricted;
	o.strings = malloc(strlen(opts ? opts : "") + 1);
	if (!o.strings) {
		snprintf(err, errlen, "user: out of memory");
		return -1;
	}
	if (netdev_each_opt("user", opts, user_opt, &o, err, errlen) < 0)
		goto out;
	for (unsigned i = 0; i < o.n_hostfwd; i++)
		if (usernet_hostfwd_check(o.hostfwd[i], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "user: hostfwd=%s: %s", o.hostfwd[i], why);
			goto out;
		}
	ret = 0;
out:
	free(o.strings);
	return ret;
}

struct netdev *netdev_user_new(const char *id, const char *opts, bool incoming, char *err,
			       size_t errlen)
{
	struct net_user *s = calloc(1, sizeof(*s));
	struct user_opts o = {0};
	char why[256];

	if (!s || !(s->linear = malloc(LINEAR_MAX)) || !(s->gso = ns_gso_new(emit_to_guest, s)) ||
	    !(o.strings = malloc(strlen(opts ? opts : "") + 1))) {
		snprintf(err, errlen, "user: out of memory");
		goto fail;
	}
	ns_gso_families(s->gso, false, false); /* until the guest takes GUEST_TSO */
	o.cfg = &s->cfg;
	o.restricted = &s->restricted;
	if (netdev_each_opt("user", opts, user_opt, &o, err, errlen) < 0)
		goto fail;
	s->cfg.rx_csum_trusted = s->cfg.rx_gso = s->cfg.impl == USERNET_IMPL_NETSTACK;
	s->cfg.no_host_loopback = s->restricted;
	s->cfg.hostfwd_wait = incoming;
	s->cfg.send = to_guest;
	s->cfg.opaque = s;
	s->u = open_usernet(&s->cfg, why, sizeof(why));
	if (!s->u) {
		snprintf(err, errlen, "user: %s", why);
		goto fail;
	}
	usernet_cfg_defaults(&s->cfg); /* for restrict=on's checks */
	if (add_forwards(s, &o, err, errlen) < 0)
		goto fail;
	s->strings = o.strings; /* usernet keeps pointers into it */
	s->nd.ops = &user_ops;
	s->nd.queues = 1; /* one stack, one loop */
	snprintf(s->nd.id, sizeof(s->nd.id), "%s", id);
	if (s->cfg.impl == USERNET_IMPL_NETSTACK) {
		s->nd.offloads =
			NETDEV_OFF_CSUM | NETDEV_OFF_TSO4 | NETDEV_OFF_TSO6 | NETDEV_OFF_ECN;
		/* measured (bench/README.md): about half the VMM CPU per echoed
		 * datagram; libslirp's fd signals on its timers, and there the
		 * same wait costs instead */
		s->nd.coalesce_us = 200;
	}
	describe(s);
	return &s->nd;
fail:
	if (s) {
		usernet_free(s->u);
		ns_gso_free(s->gso);
		free(s->linear);
	}
	free(o.strings);
	free(s);
	return NULL;
}
