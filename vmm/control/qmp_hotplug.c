/* qmp_hotplug.c — device_add, device_del, blockdev-add, blockdev-del,
 * netdev_add, netdev_del, object-add, object-del, chardev-add and
 * chardev-remove (hotplug.c, chardev_hotplug.c and vserial.c do the
 * work): what `virsh attach-device` and `detach-device` send for a disk, a
 * NIC or an rng behind a pcie-root-port, or a virtio-serial <channel>. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/qmp.h"
#include "vmm/control/qmp_commands.h"

#define CMD(name) static int name(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)

static int fail(struct qmp_error *e, const char *cls, const char *desc)
{
	snprintf(e->cls, sizeof(e->cls), "%s", cls);
	snprintf(e->desc, sizeof(e->desc), "%s", desc);
	return -1;
}

/* A property device_props cannot pass: "CMD: what 'KEY'". */
static int prop_fail(struct qmp_error *e, const char *cmd, const char *what, const char *key)
{
	snprintf(e->cls, sizeof(e->cls), "GenericError");
	snprintf(e->desc, sizeof(e->desc), "%s: %s '%s'", cmd, what, key);
	return -1;
}

/* The arguments but type_key as -device's (or -netdev's, -object's)
 * text: key=value,... after what out already holds. cmd names the
 * command in errors. */
static int device_props(const char *cmd, json_t *args, const char *type_key, char *out, size_t len,
			struct qmp_error *e)
{
	const char *key;
	json_t *v;
	size_t n = strlen(out);

	json_object_foreach(args, key, v)
	{
		char val[256];
		int w;

		if (!strcmp(key, type_key))
			continue;
		if (json_is_string(v))
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(val, sizeof(val), "%lld", (long long)json_integer_value(v));
		else if (json_is_boolean(v))
			snprintf(val, sizeof(val), "%s", json_is_true(v) ? "on" : "off");
		else
			return prop_fail(e, cmd, "not a scalar value: property", key);
		if (strchr(val, ',') || strchr(key, ',') || strchr(key, '='))
			return prop_fail(e, cmd, "',' or '=' in property", key);
		w = snprintf(out + n, len - n, "%s%s=%s", n ? "," : "", key, val);
		if (w < 0 || (size_t)w >= len - n)
			return prop_fail(e, cmd, "properties too long at", key);
		n += (size_t)w;
	}
	return 0;
}

CMD(cmd_device_add)
{
	const char *driver = json_string_value(json_object_get(args, "driver"));
	char props[512] = "", err[256];

	if (device_props("device_add", args, "driver", props, sizeof(props), e) < 0)
		return -1;
	if (machine_device_add(m, driver, props, err, sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

CMD(cmd_device_del)
{
	const char *id = json_string_value(json_object_get(args, "id"));
	char err[256];
	int r = machine_device_del(m, id, err, sizeof(err));

	if (r < 0)
		return fail(e, r == -ENOENT ? "DeviceNotFound" : "GenericError", err);
	return 0;
}

CMD(cmd_blockdev_add)
{
	char *json = json_dumps(args, JSON_COMPACT);
	char err[256];
	int r = json ? machine_blockdev_add(m, json, err, sizeof(err)) : -1;

	free(json);
	if (r < 0)
		return fail(e, "GenericError", json ? err : "out of memory");
	return 0;
}

CMD(cmd_blockdev_del)
{
	char err[256];

	if (machine_blockdev_del(m, json_string_value(json_object_get(args, "node-name")), err,
				 sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

CMD(cmd_netdev_add)
{
	char val[512], err[256];

	snprintf(val, sizeof(val), "%s", json_string_value(json_object_get(args, "type")));
	if (device_props("netdev_add", args, "type", val, sizeof(val), e) < 0)
		return -1;
	if (machine_netdev_add(m, val, err, sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

CMD(cmd_netdev_del)
{
	const char *id = json_string_value(json_object_get(args, "id"));
	char err[256];

	if (machine_netdev_del(m, id, err, sizeof(err)) < 0)
		return fail(e, strstr(err, "not found") ? "DeviceNotFound" : "GenericError", err);
	return 0;
}

/* QEMU's flat form, {"qom-type": T, "id": ID, "filename": ...}, or the
 * one before QEMU 6.0 with the properties in "props", which libvirt sends
 * when the schema's qom-type is not QEMU's enum (vmm's is a string). */
CMD(cmd_object_add)
{
	const char *type = json_string_value(json_object_get(args, "qom-type"));
	json_t *inner = json_object_get(args, "props"), *flat;
	char props[512] = "", err[256];
	int r;

	if (inner && !json_is_object(inner))
		return fail(e, "GenericError", "object-add: props must be an object");
	flat = json_deep_copy(args);
	if (!flat)
		return fail(e, "GenericError", "out of memory");
	json_object_del(flat, "props");
	if (inner)
		json_object_update(flat, inner);
	r = device_props("object-add", flat, "qom-type", props, sizeof(props), e);
	json_decref(flat);
	if (r < 0)
		return -1;
	if (machine_object_add(m, type, props, err, sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

CMD(cmd_object_del)
{
	const char *id = json_string_value(json_object_get(args, "id"));
	char err[256];

	if (machine_object_del(m, id, err, sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

/* ------------------------------------------------------------ chardevs */

/* A string member of a chardev-add argument, usable in -chardev's text:
 * NULL with e set when it is missing, not a string or holds a ','. */
static const char *chr_str(json_t *obj, const char *key, const char *where, struct qmp_error *e)
{
	const char *v = json_string_value(json_object_get(obj, key));

	if (!v || !v[0] || strchr(v, ','))
		snprintf(e->desc, sizeof(e->desc), "Parameter '%s.%s' %s", where, key,
			 !json_object_get(obj, key) ? "is missing"
						    : "expects a non-empty string without ','");
	return v && v[0] && !strchr(v, ',') ? v : NULL;
}

/* A bool member (absent: dflt) as -chardev's on/off. */
static const char *chr_flag(json_t *obj, const char *key, bool dflt)
{
	json_t *v = json_object_get(obj, key);

	return (json_is_boolean(v) ? json_is_true(v) : dflt) ? "on" : "off";
}

/* e->desc already says what went wrong. */
static int fail_as_set(struct qmp_error *e)
{
	snprintf(e->cls, sizeof(e->cls), "GenericError");
	return -1;
}

/* ChardevSocket's addr as -chardev's socket,...: unix, inet or fd (a
 * getfd name: libvirt passes the listening socket so). 0 or -1. */
static int socket_addr(json_t *addr, char *out, size_t len, struct qmp_error *e)
{
	json_t *ad = json_object_get(addr, "data");
	const char *type = json_string_value(json_object_get(addr, "type")), *a, *b;
	int fd;

	if (!type || !json_is_object(ad))
		return fail(e, "GenericError",
			    "Parameter 'backend.data.addr' expects {type, data}");
	if (!strcmp(type, "unix")) {
		if (!(a = chr_str(ad, "path", "backend.data.addr.data", e)))
			return fail_as_set(e);
		snprintf(out, len, "socket,path=%s", a);
	} else if (!strcmp(type, "inet")) {
		if (!(a = chr_str(ad, "host", "backend.data.addr.data", e)) ||
		    !(b = chr_str(ad, "port", "backend.data.addr.data", e)))
			return fail_as_set(e);
		snprintf(out, len, "socket,host=%s,port=%s", a, b);
	} else if (!strcmp(type, "fd")) {
		if (!(a = chr_str(ad, "str", "backend.data.addr.data", e)) ||
		    (fd = qmp_fd_param(a, e->desc, sizeof(e->desc))) < 0)
			return fail_as_set(e);
		snprintf(out, len, "socket,fd=%d", fd);
	} else {
		snprintf(e->desc, sizeof(e->desc),
			 "Parameter 'backend.data.addr.type' does not accept value '%s'", type);
		return fail_as_set(e);
	}
	return 0;
}

/* ChardevSocket (qapi/char.json): server defaults on, wait off. */
static int socket_opts(json_t *data, char *out, size_t len, struct qmp_error *e)
{
	size_t n;

	if (socket_addr(json_object_get(data, "addr"), out, len, e) < 0)
		return -1;
	n = strlen(out);
	snprintf(out + n, len - n, ",server=%s,wait=%s,telnet=%s", chr_flag(data, "server", true),
		 chr_flag(data, "wait", false), chr_flag(data, "telnet", false));
	return 0;
}

/* ChardevBackend {type, data} as -chardev's BACKEND,...: socket, pty,
 * file (out, append), null, ringbuf (size). */
static int backend_opts(json_t *backend, char *out, size_t len, struct qmp_error *e)
{
	const char *type = json_string_value(json_object_get(backend, "type")), *path;
	json_t *data = json_object_get(backend, "data"), *size;

	if (!type)
		return fail(e, "GenericError", "Parameter 'backend.type' is missing");
	if (data && !json_is_object(data))
		return fail(e, "GenericError", "Parameter 'backend.data' expects an object");
	if (!strcmp(type, "socket"))
		return socket_opts(data, out, len, e);
	if (!strcmp(type, "pty") || !strcmp(type, "null")) {
		snprintf(out, len, "%s", type);
		return 0;
	}
	if (!strcmp(type, "file")) {
		if (json_object_get(data, "in"))
			return fail(e, "GenericError", "chardev-add: file's 'in' is not supported");
		if (!(path = chr_str(data, "out", "backend.data", e)))
			return fail_as_set(e);
		snprintf(out, len, "file,path=%s,append=%s", path, chr_flag(data, "append", false));
		return 0;
	}
	if (!strcmp(type, "ringbuf") || !strcmp(type, "memory")) {
		size = json_object_get(data, "size");
		snprintf(out, len, "%s,size=%lld", type,
			 json_is_integer(size) ? (long long)json_integer_value(size) : 65536LL);
		return 0;
	}
	snprintf(e->desc, sizeof(e->desc),
		 "Parameter 'backend.type' does not accept value '%s' (vmm: socket, pty, file, "
		 "null, ringbuf)",
		 type);
	return fail_as_set(e);
}

CMD(cmd_chardev_add)
{
	const char *id = json_string_value(json_object_get(args, "id")), *pty;
	char opts[512], err[256];
	size_t n;

	if (strchr(id, ','))
		return fail(e, "GenericError", "Parameter 'id' expects an identifier");
	/* before a getfd socket is taken: from there on the chardev owns it */
	if (machine_chardev_exists(m, id)) {
		snprintf(e->desc, sizeof(e->desc), "Chardev '%s' already exists", id);
		return fail_as_set(e);
	}
	if (backend_opts(json_object_get(args, "backend"), opts, sizeof(opts), e) < 0)
		return -1;
	n = strlen(opts);
	snprintf(opts + n, sizeof(opts) - n, ",id=%s", id);
	if (machine_chardev_add(m, opts, &pty, err, sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	*ret = pty ? json_pack("{s:s}", "pty", pty) : json_object();
	return 0;
}

CMD(cmd_chardev_remove)
{
	char err[256];

	if (machine_chardev_remove(m, json_string_value(json_object_get(args, "id")), err,
				   sizeof(err)) < 0)
		return fail(e, "GenericError", err);
	return 0;
}

const struct qmp_command qmp_hotplug_commands[] = {
	{"chardev-add", cmd_chardev_add, "id:str,backend:any"},
	{"chardev-remove", cmd_chardev_remove, "id:str"},
	{"device_add", cmd_device_add, "driver:str,?bus:str,?id:str,?*:any"},
	{"device_del", cmd_device_del, "id:str"},
	{"blockdev-add", cmd_blockdev_add, "driver:str,?node-name:str,?*:any"},
	{"blockdev-del", cmd_blockdev_del, "node-name:str"},
	{"netdev_add", cmd_netdev_add, "type:str,id:str,?*:any"},
	{"netdev_del", cmd_netdev_del, "id:str"},
	{"object-add", cmd_object_add, "qom-type:str,id:str,?*:any"},
	{"object-del", cmd_object_del, "id:str"},
	{NULL, NULL, NULL},
};
