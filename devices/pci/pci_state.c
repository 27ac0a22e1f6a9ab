/* pci_state.c — snapshots of PCI configuration space and of the host
 * bridge's configuration ports (see pci.h). */
#include <pthread.h>
#include <string.h>

#include "devices/pci/pci_internal.h"
#include "state/state.h"

#define PCI_HOST_STATE_VERSION 1

/* Bytes a guest can never change and the device never moves: a tree
 * whose identity differs belongs to another device. */
static const struct {
	unsigned off, len;
	const char *what;
} identity[] = {
	{0x00, 4, "vendor/device id"},	 {0x08, 4, "revision/class"}, {0x0e, 1, "header type"},
	{0x34, 1, "capability pointer"}, {0x3d, 1, "interrupt pin"},
};

void pci_dev_save(struct pci_dev *d, struct state_writer *w)
{
	struct pci_bus *root = pci_root(d->bus);
	uint8_t cfg[PCI_CFG_SPACE_SIZE];
	bool level;

	if (root)
		pthread_mutex_lock(&root->lock);
	memcpy(cfg, d->cfg, sizeof(cfg));
	level = d->irq_level;
	if (root)
		pthread_mutex_unlock(&root->lock);
	state_put_bytes(w, "pci-config", cfg, sizeof(cfg));
	state_put_u8(w, "pci-irq", level);
}

static int check_identity(struct pci_dev *d, struct state_node *n, const uint8_t *cfg)
{
	for (size_t i = 0; i < sizeof(identity) / sizeof(identity[0]); i++)
		if (memcmp(cfg + identity[i].off, d->cfg + identity[i].off, identity[i].len))
			return state_node_fail(n, "%s of %s differs from the saved one",
					       identity[i].what, d->name);
	/* type 0 headers carry the subsystem ids there; bridges their bus
	 * numbers, which the guest programs */
	if (!(d->cfg[0x0e] & 0x7f) && memcmp(cfg + 0x2c, d->cfg + 0x2c, 4))
		return state_node_fail(n, "subsystem id of %s differs from the saved one", d->name);
	return 0;
}

int pci_dev_load(struct pci_dev *d, struct state_node *n)
{
	struct pci_bus *root = pci_root(d->bus);
	uint8_t cfg[PCI_CFG_SPACE_SIZE];
	bool level;

	if (state_get_bytes(n, "pci-config", cfg, sizeof(cfg)) < 0 ||
	    state_get_bool(n, "pci-irq", &level) < 0 || check_identity(d, n, cfg) < 0)
		return -1;
	if (root)
		pthread_mutex_lock(&root->lock);
	memcpy(d->cfg, cfg, sizeof(cfg));
	if (root)
		pci_update_bars(root, d);
	if (root)
		pthread_mutex_unlock(&root->lock);
	pci_dev_set_irq(d, level);
	return 0;
}

void pci_bus_save(struct pci_bus *bus, struct state_writer *w)
{
	struct pci_bus *root = pci_root(bus);
	uint32_t addr;
	uint8_t low, rcr;

	pthread_mutex_lock(&root->lock);
	addr = root->cfg_addr;
	low = root->cfg_addr_low;
	rcr = root->rcr;
	pthread_mutex_unlock(&root->lock);
	state_begin(w, "pci-host@cf8", PCI_HOST_STATE_VERSION);
	state_put_u32(w, "cfg-addr", addr);
	state_put_u8(w, "cfg-addr-low", low);
	state_put_u8(w, "reset-control", rcr);
	state_end(w);
}

int pci_bus_load(struct pci_bus *bus, const struct state_reader *r, char *err, size_t errlen)
{
	struct pci_bus *root = pci_root(bus);
	struct state_node n;
	uint32_t addr;
	uint8_t low, rcr;

	if (state_node_open(&n, r, "pci-host@cf8", PCI_HOST_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "cfg-addr", &addr) < 0 ||
	    state_get_u8_max(&n, "cfg-addr-low", 3, &low) < 0 ||
	    state_get_u8(&n, "reset-control", &rcr) < 0)
		return -1;
	/* what the port handlers would have kept of a guest write */
	if (addr & ~PCI_CFG_ADDR_MASK)
		return state_node_fail(&n, "cfg-addr %#x has bits 0xcf8 never keeps", addr);
	if (rcr & ~PCI_RCR_KEPT)
		return state_node_fail(&n, "reset-control %#x has bits 0xcf9 never keeps", rcr);
	if (state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&root->lock);
	root->cfg_addr = addr;
	root->cfg_addr_low = low;
	root->rcr = rcr;
	pthread_mutex_unlock(&root->lock);
	return 0;
}
