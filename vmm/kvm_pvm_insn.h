/* kvm_pvm_insn.h — a host workaround (kvm_pvm_insn.c says when it runs):
 * the emulation fallback's decoder (vmm/kvm_pvm_insn_decode.c): the few
 * instructions the host's KVM emulator rejects in a guest's ring 0, decoded
 * from bytes and applied to struct kvm_regs. Pure, unit-tested. */
#ifndef VMM_INSN_H
#define VMM_INSN_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum insn_op { INSN_UNKNOWN, INSN_CLAC, INSN_STAC, INSN_INT3, INSN_POPCNT, INSN_FWAIT };

struct insn {
	enum insn_op op;
	unsigned len;		/* bytes, prefixes included */
	unsigned opsize;	/* POPCNT: 2, 4 or 8 */
	unsigned dst, src;	/* POPCNT: register numbers (0 = rax ... 15 = r15) */
};

/* Decode the instruction at b (n bytes available; long_mode allows REX).
 * 0, or -1 when it is not one we can complete (in->op = INSN_UNKNOWN). */
int insn_decode(const uint8_t *b, size_t n, bool long_mode, struct insn *in);
/* Complete a decoded CLAC, STAC, POPCNT or FWAIT on regs (RIP advanced).
 * FWAIT is a no-op: the guest runs with no unmasked x87 exceptions. INT3
 * only advances RIP: the caller injects #BP. False for INSN_UNKNOWN. */
bool insn_apply(const struct insn *in, struct kvm_regs *regs);

#endif /* VMM_INSN_H */
