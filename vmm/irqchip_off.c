/* irqchip_off.c — -machine kernel_irqchip=off: no irqchip in KVM at all.
 *
 * The local APICs are devices/intc/lapic.c; the vCPU threads do what KVM's
 * in-kernel APIC would: inject with KVM_INTERRUPT when
 * run->ready_for_interrupt_injection (else request_interrupt_window),
 * keep CR8 and the TPR in step through run->cr8, queue NMIs with KVM_NMI,
 * sleep on HLT (KVM_EXIT_HLT) until an interrupt can wake them, and hold
 * the APs until INIT + SIPI, which they carry out on their own registers.
 * APIC timers are one-shot host timers on the main loop.
 *
 * KVM without its APIC does not handle the x2APIC MSRs, IA32_TSC_DEADLINE
 * or (usefully) IA32_APIC_BASE: where KVM has KVM_CAP_X86_USER_SPACE_MSR
 * and an MSR filter, those MSRs exit to vmm and the guest gets x2APIC and
 * TSC-deadline; elsewhere both are hidden from CPUID (as QEMU does with
 * kernel_irqchip=off). The KVM PV features that need KVM's APIC are
 * always hidden.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "devices/intc/lapic.h"
#include "state/state.h"
#include "vmm/irqchip.h"
#include "vmm/machine.h"

#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define MSR_IA32_TSC 0x10
#define MSR_IA32_APIC_BASE 0x1b
/* APIC base MSR bits a guest may set: BSP (read-only), EXTD, EN, base */
#define APIC_BASE_WRITABLE 0x0000000ffffffd00ull
/* KVM paravirtual features (leaf 0x40000001 EAX) hidden with vmm's APIC.
 * Async page faults (4, 14), PV EOI (6), PV unhalt (7), PV send-IPI (11)
 * and PV sched yield (13) need KVM's APIC: Linux would try them and trip
 * over #GPs. PV TLB flush (9) lets a guest skip the flush IPI to a vCPU
 * whose steal-time record says preempted and leave the flush to KVM's
 * next entry; with vmm's APIC, SMP guests that live-migrated ran on
 * stale TLB entries (user processes crashing, a DMA buffer page lost) in
 * 3 of 4 runs of 8-14 migrations, and in none of 42 with it hidden. */
#define KVM_PV_HIDDEN_OFF (1u << 4 | 1u << 6 | 1u << 7 | 1u << 9 | 1u << 11 | 1u << 13 | 1u << 14)

#define TPR_POLL_NS 1000000ull
#define NMI_POLL_NS 50000ull /* see nmi_outstanding() */

enum cpu_state { CPU_RUNNING, CPU_HALTED, CPU_WAIT_SIPI };

struct ic_cpu {
	struct vmm_irqchip *ic;
	unsigned index;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum cpu_state state;
	bool woken;
	bool nmi_in_kvm; /* KVM_NMI given, maybe not yet delivered */
	uint8_t last_cr8;
	struct ev_timer *timer;
	struct ev_timer *tpr_poll; /* see inject() */
};

static struct vcpu *vcpu_of(struct ic_cpu *c)
{
	return &c->ic->m->vcpus[c->index];
}

/* Wake a halted or waiting vCPU thread, and get a running one out of
 * KVM_RUN (any thread). */
void irqchip_off_kick(struct vcpu *v)
{
	struct vmm_irqchip *ic = v->m->ic;
	struct ic_cpu *c;

	if (!ic || !ic->cpu)
		return;
	c = &ic->cpu[v->index];
	pthread_mutex_lock(&c->lock);
	c->woken = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static void apic_kick(void *opaque, unsigned cpu)
{
	struct vmm_irqchip *ic = opaque;
	struct vcpu *v = &ic->m->vcpus[cpu];

	if (v->started && pthread_equal(pthread_self(), v->thread.id))
		return; /* it looks before its next KVM_RUN anyway */
	vcpu_kick(v);	/* which also calls irqchip_off_kick */
}

static void apic_eoi(void *opaque, uint8_t vector)
{
	struct vmm_irqchip *ic = opaque;

	ioapic_eoi(ic->ioapic, vector);
}

static uint64_t apic_now(void *opaque)
{
	return clock_now_ns();
}

static void apic_arm(void *opaque, unsigned cpu, uint64_t deadline)
{
	struct vmm_irqchip *ic = opaque;
	uint64_t now = clock_now_ns();

	if (deadline == UINT64_MAX)
		ev_timer_disarm(ic->cpu[cpu].timer);
	else
		ev_timer_arm(ic->cpu[cpu].timer, deadline > now ? deadline - now : 1, 0);
}

static uint64_t host_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* The guest's TSC: the host's plus KVM's offset, measured at start-up. */
static uint64_t apic_tsc(void *opaque)
{
	struct vmm_irqchip *ic = opaque;

	return host_rdtsc() + (uint64_t)ic->tsc_offset;
}

static void tpr_poll_fired(void *opaque)
{
	struct ic_cpu *c = opaque;

	vcpu_kick(vcpu_of(c));
}

static void apic_timer_fired(void *opaque)
{
	struct ic_cpu *c = opaque;

	lapic_timer_expired(apic_bus_cpu(c->ic->apics, c->index));
}

void irqchip_off_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct vmm_irqchip *ic = opaque;

	apic_bus_msi(ic->apics, addr, data);
}

/* system_reset: APs wait for SIPI again, every APIC to power-on state. */
static void off_reset(void *opaque)
{
	struct vmm_irqchip *ic = opaque;

	for (unsigned i = 0; i < ic->m->ncpus; i++) {
		lapic_reset(apic_bus_cpu(ic->apics, i));
		ic->cpu[i].state = i ? CPU_WAIT_SIPI : CPU_RUNNING;
		ic->cpu[i].last_cr8 = 0;
		ic->cpu[i].nmi_in_kvm = false;
	}
}

void irqchip_off_init_vm(struct vmm_irqchip *ic)
{
	static const struct kvm_msr_range ranges[] = {
		{MSR_IA32_APIC_BASE, 1}, {LAPIC_MSR_TSC_DEADLINE, 1}, {0x800, 0x100}, /* x2APIC */
	};
	struct kvm_vm *vm = &ic->m->vm;

	ic->user_msrs = kvm_check_cap(vm->sys, KVM_CAP_X86_USER_SPACE_MSR) > 0 &&
			kvm_check_cap(vm->sys, KVM_CAP_X86_MSR_FILTER) > 0 &&
			kvm_vm_enable_user_msr_exits(vm) == 0 &&
			kvm_vm_msr_filter_to_user(vm, ranges, 3) == 0;
}

/* The guest TSC against the host's, for TSC-deadline timers. */
static void measure_tsc(struct vmm_irqchip *ic)
{
	struct kvm_vcpu *bsp = &ic->m->vcpus[0].kvm;
	uint64_t guest;
	int khz = kvm_vcpu_get_tsc_khz(bsp);

	ic->tsc_khz = khz > 0 ? (uint64_t)khz : 1000000;
	if (kvm_vcpu_get_msr(bsp, MSR_IA32_TSC, &guest) == 0)
		ic->tsc_offset = (int64_t)(guest - host_rdtsc());
}

int irqchip_off_init(struct vmm_irqchip *ic, char *err, size_t errlen)
{
	struct machine *m = ic->m;
	struct lapic_host h = {apic_kick, apic_eoi, apic_now, apic_arm, apic_tsc, 0, ic};

	measure_tsc(ic);
	h.tsc_khz = ic->tsc_khz;

	/* the timers first: creating the APICs resets them, which disarms */
	ic->cpu = calloc(m->ncpus, sizeof(*ic->cpu));
	for (unsigned i = 0; ic->cpu && i < m->ncpus; i++) {
		struct ic_cpu *c = &ic->cpu[i];

		c->ic = ic;
		c->index = i;
		c->state = i ? CPU_WAIT_SIPI : CPU_RUNNING;
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
		c->timer = ev_timer_new(m->host.loop, apic_timer_fired, c);
		c->tpr_poll = ev_timer_new(m->host.loop, tpr_poll_fired, c);
		if (!c->timer || !c->tpr_poll) {
			snprintf(err, errlen, "kernel_irqchip=off: cannot create the APIC timers");
			return -1;
		}
	}
	ic->apics = ic->cpu ? apic_bus_new(m->ncpus, m->apic_ids, &h) : NULL;
	if (!ic->apics || apic_bus_map(ic->apics, m->host.mmio) < 0) {
		snprintf(err, errlen, "kernel_irqchip=off: cannot create the local APICs");
		return -1;
	}
	dev_on_reset(&m->host, off_reset, ic);
	return 0;
}

void irqchip_off_destroy(struct vmm_irqchip *ic)
{
	if (!ic->cpu)
		return;
	for (unsigned i = 0; i < ic->m->ncpus; i++) {
		ev_timer_free(ic->cpu[i].timer);
		ev_timer_free(ic->cpu[i].tpr_poll);
		pthread_mutex_destroy(&ic->cpu[i].lock);
		pthread_cond_destroy(&ic->cpu[i].cond);
	}
	apic_bus_free(ic->apics);
	free(ic->cpu);
}

void irqchip_off_cpuid(struct vmm_irqchip *ic, struct kvm_cpuid2 *c)
{
	for (uint32_t i = 0; i < c->nent; i++) {
		if (c->entries[i].function == 1 && !ic->user_msrs)
			c->entries[i].ecx &= ~(CPUID_1_ECX_X2APIC | CPUID_1_ECX_TSC_DEADLINE);
		if (c->entries[i].function == 0x40000001)
			c->entries[i].eax &= ~KVM_PV_HIDDEN_OFF;
	}
}

/* ------------------------------------------------------ INIT and SIPI */

static void do_init(struct ic_cpu *c, struct lapic *a)
{
	struct vcpu *v = vcpu_of(c);

	lapic_init(a);
	/* Registers to their power-on values; the CPU waits for a SIPI. */
	kvm_vcpu_set_sregs(&v->kvm, &v->reset.sregs);
	kvm_vcpu_set_regs(&v->kvm, &v->reset.regs);
	kvm_vcpu_set_fpu(&v->kvm, &v->reset.fpu);
	c->state = CPU_WAIT_SIPI;
}

static void do_sipi(struct ic_cpu *c, uint8_t vector)
{
	struct vcpu *v = vcpu_of(c);
	struct kvm_sregs s;
	struct kvm_regs r;

	if (kvm_vcpu_get_sregs(&v->kvm, &s) < 0 || kvm_vcpu_get_regs(&v->kvm, &r) < 0)
		return;
	s.cs.selector = (uint16_t)(vector << 8);
	s.cs.base = (uint64_t)vector << 12;
	r.rip = 0;
	if (kvm_vcpu_set_sregs(&v->kvm, &s) == 0 && kvm_vcpu_set_regs(&v->kvm, &r) == 0)
		c->state = CPU_RUNNING;
}

/* NMI, INIT and SIPI from the APIC bus. */
static void take_events(struct ic_cpu *c, struct lapic *a)
{
	uint8_t sipi;
	unsigned nmis, ev = lapic_take_events(a, &sipi, &nmis);

	if (ev & LAPIC_EV_INIT)
		do_init(c, a);
	if ((ev & LAPIC_EV_SIPI) && c->state == CPU_WAIT_SIPI)
		do_sipi(c, sipi);
	if ((ev & LAPIC_EV_NMI) && c->state != CPU_WAIT_SIPI) {
		/* KVM queues both: one runs, the other waits for its IRET */
		for (unsigned i = 0; i < nmis; i++)
			kvm_vcpu_nmi(&vcpu_of(c)->kvm);
		c->nmi_in_kvm = true;
		c->state = CPU_RUNNING; /* an NMI ends HLT */
	}
}

/* --------------------------------------------------------- injection */

static bool pic_for(struct ic_cpu *c, struct lapic *a)
{
	return c->index == 0 && i8259_intr(c->ic->pic) && lapic_accepts_pic(a);
}

/* Can an interrupt end this HLT? (IF is set, else only events can.) */
static bool wakes(struct ic_cpu *c, struct lapic *a, bool if_flag)
{
	if (lapic_events_pending(a))
		return true;
	return if_flag && (lapic_has_interrupt(a) || pic_for(c, a));
}

/* Sleep until kicked; false when the machine wants the thread back. */
static bool wait_kick(struct ic_cpu *c)
{
	struct machine *m = c->ic->m;

	pthread_mutex_lock(&c->lock);
	while (!c->woken && !atomic_load(&m->pause_req) && !atomic_load(&m->quit))
		pthread_cond_wait(&c->cond, &c->lock);
	c->woken = false;
	pthread_mutex_unlock(&c->lock);
	return !atomic_load(&m->pause_req) && !atomic_load(&m->quit);
}

/* An NMI outranks INTR, but KVM delivers an interrupt given with
 * KVM_INTERRUPT ahead of an NMI still pending in it (the interrupt counts
 * as already injected), and a kick can end KVM_RUN before the NMI went in:
 * hold interrupts back until KVM has delivered the NMIs it was given.
 * Not through an interrupt window: on kvm_pvm the window exit comes before
 * the pending NMI goes in, so a vCPU asking for it again never runs.
 * NMI_POLL_NS later it looks again instead. */
static bool nmi_outstanding(struct ic_cpu *c)
{
	struct kvm_vcpu_events ev;

	if (!c->nmi_in_kvm)
		return false;
	if (kvm_vcpu_get_events(&vcpu_of(c)->kvm, &ev) == 0 && (ev.nmi.pending || ev.nmi.injected))
		return true;
	c->nmi_in_kvm = false;
	return false;
}

static void inject(struct ic_cpu *c, struct lapic *a, struct kvm_run *run)
{
	struct vcpu *v = vcpu_of(c);
	bool want, hold;
	int vector;

	/* the guest's CR8 writes since the last exit reach the TPR */
	if (run->cr8 != c->last_cr8)
		lapic_set_tpr(a, (uint8_t)(run->cr8 << 4));
	want = lapic_has_interrupt(a) || pic_for(c, a);
	hold = want && nmi_outstanding(c);
	if (want && !hold && run->ready_for_interrupt_injection) {
		if (pic_for(c, a))
			vector = i8259_ack(c->ic->pic);
		else
			vector = lapic_get_interrupt(a);
		if (vector >= 0)
			kvm_vcpu_interrupt(&v->kvm, (unsigned)vector);
		want = lapic_has_interrupt(a) || pic_for(c, a);
	}
	run->request_interrupt_window = want && !hold;
	c->last_cr8 = lapic_get_tpr(a) >> 4;
	run->cr8 = c->last_cr8;
	/* Held back by CR8 only: KVM reports CR8 being lowered with
	 * KVM_EXIT_SET_TPR, but some hosts (kvm_pvm) never do. Look again
	 * every TPR_POLL_NS until it goes in. */
	if (hold)
		ev_timer_arm(c->tpr_poll, NMI_POLL_NS, 0);
	else if (lapic_blocked_by_tpr(a))
		ev_timer_arm(c->tpr_poll, TPR_POLL_NS, 0);
}

bool irqchip_off_pre_run(struct vcpu *v)
{
	struct vmm_irqchip *ic = v->m->ic;
	struct ic_cpu *c = &ic->cpu[v->index];
	struct lapic *a = apic_bus_cpu(ic->apics, v->index);

	lapic_set_thread_cpu((int)v->index);
	take_events(c, a);
	if (c->state == CPU_HALTED && wakes(c, a, v->kvm.run->if_flag))
		c->state = CPU_RUNNING;
	if (c->state != CPU_RUNNING) {
		wait_kick(c);
		return false; /* look again (events, pause, quit) */
	}
	inject(c, a, v->kvm.run);
	return true;
}

void irqchip_off_hlt(struct vcpu *v)
{
	struct vmm_irqchip *ic = v->m->ic;

	ic->cpu[v->index].state = CPU_HALTED;
}

/* ------------------------------------------------------------- MSRs */

/* IA32_APIC_BASE: x2APIC without enable and leaving x2APIC mode other
 * than through disabled #GP, as on hardware. KVM gets the value too: it
 * checks the reserved bits (above MAXPHYADDR; x2APIC where CPUID has none)
 * and keeps CPUID.1:EDX.APIC in step with the enable bit. */
static int write_apic_base(struct vcpu *v, struct lapic *a, uint64_t val)
{
	uint64_t old = lapic_get_base(a);
	bool en = val & (1ull << 11), extd = val & (1ull << 10);

	val = (val & ~(1ull << 8)) | (old & (1ull << 8)); /* BSP is read-only */
	if ((val & ~APIC_BASE_WRITABLE & ~(1ull << 8)) || (extd && !en) ||
	    ((old & (1ull << 10)) && !extd && en) || (!(old & (1ull << 11)) && extd))
		return -1;
	if (val != old && kvm_vcpu_set_msr(&v->kvm, MSR_IA32_APIC_BASE, val) < 0)
		return -1;
	lapic_set_base(a, val);
	return 0;
}

/* After KVM_RUN: the guest's CR8 raises since the last exit (KVM exits
 * on lowering only) reach the TPR before vmm reads it for the exit. */
void irqchip_off_post_run(struct vcpu *v)
{
	struct ic_cpu *c = &v->m->ic->cpu[v->index];
	struct kvm_run *run = v->kvm.run;

	if (run->cr8 != c->last_cr8) {
		lapic_set_tpr(apic_bus_cpu(v->m->ic->apics, v->index), (uint8_t)(run->cr8 << 4));
		c->last_cr8 = (uint8_t)run->cr8;
	}
}

void irqchip_off_msr(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;
	struct lapic *a = apic_bus_cpu(v->m->ic->apics, v->index);
	uint64_t data = 0;
	int r;

	if (run->exit_reason == KVM_EXIT_X86_RDMSR) {
		if (run->msr.index == MSR_IA32_APIC_BASE) {
			data = lapic_get_base(a);
			r = 0;
		} else {
			r = lapic_msr_read(a, run->msr.index, &data);
		}
		run->msr.data = data;
	} else if (run->msr.index == MSR_IA32_APIC_BASE) {
		r = write_apic_base(v, a, run->msr.data);
	} else {
		r = lapic_msr_write(a, run->msr.index, run->msr.data);
	}
	run->msr.error = r < 0; /* KVM injects #GP */
}

/* ------------------------------------------------------------ snapshot */

#define OFF_CPU_STATE_VERSION 1

/* Under the writer's node: each APIC ("lapic@N") and what the vCPU
 * thread keeps in KVM's place ("cpu@N": running, halted or waiting for
 * SIPI, and whether an NMI sits in KVM). The machine is paused. */
void irqchip_off_save(struct vmm_irqchip *ic, struct state_writer *w)
{
	char name[32];

	for (unsigned i = 0; i < ic->m->ncpus; i++) {
		struct ic_cpu *c = &ic->cpu[i];

		lapic_save(apic_bus_cpu(ic->apics, i), w);
		snprintf(name, sizeof(name), "cpu@%u", i);
		pthread_mutex_lock(&c->lock);
		state_begin(w, name, OFF_CPU_STATE_VERSION);
		state_put_u8(w, "run-state", (uint8_t)c->state);
		state_put_u8(w, "nmi-in-kvm", c->nmi_in_kvm);
		state_end(w);
		pthread_mutex_unlock(&c->lock);
	}
}

/* A halted vCPU wakes for an interrupt only with IF set, which it reads
 * from run->if_flag, KVM's report at the last exit: a loaded machine has
 * had none, so take IF from its loaded RFLAGS. */
static int halted_if_flag(struct vcpu *v)
{
	struct kvm_regs regs;

	if (kvm_vcpu_get_regs(&v->kvm, &regs) < 0)
		return -1;
	v->kvm.run->if_flag = (regs.rflags & 0x200) != 0;
	return 0;
}

/* After the vCPUs' registers and MSRs: the guest's TSC is the saved one
 * again, which TSC-deadline timers are set against. */
int irqchip_off_load(struct vmm_irqchip *ic, const struct state_reader *r, char *err,
		     size_t errlen)
{
	uint8_t run[ic->m->ncpus];
	bool nmi[ic->m->ncpus];
	struct state_node n;
	char name[32];

	for (unsigned i = 0; i < ic->m->ncpus; i++) {
		snprintf(name, sizeof(name), "cpu@%u", i);
		if (state_node_open(&n, r, name, OFF_CPU_STATE_VERSION, err, errlen) < 0 ||
		    state_get_u8_max(&n, "run-state", CPU_WAIT_SIPI, &run[i]) ||
		    state_get_bool(&n, "nmi-in-kvm", &nmi[i]) || state_node_close(&n) < 0)
			return -1;
	}
	measure_tsc(ic);
	for (unsigned i = 0; i < ic->m->ncpus; i++)
		if (lapic_load(apic_bus_cpu(ic->apics, i), r, err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < ic->m->ncpus; i++) {
		struct ic_cpu *c = &ic->cpu[i];

		pthread_mutex_lock(&c->lock);
		c->state = (enum cpu_state)run[i];
		c->nmi_in_kvm = nmi[i];
		/* the TPR is the loaded one: no CR8 change to take from KVM */
		c->last_cr8 = (uint8_t)vcpu_of(c)->kvm.run->cr8;
		pthread_mutex_unlock(&c->lock);
		if (run[i] == CPU_HALTED && halted_if_flag(vcpu_of(c)) < 0) {
			snprintf(err, errlen, "vCPU %u: KVM_GET_REGS failed", i);
			return -1;
		}
		irqchip_off_kick(vcpu_of(c)); /* its thread may sleep on the old state */
	}
	return 0;
}
