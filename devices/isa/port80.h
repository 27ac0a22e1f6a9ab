/* port80.h — port 0x80. */
#ifndef VMM_DEVICES_ISA_PORT80_H
#define VMM_DEVICES_ISA_PORT80_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* Port 0x80 (POST codes / I/O delay): writes ignored, reads all-ones. */
int port80_new(struct dev_host *host);

#endif /* VMM_DEVICES_ISA_PORT80_H */
