/* qmp_migration.c — QMP migrate, migrate_cancel, migrate-incoming,
 * query-migrate, the migration parameters and capabilities in QEMU's
 * shapes (the work is vmm/migration.c). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
	/* Answered at once (QEMU's detach): the copy goes on in a thread;
	 * query-migrate and the MIGRATION events tell how it goes. */
	if (migration_save(m, uri, err, sizeof(err)) < 0)
		return fail(e, err);
	return 0;
}

CMD(cmd_migrate_cancel)
{
	migration_cancel(m);
	return 0;
}

CMD(cmd_query_migrate_parameters)
{
	const struct migration_params *p = migration_params();

	*ret = json_pack("{s:I,s:I,s:i,s:i,s:i}", "max-bandwidth", (json_int_t)p->max_bandwidth,
			 "downtime-limit", (json_int_t)p->downtime_limit, "cpu-throttle-initial",
			 (int)p->throttle_initial, "cpu-throttle-increment",
			 (int)p->throttle_increment, "max-cpu-throttle", (int)p->throttle_max);
	return 0;
}

/* A non-negative integer parameter, if given: 1 set, 0 absent, -1 bad. */
static int uint_param(json_t *args, const char *name, uint64_t max, uint64_t *v,
		      struct qmp_error *e)
{
	json_t *j = json_object_get(args, name);

	if (!j)
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0 ||
	    (uint64_t)json_integer_value(j) > max) {
		snprintf(e->cls, sizeof(e->cls), "GenericError");
		snprintf(e->desc, sizeof(e->desc),
			 "Parameter '%s' expects an integer in the range of 0 to %llu", name,
			 (unsigned long long)max);
		return -1;
	}
	*v = (uint64_t)json_integer_value(j);
	return 1;
}

CMD(cmd_migrate_set_parameters)
{
	struct migration_params *p = migration_params();
	uint64_t bw = p->max_bandwidth, down = p->downtime_limit;
	uint64_t initial = p->throttle_initial, increment = p->throttle_increment,
		 max = p->throttle_max;

	/* QEMU's limits: SIZE_MAX bytes/s, 2000 s of downtime, 1-99 % */
	if (uint_param(args, "max-bandwidth", INT64_MAX, &bw, e) < 0 ||
	    uint_param(args, "downtime-limit", 2000000, &down, e) < 0 ||
	    uint_param(args, "cpu-throttle-initial", 99, &initial, e) < 0 ||
	    uint_param(args, "cpu-throttle-increment", 99, &increment, e) < 0 ||
	    uint_param(args, "max-cpu-throttle", 99, &max, e) < 0)
		return -1;
	if (!initial || !increment || !max)
		return fail(e, "The CPU throttle parameters expect 1 to 99 (percent)");
	p->max_bandwidth = bw;
	p->downtime_limit = down;
	p->throttle_initial = (unsigned)initial;
	p->throttle_increment = (unsigned)increment;
	p->throttle_max = (unsigned)max;
	return 0;
}

CMD(cmd_migrate_incoming)
{
	const char *uri = json_string_value(json_object_get(args, "uri"));
	json_t *exit_on_error = json_object_get(args, "exit-on-error");
	char err[256];

	if (!uri)
		return fail(e, "Parameter 'uri' is missing or not a string");
	if (!m->cfg->incoming || strcmp(m->cfg->incoming, "defer"))
		return fail(e, "The incoming migration needs vmm started with -incoming defer");
	if (migration_status()->state != MIG_NONE)
		return fail(e, "The incoming migration has already been started");
	if (migration_incoming_start(m, uri, !exit_on_error || json_is_true(exit_on_error), err,
				     sizeof(err)) < 0)
		return fail(e, err);
	return 0;
}

/* The capabilities vmm has: `events` (the MIGRATION events, always sent:
 * libvirt turns it on at every connection and must hear success) and
 * `return-path` (the destination acknowledges the load on the stream's
 * connection; libvirt's native migration sets it on both sides) and
 * `auto-converge` (vCPUs throttled while the guest dirties faster than
 * the passes send: `virsh migrate --auto-converge`). */
CMD(cmd_query_migrate_capabilities)
{
	const struct migration_params *p = migration_params();

	*ret = json_pack("[{s:s,s:b},{s:s,s:b},{s:s,s:b}]", "capability", "events", "state",
			 p->events, "capability", "return-path", "state", p->return_path,
			 "capability", "auto-converge", "state", p->auto_converge);
	return 0;
}

CMD(cmd_migrate_set_capabilities)
{
	struct migration_params *p = migration_params();
	bool events = p->events, return_path = p->return_path, converge = p->auto_converge;
	json_t *caps = json_object_get(args, "capabilities"), *c;
	size_t i;

	if (!json_is_array(caps))
		return fail(e, "Parameter 'capabilities' is missing or not a list");
	json_array_foreach(caps, i, c)
	{
		const char *name = json_string_value(json_object_get(c, "capability"));
		json_t *state = json_object_get(c, "state");

		if (!name || !json_is_boolean(state))
			return fail(e, "Each capability needs a 'capability' name and a boolean 'state'");
		if (!strcmp(name, "events"))
			events = json_is_true(state);
		else if (!strcmp(name, "return-path"))
			return_path = json_is_true(state);
		else if (!strcmp(name, "auto-converge"))
			converge = json_is_true(state);
		else {
			snprintf(e->cls, sizeof(e->cls), "GenericError");
			snprintf(e->desc, sizeof(e->desc), "Capability '%s' is not supported", name);
			return -1;
		}
	}
	/* as QEMU: not while a migration runs (its job took them at start) */
	if ((return_path != p->return_path || converge != p->auto_converge) &&
	    migration_running())
		return fail(e, "There's a migration process in progress");
	p->events = events;
	p->return_path = return_path;
	p->auto_converge = converge;
	return 0;
}

/* ram: QEMU's counters; while a live migration runs, the pre-copy's view. */
static json_t *ram_stats(const struct migration_status *s)
{
	const struct mig_stats *st = &s->stats;
	const struct mig_precopy *p = s->precopy;
	uint64_t remaining = p ? p->remaining : 0;

	if (!p && s->state != MIG_COMPLETED && st->total > st->transferred)
		remaining = st->total - st->transferred; /* an incoming stream */
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "transferred",
			 (json_int_t)st->transferred, "remaining", (json_int_t)remaining, "total",
			 (json_int_t)(s->ram_total ? s->ram_total : st->total), "duplicate",
			 (json_int_t)st->zero_pages, "skipped", (json_int_t)0, "normal",
			 (json_int_t)st->normal_pages, "normal-bytes",
			 (json_int_t)(st->normal_pages * MIG_PAGE), "dirty-pages-rate",
			 (json_int_t)(p ? p->dirty_rate : 0), "mbps",
			 (json_int_t)(p ? p->mbps : s->mbps), "dirty-sync-count",
			 (json_int_t)(p ? p->dirty_syncs : s->dirty_syncs), "page-size",
			 (json_int_t)MIG_PAGE);
}

static uint64_t elapsed_ms(const struct migration_status *s)
{
	struct timespec ts;

	if (s->state != MIG_SETUP && s->state != MIG_ACTIVE && s->state != MIG_CANCELLING)
		return s->total_ms;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 - s->start_ms;
}

CMD(cmd_query_migrate)
{
	struct migration_status copy;
	const struct migration_status *s = &copy;
	struct mig_precopy pre;
	json_t *o;

	migration_status_copy(&copy, &pre);
	if (s->state == MIG_NONE) {
		*ret = json_object();
		return 0;
	}
	o = json_pack("{s:s,s:I,s:I,s:o}", "status", migration_state_name(s->state), "total-time",
		      (json_int_t)elapsed_ms(s), "setup-time", (json_int_t)s->setup_ms, "ram",
		      ram_stats(s));
	if (s->state == MIG_ACTIVE && s->precopy)
		json_object_set_new(o, "expected-downtime",
				    json_integer((json_int_t)s->precopy->expected_downtime_ms));
	if (s->state == MIG_ACTIVE && s->precopy && s->precopy->throttle.pct)
		json_object_set_new(o, "cpu-throttle-percentage",
				    json_integer((json_int_t)s->precopy->throttle.pct));
	if (s->state == MIG_COMPLETED)
		json_object_set_new(
			o, "downtime",
			json_integer((json_int_t)(s->downtime_ms ? s->downtime_ms : s->total_ms)));
	if (s->state == MIG_FAILED)
		json_object_set_new(o, "error-desc", json_string(s->error));
	*ret = o;
	return 0;
}

const struct qmp_command qmp_migration_commands[] = {
	{"migrate", cmd_migrate, "uri:str,?blk:bool,?inc:bool,?detach:bool,?resume:bool"},
	{"migrate_cancel", cmd_migrate_cancel, NULL},
	{"migrate-set-parameters", cmd_migrate_set_parameters,
	 "?max-bandwidth:int,?downtime-limit:int,?cpu-throttle-initial:int,"
	 "?cpu-throttle-increment:int,?max-cpu-throttle:int"},
	{"query-migrate-parameters", cmd_query_migrate_parameters, NULL},
	{"migrate-incoming", cmd_migrate_incoming, "uri:str,?exit-on-error:bool"},
	{"query-migrate", cmd_query_migrate, NULL},
	{"query-migrate-capabilities", cmd_query_migrate_capabilities, NULL},
	{"migrate-set-capabilities", cmd_migrate_set_capabilities, "capabilities:any"},
	{NULL, NULL, NULL},
};
