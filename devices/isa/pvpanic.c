/* pvpanic.c — QEMU's pvpanic ISA device (port 0x505 by default): a read
 * returns the events the device supports, a guest write reports one:
 * bit 0 "panicked", bit 1 "crash kernel loaded". Linux's pvpanic driver
 * (CONFIG_PVPANIC_MMIO, found through the ACPI id QEMU0001) writes bit 0
 * from its panic notifier. The machine decides what a panic does. */
#include <stdlib.h>

#include "devices/dev_host.h"
#include "devices/isa/pvpanic.h"

struct pvpanic {
	struct dev_host *host;
	uint16_t iobase;
	void (*event_fn)(void *opaque, unsigned events);
	void *opaque;
};

static void pvpanic_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
}

static void pvpanic_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pvpanic *p = opaque;
	unsigned events =
		(unsigned)io_data_get(data, size) & (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);

	/* Unknown bits are ignored, as the device specification asks. */
	if (events)
		p->event_fn(p->opaque, events);
}

static const struct io_ops pvpanic_ops = {pvpanic_read, pvpanic_write};

struct pvpanic *pvpanic_new(struct dev_host *host, uint16_t iobase,
			    void (*event_fn)(void *opaque, unsigned events), void *opaque)
{
	struct pvpanic *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	*p = (struct pvpanic){host, iobase, event_fn, opaque};
	if (iobus_register(host->pio, iobase, 1, &pvpanic_ops, p, "pvpanic") < 0) {
		free(p);
		return NULL;
	}
	return p;
}

void pvpanic_free(struct pvpanic *p)
{
	if (!p)
		return;
	iobus_unregister(p->host->pio, p->iobase);
	free(p);
}
