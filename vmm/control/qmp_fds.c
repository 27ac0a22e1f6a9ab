/* qmp_fds.c — getfd and closefd: a client passes a file descriptor with
 * SCM_RIGHTS alongside the command and names it; a later command takes
 * it by name (migrate's fd:NAME, as libvirt's save does). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/control/qmp.h"
#include "vmm/control/qmp_commands.h"

#define QMP_MAX_NAMED_FDS 16

static struct {
	char name[QMP_FD_NAME_MAX];
	int fd; /* -1: a free slot */
} named[QMP_MAX_NAMED_FDS] = {[0 ... QMP_MAX_NAMED_FDS - 1] = {"", -1}};

static int find(const char *name)
{
	for (int i = 0; i < QMP_MAX_NAMED_FDS; i++)
		if (named[i].fd >= 0 && !strcmp(named[i].name, name))
			return i;
	return -1;
}

/* QEMU's rule: a name never starts with a digit (that is an fd number). */
static int check_name(const char *name, char *err, size_t errlen)
{
	if (!name[0] || isdigit((unsigned char)name[0])) {
		snprintf(err, errlen, "Parameter 'fdname' expects a name not starting with a digit");
		return -1;
	}
	if (strlen(name) >= QMP_FD_NAME_MAX) {
		snprintf(err, errlen, "Parameter 'fdname' is longer than %d bytes",
			 QMP_FD_NAME_MAX - 1);
		return -1;
	}
	return 0;
}

int qmp_fd_add(const char *name, int fd, char *err, size_t errlen)
{
	int i;

	if (check_name(name, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	i = find(name);
	if (i >= 0) { /* QEMU replaces a name given again */
		close(named[i].fd);
		named[i].fd = fd;
		return 0;
	}
	for (i = 0; i < QMP_MAX_NAMED_FDS; i++)
		if (named[i].fd < 0) {
			snprintf(named[i].name, sizeof(named[i].name), "%s", name);
			named[i].fd = fd;
			return 0;
		}
	close(fd);
	snprintf(err, errlen, "Too many named file descriptors (%d)", QMP_MAX_NAMED_FDS);
	return -1;
}

int qmp_fd_take(const char *name)
{
	int i = find(name), fd;

	if (i < 0)
		return -1;
	fd = named[i].fd;
	named[i].fd = -1;
	return fd;
}

int qmp_fd_param(const char *param, char *err, size_t errlen)
{
	char *end;
	long n;
	int fd;

	if (!isdigit((unsigned char)param[0])) {
		fd = qmp_fd_take(param);
		if (fd < 0)
			snprintf(err, errlen, "File descriptor named '%s' has not been found", param);
		return fd;
	}
	errno = 0;
	n = strtol(param, &end, 10);
	if (errno || *end || n > INT_MAX) {
		snprintf(err, errlen, "Invalid file descriptor number '%s'", param);
		return -1;
	}
	if (fcntl((int)n, F_GETFD) < 0) {
		snprintf(err, errlen, "File descriptor %ld: %s", n, strerror(errno));
		return -1;
	}
	return (int)n;
}

/* ------------------------------------------------------------ commands */

#define CMD(name)                                                                                  \
	static int name(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)

CMD(cmd_getfd)
{
	const char *name = json_string_value(json_object_get(args, "fdname"));
	int fd = qmp_take_passed_fd();

	if (fd < 0) {
		snprintf(e->desc, sizeof(e->desc), "No file descriptor supplied via SCM_RIGHTS");
		return -1;
	}
	return qmp_fd_add(name, fd, e->desc, sizeof(e->desc));
}

CMD(cmd_closefd)
{
	const char *name = json_string_value(json_object_get(args, "fdname"));
	int fd = qmp_fd_take(name);

	if (fd < 0) {
		snprintf(e->desc, sizeof(e->desc), "File descriptor named '%s' not found", name);
		return -1;
	}
	close(fd);
	return 0;
}

const struct qmp_command qmp_fd_commands[] = {
	{"getfd", cmd_getfd, "fdname:str"},
	{"closefd", cmd_closefd, "fdname:str"},
	{NULL, NULL, NULL},
};
