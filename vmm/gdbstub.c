/* gdbstub.c — placeholder until the stub lands. */
#include "vmm/gdbstub.h"

int gdbstub_start(struct machine *m, char *err, size_t errlen)
{
	return 0;
}

void gdbstub_stop(void)
{
}
