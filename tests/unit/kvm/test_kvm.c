/* Unit tests for kernel/kvm against the real /dev/kvm (skipped without it). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kvm/kvm.h"
#include "tests/unit/check_run.h"

START_TEST(open_errors_are_readable)
{
	struct kvm_sys sys;
	char err[256];

	ck_assert_int_eq(kvm_open(&sys, "/nonexistent/kvm", err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/kvm"));
	ck_assert_ptr_nonnull(strstr(err, "KVM is not available"));
}
END_TEST

START_TEST(caps_vm_slots_vcpu)
{
	struct kvm_sys sys;
	struct kvm_vm vm;
	struct kvm_vcpu vcpu;
	struct kvm_cap_need bogus = {123456, "KVM_CAP_BOGUS"};
	char err[256];
	size_t sz = 0x200000;
	uint8_t *mem = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t bitmap[(0x200000 / 4096 + 63) / 64];
	struct kvm_regs regs;
	int slot;

	ck_assert_int_eq(kvm_open(&sys, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_require_caps(&sys, kvm_vmm_caps, kvm_vmm_caps_count, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_require_caps(&sys, &bogus, 1, err, sizeof(err)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "KVM_CAP_BOGUS"));
	ck_assert_int_eq(kvm_vm_create(&sys, &vm, err, sizeof(err)), 0);
	slot = kvm_vm_add_mem(&vm, 0, sz, mem, 0);
	ck_assert_int_ge(slot, 0);
	ck_assert_int_eq(kvm_vm_add_mem(&vm, 0x1000, sz, mem, 0), -EEXIST); /* overlap */
	ck_assert_int_eq(kvm_vm_add_mem(&vm, 0x123, sz, mem, 0), -EINVAL);
	ck_assert_int_eq(kvm_vm_set_dirty_logging(&vm, slot, true), 0);
	ck_assert_int_eq(kvm_vm_get_dirty_log(&vm, slot, bitmap), 0);
	ck_assert_int_eq(kvm_vm_remove_mem(&vm, slot), 0);
	ck_assert_int_eq(kvm_vm_remove_mem(&vm, slot), -ENOENT);
	ck_assert_int_eq(kvm_vm_create_irqchip(&vm), 0);
	ck_assert_int_eq(kvm_vm_create_pit2(&vm), 0);
	ck_assert_int_eq(kvm_vm_irq_line(&vm, 4, true), 0);
	ck_assert_int_eq(kvm_vcpu_create(&vm, 0, &vcpu), 0);
	ck_assert_ptr_nonnull(vcpu.run);
	ck_assert_int_eq(kvm_vcpu_get_regs(&vcpu, &regs), 0);
	ck_assert_uint_eq(regs.rip, 0xfff0); /* the reset vector */
	regs.rax = 0x1234;
	ck_assert_int_eq(kvm_vcpu_set_regs(&vcpu, &regs), 0);
	ck_assert_int_eq(kvm_vcpu_get_regs(&vcpu, &regs), 0);
	ck_assert_uint_eq(regs.rax, 0x1234);
	kvm_vcpu_destroy(&vcpu);
	kvm_vm_destroy(&vm);
	kvm_close(&sys);
	munmap(mem, sz);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvm");
	TCase *tc = tcase_create("kvm");

	if (access("/dev/kvm", F_OK) != 0) {
		printf("skipped: /dev/kvm is absent\n");
		return 77;
	}
	tcase_add_test(tc, open_errors_are_readable);
	tcase_add_test(tc, caps_vm_slots_vcpu);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
