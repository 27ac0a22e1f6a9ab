/* main.c — vmm: parse the command line, build the machine, run it. */
#include <signal.h>
#include <stdio.h>

#include "build/config.h"
#include "vmm/machine.h"

static struct vmm_config cfg;
static struct machine machine;

/* Before the guest runs: status 1, as QEMU (README "Exit status"). */
static int fail(const char *msg)
{
	fprintf(stderr, "vmm: %s\n", msg);
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
	if (cfg.version) {
		printf("vmm version %s\n", VMM_VERSION);
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	if (machine_init(&machine, &cfg, err, sizeof(err)) < 0 ||
	    board_init(&machine, err, sizeof(err)) < 0 ||
	    (cfg.kernel ? boot_load_kernel(&machine, err, sizeof(err))
			: load_firmware(&machine, err, sizeof(err))) < 0) {
		machine_destroy(&machine);
		return fail(err);
	}
	if (machine_control_init(&machine, err, sizeof(err)) < 0) {
		machine_destroy(&machine);
		return fail(err);
	}
	if (boot_apply(&machine) < 0 || machine_start(&machine, err, sizeof(err)) < 0) {
		machine_destroy(&machine);
		return fail("cannot start the boot vCPU");
	}
	status = machine_run(&machine);
	machine_destroy(&machine);
	return status;
}
