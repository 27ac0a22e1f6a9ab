/* fuzz_q35.c — the q35 chipset's configuration paths: 0xcf8/0xcfc and the
 * ECAM window (bus 0's first 16 devices and bus 1) with the Q35 MCH
 * (PCIEXBAR moving or dropping the window), the ICH9 LPC bridge (PMBASE,
 * ACPI_CNTL moving the ACPI PM block, PIRQ, RCBA), its SMBus controller,
 * and a pcie-root-port at 00:02.0 with a virtio-blk behind it (bus
 * numbers, windows, slot status). Also the PM block's ports at 0x600.
 * Input: fuzz_dev.h's ops; a fresh machine per input. */
#include "backends/backends.h"
#include "devices/isa/acpi_pm.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pci.h"
#include "devices/pci/pcie_root_port.h"
#include "devices/virtio/virtio.h"
#include "tests/fuzz/fuzz_dev.h"

static int ignore_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	return 0;
}

static void ignore_poweroff(void *opaque)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	static struct block_dev *disk;
	const struct pc_mem_map map = {ignore_map, NULL};
	const struct pcie_root_port_opts po = {2 << 3, 1, 0, 16, true};
	struct virtio_blk_opts vo = {.serial = "fuzz", .num_queues = 1, .devfn = 0};
	struct pci_bus *bus;
	struct i440fx *mch;
	struct acpi_pm *pm;
	struct ich9_lpc *lpc;
	struct ich9_smbus *smb;
	struct pcie_root_port *rp;
	struct virtio_blk *vb = NULL;
	char err[256];

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, false, 0xcf8, 8);
		fuzz_dev_window(&d, true, Q35_ECAM_BASE, 0x10000);
		fuzz_dev_window(&d, true, Q35_ECAM_BASE + 0x100000, 0x10000);
		fuzz_dev_window(&d, false, 0x600, 0x80);
		iobus_set_miss_log(d.fake.host.pio, false);
		iobus_set_miss_log(d.fake.host.mmio, false);
		disk = fuzz_disk();
	}
	vo.disk = disk;
	bus = pci_bus_new(&d.fake.host);
	mch = q35_mch_new(&d.fake.host, bus, &map);
	pm = acpi_pm_new(&d.fake.host, 0x600, 5, ignore_poweroff, NULL);
	lpc = ich9_lpc_new(&d.fake.host, bus, pm);
	smb = ich9_smbus_new(&d.fake.host, bus);
	rp = pcie_root_port_new(&d.fake.host, bus, &po);
	if (mch)
		q35_mch_enable_ecam(mch);
	if (rp) {
		vb = virtio_blk_new(&d.fake.host, pcie_root_port_bus(rp), &vo, err, sizeof(err));
		pcie_root_port_update_slot(rp);
	}
	fuzz_dev_run(&d, data, size);
	virtio_blk_free(vb);
	pcie_root_port_free(rp);
	ich9_smbus_free(smb);
	ich9_lpc_free(lpc);
	acpi_pm_free(pm);
	i440fx_free(mch);
	pci_bus_free(bus);
	return 0;
}
