/* internal.h — helpers shared by regdb's own files; not part of the API. */
#ifndef REGDB_INTERNAL_H
#define REGDB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

struct regdb_error;
struct regdb_rule;
struct regdb_wmm;

/* Format a one-line message into err (when non-NULL) and return -1, so a
 * parser can `return regdb_fail(err, "...", ...)` at the point of failure. */
int regdb_fail(struct regdb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The whole file at path in a malloc'ed buffer (at most 64 MiB). */
int regdb_read_file(const char *path, uint8_t **buf, size_t *len, struct regdb_error *err);

/* db2fw.py's orders (Python tuple comparison of its Permission and WmmRule):
 * rules by range, bandwidth, gain, EIRP, flags, CAC, then WMM (none first). */
int regdb_wmm_cmp(const struct regdb_wmm *a, const struct regdb_wmm *b);
int regdb_rule_cmp(const struct regdb_rule *a, const struct regdb_rule *b);

/* The frequency range every reader and the writer insist on (cfg80211's
 * is_valid_reg_rule refuses a start at 0, an empty range; db2fw.py too):
 * NULL, or why the rule is invalid. dbtxt.c checks the same conditions
 * with the numbers in its messages. */
const char *regdb_rule_range_invalid(const struct regdb_rule *r);

#endif
