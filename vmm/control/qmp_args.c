/* qmp_args.c — checking a request's arguments against the command table's
 * argument list, in QEMU's order: the declared arguments one by one
 * (missing, then wrong type), then anything left over. */
#include <stdio.h>
#include <string.h>

#include "vmm/control/qmp_args.h"

bool qmp_arg_next(const char **cursor, struct qmp_arg *a)
{
	const char *p = *cursor, *end, *colon;
	size_t nlen, tlen;

	if (!p || !*p)
		return false;
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	*cursor = *end ? end + 1 : end;
	a->optional = *p == '?';
	p += a->optional;
	colon = memchr(p, ':', (size_t)(end - p));
	nlen = colon ? (size_t)(colon - p) : (size_t)(end - p);
	tlen = colon ? (size_t)(end - colon - 1) : 3;
	if (nlen >= sizeof(a->name))
		nlen = sizeof(a->name) - 1;
	if (tlen >= sizeof(a->type))
		tlen = sizeof(a->type) - 1;
	memcpy(a->name, p, nlen);
	a->name[nlen] = 0;
	memcpy(a->type, colon ? colon + 1 : "any", tlen);
	a->type[tlen] = 0;
	return true;
}

/* QEMU's name for what a type wants, or NULL when anything goes. */
static const char *type_fits(const char *type, json_t *v)
{
	if (!strcmp(type, "str"))
		return json_is_string(v) ? NULL : "string";
	if (!strcmp(type, "int"))
		return json_is_integer(v) ? NULL : "integer";
	if (!strcmp(type, "bool"))
		return json_is_boolean(v) ? NULL : "boolean";
	return NULL;
}

static bool declared(const char *spec, const char *key)
{
	struct qmp_arg a;

	while (qmp_arg_next(&spec, &a))
		if (!strcmp(a.name, key) || !strcmp(a.name, "*"))
			return true;
	return false;
}

int qmp_args_check(const char *spec, json_t *args, char *desc, size_t len)
{
	const char *cursor = spec ? spec : "", *key;
	struct qmp_arg a;
	json_t *v;

	while (qmp_arg_next(&cursor, &a)) {
		const char *want;

		v = args ? json_object_get(args, a.name) : NULL;
		if (!v) {
			if (a.optional)
				continue;
			snprintf(desc, len, "Parameter '%s' is missing", a.name);
			return -1;
		}
		want = type_fits(a.type, v);
		if (want) {
			snprintf(desc, len, "Invalid parameter type for '%s', expected: %s", a.name,
				 want);
			return -1;
		}
	}
	if (!args)
		return 0;
	json_object_foreach(args, key, v)
	{
		if (!declared(spec ? spec : "", key)) {
			snprintf(desc, len, "Parameter '%s' is unexpected", key);
			return -1;
		}
	}
	return 0;
}
