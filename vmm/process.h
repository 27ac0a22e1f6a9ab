/* process.h — -daemonize and -pidfile. */
#ifndef VMM_PROCESS_H
#define VMM_PROCESS_H

#include <stddef.h>

/* Fork; the foreground process waits for process_ready() and exits with
 * 0 (ready) or 1. Returns 0 in the daemon, -1 with err. */
int process_daemonize(char *err, size_t errlen);
/* The daemon is set up (status 0: stdio goes to /dev/null) or failed. */
void process_ready(int status);
/* Write our pid; the file is removed at exit. 0 or -1 with err. */
int process_write_pidfile(const char *path, char *err, size_t errlen);

#endif /* VMM_PROCESS_H */
