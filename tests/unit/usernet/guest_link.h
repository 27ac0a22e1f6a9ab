/* guest_link.h — the usernet unit suites' guest: a netstack (10.0.2.15,
 * SLAAC on the IPv6 LAN) joined to the usernet under test (u) by two
 * frame queues, both event loops turned by pump(). */
#ifndef TESTS_UNIT_USERNET_GUEST_LINK_H
#define TESTS_UNIT_USERNET_GUEST_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "netstack/netstack.h"
#include "netstack/usernet/usernet.h"

#define GUEST 0x0a00020fu
#define GW 0x0a000202u

/* Frames in flight each way. */
struct fq {
	uint8_t *f[512];
	size_t len[512];
	unsigned n;
};

extern struct fq to_usernet, to_guest;
extern struct ns_stack *guest;
extern struct ns_link *glink;
extern struct usernet *u;

/* usernet_cfg.send for a usernet whose frames go to the guest. */
void usernet_tx(void *opaque, const void *frame, size_t len);
/* Move frames both ways and run both event loops for about ms. */
void pump(int ms);
/* A usernet (max_tcp flows, 0: the default) and the guest; teardown
 * frees both and what is left in the queues. setup: setup_limits(0). */
void setup_limits(unsigned max_tcp);
void setup(void);
void teardown(void);
/* A kernel TCP listener on 127.0.0.1, its port in *port. */
int host_listener(uint16_t *port);
/* Non-blocking guest connect to 10.0.2.2:port; the final NS_SO_ERROR. */
int guest_connect(uint16_t port, struct ns_sock **out);
/* Drops the frames in q (never delivered). */
void fq_drop(struct fq *q);
/* Guest reads until it has got want bytes or an error; the last result. */
ssize_t guest_read(struct ns_sock *s, char *buf, size_t want);

#endif /* TESTS_UNIT_USERNET_GUEST_LINK_H */
