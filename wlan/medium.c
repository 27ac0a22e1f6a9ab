/* medium.c — the radio medium: radios, delivery, ACK status, counters.
 *
 * A radio is (port, hardware address): the address mac80211_hwsim puts in
 * HWSIM_ATTR_ADDR_TRANSMITTER (its second address, 42:00:00:00:NN:00).
 * Two VMs' radios with the same index have the same addresses, so a radio
 * is only ever looked up within its port. A frame's addr1 names the
 * receiver by one of its interface addresses: the radio's permanent
 * address (the hardware address without the 0x40 bit) or one the guest
 * announced with HWSIM_CMD_ADD_MAC_ADDR.
 *
 * Group frames go to every other radio, unicast frames to the radios
 * owning addr1 that are on the frame's frequency (or have not sent yet);
 * the receiving driver itself drops frames for a channel it is not on, as
 * mac80211_hwsim does for HWSIM_ATTR_FREQ. A radio is "on" a frequency
 * from the first frame it sends there: that starts its DFS CAC clock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wlan/internal.h"

static const char *const drop_names[WLAN_DROP_N] = {
	[WLAN_DROP_MALFORMED] = "malformed",
	[WLAN_DROP_NO_RULE] = "no-rule",
	[WLAN_DROP_WIDTH] = "width",
	[WLAN_DROP_NO_IR] = "no-ir",
	[WLAN_DROP_DFS_PASSIVE] = "dfs-passive",
	[WLAN_DROP_CAC] = "cac",
	[WLAN_DROP_RADAR] = "radar",
	[WLAN_DROP_NO_OUTDOOR] = "no-outdoor",
	[WLAN_DROP_OTHER_RULE] = "other-rule",
	[WLAN_DROP_RX_OVERFLOW] = "rx-overflow",
};

const char *wlan_drop_name(enum wlan_drop d)
{
	return d < WLAN_DROP_N ? drop_names[d] : "allowed";
}

static uint64_t monotonic_ns(void *opaque)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct wlan_medium *wlan_medium_new(const struct wlan_medium_cfg *cfg, char *err, size_t errlen)
{
	struct wlan_medium *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->reg = wlan_reg_new(cfg, err, errlen);
	if (!m->reg) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->enforce = !cfg->no_enforce;
	m->outdoor = cfg->outdoor;
	m->cac_s = cfg->cac_s;
	m->nop_s = cfg->nop_s;
	snprintf(m->regdb_path, sizeof(m->regdb_path), "%s", cfg->regdb ? cfg->regdb : "");
	m->clock = cfg->clock ? cfg->clock : monotonic_ns;
	m->clock_opaque = cfg->clock_opaque;
	return m;
}

void wlan_medium_free(struct wlan_medium *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < MAX_PORTS; i++)
		free(m->ports[i]);
	wlan_reg_free(m->reg);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

struct wlan_port *wlan_port_attach(struct wlan_medium *m, const char *name, wlan_deliver_fn fn,
				   void *opaque)
{
	struct wlan_port *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	*p = (struct wlan_port){.m = m, .fn = fn, .opaque = opaque};
	snprintf(p->name, sizeof(p->name), "%s", name);
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < MAX_PORTS; i++) {
		if (!m->ports[i]) {
			m->ports[i] = p;
			pthread_mutex_unlock(&m->lock);
			return p;
		}
	}
	pthread_mutex_unlock(&m->lock);
	free(p);
	return NULL;
}

/* Forget p's radios (lock held). */
static void drop_radios(struct wlan_medium *m, struct wlan_port *p)
{
	for (unsigned i = 0; i < m->n_radios;) {
		if (m->radios[i].port == p)
			m->radios[i] = m->radios[--m->n_radios];
		else
			i++;
	}
}

void wlan_port_close(struct wlan_port *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->m->lock);
	drop_radios(p->m, p);
	p->closed = true;
	pthread_mutex_unlock(&p->m->lock);
}

void wlan_port_detach(struct wlan_port *p)
{
	struct wlan_medium *m;

	if (!p)
		return;
	m = p->m;
	pthread_mutex_lock(&m->lock);
	drop_radios(m, p);
	for (unsigned i = 0; i < MAX_PORTS; i++)
		if (m->ports[i] == p)
			m->ports[i] = NULL;
	pthread_mutex_unlock(&m->lock);
	free(p);
}

/* ------------------------------------------------------------- radios */

static struct radio *find_radio(struct wlan_medium *m, struct wlan_port *p, const uint8_t *hw)
{
	for (unsigned i = 0; i < m->n_radios; i++)
		if (m->radios[i].port == p && !memcmp(m->radios[i].hw, hw, ETH_ALEN_WLAN))
			return &m->radios[i];
	if (m->n_radios == MAX_RADIOS)
		return NULL;
	struct radio *r = &m->radios[m->n_radios++];

	*r = (struct radio){.port = p};
	memcpy(r->hw, hw, ETH_ALEN_WLAN);
	return r;
}

static bool owns(const struct radio *r, const uint8_t *a)
{
	uint8_t perm[ETH_ALEN_WLAN];

	memcpy(perm, r->hw, ETH_ALEN_WLAN);
	perm[0] &= (uint8_t)~0x40;
	if (!memcmp(a, r->hw, ETH_ALEN_WLAN) || !memcmp(a, perm, ETH_ALEN_WLAN))
		return true;
	for (unsigned i = 0; i < r->n_vif; i++)
		if (!memcmp(a, r->vif[i], ETH_ALEN_WLAN))
			return true;
	return false;
}

/* Counted: a scan's DEL_MAC_ADDR of the interface's own address (no
 * random scan address) must not take the interface off the air. */
static void set_vif(struct radio *r, const uint8_t *a, bool add)
{
	for (unsigned i = 0; i < r->n_vif; i++) {
		if (memcmp(r->vif[i], a, ETH_ALEN_WLAN))
			continue;
		if (add && r->vif_refs[i] < UINT8_MAX) {
			r->vif_refs[i]++;
		} else if (!add && --r->vif_refs[i] == 0) {
			r->n_vif--;
			memcpy(r->vif[i], r->vif[r->n_vif], ETH_ALEN_WLAN);
			r->vif_refs[i] = r->vif_refs[r->n_vif];
		}
		return;
	}
	if (add && r->n_vif < MAX_VIFS) {
		memcpy(r->vif[r->n_vif], a, ETH_ALEN_WLAN);
		r->vif_refs[r->n_vif++] = 1;
	}
}

/* ----------------------------------------------------------- delivery */

static void count_drop(struct wlan_medium *m, struct radio *r, enum wlan_drop d)
{
	m->drops[d]++;
	if (r)
		r->drops[d]++;
}

static bool deliver_to(struct wlan_medium *m, struct radio *o, const struct hwsim_msg *msg,
		       int32_t signal)
{
	size_t n = hwsim_build_frame(m->out, sizeof(m->out), o->nl_type, o->hw, msg->frame,
				     msg->frame_len, hwsim_msg_rx_rate(msg), signal, msg->freq);

	if (!n || !o->port->fn(o->port->opaque, m->out, n)) {
		count_drop(m, o, WLAN_DROP_RX_OVERFLOW);
		return false;
	}
	o->rx++;
	m->delivered++;
	return true;
}

/* Every receiver; true when a unicast frame's addressee took it. */
static bool deliver(struct wlan_medium *m, struct radio *from, const struct hwsim_msg *msg,
		    int32_t signal)
{
	const uint8_t *addr1 = msg->frame + 4;
	bool group = addr1[0] & 1, acked = false;

	for (unsigned i = 0; i < m->n_radios; i++) {
		struct radio *o = &m->radios[i];

		if (o == from)
			continue;
		if (group) {
			deliver_to(m, o, msg, signal);
		} else if (owns(o, addr1) && (o->freq_mhz == msg->freq || !o->freq_mhz)) {
			acked |= deliver_to(m, o, msg, signal);
		}
	}
	return acked;
}

/* HWSIM_CMD_TX_INFO_FRAME: the sender's pending frame completes; with an
 * ACK, the first rate succeeded on its first attempt. */
static void tx_status(struct wlan_medium *m, struct radio *r, const struct hwsim_msg *msg,
		      bool acked, int32_t signal)
{
	uint8_t info[HWSIM_TX_INFO_LEN];
	uint32_t flags = msg->flags;
	size_t n;

	memcpy(info, msg->tx_info, sizeof(info));
	if (acked && !(flags & HWSIM_TX_CTL_NO_ACK)) {
		flags |= HWSIM_TX_STAT_ACK;
		info[1] = 1;
		for (unsigned i = 1; i < HWSIM_TX_MAX_RATES; i++) {
			info[2 * i] = 0xff;
			info[2 * i + 1] = 0;
		}
		r->acked++;
	}
	n = hwsim_build_tx_info(m->out, sizeof(m->out), r->nl_type, r->hw, flags,
				acked ? signal : 0, info, msg->cookie);
	if (!n || !r->port->fn(r->port->opaque, m->out, n))
		count_drop(m, r, WLAN_DROP_RX_OVERFLOW);
}

static void handle_frame(struct wlan_medium *m, struct radio *r, const struct hwsim_msg *msg)
{
	uint64_t now = m->clock(m->clock_opaque);
	enum wlan_drop d = WLAN_DROP_N;
	int32_t signal;

	if (r->freq_mhz != msg->freq) {
		r->freq_mhz = msg->freq;
		r->on_since_ns = now;
	}
	r->tx++;
	m->frames++;
	if (m->enforce) {
		struct wlan_tx tx = {msg->freq, hwsim_msg_width_mhz(msg),
				     wlan_frame_kind(msg->frame, msg->frame_len),
				     now > r->on_since_ns ? now - r->on_since_ns : 0};

		d = wlan_reg_check(m->reg, &tx, now, &signal);
	} else {
		signal = wlan_reg_signal(m->reg, msg->freq);
	}
	if (d != WLAN_DROP_N) {
		count_drop(m, r, d);
		tx_status(m, r, msg, false, 0);
		return;
	}
	tx_status(m, r, msg, deliver(m, r, msg, signal), signal);
}

static void malformed(struct wlan_medium *m, struct wlan_port *p, const char *why)
{
	p->malformed++;
	count_drop(m, NULL, WLAN_DROP_MALFORMED);
	if (!p->told) /* once per port: a guest must not flood the log */
		fprintf(stderr, "wlan-medium: %s: malformed hwsim message dropped: %s\n", p->name,
			why);
	p->told = true;
}

void wlan_port_input(struct wlan_port *p, const void *buf, size_t len)
{
	struct wlan_medium *m = p->m;
	struct hwsim_msg msg;
	const char *why = NULL;

	pthread_mutex_lock(&m->lock);
	if (p->closed) {
		/* a device shutting down: its guest is no longer on the air */
	} else if (hwsim_msg_parse(buf, len, &msg, &why)) {
		malformed(m, p, why);
	} else {
		struct radio *r = find_radio(m, p, msg.tx_addr);

		if (!r) {
			malformed(m, p, "too many radios on the medium");
		} else {
			r->nl_type = msg.nl_type;
			if (msg.cmd == HWSIM_CMD_FRAME)
				handle_frame(m, r, &msg);
			else
				set_vif(r, msg.rx_addr, msg.cmd == HWSIM_CMD_ADD_MAC_ADDR);
		}
	}
	pthread_mutex_unlock(&m->lock);
}
