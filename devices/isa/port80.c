/* port80.c — port 0x80: POST codes and the classic I/O delay port. Claimed
 * so that guests writing it neither get logged nor slow down. */
#include "devices/dev_host.h"
#include "devices/isa/port80.h"

static void port80_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, ~0ull);
}

static void port80_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
}

static const struct io_ops port80_ops = {port80_read, port80_write};

int port80_new(struct dev_host *host)
{
	return iobus_register(host->pio, 0x80, 1, &port80_ops, NULL, "port80");
}
