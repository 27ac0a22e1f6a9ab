/* i440fx.c — the 82441FX host bridge at 00:00.0.
 *
 * Its PAM registers (0x59-0x5f) decide, per segment of 0xc0000-0xfffff,
 * whether reads and writes go to shadow RAM or to ROM/PCI. Each segment is
 * one mapping the machine makes through pc_mem_map:
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

struct i440fx {
	struct pci_dev pci;
	const struct nb_regs *regs;
	struct dev_host *host;
	const struct pc_mem_map *map;
	pthread_mutex_t lock;
	uint8_t *shadow;     /* SHADOW_SIZE bytes of RAM behind 0xc0000-0xfffff */
	uint8_t *bios;	     /* alias shown at [1 MiB - bios_size, 1 MiB) */
	uint64_t bios_size;
	uint8_t seg_state[NR_SEGS]; /* PAM_RE|PAM_WE as applied, 0xff = never */
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

static void apply_seg(struct i440fx *nb, unsigned seg, bool force)
{
	unsigned st = seg_pam(nb, seg);
	uint32_t gpa, size;
	void *hva;
	bool ro;
	int ret;

	if (!force && nb->seg_state[seg] == st)
		return;
	seg_range(seg, &gpa, &size);
	if (st & PAM_RE) {
		hva = nb->shadow + (gpa - SHADOW_BASE);
		ro = !(st & PAM_WE);
	} else {
		hva = rom_for(nb, gpa, size);
		ro = true;
	}
	ret = nb->map->map(nb->map->opaque, gpa, size, hva, ro);
	if (ret)
		fprintf(stderr, "vmm: i440fx: cannot remap 0x%x-0x%x: %s\n", gpa, gpa + size - 1,
			strerror(-ret));
	nb->seg_state[seg] = (uint8_t)st;
}

static void apply_all(struct i440fx *nb, bool force)
{
	for (unsigned seg = 0; seg < NR_SEGS; seg++)
		apply_seg(nb, seg, force);
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
	if (off < PAM0 + NR_PAM_REGS && off + size > PAM0) {
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
	memset(nb->seg_state, 0xff, sizeof(nb->seg_state));
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
	pci_cfg_write(nb->pci.bus, 0, PAM0, 1, 0x30);
	for (unsigned reg = PAM0 + 1u; reg < PAM0 + NR_PAM_REGS; reg++)
		pci_cfg_write(nb->pci.bus, 0, reg, 1, 0x33);
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
	uint8_t *shadow = malloc(SHADOW_SIZE);
	char node[32];
	int ret = -1;

	if (!shadow) {
		snprintf(err, errlen, "state: out of memory");
		return -1;
	}
	nb_node(nb, node, sizeof(node));
	if (state_node_open(&n, r, node, NB_STATE_VERSION, err, errlen) < 0 ||
	    state_get_bytes(&n, "shadow", shadow, SHADOW_SIZE) < 0 || pci_dev_load(&nb->pci, &n) < 0 ||
	    state_node_close(&n) < 0)
		goto out;
	/* the side state cfg_written keeps: the SMRAM lock, PAM mappings, ECAM */
	if (nb->pci.cfg[SMRAM] & SMRAM_D_LCK) {
		nb->pci.cfg[SMRAM] &= ~SMRAM_D_OPEN;
		nb->pci.wmask[SMRAM] = 0;
	} else {
		nb->pci.wmask[SMRAM] = 0x78;
	}
	pthread_mutex_lock(&nb->lock);
	memcpy(nb->shadow, shadow, SHADOW_SIZE);
	apply_all(nb, true);
	pthread_mutex_unlock(&nb->lock);
	if (PCIEXBAR)
		apply_pciexbar(nb);
	ret = 0;
out:
	free(shadow);
	return ret;
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
