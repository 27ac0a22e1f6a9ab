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
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/virtio.h"
#include "vmm/machine.h"
#include "wlan/wlan.h"

struct wlan_radio_dev {
	struct virtio_hwsim *dev;
	struct wlan_port *port;	  /* a medium in this process */
	struct wlan_relay *relay; /* or the daemon's */
	const struct wlan_medium_spec *spec;
	struct wlan_vif_log vifs; /* a daemon's radios (the I/O thread notes) */
	bool handed_over;	  /* its relay closed: the destination has it */
};

struct vmm_wlan {
	struct wlan_medium *media[CLI_MAX_WLAN]; /* NULL for a daemon's */
	const struct wlan_config *cfg;
	struct wlan_radio_dev devs[CLI_MAX_WLAN];
	unsigned n_devs;
};

static void guest_sent(void *opaque, const void *msg, size_t len)
{
	struct wlan_radio_dev *d = opaque;

	if (d->port) {
		wlan_port_input(d->port, msg, len);
	} else {
		wlan_vif_log_note(&d->vifs, msg, len);
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

/* A radio's connection to the wlan-medium daemon (socket=): NULL with err. */
static struct wlan_relay *connect_relay(struct wlan_radio_dev *d, char *err, size_t errlen)
{
	char why[256];
	struct wlan_relay *r = wlan_relay_connect(d->spec->socket, to_guest, d, why, sizeof(why));

	if (!r)
		snprintf(err, errlen, "-object wlan-medium,id=%s: %s", d->spec->id, why);
	return r;
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
		d->relay = connect_relay(d, err, errlen);
		return d->relay ? 0 : -1;
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
	for (unsigned i = 0; i < wl->n_devs; i++) {
		snprintf(name, sizeof(name), "wlan-relay@%u", i);
		if (wl->devs[i].relay)
			wlan_vif_log_save(&wl->devs[i].vifs, w, name);
	}
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
	/* tell the daemon, on this process's connection, what the radio told it */
	for (unsigned i = 0; i < wl->n_devs; i++) {
		snprintf(name, sizeof(name), "wlan-relay@%u", i);
		if (!wl->devs[i].relay)
			continue;
		if (wlan_vif_log_load(&wl->devs[i].vifs, devs, name, err, errlen) < 0)
			return -1;
		wlan_vif_log_replay(&wl->devs[i].vifs, wl->devs[i].relay);
	}
	return 0;
}

/* A completed migration: the daemon's radios are the destination's now.
 * This process's connections close, so the daemon forgets their radios
 * at once instead of delivering to a stopped guest until it exits. */
void vmm_wlan_hand_over(struct machine *m)
{
	for (unsigned i = 0; m->wlan && i < m->wlan->n_devs; i++) {
		struct wlan_radio_dev *d = &m->wlan->devs[i];

		if (d->relay && !d->handed_over) {
			wlan_relay_close(d->relay);
			d->handed_over = true;
		}
	}
}

/* `cont` after a completed migration takes the guest back: each radio
 * connects again and tells the daemon its addresses. The queues are still
 * frozen, so no I/O thread sends on the relay being replaced. */
int vmm_wlan_take_back(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; m->wlan && i < m->wlan->n_devs; i++) {
		struct wlan_radio_dev *d = &m->wlan->devs[i];
		struct wlan_relay *r;

		if (!d->handed_over)
			continue;
		r = connect_relay(d, err, errlen);
		if (!r)
			return -1;
		wlan_relay_free(d->relay);
		d->relay = r;
		d->handed_over = false;
		wlan_vif_log_replay(&d->vifs, r);
	}
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
