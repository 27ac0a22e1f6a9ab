/* sandbox_hooks.c — linked into build/tests/vmm-test only (vmm's main plus
 * these): monitor commands that make the VMM do what it never does, so
 * tests/integration/sandbox.sh can show -sandbox stopping it.
 *   info sandbox-violate   personality(2), on no allow-list
 *   info sandbox-spawn     fork(2): a clone without CLONE_THREAD */
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/control/monitor.h"

static void violate(void *opaque, FILE *out)
{
	long persona = syscall(SYS_personality, 0xffffffffUL);

	fprintf(out, "personality: %#lx\n", persona);
}

static void spawn(void *opaque, FILE *out)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	fprintf(out, "forked: %s\n", pid > 0 ? "yes" : "no");
}

__attribute__((constructor)) static void register_hooks(void)
{
	monitor_add_info("sandbox-violate", "test: make a forbidden system call", violate, NULL);
	monitor_add_info("sandbox-spawn", "test: fork a process", spawn, NULL);
}
