/* fuzz_usernet_state.c — usernet_load and usernet_load_fds
 * (netstack/usernet/state*.c, netstack/tcp_state.c) on arbitrary
 * snapshots: the header, record framing and lengths, the LAN check,
 * leases, connections to reset and connections to carry on (their TCP
 * state restored into netstack, relayed to one end of a socketpair
 * standing in for the host socket; index 1 is a pipe, which must be
 * refused as a host socket and the connection reset), and hostfwd rules
 * with their sockets (index 2 is a listening TCP socket on 127.0.0.1, the
 * only one a TCP rule may take). An accepted snapshot is polled (RSTs
 * go out, restored connections relay), then saved again, and that must
 * load into a fresh usernet.
 * Input: the snapshot. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/usernet/usernet.h"
#include "tests/fuzz/fuzz.h"

static void drop_frame(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	(void)frame;
	(void)len;
}

static struct usernet *fresh(void)
{
	struct usernet_cfg cfg = {.dns_upstream = "127.0.0.1", .send = drop_frame};
	char err[256];
	struct usernet *u = usernet_new(&cfg, err, sizeof(err));

	if (!u) {
		fprintf(stderr, "usernet_new: %s\n", err);
		abort();
	}
	return u;
}

/* A listening TCP socket on a port of the kernel's choosing. */
static int listener(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0)
		abort();
	return fd;
}

/* A load with three host fds: FLOW records whose index is 0 carry on, 1
 * (not a socket) and beyond are reset; a TCP forward takes index 2. */
static void load_live(const uint8_t *data, size_t size)
{
	struct usernet *u = fresh();
	char err[256];
	int sv[2], p[2], fds[3];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(p) < 0)
		abort();
	fds[0] = sv[0];
	fds[1] = p[0];
	fds[2] = listener();
	if (usernet_load_fds(u, data, size, fds, 3, err, sizeof(err)) == 0) {
		usernet_poll(u);
		usernet_poll(u);
	}
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	close(fds[2]);
	usernet_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usernet *u = fresh();
	char err[256];
	void *again;
	size_t len;

	load_live(data, size);
	if (usernet_load(u, data, size, err, sizeof(err)) == 0) {
		usernet_poll(u);
		if (usernet_save(u, &again, &len, err, sizeof(err)) < 0)
			abort();
		usernet_free(u);
		u = fresh();
		if (usernet_load(u, again, len, err, sizeof(err)) < 0) {
			fprintf(stderr, "a saved snapshot did not load back: %s\n", err);
			abort();
		}
		free(again);
	} else if (!err[0] || strchr(err, '\n')) {
		abort(); /* a refusal says why, on one line */
	}
	usernet_free(u);
	return 0;
}
