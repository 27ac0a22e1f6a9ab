/* hotplug.c — run-time device_add and device_del (QMP and HMP), the
 * drives and network backends they use (drive_add, blockdev-add,
 * blockdev-del, netdev_add, netdev_del), and the native PCIe hot-plug
 * that carries them out.
 *
 * A virtio-blk-pci, virtio-net-pci or virtio-rng-pci goes into an empty
 * pcie-root-port: the same parsers as the command line's -device,
 * -drive/-blockdev, -netdev and -object add it to the configuration (an
 * rng's source comes from object-add), the board builds it behind the port,
 * and the port reports the new presence to the guest (pciehp powers the
 * slot on and enumerates it). device_del presses the port's attention
 * button; when the guest has powered the slot off, the device is freed on
 * the main thread and DEVICE_DELETED is sent, as QEMU does. A slot the
 * guest never powered on is emptied at once. Devices on the root bus
 * (and every other device model) are not hot-pluggable. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/virtio/virtio.h"
#include "vmm/machine.h"
#include "vmm/vserial.h"

static const char *root_bus_name(const struct machine *m)
{
	return m->cfg->q35 ? "pcie.0" : "pci.0";
}

/* A present hot-pluggable device: a virtio-blk-pci (m->vblk[i]), a
 * virtio-net-pci (m->nics[i]) or a virtio-rng-pci (m->rng[i]). */
enum hp_kind { HP_BLK, HP_NIC, HP_RNG };

struct hp_dev {
	enum hp_kind kind;
	unsigned i;
};

static bool present(const struct machine *m, struct hp_dev d)
{
	return d.kind == HP_BLK	  ? m->vblk[d.i]
	       : d.kind == HP_NIC ? (void *)m->nics[d.i]
				  : (void *)m->rng[d.i];
}

static char *device_id(const struct machine *m, struct hp_dev d)
{
	struct vmm_config *cfg = m->cfg_rw;

	return d.kind == HP_BLK	  ? cfg->vblk[d.i].id
	       : d.kind == HP_NIC ? cfg->nics[d.i].id
				  : cfg->rng.devs[d.i].id;
}

static const char *device_bus(const struct machine *m, struct hp_dev d)
{
	return d.kind == HP_BLK	  ? m->cfg->vblk[d.i].bus
	       : d.kind == HP_NIC ? m->cfg->nics[d.i].bus
				  : m->cfg->rng.devs[d.i].bus;
}

static unsigned *kind_count_p(const struct machine *m, enum hp_kind k)
{
	struct vmm_config *cfg = m->cfg_rw;

	return k == HP_BLK ? &cfg->n_vblk : k == HP_NIC ? &cfg->n_nics : &cfg->rng.n_devs;
}

static unsigned kind_count(const struct machine *m, enum hp_kind k)
{
	return *kind_count_p(m, k);
}

static bool find_device(const struct machine *m, const char *id, struct hp_dev *d)
{
	for (enum hp_kind k = HP_BLK; id[0] && k <= HP_RNG; k++)
		for (unsigned i = 0; i < kind_count(m, k); i++) {
			struct hp_dev c = {k, i};

			if (present(m, c) && !strcmp(device_id(m, c), id)) {
				*d = c;
				return true;
			}
		}
	return false;
}

/* Holes: table entries an earlier removal emptied (remove_device,
 * netdev_del, blockdev-del clear the id and free what they held). */
static bool vblk_hole(const struct machine *m, unsigned j)
{
	return !m->vblk[j] && !m->vdisks[j] && !m->cfg->vblk[j].id[0];
}

static bool nic_hole(const struct machine *m, unsigned j)
{
	return !m->nics[j] && !m->cfg->nics[j].id[0];
}

static bool rng_hole(const struct machine *m, unsigned j)
{
	return !m->rng[j] && !m->cfg->rng.devs[j].id[0];
}

static bool netdev_hole(const struct machine *m, unsigned j)
{
	return !m->netdevs[j] && !m->cfg->netdevs[j].id[0];
}

static bool vdrive_hole(const struct machine *m, unsigned j)
{
	const struct drive_spec *s = &m->cfg->vdrives[j];

	return s->iface == DRIVE_IF_NONE && !s->file && !s->id[0] && !s->node_file[0];
}

/* Add and remove cycles (libvirt's attach-device and detach-device, over
 * and over) must not use up the configuration's fixed tables: the entry
 * just parsed at index n of table (entries of size bytes, *count of them)
 * moves into the first hole below it, and the table shrinks back. Its
 * index now. */
static unsigned take_hole(const struct machine *m, void *table, size_t size, unsigned *count,
			  unsigned n, bool (*hole)(const struct machine *, unsigned))
{
	for (unsigned j = 0; j < n; j++)
		if (hole(m, j)) {
			memcpy((char *)table + j * size, (char *)table + n * size, size);
			memset((char *)table + n * size, 0, size);
			*count = n;
			return j;
		}
	return n;
}

/* A failed add: entry i of a table that had n entries goes again (a hole
 * it filled becomes one again). */
static void drop_entry(char *id, unsigned *count, unsigned i, unsigned n)
{
	if (i < n)
		id[0] = 0;
	else
		*count = n;
}

/* QEMU's rule for ids: a letter, then letters, digits, '-', '.', '_'
 * (DEVICE_DELETED carries it into JSON as it is). */
static bool valid_id(const char *id)
{
	if (!isalpha((unsigned char)id[0]))
		return false;
	for (; *id; id++)
		if (!isalnum((unsigned char)*id) && !strchr("-._", *id))
			return false;
	return true;
}

/* The checks every new device passes: its id, its bus (an empty root
 * port, device 0). The port's index, or -1 with err. */
static int check_place(struct machine *m, const char *id, const char *bus, int devfn, char *err,
		       size_t errlen)
{
	struct hp_dev other;
	int port;

	if (!id[0]) {
		snprintf(err, errlen, "device_add needs id= (device_del names it)");
		return -1;
	}
	if (!valid_id(id)) {
		snprintf(err, errlen, "Parameter 'id' expects an identifier");
		return -1;
	}
	if (find_device(m, id, &other) || cli_find_root_port(m->cfg, id) >= 0) {
		snprintf(err, errlen, "Duplicate device ID '%s' for device", id);
		return -1;
	}
	if (!bus[0]) {
		snprintf(err, errlen, "Bus '%s' does not support hotplugging", root_bus_name(m));
		return -1;
	}
	port = cli_find_root_port(m->cfg, bus);
	if (port < 0 || !m->root_ports[port]) {
		snprintf(err, errlen, "Bus '%s' not found", bus);
		return -1;
	}
	if (devfn > 0 || pci_bus_find(pcie_root_port_bus(m->root_ports[port]), 0) ||
	    pcie_root_port_unplug_pending(m->root_ports[port])) {
		snprintf(err, errlen, "Bus '%s': its slot is not free (a root port has one)", bus);
		return -1;
	}
	return port;
}

/* The if=none drive or block node named id, unused by a present device:
 * its index, or -1 with err. */
static int free_drive(const struct machine *m, const char *id, char *err, size_t errlen)
{
	const struct vmm_config *cfg = m->cfg;

	for (unsigned d = 0; cfg && d < cfg->n_vdrives; d++) {
		if (!cfg->vdrives[d].file || strcmp(cfg->vdrives[d].id, id) ||
		    cfg->vdrives[d].iface != DRIVE_IF_NONE)
			continue;
		for (unsigned i = 0; i < cfg->n_vblk; i++)
			if (m->vblk[i] && cfg->vblk[i].drive == d) {
				snprintf(err, errlen, "Drive '%s' is already in use", id);
				return -1;
			}
		return (int)d;
	}
	snprintf(err, errlen, "Property 'virtio-blk-device.drive' can't find value '%s'", id);
	return -1;
}

/* The open netdev named id no present NIC uses: its index, or -1. */
static int free_netdev(const struct machine *m, const char *id, char *err, size_t errlen)
{
	for (unsigned n = 0; n < m->cfg->n_netdevs; n++) {
		if (!m->netdevs[n] || strcmp(m->cfg->netdevs[n].id, id))
			continue;
		for (unsigned k = 0; k < m->cfg->n_nics; k++)
			if (m->nics[k] && m->cfg->nics[k].netdev == n) {
				snprintf(err, errlen, "Netdev '%s' is already in use", id);
				return -1;
			}
		return (int)n;
	}
	snprintf(err, errlen, "Property 'virtio-net-pci.netdev' can't find value '%s'", id);
	return -1;
}

/* cfg->vblk[n], just parsed: checked, its disk opened, built. */
static int add_blk(struct machine *m, unsigned n, char *err, size_t errlen)
{
	struct virtio_blk_spec *v = &m->cfg_rw->vblk[n];
	int port = check_place(m, v->id, v->bus, v->devfn, err, errlen), d;

	d = port < 0 ? -1 : free_drive(m, v->drive_id, err, errlen);
	if (d < 0)
		return -1;
	v->drive = (unsigned)d;
	v->devfn = 0;
	v->bootindex = -1; /* the firmware has run */
	if (board_add_virtio_blk(m, n, err, errlen) < 0) {
		block_close(m->vdisks[n]);
		m->vdisks[n] = NULL;
		return -1;
	}
	return port;
}

/* cfg->nics[n], just parsed: checked and built on its netdev. */
static int add_nic(struct machine *m, unsigned n, char *err, size_t errlen)
{
	struct nic_spec *s = &m->cfg_rw->nics[n];
	int port = check_place(m, s->id, s->bus, s->devfn, err, errlen), d;

	d = port < 0 ? -1 : free_netdev(m, s->netdev_id, err, errlen);
	if (d < 0)
		return -1;
	s->netdev = (unsigned)d;
	s->devfn = 0;
	if (!s->mac_given) /* QEMU's default: 52:54:00:12:34:56 + N */
		memcpy(s->mac, (uint8_t[6]){0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t)(0x56 + n)}, 6);
	return net_add_nic(m, n, err, errlen) < 0 ? -1 : port;
}

/* cfg->rng.devs[n], just parsed: checked and built on its rng= object
 * (or a builtin source of its own). */
static int add_rng(struct machine *m, unsigned n, char *err, size_t errlen)
{
	struct rng_dev_spec *d = &m->cfg_rw->rng.devs[n];
	int port = check_place(m, d->id, d->bus, d->devfn, err, errlen);

	if (port < 0)
		return -1;
	d->object = d->rng[0] ? cli_find_rng_object(&m->cfg->rng, d->rng) : -1;
	if (d->rng[0] && d->object < 0) {
		snprintf(err, errlen, "Property 'virtio-rng-pci.rng' can't find value '%s'",
			 d->rng);
		return -1;
	}
	d->devfn = 0;
	return board_add_virtio_rng(m, n, err, errlen) < 0 ? -1 : port;
}

/* Parse props for a new device of kind k into the first hole of its
 * table and build it: the root port's index, or -1 (the entry dropped). */
static int add_kind(struct machine *m, enum hp_kind k, char *props, char *err, size_t errlen)
{
	struct vmm_config *cfg = m->cfg_rw;
	unsigned n = kind_count(m, k), i;
	int port;

	switch (k) {
	case HP_BLK:
		if (cli_parse_virtio_blk(cfg, props, err, errlen) < 0)
			return -1;
		i = take_hole(m, cfg->vblk, sizeof(cfg->vblk[0]), &cfg->n_vblk, n, vblk_hole);
		port = add_blk(m, i, err, errlen);
		break;
	case HP_NIC:
		if (cli_parse_virtio_net(cfg, props, err, errlen) < 0)
			return -1;
		i = take_hole(m, cfg->nics, sizeof(cfg->nics[0]), &cfg->n_nics, n, nic_hole);
		port = add_nic(m, i, err, errlen);
		break;
	default:
		if (cli_parse_virtio_rng(cfg, props, err, errlen) < 0)
			return -1;
		i = take_hole(m, cfg->rng.devs, sizeof(cfg->rng.devs[0]), &cfg->rng.n_devs, n,
			      rng_hole);
		port = add_rng(m, i, err, errlen);
		break;
	}
	if (port < 0)
		drop_entry(device_id(m, (struct hp_dev){k, i}), kind_count_p(m, k), i, n);
	return port;
}

/* key='s value in props (key=value,...) into out: false when absent. */
static bool prop_value(const char *props, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);

	for (const char *p = props; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			snprintf(out, len, "%.*s", (int)strcspn(p + klen + 1, ","), p + klen + 1);
			return true;
		}
	return false;
}

/* A virtio-serial port: on its bus, no PCI slot (vserial.c). */
static int add_vserport(struct machine *m, const char *driver, char *props, char *err,
			size_t errlen)
{
	struct hp_dev other;
	char id[32];

	if (prop_value(props, "id", id, sizeof(id)) &&
	    (find_device(m, id, &other) || cli_find_root_port(m->cfg, id) >= 0)) {
		snprintf(err, errlen, "Duplicate device ID '%s' for device", id);
		return -1;
	}
	return vmm_vserial_device_add(m, driver, props, err, errlen);
}

/* props: the properties after the driver name, key=value,... */
int machine_device_add(struct machine *m, const char *driver, const char *props, char *err,
		       size_t errlen)
{
	const struct cli_device_help *h = cli_device_help_find(driver);
	static const char *const models[] = {"virtio-blk-pci", "virtio-net-pci", "virtio-rng-pci"};
	enum hp_kind k = HP_BLK;
	char buf[512];
	int port;

	if (h)
		driver = h->name; /* virtio-blk: virtio-blk-pci */
	if (!h || !m->cfg_rw || !m->board_ready) {
		snprintf(err, errlen, "'%s' is not a valid device model name", driver);
		return -1;
	}
	if (snprintf(buf, sizeof(buf), "%s", props) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "properties too long");
		return -1;
	}
	if (!strcmp(driver, "virtserialport") || !strcmp(driver, "virtconsole"))
		return add_vserport(m, driver, buf, err, errlen);
	while (k <= HP_RNG && strcmp(driver, models[k]))
		k++;
	if (k > HP_RNG) {
		snprintf(err, errlen,
			 "Device '%s' cannot be hot-plugged (vmm hot-plugs virtio-blk-pci, "
			 "virtio-net-pci, virtio-rng-pci, virtserialport and virtconsole)",
			 driver);
		return -1;
	}
	port = add_kind(m, k, buf, err, errlen);
	if (port < 0)
		return -1;
	m->hotplug_changed = true;
	pcie_root_port_plugged(m->root_ports[port]);
	return 0;
}

/* Main thread: free the device and report it. */
static void remove_device(struct machine *m, struct hp_dev d)
{
	int port = cli_find_root_port(m->cfg, device_bus(m, d));
	char *idp = device_id(m, d);
	char id[32];

	machine_pause(m);
	if (d.kind == HP_NIC) {
		virtio_net_free(m->nics[d.i]);
		m->nics[d.i] = NULL;
	} else if (d.kind == HP_RNG) {
		virtio_rng_free(m->rng[d.i]); /* closes its copy of the source */
		m->rng[d.i] = NULL;
	} else {
		struct drive_spec *drv = &m->cfg_rw->vdrives[m->cfg->vblk[d.i].drive];

		virtio_blk_free(m->vblk[d.i]);
		m->vblk[d.i] = NULL;
		block_close(m->vdisks[d.i]);
		m->vdisks[d.i] = NULL;
		/* A -drive or drive_add drive goes with its device, as in QEMU
		 * (blockdev-add nodes stay until blockdev-del). */
		if (drv->iface == DRIVE_IF_NONE && !drv->node_file[0]) {
			drv->id[0] = 0;
			drv->file = NULL;
		}
	}
	machine_resume(m);
	m->hotplug_changed = true;
	if (port >= 0 && m->root_ports[port])
		pcie_root_port_unplugged(m->root_ports[port]);
	snprintf(id, sizeof(id), "%s", idp);
	idp[0] = 0; /* the id, the drive or netdev are free again */
	machine_event(m, "DEVICE_DELETED", "{\"device\": \"%s\", \"path\": \"/machine/peripheral/%s\"}",
		      id, id);
}

/* The guest powered off a slot whose device device_del asked for. */
static void eject_on_main(void *opaque)
{
	struct hotplug_port *hp = opaque;
	struct machine *m = hp->m;
	const char *port_id = m->cfg->root_ports[hp->index].id;

	for (enum hp_kind k = HP_BLK; k <= HP_RNG; k++)
		for (unsigned i = 0; i < kind_count(m, k); i++) {
			struct hp_dev d = {k, i};

			if (present(m, d) && !strcmp(device_bus(m, d), port_id))
				remove_device(m, d);
		}
}

static void eject_requested(void *opaque, struct pcie_root_port *rp)
{
	struct hotplug_port *hp = opaque;

	if (evloop_call(hp->m->host.loop, eject_on_main, hp) < 0)
		fprintf(stderr, "vmm: hot-unplug: could not reach the main thread\n");
}

/* System reset (main thread, vCPUs paused): a removal the guest never
 * finished completes, as in QEMU, and each slot's power is as at start. */
static void hotplug_reset(void *opaque)
{
	struct machine *m = opaque;

	for (unsigned i = 0; i < CLI_MAX_ROOT_PORTS; i++) {
		if (!m->root_ports[i])
			continue;
		if (pcie_root_port_unplug_pending(m->root_ports[i]))
			eject_on_main(&m->hotplug[i]);
		pcie_root_port_update_slot(m->root_ports[i]);
	}
}

void machine_hotplug_wire(struct machine *m)
{
	for (unsigned i = 0; i < CLI_MAX_ROOT_PORTS; i++) {
		if (!m->root_ports[i])
			continue;
		m->hotplug[i] = (struct hotplug_port){m, i};
		pcie_root_port_set_eject(m->root_ports[i], eject_requested, &m->hotplug[i]);
	}
	if (m->cfg->n_root_ports && dev_on_reset(&m->host, hotplug_reset, m) < 0)
		fprintf(stderr, "vmm: warning: no reset hook left for the root ports' slots\n");
}

int machine_device_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	struct hp_dev d;
	int port, r;

	if (!find_device(m, id, &d)) {
		if (vmm_vserial_device_del(m, id) == 0)
			return 0;
		snprintf(err, errlen, "Device '%s' not found", id);
		return -ENOENT;
	}
	port = cli_find_root_port(m->cfg, device_bus(m, d));
	if (port < 0 || !m->root_ports[port]) {
		snprintf(err, errlen, "Bus '%s' does not support hotplugging", root_bus_name(m));
		return -EINVAL;
	}
	if (pcie_root_port_unplug_pending(m->root_ports[port])) {
		snprintf(err, errlen, "Device %s is already in the process of unplug", id);
		return -EBUSY;
	}
	r = pcie_root_port_request_unplug(m->root_ports[port]);
	if (r == -EBUSY) {
		snprintf(err, errlen, "Hot-unplug failed: guest is busy (power indicator blinking)");
		return r;
	}
	if (r == 1)
		remove_device(m, d);
	return 0;
}

/* ---------------------------------------------------------- netdevs */

/* val: -netdev's TYPE,id=ID,... */
int machine_netdev_add(struct machine *m, const char *val, char *err, size_t errlen)
{
	struct vmm_config *cfg = m->cfg_rw;
	unsigned n = cfg ? cfg->n_netdevs : 0, i;

	if (!cfg || !m->board_ready) {
		snprintf(err, errlen, "There is no guest");
		return -1;
	}
	if (cli_parse_netdev(cfg, val, err, errlen) < 0)
		return -1;
	i = take_hole(m, cfg->netdevs, sizeof(cfg->netdevs[0]), &cfg->n_netdevs, n, netdev_hole);
	if (net_open_netdev(m, i, false, err, errlen) < 0) {
		drop_entry(cfg->netdevs[i].id, &cfg->n_netdevs, i, n);
		return -1;
	}
	return 0;
}

int machine_netdev_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	int n = m->cfg_rw ? free_netdev(m, id, err, errlen) : -1;

	if (n < 0) {
		if (strstr(err, "can't find"))
			snprintf(err, errlen, "Device '%s' not found", id);
		return -1;
	}
	netdev_free(m->netdevs[n]);
	m->netdevs[n] = NULL;
	m->cfg_rw->netdevs[n].id[0] = 0;
	return 0;
}

/* ---------------------------------------------------------- objects */

/* object-add: the rng-random / rng-builtin source a virtio-rng-pci's
 * rng= names (what libvirt sends before device_add of an <rng>). */
int machine_object_add(struct machine *m, const char *type, const char *props, char *err,
		       size_t errlen)
{
	if (!m->cfg_rw || !m->board_ready) {
		snprintf(err, errlen, "There is no guest");
		return -1;
	}
	return cli_add_rng_object(m->cfg_rw, type, props, err, errlen) < 0 ? -1 : 0;
}

int machine_object_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	struct vmm_config *cfg = m->cfg_rw;
	int o = cfg ? cli_find_rng_object(&cfg->rng, id) : -1;

	if (o < 0) {
		snprintf(err, errlen, "object '%s' not found", id);
		return -ENOENT;
	}
	/* As in QEMU, a device using it keeps it: each device reads its own
	 * copy of the source's file (board_add_virtio_rng). */
	for (unsigned i = 0; i < cfg->rng.n_devs; i++)
		if (cfg->rng.devs[i].object == o)
			cfg->rng.devs[i].object = -1;
	cli_remove_rng_object(cfg, (unsigned)o);
	return 0;
}

/* ------------------------------------------------------------ drives */

/* Whether the comma-separated opts hold the item kv. */
static bool has_option(const char *opts, const char *kv)
{
	size_t len = strlen(kv);

	for (const char *p = opts; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, kv, len) && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

/* A drive just parsed at n (the table had n entries) into the first hole
 * below; its file name lives in the entry itself. */
static void drive_take_hole(struct machine *m, unsigned n)
{
	struct vmm_config *cfg = m->cfg_rw;
	bool own = cfg->vdrives[n].file == cfg->vdrives[n].file_buf;
	unsigned i;

	if (cfg->n_vdrives != n + 1 || cfg->vdrives[n].iface != DRIVE_IF_NONE)
		return;
	i = take_hole(m, cfg->vdrives, sizeof(cfg->vdrives[0]), &cfg->n_vdrives, n, vdrive_hole);
	if (own)
		cfg->vdrives[i].file = cfg->vdrives[i].file_buf;
}

int machine_drive_add(struct machine *m, const char *opts, char *err, size_t errlen)
{
	struct vmm_config *cfg = m->cfg_rw;
	unsigned n = cfg ? cfg->n_vdrives : 0;

	/* a drive of its own device (if=virtio, if=ide) is not hot-plugged */
	if (!cfg || !has_option(opts, "if=none")) {
		snprintf(err, errlen, "drive_add: only if=none drives (for device_add)");
		return -1;
	}
	if (cli_parse_drive(cfg, opts, err, errlen) < 0)
		return -1;
	if (cfg->n_vdrives != n + 1 || cfg->vdrives[n].iface != DRIVE_IF_NONE) {
		snprintf(err, errlen, "drive_add: only if=none drives (for device_add)");
		cfg->n_vdrives = n;
		return -1;
	}
	drive_take_hole(m, n);
	return 0;
}

int machine_blockdev_add(struct machine *m, const char *json, char *err, size_t errlen)
{
	unsigned n = m->cfg_rw ? m->cfg_rw->n_vdrives : 0;

	if (!m->cfg_rw) {
		snprintf(err, errlen, "There is no guest");
		return -1;
	}
	if (cli_parse_blockdev(m->cfg_rw, NULL, json, err, errlen) < 0)
		return -1;
	drive_take_hole(m, n); /* a format node goes onto its file node's entry */
	return 0;
}

/* A format node leaves its file node; a file node (or a drive_add drive)
 * goes. Not while a device uses it. */
int machine_blockdev_del(struct machine *m, const char *node, char *err, size_t errlen)
{
	struct vmm_config *cfg = m->cfg_rw;

	for (unsigned d = 0; cfg && d < cfg->n_vdrives; d++) {
		struct drive_spec *s = &cfg->vdrives[d];
		bool format = !strcmp(s->id, node) && s->node_file[0] && strcmp(s->node_file, node);

		if (s->iface != DRIVE_IF_NONE || !s->file ||
		    (strcmp(s->id, node) && strcmp(s->node_file, node)))
			continue;
		for (unsigned i = 0; i < cfg->n_vblk; i++)
			if (m->vblk[i] && cfg->vblk[i].drive == d) {
				snprintf(err, errlen, "Node '%s' is busy: in use by device '%s'",
					 node, cfg->vblk[i].id);
				return -1;
			}
		if (format) {
			strcpy(s->id, s->node_file);
			s->format = DRIVE_FORMAT_RAW;
		} else if (!strcmp(s->id, node)) {
			s->id[0] = s->node_file[0] = 0;
			s->file = NULL;
		} else {
			snprintf(err, errlen, "Node '%s' is busy: format node '%s' is on it", node,
				 s->id);
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "Failed to find node with node-name='%s'", node);
	return -1;
}

/* --------------------------------------------------------------- HMP */

/* device_add DRIVER,prop=value,... */
/* "NAME,props": NAME into name (size bytes), *props after the comma
 * ("" without one). False when NAME is empty or too long. */
static bool split_name(const char *arg, char *name, size_t size, const char **props)
{
	size_t len = strcspn(arg, ",");

	if (len == 0 || len >= size)
		return false;
	memcpy(name, arg, len);
	name[len] = 0;
	*props = arg[len] ? arg + len + 1 : "";
	return true;
}

void hmp_device_add(struct machine *m, int argc, char **argv, FILE *out)
{
	char driver[64], err[256];
	const char *props;

	if (argc != 2 || !split_name(argv[1], driver, sizeof(driver), &props)) {
		fprintf(out, "usage: device_add DRIVER,prop=value,...\n");
		return;
	}
	if (machine_device_add(m, driver, props, err, sizeof(err)) < 0)
		fprintf(out, "Error: %s\n", err);
}

/* netdev_add TYPE,id=ID,... / netdev_del ID */
void hmp_netdev(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	char err[256];

	if (argc != 2)
		fprintf(out, add ? "usage: netdev_add user|tap,id=ID,...\n" : "usage: netdev_del ID\n");
	else if ((add ? machine_netdev_add(m, argv[1], err, sizeof(err))
		      : machine_netdev_del(m, argv[1], err, sizeof(err))) < 0)
		fprintf(out, "Error: %s\n", err);
}

void hmp_device_del(struct machine *m, int argc, char **argv, FILE *out)
{
	char err[256];

	if (argc != 2)
		fprintf(out, "usage: device_del ID\n");
	else if (machine_device_del(m, argv[1], err, sizeof(err)) < 0)
		fprintf(out, "Error: %s\n", err);
}

/* object_add TYPE,id=ID,... / object_del ID */
void hmp_object(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	char type[32], err[256];
	const char *props = "";

	if (argc != 2 || (add && !split_name(argv[1], type, sizeof(type), &props))) {
		fprintf(out,
			add ? "usage: object_add rng-random|rng-builtin,id=ID[,filename=PATH]\n"
			    : "usage: object_del ID\n");
		return;
	}
	if ((add ? machine_object_add(m, type, props, err, sizeof(err))
		 : machine_object_del(m, argv[1], err, sizeof(err))) < 0)
		fprintf(out, "Error: %s\n", err);
}

/* drive_add PCI-ADDR file=...,if=none,id=...: the address is QEMU's
 * (for its legacy if=pci drives) and not used. */
void hmp_drive_add(struct machine *m, int argc, char **argv, FILE *out)
{
	char err[256];

	if (argc != 3)
		fprintf(out, "usage: drive_add DUMMY file=PATH,if=none,id=ID[,format=F]\n");
	else if (machine_drive_add(m, argv[2], err, sizeof(err)) < 0)
		fprintf(out, "Error: %s\n", err);
	else
		fprintf(out, "OK\n");
}
