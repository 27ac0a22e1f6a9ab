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
/* Snapshot: nodes "dma@0" (with the page registers) and "dma@c0". */
struct state_writer;
struct state_reader;
void dma8237_save(struct dma8237 *d, struct state_writer *w);
int dma8237_load(struct dma8237 *d, const struct state_reader *r, char *err, size_t errlen);
void dma8237_free(struct dma8237 *d);

#endif /* VMM_DEVICES_ISA_DMA8237_H */
