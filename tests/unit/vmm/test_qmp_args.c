/* Unit tests for QMP argument checking (vmm/qmp_args.c) against the
 * command table itself: every command, every declared argument. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "vmm/control/qmp_args.h"
#include "vmm/control/qmp_commands.h"
#include "tests/unit/check_run.h"

/* A value of the type, and one of another type. */
static json_t *value_of(const char *type, bool wrong)
{
	if (!strcmp(type, "str"))
		return wrong ? json_integer(1) : json_string("x");
	if (!strcmp(type, "int"))
		return wrong ? json_string("1") : json_integer(1);
	if (!strcmp(type, "bool"))
		return wrong ? json_integer(1) : json_true();
	return json_array();
}

/* The command's mandatory arguments, each with a value of its type. */
static json_t *valid_args(const char *spec)
{
	json_t *args = json_object();
	struct qmp_arg a;

	while (qmp_arg_next(&spec, &a))
		if (!a.optional && strcmp(a.name, "*"))
			json_object_set_new(args, a.name, value_of(a.type, false));
	return args;
}

/* Whether the command takes members of any name ("?*:any": device_add's
 * device properties), which it checks itself. */
static bool open_ended(const struct qmp_command *c)
{
	return c->args && strstr(c->args, ",?*:any");
}

static int check(const struct qmp_command *c, json_t *args, char *desc)
{
	int r = qmp_args_check(c->args, args, desc, 256);

	json_decref(args);
	return r;
}

START_TEST(every_command_refuses_unexpected)
{
	const struct qmp_command *c;
	char desc[256];
	size_t n = 0;

	for (size_t i = 0; (c = qmp_command_at(i)); i++, n++) {
		json_t *args = valid_args(c->args);

		ck_assert_msg(check(c, json_deep_copy(args), desc) == 0, "%s: %s", c->name, desc);
		json_object_set_new(args, "x-unexpected", json_integer(1));
		if (open_ended(c)) {
			ck_assert_int_eq(check(c, args, desc), 0);
			continue;
		}
		ck_assert_int_eq(check(c, args, desc), -1);
		ck_assert_str_eq(desc, "Parameter 'x-unexpected' is unexpected");
	}
	ck_assert_uint_gt(n, 20);
}
END_TEST

START_TEST(every_mandatory_argument_is_required)
{
	const struct qmp_command *c;
	char desc[256], want[128];
	size_t mandatory = 0;

	for (size_t i = 0; (c = qmp_command_at(i)); i++) {
		const char *cursor = c->args;
		struct qmp_arg a;

		while (qmp_arg_next(&cursor, &a)) {
			json_t *args = valid_args(c->args);

			json_object_del(args, a.name);
			if (a.optional) {
				ck_assert_int_eq(check(c, args, desc), 0);
				continue;
			}
			mandatory++;
			ck_assert_int_eq(check(c, args, desc), -1);
			snprintf(want, sizeof(want), "Parameter '%s' is missing", a.name);
			ck_assert_str_eq(desc, want);
		}
	}
	ck_assert_uint_ge(mandatory, 6);
}
END_TEST

START_TEST(every_typed_argument_is_type_checked)
{
	static const char *const expected[][2] = {
		{"str", "string"}, {"int", "integer"}, {"bool", "boolean"}};
	const struct qmp_command *c;
	char desc[256], want[128];
	size_t typed = 0;

	for (size_t i = 0; (c = qmp_command_at(i)); i++) {
		const char *cursor = c->args;
		struct qmp_arg a;

		while (qmp_arg_next(&cursor, &a)) {
			for (size_t t = 0; t < 3; t++) {
				json_t *args;

				if (strcmp(a.type, expected[t][0]))
					continue;
				typed++;
				args = valid_args(c->args);
				json_object_set_new(args, a.name, value_of(a.type, true));
				ck_assert_int_eq(check(c, args, desc), -1);
				snprintf(want, sizeof(want),
					 "Invalid parameter type for '%s', expected: %s", a.name,
					 expected[t][1]);
				ck_assert_str_eq(desc, want);
			}
		}
	}
	ck_assert_uint_ge(typed, 10);
}
END_TEST

/* QEMU 7.2's answers to the same requests (qemu-system-x86_64 -machine none). */
START_TEST(qemu_messages)
{
	const struct qmp_command *c = qmp_find_command("qom-list");
	char desc[256];

	ck_assert_int_eq(check(c, json_object(), desc), -1);
	ck_assert_str_eq(desc, "Parameter 'path' is missing");
	ck_assert_int_eq(check(c, json_pack("{s:i,s:i}", "path", 1, "y", 2), desc), -1);
	ck_assert_str_eq(desc, "Invalid parameter type for 'path', expected: string");
	c = qmp_find_command("set_link");
	ck_assert_int_eq(check(c, json_pack("{s:s}", "name", "a"), desc), -1);
	ck_assert_str_eq(desc, "Parameter 'up' is missing");
	c = qmp_find_command("query-status");
	ck_assert_int_eq(check(c, json_pack("{s:i}", "x", 1), desc), -1);
	ck_assert_str_eq(desc, "Parameter 'x' is unexpected");
	ck_assert_int_eq(check(c, NULL, desc), 0);
}
END_TEST

/* query-qmp-schema's "<command>-arg" members are the checked arguments. */
START_TEST(schema_matches_checking)
{
	const struct qmp_command *c, *schema_cmd = qmp_find_command("query-qmp-schema");
	struct qmp_error e = {0};
	json_t *schema = NULL, *entry;
	size_t i, commands = 0;

	ck_assert_int_eq(schema_cmd->fn(NULL, NULL, &schema, &e), 0);
	for (i = 0; (c = qmp_command_at(i)); i++) {
		char type[96], spec[256] = "", want[256];
		size_t j;

		snprintf(type, sizeof(type), "%s-arg", c->name);
		json_array_foreach(schema, j, entry)
		{
			json_t *m;
			size_t k;

			if (strcmp(json_string_value(json_object_get(entry, "name")), type))
				continue;
			json_array_foreach(json_object_get(entry, "members"), k, m)
			snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s%s%s:%s",
				 k ? "," : "", json_object_get(m, "default") ? "?" : "",
				 json_string_value(json_object_get(m, "name")),
				 json_string_value(json_object_get(m, "type")));
			commands++;
		}
		/* the open end is no member */
		snprintf(want, sizeof(want), "%s", c->args ? c->args : "");
		if (open_ended(c))
			*strstr(want, ",?*:any") = 0;
		ck_assert_str_eq(spec, want);
	}
	ck_assert_uint_eq(commands, i);
	json_decref(schema);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_qmp_args");
	TCase *tc = tcase_create("qmp_args");

	tcase_add_test(tc, every_command_refuses_unexpected);
	tcase_add_test(tc, every_mandatory_argument_is_required);
	tcase_add_test(tc, every_typed_argument_is_type_checked);
	tcase_add_test(tc, qemu_messages);
	tcase_add_test(tc, schema_matches_checking);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
