/* netstack-host — attach netstack to a TAP device and serve UDP echo (7)
 * and discard (9); answers ping. TCP services follow when TCP lands.
 *
 * Options are a table of (name, takes-argument, handler) so other modes
 * (usernet's --user-net ...) are a few rows and a handler each. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"

struct host_cfg {
	const char *tap;
	uint32_t addr, gw;
	unsigned prefix, mtu;
	bool have_addr;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int opt_tap(struct host_cfg *c, const char *v)
{
	c->tap = v;
	return 0;
}

static int opt_addr(struct host_cfg *c, const char *v)
{
	c->have_addr = true;
	return ns_parse_cidr(v, &c->addr, &c->prefix);
}

static int opt_gw(struct host_cfg *c, const char *v)
{
	return ns_parse_addr(v, &c->gw);
}

static int opt_mtu(struct host_cfg *c, const char *v)
{
	char *end;
	unsigned long m = strtoul(v, &end, 10);

	if (*end || m < 576 || m > 65521)
		return -EINVAL;
	c->mtu = (unsigned)m;
	return 0;
}

static const struct host_opt {
	const char *name;
	int (*set)(struct host_cfg *c, const char *v);
	const char *help;
} host_opts[] = {
	{ "--tap", opt_tap, "NAME    TAP device to create/attach" },
	{ "--addr", opt_addr, "A/LEN  our IPv4 address and prefix" },
	{ "--gw", opt_gw, "G        default gateway" },
	{ "--mtu", opt_mtu, "N       link MTU (576..65521, default 1500)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: netstack-host --tap NAME --addr A/LEN [--gw G] [--mtu N]\n");
	for (size_t i = 0; i < sizeof(host_opts) / sizeof(host_opts[0]); i++)
		fprintf(f, "  %s %s\n", host_opts[i].name, host_opts[i].help);
}

static int parse_args(struct host_cfg *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const struct host_opt *o = NULL;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			exit(0);
		}
		for (size_t j = 0; j < sizeof(host_opts) / sizeof(host_opts[0]); j++)
			if (!strcmp(argv[i], host_opts[j].name))
				o = &host_opts[j];
		if (!o || i + 1 >= argc) {
			fprintf(stderr, "netstack-host: %s '%s'\n",
				o ? "missing value for" : "unknown option", argv[i]);
			return -1;
		}
		if (o->set(c, argv[++i]) < 0) {
			fprintf(stderr, "netstack-host: bad value for %s: '%s'\n", o->name, argv[i]);
			return -1;
		}
	}
	if (!c->tap || !c->have_addr) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* UDP echo (port 7) and discard (port 9) on channels. */
static void serve_udp(struct ns_chan *echo, struct ns_chan *discard)
{
	static uint8_t buf[65536];
	struct ns_pktinfo info;
	ssize_t n;

	while ((n = ns_chan_recv_nb(echo, buf, sizeof(buf), &info)) >= 0) {
		struct ns_pktinfo back = { .dst = info.src, .src = info.dst };

		ns_chan_sendto(echo, buf, (size_t)n, &back);
	}
	while (ns_chan_recv_nb(discard, buf, sizeof(buf), &info) >= 0)
		;
}

int main(int argc, char **argv)
{
	struct host_cfg c = { .mtu = 1500 };
	struct ns_sockaddr e7 = { 0, 7 }, d9 = { 0, 9 };
	struct ns_chan *echo, *discard;
	struct ns_stack *st;
	struct ns_link *l;
	int err;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--user-net"))
			return usernet_host_main(argc, argv);
	if (parse_args(&c, argc, argv) < 0)
		return 2;
	l = ns_link_tap_open(c.tap, c.mtu, &err);
	if (!l) {
		fprintf(stderr, "netstack-host: cannot open TAP '%s': %s\n", c.tap, strerror(-err));
		return 1;
	}
	st = ns_stack_new(NULL);
	if (!st || ns_iface_add(st, l, c.addr, c.prefix, 0) < 0 ||
	    (c.gw && ns_route_add(st, 0, 0, c.gw, l) < 0)) {
		fprintf(stderr, "netstack-host: cannot configure the stack\n");
		return 1;
	}
	echo = ns_chan_create(st, NS_PROTO_UDP, &e7, NULL, &err);
	discard = ns_chan_create(st, NS_PROTO_UDP, &d9, NULL, &err);
	if (!echo || !discard) {
		fprintf(stderr, "netstack-host: cannot bind UDP services: %s\n", strerror(-err));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "netstack-host: %s up, mtu %u\n", l->name, c.mtu);
	while (!stop) {
		if (ns_stack_run_once(st, 200) < 0)
			break;
		serve_udp(echo, discard);
	}
	ns_chan_close(echo);
	ns_chan_close(discard);
	ns_stack_free(st);
	ns_link_destroy(l);
	return 0;
}
