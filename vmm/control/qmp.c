/* qmp.c — QMP: the greeting, qmp_capabilities negotiation, one JSON
 * request object at a time (`execute`, `arguments`, `id` echoed), replies
 * and errors in QEMU's form, and events with timestamps. Several clients
 * per socket, all on the main thread's event loop.
 *
 * Input is parsed with jansson as it arrives; requests need not be newline
 * separated. Bad input gets an error reply and the connection goes on:
 * invalid JSON is skipped up to the next newline, a request over
 * QMP_MAX_INPUT is refused and skipped the same way, nesting deeper than
 * jansson's limit (2048) is a parse error. A client that does not read
 * its replies is dropped once QMP_MAX_OUTPUT is queued for it.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "backends/backends.h"
#include "build/config.h"
#include "vmm/control/listen.h"
#include "vmm/control/monitor.h"
#include "vmm/control/qmp.h"
#include "vmm/control/qmp_args.h"
#include "vmm/control/qmp_commands.h"

#define QMP_MAX_INPUT (1u << 20)
#define QMP_MAX_OUTPUT (4u << 20)
#define QMP_MAX_CLIENTS 16
#define QMP_MAX_FDS 8 /* passed with SCM_RIGHTS, not yet claimed by getfd */

struct qmp_client {
	struct qmp_server *srv;
	int fd;
	int out_fd; /* fd, or stdout for -qmp stdio (written, not sent) */
	bool negotiated, dead, skipping;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len;
	int fds[QMP_MAX_FDS]; /* oldest first */
	unsigned n_fds;
	struct qmp_client *next;
};

struct qmp_server {
	struct machine *m;
	struct listen_spec spec;
	int listen_fd;
	unsigned n_clients;
	struct qmp_client *clients;
};

static struct qmp_server servers[CLI_MAX_QMP];
static unsigned n_servers;
static struct qmp_client *executing; /* whose command runs now */

/* -------------------------------------------------------------- output */

static void on_client_io(void *opaque, int fd, unsigned events);

static void drop_client(struct qmp_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	while (c->n_fds)
		close(c->fds[--c->n_fds]);
	evloop_del_fd(c->srv->m->host.loop, c->fd);
	if (c->out_fd == c->fd) /* stdio stays open for whatever else prints */
		close(c->fd);
}

static void flush(struct qmp_client *c)
{
	size_t done = 0;

	while (done < c->out_len) {
		ssize_t n = c->out_fd != c->fd ? write(c->out_fd, c->out + done, c->out_len - done)
					       : send(c->fd, c->out + done, c->out_len - done,
						      MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			drop_client(c);
			return;
		}
		done += (size_t)n;
	}
	memmove(c->out, c->out + done, c->out_len - done);
	c->out_len -= done;
	/* Watch for room only while something is queued. */
	if (c->out_fd == c->fd)
		evloop_add_fd(c->srv->m->host.loop, c->fd, EV_READ | (c->out_len ? EV_WRITE : 0),
			      on_client_io, c);
}

static void send_text(struct qmp_client *c, const char *text)
{
	size_t len = strlen(text);
	char *grown;

	if (c->dead)
		return;
	if (c->out_len + len + 2 > QMP_MAX_OUTPUT) {
		drop_client(c); /* it reads nothing: it must not pin memory */
		return;
	}
	grown = realloc(c->out, c->out_len + len + 2);
	if (!grown) {
		drop_client(c);
		return;
	}
	c->out = grown;
	memcpy(c->out + c->out_len, text, len);
	memcpy(c->out + c->out_len + len, "\r\n", 2);
	c->out_len += len + 2;
	flush(c);
}

static void send_json(struct qmp_client *c, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (text)
		send_text(c, text);
	free(text);
	json_decref(j);
}

static void send_error(struct qmp_client *c, json_t *id, const char *cls, const char *desc)
{
	json_t *r = json_pack("{s:{s:s,s:s}}", "error", "class", cls, "desc", desc);

	if (id)
		json_object_set(r, "id", id);
	send_json(c, r);
}

/* --------------------------------------------------------------- events */

/* The clients and their output buffers belong to the main loop's thread. */
static pthread_t loop_thread;
static struct evloop *loop;

static void deliver_event(void *text)
{
	for (unsigned s = 0; s < n_servers; s++)
		for (struct qmp_client *c = servers[s].clients; c; c = c->next)
			if (c->negotiated)
				send_text(c, text);
	free(text);
}

/* Events come from any thread (the migration thread's MIGRATION_PASS, a
 * device's BALLOON_CHANGE): off the main thread they are posted to it, as
 * writing a client's buffer there would race with the main thread's. */
static void on_event(void *opaque, const char *name, const char *data_json)
{
	struct timeval tv;
	char *text;
	bool has_data = strcmp(data_json, "{}") != 0;

	gettimeofday(&tv, NULL);
	if (asprintf(&text,
		     "{\"timestamp\": {\"seconds\": %lld, \"microseconds\": %ld}, \"event\": \"%s\"%s%s}",
		     (long long)tv.tv_sec, (long)tv.tv_usec, name, has_data ? ", \"data\": " : "",
		     has_data ? data_json : "") < 0)
		return;
	if (!loop || pthread_equal(pthread_self(), loop_thread))
		deliver_event(text);
	else if (evloop_call(loop, deliver_event, text) < 0)
		free(text);
}

/* ------------------------------------------------------------- requests */

static void execute(struct qmp_client *c, json_t *req)
{
	json_t *id = json_object_get(req, "id"), *args, *ret = NULL, *reply;
	const char *name, *key;
	json_t *val;
	struct qmp_error e = {0};
	const struct qmp_command *cmd;
	bool negotiating;

	if (!json_is_object(req)) {
		send_error(c, NULL, "GenericError", "QMP input must be a JSON object");
		return;
	}
	name = json_string_value(json_object_get(req, "execute"));
	args = json_object_get(req, "arguments");
	json_object_foreach(req, key, val) {
		if (strcmp(key, "execute") && strcmp(key, "arguments") && strcmp(key, "id")) {
			snprintf(e.desc, sizeof(e.desc), "QMP input member '%s' is unexpected", key);
			send_error(c, id, "GenericError", e.desc);
			return;
		}
	}
	if (!name) {
		send_error(c, id, "GenericError", "QMP input lacks member 'execute'");
		return;
	}
	if (args && !json_is_object(args)) {
		send_error(c, id, "GenericError", "QMP input member 'arguments' must be an object");
		return;
	}
	negotiating = !strcmp(name, "qmp_capabilities");
	if (!c->negotiated && !negotiating) {
		send_error(c, id, "CommandNotFound",
			   "Expecting capabilities negotiation with 'qmp_capabilities'");
		return;
	}
	if (c->negotiated && negotiating) {
		send_error(c, id, "CommandNotFound",
			   "Capabilities negotiation is already complete, command ignored");
		return;
	}
	cmd = qmp_find_command(name);
	if (!cmd) {
		snprintf(e.desc, sizeof(e.desc), "The command %s has not been found", name);
		send_error(c, id, "CommandNotFound", e.desc);
		return;
	}
	executing = c;
	if (qmp_args_check(cmd->args, args, e.desc, sizeof(e.desc)) < 0 ||
	    cmd->fn(c->srv->m, args, &ret, &e) < 0) {
		executing = NULL;
		send_error(c, id, e.cls[0] ? e.cls : "GenericError", e.desc);
		json_decref(ret);
		return;
	}
	executing = NULL;
	c->negotiated = true; /* every command past here implies it */
	reply = json_pack("{s:o}", "return", ret ? ret : json_object());
	if (id)
		json_object_set(reply, "id", id);
	send_json(c, reply);
	if (e.after_reply)
		e.after_reply(c->srv->m);
}

/* Drop input up to and including the next newline (resynchronise after
 * garbage); returns false when there is none yet. */
static bool skip_line(struct qmp_client *c)
{
	char *nl = memchr(c->in, '\n', c->in_len);
	size_t cut = nl ? (size_t)(nl - c->in) + 1 : c->in_len;

	memmove(c->in, c->in + cut, c->in_len - cut);
	c->in_len -= cut;
	return nl != NULL;
}

static void parse_input(struct qmp_client *c)
{
	while (c->in_len && !c->dead) {
		json_error_t jerr;
		size_t ws = strspn(c->in, " \t\r\n");
		json_t *req;

		if (ws >= c->in_len) {
			c->in_len = 0;
			return;
		}
		req = json_loadb(c->in, c->in_len, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
		if (!req) {
			char desc[256];

			if (json_error_code(&jerr) == json_error_premature_end_of_input)
				return; /* the rest is still on its way */
			snprintf(desc, sizeof(desc), "JSON parse error, %s", jerr.text);
			send_error(c, NULL, "GenericError", desc);
			c->skipping = !skip_line(c);
			return;
		}
		memmove(c->in, c->in + jerr.position, c->in_len - (size_t)jerr.position);
		c->in_len -= (size_t)jerr.position;
		execute(c, req);
		json_decref(req);
	}
}

static void receive(struct qmp_client *c, const char *buf, size_t n)
{
	const char *nl;

	if (c->skipping) {
		nl = memchr(buf, '\n', n);
		if (!nl)
			return;
		c->skipping = false;
		n -= (size_t)(nl + 1 - buf);
		buf = nl + 1;
	}
	if (c->in_len + n > QMP_MAX_INPUT) {
		send_error(c, NULL, "GenericError", "JSON parse error, request too large");
		c->in_len = 0;
		nl = memchr(buf, '\n', n);
		c->skipping = !nl;
		if (!nl)
			return;
		n -= (size_t)(nl + 1 - buf);
		buf = nl + 1;
	}
	memcpy(c->in + c->in_len, buf, n);
	c->in_len += n;
	c->in[c->in_len] = 0;
	/* Reparse only when a value may have ended: no quadratic rescans of
	 * a large request arriving in pieces. */
	if (memchr(buf, '}', n) || memchr(buf, ']', n) || memchr(buf, '\n', n))
		parse_input(c);
}

/* --------------------------------------------------------------- clients */

int qmp_take_passed_fd(void)
{
	struct qmp_client *c = executing;
	int fd;

	if (!c || !c->n_fds)
		return -1;
	fd = c->fds[0];
	memmove(c->fds, c->fds + 1, --c->n_fds * sizeof(c->fds[0]));
	return fd;
}

/* Keep the fds a client passed (SCM_RIGHTS) for its next getfd; beyond
 * QMP_MAX_FDS unclaimed ones they are closed. */
static void keep_passed_fds(struct qmp_client *c, struct msghdr *msg)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (c->n_fds < QMP_MAX_FDS)
				c->fds[c->n_fds++] = fd;
			else
				close(fd);
		}
	}
}

/* Read what the client sent: a socket's fds come along (recvmsg); -qmp
 * stdio is read plainly. */
static ssize_t client_read(struct qmp_client *c, char *buf, size_t len)
{
	union {
		char space[CMSG_SPACE(QMP_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl, .msg_controllen = sizeof(ctl)};
	ssize_t n;

	if (c->out_fd != c->fd)
		return read(c->fd, buf, len);
	n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC);
	if (n >= 0)
		keep_passed_fds(c, &msg);
	return n;
}

static void sweep(struct qmp_server *srv)
{
	for (struct qmp_client **p = &srv->clients; *p;) {
		struct qmp_client *c = *p;

		if (!c->dead) {
			p = &c->next;
			continue;
		}
		*p = c->next;
		srv->n_clients--;
		free(c->in);
		free(c->out);
		free(c);
	}
}

static void on_client_io(void *opaque, int fd, unsigned events)
{
	struct qmp_client *c = opaque;
	char buf[4096];

	if (events & EV_WRITE)
		flush(c);
	if (!c->dead && (events & EV_READ)) {
		ssize_t n = client_read(c, buf, sizeof(buf));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0)
			drop_client(c);
		else
			receive(c, buf, (size_t)n);
	}
	sweep(c->srv);
}

static void greet(struct qmp_client *c)
{
	json_t *g = json_pack("{s:{s:o,s:[]}}", "QMP", "version", qmp_version_json(), "capabilities");

	send_json(c, g);
}

static void add_client(struct qmp_server *srv, int fd, int out_fd)
{
	struct qmp_client *c = calloc(1, sizeof(*c));

	if (!c || srv->n_clients == QMP_MAX_CLIENTS || !(c->in = malloc(QMP_MAX_INPUT + 1))) {
		if (c)
			free(c);
		if (fd == out_fd)
			close(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	c->out_fd = out_fd;
	c->next = srv->clients;
	srv->clients = c;
	srv->n_clients++;
	if (evloop_add_fd(srv->m->host.loop, fd, EV_READ, on_client_io, c) < 0) {
		drop_client(c);
		return;
	}
	greet(c);
}

static void on_accept(void *opaque, int fd, unsigned events)
{
	struct qmp_server *srv = opaque;
	int client = listen_accept(fd, false);

	sweep(srv);
	if (client >= 0)
		add_client(srv, client, client);
}

/* ------------------------------------------------------------ lifecycle */

int qmp_start(struct machine *m, char *err, size_t errlen)
{
	const struct control_config *cc = &m->cfg->control;

	if (!cc->n_qmp)
		return 0;
	loop = m->host.loop;
	loop_thread = pthread_self(); /* the thread that will run the loop */
	qmp_commands_init(m);
	for (unsigned i = 0; i < cc->n_qmp; i++) {
		struct qmp_server *srv = &servers[n_servers];
		char where[160];

		*srv = (struct qmp_server){.m = m, .spec = cc->qmp[i], .listen_fd = -1};
		if (srv->spec.kind == LISTEN_STDIO) { /* the one client there is */
			n_servers++;
			add_client(srv, STDIN_FILENO, STDOUT_FILENO);
			continue;
		}
		srv->listen_fd = listen_open(&srv->spec, err, errlen);
		if (srv->listen_fd < 0)
			return -1;
		n_servers++;
		if (srv->spec.wait) {
			listen_describe(&srv->spec, where, sizeof(where));
			fprintf(stderr, "vmm: QMP: waiting for connection on %s\n", where);
			int client = listen_accept(srv->listen_fd, true);

			if (client >= 0)
				add_client(srv, client, client);
		}
		evloop_add_fd(m->host.loop, srv->listen_fd, EV_READ, on_accept, srv);
	}
	return machine_add_listener(m, on_event, NULL) < 0 ? -1 : 0;
}

void qmp_stop(void)
{
	for (unsigned s = 0; s < n_servers; s++) {
		struct qmp_server *srv = &servers[s];

		for (struct qmp_client *c = srv->clients; c; c = c->next)
			drop_client(c);
		sweep(srv);
		if (srv->listen_fd >= 0)
			evloop_del_fd(srv->m->host.loop, srv->listen_fd);
		listen_close(&srv->spec, srv->listen_fd);
	}
	n_servers = 0;
	qmp_commands_free();
}
