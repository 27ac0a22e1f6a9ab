/* fuzz_monitor.c — the human monitor's command line (vmm/control/monitor.c):
 * tokenising, the command table, x/xp formats and addresses, break,
 * delete, info and its sub-commands, on fake_machine.h's machine. Input:
 * command lines separated by newlines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fake_machine.h"
#include "tests/fuzz/fuzz.h"
#include "vmm/control/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct monitor *mon;
	static FILE *out;
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!mon) {
		mon = monitor_new(fake_machine(), NULL);
		out = fopen("/dev/null", "w");
	}
	memcpy(text, data, size);
	text[size] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		monitor_execute(mon, line, out);
	fflush(out);
	free(text);
	return 0;
}
