/* gdb_regs.h — the register file the gdbstub shows (gdb_regs.c). */
#ifndef VMM_GDB_REGS_H
#define VMM_GDB_REGS_H

#include "vmm/machine.h"

/* One vCPU's registers, read and written as a whole. */
struct cpu_state {
	struct kvm_regs r;
	struct kvm_sregs s;
	struct kvm_fpu f;
};

int gdb_load_state(struct vcpu *v, struct cpu_state *st);
int gdb_store_state(struct vcpu *v, const struct cpu_state *st);
/* Registers in gdb's numbering (the g packet's order). */
unsigned gdb_reg_count(void);
unsigned gdb_reg_bytes(unsigned i);
/* Where register i lives in st (little endian, gdb_reg_bytes long);
 * selectors and x87 control words are widened into *scratch. */
void *gdb_reg_ptr(struct cpu_state *st, unsigned i, uint32_t *scratch);
bool gdb_reg_writable(unsigned i);
/* The target description (malloc'ed XML). */
char *gdb_target_xml(void);

#endif /* VMM_GDB_REGS_H */
