/* cli_libvirt.c — the options libvirt's QEMU driver (9.0) puts on every
 * command line it builds, with their meaning in vmm. Where an option asks
 * for something vmm does not have, it is refused with a one-line reason;
 * where it asks for what vmm does anyway (or for a feature of a device
 * vmm has none of), it is accepted and the comment says why.
 *
 * libvirt writes -device, -object, -netdev, -audiodev and -blockdev as
 * JSON when the emulator advertises it; cli_json_to_opts turns the first
 * four into QEMU's key=value text so one parser serves both spellings.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

static int copy_arg(char *buf, size_t size, const char *val, char *err, size_t errlen)
{
	if (!val || strlen(val) >= size) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	strcpy(buf, val);
	return 0;
}

int cli_bool_value(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
	if (!v || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes")) {
		*out = true;
	} else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no")) {
		*out = false;
	} else {
		snprintf(err, errlen, "%s must be on or off, not '%s'", key, v);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------ JSON values */

static int append(char *out, size_t len, size_t *n, const char *text, char *err, size_t errlen)
{
	size_t t = strlen(text);

	if (*n + t + 1 > len) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	memcpy(out + *n, text, t + 1);
	*n += t;
	return 0;
}

/* One member as ",key=value" (objects flattened to key.sub=value). */
static int json_member(const char *key, json_t *v, char *out, size_t len, size_t *n, char *err,
		       size_t errlen)
{
	char text[320];

	if (json_is_object(v)) {
		const char *k;
		json_t *sub;

		json_object_foreach(v, k, sub)
		{
			char path[128];

			snprintf(path, sizeof(path), "%s.%s", key, k);
			if (json_member(path, sub, out, len, n, err, errlen) < 0)
				return -1;
		}
		return 0;
	}
	if (json_is_string(v) && !strchr(json_string_value(v), ','))
		snprintf(text, sizeof(text), ",%s=%s", key, json_string_value(v));
	else if (json_is_integer(v))
		snprintf(text, sizeof(text), ",%s=%" JSON_INTEGER_FORMAT, key,
			 json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(text, sizeof(text), ",%s=%s", key, json_is_true(v) ? "on" : "off");
	else {
		snprintf(err, errlen,
			 "'%s': unsupported JSON value (strings without commas, "
			 "integers, booleans)",
			 key);
		return -1;
	}
	return append(out, len, n, text, err, errlen);
}

const char *cli_json_to_opts(struct vmm_config *cfg, const char *val, const char *type_key,
			     char *err, size_t errlen)
{
	struct libvirt_config *lv = &cfg->lv;
	json_error_t jerr;
	json_t *obj, *v;
	const char *key;
	char *out;
	size_t n = 0;

	if (val[0] != '{')
		return val;
	if (lv->n_json_args == CLI_JSON_ARGS) {
		snprintf(err, errlen, "too many JSON options");
		return NULL;
	}
	obj = json_loads(val, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(obj) || !json_is_string(json_object_get(obj, type_key))) {
		snprintf(err, errlen, "invalid JSON (an object with \"%s\" expected): %s", type_key,
			 obj ? "no type" : jerr.text);
		json_decref(obj);
		return NULL;
	}
	out = lv->json_args[lv->n_json_args];
	out[0] = 0;
	if (append(out, sizeof(lv->json_args[0]), &n,
		   json_string_value(json_object_get(obj, type_key)), err, errlen) < 0)
		goto fail;
	json_object_foreach(obj, key, v) if (strcmp(key, type_key) &&
					     json_member(key, v, out, sizeof(lv->json_args[0]), &n,
							 err, errlen) < 0) goto fail;
	json_decref(obj);
	lv->n_json_args++;
	return out;
fail:
	json_decref(obj);
	return NULL;
}

/* ------------------------------------------- flags with no work to do */

/* vmm reads no configuration file, so there is none to skip. */
CLI_CONTROL_PARSER(cli_parse_no_user_config)
{
	return 0;
}

/* -no-acpi: a -kernel boot gets the MP table only (firmware/direct_boot.c). */
CLI_CONTROL_PARSER(cli_parse_no_acpi)
{
	cfg->lv.no_acpi = true;
	return 0;
}

/* -msg timestamp=on: QEMU prefixes its error messages with the time.
 * Accepted and ignored: vmm's messages are single lines written once at
 * start-up or exit, and libvirt's log (virtlogd) records when the
 * emulator started and stopped around them. */
CLI_CONTROL_PARSER(cli_parse_msg)
{
	char buf[128], *cursor = buf, *key, *v;
	bool b;

	if (copy_arg(buf, sizeof(buf), val, err, errlen) < 0)
		return -1;
	while (cli_next_kv(&cursor, &key, &v))
		if (strcmp(key, "timestamp") && strcmp(key, "guest-name")) {
			snprintf(err, errlen, "unknown parameter '%s' (timestamp)", key);
			return -1;
		} else if (cli_bool_value(key, v, &b, err, errlen) < 0) {
			return -1;
		}
	return 0;
}

/* -usb: the PIIX3's USB controller, added once the options are read
 * (cli_add_default_usb). */
CLI_CONTROL_PARSER(cli_parse_usb)
{
	cfg->lv.default_usb = true;
	return 0;
}

/* -no-hpet: what virt-install's domains ask for (<timer name='hpet'
 * present='no'/>); vmm has no HPET to leave out. */
CLI_CONTROL_PARSER(cli_parse_no_hpet)
{
	return 0;
}

/* vmm has no display device at all. */
CLI_CONTROL_PARSER(cli_parse_display)
{
	if (strcmp(val, "none") && strncmp(val, "none,", 5)) {
		snprintf(err, errlen, "'%s': vmm has no display; only none", val);
		return -1;
	}
	return 0;
}

/* vmm has no sound card, so the only audio backend it can take is none. */
CLI_CONTROL_PARSER(cli_parse_audiodev)
{
	char buf[256], *cursor = buf, *key, *v;
	const char *kv = cli_json_to_opts(cfg, val, "driver", err, errlen);

	if (!kv || copy_arg(buf, sizeof(buf), kv, err, errlen) < 0)
		return -1;
	cli_next_kv(&cursor, &key, &v);
	if (strcmp(key, "none") && !(v && !strcmp(key, "driver") && !strcmp(v, "none"))) {
		snprintf(err, errlen, "'%s': vmm has no sound card; only driver none", key);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- -accel */

static int accel_name(const char *name, char *err, size_t errlen)
{
	if (!strcmp(name, "kvm"))
		return 0;
	snprintf(err, errlen,
		 "'%s': vmm runs guests with KVM only (no TCG or other "
		 "accelerator); use kvm",
		 name);
	return -1;
}

CLI_CONTROL_PARSER(cli_parse_accel)
{
	char buf[128], *cursor = buf, *key, *v;

	if (copy_arg(buf, sizeof(buf), val, err, errlen) < 0)
		return -1;
	cli_next_kv(&cursor, &key, &v);
	if (accel_name(v && !strcmp(key, "accel") ? v : key, err, errlen) < 0)
		return -1;
	if (cli_next_kv(&cursor, &key, &v)) {
		snprintf(err, errlen, "kvm: unknown property '%s'", key);
		return -1;
	}
	return 0;
}

/* ----------------------------------------------------------- -machine */

/* The machine vmm builds is QEMU's i440FX PC; libvirt names it by a
 * versioned type (pc-i440fx-7.2) or the alias pc. */
static bool is_pc_name(const char *v)
{
	return !strcmp(v, "pc") || !strcmp(v, "pc-i440fx") || !strncmp(v, "pc-i440fx-", 10);
}

int cli_machine_key(struct vmm_config *cfg, const char *key, const char *val, char *err,
		    size_t errlen)
{
	struct libvirt_config *lv = &cfg->lv;
	bool b;

	if (!val || !strcmp(key, "type")) {
		const char *name = val ? val : key;

		if (!strcmp(name, "none")) {
			lv->machine_none = true; /* no guest: QMP only */
			return 1;
		}
		return is_pc_name(name) ? 1 : 0;
	}
	if (!strcmp(key, "accel")) { /* a list: the first that works, kvm:tcg */
		char buf[64], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", val);
		for (char *a = strtok_r(buf, ":", &save); a; a = strtok_r(NULL, ":", &save))
			if (!strcmp(a, "kvm"))
				return 1;
		return accel_name(val, err, errlen);
	}
	if (!strcmp(key, "usb")) { /* QEMU's piix3-usb-uhci, as -usb */
		if (cli_bool_value(key, val, &b, err, errlen) < 0)
			return -1;
		lv->default_usb = b;
		return 1;
	}
	if (!strcmp(key, "dump-guest-core")) { /* guest RAM in vmm's core dumps */
		if (cli_bool_value(key, val, &b, err, errlen) < 0)
			return -1;
		lv->no_dump_guest_core = !b;
		return 1;
	}
	if (!strcmp(key, "memory-backend")) {
		if (copy_arg(lv->memory_backend, sizeof(lv->memory_backend), val, err, errlen) < 0)
			return -1;
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ -object */

/* memory-backend-ram,id=ID,size=N: the guest RAM (with -machine
 * memory-backend=ID, as libvirt names it). */
static int ram_object(struct vmm_config *cfg, char *cursor, char *err, size_t errlen)
{
	struct libvirt_config *lv = &cfg->lv;
	char *key, *v, id[32] = "";
	uint64_t size = 0;

	while (cli_next_kv(&cursor, &key, &v)) {
		if (!strcmp(key, "id") && v && *v && strlen(v) < sizeof(id)) {
			strcpy(id, v);
		} else if (!strcmp(key, "size") && v && cli_parse_size(v, &size) == 0) {
			if (isdigit((unsigned char)v[strlen(v) - 1]))
				size = strtoull(v, NULL, 10); /* bytes, as QEMU's -object */
		} else if (!strcmp(key, "x-use-canonical-path-for-ramblock-id")) {
			/* a migration naming detail; vmm does not migrate */
		} else {
			snprintf(err, errlen, "memory-backend-ram: invalid %s '%s' (id, size)", key,
				 v ? v : "");
			return -1;
		}
	}
	if (!id[0] || !size || lv->n_ram_objects == CLI_MAX_OBJECTS) {
		snprintf(err, errlen, "memory-backend-ram needs id= and size=");
		return -1;
	}
	strcpy(lv->ram_objects[lv->n_ram_objects].id, id);
	lv->ram_objects[lv->n_ram_objects++].size = size;
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_object)
{
	char buf[512], *cursor = buf, *type, *v;
	const char *kv = cli_json_to_opts(cfg, val, "qom-type", err, errlen);

	if (!kv || copy_arg(buf, sizeof(buf), kv, err, errlen) < 0)
		return -1;
	if (!cli_next_kv(&cursor, &type, &v)) {
		snprintf(err, errlen, "-object needs a type (TYPE,id=...)");
		return -1;
	}
	if (!strcmp(type, "memory-backend-ram"))
		return ram_object(cfg, cursor, err, errlen);
	if (!strcmp(type, "wlan-medium"))
		return cli_parse_wlan_medium(cfg, cursor, err, errlen);
	if (!strcmp(type, "rng-random") || !strcmp(type, "rng-builtin"))
		return cli_parse_rng_object(cfg, type, cursor, err, errlen) < 0 ? -1 : 0;
	/* libvirt's master key, for secrets it may pass encrypted later
	 * (disk passwords, TLS keys). vmm takes none of those, so the key has
	 * nothing to decrypt: accepted and unused. */
	if (!strcmp(type, "secret"))
		return 0;
	snprintf(err, errlen,
		 "unsupported object type '%s' (memory-backend-ram, secret, wlan-medium, "
		 "rng-random, rng-builtin)",
		 type);
	return -1;
}

int cli_libvirt_finish(struct vmm_config *cfg, char *err, size_t errlen)
{
	struct libvirt_config *lv = &cfg->lv;

	if (!lv->memory_backend[0])
		return 0;
	for (unsigned i = 0; i < lv->n_ram_objects; i++) {
		if (strcmp(lv->ram_objects[i].id, lv->memory_backend))
			continue;
		if (cfg->ram_size && cfg->ram_size != lv->ram_objects[i].size) {
			snprintf(err, errlen,
				 "-machine memory-backend=%s: its size differs from -m",
				 lv->memory_backend);
			return -1;
		}
		cfg->ram_size = lv->ram_objects[i].size;
		return 0;
	}
	snprintf(err, errlen, "-machine memory-backend=%s: no -object memory-backend-ram,id=%s",
		 lv->memory_backend, lv->memory_backend);
	return -1;
}

/* --------------------------------------------------------- -overcommit */

CLI_CONTROL_PARSER(cli_parse_overcommit)
{
	char buf[128], *cursor = buf, *key, *v;
	bool b;

	if (copy_arg(buf, sizeof(buf), val, err, errlen) < 0)
		return -1;
	while (cli_next_kv(&cursor, &key, &v)) {
		if (!strcmp(key, "mem-lock") && v && !strcmp(v, "on-fault")) {
			cfg->lv.mem_lock = true;
		} else if (!strcmp(key, "mem-lock")) { /* mlockall once the guest is built */
			if (cli_bool_value(key, v, &cfg->lv.mem_lock, err, errlen) < 0)
				return -1;
		} else if (!strcmp(key, "cpu-pm")) {
			if (cli_bool_value(key, v, &b, err, errlen) < 0)
				return -1;
			if (b) {
				snprintf(err, errlen,
					 "cpu-pm=on is not supported (HLT and MWAIT "
					 "always exit to the host)");
				return -1;
			}
		} else {
			snprintf(err, errlen, "unknown parameter '%s' (mem-lock, cpu-pm)", key);
			return -1;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- -uuid */

CLI_CONTROL_PARSER(cli_parse_uuid)
{
	static const int dash_at[] = {8, 13, 18, 23};
	unsigned n = 0;

	if (strlen(val) != 36)
		goto bad;
	for (int i = 0; i < 36; i++) {
		bool dash =
			i == dash_at[0] || i == dash_at[1] || i == dash_at[2] || i == dash_at[3];

		if (dash != (val[i] == '-') || (!dash && !isxdigit((unsigned char)val[i])))
			goto bad;
		if (!dash) {
			unsigned nib =
				isdigit((unsigned char)val[i])
					? (unsigned)(val[i] - '0')
					: (unsigned)(tolower((unsigned char)val[i]) - 'a' + 10);

			cfg->lv.uuid[n / 2] =
				(uint8_t)(n % 2 ? cfg->lv.uuid[n / 2] | nib : nib << 4);
			n++;
		}
	}
	cfg->lv.has_uuid = true;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", val);
	return -1;
}

void cli_uuid_string(const struct vmm_config *cfg, char out[37])
{
	const uint8_t *u = cfg->lv.uuid;

	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* --------------------------------------------------------------- -rtc */

/* The RTC counts the host's UTC time (devices/timer/rtc.c). base=utc is that;
 * clock=host too. driftfix=slew asks QEMU to catch up lost RTC periodic
 * interrupts; vmm's RTC timer is driven by host timers and does not
 * re-inject missed ticks, so slew is accepted as "none" (Linux does not
 * use the RTC for timekeeping; Windows guests would). */
CLI_CONTROL_PARSER(cli_parse_rtc)
{
	char buf[128], *cursor = buf, *key, *v;

	if (copy_arg(buf, sizeof(buf), val, err, errlen) < 0)
		return -1;
	while (cli_next_kv(&cursor, &key, &v)) {
		bool ok =
			v &&
			((!strcmp(key, "base") && !strcmp(v, "utc")) ||
			 (!strcmp(key, "clock") && !strcmp(v, "host")) ||
			 (!strcmp(key, "driftfix") && (!strcmp(v, "slew") || !strcmp(v, "none"))));

		if (!ok) {
			snprintf(err, errlen,
				 "'%s%s%s' is not supported (base=utc, clock=host, "
				 "driftfix=none|slew)",
				 key, v ? "=" : "", v ? v : "");
			return -1;
		}
	}
	return 0;
}

/* ----------------------------------------------- serial ports, chardevs */

/* ringbuf's size=: QEMU takes a power of two; 0 is the default. */
static int ring_size(const char *v, uint32_t *size, char *err, size_t errlen)
{
	uint64_t n;

	if (!v || cli_parse_u64(v, &n) < 0) {
		snprintf(err, errlen, "size: expected a number of bytes");
		return -1;
	}
	if (!n)
		return 0;
	if (n & (n - 1) || n > CLI_RINGBUF_MAX) {
		snprintf(err, errlen, "size of ringbuf chardev must be power of two%s",
			 n & (n - 1) ? "" : " (at most 16M)");
		return -1;
	}
	*size = (uint32_t)n;
	return 0;
}

int cli_chardev_serial_backend(struct chardev_def *d, const char *backend, char *rest, char *err,
			       size_t errlen)
{
	char *key, *v;

	d->is_serial_backend = true;
	if (!strcmp(backend, "pty"))
		d->spec.kind = CHARDEV_PTY;
	else if (!strcmp(backend, "file"))
		d->spec.kind = CHARDEV_FILE;
	else if (!strcmp(backend, "null"))
		d->spec.kind = CHARDEV_NULL;
	else if (!strcmp(backend, "stdio"))
		d->spec.kind = CHARDEV_STDIO;
	else if (!strcmp(backend, "ringbuf") || !strcmp(backend, "memory")) {
		d->spec.kind = CHARDEV_RINGBUF;
		d->spec.memory = backend[0] == 'm';
		d->spec.ring_size = CLI_RINGBUF_DEFAULT;
	} else {
		snprintf(err, errlen,
			 "backend '%s' is not supported (socket, pty, file, stdio, null, ringbuf)",
			 backend);
		return -1;
	}
	while (cli_next_kv(&rest, &key, &v)) {
		if (!strcmp(key, "id") && v && *v && strlen(v) < sizeof(d->id)) {
			strcpy(d->id, v);
			strcpy(d->spec.id, v);
		} else if (!strcmp(key, "path") && d->spec.kind == CHARDEV_FILE && v && *v &&
			   strlen(v) < sizeof(d->spec.path)) {
			strcpy(d->spec.path, v);
		} else if (!strcmp(key, "size") && d->spec.kind == CHARDEV_RINGBUF) {
			if (ring_size(v, &d->spec.ring_size, err, errlen) < 0)
				return -1;
		} else if (!strcmp(key, "append") && d->spec.kind == CHARDEV_FILE) {
			if (cli_bool_value(key, v, &d->spec.append, err, errlen) < 0)
				return -1;
		} else if (!strcmp(key, "logappend") || !strcmp(key, "mux")) {
			bool b;

			if (cli_bool_value(key, v, &b, err, errlen) < 0)
				return -1;
			if (b) {
				snprintf(err, errlen, "%s=on is not supported", key);
				return -1;
			}
		} else {
			snprintf(err, errlen, "%s: invalid property '%s'", backend, key);
			return -1;
		}
	}
	if (!d->id[0] || (d->spec.kind == CHARDEV_FILE && !d->spec.path[0])) {
		snprintf(err, errlen, "%s needs id=%s", backend,
			 d->spec.kind == CHARDEV_FILE ? " and path=" : "");
		return -1;
	}
	return 0;
}

int cli_parse_isa_serial(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct control_config *c = &cfg->control;
	char *key, *v, *chardev = NULL;
	uint64_t index = cfg->n_serial;

	while (cli_next_kv(&props, &key, &v)) {
		if (!strcmp(key, "chardev") && v)
			chardev = v;
		else if (!strcmp(key, "index") && v && cli_parse_u64(v, &index) == 0)
			;
		else if (strcmp(key, "id")) {
			snprintf(err, errlen,
				 "isa-serial: invalid property '%s' (chardev, index, id)", key);
			return -1;
		}
	}
	if (index >= CLI_MAX_SERIALS) {
		snprintf(err, errlen, "isa-serial: index must be 0 to %d", CLI_MAX_SERIALS - 1);
		return -1;
	}
	if (cfg->serial[index].kind != CHARDEV_NONE) {
		snprintf(err, errlen, "isa-serial: COM%u is already in use", (unsigned)index + 1);
		return -1;
	}
	for (unsigned i = 0; chardev && i < c->n_chardevs; i++) {
		struct chardev_def *d = &c->chardevs[i];

		if (strcmp(d->id, chardev))
			continue;
		if (!d->is_serial_backend || d->used) {
			snprintf(err, errlen, "isa-serial: chardev '%s' %s", chardev,
				 d->used ? "is already in use" : "is a socket (pty, file or null)");
			return -1;
		}
		d->used = true;
		cfg->serial[index] = d->spec;
		if (cfg->n_serial <= index)
			cfg->n_serial = (unsigned)index + 1;
		return 0;
	}
	snprintf(err, errlen, "isa-serial: needs chardev=ID of an earlier -chardev");
	return -1;
}

/* ----------------------------------------------------------- -blockdev */

static struct drive_spec *find_node(struct vmm_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_vdrives; i++)
		if (!strcmp(cfg->vdrives[i].id, name))
			return &cfg->vdrives[i];
	return NULL;
}

/* driver=file: the image (a node later formats, or a device uses). */
static int blockdev_file(struct vmm_config *cfg, json_t *o, const char *node, char *err,
			 size_t errlen)
{
	const char *file = json_string_value(json_object_get(o, "filename"));
	json_t *cache = json_object_get(o, "cache");
	struct drive_spec *d;

	if (!file || !*file || strlen(file) >= sizeof(d->file_buf)) {
		snprintf(err, errlen, "file: needs filename=");
		return -1;
	}
	if (cfg->n_vdrives == CLI_MAX_VIRTIO_DRIVES) {
		snprintf(err, errlen, "too many drives (at most %d)", CLI_MAX_VIRTIO_DRIVES);
		return -1;
	}
	d = &cfg->vdrives[cfg->n_vdrives++];
	memset(d, 0, sizeof(*d));
	d->iface = DRIVE_IF_NONE;
	strcpy(d->id, node);
	strcpy(d->node_file, node);
	strcpy(d->file_buf, file);
	d->file = d->file_buf;
	d->read_only = json_is_true(json_object_get(o, "read-only"));
	/* cache.direct: O_DIRECT (QEMU's cache=none); cache.no-flush: the
	 * guest's flushes are not passed on (cache=unsafe). */
	if (json_is_true(json_object_get(cache, "direct")))
		d->cache = DRIVE_CACHE_NONE;
	else if (json_is_true(json_object_get(cache, "no-flush")))
		d->cache = DRIVE_CACHE_UNSAFE;
	d->no_lock = json_is_false(json_object_get(o, "locking")) ||
		     !strcmp(json_string_value(json_object_get(o, "locking")) ?: "", "off");
	return 0;
}

/* The members vmm knows; anything else is refused rather than ignored.
 * auto-read-only (open read-only when nothing needs writes), discard
 * (unmap: vmm's virtio-blk offers no discard, so there is nothing to
 * pass down), aio and locking choose host I/O details vmm fixes itself. */
static int blockdev_check_keys(json_t *o, char *err, size_t errlen)
{
	static const char *const known[] = {"driver", "node-name", "filename",	     "read-only",
					    "cache",  "file",	   "auto-read-only", "discard",
					    "aio",    "locking",   "detect-zeroes",  "backing", NULL};
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v)
	{
		unsigned i;

		for (i = 0; known[i] && strcmp(known[i], key); i++)
			;
		if (!known[i]) {
			snprintf(err, errlen, "unsupported property '%s'", key);
			return -1;
		}
	}
	return 0;
}

static int blockdev(struct vmm_config *cfg, json_t *o, char *err, size_t errlen)
{
	const char *driver = json_string_value(json_object_get(o, "driver"));
	const char *node = json_string_value(json_object_get(o, "node-name"));
	const char *file;
	struct drive_spec *d;

	if (!driver || !node || !*node || strlen(node) >= sizeof(d->id)) {
		snprintf(err, errlen, "needs driver= and node-name= (1 to %zu characters)",
			 sizeof(d->id) - 1);
		return -1;
	}
	if (blockdev_check_keys(o, err, errlen) < 0)
		return -1;
	if (find_node(cfg, node)) {
		snprintf(err, errlen, "duplicate node-name '%s'", node);
		return -1;
	}
	if (!strcmp(driver, "file"))
		return blockdev_file(cfg, o, node, err, errlen);
	if (strcmp(driver, "raw") && strcmp(driver, "qcow2")) {
		snprintf(err, errlen, "driver '%s' is not supported (file, raw, qcow2)", driver);
		return -1;
	}
	/* A format node over a file node: the device's drive= names it. A
	 * qcow2's backing chain is the one its header names (libvirt's
	 * backing= nodes describe the same files). */
	file = json_string_value(json_object_get(o, "file"));
	d = file ? find_node(cfg, file) : NULL;
	if (!d || strcmp(d->id, d->node_file)) {
		snprintf(err, errlen, "%s: file= must name an unused driver=file node", driver);
		return -1;
	}
	d->format = strcmp(driver, "raw") ? DRIVE_FORMAT_QCOW2 : DRIVE_FORMAT_RAW;
	strcpy(d->id, node);
	d->read_only |= json_is_true(json_object_get(o, "read-only"));
	return 0;
}

/* key=value spelling: "driver=file,filename=F,cache.direct=on" as JSON. */
static json_t *kv_to_json(const char *val, char *err, size_t errlen)
{
	char buf[512], *cursor = buf, *key, *v;
	json_t *o = json_object();

	if (copy_arg(buf, sizeof(buf), val, err, errlen) < 0) {
		json_decref(o);
		return NULL;
	}
	while (cli_next_kv(&cursor, &key, &v)) {
		char *dot = strchr(key, '.');
		json_t *target = o, *value;

		if (!v) {
			snprintf(err, errlen, "expected key=value, got '%s'", key);
			json_decref(o);
			return NULL;
		}
		value = !strcmp(v, "on") || !strcmp(v, "true")	   ? json_true()
			: !strcmp(v, "off") || !strcmp(v, "false") ? json_false()
								   : json_string(v);
		if (dot) {
			*dot = 0;
			target = json_object_get(o, key);
			if (!target) {
				target = json_object();
				json_object_set_new(o, key, target);
			}
			key = dot + 1;
		}
		json_object_set_new(target, key, value);
	}
	return o;
}

CLI_CONTROL_PARSER(cli_parse_blockdev)
{
	json_error_t jerr;
	json_t *o = val[0] == '{' ? json_loads(val, JSON_REJECT_DUPLICATES, &jerr)
				  : kv_to_json(val, err, errlen);
	int ret;

	if (!json_is_object(o)) {
		if (val[0] == '{')
			snprintf(err, errlen, "invalid JSON: %s", jerr.text);
		else if (o)
			snprintf(err, errlen, "expected an object");
		json_decref(o);
		return -1;
	}
	ret = blockdev(cfg, o, err, errlen);
	json_decref(o);
	return ret;
}
