/* debug_exit.c — QEMU's isa-debug-exit: a guest write of value v ends the
 * VMM with exit status (v << 1) | 1, so a test payload can report pass or
 * fail without a clean shutdown (status 0 stays reserved for the VMM). */
#include <stdio.h>
#include <stdlib.h>

#include "devices/dev_host.h"
#include "devices/isa/debug_exit.h"

struct debug_exit {
	struct dev_host *host;
	uint16_t iobase;
	void (*exit_fn)(void *opaque, int status);
	void *opaque;
};

static void debug_exit_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, 0); /* QEMU reads back zero */
}

static void debug_exit_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct debug_exit *d = opaque;
	uint64_t v = io_data_get(data, size);

	d->exit_fn(d->opaque, (int)(((v << 1) | 1) & 0xff));
}

static const struct io_ops debug_exit_ops = {debug_exit_read, debug_exit_write};

struct debug_exit *debug_exit_new(struct dev_host *host, uint16_t iobase, uint16_t iosize,
				  void (*exit_fn)(void *opaque, int status), void *opaque)
{
	struct debug_exit *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	*d = (struct debug_exit){host, iobase, exit_fn, opaque};
	if (iobus_register(host->pio, iobase, iosize ? iosize : 1, &debug_exit_ops, d,
			   "isa-debug-exit") < 0) {
		free(d);
		return NULL;
	}
	return d;
}

void debug_exit_free(struct debug_exit *d)
{
	if (!d)
		return;
	iobus_unregister(d->host->pio, d->iobase);
	free(d);
}
