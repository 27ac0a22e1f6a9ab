/* gdbstub.h — the GDB remote protocol server (-gdb, -s). */
#ifndef VMM_GDBSTUB_H
#define VMM_GDBSTUB_H

#include <stdio.h>

#include "vmm/machine.h"

/* Listen where -gdb says (nothing without it). 0 or -1 with err. */
int gdbstub_start(struct machine *m, char *err, size_t errlen);
void gdbstub_stop(void);
/* HMP `gdbserver [DEV]`: listen on spec (DEV as typed) now; spec NULL
 * (`none`) detaches the debugger and stops listening. */
void gdbstub_hmp(struct machine *m, const struct listen_spec *spec, const char *dev, FILE *out);

#endif /* VMM_GDBSTUB_H */
