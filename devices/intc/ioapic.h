/* ioapic.h — the 82093AA I/O APIC (kernel_irqchip=split|off). */
#ifndef VMM_DEVICES_INTC_IOAPIC_H
#define VMM_DEVICES_INTC_IOAPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* 82093AA I/O APIC, 24 pins, registers at base (0xfec00000). Pins send
 * MSI-shaped messages through host->irq.msi; report EOIs of level
 * triggered vectors (the EOI broadcast) with ioapic_eoi(). */
#define IOAPIC_BASE 0xfec00000ull
#define IOAPIC_NUM_PINS 24
struct ioapic;
struct ioapic *ioapic_new(struct dev_host *host, uint64_t base);
void ioapic_free(struct ioapic *io);
void ioapic_set_irq(struct ioapic *io, unsigned pin, bool level);
void ioapic_eoi(struct ioapic *io, uint8_t vector);
/* fn runs (without the I/O APIC's lock) after the guest rewrote a
 * redirection entry, and on reset: the split irqchip mirrors the entries
 * into KVM's GSI routes so the kernel knows the level-triggered vectors. */
void ioapic_set_routes_changed(struct ioapic *io, void (*fn)(void *opaque), void *opaque);
/* The message pin would send now, and whether it is masked. */
void ioapic_pin_msi(struct ioapic *io, unsigned pin, uint64_t *addr, uint32_t *data,
		    bool *masked);
/* A redirection entry as an MSI address/data pair. */
void ioapic_rte_to_msi(uint64_t rte, uint64_t *addr, uint32_t *data);
/* Snapshot (state/state.h): ID, IOREGSEL, the pin levels and the 24
 * redirection entries (with remote IRR) as node "ioapic@BASE" (hex) under
 * the writer's current node; the `info irq` counters are not guest state. */
struct state_writer;
struct state_reader;
void ioapic_save(struct ioapic *io, struct state_writer *w);
/* Load it from under r: 0, or -1 with err and the I/O APIC unchanged.
 * Delivers nothing; routes_changed runs. */
int ioapic_load(struct ioapic *io, const struct state_reader *r, char *err, size_t errlen);
size_t ioapic_info(struct ioapic *io, char *buf, size_t len);
/* The `info ioapic` layout for any I/O APIC's registers (KVM's too). */
size_t ioapic_format(uint8_t id, uint8_t regsel, const uint64_t rte[IOAPIC_NUM_PINS],
		     uint32_t irr, char *buf, size_t len);
uint64_t ioapic_irq_count(struct ioapic *io, unsigned pin);

#endif /* VMM_DEVICES_INTC_IOAPIC_H */
