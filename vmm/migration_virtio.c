/* migration_virtio.c — the machine's virtio devices in the state tree:
 * virtio-blk-pci, virtio-net-pci, virtio-rng-pci, virtio-serial-pci,
 * virtio-wlan-pci and virtio-balloon-pci, one node each (`virtio-blk@0`, by the index the
 * command line gave them; the hot-pluggable virtio-blk, virtio-net and
 * virtio-rng by their id= when they have one, `virtio-blk@virtio-disk1`;
 * `virtio-balloon@0`), and the
 * edu and pci-testdev test devices beside them (`edu@0`,
 * `pci-testdev@0`). Saving
 * drains each device's requests and freezes its queues until
 * migration_virtio_thaw (see devices/virtio/state.c); loading freezes
 * them too, until the whole machine is loaded. */
#include <stdio.h>

#include "devices/testdev/edu.h"
#include "devices/virtio/virtio.h"
#include "vmm/machine.h"
#include "vmm/migration.h"
#include "vmm/vserial.h"

const char *migration_node_name(char *buf, size_t len, const char *kind, const char *id,
				unsigned index)
{
	if (id && id[0])
		snprintf(buf, len, "%s@%s", kind, id);
	else
		snprintf(buf, len, "%s@%u", kind, index);
	return buf;
}

/* Every saved virtio device of m with its node name; f returns < 0 to stop. */
static int each_virtio(struct machine *m,
		       int (*f)(struct virtio_pci *vp, const char *name, void *ctx), void *ctx)
{
	char name[MIGRATION_NODE_NAME_MAX];

	for (unsigned i = 0; i < CLI_MAX_VIRTIO_DRIVES; i++) {
		migration_node_name(name, sizeof(name), "virtio-blk", m->cfg->vblk[i].id, i);
		if (m->vblk[i] && f(virtio_blk_transport(m->vblk[i]), name, ctx) < 0)
			return -1;
	}
	for (unsigned i = 0; i < CLI_MAX_NICS; i++) {
		migration_node_name(name, sizeof(name), "virtio-net", m->cfg->nics[i].id, i);
		if (m->nics[i] && f(virtio_net_transport(m->nics[i]), name, ctx) < 0)
			return -1;
	}
	for (unsigned i = 0; i < CLI_MAX_RNG; i++) {
		migration_node_name(name, sizeof(name), "virtio-rng", m->cfg->rng.devs[i].id, i);
		if (m->rng[i] && f(virtio_rng_transport(m->rng[i]), name, ctx) < 0)
			return -1;
	}
	for (unsigned i = 0; i < CLI_MAX_VSERIAL; i++) {
		struct virtio_console *vc = vmm_vserial_dev(m->vserial, i);

		snprintf(name, sizeof(name), "virtio-serial@%u", i);
		if (vc && f(virtio_console_transport(vc), name, ctx) < 0)
			return -1;
	}
	for (unsigned i = 0; vmm_wlan_transport(m, i); i++) {
		snprintf(name, sizeof(name), "virtio-wlan@%u", i);
		if (f(vmm_wlan_transport(m, i), name, ctx) < 0)
			return -1;
	}
	if (vmm_balloon_dev(m) &&
	    f(virtio_balloon_transport(vmm_balloon_dev(m)), "virtio-balloon@0", ctx) < 0)
		return -1;
	return 0;
}

struct walk {
	struct state_writer *w;
	const struct state_reader *r;
	char *err;
	size_t errlen;
};

static int save_one(struct virtio_pci *vp, const char *name, void *ctx)
{
	struct walk *k = ctx;

	return virtio_pci_save(vp, k->w, name, k->err, k->errlen);
}

static int load_one(struct virtio_pci *vp, const char *name, void *ctx)
{
	struct walk *k = ctx;

	virtio_pci_freeze(vp); /* until migration_virtio_thaw */
	return virtio_pci_load(vp, k->r, name, k->err, k->errlen);
}

static int thaw_one(struct virtio_pci *vp, const char *name, void *ctx)
{
	virtio_pci_thaw(vp);
	return 0;
}

int migration_virtio_save(struct machine *m, struct state_writer *w, char *err, size_t errlen)
{
	struct walk k = {.w = w, .err = err, .errlen = errlen};
	char name[32];

	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++) {
		snprintf(name, sizeof(name), "edu@%u", i);
		if (m->edu[i])
			edu_save(m->edu[i], w, name);
		snprintf(name, sizeof(name), "pci-testdev@%u", i);
		if (m->pci_testdev[i])
			pci_testdev_save(m->pci_testdev[i], w, name);
	}
	if (each_virtio(m, save_one, &k) < 0)
		return -1;
	vmm_wlan_save(m, w); /* the media, once their radios' queues are still */
	return 0;
}

int migration_virtio_load(struct machine *m, const struct state_reader *devs, char *err,
			  size_t errlen)
{
	struct walk k = {.r = devs, .err = err, .errlen = errlen};
	char name[32];

	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++) {
		snprintf(name, sizeof(name), "edu@%u", i);
		if (m->edu[i] && edu_load(m->edu[i], devs, name, err, errlen) < 0)
			return -1;
		snprintf(name, sizeof(name), "pci-testdev@%u", i);
		if (m->pci_testdev[i] &&
		    pci_testdev_load(m->pci_testdev[i], devs, name, err, errlen) < 0)
			return -1;
	}
	if (each_virtio(m, load_one, &k) < 0)
		return -1;
	return vmm_wlan_load(m, devs, err, errlen);
}

void migration_virtio_thaw(struct machine *m)
{
	each_virtio(m, thaw_one, NULL);
}
