/* dma8237.h — the two 8237A DMA controllers (registers only). */
#ifndef VMM_DEVICES_ISA_DMA8237_H
#define VMM_DEVICES_ISA_DMA8237_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* The two 8237A DMA controllers (0x00-0x0f, 0xc0-0xdf) and page registers
 * (0x81-0x8f): registers only, no device does ISA DMA. */
struct dma8237;
struct dma8237 *dma8237_new(struct dev_host *host);
void dma8237_free(struct dma8237 *d);

#endif /* VMM_DEVICES_ISA_DMA8237_H */
