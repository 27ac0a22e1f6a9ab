/* listen.h — listening sockets of the control plane (QMP, gdbstub). */
#ifndef VMM_LISTEN_H
#define VMM_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/cli/cli.h"

/* A non-blocking, close-on-exec listening socket: fd, or -1 with err. */
int listen_open(const struct listen_spec *s, char *err, size_t errlen);
/* Accept one client (non-blocking fd); block waits for it. fd or -1. */
int listen_accept(int listen_fd, bool block);
/* Close (and unlink a unix socket's path). */
void listen_close(const struct listen_spec *s, int fd);
/* "unix:PATH", "tcp:HOST:PORT", "fd:N" for messages. */
void listen_describe(const struct listen_spec *s, char *buf, size_t len);

#endif /* VMM_LISTEN_H */
