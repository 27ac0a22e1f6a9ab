/* save.c — the KVM ioctls that read and write the state a snapshot or a
 * migration carries beyond kvm.c's registers: XSAVE, XCRs, debug
 * registers, MSRs in bulk, the VM's kvmclock and the in-kernel PIT
 * (see kvm.h, "saving state"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel/kvm/kvm.h"

static int save_ioctl(int fd, unsigned long req, void *arg)
{
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

size_t kvm_xsave_size(struct kvm_vm *vm)
{
	/* KVM_CAP_XSAVE2 answers the size AMX-era state needs (> 4 KiB);
	 * older kernels only know the 4 KiB struct kvm_xsave. */
	int r = ioctl(vm->fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);

	return r > (int)sizeof(struct kvm_xsave) ? (size_t)r : sizeof(struct kvm_xsave);
}

int kvm_vcpu_get_xsave(struct kvm_vcpu *vcpu, void *buf, size_t size)
{
	if (size < sizeof(struct kvm_xsave))
		return -EINVAL;
	memset(buf, 0, size);
	if (size > sizeof(struct kvm_xsave))
		return save_ioctl(vcpu->fd, KVM_GET_XSAVE2, buf);
	return save_ioctl(vcpu->fd, KVM_GET_XSAVE, buf);
}

int kvm_vcpu_set_xsave(struct kvm_vcpu *vcpu, const void *buf, size_t size)
{
	if (size < sizeof(struct kvm_xsave))
		return -EINVAL;
	return save_ioctl(vcpu->fd, KVM_SET_XSAVE, (void *)buf);
}

int kvm_vcpu_get_xcrs(struct kvm_vcpu *vcpu, struct kvm_xcrs *xcrs)
{
	memset(xcrs, 0, sizeof(*xcrs));
	return save_ioctl(vcpu->fd, KVM_GET_XCRS, xcrs);
}

int kvm_vcpu_set_xcrs(struct kvm_vcpu *vcpu, const struct kvm_xcrs *xcrs)
{
	return save_ioctl(vcpu->fd, KVM_SET_XCRS, (void *)xcrs);
}

int kvm_vcpu_get_debugregs(struct kvm_vcpu *vcpu, struct kvm_debugregs *dr)
{
	memset(dr, 0, sizeof(*dr));
	return save_ioctl(vcpu->fd, KVM_GET_DEBUGREGS, dr);
}

int kvm_vcpu_set_debugregs(struct kvm_vcpu *vcpu, const struct kvm_debugregs *dr)
{
	return save_ioctl(vcpu->fd, KVM_SET_DEBUGREGS, (void *)dr);
}

int kvm_msr_index_list(struct kvm_sys *sys, uint32_t **list)
{
	struct kvm_msr_list probe = {.nmsrs = 0};
	struct kvm_msr_list *l;
	int r = save_ioctl(sys->fd, KVM_GET_MSR_INDEX_LIST, &probe);

	/* The first call fails with E2BIG and says how many there are. */
	if (r < 0 && r != -E2BIG)
		return r;
	l = calloc(1, sizeof(*l) + probe.nmsrs * sizeof(uint32_t));
	if (!l)
		return -ENOMEM;
	l->nmsrs = probe.nmsrs;
	r = save_ioctl(sys->fd, KVM_GET_MSR_INDEX_LIST, l);
	if (r < 0) {
		free(l);
		return r;
	}
	r = (int)l->nmsrs;
	*list = malloc((l->nmsrs ? l->nmsrs : 1) * sizeof(uint32_t));
	if (!*list) {
		free(l);
		return -ENOMEM;
	}
	memcpy(*list, l->indices, l->nmsrs * sizeof(uint32_t));
	free(l);
	return r;
}

/* One KVM_GET_MSRS or KVM_SET_MSRS over n entries: how many it did. */
static int msrs_ioctl(struct kvm_vcpu *vcpu, unsigned long req, struct kvm_msr_entry *e, unsigned n)
{
	struct kvm_msrs *m = calloc(1, sizeof(*m) + n * sizeof(*e));
	int r;

	if (!m)
		return -ENOMEM;
	m->nmsrs = n;
	memcpy(m->entries, e, n * sizeof(*e));
	r = save_ioctl(vcpu->fd, req, m);
	if (r >= 0)
		memcpy(e, m->entries, n * sizeof(*e));
	free(m);
	return r;
}

int kvm_vcpu_get_msrs(struct kvm_vcpu *vcpu, struct kvm_msr_entry *e, unsigned n)
{
	return msrs_ioctl(vcpu, KVM_GET_MSRS, e, n);
}

int kvm_vcpu_set_msrs(struct kvm_vcpu *vcpu, const struct kvm_msr_entry *e, unsigned n)
{
	return msrs_ioctl(vcpu, KVM_SET_MSRS, (struct kvm_msr_entry *)e, n);
}

int kvm_vm_get_clock(struct kvm_vm *vm, struct kvm_clock_data *c)
{
	memset(c, 0, sizeof(*c));
	return save_ioctl(vm->fd, KVM_GET_CLOCK, c);
}

int kvm_vm_set_clock(struct kvm_vm *vm, uint64_t ns)
{
	struct kvm_clock_data c = {.clock = ns};

	return save_ioctl(vm->fd, KVM_SET_CLOCK, &c);
}

int kvm_vm_get_pit2(struct kvm_vm *vm, struct kvm_pit_state2 *pit)
{
	memset(pit, 0, sizeof(*pit));
	return save_ioctl(vm->fd, KVM_GET_PIT2, pit);
}

int kvm_vm_set_pit2(struct kvm_vm *vm, const struct kvm_pit_state2 *pit)
{
	return save_ioctl(vm->fd, KVM_SET_PIT2, (void *)pit);
}
