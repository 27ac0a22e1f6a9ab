/* chardev.h — host ends of byte streams: stdio (raw terminal), file, unix
 * socket server, null, and the mon:stdio multiplexer that shares stdio
 * between a serial port and the monitor (Ctrl-A c / Ctrl-A x).
 *
 * Output (chardev_write) may come from any thread; input is read on the
 * main thread's event loop and handed to the focused frontend as fast as
 * the frontend can take it.
 */
#ifndef VMM_CHARDEV_H
#define VMM_CHARDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backends.h"
#include "vmm/cli/cli.h"

enum chardev_event {
	CHARDEV_OPENED, /* started, or a client connected */
	CHARDEV_CLOSED, /* the client went away */
	CHARDEV_FOCUS,	/* the mux switched to this frontend */
};

struct chardev_frontend {
	/* Room for input; receive gets at most that many bytes. */
	size_t (*can_receive)(void *opaque);
	void (*receive)(void *opaque, const uint8_t *buf, size_t len);
	void (*event)(void *opaque, enum chardev_event ev); /* optional */
	void *opaque;
};

/* telnet=on: what the client's input still owes of an IAC sequence. */
struct telnet_state {
	uint8_t skip; /* bytes of option negotiation still to drop */
	bool iac;     /* the previous byte was IAC */
	bool sub;     /* inside IAC SB ... IAC SE */
};

/* The server's opening: WILL ECHO, WILL SUPPRESS-GO-AHEAD, binary both
 * ways (QEMU's choice: a raw, character-at-a-time session). */
extern const uint8_t telnet_greeting[12];
/* Strip telnet commands from buf in place (IAC IAC is a 0xff byte);
 * returns the bytes of data left. */
size_t telnet_filter(struct telnet_state *t, uint8_t *buf, size_t len);

#define CHARDEV_MAX_FRONTENDS 2
#define CHARDEV_ESCAPE 0x01 /* Ctrl-A */

struct chardev;

/* NULL with err set; spec->kind must not be CHARDEV_NONE. */
struct chardev *chardev_new(const struct chardev_spec *spec, struct evloop *loop, char *err,
			    size_t errlen);
void chardev_free(struct chardev *c);
/* Attach a frontend: 0 for the first, 1 for the second (muxes only), or
 * -ENOSPC. The first frontend has the focus. */
int chardev_add_frontend(struct chardev *c, const struct chardev_frontend *fe);
/* Send the opened event to the frontends (after they are all attached). */
void chardev_start(struct chardev *c);
/* The frontends go (device_del of the port on c; main thread): input is
 * dropped until chardev_add_frontend and chardev_start again. */
void chardev_detach_frontends(struct chardev *c);
/* Called for Ctrl-A x on a mux. */
void chardev_set_quit(struct chardev *c, void (*fn)(void *opaque), void *opaque);
/* Any thread. Output to a disconnected socket is dropped. */
void chardev_write(struct chardev *c, const void *buf, size_t len);
/* Any thread, never blocking on a socket or pty: the bytes taken (0 when
 * the peer's buffer is full; len when there is no peer, as chardev_write
 * drops them). For a frontend that holds back what was not taken. */
size_t chardev_write_some(struct chardev *c, const void *buf, size_t len);
/* A frontend has room again (any thread). */
void chardev_rx_ready(struct chardev *c);
/* Whether output goes to a terminal (monitors echo input there). */
bool chardev_is_tty(const struct chardev *c);
/* query-chardev's "filename", in QEMU's words: "pty:/dev/pts/3",
 * "disconnected:unix:/p,server=on", "tcp:H:P,server=on <-> PEER:PORT". */
void chardev_describe(const struct chardev *c, char *buf, size_t len);
/* -chardev ringbuf|memory: whether c is one, and up to max of its unread
 * bytes, oldest first (they are consumed). chardev_write fills it. */
bool chardev_is_ringbuf(const struct chardev *c);
size_t chardev_ringbuf_read(struct chardev *c, uint8_t *out, size_t max);
/* -chardev pty: the terminal's /dev/pts path (query-chardev); else NULL. */
const char *chardev_pty_path(const struct chardev *c);
/* Restore the terminal if a chardev put it in raw mode (atexit, signals). */
void chardev_restore_tty(void);

/* Feed host bytes through a mux's escape handling; exported for tests.
 * Returns the number of bytes written to out (at most len). */
size_t chardev_mux_filter(struct chardev *c, const uint8_t *in, size_t len, uint8_t *out);
/* The focused frontend (0 or 1). */
unsigned chardev_focus(const struct chardev *c);

#endif /* VMM_CHARDEV_H */
