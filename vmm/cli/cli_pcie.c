/* cli_pcie.c — -device pcie-root-port and the bus= of PCI devices.
 *
 *   -device pcie-root-port,id=ID[,bus=pcie.0][,chassis=N][,slot=N][,port=N]
 *           [,addr=SLOT[.FN]][,multifunction=on|off]
 *
 * as libvirt writes them for q35 (one port per function of slot 2 and up,
 * the first with multifunction=on). A device goes behind a port with
 * bus=ID (libvirt's pci.N) and addr=0 (the only device a PCIe port has). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

#define ROOT_PORT_HELP                                                                             \
	"id=ID, bus=pcie.0, chassis=N, slot=N, port=N (0-255), addr=SLOT[.FN], "                   \
	"multifunction=on|off"

int cli_parse_bus(const char *val, char *out, size_t outlen)
{
	if (!val || !*val || strlen(val) >= outlen)
		return -1;
	if (cli_is_root_bus(val))
		out[0] = 0;
	else
		strcpy(out, val);
	return 0;
}

int cli_pci_place(const char *key, const char *v, char *bus, size_t buslen, int *devfn,
		  unsigned min_slot)
{
	if (!strcmp(key, "bus"))
		return v && cli_parse_bus(v, bus, buslen) == 0 ? 1 : -1;
	if (strcmp(key, "addr"))
		return 0;
	if (!v || cli_parse_pci_addr(v, devfn) < 0)
		return -1;
	return *devfn >= (int)min_slot << 3 || *devfn == 0 ? 1 : -1;
}

static bool is_word(const char *v, const char *const *words)
{
	for (; v && *words; words++)
		if (!strcmp(v, *words))
			return true;
	return false;
}

int cli_virtio_transport_prop(const char *key, const char *v)
{
	static const char *const on[] = {"on", "true", "yes", "auto", NULL};
	static const char *const off[] = {"off", "false", "no", NULL};

	if (!strcmp(key, "disable-legacy"))
		return is_word(v, on) ? 1 : -1;
	if (!strcmp(key, "disable-modern"))
		return is_word(v, off) ? 1 : -1;
	return 0;
}

bool cli_virtio_non_transitional(const char *name, char *base, size_t len)
{
	static const char suffix[] = "-pci-non-transitional";
	size_t n = strlen(name), s = sizeof(suffix) - 1;

	if (strncmp(name, "virtio-", 7) || n <= s || strcmp(name + n - s, suffix) ||
	    n - s + 4 >= len)
		return false;
	snprintf(base, len, "%.*s-pci", (int)(n - s), name);
	return true;
}

int cli_find_root_port(const struct vmm_config *cfg, const char *id)
{
	for (unsigned i = 0; i < cfg->n_root_ports; i++)
		if (!strcmp(cfg->root_ports[i].id, id))
			return (int)i;
	return -1;
}

static bool parse_uint(const char *v, unsigned max, unsigned *out)
{
	uint64_t n;

	if (!v || cli_parse_u64(v, &n) < 0 || n > max)
		return false;
	*out = (unsigned)n;
	return true;
}

static bool root_port_prop(struct root_port_spec *s, const char *key, const char *v)
{
	if (!strcmp(key, "id"))
		return v && *v && strlen(v) < sizeof(s->id) && (strcpy(s->id, v), true);
	if (!strcmp(key, "bus"))
		return v && !strcmp(v, "pcie.0");
	if (!strcmp(key, "chassis"))
		return parse_uint(v, 255, &s->chassis);
	if (!strcmp(key, "slot"))
		return parse_uint(v, 0x1fff, &s->slot);
	if (!strcmp(key, "port"))
		return parse_uint(v, 255, &s->port);
	if (!strcmp(key, "addr"))
		return v && cli_parse_pci_addr(v, &s->devfn) == 0 && s->devfn >= 1 << 3;
	if (!strcmp(key, "multifunction")) {
		if (v && (!strcmp(v, "on") || !strcmp(v, "true")))
			s->multifunction = true;
		else if (v && (!strcmp(v, "off") || !strcmp(v, "false")))
			s->multifunction = false;
		else
			return false;
		return true;
	}
	return false;
}

int cli_parse_pcie_root_port(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct root_port_spec s = {.devfn = -1};
	char *key, *v;

	while (cli_next_kv(&props, &key, &v))
		if (!root_port_prop(&s, key, v)) {
			snprintf(err, errlen,
				 "pcie-root-port: invalid %s '%s' (" ROOT_PORT_HELP ")", key,
				 v ? v : "");
			return -1;
		}
	if (!s.id[0]) {
		snprintf(err, errlen, "pcie-root-port: needs id= (the bus name its device names)");
		return -1;
	}
	if (cli_find_root_port(cfg, s.id) >= 0 || cli_is_root_bus(s.id)) {
		snprintf(err, errlen, "pcie-root-port: duplicate id '%s'", s.id);
		return -1;
	}
	if (cfg->n_root_ports == CLI_MAX_ROOT_PORTS) {
		snprintf(err, errlen, "pcie-root-port: at most %d", CLI_MAX_ROOT_PORTS);
		return -1;
	}
	cfg->root_ports[cfg->n_root_ports++] = s;
	return 0;
}
