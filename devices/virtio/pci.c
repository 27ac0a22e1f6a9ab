/* pci.c — the virtio 1.x modern PCI transport (virtio spec 4.1).
 *
 * BAR 4 (16 KiB, memory) holds the common configuration, the ISR byte,
 * the device configuration and one doorbell per queue (4 bytes apart);
 * vendor capabilities point the driver at each. BAR 1 holds the MSI-X
 * table and PBA: vector 0 for configuration changes, 1.. for the queues
 * as the driver assigns them. Without MSI-X the device raises INTA and
 * reports the cause in the ISR byte.
 *
 * Each device has an I/O thread that drains its queues (pci_io.c); this
 * file registers the queues' doorbells as its ioeventfds wherever the
 * guest maps BAR 4.
 *
 * Locks: the transport lock (held while a queue drains, file I/O
 * included), then the INTx lock (the ISR byte and the line, so a guest's
 * interrupt handler reading the ISR never waits for a drain), then the
 * MSI-X lock or the PCI bus lock. cfg_written runs under the bus lock and
 * so never takes the transport or INTx lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/pci/pcie_root_port.h"
#include "devices/virtio/pci_internal.h"
#include "devices/virtio/virtio.h"

#define PCI_CAP_ID_VNDR 0x09
#define PCI_INTERRUPT_PIN 0x3d
#define MSIX_TABLE_OFF 0x000
#define MSIX_PBA_OFF 0x800
#define MSIX_BAR_SIZE 0x1000
/* The transport's own feature bits, offered to every driver. */
#define TRANSPORT_FEATURES                                                                         \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |                    \
	 (1ull << VIRTIO_RING_F_EVENT_IDX))

/* ----------------------------------------------------------- interrupts */

/* Lock held. */
void vpci_raise_irq(struct virtio_pci *vp, uint16_t vector, uint8_t isr_bit)
{
	if (msix_enabled(vp->msix)) {
		if (vector != VIRTIO_MSI_NO_VECTOR)
			msix_notify(vp->msix, vector);
		return;
	}
	pthread_mutex_lock(&vp->intx_lock);
	vp->isr |= isr_bit;
	pci_dev_set_irq(&vp->pci, true);
	pthread_mutex_unlock(&vp->intx_lock);
}

/* Reading the ISR acknowledges: the line drops. */
static uint8_t read_isr(struct virtio_pci *vp)
{
	uint8_t v;

	pthread_mutex_lock(&vp->intx_lock);
	v = vp->isr;
	vp->isr = 0;
	pci_dev_set_irq(&vp->pci, false);
	pthread_mutex_unlock(&vp->intx_lock);
	return v;
}

/* A malformed queue or request: the device stops until the driver resets
 * it, says why (once per device), and tells the driver (spec 2.1.2).
 * Lock held. */
void vpci_needs_reset(struct virtio_pci *vp, unsigned qi, const char *why)
{
	if (vp->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	vp->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	if (!vp->broken_logged)
		fprintf(stderr, "vmm: %s (00:%02x.%x) queue %u: %s; device needs reset\n", vp->name,
			vp->pci.devfn >> 3, vp->pci.devfn & 7, qi, why ? why : "malformed request");
	vp->broken_logged = true;
	vpci_raise_irq(vp, vp->msix_config, VIRTIO_PCI_ISR_CONFIG);
}

/* Follow BAR 4 with the doorbell ioeventfds (bus lock held: no vp->lock). */
void vpci_update_doorbells(struct virtio_pci *vp)
{
	const struct dev_fast_ops *f = &vp->host->fast;
	uint64_t base = vp->pci.bar[VIRTIO_PCI_CFG_BAR].mapped;

	if (!f->ioeventfd)
		return;
	pthread_mutex_lock(&vp->ioev_lock);
	for (unsigned i = 0; i < vp->ops->num_queues && base != vp->ioev_base; i++) {
		uint64_t off = VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT * i;

		if (vp->ioev_base != PCI_BAR_UNMAPPED)
			f->ioeventfd(f->opaque, vp->ioev_base + off, 2, vp->kick_fd[i], false);
		/* on failure the doorbell still reaches the BAR handler */
		if (base != PCI_BAR_UNMAPPED)
			f->ioeventfd(f->opaque, base + off, 2, vp->kick_fd[i], true);
	}
	vp->ioev_base = base;
	pthread_mutex_unlock(&vp->ioev_lock);
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct virtio_pci *vp = d->opaque;

	vpci_update_doorbells(vp);
	msix_cfg_written(vp->msix, off, size);
}

/* ------------------------------------------------------------ reset */

/* Lock held. */
void vpci_device_reset(struct virtio_pci *vp)
{
	vp->status = 0;
	vp->driver_features = 0;
	vp->dfselect = vp->gfselect = vp->queue_select = 0;
	vp->msix_config = VIRTIO_MSI_NO_VECTOR;
	/* broken_logged stays: a guest looping on reset must not flood stderr */
	for (unsigned i = 0; i < vp->ops->num_queues; i++)
		virtq_reset(&vp->q[i], vp->ops->queue_size);
	read_isr(vp);
	vp->completed = 0;
	if (vp->ops->reset)
		vp->ops->reset(vp->opaque);
	/* a device's reset waits for or drops the chains it kept (blk_reset
	 * reaps every request): none is in flight any more */
	vp->in_flight = 0;
}

static void machine_reset(void *opaque)
{
	struct virtio_pci *vp = opaque;

	pthread_mutex_lock(&vp->lock);
	vpci_device_reset(vp);
	msix_reset(vp->msix);
	pthread_mutex_unlock(&vp->lock);
}

/* --------------------------------------------------- common configuration */

static bool features_acceptable(const struct virtio_pci *vp)
{
	return !(vp->driver_features & ~vp->features) &&
	       (vp->driver_features >> VIRTIO_F_VERSION_1 & 1);
}

static bool negotiated(const struct virtio_pci *vp, unsigned bit)
{
	return vp->driver_features >> bit & 1;
}

/* Lock held. */
static void write_status(struct virtio_pci *vp, uint8_t val)
{
	uint8_t old = vp->status;

	if (val == 0) {
		vpci_device_reset(vp);
		return;
	}
	if ((val & VIRTIO_CONFIG_S_FEATURES_OK) && !(old & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !features_acceptable(vp))
		val &= (uint8_t)~VIRTIO_CONFIG_S_FEATURES_OK;
	/* bits only clear through a reset */
	vp->status = val | (old & VIRTIO_CONFIG_S_NEEDS_RESET);
	if ((val & VIRTIO_CONFIG_S_DRIVER_OK) && !(old & VIRTIO_CONFIG_S_DRIVER_OK))
		for (unsigned i = 0; i < vp->ops->num_queues; i++)
			if (vp->q[i].enabled) /* buffers made available before DRIVER_OK */
				virtio_pci_kick(vp, i);
}

static uint16_t checked_vector(const struct virtio_pci *vp, uint16_t v)
{
	/* a vector the table lacks reads back as NO_VECTOR: the driver's
	 * way of learning the mapping failed */
	return v < msix_vectors(vp->msix) ? v : VIRTIO_MSI_NO_VECTOR;
}

/* Lock held. */
static void enable_queue(struct virtio_pci *vp, struct virtq *q)
{
	if (q->enabled)
		return;
	q->enabled = true;
	if (virtq_start(q, vp->host->mem, negotiated(vp, VIRTIO_RING_F_EVENT_IDX),
			negotiated(vp, VIRTIO_RING_F_INDIRECT_DESC)) < 0)
		vpci_needs_reset(vp, (unsigned)(q - vp->q), q->broken);
}

static void common_snapshot(struct virtio_pci *vp, struct virtio_pci_common_cfg *c)
{
	const struct virtq *q =
		vp->queue_select < vp->ops->num_queues ? &vp->q[vp->queue_select] : NULL;

	memset(c, 0, sizeof(*c));
	c->device_feature_select = vp->dfselect;
	c->device_feature = vp->dfselect < 2 ? (uint32_t)(vp->features >> (32 * vp->dfselect)) : 0;
	c->guest_feature_select = vp->gfselect;
	c->guest_feature =
		vp->gfselect < 2 ? (uint32_t)(vp->driver_features >> (32 * vp->gfselect)) : 0;
	c->msix_config = vp->msix_config;
	c->num_queues = (uint16_t)vp->ops->num_queues;
	c->device_status = vp->status;
	c->config_generation = vp->generation;
	c->queue_select = vp->queue_select;
	if (!q)
		return; /* queue_size 0: no such queue */
	c->queue_size = q->size;
	c->queue_msix_vector = q->msix_vector;
	c->queue_enable = q->enabled;
	c->queue_notify_off = vp->queue_select;
	c->queue_desc_lo = (uint32_t)q->desc_gpa;
	c->queue_desc_hi = (uint32_t)(q->desc_gpa >> 32);
	c->queue_avail_lo = (uint32_t)q->avail_gpa;
	c->queue_avail_hi = (uint32_t)(q->avail_gpa >> 32);
	c->queue_used_lo = (uint32_t)q->used_gpa;
	c->queue_used_hi = (uint32_t)(q->used_gpa >> 32);
}

static void set_half(uint64_t *v, bool high, uint32_t val)
{
	*v = high ? (*v & 0xffffffffull) | (uint64_t)val << 32 : (*v & ~0xffffffffull) | val;
}

/* A queue register write (lock held). Addresses and size only change
 * while the queue is disabled (spec 4.1.4.3.2). */
static void queue_write(struct virtio_pci *vp, unsigned off, uint32_t v)
{
	struct virtq *q;

	if (vp->queue_select >= vp->ops->num_queues)
		return;
	q = &vp->q[vp->queue_select];
	if (off == VIRTIO_PCI_COMMON_Q_MSIX)
		q->msix_vector = checked_vector(vp, (uint16_t)v);
	else if (off == VIRTIO_PCI_COMMON_Q_ENABLE && v == 1)
		enable_queue(vp, q);
	else if (q->enabled)
		return;
	else if (off == VIRTIO_PCI_COMMON_Q_SIZE)
		q->size = (uint16_t)v;
	else if (off == VIRTIO_PCI_COMMON_Q_DESCLO || off == VIRTIO_PCI_COMMON_Q_DESCHI)
		set_half(&q->desc_gpa, off == VIRTIO_PCI_COMMON_Q_DESCHI, v);
	else if (off == VIRTIO_PCI_COMMON_Q_AVAILLO || off == VIRTIO_PCI_COMMON_Q_AVAILHI)
		set_half(&q->avail_gpa, off == VIRTIO_PCI_COMMON_Q_AVAILHI, v);
	else if (off == VIRTIO_PCI_COMMON_Q_USEDLO || off == VIRTIO_PCI_COMMON_Q_USEDHI)
		set_half(&q->used_gpa, off == VIRTIO_PCI_COMMON_Q_USEDHI, v);
}

/* Lock held. Only a field's own offset and width count. */
static void common_write(struct virtio_pci *vp, unsigned off, unsigned size, uint32_t v)
{
	static const uint8_t width[VIRTIO_PCI_COMMON_Q_USEDHI + 4] = {
		[VIRTIO_PCI_COMMON_DFSELECT] = 4,  [VIRTIO_PCI_COMMON_GFSELECT] = 4,
		[VIRTIO_PCI_COMMON_GF] = 4,	   [VIRTIO_PCI_COMMON_MSIX] = 2,
		[VIRTIO_PCI_COMMON_STATUS] = 1,	   [VIRTIO_PCI_COMMON_Q_SELECT] = 2,
		[VIRTIO_PCI_COMMON_Q_SIZE] = 2,	   [VIRTIO_PCI_COMMON_Q_MSIX] = 2,
		[VIRTIO_PCI_COMMON_Q_ENABLE] = 2,  [VIRTIO_PCI_COMMON_Q_DESCLO] = 4,
		[VIRTIO_PCI_COMMON_Q_DESCHI] = 4,  [VIRTIO_PCI_COMMON_Q_AVAILLO] = 4,
		[VIRTIO_PCI_COMMON_Q_AVAILHI] = 4, [VIRTIO_PCI_COMMON_Q_USEDLO] = 4,
		[VIRTIO_PCI_COMMON_Q_USEDHI] = 4,
	};

	if (off >= sizeof(width) || width[off] != size)
		return;
	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
		vp->dfselect = v;
		break;
	case VIRTIO_PCI_COMMON_GFSELECT:
		vp->gfselect = v;
		break;
	case VIRTIO_PCI_COMMON_GF:
		if (vp->gfselect < 2 && !(vp->status & VIRTIO_CONFIG_S_FEATURES_OK))
			set_half(&vp->driver_features, vp->gfselect == 1, v);
		break;
	case VIRTIO_PCI_COMMON_MSIX:
		vp->msix_config = checked_vector(vp, (uint16_t)v);
		break;
	case VIRTIO_PCI_COMMON_STATUS:
		write_status(vp, (uint8_t)v);
		break;
	case VIRTIO_PCI_COMMON_Q_SELECT:
		vp->queue_select = (uint16_t)v;
		break;
	default:
		queue_write(vp, off, v);
	}
}

/* ----------------------------------------------------------- BAR 4 */

static void bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct virtio_pci *vp = opaque;
	uint64_t v = 0;

	if (off == VIRTIO_PCI_ISR_OFF) {
		io_data_put(data, size, read_isr(vp));
		return;
	}
	pthread_mutex_lock(&vp->lock);
	if (off < VIRTIO_PCI_ISR_OFF) {
		struct virtio_pci_common_cfg c;

		common_snapshot(vp, &c);
		if (off + size <= sizeof(c))
			v = io_data_get((const uint8_t *)&c + off, size);
	} else if (off >= VIRTIO_PCI_DEVICE_OFF && off < VIRTIO_PCI_NOTIFY_OFF) {
		uint64_t o = off - VIRTIO_PCI_DEVICE_OFF;

		if (o + size <= vp->ops->config_len)
			v = io_data_get(vp->config + o, size);
	}
	pthread_mutex_unlock(&vp->lock);
	io_data_put(data, size, v);
}

static void bar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct virtio_pci *vp = opaque;
	uint32_t v = (uint32_t)io_data_get(data, size);

	if (off >= VIRTIO_PCI_NOTIFY_OFF) {
		/* a doorbell the ioeventfd did not take (no KVM, odd width) */
		virtio_pci_kick(vp,
				(unsigned)((off - VIRTIO_PCI_NOTIFY_OFF) / VIRTIO_PCI_NOTIFY_MULT));
		return;
	}
	pthread_mutex_lock(&vp->lock);
	if (off < VIRTIO_PCI_ISR_OFF) {
		common_write(vp, (unsigned)off, size, v);
	} else if (off >= VIRTIO_PCI_DEVICE_OFF && vp->ops->config_write) {
		uint64_t o = off - VIRTIO_PCI_DEVICE_OFF;

		if (o + size <= vp->ops->config_len)
			vp->ops->config_write(vp->opaque, (unsigned)o, data, size);
	}
	pthread_mutex_unlock(&vp->lock);
}

static const struct io_ops bar_ops = {bar_read, bar_write};

/* ----------------------------------------------------------- set-up */

static void add_vendor_cap(struct pci_dev *d, uint8_t type, uint32_t off, uint32_t len,
			   unsigned cap_len)
{
	unsigned c = pci_dev_add_cap(d, PCI_CAP_ID_VNDR, cap_len);

	d->cfg[c + 2] = (uint8_t)cap_len;
	d->cfg[c + 3] = type;
	d->cfg[c + 4] = VIRTIO_PCI_CFG_BAR;
	io_data_put(&d->cfg[c + 8], 4, off);
	io_data_put(&d->cfg[c + 12], 4, len);
	if (type == VIRTIO_PCI_CAP_NOTIFY_CFG)
		io_data_put(&d->cfg[c + 16], 4, VIRTIO_PCI_NOTIFY_MULT);
}

static size_t info(struct pci_dev *d, char *buf, size_t len)
{
	struct virtio_pci *vp = d->opaque;
	size_t n;
	int w = snprintf(buf, len, "      ");

	n = w > 0 ? (size_t)w : 0;
	n += msix_info(vp->msix, buf + (n < len ? n : len), n < len ? len - n : 0);
	w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "\n");
	return n + (w > 0 ? (size_t)w : 0);
}

static void init_pci(struct virtio_pci *vp, const struct pci_bus *bus)
{
	struct pci_dev *d = &vp->pci;
	const struct virtio_dev_ops *o = vp->ops;

	pci_dev_init(d, vp->name, 0x1af4, (uint16_t)(0x1040 + o->device_id), o->class_code, 1);
	io_data_put(&d->cfg[0x2e], 2, o->device_id); /* subsystem: as QEMU */
	d->cfg[PCI_INTERRUPT_PIN] = 1;
	d->opaque = vp;
	d->cfg_written = cfg_written;
	d->info = info;
	pci_dev_set_bar(d, VIRTIO_PCI_MSIX_BAR, MSIX_BAR_SIZE, false, &msix_bar_ops, NULL);
	pci_dev_set_bar(d, VIRTIO_PCI_CFG_BAR, VIRTIO_PCI_BAR_SIZE, false, &bar_ops, vp);
	add_vendor_cap(d, VIRTIO_PCI_CAP_COMMON_CFG, VIRTIO_PCI_COMMON_OFF, 0x1000, 16);
	add_vendor_cap(d, VIRTIO_PCI_CAP_ISR_CFG, VIRTIO_PCI_ISR_OFF, 0x1000, 16);
	add_vendor_cap(d, VIRTIO_PCI_CAP_DEVICE_CFG, VIRTIO_PCI_DEVICE_OFF, 0x1000, 16);
	add_vendor_cap(d, VIRTIO_PCI_CAP_NOTIFY_CFG, VIRTIO_PCI_NOTIFY_OFF,
		       VIRTIO_PCI_NOTIFY_MULT * o->num_queues, 20);
	/* behind a PCIe root port it is a PCI Express endpoint, as in QEMU */
	if (pci_bus_is_secondary(bus))
		pcie_add_endpoint_cap(d);
}

static int first_free_devfn(struct pci_bus *bus)
{
	if (pci_bus_is_secondary(bus)) /* a PCIe port: device 0 only */
		return pci_bus_find(bus, 0) ? -ENOSPC : 0;
	for (unsigned slot = 2; slot < 32; slot++)
		if (!pci_bus_find(bus, (uint8_t)(slot << 3)))
			return (int)(slot << 3);
	return -ENOSPC;
}

/* A vector per queue and one for configuration changes, as far as the
 * table goes. Past that (a virtio-serial bus of 31 ports has 64 queues)
 * the driver finds too few for one each and shares them: Linux then asks
 * for two, one for configuration and one for every queue. */
static unsigned msix_vectors_for(unsigned num_queues)
{
	return num_queues + 1 < MSIX_MAX_VECTORS ? num_queues + 1 : MSIX_MAX_VECTORS;
}

struct virtio_pci *virtio_pci_new(struct dev_host *host, struct pci_bus *bus, int devfn,
				  const char *name, const struct virtio_dev_ops *ops, void *opaque,
				  const void *config, char *err, size_t errlen)
{
	struct virtio_pci *vp;
	int r;

	if (!ops->num_queues || ops->num_queues > VIRTIO_MAX_QUEUES || ops->config_len > 0x1000) {
		snprintf(err, errlen, "%s: %u queues (1 to %d)", name, ops->num_queues,
			 VIRTIO_MAX_QUEUES);
		return NULL;
	}
	if (devfn < 0)
		devfn = first_free_devfn(bus);
	if (devfn < 0 || pci_bus_find(bus, (uint8_t)devfn)) {
		snprintf(err, errlen, "%s: PCI slot %s", name, devfn < 0 ? "none free" : "taken");
		return NULL;
	}
	vp = calloc(1, sizeof(*vp));
	if (!vp || !(vp->chain = malloc(sizeof(*vp->chain)))) {
		free(vp);
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	vp->host = host;
	vp->ops = ops;
	vp->opaque = opaque;
	vp->config = config;
	vp->features = TRANSPORT_FEATURES | ops->features;
	vp->epfd = vp->stop_fd = vp->wake_fd = vp->io_fd = -1;
	for (unsigned i = 0; i < VIRTIO_MAX_QUEUES; i++)
		vp->kick_fd[i] = -1;
	vp->ioev_base = PCI_BAR_UNMAPPED;
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	pthread_mutex_init(&vp->lock, NULL);
	pthread_mutex_init(&vp->intx_lock, NULL);
	pthread_mutex_init(&vp->ioev_lock, NULL);
	vpci_device_reset(vp);
	init_pci(vp, bus);
	vp->msix = msix_new(host, &vp->pci, msix_vectors_for(ops->num_queues), VIRTIO_PCI_MSIX_BAR,
			    MSIX_TABLE_OFF, MSIX_PBA_OFF);
	vp->pci.bar[VIRTIO_PCI_MSIX_BAR].opaque = vp->msix;
	r = vp->msix ? vpci_start_io_thread(vp) : -ENOMEM;
	if (r == 0)
		r = pci_bus_add(bus, &vp->pci, (uint8_t)devfn);
	if (r == 0)
		r = dev_on_reset(host, machine_reset, vp);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot create the device: %s", name, strerror(-r));
		virtio_pci_free(vp);
		return NULL;
	}
	return vp;
}

void virtio_pci_free(struct virtio_pci *vp)
{
	if (!vp)
		return;
	vpci_stop_io_thread(vp);
	pci_bus_remove(&vp->pci);
	vpci_update_doorbells(vp); /* BAR 4 is unmapped now: the ioeventfds go */
	msix_free(vp->msix);
	vpci_close_io_fds(vp);
	pthread_mutex_destroy(&vp->lock);
	pthread_mutex_destroy(&vp->intx_lock);
	pthread_mutex_destroy(&vp->ioev_lock);
	free(vp->chain);
	free(vp);
}

uint64_t virtio_pci_features(const struct virtio_pci *vp)
{
	return vp->driver_features;
}

uint8_t virtio_pci_status(struct virtio_pci *vp)
{
	uint8_t s;

	pthread_mutex_lock(&vp->lock);
	s = vp->status;
	pthread_mutex_unlock(&vp->lock);
	return s;
}

uint8_t virtio_pci_devfn(const struct virtio_pci *vp)
{
	return vp->pci.devfn;
}

void virtio_pci_config_changed(struct virtio_pci *vp)
{
	pthread_mutex_lock(&vp->lock);
	vp->generation++;
	if (vp->status & VIRTIO_CONFIG_S_DRIVER_OK)
		vpci_raise_irq(vp, vp->msix_config, VIRTIO_PCI_ISR_CONFIG);
	pthread_mutex_unlock(&vp->lock);
}
