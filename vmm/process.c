/* process.c — -daemonize and -pidfile, as QEMU (and libvirt's capability
 * probe) expect: the foreground process exits 0 only once the daemon has
 * set everything up (sockets listening, pidfile written), 1 if it failed.
 *
 * The fork happens before /dev/kvm is opened: a KVM VM belongs to the
 * process that created it, and only the calling thread survives a fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/process.h"

static int ready_fd = -1; /* the daemon's end of the pipe to the parent */

int process_daemonize(char *err, size_t errlen)
{
	int fds[2];
	pid_t pid;
	char status;

	if (pipe2(fds, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		snprintf(err, errlen, "-daemonize: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) { /* the foreground process: wait for the verdict */
		ssize_t n;

		close(fds[1]);
		do
			n = read(fds[0], &status, 1);
		while (n < 0 && errno == EINTR);
		/* No byte: the daemon died before it was ready. */
		_exit(n == 1 && status == 0 ? 0 : 1);
	}
	close(fds[0]);
	ready_fd = fds[1];
	setsid();
	return 0;
}

void process_ready(int status)
{
	char s = (char)status;
	int null;

	if (ready_fd < 0)
		return;
	if (status == 0) {
		/* Detach from the terminal the user started us from. */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			close(null);
		}
	}
	if (write(ready_fd, &s, 1) < 0) {
		/* the parent is gone: nobody to tell */
	}
	close(ready_fd);
	ready_fd = -1;
}

static const char *pidfile_path;

static void remove_pidfile(void)
{
	if (pidfile_path)
		unlink(pidfile_path);
}

int process_write_pidfile(const char *path, char *err, size_t errlen)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (fd < 0 || write(fd, buf, (size_t)n) != n) {
		snprintf(err, errlen, "-pidfile %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	pidfile_path = path;
	atexit(remove_pidfile);
	return 0;
}
