/* edu.c — QEMU's educational PCI device (docs/specs/edu.rst), which
 * kvm-unit-tests' intel_iommu test drives: vendor 1234, device 11e8,
 * BAR0 1 MiB of registers:
 *   0x00 identification 0x010000ed      0x04 liveness: reads ~written
 *   0x08 factorial: write n, read n!    0x20 status: 0x01 computing,
 *                                            0x80 interrupt when done
 *   0x24 interrupt status               0x60 raise (status |= v)
 *   0x64 acknowledge (status &= ~v)     0x80/0x88/0x90 DMA src/dst/count
 *   0x98 DMA command: 0x01 start, 0x02 device -> RAM, 0x04 interrupt
 * Registers below 0x80 take 32-bit accesses, the DMA ones 32 or 64. The
 * DMA buffer is 4 KiB at device address 0x40000; the other end is a bus
 * address, through the IOMMU when there is one (pci_dma_*). Interrupts
 * are MSI when enabled, else INTA. QEMU computes and copies on a timer or
 * a thread; here both finish within the register write, so a guest
 * polling the status sees them done. A DMA outside the buffer (QEMU
 * aborts) or faulting is dropped and logged once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/testdev/edu.h"
#include "state/state.h"

#define EDU_ID 0x010000edu
#define EDU_BAR_SIZE (1u << 20)
#define STATUS_COMPUTING 0x01u
#define STATUS_IRQFACT 0x80u
#define DMA_START 0x01u
#define DMA_FROM_DEV 0x02u
#define DMA_IRQ 0x04u
#define IRQ_FACT 0x00000001u
#define IRQ_DMA 0x00000100u

struct edu {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	uint32_t alive, fact, status, irq_status;
	uint64_t dma_src, dma_dst, dma_cnt, dma_cmd;
	unsigned msi_cap;
	bool dma_error_logged;
	uint8_t buf[EDU_DMA_SIZE];
};

/* Lock held; the MSI or INTA leaves without it (the bus takes its own). */
static void edu_signal(struct edu *e, bool raise_edge)
{
	bool level = e->irq_status != 0;

	pthread_mutex_unlock(&e->lock);
	pci_irq_signal(&e->pci, e->msi_cap, level, raise_edge);
	pthread_mutex_lock(&e->lock);
}

/* status |= bits and interrupt (lock held) */
static void raise_irq(struct edu *e, uint32_t bits)
{
	e->irq_status |= bits;
	if (e->irq_status)
		edu_signal(e, true);
}

static void lower_irq(struct edu *e, uint32_t bits)
{
	e->irq_status &= ~bits;
	edu_signal(e, false);
}

/* n! mod 2^32, as QEMU's 32-bit loop leaves it. From 34 on that is 0
 * (34! has 32 factors of 2): no loop of up to 4 billion steps on the vCPU
 * thread, and none that never ends (n = 0xffffffff, found by fuzzing). */
static uint32_t factorial(uint32_t n)
{
	uint32_t r = 1;

	if (n >= 34)
		return 0;
	for (uint32_t i = 2; i <= n; i++)
		r *= i; /* wraps like QEMU's 32-bit result */
	return r;
}

static bool in_buffer(uint64_t addr, uint64_t len)
{
	return addr >= EDU_DMA_BASE && len <= EDU_DMA_SIZE &&
	       addr - EDU_DMA_BASE <= EDU_DMA_SIZE - len;
}

static void dma_failed(struct edu *e, const char *why)
{
	if (!e->dma_error_logged)
		fprintf(stderr, "vmm: edu: DMA %s, dropped\n", why);
	e->dma_error_logged = true;
}

static void run_dma(struct edu *e)
{
	bool from_dev = e->dma_cmd & DMA_FROM_DEV;
	uint64_t dev = from_dev ? e->dma_src : e->dma_dst, bus = from_dev ? e->dma_dst : e->dma_src;
	int r;

	if (!in_buffer(dev, e->dma_cnt)) {
		dma_failed(e, "outside the device's 4 KiB buffer at 0x40000");
	} else {
		uint8_t *p = e->buf + (dev - EDU_DMA_BASE);

		r = from_dev ? pci_dma_write(&e->pci, bus, p, e->dma_cnt)
			     : pci_dma_read(&e->pci, bus, p, e->dma_cnt);
		if (r < 0)
			dma_failed(e, "to an address the bus (or IOMMU) refused");
	}
	e->dma_cmd &= ~(uint64_t)DMA_START;
	if (e->dma_cmd & DMA_IRQ)
		raise_irq(e, IRQ_DMA);
}

static void bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct edu *e = opaque;
	uint64_t v = ~0ull;

	if ((off < 0x80 && size != 4) || (off >= 0x80 && size != 4 && size != 8)) {
		io_data_put(data, size, v);
		return;
	}
	pthread_mutex_lock(&e->lock);
	switch (off) {
	case 0x00:
		v = EDU_ID;
		break;
	case 0x04:
		v = e->alive;
		break;
	case 0x08:
		v = e->fact;
		break;
	case 0x20:
		v = e->status;
		break;
	case 0x24:
		v = e->irq_status;
		break;
	case 0x80:
		v = e->dma_src;
		break;
	case 0x88:
		v = e->dma_dst;
		break;
	case 0x90:
		v = e->dma_cnt;
		break;
	case 0x98:
		v = e->dma_cmd;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&e->lock);
	io_data_put(data, size, v);
}

static void set_dma_reg(uint64_t *reg, uint64_t off, uint64_t v, unsigned size)
{
	if (size == 8)
		*reg = v;
	else if (off & 4)
		*reg = (*reg & 0xffffffffull) | v << 32;
	else
		*reg = (*reg & ~0xffffffffull) | (v & 0xffffffffull);
}

static void bar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct edu *e = opaque;
	uint64_t v = io_data_get(data, size);

	if ((off < 0x80 && size != 4) || (off >= 0x80 && size != 4 && size != 8))
		return;
	pthread_mutex_lock(&e->lock);
	switch (off) {
	case 0x04:
		e->alive = ~(uint32_t)v;
		break;
	case 0x08:
		if (e->status & STATUS_COMPUTING)
			break;
		e->fact = factorial((uint32_t)v);
		if (e->status & STATUS_IRQFACT)
			raise_irq(e, IRQ_FACT);
		break;
	case 0x20: /* only the interrupt-enable bit is writable */
		e->status = (e->status & ~STATUS_IRQFACT) | ((uint32_t)v & STATUS_IRQFACT);
		break;
	case 0x60:
		raise_irq(e, (uint32_t)v);
		break;
	case 0x64:
		lower_irq(e, (uint32_t)v);
		break;
	case 0x80:
	case 0x84:
		set_dma_reg(&e->dma_src, off, v, size);
		break;
	case 0x88:
	case 0x8c:
		set_dma_reg(&e->dma_dst, off, v, size);
		break;
	case 0x90:
	case 0x94:
		set_dma_reg(&e->dma_cnt, off, v, size);
		break;
	case 0x98:
		if (e->dma_cmd & DMA_START)
			break;
		e->dma_cmd = v & (DMA_START | DMA_FROM_DEV | DMA_IRQ);
		if (e->dma_cmd & DMA_START)
			run_dma(e);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&e->lock);
}

static const struct io_ops edu_bar_ops = {bar_read, bar_write};

static void resignal(void *opaque)
{
	struct edu *e = opaque;

	pthread_mutex_lock(&e->lock);
	edu_signal(e, false);
	pthread_mutex_unlock(&e->lock);
}

/* MSI enable flipped: a pending interrupt moves between INTA and MSI.
 * This runs under the bus lock, which driving INTA takes: later, on the
 * main thread. */
static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct edu *e = d->opaque;

	if (off > e->msi_cap + 3 || off + size <= e->msi_cap + 2)
		return;
	if (e->host->loop)
		evloop_call(e->host->loop, resignal, e);
}

static void edu_reset(void *opaque)
{
	struct edu *e = opaque;

	pthread_mutex_lock(&e->lock);
	e->alive = e->fact = e->status = e->irq_status = 0;
	e->dma_src = e->dma_dst = e->dma_cnt = e->dma_cmd = 0;
	memset(e->buf, 0, sizeof(e->buf));
	pthread_mutex_unlock(&e->lock);
}

struct pci_dev *edu_pci(struct edu *e)
{
	return &e->pci;
}

struct edu *edu_new(struct dev_host *host, struct pci_bus *bus, int devfn)
{
	struct edu *e;
	unsigned c;

	if (devfn < 0)
		devfn = pci_bus_free_slot(bus);
	if (devfn < 0 || devfn > 0xff)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->host = host;
	pthread_mutex_init(&e->lock, NULL);
	pci_dev_init(&e->pci, "edu", 0x1234, 0x11e8, 0x00ff00, 0x10);
	e->pci.opaque = e;
	e->pci.cfg_written = cfg_written;
	e->pci.cfg[0x3d] = 1; /* INTA */
	pci_dev_set_bar(&e->pci, 0, EDU_BAR_SIZE, false, &edu_bar_ops, e);
	c = pci_msi_cap_add(&e->pci);
	e->msi_cap = c;
	if (!c || pci_bus_add(bus, &e->pci, (uint8_t)devfn) < 0) {
		pthread_mutex_destroy(&e->lock);
		free(e);
		return NULL;
	}
	dev_on_reset(host, edu_reset, e);
	return e;
}

void edu_free(struct edu *e)
{
	if (!e)
		return;
	pci_bus_remove(&e->pci);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* ------------------------------------------------------------ snapshots */

#define EDU_STATE_VERSION 1

void edu_save(struct edu *e, struct state_writer *w, const char *name)
{
	state_begin(w, name, EDU_STATE_VERSION);
	pci_dev_save(&e->pci, w);
	pthread_mutex_lock(&e->lock);
	state_put_u32(w, "alive", e->alive);
	state_put_u32(w, "fact", e->fact);
	state_put_u32(w, "status", e->status);
	state_put_u32(w, "irq-status", e->irq_status);
	state_put_u64(w, "dma-src", e->dma_src);
	state_put_u64(w, "dma-dst", e->dma_dst);
	state_put_u64(w, "dma-cnt", e->dma_cnt);
	state_put_u64(w, "dma-cmd", e->dma_cmd);
	state_put_bytes(w, "dma-buf", e->buf, sizeof(e->buf));
	pthread_mutex_unlock(&e->lock);
	state_end(w);
}

/* The factorial and DMA run to completion inside the register write, so
 * a saved device is never computing and never has a DMA started. */
int edu_load(struct edu *e, const struct state_reader *r, const char *name, char *err,
	     size_t errlen)
{
	uint32_t alive, fact, status, irq;
	uint64_t src, dst, cnt, cmd;
	uint8_t buf[EDU_DMA_SIZE];
	struct state_node n;

	if (state_node_open(&n, r, name, EDU_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "alive", &alive) < 0 || state_get_u32(&n, "fact", &fact) < 0 ||
	    state_get_u32(&n, "status", &status) < 0 || state_get_u32(&n, "irq-status", &irq) < 0 ||
	    state_get_u64(&n, "dma-src", &src) < 0 || state_get_u64(&n, "dma-dst", &dst) < 0 ||
	    state_get_u64(&n, "dma-cnt", &cnt) < 0 || state_get_u64(&n, "dma-cmd", &cmd) < 0)
		return -1;
	if (status & ~STATUS_IRQFACT)
		return state_node_fail(&n, "status %#x: only the interrupt enable is kept", status);
	if (cmd & ~(uint64_t)(DMA_FROM_DEV | DMA_IRQ))
		return state_node_fail(&n, "dma-cmd %#llx: a DMA never stays started",
				       (unsigned long long)cmd);
	/* the configuration space (and INTA) without the device lock: the
	 * bus lock comes first */
	if (state_get_bytes(&n, "dma-buf", buf, sizeof(buf)) < 0 || pci_dev_load(&e->pci, &n) < 0 ||
	    state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&e->lock);
	memcpy(e->buf, buf, sizeof(buf));
	e->alive = alive;
	e->fact = fact;
	e->status = status;
	e->irq_status = irq;
	e->dma_src = src;
	e->dma_dst = dst;
	e->dma_cnt = cnt;
	e->dma_cmd = cmd;
	pthread_mutex_unlock(&e->lock);
	return 0;
}
