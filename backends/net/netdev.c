/* netdev.c — what every network backend shares: freeing, and walking a
 * -netdev option string ("k=v,k=v") the way QEMU reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "backends/net/netdev_internal.h"

void netdev_free(struct netdev *nd)
{
	if (nd)
		nd->ops->free(nd);
}

int netdev_each_opt(const char *type, const char *opts, netdev_opt_fn fn, void *arg, char *err,
		    size_t errlen)
{
	char *buf = strdup(opts ? opts : ""), *save = NULL;
	int rc = 0;

	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", type);
		return -1;
	}
	for (char *tok = strtok_r(buf, ",", &save); tok && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "%s: expected key=value, got '%s'", type, tok);
			rc = -1;
			break;
		}
		*eq = 0;
		if (!strcmp(tok, "id"))
			continue;
		rc = fn(arg, tok, eq + 1, err, errlen);
	}
	free(buf);
	return rc;
}

int netdev_parse_bool(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "y") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "n") || !strcmp(v, "false"))
		*out = false;
	else {
		snprintf(err, errlen, "%s=%s: expected on or off", key, v);
		return -1;
	}
	return 0;
}
