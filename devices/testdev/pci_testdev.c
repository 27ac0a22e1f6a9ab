/* pci_testdev.c — QEMU's pci-testdev (1b36:0005, docs/specs/pci-testdev.rst),
 * which kvm-unit-tests' vmexit test times I/O exits with: BAR 0 (memory)
 * and BAR 1 (port I/O) each start with a header. The guest writes a test
 * number to its first byte; the header then gives the access width, the
 * BAR offset and data to write, a count of writes the device saw and the
 * test's name. Tests 0-2 of each BAR: a write that exits to the VMM
 * ("mmio-no-eventfd" or "portio-...", counted), one that KVM turns into
 * an eventfd signal without an exit ("...-wildcard-eventfd"), and the
 * same only for the given data ("...-datamatch-eventfd"). Any other number ends the list (width 0).
 * Only one test is active at a time, as in QEMU. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/testdev/pci_testdev.h"
#include "state/state.h"

#define PT_VENDOR 0x1b36
#define PT_DEVICE 0x0005
#define PT_MEM_BAR 0
#define PT_IO_BAR 1
#define PT_MEM_SIZE 4096
#define PT_IO_SIZE 256
#define PT_TARGET 0x80 /* where each test's writes go: past every header */
#define PT_WIDTH 4
#define PT_NAME_OFF 16		      /* test, width, pad[2], offset, data, count */
#define PT_HDR_LEN (PT_NAME_OFF + 32) /* the longest name and its NUL fit */
#define PT_TESTS 3
#define PT_STATE_VERSION 1
#define PT_NO_BAR 0xff /* "bar" in a snapshot: no test active */

enum pt_kind { PT_NO_EVENTFD, PT_WILDCARD_EVENTFD, PT_DATAMATCH_EVENTFD };

static const char *const pt_names[2][PT_TESTS] = {
	{"mmio-no-eventfd", "mmio-wildcard-eventfd", "mmio-datamatch-eventfd"},
	{"portio-no-eventfd", "portio-wildcard-eventfd", "portio-datamatch-eventfd"},
};

struct pci_testdev {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	int bar;	    /* BAR of the active test, or -1 */
	int test;	    /* its number (enum pt_kind) */
	uint32_t count;	    /* writes to the target that reached the device */
	int efd;	    /* what KVM signals for the eventfd tests */
	uint64_t ioev_addr; /* where the ioeventfd is registered, or UINT64_MAX */
	bool ioev_pio;	    /* and how: KVM drops only an exact match */
	int64_t ioev_datamatch;
};

/* The data a test asks for: a datamatch test's writes of anything else
 * still exit (and are not counted). */
static uint32_t pt_data(int test)
{
	return test == PT_DATAMATCH_EVENTFD ? 0xfa : 0xce;
}

/* Register or drop the active eventfd test's ioeventfd (lock held). */
static void pt_ioeventfd(struct pci_testdev *t, bool assign)
{
	const struct dev_fast_ops *f = &t->host->fast;
	uint64_t base;

	if (!f->ioeventfd_match)
		return; /* no KVM: the writes exit and are absorbed (pt_write) */
	if (t->ioev_addr != UINT64_MAX) {
		f->ioeventfd_match(f->opaque, t->ioev_addr, PT_WIDTH, t->ioev_pio,
				   t->ioev_datamatch, t->efd, false);
		t->ioev_addr = UINT64_MAX;
	}
	if (!assign || t->bar < 0 || t->test == PT_NO_EVENTFD)
		return;
	base = t->pci.bar[t->bar].mapped;
	if (base == PCI_BAR_UNMAPPED)
		return;
	t->ioev_pio = t->bar == PT_IO_BAR;
	t->ioev_datamatch = t->test == PT_DATAMATCH_EVENTFD ? (int64_t)pt_data(t->test) : -1;
	if (f->ioeventfd_match(f->opaque, base + PT_TARGET, PT_WIDTH, t->ioev_pio,
			       t->ioev_datamatch, t->efd, true) == 0)
		t->ioev_addr = base + PT_TARGET;
}

static void pt_select(struct pci_testdev *t, int bar, uint64_t test)
{
	uint64_t drained;

	pt_ioeventfd(t, false);
	t->bar = test < PT_TESTS ? bar : -1;
	t->test = (int)test;
	t->count = 0;
	/* clear what the last test signalled; EAGAIN when it was nothing */
	ssize_t n = read(t->efd, &drained, sizeof(drained));
	(void)n;
	pt_ioeventfd(t, true);
}

/* The active test's header as BAR bar shows it (all zero for another BAR). */
static void pt_header(const struct pci_testdev *t, int bar, uint8_t h[PT_HDR_LEN])
{
	const char *name;

	memset(h, 0, PT_HDR_LEN);
	if (t->bar != bar)
		return;
	h[0] = (uint8_t)t->test;
	h[1] = PT_WIDTH;
	io_data_put(h + 4, 4, PT_TARGET);
	io_data_put(h + 8, 4, pt_data(t->test));
	io_data_put(h + 12, 4, t->count);
	name = pt_names[bar][t->test];
	memcpy(h + PT_NAME_OFF, name, strlen(name));
}

static void pt_read(struct pci_testdev *t, int bar, uint64_t off, void *data, unsigned size)
{
	uint8_t h[PT_HDR_LEN];
	uint64_t v = 0;

	pthread_mutex_lock(&t->lock);
	pt_header(t, bar, h);
	pthread_mutex_unlock(&t->lock);
	for (unsigned i = 0; i < size && i < 8; i++)
		if (off + i < PT_HDR_LEN)
			v |= (uint64_t)h[off + i] << (8 * i);
	io_data_put(data, size, v);
}

static void pt_write(struct pci_testdev *t, int bar, uint64_t off, const void *data, unsigned size)
{
	uint64_t v = io_data_get(data, size);

	pthread_mutex_lock(&t->lock);
	if (off == 0)
		pt_select(t, bar, v & 0xff);
	else if (off == PT_TARGET && t->bar == bar && t->test == PT_NO_EVENTFD)
		t->count++;
	/* An eventfd test's write that exits (no KVM, or other data than a
	 * datamatch asks) is absorbed, as QEMU's userspace dispatch does. */
	pthread_mutex_unlock(&t->lock);
}

static void mem_read(void *o, uint64_t off, void *data, unsigned size)
{
	pt_read(o, PT_MEM_BAR, off, data, size);
}

static void mem_write(void *o, uint64_t off, const void *data, unsigned size)
{
	pt_write(o, PT_MEM_BAR, off, data, size);
}

static void io_read(void *o, uint64_t off, void *data, unsigned size)
{
	pt_read(o, PT_IO_BAR, off, data, size);
}

static void io_write(void *o, uint64_t off, const void *data, unsigned size)
{
	pt_write(o, PT_IO_BAR, off, data, size);
}

static const struct io_ops mem_ops = {mem_read, mem_write};
static const struct io_ops io_ops = {io_read, io_write};

/* The guest moved or disabled a BAR: the ioeventfd follows it. */
static void pt_cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct pci_testdev *t = d->opaque;

	pthread_mutex_lock(&t->lock);
	if (t->bar >= 0 && t->test != PT_NO_EVENTFD &&
	    t->ioev_addr != t->pci.bar[t->bar].mapped + PT_TARGET)
		pt_ioeventfd(t, true);
	pthread_mutex_unlock(&t->lock);
}

static void pt_reset(void *opaque)
{
	struct pci_testdev *t = opaque;

	pthread_mutex_lock(&t->lock);
	pt_select(t, -1, PT_TESTS);
	pthread_mutex_unlock(&t->lock);
}

struct pci_testdev *pci_testdev_new(struct dev_host *host, struct pci_bus *bus, int devfn)
{
	struct pci_testdev *t;

	if (devfn < 0)
		devfn = pci_bus_free_slot(bus);
	if (devfn < 0 || devfn > 0xff || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->host = host;
	t->bar = -1;
	t->ioev_addr = UINT64_MAX;
	t->ioev_datamatch = -1;
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&t->lock, NULL);
	pci_dev_init(&t->pci, "pci-testdev", PT_VENDOR, PT_DEVICE, 0x00ff00, 0);
	t->pci.opaque = t;
	t->pci.cfg_written = pt_cfg_written;
	pci_dev_set_bar(&t->pci, PT_MEM_BAR, PT_MEM_SIZE, false, &mem_ops, t);
	pci_dev_set_bar(&t->pci, PT_IO_BAR, PT_IO_SIZE, true, &io_ops, t);
	if (t->efd < 0 || pci_bus_add(bus, &t->pci, (uint8_t)devfn) < 0) {
		if (t->efd >= 0)
			close(t->efd);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return NULL;
	}
	dev_on_reset(host, pt_reset, t);
	return t;
}

void pci_testdev_free(struct pci_testdev *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	pt_select(t, -1, PT_TESTS); /* drops the ioeventfd */
	pthread_mutex_unlock(&t->lock);
	pci_bus_remove(&t->pci);
	close(t->efd);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* ----------------------------------------------------------- snapshots */

/* The configuration space, the active test (BAR and number, or no BAR
 * and the number the guest last wrote) and its count. The ioeventfd is
 * this process's: the loaded device registers it again where the loaded
 * BAR is mapped. */
void pci_testdev_save(struct pci_testdev *t, struct state_writer *w, const char *name)
{
	state_begin(w, name, PT_STATE_VERSION);
	pci_dev_save(&t->pci, w);
	pthread_mutex_lock(&t->lock);
	state_put_u8(w, "bar", t->bar < 0 ? PT_NO_BAR : (uint8_t)t->bar);
	state_put_u8(w, "test", (uint8_t)t->test);
	state_put_u32(w, "count", t->count);
	pthread_mutex_unlock(&t->lock);
	state_end(w);
}

int pci_testdev_load(struct pci_testdev *t, const struct state_reader *r, const char *name,
		     char *err, size_t errlen)
{
	struct state_node n;
	uint8_t bar, test;
	uint32_t count;

	if (state_node_open(&n, r, name, PT_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u8(&n, "bar", &bar) < 0 || state_get_u8(&n, "test", &test) < 0 ||
	    state_get_u32(&n, "count", &count) < 0)
		return -1;
	if (bar != PT_NO_BAR && bar != PT_MEM_BAR && bar != PT_IO_BAR)
		return state_node_fail(&n, "bar %u is not a test BAR", bar);
	if ((bar == PT_NO_BAR) != (test >= PT_TESTS))
		return state_node_fail(&n, "test %u %s a BAR", test,
				       bar == PT_NO_BAR ? "is a test without" : "is no test on");
	if (count && test != PT_NO_EVENTFD)
		return state_node_fail(&n, "count %u: only test %d counts", count, PT_NO_EVENTFD);
	/* the configuration space maps the BARs first, without the lock: the
	 * bus lock comes first */
	if (pci_dev_load(&t->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&t->lock);
	pt_select(t, bar == PT_NO_BAR ? -1 : bar, test);
	t->count = count;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

struct pci_dev *pci_testdev_pci(struct pci_testdev *t)
{
	return &t->pci;
}
