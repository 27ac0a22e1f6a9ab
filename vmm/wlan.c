/* wlan.c — the machine's virtual WLAN: each -object wlan-medium becomes a
 * medium in this process (wlan/) or a link to the wlan-medium
 * daemon (socket=), each -device virtio-wlan-pci a radio device on it; the
 * monitor gets wlan_country, wlan_regdb_reload, wlan_radar, info wlan and
 * info regdomain. The machine has one regulatory domain: wlan_country
 * sets it on every medium at once.
 *
 * Migration: the devices are saved with the other virtio devices
 * (migration_virtio.c, `virtio-wlan@N`), a medium in this process as
 * `wlan-medium@N` with its radios (wlan/medium_state.c). A daemon's medium
 * is the daemon's to keep; what a radio told it once, its interface
 * addresses (HWSIM_CMD_ADD_MAC_ADDR), is remembered here (`wlan-relay@N`)
 * and told again on the destination's own connection, or unicast frames
 * to those addresses would stop reaching the guest. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/virtio.h"
#include "state/state.h"
#include "vmm/machine.h"
#include "wlan/wlan.h"

#define RELAY_VIFS 32	 /* interface addresses a daemon's radios announced */
#define RELAY_VIF_MSG 96 /* an ADD_MAC_ADDR message is 48 bytes */
#define RELAY_STATE_VERSION 1

struct relay_vif {
	uint8_t refs; /* ADDs minus DELs: hwsim adds an address again per scan */
	uint8_t len;
	uint8_t msg[RELAY_VIF_MSG]; /* the guest's own message, replayed as is */
	uint8_t hw[ETH_ALEN_WLAN], addr[ETH_ALEN_WLAN];
};

struct wlan_radio_dev {
	struct virtio_hwsim *dev;
	struct wlan_port *port;	  /* a medium in this process */
	struct wlan_relay *relay; /* or the daemon's */
	const struct wlan_medium_spec *spec;
	struct relay_vif vifs[RELAY_VIFS]; /* a daemon's radios (I/O thread) */
	unsigned n_vifs;
};

struct vmm_wlan {
	struct wlan_medium *media[CLI_MAX_WLAN]; /* NULL for a daemon's */
	const struct wlan_config *cfg;
	struct wlan_radio_dev devs[CLI_MAX_WLAN];
	unsigned n_devs;
};

/* The genl command of a hwsim message: after the 16-byte nlmsghdr. */
#define GENL_CMD_OFF 16

/* Keep the interface addresses a radio announces to the daemon. */
static void note_vif(struct wlan_radio_dev *d, const uint8_t *buf, size_t len)
{
	struct hwsim_msg msg;
	const char *why;
	unsigned i;

	if (len <= GENL_CMD_OFF || (buf[GENL_CMD_OFF] != HWSIM_CMD_ADD_MAC_ADDR &&
				    buf[GENL_CMD_OFF] != HWSIM_CMD_DEL_MAC_ADDR))
		return;
	if (hwsim_msg_parse(buf, len, &msg, &why))
		return; /* the daemon refuses it too */
	for (i = 0; i < d->n_vifs; i++)
		if (!memcmp(d->vifs[i].hw, msg.tx_addr, ETH_ALEN_WLAN) &&
		    !memcmp(d->vifs[i].addr, msg.rx_addr, ETH_ALEN_WLAN))
			break;
	if (msg.cmd == HWSIM_CMD_DEL_MAC_ADDR) {
		if (i < d->n_vifs && --d->vifs[i].refs == 0)
			d->vifs[i] = d->vifs[--d->n_vifs];
		return;
	}
	if (i < d->n_vifs) {
		d->vifs[i].refs += d->vifs[i].refs < UINT8_MAX;
		return;
	}
	if (len > RELAY_VIF_MSG || d->n_vifs == RELAY_VIFS)
		return;
	d->n_vifs++;
	d->vifs[i].refs = 1;
	d->vifs[i].len = (uint8_t)len;
	memcpy(d->vifs[i].msg, buf, len);
	memcpy(d->vifs[i].hw, msg.tx_addr, ETH_ALEN_WLAN);
	memcpy(d->vifs[i].addr, msg.rx_addr, ETH_ALEN_WLAN);
}

static void guest_sent(void *opaque, const void *msg, size_t len)
{
	struct wlan_radio_dev *d = opaque;

	if (d->port) {
		wlan_port_input(d->port, msg, len);
	} else {
		note_vif(d, msg, len);
		wlan_relay_send(d->relay, msg, len);
	}
}

static bool to_guest(void *opaque, const void *msg, size_t len)
{
	struct wlan_radio_dev *d = opaque;

	return virtio_hwsim_receive(d->dev, msg, len);
}

static struct wlan_medium *new_medium(const struct wlan_medium_spec *s, char *err, size_t errlen)
{
	struct wlan_medium_cfg c = {
		.country = s->country[0] ? s->country : NULL,
		.regdb = s->regdb[0] ? s->regdb : NULL,
		.outdoor = s->outdoor,
		.no_enforce = s->no_enforce,
		.cac_s = s->cac_s,
		.nop_s = s->nop_s,
		.txpower_dbm = s->txpower_dbm,
		.distance_m = s->distance_m,
	};
	char why[256];
	struct wlan_medium *m = wlan_medium_new(&c, why, sizeof(why));

	if (!m)
		snprintf(err, errlen, "-object wlan-medium,id=%s: %s", s->id, why);
	return m;
}

static int add_radio(struct vmm_wlan *w, struct machine *m, const struct wlan_dev_spec *ds,
		     char *err, size_t errlen)
{
	struct wlan_radio_dev *d = &w->devs[w->n_devs];
	struct virtio_hwsim_opts o = {ds->devfn, guest_sent, d};
	char why[256];

	d->spec = &w->cfg->media[ds->medium_idx];
	d->dev = virtio_hwsim_new(&m->host, m->pci, &o, why, sizeof(why));
	if (!d->dev) {
		snprintf(err, errlen, "virtio-wlan-pci: %s", why);
		return -1;
	}
	w->n_devs++; /* freed from here on */
	if (d->spec->socket[0]) {
		d->relay = wlan_relay_connect(d->spec->socket, to_guest, d, why, sizeof(why));
		if (!d->relay) {
			snprintf(err, errlen, "-object wlan-medium,id=%s: %s", d->spec->id, why);
			return -1;
		}
		return 0;
	}
	d->port = wlan_port_attach(w->media[ds->medium_idx], "vmm", to_guest, d);
	if (!d->port) {
		snprintf(err, errlen, "wlan-medium %s: too many radios", d->spec->id);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- migration */

struct virtio_pci *vmm_wlan_transport(struct machine *m, unsigned i)
{
	return m->wlan && i < m->wlan->n_devs ? virtio_hwsim_transport(m->wlan->devs[i].dev) : NULL;
}

/* The ports of medium j's radio devices, in device order. */
static unsigned medium_ports(struct vmm_wlan *w, unsigned j, struct wlan_port **ports)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->n_devs; i++)
		if (w->devs[i].port && w->devs[i].spec == &w->cfg->media[j])
			ports[n++] = w->devs[i].port;
	return n;
}

static void save_relay(struct state_writer *w, const struct wlan_radio_dev *d, unsigned i)
{
	uint8_t recs[RELAY_VIFS * (2 + RELAY_VIF_MSG)];
	size_t off = 0;
	char name[32];

	for (unsigned v = 0; v < d->n_vifs; v++) {
		recs[off] = d->vifs[v].refs;
		recs[off + 1] = d->vifs[v].len;
		memcpy(recs + off + 2, d->vifs[v].msg, d->vifs[v].len);
		off += 2u + d->vifs[v].len;
	}
	snprintf(name, sizeof(name), "wlan-relay@%u", i);
	state_begin(w, name, RELAY_STATE_VERSION);
	state_put_u32(w, "vif-count", d->n_vifs);
	state_put_u32(w, "vif-bytes", (uint32_t)off);
	state_put_bytes(w, "vifs", recs, off);
	state_end(w);
}

/* After the devices were saved (their queues drained and frozen: nothing
 * changes the relays' tables any more). */
void vmm_wlan_save(struct machine *m, struct state_writer *w)
{
	struct vmm_wlan *wl = m->wlan;
	struct wlan_port *ports[CLI_MAX_WLAN];
	char name[32];

	if (!wl)
		return;
	for (unsigned j = 0; j < wl->cfg->n_media; j++) {
		snprintf(name, sizeof(name), "wlan-medium@%u", j);
		if (wl->media[j])
			wlan_medium_save(wl->media[j], w, name, ports, medium_ports(wl, j, ports));
	}
	for (unsigned i = 0; i < wl->n_devs; i++)
		if (wl->devs[i].relay)
			save_relay(w, &wl->devs[i], i);
}

/* Read a relay's records into vifs (each an ADD_MAC_ADDR, checked). */
static int load_relay_vifs(struct state_node *n, struct relay_vif *vifs, uint32_t *count)
{
	uint8_t recs[RELAY_VIFS * (2 + RELAY_VIF_MSG)];
	uint32_t bytes, off = 0;

	if (state_get_u32_max(n, "vif-count", RELAY_VIFS, count) < 0 ||
	    state_get_u32_max(n, "vif-bytes", sizeof(recs), &bytes) < 0 ||
	    state_get_bytes(n, "vifs", recs, bytes) < 0)
		return -1;
	for (uint32_t v = 0; v < *count; v++) {
		struct hwsim_msg msg = {0};
		const char *why = "cut short";
		uint8_t refs = off + 1 < bytes ? recs[off] : 0;
		uint8_t len = off + 1 < bytes ? recs[off + 1] : 0;
		bool ok = refs && len && len <= RELAY_VIF_MSG && len <= bytes - off - 2 &&
			  !hwsim_msg_parse(recs + off + 2, len, &msg, &why);

		if (ok && msg.cmd != HWSIM_CMD_ADD_MAC_ADDR)
			why = "another command";
		if (!ok || msg.cmd != HWSIM_CMD_ADD_MAC_ADDR)
			return state_node_fail(n, "vif %u is not an ADD_MAC_ADDR message: %s", v,
					       why);
		vifs[v].refs = refs;
		vifs[v].len = len;
		memcpy(vifs[v].msg, recs + off + 2, len);
		memcpy(vifs[v].hw, msg.tx_addr, ETH_ALEN_WLAN);
		memcpy(vifs[v].addr, msg.rx_addr, ETH_ALEN_WLAN);
		off += 2u + len;
	}
	if (off != bytes)
		return state_node_fail(n, "%u bytes after the vifs", bytes - off);
	return state_node_close(n);
}

/* Tell the daemon, on this process's connection, what the radio told it. */
static int load_relay(struct wlan_radio_dev *d, const struct state_reader *devs, unsigned i,
		      char *err, size_t errlen)
{
	struct relay_vif vifs[RELAY_VIFS];
	struct state_node n;
	uint32_t count = 0;
	char name[32];

	snprintf(name, sizeof(name), "wlan-relay@%u", i);
	if (state_node_open(&n, devs, name, RELAY_STATE_VERSION, err, errlen) < 0 ||
	    load_relay_vifs(&n, vifs, &count) < 0)
		return -1;
	memcpy(d->vifs, vifs, count * sizeof(*vifs));
	d->n_vifs = count;
	for (unsigned v = 0; v < count; v++) /* as often as the daemon had it */
		for (unsigned k = 0; k < vifs[v].refs; k++)
			wlan_relay_send(d->relay, vifs[v].msg, vifs[v].len);
	return 0;
}

int vmm_wlan_load(struct machine *m, const struct state_reader *devs, char *err, size_t errlen)
{
	struct vmm_wlan *wl = m->wlan;
	struct wlan_port *ports[CLI_MAX_WLAN];
	char name[32];

	if (!wl)
		return 0;
	for (unsigned j = 0; j < wl->cfg->n_media; j++) {
		snprintf(name, sizeof(name), "wlan-medium@%u", j);
		if (wl->media[j] && wlan_medium_load(wl->media[j], devs, name, ports,
						     medium_ports(wl, j, ports), err, errlen) < 0)
			return -1;
	}
	for (unsigned i = 0; i < wl->n_devs; i++)
		if (wl->devs[i].relay && load_relay(&wl->devs[i], devs, i, err, errlen) < 0)
			return -1;
	return 0;
}

/* ------------------------------------------------------------ monitor */

/* The monitor's wlan_* lines go to every medium in this process. */
void vmm_wlan_cmd(void *opaque, int argc, char **argv, FILE *out)
{
	struct vmm_wlan *w = ((struct machine *)opaque)->wlan;
	char line[256];
	bool any = false;

	snprintf(line, sizeof(line), "%s %s", argv[0], argc > 1 ? argv[1] : "");
	for (unsigned i = 0; i < w->cfg->n_media; i++) {
		if (!w->media[i])
			continue;
		wlan_medium_command(w->media[i], line, out);
		any = true;
	}
	if (!any)
		fprintf(out,
			"%s: no wlan-medium in this VM (a daemon's medium is controlled "
			"on its control socket)\n",
			argv[0]);
}

void vmm_wlan_info(void *opaque, FILE *out)
{
	struct vmm_wlan *w = ((struct machine *)opaque)->wlan;

	for (unsigned i = 0; i < w->cfg->n_media; i++) {
		const struct wlan_medium_spec *s = &w->cfg->media[i];

		fprintf(out, "wlan-medium %s", s->id);
		if (w->media[i]) {
			fprintf(out, ":\n");
			wlan_medium_info(w->media[i], out);
		} else {
			fprintf(out, ": served by the wlan-medium daemon at %s\n", s->socket);
		}
	}
	for (unsigned i = 0; i < w->n_devs; i++) {
		struct virtio_hwsim_stats st;
		uint8_t devfn = virtio_pci_devfn(virtio_hwsim_transport(w->devs[i].dev));

		virtio_hwsim_stats(w->devs[i].dev, &st);
		fprintf(out,
			"virtio-wlan-pci (00:%02x.%x) on %s: %llu messages sent, %llu "
			"received, %llu oversize, %llu overflow, %llu too big for the guest\n",
			devfn >> 3, devfn & 7, w->devs[i].spec->id, (unsigned long long)st.tx,
			(unsigned long long)st.rx, (unsigned long long)st.tx_oversize,
			(unsigned long long)st.rx_overflow, (unsigned long long)st.rx_too_big);
	}
}

void vmm_wlan_info_regdomain(void *opaque, FILE *out)
{
	struct vmm_wlan *w = ((struct machine *)opaque)->wlan;

	for (unsigned i = 0; i < w->cfg->n_media; i++) {
		if (w->media[i]) { /* they all share the machine's domain */
			wlan_medium_info_regdomain(w->media[i], out);
			return;
		}
	}
	fprintf(out, "no wlan-medium in this VM\n");
}

int vmm_wlan_init(struct machine *m, char *err, size_t errlen)
{
	const struct wlan_config *c = &m->cfg->wlan;
	struct vmm_wlan *w;

	if (!c->n_media)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->cfg = c;
	m->wlan = w;
	for (unsigned i = 0; i < c->n_media; i++)
		if (!c->media[i].socket[0] &&
		    !(w->media[i] = new_medium(&c->media[i], err, errlen)))
			return -1;
	for (unsigned i = 0; i < c->n_devs; i++)
		if (add_radio(w, m, &c->devs[i], err, errlen) < 0)
			return -1;
	return 0;
}

void vmm_wlan_free(struct vmm_wlan *w)
{
	if (!w)
		return;
	/* Nothing may reach a device once it is freed: first every radio off
	 * the air (no deliveries), then the devices (their I/O threads may
	 * still send into their closed ports), then the ports. */
	for (unsigned i = 0; i < w->n_devs; i++) {
		wlan_relay_close(w->devs[i].relay);
		wlan_port_close(w->devs[i].port);
	}
	for (unsigned i = 0; i < w->n_devs; i++)
		virtio_hwsim_free(w->devs[i].dev);
	for (unsigned i = 0; i < w->n_devs; i++) {
		wlan_relay_free(w->devs[i].relay);
		wlan_port_detach(w->devs[i].port);
	}
	for (unsigned i = 0; i < CLI_MAX_WLAN; i++)
		wlan_medium_free(w->media[i]);
	free(w);
}
