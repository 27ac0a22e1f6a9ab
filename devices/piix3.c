/* piix3.c — the 82371SB PCI-to-ISA bridge at 00:01.0.
 *
 * PIRQA-D (config 0x60-0x63) route PCI INTx lines to ISA IRQs: bit 7
 * disables the route, bits 0-3 name the IRQ. Slot s pin p drives PIRQ
 * (s + p - 1) mod 4, the swizzle SeaBIOS and the MP table assume. The ELCR
 * (0x4d0/0x4d1) says which ISA IRQs are level triggered; with KVM's
 * in-kernel PIC these ports are handled in the kernel, so ours serve only
 * machines without it. Function 0 is multi-function: the IDE controller
 * sits at 00:01.1. */
#include <stdlib.h>
#include <string.h>

#include "devices/devices.h"

#define PIRQ_BASE 0x60
#define PIRQ_DISABLE 0x80
#define ELCR_PORT 0x4d0

struct piix3 {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	uint8_t elcr[2];
};

/* Called with the bus lock held: read our config bytes directly. */
static int route(void *opaque, unsigned slot, unsigned pin)
{
	struct piix3 *p = opaque;
	uint8_t r = p->pci.cfg[PIRQ_BASE + ((slot + pin - 1) & 3)];

	if (r & PIRQ_DISABLE)
		return -1;
	r &= 0x0f;
	/* IRQs 0-2, 8 and 13 cannot be PCI interrupt targets */
	if (r < 3 || r == 8 || r == 13)
		return -1;
	return r;
}

static void elcr_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct piix3 *p = opaque;
	uint8_t v[2];

	pthread_mutex_lock(&p->lock);
	memcpy(v, p->elcr, 2);
	pthread_mutex_unlock(&p->lock);
	io_data_put(data, size, off == 0 ? (uint32_t)v[0] | (uint32_t)v[1] << 8 : v[1]);
}

static void elcr_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct piix3 *p = opaque;
	uint32_t v = (uint32_t)io_data_get(data, size);

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < size && off + i < 2; i++) {
		/* IRQ 0, 1, 2 (master) and 8, 13 (slave) are always edge */
		uint8_t mask = off + i == 0 ? 0xf8 : 0xde;

		p->elcr[off + i] = (uint8_t)(v >> (8 * i)) & mask;
	}
	pthread_mutex_unlock(&p->lock);
}

static const struct io_ops elcr_ops = {elcr_read, elcr_write};

static void piix3_reset(void *opaque)
{
	struct piix3 *p = opaque;

	memset(&p->pci.cfg[PIRQ_BASE], PIRQ_DISABLE, 4);
	pthread_mutex_lock(&p->lock);
	p->elcr[0] = p->elcr[1] = 0;
	pthread_mutex_unlock(&p->lock);
}

struct piix3 *piix3_new(struct dev_host *host, struct pci_bus *bus)
{
	struct piix3 *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->host = host;
	pthread_mutex_init(&p->lock, NULL);
	pci_dev_init(&p->pci, "piix3", 0x8086, 0x7000, 0x060100, 0x00);
	p->pci.opaque = p;
	p->pci.cfg[0x0e] = 0x80; /* multi-function */
	memset(&p->pci.cfg[PIRQ_BASE], PIRQ_DISABLE, 4);
	memset(&p->pci.wmask[PIRQ_BASE], 0x8f, 4);
	if (pci_bus_add(bus, &p->pci, 1 << 3) ||
	    iobus_register(host->pio, ELCR_PORT, 2, &elcr_ops, p, "elcr")) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	pci_bus_set_route(bus, route, p);
	dev_on_reset(host, piix3_reset, p);
	return p;
}

void piix3_free(struct piix3 *p)
{
	if (!p)
		return;
	if (p->pci.bus)
		pci_bus_set_route(p->pci.bus, NULL, NULL);
	pci_bus_remove(&p->pci);
	iobus_unregister(p->host->pio, ELCR_PORT);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
