/* intel_iommu_state.c — the VT-d unit in the state tree (node
 * "intel-iommu"): its registers, the latched root and interrupt
 * remapping table pointers and the invalidation queue's place. The
 * tables themselves are in guest RAM and nothing is cached, so that is
 * all of it; after a load the MSI routes are remapped again, as after the
 * guest changed interrupt remapping. */
#include <pthread.h>
#include <stdio.h>

#include "devices/iommu/intel_iommu.h"
#include "devices/iommu/intel_iommu_internal.h"
#include "state/state.h"

#define VTD_STATE_VERSION 1
#define VTD_GSTS_KNOWN                                                                             \
	(VTD_GCMD_TE | VTD_GCMD_SRTP | VTD_GCMD_QIE | VTD_GCMD_IRE | VTD_GCMD_SIRTP | VTD_GCMD_CFI)
#define VTD_GSTS_IR (VTD_GCMD_IRE | VTD_GCMD_SIRTP | VTD_GCMD_CFI)
#define VTD_FSTS_KNOWN (VTD_FSTS_PFO | VTD_FSTS_PPF | VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE)

struct vtd_regs {
	uint64_t ecap;
	uint32_t gsts, fsts, fectl, fedata, feaddr, feuaddr;
	uint32_t ics, iectl, iedata, ieaddr, ieuaddr;
	uint64_t rtaddr_reg, rtaddr, irta_reg, irta;
	uint64_t ccmd, iva, iotlb, iqh, iqt, iqa;
	uint64_t frcd[2];
};

/* Names and places of the registers, both widths, for save and load. */
/* clang-format off */
#define U32_REGS(X) \
	X("gsts", gsts) X("fsts", fsts) \
	X("fectl", fectl) X("fedata", fedata) X("feaddr", feaddr) X("feuaddr", feuaddr) \
	X("ics", ics) \
	X("iectl", iectl) X("iedata", iedata) X("ieaddr", ieaddr) X("ieuaddr", ieuaddr)
#define U64_REGS(X) \
	X("ecap", ecap) \
	X("rtaddr-reg", rtaddr_reg) X("rtaddr", rtaddr) \
	X("irta-reg", irta_reg) X("irta", irta) \
	X("ccmd", ccmd) X("iva", iva) X("iotlb", iotlb) \
	X("iqh", iqh) X("iqt", iqt) X("iqa", iqa) \
	X("frcd-lo", frcd[0]) X("frcd-hi", frcd[1])
/* clang-format on */

void intel_iommu_save(struct intel_iommu *v, struct state_writer *w)
{
	state_begin(w, "intel-iommu", VTD_STATE_VERSION);
	pthread_mutex_lock(&v->lock);
#define PUT32(name, field) state_put_u32(w, name, v->field);
#define PUT64(name, field) state_put_u64(w, name, v->field);
	U32_REGS(PUT32)
	U64_REGS(PUT64)
#undef PUT32
#undef PUT64
	pthread_mutex_unlock(&v->lock);
	state_end(w);
}

/* Every register, stopping at the first one missing or of a bad size. */
static int get_regs(struct state_node *n, struct vtd_regs *r)
{
	int rc = 0;

#define GET32(name, field) rc = rc < 0 ? rc : state_get_u32(n, name, &r->field);
#define GET64(name, field) rc = rc < 0 ? rc : state_get_u64(n, name, &r->field);
	U32_REGS(GET32)
	U64_REGS(GET64)
#undef GET32
#undef GET64
	return rc < 0 ? -1 : 0;
}

/* Values no guest write could have left; NULL when all are possible. */
static const char *impossible(const struct intel_iommu *v, const struct vtd_regs *r)
{
	uint64_t irta_mask = VTD_ADDR_MASK | 0xf | ((v->ecap & VTD_ECAP_EIM) ? VTD_IRTA_EIME : 0);
	uint64_t iq_size = vtd_iq_bytes(r->iqa);

	if ((r->gsts & ~VTD_GSTS_KNOWN) || ((r->gsts & VTD_GSTS_IR) && !(v->ecap & VTD_ECAP_IR)))
		return "global status";
	if (r->fsts & ~VTD_FSTS_KNOWN)
		return "fault status";
	if (((r->fectl | r->iectl) & ~(VTD_CTL_IM | VTD_CTL_IP)) || r->fedata > 0xffff ||
	    r->iedata > 0xffff || ((r->feaddr | r->ieaddr) & 3))
		return "event control";
	if ((r->iqa & ~(VTD_ADDR_MASK | 7)) || r->iqh % VTD_IQ_DESC || r->iqt % VTD_IQ_DESC ||
	    r->iqh >= iq_size || r->iqt >= iq_size)
		return "invalidation queue";
	if ((r->irta_reg | r->irta) & ~irta_mask)
		return "interrupt remapping table address";
	return NULL;
}

int intel_iommu_load(struct intel_iommu *v, const struct state_reader *rd, char *err, size_t errlen)
{
	struct state_node n;
	struct vtd_regs r;
	const char *bad;

	if (state_node_open(&n, rd, "intel-iommu", VTD_STATE_VERSION, err, errlen) < 0 ||
	    get_regs(&n, &r) < 0)
		return -1;
	if (r.ecap != v->ecap)
		return state_node_fail(
			&n, "saved with intremap=%s,eim=%s; this one has intremap=%s,eim=%s",
			r.ecap & VTD_ECAP_IR ? "on" : "off", r.ecap & VTD_ECAP_EIM ? "on" : "off",
			v->ecap & VTD_ECAP_IR ? "on" : "off",
			v->ecap & VTD_ECAP_EIM ? "on" : "off");
	if ((bad = impossible(v, &r)))
		return state_node_fail(&n, "impossible %s", bad);
	if (state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&v->lock);
#define SET(name, field) v->field = r.field;
	U32_REGS(SET)
	U64_REGS(SET)
#undef SET
	pthread_mutex_unlock(&v->lock);
	vtd_ir_refresh(v);
	return 0;
}
