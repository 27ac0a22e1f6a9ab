/* irqchip.h — the interrupt controller modes (-machine kernel_irqchip=)
 * and the userspace models' glue to KVM (vmm/irqchip.c). */
#ifndef VMM_IRQCHIP_H
#define VMM_IRQCHIP_H

#include <stdbool.h>

#include "devices/devices.h"
#include "vmm/cli.h"

struct machine;
struct vcpu;

/* Present (machine.ic) in the split and off modes only. */
struct vmm_irqchip {
	struct machine *m;
	enum irqchip_mode mode;
	struct i8259 *pic;
	struct ioapic *ioapic;
	struct i8254 *pit; /* NULL with -machine pit=off */
	bool route_error_logged, inject_error_logged;
};

/* Before the vCPUs exist: the KVM side of the mode (split: check and
 * enable KVM_CAP_SPLIT_IRQCHIP). 0, or -1 with err naming what is
 * missing. Mode on is machine.c's setup_irqchip. */
int irqchip_init_vm(struct machine *m, char *err, size_t errlen);
/* After the dev_host exists: the userspace models; they take over
 * m->host.irq. */
int irqchip_init_devices(struct machine *m, char *err, size_t errlen);
void irqchip_destroy(struct machine *m);
/* vCPU thread, before each KVM_RUN (m->ic set): inject the PIC. */
void irqchip_pre_run(struct vcpu *v);
/* vCPU thread: the exits the modes add; false when not one of them. */
bool irqchip_handle_exit(struct vcpu *v);

#endif /* VMM_IRQCHIP_H */
