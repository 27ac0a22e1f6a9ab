/* intel_iommu_remap.c — VT-d's two translations, walked in guest memory
 * on every request (nothing is cached):
 *
 * DMA remapping: root table (256 x 16 bytes, by bus) -> context table
 * (256 x 16 bytes, by devfn) -> second-level page table of 3 (39-bit) or
 * 4 (48-bit) levels, 2 MiB and 1 GiB leaves allowed; or pass-through.
 * Interrupt remapping: a remappable-format MSI names an IRTE by handle
 * (+ subhandle); the IRTE gives vector, destination and delivery.
 *
 * Every guest pointer goes through guest_mem_*: a table outside RAM or a
 * bad entry is a fault record, and the request is dropped. */
#include <errno.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/iommu/intel_iommu_internal.h"
#include "devices/pci/pci.h"

#define ADDR_MASK 0x000ffffffffff000ull
#define PTE_R 1ull
#define PTE_W 2ull
#define PTE_PS (1ull << 7)
#define IRTA_EIME (1ull << 11)
#define SID_IOAPIC 0xff00 /* the DMAR table's I/O APIC scope: bus 0xff, 0.0 */

static int dma_fault(struct intel_iommu *v, uint16_t sid, uint64_t iova, uint8_t reason, bool write,
		     bool fpd)
{
	if (!fpd)
		vtd_fault(v, sid, iova, reason, !write);
	return -EFAULT;
}

/* The context entry of sid: 0, or the fault reason. */
static int context_entry(struct intel_iommu *v, const struct vtd_state *st, uint16_t sid,
			 uint64_t ce[2])
{
	uint64_t re[2];

	if (guest_mem_read(v->host->mem, (st->rtaddr & ADDR_MASK) + (sid >> 8) * 16u, re, 16))
		return VTD_FR_ROOT_ACCESS;
	if (!(re[0] & 1))
		return VTD_FR_ROOT_NP;
	if ((re[0] & 0xffeull) || (re[0] & ~ADDR_MASK & ~0xfffull) || re[1])
		return VTD_FR_ROOT_RSVD;
	if (guest_mem_read(v->host->mem, (re[0] & ADDR_MASK) + (sid & 0xff) * 16u, ce, 16))
		return VTD_FR_CTX_ACCESS;
	if (!(ce[0] & 1))
		return VTD_FR_CTX_NP;
	if ((ce[0] & 0xff0ull) || (ce[1] & ~0xffff7full))
		return VTD_FR_CTX_RSVD;
	return 0;
}

/* Walk the second-level table at root (levels 3 or 4). */
static int walk(struct intel_iommu *v, uint16_t sid, uint64_t root, unsigned levels, uint64_t iova,
		bool write, bool fpd, uint64_t *gpa, uint64_t *len)
{
	uint64_t table = root & ADDR_MASK;

	if (iova >> (12 + 9 * levels))
		return dma_fault(v, sid, iova, VTD_FR_ADDR_BEYOND, write, fpd);
	for (unsigned level = levels; level >= 1; level--) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t pte, size = 1ull << shift;

		if (guest_mem_read(v->host->mem, table + ((iova >> shift) & 0x1ff) * 8, &pte, 8))
			return dma_fault(v, sid, iova, VTD_FR_PTE_ACCESS, write, fpd);
		if (!(pte & (write ? PTE_W : PTE_R)))
			return dma_fault(v, sid, iova, write ? VTD_FR_WRITE : VTD_FR_READ, write,
					 fpd);
		if (level > 1 && !(pte & PTE_PS)) {
			table = pte & ADDR_MASK;
			continue;
		}
		/* a leaf: 4 KiB, or a 2 MiB / 1 GiB page (CAP.SLLPS) */
		if (level > 3 || (pte & ADDR_MASK & (size - 1)))
			return dma_fault(v, sid, iova, VTD_FR_PTE_RSVD, write, fpd);
		*gpa = (pte & ADDR_MASK) | (iova & (size - 1));
		if (*len > size - (iova & (size - 1)))
			*len = size - (iova & (size - 1));
		return 0;
	}
	return -EFAULT; /* not reached */
}

int intel_iommu_translate(struct intel_iommu *v, uint16_t sid, uint64_t iova, bool write,
			  uint64_t *gpa, uint64_t *len)
{
	struct vtd_state st;
	uint64_t ce[2];
	unsigned tt, aw;
	bool fpd;
	int r;

	vtd_snapshot(v, &st);
	if (!(st.gsts & VTD_GCMD_TE)) {
		*gpa = iova;
		return 0;
	}
	r = context_entry(v, &st, sid, ce);
	if (r)
		return dma_fault(v, sid, iova, (uint8_t)r, write, false);
	fpd = ce[0] & 2;
	tt = (ce[0] >> 2) & 3;
	aw = ce[1] & 7;
	if (tt == 2 && (v->ecap & VTD_ECAP_PT)) {
		*gpa = iova;
		return 0;
	}
	if (tt > 1 || (aw != 1 && aw != 2))
		return dma_fault(v, sid, iova, VTD_FR_CTX_INVALID, write, fpd);
	return walk(v, sid, ce[0], aw == 1 ? 3 : 4, iova, write, fpd, gpa, len);
}

/* ------------------------------------------------ interrupt remapping */

static int ir_fault(struct intel_iommu *v, uint32_t sid, unsigned index, uint8_t reason,
		    bool record)
{
	if (record)
		vtd_fault(v, sid == PCI_SID_UNKNOWN ? SID_IOAPIC : (uint16_t)sid,
			  (uint64_t)index << 48, reason, true);
	return -EINVAL;
}

/* The IRTE's source-id check (SVT, SQ, SID). */
static bool sid_ok(uint64_t hi, uint32_t sid)
{
	static const uint16_t sq_mask[4] = {0xffff, 0xfffb, 0xfff9, 0xfff8};
	unsigned svt = (hi >> 18) & 3, sq = (hi >> 16) & 3, want = hi & 0xffff;

	if (sid == PCI_SID_UNKNOWN || svt == 0)
		return true;
	if (svt == 1)
		return (want & sq_mask[sq]) == (sid & sq_mask[sq]);
	if (svt == 2) /* the requester's bus in [SID[15:8], SID[7:0]] */
		return (sid >> 8) >= (want >> 8) && (sid >> 8) <= (want & 0xff);
	return false;
}

/* The interrupt an IRTE describes, as the APICs take it. */
static void irte_message(const uint64_t irte[2], bool x2apic, uint64_t *addr, uint32_t *data)
{
	uint32_t dest = (uint32_t)(irte[0] >> 32);
	unsigned dm = (irte[0] >> 2) & 1, rh = (irte[0] >> 3) & 1, tm = (irte[0] >> 4) & 1;
	unsigned dlm = (irte[0] >> 5) & 7, vector = (irte[0] >> 16) & 0xff;

	if (!x2apic)
		dest = (dest >> 8) & 0xff; /* xAPIC mode: DST[15:8] */
	*addr = 0xfee00000ull | (dest & 0xff) << 12 | rh << 3 | dm << 2 |
		(uint64_t)(dest & 0xffffff00u) << 32;
	*data = vector | dlm << 8 | (tm ? 3u << 14 : 0);
}

int vtd_remap_msi(struct intel_iommu *v, uint32_t sid, uint64_t *addr, uint32_t *data, bool record)
{
	struct vtd_state st;
	uint32_t a = (uint32_t)*addr;
	uint64_t irte[2];
	unsigned index;

	vtd_snapshot(v, &st);
	if (!(st.gsts & VTD_GCMD_IRE) || (a >> 20) != 0xfee)
		return 0;
	if (!(a & (1u << 4))) { /* compatibility format */
		if ((st.gsts & VTD_GCMD_CFI) && !(st.eim && (st.irta & IRTA_EIME)))
			return 0;
		return ir_fault(v, sid, 0, VTD_FR_IR_COMPAT, record);
	}
	index = ((a >> 5) & 0x7fff) | ((a >> 2) & 1) << 15;
	if (a & (1u << 3)) /* SHV: the subhandle in data[15:0] */
		index = (index + (*data & 0xffff)) & 0xffff;
	if (index >= 2u << (st.irta & 0xf))
		return ir_fault(v, sid, index, VTD_FR_IR_INDEX, record);
	if (guest_mem_read(v->host->mem, (st.irta & ADDR_MASK) + index * 16ull, irte, 16))
		return ir_fault(v, sid, index, VTD_FR_IR_ACCESS, record);
	record = record && !(irte[0] & 2); /* FPD */
	if (!(irte[0] & 1))
		return ir_fault(v, sid, index, VTD_FR_IR_NP, record);
	/* posted (IM) is not offered; bits 14:12 and 63:(xAPIC) reserved */
	if ((irte[0] & 0xf000ull) || ((irte[1] >> 20) & 0xfffffffffffull) ||
	    ((irte[1] >> 18) & 3) == 3)
		return ir_fault(v, sid, index, VTD_FR_IR_RSVD, record);
	if (!sid_ok(irte[1], sid))
		return ir_fault(v, sid, index, VTD_FR_IR_SID, record);
	irte_message(irte, st.eim && (st.irta & IRTA_EIME), addr, data);
	return 0;
}

int intel_iommu_remap_msi(struct intel_iommu *v, uint32_t sid, uint64_t *addr, uint32_t *data,
			  bool record)
{
	return vtd_remap_msi(v, sid, addr, data, record);
}

/* ------------------------------------------------ MSI routes (irqfd) */

/* Devices that signal through KVM routes (virtio's irqfds) never pass
 * through vmm per interrupt, so their routes carry the remapped message,
 * redone whenever the guest changes remapping (as QEMU's IEC notifier).
 * A message remapping blocks keeps its raw form: vector 0, which the APIC
 * refuses. No fault is recorded for routes (they are set up ahead). */
static void route_message(struct intel_iommu *v, uint64_t *addr, uint32_t *data)
{
	vtd_remap_msi(v, PCI_SID_UNKNOWN, addr, data, false);
}

static int route_add(void *opaque, uint64_t addr, uint32_t data)
{
	struct intel_iommu *v = opaque;
	uint64_t a = addr;
	uint32_t d = data;
	int id;

	route_message(v, &a, &d);
	id = v->fast_down.msi_route_add(v->fast_down.opaque, a, d);
	if (id < 0)
		return id;
	pthread_mutex_lock(&v->route_lock);
	for (unsigned i = 0; i < VTD_MAX_ROUTES; i++)
		if (!v->routes[i].used) {
			v->routes[i] = (struct vtd_route){true, id, addr, data};
			break;
		}
	pthread_mutex_unlock(&v->route_lock);
	return id;
}

static int route_set(void *opaque, int id, uint64_t addr, uint32_t data)
{
	struct intel_iommu *v = opaque;
	uint64_t a = addr;
	uint32_t d = data;

	pthread_mutex_lock(&v->route_lock);
	for (unsigned i = 0; i < VTD_MAX_ROUTES; i++)
		if (v->routes[i].used && v->routes[i].id == id) {
			v->routes[i].addr = addr;
			v->routes[i].data = data;
		}
	pthread_mutex_unlock(&v->route_lock);
	route_message(v, &a, &d);
	return v->fast_down.msi_route_set(v->fast_down.opaque, id, a, d);
}

static void route_del(void *opaque, int id)
{
	struct intel_iommu *v = opaque;

	pthread_mutex_lock(&v->route_lock);
	for (unsigned i = 0; i < VTD_MAX_ROUTES; i++)
		if (v->routes[i].used && v->routes[i].id == id)
			v->routes[i].used = false;
	pthread_mutex_unlock(&v->route_lock);
	if (v->fast_down.msi_route_del)
		v->fast_down.msi_route_del(v->fast_down.opaque, id);
}

static int fast_ioeventfd(void *opaque, uint64_t addr, unsigned len, int fd, bool assign)
{
	struct intel_iommu *v = opaque;

	return v->fast_down.ioeventfd(v->fast_down.opaque, addr, len, fd, assign);
}

static int fast_ioeventfd_match(void *opaque, uint64_t addr, unsigned len, bool pio,
				int64_t datamatch, int fd, bool assign)
{
	struct intel_iommu *v = opaque;

	return v->fast_down.ioeventfd_match(v->fast_down.opaque, addr, len, pio, datamatch, fd,
					    assign);
}

static int fast_irqfd(void *opaque, int fd, int route, bool assign)
{
	struct intel_iommu *v = opaque;

	return v->fast_down.irqfd(v->fast_down.opaque, fd, route, assign);
}

void vtd_routes_attach(struct intel_iommu *v)
{
	struct dev_fast_ops *f = &v->host->fast;

	pthread_mutex_init(&v->route_lock, NULL);
	v->fast_down = *f;
	if (!f->msi_route_add || !f->msi_route_set)
		return; /* no KVM (unit tests): devices use irq.msi */
	*f = (struct dev_fast_ops){f->ioeventfd ? fast_ioeventfd : NULL,
				   route_add,
				   route_set,
				   route_del,
				   f->irqfd ? fast_irqfd : NULL,
				   v,
				   f->ioeventfd_match ? fast_ioeventfd_match : NULL};
}

void vtd_routes_detach(struct intel_iommu *v)
{
	if (v->host->fast.opaque == v)
		v->host->fast = v->fast_down;
	pthread_mutex_destroy(&v->route_lock);
}

void vtd_routes_refresh(struct intel_iommu *v)
{
	struct vtd_route r[VTD_MAX_ROUTES];

	if (v->host->fast.opaque != v)
		return;
	pthread_mutex_lock(&v->route_lock);
	memcpy(r, v->routes, sizeof(r));
	pthread_mutex_unlock(&v->route_lock);
	for (unsigned i = 0; i < VTD_MAX_ROUTES; i++) {
		if (!r[i].used)
			continue;
		route_message(v, &r[i].addr, &r[i].data);
		v->fast_down.msi_route_set(v->fast_down.opaque, r[i].id, r[i].addr, r[i].data);
	}
}
