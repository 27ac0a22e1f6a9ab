/* debugcon.h — the Bochs/QEMU debug console (0x402). */
#ifndef VMM_DEVICES_ISA_DEBUGCON_H
#define VMM_DEVICES_ISA_DEBUGCON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* Bochs/QEMU debug console at 0x402: bytes written go to fd (or nowhere
 * when fd < 0); reads return 0xe9. */
struct debugcon;
struct debugcon *debugcon_new(struct dev_host *host, int fd);
void debugcon_free(struct debugcon *d);

#endif /* VMM_DEVICES_ISA_DEBUGCON_H */
