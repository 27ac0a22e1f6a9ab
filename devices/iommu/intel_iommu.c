/* intel_iommu.c — Intel VT-d remapping hardware unit: the register page
 * (version, capabilities, the GCMD -> GSTS handshake, root and interrupt
 * remapping table pointers, register-based and queued invalidation, fault
 * status and the one fault recording register, fault and invalidation
 * completion events), and its place between PCI devices and the machine.
 * The translations themselves are in intel_iommu_remap.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/iommu/intel_iommu_internal.h"
#include "devices/pci/pci.h"

#define VTD_VERSION 0x10 /* 1.0, as QEMU's */
#define VTD_CCMD_ICC (1ull << 63)
#define VTD_IOTLB_IVT (1ull << 63)

/* Interrupts and callbacks decided under the lock, sent after it. */
struct vtd_msg {
	uint32_t lo, hi, data;
};

struct vtd_out {
	struct vtd_msg msi[2];
	unsigned n_msi;
	bool ir_changed;
};

static void queue_msi(struct vtd_out *out, uint32_t lo, uint32_t hi, uint32_t data)
{
	if (out->n_msi < 2)
		out->msi[out->n_msi++] = (struct vtd_msg){lo, hi, data};
}

void vtd_send_msi(struct intel_iommu *v, uint32_t addr_lo, uint32_t addr_hi, uint32_t data)
{
	if (v->down.msi)
		v->down.msi(v->down.opaque, (uint64_t)addr_hi << 32 | addr_lo, data);
}

static void flush_out(struct intel_iommu *v, const struct vtd_out *out)
{
	for (unsigned i = 0; i < out->n_msi; i++)
		vtd_send_msi(v, out->msi[i].lo, out->msi[i].hi, out->msi[i].data);
	if (out->ir_changed)
		vtd_ir_refresh(v);
}

void vtd_ir_refresh(struct intel_iommu *v)
{
	if (!(v->ecap & VTD_ECAP_IR))
		return;
	vtd_routes_refresh(v);
	if (v->ir_changed)
		v->ir_changed(v->ir_changed_opaque);
}

/* The fault event: sent now, or pending while masked (lock held). */
static void fault_event(struct intel_iommu *v, struct vtd_out *out)
{
	if (v->fectl & VTD_CTL_IM)
		v->fectl |= VTD_CTL_IP;
	else
		queue_msi(out, v->feaddr, v->feuaddr, v->fedata);
}

static void wait_event(struct intel_iommu *v, struct vtd_out *out)
{
	if (v->iectl & VTD_CTL_IM)
		v->iectl |= VTD_CTL_IP;
	else
		queue_msi(out, v->ieaddr, v->ieuaddr, v->iedata);
}

void vtd_snapshot(struct intel_iommu *v, struct vtd_state *st)
{
	pthread_mutex_lock(&v->lock);
	st->gsts = v->gsts;
	st->rtaddr = v->rtaddr;
	st->irta = v->irta;
	st->eim = v->ecap & VTD_ECAP_EIM;
	pthread_mutex_unlock(&v->lock);
}

void vtd_fault(struct intel_iommu *v, uint16_t sid, uint64_t addr, uint8_t reason, bool read)
{
	struct vtd_out out = {0};

	pthread_mutex_lock(&v->lock);
	if (v->frcd[1] & VTD_FRCD_F) {
		/* the one record is still unread: overflow */
		if (!(v->fsts & VTD_FSTS_PFO)) {
			v->fsts |= VTD_FSTS_PFO;
			fault_event(v, &out);
		}
	} else {
		v->frcd[0] = addr & ~0xfffull;
		v->frcd[1] = sid | (uint64_t)reason << 32 | (read ? 1ull << 62 : 0) | VTD_FRCD_F;
		v->fsts = (v->fsts & ~0xff00u) | VTD_FSTS_PPF; /* FRI 0 */
		fault_event(v, &out);
	}
	pthread_mutex_unlock(&v->lock);
	flush_out(v, &out);
}

/* ------------------------------------------------ queued invalidation */

uint64_t vtd_iq_bytes(uint64_t iqa)
{
	return 4096ull << (iqa & 7);
}

/* An invalidation error: IQH stays on the bad descriptor. */
static void iq_error(struct intel_iommu *v, struct vtd_out *out)
{
	if (!(v->fsts & VTD_FSTS_IQE)) {
		v->fsts |= VTD_FSTS_IQE;
		fault_event(v, out);
	}
}

/* One descriptor; false when it is invalid. Nothing is cached, so
 * context, IOTLB and device-TLB invalidations have nothing to drop. */
static bool iq_run_one(struct intel_iommu *v, const uint64_t d[2], struct vtd_out *out)
{
	uint32_t status;

	switch (d[0] & 0xf) {
	case 1: /* context-cache */
	case 2: /* IOTLB */
	case 3: /* device-TLB */
		return true;
	case 4: /* interrupt entry cache */
		if (!(v->ecap & VTD_ECAP_IR))
			return false;
		out->ir_changed = true;
		return true;
	case 5:				/* invalidation wait */
		if (d[0] & (1u << 5)) { /* SW: status write */
			status = (uint32_t)(d[0] >> 32);
			if (guest_mem_write(v->host->mem, d[1] & ~3ull, &status, 4) < 0)
				return false;
		}
		if (d[0] & (1u << 4)) { /* IF */
			if (!(v->ics & 1)) {
				v->ics |= 1;
				wait_event(v, out);
			}
		}
		return true;
	default:
		return false;
	}
}

static void iq_run(struct intel_iommu *v, struct vtd_out *out)
{
	uint64_t size = vtd_iq_bytes(v->iqa), base = v->iqa & VTD_ADDR_MASK;

	if (!(v->gsts & VTD_GCMD_QIE) || (v->fsts & VTD_FSTS_IQE))
		return;
	if (v->iqt >= size) {
		iq_error(v, out);
		return;
	}
	while (v->iqh != v->iqt) {
		uint64_t d[2];

		if (guest_mem_read(v->host->mem, base + v->iqh, d, sizeof(d)) < 0 ||
		    !iq_run_one(v, d, out)) {
			iq_error(v, out);
			return;
		}
		v->iqh = (v->iqh + VTD_IQ_DESC) % size;
	}
}

/* ---------------------------------------------------------- registers */

static void gcmd_write(struct intel_iommu *v, uint32_t val, struct vtd_out *out)
{
	uint32_t changed = val ^ v->gsts;
	bool ir = v->ecap & VTD_ECAP_IR;

	/* SRTP and SIRTP act whenever written as 1 (software writes GSTS back
	 * with one command bit changed, so they come again): latch. */
	if (val & VTD_GCMD_SRTP) {
		v->rtaddr = v->rtaddr_reg;
		v->gsts |= VTD_GCMD_SRTP;
	}
	if ((val & VTD_GCMD_SIRTP) && ir) {
		v->irta = v->irta_reg;
		v->gsts |= VTD_GCMD_SIRTP;
		out->ir_changed = true;
	}
	if (changed & VTD_GCMD_TE)
		v->gsts ^= VTD_GCMD_TE;
	if ((changed & VTD_GCMD_QIE) && (val & VTD_GCMD_QIE)) {
		v->iqh = 0;
		v->gsts |= VTD_GCMD_QIE;
	} else if ((changed & VTD_GCMD_QIE) && v->iqh == v->iqt) {
		v->gsts &= ~VTD_GCMD_QIE; /* only once the queue is drained */
	}
	if ((changed & VTD_GCMD_IRE) && ir) {
		v->gsts ^= VTD_GCMD_IRE;
		out->ir_changed = true;
	}
	if ((changed & VTD_GCMD_CFI) && ir) {
		v->gsts ^= VTD_GCMD_CFI;
		out->ir_changed = true;
	}
	/* WBF: no write buffer (CAP.RWBF 0); SFL/EAFL: no advanced fault log */
}

/* Register-based invalidation completes at once (nothing cached). */
static void ccmd_write(struct intel_iommu *v, uint64_t val)
{
	if (val & VTD_CCMD_ICC)
		val = (val & ~(VTD_CCMD_ICC | 3ull << 59)) | ((val >> 61) & 3) << 59; /* CAIG */
	v->ccmd = val;
}

static void iotlb_write(struct intel_iommu *v, uint64_t val)
{
	if (val & VTD_IOTLB_IVT)
		val = (val & ~(VTD_IOTLB_IVT | 3ull << 57)) | ((val >> 60) & 3) << 57; /* IAIG */
	v->iotlb = val;
}

static void ctl_write(uint32_t *ctl, uint32_t val, uint32_t addr, uint32_t uaddr, uint32_t data,
		      struct vtd_out *out)
{
	bool pending = *ctl & VTD_CTL_IP;

	*ctl = (val & VTD_CTL_IM) | (pending ? VTD_CTL_IP : 0);
	if (pending && !(val & VTD_CTL_IM)) {
		*ctl &= ~VTD_CTL_IP;
		queue_msi(out, addr, uaddr, data);
	}
}

static void set_half(uint64_t *reg, unsigned off, uint32_t val)
{
	unsigned shift = (off & 4) * 8;

	*reg = (*reg & ~(0xffffffffull << shift)) | (uint64_t)val << shift;
}

static void write32(struct intel_iommu *v, unsigned off, uint32_t val, struct vtd_out *out)
{
	uint64_t tmp;

	switch (off) {
	case VTD_GCMD:
		gcmd_write(v, val, out);
		break;
	case VTD_RTADDR:
	case VTD_RTADDR + 4:
		set_half(&v->rtaddr_reg, off, val);
		break;
	case VTD_CCMD:
	case VTD_CCMD + 4:
		tmp = v->ccmd;
		set_half(&tmp, off, val);
		ccmd_write(v, tmp);
		break;
	case VTD_FSTS:
		v->fsts &= ~(val & (VTD_FSTS_PFO | VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE));
		if (!(val & VTD_FSTS_IQE))
			break;
		iq_run(v, out); /* a fixed descriptor runs on */
		break;
	case VTD_FECTL:
		ctl_write(&v->fectl, val, v->feaddr, v->feuaddr, v->fedata, out);
		break;
	case VTD_FEDATA:
		v->fedata = val & 0xffff;
		break;
	case VTD_FEADDR:
		v->feaddr = val & ~3u;
		break;
	case VTD_FEUADDR:
		v->feuaddr = val;
		break;
	case VTD_IQT:
		v->iqt = val & 0x7fff0u;
		iq_run(v, out);
		break;
	case VTD_IQA:
	case VTD_IQA + 4:
		set_half(&v->iqa, off, val);
		v->iqa &= VTD_ADDR_MASK | 7;
		break;
	case VTD_ICS:
		v->ics &= ~(val & 1);
		break;
	case VTD_IECTL:
		ctl_write(&v->iectl, val, v->ieaddr, v->ieuaddr, v->iedata, out);
		break;
	case VTD_IEDATA:
		v->iedata = val & 0xffff;
		break;
	case VTD_IEADDR:
		v->ieaddr = val & ~3u;
		break;
	case VTD_IEUADDR:
		v->ieuaddr = val;
		break;
	case VTD_IRTA:
	case VTD_IRTA + 4:
		set_half(&v->irta_reg, off, val);
		v->irta_reg &= VTD_ADDR_MASK | 0xf | ((v->ecap & VTD_ECAP_EIM) ? VTD_IRTA_EIME : 0);
		break;
	case VTD_IVA:
	case VTD_IVA + 4:
		set_half(&v->iva, off, val);
		break;
	case VTD_IOTLB:
	case VTD_IOTLB + 4:
		tmp = v->iotlb;
		set_half(&tmp, off, val);
		iotlb_write(v, tmp);
		break;
	case VTD_FRCD + 12: /* F is write-1-to-clear */
		if (val & (1u << 31))
			v->frcd[1] &= ~VTD_FRCD_F;
		if (!(v->frcd[1] & VTD_FRCD_F))
			v->fsts &= ~VTD_FSTS_PPF;
		break;
	default:
		break; /* read-only or not implemented (PMEN: no PMRs) */
	}
}

static uint64_t read64(struct intel_iommu *v, unsigned off)
{
	switch (off) {
	case VTD_VER:
		return VTD_VERSION;
	case VTD_CAP:
		return v->cap;
	case VTD_ECAP:
		return v->ecap;
	case VTD_GCMD:
		return (uint64_t)v->gsts << 32; /* GCMD reads 0 */
	case VTD_RTADDR:
		return v->rtaddr_reg;
	case VTD_CCMD:
		return v->ccmd;
	case VTD_FSTS - 4:
		return (uint64_t)v->fsts << 32;
	case VTD_FECTL:
		return v->fectl | (uint64_t)v->fedata << 32;
	case VTD_FEADDR:
		return v->feaddr | (uint64_t)v->feuaddr << 32;
	case VTD_IQH:
		return v->iqh;
	case VTD_IQT:
		return v->iqt;
	case VTD_IQA:
		return v->iqa;
	case VTD_ICS - 4:
		return (uint64_t)v->ics << 32;
	case VTD_IECTL:
		return v->iectl | (uint64_t)v->iedata << 32;
	case VTD_IEADDR:
		return v->ieaddr | (uint64_t)v->ieuaddr << 32;
	case VTD_IRTA:
		return v->irta_reg;
	case VTD_IVA:
		return v->iva;
	case VTD_IOTLB:
		return v->iotlb;
	case VTD_FRCD:
		return v->frcd[0];
	case VTD_FRCD + 8:
		return v->frcd[1];
	default:
		return 0;
	}
}

static void mmio_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct intel_iommu *v = opaque;
	uint64_t val;

	if ((size != 4 && size != 8) || (off & (size - 1))) {
		memset(data, 0xff, size);
		return;
	}
	pthread_mutex_lock(&v->lock);
	val = read64(v, (unsigned)off & ~7u) >> ((off & 4) * 8);
	pthread_mutex_unlock(&v->lock);
	io_data_put(data, size, val);
}

/* A 64-bit write is its two halves, low first: the action bits of CCMD
 * and IOTLB are in the high half, IQT's tail in the low one. */
static void mmio_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct intel_iommu *v = opaque;
	uint64_t val = io_data_get(data, size);
	struct vtd_out out = {0};

	if ((size != 4 && size != 8) || (off & (size - 1)))
		return;
	pthread_mutex_lock(&v->lock);
	write32(v, (unsigned)off, (uint32_t)val, &out);
	if (size == 8)
		write32(v, (unsigned)off + 4, (uint32_t)(val >> 32), &out);
	pthread_mutex_unlock(&v->lock);
	flush_out(v, &out);
}

static const struct io_ops vtd_ops = {mmio_read, mmio_write};

/* -------------------------------------------- between devices and RAM */

static int vtd_dma(void *opaque, uint16_t sid, uint64_t iova, void *buf, uint64_t len, bool write)
{
	struct intel_iommu *v = opaque;
	uint8_t *p = buf;

	while (len) {
		uint64_t gpa, n = len;
		int r;

		if (intel_iommu_translate(v, sid, iova, write, &gpa, &n) < 0)
			return -EFAULT;
		r = write ? guest_mem_write(v->host->mem, gpa, p, n)
			  : guest_mem_read(v->host->mem, gpa, p, n);
		if (r < 0)
			return -EFAULT;
		p += n;
		iova += n;
		len -= n;
	}
	return 0;
}

static int vtd_translate(void *opaque, uint16_t sid, uint64_t iova, bool write, uint64_t *gpa,
			 uint64_t *len)
{
	return intel_iommu_translate(opaque, sid, iova, write, gpa, len);
}

static void vtd_pci_msi(void *opaque, uint32_t sid, uint64_t addr, uint32_t data)
{
	struct intel_iommu *v = opaque;

	if (intel_iommu_remap_msi(v, sid, &addr, &data, true) == 0)
		vtd_send_msi(v, (uint32_t)addr, (uint32_t)(addr >> 32), data);
}

/* host->irq with remapping: messages with no PCI requester (the I/O
 * APIC's) are remapped; lines pass to the sink underneath. */
static void vtd_host_msi(void *opaque, uint64_t addr, uint32_t data)
{
	vtd_pci_msi(opaque, PCI_SID_UNKNOWN, addr, data);
}

static void vtd_host_set_level(void *opaque, unsigned gsi, bool level)
{
	struct intel_iommu *v = opaque;

	if (v->down.set_level)
		v->down.set_level(v->down.opaque, gsi, level);
}

static void vtd_reset(void *opaque)
{
	struct intel_iommu *v = opaque;
	struct vtd_out out = {.ir_changed = true};

	pthread_mutex_lock(&v->lock);
	v->gsts = v->fsts = v->ics = 0;
	v->fectl = v->iectl = VTD_CTL_IM;
	v->fedata = v->feaddr = v->feuaddr = v->iedata = v->ieaddr = v->ieuaddr = 0;
	v->rtaddr_reg = v->rtaddr = v->irta_reg = v->irta = 0;
	v->ccmd = v->iva = v->iotlb = v->iqh = v->iqt = v->iqa = 0;
	v->frcd[0] = v->frcd[1] = 0;
	pthread_mutex_unlock(&v->lock);
	flush_out(v, &out);
}

struct intel_iommu *intel_iommu_new(struct dev_host *host, struct pci_bus *bus,
				    const struct intel_iommu_opts *o)
{
	struct intel_iommu *v;
	struct pci_iommu_ops ops;

	if (o->eim && !o->intremap)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->host = host;
	v->bus = bus;
	v->down = host->irq;
	v->cap = VTD_CAP_VALUE;
	v->ecap = VTD_ECAP_BASE | (o->intremap ? VTD_ECAP_IR : 0) | (o->eim ? VTD_ECAP_EIM : 0);
	pthread_mutex_init(&v->lock, NULL);
	vtd_reset(v);
	if (iobus_register(host->mmio, INTEL_IOMMU_BASE, INTEL_IOMMU_SIZE, &vtd_ops, v,
			   "intel-iommu") < 0) {
		pthread_mutex_destroy(&v->lock);
		free(v);
		return NULL;
	}
	if (dev_on_reset(host, vtd_reset, v) < 0) {
		intel_iommu_free(v);
		return NULL;
	}
	ops = (struct pci_iommu_ops){vtd_dma, vtd_translate, vtd_pci_msi, v};
	if (bus)
		pci_bus_set_iommu(bus, &ops);
	if (o->intremap) {
		host->irq = (struct irq_sink){vtd_host_set_level, vtd_host_msi, v};
		vtd_routes_attach(v);
	}
	return v;
}

void intel_iommu_free(struct intel_iommu *v)
{
	if (!v)
		return;
	if (v->bus)
		pci_bus_set_iommu(v->bus, NULL);
	if (v->host->irq.msi == vtd_host_msi && v->host->irq.opaque == v) {
		v->host->irq = v->down;
		vtd_routes_detach(v);
	}
	iobus_unregister(v->host->mmio, INTEL_IOMMU_BASE);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

void intel_iommu_set_ir_changed(struct intel_iommu *v, void (*fn)(void *opaque), void *opaque)
{
	pthread_mutex_lock(&v->lock);
	v->ir_changed = fn;
	v->ir_changed_opaque = opaque;
	pthread_mutex_unlock(&v->lock);
}
