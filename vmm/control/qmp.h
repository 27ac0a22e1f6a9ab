/* qmp.h — the QEMU Machine Protocol server (-qmp, -chardev socket + -mon
 * mode=control): JSON commands and events for programs that manage VMs. */
#ifndef VMM_QMP_H
#define VMM_QMP_H

#include "vmm/machine.h"

/* Open every configured QMP socket (waiting for a first client where the
 * spec says wait) and register for machine events. 0 or -1 with err. */
int qmp_start(struct machine *m, char *err, size_t errlen);
/* Close the sockets and clients (after machine_run). */
void qmp_stop(void);

#endif /* VMM_QMP_H */
