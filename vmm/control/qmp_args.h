/* qmp_args.h — a QMP command's (or event's) arguments, written once as
 * "name:type,?name:type" ('?' marks an optional one; types str, int, bool,
 * any; "?*:any" last: further members of any name, which the command
 * checks itself) in the command table. query-qmp-schema describes them and every
 * request is checked against them, so the two cannot disagree. */
#ifndef VMM_QMP_ARGS_H
#define VMM_QMP_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct qmp_arg {
	char name[48];
	char type[16];
	bool optional;
};

/* The next argument of spec at *cursor (start with the spec itself);
 * false at the end. */
bool qmp_arg_next(const char **cursor, struct qmp_arg *a);
/* 0 when args (NULL is {}) fits spec, else -1 with QEMU's GenericError
 * text in desc: "Parameter 'x' is missing", "Invalid parameter type for
 * 'x', expected: string", "Parameter 'x' is unexpected". */
int qmp_args_check(const char *spec, json_t *args, char *desc, size_t len);

#endif /* VMM_QMP_ARGS_H */
