/* port92.h — system control port A (0x92). */
#ifndef VMM_DEVICES_ISA_PORT92_H
#define VMM_DEVICES_ISA_PORT92_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* System control port A (0x92): fast A20 gate; bit 0 0 -> 1 calls reset_fn. */
struct port92;
struct port92 *port92_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque);
/* Snapshot: node "port92@92". */
struct state_writer;
struct state_reader;
void port92_save(struct port92 *p, struct state_writer *w);
int port92_load(struct port92 *p, const struct state_reader *r, char *err, size_t errlen);
void port92_free(struct port92 *p);

#endif /* VMM_DEVICES_ISA_PORT92_H */
