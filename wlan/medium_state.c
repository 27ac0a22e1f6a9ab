/* medium_state.c — the medium in the state tree (snapshots, migration).
 *
 * A node for the medium holds what changes at run time: the country (the
 * monitor's wlan_country), enforcement (wlan_enforce), the regulatory.db
 * the medium last loaded (wlan_regdb_reload PATH) and the channels radar
 * closed, each with the time left of its non-occupancy period. A child
 * node per radio (`radio@N`) holds what the frame path learnt of it: its
 * port (an index into the caller's list), hardware and interface
 * addresses (HWSIM_CMD_ADD_MAC_ADDR, announced when an interface comes
 * up and again per scan) with their counts, genl family id, frequency and how long it has been on
 * it (its DFS CAC), or, after radar, how long until its CAC starts again. Counters are not saved:
 * `info wlan` counts from the load.
 *
 * The loader reads and checks every value into a scratch copy first and
 * changes the medium only when all of it is good. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"
#include "wlan/internal.h"

#define MEDIUM_STATE_VERSION 1
#define RADIO_STATE_VERSION 1
/* One radar closure in the "radars" property, big-endian. */
struct radar_rec {
	uint32_t lo_mhz, hi_mhz;
	uint64_t left_ns;
};
#define RADAR_REC sizeof(struct radar_rec)

static int port_index(struct wlan_port *const *ports, unsigned n, const struct wlan_port *p)
{
	for (unsigned i = 0; i < n; i++)
		if (ports[i] == p)
			return (int)i;
	return -1;
}

static void save_radio(struct state_writer *w, const struct radio *r, unsigned idx, unsigned port,
		       uint64_t now)
{
	uint8_t vifs[MAX_VIFS * ETH_ALEN_WLAN] = {0};
	char name[24];

	snprintf(name, sizeof(name), "radio@%u", idx);
	memcpy(vifs, r->vif, (size_t)r->n_vif * ETH_ALEN_WLAN);
	state_begin(w, name, RADIO_STATE_VERSION);
	state_put_u32(w, "port", port);
	state_put_bytes(w, "hw", r->hw, ETH_ALEN_WLAN);
	state_put_u32(w, "vif-count", r->n_vif);
	state_put_bytes(w, "vifs", vifs, sizeof(vifs));
	state_put_bytes(w, "vif-refs", r->vif_refs, sizeof(r->vif_refs));
	state_put_u16(w, "nl-type", r->nl_type);
	state_put_u32(w, "freq", r->freq_mhz);
	state_put_u64(w, "on-channel-ns", now > r->on_since_ns ? now - r->on_since_ns : 0);
	state_put_u64(w, "cac-wait-ns", r->on_since_ns > now ? r->on_since_ns - now : 0);
	state_end(w);
}

void wlan_medium_save(struct wlan_medium *m, struct state_writer *w, const char *name,
		      struct wlan_port *const *ports, unsigned n_ports)
{
	struct wlan_radar radars[WLAN_MAX_RADAR];
	uint8_t spans[WLAN_MAX_RADAR * RADAR_REC];
	unsigned n_radar, saved = 0;

	pthread_mutex_lock(&m->lock);
	uint64_t now = m->clock(m->clock_opaque);

	n_radar = wlan_reg_radars(m->reg, now, radars);
	for (unsigned i = 0; i < n_radar; i++) {
		struct radar_rec x = {htobe32(radars[i].lo_mhz), htobe32(radars[i].hi_mhz),
				      htobe64(radars[i].until_ns - now)};

		memcpy(spans + i * RADAR_REC, &x, RADAR_REC);
	}
	state_begin(w, name, MEDIUM_STATE_VERSION);
	state_put_bytes(w, "country", wlan_reg_country(m->reg), 2);
	state_put_u8(w, "enforce", m->enforce);
	state_put_bytes(w, "regdb", m->regdb_path, sizeof(m->regdb_path));
	state_put_u32(w, "radar-count", n_radar);
	state_put_bytes(w, "radars", spans, (size_t)n_radar * RADAR_REC);
	for (unsigned i = 0; i < m->n_radios; i++)
		if (port_index(ports, n_ports, m->radios[i].port) >= 0)
			saved++;
	state_put_u32(w, "radio-count", saved);
	saved = 0;
	for (unsigned i = 0; i < m->n_radios; i++) {
		int port = port_index(ports, n_ports, m->radios[i].port);

		if (port >= 0)
			save_radio(w, &m->radios[i], saved++, (unsigned)port, now);
	}
	state_end(w);
	pthread_mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------ loading */

struct loaded {
	char country[3];
	bool enforce;
	char regdb[sizeof(((struct wlan_medium *)0)->regdb_path)];
	struct wlan_radar radars[WLAN_MAX_RADAR];
	uint64_t radar_left[WLAN_MAX_RADAR];
	unsigned n_radar;
	struct radio radios[MAX_RADIOS];
	uint64_t on_channel[MAX_RADIOS], cac_wait[MAX_RADIOS];
	unsigned n_radios;
};

static bool alpha2_ok(const char *c)
{
	return (c[0] == '0' && c[1] == '0') ||
	       (c[0] >= 'A' && c[0] <= 'Z' && c[1] >= 'A' && c[1] <= 'Z');
}

static int load_radars(struct state_node *n, struct loaded *l, uint64_t nop_ns)
{
	uint8_t spans[WLAN_MAX_RADAR * RADAR_REC];

	if (state_get_u32_max(n, "radar-count", WLAN_MAX_RADAR, &l->n_radar) < 0 ||
	    state_get_bytes(n, "radars", spans, (size_t)l->n_radar * RADAR_REC) < 0)
		return -1;
	for (unsigned i = 0; i < l->n_radar; i++) {
		struct wlan_radar *x = &l->radars[i];
		struct radar_rec rec;

		memcpy(&rec, spans + i * RADAR_REC, RADAR_REC);
		x->lo_mhz = be32toh(rec.lo_mhz);
		x->hi_mhz = be32toh(rec.hi_mhz);
		l->radar_left[i] = be64toh(rec.left_ns);
		if (x->lo_mhz >= x->hi_mhz || x->hi_mhz > 8000)
			return state_node_fail(n, "radar %u spans %u-%u MHz", i, x->lo_mhz,
					       x->hi_mhz);
		if (l->radar_left[i] > nop_ns)
			return state_node_fail(n, "radar %u has %llu ns left, the NOP is %llu", i,
					       (unsigned long long)l->radar_left[i],
					       (unsigned long long)nop_ns);
	}
	return 0;
}

static int load_radio(const struct state_reader *med, unsigned i, unsigned n_ports, uint64_t nop_ns,
		      struct loaded *l, char *err, size_t errlen)
{
	uint8_t vifs[MAX_VIFS * ETH_ALEN_WLAN];
	struct radio *r = &l->radios[i];
	struct state_node n;
	uint32_t port, n_vif;
	char name[24];

	snprintf(name, sizeof(name), "radio@%u", i);
	if (state_node_open(&n, med, name, RADIO_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "port", &port) < 0 || state_get_bytes(&n, "hw", r->hw, 6) < 0 ||
	    state_get_u32_max(&n, "vif-count", MAX_VIFS, &n_vif) < 0 ||
	    state_get_bytes(&n, "vifs", vifs, sizeof(vifs)) < 0 ||
	    state_get_bytes(&n, "vif-refs", r->vif_refs, sizeof(r->vif_refs)) < 0 ||
	    state_get_u16(&n, "nl-type", &r->nl_type) < 0 ||
	    state_get_u32_max(&n, "freq", 8000, &r->freq_mhz) < 0 ||
	    state_get_u64(&n, "on-channel-ns", &l->on_channel[i]) < 0 ||
	    state_get_u64(&n, "cac-wait-ns", &l->cac_wait[i]) < 0)
		return -1;
	if (port >= n_ports)
		return state_node_fail(&n, "port %u, but this medium has %u here", port, n_ports);
	if (l->cac_wait[i] > nop_ns)
		return state_node_fail(&n, "cac-wait-ns %llu is more than the NOP",
				       (unsigned long long)l->cac_wait[i]);
	for (unsigned j = 0; j < i; j++)
		if (l->radios[j].port == (void *)(uintptr_t)(port + 1) &&
		    !memcmp(l->radios[j].hw, r->hw, ETH_ALEN_WLAN))
			return state_node_fail(&n, "a second radio with this address on port %u",
					       port);
	for (unsigned v = 0; v < MAX_VIFS; v++)
		if ((v < n_vif) != (r->vif_refs[v] != 0))
			return state_node_fail(&n, "vif-refs[%u] is %u with %u addresses", v,
					       r->vif_refs[v], n_vif);
	r->port = (void *)(uintptr_t)(port + 1); /* an index until applied */
	r->n_vif = n_vif;
	memcpy(r->vif, vifs, sizeof(vifs));
	return state_node_close(&n);
}

static int load_node(struct wlan_medium *m, const struct state_reader *r, const char *name,
		     unsigned n_ports, struct loaded *l, char *err, size_t errlen)
{
	uint64_t nop_ns = wlan_reg_nop_ns(m->reg);
	struct state_reader med;
	struct state_node n;

	if (state_node_open(&n, r, name, MEDIUM_STATE_VERSION, err, errlen) < 0 ||
	    state_get_bytes(&n, "country", l->country, 2) < 0 ||
	    state_get_bool(&n, "enforce", &l->enforce) < 0 ||
	    state_get_bytes(&n, "regdb", l->regdb, sizeof(l->regdb)) < 0 ||
	    load_radars(&n, l, nop_ns) < 0 ||
	    state_get_u32_max(&n, "radio-count", MAX_RADIOS, &l->n_radios) < 0)
		return -1;
	if (!alpha2_ok(l->country))
		return state_node_fail(&n, "country is not an ISO 3166-1 alpha-2 code");
	if (!memchr(l->regdb, 0, sizeof(l->regdb)))
		return state_node_fail(&n, "regdb path is not terminated");
	if (state_node_close(&n) < 0 || state_reader_sub(r, name, &med, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < l->n_radios; i++)
		if (load_radio(&med, i, n_ports, nop_ns, l, err, errlen) < 0)
			return -1;
	return 0;
}

/* The domain and database first: they are the parts that can still fail.
 * A database is loaded with its country in one step, so one that lacks the
 * country leaves the medium on its old database. */
static int apply_domain(struct wlan_medium *m, const struct loaded *l, const char *name, char *err,
			size_t errlen)
{
	char why[256];

	if (strcmp(l->regdb, m->regdb_path)) {
		if (wlan_reg_reload_country(m->reg, l->regdb[0] ? l->regdb : NULL, l->country, why,
					    sizeof(why))) {
			snprintf(err, errlen, "state: %s: regulatory database '%s', country %s: %s",
				 name, l->regdb, l->country, why);
			return -1;
		}
		memcpy(m->regdb_path, l->regdb, sizeof(m->regdb_path));
	} else if (strcmp(l->country, wlan_reg_country(m->reg)) &&
		   wlan_reg_set_country(m->reg, l->country, why, sizeof(why))) {
		snprintf(err, errlen, "state: %s: country %s: %s", name, l->country, why);
		return -1;
	}
	return 0;
}

static void apply_radios(struct wlan_medium *m, struct loaded *l, struct wlan_port *const *ports,
			 unsigned n_ports, uint64_t now)
{
	for (unsigned p = 0; p < n_ports; p++)
		for (unsigned i = 0; i < m->n_radios;)
			if (m->radios[i].port == ports[p])
				m->radios[i] = m->radios[--m->n_radios];
			else
				i++;
	for (unsigned i = 0; i < l->n_radios && m->n_radios < MAX_RADIOS; i++) {
		struct radio *r = &m->radios[m->n_radios++];

		*r = l->radios[i];
		r->port = ports[(uintptr_t)l->radios[i].port - 1];
		r->on_since_ns = l->cac_wait[i]		   ? now + l->cac_wait[i]
				 : now >= l->on_channel[i] ? now - l->on_channel[i]
							   : 0;
	}
}

int wlan_medium_load(struct wlan_medium *m, const struct state_reader *r, const char *name,
		     struct wlan_port *const *ports, unsigned n_ports, char *err, size_t errlen)
{
	struct loaded *l = calloc(1, sizeof(*l));
	int rc = -1;

	if (!l) {
		snprintf(err, errlen, "state: %s: out of memory", name);
		return -1;
	}
	pthread_mutex_lock(&m->lock);
	if (load_node(m, r, name, n_ports, l, err, errlen) == 0 &&
	    apply_domain(m, l, name, err, errlen) == 0) {
		uint64_t now = m->clock(m->clock_opaque);

		for (unsigned i = 0; i < l->n_radar; i++)
			l->radars[i].until_ns = now + l->radar_left[i];
		wlan_reg_set_radars(m->reg, l->radars, l->n_radar);
		m->enforce = l->enforce;
		apply_radios(m, l, ports, n_ports, now);
		rc = 0;
	}
	pthread_mutex_unlock(&m->lock);
	free(l);
	return rc;
}
