/* daemon.c — build/wlan-medium: one radio medium shared by several VMs
 * (the wmediumd idea, with the regulatory domain enforced in the medium).
 *
 *   wlan-medium --socket PATH [--control PATH] [--country XX] [--outdoor]
 *               [--regdb FILE] [--cac SECONDS] [--nop SECONDS] [--no-enforce]
 *
 * VMs connect with `-object wlan-medium,id=m0,socket=PATH`; each
 * connection is one port of the medium. The control socket (default
 * PATH.ctl) takes the monitor's lines: wlan_country XX, wlan_regdb_reload,
 * wlan_radar FREQ, wlan_enforce on|off, info wlan, info regdomain; each
 * answer ends with the prompt "(wlan-medium) ". One thread, one epoll loop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "wlan/wlan.h"

#define MAX_CONNS 64

struct conn {
	int fd;
	bool control;
	struct wlan_port *port; /* VM connections */
	struct wlan_stream in;
	char line[512]; /* control connections */
	size_t line_len;
};

static struct wlan_medium *medium;
/* epoll tags of the two listening sockets (a connection's tag is its conn) */
static char vm_listener, ctl_listener;
static volatile sig_atomic_t quit;

static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "wlan-medium: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "wlan-medium: cannot listen on %s: %s\n", path, strerror(errno));
		return -1;
	}
	return fd;
}

static bool to_vm(void *opaque, const void *msg, size_t len)
{
	struct conn *c = opaque;

	return wlan_stream_send(c->fd, msg, len) == 0;
}

static void from_vm(void *opaque, const uint8_t *msg, size_t len)
{
	struct conn *c = opaque;

	wlan_port_input(c->port, msg, len);
}

static void close_conn(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	wlan_port_detach(c->port);
	close(c->fd);
	free(c);
}

#define PROMPT "(wlan-medium) "

/* A control line: run it, send the answer back and a prompt (as vmm's
 * monitor does, so a client knows where an answer ends). */
static void control_line(struct conn *c, const char *line)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	if (!f)
		return;
	if (line)
		wlan_medium_command(medium, line, f);
	fputs(PROMPT, f);
	fclose(f);
	if (n && write(c->fd, out, n) < 0)
		n = 0;
	free(out);
}

static void accept_conn(int ep, int lfd, bool control, unsigned *serial)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct conn *c = fd >= 0 ? calloc(1, sizeof(*c)) : NULL;
	int bufsz = 1 << 20;
	char name[32];

	if (!c) {
		if (fd >= 0)
			close(fd);
		return;
	}
	c->fd = fd;
	c->control = control;
	if (!control) {
		snprintf(name, sizeof(name), "vm%u", (*serial)++);
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
		c->port = wlan_port_attach(medium, name, to_vm, c);
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

	if ((!control && !c->port) || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		wlan_port_detach(c->port);
		close(fd);
		free(c);
		return;
	}
	if (control)
		control_line(c, NULL); /* the first prompt */
}

static int control_input(struct conn *c, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			c->line[c->line_len] = 0;
			control_line(c, c->line);
			c->line_len = 0;
		} else if (c->line_len + 1 < sizeof(c->line)) {
			c->line[c->line_len++] = buf[i];
		}
	}
	return 0;
}

static void serve(int ep, int vm_fd, int ctl_fd)
{
	unsigned serial = 1;

	while (!quit) {
		struct epoll_event ev[16];
		int n = epoll_wait(ep, ev, 16, -1);

		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;
			uint8_t buf[8192];

			if ((void *)c == &vm_listener || (void *)c == &ctl_listener) {
				bool ctl = (void *)c == &ctl_listener;

				accept_conn(ep, ctl ? ctl_fd : vm_fd, ctl, &serial);
				continue;
			}
			ssize_t got = recv(c->fd, buf, sizeof(buf), 0);

			if (got <= 0 ||
			    (c->control ? control_input(c, (char *)buf, (size_t)got)
					: wlan_stream_feed(&c->in, buf, (size_t)got, from_vm, c)))
				close_conn(ep, c);
		}
	}
}

static void on_signal(int sig)
{
	quit = 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: wlan-medium --socket PATH [--control PATH] [--country XX] "
		     "[--outdoor] [--regdb FILE]\n"
		     "                   [--cac SECONDS] [--nop SECONDS] [--no-enforce]\n");
}

static int parse_args(int argc, char **argv, struct wlan_medium_cfg *cfg, const char **sock,
		      const char **ctl)
{
	static const struct option opts[] = {
		{"socket", 1, NULL, 's'},  {"control", 1, NULL, 'C'},	 {"country", 1, NULL, 'c'},
		{"outdoor", 0, NULL, 'o'}, {"regdb", 1, NULL, 'r'},	 {"cac", 1, NULL, 'a'},
		{"nop", 1, NULL, 'n'},	   {"no-enforce", 0, NULL, 'E'}, {"help", 0, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			*sock = optarg;
			break;
		case 'C':
			*ctl = optarg;
			break;
		case 'c':
			cfg->country = optarg;
			break;
		case 'o':
			cfg->outdoor = true;
			break;
		case 'r':
			cfg->regdb = optarg;
			break;
		case 'a':
			cfg->cac_s = atoi(optarg);
			break;
		case 'n':
			cfg->nop_s = atoi(optarg);
			break;
		case 'E':
			cfg->no_enforce = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!*sock || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct wlan_medium_cfg cfg = {.cac_s = -1, .nop_s = -1};
	const char *sock = NULL, *ctl = NULL;
	char err[256], ctl_buf[256];
	int ep, vm_fd, ctl_fd;

	if (parse_args(argc, argv, &cfg, &sock, &ctl))
		return 2;
	if (!ctl) {
		snprintf(ctl_buf, sizeof(ctl_buf), "%s.ctl", sock);
		ctl = ctl_buf;
	}
	medium = wlan_medium_new(&cfg, err, sizeof(err));
	if (!medium) {
		fprintf(stderr, "wlan-medium: %s\n", err);
		return 1;
	}
	vm_fd = listen_on(sock);
	ctl_fd = listen_on(ctl);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (vm_fd < 0 || ctl_fd < 0 || ep < 0)
		return 1;
	struct epoll_event e1 = {.events = EPOLLIN, .data.ptr = &vm_listener};
	struct epoll_event e2 = {.events = EPOLLIN, .data.ptr = &ctl_listener};

	epoll_ctl(ep, EPOLL_CTL_ADD, vm_fd, &e1);
	epoll_ctl(ep, EPOLL_CTL_ADD, ctl_fd, &e2);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "wlan-medium: serving %s (control %s), country %s\n", sock, ctl,
		cfg.country ? cfg.country : "00");
	serve(ep, vm_fd, ctl_fd);
	unlink(sock);
	unlink(ctl);
	wlan_medium_free(medium);
	return 0;
}
