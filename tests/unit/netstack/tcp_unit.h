/* tcp_unit.h — the fixture the TCP engine's unit tests share (netstack_tcp,
 * tests/unit/netstack/test_tcp_unit*.c, helpers in tcp_unit_fixture.c):
 * two stacks, a (10.0.0.1, client) and b (10.0.0.2, server), over an
 * in-memory link pair on a virtual clock, with helpers to pump frames, run
 * timers, open connections and take frames off the wire to edit them. */
#ifndef VMM_TESTS_TCP_UNIT_H
#define VMM_TESTS_TCP_UNIT_H

#include <check.h>

#include "netstack/tcp_internal.h"

extern struct ns_clock *clk;
extern struct ns_link *la, *lb;
extern struct ns_stack *sa, *sb;
extern uint32_t A, B;
extern bool b_dead; /* stack b has vanished: frames to it are lost */

/* The checked fixture; setup_flags gives b's interface NS_IF_* flags. */
void setup_flags(unsigned b_flags);
void setup(void);
void teardown(void);

/* Deliver frames both ways until the wire is quiet. */
int pump(void);
/* Let ms of virtual time pass, 1 ms at a time, running timers. */
void run_ms(unsigned ms);
/* Drop every frame on the wire. */
void drop_wire(void);

int state_of(struct ns_sock *s);
/* A non-blocking stream socket; one listening on addr:port. */
struct ns_sock *stream(struct ns_stack *st);
struct ns_sock *listener(struct ns_stack *st, uint32_t addr, uint16_t port);
/* A connected pair: *c on stack a (client), *s on stack b (server). */
void connect_pair(struct ns_sock **c, struct ns_sock **s, uint16_t port);
unsigned conns(struct ns_stack *st);
struct ns_stats stats_of(struct ns_stack *st);

/* A frame taken off a link to inspect or edit before delivering it. */
struct frame {
	uint8_t b[2048];
	size_t len;
};

/* Take the next frame off link l's receive queue (not delivered). */
bool grab(struct ns_link *l, struct frame *f);
struct ip_hdr *f_ip(struct frame *f);
struct tcp_hdr *f_tcp(struct frame *f);
uint32_t f_paylen(struct frame *f);
/* Recompute the TCP checksum after editing a grabbed frame. */
void f_fix(struct frame *f);
/* Client data segment "x" grabbed on its way to b, then delivered. */
void client_segment(struct ns_sock *c, struct frame *f);

/* The tests of test_tcp_unit_loss.c and test_tcp_unit_segments.c, added to
 * the suite's "stacks" case (with the checked fixture above). */
void tcp_unit_add_loss_tests(TCase *tc);
void tcp_unit_add_segment_tests(TCase *tc);

#endif
