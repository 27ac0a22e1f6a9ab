/* fuzz_cli.c — the command-line parser (vmm/cli/cli.c, cli_drive.c,
 * cli_control.c): every option, QEMU's key=value property lists, sizes,
 * -drive/-device/-chardev/-machine/-netdev specs, the control sockets.
 * Input: the arguments after argv[0], separated by NUL bytes (at most 64). */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "vmm/cli/cli.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2] = {"vmm"};
	static struct vmm_config cfg;
	char err[512];
	int argc = 1;
	size_t start = 0;

	memcpy(copy, data, size);
	copy[size] = 0;
	for (size_t i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (i == size || !copy[i]) {
			argv[argc++] = copy + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	memset(&cfg, 0, sizeof(cfg));
	cli_parse(argc, argv, &cfg, err, sizeof(err));
	cli_close_rng(&cfg); /* rng-random files opened by the parse */
	free(copy);
	return 0;
}
