/* fuzz_vpci.h — a stand-in for the virtio-pci transport (devices/virtio/
 * pci.c) so a virtio device's own code can be fuzzed on its public
 * constructor: the target defines the virtio_pci_* functions the device
 * calls (the archive's pci.o is then never linked), with no I/O thread,
 * no BARs and no locks. The driver's side comes from the input: the
 * features it accepted and every queue's configuration (fuzz_vpci_setup);
 * then fuzz_dev.h's steps ring doorbells (fuzz_vpci_serve) or reset the
 * device (fuzz_vpci_reset). Serving follows pci.c's serve_queue: a device
 * with its own serve pops its chains itself; otherwise every available
 * chain goes to handle, VIRTIO_HANDLE_LATER gives it back and stops, an
 * error or a malformed ring marks the device NEEDS_RESET. */
#ifndef FUZZ_VPCI_H
#define FUZZ_VPCI_H

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "tests/fuzz/fuzz_dev.h"

#define FUZZ_VPCI_TRANSPORT_FEATURES                                                               \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |                    \
	 (1ull << VIRTIO_RING_F_EVENT_IDX))

struct virtio_pci {
	const struct virtio_dev_ops *ops;
	void *opaque;
	const struct guest_mem *mem;
	uint64_t features;
	bool needs_reset;
	struct virtq q[VIRTIO_MAX_QUEUES];
	uint16_t size[VIRTIO_MAX_QUEUES];   /* the driver's configuration, */
	uint64_t gpa[VIRTIO_MAX_QUEUES][3]; /* kept for after a reset */
	struct virtq_chain chain;
	unsigned kicked; /* virtio_pci_kick's queues, served by the next step */
};

static struct virtio_pci *fuzz_vp; /* the device under test's transport */

struct virtio_pci *virtio_pci_new(struct dev_host *host, struct pci_bus *bus, int devfn,
				  const char *name, const struct virtio_dev_ops *ops, void *opaque,
				  const void *config, char *err, size_t errlen)
{
	struct virtio_pci *vp = calloc(1, sizeof(*vp));

	if (!vp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	vp->ops = ops;
	vp->opaque = opaque;
	vp->mem = host->mem;
	fuzz_vp = vp;
	return vp;
}

void virtio_pci_free(struct virtio_pci *vp)
{
	if (fuzz_vp == vp)
		fuzz_vp = NULL;
	free(vp);
}

uint64_t virtio_pci_features(const struct virtio_pci *vp)
{
	return vp->features;
}

void virtio_pci_config_changed(struct virtio_pci *vp)
{
}

static bool fuzz_vpci_live(struct virtio_pci *vp, unsigned qi)
{
	return qi < vp->ops->num_queues && !vp->needs_reset && vp->q[qi].enabled &&
	       !vp->q[qi].broken;
}

struct virtq *virtio_pci_queue(struct virtio_pci *vp, unsigned qi)
{
	return fuzz_vpci_live(vp, qi) ? &vp->q[qi] : NULL;
}

void virtio_pci_notify(struct virtio_pci *vp, unsigned qi)
{
	if (qi < vp->ops->num_queues)
		virtq_should_notify(&vp->q[qi]);
}

void virtio_pci_fail(struct virtio_pci *vp, unsigned qi, const char *why)
{
	vp->needs_reset = true;
}

void virtio_pci_kick(struct virtio_pci *vp, unsigned qi)
{
	if (qi < vp->ops->num_queues)
		vp->kicked |= 1u << qi;
}

void virtio_pci_io_watch(struct virtio_pci *vp, bool on)
{
}

void virtio_pci_wake(struct virtio_pci *vp)
{
}

void virtio_pci_lock(struct virtio_pci *vp)
{
}

void virtio_pci_unlock(struct virtio_pci *vp)
{
}

bool virtio_pci_frozen(struct virtio_pci *vp)
{
	return false; /* never saved or loaded here */
}

/* Map every queue the driver configured (DRIVER_OK). */
static void fuzz_vpci_start(struct virtio_pci *vp)
{
	bool event_idx = vp->features >> VIRTIO_RING_F_EVENT_IDX & 1;
	bool indirect = vp->features >> VIRTIO_RING_F_INDIRECT_DESC & 1;

	for (unsigned qi = 0; qi < vp->ops->num_queues; qi++) {
		struct virtq *q = &vp->q[qi];

		virtq_reset(q, vp->ops->queue_size);
		q->size = vp->size[qi];
		q->desc_gpa = vp->gpa[qi][0];
		q->avail_gpa = vp->gpa[qi][1];
		q->used_gpa = vp->gpa[qi][2];
		q->enabled = vp->size[qi] && virtq_start(q, vp->mem, event_idx, indirect) == 0;
	}
	vp->needs_reset = false;
	vp->kicked = 0;
}

/* The driver's set-up from the input: 8 bytes of accepted features (only
 * offered bits count; VERSION_1 always), then per queue a 2-byte size
 * and 3-byte descriptor, available and used ring addresses. */
static inline void fuzz_vpci_setup(struct virtio_pci *vp, const uint8_t **data, size_t *size)
{
	uint64_t offered = vp->ops->features | FUZZ_VPCI_TRANSPORT_FEATURES;

	vp->features = (fuzz_take(data, size, 8) & offered) | 1ull << VIRTIO_F_VERSION_1;
	for (unsigned qi = 0; qi < vp->ops->num_queues; qi++) {
		vp->size[qi] = (uint16_t)fuzz_take(data, size, 2);
		for (unsigned i = 0; i < 3; i++)
			vp->gpa[qi][i] = fuzz_take(data, size, 3);
	}
	fuzz_vpci_start(vp);
}

/* A device reset by the driver, which then sets the same queues up again. */
static inline void fuzz_vpci_reset(struct virtio_pci *vp)
{
	if (vp->ops->reset)
		vp->ops->reset(vp->opaque);
	fuzz_vpci_start(vp);
}

/* A doorbell on queue qi: pci.c's serve_queue, synchronously. */
static inline void fuzz_vpci_serve(struct virtio_pci *vp, unsigned qi)
{
	struct virtq *q = &vp->q[qi];
	int r;

	if (!fuzz_vpci_live(vp, qi))
		return;
	if (vp->ops->serve) {
		vp->ops->serve(vp->opaque, qi);
		return;
	}
	virtq_set_notify(q, false);
	while ((r = virtq_pop(q, &vp->chain)) == 1) {
		const char *why = NULL;
		uint32_t written = 0;
		int h = vp->ops->handle(vp->opaque, qi, &vp->chain, &written, &why);

		if (h < 0) {
			vp->needs_reset = true;
			return;
		}
		if (h == VIRTIO_HANDLE_LATER) {
			virtq_unpop(q, 1);
			break;
		}
		virtq_push(q, vp->chain.head, written);
	}
	if (r < 0)
		vp->needs_reset = true;
	virtq_should_notify(q);
	virtq_set_notify(q, true);
}

/* The queues virtio_pci_kick asked for, as the I/O thread would. */
static inline void fuzz_vpci_serve_kicked(struct virtio_pci *vp)
{
	unsigned k = vp->kicked;

	vp->kicked = 0;
	for (unsigned qi = 0; k; qi++, k >>= 1)
		if (k & 1)
			fuzz_vpci_serve(vp, qi);
}

#endif
