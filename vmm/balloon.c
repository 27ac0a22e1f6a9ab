/* balloon.c — the machine's side of -device virtio-balloon-pci: creating
 * it, BALLOON_CHANGE events, and what QMP and HMP ask of it.
 *
 * The guest updates `actual` after every batch of pages (1 MiB for
 * Linux), so a 256 MiB inflation would send 256 events: like QEMU, at
 * most one BALLOON_CHANGE per second goes out, the first at once and
 * then the latest value when the second is over. The device reports on
 * a vCPU or I/O thread; the event leaves from the main thread (a timer),
 * where the QMP clients live. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "devices/virtio/virtio.h"
#include "vmm/machine.h"

#define BALLOON_EVENT_GAP_NS 1000000000ull

struct vmm_balloon {
	struct machine *m;
	struct virtio_balloon *dev;
	struct ev_timer *timer;
	_Atomic uint64_t latest;       /* actual, as the guest last set it */
	_Atomic uint64_t last_sent_ns; /* when the last event left (0: never) */
	uint64_t sent;		       /* the value it carried (main thread) */
};

/* Main thread: the latest value, unless the last event said it already. */
static void send_change(void *opaque)
{
	struct vmm_balloon *vb = opaque;
	uint64_t v = atomic_load(&vb->latest);

	if (v == vb->sent)
		return;
	vb->sent = v;
	atomic_store(&vb->last_sent_ns, clock_now_ns());
	machine_event(vb->m, "BALLOON_CHANGE", "{\"actual\": %llu}", (unsigned long long)v);
}

/* Any thread, the device's lock held: only note it and arm the timer. */
static void actual_changed(void *opaque, uint64_t actual)
{
	struct vmm_balloon *vb = opaque;
	uint64_t now = clock_now_ns(), last = atomic_load(&vb->last_sent_ns);
	uint64_t due = last ? last + BALLOON_EVENT_GAP_NS : 0;

	atomic_store(&vb->latest, actual);
	ev_timer_arm(vb->timer, due > now ? due - now : 0, 0);
}

int vmm_balloon_init(struct machine *m, char *err, size_t errlen)
{
	const struct balloon_spec *s = &m->cfg->balloon;
	struct virtio_balloon_opts o = {s->deflate_on_oom, s->free_page_reporting, s->devfn,
					actual_changed, NULL};
	struct vmm_balloon *vb;
	char why[256];

	if (!s->present)
		return 0;
	vb = calloc(1, sizeof(*vb));
	if (!vb || !(vb->timer = ev_timer_new(m->host.loop, send_change, vb))) {
		free(vb);
		snprintf(err, errlen, "-device virtio-balloon-pci: out of memory");
		return -1;
	}
	vb->m = m;
	vb->latest = vb->sent = m->cfg->ram_size;
	o.opaque = vb;
	m->balloon = vb; /* freed by vmm_balloon_free even if what follows fails */
	vb->dev = virtio_balloon_new(&m->host, board_device_bus(m, m->cfg->balloon.bus), &o, why, sizeof(why));
	if (!vb->dev) {
		snprintf(err, errlen, "-device virtio-balloon-pci: %s", why);
		return -1;
	}
	if (s->poll_secs)
		virtio_balloon_set_poll_interval(vb->dev, s->poll_secs);
	return 0;
}

void vmm_balloon_free(struct vmm_balloon *vb)
{
	if (!vb)
		return;
	virtio_balloon_free(vb->dev);
	ev_timer_free(vb->timer);
	free(vb);
}

struct virtio_balloon *vmm_balloon_dev(struct machine *m)
{
	return m->balloon ? m->balloon->dev : NULL;
}

const char *vmm_balloon_id(struct machine *m)
{
	return m->balloon && m->cfg->balloon.id[0] ? m->cfg->balloon.id : NULL;
}

/* ------------------------------------------------ QMP and HMP's side */

#define NO_BALLOON "No balloon device has been activated"

int vmm_balloon_set_target(struct machine *m, int64_t bytes, const char **why)
{
	struct virtio_balloon *b = vmm_balloon_dev(m);

	if (!b) {
		*why = NO_BALLOON;
		return -ENODEV;
	}
	if (bytes <= 0) {
		*why = "Parameter 'target' expects a size";
		return -EINVAL;
	}
	return virtio_balloon_set_target(b, (uint64_t)bytes);
}

/* `balloon N`: the guest's new size in MiB. */
void hmp_balloon(struct machine *m, int argc, char **argv, FILE *out)
{
	const char *why = NULL;
	char *end;
	long long mib = argc == 2 ? strtoll(argv[1], &end, 0) : 0;

	if (argc != 2 || *end || mib > INT64_MAX >> 20) {
		fprintf(out, "usage: balloon MiB\r\n");
		return;
	}
	if (vmm_balloon_set_target(m, (int64_t)mib << 20, &why) < 0)
		fprintf(out, "Error: %s\r\n", why);
}

void hmp_info_balloon(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	struct virtio_balloon *b = vmm_balloon_dev(m);

	if (!b)
		fprintf(out, "Error: %s\r\n", NO_BALLOON);
	else
		fprintf(out, "balloon: actual=%llu\r\n",
			(unsigned long long)(virtio_balloon_actual(b) >> 20));
}
