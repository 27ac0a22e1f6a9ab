/* vserial.c — virtio-serial-pci on the board: each virtserialport /
 * virtconsole joined to its -chardev, and the guest opening or closing a
 * port reported as QMP's VSERPORT_CHANGE (libvirt learns from it that
 * the guest agent is listening).
 *
 * Host input comes on the main thread's event loop (chardev frontends),
 * guest output on the device's I/O thread (chardev_write_some, which
 * never blocks: what a slow peer did not take stays in the guest's
 * buffer until it does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/virtio.h"
#include "vmm/chardev.h"
#include "vmm/machine.h"
#include "vmm/vserial.h"

struct vserial_port {
	struct machine *m;
	struct virtio_console *dev;
	struct chardev *chr;
	const struct vserport_spec *spec;
};

struct vmm_vserial {
	struct virtio_console *dev[CLI_MAX_VSERIAL];
	struct vserial_port port[CLI_MAX_VSERPORTS];
	unsigned n_ports;
};

/* ------------------------------------------- device side (I/O thread) */

static size_t port_write(void *opaque, const void *buf, size_t len)
{
	struct vserial_port *p = opaque;

	return chardev_write_some(p->chr, buf, len);
}

static void port_rx_ready(void *opaque)
{
	struct vserial_port *p = opaque;

	chardev_rx_ready(p->chr);
}

static void port_guest_open(void *opaque, bool open)
{
	struct vserial_port *p = opaque;

	if (p->spec->id[0]) /* QEMU sends it only for ports with an id */
		machine_event(p->m, "VSERPORT_CHANGE", "{\"id\": \"%s\", \"open\": %s}",
			      p->spec->id, open ? "true" : "false");
}

/* --------------------------------------- chardev side (main thread) */

static size_t port_can_receive(void *opaque)
{
	struct vserial_port *p = opaque;

	return virtio_console_can_receive(p->dev, (unsigned)p->spec->nr);
}

static void port_receive(void *opaque, const uint8_t *buf, size_t len)
{
	struct vserial_port *p = opaque;

	virtio_console_receive(p->dev, (unsigned)p->spec->nr, buf, len);
}

static void port_event(void *opaque, enum chardev_event ev)
{
	struct vserial_port *p = opaque;

	if (ev == CHARDEV_OPENED || ev == CHARDEV_CLOSED)
		virtio_console_host_open(p->dev, (unsigned)p->spec->nr, ev == CHARDEV_OPENED);
}

/* ------------------------------------------------------------- set-up */

static int open_chardevs(struct machine *m, struct vmm_vserial *v, char *err, size_t errlen)
{
	const struct vserial_config *vc = &m->cfg->vserial;

	for (unsigned i = 0; i < vc->n_ports; i++) {
		struct vserial_port *p = &v->port[i];

		*p = (struct vserial_port){.m = m, .spec = &vc->ports[i]};
		if (p->spec->chr.kind == CHARDEV_NONE)
			continue;
		p->chr = chardev_new(&p->spec->chr, m->host.loop, err, errlen);
		if (!p->chr)
			return -1;
	}
	v->n_ports = vc->n_ports;
	return 0;
}

static int add_bus(struct machine *m, struct vmm_vserial *v, unsigned b, char *err, size_t errlen)
{
	const struct vserial_config *vc = &m->cfg->vserial;
	struct virtio_console_port_opts ports[CLI_MAX_VSERPORTS];
	struct virtio_console_opts o = {vc->buses[b].devfn, vc->buses[b].max_ports, ports, 0};
	char why[256];

	for (unsigned i = 0; i < vc->n_ports; i++) {
		const struct vserport_spec *s = &vc->ports[i];

		if (s->bus != b)
			continue;
		ports[o.n_ports++] = (struct virtio_console_port_opts){
			.id = (unsigned)s->nr,
			.name = s->name[0] ? s->name : NULL,
			.console = s->console,
			.write = v->port[i].chr ? port_write : NULL,
			.rx_ready = port_rx_ready,
			.guest_open = port_guest_open,
			.opaque = &v->port[i],
		};
	}
	v->dev[b] = virtio_console_new(&m->host, board_device_bus(m, m->cfg->vserial.buses[b].bus), &o, why, sizeof(why));
	if (!v->dev[b]) {
		snprintf(err, errlen, "-device virtio-serial-pci: %s", why);
		return -1;
	}
	for (unsigned i = 0; i < vc->n_ports; i++)
		if (vc->ports[i].bus == b)
			v->port[i].dev = v->dev[b];
	return 0;
}

/* The frontends attach once every device exists; start sends the
 * chardevs' opened events (a pty or file is connected from the start). */
static void start_ports(struct vmm_vserial *v)
{
	for (unsigned i = 0; i < v->n_ports; i++) {
		struct vserial_port *p = &v->port[i];
		struct chardev_frontend fe = {port_can_receive, port_receive, port_event, p};

		if (!p->chr)
			continue;
		chardev_add_frontend(p->chr, &fe);
		chardev_start(p->chr);
	}
}

int vmm_vserial_init(struct machine *m, char *err, size_t errlen)
{
	const struct vserial_config *vc = &m->cfg->vserial;
	struct vmm_vserial *v;

	if (!vc->n_buses)
		return 0;
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "virtio-serial: out of memory");
		return -1;
	}
	m->vserial = v;
	if (open_chardevs(m, v, err, errlen) < 0)
		return -1;
	for (unsigned b = 0; b < vc->n_buses; b++)
		if (add_bus(m, v, b, err, errlen) < 0)
			return -1;
	start_ports(v);
	return 0;
}

void vmm_vserial_free(struct vmm_vserial *v)
{
	if (!v)
		return;
	for (unsigned b = 0; b < CLI_MAX_VSERIAL; b++)
		virtio_console_free(v->dev[b]); /* stops its I/O thread first */
	for (unsigned i = 0; i < v->n_ports; i++)
		chardev_free(v->port[i].chr);
	free(v);
}

struct chardev *vmm_vserial_chardev(struct vmm_vserial *v, unsigned i, const char **label)
{
	if (!v || i >= v->n_ports)
		return NULL;
	*label = v->port[i].spec->chr.id;
	return v->port[i].chr;
}

bool vmm_vserial_port_open(struct vmm_vserial *v, unsigned i)
{
	const struct vserial_port *p = v && i < v->n_ports ? &v->port[i] : NULL;

	return p && p->dev && virtio_console_guest_open(p->dev, (unsigned)p->spec->nr);
}

struct virtio_console *vmm_vserial_dev(struct vmm_vserial *v, unsigned b)
{
	return v && b < CLI_MAX_VSERIAL ? v->dev[b] : NULL;
}
