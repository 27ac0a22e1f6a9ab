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

static int fetch(struct vcpu *v, uint64_t rip, uint8_t *buf, size_t *n)
{
	uint64_t gpa;
	size_t got = 0;

	/* The bytes may straddle a page: translate each page separately. */
	while (got < *n) {
		size_t chunk = 4096 - ((rip + got) & 4095);

		if (chunk > *n - got)
			chunk = *n - got;
		if (vcpu_translate(v, rip + got, &gpa) < 0 ||
		    guest_mem_read(&v->m->mem, gpa, buf + got, chunk) < 0)
			break;
		got += chunk;
	}
	*n = got;
	return got ? 0 : -1;
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
	size_t n = sizeof(bytes);
	struct insn in;

	if (kvm_vcpu_get_regs(&v->kvm, &regs) < 0 || kvm_vcpu_get_sregs(&v->kvm, &sregs) < 0)
		return false;
	if (fetch(v, sregs.cs.base + regs.rip, bytes, &n) < 0 ||
	    insn_decode(bytes, n, sregs.cs.l, &in) < 0 || !insn_apply(&in, &regs))
		return false;
	if (kvm_vcpu_set_regs(&v->kvm, &regs) < 0)
		return false;
	return in.op != INSN_INT3 || inject_bp(v);
}
