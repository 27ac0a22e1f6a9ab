/* gdbstub.h — the GDB remote protocol server (-gdb, -s). */
#ifndef VMM_GDBSTUB_H
#define VMM_GDBSTUB_H

#include "vmm/machine.h"

/* Listen where -gdb says (nothing without it). 0 or -1 with err. */
int gdbstub_start(struct machine *m, char *err, size_t errlen);
void gdbstub_stop(void);

#endif /* VMM_GDBSTUB_H */
