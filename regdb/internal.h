/* internal.h — helpers shared by regdb's own files; not part of the API. */
#ifndef REGDB_INTERNAL_H
#define REGDB_INTERNAL_H

struct regdb_error;

/* Format a one-line message into err (when non-NULL) and return -1, so a
 * parser can `return regdb_fail(err, "...", ...)` at the point of failure. */
int regdb_fail(struct regdb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
