/* i8259.h — the 8259A PIC pair (kernel_irqchip=split|off). */
#ifndef VMM_DEVICES_INTC_I8259_H
#define VMM_DEVICES_INTC_I8259_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* 8259A master (0x20) + slave (0xa0, on master IRQ 2) and the ELCR
 * (0x4d0/0x4d1). intr_changed runs, without the PIC's lock, whenever the
 * INTR output may have changed; read it with i8259_intr(). */
struct i8259;
struct i8259 *i8259_new(struct dev_host *host, void (*intr_changed)(void *opaque), void *opaque);
void i8259_free(struct i8259 *p);
/* Drive ISA IRQ line irq (0-15). */
void i8259_set_irq(struct i8259 *p, unsigned irq, bool level);
bool i8259_intr(struct i8259 *p);
/* The INTA cycle: the vector to deliver (a spurious IRQ 7 when none). */
int i8259_ack(struct i8259 *p);
/* `info pic` in QEMU's layout; snprintf-style length. */
size_t i8259_info(struct i8259 *p, char *buf, size_t len);
/* The same layout for any PIC pair's registers (KVM's in-kernel one). */
struct i8259_state {
	uint8_t irr, imr, isr, priority_add, irq_base, read_reg_select, elcr;
	uint8_t special_fully_nested_mode;
};
size_t i8259_format(const struct i8259_state st[2], char *buf, size_t len);
/* Rising edges seen on irq since reset (`info irq`). */
uint64_t i8259_irq_count(struct i8259 *p, unsigned irq);
/* Snapshot (state/state.h): each chip's registers, initialisation step,
 * modes, input latches and ELCR as nodes "pic@20" and "pic@a0" under the
 * writer's current node. The `info irq` counters are not guest state. */
struct state_writer;
struct state_reader;
void i8259_save(struct i8259 *p, struct state_writer *w);
/* Load both nodes from under r: 0, or -1 with err and the PICs unchanged.
 * INTR is recomputed (intr_changed runs when it differs). */
int i8259_load(struct i8259 *p, const struct state_reader *r, char *err, size_t errlen);

#endif /* VMM_DEVICES_INTC_I8259_H */
