/* host.c — netstack-host --user-net: create a TAP device inside a network
 * namespace and serve it with usernet (the job of Debian's slirp4netns).
 *
 *   netstack-host --user-net --netns NAME|PID [--tap tap0] [--mtu N]
 *       [--hostfwd tcp|udp:HADDR:HPORT-GADDR:GPORT ...] [--impl netstack|slirp]
 *       [--impair loss=BP,dup=BP,reorder=BP,delay=US,seed=N] ...
 *
 * The TAP is opened with this thread moved into the namespace for just
 * that long (setns there and back), so the fd belongs to a device in the
 * namespace while everything else — host sockets — stays in ours. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"

#define MAX_FWDS 32

struct un_host {
	const char *netns, *tap, *control;
	struct usernet_cfg cfg;
	const char *fwds[MAX_FWDS];
	unsigned nfwds;
	bool impair, verbose, no_offload;
	struct ns_impair_cfg im;
	struct ns_link *link;
	struct ns_link *vnet; /* the offloading TAP under link, or NULL */
	struct usernet *u;
	int ctl_fd;
	char ctl_buf[512];
	size_t ctl_len;
};

static volatile sig_atomic_t stop, dump_stats;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_stats = 1;
	else
		stop = 1;
}

/* ----------------------------------------------------------- options */

static int parse_uint(const char *v, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n > max)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

/* --impair: the fields of struct ns_impair_cfg the tests need. */
static int parse_impair(struct ns_impair_cfg *im, const char *v)
{
	char buf[256], *item, *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		unsigned n;
		char *eq = strchr(item, '=');

		if (!eq || parse_uint(eq + 1, 60000000, &n) < 0)
			return -EINVAL;
		*eq = 0;
		if (!strcmp(item, "loss") && n <= 10000)
			im->loss_bp = n;
		else if (!strcmp(item, "dup") && n <= 10000)
			im->dup_bp = n;
		else if (!strcmp(item, "reorder") && n <= 10000)
			im->reorder_bp = n;
		else if (!strcmp(item, "delay"))
			im->delay_us = n;
		else if (!strcmp(item, "seed"))
			im->seed = n;
		else
			return -EINVAL;
	}
	return 0;
}

static int parse_net(struct usernet_cfg *c, const char *v)
{
	return ns_parse_cidr(v, &c->net, &c->prefix);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: netstack-host --user-net [--netns NAME|PID] [--tap NAME] [--mtu N]\n"
		"         [--hostfwd tcp|udp:HADDR:HPORT-GADDR:GPORT ...] [--impl netstack|slirp]\n"
		"         [--impair loss=BP,dup=BP,reorder=BP,delay=US,seed=N] [--net A/LEN]\n"
		"         [--dns A[:PORT]] [--resolv-conf PATH] [--no-host-loopback]\n"
		"         [--hostname NAME] [--max-tcp N] [--max-udp N] [--udp-idle S]\n"
		"         [--conn-rate N] [--tcp-buf BYTES] [--tcp-window BYTES] [--control FIFO]\n"
		"         [--ipv6 on|off] [--ipv6-net A/LEN] [--ipv6-host A] [--ipv6-dns A]\n"
		"         [--no-offload] [-v]\n"
		"  --netns    namespace (/var/run/netns/NAME or /proc/PID/ns/net) for the TAP\n"
		"  --control  FIFO of commands: hostfwd_add SPEC | hostfwd_remove SPEC | stats\n"
		"  --no-offload  plain TAP (default with impl=netstack: checksum and TSO\n"
		"             offload through virtio-net headers)\n"
		"  SIGUSR1 prints the counters to stderr; they are printed on exit too.\n");
}

static int parse_opt(struct un_host *h, const char *o, const char *v)
{
	struct usernet_cfg *c = &h->cfg;

	if (!strcmp(o, "--netns"))
		h->netns = v;
	else if (!strcmp(o, "--tap"))
		h->tap = v;
	else if (!strcmp(o, "--control"))
		h->control = v;
	else if (!strcmp(o, "--mtu"))
		return parse_uint(v, 65520, &c->mtu) < 0 || c->mtu < 576 ? -EINVAL : 0;
	else if (!strcmp(o, "--hostfwd")) {
		if (h->nfwds == MAX_FWDS)
			return -E2BIG;
		h->fwds[h->nfwds++] = v;
	} else if (!strcmp(o, "--impl"))
		return usernet_parse_impl(v, &c->impl);
	else if (!strcmp(o, "--impair")) {
		h->impair = true;
		return parse_impair(&h->im, v);
	} else if (!strcmp(o, "--net"))
		return parse_net(c, v);
	else if (!strcmp(o, "--dns"))
		c->dns_upstream = v;
	else if (!strcmp(o, "--resolv-conf"))
		c->resolv_conf = v;
	else if (!strcmp(o, "--hostname"))
		c->hostname = v;
	else if (!strcmp(o, "--max-tcp"))
		return parse_uint(v, 1u << 20, &c->max_tcp_flows);
	else if (!strcmp(o, "--max-udp"))
		return parse_uint(v, 1u << 20, &c->max_udp_flows);
	else if (!strcmp(o, "--udp-idle"))
		return parse_uint(v, 86400, &c->udp_idle_s);
	else if (!strcmp(o, "--tcp-window"))
		return parse_uint(v, 64u << 20, &c->tcp_window) < 0 || c->tcp_window < 4096
			       ? -EINVAL
			       : 0;
	else if (!strcmp(o, "--conn-rate"))
		return parse_uint(v, 1u << 24, &c->max_conn_rate);
	else if (!strcmp(o, "--ipv6"))
		return strcmp(v, "on") && strcmp(v, "off")
			       ? -EINVAL
			       : usernet_parse_ipv6_option(c, v[1] == 'n' ? "ipv6=on" : "ipv6=off");
	else if (!strcmp(o, "--ipv6-net") || !strcmp(o, "--ipv6-host") ||
		 !strcmp(o, "--ipv6-dns")) {
		char kv[96];

		snprintf(kv, sizeof(kv), "%s=%s", o + 2, v);
		return usernet_parse_ipv6_option(c, kv) < 0 ? -EINVAL : 0;
	} else if (!strcmp(o, "--tcp-buf"))
		return parse_uint(v, 16u << 20, &c->tcp_buf) < 0 || c->tcp_buf < 2048 ? -EINVAL : 0;
	else
		return -ENOENT;
	return 0;
}

static int parse_args(struct un_host *h, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (!strcmp(a, "--user-net"))
			continue;
		if (!strcmp(a, "-v")) {
			h->verbose = true;
			continue;
		}
		if (!strcmp(a, "--no-offload")) {
			h->no_offload = true;
			continue;
		}
		if (!strcmp(a, "--no-host-loopback")) {
			h->cfg.no_host_loopback = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "netstack-host: %s: missing argument\n", a);
			return -EINVAL;
		}
		rc = parse_opt(h, a, argv[++i]);
		if (rc == -ENOENT) {
			fprintf(stderr, "netstack-host: unknown option %s\n", a);
			usage(stderr);
			return rc;
		}
		if (rc < 0) {
			fprintf(stderr, "netstack-host: bad value for %s: '%s'\n", a, argv[i]);
			return rc;
		}
	}
	return 0;
}

/* --------------------------------------------------------- namespace */

static int open_netns(const char *spec)
{
	char path[256];
	size_t n = strspn(spec, "0123456789");

	if (spec[0] && !spec[n])
		snprintf(path, sizeof(path), "/proc/%s/ns/net", spec);
	else if (strchr(spec, '/'))
		snprintf(path, sizeof(path), "%s", spec);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", spec);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* In the current namespace: MTU and IFF_UP for the device. */
static int link_up(const char *name, unsigned mtu)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(fd, SIOCSIFMTU, &ifr) < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		rc = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (rc == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Open the TAP inside the namespace (if any), bring it up, come back. */
static struct ns_link *tap_in_netns(const char *netns, const char *name, unsigned mtu, bool offload)
{
	struct ns_link *l = NULL;
	int self = -1, target = -1, err = 0;

	if (netns) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		target = open_netns(netns);
		if (self < 0 || target < 0) {
			fprintf(stderr, "netstack-host: network namespace '%s': %s\n", netns,
				strerror(errno));
			goto out;
		}
		if (setns(target, CLONE_NEWNET) < 0) {
			fprintf(stderr, "netstack-host: setns '%s': %s\n", netns, strerror(errno));
			goto out;
		}
	}
	l = offload ? ns_link_tap_vnet_open(name, mtu, &err) : ns_link_tap_open(name, mtu, &err);
	if (!l)
		fprintf(stderr, "netstack-host: TAP %s: %s\n", name, strerror(-err));
	else if ((err = link_up(l->name, mtu)) < 0) {
		fprintf(stderr, "netstack-host: bringing up %s: %s\n", l->name, strerror(-err));
		ns_link_destroy(l);
		l = NULL;
	}
	if (netns && setns(self, CLONE_NEWNET) < 0) {
		fprintf(stderr, "netstack-host: setns back: %s\n", strerror(errno));
		exit(1); /* host sockets would open in the guest's namespace */
	}
out:
	if (self >= 0)
		close(self);
	if (target >= 0)
		close(target);
	return l;
}

/* ---------------------------------------------------------- the loop */

static void send_frame(void *opaque, const void *frame, size_t len)
{
	struct un_host *h = opaque;

	ns_link_transmit(h->link, frame, len);
}

static void print_stats(struct un_host *h, FILE *f)
{
	struct usernet_stats st;
	char buf[4096];

	usernet_stats(h->u, &st);
	usernet_stats_format(&st, buf, sizeof(buf));
	fprintf(f, "%s", buf);
	fflush(f);
}

static void control_line(struct un_host *h, char *line)
{
	char err[256] = "";
	int rc = 0;

	if (!strncmp(line, "hostfwd_add ", 12))
		rc = usernet_hostfwd_add(h->u, line + 12, err, sizeof(err));
	else if (!strncmp(line, "hostfwd_remove ", 15))
		rc = usernet_hostfwd_remove(h->u, line + 15, err, sizeof(err));
	else if (!strcmp(line, "stats")) {
		print_stats(h, stdout);
		return;
	} else if (line[0]) {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "unknown command '%.64s'", line);
	} else {
		return;
	}
	if (rc < 0)
		printf("error: %s\n", err);
	else
		printf("ok\n");
	fflush(stdout);
}

static void control_read(struct un_host *h)
{
	ssize_t r = read(h->ctl_fd, h->ctl_buf + h->ctl_len, sizeof(h->ctl_buf) - 1 - h->ctl_len);
	char *nl;

	if (r <= 0)
		return;
	h->ctl_len += (size_t)r;
	h->ctl_buf[h->ctl_len] = 0;
	while ((nl = strchr(h->ctl_buf, '\n'))) {
		*nl = 0;
		control_line(h, h->ctl_buf);
		h->ctl_len -= (size_t)(nl + 1 - h->ctl_buf);
		memmove(h->ctl_buf, nl + 1, h->ctl_len + 1);
	}
	if (h->ctl_len == sizeof(h->ctl_buf) - 1)
		h->ctl_len = 0; /* an overlong line: drop it */
}

static int serve(struct un_host *h)
{
	uint8_t *buf = malloc(NS_FRAME_BUF);
	struct pollfd pfd[3];

	if (!buf)
		return 1;
	while (!stop) {
		int timeout = usernet_timeout_ms(h->u), np = 2;
		uint64_t lt =
			h->link->ops->poll
				? h->link->ops->poll(h->link, ns_clock_now(ns_clock_monotonic()))
				: UINT64_MAX;

		if (lt != UINT64_MAX && (timeout < 0 || lt / 1000 < (uint64_t)timeout))
			timeout = (int)(lt / 1000);
		if (h->vnet)
			ns_link_tap_vnet_flush(h->vnet); /* frames released by the impairment */
		pfd[0] = (struct pollfd){.fd = ns_link_fd(h->link), .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = usernet_fd(h->u), .events = POLLIN};
		if (h->ctl_fd >= 0)
			pfd[np++] = (struct pollfd){.fd = h->ctl_fd, .events = POLLIN};
		if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 256; i++) {
			ssize_t n = ns_link_receive(h->link, buf, NS_FRAME_BUF);

			if (n <= 0)
				break;
			usernet_input(h->u, buf, (size_t)n);
		}
		usernet_poll(h->u);
		if (h->vnet)
			ns_link_tap_vnet_flush(h->vnet);
		if (np == 3 && pfd[2].revents)
			control_read(h);
		if (dump_stats) {
			dump_stats = 0;
			print_stats(h, stderr);
		}
	}
	free(buf);
	return 0;
}

int usernet_host_main(int argc, char **argv)
{
	struct un_host h = {.tap = "tap0", .ctl_fd = -1};
	struct sigaction sa = {.sa_handler = on_signal};
	char err[256];
	int rc;

	if (parse_args(&h, argc, argv) < 0)
		return 2;
	usernet_cfg_defaults(&h.cfg);
	h.cfg.send = send_frame;
	h.cfg.opaque = &h;
	/* libslirp verifies every checksum: only netstack gets offloads. */
	h.cfg.rx_csum_trusted = h.cfg.impl == USERNET_IMPL_NETSTACK && !h.no_offload;
	h.cfg.rx_gso = h.cfg.rx_csum_trusted;
	h.link = tap_in_netns(h.netns, h.tap, h.cfg.mtu, h.cfg.rx_csum_trusted);
	if (!h.link)
		return 1;
	if (h.cfg.rx_csum_trusted)
		h.vnet = h.link;
	if (h.impair)
		h.link = ns_link_impair(h.link, NULL, &h.im);
	h.u = usernet_new(&h.cfg, err, sizeof(err));
	if (!h.u) {
		fprintf(stderr, "netstack-host: usernet: %s\n", err);
		ns_link_destroy(h.link);
		return 1;
	}
	for (unsigned i = 0; i < h.nfwds; i++)
		if (usernet_hostfwd_add(h.u, h.fwds[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "netstack-host: %s\n", err);
			usernet_free(h.u);
			ns_link_destroy(h.link);
			return 1;
		}
	if (h.control && (h.ctl_fd = open(h.control, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
		fprintf(stderr, "netstack-host: control %s: %s\n", h.control, strerror(errno));
		usernet_free(h.u);
		ns_link_destroy(h.link);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (h.verbose)
		fprintf(stderr, "netstack-host: usernet (%s) on %s, MTU %u\n",
			usernet_impl_name(h.cfg.impl), h.link->name, h.cfg.mtu);
	rc = serve(&h);
	print_stats(&h, stderr);
	usernet_free(h.u);
	ns_link_destroy(h.link);
	if (h.ctl_fd >= 0)
		close(h.ctl_fd);
	return rc;
}
