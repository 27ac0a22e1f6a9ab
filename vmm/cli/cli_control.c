/* cli_control.c — the control plane's options: -action, -no-shutdown,
 * -qmp, -chardev socket + -mon (libvirt's spelling of -qmp), -gdb, -s,
 * -daemonize, -pidfile, -sandbox, -runas, -chroot and -device pvpanic.
 * Rows of cli.c's table. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

/* Split "a=b,c=d" in place: the next key and value, or false at the end
 * (then an empty key and no value, so a caller that reads them anyway,
 * as on an empty option "-accel ''", sees no pointer left unset: a fuzz
 * finding). */
bool cli_next_kv(char **cursor, char **key, char **value)
{
	static char none[1];
	char *tok = *cursor, *comma, *eq;

	*key = none;
	*value = NULL;
	if (!tok || !*tok)
		return false;
	comma = strchr(tok, ',');
	*cursor = comma ? comma + 1 : NULL;
	if (comma)
		*comma = 0;
	eq = strchr(tok, '=');
	*key = tok;
	*value = eq ? (*eq = 0, eq + 1) : NULL;
	return true;
}

int cli_copy_value(char *dst, size_t size, const char *val, const char *what, char *err,
		   size_t errlen)
{
	if (!val || !*val || strlen(val) >= size) {
		snprintf(err, errlen, "%s: %s", what, val && *val ? "too long" : "missing value");
		return -1;
	}
	strcpy(dst, val);
	return 0;
}

static int on_off(const char *key, const char *val, bool *out, char *err, size_t errlen)
{
	if (!val || !strcmp(val, "on") || !strcmp(val, "yes") || !strcmp(val, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(val, "off") || !strcmp(val, "no") || !strcmp(val, "false")) {
		*out = false;
		return 0;
	}
	snprintf(err, errlen, "%s must be on or off, not '%s'", key, val);
	return -1;
}

/* ------------------------------------------------------------- -action */

struct action_name {
	const char *name;
	int value;
};

static const struct action_name reboot_names[] = {
	{"reset", ACTION_REBOOT_RESET}, {"shutdown", ACTION_REBOOT_SHUTDOWN}, {NULL, 0}};
static const struct action_name shutdown_names[] = {
	{"poweroff", ACTION_SHUTDOWN_POWEROFF}, {"pause", ACTION_SHUTDOWN_PAUSE}, {NULL, 0}};
static const struct action_name panic_names[] = {{"shutdown", ACTION_PANIC_SHUTDOWN},
						 {"pause", ACTION_PANIC_PAUSE},
						 {"exit-failure", ACTION_PANIC_EXIT_FAILURE},
						 {"none", ACTION_PANIC_NONE},
						 {NULL, 0}};

static int pick(const struct action_name *names, const char *key, const char *val, int *out,
		char *err, size_t errlen)
{
	char choices[96] = "";

	for (unsigned i = 0; names[i].name; i++) {
		if (val && !strcmp(val, names[i].name)) {
			*out = names[i].value;
			return 0;
		}
		snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices), "%s%s",
			 i ? "|" : "", names[i].name);
	}
	snprintf(err, errlen, "%s=%s: expected %s", key, val ? val : "", choices);
	return -1;
}

CLI_CONTROL_PARSER(cli_parse_action)
{
	struct control_config *c = &cfg->control;
	char buf[256], *cursor = buf, *key, *v;

	if (cli_copy_value(buf, sizeof(buf), val, "-action", err, errlen) < 0)
		return -1;
	while (cli_next_kv(&cursor, &key, &v)) {
		int r, x;

		if (!strcmp(key, "reboot"))
			r = pick(reboot_names, key, v, &x, err, errlen), c->reboot = x;
		else if (!strcmp(key, "shutdown"))
			r = pick(shutdown_names, key, v, &x, err, errlen), c->shutdown = x;
		else if (!strcmp(key, "panic"))
			r = pick(panic_names, key, v, &x, err, errlen), c->panic = x;
		else {
			snprintf(err, errlen, "unknown action '%s' (reboot, shutdown, panic)", key);
			return -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_no_shutdown)
{
	cfg->control.shutdown = ACTION_SHUTDOWN_PAUSE;
	return 0;
}

/* ---------------------------------------------------------- sockets */

static int parse_tcp_addr(const char *s, size_t len, struct listen_spec *spec, char *err,
			  size_t errlen)
{
	const char *colon = memrchr(s, ':', len);
	size_t hlen, plen;

	if (!colon) {
		snprintf(err, errlen, "tcp: expected HOST:PORT");
		return -1;
	}
	hlen = (size_t)(colon - s);
	plen = len - hlen - 1;
	if (hlen >= sizeof(spec->host) || !plen || plen >= sizeof(spec->port)) {
		snprintf(err, errlen, "tcp: bad HOST:PORT");
		return -1;
	}
	memcpy(spec->host, s, hlen);
	spec->host[hlen] = 0;
	memcpy(spec->port, colon + 1, plen);
	spec->port[plen] = 0;
	for (size_t i = 0; i < plen; i++)
		if (!isdigit((unsigned char)spec->port[i])) {
			snprintf(err, errlen, "tcp: port '%s' is not a number", spec->port);
			return -1;
		}
	return 0;
}

static int chardev_socket_prop(struct listen_spec *s, const char *key, const char *v, bool *server,
			       char *err, size_t errlen);

int cli_parse_listen(const char *s, unsigned flags, struct listen_spec *spec, char *err,
		     size_t errlen)
{
	char buf[256], *cursor, *key, *v;
	size_t alen;
	bool need_server = flags & (LISTEN_NEED_SERVER | LISTEN_MAY_DIAL);
	bool server = !need_server;

	memset(spec, 0, sizeof(*spec));
	spec->fd = -1;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	strcpy(buf, s);
	cursor = strchr(buf, ',');
	alen = cursor ? (size_t)(cursor - buf) : strlen(buf);
	if (cursor)
		*cursor++ = 0;
	if (!strncmp(buf, "unix:", 5)) {
		spec->kind = LISTEN_UNIX;
		if (cli_copy_value(spec->path, sizeof(spec->path), buf + 5, "unix: path", err,
				   errlen))
			return -1;
	} else if (!strncmp(buf, "tcp:", 4) || !strncmp(buf, "telnet:", 7)) {
		size_t skip = buf[0] == 't' && buf[1] == 'e' ? 7 : 4;

		spec->kind = LISTEN_TCP;
		spec->telnet = skip == 7;
		if (parse_tcp_addr(buf + skip, alen - skip, spec, err, errlen) < 0)
			return -1;
	} else {
		snprintf(err, errlen,
			 "'%s': use unix:PATH,server,nowait or tcp:HOST:PORT,server,nowait", buf);
		return -1;
	}
	spec->wait = need_server;
	while (cli_next_kv(&cursor, &key, &v)) {
		bool b;

		if (!strcmp(key, "server") && !on_off(key, v, &b, err, errlen))
			server = b;
		else if (!strcmp(key, "nowait") && !v)
			spec->wait = false;
		else if (!strcmp(key, "wait") && !on_off(key, v, &b, err, errlen))
			spec->wait = b;
		else if (!strcmp(key, "telnet") && !on_off(key, v, &b, err, errlen))
			spec->telnet = b;
		else if (!strcmp(key, "reconnect") && (flags & LISTEN_MAY_DIAL)) {
			if (chardev_socket_prop(spec, key, v, &b, err, errlen) < 0)
				return -1;
		} else if (strcmp(key, "ipv4") && strcmp(key, "nodelay")) { /* harmless */
			if (!*err)
				snprintf(err, errlen, "unknown socket option '%s'", key);
			return -1;
		}
	}
	spec->client = !server && (flags & LISTEN_MAY_DIAL);
	if (!server && !spec->client) {
		snprintf(err, errlen,
			 "only server sockets are supported (add ,server=on,wait=off)");
		return -1;
	}
	if (spec->reconnect && !spec->client) {
		snprintf(err, errlen, "reconnect= is for client sockets (no server)");
		return -1;
	}
	if (spec->client)
		spec->wait = false;
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_qmp)
{
	struct control_config *c = &cfg->control;

	if (c->n_qmp == CLI_MAX_QMP) {
		snprintf(err, errlen, "at most %d QMP sockets", CLI_MAX_QMP);
		return -1;
	}
	if (!strcmp(val, "stdio")) { /* one client: the terminal or a pipe */
		c->qmp[c->n_qmp++] = (struct listen_spec){.kind = LISTEN_STDIO, .fd = -1};
		return 0;
	}
	if (cli_parse_listen(val, LISTEN_NEED_SERVER, &c->qmp[c->n_qmp], err, errlen) < 0)
		return -1;
	c->n_qmp++;
	return 0;
}

/* -chardev socket,id=ID,path=P|fd=N|host=H,port=P,server=on,wait=off */
static int chardev_socket_prop(struct listen_spec *s, const char *key, const char *v, bool *server,
			       char *err, size_t errlen)
{
	char *end;

	if (!strcmp(key, "path")) {
		s->kind = LISTEN_UNIX;
		return cli_copy_value(s->path, sizeof(s->path), v, "path", err, errlen);
	}
	if (!strcmp(key, "host")) {
		s->kind = LISTEN_TCP;
		return cli_copy_value(s->host, sizeof(s->host), v, "host", err, errlen);
	}
	if (!strcmp(key, "port")) {
		s->kind = LISTEN_TCP;
		return cli_copy_value(s->port, sizeof(s->port), v, "port", err, errlen);
	}
	if (!strcmp(key, "fd")) {
		s->kind = LISTEN_FD;
		errno = 0;
		s->fd = v && isdigit((unsigned char)*v) ? (int)strtol(v, &end, 10) : -1;
		if (s->fd < 0 || errno || *end) {
			snprintf(err, errlen, "fd: expected a file descriptor number");
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "server"))
		return on_off(key, v, server, err, errlen);
	if (!strcmp(key, "wait"))
		return on_off(key, v, &s->wait, err, errlen);
	if (!strcmp(key, "nowait")) {
		s->wait = false;
		return 0;
	}
	if (!strcmp(key, "telnet"))
		return on_off(key, v, &s->telnet, err, errlen);
	if (!strcmp(key, "reconnect")) {
		errno = 0;
		s->reconnect = v && isdigit((unsigned char)*v) ? (unsigned)strtoul(v, &end, 10) : 0;
		if (!v || !isdigit((unsigned char)*v) || errno || *end || s->reconnect > 86400) {
			snprintf(err, errlen, "reconnect: expected seconds (0-86400)");
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "ipv4") || !strcmp(key, "nodelay"))
		return 0;
	snprintf(err, errlen, "socket: unknown property '%s'", key);
	return -1;
}

CLI_CONTROL_PARSER(cli_parse_chardev_opt)
{
	struct control_config *c = &cfg->control;
	struct chardev_def *d;
	char buf[512], *cursor = buf, *key, *v, *backend;
	bool server = false;

	if (c->n_chardevs == CLI_MAX_CHARDEVS) {
		snprintf(err, errlen, "at most %d chardevs", CLI_MAX_CHARDEVS);
		return -1;
	}
	d = &c->chardevs[c->n_chardevs];
	memset(d, 0, sizeof(*d));
	d->sock.fd = -1;
	d->sock.wait = true;
	if (cli_copy_value(buf, sizeof(buf), val, "-chardev", err, errlen) < 0)
		return -1;
	cli_next_kv(&cursor, &backend, &v);
	if (strcmp(backend, "socket")) { /* pty, file, null: for isa-serial */
		if (cli_chardev_serial_backend(d, backend, cursor, err, errlen) < 0)
			return -1;
		cursor = NULL;
	}
	while (cli_next_kv(&cursor, &key, &v)) {
		if (!strcmp(key, "id")) {
			if (cli_copy_value(d->id, sizeof(d->id), v, "id", err, errlen) < 0)
				return -1;
		} else if (chardev_socket_prop(&d->sock, key, v, &server, err, errlen) < 0) {
			return -1;
		}
	}
	/* server=off: a client for -serial chardev:ID or -mon chardev=ID */
	d->sock.client = !d->is_serial_backend && !server;
	if (!d->is_serial_backend && (!d->id[0] || (d->sock.client && d->sock.kind == LISTEN_FD) ||
				      (d->sock.kind == LISTEN_UNIX && !d->sock.path[0]) ||
				      (d->sock.kind == LISTEN_TCP && !d->sock.port[0]))) {
		snprintf(err, errlen, "socket needs id= and path=, host=,port= or (server=on) fd=");
		return -1;
	}
	if (d->sock.reconnect && !d->sock.client) {
		snprintf(err, errlen, "reconnect= is for client sockets (server=off)");
		return -1;
	}
	for (unsigned i = 0; i < c->n_chardevs; i++)
		if (!strcmp(c->chardevs[i].id, d->id)) {
			snprintf(err, errlen, "duplicate id '%s'", d->id);
			return -1;
		}
	c->n_chardevs++;
	return 0;
}

int cli_chardev_spec(const struct chardev_def *d, struct chardev_spec *spec, char *err,
		     size_t errlen)
{
	if (d->is_serial_backend) {
		*spec = d->spec;
	} else if (d->sock.kind == LISTEN_FD && d->sock.client) {
		snprintf(err, errlen, "chardev '%s': fd= needs server=on", d->id);
		return -1;
	} else {
		memset(spec, 0, sizeof(*spec));
		spec->kind = d->sock.kind == LISTEN_TCP ? CHARDEV_TCP : CHARDEV_UNIX;
		spec->sock = d->sock;
		spec->wait = d->sock.wait;
		strcpy(spec->path, d->sock.path);
	}
	strcpy(spec->id, d->id);
	return 0;
}

/* -serial chardev:ID, -monitor chardev:ID, -mon chardev=ID: a -chardev
 * given earlier becomes that frontend's backend. */
int cli_chardev_lookup(struct vmm_config *cfg, const char *id, struct chardev_spec *spec, char *err,
		       size_t errlen)
{
	struct control_config *c = &cfg->control;

	for (unsigned i = 0; id[0] && i < c->n_chardevs; i++) {
		struct chardev_def *d = &c->chardevs[i];

		if (strcmp(d->id, id))
			continue;
		if (d->used) {
			snprintf(err, errlen, "chardev '%s' is already in use", id);
			return -1;
		}
		if (cli_chardev_spec(d, spec, err, errlen) < 0)
			return -1;
		d->used = true;
		return 0;
	}
	snprintf(err, errlen, "chardev '%s' not found (give -chardev ...,id=%s first)", id, id);
	return -1;
}

int cli_monitor_on_chardev(struct vmm_config *cfg, const char *id, char *err, size_t errlen)
{
	cfg->monitor_given = true;
	return cli_chardev_lookup(cfg, id, &cfg->monitor, err, errlen);
}

/* -mon chardev=ID,mode=control[,id=..][,pretty=on] */
CLI_CONTROL_PARSER(cli_parse_mon)
{
	struct control_config *c = &cfg->control;
	char buf[256], *cursor = buf, *key, *v, *chardev = NULL;
	bool control = false;

	if (cli_copy_value(buf, sizeof(buf), val, "-mon", err, errlen) < 0)
		return -1;
	while (cli_next_kv(&cursor, &key, &v)) {
		if (!strcmp(key, "chardev"))
			chardev = v;
		else if (!strcmp(key, "mode") && v &&
			 (!strcmp(v, "control") || !strcmp(v, "readline")))
			control = !strcmp(v, "control");
		else if (strcmp(key, "id") && strcmp(key, "pretty")) {
			snprintf(err, errlen, "unknown property '%s' (chardev, mode, id, pretty)",
				 key);
			return -1;
		}
	}
	if (!control)
		return cli_monitor_on_chardev(cfg, chardev ? chardev : "", err, errlen);
	for (unsigned i = 0; chardev && i < c->n_chardevs; i++) {
		struct chardev_def *d = &c->chardevs[i];

		if (strcmp(d->id, chardev))
			continue;
		if (d->used || d->is_serial_backend || c->n_qmp == CLI_MAX_QMP) {
			snprintf(err, errlen, "chardev '%s' is already in use", chardev);
			return -1;
		}
		if (d->sock.client) {
			snprintf(err, errlen, "chardev '%s': QMP needs server=on", chardev);
			return -1;
		}
		d->used = true;
		c->qmp[c->n_qmp++] = d->sock;
		return 0;
	}
	snprintf(err, errlen, "no -chardev with id '%s' (give -chardev first)",
		 chardev ? chardev : "");
	return -1;
}

/* -------------------------------------------------------------- -gdb */

CLI_CONTROL_PARSER(cli_parse_gdb)
{
	struct control_config *c = &cfg->control;

	if (!strcmp(val, "none")) {
		c->gdb_given = false;
		return 0;
	}
	if (cli_parse_listen(val, 0, &c->gdb, err, errlen) < 0)
		return -1;
	c->gdb_given = true;
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_gdb_default)
{
	return cli_parse_gdb(cfg, opt, "tcp::1234", err, errlen);
}

/* -------------------------------------------------------- the process */

CLI_CONTROL_PARSER(cli_parse_daemonize)
{
	cfg->control.daemonize = true;
	return 0;
}

/* A file or name option: anything but empty. */
static int set_nonempty(const char **field, const char *val, const char *what, char *err,
			size_t errlen)
{
	if (!*val) {
		snprintf(err, errlen, "empty %s", what);
		return -1;
	}
	*field = val;
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_pidfile)
{
	return set_nonempty(&cfg->control.pidfile, val, "file name", err, errlen);
}

/* ------------------------------------------- -sandbox, -runas, -chroot */

/* A group's "deny" / "allow" (elevateprivileges also takes "children":
 * QEMU's set*id for children only, which with no children is "allow"). */
static int group_value(const char *key, const char *v, bool children_ok, bool *allow, char *err,
		       size_t errlen)
{
	if (v && !strcmp(v, "deny"))
		*allow = false;
	else if (v && (!strcmp(v, "allow") || (children_ok && !strcmp(v, "children"))))
		*allow = true;
	else {
		snprintf(err, errlen, "%s=%s: expected deny|allow%s", key, v ? v : "",
			 children_ok ? "|children" : "");
		return -1;
	}
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_sandbox)
{
	struct sandbox_config *sb = &cfg->control.sandbox;
	char buf[256], *cursor = buf, *key, *v;
	int r;

	if (cli_copy_value(buf, sizeof(buf), val, "-sandbox", err, errlen) < 0)
		return -1;
	*sb = (struct sandbox_config){
		.allow_elevate = true, .allow_spawn = true, .allow_resource = true};
	if (!cli_next_kv(&cursor, &key, &v) || v || on_off("-sandbox", key, &sb->on, err, errlen)) {
		snprintf(err, errlen, "expected on or off first, got '%s'", val);
		return -1;
	}
	while (cli_next_kv(&cursor, &key, &v)) {
		if (!strcmp(key, "obsolete"))
			r = group_value(key, v, false, &sb->allow_obsolete, err, errlen);
		else if (!strcmp(key, "elevateprivileges"))
			r = group_value(key, v, true, &sb->allow_elevate, err, errlen);
		else if (!strcmp(key, "spawn"))
			r = group_value(key, v, false, &sb->allow_spawn, err, errlen);
		else if (!strcmp(key, "resourcecontrol"))
			r = group_value(key, v, false, &sb->allow_resource, err, errlen);
		else {
			snprintf(err, errlen,
				 "unknown option '%s' (obsolete, elevateprivileges, spawn, "
				 "resourcecontrol)",
				 key);
			r = -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

CLI_CONTROL_PARSER(cli_parse_runas)
{
	return set_nonempty(&cfg->control.runas, val, "user name", err, errlen);
}

CLI_CONTROL_PARSER(cli_parse_chroot)
{
	return set_nonempty(&cfg->control.chroot, val, "folder name", err, errlen);
}

/* ---------------------------------------------------------- pvpanic */

int cli_parse_pvpanic(struct device_spec *d, char *props, char *err, size_t errlen)
{
	char *key, *v, *end;

	*d = (struct device_spec){.kind = DEVICE_PVPANIC, .iobase = 0x505, .iosize = 1, .devfn = -1};
	while (cli_next_kv(&props, &key, &v)) {
		unsigned long port;

		if (strcmp(key, "ioport") || !v || !isdigit((unsigned char)*v)) {
			snprintf(err, errlen, "pvpanic: expected ioport=PORT, got '%s'", key);
			return -1;
		}
		errno = 0;
		port = strtoul(v, &end, 0);
		if (errno || *end || port > 0xffff) {
			snprintf(err, errlen, "pvpanic: invalid ioport '%s'", v);
			return -1;
		}
		d->iobase = (uint16_t)port;
	}
	return 0;
}
