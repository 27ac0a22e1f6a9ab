/* sandbox.h — what vmm gives up once set up (vmm/sandbox.c): -chroot,
 * -runas and the -sandbox seccomp allow-lists. */
#ifndef VMM_SANDBOX_H
#define VMM_SANDBOX_H

#include <stddef.h>

#include "vmm/cli/cli.h"

/* After set-up, before the vCPU threads start: chroot, drop to the -runas
 * user, install the process-wide allow-list on every thread (the I/O
 * threads run already). 0, or -1 with a one-line reason in err. */
int sandbox_apply(const struct control_config *c, char *err, size_t errlen);
/* First thing on a vCPU thread under -sandbox on: the narrower vCPU
 * allow-list (ioctls only on its own fd and the VM's; no opening,
 * accepting, spawning). 0 or -1 (reported on stderr). */
int sandbox_enter_vcpu(int vcpu_fd, int vm_fd);

#endif /* VMM_SANDBOX_H */
