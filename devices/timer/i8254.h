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

#endif /* VMM_DEVICES_TIMER_I8254_H */
