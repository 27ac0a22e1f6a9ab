/* Unit tests for chardev-add and chardev-remove (vmm/control/qmp_hotplug.c,
 * vmm/chardev_hotplug.c) on a machine without vCPUs: QEMU's backends
 * (a pty answers its path, a unix socket listens, file, null), bad
 * arguments refused with clear errors, a chardev a device uses refused
 * as busy, and add/remove cycles that do not use up the table. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "vmm/chardev.h"
#include "vmm/control/qmp.h"
#include "vmm/control/qmp_commands.h"
#include "vmm/machine.h"

static struct machine m;
static struct vmm_config cfg;

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	memset(&cfg, 0, sizeof(cfg));
	m.cfg = m.cfg_rw = &cfg;
	m.board_ready = true;
	m.host.loop = evloop_new();
	ck_assert_ptr_nonnull(m.host.loop);
}

static void teardown(void)
{
	for (unsigned i = 0; i < CLI_MAX_CHARDEVS; i++)
		chardev_free(m.spare_chr[i]);
	evloop_free(m.host.loop);
}

/* Run cmd with the JSON args: 0 (*ret kept), or -1 with e->desc. */
static int run(const char *cmd, const char *args, json_t **ret, struct qmp_error *e)
{
	const struct qmp_command *c = qmp_find_command(cmd);
	json_t *a = json_loads(args, 0, NULL), *r = NULL;
	int rc;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(a);
	memset(e, 0, sizeof(*e));
	rc = c->fn(&m, a, &r, e);
	json_decref(a);
	if (ret)
		*ret = r;
	else
		json_decref(r);
	return rc;
}

static void add_ok(const char *args)
{
	struct qmp_error e;

	ck_assert_msg(run("chardev-add", args, NULL, &e) == 0, "%s: %s", args, e.desc);
}

static void refused(const char *cmd, const char *args, const char *why)
{
	struct qmp_error e;

	ck_assert_int_eq(run(cmd, args, NULL, &e), -1);
	ck_assert_str_eq(e.cls, "GenericError");
	ck_assert_msg(strstr(e.desc, why), "%s: '%s' lacks '%s'", args, e.desc, why);
}

START_TEST(pty_answers_its_path)
{
	struct qmp_error e;
	json_t *ret;
	const char *pty;

	ck_assert_int_eq(run("chardev-add",
			     "{\"id\":\"p1\",\"backend\":{\"type\":\"pty\",\"data\":{}}}", &ret,
			     &e),
			 0);
	pty = json_string_value(json_object_get(ret, "pty"));
	ck_assert_ptr_nonnull(pty);
	ck_assert_int_eq(strncmp(pty, "/dev/pts/", 9), 0);
	ck_assert_int_eq(access(pty, F_OK), 0);
	json_decref(ret);
	ck_assert_int_eq(run("chardev-remove", "{\"id\":\"p1\"}", NULL, &e), 0);
	refused("chardev-remove", "{\"id\":\"p1\"}", "Chardev 'p1' not found");
}
END_TEST

START_TEST(unix_socket_listens_until_removed)
{
	char path[64], args[256];
	struct stat st;
	struct qmp_error e;

	snprintf(path, sizeof(path), "/tmp/vmm-chr-%d.sock", (int)getpid());
	snprintf(args, sizeof(args),
		 "{\"id\":\"c1\",\"backend\":{\"type\":\"socket\",\"data\":{\"addr\":{\"type\":"
		 "\"unix\",\"data\":{\"path\":\"%s\"}},\"server\":true,\"wait\":false}}}",
		 path);
	add_ok(args);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	refused("chardev-add", args, "Chardev 'c1' already exists");
	ck_assert_int_eq(run("chardev-remove", "{\"id\":\"c1\"}", NULL, &e), 0);
	ck_assert_int_eq(stat(path, &st), -1);
}
END_TEST

/* A getfd socket chardev-add cannot use (not listening) is closed, not
 * leaked; a duplicate id is refused before the socket is taken, which
 * stays with getfd's table. */
START_TEST(a_socket_handed_over_is_never_leaked)
{
	const char *args = "{\"id\":\"%s\",\"backend\":{\"type\":\"socket\",\"data\":{"
			   "\"addr\":{\"type\":\"fd\",\"data\":{\"str\":\"%s\"}}}}}";
	char a[256], err[128];
	int sv[2], lst;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(qmp_fd_add("notlistening", sv[0], err, sizeof(err)), 0);
	snprintf(a, sizeof(a), args, "c1", "notlistening");
	refused("chardev-add", a, "not a listening stream socket");
	ck_assert_int_eq(fcntl(sv[0], F_GETFD), -1); /* closed */
	close(sv[1]);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/vmm-chr-fd-%d.sock", (int)getpid());
	lst = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink(addr.sun_path);
	ck_assert_int_eq(bind(lst, (struct sockaddr *)&addr, sizeof(addr)), 0);
	ck_assert_int_eq(listen(lst, 1), 0);
	ck_assert_int_eq(qmp_fd_add("lst", lst, err, sizeof(err)), 0);
	snprintf(a, sizeof(a), args, "c2", "lst");
	add_ok(a);
	ck_assert_int_eq(qmp_fd_add("again", dup(lst), err, sizeof(err)), 0);
	snprintf(a, sizeof(a), args, "c2", "again");
	refused("chardev-add", a, "Chardev 'c2' already exists");
	ck_assert_int_ge(qmp_fd_take("again"), 0); /* still in the table */
	unlink(addr.sun_path);
}
END_TEST

/* A port's chardev= marks it used, as device_add does; device_del gives
 * it back. */
START_TEST(chardev_in_use_is_busy)
{
	struct chardev_spec spec;
	struct qmp_error e;
	char err[128];

	add_ok("{\"id\":\"n1\",\"backend\":{\"type\":\"null\",\"data\":{}}}");
	ck_assert_int_eq(cli_chardev_lookup(&cfg, "n1", &spec, err, sizeof(err)), 0);
	refused("chardev-remove", "{\"id\":\"n1\"}", "Chardev 'n1' is busy");
	machine_chardev_give_back(&m, "n1", NULL);
	ck_assert_int_eq(run("chardev-remove", "{\"id\":\"n1\"}", NULL, &e), 0);
}
END_TEST

START_TEST(bad_arguments_refused)
{
	refused("chardev-add", "{\"id\":\"x\",\"backend\":7}", "'backend.type' is missing");
	refused("chardev-add", "{\"id\":\"x\",\"backend\":{\"type\":\"spicevmc\"}}",
		"does not accept value 'spicevmc'");
	refused("chardev-add", "{\"id\":\"x\",\"backend\":{\"type\":\"pty\",\"data\":[]}}",
		"'backend.data' expects an object");
	refused("chardev-add",
		"{\"id\":\"x\",\"backend\":{\"type\":\"socket\",\"data\":{\"addr\":{\"type\":"
		"\"unix\",\"data\":{}}}}}",
		"'backend.data.addr.data.path' is missing");
	refused("chardev-add",
		"{\"id\":\"x\",\"backend\":{\"type\":\"socket\",\"data\":{\"addr\":{\"type\":"
		"\"vsock\",\"data\":{}}}}}",
		"'backend.data.addr.type' does not accept value 'vsock'");
	refused("chardev-add", "{\"id\":\"x\",\"backend\":{\"type\":\"socket\",\"data\":{}}}",
		"'backend.data.addr' expects");
	refused("chardev-add",
		"{\"id\":\"x\",\"backend\":{\"type\":\"socket\",\"data\":{\"addr\":{\"type\":"
		"\"fd\",\"data\":{\"str\":\"nosuchfd\"}}}}}",
		"named 'nosuchfd' has not been found");
	refused("chardev-add",
		"{\"id\":\"x\",\"backend\":{\"type\":\"file\",\"data\":{\"out\":\"a,b\"}}}",
		"'backend.data.out' expects");
	refused("chardev-add", "{\"id\":\"a,b\",\"backend\":{\"type\":\"null\"}}", "'id'");
	refused("chardev-remove", "{\"id\":\"\"}", "not found");
	ck_assert_uint_eq(cfg.control.n_chardevs, 0);
}
END_TEST

/* libvirt's attach / detach, over and over: removed entries are reused. */
START_TEST(add_remove_cycles_reuse_the_table)
{
	struct qmp_error e;

	add_ok("{\"id\":\"keep\",\"backend\":{\"type\":\"null\"}}");
	for (int i = 0; i < 3 * CLI_MAX_CHARDEVS; i++) {
		add_ok("{\"id\":\"f1\",\"backend\":{\"type\":\"file\",\"data\":{\"out\":\"/dev/"
		       "null\"}}}");
		add_ok("{\"id\":\"f2\",\"backend\":{\"type\":\"null\"}}");
		ck_assert_int_eq(run("chardev-remove", "{\"id\":\"f1\"}", NULL, &e), 0);
		ck_assert_int_eq(run("chardev-remove", "{\"id\":\"f2\"}", NULL, &e), 0);
	}
	ck_assert_uint_le(cfg.control.n_chardevs, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_qmp_chardev");
	TCase *tc = tcase_create("chardev");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pty_answers_its_path);
	tcase_add_test(tc, unix_socket_listens_until_removed);
	tcase_add_test(tc, a_socket_handed_over_is_never_leaked);
	tcase_add_test(tc, chardev_in_use_is_busy);
	tcase_add_test(tc, bad_arguments_refused);
	tcase_add_test(tc, add_remove_cycles_reuse_the_table);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
