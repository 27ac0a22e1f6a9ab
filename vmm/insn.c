/* insn.c — userspace completion of instructions the host's KVM emulator
 * rejects (KVM_EXIT_INTERNAL_ERROR, emulation suberror). The bytes are read
 * from guest memory at CS:RIP (translated through the guest's page tables),
 * decoded by insn_decode(), completed through the register ioctls; INT3 is
 * turned into an injected #BP with RIP after the int3 (trap semantics).
 * Anything else: false, and the core prints the vCPU state and stops. */
#include <stdio.h>
#include <string.h>

#include "vmm/insn.h"
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
	if (!n || insn_decode(bytes, n, sregs.cs.l, &in) < 0 || !insn_apply(&in, &regs))
		return false;
	if (kvm_vcpu_set_regs(&v->kvm, &regs) < 0)
		return false;
	return in.op != INSN_INT3 || inject_bp(v);
}
