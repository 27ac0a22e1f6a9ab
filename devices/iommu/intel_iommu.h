/* intel_iommu.h — Intel VT-d (-device intel-iommu). */
#ifndef VMM_DEVICES_IOMMU_INTEL_IOMMU_H
#define VMM_DEVICES_IOMMU_INTEL_IOMMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* Intel VT-d remapping hardware unit (-device intel-iommu): registers at
 * INTEL_IOMMU_BASE, queued invalidation, DMA remapping (legacy root and
 * context tables, second-level 3/4-level tables with 2 MiB/1 GiB pages,
 * pass-through) and, with intremap, interrupt remapping of MSIs and I/O
 * APIC messages (it then wraps host->irq.msi). Translations are not
 * cached: every access walks the guest's tables, so invalidations complete
 * at once. A bad guest table is a recorded fault, never a crash. */
#define INTEL_IOMMU_BASE 0xfed90000ull
#define INTEL_IOMMU_SIZE 0x1000
struct intel_iommu_opts {
	bool intremap; /* interrupt remapping (ECAP.IR) */
	bool eim;      /* x2APIC destinations (ECAP.EIM); needs intremap */
};
struct intel_iommu;
struct intel_iommu *intel_iommu_new(struct dev_host *host, struct pci_bus *bus,
				    const struct intel_iommu_opts *o);
void intel_iommu_free(struct intel_iommu *v);
/* Translate one device access at iova: 0 with *gpa and *len (the bytes
 * contiguous from there, <= len on input), or -EFAULT (fault recorded). */
int intel_iommu_translate(struct intel_iommu *v, uint16_t sid, uint64_t iova, bool write,
			  uint64_t *gpa, uint64_t *len);
/* Remap one interrupt message: 0 with addr/data rewritten for the APICs
 * (unchanged while remapping is off), or -EINVAL when it is blocked (a
 * fault recorded when record). sid: PCI_SID_UNKNOWN for the I/O APIC,
 * whose source ID is not checked (as QEMU does). */
int intel_iommu_remap_msi(struct intel_iommu *v, uint32_t sid, uint64_t *addr, uint32_t *data,
			  bool record);
/* fn runs after the guest changed interrupt remapping (IR enable, table,
 * IEC invalidation): the split irqchip re-mirrors the I/O APIC routes. */
void intel_iommu_set_ir_changed(struct intel_iommu *v, void (*fn)(void *opaque), void *opaque);

/* The unit's state as node "intel-iommu" (intel_iommu_state.c). A load
 * refuses a unit saved with other intremap/eim options and values no
 * guest could have written, with a one-line reason. */
struct state_writer;
struct state_reader;
void intel_iommu_save(struct intel_iommu *v, struct state_writer *w);
int intel_iommu_load(struct intel_iommu *v, const struct state_reader *r, char *err, size_t errlen);

#endif /* VMM_DEVICES_IOMMU_INTEL_IOMMU_H */
