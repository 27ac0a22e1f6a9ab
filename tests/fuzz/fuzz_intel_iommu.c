/* fuzz_intel_iommu.c — the VT-d model (devices/intel_iommu*.c) with the
 * edu device as its bus master: the register page at any size and offset
 * (GCMD handshakes, table pointers, queued invalidation over descriptors in
 * RAM, fault records), the edu's registers (DMA through the guest's root,
 * context and page tables in RAM, interrupts through its MSI) and the PCI
 * configuration ports. Input: fuzz_dev.h's ops on windows 0 (VT-d page),
 * 1 (the edu's first 256 bytes), 2 (0xcf8-0xcff); its own step translates
 * an IOVA for requester 00:02.0 (arg even: IOVA (arg >> 1) << 20 | 0x123)
 * or remaps an MSI of handle arg >> 1 (odd). A fresh IOMMU, bus and edu
 * per input. */
#include "devices/iommu/intel_iommu.h"
#include "devices/pci/pci.h"
#include "devices/testdev/edu.h"
#include "tests/fuzz/fuzz_dev.h"

#define EDU_BAR 0xfeb00000u
#define EDU_DEVFN 0x10

static struct intel_iommu *vtd;

static void step(struct fuzz_dev *d, unsigned arg)
{
	uint64_t gpa, len = 0x3000, addr;
	uint32_t data = arg & 3;

	if (!(arg & 1)) {
		intel_iommu_translate(vtd, EDU_DEVFN, (uint64_t)(arg >> 1) << 20 | 0x123, arg & 2,
				      &gpa, &len);
		return;
	}
	addr = 0xfee00000u | (arg >> 1) << 5 | 1u << 4 | (arg & 8);
	intel_iommu_remap_msi(vtd, arg & 4 ? PCI_SID_UNKNOWN : EDU_DEVFN, &addr, &data, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	struct intel_iommu_opts o = {true, size && (data[0] & 1)};
	struct pci_bus *bus;
	struct edu *edu;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, true, INTEL_IOMMU_BASE, INTEL_IOMMU_SIZE);
		fuzz_dev_window(&d, true, EDU_BAR, 0x100);
		fuzz_dev_window(&d, false, 0xcf8, 8);
		d.step = step;
	}
	d.fake.host.n_reset = 0;
	bus = pci_bus_new(&d.fake.host);
	vtd = intel_iommu_new(&d.fake.host, bus, &o);
	edu = edu_new(&d.fake.host, bus, EDU_DEVFN);
	if (!bus || !vtd || !edu)
		abort();
	pci_cfg_write(bus, EDU_DEVFN, 0x10, 4, EDU_BAR);
	pci_cfg_write(bus, EDU_DEVFN, 0x04, 2, 0x6);
	fuzz_dev_run(&d, data, size);
	edu_free(edu);
	intel_iommu_free(vtd);
	pci_bus_free(bus);
	return 0;
}
