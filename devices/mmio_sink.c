/* mmio_sink.c — an MMIO range that takes any access and reads zero: the
 * target of the mmio-loop payload, so the benchmark measures the exit path
 * and not the unclaimed-access log. */
#include "devices/devices.h"

static void sink_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, 0);
}

static void sink_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
}

static const struct io_ops sink_ops = {sink_read, sink_write};

int mmio_sink_new(struct dev_host *host, uint64_t base, uint64_t len)
{
	return iobus_register(host->mmio, base, len, &sink_ops, NULL, "mmio-sink");
}
