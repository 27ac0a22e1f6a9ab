/* isa_empty.h — ISA addresses with no device behind them. */
#ifndef VMM_DEVICES_ISA_ISA_EMPTY_H
#define VMM_DEVICES_ISA_ISA_EMPTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* ISA addresses with no device behind them (LPT, unconfigured COM ports,
 * 0x402 without -debugcon; on the MMIO bus the VGA window): reads
 * all-ones, writes ignored, not logged. bus is host->pio or host->mmio. */
int isa_empty_new(struct iobus *bus, uint64_t base, uint64_t len, const char *name);

#endif /* VMM_DEVICES_ISA_ISA_EMPTY_H */
