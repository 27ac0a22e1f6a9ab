/* piix3.c — the 82371SB PCI-to-ISA bridge at 00:01.0.
 *
 * PIRQA-D (config 0x60-0x63) route PCI INTx lines to ISA IRQs: bit 7
 * disables the route, bits 0-3 name the IRQ. Slot s pin p drives PIRQ
 * (s + p - 1) mod 4, the swizzle SeaBIOS and the MP table assume. The ELCR
 * (0x4d0/0x4d1) belongs to the PIC that reads it: KVM's in-kernel one, or
 * devices/intc/i8259.c. Function 0 is multi-function: the IDE controller sits
 * at 00:01.1. */
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "state/state.h"

#define PIIX3_STATE_VERSION 1

#define PIRQ_BASE 0x60
#define PIRQ_DISABLE 0x80

struct piix3 {
	struct pci_dev pci;
	struct dev_host *host;
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

static void piix3_reset(void *opaque)
{
	struct piix3 *p = opaque;

	memset(&p->pci.cfg[PIRQ_BASE], PIRQ_DISABLE, 4);
}

struct piix3 *piix3_new(struct dev_host *host, struct pci_bus *bus)
{
	struct piix3 *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->host = host;
	pci_dev_init(&p->pci, "piix3", 0x8086, 0x7000, 0x060100, 0x00);
	p->pci.opaque = p;
	p->pci.cfg[0x0e] = 0x80; /* multi-function */
	memset(&p->pci.cfg[PIRQ_BASE], PIRQ_DISABLE, 4);
	memset(&p->pci.wmask[PIRQ_BASE], 0x8f, 4);
	if (pci_bus_add(bus, &p->pci, 1 << 3)) {
		free(p);
		return NULL;
	}
	pci_bus_set_route(bus, route, p);
	dev_on_reset(host, piix3_reset, p);
	return p;
}

/* Config space holds all of it: PIRQ routes are read from it on every
 * interrupt, so loading re-derives nothing. (The ELCR is the PIC's.) */
void piix3_save(struct piix3 *p, struct state_writer *w)
{
	state_begin(w, "piix3@1,0", PIIX3_STATE_VERSION);
	pci_dev_save(&p->pci, w);
	state_end(w);
}

int piix3_load(struct piix3 *p, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;

	if (state_node_open(&n, r, "piix3@1,0", PIIX3_STATE_VERSION, err, errlen) < 0 ||
	    pci_dev_load(&p->pci, &n) < 0)
		return -1;
	for (unsigned i = 0; i < 4; i++)
		if (p->pci.cfg[PIRQ_BASE + i] & ~0x8f)
			return state_node_fail(&n, "PIRQ%c route %#x has bits never kept", 'A' + i,
					       p->pci.cfg[PIRQ_BASE + i]);
	return state_node_close(&n);
}

void piix3_free(struct piix3 *p)
{
	if (!p)
		return;
	if (p->pci.bus)
		pci_bus_set_route(p->pci.bus, NULL, NULL);
	pci_bus_remove(&p->pci);
	free(p);
}
