/* i8254.h — the 8254 PIT (kernel_irqchip=split|off). */
#ifndef VMM_DEVICES_TIMER_I8254_H
#define VMM_DEVICES_TIMER_I8254_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* 8254 PIT at 0x40-0x43 and port B (0x61). OUT0 drives GSI 0 through
 * host->irq. The clock gives the time (ns) and arms a one-shot call of
 * i8254_timer() at an absolute deadline (UINT64_MAX: cancel); with clk
 * NULL the PIT uses CLOCK_MONOTONIC and a timer on host->loop. */
struct i8254_clock {
	uint64_t (*now_ns)(void *opaque);
	void (*arm)(void *opaque, uint64_t deadline_ns);
	void *opaque;
};
struct i8254;
struct i8254 *i8254_new(struct dev_host *host, const struct i8254_clock *clk);
void i8254_free(struct i8254 *p);
/* The armed deadline passed. */
void i8254_timer(struct i8254 *p);
/* A channel's OUT pin now. */
bool i8254_out(struct i8254 *p, unsigned ch);
/* Snapshot (state/state.h): node "pit@40" under the writer's current
 * node, a "channel@N" child per counter. Times are kept relative to the
 * clock at the save (how far each count has run), so the guest does not
 * see the time the machine spent stopped. */
struct state_writer;
struct state_reader;
void i8254_save(struct i8254 *p, struct state_writer *w);
/* Load "pit@40" from under r: 0, or -1 with err and the PIT unchanged.
 * IRQ 0 and the host timer follow the loaded state. */
int i8254_load(struct i8254 *p, const struct state_reader *r, char *err, size_t errlen);

#endif /* VMM_DEVICES_TIMER_I8254_H */
