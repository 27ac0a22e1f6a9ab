// SPDX-License-Identifier: GPL-2.0
/* Compiled-in domains; the data is generated at build time (regdb/gen/mkbuiltin.c). */
#include "regdb/regdb.h"

#include <stdlib.h>
#include <string.h>

struct builtin_domain {
	const char *alpha2;
	int dfs_region;
	unsigned int n_rules;
	const struct regdb_rule *rules;
};

#include REGDB_BUILTIN_INC

struct regdb_db *regdb_db_builtin(void)
{
	size_t n = sizeof(builtin_domains) / sizeof(builtin_domains[0]);
	struct regdb_domain **doms = calloc(n, sizeof(*doms));

	if (!doms)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct builtin_domain *b = &builtin_domains[i];

		doms[i] = regdb_domain_new(b->alpha2, (enum regdb_dfs_region)b->dfs_region,
					   b->n_rules);
		if (!doms[i]) {
			while (i--)
				free(doms[i]);
			free(doms);
			return NULL;
		}
		memcpy(doms[i]->rules, b->rules, b->n_rules * sizeof(*b->rules));
	}
	return regdb_db_new(doms, n, NULL);
}
