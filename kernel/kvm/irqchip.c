/* irqchip.c — KVM ioctls for the interrupt controller modes of
 * -machine kernel_irqchip=split|off (see kvm.h, "irqchip modes"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel/kvm/kvm.h"

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

int kvm_vm_set_msi_routes(struct kvm_vm *vm, const struct kvm_msi_route *routes, unsigned n)
{
	struct kvm_irq_routing *table;
	int r;

	table = calloc(1, sizeof(*table) + n * sizeof(table->entries[0]));
	if (!table)
		return -ENOMEM;
	table->nr = n;
	for (unsigned i = 0; i < n; i++) {
		struct kvm_irq_routing_entry *e = &table->entries[i];

		e->gsi = routes[i].gsi;
		e->type = KVM_IRQ_ROUTING_MSI;
		e->u.msi.address_lo = (uint32_t)routes[i].addr;
		e->u.msi.address_hi = (uint32_t)(routes[i].addr >> 32);
		e->u.msi.data = routes[i].data;
	}
	r = irqchip_ioctl(vm->fd, KVM_SET_GSI_ROUTING, table);
	free(table);
	return r;
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
