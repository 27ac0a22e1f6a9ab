/* state.h — device state as a tree: the snapshot/migration format.
 *
 * A saved machine is one flattened device tree (the FDT blob format of
 * libfdt, version 17). Every device is a node, named like a DT node with a
 * unit address (`serial@3f8`, `pic@20`), under a parent the machine picks
 * (`/devices`). Every node below the root carries a "version" property
 * (u32, written by state_begin()): the layout of that node's properties,
 * bumped by the device when it adds, drops or reinterprets one. The other properties are the device's registers and
 * latches, each one of:
 *
 *   u8, u16, u32, u64   big-endian, 1/2/4/8 bytes (as FDT cells are)
 *   bytes               a fixed-size array (a FIFO, CMOS memory)
 *
 * A property has no type tag: its size is its type, and the loader checks
 * it. The loader is strict, so a tree from another vmm fails loudly rather
 * than loading half a device: a missing node or property, a property the
 * loader did not ask for (child nodes are not checked: a parent may hold
 * other devices' nodes), a version newer than the loader knows, or a size
 * other than the expected one is a one-line error naming the node's path,
 * e.g. "state: /devices/serial@3f8: property 'lsr' is 2 bytes, expected 1".
 *
 * The reader runs fdt_check_full() over the whole blob (on its own aligned
 * copy) before it trusts a byte of it; after that, every access is through
 * libfdt's offset-checked calls, so truncated or hostile input gives an
 * error, never a read outside the blob. Values a device loads still need
 * its own range checks (state_node_fail() reports them the same way).
 *
 * Writing: state_writer_new(), then nested state_begin()/state_end() pairs
 * with state_put_*() between them, then state_writer_finish(). Write errors
 * are sticky: the first one is reported by state_writer_finish().
 * Reading: state_reader_open() on a blob, state_reader_sub() to step into a
 * node (the machine's "/devices"), state_node_open() for a device's node,
 * the state_get_*() getters, then state_node_close() to refuse properties
 * nobody asked for. Errors are written to the caller's err buffer.
 */
#ifndef VMM_STATE_STATE_H
#define VMM_STATE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATE_PATH_MAX 256
/* Properties one node may hold (the unknown-property check tracks them). */
#define STATE_NODE_MAX_PROPS 64

/* ---- writing ---- */
struct state_writer;
struct state_writer *state_writer_new(void);
/* A writer whose buffer takes size bytes before it must grow, its pages
 * touched now. A migration makes one while the guest still runs: saving
 * the stopped guest then neither grows the buffer (a copy into fresh
 * pages each time) nor faults its pages in, time the guest stands still. */
struct state_writer *state_writer_new_sized(size_t size);
void state_writer_free(struct state_writer *w);
/* Open a child node of the current one with its layout version. */
void state_begin(struct state_writer *w, const char *name, uint32_t version);
void state_end(struct state_writer *w);
void state_put_u8(struct state_writer *w, const char *name, uint8_t v);
void state_put_u16(struct state_writer *w, const char *name, uint16_t v);
void state_put_u32(struct state_writer *w, const char *name, uint32_t v);
void state_put_u64(struct state_writer *w, const char *name, uint64_t v);
void state_put_bytes(struct state_writer *w, const char *name, const void *buf, size_t len);
/* Close the tree; on success *blob (malloc'd, the caller frees) and *len.
 * Returns 0, or -1 with the first error in err. The writer is spent. */
int state_writer_finish(struct state_writer *w, void **blob, size_t *len, char *err,
			size_t errlen);

/* ---- reading ---- */
struct state_blob;
/* A position in a checked tree: the machine hands one to each device. */
struct state_reader {
	struct state_blob *blob;
	int offset;
	char path[STATE_PATH_MAX];
};
/* Check the whole blob and position r at its root. 0, or -1 and err. */
int state_reader_open(struct state_reader *r, const void *blob, size_t len, char *err,
		      size_t errlen);
/* The same on a malloc'd blob that r then owns, freed by
 * state_reader_close (or here, on failure): no copy of it is made. */
int state_reader_adopt(struct state_reader *r, void *blob, size_t len, char *err, size_t errlen);
/* Release the tree (every reader derived from r becomes invalid). */
void state_reader_close(struct state_reader *r);
/* The node at path: absolute ("/devices") or relative to r ("devices"). */
int state_reader_sub(const struct state_reader *r, const char *path, struct state_reader *sub,
		     char *err, size_t errlen);

/* One device's node while it is being loaded. */
struct state_node {
	struct state_reader at;
	uint32_t version;
	unsigned nused;
	int used[STATE_NODE_MAX_PROPS]; /* offsets of the properties read */
	char *err;
	size_t errlen;
};
/* Open the node at path (relative to r or absolute) whose version is at
 * most max_version; n->version tells which layout it holds. Errors go to
 * err, which n keeps for the getters. 0, or -1. */
int state_node_open(struct state_node *n, const struct state_reader *r, const char *path,
		    uint32_t max_version, char *err, size_t errlen);
int state_get_u8(struct state_node *n, const char *name, uint8_t *v);
int state_get_u16(struct state_node *n, const char *name, uint16_t *v);
int state_get_u32(struct state_node *n, const char *name, uint32_t *v);
int state_get_u64(struct state_node *n, const char *name, uint64_t *v);
/* Exactly len bytes. */
int state_get_bytes(struct state_node *n, const char *name, void *buf, size_t len);
/* Exactly len bytes, where they lie in the tree (valid until the reader
 * closes): a large property copied once, straight to where it goes. NULL
 * on error. */
const void *state_get_in_place(struct state_node *n, const char *name, size_t len);
/* A bool saved as u8: 0 or 1, anything else is an error. */
int state_get_bool(struct state_node *n, const char *name, bool *v);
/* A u8/u32 that must be at most max. */
int state_get_u8_max(struct state_node *n, const char *name, uint8_t max, uint8_t *v);
int state_get_u32_max(struct state_node *n, const char *name, uint32_t max, uint32_t *v);
/* Whether the node has the property (for optional ones of newer versions);
 * this does not count as reading it. */
bool state_has(const struct state_node *n, const char *name);
/* A device's own consistency error, as "state: PATH: MESSAGE". Returns -1. */
int state_node_fail(struct state_node *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Every property of the node must have been read: 0, or -1 naming one. */
int state_node_close(struct state_node *n);

#endif /* VMM_STATE_STATE_H */
