/* pci_internal.h — the virtio PCI transport's state, shared by its
 * register side (pci.c) and its I/O thread (pci_io.c). Devices use
 * virtio.h, never this. */
#ifndef DEVICES_VIRTIO_PCI_INTERNAL_H
#define DEVICES_VIRTIO_PCI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"

struct virtio_pci {
	struct pci_dev pci;
	struct dev_host *host;
	const struct virtio_dev_ops *ops;
	void *opaque;
	const uint8_t *config;
	char name[32];
	struct msix *msix;

	pthread_mutex_t lock; /* everything below */
	uint64_t features, driver_features;
	uint32_t dfselect, gfselect;
	uint16_t msix_config, queue_select;
	uint8_t status, generation;
	pthread_mutex_t intx_lock; /* the ISR byte and INTA's level */
	uint8_t isr;
	bool broken_logged;
	struct virtq q[VIRTIO_MAX_QUEUES];
	struct virtq_chain *chain; /* the I/O thread's scratch */

	/* doorbells: kick_fd[i] wakes the I/O thread for queue i */
	int kick_fd[VIRTIO_MAX_QUEUES];
	pthread_mutex_t ioev_lock;
	uint64_t ioev_base; /* BAR 4 address the ioeventfds watch, or unmapped */
	int epfd, stop_fd, wake_fd;
	int io_fd; /* ops->io_fd's, or -1 */
	bool io_watched;
	uint64_t last_io_ns; /* the I/O thread's: io_moderate */
	struct dev_thread thread;
	bool thread_started;
	/* a backend's completions (virtio_pci_watch) */
	void (*ready)(void *opaque);
	void *ready_opaque;
	uint64_t completed; /* bit per queue: used entries not yet signalled */
	unsigned in_flight; /* chains handed to a backend, not completed yet */
	bool frozen;	    /* a snapshot is being written: queues not live */
};

/* Interrupt the driver: an MSI-X vector, or INTA with isr_bit in the ISR
 * byte. Lock held. */
void vpci_raise_irq(struct virtio_pci *vp, uint16_t vector, uint8_t isr_bit);
/* Mark the device broken (DEVICE_NEEDS_RESET) and say why. Lock held. */
void vpci_needs_reset(struct virtio_pci *vp, unsigned qi, const char *why);

/* Back to the power-on registers, every queue reset (lock held). */
void vpci_device_reset(struct virtio_pci *vp);
/* The doorbell ioeventfds follow BAR 4 (no vp->lock). */
void vpci_update_doorbells(struct virtio_pci *vp);

/* pci_io.c */
bool vpci_queue_live(struct virtio_pci *vp, unsigned qi);
int vpci_start_io_thread(struct virtio_pci *vp);
void vpci_stop_io_thread(struct virtio_pci *vp);
void vpci_close_io_fds(struct virtio_pci *vp);

#endif
