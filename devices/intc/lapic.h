/* lapic.h — the local APICs and the APIC bus (kernel_irqchip=off). */
#ifndef VMM_DEVICES_INTC_LAPIC_H
#define VMM_DEVICES_INTC_LAPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* Local APICs and the APIC bus between them (kernel_irqchip=off). The
 * register page is laid out like the xAPIC MMIO page and KVM's
 * struct kvm_lapic_state. Callbacks run without any APIC lock. */
#define LAPIC_PAGE_SIZE 1024
#define LAPIC_DEFAULT_BASE 0xfee00000ull
#define LAPIC_MSR_TSC_DEADLINE 0x6e0
struct lapic_host {
	/* cpu has a new interrupt or event: wake it (HLT) or make it look */
	void (*kick)(void *opaque, unsigned cpu);
	/* EOI of a level-triggered vector: the broadcast to the I/O APIC */
	void (*eoi)(void *opaque, uint8_t vector);
	uint64_t (*now_ns)(void *opaque);
	/* call lapic_timer_expired(cpu's APIC) at deadline_ns; UINT64_MAX: cancel */
	void (*arm_timer)(void *opaque, unsigned cpu, uint64_t deadline_ns);
	uint64_t (*tsc_now)(void *opaque); /* the guest's TSC now */
	uint64_t tsc_khz;
	void *opaque;
};
/* Events for the vCPU thread (lapic_take_events). */
enum { LAPIC_EV_NMI = 1, LAPIC_EV_INIT = 2, LAPIC_EV_SIPI = 4, LAPIC_EV_EXTINT = 8 };
struct lapic;
struct apic_bus;
/* apic_ids[i]: vCPU i's initial APIC ID (NULL: i itself). */
struct apic_bus *apic_bus_new(unsigned ncpus, const uint8_t *apic_ids,
			      const struct lapic_host *host);
void apic_bus_free(struct apic_bus *bus);
struct lapic *apic_bus_cpu(struct apic_bus *bus, unsigned cpu);
/* Register the xAPIC page (LAPIC_DEFAULT_BASE) on mmio; pages an
 * IA32_APIC_BASE write moves come and go there too. */
int apic_bus_map(struct apic_bus *bus, struct iobus *mmio);
/* Deliver an MSI / I/O APIC message. */
void apic_bus_msi(struct apic_bus *bus, uint64_t addr, uint32_t data);
/* The APIC the calling thread's MMIO accesses reach (-1: none). */
void lapic_set_thread_cpu(int cpu);
/* xAPIC register access by offset (aligned 32-bit). */
uint32_t lapic_read(struct lapic *a, unsigned off);
void lapic_write(struct lapic *a, unsigned off, uint32_t v);
/* x2APIC MSRs 0x800-0x8ff and IA32_TSC_DEADLINE: 0, or -1 for #GP. */
int lapic_msr_read(struct lapic *a, uint32_t msr, uint64_t *value);
int lapic_msr_write(struct lapic *a, uint32_t msr, uint64_t value);
/* IA32_APIC_BASE (enable, x2APIC mode, BSP). */
uint64_t lapic_get_base(struct lapic *a);
void lapic_set_base(struct lapic *a, uint64_t value);
/* The highest interrupt above the processor priority: has / take (moves
 * it from IRR to ISR, returns the vector or -1; none while an NMI waits
 * for lapic_take_events, as an NMI goes first). */
bool lapic_has_interrupt(struct lapic *a);
int lapic_get_interrupt(struct lapic *a);
/* An interrupt waits only because of the TPR (CR8). */
bool lapic_blocked_by_tpr(struct lapic *a);
/* The PIC's INTR reaches this CPU (APIC off, or LINT0 unmasked ExtINT). */
bool lapic_accepts_pic(struct lapic *a);
/* An edge on LINT0/LINT1, delivered as its LVT entry says. */
void lapic_set_lint(struct lapic *a, unsigned pin, bool level);
/* TPR (CR8 << 4 in 64-bit mode). */
uint8_t lapic_get_tpr(struct lapic *a);
void lapic_set_tpr(struct lapic *a, uint8_t tpr);
/* The LAPIC_EV_* bits since the last call; *nmis: how many NMIs (1-2). */
unsigned lapic_take_events(struct lapic *a, uint8_t *sipi_vector, unsigned *nmis);
bool lapic_events_pending(struct lapic *a);
void lapic_timer_expired(struct lapic *a);
/* INIT: registers to their INIT state (ID and base kept). Reset: also
 * the base MSR (enabled, BSP for CPU 0) and pending events. */
void lapic_init(struct lapic *a);
void lapic_reset(struct lapic *a);
/* A snapshot of the register page (current count filled in). */
void lapic_copy_page(struct lapic *a, uint8_t page[LAPIC_PAGE_SIZE]);
/* Snapshot (state/state.h, lapic_state.c): node "lapic@CPU" under the
 * writer's current node with the register page, the base MSR, the timer
 * (relative to the clock at the save) and the events not yet taken. A
 * TSC-deadline timer is kept as its deadline on the guest's TSC: load it
 * once the guest's TSC is back. */
struct state_writer;
struct state_reader;
void lapic_save(struct lapic *a, struct state_writer *w);
/* 0, or -1 with err and the APIC unchanged. */
int lapic_load(struct lapic *a, const struct state_reader *r, char *err, size_t errlen);
/* `info lapic` for a register page (lapic_copy_page or KVM_GET_LAPIC). */
size_t lapic_format(const uint8_t page[LAPIC_PAGE_SIZE], unsigned cpu, bool x2apic, char *buf,
		    size_t len);

#endif /* VMM_DEVICES_INTC_LAPIC_H */
