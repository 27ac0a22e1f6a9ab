/* kvm_pvm_insn.c — a host workaround: userspace completion of
 * instructions the host's KVM emulator rejects (KVM_EXIT_INTERNAL_ERROR,
 * emulation suberror). The bytes are read once from guest memory at
 * CS:RIP (translated through the guest's page tables), then offered to
 * insn_decode() (simple instructions, completed through the register
 * ioctls; INT3 becomes an injected #BP with RIP after the int3, trap
 * semantics) and to iret_complete() (a protected-mode IRET,
 * vmm/kvm_pvm_iret.h). Anything else: false, and the core prints the vCPU
 * state and stops.
 *
 * HOST WORKAROUND (kvm_pvm): on hosts whose KVM emulates the guest's
 * ring 0 (the kvm_pvm module, docs/test-hosts.md) KVM's
 * instruction emulator meets instructions it cannot run and exits with
 * KVM_EXIT_INTERNAL_ERROR (emulation suberror). Only then does the vCPU
 * loop call in here; on a KVM with hardware virtualization of ring 0 none
 * of this code runs. */
#include <stdio.h>
#include <string.h>

#include "vmm/kvm_pvm_insn.h"
#include "vmm/kvm_pvm_iret.h"
#include "vmm/machine.h"

#define BP_VECTOR 3

/* The bytes at a linear address; the instruction may end just before an
 * unmapped page, so shorten the read until it maps. Returns bytes read. */
static size_t fetch(struct vcpu *v, uint64_t linear, uint8_t *buf, size_t n)
{
	while (n && vcpu_read_linear(v, linear, buf, n) < 0)
		n--;
	return n;
}

static bool inject_bp(struct vcpu *v)
{
	struct kvm_vcpu_events ev;

	if (kvm_vcpu_get_events(&v->kvm, &ev) < 0)
		return false;
	ev.exception.injected = 1;
	ev.exception.nr = BP_VECTOR;
	ev.exception.has_error_code = 0;
	return kvm_vcpu_set_events(&v->kvm, &ev) == 0;
}

static int read_linear_cb(void *opaque, uint64_t linear, void *buf, size_t n)
{
	return vcpu_read_linear(opaque, linear, buf, n);
}

/* IRET also ends NMI blocking, which KVM tracks for the guest. */
static void end_nmi_blocking(struct vcpu *v)
{
	struct kvm_vcpu_events ev;

	if (kvm_vcpu_get_events(&v->kvm, &ev) == 0 && ev.nmi.masked) {
		ev.nmi.masked = 0;
		ev.flags = 0;
		kvm_vcpu_set_events(&v->kvm, &ev);
	}
}

static bool complete_iret(struct vcpu *v, const uint8_t *bytes, size_t n, struct kvm_regs *regs,
			  struct kvm_sregs *sregs)
{
	if (!iret_complete(bytes, n, regs, sregs, read_linear_cb, v))
		return false;
	if (kvm_vcpu_set_sregs(&v->kvm, sregs) < 0 || kvm_vcpu_set_regs(&v->kvm, regs) < 0)
		return false;
	end_nmi_blocking(v);
	return true;
}

bool vcpu_emulation_fallback(struct vcpu *v)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint8_t bytes[15];
	size_t n;
	struct insn in;

	if (kvm_vcpu_get_regs(&v->kvm, &regs) < 0 || kvm_vcpu_get_sregs(&v->kvm, &sregs) < 0)
		return false;
	n = fetch(v, sregs.cs.base + regs.rip, bytes, sizeof(bytes));
	if (!n)
		return false;
	if (insn_decode(bytes, n, sregs.cs.l, &in) < 0)
		return complete_iret(v, bytes, n, &regs, &sregs);
	if (!insn_apply(&in, &regs) || kvm_vcpu_set_regs(&v->kvm, &regs) < 0)
		return false;
	return in.op != INSN_INT3 || inject_bp(v);
}
