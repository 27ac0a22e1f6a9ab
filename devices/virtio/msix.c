/* msix.c — MSI-X for PCI functions: the capability, the vector table and
 * the pending-bit array (PCI 3.0, section 6.8.2).
 *
 * With the host's fast path every vector owns an eventfd bound (irqfd) to
 * an MSI route, so an I/O thread raises it with one write() and KVM
 * delivers it without the VMM's help. The route follows the table entry
 * lazily: a guest write marks it stale and the next delivery re-installs
 * it, so the many writes of a table set-up cost one routing update. The
 * eventfds and routes themselves come when the guest first enables MSI-X:
 * a guest that never drives the function (firmware, a payload that
 * ignores the default NIC) costs no routing updates (each one several ms
 * on nested hosts). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

#define PCI_CAP_ID_MSIX 0x11
#define MSIX_CAP_LEN 12
#define MSIX_CTRL_ENABLE 0x8000
#define MSIX_CTRL_MASKALL 0x4000
#define MSIX_ENTRY_SIZE 16
#define MSIX_VEC_MASKED 1u

struct msix_entry {
	uint32_t addr_lo, addr_hi, data, ctrl;
};

struct msix {
	pthread_mutex_t lock;
	struct dev_host *host;
	struct pci_dev *pci;
	unsigned cap, nvec;
	uint32_t table_off, pba_off;
	bool enabled, masked; /* the control word's enable and function mask */
	uint64_t pending;     /* the PBA */
	struct msix_entry e[MSIX_MAX_VECTORS];
	int fd[MSIX_MAX_VECTORS];     /* irqfd, or -1: deliver through irq.msi */
	int route[MSIX_MAX_VECTORS];  /* its MSI route */
	bool bound;		      /* bind_irqfd ran for every vector */
	bool stale[MSIX_MAX_VECTORS]; /* route differs from the entry */
};

/* Give vector i an eventfd bound to its own MSI route, if the host can. */
static void bind_irqfd(struct msix *mx, unsigned i)
{
	const struct dev_fast_ops *f = &mx->host->fast;
	int fd, route;

	mx->fd[i] = mx->route[i] = -1;
	if (!f->msi_route_add || !f->irqfd)
		return;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return;
	route = f->msi_route_add(f->opaque, 0, 0);
	if (route >= 0 && f->irqfd(f->opaque, fd, route, true) == 0) {
		mx->fd[i] = fd;
		mx->route[i] = route;
		return;
	}
	if (route >= 0 && f->msi_route_del)
		f->msi_route_del(f->opaque, route);
	close(fd);
}

struct msix *msix_new(struct dev_host *host, struct pci_dev *d, unsigned nvec, unsigned bar,
		      uint32_t table_off, uint32_t pba_off)
{
	struct msix *mx;
	unsigned cap;

	if (nvec == 0 || nvec > MSIX_MAX_VECTORS)
		return NULL;
	cap = pci_dev_add_cap(d, PCI_CAP_ID_MSIX, MSIX_CAP_LEN);
	mx = cap ? calloc(1, sizeof(*mx)) : NULL;
	if (!mx)
		return NULL;
	pthread_mutex_init(&mx->lock, NULL);
	mx->host = host;
	mx->pci = d;
	mx->cap = cap;
	mx->nvec = nvec;
	mx->table_off = table_off;
	mx->pba_off = pba_off;
	io_data_put(&d->cfg[cap + 2], 2, nvec - 1);
	io_data_put(&d->cfg[cap + 4], 4, table_off | bar);
	io_data_put(&d->cfg[cap + 8], 4, pba_off | bar);
	d->wmask[cap + 3] = (MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL) >> 8;
	for (unsigned i = 0; i < nvec; i++) {
		mx->e[i].ctrl = MSIX_VEC_MASKED;
		mx->fd[i] = mx->route[i] = -1;
	}
	return mx;
}

void msix_free(struct msix *mx)
{
	const struct dev_fast_ops *f;

	if (!mx)
		return;
	f = &mx->host->fast;
	for (unsigned i = 0; i < mx->nvec; i++) {
		if (mx->fd[i] < 0)
			continue;
		f->irqfd(f->opaque, mx->fd[i], mx->route[i], false);
		if (f->msi_route_del)
			f->msi_route_del(f->opaque, mx->route[i]);
		close(mx->fd[i]);
	}
	pthread_mutex_destroy(&mx->lock);
	free(mx);
}

unsigned msix_vectors(const struct msix *mx)
{
	return mx->nvec;
}

/* Send vector i now (lock held, vector unmasked). */
static void fire(struct msix *mx, unsigned i)
{
	const struct msix_entry *e = &mx->e[i];
	uint64_t addr = (uint64_t)e->addr_hi << 32 | e->addr_lo, one = 1;
	const struct dev_fast_ops *f = &mx->host->fast;

	if (mx->fd[i] >= 0) {
		if (mx->stale[i] && f->msi_route_set(f->opaque, mx->route[i], addr, e->data) == 0)
			mx->stale[i] = false;
		if (!mx->stale[i] && write(mx->fd[i], &one, sizeof(one)) == sizeof(one))
			return;
	}
	if (mx->host->irq.msi)
		mx->host->irq.msi(mx->host->irq.opaque, addr, e->data);
}

static bool vector_masked(const struct msix *mx, unsigned i)
{
	return mx->masked || (mx->e[i].ctrl & MSIX_VEC_MASKED);
}

/* Send what became deliverable (lock held). */
static void flush_pending(struct msix *mx)
{
	if (!mx->enabled)
		return;
	for (unsigned i = 0; i < mx->nvec; i++)
		if ((mx->pending >> i & 1) && !vector_masked(mx, i)) {
			mx->pending &= ~(1ull << i);
			fire(mx, i);
		}
}

void msix_notify(struct msix *mx, unsigned vector)
{
	pthread_mutex_lock(&mx->lock);
	if (mx->enabled && vector < mx->nvec) {
		if (vector_masked(mx, vector))
			mx->pending |= 1ull << vector;
		else
			fire(mx, vector);
	}
	pthread_mutex_unlock(&mx->lock);
}

bool msix_enabled(struct msix *mx)
{
	bool on;

	pthread_mutex_lock(&mx->lock);
	on = mx->enabled;
	pthread_mutex_unlock(&mx->lock);
	return on;
}

void msix_cfg_written(struct msix *mx, unsigned off, unsigned size)
{
	uint16_t ctrl;

	if (off > mx->cap + 3 || off + size <= mx->cap + 2)
		return;
	ctrl = (uint16_t)io_data_get(&mx->pci->cfg[mx->cap + 2], 2);
	pthread_mutex_lock(&mx->lock);
	mx->enabled = ctrl & MSIX_CTRL_ENABLE;
	mx->masked = ctrl & MSIX_CTRL_MASKALL;
	if (mx->enabled && !mx->bound) {
		for (unsigned i = 0; i < mx->nvec; i++) {
			bind_irqfd(mx, i);
			mx->stale[i] = true; /* the route starts as 0/0 */
		}
		mx->bound = true;
	}
	flush_pending(mx);
	pthread_mutex_unlock(&mx->lock);
}

void msix_reset(struct msix *mx)
{
	pthread_mutex_lock(&mx->lock);
	mx->enabled = mx->masked = false;
	mx->pending = 0;
	for (unsigned i = 0; i < mx->nvec; i++) {
		mx->e[i] = (struct msix_entry){.ctrl = MSIX_VEC_MASKED};
		mx->stale[i] = true;
	}
	/* the vCPUs are stopped during a machine reset */
	mx->pci->cfg[mx->cap + 3] &= (uint8_t) ~((MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL) >> 8);
	pthread_mutex_unlock(&mx->lock);
}

/* ------------------------------------------------------------ the BAR */

static void msix_bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct msix *mx = opaque;
	uint64_t v = 0;

	pthread_mutex_lock(&mx->lock);
	if (off >= mx->table_off && off + size <= mx->table_off + mx->nvec * MSIX_ENTRY_SIZE) {
		const uint8_t *t = (const uint8_t *)mx->e;

		v = io_data_get(t + (off - mx->table_off), size);
	} else if (off >= mx->pba_off && off + size <= mx->pba_off + 8) {
		v = mx->pending >> (8 * (off - mx->pba_off));
	}
	pthread_mutex_unlock(&mx->lock);
	io_data_put(data, size, v);
}

static void msix_bar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct msix *mx = opaque;
	unsigned i;

	/* the PBA is read-only; only whole dwords or qwords of the table */
	if (off < mx->table_off || off + size > mx->table_off + mx->nvec * MSIX_ENTRY_SIZE ||
	    (size != 4 && size != 8) || (off & (size - 1)))
		return;
	off -= mx->table_off;
	i = (unsigned)(off / MSIX_ENTRY_SIZE);
	pthread_mutex_lock(&mx->lock);
	io_data_put((uint8_t *)mx->e + off, size, io_data_get(data, size));
	mx->e[i].ctrl &= MSIX_VEC_MASKED; /* the other bits are reserved */
	if (off % MSIX_ENTRY_SIZE < 12)
		mx->stale[i] = true;
	flush_pending(mx);
	pthread_mutex_unlock(&mx->lock);
}

const struct io_ops msix_bar_ops = {msix_bar_read, msix_bar_write};

size_t msix_info(struct msix *mx, char *buf, size_t len)
{
	unsigned unmasked = 0;
	int n;

	pthread_mutex_lock(&mx->lock);
	for (unsigned i = 0; i < mx->nvec; i++)
		unmasked += !(mx->e[i].ctrl & MSIX_VEC_MASKED);
	n = snprintf(buf, len, "MSI-X: %s%s, %u vectors (%u unmasked, pending %#llx)%s",
		     mx->enabled ? "enabled" : "disabled", mx->masked ? ", function masked" : "",
		     mx->nvec, unmasked, (unsigned long long)mx->pending,
		     mx->fd[0] >= 0 ? ", irqfd" : "");
	pthread_mutex_unlock(&mx->lock);
	return n > 0 ? (size_t)n : 0;
}

/* ------------------------------------------------------------ snapshots */

void msix_save(struct msix *mx, struct state_writer *w)
{
	uint8_t table[MSIX_MAX_VECTORS * MSIX_ENTRY_SIZE];
	uint64_t pending;

	pthread_mutex_lock(&mx->lock);
	for (unsigned i = 0; i < mx->nvec; i++) {
		io_data_put(&table[i * MSIX_ENTRY_SIZE], 4, mx->e[i].addr_lo);
		io_data_put(&table[i * MSIX_ENTRY_SIZE + 4], 4, mx->e[i].addr_hi);
		io_data_put(&table[i * MSIX_ENTRY_SIZE + 8], 4, mx->e[i].data);
		io_data_put(&table[i * MSIX_ENTRY_SIZE + 12], 4, mx->e[i].ctrl);
	}
	pending = mx->pending;
	pthread_mutex_unlock(&mx->lock);
	state_put_bytes(w, "msix-table", table, mx->nvec * MSIX_ENTRY_SIZE);
	state_put_u64(w, "msix-pba", pending);
}

/* After the configuration space was loaded: the control word there says
 * whether MSI-X is on, as a guest write would have. */
int msix_load(struct msix *mx, struct state_node *n)
{
	uint8_t table[MSIX_MAX_VECTORS * MSIX_ENTRY_SIZE];
	uint64_t pending;
	uint16_t ctrl;

	if (state_get_bytes(n, "msix-table", table, mx->nvec * MSIX_ENTRY_SIZE) < 0 ||
	    state_get_u64(n, "msix-pba", &pending) < 0)
		return -1;
	if (mx->nvec < 64 && pending >> mx->nvec)
		return state_node_fail(n, "msix-pba %#llx has bits past the %u vectors",
				       (unsigned long long)pending, mx->nvec);
	ctrl = (uint16_t)io_data_get(&mx->pci->cfg[mx->cap + 2], 2);
	pthread_mutex_lock(&mx->lock);
	for (unsigned i = 0; i < mx->nvec; i++) {
		const uint8_t *t = &table[i * MSIX_ENTRY_SIZE];

		mx->e[i] = (struct msix_entry){
			(uint32_t)io_data_get(t, 4), (uint32_t)io_data_get(t + 4, 4),
			(uint32_t)io_data_get(t + 8, 4), (uint32_t)io_data_get(t + 12, 4)};
		mx->stale[i] = true; /* routes follow the loaded entries */
	}
	mx->pending = pending;
	mx->enabled = ctrl & MSIX_CTRL_ENABLE;
	mx->masked = ctrl & MSIX_CTRL_MASKALL;
	if (mx->enabled && !mx->bound) {
		for (unsigned i = 0; i < mx->nvec; i++)
			bind_irqfd(mx, i);
		mx->bound = true;
	}
	flush_pending(mx);
	pthread_mutex_unlock(&mx->lock);
	return 0;
}
