// SPDX-License-Identifier: GPL-2.0
/* ISO 3166-1 countries read with jansson from iso-codes' iso_3166-1.json. */
#include "regdb/regdb.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int iso_fail(struct regdb_error *err, const char *path, const char *what, size_t i)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg), "%.120s: entry %zu: %s", path, i, what);
	return -1;
}

static char *opt_string(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? strdup(s) : NULL;
}

static int read_entry(json_t *e, struct regdb_iso_country *c)
{
	const char *a2 = json_string_value(json_object_get(e, "alpha_2"));
	const char *a3 = json_string_value(json_object_get(e, "alpha_3"));
	const char *num = json_string_value(json_object_get(e, "numeric"));
	char *end;

	if (!a2 || !a3 || !num || strlen(a2) != 2 || strlen(a3) != 3)
		return -1;
	long n = strtol(num, &end, 10);

	if (*end || n < 0 || n > 999)
		return -1;
	memcpy(c->alpha2, a2, 3);
	memcpy(c->alpha3, a3, 4);
	c->numeric = (uint16_t)n;
	c->name = opt_string(e, "name");
	c->official_name = opt_string(e, "official_name");
	c->common_name = opt_string(e, "common_name");
	return c->name ? 0 : -1;
}

int regdb_iso_load(const char *path, struct regdb_iso *iso, struct regdb_error *err)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);

	memset(iso, 0, sizeof(*iso));
	if (!root) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "%.120s:%d: %.100s", path, jerr.line,
				 jerr.text);
		return -1;
	}
	json_t *list = json_object_get(root, "3166-1");
	size_t n = json_array_size(list);

	if (!n || !(iso->c = calloc(n, sizeof(*iso->c)))) {
		json_decref(root);
		return iso_fail(err, path, "no \"3166-1\" array", 0);
	}
	for (size_t i = 0; i < n; i++, iso->n++) {
		if (read_entry(json_array_get(list, i), &iso->c[i])) {
			iso->n++;
			regdb_iso_free(iso);
			json_decref(root);
			return iso_fail(err, path, "missing or bad alpha_2/alpha_3/numeric/name", i);
		}
	}
	json_decref(root);
	return 0;
}

void regdb_iso_free(struct regdb_iso *iso)
{
	for (size_t i = 0; i < iso->n; i++) {
		free(iso->c[i].name);
		free(iso->c[i].official_name);
		free(iso->c[i].common_name);
	}
	free(iso->c);
	iso->c = NULL;
	iso->n = 0;
}

const struct regdb_iso_country *regdb_iso_by_alpha2(const struct regdb_iso *iso, const char *a2)
{
	for (size_t i = 0; i < iso->n; i++)
		if (!strcasecmp(iso->c[i].alpha2, a2))
			return &iso->c[i];
	return NULL;
}

const struct regdb_iso_country *regdb_iso_by_alpha3(const struct regdb_iso *iso, const char *a3)
{
	for (size_t i = 0; i < iso->n; i++)
		if (!strcasecmp(iso->c[i].alpha3, a3))
			return &iso->c[i];
	return NULL;
}

const struct regdb_iso_country *regdb_iso_by_numeric(const struct regdb_iso *iso, unsigned int n)
{
	for (size_t i = 0; i < iso->n; i++)
		if (iso->c[i].numeric == n)
			return &iso->c[i];
	return NULL;
}

static bool name_is(const char *candidate, const char *name)
{
	return candidate && !strcasecmp(candidate, name);
}

const struct regdb_iso_country *regdb_iso_by_name(const struct regdb_iso *iso, const char *name)
{
	for (size_t i = 0; i < iso->n; i++) {
		const struct regdb_iso_country *c = &iso->c[i];

		if (name_is(c->name, name) || name_is(c->official_name, name) ||
		    name_is(c->common_name, name))
			return c;
	}
	return NULL;
}

const struct regdb_iso_country *regdb_iso_resolve(const struct regdb_iso *iso, const char *key)
{
	size_t len = strlen(key);
	bool digits = len > 0 && strspn(key, "0123456789") == len;

	if (digits)
		return len <= 3 ? regdb_iso_by_numeric(iso, (unsigned int)atoi(key)) : NULL;
	if (len == 2)
		return regdb_iso_by_alpha2(iso, key);
	if (len == 3 && regdb_iso_by_alpha3(iso, key))
		return regdb_iso_by_alpha3(iso, key);
	return regdb_iso_by_name(iso, key);
}
