/* vserial.c — virtio-serial-pci on the board: each virtserialport /
 * virtconsole joined to its -chardev, and the guest opening or closing a
 * port reported as QMP's VSERPORT_CHANGE (libvirt learns from it that
 * the guest agent is listening).
 *
 * Host input comes on the main thread's event loop (chardev frontends),
 * guest output on the device's I/O thread (chardev_write_some, which
 * never blocks: what a slow peer did not take stays in the guest's
 * buffer until it does). */
#include <errno.h>
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

/* Port i's options for the device: its number, name and backend. */
static struct virtio_console_port_opts port_opts(struct vmm_vserial *v, unsigned i)
{
	const struct vserport_spec *s = v->port[i].spec;

	return (struct virtio_console_port_opts){
		.id = (unsigned)s->nr,
		.name = s->name[0] ? s->name : NULL,
		.console = s->console,
		.write = v->port[i].chr ? port_write : NULL,
		.rx_ready = port_rx_ready,
		.guest_open = port_guest_open,
		.opaque = &v->port[i],
	};
}

static int add_bus(struct machine *m, struct vmm_vserial *v, unsigned b, char *err, size_t errlen)
{
	const struct vserial_config *vc = &m->cfg->vserial;
	struct virtio_console_port_opts ports[CLI_MAX_VSERPORTS];
	struct virtio_console_opts o = {vc->buses[b].devfn, vc->buses[b].max_ports, ports, 0};
	char why[256];

	for (unsigned i = 0; i < vc->n_ports; i++)
		if (vc->ports[i].bus == b)
			ports[o.n_ports++] = port_opts(v, i);
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
static void start_port(struct vserial_port *p)
{
	struct chardev_frontend fe = {port_can_receive, port_receive, port_event, p};

	if (!p->chr)
		return;
	chardev_add_frontend(p->chr, &fe);
	chardev_start(p->chr);
}

static void start_ports(struct vmm_vserial *v)
{
	for (unsigned i = 0; i < v->n_ports; i++)
		start_port(&v->port[i]);
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

/* ------------------------------------------------- run-time hot-plug */

/* device_add of a virtserialport or virtconsole on an existing bus and
 * device_del of one (what libvirt sends for attach-device and
 * detach-device of a <channel> or <console>). The port table has fixed
 * entries that the running ports point into (spec, frontend opaque), so
 * a removed port leaves a hole (no device) the next one fills. */

static int find_port(const struct vmm_vserial *v, const char *id)
{
	for (unsigned i = 0; id[0] && i < v->n_ports; i++)
		if (v->port[i].dev && !strcmp(v->port[i].spec->id, id))
			return (int)i;
	return -1;
}

/* The entry a new port goes into: the first hole, else a new one. */
static int free_entry(struct machine *m, struct vmm_vserial *v, char *err, size_t errlen)
{
	for (unsigned j = 0; j < v->n_ports; j++)
		if (!v->port[j].dev)
			return (int)j;
	if (v->n_ports == CLI_MAX_VSERPORTS) {
		snprintf(err, errlen, "too many virtio-serial ports (at most %d)",
			 CLI_MAX_VSERPORTS);
		return -1;
	}
	m->cfg_rw->vserial.n_ports = v->n_ports + 1;
	return (int)v->n_ports++;
}

/* Entry i becomes a hole: its chardev goes back to the spare ones (for
 * chardev-remove, or another port), a trailing entry is dropped. */
static void drop_port(struct machine *m, struct vmm_vserial *v, unsigned i)
{
	struct vserport_spec *s = &m->cfg_rw->vserial.ports[i];

	if (s->chr.kind != CHARDEV_NONE)
		machine_chardev_give_back(m, s->chr.id, v->port[i].chr);
	*s = (struct vserport_spec){.nr = -1};
	v->port[i] = (struct vserial_port){0};
	if (i + 1 == v->n_ports)
		m->cfg_rw->vserial.n_ports = --v->n_ports;
}

/* Port i, parsed: numbered, its chardev (a chardev-add one, else a
 * -chardev not opened yet) and its place on the bus. */
static int plug_port(struct machine *m, struct vmm_vserial *v, unsigned i, char *err, size_t errlen)
{
	struct vserial_port *p = &v->port[i];
	struct virtio_console_port_opts o;

	if (cli_resolve_vserport(m->cfg_rw, i, err, errlen) < 0)
		return -1;
	if (p->spec->chr.kind != CHARDEV_NONE) {
		p->chr = machine_chardev_take(m, p->spec->chr.id);
		if (!p->chr)
			p->chr = chardev_new(&p->spec->chr, m->host.loop, err, errlen);
		if (!p->chr)
			return -1;
	}
	o = port_opts(v, i);
	if (virtio_console_port_add(p->dev, &o, err, errlen) < 0)
		return -1;
	start_port(p);
	return 0;
}

int vmm_vserial_device_add(struct machine *m, const char *driver, char *props, char *err,
			   size_t errlen)
{
	struct vmm_vserial *v = m->vserial;
	struct vserport_spec spec;
	int i;

	if (!v) {
		snprintf(err, errlen, "No 'virtio-serial-bus' bus found for device '%s'", driver);
		return -1;
	}
	i = cli_parse_vserport_spec(m->cfg_rw, driver, props, &spec, err, errlen);
	if (i == 0 && spec.id[0] && find_port(v, spec.id) >= 0) {
		snprintf(err, errlen, "Duplicate device ID '%s' for device", spec.id);
		i = -1;
	} else if (i == 0) {
		i = free_entry(m, v, err, errlen);
	}
	if (i < 0) { /* a chardev= already parsed is free again */
		if (spec.chr.kind != CHARDEV_NONE)
			machine_chardev_give_back(m, spec.chr.id, NULL);
		return -1;
	}
	m->cfg_rw->vserial.ports[i] = spec;
	v->port[i] = (struct vserial_port){
		.m = m, .spec = &m->cfg->vserial.ports[i], .dev = v->dev[spec.bus]};
	if (plug_port(m, v, (unsigned)i, err, errlen) < 0) {
		drop_port(m, v, (unsigned)i);
		return -1;
	}
	return 0;
}

int vmm_vserial_device_del(struct machine *m, const char *id)
{
	struct vmm_vserial *v = m->vserial;
	int i = v ? find_port(v, id) : -1;
	char name[32];

	if (i < 0)
		return -ENOENT;
	virtio_console_port_remove(v->port[i].dev, (unsigned)v->port[i].spec->nr);
	snprintf(name, sizeof(name), "%s", id);
	drop_port(m, v, (unsigned)i);
	/* no guest handshake to wait for: the port is gone at once, as in QEMU */
	machine_event(m, "DEVICE_DELETED",
		      "{\"device\": \"%s\", \"path\": \"/machine/peripheral/%s\"}", name, name);
	return 0;
}
