/* gdb_regs.c — the x86-64 register file as the gdbstub presents it: one
 * table gives the order of the g packet, the register numbers of p/P, and
 * the target description (amd64 core with x87, SSE, fs_base/gs_base, and
 * the control registers and EFER as an extra feature), and says where
 * each register lives in KVM's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/gdb_regs.h"

enum reg_kind { GPR, RIP, RFLAGS, SEG, X87, FPC, XMM, MXCSR, SEG_BASE, CTRL };

struct gdb_reg {
	const char *name, *type;
	unsigned bits;
	enum reg_kind kind;
	unsigned index;
	const char *feature; /* starts a new <feature> when set */
};

#define R(n, t, b, k, i)                                                                           \
	{                                                                                          \
		n, t, b, k, i, NULL                                                                \
	}
static const struct gdb_reg regs[] = {
	{"rax", "int64", 64, GPR, 0, "org.gnu.gdb.i386.core"},
	R("rbx", "int64", 64, GPR, 1),
	R("rcx", "int64", 64, GPR, 2),
	R("rdx", "int64", 64, GPR, 3),
	R("rsi", "int64", 64, GPR, 4),
	R("rdi", "int64", 64, GPR, 5),
	R("rbp", "data_ptr", 64, GPR, 6),
	R("rsp", "data_ptr", 64, GPR, 7),
	R("r8", "int64", 64, GPR, 8),
	R("r9", "int64", 64, GPR, 9),
	R("r10", "int64", 64, GPR, 10),
	R("r11", "int64", 64, GPR, 11),
	R("r12", "int64", 64, GPR, 12),
	R("r13", "int64", 64, GPR, 13),
	R("r14", "int64", 64, GPR, 14),
	R("r15", "int64", 64, GPR, 15),
	R("rip", "code_ptr", 64, RIP, 0),
	R("eflags", "int32", 32, RFLAGS, 0),
	R("cs", "int32", 32, SEG, 0),
	R("ss", "int32", 32, SEG, 1),
	R("ds", "int32", 32, SEG, 2),
	R("es", "int32", 32, SEG, 3),
	R("fs", "int32", 32, SEG, 4),
	R("gs", "int32", 32, SEG, 5),
	R("st0", "i387_ext", 80, X87, 0),
	R("st1", "i387_ext", 80, X87, 1),
	R("st2", "i387_ext", 80, X87, 2),
	R("st3", "i387_ext", 80, X87, 3),
	R("st4", "i387_ext", 80, X87, 4),
	R("st5", "i387_ext", 80, X87, 5),
	R("st6", "i387_ext", 80, X87, 6),
	R("st7", "i387_ext", 80, X87, 7),
	R("fctrl", "int", 32, FPC, 0),
	R("fstat", "int", 32, FPC, 1),
	R("ftag", "int", 32, FPC, 2),
	R("fiseg", "int", 32, FPC, 3),
	R("fioff", "int", 32, FPC, 4),
	R("foseg", "int", 32, FPC, 5),
	R("fooff", "int", 32, FPC, 6),
	R("fop", "int", 32, FPC, 7),
	{"xmm0", "uint128", 128, XMM, 0, "org.gnu.gdb.i386.sse"},
	R("xmm1", "uint128", 128, XMM, 1),
	R("xmm2", "uint128", 128, XMM, 2),
	R("xmm3", "uint128", 128, XMM, 3),
	R("xmm4", "uint128", 128, XMM, 4),
	R("xmm5", "uint128", 128, XMM, 5),
	R("xmm6", "uint128", 128, XMM, 6),
	R("xmm7", "uint128", 128, XMM, 7),
	R("xmm8", "uint128", 128, XMM, 8),
	R("xmm9", "uint128", 128, XMM, 9),
	R("xmm10", "uint128", 128, XMM, 10),
	R("xmm11", "uint128", 128, XMM, 11),
	R("xmm12", "uint128", 128, XMM, 12),
	R("xmm13", "uint128", 128, XMM, 13),
	R("xmm14", "uint128", 128, XMM, 14),
	R("xmm15", "uint128", 128, XMM, 15),
	R("mxcsr", "int", 32, MXCSR, 0),
	{"fs_base", "int64", 64, SEG_BASE, 0, "org.gnu.gdb.i386.segments"},
	R("gs_base", "int64", 64, SEG_BASE, 1),
	{"cr0", "int64", 64, CTRL, 0, "org.vmm.x86.control"},
	R("cr2", "int64", 64, CTRL, 2),
	R("cr3", "int64", 64, CTRL, 3),
	R("cr4", "int64", 64, CTRL, 4),
	R("cr8", "int64", 64, CTRL, 8),
	R("efer", "int64", 64, CTRL, 9),
};
#define N_REGS (sizeof(regs) / sizeof(regs[0]))

unsigned gdb_reg_count(void)
{
	return N_REGS;
}

unsigned gdb_reg_bytes(unsigned i)
{
	return regs[i].bits / 8;
}

int gdb_load_state(struct vcpu *v, struct cpu_state *st)
{
	struct kvm_vcpu *k = &v->kvm;

	if (kvm_vcpu_get_regs(k, &st->r) < 0 || kvm_vcpu_get_sregs(k, &st->s) < 0 ||
	    kvm_vcpu_get_fpu(k, &st->f) < 0)
		return -1;
	return 0;
}

int gdb_store_state(struct vcpu *v, const struct cpu_state *st)
{
	struct kvm_vcpu *k = &v->kvm;

	if (kvm_vcpu_set_sregs(k, &st->s) < 0 || kvm_vcpu_set_regs(k, &st->r) < 0 ||
	    kvm_vcpu_set_fpu(k, &st->f) < 0)
		return -1;
	return 0;
}

/* Where register i lives in st; its size is regs[i].bits / 8 (little
 * endian, as gdb wants). Segment selectors are widened through a scratch. */
void *gdb_reg_ptr(struct cpu_state *st, unsigned i, uint32_t *scratch)
{
	const struct gdb_reg *g = &regs[i];
	struct kvm_segment *segs[] = {&st->s.cs, &st->s.ss, &st->s.ds,
				      &st->s.es, &st->s.fs, &st->s.gs};
	__u64 *gpr[] = {&st->r.rax, &st->r.rbx, &st->r.rcx, &st->r.rdx, &st->r.rsi, &st->r.rdi,
			&st->r.rbp, &st->r.rsp, &st->r.r8,  &st->r.r9,	&st->r.r10, &st->r.r11,
			&st->r.r12, &st->r.r13, &st->r.r14, &st->r.r15};
	__u64 *ctrl[] = {&st->s.cr0, NULL, &st->s.cr2, &st->s.cr3, &st->s.cr4,
			 NULL,	     NULL, NULL,       &st->s.cr8, &st->s.efer};

	switch (g->kind) {
	case GPR:
		return gpr[g->index];
	case RIP:
		return &st->r.rip;
	case RFLAGS:
		return &st->r.rflags; /* low 32 bits */
	case SEG:
		*scratch = segs[g->index]->selector;
		return scratch;
	case X87:
		return st->f.fpr[g->index];
	case FPC: {
		uint32_t v[] = {st->f.fcw,
				st->f.fsw,
				st->f.ftwx,
				0,
				(uint32_t)st->f.last_ip,
				0,
				(uint32_t)st->f.last_dp,
				st->f.last_opcode};

		*scratch = v[g->index];
		return scratch;
	}
	case XMM:
		return st->f.xmm[g->index];
	case MXCSR:
		return &st->f.mxcsr;
	case SEG_BASE:
		return g->index ? &st->s.gs.base : &st->s.fs.base;
	case CTRL:
		return ctrl[g->index];
	}
	return scratch;
}

/* Writes to the widened or derived registers (selectors, x87 control)
 * are not applied: gdb rarely writes them and KVM would need the whole
 * descriptor. */
bool gdb_reg_writable(unsigned i)
{
	return regs[i].kind != SEG && regs[i].kind != FPC;
}

char *gdb_target_xml(void)
{
	char *xml = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&xml, &size);

	if (!f)
		return NULL;
	fprintf(f, "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
		   "<target version=\"1.0\"><architecture>i386:x86-64</architecture>");
	for (unsigned i = 0; i < N_REGS; i++) {
		if (regs[i].feature)
			fprintf(f, "%s<feature name=\"%s\">", i ? "</feature>" : "",
				regs[i].feature);
		fprintf(f, "<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" regnum=\"%u\"/>",
			regs[i].name, regs[i].bits, regs[i].type, i);
	}
	fprintf(f, "</feature></target>");
	fclose(f);
	return xml;
}
