/* fuzz_state_chipset.c — the PC chipset's snapshot loaders on a state
 * tree: the 0xcf8 latches, i440FX, PIIX3, PIIX3 IDE and AHCI (no drives),
 * ACPI PM, i8042, port 0x92, the i8257 pair, fw_cfg and pc-testdev. An accepted tree is loaded
 * into fresh devices, their ports are read and written, and what each
 * device then holds is saved again and must load back into fresh ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/isa/acpi_pm.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/fw_cfg.h"
#include "devices/isa/i8042.h"
#include "devices/isa/port92.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/piix3.h"
#include "devices/storage/ahci.h"
#include "devices/storage/ide.h"
#include "devices/testdev/pc_testdev.h"
#include "state/state.h"
#include "tests/fake_host.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_state.h"

static struct fake_host host;

static int no_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	return 0;
}

static const struct pc_mem_map map = {no_map, NULL};

static void nothing(void *opaque)
{
}

enum { BUS, NB, SB, IDE, AHCI, PM, KBC, P92, DMA, FW, TD, NDEV };

struct devs {
	struct pci_bus *bus;
	struct i440fx *nb;
	struct piix3 *sb;
	struct ide *ide;
	struct ahci *ahci;
	struct acpi_pm *pm;
	struct i8042 *kbc;
	struct port92 *p92;
	struct dma8237 *dma;
	struct fw_cfg *fw;
	struct pc_testdev *td;
	bool ok[NDEV];
};

static void *devs_new(void)
{
	struct block_dev *none[IDE_MAX_DRIVES] = {0};
	struct ahci_drive no_drives[AHCI_PORTS] = {{0}};
	struct devs *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	host.host.n_reset = 0;
	host.host.mem = NULL;
	d->bus = pci_bus_new(&host.host);
	d->nb = d->bus ? i440fx_new(&host.host, d->bus, &map) : NULL;
	d->sb = d->bus ? piix3_new(&host.host, d->bus) : NULL;
	d->ide = d->bus ? ide_new(&host.host, d->bus, none) : NULL;
	d->ahci = d->bus ? ahci_new(&host.host, d->bus, 3 << 3, no_drives) : NULL;
	d->td = d->bus ? pc_testdev_new(&host.host, d->bus) : NULL;
	d->pm = acpi_pm_new(&host.host, 0x600, 5, nothing, NULL);
	d->kbc = i8042_new(&host.host, nothing, NULL);
	d->p92 = port92_new(&host.host, nothing, NULL);
	d->dma = dma8237_new(&host.host);
	d->fw = fw_cfg_new(&host.host);
	if (!d->nb || !d->sb || !d->ide || !d->pm || !d->kbc || !d->p92 || !d->dma || !d->fw ||
	    !d->ahci || !d->td)
		abort();
	return d;
}

static void devs_free(void *opaque)
{
	struct devs *d = opaque;

	pc_testdev_free(d->td);
	fw_cfg_free(d->fw);
	dma8237_free(d->dma);
	port92_free(d->p92);
	i8042_free(d->kbc);
	acpi_pm_free(d->pm);
	ahci_free(d->ahci);
	ide_free(d->ide);
	piix3_free(d->sb);
	i440fx_free(d->nb);
	pci_bus_free(d->bus);
	free(d);
}

static void devs_load(void *opaque, const struct state_reader *r)
{
	struct devs *d = opaque;
	char e[256];

	d->ok[BUS] = pci_bus_load(d->bus, r, e, sizeof(e)) == 0;
	d->ok[NB] = i440fx_load(d->nb, r, e, sizeof(e)) == 0;
	d->ok[SB] = piix3_load(d->sb, r, e, sizeof(e)) == 0;
	d->ok[IDE] = ide_load(d->ide, r, e, sizeof(e)) == 0;
	d->ok[AHCI] = ahci_load(d->ahci, r, e, sizeof(e)) == 0;
	d->ok[TD] = pc_testdev_load(d->td, r, e, sizeof(e)) == 0;
	d->ok[PM] = acpi_pm_load(d->pm, r, e, sizeof(e)) == 0;
	d->ok[KBC] = i8042_load(d->kbc, r, e, sizeof(e)) == 0;
	d->ok[P92] = port92_load(d->p92, r, e, sizeof(e)) == 0;
	d->ok[DMA] = dma8237_load(d->dma, r, e, sizeof(e)) == 0;
	d->ok[FW] = fw_cfg_load(d->fw, r, e, sizeof(e)) == 0;
}

static void devs_save(void *opaque, struct state_writer *w)
{
	struct devs *d = opaque;

	if (d->ok[BUS])
		pci_bus_save(d->bus, w);
	if (d->ok[NB])
		i440fx_save(d->nb, w);
	if (d->ok[SB])
		piix3_save(d->sb, w);
	if (d->ok[IDE])
		ide_save(d->ide, w);
	if (d->ok[AHCI])
		ahci_save(d->ahci, w);
	if (d->ok[TD])
		pc_testdev_save(d->td, w);
	if (d->ok[PM])
		acpi_pm_save(d->pm, w);
	if (d->ok[KBC])
		i8042_save(d->kbc, w);
	if (d->ok[P92])
		port92_save(d->p92, w);
	if (d->ok[DMA])
		dma8237_save(d->dma, w);
	if (d->ok[FW])
		fw_cfg_save(d->fw, w);
}

/* Reads of every port the devices answer, and the data ports drained. */
static void devs_poke(void *opaque)
{
	static const uint16_t ports[] = {0x60,	0x64,  0x92,  0x00,  0x01,  0x08,  0x0f,  0xc0,
					 0xde,	0x81,  0x8f,  0x600, 0x602, 0x604, 0x608, 0x510,
					 0x1f1, 0x1f7, 0x170, 0x177, 0x3f6, 0x376, 0xcf8, 0xcfc};
	struct devs *d = opaque;
	uint32_t v;

	for (unsigned round = 0; round < 4; round++)
		for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
			iobus_read(host.host.pio, ports[i], &v, 1);
	for (unsigned i = 0; i < 600; i++) {
		iobus_read(host.host.pio, 0x1f0, &v, 2);
		iobus_read(host.host.pio, 0x170, &v, 2);
		iobus_read(host.host.pio, 0x511, &v, 1);
	}
	/* the AHCI's ABAR where a loaded BAR 5 put it: its global and port
	 * registers */
	v = pci_cfg_read(d->bus, 3 << 3, 0x24, 4) & ~0xfffu;
	for (unsigned off = 0; v && off < 0x400; off += 4) {
		uint32_t x;

		iobus_read(host.host.mmio, v + off, &x, 4);
	}
}

static unsigned devs_loaded(const void *opaque)
{
	const struct devs *d = opaque;
	unsigned mask = 0;

	for (unsigned i = 0; i < NDEV; i++)
		mask |= (unsigned)d->ok[i] << i;
	return mask;
}

static const struct fuzz_state_ops ops = {"fuzz_state_chipset", devs_new,  devs_free, devs_load,
					  devs_poke,		devs_save, devs_loaded};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!host.ram && fake_host_init(&host, 4096) < 0)
		abort();
	return fuzz_state_round(&ops, data, size);
}
