/* state.c — the device-state tree: a writer over libfdt's sequential-write
 * API and a strict reader over a blob checked with fdt_check_full(). The
 * format is described in state.h. */
#include <errno.h>
#include <libfdt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"

#define WRITER_FIRST_SIZE 4096
/* A saved machine is small; anything larger is a bug, not a state. */
#define WRITER_MAX_SIZE (64 << 20)

struct state_writer {
	void *buf;
	int size;
	int depth; /* nodes open below the root */
	int fdt_err;
	char err[STATE_PATH_MAX];
};

struct state_blob {
	void *fdt;
	size_t len;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- writing ---- */

static void writer_fail(struct state_writer *w, const char *what, const char *name, int fdt_err)
{
	if (w->err[0])
		return; /* the first error is the one worth reporting */
	w->fdt_err = fdt_err ? fdt_err : -FDT_ERR_BADSTATE;
	snprintf(w->err, sizeof(w->err), "state: %s '%s': %s", what, name,
		 fdt_err ? fdt_strerror(fdt_err) : "invalid name");
}

/* Double the buffer after -FDT_ERR_NOSPACE; false when it cannot grow. */
static bool writer_grow(struct state_writer *w)
{
	int size = w->size * 2;
	void *buf;

	if (size > WRITER_MAX_SIZE || !(buf = malloc((size_t)size)))
		return false;
	if (fdt_resize(w->buf, buf, size) < 0) {
		free(buf);
		return false;
	}
	free(w->buf);
	w->buf = buf;
	w->size = size;
	return true;
}

struct state_writer *state_writer_new_sized(size_t size)
{
	struct state_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (size < WRITER_FIRST_SIZE)
		size = WRITER_FIRST_SIZE;
	if (size > WRITER_MAX_SIZE)
		size = WRITER_MAX_SIZE;
	w->size = (int)size;
	w->buf = malloc(size);
	if (w->buf)
		memset(w->buf, 0, size); /* its pages, faulted in now */
	if (!w->buf || fdt_create(w->buf, w->size) < 0 || fdt_finish_reservemap(w->buf) < 0 ||
	    fdt_begin_node(w->buf, "") < 0) {
		free(w->buf);
		free(w);
		return NULL;
	}
	return w;
}

struct state_writer *state_writer_new(void)
{
	return state_writer_new_sized(WRITER_FIRST_SIZE);
}

void state_writer_free(struct state_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w);
}

/* A node or property name: non-empty, printable, no '/' (the path
 * separator). */
static bool valid_name(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || *p <= ' ' || *p > '~')
			return false;
	return true;
}

static void put_raw(struct state_writer *w, const char *name, const void *val, size_t len)
{
	int r;

	if (w->err[0])
		return;
	if (!valid_name(name) || len > INT_MAX) {
		writer_fail(w, "property", name ? name : "", 0);
		return;
	}
	while ((r = fdt_property(w->buf, name, val, (int)len)) == -FDT_ERR_NOSPACE)
		if (!writer_grow(w))
			break;
	if (r < 0)
		writer_fail(w, "property", name, r);
}

void state_begin(struct state_writer *w, const char *name, uint32_t version)
{
	int r;

	if (w->err[0])
		return;
	if (!valid_name(name)) {
		writer_fail(w, "node", name ? name : "", 0);
		return;
	}
	while ((r = fdt_begin_node(w->buf, name)) == -FDT_ERR_NOSPACE)
		if (!writer_grow(w))
			break;
	if (r < 0) {
		writer_fail(w, "node", name, r);
		return;
	}
	w->depth++;
	state_put_u32(w, "version", version);
}

void state_end(struct state_writer *w)
{
	int r;

	if (w->err[0])
		return;
	if (w->depth == 0) {
		writer_fail(w, "end of node", "/", -FDT_ERR_BADSTRUCTURE);
		return;
	}
	while ((r = fdt_end_node(w->buf)) == -FDT_ERR_NOSPACE)
		if (!writer_grow(w))
			break;
	if (r < 0)
		writer_fail(w, "end of node", "", r);
	w->depth--;
}

void state_put_u8(struct state_writer *w, const char *name, uint8_t v)
{
	put_raw(w, name, &v, 1);
}

void state_put_u16(struct state_writer *w, const char *name, uint16_t v)
{
	uint8_t be[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	put_raw(w, name, be, sizeof(be));
}

void state_put_u32(struct state_writer *w, const char *name, uint32_t v)
{
	fdt32_t be = cpu_to_fdt32(v);

	put_raw(w, name, &be, sizeof(be));
}

void state_put_u64(struct state_writer *w, const char *name, uint64_t v)
{
	fdt64_t be = cpu_to_fdt64(v);

	put_raw(w, name, &be, sizeof(be));
}

void state_put_bytes(struct state_writer *w, const char *name, const void *buf, size_t len)
{
	put_raw(w, name, buf, len);
}

int state_writer_finish(struct state_writer *w, void **blob, size_t *len, char *err,
			size_t errlen)
{
	int r;

	*blob = NULL;
	*len = 0;
	if (!w->err[0] && w->depth != 0)
		snprintf(w->err, sizeof(w->err), "state: %d node(s) left open", w->depth);
	if (!w->err[0]) {
		while ((r = fdt_end_node(w->buf)) == -FDT_ERR_NOSPACE)
			if (!writer_grow(w))
				break;
		if (r >= 0)
			while ((r = fdt_finish(w->buf)) == -FDT_ERR_NOSPACE)
				if (!writer_grow(w))
					break;
		if (r < 0)
			writer_fail(w, "tree", "/", r);
	}
	if (w->err[0]) {
		set_err(err, errlen, "%s", w->err);
		state_writer_free(w);
		return -1;
	}
	*blob = w->buf;
	*len = fdt_totalsize(w->buf);
	free(w);
	return 0;
}

/* ---- reading ---- */

int state_reader_adopt(struct state_reader *r, void *blob, size_t len, char *err, size_t errlen)
{
	struct state_blob *b;
	int ret;

	/* malloc's blocks are aligned as libfdt wants (8 bytes) */
	memset(r, 0, sizeof(*r));
	if (len > INT_MAX) {
		free(blob);
		set_err(err, errlen, "state: the tree is too large (%zu bytes)", len);
		return -1;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		free(blob);
		set_err(err, errlen, "state: %s", strerror(ENOMEM));
		return -1;
	}
	b->fdt = blob;
	b->len = len;
	/* the writer makes version 17 only; older layouts are refused before
	 * fdt_check_full, which dereferences NULL on some (version 3) */
	if (len < sizeof(struct fdt_header) || fdt_magic(b->fdt) != FDT_MAGIC)
		ret = -FDT_ERR_BADMAGIC;
	else if (fdt_version(b->fdt) != 17)
		ret = -FDT_ERR_BADVERSION;
	else
		ret = fdt_check_full(b->fdt, len);
	if (ret == 0 && fdt_totalsize(b->fdt) != len)
		set_err(err, errlen, "state: the tree is %zu bytes, its header says %u", len,
			fdt_totalsize(b->fdt));
	else if (ret < 0)
		set_err(err, errlen, "state: not a valid state tree: %s", fdt_strerror(ret));
	if (ret < 0 || fdt_totalsize(b->fdt) != len) {
		free(b->fdt);
		free(b);
		return -1;
	}
	r->blob = b;
	r->offset = 0;
	strcpy(r->path, "/");
	return 0;
}

int state_reader_open(struct state_reader *r, const void *blob, size_t len, char *err,
		      size_t errlen)
{
	void *copy;

	memset(r, 0, sizeof(*r));
	if (len > INT_MAX) {
		set_err(err, errlen, "state: the tree is too large (%zu bytes)", len);
		return -1;
	}
	/* libfdt wants the blob 8-byte aligned: our own copy is */
	copy = malloc(len ? len : 1);
	if (!copy) {
		set_err(err, errlen, "state: %s", strerror(ENOMEM));
		return -1;
	}
	memcpy(copy, blob, len);
	return state_reader_adopt(r, copy, len, err, errlen);
}

void state_reader_close(struct state_reader *r)
{
	if (r->blob) {
		free(r->blob->fdt);
		free(r->blob);
	}
	memset(r, 0, sizeof(*r));
}

int state_reader_sub(const struct state_reader *r, const char *path, struct state_reader *sub,
		     char *err, size_t errlen)
{
	char full[STATE_PATH_MAX];
	int n, off;

	if (path[0] == '/')
		n = snprintf(full, sizeof(full), "%s", path);
	else
		n = snprintf(full, sizeof(full), "%s%s%s", r->path,
			     strcmp(r->path, "/") ? "/" : "", path);
	if (n < 0 || (size_t)n >= sizeof(full)) {
		set_err(err, errlen, "state: path too long: %s", path);
		return -1;
	}
	off = fdt_path_offset(r->blob->fdt, full);
	if (off < 0) {
		set_err(err, errlen, "state: %s: no such node", full);
		return -1;
	}
	sub->blob = r->blob;
	sub->offset = off;
	memcpy(sub->path, full, (size_t)n + 1);
	return 0;
}

/* The property's value, or NULL with the error reported; marks it read. */
static const void *find_prop(struct state_node *n, const char *name, int *lenp)
{
	const void *fdt = n->at.blob->fdt;
	const char *pname;
	const void *val;
	int off;

	fdt_for_each_property_offset(off, fdt, n->at.offset)
	{
		val = fdt_getprop_by_offset(fdt, off, &pname, lenp);
		if (!val || strcmp(pname, name))
			continue;
		for (unsigned i = 0; i < n->nused; i++)
			if (n->used[i] == off)
				return val;
		if (n->nused == STATE_NODE_MAX_PROPS) {
			state_node_fail(n, "more than %d properties", STATE_NODE_MAX_PROPS);
			return NULL;
		}
		n->used[n->nused++] = off;
		return val;
	}
	state_node_fail(n, "no property '%s'", name);
	return NULL;
}

/* The property as an exactly len-byte value. */
static const uint8_t *sized_prop(struct state_node *n, const char *name, size_t len)
{
	const uint8_t *val;
	int plen;

	val = find_prop(n, name, &plen);
	if (!val)
		return NULL;
	if ((size_t)plen != len) {
		state_node_fail(n, "property '%s' is %d byte%s, expected %zu", name, plen,
				plen == 1 ? "" : "s", len);
		return NULL;
	}
	return val;
}

/* Big-endian, whatever the width and the alignment. */
static uint64_t be_value(const uint8_t *p, size_t len)
{
	uint64_t v = 0;

	for (size_t i = 0; i < len; i++)
		v = v << 8 | p[i];
	return v;
}

int state_get_u8(struct state_node *n, const char *name, uint8_t *v)
{
	const uint8_t *p = sized_prop(n, name, 1);

	if (!p)
		return -1;
	*v = p[0];
	return 0;
}

int state_get_u16(struct state_node *n, const char *name, uint16_t *v)
{
	const uint8_t *p = sized_prop(n, name, 2);

	if (!p)
		return -1;
	*v = (uint16_t)be_value(p, 2);
	return 0;
}

int state_get_u32(struct state_node *n, const char *name, uint32_t *v)
{
	const uint8_t *p = sized_prop(n, name, 4);

	if (!p)
		return -1;
	*v = (uint32_t)be_value(p, 4);
	return 0;
}

int state_get_u64(struct state_node *n, const char *name, uint64_t *v)
{
	const uint8_t *p = sized_prop(n, name, 8);

	if (!p)
		return -1;
	*v = be_value(p, 8);
	return 0;
}

int state_get_bytes(struct state_node *n, const char *name, void *buf, size_t len)
{
	const uint8_t *p = sized_prop(n, name, len);

	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

const void *state_get_in_place(struct state_node *n, const char *name, size_t len)
{
	return sized_prop(n, name, len);
}

int state_get_bool(struct state_node *n, const char *name, bool *v)
{
	uint8_t b = 0;

	if (state_get_u8_max(n, name, 1, &b) < 0)
		return -1;
	*v = b;
	return 0;
}

int state_get_u8_max(struct state_node *n, const char *name, uint8_t max, uint8_t *v)
{
	uint8_t b = 0;

	if (state_get_u8(n, name, &b) < 0)
		return -1;
	if (b > max)
		return state_node_fail(n, "property '%s' is %u, at most %u", name, b, max);
	*v = b;
	return 0;
}

int state_get_u32_max(struct state_node *n, const char *name, uint32_t max, uint32_t *v)
{
	uint32_t x = 0;

	if (state_get_u32(n, name, &x) < 0)
		return -1;
	if (x > max)
		return state_node_fail(n, "property '%s' is %u, at most %u", name, x, max);
	*v = x;
	return 0;
}

bool state_has(const struct state_node *n, const char *name)
{
	return fdt_getprop(n->at.blob->fdt, n->at.offset, name, NULL) != NULL;
}

int state_node_fail(struct state_node *n, const char *fmt, ...)
{
	char msg[STATE_PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	set_err(n->err, n->errlen, "state: %s: %s", n->at.path, msg);
	return -1;
}

int state_node_open(struct state_node *n, const struct state_reader *r, const char *path,
		    uint32_t max_version, char *err, size_t errlen)
{
	memset(n, 0, sizeof(*n));
	n->err = err;
	n->errlen = errlen;
	if (state_reader_sub(r, path, &n->at, err, errlen) < 0)
		return -1;
	if (state_get_u32(n, "version", &n->version) < 0)
		return -1;
	if (n->version > max_version)
		return state_node_fail(n, "version %u is newer than the %u this vmm knows",
				       n->version, max_version);
	return 0;
}

int state_node_close(struct state_node *n)
{
	const void *fdt = n->at.blob->fdt;
	const char *pname;
	int off;

	fdt_for_each_property_offset(off, fdt, n->at.offset)
	{
		unsigned i;

		if (!fdt_getprop_by_offset(fdt, off, &pname, NULL))
			return state_node_fail(n, "unreadable property");
		for (i = 0; i < n->nused && n->used[i] != off; i++)
			;
		if (i == n->nused)
			return state_node_fail(n, "unknown property '%s'", pname);
	}
	return 0;
}
