/* ioapic.c — the 82093AA I/O APIC: 24 pins, each with a 64-bit
 * redirection entry, reached through IOREGSEL (base + 0x00) and IOWIN
 * (base + 0x10).
 *
 * A pin whose entry is unmasked sends an MSI-shaped message (the format
 * the local APIC layer and KVM_SIGNAL_MSI take) through host->irq.msi:
 * edge-triggered pins on each rising edge, level-triggered ones while
 * asserted, once per EOI (remote IRR). The local APIC layer reports EOIs
 * of level-triggered vectors with ioapic_eoi() — the EOI broadcast. Input
 * levels are logical (true = asserted); polarity is stored for the guest
 * but, as on every PC board model, not applied again.
 *
 * Messages are sent with our lock held: the receiver must not call back
 * into the I/O APIC from its msi callback (it reports EOIs later).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/intc/ioapic.h"
#include "state/state.h"

#define IOAPIC_PINS 24
#define IOAPIC_VERSION 0x11 /* 82093AA */
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WINDOW 0x10
#define IOAPIC_MMIO_SIZE 0x20

#define REG_ID 0x00
#define REG_VERSION 0x01
#define REG_ARB 0x02
#define REG_REDTBL 0x10

#define RTE_VECTOR 0xffull
#define RTE_DELMODE_SHIFT 8
#define RTE_DELMODE (7ull << RTE_DELMODE_SHIFT)
#define RTE_DESTMODE (1ull << 11)
#define RTE_DELIVS (1ull << 12)
#define RTE_POLARITY (1ull << 13)
#define RTE_REMOTE_IRR (1ull << 14)
#define RTE_LEVEL (1ull << 15)
#define RTE_MASKED (1ull << 16)
#define RTE_DEST_SHIFT 56
/* Bits a guest may write: all but delivery status and remote IRR, and
 * the reserved bits 17-47. Bits 48-55 are the I/O xAPIC's remappable
 * format (VT-d interrupt remapping): bit 48 the format, 49-63 and 11
 * the interrupt index. */
#define RTE_WRITABLE                                                                               \
	(0xffff0000000000ffull | RTE_DELMODE | RTE_DESTMODE | RTE_POLARITY | RTE_LEVEL | RTE_MASKED)
#define RTE_REMAPPABLE (1ull << 48)

#define DELMODE_LOWEST 1

struct ioapic {
	struct dev_host *host;
	uint64_t base;
	pthread_mutex_t lock;
	uint8_t id, regsel;
	uint32_t line; /* pins asserted now */
	uint64_t rte[IOAPIC_PINS];
	uint64_t count[IOAPIC_PINS];
	void (*routes_changed)(void *opaque);
	void *routes_opaque;
};

void ioapic_rte_to_msi(uint64_t rte, uint64_t *addr, uint32_t *data)
{
	unsigned delmode = (unsigned)((rte & RTE_DELMODE) >> RTE_DELMODE_SHIFT);

	if (rte & RTE_REMAPPABLE) { /* a remappable-format MSI for the IOMMU */
		unsigned index = (unsigned)((rte >> 49) & 0x7fff);

		*addr = 0xfee00000ull | index << 5 | 1u << 4 | (rte & RTE_DESTMODE ? 1u << 2 : 0);
		*data = (uint32_t)(rte & RTE_VECTOR) |
			(rte & RTE_LEVEL ? (1u << 15) | (1u << 14) : 0);
		return;
	}
	*addr = 0xfee00000ull | ((rte >> RTE_DEST_SHIFT) & 0xff) << 12 |
		(rte & RTE_DESTMODE ? 1u << 2 : 0) | (delmode == DELMODE_LOWEST ? 1u << 3 : 0);
	*data = (uint32_t)(rte & RTE_VECTOR) | delmode << 8 |
		(rte & RTE_LEVEL ? (1u << 15) | (1u << 14) : 0);
}

static void send(struct ioapic *io, uint64_t rte)
{
	uint64_t addr;
	uint32_t data;

	ioapic_rte_to_msi(rte, &addr, &data);
	if (io->host->irq.msi)
		io->host->irq.msi(io->host->irq.opaque, addr, data);
}

/* A level-triggered pin: deliver while asserted, unmasked and not
 * waiting for its EOI (lock held). */
static void service_level(struct ioapic *io, unsigned pin)
{
	uint64_t *e = &io->rte[pin];

	if (!(io->line & (1u << pin)) || (*e & (RTE_MASKED | RTE_REMOTE_IRR)))
		return;
	*e |= RTE_REMOTE_IRR;
	send(io, *e);
}

void ioapic_set_irq(struct ioapic *io, unsigned pin, bool level)
{
	uint32_t bit = 1u << pin;
	bool rising;

	if (pin >= IOAPIC_PINS)
		return;
	pthread_mutex_lock(&io->lock);
	rising = level && !(io->line & bit);
	io->line = level ? io->line | bit : io->line & ~bit;
	if (rising)
		io->count[pin]++;
	if (io->rte[pin] & RTE_LEVEL)
		service_level(io, pin);
	else if (rising && !(io->rte[pin] & RTE_MASKED))
		send(io, io->rte[pin]); /* a masked edge is lost, as on the 82093AA */
	pthread_mutex_unlock(&io->lock);
}

void ioapic_eoi(struct ioapic *io, uint8_t vector)
{
	pthread_mutex_lock(&io->lock);
	for (unsigned pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t *e = &io->rte[pin];

		if ((*e & RTE_VECTOR) != vector || !(*e & RTE_LEVEL) || !(*e & RTE_REMOTE_IRR))
			continue;
		*e &= ~RTE_REMOTE_IRR;
		service_level(io, pin); /* still asserted: again */
	}
	pthread_mutex_unlock(&io->lock);
}

/* ------------------------------------------------------------ registers */

static uint32_t reg_read(struct ioapic *io)
{
	unsigned pin;

	switch (io->regsel) {
	case REG_ID:
		return (uint32_t)io->id << 24;
	case REG_VERSION:
		return (IOAPIC_PINS - 1) << 16 | IOAPIC_VERSION;
	case REG_ARB:
		return (uint32_t)io->id << 24;
	}
	if (io->regsel < REG_REDTBL || io->regsel >= REG_REDTBL + 2 * IOAPIC_PINS)
		return 0xffffffff; /* unimplemented registers float high */
	pin = (io->regsel - REG_REDTBL) / 2;
	if (io->regsel & 1)
		return (uint32_t)(io->rte[pin] >> 32);
	return (uint32_t)io->rte[pin];
}

static void rte_write(struct ioapic *io, unsigned pin, bool high, uint32_t v)
{
	uint64_t *e = &io->rte[pin], old = *e;
	uint64_t val =
		high ? (uint64_t)v << 32 | (old & 0xffffffffull) : (old & ~0xffffffffull) | v;

	*e = (val & RTE_WRITABLE) | (old & RTE_REMOTE_IRR);
	/* Switching to edge drops a stale remote IRR (Linux relies on
	 * that to clear one after a lost EOI). */
	if (!(*e & RTE_LEVEL))
		*e &= ~RTE_REMOTE_IRR;
	/* An unmasked level pin that is asserted fires now. */
	if (*e & RTE_LEVEL)
		service_level(io, pin);
}

static bool reg_write(struct ioapic *io, uint32_t v)
{
	unsigned pin;

	if (io->regsel == REG_ID) {
		io->id = (v >> 24) & 0x0f;
		return false;
	}
	if (io->regsel < REG_REDTBL || io->regsel >= REG_REDTBL + 2 * IOAPIC_PINS)
		return false; /* read-only or absent: ignored */
	pin = (io->regsel - REG_REDTBL) / 2;
	rte_write(io, pin, io->regsel & 1, v);
	return true;
}

static void mmio_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ioapic *io = opaque;
	uint32_t v = 0;

	pthread_mutex_lock(&io->lock);
	if (off == IOAPIC_REGSEL)
		v = io->regsel;
	else if (off == IOAPIC_WINDOW)
		v = reg_read(io);
	pthread_mutex_unlock(&io->lock);
	io_data_put(data, size, v);
}

static void mmio_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ioapic *io = opaque;
	uint32_t v = (uint32_t)io_data_get(data, size);
	bool route_change = false;

	pthread_mutex_lock(&io->lock);
	if (off == IOAPIC_REGSEL)
		io->regsel = (uint8_t)v;
	else if (off == IOAPIC_WINDOW)
		route_change = reg_write(io, v);
	pthread_mutex_unlock(&io->lock);
	if (route_change && io->routes_changed)
		io->routes_changed(io->routes_opaque);
}

static const struct io_ops ioapic_ops = {mmio_read, mmio_write};

static void ioapic_reset(void *opaque)
{
	struct ioapic *io = opaque;

	pthread_mutex_lock(&io->lock);
	io->id = 0;
	io->regsel = 0;
	io->line = 0;
	for (unsigned i = 0; i < IOAPIC_PINS; i++)
		io->rte[i] = RTE_MASKED;
	memset(io->count, 0, sizeof(io->count));
	pthread_mutex_unlock(&io->lock);
	if (io->routes_changed)
		io->routes_changed(io->routes_opaque);
}

struct ioapic *ioapic_new(struct dev_host *host, uint64_t base)
{
	struct ioapic *io = calloc(1, sizeof(*io));

	if (!io)
		return NULL;
	io->host = host;
	io->base = base;
	pthread_mutex_init(&io->lock, NULL);
	for (unsigned i = 0; i < IOAPIC_PINS; i++)
		io->rte[i] = RTE_MASKED;
	if (iobus_register(host->mmio, base, IOAPIC_MMIO_SIZE, &ioapic_ops, io, "ioapic")) {
		pthread_mutex_destroy(&io->lock);
		free(io);
		return NULL;
	}
	dev_on_reset(host, ioapic_reset, io);
	return io;
}

void ioapic_free(struct ioapic *io)
{
	if (!io)
		return;
	iobus_unregister(io->host->mmio, io->base);
	pthread_mutex_destroy(&io->lock);
	free(io);
}

void ioapic_set_routes_changed(struct ioapic *io, void (*fn)(void *opaque), void *opaque)
{
	io->routes_changed = fn;
	io->routes_opaque = opaque;
}

void ioapic_pin_msi(struct ioapic *io, unsigned pin, uint64_t *addr, uint32_t *data, bool *masked)
{
	uint64_t e;

	pthread_mutex_lock(&io->lock);
	e = pin < IOAPIC_PINS ? io->rte[pin] : RTE_MASKED;
	pthread_mutex_unlock(&io->lock);
	ioapic_rte_to_msi(e, addr, data);
	*masked = e & RTE_MASKED;
}

uint64_t ioapic_irq_count(struct ioapic *io, unsigned pin)
{
	uint64_t c;

	if (pin >= IOAPIC_PINS)
		return 0;
	pthread_mutex_lock(&io->lock);
	c = io->count[pin];
	pthread_mutex_unlock(&io->lock);
	return c;
}

/* ------------------------------------------------------------- monitor */

struct outbuf {
	char *buf;
	size_t len, n;
};

static void outf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void outf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0, fmt,
		      ap);
	va_end(ap);
	o->n += w > 0 ? (size_t)w : 0;
}

static void pin_list(struct outbuf *o, const char *name, uint32_t bits)
{
	outf(o, "  %-10s", name);
	if (!bits)
		outf(o, " (none)");
	for (unsigned i = 0; i < IOAPIC_PINS; i++)
		if (bits & (1u << i))
			outf(o, " %u", i);
	outf(o, "\n");
}

size_t ioapic_format(uint8_t id, uint8_t regsel, const uint64_t rte[IOAPIC_NUM_PINS], uint32_t irr,
		     char *buf, size_t len)
{
	static const char *const delmode[8] = {"fixed", "lowest", "SMI", "...",
					       "NMI",	"INIT",	  "...", "extINT"};
	struct outbuf o = {buf, len, 0};
	uint32_t remote_irr = 0;

	outf(&o, "ioapic0: ver=0x%x id=0x%02x sel=0x%02x", IOAPIC_VERSION, id, regsel);
	if (regsel >= REG_REDTBL && regsel < REG_REDTBL + 2 * IOAPIC_PINS)
		outf(&o, " (redir[%u])", (regsel - REG_REDTBL) / 2);
	outf(&o, "\n");
	for (unsigned i = 0; i < IOAPIC_PINS; i++) {
		uint64_t e = rte[i];

		outf(&o, "  pin %-2u 0x%016llx dest=%llx vec=%-3u %s %-5s %-6s %-6s %s\n", i,
		     (unsigned long long)e, (unsigned long long)(e >> RTE_DEST_SHIFT),
		     (unsigned)(e & RTE_VECTOR), e & RTE_POLARITY ? "active-lo" : "active-hi",
		     e & RTE_LEVEL ? "level" : "edge", e & RTE_MASKED ? "masked" : "",
		     delmode[(e & RTE_DELMODE) >> RTE_DELMODE_SHIFT],
		     e & RTE_DESTMODE ? "logical" : "physical");
		if (e & RTE_REMOTE_IRR)
			remote_irr |= 1u << i;
	}
	pin_list(&o, "IRR", irr);
	pin_list(&o, "Remote IRR", remote_irr);
	return o.n;
}

/* `info ioapic` in QEMU's layout. */
size_t ioapic_info(struct ioapic *io, char *buf, size_t len)
{
	uint64_t rte[IOAPIC_PINS];
	uint8_t id, regsel;
	uint32_t line;

	pthread_mutex_lock(&io->lock);
	memcpy(rte, io->rte, sizeof(rte));
	id = io->id;
	regsel = io->regsel;
	line = io->line;
	pthread_mutex_unlock(&io->lock);
	return ioapic_format(id, regsel, rte, line, buf, len);
}

/* ------------------------------------------------------------ snapshot */

/* The layout of the node; bump when a property changes. */
#define IOAPIC_STATE_VERSION 1

static void ioapic_node_name(const struct ioapic *io, char *buf, size_t len)
{
	snprintf(buf, len, "ioapic@%llx", (unsigned long long)io->base);
}

void ioapic_save(struct ioapic *io, struct state_writer *w)
{
	uint8_t rte[IOAPIC_PINS * 8];
	char name[32];

	ioapic_node_name(io, name, sizeof(name));
	pthread_mutex_lock(&io->lock);
	for (unsigned pin = 0; pin < IOAPIC_PINS; pin++)
		for (unsigned b = 0; b < 8; b++) /* big-endian, as every property */
			rte[pin * 8 + b] = (uint8_t)(io->rte[pin] >> (56 - 8 * b));
	state_begin(w, name, IOAPIC_STATE_VERSION);
	state_put_u8(w, "id", io->id);
	state_put_u8(w, "regsel", io->regsel);
	state_put_u32(w, "line", io->line);
	state_put_bytes(w, "redirection-table", rte, sizeof(rte));
	state_end(w);
	pthread_mutex_unlock(&io->lock);
}

int ioapic_load(struct ioapic *io, const struct state_reader *r, char *err, size_t errlen)
{
	uint8_t raw[IOAPIC_PINS * 8], id = 0, regsel = 0;
	uint64_t rte[IOAPIC_PINS] = {0};
	struct state_node n;
	uint32_t line = 0;
	char name[32];

	ioapic_node_name(io, name, sizeof(name));
	if (state_node_open(&n, r, name, IOAPIC_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_u8_max(&n, "id", 0x0f, &id) || state_get_u8(&n, "regsel", &regsel) ||
	    state_get_u32_max(&n, "line", (1u << IOAPIC_PINS) - 1, &line) ||
	    state_get_bytes(&n, "redirection-table", raw, sizeof(raw)) || state_node_close(&n))
		return -1;
	for (unsigned pin = 0; pin < IOAPIC_PINS; pin++)
		for (unsigned b = 0; b < 8; b++)
			rte[pin] = rte[pin] << 8 | raw[pin * 8 + b];
	pthread_mutex_lock(&io->lock);
	io->id = id;
	io->regsel = regsel;
	io->line = line;
	memcpy(io->rte, rte, sizeof(rte));
	pthread_mutex_unlock(&io->lock);
	if (io->routes_changed)
		io->routes_changed(io->routes_opaque);
	return 0;
}
