/* net.c — the machine's networking: the -netdev backends, the
 * virtio-net NICs on them, and their monitor side (`info network`,
 * `info usernet`, hostfwd_add/hostfwd_remove, set_link).
 *
 * A backend runs on its NIC's I/O thread under the NIC's transport lock;
 * the monitor (main thread) takes that lock around the backend's hostfwd
 * and stats operations and then wakes the thread, whose timeouts may have
 * changed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"
#include "vmm/machine.h"
#include "vmm/migration.h"

/* The NIC using netdev i, or NULL. */
static struct virtio_net *nic_of(struct machine *m, unsigned i)
{
	for (unsigned k = 0; k < m->cfg->n_nics; k++)
		if (m->cfg->nics[k].netdev == i && m->nics[k])
			return m->nics[k];
	return NULL;
}

int net_open_netdev(struct machine *m, unsigned i, bool incoming, char *err, size_t errlen)
{
	const struct netdev_spec *s = &m->cfg->netdevs[i];
	char why[256];

	m->netdevs[i] = !strcmp(s->type, "tap")
				? netdev_tap_new(s->id, s->opts, why, sizeof(why))
				: netdev_user_new(s->id, s->opts, incoming, why, sizeof(why));
	if (!m->netdevs[i]) {
		snprintf(err, errlen, "-netdev %s,id=%s: %s", s->type, s->id, why);
		return -1;
	}
	return 0;
}

int net_add_nic(struct machine *m, unsigned k, char *err, size_t errlen)
{
	const struct nic_spec *s = &m->cfg->nics[k];
	struct virtio_net_opts o = {m->netdevs[s->netdev], {0}, 0, s->devfn, s->id, s->mq};
	char why[256];

	memcpy(o.mac, s->mac, 6);
	m->nics[k] = virtio_net_new(&m->host, board_device_bus(m, m->cfg->nics[k].bus), &o, why, sizeof(why));
	if (!m->nics[k]) {
		snprintf(err, errlen, "NIC %s: %s", s->id, why);
		return -1;
	}
	return 0;
}

int board_add_nics(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++)
		if (net_open_netdev(m, i, m->cfg->incoming != NULL, err, errlen) < 0)
			return -1;
	/* those with addr= first, so the others fill the slots left */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < m->cfg->n_nics; k++)
			if ((m->cfg->nics[k].devfn >= 0) == (pass == 0) &&
			    net_add_nic(m, k, err, errlen) < 0)
				return -1;
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++)
		if (!nic_of(m, i))
			fprintf(stderr,
				"vmm: warning: netdev %s has no NIC (-device "
				"virtio-net-pci,netdev=%s)\n",
				m->cfg->netdevs[i].id, m->cfg->netdevs[i].id);
	return 0;
}

void board_free_nics(struct machine *m)
{
	for (unsigned k = 0; k < CLI_MAX_NICS; k++) {
		virtio_net_free(m->nics[k]);
		m->nics[k] = NULL;
	}
	for (unsigned i = 0; i < CLI_MAX_NETDEVS; i++) {
		netdev_free(m->netdevs[i]);
		m->netdevs[i] = NULL;
	}
}

/* ------------------------------------------------------ serialisation */

/* Run with the backend's NIC quiet (its I/O thread holds this lock). */
static void lock_netdev(struct machine *m, unsigned i)
{
	struct virtio_net *n = nic_of(m, i);

	if (n)
		virtio_pci_lock(virtio_net_transport(n));
}

static void unlock_netdev(struct machine *m, unsigned i)
{
	struct virtio_net *n = nic_of(m, i);

	if (n) {
		virtio_pci_unlock(virtio_net_transport(n));
		virtio_pci_wake(virtio_net_transport(n));
	}
}

/* ------------------------------------------------------------ monitor */

static void print_backend(struct machine *m, unsigned i, const char *indent, FILE *out)
{
	struct netdev *nd = m->netdevs[i];
	char buf[160] = "";

	if (!nd)
		return;
	nd->ops->info(nd, buf, sizeof(buf));
	fprintf(out, "%s%s: index=0,type=%s,%s\n", indent, nd->id, nd->ops->type, buf);
}

/* Multiqueue: pairs in use of those offered, frames per pair. */
static void print_pairs(const struct virtio_net_info *in, FILE *out)
{
	fprintf(out, "    queues: pairs=%u/%u tx_frames=", in->pairs, in->max_pairs);
	for (unsigned p = 0; p < in->max_pairs; p++)
		fprintf(out, "%s%llu", p ? "," : "",
			(unsigned long long)in->stats.pair_tx_frames[p]);
	fprintf(out, " rx_frames=");
	for (unsigned p = 0; p < in->max_pairs; p++)
		fprintf(out, "%s%llu", p ? "," : "",
			(unsigned long long)in->stats.pair_rx_frames[p]);
	fprintf(out, "\n");
}

static void print_nic(struct machine *m, unsigned k, FILE *out)
{
	struct virtio_net_info in;
	const struct virtio_net_stats *s = &in.stats;

	virtio_net_get_info(m->nics[k], &in);
	fprintf(out,
		"%s: "
		"index=0,type=nic,model=virtio-net-pci,macaddr=%02x:%02x:%02x:%02x:%02x:%02x%s\n",
		virtio_net_id(m->nics[k]), in.mac[0], in.mac[1], in.mac[2], in.mac[3], in.mac[4],
		in.mac[5], in.link_up ? "" : ",link=down");
	print_backend(m, m->cfg->nics[k].netdev, " \\ ", out);
	fprintf(out,
		"    rx: frames=%llu bytes=%llu dropped=%llu filtered=%llu too_big=%llu\n"
		"    tx: frames=%llu bytes=%llu dropped=%llu bad_header=%llu bad_chain=%llu "
		"ctrl_errors=%llu\n",
		(unsigned long long)s->rx_frames, (unsigned long long)s->rx_bytes,
		(unsigned long long)s->rx_dropped, (unsigned long long)s->rx_filtered,
		(unsigned long long)s->rx_too_big, (unsigned long long)s->tx_frames,
		(unsigned long long)s->tx_bytes, (unsigned long long)s->tx_dropped,
		(unsigned long long)s->tx_bad_hdr, (unsigned long long)s->tx_bad_chain,
		(unsigned long long)s->ctrl_bad);
	if (in.max_pairs > 1)
		print_pairs(&in, out);
}

/* QEMU's layout: each NIC, its backend under it; lone backends last. */
void net_info_network(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	for (unsigned k = 0; k < m->cfg->n_nics; k++)
		if (m->nics[k])
			print_nic(m, k, out);
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++)
		if (!nic_of(m, i))
			print_backend(m, i, "", out);
}

void net_info_usernet(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	for (unsigned i = 0; i < m->cfg->n_netdevs; i++) {
		char *buf;

		if (!m->netdevs[i] || !m->netdevs[i]->ops->stats)
			continue;
		lock_netdev(m, i);
		buf = m->netdevs[i]->ops->stats(m->netdevs[i]);
		unlock_netdev(m, i);
		if (!buf)
			continue;
		fprintf(out, "%s (%s):\n", m->netdevs[i]->id, m->netdevs[i]->ops->type);
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(out, "  %s\n", line);
		free(buf);
	}
}

/* The backend with port forwarding (user networking) named id, or the
 * first one when id is NULL: its index, or -1. */
static int find_user(struct machine *m, const char *id)
{
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++)
		if (m->netdevs[i] && m->netdevs[i]->ops->hostfwd &&
		    (!id || !strcmp(m->netdevs[i]->id, id)))
			return (int)i;
	return -1;
}

/* QEMU's rule: [tcp|udp]:[HADDR]:HPORT[-[GADDR]:GPORT]; the backend wants
 * the protocol spelled out and (to remove) a guest side it ignores. */
static void normalize_rule(const char *rule, bool add, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", rule[0] == ':' ? "tcp" : "", rule,
		 !add && !strchr(rule, '-') ? "-:1" : "");
}

void hmp_hostfwd(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	char rule[160], why[200];
	int i, r;

	if (argc != 2 && argc != 3) {
		fprintf(out, "usage: %s [netdev_id] [tcp|udp]:[hostaddr]:hostport%s\n", argv[0],
			add ? "-[guestaddr]:guestport" : "");
		return;
	}
	i = find_user(m, argc == 3 ? argv[1] : NULL);
	if (i < 0) {
		fprintf(out, "%s: no user network backend%s%s\n", argv[0], argc == 3 ? " " : "",
			argc == 3 ? argv[1] : "");
		return;
	}
	normalize_rule(argv[argc - 1], add, rule, sizeof(rule));
	lock_netdev(m, (unsigned)i);
	r = m->netdevs[i]->ops->hostfwd(m->netdevs[i], add, rule, why, sizeof(why));
	unlock_netdev(m, (unsigned)i);
	if (r < 0)
		fprintf(out, "%s: %s\n", argv[0], why);
}

int machine_set_link(struct machine *m, const char *name, bool up)
{
	int found = -ENOENT;

	for (unsigned k = 0; k < m->cfg->n_nics; k++) {
		const struct netdev_spec *d = &m->cfg->netdevs[m->cfg->nics[k].netdev];

		/* QEMU takes the NIC's id or its backend's */
		if (m->nics[k] && (!strcmp(m->cfg->nics[k].id, name) || !strcmp(d->id, name))) {
			virtio_net_set_link(m->nics[k], up);
			virtio_pci_wake(virtio_net_transport(m->nics[k]));
			found = 0;
		}
	}
	return found;
}

void hmp_set_link(struct machine *m, int argc, char **argv, FILE *out)
{
	if (argc != 3 || (strcmp(argv[2], "on") && strcmp(argv[2], "off"))) {
		fprintf(out, "usage: set_link NAME on|off\n");
		return;
	}
	if (machine_set_link(m, argv[1], !strcmp(argv[2], "on")) < 0)
		fprintf(out, "set_link: device '%s' not found\n", argv[1]);
}

/* ---------------------------------------------------------- migration */

#define NETDEV_STATE_VERSION 1
#define NETDEV_STATE_MAX (64u << 20) /* far above any snapshot usernet makes */

/* Within one host: the snapshot with the host sockets, appended to ho's,
 * the NIC left quiet (its lock held) until net_handover_end, so that
 * nothing reads from those sockets once their state is saved. 1 when it
 * is so, 0 when this backend saves without them, -1 with why. */
static int save_with_fds(struct machine *m, unsigned i, struct net_handover *ho, void **buf,
			 size_t *len, char *why, size_t wlen)
{
	struct netdev *nd = m->netdevs[i];
	unsigned n = 0;
	int *fds = NULL, *grown;
	int r;

	if (!ho || !nd->ops->save_fds)
		return 0;
	lock_netdev(m, i);
	r = nd->ops->save_fds(nd, buf, len, &fds, &n, why, wlen);
	grown = r == 0 && ho->nfds + n <= MIG_MAX_FDS
			? realloc(ho->fds, (ho->nfds + n + 1) * sizeof(*fds))
			: NULL;
	if (!grown) { /* too many to pass: resets, as across hosts */
		if (r == 0)
			free(*buf);
		free(fds);
		unlock_netdev(m, i);
		return r == 0 || r == -ENOTSUP ? 0 : -1;
	}
	ho->fds = grown;
	memcpy(ho->fds + ho->nfds, fds, n * sizeof(*fds));
	ho->first[i] = ho->nfds;
	ho->count[i] = n;
	ho->nfds += n;
	ho->held[i] = true;
	free(fds);
	return 1;
}

static int save_plain(struct machine *m, unsigned i, void **buf, size_t *len, char *why,
		      size_t wlen)
{
	struct netdev *nd = m->netdevs[i];
	int r;

	lock_netdev(m, i);
	r = nd->ops->save(nd, buf, len, why, wlen);
	unlock_netdev(m, i);
	return r;
}

int net_save(struct machine *m, struct state_writer *w, struct net_handover *ho, char *err,
	     size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++) {
		struct netdev *nd = m->netdevs[i];
		char name[MIGRATION_NODE_NAME_MAX], why[200];
		void *buf = NULL;
		size_t len = 0;
		int r;

		if (!nd || !nd->ops->save)
			continue;
		r = save_with_fds(m, i, ho, &buf, &len, why, sizeof(why));
		if (r == 0)
			r = save_plain(m, i, &buf, &len, why, sizeof(why));
		else if (r == 1)
			r = 0;
		if (r == -ENOTSUP)
			continue; /* impl=slirp: comes back as new */
		if (r < 0) {
			snprintf(err, errlen, "netdev %s: %s", nd->id, why);
			return -1;
		}
		migration_node_name(name, sizeof(name), "netdev", nd->id, i);
		state_begin(w, name, NETDEV_STATE_VERSION);
		state_put_u32(w, "size", (uint32_t)len);
		state_put_bytes(w, "state", buf, len);
		if (ho && ho->held[i]) { /* which of the stream's fds are its own */
			state_put_u32(w, "fd-first", ho->first[i]);
			state_put_u32(w, "fd-count", ho->count[i]);
		}
		state_end(w);
		free(buf);
	}
	return 0;
}

void net_handover_end(struct machine *m, struct net_handover *ho, bool done)
{
	for (unsigned i = 0; i < CLI_MAX_NETDEVS; i++) {
		if (!ho->held[i])
			continue;
		if (done)
			m->netdevs[i]->ops->hand_over(m->netdevs[i]);
		unlock_netdev(m, i);
		ho->held[i] = false;
	}
	free(ho->fds);
	ho->fds = NULL;
	ho->nfds = 0;
}

/* The fds a node names, when all of them came: else NULL, and the
 * backend resets the connections as after a file (a stream that went
 * through something other than one unix socket, or a source that could
 * not pass them all). */
static const int *node_fds(struct netdev *nd, struct state_node *n, const struct net_fds *in,
			   unsigned *count)
{
	uint32_t first = 0;

	*count = 0;
	if (!state_has(n, "fd-count"))
		return NULL;
	if (state_get_u32(n, "fd-first", &first) < 0 || state_get_u32(n, "fd-count", count) < 0)
		return NULL;
	if (!in || in->lost || first > in->nfds || *count > in->nfds - first) {
		fprintf(stderr,
			"vmm: netdev %s: %u host sockets were to come with the stream, %u did: "
			"its connections are reset\n",
			nd->id, *count, in && !in->lost && in->nfds > first ? in->nfds - first : 0);
		*count = 0;
		return NULL;
	}
	return in->fds + first;
}

static int load_one(struct netdev *nd, const void *buf, size_t len, const int *fds, unsigned nfds,
		    char *why, size_t wlen)
{
	if (nd->ops->load_fds)
		return nd->ops->load_fds(nd, buf, len, fds, nfds, why, wlen);
	return nd->ops->load(nd, buf, len, why, wlen);
}

int net_load(struct machine *m, const struct state_reader *r, const struct net_fds *in, char *err,
	     size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_netdevs; i++) {
		struct netdev *nd = m->netdevs[i];
		struct state_reader at;
		char name[MIGRATION_NODE_NAME_MAX], why[200];
		struct state_node n;
		uint32_t len = 0;
		unsigned nfds;
		const int *fds;
		void *buf;
		int ret;

		if (!nd)
			continue;
		migration_node_name(name, sizeof(name), "netdev", nd->id, i);
		if (!nd->ops->load || state_reader_sub(r, name, &at, why, sizeof(why)) < 0)
			continue; /* saved with nothing (a TAP, impl=slirp) */
		if (state_node_open(&n, r, name, NETDEV_STATE_VERSION, err, errlen) < 0 ||
		    state_get_u32_max(&n, "size", NETDEV_STATE_MAX, &len) < 0)
			return -1;
		if (!(buf = malloc(len ? len : 1))) {
			snprintf(err, errlen, "netdev %s: out of memory", nd->id);
			return -1;
		}
		fds = node_fds(nd, &n, in, &nfds);
		if (state_get_bytes(&n, "state", buf, len) < 0 || state_node_close(&n) < 0) {
			free(buf);
			return -1;
		}
		lock_netdev(m, i);
		ret = load_one(nd, buf, len, fds, nfds, why, sizeof(why));
		unlock_netdev(m, i);
		free(buf);
		if (ret < 0) {
			snprintf(err, errlen, "netdev %s: %s", nd->id, why);
			return -1;
		}
	}
	return 0;
}
