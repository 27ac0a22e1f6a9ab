/* isa_empty.c — ISA addresses where a PC may have a device and this one
 * has none (parallel ports, unconfigured COM ports, the floppy controller,
 * the debug console without -debugcon, the VGA window at 0xa0000): reads
 * float to all-ones, writes vanish, and nothing is logged, because
 * firmware and boot loaders probing them is expected, not a bug. All-ones
 * is also what tells SeaBIOS a port is absent: a UART's scratch register
 * and an LPT data latch do not read back, and port 0x402 does not answer
 * 0xe9, so SeaBIOS stops writing its log there. */
#include "devices/dev_host.h"
#include "devices/isa/isa_empty.h"

static void empty_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, ~0ull);
}

static void empty_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
}

static const struct io_ops empty_ops = {empty_read, empty_write};

int isa_empty_new(struct iobus *bus, uint64_t base, uint64_t len, const char *name)
{
	return iobus_register(bus, base, len, &empty_ops, NULL, name);
}
