/* cli_net.c — the network options, in QEMU's spellings:
 *
 *   -netdev user|tap,id=ID[,...]     a backend (its options checked by
 *                                    the backend at start-up)
 *   -device virtio-net-pci,netdev=ID[,mac=][,addr=][,id=][,mq=on][,vectors=N]
 *   -nic user|tap|none[,model=virtio-net-pci][,mac=][,...]
 *                                    backend and NIC in one go
 *   -net none                        no NIC at all
 *
 * Without any of them the guest gets one virtio-net NIC on user
 * networking (QEMU gives a default NIC too); -nodefaults drops it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

static int copy(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		return -1;
	memcpy(dst, src, len);
	dst[len] = 0;
	return 0;
}

static struct netdev_spec *find_netdev(struct vmm_config *cfg, const char *id)
{
	for (unsigned i = 0; i < cfg->n_netdevs; i++)
		if (!strcmp(cfg->netdevs[i].id, id))
			return &cfg->netdevs[i];
	return NULL;
}

static int add_netdev(struct vmm_config *cfg, const char *type, const char *id, const char *opts,
		      char *err, size_t errlen)
{
	struct netdev_spec *n;

	if (strcmp(type, "user") && strcmp(type, "tap")) {
		snprintf(err, errlen, "unknown type '%s' (supported: user, tap)", type);
		return -1;
	}
	if (cfg->n_netdevs == CLI_MAX_NETDEVS) {
		snprintf(err, errlen, "too many network backends (at most %d)", CLI_MAX_NETDEVS);
		return -1;
	}
	if (find_netdev(cfg, id)) {
		snprintf(err, errlen, "duplicate id '%s'", id);
		return -1;
	}
	n = &cfg->netdevs[cfg->n_netdevs];
	if (copy(n->id, sizeof(n->id), id, strlen(id)) < 0 ||
	    copy(n->opts, sizeof(n->opts), opts, strlen(opts)) < 0) {
		snprintf(err, errlen, "id or options too long");
		return -1;
	}
	strcpy(n->type, type);
	cfg->n_netdevs++;
	cfg->net_given = true;
	return 0;
}

/* The value of key= in a k=v,k=v list, copied to out; 1 found, 0 not,
 * -1 too long. */
static int opt_value(const char *opts, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == '=')
			return copy(out, size, p + klen + 1, strcspn(p + klen + 1, ",")) < 0 ? -1
											     : 1;
	}
	return 0;
}

int cli_parse_netdev(struct vmm_config *cfg, const char *val, char *err, size_t errlen)
{
	size_t tlen = strcspn(val, ",");
	const char *opts = val[tlen] ? val + tlen + 1 : "";
	char type[8], id[32];

	if (copy(type, sizeof(type), val, tlen) < 0) {
		snprintf(err, errlen, "unknown type '%.*s' (supported: user, tap)", (int)tlen, val);
		return -1;
	}
	if (opt_value(opts, "id", id, sizeof(id)) != 1 || !id[0]) {
		snprintf(err, errlen, "%s: needs id=ID (up to %zu characters)", type,
			 sizeof(id) - 1);
		return -1;
	}
	return add_netdev(cfg, type, id, opts, err, errlen);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &end) != 6 ||
	    strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return mac[0] & 1 ? -1 : 0; /* a multicast address is no NIC's */
}

/* A NIC property (virtio-net-pci's, or -nic's NIC part): 1 taken, 0 not
 * a NIC property, -1 invalid. */
static int nic_prop(struct nic_spec *n, const char *key, const char *val)
{
	int transport;
	bool on;

	if (!strcmp(key, "mac")) {
		n->mac_given = true;
		return parse_mac(val, n->mac) < 0 ? -1 : 1;
	}
	if (!strcmp(key, "addr"))
		return cli_pci_place(key, val, n->bus, sizeof(n->bus), &n->devfn, 2);
	transport = cli_virtio_transport_prop(key, val);
	if (transport)
		return transport;
	if (!strcmp(key, "mq")) {
		on = !strcmp(val, "on") || !strcmp(val, "true");
		if (!on && strcmp(val, "off") && strcmp(val, "false"))
			return -1;
		n->mq = on;
		return 1;
	}
	/* QEMU's MSI-X table size, which libvirt sets to 2 * queues + 2 with
	 * mq: vmm sizes the table by the queues itself (one vector each). */
	if (!strcmp(key, "vectors")) {
		char *end;
		unsigned long v = strtoul(val, &end, 10);

		return *val && !*end && v <= 2048 ? 1 : -1;
	}
	if (!strcmp(key, "bus")) /* pci.0/pcie.0 (QEMU's "pci" too) or a root port */
		return !strcmp(val, "pci")
			       ? 1
			       : cli_pci_place(key, val, n->bus, sizeof(n->bus), &n->devfn, 2);
	return 0;
}

static int add_nic(struct vmm_config *cfg, const struct nic_spec *n, char *err, size_t errlen)
{
	if (cfg->n_nics == CLI_MAX_NICS) {
		snprintf(err, errlen, "too many NICs (at most %d)", CLI_MAX_NICS);
		return -1;
	}
	cfg->nics[cfg->n_nics++] = *n;
	return 0;
}

int cli_parse_virtio_net(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct nic_spec n = {.devfn = -1};
	char *save = NULL;

	for (char *tok = strtok_r(props, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int r;

		if (!eq) {
			snprintf(err, errlen, "virtio-net-pci: expected key=value, got '%s'", tok);
			return -1;
		}
		*eq = 0;
		if (!strcmp(tok, "netdev"))
			r = copy(n.netdev_id, sizeof(n.netdev_id), eq + 1, strlen(eq + 1)) < 0 ? -1
											       : 1;
		else if (!strcmp(tok, "id"))
			r = copy(n.id, sizeof(n.id), eq + 1, strlen(eq + 1)) < 0 ? -1 : 1;
		else
			r = nic_prop(&n, tok, eq + 1);
		if (r <= 0) {
			snprintf(err, errlen,
				 "virtio-net-pci: invalid %s '%s' (netdev=ID, "
				 "mac=52:54:00:XX:XX:XX, "
				 "addr=SLOT[.FN] (slot 2-31), id=NAME, mq=on|off)",
				 tok, eq + 1);
			return -1;
		}
	}
	if (!n.netdev_id[0]) {
		snprintf(err, errlen, "virtio-net-pci: needs netdev=ID (a -netdev ...,id=ID)");
		return -1;
	}
	return add_nic(cfg, &n, err, errlen);
}

/* -nic TYPE[,model=virtio-net-pci][,mac=..][,addr=..][,BACKEND OPTIONS]. */
int cli_parse_nic(struct vmm_config *cfg, const char *val, char *err, size_t errlen)
{
	struct nic_spec n = {.devfn = -1};
	char buf[512], opts[512] = "", *save = NULL, *tok;
	size_t used = 0;

	cfg->net_given = true;
	if (!strcmp(val, "none"))
		return 0;
	if (copy(buf, sizeof(buf), val, strlen(val)) < 0) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	tok = strtok_r(buf, ",", &save);
	snprintf(n.netdev_id, sizeof(n.netdev_id), "__org.qemu.nic%u", cfg->n_nics);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');
		int r = 0;

		if (eq) {
			*eq = 0;
			if (!strcmp(tok, "model"))
				r = strcmp(eq + 1, "virtio-net-pci") && strcmp(eq + 1, "virtio")
					    ? -1
					    : 1;
			else
				r = nic_prop(&n, tok, eq + 1);
			*eq = '=';
		}
		if (r < 0) {
			snprintf(err, errlen, "invalid '%s' (model=virtio-net-pci, mac=, addr=)",
				 tok);
			return -1;
		}
		if (r == 0) /* the backend's */
			used += (size_t)snprintf(opts + used, sizeof(opts) - used, "%s%s",
						 used ? "," : "", tok);
	}
	if (add_netdev(cfg, buf, n.netdev_id, opts, err, errlen) < 0)
		return -1;
	return add_nic(cfg, &n, err, errlen);
}

int cli_parse_net(struct vmm_config *cfg, const char *val, char *err, size_t errlen)
{
	if (strcmp(val, "none")) {
		snprintf(err, errlen,
			 "only -net none is supported (use -nic or -netdev + -device)");
		return -1;
	}
	cfg->net_given = true;
	return 0;
}

int cli_resolve_nics(struct vmm_config *cfg, char *err, size_t errlen)
{
	if (!cfg->net_given && !cfg->nodefaults && cfg->n_nics == 0) {
		struct nic_spec n = {.devfn = -1};

		strcpy(n.netdev_id, "user.0");
		if (add_netdev(cfg, "user", "user.0", "", err, errlen) < 0 ||
		    add_nic(cfg, &n, err, errlen) < 0)
			return -1;
	}
	for (unsigned i = 0; i < cfg->n_nics; i++) {
		struct nic_spec *n = &cfg->nics[i];
		struct netdev_spec *d = find_netdev(cfg, n->netdev_id);

		if (!d) {
			snprintf(err, errlen, "-device virtio-net-pci: netdev '%s' not found",
				 n->netdev_id);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(cfg->nics[j].netdev_id, n->netdev_id)) {
				snprintf(err, errlen, "netdev '%s' is used by two NICs",
					 n->netdev_id);
				return -1;
			}
		n->netdev = (unsigned)(d - cfg->netdevs);
		if (!n->mac_given) /* QEMU's: 52:54:00:12:34:56, then :57, ... */
			memcpy(n->mac,
			       (uint8_t[6]){0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t)(0x56 + i)}, 6);
		if (!n->id[0])
			snprintf(n->id, sizeof(n->id), "virtio-net-pci.%u", i);
	}
	return 0;
}
