/* cli_balloon.c — the memory balloon, as QEMU's:
 *   -device virtio-balloon-pci[,id=NAME][,bus=pci.0][,addr=SLOT[.FN]]
 *           [,deflate-on-oom=on|off][,free-page-reporting=on|off]
 * libvirt's JSON form arrives here as the same key=value list. One
 * balloon per machine, as in QEMU (the monitor's `balloon` drives it). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cli.h"

#define BALLOON_HELP                                                                               \
	"id=NAME, bus=pci.0, addr=SLOT[.FN] (slot 2-31), deflate-on-oom=on|off, "                  \
	"free-page-reporting=on|off, guest-stats-polling-interval=SECONDS"

static bool on_off(const char *v, bool *out)
{
	if (v && (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes")))
		*out = true;
	else if (v && (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no")))
		*out = false;
	else
		return false;
	return true;
}

static bool balloon_prop(struct balloon_spec *b, const char *key, const char *v)
{
	int transport;
	if (!strcmp(key, "id")) {
		if (!v || !*v || strlen(v) >= sizeof(b->id))
			return false;
		strcpy(b->id, v);
		return true;
	}
	if (!strcmp(key, "bus") || !strcmp(key, "addr")) /* pci.0/pcie.0 or a root port */
		return cli_pci_place(key, v, b->bus, sizeof(b->bus), &b->devfn, 2) > 0;
	transport = cli_virtio_transport_prop(key, v);
	if (transport)
		return transport > 0;
	if (!strcmp(key, "deflate-on-oom"))
		return on_off(v, &b->deflate_on_oom);
	if (!strcmp(key, "free-page-reporting"))
		return on_off(v, &b->free_page_reporting);
	if (!strcmp(key, "guest-stats-polling-interval")) {
		uint64_t n;

		if (!v || cli_parse_u64(v, &n) < 0 || n > UINT32_MAX)
			return false;
		b->poll_secs = (uint32_t)n;
		return true;
	}
	return false;
}

int cli_parse_virtio_balloon(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct balloon_spec b = {.present = true, .devfn = -1};
	char *key, *v;

	if (cfg->balloon.present) {
		snprintf(err, errlen, "virtio-balloon-pci: only one balloon device is supported");
		return -1;
	}
	while (props && cli_next_kv(&props, &key, &v)) {
		if (!balloon_prop(&b, key, v)) {
			snprintf(err, errlen, "virtio-balloon-pci: invalid %s '%s' (%s)", key,
				 v ? v : "", BALLOON_HELP);
			return -1;
		}
	}
	cfg->balloon = b;
	return 0;
}
