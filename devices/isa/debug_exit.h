/* debug_exit.h — QEMU's isa-debug-exit. */
#ifndef VMM_DEVICES_ISA_DEBUG_EXIT_H
#define VMM_DEVICES_ISA_DEBUG_EXIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* QEMU's isa-debug-exit: a write of value v makes the VMM exit with
 * status (v << 1) | 1; exit_fn performs the exit. */
struct debug_exit;
struct debug_exit *debug_exit_new(struct dev_host *host, uint16_t iobase, uint16_t iosize,
				  void (*exit_fn)(void *opaque, int status), void *opaque);
void debug_exit_free(struct debug_exit *d);

#endif /* VMM_DEVICES_ISA_DEBUG_EXIT_H */
