/* Unit tests for the protected-mode IRET completion (vmm/kvm_pvm_iret.c). */
#include <check.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "vmm/kvm_pvm_iret.h"

#define MEM_SIZE 0x20000u
#define GDT_BASE 0x500u
#define STACK 0x1000u

static uint8_t mem[MEM_SIZE];
static struct kvm_regs regs;
static struct kvm_sregs sregs;
static const uint8_t iret[] = {0xcf}, iret_66[] = {0x66, 0xcf}, nop[] = {0x90};

static int read_mem(void *opaque, uint64_t linear, void *buf, size_t n)
{
	if (linear > MEM_SIZE || n > MEM_SIZE - linear)
		return -1;
	memcpy(buf, mem + linear, n);
	return 0;
}

static void put(uint32_t addr, uint32_t v, unsigned size)
{
	memcpy(mem + addr, &v, size);
}

/* The frame IRET pops at SS:ESP: EIP, CS, EFLAGS of size bytes each. */
static void frame(uint32_t eip, uint16_t cs, uint32_t flags, unsigned size)
{
	put(STACK, eip, size);
	put(STACK + size, cs, 2);
	put(STACK + 2 * size, flags, size);
}

static struct kvm_segment flat(uint16_t sel, bool code, bool big)
{
	return (struct kvm_segment){.limit = 0xffffffff,
				    .selector = sel,
				    .type = code ? 0xb : 3,
				    .present = 1,
				    .dpl = sel & 3,
				    .db = big,
				    .s = 1,
				    .g = 1};
}

static void setup(void)
{
	memset(mem, 0, sizeof(mem));
	memset(&regs, 0, sizeof(regs));
	memset(&sregs, 0, sizeof(sregs));
	sregs.cr0 = 1;
	sregs.cs = flat(0x20, true, true);
	sregs.ss = flat(0x28, false, true);
	sregs.gdt.base = GDT_BASE;
	sregs.gdt.limit = 0x3f;
	regs.rip = 0x7000;
	regs.rsp = STACK;
	regs.rflags = 0x2;
	/* 0x18: 16-bit code, base 0x10000, limit 0xffff, DPL 0. */
	memcpy(mem + GDT_BASE + 0x18, (uint8_t[]){0xff, 0xff, 0x00, 0x00, 0x01, 0x9a, 0x00, 0x00},
	       8);
}

START_TEST(same_segment_32bit)
{
	frame(0x2345, 0x20, 0x203 | 0x800, 4); /* IF, CF, OF */
	ck_assert(iret_complete(iret, sizeof(iret), &regs, &sregs, read_mem, NULL));
	ck_assert_uint_eq(regs.rip, 0x2345);
	ck_assert_uint_eq(regs.rsp, STACK + 12);
	ck_assert_uint_eq(regs.rflags, 0xa03);
	ck_assert_uint_eq(sregs.cs.selector, 0x20);
	ck_assert_uint_eq(sregs.cs.db, 1);
}
END_TEST

START_TEST(other_segment_from_the_gdt)
{
	frame(0x1234, 0x18, 0x2, 4);
	ck_assert(iret_complete(iret, sizeof(iret), &regs, &sregs, read_mem, NULL));
	ck_assert_uint_eq(regs.rip, 0x1234);
	ck_assert_uint_eq(sregs.cs.selector, 0x18);
	ck_assert_uint_eq(sregs.cs.base, 0x10000);
	ck_assert_uint_eq(sregs.cs.limit, 0xffff);
	ck_assert_uint_eq(sregs.cs.db, 0);
	ck_assert_uint_eq(sregs.cs.type, 0xb);
}
END_TEST

START_TEST(operand_size_16_and_prefix)
{
	/* In a 16-bit segment IRET pops words; 0x66 makes it pop dwords. */
	sregs.cs = flat(0x18, true, false);
	sregs.cs.base = 0x10000;
	sregs.cs.limit = 0xffff;
	regs.rflags = 0x12340002; /* high flag bits survive a 16-bit IRET */
	frame(0x0100, 0x18, 0x0046, 2);
	ck_assert(iret_complete(iret, sizeof(iret), &regs, &sregs, read_mem, NULL));
	ck_assert_uint_eq(regs.rip, 0x100);
	ck_assert_uint_eq(regs.rsp, STACK + 6);
	ck_assert_uint_eq(regs.rflags, 0x12340046);
	regs.rsp = STACK;
	frame(0x0200, 0x18, 0x0002, 4);
	ck_assert(iret_complete(iret_66, sizeof(iret_66), &regs, &sregs, read_mem, NULL));
	ck_assert_uint_eq(regs.rip, 0x200);
	ck_assert_uint_eq(regs.rsp, STACK + 12);
}
END_TEST

START_TEST(if_needs_iopl_outside_ring_0)
{
	sregs.cs = flat(0x1b, true, true);
	sregs.ss = flat(0x23, false, true);
	frame(0x10, 0x1b, 0x3202, 4); /* asks for IF and IOPL 3 */
	ck_assert(iret_complete(iret, sizeof(iret), &regs, &sregs, read_mem, NULL));
	ck_assert_uint_eq(regs.rflags, 0x2);
}
END_TEST

/* Every case left to the failure path leaves the state untouched. */
static void refused(const uint8_t *b, size_t n)
{
	struct kvm_regs r = regs;
	struct kvm_sregs s = sregs;

	ck_assert(!iret_complete(b, n, &regs, &sregs, read_mem, NULL));
	ck_assert_mem_eq(&r, &regs, sizeof(r));
	ck_assert_mem_eq(&s, &sregs, sizeof(s));
}

START_TEST(other_cases_are_refused)
{
	frame(0x10, 0x20, 0x2, 4);
	refused(nop, sizeof(nop));
	refused(iret, 0);
	frame(0x10, 0x23, 0x2, 4); /* to ring 3: an outer-level return */
	refused(iret, sizeof(iret));
	frame(0x10, 0x24, 0x2, 4); /* LDT selector */
	refused(iret, sizeof(iret));
	frame(0x10, 0x40, 0x2, 4); /* beyond the GDT limit */
	refused(iret, sizeof(iret));
	frame(0x10, 0x20, 0x20002, 4); /* to virtual-8086 mode */
	refused(iret, sizeof(iret));
	frame(0x10000, 0x18, 0x2, 4); /* EIP past the segment limit */
	refused(iret, sizeof(iret));
	frame(0x10, 0x20, 0x2, 4);
	regs.rflags = 0x4002; /* NT: a task return */
	refused(iret, sizeof(iret));
	regs.rflags = 0x2;
	regs.rsp = MEM_SIZE - 4; /* the frame runs off memory */
	refused(iret, sizeof(iret));
	regs.rsp = STACK;
	sregs.efer = 0x500; /* long mode: KVM's own business */
	refused(iret, sizeof(iret));
	sregs.efer = 0;
	sregs.cr0 = 0; /* real mode: KVM emulates that IRET */
	refused(iret, sizeof(iret));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iret");
	TCase *tc = tcase_create("iret");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, same_segment_32bit);
	tcase_add_test(tc, other_segment_from_the_gdt);
	tcase_add_test(tc, operand_size_16_and_prefix);
	tcase_add_test(tc, if_needs_iopl_outside_ring_0);
	tcase_add_test(tc, other_cases_are_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
