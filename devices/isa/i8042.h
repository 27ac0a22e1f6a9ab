/* i8042.h — the i8042 keyboard controller (reset line). */
#ifndef VMM_DEVICES_ISA_I8042_H
#define VMM_DEVICES_ISA_I8042_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* Minimal i8042 keyboard controller at 0x60/0x64: status, command byte,
 * self tests; pulse of the reset line (0x64 <- 0xfe, or output port bit 0
 * cleared) calls reset_fn, which resets the machine or exits (-no-reboot). */
struct i8042;
struct i8042 *i8042_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque);
/* Snapshot: node "i8042@60" (status, command byte, output port with the
 * A20 gate, the output queue, half-done commands). */
struct state_writer;
struct state_reader;
void i8042_save(struct i8042 *k, struct state_writer *w);
int i8042_load(struct i8042 *k, const struct state_reader *r, char *err, size_t errlen);
void i8042_free(struct i8042 *k);

#endif /* VMM_DEVICES_ISA_I8042_H */
