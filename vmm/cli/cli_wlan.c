/* cli_wlan.c — the virtual WLAN's options:
 *   -object wlan-medium,id=ID,country=XX[,outdoor=on][,regdb=PATH][,cac=S]
 *           [,nop=S][,enforce=off][,txpower=DBM][,distance=M][,socket=PATH]
 *   -device virtio-wlan-pci,medium=ID[,addr=SLOT[.FN]]
 * A medium with socket= is the wlan-medium daemon's: its regulatory
 * settings are the daemon's. */
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

static int bad(char *err, size_t errlen, const char *what, const char *key, const char *val,
	       const char *help)
{
	snprintf(err, errlen, "%s: invalid %s '%s' (%s)", what, key, val, help);
	return -1;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	uint64_t v;

	if (cli_parse_u64(s, &v) < 0 || v < (uint64_t)lo || v > (uint64_t)hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_onoff(const char *s, bool *out)
{
	if (!strcmp(s, "on") || !strcmp(s, "yes") || !strcmp(s, "true"))
		*out = true;
	else if (!strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

#define MEDIUM_HELP                                                                                \
	"id=ID, country=XX, outdoor=on|off, regdb=PATH, cac=SECONDS, nop=SECONDS, "                \
	"enforce=on|off, txpower=DBM, distance=METRES, socket=PATH"

static bool copy_str(char *dst, size_t size, const char *val)
{
	if (!*val || strlen(val) >= size)
		return false;
	strcpy(dst, val);
	return true;
}

static int medium_prop(struct wlan_medium_spec *s, const char *key, const char *val, char *err,
		       size_t errlen)
{
	bool enforce = !s->no_enforce, ok;
	char *end;

	if (!strcmp(key, "id"))
		ok = copy_str(s->id, sizeof(s->id), val);
	else if (!strcmp(key, "country"))
		ok = copy_str(s->country, sizeof(s->country), val);
	else if (!strcmp(key, "regdb"))
		ok = copy_str(s->regdb, sizeof(s->regdb), val);
	else if (!strcmp(key, "socket"))
		ok = copy_str(s->socket, sizeof(s->socket), val);
	else if (!strcmp(key, "outdoor"))
		ok = parse_onoff(val, &s->outdoor) == 0;
	else if (!strcmp(key, "enforce"))
		ok = parse_onoff(val, &enforce) == 0;
	else if (!strcmp(key, "cac"))
		ok = parse_int(val, 0, 86400, &s->cac_s) == 0;
	else if (!strcmp(key, "nop"))
		ok = parse_int(val, 0, 86400, &s->nop_s) == 0;
	else if (!strcmp(key, "txpower"))
		ok = parse_int(val, 1, 40, &s->txpower_dbm) == 0;
	else if (!strcmp(key, "distance"))
		ok = (s->distance_m = strtod(val, &end)) > 0 && !*end && s->distance_m < 1e6;
	else
		ok = false;
	s->no_enforce = !enforce;
	return ok ? 0 : bad(err, errlen, "wlan-medium", key, val, MEDIUM_HELP);
}

/* Split props "k=v,k=v" and feed each pair to prop. */
static int each_prop(char *props, const char *what, void *spec,
		     int (*prop)(void *spec, const char *key, const char *val, char *err,
				 size_t errlen),
		     char *err, size_t errlen)
{
	char *save = NULL;

	for (char *tok = strtok_r(props, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "%s: expected key=value, got '%s'", what, tok);
			return -1;
		}
		*eq = 0;
		if (prop(spec, tok, eq + 1, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int medium_prop_cb(void *spec, const char *key, const char *val, char *err, size_t errlen)
{
	return medium_prop(spec, key, val, err, errlen);
}

static int parse_medium(struct wlan_config *w, char *props, char *err, size_t errlen)
{
	struct wlan_medium_spec s = {.cac_s = -1, .nop_s = -1};

	if (each_prop(props, "wlan-medium", &s, medium_prop_cb, err, errlen) < 0)
		return -1;
	if (!s.id[0]) {
		snprintf(err, errlen, "wlan-medium: needs id=ID");
		return -1;
	}
	for (unsigned i = 0; i < w->n_media; i++) {
		if (!strcmp(w->media[i].id, s.id)) {
			snprintf(err, errlen, "wlan-medium: duplicate id '%s'", s.id);
			return -1;
		}
	}
	if (w->n_media == CLI_MAX_WLAN) {
		snprintf(err, errlen, "too many wlan-medium objects (at most %d)", CLI_MAX_WLAN);
		return -1;
	}
	w->media[w->n_media++] = s;
	return 0;
}

int cli_parse_wlan_medium(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	return parse_medium(&cfg->wlan, props, err, errlen);
}

static int wlan_dev_prop(void *spec, const char *key, const char *val, char *err, size_t errlen)
{
	struct wlan_dev_spec *d = spec;

	if (!strcmp(key, "medium") && copy_str(d->medium, sizeof(d->medium), val))
		return 0;
	if (cli_virtio_transport_prop(key, val) > 0)
		return 0;
	if (!strcmp(key, "addr") && cli_parse_pci_addr(val, &d->devfn) == 0 && d->devfn >= 2 << 3)
		return 0;
	if (!strcmp(key, "id"))
		return 0;
	return bad(err, errlen, "virtio-wlan-pci", key, val,
		   "medium=ID of a -object wlan-medium, addr=SLOT[.FN] (slot 2-31)");
}

int cli_parse_virtio_wlan(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct wlan_dev_spec d = {.devfn = -1};
	struct wlan_config *w = &cfg->wlan;

	if (each_prop(props, "virtio-wlan-pci", &d, wlan_dev_prop, err, errlen) < 0)
		return -1;
	if (!d.medium[0]) {
		snprintf(err, errlen, "virtio-wlan-pci: needs medium=ID (a -object wlan-medium)");
		return -1;
	}
	if (w->n_devs == CLI_MAX_WLAN) {
		snprintf(err, errlen, "too many virtio-wlan-pci devices (at most %d)",
			 CLI_MAX_WLAN);
		return -1;
	}
	w->devs[w->n_devs++] = d;
	return 0;
}

int cli_resolve_wlan(struct vmm_config *cfg, char *err, size_t errlen)
{
	struct wlan_config *w = &cfg->wlan;

	for (unsigned i = 0; i < w->n_devs; i++) {
		unsigned j = 0;

		while (j < w->n_media && strcmp(w->media[j].id, w->devs[i].medium))
			j++;
		if (j == w->n_media) {
			snprintf(err, errlen,
				 "-device virtio-wlan-pci: no -object wlan-medium,id=%s",
				 w->devs[i].medium);
			return -1;
		}
		w->devs[i].medium_idx = j;
	}
	return 0;
}
