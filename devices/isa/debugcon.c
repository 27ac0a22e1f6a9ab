/* debugcon.c — the Bochs/QEMU debug console at port 0x402, where SeaBIOS
 * writes its log. A read returns 0xe9, which firmware uses to detect it. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/isa/debugcon.h"

#define DEBUGCON_PORT 0x402

struct debugcon {
	struct dev_host *host;
	int fd;
};

static void dc_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, 0xe9);
}

static void dc_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct debugcon *d = opaque;
	uint8_t c = (uint8_t)io_data_get(data, 1);
	ssize_t w;

	if (d->fd < 0)
		return;
	do
		w = write(d->fd, &c, 1);
	while (w < 0 && errno == EINTR);
}

static const struct io_ops dc_ops = {dc_read, dc_write};

struct debugcon *debugcon_new(struct dev_host *host, int fd)
{
	struct debugcon *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->host = host;
	d->fd = fd;
	if (iobus_register(host->pio, DEBUGCON_PORT, 1, &dc_ops, d, "debugcon")) {
		free(d);
		return NULL;
	}
	return d;
}

void debugcon_free(struct debugcon *d)
{
	if (!d)
		return;
	iobus_unregister(d->host->pio, DEBUGCON_PORT);
	free(d);
}
