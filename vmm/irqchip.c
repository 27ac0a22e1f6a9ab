/* irqchip.c — -machine kernel_irqchip=on|split|off: where the interrupt
 * controllers live, and the glue between the userspace models
 * (devices/intc/i8259.c, ioapic.c, i8254.c) and KVM.
 *
 * on:    KVM_CREATE_IRQCHIP + KVM_CREATE_PIT2 (machine.c); nothing here.
 * split: KVM_CAP_SPLIT_IRQCHIP: the local APICs stay in KVM. The I/O APIC
 *        sends its messages with KVM_SIGNAL_MSI and mirrors its
 *        redirection table into GSI routes 0-23, from which KVM learns
 *        the level-triggered vectors whose EOI it reports
 *        (KVM_EXIT_IOAPIC_EOI). The PIC reaches vCPU 0 as an ExtINT:
 *        KVM_INTERRUPT when run->ready_for_interrupt_injection, else
 *        request_interrupt_window and try again on the exit it causes.
 * off:   as split, with the local APICs in vmm too (irqchip_off.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/pci/pci.h"
#include "devices/timer/i8254.h"
#include "state/state.h"
#include "vmm/irqchip.h"
#include "vmm/machine.h"

static const char *const mode_names[] = {"on", "split", "off"};

/* The ISA interrupt lines: GSI n is PIC IRQ n (n < 16) and I/O APIC pin
 * n, as with KVM's default routing in kernel_irqchip=on. */
static void split_set_level(void *opaque, unsigned gsi, bool level)
{
	struct vmm_irqchip *ic = opaque;

	if (gsi < 16)
		i8259_set_irq(ic->pic, gsi, level);
	ioapic_set_irq(ic->ioapic, gsi, level);
}

static void split_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct vmm_irqchip *ic = opaque;

	kvm_vm_signal_msi(&ic->m->vm, addr, data);
}

/* The PIC's INTR rose: vCPU 0 injects it before its next KVM_RUN. */
static void pic_intr_changed(void *opaque)
{
	struct vmm_irqchip *ic = opaque;
	struct vcpu *bsp = &ic->m->vcpus[0];

	if (!i8259_intr(ic->pic))
		return;
	/* On vCPU 0's own thread irqchip_pre_run comes anyway. */
	if (bsp->started && pthread_equal(pthread_self(), bsp->thread.id))
		return;
	vcpu_kick(bsp);
}

/* Mirror the redirection table into GSI routes 0-23 (all pins, masked
 * ones too: a vector masked while its EOI is pending must still exit). */
static void ioapic_routes_changed(void *opaque)
{
	struct vmm_irqchip *ic = opaque;
	uint64_t addr[IOAPIC_NUM_PINS];
	uint32_t data[IOAPIC_NUM_PINS];
	int r;

	for (unsigned pin = 0; pin < IOAPIC_NUM_PINS; pin++) {
		bool masked;

		ioapic_pin_msi(ic->ioapic, pin, &addr[pin], &data[pin], &masked);
		/* a remappable-format entry: KVM must see the IRTE's vector */
		if (ic->m->iommu)
			intel_iommu_remap_msi(ic->m->iommu, PCI_SID_UNKNOWN, &addr[pin], &data[pin],
					      false);
	}
	r = kvm_vm_set_ioapic_routes(&ic->m->vm, addr, data);
	if (r < 0 && !ic->route_error_logged) {
		ic->route_error_logged = true;
		fprintf(stderr, "vmm: KVM_SET_GSI_ROUTING: %s (level-triggered EOIs may be lost)\n",
			strerror(-r));
	}
}

void irqchip_ir_changed(void *opaque)
{
	struct vmm_irqchip *ic = opaque;

	if (ic->mode == IRQCHIP_SPLIT)
		ioapic_routes_changed(ic);
}

/* ------------------------------------------------------------ creation */

int irqchip_init_vm(struct machine *m, char *err, size_t errlen)
{
	enum irqchip_mode mode = m->cfg->irqchip;
	int r;

	if (mode == IRQCHIP_ON)
		return 0;
	m->ic = calloc(1, sizeof(*m->ic));
	if (!m->ic) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	m->ic->m = m;
	m->ic->mode = mode;
	if (mode == IRQCHIP_OFF) {
		irqchip_off_init_vm(m->ic);
		return 0;
	}
	if (kvm_check_cap(&m->sys, KVM_CAP_SPLIT_IRQCHIP) <= 0) {
		snprintf(err, errlen,
			 "-machine kernel_irqchip=split: KVM lacks KVM_CAP_SPLIT_IRQCHIP");
		return -1;
	}
	r = kvm_vm_enable_split_irqchip(&m->vm, IOAPIC_NUM_PINS);
	if (r < 0) {
		snprintf(err, errlen,
			 "-machine kernel_irqchip=split: KVM_ENABLE_CAP(SPLIT_IRQCHIP): %s",
			 strerror(-r));
		return -1;
	}
	return 0;
}

int irqchip_init_devices(struct machine *m, char *err, size_t errlen)
{
	struct vmm_irqchip *ic = m->ic;

	if (!ic)
		return 0;
	ic->pic = i8259_new(&m->host, pic_intr_changed, ic);
	ic->ioapic = ioapic_new(&m->host, IOAPIC_BASE);
	if (!m->cfg->no_pit)
		ic->pit = i8254_new(&m->host, NULL);
	if (!ic->pic || !ic->ioapic || (!m->cfg->no_pit && !ic->pit)) {
		snprintf(err, errlen, "kernel_irqchip=%s: cannot create the PIC, I/O APIC or PIT",
			 mode_names[ic->mode]);
		return -1;
	}
	m->host.irq = (struct irq_sink){split_set_level, split_msi, ic};
	if (ic->mode == IRQCHIP_OFF) {
		if (irqchip_off_init(ic, err, errlen) < 0)
			return -1;
		m->host.irq.msi = irqchip_off_msi;
	}
	if (ic->mode == IRQCHIP_SPLIT) {
		ioapic_set_routes_changed(ic->ioapic, ioapic_routes_changed, ic);
		ioapic_routes_changed(ic);
	}
	return 0;
}

void irqchip_destroy(struct machine *m)
{
	struct vmm_irqchip *ic = m->ic;

	if (!ic)
		return;
	irqchip_off_destroy(ic);
	i8254_free(ic->pit);
	ioapic_free(ic->ioapic);
	i8259_free(ic->pic);
	free(ic);
	m->ic = NULL;
}

/* ----------------------------------------------------------- vCPU side */

bool irqchip_pre_run(struct vcpu *v)
{
	struct vmm_irqchip *ic = v->m->ic;
	struct kvm_run *run = v->kvm.run;
	int r;

	if (ic->mode == IRQCHIP_OFF)
		return irqchip_off_pre_run(v);
	if (v->index != 0)
		return true;
	if (!i8259_intr(ic->pic)) {
		run->request_interrupt_window = 0;
		return true;
	}
	if (!run->ready_for_interrupt_injection) {
		run->request_interrupt_window = 1;
		return true;
	}
	r = kvm_vcpu_interrupt(&v->kvm, (unsigned)i8259_ack(ic->pic));
	if (r < 0 && !ic->inject_error_logged) {
		ic->inject_error_logged = true;
		fprintf(stderr, "vmm: vCPU 0: KVM_INTERRUPT: %s\n", strerror(-r));
	}
	run->request_interrupt_window = i8259_intr(ic->pic);
	return true;
}

void irqchip_post_run(struct vcpu *v)
{
	if (v->m->ic->mode == IRQCHIP_OFF)
		irqchip_off_post_run(v);
}

bool irqchip_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;
	struct vmm_irqchip *ic = v->m->ic;

	switch (run->exit_reason) {
	case KVM_EXIT_IRQ_WINDOW_OPEN: /* irqchip_pre_run injects now */
	case KVM_EXIT_SET_TPR:	       /* CR8 lowered (off): pre_run syncs the TPR */
		return true;
	case KVM_EXIT_IOAPIC_EOI:
		ioapic_eoi(ic->ioapic, run->eoi.vector);
		return true;
	case KVM_EXIT_HLT:
		if (ic->mode == IRQCHIP_OFF)
			irqchip_off_hlt(v);
		return true;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		if (ic->mode != IRQCHIP_OFF)
			return false;
		irqchip_off_msr(v);
		return true;
	default:
		return false;
	}
}

/* ------------------------------------------------------------ snapshot */

#define IRQCHIP_STATE_VERSION 1

int irqchip_save(struct machine *m, struct state_writer *w, char *err, size_t errlen)
{
	struct vmm_irqchip *ic = m->ic;

	(void)err;
	(void)errlen;
	if (!ic)
		return 0;
	state_begin(w, "irqchip", IRQCHIP_STATE_VERSION);
	state_put_u8(w, "mode", (uint8_t)ic->mode);
	state_put_u8(w, "pit", ic->pit != NULL);
	i8259_save(ic->pic, w);
	ioapic_save(ic->ioapic, w);
	if (ic->pit)
		i8254_save(ic->pit, w);
	if (ic->mode == IRQCHIP_OFF)
		irqchip_off_save(ic, w);
	state_end(w);
	return 0;
}

int irqchip_load(struct machine *m, const struct state_reader *root, char *err, size_t errlen)
{
	struct vmm_irqchip *ic = m->ic;
	struct state_reader r;
	struct state_node n;
	uint8_t mode = 0;
	bool pit = false;

	/* mode on: /kvm said whether the stream has KVM's chips (cpu_state.c) */
	if (!ic)
		return 0;
	if (state_node_open(&n, root, "irqchip", IRQCHIP_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u8_max(&n, "mode", IRQCHIP_OFF, &mode) || state_get_bool(&n, "pit", &pit))
		return -1;
	if (mode != ic->mode || pit != (ic->pit != NULL))
		return state_node_fail(&n, "saved with kernel_irqchip=%s%s; this machine has %s%s",
				       mode_names[mode], pit ? "" : ", pit=off",
				       mode_names[ic->mode], ic->pit ? "" : ", pit=off");
	if (state_node_close(&n) < 0 || state_reader_sub(root, "irqchip", &r, err, errlen) < 0)
		return -1;
	if (i8259_load(ic->pic, &r, err, errlen) < 0 || ioapic_load(ic->ioapic, &r, err, errlen) < 0 ||
	    (ic->pit && i8254_load(ic->pit, &r, err, errlen) < 0))
		return -1;
	if (ic->mode == IRQCHIP_OFF)
		return irqchip_off_load(ic, &r, err, errlen);
	return 0;
}
