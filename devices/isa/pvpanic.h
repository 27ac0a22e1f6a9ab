/* pvpanic.h — QEMU's pvpanic ISA device. */
#ifndef VMM_DEVICES_ISA_PVPANIC_H
#define VMM_DEVICES_ISA_PVPANIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* QEMU's pvpanic ISA device: reads return the supported events, a guest
 * write of events calls event_fn (on the vCPU thread). */
#define PVPANIC_DEFAULT_PORT 0x505
#define PVPANIC_PANICKED 1u
#define PVPANIC_CRASH_LOADED 2u
struct pvpanic;
struct pvpanic *pvpanic_new(struct dev_host *host, uint16_t iobase,
			    void (*event_fn)(void *opaque, unsigned events), void *opaque);
void pvpanic_free(struct pvpanic *p);

#endif /* VMM_DEVICES_ISA_PVPANIC_H */
