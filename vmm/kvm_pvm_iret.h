/* kvm_pvm_iret.h — a host workaround: completing an IRET the host's KVM cannot emulate.
 *
 * KVM's x86 emulator implements IRET in real mode only; a guest's ring 0
 * emulated on the nested hosts (kvm_pvm) hits it in protected mode, e.g.
 * SYSLINUX's IRQ reflectors, and the vCPU stops with an emulation failure.
 * iret_complete() does the common case — a same-privilege return in 16- or
 * 32-bit protected mode, no task switch, no return to virtual-8086 mode —
 * on the register state; anything else is left to the caller's failure
 * path. Pure (memory through a callback), unit-tested. */
#ifndef VMM_IRET_H
#define VMM_IRET_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read n bytes at a linear address: 0, or -1 when unmapped. */
typedef int (*iret_read_fn)(void *opaque, uint64_t linear, void *buf, size_t n);

/* b holds the n instruction bytes at CS:RIP. True when they are an IRET
 * this completes: regs and sregs then hold the state after it (RIP, RSP,
 * RFLAGS, CS). False (regs and sregs unchanged) otherwise. */
bool iret_complete(const uint8_t *b, size_t n, struct kvm_regs *regs, struct kvm_sregs *sregs,
		   iret_read_fn read, void *opaque);

#endif /* VMM_IRET_H */
