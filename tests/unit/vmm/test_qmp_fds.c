/* Unit tests for the named file descriptors of QMP (vmm/control/qmp_fds.c):
 * getfd's names, closefd, and the fd:PARAM of migrate URIs. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/control/qmp.h"
#include "vmm/control/qmp_commands.h"
#include "tests/unit/check_run.h"

static int fresh_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

START_TEST(named_fd_taken_once)
{
	char err[256];
	int fd = fresh_fd();

	ck_assert_int_eq(qmp_fd_add("migrate", fd, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp_fd_param("migrate", err, sizeof(err)), fd);
	ck_assert_int_eq(qmp_fd_param("migrate", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "File descriptor named 'migrate' has not been found");
	close(fd);
}
END_TEST

START_TEST(same_name_replaces)
{
	char err[256];
	int a = fresh_fd(), b = fresh_fd();

	ck_assert_int_eq(qmp_fd_add("x", a, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp_fd_add("x", b, err, sizeof(err)), 0);
	ck_assert(!is_open(a)); /* the old one is closed */
	ck_assert_int_eq(qmp_fd_take("x"), b);
	ck_assert_int_eq(qmp_fd_take("x"), -1);
	close(b);
}
END_TEST

START_TEST(bad_names_refused_and_closed)
{
	char err[256], longname[QMP_FD_NAME_MAX + 1];
	int fd = fresh_fd();

	ck_assert_int_eq(qmp_fd_add("1abc", fd, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "Parameter 'fdname' expects a name not starting with a digit");
	ck_assert(!is_open(fd));
	fd = fresh_fd();
	ck_assert_int_eq(qmp_fd_add("", fd, err, sizeof(err)), -1);
	ck_assert(!is_open(fd));
	memset(longname, 'a', QMP_FD_NAME_MAX);
	longname[QMP_FD_NAME_MAX] = 0;
	fd = fresh_fd();
	ck_assert_int_eq(qmp_fd_add(longname, fd, err, sizeof(err)), -1);
	ck_assert(!is_open(fd));
}
END_TEST

START_TEST(table_full)
{
	char err[256], name[16];
	int fds[17];

	for (int i = 0; i < 17; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fds[i] = fresh_fd();
		ck_assert_int_eq(qmp_fd_add(name, fds[i], err, sizeof(err)), i < 16 ? 0 : -1);
	}
	ck_assert_str_eq(err, "Too many named file descriptors (16)");
	ck_assert(!is_open(fds[16]));
	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_int_eq(qmp_fd_take(name), fds[i]);
		close(fds[i]);
	}
}
END_TEST

START_TEST(numbers_are_inherited_fds)
{
	char err[256];
	int fd = fresh_fd(), n;

	snprintf(err, sizeof(err), "%d", fd);
	ck_assert_int_eq(qmp_fd_param(err, err, sizeof(err)), fd);
	close(fd);
	snprintf(err, sizeof(err), "%d", fd);
	ck_assert_int_eq(qmp_fd_param(err, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "Bad file descriptor"), "%s", err);
	n = qmp_fd_param("12x", err, sizeof(err));
	ck_assert_int_eq(n, -1);
	ck_assert_str_eq(err, "Invalid file descriptor number '12x'");
	ck_assert_int_eq(qmp_fd_param("99999999999", err, sizeof(err)), -1);
	ck_assert_int_eq(qmp_fd_param("", err, sizeof(err)), -1);
}
END_TEST

/* getfd without an fd passed along (no client here: none was). */
START_TEST(getfd_needs_scm_rights)
{
	const struct qmp_command *getfd = qmp_find_command("getfd"), *closefd;
	json_t *args = json_pack("{s:s}", "fdname", "migrate"), *ret = NULL;
	struct qmp_error e = {0};

	ck_assert_ptr_nonnull(getfd);
	ck_assert_int_eq(getfd->fn(NULL, args, &ret, &e), -1);
	ck_assert_str_eq(e.desc, "No file descriptor supplied via SCM_RIGHTS");
	closefd = qmp_find_command("closefd");
	ck_assert_ptr_nonnull(closefd);
	ck_assert_int_eq(closefd->fn(NULL, args, &ret, &e), -1);
	ck_assert_str_eq(e.desc, "File descriptor named 'migrate' not found");
	ck_assert_int_eq(qmp_fd_add("migrate", fresh_fd(), e.desc, sizeof(e.desc)), 0);
	ck_assert_int_eq(closefd->fn(NULL, args, &ret, &e), 0);
	ck_assert_int_eq(qmp_fd_take("migrate"), -1);
	json_decref(args);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_qmp_fds");
	TCase *tc = tcase_create("qmp_fds");

	tcase_add_test(tc, named_fd_taken_once);
	tcase_add_test(tc, same_name_replaces);
	tcase_add_test(tc, bad_names_refused_and_closed);
	tcase_add_test(tc, table_full);
	tcase_add_test(tc, numbers_are_inherited_fds);
	tcase_add_test(tc, getfd_needs_scm_rights);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
