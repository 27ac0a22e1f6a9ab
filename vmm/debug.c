/* debug.c — guest debugging: hardware breakpoints and watchpoints (debug
 * registers), INT3 to the VMM for the gdbstub's software breakpoints, and
 * single step driven from the monitor (`break`, `delete`, `stepi`), and
 * what a KVM_EXIT_DEBUG does: the whole machine stops as at `stop`, with
 * one line on stderr saying which vCPU stopped where and why; `info
 * registers`, `x` and `cont` then work as usual.
 *
 * Threads: the monitor functions run on the main thread; vcpu_debug_exit()
 * on the vCPU thread that took the exit. The breakpoint list is main-thread
 * state, written into KVM (KVM_SET_GUEST_DEBUG) with the vCPUs paused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/backends.h"
#include "vmm/machine.h"

#define DR6_BS (1ull << 14) /* single step */
#define STEP_TIMEOUT_S 2

/* Write the breakpoints and the single-step flag into every vCPU. While
 * one steps, no vCPU has breakpoints: the step must leave a breakpoint it
 * stands on (RF is not honoured by every host's emulated ring 0). */
static int apply(struct machine *m)
{
	struct machine_debug *d = &m->debug;
	unsigned n = d->step_cpu >= 0 ? 0 : d->n_bp;
	struct kvm_hw_bp bps[MACHINE_MAX_BREAKPOINTS];
	int ret = 0;

	for (unsigned i = 0; i < n; i++)
		bps[i] = (struct kvm_hw_bp){d->bp[i], d->bp_type[i], d->bp_len[i]};
	machine_pause(m);
	for (unsigned i = 0; i < m->ncpus && !ret; i++)
		ret = kvm_vcpu_set_guest_debug(&m->vcpus[i].kvm,
					       (d->step_cpu == (int)i ? KVM_DEBUG_STEP : 0) |
						       (d->sw_bp ? KVM_DEBUG_SW_BP : 0),
					       bps, n);
	machine_resume(m);
	return ret;
}

static void describe_stop(const struct vcpu *v, char *buf, size_t len)
{
	if (v->debug_exception == 3) {
		snprintf(buf, len, "software breakpoint");
		return;
	}
	if (v->debug_dr6 & DR6_BS) {
		snprintf(buf, len, "single step");
		return;
	}
	for (unsigned i = 0; i < MACHINE_MAX_BREAKPOINTS; i++) {
		if (v->debug_dr6 & (1ull << i)) {
			snprintf(buf, len, "%s %u",
				 v->m->debug.bp_type[i] == KVM_HW_BP_EXEC ? "breakpoint"
									  : "watchpoint",
				 i);
			return;
		}
	}
	snprintf(buf, len, "debug exception, DR6 %#llx", (unsigned long long)v->debug_dr6);
}

/* Main thread: turn a vCPU's debug exit into a user stop, once; say why
 * unless quiet (the step over a breakpoint at `cont`). */
static void take_stop(struct vcpu *v, bool quiet)
{
	struct machine *m = v->m;
	char why[64];
	bool pending;

	pthread_mutex_lock(&m->lock);
	pending = v->debug_stop_pending;
	v->debug_stop_pending = false;
	pthread_mutex_unlock(&m->lock);
	if (!pending)
		return;
	m->debug.last_stop_cpu = v->index;
	machine_stop_for(m, RUN_STATE_DEBUG);
	if (m->debug.step_cpu >= 0) {
		m->debug.step_cpu = -1;
		apply(m);
	}
	if (quiet)
		return;
	describe_stop(v, why, sizeof(why));
	fprintf(stderr, "vmm: vCPU %u stopped at %#llx (%s)\n", v->index,
		(unsigned long long)v->debug_pc, why);
}

static void take_stop_on_main(void *opaque)
{
	take_stop(opaque, false);
}

void vcpu_debug_exit(struct vcpu *v)
{
	struct machine *m = v->m;
	const struct kvm_debug_exit_arch *a = &v->kvm.run->debug.arch;

	pthread_mutex_lock(&m->lock);
	v->debug_pc = a->pc;
	v->debug_dr6 = a->exception == 3 ? 0 : a->dr6;
	v->debug_exception = a->exception;
	v->debug_stop_pending = true;
	pthread_cond_broadcast(&m->cond); /* a waiting stepi */
	pthread_mutex_unlock(&m->lock);
	evloop_call(m->host.loop, take_stop_on_main, v);
	/* Not back into KVM_RUN before the main thread has stopped the
	 * machine: the guest must not run past the stop. */
	pthread_mutex_lock(&m->lock);
	while (!atomic_load(&m->pause_req) && !atomic_load(&m->quit))
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static bool same_bp(const struct machine_debug *d, unsigned i, uint64_t addr, unsigned len,
		    enum kvm_hw_bp_type type)
{
	return d->bp[i] == addr && d->bp_len[i] == len && d->bp_type[i] == type;
}

/* A debug register for addr/len/type: its index or -errno. */
static int hw_insert(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type)
{
	struct machine_debug *d = &m->debug;
	unsigned i = d->n_bp;

	for (unsigned j = 0; j < d->n_bp; j++)
		if (same_bp(d, j, addr, len, type))
			return (int)j;
	if (d->n_bp == MACHINE_MAX_BREAKPOINTS)
		return -ENOSPC;
	d->bp[i] = addr;
	d->bp_len[i] = len;
	d->bp_type[i] = type;
	d->n_bp++;
	if (apply(m) < 0) {
		d->n_bp--;
		apply(m);
		return type == KVM_HW_BP_EXEC ? -EIO : -EINVAL;
	}
	return (int)i;
}

/* Remove the matching ones (every one with all): 0 or -ENOENT. */
static int hw_remove(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type,
		     bool all)
{
	struct machine_debug *d = &m->debug;
	unsigned kept = 0, before = d->n_bp;

	for (unsigned i = 0; i < d->n_bp; i++)
		if (!all && !same_bp(d, i, addr, len, type)) {
			d->bp[kept] = d->bp[i];
			d->bp_len[kept] = d->bp_len[i];
			d->bp_type[kept++] = d->bp_type[i];
		}
	d->n_bp = kept;
	if (kept == before)
		return -ENOENT;
	return apply(m);
}

int machine_break_insert(struct machine *m, uint64_t addr)
{
	return hw_insert(m, addr, 1, KVM_HW_BP_EXEC);
}

int machine_break_remove(struct machine *m, uint64_t addr, bool all)
{
	return hw_remove(m, addr, 1, KVM_HW_BP_EXEC, all);
}

int machine_watch_insert(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type)
{
	if (type == KVM_HW_BP_EXEC || (len != 1 && len != 2 && len != 4 && len != 8) || addr % len)
		return -EINVAL;
	return hw_insert(m, addr, len, type);
}

int machine_watch_remove(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type)
{
	return hw_remove(m, addr, len, type, false);
}

int machine_debug_set_sw_bp(struct machine *m, bool on)
{
	if (m->debug.sw_bp == on)
		return 0;
	m->debug.sw_bp = on;
	return apply(m);
}

/* Wait (bounded) for the stepping vCPU's debug exit. */
static bool wait_step(struct machine *m, struct vcpu *v)
{
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STEP_TIMEOUT_S;
	pthread_mutex_lock(&m->lock);
	while (!v->debug_stop_pending && !atomic_load(&m->quit))
		if (pthread_cond_timedwait(&m->cond, &m->lock, &until))
			break;
	done = v->debug_stop_pending;
	pthread_mutex_unlock(&m->lock);
	return done;
}

/* Stopped machine: let vCPU cpu run one instruction (the others run
 * meanwhile too) and stop again. */
static int step_one(struct machine *m, unsigned cpu, bool quiet)
{
	struct vcpu *v = &m->vcpus[cpu];
	int ret;

	m->debug.step_cpu = (int)cpu;
	ret = apply(m);
	if (ret < 0) {
		m->debug.step_cpu = -1;
		apply(m);
		return ret;
	}
	machine_user_cont(m);
	if (!wait_step(m, v)) {
		machine_user_stop(m);
		m->debug.step_cpu = -1;
		apply(m);
		return -ETIMEDOUT;
	}
	take_stop(v, quiet);
	return 0;
}

/* A vCPU stopped on a breakpoint would hit it again at once: step it off
 * first with the breakpoints out. */
void machine_debug_cont(struct machine *m)
{
	if (!m->user_paused)
		return;
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct vcpu *v = &m->vcpus[i];
		struct kvm_regs r;

		if ((v->debug_dr6 & 0xf) && kvm_vcpu_get_regs(&v->kvm, &r) == 0 &&
		    r.rip == v->debug_pc)
			step_one(m, i, true);
		v->debug_dr6 = 0;
		v->debug_exception = 0;
	}
	machine_user_cont(m);
}

int machine_step_cpu(struct machine *m, unsigned cpu, uint64_t *pc)
{
	int ret;

	if (!m->user_paused)
		return -EBUSY;
	ret = step_one(m, cpu, false);
	if (ret == 0)
		*pc = m->vcpus[cpu].debug_pc;
	return ret;
}

int machine_stepi(struct machine *m, uint64_t *pc)
{
	return machine_step_cpu(m, 0, pc);
}
