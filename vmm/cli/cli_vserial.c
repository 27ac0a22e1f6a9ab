/* cli_vserial.c — virtio-serial's options, as QEMU's (and libvirt's):
 *   -device virtio-serial-pci[,id=NAME][,max_ports=N][,bus=pci.0][,addr=SLOT[.FN]]
 *   -device virtserialport[,bus=NAME.0][,nr=N][,chardev=ID][,name=STR][,id=ID]
 *   -device virtconsole   (the same properties; the guest's hvc)
 * virtio-serial is QEMU's alias for virtio-serial-pci. A port without bus=
 * goes on the first virtio-serial bus, as in QEMU; its chardev is the
 * -chardev given before it. Port numbers: nr 0 is kept for a virtconsole
 * (QEMU's rule); without nr= a virtconsole takes 0 when free and any
 * port else the lowest free number from 1. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cli.h"

#define BUS_HELP "id=NAME, max_ports=1-31, bus=pci.0, addr=SLOT[.FN] (slot 2-31)"
#define PORT_HELP "bus=NAME.0, nr=N, chardev=ID, name=STR, id=ID"

static bool copy_str(char *dst, size_t size, const char *val)
{
	if (!val || !*val || strlen(val) >= size)
		return false;
	strcpy(dst, val);
	return true;
}

static bool bus_prop(struct vserial_bus_spec *b, const char *key, const char *v)
{
	int transport;
	uint64_t n;

	if (!strcmp(key, "id"))
		return copy_str(b->id, sizeof(b->id), v);
	if (!strcmp(key, "bus") || !strcmp(key, "addr")) /* pci.0/pcie.0 or a root port */
		return cli_pci_place(key, v, b->bus, sizeof(b->bus), &b->devfn, 2) > 0;
	transport = cli_virtio_transport_prop(key, v);
	if (transport)
		return transport > 0;
	if (!strcmp(key, "max_ports") && v && cli_parse_u64(v, &n) == 0 && n >= 1 &&
	    n <= CLI_VSERIAL_MAX_PORTS) {
		b->max_ports = (unsigned)n;
		return true;
	}
	return false;
}

int cli_parse_virtio_serial(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct vserial_config *vs = &cfg->vserial;
	struct vserial_bus_spec b = {.devfn = -1, .max_ports = CLI_VSERIAL_MAX_PORTS};
	char *key, *v;

	while (props && cli_next_kv(&props, &key, &v)) {
		if (!bus_prop(&b, key, v)) {
			snprintf(err, errlen, "virtio-serial-pci: invalid %s '%s' (%s)", key,
				 v ? v : "", BUS_HELP);
			return -1;
		}
	}
	if (vs->n_buses == CLI_MAX_VSERIAL) {
		snprintf(err, errlen, "too many virtio-serial-pci devices (at most %d)",
			 CLI_MAX_VSERIAL);
		return -1;
	}
	for (unsigned i = 0; b.id[0] && i < vs->n_buses; i++)
		if (!strcmp(vs->buses[i].id, b.id)) {
			snprintf(err, errlen, "virtio-serial-pci: duplicate id '%s'", b.id);
			return -1;
		}
	vs->buses[vs->n_buses++] = b;
	return 0;
}

/* bus=NAME.0 (QEMU's name for the controller's one bus). */
static int find_bus(const struct vserial_config *vs, const char *v)
{
	size_t len = strlen(v);

	if (len < 3 || strcmp(v + len - 2, ".0"))
		return -1;
	for (unsigned i = 0; i < vs->n_buses; i++)
		if (strlen(vs->buses[i].id) == len - 2 && !strncmp(vs->buses[i].id, v, len - 2))
			return (int)i;
	return -1;
}

static int port_prop(struct vmm_config *cfg, struct vserport_spec *p, const char *key,
		     const char *v, char *err, size_t errlen)
{
	uint64_t n;
	int bus;

	if (!strcmp(key, "id"))
		return copy_str(p->id, sizeof(p->id), v) ? 0 : 1;
	if (!strcmp(key, "name"))
		return copy_str(p->name, sizeof(p->name), v) ? 0 : 1;
	if (!strcmp(key, "nr")) {
		if (!v || cli_parse_u64(v, &n) < 0 || n >= CLI_VSERIAL_MAX_PORTS)
			return 1;
		p->nr = (int)n;
		return 0;
	}
	if (!strcmp(key, "bus")) {
		bus = v ? find_bus(&cfg->vserial, v) : -1;
		if (bus < 0) {
			snprintf(err, errlen,
				 "no virtio-serial bus '%s' (give -device "
				 "virtio-serial-pci,id=NAME first; the bus is NAME.0)",
				 v ? v : "");
			return -1;
		}
		p->bus = (unsigned)bus;
		return 0;
	}
	if (!strcmp(key, "chardev"))
		return v && p->chr.kind == CHARDEV_NONE
			       ? cli_chardev_lookup(cfg, v, &p->chr, err, errlen)
			       : 1;
	return 1;
}

int cli_parse_vserport_spec(struct vmm_config *cfg, const char *name, char *props,
			    struct vserport_spec *p, char *err, size_t errlen)
{
	char *key, *v;

	*p = (struct vserport_spec){.nr = -1, .console = !strcmp(name, "virtconsole")};
	if (!cfg->vserial.n_buses) {
		snprintf(err, errlen,
			 "%s: no virtio-serial bus (give -device virtio-serial-pci "
			 "first)",
			 name);
		return -1;
	}
	while (props && cli_next_kv(&props, &key, &v)) {
		int r = port_prop(cfg, p, key, v, err, errlen);

		if (r > 0)
			snprintf(err, errlen, "%s: invalid %s '%s' (%s)", name, key, v ? v : "",
				 PORT_HELP);
		if (r)
			return -1;
	}
	return 0;
}

int cli_parse_vserport(struct vmm_config *cfg, const char *name, char *props, char *err,
		       size_t errlen)
{
	struct vserial_config *vs = &cfg->vserial;
	struct vserport_spec p;

	if (cli_parse_vserport_spec(cfg, name, props, &p, err, errlen) < 0)
		return -1;
	if (vs->n_ports == CLI_MAX_VSERPORTS) {
		snprintf(err, errlen, "too many virtio-serial ports (at most %d)",
			 CLI_MAX_VSERPORTS);
		return -1;
	}
	vs->ports[vs->n_ports++] = p;
	return 0;
}

static bool nr_taken(const struct vserial_config *vs, unsigned bus, int nr)
{
	for (unsigned i = 0; i < vs->n_ports; i++)
		if (vs->ports[i].bus == bus && vs->ports[i].nr == nr)
			return true;
	return false;
}

/* Port i's nr=, given: checked against its bus and the other ports. */
static int check_nr(struct vserial_config *vs, unsigned i, char *err, size_t errlen)
{
	struct vserport_spec *p = &vs->ports[i];
	const char *what = p->console ? "virtconsole" : "virtserialport";
	int nr = p->nr;

	if (nr == 0 && !p->console) {
		snprintf(err, errlen, "%s: port number 0 is kept for a virtconsole", what);
		return -1;
	}
	if ((unsigned)nr >= vs->buses[p->bus].max_ports) {
		snprintf(err, errlen, "%s: nr=%d is not below the bus's max_ports %u", what, nr,
			 vs->buses[p->bus].max_ports);
		return -1;
	}
	p->nr = -1;
	if (nr_taken(vs, p->bus, nr)) {
		snprintf(err, errlen, "%s: port number %d is already in use", what, nr);
		return -1;
	}
	p->nr = nr;
	return 0;
}

/* Port i without nr=: the lowest free number (0 for a console). */
static int give_nr(struct vserial_config *vs, unsigned i, char *err, size_t errlen)
{
	struct vserport_spec *p = &vs->ports[i];
	int nr = p->console && !nr_taken(vs, p->bus, 0) ? 0 : 1;

	while ((unsigned)nr < vs->buses[p->bus].max_ports && nr_taken(vs, p->bus, nr))
		nr++;
	if ((unsigned)nr >= vs->buses[p->bus].max_ports) {
		snprintf(err, errlen, "virtio-serial bus %s.0 is full (max_ports %u)",
			 vs->buses[p->bus].id, vs->buses[p->bus].max_ports);
		return -1;
	}
	p->nr = nr;
	return 0;
}

/* The explicit numbers first (checked), then the free ones handed out in
 * command-line order. */
int cli_resolve_vserial(struct vmm_config *cfg, char *err, size_t errlen)
{
	struct vserial_config *vs = &cfg->vserial;

	for (unsigned i = 0; i < vs->n_ports; i++)
		if (vs->ports[i].nr >= 0 && check_nr(vs, i, err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < vs->n_ports; i++)
		if (vs->ports[i].nr < 0 && give_nr(vs, i, err, errlen) < 0)
			return -1;
	return 0;
}

int cli_resolve_vserport(struct vmm_config *cfg, unsigned i, char *err, size_t errlen)
{
	struct vserial_config *vs = &cfg->vserial;

	return vs->ports[i].nr >= 0 ? check_nr(vs, i, err, errlen) : give_nr(vs, i, err, errlen);
}
