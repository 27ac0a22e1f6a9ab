/* cpu_state.c — the vCPUs and KVM's own devices in the state tree, for
 * migration (see migration.h).
 *
 * /cpus/cpu@N (N: the cpu-index) holds what KVM keeps of vCPU N, each as
 * the kernel's own struct (the KVM ABI is fixed, so the bytes are the
 * layout): regs, sregs, xsave (KVM_GET_XSAVE2's size), xcrs, debugregs,
 * lapic, events, mp-state and the MSRs KVM saves that this vCPU accepts.
 * /kvm holds the VM's kvmclock and, with kernel_irqchip=on, the in-kernel
 * PIC, I/O APIC and PIT.
 *
 * Load order matters: sregs first (APIC base, EFER), the LAPIC before the
 * MSRs (TSC_DEADLINE is dropped unless the LVT timer is in deadline
 * mode), events and MP state last (they refer to the rest). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"
#include "vmm/irqchip.h"
#include "vmm/machine.h"
#include "vmm/migration.h"

#define CPU_STATE_VERSION 1
#define KVM_STATE_VERSION 1
/* Far more than any KVM reports (about 100 on current kernels). */
#define CPU_MAX_MSRS 512

/* MSRs a migration must carry even if a kernel leaves one out of
 * KVM_GET_MSR_INDEX_LIST: the TSC, kvmclock (both numberings), the
 * syscall MSRs, PAT, the APIC base, TSC deadline and MISC_ENABLE. */
static const uint32_t required_msrs[] = {
	0x10,	    /* TSC */
	0x11,	    /* kvmclock wall clock (old) */
	0x12,	    /* kvmclock system time (old) */
	0x4b564d00, /* kvmclock wall clock */
	0x4b564d01, /* kvmclock system time */
	0x4b564d02, /* async PF */
	0x4b564d03, /* PV EOI */
	0x4b564d04, /* steal time */
	0xc0000080, /* EFER */
	0xc0000081, /* STAR */
	0xc0000082, /* LSTAR */
	0xc0000083, /* CSTAR */
	0xc0000084, /* FMASK */
	0xc0000102, /* KERNEL_GS_BASE */
	0xc0000103, /* TSC_AUX */
	0x174,	    /* SYSENTER_CS */
	0x175,	    /* SYSENTER_ESP */
	0x176,	    /* SYSENTER_EIP */
	0x277,	    /* PAT */
	0x1b,	    /* APIC_BASE */
	0x6e0,	    /* TSC_DEADLINE */
	0x1a0,	    /* MISC_ENABLE */
};

static bool has_index(const uint32_t *list, unsigned n, uint32_t index)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i] == index)
			return true;
	return false;
}

/* The local APICs are KVM's (modes on and split): their state is the
 * vCPU's "lapic"; with kernel_irqchip=off they are vmm's (/irqchip). */
static bool kvm_has_lapic(const struct machine *m)
{
	return !m->ic || m->ic->mode != IRQCHIP_OFF;
}

/* MSRs KVM serves from its own local APIC: with kernel_irqchip=off it has
 * none (KVM_SET_MSRS refuses them) and vmm's APICs hold TSC deadline and
 * x2APIC state; the PV features behind the others are hidden there. */
static bool msr_needs_kvm_apic(uint32_t index)
{
	return index == 0x6e0 || (index >= 0x800 && index <= 0x8ff) ||
	       index == 0x4b564d03 /* PV EOI */ || index == 0x4b564d06 /* async PF IRQ */ ||
	       index == 0x4b564d07 /* async PF ack */;
}

/* The MSRs to save: KVM's list plus required_msrs, filtered to those this
 * vCPU reads back (what vmm's CPUID exposes: KVM refuses the others). */
static int saveable_msrs(struct machine *m, struct vcpu *v, struct kvm_msr_entry *out, char *err,
			 size_t errlen)
{
	uint32_t *list = NULL;
	int nlist = kvm_msr_index_list(&m->sys, &list);
	unsigned n = 0;

	if (nlist < 0) {
		snprintf(err, errlen, "KVM_GET_MSR_INDEX_LIST: %s", strerror(-nlist));
		return -1;
	}
	for (unsigned i = 0; i < sizeof(required_msrs) / sizeof(required_msrs[0]); i++) {
		if (has_index(list, (unsigned)nlist, required_msrs[i]))
			continue;
		uint32_t *bigger = realloc(list, ((size_t)nlist + 1) * sizeof(*list));

		if (!bigger)
			break;
		list = bigger;
		list[nlist++] = required_msrs[i];
	}
	for (int i = 0; i < nlist && n < CPU_MAX_MSRS; i++) {
		struct kvm_msr_entry e = {.index = list[i]};

		if (!kvm_has_lapic(m) && msr_needs_kvm_apic(e.index))
			continue;
		if (kvm_vcpu_get_msrs(&v->kvm, &e, 1) == 1)
			out[n++] = e;
	}
	free(list);
	return (int)n;
}

static int kvm_fail(const char *what, unsigned cpu, int r, char *err, size_t errlen)
{
	snprintf(err, errlen, "vCPU %u: %s: %s", cpu, what, strerror(-r));
	return -1;
}

/* One vCPU's node; the machine is paused. */
static int save_cpu(struct machine *m, struct vcpu *v, struct state_writer *w, char *err,
		    size_t errlen)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dr;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	uint32_t mp;
	size_t xsize = kvm_xsave_size(&m->vm);
	void *xsave = malloc(xsize);
	struct kvm_msr_entry *msrs = calloc(CPU_MAX_MSRS, sizeof(*msrs));
	char name[32];
	int nmsrs = -1, r;

	if (!xsave || !msrs) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((r = kvm_vcpu_get_regs(&v->kvm, &regs)) < 0 ||
	    (r = kvm_vcpu_get_sregs(&v->kvm, &sregs)) < 0 ||
	    (r = kvm_vcpu_get_xsave(&v->kvm, xsave, xsize)) < 0 ||
	    (r = kvm_vcpu_get_xcrs(&v->kvm, &xcrs)) < 0 ||
	    (r = kvm_vcpu_get_debugregs(&v->kvm, &dr)) < 0 ||
	    (kvm_has_lapic(m) && (r = kvm_vcpu_get_lapic(&v->kvm, &lapic)) < 0) ||
	    (r = kvm_vcpu_get_events(&v->kvm, &ev)) < 0 ||
	    (r = kvm_vcpu_get_mp_state(&v->kvm, &mp)) < 0) {
		kvm_fail("reading the registers", v->index, r, err, errlen);
		goto out;
	}
	nmsrs = saveable_msrs(m, v, msrs, err, errlen);
	if (nmsrs < 0)
		goto out;
	snprintf(name, sizeof(name), "cpu@%u", v->index);
	state_begin(w, name, CPU_STATE_VERSION);
	state_put_u32(w, "apic-id", v->kvm.id);
	state_put_bytes(w, "regs", &regs, sizeof(regs));
	state_put_bytes(w, "sregs", &sregs, sizeof(sregs));
	state_put_u32(w, "xsave-size", (uint32_t)xsize);
	state_put_bytes(w, "xsave", xsave, xsize);
	state_put_bytes(w, "xcrs", &xcrs, sizeof(xcrs));
	state_put_bytes(w, "debugregs", &dr, sizeof(dr));
	if (kvm_has_lapic(m))
		state_put_bytes(w, "lapic", &lapic, sizeof(lapic));
	state_put_bytes(w, "events", &ev, sizeof(ev));
	state_put_u32(w, "mp-state", mp);
	state_put_u32(w, "nmsrs", (uint32_t)nmsrs);
	state_put_bytes(w, "msrs", msrs, (size_t)nmsrs * sizeof(*msrs));
	state_end(w);
out:
	free(xsave);
	free(msrs);
	return nmsrs < 0 ? -1 : 0;
}

/* /kvm: the clock, and the in-kernel irqchip and PIT in mode on. */
static int save_kvm(struct machine *m, struct state_writer *w, char *err, size_t errlen)
{
	struct kvm_clock_data clock;
	struct kvm_irqchip chip[3];
	struct kvm_pit_state2 pit;
	bool in_kernel = !m->ic;
	int r = kvm_vm_get_clock(&m->vm, &clock);

	if (r < 0) {
		snprintf(err, errlen, "KVM_GET_CLOCK: %s", strerror(-r));
		return -1;
	}
	state_begin(w, "kvm", KVM_STATE_VERSION);
	state_put_u64(w, "clock", clock.clock);
	state_put_u8(w, "irqchip", in_kernel);
	state_put_u8(w, "pit", in_kernel && !m->cfg->no_pit);
	for (unsigned i = 0; in_kernel && i < 3; i++) {
		static const char *const names[3] = {"pic-master", "pic-slave", "ioapic"};

		memset(&chip[i], 0, sizeof(chip[i]));
		chip[i].chip_id = i;
		if ((r = kvm_vm_get_irqchip(&m->vm, &chip[i])) < 0) {
			snprintf(err, errlen, "KVM_GET_IRQCHIP: %s", strerror(-r));
			return -1;
		}
		state_put_bytes(w, names[i], &chip[i], sizeof(chip[i]));
	}
	if (in_kernel && !m->cfg->no_pit) {
		if ((r = kvm_vm_get_pit2(&m->vm, &pit)) < 0) {
			snprintf(err, errlen, "KVM_GET_PIT2: %s", strerror(-r));
			return -1;
		}
		state_put_bytes(w, "pit2", &pit, sizeof(pit));
	}
	state_end(w);
	return 0;
}

int cpu_state_save(struct machine *m, struct state_writer *w, char *err, size_t errlen)
{
	if (save_kvm(m, w, err, errlen) < 0)
		return -1;
	state_begin(w, "cpus", CPU_STATE_VERSION);
	state_put_u32(w, "ncpus", m->ncpus);
	for (unsigned i = 0; i < m->ncpus; i++)
		if (save_cpu(m, &m->vcpus[i], w, err, errlen) < 0)
			return -1;
	state_end(w);
	return 0;
}

/* The saved structs of one vCPU, read and checked before any is set. */
struct cpu_saved {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dr;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events ev;
	uint32_t mp, apic_id, nmsrs, xsize;
	void *xsave;
	struct kvm_msr_entry *msrs;
};

static int read_cpu(struct machine *m, struct vcpu *v, const struct state_reader *cpus,
		    struct cpu_saved *s, char *err, size_t errlen)
{
	struct state_node n;
	char name[32];

	snprintf(name, sizeof(name), "cpu@%u", v->index);
	if (state_node_open(&n, cpus, name, CPU_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_u32(&n, "apic-id", &s->apic_id) < 0 ||
	    state_get_bytes(&n, "regs", &s->regs, sizeof(s->regs)) < 0 ||
	    state_get_bytes(&n, "sregs", &s->sregs, sizeof(s->sregs)) < 0 ||
	    state_get_u32(&n, "xsave-size", &s->xsize) < 0)
		return -1;
	if (s->apic_id != v->kvm.id)
		return state_node_fail(&n, "APIC ID %u, this machine's vCPU has %u", s->apic_id,
				       v->kvm.id);
	if (s->xsize != kvm_xsave_size(&m->vm))
		return state_node_fail(&n, "XSAVE area of %u bytes, this host's KVM has %zu",
				       s->xsize, kvm_xsave_size(&m->vm));
	s->xsave = malloc(s->xsize);
	if (!s->xsave || state_get_bytes(&n, "xsave", s->xsave, s->xsize) < 0 ||
	    state_get_bytes(&n, "xcrs", &s->xcrs, sizeof(s->xcrs)) < 0 ||
	    state_get_bytes(&n, "debugregs", &s->dr, sizeof(s->dr)) < 0 ||
	    (kvm_has_lapic(m) && state_get_bytes(&n, "lapic", &s->lapic, sizeof(s->lapic)) < 0) ||
	    state_get_bytes(&n, "events", &s->ev, sizeof(s->ev)) < 0 ||
	    state_get_u32(&n, "mp-state", &s->mp) < 0 ||
	    state_get_u32_max(&n, "nmsrs", CPU_MAX_MSRS, &s->nmsrs) < 0)
		return -1;
	s->msrs = calloc(s->nmsrs ? s->nmsrs : 1, sizeof(*s->msrs));
	if (!s->msrs || state_get_bytes(&n, "msrs", s->msrs, s->nmsrs * sizeof(*s->msrs)) < 0)
		return -1;
	return state_node_close(&n);
}

static int put_cpu(struct vcpu *v, struct cpu_saved *s, char *err, size_t errlen)
{
	int r;

	if ((r = kvm_vcpu_set_sregs(&v->kvm, &s->sregs)) < 0)
		return kvm_fail("KVM_SET_SREGS", v->index, r, err, errlen);
	if (kvm_has_lapic(v->m) && (r = kvm_vcpu_set_lapic(&v->kvm, &s->lapic)) < 0)
		return kvm_fail("KVM_SET_LAPIC", v->index, r, err, errlen);
	if ((r = kvm_vcpu_set_regs(&v->kvm, &s->regs)) < 0)
		return kvm_fail("KVM_SET_REGS", v->index, r, err, errlen);
	if ((r = kvm_vcpu_set_xsave(&v->kvm, s->xsave, s->xsize)) < 0)
		return kvm_fail("KVM_SET_XSAVE", v->index, r, err, errlen);
	if ((r = kvm_vcpu_set_xcrs(&v->kvm, &s->xcrs)) < 0)
		return kvm_fail("KVM_SET_XCRS", v->index, r, err, errlen);
	r = kvm_vcpu_set_msrs(&v->kvm, s->msrs, s->nmsrs);
	if (r >= 0 && (uint32_t)r != s->nmsrs) {
		snprintf(err, errlen, "vCPU %u: KVM refused MSR %#x", v->index, s->msrs[r].index);
		return -1;
	}
	if (r < 0)
		return kvm_fail("KVM_SET_MSRS", v->index, r, err, errlen);
	if ((r = kvm_vcpu_set_debugregs(&v->kvm, &s->dr)) < 0)
		return kvm_fail("KVM_SET_DEBUGREGS", v->index, r, err, errlen);
	s->ev.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR |
		       KVM_VCPUEVENT_VALID_SHADOW;
	if ((r = kvm_vcpu_set_events(&v->kvm, &s->ev)) < 0)
		return kvm_fail("KVM_SET_VCPU_EVENTS", v->index, r, err, errlen);
	if ((r = kvm_vcpu_set_mp_state(&v->kvm, s->mp)) < 0)
		return kvm_fail("KVM_SET_MP_STATE", v->index, r, err, errlen);
	return 0;
}

static int load_kvm(struct machine *m, const struct state_reader *root, char *err, size_t errlen)
{
	static const char *const names[3] = {"pic-master", "pic-slave", "ioapic"};
	struct state_node n;
	struct kvm_irqchip chip[3];
	struct kvm_pit_state2 pit;
	uint64_t clock;
	bool irqchip, has_pit;
	int r;

	if (state_node_open(&n, root, "kvm", KVM_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u64(&n, "clock", &clock) < 0 || state_get_bool(&n, "irqchip", &irqchip) < 0 ||
	    state_get_bool(&n, "pit", &has_pit) < 0)
		return -1;
	if (irqchip != !m->ic || has_pit != (!m->ic && !m->cfg->no_pit))
		return state_node_fail(&n, "saved with another kernel_irqchip= or pit= setting");
	for (unsigned i = 0; irqchip && i < 3; i++) {
		if (state_get_bytes(&n, names[i], &chip[i], sizeof(chip[i])) < 0)
			return -1;
		if (chip[i].chip_id != i)
			return state_node_fail(&n, "%s has chip id %u", names[i], chip[i].chip_id);
	}
	if (has_pit && state_get_bytes(&n, "pit2", &pit, sizeof(pit)) < 0)
		return -1;
	if (state_node_close(&n) < 0)
		return -1;
	for (unsigned i = 0; irqchip && i < 3; i++)
		if ((r = kvm_vm_set_irqchip(&m->vm, &chip[i])) < 0) {
			snprintf(err, errlen, "KVM_SET_IRQCHIP %s: %s", names[i], strerror(-r));
			return -1;
		}
	if (has_pit && (r = kvm_vm_set_pit2(&m->vm, &pit)) < 0) {
		snprintf(err, errlen, "KVM_SET_PIT2: %s", strerror(-r));
		return -1;
	}
	if ((r = kvm_vm_set_clock(&m->vm, clock)) < 0) {
		snprintf(err, errlen, "KVM_SET_CLOCK: %s", strerror(-r));
		return -1;
	}
	return 0;
}

int cpu_state_load(struct machine *m, const struct state_reader *root, char *err, size_t errlen)
{
	struct state_reader cpus;
	struct state_node n;
	uint32_t ncpus;

	if (load_kvm(m, root, err, errlen) < 0 ||
	    state_reader_sub(root, "cpus", &cpus, err, errlen) < 0 ||
	    state_node_open(&n, root, "cpus", CPU_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "ncpus", &ncpus) < 0)
		return -1;
	if (ncpus != m->ncpus)
		return state_node_fail(
			&n, "%u vCPUs, this machine has %u (start vmm with the same -smp)", ncpus,
			m->ncpus);
	if (state_node_close(&n) < 0)
		return -1;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct cpu_saved s = {0};
		int r = read_cpu(m, &m->vcpus[i], &cpus, &s, err, errlen);

		if (r == 0)
			r = put_cpu(&m->vcpus[i], &s, err, errlen);
		free(s.xsave);
		free(s.msrs);
		if (r < 0)
			return -1;
	}
	return 0;
}
