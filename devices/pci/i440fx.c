/* i440fx.c — the 82441FX host bridge at 00:00.0.
 *
 * Its PAM registers (0x59-0x5f) decide, per segment of 0xc0000-0xfffff,
 * whether reads and writes go to shadow RAM or to ROM/PCI. Each segment is
 * mapped through pc_mem_map (neighbours that continue each other in one
 * mapping):
 *   read-enable + write-enable  shadow RAM, writable
 *   read-enable only            shadow RAM, read-only (writes dropped)
 *   write-enable only           ROM (or nothing) for reads; writes exit to
 *                               the MMIO bus, where we store them in RAM
 *   neither                     ROM alias in 0xe0000-0xfffff, else nothing
 * SeaBIOS copies itself into shadow RAM this way, then write-protects it.
 * The SMRAM register (0x72) is kept with its D_LCK semantics; there is no
 * SMM, so SMRAM is never opened over 0xa0000. The same model is the Q35
 * MCH's PAM/SMRAM for -machine q35 (0x90-0x96, 0x9d), whose PCIEXBAR
 * (0x60, 64 bits) also places the PCIe ECAM window: bit 0 enables it,
 * bits 2:1 give its length (256, 128 or 64 MiB: buses 0-255, 0-127, 0-63),
 * bits 35:26 its base. SeaBIOS puts it at 0xb0000000. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "devices/dev_host.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "state/state.h"

#define PAM0 ((unsigned)nb->regs->pam0)
#define NR_PAM_REGS 7u
#define SMRAM ((unsigned)nb->regs->smram)
#define SMRAM_D_OPEN 0x40
#define SMRAM_D_LCK 0x10
#define SMRAM_DEFAULT 0x02

#define SHADOW_BASE 0xc0000u
#define SHADOW_SIZE 0x40000u /* up to 1 MiB */
#define NR_SEGS 13		     /* 12 x 16 KiB (0xc0000-0xeffff) + 64 KiB (0xf0000) */

enum { PAM_RE = 1, PAM_WE = 2 };

/* The same PAM and SMRAM logic in two host bridges: the 82441FX and the
 * Q35 MCH (-machine q35), whose registers sit elsewhere. */
struct nb_regs {
	const char *name;
	uint16_t device;
	uint8_t pam0, smram;
	uint8_t pciexbar; /* 0: none */
};
static const struct nb_regs i440fx_regs = {"i440fx", 0x1237, 0x59, 0x72, 0};
static const struct nb_regs q35_regs = {"q35-mch", 0x29c0, 0x90, 0x9d, 0x60};

#define PCIEXBAR ((unsigned)nb->regs->pciexbar)
#define PCIEXBAR_EN 1u
#define PCIEXBAR_DEFAULT 0xb0000000u /* QEMU's reset value, disabled */

/* One mapping of a stretch of 0xc0000-0xfffff: one or more segments. */
struct pam_run {
	uint32_t gpa, size;
	uint8_t *hva; /* NULL: nothing mapped (reads reach the MMIO bus) */
	bool ro;
};

struct i440fx {
	struct pci_dev pci;
	const struct nb_regs *regs;
	struct dev_host *host;
	const struct pc_mem_map *map;
	pthread_mutex_t lock;
	uint8_t *shadow;     /* SHADOW_SIZE bytes of RAM behind 0xc0000-0xfffff */
	uint8_t *bios;	     /* alias shown at [1 MiB - bios_size, 1 MiB) */
	uint64_t bios_size;
	struct pam_run applied[NR_SEGS]; /* the mappings made, n_applied of them */
	unsigned n_applied;
	bool batch; /* PAM writes in progress: one apply_all after them */
};

static void seg_range(unsigned seg, uint32_t *gpa, uint32_t *size)
{
	if (seg < 12) {
		*gpa = SHADOW_BASE + seg * 0x4000u;
		*size = 0x4000;
	} else {
		*gpa = 0xf0000;
		*size = 0x10000;
	}
}

/* The 2-bit PAM field of a segment: 0x59 bits 4-5 hold 0xf0000; 0x5a-0x5f
 * hold two 16 KiB segments each, low nibble first. */
static unsigned seg_pam(const struct i440fx *nb, unsigned seg)
{
	uint8_t v;

	if (seg == 12)
		return (nb->pci.cfg[PAM0] >> 4) & 3;
	v = nb->pci.cfg[PAM0 + 1 + seg / 2];
	return (seg & 1 ? v >> 4 : v) & 3;
}

static void *rom_for(const struct i440fx *nb, uint32_t gpa, uint32_t size)
{
	uint64_t alias_base = 0x100000 - nb->bios_size;

	if (!nb->bios || gpa < alias_base)
		return NULL;
	return nb->bios + (gpa - alias_base);
}

/* What a segment shows now: its shadow RAM (read-only unless PAM_WE),
 * or the ROM alias, or nothing (hva NULL). */
static struct pam_run seg_target(const struct i440fx *nb, unsigned seg)
{
	unsigned st = seg_pam(nb, seg);
	struct pam_run r;

	seg_range(seg, &r.gpa, &r.size);
	if (st & PAM_RE) {
		r.hva = nb->shadow + (r.gpa - SHADOW_BASE);
		r.ro = !(st & PAM_WE);
	} else {
		r.hva = rom_for(nb, r.gpa, r.size);
		r.ro = true;
	}
	return r;
}

/* Whether b continues a: adjacent in the guest and in the host (or both
 * unmapped), with the same access. */
static bool run_continues(const struct pam_run *a, const struct pam_run *b)
{
	if (a->gpa + a->size != b->gpa || a->ro != b->ro || !a->hva != !b->hva)
		return false;
	return !a->hva || a->hva + a->size == b->hva;
}

/* The segments as mappings, neighbours that continue each other merged:
 * the number of runs. */
static unsigned plan_runs(const struct i440fx *nb, struct pam_run *runs)
{
	unsigned n = 0;

	for (unsigned seg = 0; seg < NR_SEGS; seg++) {
		struct pam_run t = seg_target(nb, seg);

		if (n && run_continues(&runs[n - 1], &t))
			runs[n - 1].size += t.size;
		else
			runs[n++] = t;
	}
	return n;
}

static bool run_is_applied(const struct i440fx *nb, const struct pam_run *r)
{
	for (unsigned i = 0; i < nb->n_applied; i++)
		if (nb->applied[i].gpa == r->gpa && nb->applied[i].size == r->size &&
		    nb->applied[i].hva == r->hva && nb->applied[i].ro == r->ro)
			return true;
	return false;
}

/* Make the machine's mappings what the PAM registers say (nb->lock held).
 * Each mapping is a KVM memory slot, and changing one is costly (KVM waits
 * for an SRCU grace period and drops the slot's translations): so
 * segments that continue each other share one mapping, as QEMU's flat
 * view merges them, and a mapping already in place is left alone unless
 * force. A new mapping replaces those it overlaps: an old run that is not
 * in the new plan always overlaps runs that are, which replace it. */
static void apply_all(struct i440fx *nb, bool force)
{
	struct pam_run runs[NR_SEGS];
	unsigned n = plan_runs(nb, runs);

	for (unsigned i = 0; i < n; i++) {
		const struct pam_run *r = &runs[i];
		int ret;

		if (!force && run_is_applied(nb, r))
			continue;
		ret = nb->map->map(nb->map->opaque, r->gpa, r->size, r->hva, r->ro);
		if (ret)
			fprintf(stderr, "vmm: %s: cannot remap 0x%x-0x%x: %s\n", nb->regs->name,
				r->gpa, r->gpa + r->size - 1, strerror(-ret));
	}
	memcpy(nb->applied, runs, n * sizeof(runs[0]));
	nb->n_applied = n;
}

/* Map or unmap the ECAM window as PCIEXBAR now says (bus lock held). */
static void apply_pciexbar(struct i440fx *nb)
{
	const uint8_t *r = &nb->pci.cfg[PCIEXBAR];
	uint64_t v = (uint64_t)r[0] | (uint64_t)r[1] << 8 | (uint64_t)r[2] << 16 |
		     (uint64_t)r[3] << 24 | (uint64_t)(r[4] & 0xf) << 32;
	unsigned len_sel = (v >> 1) & 3;
	uint64_t size = len_sel == 3 ? 0 : (256ull << 20) >> len_sel;
	int ret;

	if (!(v & PCIEXBAR_EN) || !size) {
		pci_bus_set_ecam(nb->pci.bus, 0, 0);
		return;
	}
	ret = pci_bus_set_ecam(nb->pci.bus, v & ~(size - 1), size);
	if (ret)
		fprintf(stderr, "vmm: q35-mch: cannot map the ECAM window at %#llx: %s\n",
			(unsigned long long)(v & ~(size - 1)), strerror(-ret));
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct i440fx *nb = d->opaque;

	if (PCIEXBAR && off < PCIEXBAR + 8 && off + size > PCIEXBAR)
		apply_pciexbar(nb);

	if (off + size > SMRAM && off <= SMRAM) {
		/* D_LCK is sticky and freezes D_OPEN; the value was already
		 * masked by wmask, so enforce the lock by narrowing wmask. */
		if (d->cfg[SMRAM] & SMRAM_D_LCK) {
			d->cfg[SMRAM] &= ~SMRAM_D_OPEN;
			d->wmask[SMRAM] = 0;
		}
	}
	if (off < PAM0 + NR_PAM_REGS && off + size > PAM0 && !nb->batch) {
		pthread_mutex_lock(&nb->lock);
		apply_all(nb, false);
		pthread_mutex_unlock(&nb->lock);
	}
}

/* Accesses that reach the MMIO bus inside 0xc0000-0xfffff: reads of
 * segments decoding nothing, and writes to read-only mappings. */
static void shadow_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	memset(data, 0xff, size);
}

static void shadow_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct i440fx *nb = opaque;
	unsigned seg = off < 0x30000 ? (unsigned)(off / 0x4000) : 12;

	pthread_mutex_lock(&nb->lock);
	if ((seg_pam(nb, seg) & PAM_WE) && off + size <= SHADOW_SIZE)
		memcpy(nb->shadow + off, data, size);
	pthread_mutex_unlock(&nb->lock);
}

static const struct io_ops shadow_ops = {shadow_read, shadow_write};

static void i440fx_reset(void *opaque)
{
	struct i440fx *nb = opaque;

	pthread_mutex_lock(&nb->lock);
	memset(&nb->pci.cfg[PAM0], 0, NR_PAM_REGS);
	nb->pci.cfg[SMRAM] = SMRAM_DEFAULT;
	nb->pci.wmask[SMRAM] = 0x78;
	apply_all(nb, true);
	pthread_mutex_unlock(&nb->lock);
	if (PCIEXBAR) {
		memset(&nb->pci.cfg[PCIEXBAR], 0, 8);
		nb->pci.cfg[PCIEXBAR + 3] = PCIEXBAR_DEFAULT >> 24;
		pci_bus_set_ecam(nb->pci.bus, 0, 0);
	}
}

static struct i440fx *host_bridge_new(struct dev_host *host, struct pci_bus *bus,
				      const struct pc_mem_map *map, const struct nb_regs *regs)
{
	struct i440fx *nb = calloc(1, sizeof(*nb));

	if (!nb)
		return NULL;
	nb->regs = regs;
	nb->shadow = mmap(NULL, SHADOW_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nb->shadow == MAP_FAILED) {
		free(nb);
		return NULL;
	}
	nb->host = host;
	nb->map = map;
	pthread_mutex_init(&nb->lock, NULL);
	pci_dev_init(&nb->pci, regs->name, 0x8086, regs->device, 0x060000, 0x02);
	nb->pci.opaque = nb;
	nb->pci.cfg_written = cfg_written;
	nb->pci.wmask[PAM0] = 0x30;
	memset(&nb->pci.wmask[PAM0 + 1], 0x33, NR_PAM_REGS - 1);
	nb->pci.cfg[SMRAM] = SMRAM_DEFAULT;
	nb->pci.wmask[SMRAM] = 0x78; /* D_OPEN, D_CLS, D_LCK, G_SMRAME */
	if (PCIEXBAR) {
		/* base bits 35:26, length bits 2:1, enable */
		nb->pci.cfg[PCIEXBAR + 3] = PCIEXBAR_DEFAULT >> 24;
		nb->pci.wmask[PCIEXBAR] = 0x07;
		nb->pci.wmask[PCIEXBAR + 3] = 0xfc;
		nb->pci.wmask[PCIEXBAR + 4] = 0x0f;
	}
	if (pci_bus_add(bus, &nb->pci, 0) ||
	    iobus_register(host->mmio, SHADOW_BASE, SHADOW_SIZE, &shadow_ops, nb, "pam")) {
		i440fx_free(nb);
		return NULL;
	}
	dev_on_reset(host, i440fx_reset, nb);
	/* Bus masters reach shadow RAM too: SeaBIOS keeps its stack and
	 * buffers there and hands them to virtio-blk. */
	if (host->mem && host->mem->n < GUEST_MEM_MAX_REGIONS)
		host->mem->r[host->mem->n++] =
			(struct guest_ram_region){SHADOW_BASE, SHADOW_SIZE, nb->shadow};
	pthread_mutex_lock(&nb->lock);
	apply_all(nb, true);
	pthread_mutex_unlock(&nb->lock);
	return nb;
}

struct i440fx *i440fx_new(struct dev_host *host, struct pci_bus *bus, const struct pc_mem_map *map)
{
	return host_bridge_new(host, bus, map, &i440fx_regs);
}

struct i440fx *q35_mch_new(struct dev_host *host, struct pci_bus *bus, const struct pc_mem_map *map)
{
	return host_bridge_new(host, bus, map, &q35_regs);
}

void i440fx_shadow_all(struct i440fx *nb)
{
	/* seven registers, one change of the mappings */
	nb->batch = true;
	pci_cfg_write(nb->pci.bus, 0, PAM0, 1, 0x30);
	for (unsigned reg = PAM0 + 1u; reg < PAM0 + NR_PAM_REGS; reg++)
		pci_cfg_write(nb->pci.bus, 0, reg, 1, 0x33);
	nb->batch = false;
	pthread_mutex_lock(&nb->lock);
	apply_all(nb, false);
	pthread_mutex_unlock(&nb->lock);
}

void q35_mch_enable_ecam(struct i440fx *nb)
{
	pci_cfg_write(nb->pci.bus, 0, PCIEXBAR + 4, 4, 0);
	pci_cfg_write(nb->pci.bus, 0, PCIEXBAR, 4, Q35_ECAM_BASE | PCIEXBAR_EN);
}

int i440fx_set_bios_alias(struct i440fx *nb, void *hva, uint64_t size)
{
	if (!hva || size == 0 || size % 0x4000 || size > SHADOW_SIZE)
		return -EINVAL;
	pthread_mutex_lock(&nb->lock);
	nb->bios = hva;
	nb->bios_size = size;
	apply_all(nb, true);
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

/* Snapshot: config space (PAM, SMRAM, PCIEXBAR) and the shadow RAM behind
 * 0xc0000-0xfffff, which is not guest RAM (the BIOS lives there). */
#define NB_STATE_VERSION 1

static void nb_node(const struct i440fx *nb, char *buf, size_t len)
{
	snprintf(buf, len, "%s@0,0", nb->regs->name);
}

void i440fx_save(struct i440fx *nb, struct state_writer *w)
{
	char node[32];

	nb_node(nb, node, sizeof(node));
	state_begin(w, node, NB_STATE_VERSION);
	pci_dev_save(&nb->pci, w);
	pthread_mutex_lock(&nb->lock);
	state_put_bytes(w, "shadow", nb->shadow, SHADOW_SIZE);
	pthread_mutex_unlock(&nb->lock);
	state_end(w);
}

int i440fx_load(struct i440fx *nb, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;
	const void *shadow;
	char node[32];

	nb_node(nb, node, sizeof(node));
	if (state_node_open(&n, r, node, NB_STATE_VERSION, err, errlen) < 0 ||
	    !(shadow = state_get_in_place(&n, "shadow", SHADOW_SIZE)) ||
	    pci_dev_load(&nb->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	/* the side state cfg_written keeps: the SMRAM lock, PAM mappings, ECAM */
	if (nb->pci.cfg[SMRAM] & SMRAM_D_LCK) {
		nb->pci.cfg[SMRAM] &= ~SMRAM_D_OPEN;
		nb->pci.wmask[SMRAM] = 0;
	} else {
		nb->pci.wmask[SMRAM] = 0x78;
	}
	pthread_mutex_lock(&nb->lock);
	memcpy(nb->shadow, shadow, SHADOW_SIZE); /* from the tree: no copy between */
	/* Only the mappings that differ (this runs while a migrated guest is
	 * stopped): one left alone already shows the shadow just filled, or
	 * ROM. */
	apply_all(nb, false);
	pthread_mutex_unlock(&nb->lock);
	if (PCIEXBAR)
		apply_pciexbar(nb);
	return 0;
}

void i440fx_free(struct i440fx *nb)
{
	if (!nb)
		return;
	if (PCIEXBAR && nb->pci.bus)
		pci_bus_set_ecam(nb->pci.bus, 0, 0);
	pci_bus_remove(&nb->pci);
	iobus_unregister(nb->host->mmio, SHADOW_BASE);
	for (unsigned i = 0; nb->host->mem && i < nb->host->mem->n; i++)
		if (nb->host->mem->r[i].hva == nb->shadow)
			nb->host->mem->r[i] = nb->host->mem->r[--nb->host->mem->n];
	munmap(nb->shadow, SHADOW_SIZE);
	pthread_mutex_destroy(&nb->lock);
	free(nb);
}
