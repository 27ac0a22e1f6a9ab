/* sandbox.c — -chroot, -runas and -sandbox on.
 *
 * The allow-lists are what vmm does once the machine is built: the main
 * thread's event loop (monitor, QMP, gdbstub, chardevs, timers), the
 * virtio I/O threads (block I/O, eventfds) and the vCPU threads. Set-up
 * (opening /dev/kvm, images, sockets, creating VMs) is over before they are
 * installed, so what it alone needs is not on them. The process list goes
 * to every thread (SECCOMP_FILTER_FLAG_TSYNC); each vCPU thread stacks a
 * narrower one on top (filters only ever narrow). QEMU's groups
 * (obsolete, elevateprivileges, spawn, resourcecontrol) add their calls
 * when allowed.
 *
 * A call off the list traps (SECCOMP_RET_TRAP): the SIGSYS handler names
 * it on stderr and ends the process with status 128 + SIGSYS, as the
 * signal would; a silent kill would leave users guessing. clone3 fails
 * with ENOSYS instead: its flags are out of seccomp's reach, and glibc
 * falls back to clone, whose flags are checked.
 */
#include <errno.h>
#include <grp.h>
#include <linux/if_tun.h>
#include <linux/kvm.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "vmm/sandbox.h"

#define MAX_SYSCALL_NR 512

/* Who may make a call: every thread, or not the vCPU threads. */
enum { ALL = 1, NOT_VCPU = 2 };

struct allowed {
	const char *name;
	int who;
};

/* What vmm does after set-up (plus what glibc and the sanitizers do for
 * it: memory, threads, signals, time). ioctl, clone and seccomp have
 * argument rules of their own below. */
static const struct allowed base_calls[] = {
	{"read", ALL},
	{"write", ALL},
	{"readv", ALL},
	{"writev", ALL},
	{"pread64", ALL},
	{"pwrite64", ALL},
	{"preadv", ALL},
	{"pwritev", ALL},
	{"preadv2", ALL},
	{"pwritev2", ALL},
	{"lseek", ALL},
	{"close", ALL},
	{"fstat", ALL},
	{"newfstatat", ALL},
	{"statx", ALL},
	{"fcntl", ALL},
	{"fdatasync", ALL},
	{"fsync", ALL},
	{"fallocate", ALL},
	{"io_uring_enter", ALL},
	{"io_uring_register", ALL},
	{"epoll_wait", ALL},
	{"epoll_pwait", ALL},
	{"epoll_ctl", ALL},
	{"poll", ALL},
	{"ppoll", ALL},
	{"select", ALL},
	{"pselect6", ALL},
	{"timerfd_settime", ALL},
	{"timerfd_gettime", ALL},
	{"futex", ALL},
	{"set_robust_list", ALL},
	{"get_robust_list", ALL},
	{"rseq", ALL},
	{"mmap", ALL},
	{"munmap", ALL},
	{"mprotect", ALL},
	{"mremap", ALL},
	{"madvise", ALL},
	/* virtio-balloon gives back a buffer's pages in one call (its pidfd
	 * is opened before the sandbox) */
	{"process_madvise", NOT_VCPU},
	{"brk", ALL},
	{"membarrier", ALL},
	{"rt_sigaction", ALL},
	{"rt_sigprocmask", ALL},
	{"rt_sigreturn", ALL},
	{"sigaltstack", ALL},
	{"rt_sigtimedwait", ALL},
	{"restart_syscall", ALL},
	{"tgkill", ALL},
	{"tkill", ALL},
	{"getpid", ALL},
	{"gettid", ALL},
	{"clock_gettime", ALL},
	{"clock_getres", ALL},
	{"clock_nanosleep", ALL},
	{"nanosleep", ALL},
	{"gettimeofday", ALL},
	{"sched_yield", ALL},
	{"sched_getaffinity", ALL},
	{"sysinfo", ALL},
	{"getrandom", ALL},
	{"prlimit64", ALL},
	{"getrlimit", ALL},
	{"getuid", ALL},
	{"geteuid", ALL},
	{"getgid", ALL},
	{"getegid", ALL},
	{"exit", ALL},
	{"exit_group", ALL},
	{"prctl", ALL},
	{"sendto", ALL},
	{"sendmsg", ALL},
	{"recvfrom", ALL},
	{"recvmsg", ALL},
	/* a vCPU thread's write to the MSI-X enable bit makes the irqfd
	 * routes (and their eventfds) of a virtio device */
	{"eventfd2", ALL},
	/* user networking (a NIC's I/O thread) opens host sockets for the
	 * guest's flows and hostfwd_add listens at run time, as QEMU's slirp
	 * does under its sandbox */
	{"socket", NOT_VCPU},
	{"connect", NOT_VCPU},
	{"bind", NOT_VCPU},
	{"listen", NOT_VCPU},
	{"sendmmsg", NOT_VCPU},
	{"recvmmsg", NOT_VCPU},
	/* the main thread: clients of the control sockets, files the monitor
	 * writes (memsave), unix sockets removed at exit, new threads */
	{"accept", NOT_VCPU},
	{"accept4", NOT_VCPU},
	{"shutdown", NOT_VCPU},
	{"getsockname", NOT_VCPU},
	{"getpeername", NOT_VCPU},
	{"getsockopt", NOT_VCPU},
	{"setsockopt", NOT_VCPU},
	{"openat", NOT_VCPU},
	{"open", NOT_VCPU},
	{"unlink", NOT_VCPU},
	{"unlinkat", NOT_VCPU},
	{"dup", NOT_VCPU},
	{"dup2", NOT_VCPU},
	{"dup3", NOT_VCPU},
	{"pipe2", NOT_VCPU},
	{"ftruncate", NOT_VCPU},
};

/* QEMU's groups (qemu-seccomp.c), added when allowed. */
static const char *const obsolete_calls[] = {
	"readdir",	"_sysctl",  "bdflush",	"create_module", "get_kernel_syms",
	"query_module", "sgetmask", "ssetmask", "sysfs",	 "uselib",
	"ustat",	"vserver",  NULL};
static const char *const elevate_calls[] = {"setuid",	"setgid",   "setpgid",	 "setsid",
					    "setreuid", "setregid", "setresuid", "setresgid",
					    "setfsuid", "setfsgid", "setgroups", NULL};
static const char *const spawn_calls[] = {"fork", "vfork", "execve", "execveat", NULL};
static const char *const resource_calls[] = {"getpriority",
					     "setpriority",
					     "sched_setparam",
					     "sched_getparam",
					     "sched_setscheduler",
					     "sched_getscheduler",
					     "sched_setaffinity",
					     "sched_get_priority_max",
					     "sched_get_priority_min",
					     NULL};

/* The terminal and socket ioctls the main thread makes (raw mode on
 * stdio, its restoration at exit, non-blocking sockets). */
static const unsigned long tty_ioctls[] = {TCGETS,     TCSETS,	TCSETSW,  TCSETSF,
					   TIOCGWINSZ, FIONBIO, FIONREAD, FIOCLEX};

/* Syscall names by number, resolved before any filter is in place: the
 * SIGSYS handler may not allocate. */
static const char *names[MAX_SYSCALL_NR];

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	int nr = si->si_syscall;
	const char *name = nr >= 0 && nr < MAX_SYSCALL_NR && names[nr] ? names[nr] : "unknown";
	char msg[160];
	int n = snprintf(msg, sizeof(msg),
			 "vmm: sandbox: forbidden system call %s (number %d); exiting\n", name, nr);

	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg));
	_exit(128 + SIGSYS);
}

static int install_sigsys(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

	for (int nr = 0; nr < MAX_SYSCALL_NR; nr++)
		if (!names[nr])
			names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSYS, &sa, NULL);
}

static int allow_name(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	/* a call this architecture lacks (select on some) is simply absent */
	return nr == __NR_SCMP_ERROR ? 0 : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

static int allow_group(scmp_filter_ctx ctx, const char *const *calls)
{
	for (; *calls; calls++)
		if (allow_name(ctx, *calls) < 0)
			return -1;
	return 0;
}

/* Threads only, unless spawn is allowed; clone3 is ENOSYS (see above). */
static int allow_clone(scmp_filter_ctx ctx, bool spawn)
{
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0)
		return -1;
	if (spawn)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 0);
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
}

/* The process list: KVM's ioctls (type 0xAE) on any fd, the terminal's,
 * and TUNSETOFFLOAD (a TAP NIC's I/O thread passes on the receive
 * offloads the guest negotiated, whenever its driver starts). */
static int allow_ioctls(scmp_filter_ctx ctx)
{
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
			     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, KVMIO << 8)) < 0)
		return -1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
			     SCMP_A1(SCMP_CMP_EQ, TUNSETOFFLOAD)) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(tty_ioctls) / sizeof(tty_ioctls[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, tty_ioctls[i])) < 0)
			return -1;
	return 0;
}

static int load(scmp_filter_ctx ctx, bool all_threads)
{
	int rc = all_threads ? seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) : 0;

	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static int process_filter(const struct sandbox_config *sb)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int rc = ctx ? 0 : -1;

	for (size_t i = 0; !rc && i < sizeof(base_calls) / sizeof(base_calls[0]); i++)
		if (base_calls[i].who)
			rc = allow_name(ctx, base_calls[i].name);
	if (!rc)
		rc = allow_clone(ctx, sb->allow_spawn);
	if (!rc)
		rc = allow_ioctls(ctx);
	/* a vCPU thread stacks its own list once */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
				      SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
	if (!rc && sb->allow_obsolete)
		rc = allow_group(ctx, obsolete_calls);
	if (!rc && sb->allow_elevate)
		rc = allow_group(ctx, elevate_calls);
	if (!rc && sb->allow_spawn)
		rc = allow_group(ctx, spawn_calls);
	if (!rc && sb->allow_resource)
		rc = allow_group(ctx, resource_calls);
	if (!ctx)
		return -1;
	if (rc) {
		seccomp_release(ctx);
		return -1;
	}
	return load(ctx, true);
}

int sandbox_enter_vcpu(int vcpu_fd, int vm_fd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int rc = ctx ? 0 : -1;

	for (size_t i = 0; !rc && i < sizeof(base_calls) / sizeof(base_calls[0]); i++)
		if (base_calls[i].who == ALL)
			rc = allow_name(ctx, base_calls[i].name);
	/* its own fd (KVM_RUN, registers) and the VM's (interrupts, MSIs) */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)vcpu_fd));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)vm_fd));
	/* the exit path of a failing vCPU writes its registers to stderr */
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_EQ, TCGETS));
	if (!ctx)
		return -1;
	if (rc || load(ctx, false)) {
		if (rc)
			seccomp_release(ctx);
		fprintf(stderr, "vmm: sandbox: cannot restrict a vCPU thread\n");
		return -1;
	}
	return 0;
}

/* -runas USER: groups, gid, then uid (after which none can change). */
static int run_as(const char *user, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0) {
		snprintf(err, errlen, "-runas %s: %s", user, strerror(errno));
		return -1;
	}
	if (uid && setuid(0) == 0) { /* must be impossible now */
		snprintf(err, errlen, "-runas %s: root could be regained", user);
		return -1;
	}
	return 0;
}

int sandbox_apply(const struct control_config *c, char *err, size_t errlen)
{
	/* getpwnam reads /etc before the chroot hides it */
	struct passwd *pw = c->runas ? getpwnam(c->runas) : NULL;
	uid_t uid = pw ? pw->pw_uid : 0;
	gid_t gid = pw ? pw->pw_gid : 0;

	if (c->runas && !pw) {
		snprintf(err, errlen, "-runas: no user '%s'", c->runas);
		return -1;
	}
	/* The RTC's localtime() reads /etc/localtime once, on a vCPU thread
	 * otherwise: now, while it can (and before a chroot hides it). */
	tzset();
	if (c->chroot && (chroot(c->chroot) < 0 || chdir("/") < 0)) {
		snprintf(err, errlen, "-chroot %s: %s", c->chroot, strerror(errno));
		return -1;
	}
	if (c->runas && run_as(c->runas, uid, gid, err, errlen) < 0)
		return -1;
	if (!c->sandbox.on)
		return 0;
	if (install_sigsys() < 0 || process_filter(&c->sandbox) < 0) {
		snprintf(err, errlen, "-sandbox: cannot install the seccomp filter");
		return -1;
	}
	return 0;
}
