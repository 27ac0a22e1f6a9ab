/* runstate.c — what guest and host requests do to the machine (QEMU's
 * -action), the events QMP reports, host signals, and the exit status.
 *
 * Guest requests arrive on vCPU threads (a triple fault, a reset port, an
 * ACPI poweroff, a pvpanic write). The requesting vCPU must not run past
 * them, so they raise machine.hold, which parks every vCPU before its
 * next KVM_RUN, and hand the work to the main thread, which pauses,
 * acts, and releases the hold.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/isa/acpi_pm.h"
#include "devices/isa/pvpanic.h"
#include "devices/testdev/pc_testdev.h"
#include "vmm/machine.h"

static const char *const state_names[] = {
	[RUN_STATE_PAUSED] = "paused",	     [RUN_STATE_RUNNING] = "running",
	[RUN_STATE_PRELAUNCH] = "prelaunch", [RUN_STATE_DEBUG] = "debug",
	[RUN_STATE_SHUTDOWN] = "shutdown",   [RUN_STATE_GUEST_PANICKED] = "guest-panicked",
};

const char *run_state_name(enum run_state s)
{
	return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

enum run_state machine_run_state(const struct machine *m)
{
	return m->user_paused ? m->stop_state : RUN_STATE_RUNNING;
}

/* --------------------------------------------------------------- events */

int machine_add_listener(struct machine *m, machine_event_fn fn, void *opaque)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&m->event_lock);
	if (m->n_listeners < MACHINE_MAX_LISTENERS) {
		m->listeners[m->n_listeners].fn = fn;
		m->listeners[m->n_listeners++].opaque = opaque;
		ret = 0;
	}
	pthread_mutex_unlock(&m->event_lock);
	return ret;
}

void machine_event(struct machine *m, const char *name, const char *data_fmt, ...)
{
	char data[512] = "{}";
	va_list ap;

	if (data_fmt) {
		va_start(ap, data_fmt);
		vsnprintf(data, sizeof(data), data_fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&m->event_lock);
	for (unsigned i = 0; i < m->n_listeners; i++)
		m->listeners[i].fn(m->listeners[i].opaque, name, data);
	pthread_mutex_unlock(&m->event_lock);
}

/* ------------------------------------------------------------ the hold */

static void hold_vcpus(struct machine *m)
{
	atomic_store(&m->hold, 1);
}

/* Main thread, vCPUs paused: let them run again (at pause depth 0). */
static void release_vcpus(struct machine *m)
{
	pthread_mutex_lock(&m->lock);
	atomic_store(&m->hold, 0);
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------ shutdown */

static void exit_with(struct machine *m, int status, bool guest, const char *reason)
{
	machine_event(m, "SHUTDOWN", "{\"guest\": %s, \"reason\": \"%s\"}",
		      guest ? "true" : "false", reason);
	machine_request_exit(m, status);
}

struct guest_request {
	struct machine *m;
	const char *reason;
	unsigned events;
};

static struct guest_request pending_shutdown, pending_panic;

static void shutdown_on_main(void *opaque)
{
	struct guest_request *r = opaque;
	struct machine *m = r->m;

	if (atomic_load(&m->quit))
		return;
	if (m->cfg->control.shutdown == ACTION_SHUTDOWN_PAUSE) {
		machine_event(m, "SHUTDOWN", "{\"guest\": true, \"reason\": \"%s\"}", r->reason);
		machine_stop_for(m, RUN_STATE_SHUTDOWN);
		release_vcpus(m);
		return;
	}
	exit_with(m, VMM_EXIT_OK, true, r->reason);
}

void machine_guest_shutdown(struct machine *m, const char *reason)
{
	hold_vcpus(m);
	pending_shutdown = (struct guest_request){m, reason, 0};
	evloop_call(m->host.loop, shutdown_on_main, &pending_shutdown);
}

/* --------------------------------------------------------------- reset */

static void reset_on_main(void *opaque)
{
	struct machine *m = opaque;

	atomic_store(&m->reset_queued, false);
	if (atomic_load(&m->quit))
		return;
	machine_event(m, "RESET", "{\"guest\": true, \"reason\": \"guest-reset\"}");
	machine_system_reset(m);
	release_vcpus(m);
}

/* A triple fault, 0xcf9, the i8042 or port 0x92 (any thread). */
void machine_request_reset(struct machine *m)
{
	if (m->cfg->no_reboot || m->cfg->control.reboot == ACTION_REBOOT_SHUTDOWN) {
		/* As QEMU: the reset becomes a shutdown (-no-reboot exits 0). */
		machine_guest_shutdown(m, "guest-reset");
		return;
	}
	hold_vcpus(m);
	if (!atomic_exchange(&m->reset_queued, true)) /* several vCPUs at once: one reset */
		evloop_call(m->host.loop, reset_on_main, m);
}

void machine_host_reset(struct machine *m)
{
	enum run_state s = machine_run_state(m);

	machine_event(m, "RESET", "{\"guest\": false, \"reason\": \"host-qmp-system-reset\"}");
	machine_system_reset(m);
	/* A machine stopped by a shutdown or panic may run again once reset. */
	if (s == RUN_STATE_SHUTDOWN || s == RUN_STATE_GUEST_PANICKED)
		m->stop_state = RUN_STATE_PAUSED;
}

/* -------------------------------------------------------------- ACPI S3 */

static void suspend_on_main(void *opaque)
{
	struct machine *m = opaque;

	if (atomic_load(&m->quit))
		return;
	machine_pause(m);
	m->suspended = true;
	machine_event(m, "SUSPEND", NULL);
	release_vcpus(m); /* they stay parked: the pause holds them */
}

/* From the PM1a control write: no vCPU runs another instruction. */
void machine_guest_suspend(void *opaque)
{
	struct machine *m = opaque;

	hold_vcpus(m);
	evloop_call(m->host.loop, suspend_on_main, m);
}

void machine_rtc_alarm(void *opaque)
{
	struct machine *m = opaque;

	if (!m->suspended || !acpi_pm_rtc_wake(m->acpi_pm))
		return;
	m->suspended = false;
	machine_event(m, "WAKEUP", NULL);
	machine_s3_resume(m);
	machine_resume(m);
}

/* --------------------------------------------------------------- panic */

static void panic_on_main(void *opaque)
{
	struct guest_request *r = opaque;
	struct machine *m = r->m;
	enum action_panic a = m->cfg->control.panic;
	static const char *const qmp_action[] = {
		[ACTION_PANIC_SHUTDOWN] = "poweroff",
		[ACTION_PANIC_PAUSE] = "pause",
		[ACTION_PANIC_EXIT_FAILURE] = "poweroff",
		[ACTION_PANIC_NONE] = "run",
	};

	if (atomic_load(&m->quit))
		return;
	if (r->events & PVPANIC_CRASH_LOADED)
		machine_event(m, "GUEST_CRASHLOADED", "{\"action\": \"run\"}");
	if (!(r->events & PVPANIC_PANICKED)) {
		release_vcpus(m);
		return;
	}
	fprintf(stderr, "vmm: the guest reported a panic (pvpanic)\n");
	machine_event(m, "GUEST_PANICKED", "{\"action\": \"%s\"}", qmp_action[a]);
	switch (a) {
	case ACTION_PANIC_PAUSE:
		machine_stop_for(m, RUN_STATE_GUEST_PANICKED);
		break;
	case ACTION_PANIC_EXIT_FAILURE:
		exit_with(m, VMM_EXIT_GUEST_PANIC, true, "guest-panic");
		break;
	case ACTION_PANIC_SHUTDOWN: /* then the shutdown action, as QEMU */
		pending_shutdown = (struct guest_request){m, "guest-panic", 0};
		shutdown_on_main(&pending_shutdown);
		break;
	case ACTION_PANIC_NONE:
		break;
	}
	release_vcpus(m);
}

void machine_guest_panic(struct machine *m, unsigned pvpanic_events)
{
	hold_vcpus(m);
	pending_panic = (struct guest_request){m, NULL, pvpanic_events};
	evloop_call(m->host.loop, panic_on_main, &pending_panic);
}

/* ------------------------------------------------------- host requests */

void machine_fail(struct machine *m)
{
	machine_request_exit(m, VMM_EXIT_FAILURE);
}

void machine_host_quit(struct machine *m, const char *reason)
{
	exit_with(m, VMM_EXIT_OK, false, reason);
}

void machine_host_powerdown(struct machine *m)
{
	machine_event(m, "POWERDOWN", NULL);
	acpi_pm_power_button(m->acpi_pm, ACPI_SCI_IRQ);
}

/* ------------------------------------------------------------- signals */

static void on_signal(void *opaque, int fd, unsigned events)
{
	struct machine *m = opaque;
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	fprintf(stderr, "vmm: terminating on signal %u\n", si.ssi_signo);
	machine_host_quit(m, "host-signal");
}

int machine_control_init(struct machine *m, char *err, size_t errlen)
{
	sigset_t set;

	pthread_mutex_init(&m->event_lock, NULL);
	m->stop_state = m->cfg->start_paused || m->cfg->incoming ? RUN_STATE_PRELAUNCH : RUN_STATE_PAUSED;
	/* Blocked before any vCPU thread exists, so every thread inherits the
	 * mask and the signals arrive only through the signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	m->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (m->signal_fd < 0 ||
	    evloop_add_fd(m->host.loop, m->signal_fd, EV_READ, on_signal, m) < 0) {
		snprintf(err, errlen, "signalfd: %m");
		return -1;
	}
	return 0;
}

void machine_control_destroy(struct machine *m)
{
	if (m->signal_fd > 0) {
		evloop_del_fd(m->host.loop, m->signal_fd);
		close(m->signal_fd);
	}
	pvpanic_free(m->pvpanic);
	pc_testdev_free(m->pc_testdev);
}
