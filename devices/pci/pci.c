/* pci.c — one PCI bus behind configuration mechanism #1 (0xcf8 address,
 * 0xcfc-0xcff data). Devices embed struct pci_dev; the bus applies guest
 * writes through each device's write mask, implements BAR sizing and moves
 * BARs on the I/O buses when the guest programs them or flips the command
 * register's decode bits. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/pci_internal.h"

#define CFG_ADDR_PORT 0xcf8
#define CFG_DATA_PORT 0xcfc

#define PCI_VENDOR_ID 0x00
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_SUBSYSTEM_VENDOR_ID 0x2c
#define PCI_CAPABILITY_LIST 0x34
#define PCI_INTERRUPT_LINE 0x3c
#define PCI_INTERRUPT_PIN 0x3d

#define RCR_HARD_RESET 0x02
#define RCR_RESET_CPU 0x04
#define RCR_FULL_RESET 0x08
_Static_assert(PCI_RCR_KEPT == (RCR_HARD_RESET | RCR_FULL_RESET), "0xcf9 keeps these bits");

#define PCI_COMMAND_IO 0x1
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4
#define PCI_STATUS_CAP_LIST 0x10

static uint32_t get_le(const uint8_t *p, unsigned size)
{
	return (uint32_t)io_data_get(p, size);
}

static void put_le(uint8_t *p, unsigned size, uint32_t v)
{
	io_data_put(p, size, v);
}

void pci_dev_init(struct pci_dev *d, const char *name, uint16_t vendor, uint16_t device,
		  uint32_t class_code, uint8_t revision)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	put_le(&d->cfg[PCI_VENDOR_ID], 2, vendor);
	put_le(&d->cfg[0x02], 2, device);
	d->cfg[0x08] = revision;
	put_le(&d->cfg[0x09], 3, class_code);
	put_le(&d->cfg[PCI_SUBSYSTEM_VENDOR_ID], 2, 0x1af4); /* as QEMU: Red Hat */
	put_le(&d->cfg[0x2e], 2, 0x1100);		      /* "QEMU virtual machine" */
	/* command: I/O, memory, bus master, SERR, INTx disable */
	put_le(&d->wmask[PCI_COMMAND], 2, 0x0547);
	d->wmask[0x0c] = 0xff; /* cache line size */
	d->wmask[0x0d] = 0xff; /* latency timer */
	d->wmask[PCI_INTERRUPT_LINE] = 0xff;
	for (unsigned i = 0; i < PCI_NUM_BARS; i++)
		d->bar[i].mapped = PCI_BAR_UNMAPPED;
}

void pci_dev_set_bar(struct pci_dev *d, unsigned n, uint64_t size, bool io,
		     const struct io_ops *ops, void *opaque)
{
	uint32_t mask;

	if (n >= PCI_NUM_BARS || size < (io ? 4u : 16u) || (size & (size - 1)))
		return;
	d->bar[n] = (struct pci_bar){size, io, ops, opaque, PCI_BAR_UNMAPPED};
	mask = ~(uint32_t)(size - 1);
	put_le(&d->cfg[PCI_BAR0 + 4 * n], 4, io ? 1 : 0);
	put_le(&d->wmask[PCI_BAR0 + 4 * n], 4, mask & (io ? ~3u : ~15u));
}

unsigned pci_dev_add_cap(struct pci_dev *d, uint8_t id, unsigned len)
{
	unsigned off = d->cap_end ? d->cap_end : 0x40, p;

	if (len < 2 || off + len > PCI_CFG_SPACE_SIZE)
		return 0;
	d->cfg[off] = id;
	d->cfg[off + 1] = 0;
	if (!d->cfg[PCI_CAPABILITY_LIST]) {
		d->cfg[PCI_CAPABILITY_LIST] = (uint8_t)off;
	} else {
		for (p = d->cfg[PCI_CAPABILITY_LIST]; d->cfg[p + 1]; p = d->cfg[p + 1])
			;
		d->cfg[p + 1] = (uint8_t)off;
	}
	d->cap_end = (off + len + 3) & ~3u;
	put_le(&d->cfg[PCI_STATUS], 2, get_le(&d->cfg[PCI_STATUS], 2) | PCI_STATUS_CAP_LIST);
	return off;
}

/* ----------------------------------------------------------- BAR moves */

static uint64_t bar_address(const struct pci_dev *d, unsigned n)
{
	uint32_t raw = get_le(&d->cfg[PCI_BAR0 + 4 * n], 4);

	return d->bar[n].io ? (raw & ~3u) : (raw & ~15u);
}

/* Where BAR n should be decoded now, or PCI_BAR_UNMAPPED. An address the
 * guest cannot mean (0, all-ones during sizing, past the I/O space) is
 * not decoded. */
static uint64_t bar_target(const struct pci_dev *d, unsigned n)
{
	const struct pci_bar *b = &d->bar[n];
	uint16_t cmd = get_le(&d->cfg[PCI_COMMAND], 2);
	uint64_t addr = bar_address(d, n);
	uint64_t limit = b->io ? 0x10000 : 0x100000000ull;

	if (!(cmd & (b->io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY)))
		return PCI_BAR_UNMAPPED;
	if (addr == 0 || addr + b->size > limit || addr == (~(b->size - 1) & (limit - 1)))
		return PCI_BAR_UNMAPPED;
	return addr;
}

static int io_bar_add(struct pci_bus *bus, uint64_t base, const struct pci_bar *b)
{
	int ret = 0;

	pthread_rwlock_wrlock(&bus->io_lock);
	for (unsigned i = 0; i < bus->n_io_bars; i++) {
		const struct io_bar_map *m = &bus->io_bars[i];

		if (base < m->base + m->len && m->base < base + b->size)
			ret = -EEXIST;
	}
	if (!ret && bus->n_io_bars == MAX_IO_BARS)
		ret = -ENOSPC;
	if (!ret)
		bus->io_bars[bus->n_io_bars++] = (struct io_bar_map){base, b->size, b->ops, b->opaque};
	pthread_rwlock_unlock(&bus->io_lock);
	return ret;
}

int pci_bus_add_isa_io(struct pci_bus *bus, uint16_t base, uint16_t len, const struct io_ops *ops,
		       void *opaque)
{
	struct pci_bar fixed = {.size = len, .ops = ops, .opaque = opaque};

	if (base < IO_WINDOW_BASE || base + len > IO_WINDOW_END)
		return -ERANGE;
	return io_bar_add(bus, base, &fixed);
}

static void io_bar_del(struct pci_bus *bus, uint64_t base)
{
	pthread_rwlock_wrlock(&bus->io_lock);
	for (unsigned i = 0; i < bus->n_io_bars; i++)
		if (bus->io_bars[i].base == base) {
			bus->io_bars[i] = bus->io_bars[--bus->n_io_bars];
			break;
		}
	pthread_rwlock_unlock(&bus->io_lock);
}

static void unmap_bar(struct pci_bus *bus, struct pci_bar *b)
{
	if (b->mapped == PCI_BAR_UNMAPPED)
		return;
	if (b->io && b->mapped >= IO_WINDOW_BASE)
		io_bar_del(bus, b->mapped);
	else
		iobus_unregister(b->io ? bus->host->pio : bus->host->mmio, b->mapped);
	b->mapped = PCI_BAR_UNMAPPED;
}

void pci_update_bars(struct pci_bus *bus, struct pci_dev *d)
{
	for (unsigned n = 0; n < PCI_NUM_BARS; n++) {
		struct pci_bar *b = &d->bar[n];
		uint64_t want;
		int ret;

		if (!b->size)
			continue;
		want = bar_target(d, n);
		if (want == b->mapped)
			continue;
		unmap_bar(bus, b);
		if (want == PCI_BAR_UNMAPPED)
			continue;
		/* Below the window an I/O BAR goes on the port bus itself (the
		 * ICH9 SMBus at 0x700 as SeaBIOS places it): config writes come
		 * through the unlocked 0xcfc and ECAM handlers. */
		if (b->io && want >= IO_WINDOW_BASE)
			ret = io_bar_add(bus, want, b);
		else if (b->io)
			ret = iobus_register(bus->host->pio, want, b->size, b->ops, b->opaque,
					     d->name);
		else
			ret = iobus_register(bus->host->mmio, want, b->size, b->ops, b->opaque,
					     d->name);
		if (ret == 0)
			b->mapped = want;
		else
			fprintf(stderr, "vmm: %s: BAR%u at 0x%llx overlaps another region, not mapped\n",
				d->name, n, (unsigned long long)want);
	}
}

static bool io_window_find(struct pci_bus *bus, uint64_t port, struct io_bar_map *out)
{
	bool found = false;

	pthread_rwlock_rdlock(&bus->io_lock);
	for (unsigned i = 0; i < bus->n_io_bars && !found; i++) {
		const struct io_bar_map *m = &bus->io_bars[i];

		if (port >= m->base && port < m->base + m->len) {
			*out = *m;
			found = true;
		}
	}
	pthread_rwlock_unlock(&bus->io_lock);
	return found;
}

/* Like the port bus does for its misses: report each port once, since a
 * guest touching a port no BAR decodes is usually a bug worth seeing. */
static void io_window_miss(struct pci_bus *bus, uint64_t port, bool write)
{
	unsigned i = (unsigned)(port - IO_WINDOW_BASE);
	uint8_t bit = (uint8_t)(1u << (i % 8));

	if (atomic_fetch_or(&bus->io_missed[i / 8], bit) & bit)
		return;
	fprintf(stderr, "vmm: guest %s io address %#llx in the PCI I/O window, no BAR there%s\n",
		write ? "wrote" : "read", (unsigned long long)port,
		write ? ", ignored" : ", returning all-ones");
}

/* The handler runs outside io_lock: a BAR handler may itself cause a move. */
static void io_window_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pci_bus *bus = opaque;
	uint64_t port = IO_WINDOW_BASE + off;
	struct io_bar_map m;

	if (!io_window_find(bus, port, &m)) {
		memset(data, 0xff, size);
		io_window_miss(bus, port, false);
	} else if (m.ops->read) {
		m.ops->read(m.opaque, port - m.base, data, size);
	} else {
		memset(data, 0xff, size);
	}
}

static void io_window_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pci_bus *bus = opaque;
	uint64_t port = IO_WINDOW_BASE + off;
	struct io_bar_map m;

	if (!io_window_find(bus, port, &m))
		io_window_miss(bus, port, true);
	else if (m.ops->write)
		m.ops->write(m.opaque, port - m.base, data, size);
}

static const struct io_ops io_window_ops = {io_window_read, io_window_write};

void pci_bus_del_isa_io(struct pci_bus *bus, uint16_t base)
{
	io_bar_del(bus, base);
}

/* ------------------------------------------------------ config access */

static uint32_t dev_cfg_read(struct pci_dev *d, unsigned off, unsigned size)
{
	return get_le(&d->cfg[off], size);
}

static void dev_cfg_write(struct pci_bus *bus, struct pci_dev *d, unsigned off, unsigned size,
			  uint32_t val)
{
	for (unsigned i = 0; i < size; i++) {
		uint8_t m = d->wmask[off + i], v = (uint8_t)(val >> (8 * i));

		d->cfg[off + i] = (d->cfg[off + i] & ~m) | (v & m);
	}
	if ((off < PCI_BAR0 + 4 * PCI_NUM_BARS && off + size > PCI_BAR0) ||
	    (off <= PCI_COMMAND && off + size > PCI_COMMAND))
		pci_update_bars(bus, d);
	if (d->cfg_written)
		d->cfg_written(d, off, size);
}

static bool cfg_access_ok(unsigned off, unsigned size)
{
	return (size == 1 || size == 2 || size == 4) && off + size <= PCIE_CFG_SPACE_SIZE &&
	       (off & (size - 1)) == 0;
}

/* Whether d has a PCI Express capability (a root port, an endpoint behind
 * one): the capability list walked, at most as many entries as fit. */
static bool is_express(const struct pci_dev *d)
{
	unsigned p = d->cfg[PCI_CAPABILITY_LIST];

	for (unsigned n = 0; p >= 0x40 && p < PCI_CFG_SPACE_SIZE - 1 && n < 48; n++) {
		if (d->cfg[p] == PCI_CAP_ID_EXP)
			return true;
		p = d->cfg[p + 1];
	}
	return false;
}

/* Extended configuration space (0x100-0xfff, reached through ECAM): a PCI
 * Express function has it, here with no extended capability (the zero
 * header at 0x100 the specification asks for then), so Linux sees 4 KiB
 * of configuration space as on QEMU; a conventional function has none and
 * reads all-ones. Nothing there is writable. */
static uint32_t ext_cfg_read(const struct pci_dev *d, uint32_t none)
{
	return is_express(d) ? 0 : none;
}

uint32_t pci_cfg_read_bdf(struct pci_bus *bus, uint8_t busno, uint8_t devfn, unsigned off,
			  unsigned size)
{
	uint32_t v = size >= 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
	struct pci_dev *d;

	if (!cfg_access_ok(off, size))
		return v;
	pthread_mutex_lock(&bus->lock);
	d = pci_bus_lookup(bus, busno, devfn);
	/* a function > 0 of a single-function device does not answer */
	if (d)
		v = off < PCI_CFG_SPACE_SIZE ? dev_cfg_read(d, off, size) : ext_cfg_read(d, v);
	pthread_mutex_unlock(&bus->lock);
	return v;
}

void pci_cfg_write_bdf(struct pci_bus *bus, uint8_t busno, uint8_t devfn, unsigned off,
		       unsigned size, uint32_t val)
{
	struct pci_dev *d;

	if (!cfg_access_ok(off, size) || off >= PCI_CFG_SPACE_SIZE)
		return; /* the extended space is read-only (ext_cfg_read) */
	pthread_mutex_lock(&bus->lock);
	d = pci_bus_lookup(bus, busno, devfn);
	if (d)
		dev_cfg_write(bus, d, off, size, val);
	pthread_mutex_unlock(&bus->lock);
	if (d && d->cfg_done)
		d->cfg_done(d);
}

void pci_dev_lock(struct pci_dev *d)
{
	pthread_mutex_lock(&pci_root(d->bus)->lock);
}

void pci_dev_unlock(struct pci_dev *d)
{
	pthread_mutex_unlock(&pci_root(d->bus)->lock);
}

uint32_t pci_cfg_read(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size)
{
	return pci_cfg_read_bdf(bus, 0, devfn, off, size);
}

void pci_cfg_write(struct pci_bus *bus, uint8_t devfn, unsigned off, unsigned size, uint32_t val)
{
	pci_cfg_write_bdf(bus, 0, devfn, off, size, val);
}

static void addr_port_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pci_bus *bus = opaque;

	/* Only a dword access at 0xcf8 is the address register; a byte at
	 * 0xcf9 is the PIIX reset control register. */
	pthread_mutex_lock(&bus->lock);
	if (off == 0 && size == 4)
		io_data_put(data, 4, bus->cfg_addr);
	else if (off == 1 && size == 1)
		io_data_put(data, 1, bus->rcr);
	else
		io_data_put(data, size, 0);
	pthread_mutex_unlock(&bus->lock);
}

/* 0xcf9: bit 2 (reset CPU) going to 1 resets the machine; bits 1 (hard
 * reset) and 3 (full reset) only select the kind, which is the same here. */
static void reset_control_write(struct pci_bus *bus, uint8_t v)
{
	bool reset;

	pthread_mutex_lock(&bus->lock);
	reset = (v & RCR_RESET_CPU) && !(bus->rcr & RCR_RESET_CPU) && bus->reset_fn;
	bus->rcr = v & (RCR_HARD_RESET | RCR_FULL_RESET);
	pthread_mutex_unlock(&bus->lock);
	if (reset)
		bus->reset_fn(bus->reset_opaque);
}

static void addr_port_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pci_bus *bus = opaque;

	if (off == 1 && size == 1)
		reset_control_write(bus, (uint8_t)io_data_get(data, 1));
	if (off != 0 || size != 4)
		return;
	pthread_mutex_lock(&bus->lock);
	bus->cfg_addr = (uint32_t)io_data_get(data, 4) & PCI_CFG_ADDR_MASK;
	bus->cfg_addr_low = (uint8_t)(io_data_get(data, 4) & 3);
	pthread_mutex_unlock(&bus->lock);
}

/* Decode the latched address for a data-port access; false when the
 * access goes nowhere (disabled, another bus). The low two address bits
 * select the byte as the port offset does, ORed in as QEMU's host bridges
 * do: kvm-unit-tests read the device ID with 0xcf8 = ...|2, inw(0xcfc). */
static bool data_target(struct pci_bus *bus, uint64_t port_off, unsigned *busno, unsigned *devfn,
			unsigned *reg)
{
	uint32_t a;
	unsigned low;

	pthread_mutex_lock(&bus->lock);
	a = bus->cfg_addr;
	low = bus->cfg_addr_low;
	pthread_mutex_unlock(&bus->lock);
	if (!(a & 0x80000000u))
		return false;
	*busno = (a >> 16) & 0xff;
	*devfn = (a >> 8) & 0xff;
	*reg = (a & 0xfc) | low | (unsigned)port_off;
	return true;
}

static void data_port_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pci_bus *bus = opaque;
	unsigned busno, devfn, reg;

	if (!data_target(bus, off, &busno, &devfn, &reg)) {
		memset(data, 0xff, size);
		return;
	}
	io_data_put(data, size, pci_cfg_read_bdf(bus, (uint8_t)busno, (uint8_t)devfn, reg, size));
}

static void data_port_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pci_bus *bus = opaque;
	unsigned busno, devfn, reg;

	if (data_target(bus, off, &busno, &devfn, &reg))
		pci_cfg_write_bdf(bus, (uint8_t)busno, (uint8_t)devfn, reg, size,
				  (uint32_t)io_data_get(data, size));
}

static const struct io_ops addr_ops = {addr_port_read, addr_port_write};
static const struct io_ops data_ops = {data_port_read, data_port_write};

struct pci_bus *pci_bus_new(struct dev_host *host)
{
	struct pci_bus *bus = calloc(1, sizeof(*bus));

	if (!bus)
		return NULL;
	bus->root = bus;
	bus->host = host;
	pthread_mutex_init(&bus->lock, NULL);
	pthread_rwlock_init(&bus->io_lock, NULL);
	pthread_mutex_init(&bus->ecam_lock, NULL);
	if (iobus_register(host->pio, CFG_ADDR_PORT, 4, &addr_ops, bus, "pci-conf-addr"))
		goto fail;
	/* unlocked: a config write may move a device's fixed ports (the
	 * ICH9 LPC bridge's PMBASE) on this port bus */
	if (iobus_register_unlocked(host->pio, CFG_DATA_PORT, 4, &data_ops, bus, "pci-conf-data"))
		goto fail_addr;
	if (iobus_register(host->pio, IO_WINDOW_BASE, IO_WINDOW_END - IO_WINDOW_BASE,
			   &io_window_ops, bus, "pci-io"))
		goto fail_data;
	return bus;
fail_data:
	iobus_unregister(host->pio, CFG_DATA_PORT);
fail_addr:
	iobus_unregister(host->pio, CFG_ADDR_PORT);
fail:
	pthread_mutex_destroy(&bus->ecam_lock);
	pthread_rwlock_destroy(&bus->io_lock);
	pthread_mutex_destroy(&bus->lock);
	free(bus);
	return NULL;
}

void pci_bus_free(struct pci_bus *bus)
{
	if (!bus)
		return;
	for (unsigned i = 0; i < PCI_MAX_DEVFN; i++) {
		struct pci_dev *d = bus->devs[i];

		if (!d)
			continue;
		for (unsigned n = 0; n < PCI_NUM_BARS; n++)
			unmap_bar(bus, &d->bar[n]);
	}
	iobus_unregister(bus->host->pio, CFG_ADDR_PORT);
	iobus_unregister(bus->host->pio, CFG_DATA_PORT);
	iobus_unregister(bus->host->pio, IO_WINDOW_BASE);
	pci_bus_set_ecam(bus, 0, 0);
	pthread_mutex_destroy(&bus->ecam_lock);
	pthread_rwlock_destroy(&bus->io_lock);
	pthread_mutex_destroy(&bus->lock);
	free(bus);
}

void pci_bus_set_reset(struct pci_bus *bus, void (*fn)(void *opaque), void *opaque)
{
	pthread_mutex_lock(&bus->lock);
	bus->reset_fn = fn;
	bus->reset_opaque = opaque;
	pthread_mutex_unlock(&bus->lock);
}

void pci_bus_set_route(struct pci_bus *bus, pci_route_fn fn, void *opaque)
{
	pthread_mutex_lock(&bus->lock);
	bus->route = fn;
	bus->route_opaque = opaque;
	pthread_mutex_unlock(&bus->lock);
}

int pci_bus_add(struct pci_bus *bus, struct pci_dev *d, uint8_t devfn)
{
	struct pci_bus *root = pci_root(bus);
	int ret = 0;

	pthread_mutex_lock(&root->lock);
	if (bus->devs[devfn]) {
		ret = -EEXIST;
	} else {
		d->bus = bus;
		d->devfn = devfn;
		bus->devs[devfn] = d;
	}
	pthread_mutex_unlock(&root->lock);
	return ret;
}

void pci_bus_remove(struct pci_dev *d)
{
	struct pci_bus *bus = d->bus, *root = pci_root(bus);

	if (!bus)
		return;
	pthread_mutex_lock(&root->lock);
	for (unsigned n = 0; n < PCI_NUM_BARS; n++)
		unmap_bar(root, &d->bar[n]);
	if (bus->devs[d->devfn] == d)
		bus->devs[d->devfn] = NULL;
	d->bus = NULL;
	pthread_mutex_unlock(&root->lock);
}

struct pci_dev *pci_bus_find(struct pci_bus *bus, uint8_t devfn)
{
	struct pci_bus *root = pci_root(bus);
	struct pci_dev *d;

	pthread_mutex_lock(&root->lock);
	d = bus->devs[devfn];
	pthread_mutex_unlock(&root->lock);
	return d;
}

int pci_bus_free_slot(struct pci_bus *bus)
{
	/* behind a PCIe port only device 0 exists */
	if (bus->bridge)
		return pci_bus_find(bus, 0) ? -1 : 0;
	for (unsigned slot = 1; slot < 32; slot++)
		if (!pci_bus_find(bus, (uint8_t)(slot << 3)))
			return (int)(slot << 3);
	return -1;
}

/* The GSI d's INTx pin reaches, or -1 (root's lock held): behind
 * bridges, the standard swizzle to the bridge's own pin. */
static int intx_gsi(struct pci_bus *root, const struct pci_dev *d)
{
	unsigned pin = d->cfg[PCI_INTERRUPT_PIN];
	const struct pci_dev *at = d;

	if (pin < 1 || pin > 4 || !root->route)
		return -1;
	for (pin--; at->bus->bridge; at = at->bus->bridge)
		pin = (pin + (at->devfn >> 3)) & 3;
	return root->route(root->route_opaque, at->devfn >> 3, pin);
}

/* Whether a function on bus or behind its bridges holds gsi up (root's
 * lock held): INTx lines are wired-OR, so a root port's hot-plug INTA
 * and the INTA of the device behind it, which swizzle to the same pin,
 * must not lower each other's. */
static bool gsi_held(struct pci_bus *root, const struct pci_bus *bus, int gsi, unsigned depth)
{
	for (unsigned i = 0; i < PCI_MAX_DEVFN; i++) {
		const struct pci_dev *d = bus->devs[i];

		if (!d)
			continue;
		if (d->irq_level && intx_gsi(root, d) == gsi)
			return true;
		if (d->secondary && depth < 8 && gsi_held(root, d->secondary, gsi, depth + 1))
			return true;
	}
	return false;
}

void pci_dev_set_irq(struct pci_dev *d, bool level)
{
	struct pci_bus *bus = pci_root(d->bus);
	unsigned seq;
	bool line;
	int gsi;

	if (!bus)
		return;
	pthread_mutex_lock(&bus->lock);
	d->irq_level = level;
	gsi = intx_gsi(bus, d);
	seq = ++bus->intx_seq;
	/* The line's level goes out without the lock: if another function
	 * changed its level meanwhile, the later writer may have been
	 * overtaken, so look again until nobody did. */
	while (gsi >= 0) {
		line = gsi_held(bus, bus, gsi, 0);
		pthread_mutex_unlock(&bus->lock);
		if (bus->host->irq.set_level)
			bus->host->irq.set_level(bus->host->irq.opaque, (unsigned)gsi, line);
		pthread_mutex_lock(&bus->lock);
		if (bus->intx_seq == seq)
			break;
		seq = bus->intx_seq;
	}
	pthread_mutex_unlock(&bus->lock);
}

/* ------------------------------------------------- bus mastering, MSI */

void pci_bus_set_iommu(struct pci_bus *bus, const struct pci_iommu_ops *ops)
{
	pthread_mutex_lock(&bus->lock);
	bus->iommu = ops ? *ops : (struct pci_iommu_ops){0};
	pthread_mutex_unlock(&bus->lock);
}

static int pci_dma(struct pci_dev *d, uint64_t addr, void *buf, uint64_t len, bool write)
{
	struct pci_bus *bus = pci_root(d->bus);
	struct pci_iommu_ops io;
	bool master;

	if (!bus)
		return -EFAULT;
	pthread_mutex_lock(&bus->lock);
	io = bus->iommu;
	master = get_le(&d->cfg[PCI_COMMAND], 2) & PCI_COMMAND_MASTER;
	pthread_mutex_unlock(&bus->lock);
	if (!master)
		return -EFAULT;
	if (io.dma)
		return io.dma(io.opaque, pci_dev_rid(d), addr, buf, len, write);
	return write ? guest_mem_write(bus->host->mem, addr, buf, len)
		     : guest_mem_read(bus->host->mem, addr, buf, len);
}

int pci_dma_read(struct pci_dev *d, uint64_t addr, void *buf, uint64_t len)
{
	return pci_dma(d, addr, buf, len, false);
}

int pci_dma_write(struct pci_dev *d, uint64_t addr, const void *buf, uint64_t len)
{
	return pci_dma(d, addr, (void *)buf, len, true);
}

void *pci_dma_ptr(struct pci_dev *d, uint64_t addr, uint64_t *len, bool write)
{
	struct pci_bus *bus = pci_root(d->bus);
	struct pci_iommu_ops io;
	uint64_t gpa = addr;

	if (!bus)
		return NULL;
	pthread_mutex_lock(&bus->lock);
	io = bus->iommu;
	pthread_mutex_unlock(&bus->lock);
	if (io.translate && io.translate(io.opaque, pci_dev_rid(d), addr, write, &gpa, len) < 0)
		return NULL;
	return guest_mem_ptr(bus->host->mem, gpa, *len);
}

/* An MSI is a bus master write too, so the IOMMU sees it with the
 * device's requester ID. */
void pci_msi_send(struct pci_dev *d, uint64_t addr, uint32_t data)
{
	struct pci_bus *bus = pci_root(d->bus);
	struct pci_iommu_ops io;

	if (!bus)
		return;
	pthread_mutex_lock(&bus->lock);
	io = bus->iommu;
	pthread_mutex_unlock(&bus->lock);
	if (io.msi)
		io.msi(io.opaque, pci_dev_rid(d), addr, data);
	else if (bus->host->irq.msi)
		bus->host->irq.msi(bus->host->irq.opaque, addr, data);
}

/* ----------------------------------------------------------- info pci */

static const char *class_name(uint16_t cls)
{
	switch (cls) {
	case 0x0100: return "SCSI controller";
	case 0x0101: return "IDE controller";
	case 0x0200: return "Ethernet controller";
	case 0x0300: return "VGA controller";
	case 0x0600: return "Host bridge";
	case 0x0601: return "ISA bridge";
	case 0x0680: return "Bridge";
	case 0x0780: return "Communication controller";
	default: return "Device";
	}
}

size_t pci_bus_info(struct pci_bus *bus, char *buf, size_t len)
{
	size_t n = 0;

#define OUT(...)                                                                                   \
	do {                                                                                       \
		int w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__);   \
		n += w > 0 ? (size_t)w : 0;                                                        \
	} while (0)
	pthread_mutex_lock(&bus->lock);
	for (unsigned i = 0; i < PCI_MAX_DEVFN; i++) {
		struct pci_dev *d = bus->devs[i];

		if (!d)
			continue;
		OUT("  Bus  0, device %3u, function %u:\n", i >> 3, i & 7);
		OUT("    %s: PCI device %04x:%04x\n", class_name(get_le(&d->cfg[0x0a], 2)),
		    get_le(&d->cfg[0], 2), get_le(&d->cfg[2], 2));
		if (d->cfg[PCI_INTERRUPT_PIN])
			OUT("      IRQ %u, pin %c.\n", d->cfg[PCI_INTERRUPT_LINE],
			    'A' + d->cfg[PCI_INTERRUPT_PIN] - 1);
		for (unsigned b = 0; b < PCI_NUM_BARS; b++) {
			uint64_t a = bar_address(d, b);

			if (!d->bar[b].size)
				continue;
			OUT("      BAR%u: %s at 0x%04llx [0x%04llx]%s.\n", b,
			    d->bar[b].io ? "I/O" : "32 bit memory", (unsigned long long)a,
			    (unsigned long long)(a + d->bar[b].size - 1),
			    d->bar[b].mapped == PCI_BAR_UNMAPPED ? " (not decoded)" : "");
		}
		if (d->info)
			n += d->info(d, buf + (n < len ? n : len), n < len ? len - n : 0);
		OUT("      id \"%s\"\n", d->name);
	}
	pthread_mutex_unlock(&bus->lock);
#undef OUT
	return n;
}
