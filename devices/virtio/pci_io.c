/* pci_io.c — the virtio PCI transport's I/O thread.
 *
 * Each device has one: it sleeps in epoll on one eventfd per queue, which
 * KVM signals when the guest writes that queue's doorbell (ioeventfd), and
 * drains the queue under the transport lock, suppressing doorbells
 * meanwhile. The same loop serves the device's backend fd (a TAP, a
 * socket), its timers, its completions (virtio_pci_watch: io_uring) and
 * wakes from other threads. Lock order as in pci.c. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/virtio/pci_internal.h"

#define STOP_EVENT VIRTIO_MAX_QUEUES
#define IO_EVENT (VIRTIO_MAX_QUEUES + 1)    /* the device's backend fd */
#define WAKE_EVENT (VIRTIO_MAX_QUEUES + 2)  /* virtio_pci_wake */
#define WATCH_EVENT (VIRTIO_MAX_QUEUES + 3) /* virtio_pci_watch: completions */
#define ISR_QUEUE 0x1			    /* the ISR bit for used buffers (spec 4.1.4.5) */

static bool queue_in_use(struct virtio_pci *vp, unsigned qi)
{
	return (vp->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	       !(vp->status & VIRTIO_CONFIG_S_NEEDS_RESET) && vp->q[qi].enabled &&
	       !vp->q[qi].broken;
}

bool vpci_queue_live(struct virtio_pci *vp, unsigned qi)
{
	return !vp->frozen && queue_in_use(vp, qi);
}

static void submit_batch(struct virtio_pci *vp, unsigned qi)
{
	if (vp->ops->submit)
		vp->ops->submit(vp->opaque, qi);
}

/* Drain queue qi: every available chain, doorbells off meanwhile, one
 * interrupt per pass if the driver wants it. Lock held. */
static void serve_queue(struct virtio_pci *vp, unsigned qi)
{
	struct virtq *q = &vp->q[qi];
	bool pushed = false;
	int r = 0;

	if (vp->ops->serve) { /* the device pops its own chains */
		if (vpci_queue_live(vp, qi))
			vp->ops->serve(vp->opaque, qi);
		return;
	}
	while (vpci_queue_live(vp, qi)) {
		virtq_set_notify(q, false);
		while ((r = virtq_pop(q, vp->chain)) == 1) {
			const char *why = NULL;
			uint32_t written = 0;

			int h = vp->ops->handle(vp->opaque, qi, vp->chain, &written, &why);

			if (h < 0) {
				submit_batch(vp, qi);
				vpci_needs_reset(vp, qi, why);
				return;
			}
			if (h == VIRTIO_REQ_PENDING) {
				vp->in_flight++;
				continue;
			}
			if (h == VIRTIO_REQ_HELD)
				continue;
			if (h == VIRTIO_HANDLE_LATER) { /* the device keeps the buffer for later */
				virtq_unpop(q, 1);
				break;
			}
			virtq_push(q, vp->chain->head, written);
			pushed = true;
		}
		submit_batch(vp, qi);
		if (r < 0) {
			vpci_needs_reset(vp, qi, q->broken);
			return;
		}
		if (pushed && virtq_should_notify(q))
			vpci_raise_irq(vp, q->msix_vector, ISR_QUEUE);
		pushed = false;
		virtq_set_notify(q, true);
		if (r == 1 || !virtq_has_avail(q))
			break;
	}
}

void virtio_pci_complete(struct virtio_pci *vp, unsigned qi, uint16_t head, uint32_t written)
{
	if (vp->in_flight)
		vp->in_flight--;
	if (qi >= vp->ops->num_queues || !vpci_queue_live(vp, qi))
		return;
	virtq_push(&vp->q[qi], head, written);
	vp->completed |= 1ull << qi;
}

/* The backend's completions, then one interrupt per queue that got any
 * and whose driver wants one. Then those queues are served: a driver
 * that refills as completions arrive has often made new requests
 * available by now, and taking them here saves the I/O thread a wake-up
 * for their doorbell. */
static void backend_ready(struct virtio_pci *vp)
{
	uint64_t served;

	pthread_mutex_lock(&vp->lock);
	vp->ready(vp->ready_opaque);
	served = vp->completed;
	for (unsigned qi = 0; vp->completed; qi++) {
		if (!(vp->completed >> qi & 1))
			continue;
		vp->completed &= ~(1ull << qi);
		if (vpci_queue_live(vp, qi) && virtq_should_notify(&vp->q[qi]))
			vpci_raise_irq(vp, vp->q[qi].msix_vector, ISR_QUEUE);
	}
	for (unsigned qi = 0; served; qi++, served >>= 1)
		if ((served & 1) && vpci_queue_live(vp, qi) && virtq_has_avail(&vp->q[qi]))
			serve_queue(vp, qi);
	pthread_mutex_unlock(&vp->lock);
}

int virtio_pci_watch(struct virtio_pci *vp, int fd, void (*ready)(void *opaque), void *opaque)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = WATCH_EVENT};

	vp->ready = ready;
	vp->ready_opaque = opaque;
	return epoll_ctl(vp->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The device's backend work (lock taken here): its timeout before each
 * wait, io_event after the fd signalled, the timeout passed or a wake. */
static int io_timeout(struct virtio_pci *vp)
{
	int t;

	if (!vp->ops->io_timeout_ms)
		return -1;
	pthread_mutex_lock(&vp->lock);
	t = vp->ops->io_timeout_ms(vp->opaque);
	pthread_mutex_unlock(&vp->lock);
	return t;
}

/* Interrupt moderation for the backend: when its fd signals less than a
 * millisecond after the last time (a stream), let io_coalesce_us pass
 * before serving it, so a wake-up carries a batch. A wake-up costs two
 * context switches (several µs each on nested hosts) and a lone packet
 * carries little; a sparse event (one ping) is served at once, and so are
 * timeouts and wakes (libslirp asks for a timer every few ms). */
static void io_moderate(struct virtio_pci *vp)
{
	uint64_t now = clock_now_ns();
	bool stream = now - vp->last_io_ns < 1000000;

	vp->last_io_ns = now;
	if (stream && vp->ops->io_coalesce_us)
		usleep(vp->ops->io_coalesce_us);
}

static void io_run(struct virtio_pci *vp, bool fd_signalled)
{
	if (!vp->ops->io_event)
		return;
	if (fd_signalled)
		io_moderate(vp);
	pthread_mutex_lock(&vp->lock);
	vp->ops->io_event(vp->opaque);
	pthread_mutex_unlock(&vp->lock);
}

static void *io_thread(void *arg)
{
	struct virtio_pci *vp = arg;
	struct epoll_event ev[VIRTIO_MAX_QUEUES + 4];

	for (;;) {
		int timeout = io_timeout(vp);
		int n = epoll_wait(vp->epfd, ev, VIRTIO_MAX_QUEUES + 4, timeout);
		bool io = n == 0 && timeout >= 0, fd_signalled = false;

		for (int i = 0; i < n; i++) {
			unsigned qi = ev[i].data.u32;
			uint64_t v;

			if (qi == STOP_EVENT)
				return NULL;
			if (qi == WATCH_EVENT) {
				backend_ready(vp);
				continue;
			}
			if (qi == IO_EVENT || qi == WAKE_EVENT) {
				if (qi == WAKE_EVENT && read(vp->wake_fd, &v, sizeof(v)) < 0)
					continue;
				fd_signalled |= qi == IO_EVENT;
				io = true;
				continue;
			}
			if (read(vp->kick_fd[qi], &v, sizeof(v)) < 0)
				continue; /* a spurious wake-up: EAGAIN */
			pthread_mutex_lock(&vp->lock);
			serve_queue(vp, qi);
			pthread_mutex_unlock(&vp->lock);
		}
		if (io)
			io_run(vp, fd_signalled);
	}
}

void virtio_pci_kick(struct virtio_pci *vp, unsigned qi)
{
	uint64_t one = 1;

	if (qi < vp->ops->num_queues && write(vp->kick_fd[qi], &one, sizeof(one)) < 0)
		fprintf(stderr, "vmm: %s: cannot signal queue %u\n", vp->name, qi);
}

int vpci_start_io_thread(struct virtio_pci *vp)
{
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t all, old;
	int r;

	vp->epfd = epoll_create1(EPOLL_CLOEXEC);
	vp->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vp->epfd < 0 || vp->stop_fd < 0)
		return -errno;
	for (unsigned i = 0; i < vp->ops->num_queues; i++) {
		vp->kick_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ev.data.u32 = i;
		if (vp->kick_fd[i] < 0 || epoll_ctl(vp->epfd, EPOLL_CTL_ADD, vp->kick_fd[i], &ev))
			return -errno;
	}
	ev.data.u32 = STOP_EVENT;
	if (epoll_ctl(vp->epfd, EPOLL_CTL_ADD, vp->stop_fd, &ev))
		return -errno;
	vp->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.u32 = WAKE_EVENT;
	if (vp->wake_fd < 0 || epoll_ctl(vp->epfd, EPOLL_CTL_ADD, vp->wake_fd, &ev))
		return -errno;
	vp->io_fd = vp->ops->io_fd ? vp->ops->io_fd(vp->opaque) : -1;
	ev.data.u32 = IO_EVENT;
	if (vp->io_fd >= 0 && epoll_ctl(vp->epfd, EPOLL_CTL_ADD, vp->io_fd, &ev))
		return -errno;
	vp->io_watched = vp->io_fd >= 0;
	/* Process signals (SIGTERM's clean shutdown goes through the main
	 * thread's signalfd, set up after the devices) never land here.
	 * SIGSYS stays open: -sandbox's handler must name a call this thread
	 * makes off the list (blocked, the kernel kills without a word). */
	sigfillset(&all);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = dev_thread_create(&vp->thread, io_thread, vp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -EAGAIN;
	vp->thread_started = true;
	return 0;
}

/* Stop the I/O thread (it finishes the pass it is in). */
void vpci_stop_io_thread(struct virtio_pci *vp)
{
	uint64_t one = 1;

	if (vp->thread_started && write(vp->stop_fd, &one, sizeof(one)) == sizeof(one))
		dev_thread_join(&vp->thread);
	vp->thread_started = false;
}

void vpci_close_io_fds(struct virtio_pci *vp)
{
	for (unsigned i = 0; i < VIRTIO_MAX_QUEUES; i++)
		if (vp->kick_fd[i] >= 0)
			close(vp->kick_fd[i]);
	if (vp->epfd >= 0)
		close(vp->epfd);
	if (vp->stop_fd >= 0)
		close(vp->stop_fd);
	if (vp->wake_fd >= 0)
		close(vp->wake_fd);
}

/* ------------------------------------------ devices that drive their queues */

struct virtq *virtio_pci_queue(struct virtio_pci *vp, unsigned qi)
{
	return qi < vp->ops->num_queues && vpci_queue_live(vp, qi) ? &vp->q[qi] : NULL;
}

struct virtq *virtio_pci_loaded_queue(struct virtio_pci *vp, unsigned qi)
{
	return qi < vp->ops->num_queues && queue_in_use(vp, qi) ? &vp->q[qi] : NULL;
}

void virtio_pci_notify(struct virtio_pci *vp, unsigned qi)
{
	if (qi < vp->ops->num_queues && virtq_should_notify(&vp->q[qi]))
		vpci_raise_irq(vp, vp->q[qi].msix_vector, ISR_QUEUE);
}

void virtio_pci_fail(struct virtio_pci *vp, unsigned qi, const char *why)
{
	vpci_needs_reset(vp, qi, why);
}

void virtio_pci_io_watch(struct virtio_pci *vp, bool on)
{
	struct epoll_event ev = {.events = on ? EPOLLIN : 0, .data.u32 = IO_EVENT};

	if (vp->io_fd < 0 || vp->io_watched == on)
		return;
	vp->io_watched = on;
	epoll_ctl(vp->epfd, EPOLL_CTL_MOD, vp->io_fd, &ev);
}

void virtio_pci_wake(struct virtio_pci *vp)
{
	uint64_t one = 1;

	if (write(vp->wake_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "vmm: %s: cannot wake the I/O thread\n", vp->name);
}

void virtio_pci_lock(struct virtio_pci *vp)
{
	pthread_mutex_lock(&vp->lock);
}

void virtio_pci_unlock(struct virtio_pci *vp)
{
	pthread_mutex_unlock(&vp->lock);
}
