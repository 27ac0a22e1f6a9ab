/* irqchip.h — the interrupt controller modes (-machine kernel_irqchip=)
 * and the userspace models' glue to KVM (vmm/irqchip.c). */
#ifndef VMM_IRQCHIP_H
#define VMM_IRQCHIP_H

#include <stdbool.h>

#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "devices/intc/lapic.h"
#include "devices/timer/i8254.h"
#include "kernel/kvm/kvm.h"
#include "vmm/cli/cli.h"

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
	/* kernel_irqchip=off (irqchip_off.c) */
	struct apic_bus *apics;
	struct ic_cpu *cpu; /* per vCPU */
	bool user_msrs;	    /* x2APIC, APIC base and TSC-deadline MSRs reach us */
	int64_t tsc_offset; /* guest TSC - host TSC */
	uint64_t tsc_khz;
};

/* Before the vCPUs exist: the KVM side of the mode (split: check and
 * enable KVM_CAP_SPLIT_IRQCHIP). 0, or -1 with err naming what is
 * missing. Mode on is machine.c's setup_irqchip. */
int irqchip_init_vm(struct machine *m, char *err, size_t errlen);
/* After the dev_host exists: the userspace models; they take over
 * m->host.irq. */
int irqchip_init_devices(struct machine *m, char *err, size_t errlen);
void irqchip_destroy(struct machine *m);
/* The IOMMU's interrupt remapping changed (opaque: the vmm_irqchip):
 * re-mirror the I/O APIC routes through it. */
void irqchip_ir_changed(void *opaque);
/* vCPU thread, before each KVM_RUN (m->ic set): inject what is pending.
 * false: do not run now (halted, waiting for SIPI; look at the pause and
 * quit flags and call again). */
bool irqchip_pre_run(struct vcpu *v);
/* vCPU thread, after each KVM_RUN that returned an exit (m->ic set). */
void irqchip_post_run(struct vcpu *v);
/* vCPU thread: the exits the modes add; false when not one of them. */
bool irqchip_handle_exit(struct vcpu *v);

/* `info pic|ioapic|lapic [CPU]|irq` (irqchip_monitor.c); opaque: the
 * machine. The monitor's table (vmm/control/monitor.c) calls them. */
void irqchip_info_pic(void *opaque, FILE *out);
void irqchip_info_ioapic(void *opaque, FILE *out);
void irqchip_info_lapic(void *opaque, const char *arg, FILE *out);
void irqchip_info_irq(void *opaque, FILE *out);

/* irqchip_off.c: the local APICs in vmm (kernel_irqchip=off). */
/* Before the vCPUs: route the APIC MSRs to userspace where KVM can. */
void irqchip_off_init_vm(struct vmm_irqchip *ic);
int irqchip_off_init(struct vmm_irqchip *ic, char *err, size_t errlen);
void irqchip_off_destroy(struct vmm_irqchip *ic);
/* irq_sink.msi: deliver to the modelled APICs. */
void irqchip_off_msi(void *opaque, uint64_t addr, uint32_t data);
/* Hide what KVM cannot forward without its APIC: the PV features that
 * need it, and x2APIC / TSC-deadline unless the MSRs reach vmm. */
void irqchip_off_cpuid(struct vmm_irqchip *ic, struct kvm_cpuid2 *c);
/* KVM_EXIT_X86_RDMSR / WRMSR of the MSRs irqchip_off_init_vm routed. */
void irqchip_off_msr(struct vcpu *v);
bool irqchip_off_pre_run(struct vcpu *v);
void irqchip_off_post_run(struct vcpu *v);
void irqchip_off_hlt(struct vcpu *v);
/* From vcpu_kick: wake the vCPU thread when it sleeps in HLT or SIPI. */
void irqchip_off_kick(struct vcpu *v);
/* The APICs and the vCPU threads' run states under the writer's node;
 * load them once the vCPUs' registers and MSRs are back (0, or -1 and
 * err; a failure leaves APICs before the bad one loaded: the machine is
 * then discarded, as after any failed incoming migration). */
struct state_writer;
struct state_reader;
void irqchip_off_save(struct vmm_irqchip *ic, struct state_writer *w);
int irqchip_off_load(struct vmm_irqchip *ic, const struct state_reader *r, char *err,
		     size_t errlen);
/* The irqchip of modes split and off as node "/irqchip" (pic, ioapic, pit
 * and, mode off, the APICs); nothing in mode on, whose chips are KVM's
 * (cpu_state.c). Load after cpu_state_load. */
int irqchip_save(struct machine *m, struct state_writer *w, char *err, size_t errlen);
int irqchip_load(struct machine *m, const struct state_reader *root, char *err, size_t errlen);

#endif /* VMM_IRQCHIP_H */
