/* vcpu.c — the vCPU thread: KVM_RUN and exit dispatch.
 *
 * The hot path (an I/O or MMIO exit) is KVM_RUN, atomic loads of the quit
 * and pause flags, one atomic add in the exit counters and a bisection of
 * the bus under its (uncontended) read lock: no allocation, no clock read,
 * no other system call (strace of pio-loop.elf shows only KVM_RUN), so an
 * exit costs what the raw loop's does (bench/core-pio.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/isa/pvpanic.h"
#include "vmm/exit_stats.h"
#include "vmm/machine.h"
#include "vmm/sandbox.h"

/* Park until the main thread resumes the machine (or it quits). */
static void park(struct vcpu *v)
{
	struct machine *m = v->m;

	pthread_mutex_lock(&m->lock);
	m->n_parked++;
	pthread_cond_broadcast(&m->cond);
	while ((atomic_load(&m->pause_req) || atomic_load(&m->hold)) && !atomic_load(&m->quit))
		pthread_cond_wait(&m->cond, &m->lock);
	m->n_parked--;
	v->kvm.run->immediate_exit = 0;
	pthread_mutex_unlock(&m->lock);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Auto-converge: once per slice, sleep pct/(100-pct) of a slice. On the
 * machine's condition, so that a pause (the migration's final pass), a
 * quit or the throttle's end wakes it at once. */
static void throttle(struct vcpu *v, unsigned pct)
{
	struct machine *m = v->m;
	uint64_t now = mono_ns(), ns;
	struct timespec until;

	if (now < v->throttle_at)
		return;
	ns = VCPU_THROTTLE_SLICE_NS * (pct > 99 ? 99 : pct) / (100 - (pct > 99 ? 99 : pct));
	clock_gettime(CLOCK_REALTIME, &until); /* m->cond's clock */
	until.tv_sec += (time_t)((until.tv_nsec + ns) / 1000000000ull);
	until.tv_nsec = (long)((until.tv_nsec + ns) % 1000000000ull);
	pthread_mutex_lock(&m->lock);
	while (atomic_load(&m->throttle_pct) && !atomic_load(&m->pause_req) &&
	       !atomic_load(&m->hold) && !atomic_load(&m->quit))
		if (pthread_cond_timedwait(&m->cond, &m->lock, &until))
			break;
	pthread_mutex_unlock(&m->lock);
	v->throttle_at = mono_ns() + VCPU_THROTTLE_SLICE_NS;
}

static void handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	struct iobus *bus = v->m->host.pio;

	exit_stats_io(run->io.port, run->io.direction == KVM_EXIT_IO_OUT, run->io.count);
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_OUT)
			iobus_write(bus, run->io.port, data, run->io.size);
		else
			iobus_read(bus, run->io.port, data, run->io.size);
	}
}

static void handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;

	exit_stats_mmio(run->mmio.phys_addr, run->mmio.is_write);
	if (run->mmio.is_write)
		iobus_write(v->m->host.mmio, run->mmio.phys_addr, run->mmio.data, run->mmio.len);
	else
		iobus_read(v->m->host.mmio, run->mmio.phys_addr, run->mmio.data, run->mmio.len);
}

static void fatal(struct vcpu *v, const char *what)
{
	fprintf(stderr, "vmm: vCPU %u: %s; stopping the VM\n", v->index, what);
	vcpu_dump_state(v, stderr);
	machine_fail(v->m);
}

static void handle_internal_error(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;
	char what[96];

	if (run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION) {
		if (vcpu_emulation_fallback(v))
			return;
		fatal(v, "KVM cannot emulate an instruction (emulation failure)");
		return;
	}
	snprintf(what, sizeof(what), "KVM internal error, suberror %u", run->internal.suberror);
	fatal(v, what);
}

static void handle_system_event(struct vcpu *v)
{
	switch (v->kvm.run->system_event.type) {
	case KVM_SYSTEM_EVENT_RESET:
		machine_request_reset(v->m);
		break;
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		machine_guest_shutdown(v->m, "guest-shutdown");
		break;
	case KVM_SYSTEM_EVENT_CRASH:
		machine_guest_panic(v->m, PVPANIC_PANICKED);
		break;
	default:
		fatal(v, "guest crashed (system event)");
	}
}

/* Returns false when the thread should stop running the guest. */
static bool dispatch(struct vcpu *v)
{
	struct kvm_run *run = v->kvm.run;
	char what[96];

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(v);
		return true;
	case KVM_EXIT_MMIO:
		handle_mmio(v);
		return true;
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_HLT: /* only without an in-kernel LAPIC (irqchip.c) */
		if (v->m->ic)
			irqchip_handle_exit(v);
		return true;
	case KVM_EXIT_SHUTDOWN:
		/* A triple fault: the PC resets (or exits with -no-reboot). */
		fprintf(stderr, "vmm: vCPU %u: triple fault (reset)\n", v->index);
		machine_request_reset(v->m);
		return true;
	case KVM_EXIT_SYSTEM_EVENT:
		handle_system_event(v);
		return true;
	case KVM_EXIT_INTERNAL_ERROR:
		handle_internal_error(v);
		return true;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(what, sizeof(what), "VM entry failed (hardware reason %#llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		fatal(v, what);
		return false;
	case KVM_EXIT_DEBUG: /* a breakpoint or single step set by the monitor */
		vcpu_debug_exit(v);
		return true;
	default:
		if (v->m->ic && irqchip_handle_exit(v))
			return true;
		snprintf(what, sizeof(what), "unexpected exit %s (%u)", kvm_exit_name(run->exit_reason),
			 run->exit_reason);
		fatal(v, what);
		return false;
	}
}

/* Exits whose operation KVM completes only when KVM_RUN is entered again
 * (its API documentation, "KVM_RUN"): until then RAX lacks an IN's value,
 * RIP still points at an OUT or a WRMSR, and nothing of it is in the state
 * userspace can read. */
static bool completes_on_entry(uint32_t reason)
{
	return reason == KVM_EXIT_IO || reason == KVM_EXIT_MMIO || reason == KVM_EXIT_X86_RDMSR ||
	       reason == KVM_EXIT_X86_WRMSR;
}

/* After KVM_RUN returned an exit: handle it, and note whether KVM still
 * owes its completion. Returns false when the thread should stop. */
static bool handle_exit(struct vcpu *v)
{
	if (v->m->ic)
		irqchip_post_run(v);
	if (!dispatch(v))
		return false;
	v->owes_completion = completes_on_entry(v->kvm.run->exit_reason);
	return true;
}

/* Before parking: enter KVM once with immediate_exit set, so that KVM
 * finishes the last exit's operation and runs no guest instruction. A
 * state saved at the park (a migration, the monitor's registers) is then
 * whole: a destination would otherwise execute the OUT, the WRMSR (an
 * x2APIC EOI) or the MMIO read a second time, and an IN's value the device
 * already gave would be lost. The operation can need another exit (the
 * next part of a string I/O, an MMIO access split in two): dispatched as
 * usual, and this goes on until KVM has nothing left. Returns false when
 * the thread should stop. */
static bool complete_exit(struct vcpu *v)
{
	int ret;

	v->kvm.run->immediate_exit = 1;
	ret = kvm_vcpu_run(&v->kvm);
	v->owes_completion = false;
	return ret < 0 || handle_exit(v); /* -EINTR: done */
}

void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct machine *m = v->m;
	char name[16];

	v->tid = (pid_t)syscall(SYS_gettid);
	snprintf(name, sizeof(name), "vcpu%u", v->index);
	prctl(PR_SET_NAME, name);
	if (m->cfg->control.sandbox.on && sandbox_enter_vcpu(v->kvm.fd, v->kvm.vm->fd) < 0) {
		machine_fail(m);
		return NULL;
	}
	while (!atomic_load_explicit(&m->quit, memory_order_relaxed)) {
		int ret;

		if (atomic_load_explicit(&m->pause_req, memory_order_acquire) ||
		    atomic_load_explicit(&m->hold, memory_order_acquire)) {
			if (!v->owes_completion)
				park(v);
			else if (!complete_exit(v))
				break;
			continue;
		}
		if (m->ic && !irqchip_pre_run(v))
			continue;
		if (atomic_load_explicit(&m->throttle_pct, memory_order_relaxed))
			throttle(v, atomic_load(&m->throttle_pct));
		ret = kvm_vcpu_run(&v->kvm);
		if (ret == -EINTR || ret == -EAGAIN) {
			v->kvm.run->immediate_exit = 0;
			continue;
		}
		if (ret < 0) {
			fprintf(stderr, "vmm: vCPU %u: KVM_RUN: %s\n", v->index, strerror(-ret));
			vcpu_dump_state(v, stderr);
			machine_fail(m);
			break;
		}
		if (!handle_exit(v))
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------ state dump */

int vcpu_translate(struct vcpu *v, uint64_t gva, uint64_t *gpa)
{
	struct kvm_sregs s;
	struct paging_mode pm;
	int ret = kvm_vcpu_get_sregs(&v->kvm, &s);

	if (ret < 0)
		return ret;
	pm = (struct paging_mode){s.cr0, s.cr3, s.cr4, s.efer};
	return page_walk(&v->m->mem, &pm, gva, gpa);
}

static void dump_seg(FILE *out, const char *name, const struct kvm_segment *s)
{
	unsigned flags = (unsigned)s->type << 8 | (unsigned)s->s << 12 | (unsigned)s->dpl << 13 |
			 (unsigned)s->present << 15 | (unsigned)s->avl << 20 | (unsigned)s->l << 21 |
			 (unsigned)s->db << 22 | (unsigned)s->g << 23;

	fprintf(out, "%-3s=%04x %016llx %08x %08x\n", name, s->selector,
		(unsigned long long)s->base, s->limit, flags);
}

/* The registers in the layout of QEMU's `info registers`. */
static void dump_regs(FILE *out, const struct kvm_regs *r, const struct kvm_sregs *s)
{
	fprintf(out, "RAX=%016llx RBX=%016llx RCX=%016llx RDX=%016llx\n", r->rax, r->rbx, r->rcx,
		r->rdx);
	fprintf(out, "RSI=%016llx RDI=%016llx RBP=%016llx RSP=%016llx\n", r->rsi, r->rdi, r->rbp,
		r->rsp);
	fprintf(out, "R8 =%016llx R9 =%016llx R10=%016llx R11=%016llx\n", r->r8, r->r9, r->r10,
		r->r11);
	fprintf(out, "R12=%016llx R13=%016llx R14=%016llx R15=%016llx\n", r->r12, r->r13, r->r14,
		r->r15);
	fprintf(out, "RIP=%016llx RFL=%08llx CPL=%u\n", r->rip, r->rflags, s->cs.dpl);
	dump_seg(out, "ES", &s->es);
	dump_seg(out, "CS", &s->cs);
	dump_seg(out, "SS", &s->ss);
	dump_seg(out, "DS", &s->ds);
	dump_seg(out, "FS", &s->fs);
	dump_seg(out, "GS", &s->gs);
	dump_seg(out, "LDT", &s->ldt);
	dump_seg(out, "TR", &s->tr);
	fprintf(out, "GDT=     %016llx %08x\n", (unsigned long long)s->gdt.base, s->gdt.limit);
	fprintf(out, "IDT=     %016llx %08x\n", (unsigned long long)s->idt.base, s->idt.limit);
	fprintf(out, "CR0=%08llx CR2=%016llx CR3=%016llx CR4=%08llx\n", s->cr0, s->cr2, s->cr3,
		s->cr4);
	fprintf(out, "EFER=%016llx APIC_BASE=%016llx\n", s->efer, s->apic_base);
}

static void dump_code(struct vcpu *v, FILE *out, const struct kvm_regs *r,
		      const struct kvm_sregs *s)
{
	const struct kvm_run *run = v->kvm.run;
	uint8_t bytes[16];
	unsigned n = 0;
	uint64_t gpa;

	if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR &&
	    run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION &&
	    (run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES)) {
		n = run->emulation_failure.insn_size;
		if (n > sizeof(bytes))
			n = sizeof(bytes);
		memcpy(bytes, run->emulation_failure.insn_bytes, n);
	} else {
		uint64_t lin = s->cs.base + r->rip;
		struct paging_mode pm = {s->cr0, s->cr3, s->cr4, s->efer};

		for (; n < sizeof(bytes); n++)
			if (page_walk(&v->m->mem, &pm, lin + n, &gpa) < 0 ||
			    guest_mem_read(&v->m->mem, gpa, &bytes[n], 1) < 0)
				break;
	}
	fprintf(out, "Code at CS:RIP %04x:%016llx:", s->cs.selector, r->rip);
	if (!n)
		fprintf(out, " (not in guest RAM)");
	for (unsigned i = 0; i < n; i++)
		fprintf(out, " %02x", bytes[i]);
	fprintf(out, "\n");
}

void vcpu_dump_state(struct vcpu *v, FILE *out)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (kvm_vcpu_get_regs(&v->kvm, &r) < 0 || kvm_vcpu_get_sregs(&v->kvm, &s) < 0) {
		fprintf(out, "vCPU %u: registers unavailable\n", v->index);
		return;
	}
	fprintf(out, "vCPU %u state:\n", v->index);
	dump_regs(out, &r, &s);
	dump_code(v, out, &r, &s);
}

/* ------------------------------------------------------- linear memory */

static int access_linear(struct vcpu *v, uint64_t linear, uint8_t *buf, size_t n, bool write)
{
	/* Page by page: contiguous linear pages need not be contiguous in
	 * guest physical memory. */
	while (n) {
		size_t chunk = 4096 - (linear & 4095);
		uint64_t gpa;

		if (chunk > n)
			chunk = n;
		if (vcpu_translate(v, linear, &gpa) < 0 ||
		    (write ? guest_mem_write(&v->m->mem, gpa, buf, chunk)
			   : guest_mem_read(&v->m->mem, gpa, buf, chunk)) < 0)
			return -1;
		linear += chunk;
		buf += chunk;
		n -= chunk;
	}
	return 0;
}

int vcpu_read_linear(struct vcpu *v, uint64_t linear, void *buf, size_t n)
{
	return access_linear(v, linear, buf, n, false);
}

int vcpu_write_linear(struct vcpu *v, uint64_t linear, const void *buf, size_t n)
{
	return access_linear(v, linear, (uint8_t *)buf, n, true);
}
