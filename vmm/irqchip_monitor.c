/* irqchip_monitor.c — `info pic`, `info ioapic`, `info lapic [CPU]` and
 * `info irq` in QEMU's layouts, for every kernel_irqchip mode: the
 * userspace models print themselves, KVM's in-kernel chips are read with
 * KVM_GET_IRQCHIP / KVM_GET_LAPIC and printed in the same layout. */
#include <stdlib.h>
#include <string.h>

#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "devices/intc/lapic.h"
#include "vmm/irqchip.h"
#include "vmm/machine.h"

#define INFO_BUF 4096

/* Print what fmt_fn(…, buf, len) produced. */
static void print_buf(FILE *out, const char *buf, size_t n)
{
	fwrite(buf, 1, n < INFO_BUF ? n : INFO_BUF - 1, out);
}

void irqchip_info_pic(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	char buf[INFO_BUF];
	struct i8259_state st[2];

	if (m->ic) {
		print_buf(out, buf, i8259_info(m->ic->pic, buf, sizeof(buf)));
		return;
	}
	for (unsigned i = 0; i < 2; i++) {
		struct kvm_irqchip chip = {.chip_id = i};
		const struct kvm_pic_state *p = &chip.chip.pic;

		if (kvm_vm_get_irqchip(&m->vm, &chip) < 0) {
			fprintf(out, "KVM_GET_IRQCHIP failed\n");
			return;
		}
		st[i] = (struct i8259_state){p->irr,	  p->imr,
					     p->isr,	  p->priority_add,
					     p->irq_base, p->read_reg_select,
					     p->elcr,	  p->special_fully_nested_mode};
	}
	print_buf(out, buf, i8259_format(st, buf, sizeof(buf)));
}

void irqchip_info_ioapic(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	struct kvm_irqchip chip = {.chip_id = KVM_IRQCHIP_IOAPIC};
	const struct kvm_ioapic_state *io = &chip.chip.ioapic;
	uint64_t rte[IOAPIC_NUM_PINS];
	char buf[INFO_BUF];

	if (m->ic) {
		print_buf(out, buf, ioapic_info(m->ic->ioapic, buf, sizeof(buf)));
		return;
	}
	if (kvm_vm_get_irqchip(&m->vm, &chip) < 0) {
		fprintf(out, "KVM_GET_IRQCHIP failed\n");
		return;
	}
	for (unsigned i = 0; i < IOAPIC_NUM_PINS; i++)
		rte[i] = io->redirtbl[i].bits;
	print_buf(out, buf,
		  ioapic_format((uint8_t)io->id, (uint8_t)io->ioregsel, rte, io->irr, buf,
				sizeof(buf)));
}

void irqchip_info_lapic(void *opaque, const char *arg, FILE *out)
{
	struct machine *m = opaque;
	char *end, buf[INFO_BUF];
	unsigned long cpu = arg ? strtoul(arg, &end, 0) : 0;
	struct kvm_lapic_state st;
	struct kvm_sregs s;
	size_t n;

	if (arg && (*end || end == arg || cpu >= m->ncpus)) {
		fprintf(out, "Invalid CPU index '%s' (0-%u)\n", arg, m->ncpus - 1);
		return;
	}
	if (m->ic && m->ic->apics) {
		uint8_t page[LAPIC_PAGE_SIZE];
		struct lapic *a = apic_bus_cpu(m->ic->apics, (unsigned)cpu);

		lapic_copy_page(a, page);
		n = lapic_format(page, (unsigned)cpu, lapic_get_base(a) & (1u << 10), buf,
				 sizeof(buf));
		print_buf(out, buf, n);
		return;
	}
	machine_pause(m); /* vCPU ioctls wait for KVM_RUN to return */
	if (kvm_vcpu_get_lapic(&m->vcpus[cpu].kvm, &st) < 0 ||
	    kvm_vcpu_get_sregs(&m->vcpus[cpu].kvm, &s) < 0) {
		machine_resume(m);
		fprintf(out, "KVM_GET_LAPIC failed\n");
		return;
	}
	machine_resume(m);
	n = lapic_format((const uint8_t *)st.regs, (unsigned)cpu, s.apic_base & (1u << 10), buf,
			 sizeof(buf));
	print_buf(out, buf, n);
}

void irqchip_info_irq(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	if (!m->ic) {
		fprintf(out, "IRQ statistics not available with kernel_irqchip=on "
			     "(the in-kernel irqchip keeps no counts)\n");
		return;
	}
	fprintf(out, "IRQ statistics for isa-i8259:\n");
	for (unsigned i = 0; i < 16; i++) {
		uint64_t c = i8259_irq_count(m->ic->pic, i);

		if (c)
			fprintf(out, "%2u: %llu\n", i, (unsigned long long)c);
	}
	fprintf(out, "IRQ statistics for ioapic:\n");
	for (unsigned i = 0; i < IOAPIC_NUM_PINS; i++) {
		uint64_t c = ioapic_irq_count(m->ic->ioapic, i);

		if (c)
			fprintf(out, "%2u: %llu\n", i, (unsigned long long)c);
	}
}
