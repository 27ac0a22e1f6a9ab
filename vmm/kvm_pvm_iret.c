/* kvm_pvm_iret.c — a host workaround: same-privilege protected-mode IRET
 * for KVMs that emulate guest ring 0 (kvm_pvm); runs only after such a
 * KVM gave up on an IRET (see kvm_pvm_iret.h, kvm_pvm_insn.c). */
#include <string.h>

#include "vmm/kvm_pvm_iret.h"

#define CR0_PE 1ull
#define EFER_LMA (1ull << 10)
#define FL_IF (1u << 9)
#define FL_IOPL (3u << 12)
#define FL_NT (1u << 14)
#define FL_VM (1u << 17)
/* What IRET may load: the arithmetic flags, TF, IF, DF, IOPL, NT, RF, AC,
 * VIF, VIP, ID (never VM here; bits 1, 3, 5, 15 are fixed). */
#define FL_IRET32 0x003f7fd5u
#define FL_IRET16 0x00007fd5u
#define SEL_TI 4u

/* The operand size in bytes, or 0 when b is not an IRET (0x66 is the only
 * prefix that matters; an IRET with others is left alone). No length: an
 * IRET sets RIP. */
static unsigned decode(const uint8_t *b, size_t n, bool cs_32)
{
	unsigned osz = cs_32 ? 4 : 2;
	size_t i = 0;

	while (i < n && b[i] == 0x66) {
		osz = cs_32 ? 2 : 4;
		i++;
	}
	return i < n && b[i] == 0xcf ? osz : 0;
}

static uint32_t load_le(const uint8_t *p, unsigned size)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

/* The GDT code descriptor for sel into seg: false when absent, outside
 * the GDT, in the LDT or not a code segment. */
static bool load_code_descriptor(const struct kvm_sregs *s, uint16_t sel, iret_read_fn read,
				 void *opaque, struct kvm_segment *seg)
{
	uint8_t d[8];
	uint32_t limit;

	if ((sel & SEL_TI) || (sel & ~7u) + 7u > s->gdt.limit ||
	    read(opaque, s->gdt.base + (sel & ~7u), d, sizeof(d)) < 0)
		return false;
	if (!(d[5] & 0x80) || !(d[5] & 0x10) || !(d[5] & 0x08)) /* present, S, code */
		return false;
	limit = load_le(d, 2) | (uint32_t)(d[6] & 0x0f) << 16;
	*seg = (struct kvm_segment){
		.base = load_le(d + 2, 3) | (uint32_t)d[7] << 24,
		.limit = (d[6] & 0x80) ? limit << 12 | 0xfff : limit,
		.selector = sel,
		.type = (d[5] & 0x0f) | 1, /* accessed */
		.present = 1,
		.dpl = (d[5] >> 5) & 3,
		.db = (d[6] >> 6) & 1,
		.s = 1,
		.l = (d[6] >> 5) & 1,
		.g = d[6] >> 7,
		.avl = (d[6] >> 4) & 1,
	};
	return true;
}

static uint32_t new_flags(uint32_t old, uint32_t popped, unsigned osz, unsigned cpl)
{
	uint32_t mask = osz == 4 ? FL_IRET32 : FL_IRET16;

	if (cpl > ((old & FL_IOPL) >> 12))
		mask &= ~FL_IF;
	if (cpl)
		mask &= ~FL_IOPL;
	return (old & ~mask) | (popped & mask) | 2u;
}

bool iret_complete(const uint8_t *b, size_t n, struct kvm_regs *regs, struct kvm_sregs *sregs,
		   iret_read_fn read, void *opaque)
{
	bool stack_32 = sregs->ss.db;
	uint32_t sp = stack_32 ? (uint32_t)regs->rsp : (uint16_t)regs->rsp;
	unsigned osz = decode(b, n, sregs->cs.db), cpl = sregs->cs.selector & 3;
	uint8_t frame[12];
	uint32_t eip, flags;
	uint16_t cs;
	struct kvm_segment seg = sregs->cs;

	if (!osz || !(sregs->cr0 & CR0_PE) || (sregs->efer & EFER_LMA) ||
	    (regs->rflags & (FL_VM | FL_NT)))
		return false;
	if (read(opaque, sregs->ss.base + sp, frame, 3 * osz) < 0)
		return false;
	eip = load_le(frame, osz);
	cs = (uint16_t)load_le(frame + osz, 2);
	flags = load_le(frame + 2 * osz, osz);
	if ((cs & 3) != cpl || (osz == 4 && (flags & FL_VM)))
		return false; /* a return to an outer ring or to V86 mode */
	if (cs != sregs->cs.selector && !load_code_descriptor(sregs, cs, read, opaque, &seg))
		return false;
	if (eip > seg.limit)
		return false; /* #GP: let the failure path report it */
	sregs->cs = seg;
	regs->rip = eip;
	regs->rflags = new_flags((uint32_t)regs->rflags, flags, osz, cpl);
	sp += 3 * osz;
	regs->rsp = stack_32 ? sp : (regs->rsp & ~0xffffull) | (uint16_t)sp;
	return true;
}
