/* cli_args.h — the CLI unit tests' way to call cli_parse: a
 * NULL-terminated argument list (after "vmm"), err cleared first. */
#ifndef TESTS_UNIT_VMM_CLI_ARGS_H
#define TESTS_UNIT_VMM_CLI_ARGS_H

#include "vmm/cli/cli.h"

static inline int cli_parse_list(const char *const *args, struct vmm_config *cfg, char *err,
				 size_t errlen)
{
	char *argv[96] = {"vmm"}; /* libvirt's command line is long */
	int argc = 1;

	while (*args && argc < 95)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	err[0] = 0;
	return cli_parse(argc, argv, cfg, err, errlen);
}

#endif
