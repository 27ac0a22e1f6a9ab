/* pc_testdev.c — QEMU's pc-testdev (hw/misc/pc-testdev.c), the ISA device
 * kvm-unit-tests drive: at port 0xe0 (and byte-wide at 0xe8) a 32-bit
 * scratch register, read back as written (the emulator test's string I/O);
 * at 0xe4 a write of a guest-physical address makes KVM fault that page in
 * again (eventinj's "flush page": unmapping and remapping the host page
 * drops KVM's mapping through the MMU notifier); 24 ports at 0x2000 drive
 * interrupt line N to the written value (ioapic, eventinj); and a 64 KiB
 * scratch MMIO area at 0xff000000. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/testdev/pc_testdev.h"
#include "state/state.h"

#define TESTDEV_STATE_VERSION 1

#define TESTDEV_IOPORT 0xe0
#define TESTDEV_FLUSH 0xe4
#define TESTDEV_IOPORT_BYTE 0xe8
#define TESTDEV_IRQ 0x2000
#define TESTDEV_IRQ_LINES 24
#define TESTDEV_IOMEM 0xff000000u
#define TESTDEV_IOMEM_LEN 0x10000

struct pc_testdev {
	struct dev_host *host;
	struct pci_bus *pci; /* the IRQ line ports sit in its I/O window */
	pthread_mutex_t lock;
	uint32_t ioport_data;
	uint8_t iomem[TESTDEV_IOMEM_LEN];
};

static void ioport_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pc_testdev *t = opaque;

	pthread_mutex_lock(&t->lock);
	io_data_put(data, size, t->ioport_data >> ((off & 3) * 8));
	pthread_mutex_unlock(&t->lock);
}

static void ioport_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pc_testdev *t = opaque;
	unsigned shift = (off & 3) * 8;
	uint32_t mask = size >= 4 ? ~0u : ((1u << size * 8) - 1);

	pthread_mutex_lock(&t->lock);
	t->ioport_data = (t->ioport_data & ~(mask << shift)) |
			 (uint32_t)(io_data_get(data, size) & mask) << shift;
	pthread_mutex_unlock(&t->lock);
}

static void zero_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, 0);
}

static void flush_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pc_testdev *t = opaque;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t gpa = io_data_get(data, size) & ~(uint64_t)(page - 1);
	void *p = guest_mem_ptr(t->host->mem, gpa, page);

	if (!p) /* not RAM: nothing mapped to flush */
		return;
	mprotect(p, page, PROT_NONE);
	mprotect(p, page, PROT_READ | PROT_WRITE);
}

static void irq_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pc_testdev *t = opaque;

	t->host->irq.set_level(t->host->irq.opaque, off, io_data_get(data, size) != 0);
}

static void iomem_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pc_testdev *t = opaque;

	pthread_mutex_lock(&t->lock);
	if (off + size <= TESTDEV_IOMEM_LEN)
		memcpy(data, t->iomem + off, size);
	else
		memset(data, 0, size);
	pthread_mutex_unlock(&t->lock);
}

static void iomem_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pc_testdev *t = opaque;

	pthread_mutex_lock(&t->lock);
	if (off + size <= TESTDEV_IOMEM_LEN)
		memcpy(t->iomem + off, data, size);
	pthread_mutex_unlock(&t->lock);
}

static const struct io_ops ioport_ops = {ioport_read, ioport_write};
static const struct io_ops flush_ops = {zero_read, flush_write};
static const struct io_ops irq_ops = {zero_read, irq_write};
static const struct io_ops iomem_ops = {iomem_read, iomem_write};

struct pc_testdev *pc_testdev_new(struct dev_host *host, struct pci_bus *pci)
{
	struct pc_testdev *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->host = host;
	t->pci = pci;
	pthread_mutex_init(&t->lock, NULL);
	if (iobus_register(host->pio, TESTDEV_IOPORT, 4, &ioport_ops, t, "pc-testdev-ioport") < 0 ||
	    iobus_register(host->pio, TESTDEV_FLUSH, 4, &flush_ops, t, "pc-testdev-flush-page") <
		    0 ||
	    iobus_register(host->pio, TESTDEV_IOPORT_BYTE, 4, &ioport_ops, t,
			   "pc-testdev-ioport-byte") < 0 ||
	    pci_bus_add_isa_io(pci, TESTDEV_IRQ, TESTDEV_IRQ_LINES, &irq_ops, t) < 0 ||
	    iobus_register(host->mmio, TESTDEV_IOMEM, TESTDEV_IOMEM_LEN, &iomem_ops, t,
			   "pc-testdev-iomem") < 0) {
		pc_testdev_free(t);
		return NULL;
	}
	return t;
}

/* Snapshot: the data port and the test memory (the IRQ lines it drives
 * are the interrupt controllers' state). */
void pc_testdev_save(struct pc_testdev *t, struct state_writer *w)
{
	pthread_mutex_lock(&t->lock);
	state_begin(w, "pc-testdev@e0", TESTDEV_STATE_VERSION);
	state_put_u32(w, "ioport-data", t->ioport_data);
	state_put_bytes(w, "iomem", t->iomem, sizeof(t->iomem));
	state_end(w);
	pthread_mutex_unlock(&t->lock);
}

int pc_testdev_load(struct pc_testdev *t, const struct state_reader *r, char *err, size_t errlen)
{
	uint8_t iomem[TESTDEV_IOMEM_LEN];
	struct state_node n;
	uint32_t data;

	if (state_node_open(&n, r, "pc-testdev@e0", TESTDEV_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "ioport-data", &data) < 0 ||
	    state_get_bytes(&n, "iomem", iomem, sizeof(iomem)) < 0 || state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&t->lock);
	t->ioport_data = data;
	memcpy(t->iomem, iomem, sizeof(iomem));
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void pc_testdev_free(struct pc_testdev *t)
{
	if (!t)
		return;
	iobus_unregister(t->host->pio, TESTDEV_IOPORT);
	iobus_unregister(t->host->pio, TESTDEV_FLUSH);
	iobus_unregister(t->host->pio, TESTDEV_IOPORT_BYTE);
	pci_bus_del_isa_io(t->pci, TESTDEV_IRQ);
	iobus_unregister(t->host->mmio, TESTDEV_IOMEM);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
