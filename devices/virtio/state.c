/* state.c — snapshots of a virtio-pci function: configuration space,
 * the transport's registers, MSI-X, every queue (a child node each) and
 * the device's own registers (ops->save/load).
 *
 * Requests in flight are drained, not re-submitted: at save time the
 * vCPUs are stopped, but chains a device handed to its backend (virtio-
 * blk on io_uring) are still running on the I/O thread. The saver waits
 * for their completions, so the used ring in guest RAM and used_idx in the
 * tree both include them, and the loaded device owes the guest nothing.
 * Re-submitting on load instead would need last_avail rewound past
 * chains completed out of order, and a write could be replayed after the
 * guest already saw it finish. Once drained the queues are frozen (not
 * live) until virtio_pci_thaw, so no backend (a NIC's receive path, a
 * late doorbell) writes to guest RAM while the stream copies it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "devices/virtio/pci_internal.h"
#include "state/state.h"

#define VIRTIO_STATE_VERSION 1
#define QUEUE_STATE_VERSION 1
#define DRAIN_TIMEOUT_MS 10000

static void save_queue(const struct virtq *q, unsigned qi, struct state_writer *w)
{
	char name[24];

	snprintf(name, sizeof(name), "queue@%u", qi);
	state_begin(w, name, QUEUE_STATE_VERSION);
	state_put_u16(w, "size", q->size);
	state_put_u16(w, "vector", q->msix_vector);
	state_put_u8(w, "enabled", q->enabled);
	state_put_u64(w, "desc", q->desc_gpa);
	state_put_u64(w, "avail", q->avail_gpa);
	state_put_u64(w, "used", q->used_gpa);
	state_put_u16(w, "last-avail", q->last_avail);
	state_put_u16(w, "used-idx", q->used_idx);
	state_put_u16(w, "signalled-used", q->signalled_used);
	state_put_u8(w, "signalled-valid", q->signalled_valid);
	state_put_u8(w, "broken", q->broken != NULL);
	state_end(w);
}

static void save_transport(struct virtio_pci *vp, struct state_writer *w)
{
	state_put_u64(w, "features", vp->features);
	state_put_u64(w, "driver-features", vp->driver_features);
	state_put_u32(w, "dfselect", vp->dfselect);
	state_put_u32(w, "gfselect", vp->gfselect);
	state_put_u16(w, "msix-config", vp->msix_config);
	state_put_u16(w, "queue-select", vp->queue_select);
	state_put_u8(w, "status", vp->status);
	state_put_u8(w, "generation", vp->generation);
	pthread_mutex_lock(&vp->intx_lock);
	state_put_u8(w, "isr", vp->isr);
	pthread_mutex_unlock(&vp->intx_lock);
}

/* Wait for the backend's completions (the I/O thread takes them under
 * the lock): 0 with the lock held, or -1 after DRAIN_TIMEOUT_MS. */
static int drain(struct virtio_pci *vp)
{
	const struct timespec tick = {0, 1000000};

	for (unsigned ms = 0; ms < DRAIN_TIMEOUT_MS; ms++) {
		pthread_mutex_lock(&vp->lock);
		if (!vp->in_flight)
			return 0;
		pthread_mutex_unlock(&vp->lock);
		nanosleep(&tick, NULL);
	}
	return -1;
}

int virtio_pci_save(struct virtio_pci *vp, struct state_writer *w, const char *name, char *err,
		    size_t errlen)
{
	if (drain(vp) < 0) {
		snprintf(err, errlen, "%s: %u requests still in flight after %d ms", vp->name,
			 vp->in_flight, DRAIN_TIMEOUT_MS);
		return -1;
	}
	vp->frozen = true;
	state_begin(w, name, VIRTIO_STATE_VERSION);
	pci_dev_save(&vp->pci, w);
	save_transport(vp, w);
	msix_save(vp->msix, w);
	if (vp->ops->save)
		vp->ops->save(vp->opaque, w);
	for (unsigned i = 0; i < vp->ops->num_queues; i++)
		save_queue(&vp->q[i], i, w);
	state_end(w);
	pthread_mutex_unlock(&vp->lock);
	return 0;
}

void virtio_pci_freeze(struct virtio_pci *vp)
{
	pthread_mutex_lock(&vp->lock);
	vp->frozen = true;
	pthread_mutex_unlock(&vp->lock);
}

bool virtio_pci_frozen(struct virtio_pci *vp)
{
	return vp->frozen; /* the device asks with the lock held */
}

void virtio_pci_thaw(struct virtio_pci *vp)
{
	pthread_mutex_lock(&vp->lock);
	vp->frozen = false;
	pthread_mutex_unlock(&vp->lock);
	/* what arrived meanwhile (a doorbell, a backend's frame) */
	for (unsigned i = 0; i < vp->ops->num_queues; i++)
		virtio_pci_kick(vp, i);
}

/* ------------------------------------------------------------ loading */

struct transport_regs {
	uint64_t features, driver_features;
	uint32_t dfselect, gfselect;
	uint16_t msix_config, queue_select;
	uint8_t status, generation, isr;
};

static bool vector_ok(const struct virtio_pci *vp, uint16_t v)
{
	return v == VIRTIO_MSI_NO_VECTOR || v < msix_vectors(vp->msix);
}

static int load_transport(struct virtio_pci *vp, struct state_node *n, struct transport_regs *t)
{
	if (state_get_u64(n, "features", &t->features) < 0 ||
	    state_get_u64(n, "driver-features", &t->driver_features) < 0 ||
	    state_get_u32(n, "dfselect", &t->dfselect) < 0 ||
	    state_get_u32(n, "gfselect", &t->gfselect) < 0 ||
	    state_get_u16(n, "msix-config", &t->msix_config) < 0 ||
	    state_get_u16(n, "queue-select", &t->queue_select) < 0 ||
	    state_get_u8(n, "status", &t->status) < 0 ||
	    state_get_u8(n, "generation", &t->generation) < 0 ||
	    state_get_u8_max(n, "isr", VIRTIO_PCI_ISR_CONFIG | 1, &t->isr) < 0)
		return -1;
	if (t->features != vp->features)
		return state_node_fail(n, "features %#llx differ from this %s's %#llx",
				       (unsigned long long)t->features, vp->name,
				       (unsigned long long)vp->features);
	if (t->driver_features & ~vp->features)
		return state_node_fail(n, "driver-features %#llx were never offered",
				       (unsigned long long)t->driver_features);
	if ((t->status & VIRTIO_CONFIG_S_DRIVER_OK) && !(t->status & VIRTIO_CONFIG_S_FEATURES_OK))
		return state_node_fail(n, "status %#x has DRIVER_OK without FEATURES_OK",
				       t->status);
	if (!vector_ok(vp, t->msix_config))
		return state_node_fail(n, "msix-config %u is not a vector of this device",
				       t->msix_config);
	return 0;
}

/* One queue's node, checked against the rings in guest RAM into *q. */
static int load_queue(struct virtio_pci *vp, const struct state_reader *r, unsigned qi,
		      uint64_t driver_features, struct virtq *q, char *err, size_t errlen)
{
	struct state_node n;
	uint16_t last_avail, used_idx;
	bool enabled, broken, valid;
	char name[24];

	snprintf(name, sizeof(name), "queue@%u", qi);
	virtq_reset(q, vp->ops->queue_size);
	if (state_node_open(&n, r, name, QUEUE_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u16(&n, "size", &q->size) < 0 ||
	    state_get_u16(&n, "vector", &q->msix_vector) < 0 ||
	    state_get_bool(&n, "enabled", &enabled) < 0 ||
	    state_get_u64(&n, "desc", &q->desc_gpa) < 0 ||
	    state_get_u64(&n, "avail", &q->avail_gpa) < 0 ||
	    state_get_u64(&n, "used", &q->used_gpa) < 0 ||
	    state_get_u16(&n, "last-avail", &last_avail) < 0 ||
	    state_get_u16(&n, "used-idx", &used_idx) < 0 ||
	    state_get_u16(&n, "signalled-used", &q->signalled_used) < 0 ||
	    state_get_bool(&n, "signalled-valid", &valid) < 0 ||
	    state_get_bool(&n, "broken", &broken) < 0 || state_node_close(&n) < 0)
		return -1;
	q->signalled_valid = valid;
	if (!vector_ok(vp, q->msix_vector))
		return state_node_fail(&n, "vector %u is not a vector of this device",
				       q->msix_vector);
	if (!enabled)
		return 0;
	q->enabled = true;
	if (virtq_restore(q, vp->host->mem, driver_features >> VIRTIO_RING_F_EVENT_IDX & 1,
			  driver_features >> VIRTIO_RING_F_INDIRECT_DESC & 1, last_avail,
			  used_idx) < 0)
		return state_node_fail(&n, "%s", q->broken);
	q->signalled_valid = valid;
	if (broken) /* it stays stopped until the driver resets the device */
		q->broken = "broken before the snapshot";
	return 0;
}

static void apply_transport(struct virtio_pci *vp, const struct transport_regs *t,
			    const struct virtq *q)
{
	vp->driver_features = t->driver_features;
	vp->dfselect = t->dfselect;
	vp->gfselect = t->gfselect;
	vp->msix_config = t->msix_config;
	vp->queue_select = t->queue_select;
	vp->status = t->status;
	vp->generation = t->generation;
	memcpy(vp->q, q, sizeof(vp->q[0]) * vp->ops->num_queues);
	pthread_mutex_lock(&vp->intx_lock);
	vp->isr = t->isr;
	pthread_mutex_unlock(&vp->intx_lock);
}

int virtio_pci_load(struct virtio_pci *vp, const struct state_reader *r, const char *name,
		    char *err, size_t errlen)
{
	struct virtq q[VIRTIO_MAX_QUEUES];
	struct transport_regs t;
	struct state_reader at;
	struct state_node n;
	int rc = -1;

	if (state_node_open(&n, r, name, VIRTIO_STATE_VERSION, err, errlen) < 0 ||
	    state_reader_sub(r, name, &at, err, errlen) < 0 || load_transport(vp, &n, &t) < 0)
		return -1;
	for (unsigned i = 0; i < vp->ops->num_queues; i++)
		if (load_queue(vp, &at, i, t.driver_features, &q[i], err, errlen) < 0)
			return -1;
	pthread_mutex_lock(&vp->lock);
	vpci_device_reset(vp); /* the device's side state from power-on */
	pthread_mutex_unlock(&vp->lock);
	/* the configuration space maps the BARs the doorbells and MSI-X use
	 * and drives INTA as saved */
	if (pci_dev_load(&vp->pci, &n) < 0)
		return -1;
	vpci_update_doorbells(vp);
	if (msix_load(vp->msix, &n) < 0)
		return -1;
	pthread_mutex_lock(&vp->lock);
	apply_transport(vp, &t, q);
	if ((!vp->ops->load || vp->ops->load(vp->opaque, &n) == 0) && state_node_close(&n) == 0)
		rc = 0;
	pthread_mutex_unlock(&vp->lock);
	if (rc == 0) /* requests the guest made available before the save */
		for (unsigned i = 0; i < vp->ops->num_queues; i++)
			virtio_pci_kick(vp, i);
	return rc;
}
