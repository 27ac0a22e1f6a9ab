/* img_dir.h — what the backends suites on image files share: a fresh
 * temporary directory per test (setup/teardown as a checked fixture),
 * paths in it, and shell commands (qemu-img, qemu-io) run quietly. */
#ifndef VMM_TESTS_UNIT_BACKENDS_IMG_DIR_H
#define VMM_TESTS_UNIT_BACKENDS_IMG_DIR_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char dir[64];

/* The command's exit status; its standard output dropped (qemu-io
 * talks), its errors shown. */
static inline int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	strcpy(cmd, "{ ");
	vsnprintf(cmd + 2, sizeof(cmd) - 32, fmt, ap);
	va_end(ap);
	strcat(cmd, "; } >/dev/null");
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline void setup(void)
{
	strcpy(dir, "/tmp/vmm-block-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void teardown(void)
{
	sh("rm -rf '%s'", dir);
}

/* name in the test's directory (the last four stay valid) */
static inline const char *path_of(const char *name)
{
	static char buf[4][128];
	static unsigned n;
	char *p = buf[n++ % 4];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

#endif
