/* Unit tests for the emulation-fallback decoder on byte strings. */
#include <check.h>
#include <string.h>

#include "vmm/kvm_pvm_insn.h"
#include "tests/unit/check_run.h"

static struct insn dec(const char *bytes, size_t n, bool lm)
{
	struct insn in;

	insn_decode((const uint8_t *)bytes, n, lm, &in);
	return in;
}

START_TEST(clac_stac_int3)
{
	struct kvm_regs r = {.rip = 0x1000, .rflags = 0x2 | (1u << 18)};
	struct insn in = dec("\x0f\x01\xca", 3, true);

	ck_assert_int_eq(in.op, INSN_CLAC);
	ck_assert(insn_apply(&in, &r));
	ck_assert_uint_eq(r.rflags, 0x2);
	ck_assert_uint_eq(r.rip, 0x1003);
	in = dec("\x0f\x01\xcb", 3, true);
	ck_assert_int_eq(in.op, INSN_STAC);
	ck_assert(insn_apply(&in, &r));
	ck_assert_uint_eq(r.rflags, 0x2 | (1u << 18));
	in = dec("\xcc\x90", 2, true);
	ck_assert_int_eq(in.op, INSN_INT3);
	ck_assert(insn_apply(&in, &r));
	ck_assert_uint_eq(r.rip, 0x1007);
	in = dec("\x9b\x65\x48", 3, true);	/* fwait in Linux's fpu__drop */
	ck_assert_int_eq(in.op, INSN_FWAIT);
	ck_assert(insn_apply(&in, &r));
	ck_assert_uint_eq(r.rip, 0x1008);
	ck_assert_int_eq(dec("\x0f\x01", 2, true).op, INSN_UNKNOWN);	/* truncated */
	ck_assert_int_eq(dec("\x0f\x01\xd0", 3, true).op, INSN_UNKNOWN);	/* xgetbv */
}
END_TEST

START_TEST(popcnt_forms)
{
	struct kvm_regs r = {.rdi = 0xff00ff00ff00ff0full, .rax = ~0ull, .rflags = 0x2 | 1};
	/* popcnt %rdi,%rax (as in Linux's __arch_hweight64) */
	struct insn in = dec("\xf3\x48\x0f\xb8\xc7", 5, true);

	ck_assert_int_eq(in.op, INSN_POPCNT);
	ck_assert_uint_eq(in.len, 5);
	ck_assert(insn_apply(&in, &r));
	ck_assert_uint_eq(r.rax, 36);
	ck_assert_uint_eq(r.rflags, 0x2);	/* CF cleared, ZF clear */
	/* popcnt %edi,%eax: 32 bits, zero-extended */
	r.rax = ~0ull;
	in = dec("\xf3\x0f\xb8\xc7", 4, true);
	ck_assert_uint_eq(in.opsize, 4);
	insn_apply(&in, &r);
	ck_assert_uint_eq(r.rax, 20);
	/* popcnt %r9,%r10 (REX.WRB) with a zero source sets ZF */
	r.r9 = 0;
	in = dec("\xf3\x4d\x0f\xb8\xd1", 5, true);
	ck_assert_uint_eq(in.dst, 10);
	ck_assert_uint_eq(in.src, 9);
	insn_apply(&in, &r);
	ck_assert_uint_eq(r.r10, 0);
	ck_assert_uint_eq(r.rflags & (1u << 6), 1u << 6);
	/* 16-bit form keeps the upper bits of the destination */
	r.rbx = 0xffff0000ffff0000ull;
	r.rcx = 0x0007;
	in = dec("\x66\xf3\x0f\xb8\xd9", 5, true);
	ck_assert_uint_eq(in.opsize, 2);
	insn_apply(&in, &r);
	ck_assert_uint_eq(r.rbx, 0xffff0000ffff0003ull);
	/* memory operands and missing F3 are not ours */
	ck_assert_int_eq(dec("\xf3\x48\x0f\xb8\x07", 5, true).op, INSN_UNKNOWN);
	ck_assert_int_eq(dec("\x48\x0f\xb8\xc7", 4, true).op, INSN_UNKNOWN);
	/* outside long mode 0x48 is dec %eax, not REX */
	ck_assert_int_eq(dec("\xf3\x48\x0f\xb8\xc7", 5, false).op, INSN_UNKNOWN);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("insn");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, clac_stac_int3);
	tcase_add_test(tc, popcnt_forms);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
