/* netstack-host — attach netstack to a TAP device and serve UDP and TCP
 * echo (7) and discard (9), an HTTP/1.0 file server (--http DIR, port 80),
 * or act as a TCP client (--connect HOST:PORT); answers ping. Frames can
 * pass an impairment adapter (--impair) between the TAP and the stack.
 *
 * Options are a table of (name, handler) so other modes (usernet's
 * --user-net ...) are a few rows and a handler each. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netstack/host/host.h"
#include "netstack/usernet/usernet.h"

struct host_cfg {
	const char *tap, *http_dir;
	uint32_t addr, gw;
	unsigned prefix, mtu;
	uint8_t addr6[16];
	unsigned prefix6;
	bool have_addr6;
	bool have_addr, have_connect, have_impair, verbose, offload;
	struct ns_sockaddr connect;
	struct ns_impair_cfg impair;
};

volatile int host_stop;

static void on_signal(int sig)
{
	host_stop = 1;
}

static int opt_tap(struct host_cfg *c, const char *v)
{
	c->tap = v;
	return 0;
}

static int opt_addr(struct host_cfg *c, const char *v)
{
	c->have_addr = true;
	if (!strchr(v, '/'))
		return -EINVAL; /* the prefix decides what is on-link: no default */
	return ns_parse_cidr(v, &c->addr, &c->prefix);
}

static int opt_addr6(struct host_cfg *c, const char *v)
{
	c->have_addr6 = true;
	return ns_parse_cidr6(v, c->addr6, &c->prefix6);
}

static int opt_gw(struct host_cfg *c, const char *v)
{
	return ns_parse_addr(v, &c->gw);
}

static int parse_u64(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

static int opt_mtu(struct host_cfg *c, const char *v)
{
	uint64_t m;

	if (parse_u64(v, 65521, &m) < 0 || m < 576)
		return -EINVAL;
	c->mtu = (unsigned)m;
	return 0;
}

static int opt_http(struct host_cfg *c, const char *v)
{
	c->http_dir = v;
	return 0;
}

static int opt_connect(struct host_cfg *c, const char *v)
{
	c->have_connect = true;
	if (ns_parse_hostport(v, &c->connect) < 0 || !c->connect.port)
		return -EINVAL;
	return 0;
}

/* --impair KEY=N,...: the keys of struct ns_impair_cfg. */
static int set_impair_key(struct ns_impair_cfg *im, const char *key, size_t klen, const char *val)
{
	static const struct {
		const char *key;
		size_t off;
		bool basis_points;
	} keys[] = {
		{ "loss", offsetof(struct ns_impair_cfg, loss_bp), true },
		{ "dup", offsetof(struct ns_impair_cfg, dup_bp), true },
		{ "reorder", offsetof(struct ns_impair_cfg, reorder_bp), true },
		{ "delay", offsetof(struct ns_impair_cfg, delay_us), false },
		{ "jitter", offsetof(struct ns_impair_cfg, jitter_us), false },
		{ "hold", offsetof(struct ns_impair_cfg, reorder_us), false },
		{ "seed", offsetof(struct ns_impair_cfg, seed), false },
	};
	uint64_t n;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].key) != klen || strncmp(keys[i].key, key, klen))
			continue;
		if (parse_u64(val, keys[i].basis_points ? 10000 : 60000000, &n) < 0)
			return -EINVAL;
		if (keys[i].basis_points)
			*(unsigned *)((char *)im + keys[i].off) = (unsigned)n;
		else
			*(uint64_t *)((char *)im + keys[i].off) = n;
		return 0;
	}
	return -EINVAL;
}

static int opt_impair(struct host_cfg *c, const char *v)
{
	char buf[256], *item, *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	c->have_impair = true;
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || set_impair_key(&c->impair, item, (size_t)(eq - item), eq + 1) < 0)
			return -EINVAL;
	}
	return 0;
}

static const struct host_opt {
	const char *name;
	int (*set)(struct host_cfg *c, const char *v);
	const char *help;
} host_opts[] = {
	{ "--tap", opt_tap, "NAME    TAP device to create/attach" },
	{ "--addr", opt_addr, "A/LEN  our IPv4 address and prefix" },
	{ "--addr6", opt_addr6,
	  "A/LEN IPv6 too: a link-local address and A/LEN (after DAD);\n"
	  "                 the services then listen on :: (both families)" },
	{ "--gw", opt_gw, "G        default gateway" },
	{ "--mtu", opt_mtu, "N       link MTU (576..65521, default 1500)" },
	{ "--http", opt_http, "DIR    serve DIR over HTTP/1.0 on TCP port 80" },
	{ "--connect", opt_connect, "A:P  client: send stdin to A:P, half-close, print the reply" },
	{ "--impair", opt_impair,
	  "L    loss=BP,dup=BP,reorder=BP,delay=US,jitter=US,hold=US,seed=N\n"
	  "                 (BP: 1/100 %; both directions, between TAP and stack)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: netstack-host --tap NAME --addr A/LEN [--addr6 A/LEN] [--gw G]\n"
		   "                     [--mtu N]\n"
		   "                     [--http DIR | --connect HOST:PORT] [--impair LIST]\n"
		   "                     [--offload] [-v]\n");
	for (size_t i = 0; i < sizeof(host_opts) / sizeof(host_opts[0]); i++)
		fprintf(f, "  %s %s\n", host_opts[i].name, host_opts[i].help);
	fprintf(f, "  --offload      virtio-net headers on the TAP: checksum and TSO offload,\n"
		   "                 TCP segments coalesced into GSO frames; the stack takes\n"
		   "                 64 KiB frames (its MTU is 65521; TCP stays within the\n"
		   "                 kernel's MSS, the TAP's own MTU is --mtu)\n");
	fprintf(f, "  -v             statistics on stderr at exit\n");
}

static const struct host_opt *find_opt(const char *name)
{
	for (size_t j = 0; j < sizeof(host_opts) / sizeof(host_opts[0]); j++)
		if (!strcmp(name, host_opts[j].name))
			return &host_opts[j];
	return NULL;
}

static int parse_args(struct host_cfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const struct host_opt *o = find_opt(argv[i]);

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(argv[i], "-v")) {
			c->verbose = true;
			continue;
		}
		if (!strcmp(argv[i], "--offload")) {
			c->offload = true;
			continue;
		}
		if (!o || i + 1 >= argc) {
			fprintf(stderr, "netstack-host: %s '%s' (try --help)\n",
				o ? "missing value for" : "unknown option", argv[i]);
			return -1;
		}
		if (o->set(c, argv[++i]) < 0) {
			fprintf(stderr, "netstack-host: bad value for %s: '%s'\n", o->name, argv[i]);
			return -1;
		}
	}
	if (!c->tap || !c->have_addr) {
		fprintf(stderr, "netstack-host: --tap and --addr are required (try --help)\n");
		return -1;
	}
	if (c->have_connect && c->http_dir) {
		fprintf(stderr, "netstack-host: --connect and --http exclude each other\n");
		return -1;
	}
	return 0;
}

int host_loop_once(struct host *h, int timeout_ms, int extra_fd)
{
	struct pollfd pfd[3];
	nfds_t n = 0;
	int t = ns_stack_timeout_ms(h->st);

	if (h->vnet)
		ns_link_tap_vnet_flush(h->vnet); /* before sleeping: nothing held back */

	if (ns_link_fd(h->link) >= 0)
		pfd[n++] = (struct pollfd){ .fd = ns_link_fd(h->link), .events = POLLIN };
	if (ns_stack_fd(h->st) >= 0)
		pfd[n++] = (struct pollfd){ .fd = ns_stack_fd(h->st), .events = POLLIN };
	if (extra_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	if (t < 0 || (timeout_ms >= 0 && timeout_ms < t))
		t = timeout_ms;
	if (poll(pfd, n, t) < 0 && errno != EINTR)
		return -errno;
	ns_stack_drain(h->st, 256);
	ns_stack_poll(h->st);
	return 0;
}

static int open_link(struct host *h, const struct host_cfg *c)
{
	int err;

	/* Offloaded, the kernel hands over TCP segments up to 64 KiB. */
	if (c->offload)
		h->link = h->vnet = ns_link_tap_vnet_open(c->tap, 65521, &err);
	else
		h->link = ns_link_tap_open(c->tap, c->mtu, &err);
	if (!h->link) {
		fprintf(stderr, "netstack-host: cannot open TAP '%s': %s\n", c->tap, strerror(-err));
		return -1;
	}
	if (c->have_impair) {
		struct ns_link *im = ns_link_impair(h->link, NULL, &c->impair);

		if (!im) {
			fprintf(stderr, "netstack-host: cannot set up the impairment link\n");
			return -1;
		}
		h->link = im;
	}
	return 0;
}

static int setup_stack(struct host *h, const struct host_cfg *c)
{
	h->st = ns_stack_new(NULL);
	if (!h->st) {
		fprintf(stderr, "netstack-host: out of memory\n");
		return -1;
	}
	/* Frames from the local kernel through an offloading TAP carry
	 * partial checksums. */
	if (ns_iface_add(h->st, h->link, c->addr, c->prefix, c->offload ? NS_IF_NO_CSUM_RX : 0) < 0 ||
	    (c->gw && ns_route_add(h->st, 0, 0, c->gw, h->link) < 0)) {
		fprintf(stderr, "netstack-host: cannot configure address/route on %s\n",
			h->link->name);
		return -1;
	}
	if (c->have_addr6 && (ns_iface_ipv6(h->st, h->link, 0) < 0 ||
			      ns_iface_add6(h->st, h->link, c->addr6, c->prefix6) < 0)) {
		fprintf(stderr, "netstack-host: cannot configure IPv6 on %s\n", h->link->name);
		return -1;
	}
	h->v6 = c->have_addr6;
	return 0;
}

/* IPv6 addresses are tentative for DAD's second: serve and connect once
 * --addr6 is usable. */
static int wait_dad(struct host *h, const struct host_cfg *c)
{
	uint8_t a[16];

	if (!c->have_addr6)
		return 0;
	for (int i = 0; i < 50; i++) {
		for (unsigned k = 0; ns_iface_get6(h->st, h->link, k, a, NULL) == 0; k++)
			if (!memcmp(a, c->addr6, 16))
				return 0;
		if (host_loop_once(h, 100, -1) < 0)
			break;
	}
	fprintf(stderr, "netstack-host: IPv6 address not usable (duplicate on the link?)\n");
	return -1;
}

static void print_stats(struct host *h, bool impaired)
{
	struct ns_stats s;

	ns_stack_stats(h->st, &s);
	fprintf(stderr,
		"netstack-host: rx %" PRIu64 " frames (bad eth %" PRIu64 " ip %" PRIu64
		" csum %" PRIu64 "), tcp rx %" PRIu64 " tx %" PRIu64 " rexmit %" PRIu64
		" fast %" PRIu64 " rto %" PRIu64 ", udp rx %" PRIu64 " tx %" PRIu64 "\n",
		s.rx_frames, s.rx_bad_eth, s.rx_bad_ip, s.rx_bad_csum, s.tcp_rx, s.tcp_tx,
		s.tcp_rexmit, s.tcp_fast_rexmit, s.tcp_rto, s.udp_rx, s.udp_tx);
	if (impaired) {
		struct ns_impair_stats im;

		ns_link_impair_stats(h->link, &im);
		fprintf(stderr,
			"netstack-host: impair dropped %" PRIu64 " duplicated %" PRIu64
			" reordered %" PRIu64 " delayed %" PRIu64 "\n",
			im.dropped, im.duplicated, im.reordered, im.delayed);
	}
}

static int serve(struct host *h, const struct host_cfg *c)
{
	/* Listening first: IPv4 is served while IPv6 runs DAD; "up" once
	 * both families are. */
	if (services_start(h) < 0 || wait_dad(h, c) < 0)
		return 1;
	fprintf(stderr, "netstack-host: %s up, mtu %u%s%s%s\n", h->link->name, c->mtu,
		c->offload ? ", offload" : "", c->http_dir ? ", http from " : "",
		c->http_dir ? c->http_dir : "");
	while (!host_stop) {
		if (host_loop_once(h, 200, -1) < 0)
			break;
		services_run(h);
	}
	services_stop(h);
	return 0;
}

int main(int argc, char **argv)
{
	struct host_cfg c = { .mtu = 1500 };
	struct host h = { .http_dirfd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--user-net"))
			return usernet_host_main(argc, argv);
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	h.http_dir = c.http_dir;
	h.verbose = c.verbose;
	if (c.http_dir) {
		h.http_dirfd = open(c.http_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (h.http_dirfd < 0) {
			fprintf(stderr, "netstack-host: cannot open --http folder '%s': %s\n",
				c.http_dir, strerror(errno));
			return 1;
		}
	}
	if (open_link(&h, &c) < 0 || setup_stack(&h, &c) < 0)
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (c.have_connect)
		rc = wait_dad(&h, &c) < 0 ? 1 : connect_run(&h, &c.connect);
	else
		rc = serve(&h, &c);
	if (c.verbose)
		print_stats(&h, c.have_impair);
	ns_stack_free(h.st);
	ns_link_destroy(h.link);
	if (h.http_dirfd >= 0)
		close(h.http_dirfd);
	return rc;
}
