/* fake_machine.h — a machine without KVM for the control-plane fuzz
 * targets (monitor, QMP, gdbstub): 1 MiB of guest RAM, two vCPUs whose
 * registers read as zero and whose linear addresses map 1:1 onto RAM, a
 * real event loop, and machine_* / vcpu_* / kvm_vcpu_* / chardev_* that do
 * what the protocol code needs to see (run state changes, breakpoints in a
 * table) without threads. fake_machine.c defines them in place of
 * libvmm.a's and libkvm.a's. */
#ifndef FUZZ_FAKE_MACHINE_H
#define FUZZ_FAKE_MACHINE_H

#include "vmm/machine.h"

struct machine *fake_machine(void);

#endif
