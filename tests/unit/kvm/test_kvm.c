/* Unit tests for kernel/kvm against the real /dev/kvm (skipped without it). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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
	{
		int efd = eventfd(0, EFD_CLOEXEC);

		ck_assert_int_eq(kvm_vm_irqfd(&vm, efd, 5, -1, true), 0);
		ck_assert_int_eq(kvm_vm_irqfd(&vm, efd, 5, -1, false), 0);
		close(efd);
	}
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

/* Real-mode code at 0x1000: out to 0x10 (an ioeventfd: no exit), out to
 * 0x11 (an exit), a store into a read-only slot at 0x3000 (an MMIO exit),
 * hlt (an exit: no in-kernel irqchip in this VM). */
static const uint8_t real_mode_code[] = {
	0xb0, 0x42,		/* mov $0x42,%al */
	0xe6, 0x10,		/* out %al,$0x10 */
	0xe6, 0x11,		/* out %al,$0x11 */
	0xa2, 0x00, 0x30,	/* mov %al,0x3000 */
	0xf4,			/* hlt */
};

START_TEST(run_exits_ioeventfd_readonly_debug_msr)
{
	struct kvm_sys sys;
	struct kvm_vm vm;
	struct kvm_vcpu cpu;
	struct kvm_sregs sregs;
	struct kvm_regs regs = {.rip = 0x1000, .rflags = 2};
	struct kvm_cpuid2 *cpuid = NULL;
	char err[256];
	uint8_t *ram = mmap(NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t v = 0, ev = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	memcpy(ram + 0x1000, real_mode_code, sizeof(real_mode_code));
	ck_assert_int_eq(kvm_open(&sys, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_vm_create(&sys, &vm, err, sizeof(err)), 0);
	ck_assert_int_ge(kvm_vm_add_mem(&vm, 0, 0x3000, ram, 0), 0);
	ck_assert_int_ge(kvm_vm_add_mem(&vm, 0x3000, 0x1000, ram + 0x3000, KVM_MEM_READONLY), 0);
	ck_assert_int_eq(kvm_vm_ioeventfd(&vm, 0x10, 1, true, -1, efd, true), 0);
	ck_assert_int_eq(kvm_vcpu_create(&vm, 0, &cpu), 0);
	ck_assert_int_eq(kvm_get_supported_cpuid(&sys, &cpuid), 0);
	ck_assert_int_eq(kvm_vcpu_set_cpuid(&cpu, cpuid), 0);
	ck_assert_int_eq(kvm_vcpu_set_msr(&cpu, 0x174, 0x10), 0); /* IA32_SYSENTER_CS */
	ck_assert_int_eq(kvm_vcpu_get_msr(&cpu, 0x174, &v), 0);
	ck_assert_uint_eq(v, 0x10);
	ck_assert_int_eq(kvm_vcpu_get_sregs(&cpu, &sregs), 0);
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	ck_assert_int_eq(kvm_vcpu_set_sregs(&cpu, &sregs), 0);
	ck_assert_int_eq(kvm_vcpu_set_regs(&cpu, &regs), 0);

	/* Single step: the first run stops after one instruction. */
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(&cpu, KVM_DEBUG_STEP, NULL, 0), 0);
	ck_assert_int_eq(kvm_vcpu_run(&cpu), 0);
	ck_assert_uint_eq(cpu.run->exit_reason, KVM_EXIT_DEBUG);
	ck_assert_uint_eq(cpu.run->debug.arch.pc, 0x1002);
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(&cpu, 0, NULL, 0), 0);
	ck_assert_int_eq(kvm_vcpu_run(&cpu), 0);
	ck_assert_uint_eq(cpu.run->exit_reason, KVM_EXIT_IO);
	ck_assert_uint_eq(cpu.run->io.port, 0x11); /* 0x10 went to the eventfd */
	ck_assert_int_eq(read(efd, &ev, sizeof(ev)), sizeof(ev));
	ck_assert_uint_eq(ev, 1);
	ck_assert_int_eq(kvm_vcpu_run(&cpu), 0);
	/* The store into the read-only slot exits as MMIO and is not stored. */
	ck_assert_uint_eq(cpu.run->exit_reason, KVM_EXIT_MMIO);
	ck_assert_uint_eq(cpu.run->mmio.phys_addr, 0x3000);
	ck_assert(cpu.run->mmio.is_write);
	ck_assert_uint_eq(cpu.run->mmio.data[0], 0x42);
	ck_assert_uint_eq(ram[0x3000], 0);
	ck_assert_int_eq(kvm_vcpu_run(&cpu), 0);
	ck_assert_uint_eq(cpu.run->exit_reason, KVM_EXIT_HLT);
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(&cpu, 0, (struct kvm_hw_bp[5]){{0}}, 5), -EINVAL);
	/* watchpoints: aligned to their length, which is 1, 2, 4 or 8 */
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(
				 &cpu, 0, &(struct kvm_hw_bp){0x1002, KVM_HW_BP_WRITE, 4}, 1),
			 -EINVAL);
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(
				 &cpu, 0, &(struct kvm_hw_bp){0x1000, KVM_HW_BP_ACCESS, 3}, 1),
			 -EINVAL);
	ck_assert_int_eq(kvm_vcpu_set_guest_debug(
				 &cpu, KVM_DEBUG_SW_BP, &(struct kvm_hw_bp){0x1000, KVM_HW_BP_WRITE, 8}, 1),
			 0);
	free(cpuid);
	close(efd);
	kvm_vcpu_destroy(&cpu);
	kvm_vm_destroy(&vm);
	kvm_close(&sys);
	munmap(ram, 0x4000);
}
END_TEST

/* MSI routes keep the irqchip's default routes, bind irqfds, run out
 * cleanly and say which GSIs they do not know. */
START_TEST(msi_routes_and_irqfd)
{
	struct kvm_sys sys;
	struct kvm_vm vm;
	char err[256];
	int gsi[KVM_MAX_MSI_ROUTES], efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t one = 1;

	ck_assert_int_eq(kvm_open(&sys, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_vm_create(&sys, &vm, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_vm_create_irqchip(&vm), 0);
	gsi[0] = kvm_vm_msi_route_add(&vm, 0xfee00000u, 0x4030);
	ck_assert_int_ge(gsi[0], KVM_IRQCHIP_GSIS);
	ck_assert_int_eq(kvm_vm_irqfd(&vm, efd, (unsigned)gsi[0], -1, true), 0);
	ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one)); /* no vCPU: queued */
	ck_assert_int_eq(kvm_vm_msi_route_set(&vm, (unsigned)gsi[0], 0xfee01000u, 0x4031), 0);
	/* the IOAPIC and PIC pins still work after the table was replaced */
	ck_assert_int_eq(kvm_vm_irq_line(&vm, 10, true), 0);
	ck_assert_int_eq(kvm_vm_irq_line(&vm, 10, false), 0);
	for (unsigned i = 1; i < KVM_MAX_MSI_ROUTES; i++) {
		gsi[i] = kvm_vm_msi_route_add(&vm, 0xfee00000u, i);
		ck_assert_int_eq(gsi[i], gsi[0] + (int)i);
	}
	ck_assert_int_eq(kvm_vm_msi_route_add(&vm, 0xfee00000u, 0), -ENOSPC);
	ck_assert_int_eq(kvm_vm_msi_route_del(&vm, (unsigned)gsi[5]), 0);
	ck_assert_int_eq(kvm_vm_msi_route_add(&vm, 0xfee00000u, 0), gsi[5]); /* reused */
	ck_assert_int_eq(kvm_vm_msi_route_set(&vm, 3, 0, 0), -ENOENT);
	ck_assert_int_eq(kvm_vm_msi_route_del(&vm, KVM_IRQCHIP_GSIS + KVM_MAX_MSI_ROUTES), -ENOENT);
	ck_assert_int_eq(kvm_vm_irqfd(&vm, efd, (unsigned)gsi[0], -1, false), 0);
	close(efd);
	kvm_vm_destroy(&vm);
	kvm_close(&sys);
}
END_TEST

/* What a migration reads and writes back (save.c): every getter works on
 * a fresh vCPU and VM, the setters take what the getters gave, and values
 * written come back (a debug register, an MSR, the clock, a PIT count). */
START_TEST(saving_state_round_trips)
{
	struct kvm_sys sys;
	struct kvm_vm vm;
	struct kvm_vcpu cpu;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dr;
	struct kvm_clock_data clock;
	struct kvm_pit_state2 pit;
	struct kvm_msr_entry e[2] = {{.index = 0xc0000082}, {.index = 0x277}}; /* LSTAR, PAT */
	uint32_t *list = NULL;
	char err[256];
	size_t xsize;
	void *xsave;
	int n, found;

	ck_assert_int_eq(kvm_open(&sys, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_vm_create(&sys, &vm, err, sizeof(err)), 0);
	ck_assert_int_eq(kvm_vm_create_irqchip(&vm), 0);
	ck_assert_int_eq(kvm_vm_create_pit2(&vm), 0);
	ck_assert_int_eq(kvm_vcpu_create(&vm, 0, &cpu), 0);
	n = kvm_msr_index_list(&sys, &list);
	ck_assert_int_gt(n, 10);
	found = 0;
	for (int i = 0; i < n; i++)
		found += list[i] == 0x10;
	ck_assert_int_eq(found, 1); /* the TSC is always saved */
	free(list);
	xsize = kvm_xsave_size(&vm);
	ck_assert_uint_ge(xsize, sizeof(struct kvm_xsave));
	xsave = malloc(xsize);
	ck_assert_int_eq(kvm_vcpu_get_xsave(&cpu, xsave, xsize), 0);
	ck_assert_int_eq(kvm_vcpu_set_xsave(&cpu, xsave, xsize), 0);
	ck_assert_int_eq(kvm_vcpu_get_xsave(&cpu, xsave, 16), -EINVAL);
	free(xsave);
	ck_assert_int_eq(kvm_vcpu_get_xcrs(&cpu, &xcrs), 0);
	ck_assert_int_eq(kvm_vcpu_set_xcrs(&cpu, &xcrs), 0);
	ck_assert_int_eq(kvm_vcpu_get_debugregs(&cpu, &dr), 0);
	dr.db[1] = 0x123456;
	ck_assert_int_eq(kvm_vcpu_set_debugregs(&cpu, &dr), 0);
	memset(&dr, 0, sizeof(dr));
	ck_assert_int_eq(kvm_vcpu_get_debugregs(&cpu, &dr), 0);
	ck_assert_uint_eq(dr.db[1], 0x123456);
	e[0].data = 0xffffffff81000000ull;
	e[1].data = 0x0007040600070406ull;
	ck_assert_int_eq(kvm_vcpu_set_msrs(&cpu, e, 2), 2);
	e[0].data = e[1].data = 0;
	ck_assert_int_eq(kvm_vcpu_get_msrs(&cpu, e, 2), 2);
	ck_assert_uint_eq(e[0].data, 0xffffffff81000000ull);
	ck_assert_uint_eq(e[1].data, 0x0007040600070406ull);
	ck_assert_int_eq(kvm_vm_set_clock(&vm, 5000000000ull), 0);
	ck_assert_int_eq(kvm_vm_get_clock(&vm, &clock), 0);
	ck_assert_uint_ge(clock.clock, 5000000000ull);
	ck_assert_uint_lt(clock.clock, 5000000000ull + 60000000000ull);
	ck_assert_int_eq(kvm_vm_get_pit2(&vm, &pit), 0);
	pit.channels[2].count = 0x1234;
	ck_assert_int_eq(kvm_vm_set_pit2(&vm, &pit), 0);
	memset(&pit, 0, sizeof(pit));
	ck_assert_int_eq(kvm_vm_get_pit2(&vm, &pit), 0);
	ck_assert_uint_eq(pit.channels[2].count, 0x1234);
	kvm_vcpu_destroy(&cpu);
	kvm_vm_destroy(&vm);
	kvm_close(&sys);
}
END_TEST

int main(void)
{
	/* Before anything is allocated: LeakSanitizer checks the skip path too. */
	if (access("/dev/kvm", F_OK) != 0) {
		printf("skipped: /dev/kvm is absent\n");
		return 77;
	}
	Suite *s = suite_create("kvm");
	TCase *tc = tcase_create("kvm");

	tcase_add_test(tc, open_errors_are_readable);
	tcase_add_test(tc, caps_vm_slots_vcpu);
	tcase_add_test(tc, run_exits_ioeventfd_readonly_debug_msr);
	tcase_add_test(tc, msi_routes_and_irqfd);
	tcase_add_test(tc, saving_state_round_trips);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
