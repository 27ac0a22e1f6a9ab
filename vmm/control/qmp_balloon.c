/* qmp_balloon.c — the memory balloon over QMP, in QEMU's shapes:
 * balloon {"value": bytes}, query-balloon {"actual": bytes}, and the
 * device's QOM properties that libvirt reads and writes with qom-get /
 * qom-set on /machine/peripheral/ID (virsh setmem, dommemstat --period):
 * guest-stats-polling-interval and guest-stats
 * {"stats": {"stat-swap-in": N, ...}, "last-update": seconds}.
 * A figure the guest never reported is -1 (QEMU prints the same value
 * as an unsigned 2^64-1, which JSON libraries and libvirt read as -1). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "devices/virtio/virtio.h"
#include "vmm/control/qmp_commands.h"

static int fail(struct qmp_error *e, const char *cls, const char *fmt, const char *arg)
{
	snprintf(e->cls, sizeof(e->cls), "%s", cls);
	snprintf(e->desc, sizeof(e->desc), fmt, arg);
	return -1;
}

int qmp_balloon(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)
{
	const char *why = NULL;
	int r = vmm_balloon_set_target(m, json_integer_value(json_object_get(args, "value")), &why);

	if (r == -ENODEV)
		return fail(e, "DeviceNotActive", "%s", why);
	return r < 0 ? fail(e, "GenericError", "%s", why) : 0;
}

int qmp_query_balloon(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)
{
	struct virtio_balloon *b = vmm_balloon_dev(m);

	if (!b)
		return fail(e, "DeviceNotActive", "%s", "No balloon device has been activated");
	*ret = json_pack("{s:I}", "actual", (json_int_t)virtio_balloon_actual(b));
	return 0;
}

/* The balloon named by path: "/machine/peripheral/ID" or just "ID". */
static struct virtio_balloon *balloon_at(struct machine *m, const char *path)
{
	const char *id = vmm_balloon_id(m);
	static const char prefix[] = "/machine/peripheral/";

	if (!id)
		return NULL;
	if (!strncmp(path, prefix, sizeof(prefix) - 1))
		path += sizeof(prefix) - 1;
	return strcmp(path, id) ? NULL : vmm_balloon_dev(m);
}

static json_t *guest_stats(struct virtio_balloon *b)
{
	struct virtio_balloon_guest_stats gs;
	json_t *stats = json_object();

	virtio_balloon_guest_stats(b, &gs);
	for (unsigned t = 0; t < VIRTIO_BALLOON_NSTATS; t++)
		json_object_set_new(
			stats, virtio_balloon_stat_name(t),
			json_integer(gs.stat[t] == UINT64_MAX ? -1 : (json_int_t)gs.stat[t]));
	return json_pack("{s:o,s:I}", "stats", stats, "last-update", (json_int_t)gs.last_update);
}

/* The properties qom-list shows for the balloon, name:type. */
static const char *const balloon_props[][2] = {
	{"type", "string"},
	{"guest-stats", "guest statistics"},
	{"guest-stats-polling-interval", "int"},
	{"deflate-on-oom", "bool"},
	{"free-page-reporting", "bool"},
};

json_t *qmp_balloon_qom_list(struct machine *m, const char *path)
{
	json_t *list;

	if (!balloon_at(m, path))
		return NULL;
	list = json_array();
	for (size_t i = 0; i < sizeof(balloon_props) / sizeof(balloon_props[0]); i++)
		json_array_append_new(list, json_pack("{s:s,s:s}", "name", balloon_props[i][0],
						      "type", balloon_props[i][1]));
	return list;
}

int qmp_qom_get(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *prop = json_string_value(json_object_get(args, "property"));
	struct virtio_balloon *b = balloon_at(m, path);

	if (!b)
		return fail(e, "DeviceNotFound", "Device '%s' not found", path);
	if (!strcmp(prop, "guest-stats"))
		*ret = guest_stats(b);
	else if (!strcmp(prop, "guest-stats-polling-interval"))
		*ret = json_integer(virtio_balloon_poll_interval(b));
	else if (!strcmp(prop, "deflate-on-oom"))
		*ret = json_boolean(m->cfg->balloon.deflate_on_oom);
	else if (!strcmp(prop, "free-page-reporting"))
		*ret = json_boolean(m->cfg->balloon.free_page_reporting);
	else if (!strcmp(prop, "type"))
		*ret = json_string("virtio-balloon-pci");
	else
		return fail(e, "GenericError", "Property 'virtio-balloon-pci.%s' not found", prop);
	return 0;
}

int qmp_qom_set(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *prop = json_string_value(json_object_get(args, "property"));
	json_t *value = json_object_get(args, "value");
	struct virtio_balloon *b = balloon_at(m, path);
	json_int_t secs;

	if (!b)
		return fail(e, "DeviceNotFound", "Device '%s' not found", path);
	if (strcmp(prop, "guest-stats-polling-interval")) {
		for (size_t i = 0; i < sizeof(balloon_props) / sizeof(balloon_props[0]); i++)
			if (!strcmp(prop, balloon_props[i][0]))
				return fail(e, "GenericError", "Property '%s' is read-only now",
					    prop);
		return fail(e, "GenericError", "Property 'virtio-balloon-pci.%s' not found", prop);
	}
	if (!json_is_integer(value))
		return fail(e, "GenericError", "Parameter '%s' expects integer", "value");
	secs = json_integer_value(value);
	if (secs < 0)
		return fail(e, "GenericError", "%s", "timer value must be greater than zero");
	if (secs > UINT32_MAX)
		return fail(e, "GenericError", "%s", "timer value is too big");
	virtio_balloon_set_poll_interval(b, secs);
	return 0;
}
