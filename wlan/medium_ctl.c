/* medium_ctl.c — the medium's runtime control and reports: the country
 * for every radio at once, regulatory.db reload, radar events, `info wlan`
 * and `info regdomain`, and the text commands the monitor and the daemon's
 * control socket share. */
#include <stdlib.h>
#include <string.h>

#include "wlan/internal.h"

int wlan_medium_set_country(struct wlan_medium *m, const char *alpha2, char *err, size_t errlen)
{
	pthread_mutex_lock(&m->lock);
	int rc = wlan_reg_set_country(m->reg, alpha2, err, errlen);

	pthread_mutex_unlock(&m->lock);
	return rc;
}

int wlan_medium_reload(struct wlan_medium *m, const char *path, char *err, size_t errlen)
{
	char want[sizeof(m->regdb_path)];

	pthread_mutex_lock(&m->lock);
	/* the path is the medium's only once the file loaded */
	snprintf(want, sizeof(want), "%s", path ? path : m->regdb_path);
	int rc = wlan_reg_reload(m->reg, want[0] ? want : NULL, err, errlen);

	if (rc == 0)
		memcpy(m->regdb_path, want, sizeof(want));
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int wlan_medium_radar(struct wlan_medium *m, uint32_t freq_mhz, char *err, size_t errlen)
{
	if (freq_mhz < 2400 || freq_mhz > 7125) {
		snprintf(err, errlen, "radar frequency %u MHz outside 2400-7125 MHz", freq_mhz);
		return -1;
	}
	pthread_mutex_lock(&m->lock);
	uint64_t now = m->clock(m->clock_opaque);
	uint64_t until = wlan_reg_radar(m->reg, freq_mhz, now);

	/* radios on the channel start their CAC again once the NOP is over */
	for (unsigned i = 0; i < m->n_radios; i++) {
		struct radio *r = &m->radios[i];

		if (r->freq_mhz && wlan_reg_overlaps(r->freq_mhz, 20, freq_mhz - 10, freq_mhz + 10))
			r->on_since_ns = until;
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void wlan_medium_set_enforce(struct wlan_medium *m, bool on)
{
	pthread_mutex_lock(&m->lock);
	m->enforce = on;
	pthread_mutex_unlock(&m->lock);
}

void wlan_medium_info_regdomain(struct wlan_medium *m, FILE *out)
{
	pthread_mutex_lock(&m->lock);
	wlan_reg_print(m->reg, out);
	pthread_mutex_unlock(&m->lock);
}

static void print_mac(FILE *out, const uint8_t *a)
{
	fprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void print_drops(FILE *out, const uint64_t *drops, bool all)
{
	for (unsigned d = 0; d < WLAN_DROP_N; d++)
		if (all || drops[d])
			fprintf(out, " %s=%llu", wlan_drop_name(d), (unsigned long long)drops[d]);
}

static void print_radio(FILE *out, const struct radio *r)
{
	fprintf(out, "  radio ");
	print_mac(out, r->hw);
	fprintf(out, " (%s): freq %u MHz, tx %llu, rx %llu, acked %llu, drops:", r->port->name,
		r->freq_mhz, (unsigned long long)r->tx, (unsigned long long)r->rx,
		(unsigned long long)r->acked);
	print_drops(out, r->drops, false);
	for (unsigned i = 0; i < r->n_vif; i++) {
		fprintf(out, i ? ", " : "; addresses ");
		print_mac(out, r->vif[i]);
	}
	fprintf(out, "\n");
}

void wlan_medium_info(struct wlan_medium *m, FILE *out)
{
	uint64_t total = 0;

	pthread_mutex_lock(&m->lock);
	for (unsigned d = 0; d < WLAN_DROP_N; d++)
		total += m->drops[d];
	char cac[32] = "per rule";

	if (m->cac_s >= 0)
		snprintf(cac, sizeof(cac), "%d s", m->cac_s);
	fprintf(out, "medium: country %s, enforcement %s, %s, cac %s, nop %d s\n",
		wlan_reg_country(m->reg), m->enforce ? "on" : "off",
		m->outdoor ? "outdoor" : "indoor", cac,
		(int)(wlan_reg_nop_ns(m->reg) / 1000000000ull));
	fprintf(out, "frames: %llu sent, %llu delivered, %llu dropped\n",
		(unsigned long long)m->frames, (unsigned long long)m->delivered,
		(unsigned long long)total);
	fprintf(out, "drops:");
	print_drops(out, m->drops, true);
	fprintf(out, "\nradios: %u\n", m->n_radios);
	for (unsigned i = 0; i < m->n_radios; i++)
		print_radio(out, &m->radios[i]);
	pthread_mutex_unlock(&m->lock);
}

uint64_t wlan_medium_drops(struct wlan_medium *m, enum wlan_drop d)
{
	pthread_mutex_lock(&m->lock);
	uint64_t n = d < WLAN_DROP_N ? m->drops[d] : 0;

	pthread_mutex_unlock(&m->lock);
	return n;
}

uint64_t wlan_medium_delivered(struct wlan_medium *m)
{
	pthread_mutex_lock(&m->lock);
	uint64_t n = m->delivered;

	pthread_mutex_unlock(&m->lock);
	return n;
}

/* ------------------------------------------------------------ commands */

static void cmd_country(struct wlan_medium *m, const char *arg, FILE *out)
{
	char err[256];

	if (!arg) {
		fprintf(out, "usage: wlan_country XX\n");
		return;
	}
	if (wlan_medium_set_country(m, arg, err, sizeof(err)))
		fprintf(out, "wlan_country: %s\n", err);
	else
		fprintf(out, "regulatory domain now %s for every radio\n",
			wlan_reg_country(m->reg));
}

static void cmd_reload(struct wlan_medium *m, const char *arg, FILE *out)
{
	char err[256];

	if (wlan_medium_reload(m, arg, err, sizeof(err)))
		fprintf(out, "wlan_regdb_reload: %s\n", err);
	else
		fprintf(out, "regulatory database reloaded\n");
}

static void cmd_radar(struct wlan_medium *m, const char *arg, FILE *out)
{
	char err[256], *end;
	unsigned long f = arg ? strtoul(arg, &end, 10) : 0;

	if (!arg || *end || f > UINT32_MAX) {
		fprintf(out, "usage: wlan_radar FREQ (MHz)\n");
		return;
	}
	if (wlan_medium_radar(m, (uint32_t)f, err, sizeof(err)))
		fprintf(out, "wlan_radar: %s\n", err);
	else
		fprintf(out, "radar on %lu MHz: channel closed for %llu s\n", f,
			(unsigned long long)(wlan_reg_nop_ns(m->reg) / 1000000000ull));
}

static void cmd_enforce(struct wlan_medium *m, const char *arg, FILE *out)
{
	if (!arg || (strcmp(arg, "on") && strcmp(arg, "off"))) {
		fprintf(out, "usage: wlan_enforce on|off\n");
		return;
	}
	wlan_medium_set_enforce(m, !strcmp(arg, "on"));
	fprintf(out, "enforcement %s\n", arg);
}

void wlan_medium_command(struct wlan_medium *m, const char *line, FILE *out)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", line);
	const char *cmd = strtok_r(buf, " \t\r\n", &save);
	const char *arg = cmd ? strtok_r(NULL, " \t\r\n", &save) : NULL;

	if (!cmd)
		return;
	if (!strcmp(cmd, "wlan_country"))
		cmd_country(m, arg, out);
	else if (!strcmp(cmd, "wlan_regdb_reload"))
		cmd_reload(m, arg, out);
	else if (!strcmp(cmd, "wlan_radar"))
		cmd_radar(m, arg, out);
	else if (!strcmp(cmd, "wlan_enforce"))
		cmd_enforce(m, arg, out);
	else if (!strcmp(cmd, "info") && arg && !strcmp(arg, "wlan"))
		wlan_medium_info(m, out);
	else if (!strcmp(cmd, "info") && arg && !strcmp(arg, "regdomain"))
		wlan_medium_info_regdomain(m, out);
	else
		fprintf(out,
			"unknown command '%s' (wlan_country XX, wlan_regdb_reload [PATH], "
			"wlan_radar FREQ, wlan_enforce on|off, info wlan, info regdomain)\n",
			cmd);
}
