/* intel_iommu_internal.h — what devices/iommu/intel_iommu.c (registers, queued
 * invalidation, faults) and devices/iommu/intel_iommu_remap.c (DMA and interrupt
 * remapping) share. Register layout and bits: Intel VT-d specification
 * (rev. 3.x), chapters 9 (structures) and 10 (registers). */
#ifndef VMM_INTEL_IOMMU_INTERNAL_H
#define VMM_INTEL_IOMMU_INTERNAL_H

#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/pci/pci.h"

/* Registers (offsets into the 4 KiB page). */
enum {
	VTD_VER = 0x00,
	VTD_CAP = 0x08,
	VTD_ECAP = 0x10,
	VTD_GCMD = 0x18,
	VTD_GSTS = 0x1c,
	VTD_RTADDR = 0x20,
	VTD_CCMD = 0x28,
	VTD_FSTS = 0x34,
	VTD_FECTL = 0x38,
	VTD_FEDATA = 0x3c,
	VTD_FEADDR = 0x40,
	VTD_FEUADDR = 0x44,
	VTD_PMEN = 0x64,
	VTD_IQH = 0x80,
	VTD_IQT = 0x88,
	VTD_IQA = 0x90,
	VTD_ICS = 0x9c,
	VTD_IECTL = 0xa0,
	VTD_IEDATA = 0xa4,
	VTD_IEADDR = 0xa8,
	VTD_IEUADDR = 0xac,
	VTD_IRTA = 0xb8,
	VTD_IVA = 0xf0, /* ECAP.IRO = 0xf0 / 16 */
	VTD_IOTLB = 0xf8,
	VTD_FRCD = 0x220, /* CAP.FRO = 0x220 / 16; one fault record */
};

/* GCMD and GSTS share bit positions. */
#define VTD_GCMD_TE (1u << 31)
#define VTD_GCMD_SRTP (1u << 30)
#define VTD_GCMD_SFL (1u << 29)
#define VTD_GCMD_EAFL (1u << 28)
#define VTD_GCMD_WBF (1u << 27)
#define VTD_GCMD_QIE (1u << 26)
#define VTD_GCMD_IRE (1u << 25)
#define VTD_GCMD_SIRTP (1u << 24)
#define VTD_GCMD_CFI (1u << 23)

#define VTD_FSTS_PFO (1u << 0)
#define VTD_FSTS_PPF (1u << 1)
#define VTD_FSTS_IQE (1u << 4)
#define VTD_FSTS_ICE (1u << 5)
#define VTD_FSTS_ITE (1u << 6)
#define VTD_CTL_IM (1u << 31) /* FECTL, IECTL: interrupt mask */
#define VTD_CTL_IP (1u << 30) /* interrupt pending */
#define VTD_IRTA_EIME (1ull << 11)
#define VTD_FRCD_F (1ull << 63)
#define VTD_ADDR_MASK 0x000ffffffffff000ull
#define VTD_IQ_DESC 16

/* CAP: ND=6 (64K domains), SAGAW 39 and 48 bits, MGAW 48, FRO, NFR=1,
 * SLLPS 2M+1G, PSI, MAMV 63, DWD, DRD. */
#define VTD_CAP_SAGAW_39 (2ull << 8)
#define VTD_CAP_SAGAW_48 (4ull << 8)
#define VTD_CAP_SLLPS (3ull << 34)
#define VTD_CAP_VALUE                                                                              \
	(6ull | VTD_CAP_SAGAW_39 | VTD_CAP_SAGAW_48 | 47ull << 16 |                                \
	 (uint64_t)(VTD_FRCD / 16) << 24 | VTD_CAP_SLLPS | 1ull << 39 | 63ull << 48 | 1ull << 54 | \
	 1ull << 55)
#define VTD_ECAP_QI (1ull << 1)
#define VTD_ECAP_IR (1ull << 3)
#define VTD_ECAP_EIM (1ull << 4)
#define VTD_ECAP_PT (1ull << 6)
#define VTD_ECAP_BASE (VTD_ECAP_QI | VTD_ECAP_PT | (uint64_t)(VTD_IVA / 16) << 8 | 15ull << 20)

/* Fault reasons (VT-d spec, appendix A). */
enum {
	VTD_FR_ROOT_NP = 0x1,
	VTD_FR_CTX_NP = 0x2,
	VTD_FR_CTX_INVALID = 0x3,
	VTD_FR_ADDR_BEYOND = 0x4,
	VTD_FR_WRITE = 0x5,
	VTD_FR_READ = 0x6,
	VTD_FR_PTE_ACCESS = 0x7,
	VTD_FR_ROOT_ACCESS = 0x8,
	VTD_FR_CTX_ACCESS = 0x9,
	VTD_FR_ROOT_RSVD = 0xa,
	VTD_FR_CTX_RSVD = 0xb,
	VTD_FR_PTE_RSVD = 0xc,
	VTD_FR_IR_REQ_RSVD = 0x20,
	VTD_FR_IR_INDEX = 0x21,
	VTD_FR_IR_NP = 0x22,
	VTD_FR_IR_ACCESS = 0x23,
	VTD_FR_IR_RSVD = 0x24,
	VTD_FR_IR_COMPAT = 0x25,
	VTD_FR_IR_SID = 0x26,
};

/* What a translation or remapping reads of the registers, copied under
 * the lock so the walk itself runs without it. */
struct vtd_state {
	uint32_t gsts;
	uint64_t rtaddr; /* latched by SRTP */
	uint64_t irta;	 /* latched by SIRTP */
	bool eim;	 /* ECAP.EIM offered */
};

/* A KVM MSI route a device asked for (irqfd: virtio), kept with the
 * message as the device wrote it, to be remapped again when the guest
 * changes its interrupt remapping. */
#define VTD_MAX_ROUTES 256
struct vtd_route {
	bool used;
	int id;
	uint64_t addr;
	uint32_t data;
};

struct intel_iommu {
	struct dev_host *host;
	struct pci_bus *bus;
	struct irq_sink down; /* where remapped interrupts go */
	pthread_mutex_t lock;
	uint64_t cap, ecap;
	uint32_t gsts, fsts, fectl, fedata, feaddr, feuaddr;
	uint32_t ics, iectl, iedata, ieaddr, ieuaddr;
	uint64_t rtaddr_reg, rtaddr, irta_reg, irta;
	uint64_t ccmd, iva, iotlb;
	uint64_t iqh, iqt, iqa;
	uint64_t frcd[2]; /* the one fault recording register */
	void (*ir_changed)(void *opaque);
	void *ir_changed_opaque;
	/* intremap: host->fast's MSI routes go through vtd_route_* */
	struct dev_fast_ops fast_down;
	pthread_mutex_t route_lock;
	struct vtd_route routes[VTD_MAX_ROUTES];
};

void vtd_snapshot(struct intel_iommu *v, struct vtd_state *st);
/* The invalidation queue's size in bytes for an IQA value. */
uint64_t vtd_iq_bytes(uint64_t iqa);
/* After interrupt remapping changed (intremap only): the MSI routes are
 * remapped again and ir_changed runs (call without the lock). */
void vtd_ir_refresh(struct intel_iommu *v);
/* Record a fault (unless the entry that failed asked not to: fpd) and
 * signal it. type_read: the access was a read (DMA) or an interrupt. */
void vtd_fault(struct intel_iommu *v, uint16_t sid, uint64_t addr, uint8_t reason, bool read);
/* Remapping a message without a fault record (route mirroring). */
int vtd_remap_msi(struct intel_iommu *v, uint32_t sid, uint64_t *addr, uint32_t *data, bool record);
/* Wrap host->fast's MSI routes (intremap); remap them all again. */
void vtd_routes_attach(struct intel_iommu *v);
void vtd_routes_detach(struct intel_iommu *v);
void vtd_routes_refresh(struct intel_iommu *v);
/* Send a message to the APICs (never remapped: the IOMMU's own). */
void vtd_send_msi(struct intel_iommu *v, uint32_t addr_lo, uint32_t addr_hi, uint32_t data);

#endif /* VMM_INTEL_IOMMU_INTERNAL_H */
