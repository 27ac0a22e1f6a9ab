/* kvm_pvm_insn_decode.c — a host workaround (kvm_pvm_insn.c says when it
 * runs): a decoder for the few instructions the host's KVM
 * emulator cannot run for a guest's ring 0 (see docs/test-hosts.md):
 * CLAC, STAC, INT3, FWAIT (Linux's fpu__drop) and register-to-register
 * POPCNT, and how each one
 * changes the registers. Pure: no ioctls, unit-tested on byte strings. */
#include <string.h>

#include "vmm/kvm_pvm_insn.h"

#define RFLAGS_CF (1ull << 0)
#define RFLAGS_PF (1ull << 2)
#define RFLAGS_AF (1ull << 4)
#define RFLAGS_ZF (1ull << 6)
#define RFLAGS_SF (1ull << 7)
#define RFLAGS_OF (1ull << 11)
#define RFLAGS_AC (1ull << 18)
#define MAX_INSN_LEN 15

struct prefixes {
	bool opsize16, rep, other;
	uint8_t rex;
};

/* Legacy prefixes, then REX (long mode, immediately before the opcode). */
static unsigned scan_prefixes(const uint8_t *b, size_t n, bool long_mode, struct prefixes *p)
{
	unsigned i = 0;

	memset(p, 0, sizeof(*p));
	for (; i < n && i < MAX_INSN_LEN; i++) {
		switch (b[i]) {
		case 0x66:
			p->opsize16 = true;
			continue;
		case 0xf3:
			p->rep = true;
			continue;
		case 0xf2: case 0xf0:
			p->other = true;
			continue;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
			continue;	/* segment overrides do not matter here */
		}
		break;
	}
	if (long_mode && i < n && (b[i] & 0xf0) == 0x40)
		p->rex = b[i++];
	return i;
}

int insn_decode(const uint8_t *b, size_t n, bool long_mode, struct insn *in)
{
	struct prefixes p;
	unsigned i = scan_prefixes(b, n, long_mode, &p);

	memset(in, 0, sizeof(*in));
	if (n > MAX_INSN_LEN)
		n = MAX_INSN_LEN;
	if (i == 0 && n >= 1 && b[0] == 0xcc) {
		*in = (struct insn){.op = INSN_INT3, .len = 1};
		return 0;
	}
	if (i == 0 && n >= 1 && b[0] == 0x9b) {
		*in = (struct insn){.op = INSN_FWAIT, .len = 1};
		return 0;
	}
	if (i == 0 && n >= 3 && b[0] == 0x0f && b[1] == 0x01 && (b[2] == 0xca || b[2] == 0xcb)) {
		*in = (struct insn){.op = b[2] == 0xca ? INSN_CLAC : INSN_STAC, .len = 3};
		return 0;
	}
	/* POPCNT r, r/m: F3 [66] [REX] 0F B8 /r, register source only. */
	if (p.rep && !p.other && i + 3 <= n && b[i] == 0x0f && b[i + 1] == 0xb8 &&
	    (b[i + 2] >> 6) == 3) {
		uint8_t modrm = b[i + 2];

		in->op = INSN_POPCNT;
		in->len = i + 3;
		in->opsize = p.rex & 8 ? 8 : p.opsize16 ? 2 : 4;
		in->dst = ((modrm >> 3) & 7) | (p.rex & 4 ? 8 : 0);
		in->src = (modrm & 7) | (p.rex & 1 ? 8 : 0);
		return 0;
	}
	return -1;
}

/* x86 register numbers to struct kvm_regs fields. */
static __u64 *gpr(struct kvm_regs *r, unsigned n)
{
	__u64 *const map[16] = {
		&r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp, &r->rsi, &r->rdi,
		&r->r8, &r->r9, &r->r10, &r->r11, &r->r12, &r->r13, &r->r14, &r->r15,
	};

	return map[n & 15];
}

static void apply_popcnt(const struct insn *in, struct kvm_regs *r)
{
	uint64_t mask = in->opsize == 8 ? ~0ull : (1ull << (8 * in->opsize)) - 1;
	uint64_t src = *gpr(r, in->src) & mask;
	__u64 *dst = gpr(r, in->dst);
	uint64_t cnt = (uint64_t)__builtin_popcountll(src);

	if (in->opsize == 2)
		*dst = (*dst & ~0xffffull) | cnt;	/* 16-bit keeps the upper bits */
	else
		*dst = cnt;				/* 32-bit zero-extends */
	r->rflags &= ~(RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_OF);
	if (!src)
		r->rflags |= RFLAGS_ZF;
}

bool insn_apply(const struct insn *in, struct kvm_regs *regs)
{
	switch (in->op) {
	case INSN_CLAC:
		regs->rflags &= ~RFLAGS_AC;
		break;
	case INSN_STAC:
		regs->rflags |= RFLAGS_AC;
		break;
	case INSN_POPCNT:
		apply_popcnt(in, regs);
		break;
	case INSN_INT3:
	case INSN_FWAIT:
		break;
	default:
		return false;
	}
	regs->rip += in->len;
	return true;
}
