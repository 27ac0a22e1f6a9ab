/* qmp_migration.c — QMP migrate, migrate-incoming and query-migrate in
 * QEMU's shapes (the work is vmm/migration.c). */
#include <stdio.h>
#include <string.h>

#include "vmm/control/qmp_commands.h"
#include "vmm/migration.h"

#define CMD(name)                                                                                  \
	static int name(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)

static int fail(struct qmp_error *e, const char *msg)
{
	snprintf(e->cls, sizeof(e->cls), "GenericError");
	snprintf(e->desc, sizeof(e->desc), "%s", msg);
	return -1;
}

static bool arg_true(json_t *args, const char *name)
{
	return json_is_true(json_object_get(args, name));
}

CMD(cmd_migrate)
{
	const char *uri = json_string_value(json_object_get(args, "uri"));
	char err[256];

	if (!uri)
		return fail(e, "Parameter 'uri' is missing or not a string");
	if (arg_true(args, "blk") || arg_true(args, "inc"))
		return fail(e, "vmm does not copy disks: use shared storage");
	if (arg_true(args, "resume"))
		return fail(e, "vmm has no postcopy to resume");
	if (!m->ram)
		return fail(e, "There is no machine to migrate (-machine none)");
	if (migration_save(m, uri, err, sizeof(err)) < 0)
		return fail(e, err);
	return 0;
}

CMD(cmd_migrate_incoming)
{
	const char *uri = json_string_value(json_object_get(args, "uri"));
	char err[256];

	if (!uri)
		return fail(e, "Parameter 'uri' is missing or not a string");
	if (!m->cfg->incoming || strcmp(m->cfg->incoming, "defer"))
		return fail(e, "The incoming migration needs vmm started with -incoming defer");
	if (migration_status()->state != MIG_NONE)
		return fail(e, "The incoming migration has already been started");
	if (migration_incoming(m, uri, err, sizeof(err)) < 0)
		return fail(e, err);
	return 0;
}

CMD(cmd_query_migrate)
{
	const struct migration_status *s = migration_status();
	const struct mig_stats *st = &s->stats;
	json_t *o;

	if (s->state == MIG_NONE) {
		*ret = json_object();
		return 0;
	}
	o = json_pack("{s:s,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I}}", "status",
		      migration_state_name(s->state), "total-time", (json_int_t)s->total_ms, "ram",
		      "transferred", (json_int_t)st->transferred, "remaining",
		      (json_int_t)(st->total > st->transferred ? st->total - st->transferred : 0),
		      "total", (json_int_t)st->total, "duplicate", (json_int_t)st->zero_pages,
		      "normal", (json_int_t)st->normal_pages, "normal-bytes",
		      (json_int_t)(st->normal_pages * MIG_PAGE));
	if (s->state == MIG_COMPLETED)
		json_object_set_new(o, "downtime", json_integer((json_int_t)s->total_ms));
	if (s->state == MIG_FAILED)
		json_object_set_new(o, "error-desc", json_string(s->error));
	*ret = o;
	return 0;
}

const struct qmp_command qmp_migration_commands[] = {
	{"migrate", cmd_migrate, "uri:str,?blk:bool,?inc:bool,?detach:bool,?resume:bool"},
	{"migrate-incoming", cmd_migrate_incoming, "uri:str,?exit-on-error:bool"},
	{"query-migrate", cmd_query_migrate, NULL},
	{NULL, NULL, NULL},
};
