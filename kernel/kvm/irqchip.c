/* irqchip.c — KVM ioctls for the interrupt controller modes of
 * -machine kernel_irqchip=split|off (see kvm.h, "irqchip modes"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel/kvm/kvm.h"

#define KVM_MSR_RANGE_MAX 256 /* MSRs per filter range that we need */

/* ioctl, returning 0 or -errno. */
static int irqchip_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int kvm_vm_enable_split_irqchip(struct kvm_vm *vm, unsigned ioapic_pins)
{
	struct kvm_enable_cap cap = {.cap = KVM_CAP_SPLIT_IRQCHIP, .args = {ioapic_pins}};

	return irqchip_ioctl(vm->fd, KVM_ENABLE_CAP, &cap);
}

int kvm_vcpu_interrupt(struct kvm_vcpu *vcpu, unsigned vector)
{
	struct kvm_interrupt irq = {.irq = vector};

	return irqchip_ioctl(vcpu->fd, KVM_INTERRUPT, &irq);
}

int kvm_vcpu_nmi(struct kvm_vcpu *vcpu)
{
	return irqchip_ioctl(vcpu->fd, KVM_NMI, NULL);
}

/* FILTER: the MSRs kvm_vm_msr_filter_to_user() names. INVAL too: KVM
 * never filters the x2APIC range (0x800-0x8ff), and with
 * no APIC of its own it fails those accesses; INVAL hands them to us
 * instead of injecting #GP (which we do ourselves for what we don't own). */
int kvm_vm_enable_user_msr_exits(struct kvm_vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args = {KVM_MSR_EXIT_REASON_FILTER | KVM_MSR_EXIT_REASON_INVAL},
	};

	return irqchip_ioctl(vm->fd, KVM_ENABLE_CAP, &cap);
}

int kvm_vm_msr_filter_to_user(struct kvm_vm *vm, const struct kvm_msr_range *ranges, unsigned n)
{
	/* A set bit allows KVM to handle the MSR; ours are all clear. */
	static uint8_t deny[KVM_MSR_RANGE_MAX / 8];
	struct kvm_msr_filter f = {.flags = KVM_MSR_FILTER_DEFAULT_ALLOW};

	if (n > KVM_MSR_FILTER_MAX_RANGES)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (ranges[i].count > KVM_MSR_RANGE_MAX)
			return -EINVAL;
		f.ranges[i] = (struct kvm_msr_filter_range){
			.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs = ranges[i].count,
			.base = ranges[i].base,
			.bitmap = deny,
		};
	}
	return irqchip_ioctl(vm->fd, KVM_X86_SET_MSR_FILTER, &f);
}

int kvm_vcpu_get_tsc_khz(struct kvm_vcpu *vcpu)
{
	int r = ioctl(vcpu->fd, KVM_GET_TSC_KHZ, 0);

	return r < 0 ? -errno : r;
}
