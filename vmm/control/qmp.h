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

/* File descriptors a client passes (SCM_RIGHTS on the QMP socket) and
 * names with getfd, as QEMU's monitor keeps them (qmp_fds.c). */
#define QMP_FD_NAME_MAX 64
/* The fd that came with the command being executed (the oldest one not
 * yet claimed), or -1. */
int qmp_take_passed_fd(void);
/* Name fd (replacing, and closing, one of that name): 0, or -1 with err
 * (bad name, table full; fd is then closed). */
int qmp_fd_add(const char *name, int fd, char *err, size_t errlen);
/* Remove a named fd and hand it over (the caller closes it), or -1. */
int qmp_fd_take(const char *name);
/* QEMU's fd parameter (fd:PARAM URIs): a number is an fd this process
 * has (inherited), anything else a getfd name, taken from the table.
 * The fd, or -1 with err. */
int qmp_fd_param(const char *param, char *err, size_t errlen);

#endif /* VMM_QMP_H */
