/* main.c — vmm: parse the command line, build the machine, run it. */
#include <signal.h>
#include <stdio.h>

#include "build/config.h"
#include "vmm/gdbstub.h"
#include "vmm/machine.h"
#include "vmm/process.h"
#include "vmm/qmp.h"

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

/* The machine, its boot image and its control channels (QMP, gdbstub). */
static int build(struct machine *m, char *err, size_t errlen)
{
	if (machine_init(m, &cfg, err, errlen) < 0 || board_init(m, err, errlen) < 0 ||
	    (cfg.kernel ? boot_load_kernel(m, err, errlen) : load_firmware(m, err, errlen)) < 0 ||
	    machine_control_init(m, err, errlen) < 0 || qmp_start(m, err, errlen) < 0 ||
	    gdbstub_start(m, err, errlen) < 0)
		return -1;
	if (boot_apply(m) < 0) {
		snprintf(err, errlen, "cannot set the boot vCPU's registers");
		return -1;
	}
	return machine_start(m, err, errlen);
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
	if (cfg.device_help) { /* QEMU's format: kvm-unit-tests grep it */
		printf("name \"isa-debug-exit\", bus ISA\nname \"pc-testdev\", bus ISA\n"
		       "name \"pvpanic\", bus ISA\n"
		       "name \"virtio-blk-pci\", bus PCI\n");
		return 0;
	}
	if (cfg.version) {
		printf("vmm version %s\n", VMM_VERSION);
		return 0;
	}
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
