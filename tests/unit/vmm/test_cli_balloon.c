/* Unit tests for the balloon's options (vmm/cli/cli_balloon.c): libvirt
 * 9.0's JSON -device virtio-balloon-pci, QEMU's spelling and defaults,
 * one balloon per machine, and what is refused. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "tests/unit/vmm/cli_args.h"
#include "vmm/cli/cli.h"

static struct vmm_config cfg;
static char err[512];

static int parse(const char *const *args)
{
	return cli_parse_list(args, &cfg, err, sizeof(err));
}

#define PARSE(...) parse((const char *const[]){__VA_ARGS__, NULL})

START_TEST(libvirt_json_form)
{
	ck_assert_msg(PARSE("-device", "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\","
				       "\"bus\":\"pci.0\",\"addr\":\"0x6\",\"deflate-on-oom\":true,"
				       "\"free-page-reporting\":true}") == 0,
		      "%s", err);
	ck_assert(cfg.balloon.present);
	ck_assert_str_eq(cfg.balloon.id, "balloon0");
	ck_assert_int_eq(cfg.balloon.devfn, 6 << 3);
	ck_assert(cfg.balloon.deflate_on_oom);
	ck_assert(cfg.balloon.free_page_reporting);
}
END_TEST

START_TEST(defaults_and_properties)
{
	ck_assert_msg(PARSE("-device", "virtio-balloon-pci") == 0, "%s", err);
	ck_assert(cfg.balloon.present);
	ck_assert_int_eq(cfg.balloon.devfn, -1);
	ck_assert(!cfg.balloon.deflate_on_oom && !cfg.balloon.free_page_reporting);
	ck_assert_uint_eq(cfg.balloon.poll_secs, 0);
	ck_assert_msg(PARSE("-device", "virtio-balloon,deflate-on-oom=on,"
				       "guest-stats-polling-interval=10,addr=07.0") == 0,
		      "%s", err);
	ck_assert(cfg.balloon.deflate_on_oom);
	ck_assert_uint_eq(cfg.balloon.poll_secs, 10);
	ck_assert_int_eq(cfg.balloon.devfn, 7 << 3);
}
END_TEST

START_TEST(refused)
{
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci", "-device", "virtio-balloon-pci"),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "only one balloon"));
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci,deflate-on-oom=maybe"), -1);
	ck_assert_ptr_nonnull(strstr(err, "deflate-on-oom"));
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci,guest-stats-polling-interval=-1"),
			 -1);
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci,bus=pci.1"), -1);
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci,addr=0x1"), -1);
	ck_assert_int_eq(PARSE("-device", "virtio-balloon-pci,page-poison=on"), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_balloon");
	TCase *t = tcase_create("cli");

	tcase_add_test(t, libvirt_json_form);
	tcase_add_test(t, defaults_and_properties);
	tcase_add_test(t, refused);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
