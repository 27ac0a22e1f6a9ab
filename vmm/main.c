/* main.c — vmm: parse the command line, build the machine, run it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "build/config.h"
#include "vmm/control/gdbstub.h"
#include "vmm/machine.h"
#include "vmm/migration.h"
#include "vmm/process.h"
#include "vmm/control/qmp.h"
#include "vmm/sandbox.h"

static struct vmm_config cfg;
static struct machine machine;

/* Before the guest runs: status 1, as QEMU (README "Exit status"). */
static int fail(const char *msg)
{
	fprintf(stderr, "vmm: %s\n", msg);
	process_ready(VMM_EXIT_USAGE); /* -daemonize: the foreground exits 1 */
	return VMM_EXIT_USAGE;
}

/* No -kernel: SeaBIOS (or -bios FILE) from the reset vector. */
static int load_firmware(struct machine *m, char *err, size_t errlen)
{
	if (bios_load(m->cfg->bios, &m->bios, err, errlen) < 0 ||
	    bios_map(&m->bios, &m->mem_map, m->i440fx, err, errlen) < 0)
		return -1;
	m->boot.mode = BOOT_MODE_RESET;
	return 0;
}

/* -overcommit mem-lock=on and -machine dump-guest-core=off, once the
 * guest's memory exists. */
static int host_memory_options(struct machine *m, char *err, size_t errlen)
{
	if (m->cfg->lv.no_dump_guest_core && m->ram &&
	    madvise(m->ram, m->ram_map_size, MADV_DONTDUMP) < 0) {
		snprintf(err, errlen, "dump-guest-core=off: %s", strerror(errno));
		return -1;
	}
	if (m->cfg->lv.mem_lock && mlockall(MCL_CURRENT | MCL_FUTURE) < 0) {
		snprintf(err, errlen, "-overcommit mem-lock=on: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The machine, its boot image and its control channels (QMP, gdbstub);
 * then -chroot, -runas and -sandbox, before the vCPUs run guest code. */
static int build(struct machine *m, char *err, size_t errlen)
{
	if (cfg.lv.machine_none) /* QMP and nothing else */
		return machine_init_none(m, &cfg, err, errlen) < 0 ||
				       machine_control_init(m, err, errlen) < 0 ||
				       board_init_none(m, err, errlen) < 0 ||
				       qmp_start(m, err, errlen) < 0
			       ? -1
			       : machine_start(m, err, errlen); /* no vCPUs: -S state only */
	/* Signals are blocked (machine_control_init) before board_init: a
	 * device's I/O thread (virtio-net's backend) inherits the mask, so
	 * SIGTERM reaches the signalfd and becomes SHUTDOWN host-signal
	 * rather than killing the process silently. */
	if (machine_init(m, &cfg, err, errlen) < 0 || machine_control_init(m, err, errlen) < 0 ||
	    board_init(m, err, errlen) < 0 ||
	    (cfg.kernel ? boot_load_kernel(m, err, errlen) : load_firmware(m, err, errlen)) < 0 ||
	    qmp_start(m, err, errlen) < 0 || gdbstub_start(m, err, errlen) < 0)
		return -1;
	m->cfg_rw = &cfg; /* device_add, drive_add, blockdev-add extend it */
	if (host_memory_options(m, err, errlen) < 0)
		return -1;
	if (boot_apply(m) < 0) {
		snprintf(err, errlen, "cannot set the boot vCPU's registers");
		return -1;
	}
	if (sandbox_apply(&cfg.control, err, errlen) < 0 || machine_start(m, err, errlen) < 0)
		return -1;
	if (cfg.incoming && strcmp(cfg.incoming, "defer") &&
	    migration_incoming(m, cfg.incoming, err, errlen) < 0) {
		machine_request_exit(m, VMM_EXIT_USAGE);
		for (unsigned i = 0; i < m->ncpus; i++)
			if (m->vcpus[i].started)
				dev_thread_join(&m->vcpus[i].thread);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[512];
	int status;

	if (cli_parse(argc, argv, &cfg, err, sizeof(err)) < 0)
		return fail(err);
	if (cfg.help) {
		cli_usage(stdout, argv[0]);
		return 0;
	}
	if (cfg.help_topic != CLI_HELP_NONE) /* QEMU's layout: tools read it */
		return cli_print_help_topic(stdout, &cfg, err, sizeof(err)) < 0 ? fail(err) : 0;
	if (cfg.version) {
		printf("vmm version %s\n", VMM_VERSION);
		return 0;
	}
	if (preflight_check(&cfg, err, sizeof(err)) < 0) /* before /dev/kvm */
		return fail(err);
	signal(SIGPIPE, SIG_IGN);
	if (cfg.control.daemonize && process_daemonize(err, sizeof(err)) < 0)
		return fail(err);
	if (cfg.control.pidfile && process_write_pidfile(cfg.control.pidfile, err, sizeof(err)) < 0)
		return fail(err);
	if (build(&machine, err, sizeof(err)) < 0) {
		gdbstub_stop();
		qmp_stop();
		machine_destroy(&machine);
		return fail(err);
	}
	process_ready(0);
	status = machine_run(&machine);
	gdbstub_stop();
	qmp_stop();
	machine_destroy(&machine);
	return status;
}
