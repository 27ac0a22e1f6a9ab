/* Unit tests for the random number generator's options (vmm/cli/cli_rng.c):
 * libvirt 9.0's JSON -object rng-random and -device virtio-rng-pci, QEMU's
 * defaults (no rng=: builtin; max-bytes 2^63-1 per 65536 ms), the file
 * opened at parse time with a clear error, and what is refused; objects
 * added and removed at run time (object-add, object-del) reuse entries. */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

START_TEST(libvirt_json_forms)
{
	const struct rng_dev_spec *d = &cfg.rng.devs[0];

	ck_assert_msg(PARSE("-object",
			    "{\"qom-type\":\"rng-random\",\"id\":\"objrng0\",\"filename\":"
			    "\"/dev/urandom\"}",
			    "-device",
			    "{\"driver\":\"virtio-rng-pci\",\"rng\":\"objrng0\",\"id\":\"rng0\","
			    "\"bus\":\"pci.0\",\"addr\":\"0x6\"}") == 0,
		      "%s", err);
	ck_assert_uint_eq(cfg.rng.n_objects, 1);
	ck_assert_uint_eq(cfg.rng.n_devs, 1);
	ck_assert_int_eq(d->object, 0);
	ck_assert_int_eq(d->devfn, 6 << 3);
	ck_assert_str_eq(d->id, "rng0");
	ck_assert_uint_eq(d->max_bytes, INT64_MAX);
	ck_assert_uint_eq(d->period_ms, 65536);
	ck_assert_int_ge(cfg.rng.objects[0].fd, 0); /* opened before the machine */
	cli_close_rng(&cfg);
	ck_assert_int_eq(cfg.rng.objects[0].fd, -1);
}
END_TEST

START_TEST(defaults_and_rate_limit)
{
	ck_assert_msg(PARSE("-object", "rng-random,id=r", "-object", "rng-builtin,id=b", "-device",
			    "virtio-rng-pci,rng=b,max-bytes=1024,period=250", "-device",
			    "virtio-rng-pci") == 0,
		      "%s", err);
	ck_assert_str_eq(cfg.rng.objects[0].filename, "/dev/urandom");
	ck_assert_str_eq(cfg.rng.objects[1].filename, ""); /* builtin */
	ck_assert_int_eq(cfg.rng.objects[1].fd, -1);
	ck_assert_int_eq(cfg.rng.devs[0].object, 1);
	ck_assert_uint_eq(cfg.rng.devs[0].max_bytes, 1024);
	ck_assert_uint_eq(cfg.rng.devs[0].period_ms, 250);
	ck_assert_int_eq(cfg.rng.devs[1].object, -1); /* no rng=: its own builtin */
	ck_assert_int_eq(cfg.rng.devs[1].devfn, -1);
	cli_close_rng(&cfg);
}
END_TEST

static void refused(const char *const *args, const char *why)
{
	ck_assert_int_eq(parse(args), -1);
	ck_assert_msg(strstr(err, why), "'%s' lacks '%s'", err, why);
	cli_close_rng(&cfg);
}

#define REFUSED(why, ...) refused((const char *const[]){__VA_ARGS__, NULL}, why)

START_TEST(refused_with_a_reason)
{
	REFUSED("cannot open '/nonexistent/rng': No such file", "-object",
		"rng-random,id=r,filename=/nonexistent/rng", "-device", "virtio-rng-pci,rng=r");
	REFUSED("Is a directory", "-object", "rng-random,id=r,filename=/", "-device",
		"virtio-rng-pci,rng=r");
	REFUSED("no -object rng-random or rng-builtin with id=x", "-device",
		"virtio-rng-pci,rng=x");
	REFUSED("invalid period '0'", "-device", "virtio-rng-pci,period=0");
	REFUSED("invalid max-bytes '9223372036854775808'", "-device",
		"virtio-rng-pci,max-bytes=9223372036854775808");
	REFUSED("invalid addr '1'", "-device", "virtio-rng-pci,addr=1");
	REFUSED("bus 'pci.1' not found", "-device", "virtio-rng-pci,bus=pci.1");
	REFUSED("rng-builtin: invalid filename", "-object",
		"rng-builtin,id=b,filename=/dev/random");
	REFUSED("rng-random: needs id=ID", "-object", "rng-random,filename=/dev/urandom");
	REFUSED("duplicate id 'a'", "-object", "rng-builtin,id=a", "-object", "rng-random,id=a");
}
END_TEST

/* object-add / object-del, again and again: more rounds than the table
 * has entries; a removed entry is reused, its file closed. */
START_TEST(run_time_objects)
{
	struct rng_config *r = &cfg.rng;
	char id[16];
	int i;

	ck_assert_msg(PARSE("-object", "rng-builtin,id=boot") == 0, "%s", err);
	for (unsigned k = 0; k < 3 * CLI_MAX_RNG; k++) {
		snprintf(id, sizeof(id), "o%u", k);
		char props[64];

		snprintf(props, sizeof(props), "id=%s,filename=/dev/urandom", id);
		i = cli_add_rng_object(&cfg, "rng-random", props, err, sizeof(err));
		ck_assert_msg(i == 1, "round %u: %d %s", k, i, err);
		ck_assert_int_ge(r->objects[1].fd, 0);
		ck_assert_int_eq(cli_find_rng_object(r, id), 1);
		cli_remove_rng_object(&cfg, (unsigned)i);
		ck_assert_int_eq(cli_find_rng_object(r, id), -1);
		ck_assert_uint_eq(r->n_objects, 1);
	}
	/* a hole below the end is filled first */
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=a", err, sizeof(err)), 1);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=b", err, sizeof(err)), 2);
	cli_remove_rng_object(&cfg, 1);
	ck_assert_uint_eq(r->n_objects, 3);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=c", err, sizeof(err)), 1);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=d", err, sizeof(err)), 3);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=e", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "too many rng objects"), "%s", err);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-builtin", "id=c", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "duplicate id 'c'"), "%s", err);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-egd", "id=z", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "object type 'rng-egd'"), "%s", err);
	/* a file that cannot be opened leaves no entry behind */
	cli_remove_rng_object(&cfg, 3);
	ck_assert_int_eq(cli_add_rng_object(&cfg, "rng-random", "id=f,filename=/nonexistent/x", err,
					    sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, "cannot open '/nonexistent/x'"), "%s", err);
	ck_assert_int_eq(cli_find_rng_object(r, "f"), -1);
	ck_assert_uint_eq(r->n_objects, 3);
	cli_close_rng(&cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_rng");
	TCase *tc = tcase_create("cli_rng");

	tcase_add_test(tc, libvirt_json_forms);
	tcase_add_test(tc, defaults_and_rate_limit);
	tcase_add_test(tc, refused_with_a_reason);
	tcase_add_test(tc, run_time_objects);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
