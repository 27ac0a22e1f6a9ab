/* acpi.c — the machine's ACPI tables: RSDP (2.0), XSDT and RSDT (FADT,
 * MADT, DMAR), FADT with a PM1a event/control block at ACPI_PM_BASE (the
 * acpi_pm device) and a FACS, a DSDT with _S5 (so the guest's `poweroff`
 * writes SLP_TYP=ACPI_S5_SLP_TYP|SLP_EN), _S3, the PCI root bus and its
 * _PRT, pvpanic, a MADT with every vCPU, the IOAPIC and the SCI's
 * interrupt source override; on q35 an MCFG for the ECAM window and a
 * PCIe root with the ICH9's routing. One builder, two deliveries: written into
 * guest RAM at a known address for direct boot, or as the fw_cfg blobs
 * plus table-loader commands that SeaBIOS links into place itself. */
#include <errno.h>
#include <string.h>

#include "devices/iommu/intel_iommu.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "firmware/acpi_linker.h"
#include "firmware/firmware.h"
#include "firmware/le.h"

#define SDT_HDR_LEN 36
#define RSDP_LEN 36
#define ACPI_RSDP_ROOM 64	/* direct boot: the RSDP, then the tables 64-aligned */
#define FACS_LEN 64
#define FADT_LEN 276		/* revision 6 */
#define MADT_LAPIC_LEN 8
#define MADT_IOAPIC_LEN 12
#define MADT_ISO_LEN 10
#define MADT_NMI_LEN 6
#define DMAR_HDR_LEN 48
#define DRHD_LEN 16
#define DMAR_SCOPE_LEN 8
#define MCFG_LEN (SDT_HDR_LEN + 8 + 16)

#define PCI0_AML_MAX 2048
#define PCI0_CRS_MEM_AT 82 /* the DWordMemory descriptor's offset in pci0_aml's ids[] */

/* The DSDT body: Name (_S5, Package (4) { 5, 5, 0, 0 }). */
static const uint8_t dsdt_aml[] = {
	0x08, '_', 'S', '5', '_',	/* NameOp, NameString "_S5_" */
	0x12, 0x08, 0x04,		/* PackageOp, PkgLength 8, NumElements 4 */
	0x0a, ACPI_S5_SLP_TYP,		/* BytePrefix SLP_TYPa */
	0x0a, ACPI_S5_SLP_TYP,		/* BytePrefix SLP_TYPb */
	0x00, 0x00,			/* ZeroOp, ZeroOp (reserved) */
};

/* Name (_S3, Package (4) { 1, 1, 0, 0 }): suspend to RAM. */
static const uint8_t dsdt_s3_aml[] = {
	0x08, '_', 'S', '3', '_', 0x12, 0x08, 0x04, 0x0a, ACPI_S3_SLP_TYP, 0x0a, ACPI_S3_SLP_TYP,
	0x00, 0x00,
};

const uint8_t pc_pirq_gsi[4] = {10, 10, 11, 11};

unsigned pc_pci_pin_gsi(unsigned slot, unsigned pin)
{
	/* the PIIX3 swizzle: pin p (0 = INTA) of slot s drives PIRQ
	 * (s - 1 + p) mod 4 */
	return pc_pirq_gsi[(slot - 1 + pin) & 3];
}

/* Where tables go: base seen at gpa. For the fw_cfg delivery, gpa is 0
 * (pointers hold offsets into file) and lk records the loader commands. */
struct acpi_buf {
	uint8_t *base;
	size_t len, used;
	uint32_t gpa;
	const char *file;
	struct acpi_linker *lk;
};

/* What the tables describe. */
struct acpi_machine {
	unsigned ncpus;
	const uint8_t *apic_ids; /* NULL: 0..ncpus-1 */
	uint16_t pvpanic_port;
	unsigned dmar; /* ACPI_DMAR_* and ACPI_MACHINE_Q35 */
};

/* Reserve n bytes aligned to align; NULL when the buffer is full. */
static uint8_t *take(struct acpi_buf *b, size_t n, size_t align)
{
	size_t at = (b->used + align - 1) & ~(align - 1);
	uint8_t *p;

	if (at > b->len || n > b->len - at)
		return NULL;
	p = b->base + at;
	memset(p, 0, n);
	b->used = at + n;
	return p;
}

static uint32_t gpa_of(const struct acpi_buf *b, const uint8_t *p)
{
	return b->gpa + (uint32_t)(p - b->base);
}

static uint8_t *sdt(struct acpi_buf *b, const char sig[4], size_t len, uint8_t rev)
{
	uint8_t *t = take(b, len, 8);

	if (!t)
		return NULL;
	memcpy(t, sig, 4);
	put_le32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, "VMM   ", 6);	/* OEM id */
	memcpy(t + 16, "VMMPC   ", 8);	/* OEM table id */
	put_le32(t + 24, 1);
	memcpy(t + 28, "VMM ", 4);	/* creator id */
	put_le32(t + 32, 1);
	return t;
}

/* A pointer field (4 or 8 bytes) inside b to target, a table in b. */
static void put_ptr(struct acpi_buf *b, uint8_t *field, uint8_t size, uint32_t target)
{
	if (size == 8)
		put_le64(field, target);
	else
		put_le32(field, target);
	if (b->lk)
		linker_add_pointer(b->lk, b->file, (uint32_t)(field - b->base), size, b->file);
}

/* The table's checksum; the firmware computes it after linking. */
static void sdt_done(struct acpi_buf *b, uint8_t *t, size_t len)
{
	uint32_t at = (uint32_t)(t - b->base);

	if (b->lk)
		linker_add_checksum(b->lk, b->file, at, (uint32_t)len, at + 9);
	else
		t[9] = fw_checksum(t, len);
}

/* op, PkgLength, then body[0..n) (n < 4094) into out: the length. */
static size_t aml_pkg(uint8_t *out, const char *op, size_t op_len, const uint8_t *body, size_t n)
{
	size_t h = op_len;

	memcpy(out, op, op_len);
	if (n + 1 < 64) {
		out[h++] = (uint8_t)(n + 1);
	} else {
		out[h++] = (uint8_t)(0x40 | ((n + 2) & 0xf));
		out[h++] = (uint8_t)((n + 2) >> 4);
	}
	memmove(out + h, body, n);
	return h + n;
}

/* Where pin (0 = INTA) of a slot arrives: through the PIIX3's PIRQ
 * registers as direct boot sets them (pc_pci_pin_gsi), or on q35 at the
 * I/O APIC input of the ICH9 PIRQ it drives. 0: no entry. Functions
 * beside the PIIX3 use pins other than INTA (its UHCI has INTD). */
static unsigned slot_pin_gsi(unsigned slot, unsigned pin, bool q35)
{
	if (q35)
		return ICH9_PIRQ_GSI(ich9_slot_pirq(slot, pin));
	return slot ? pc_pci_pin_gsi(slot, pin) : 0;
}

/* Method (_OSC, 4) { CreateDWordField (Arg3, 0, CDW1)
 *   If (Arg0 != ToUUID ("33db4d5b-1ff7-401c-9657-7441c03dd766"))
 *     { CDW1 |= 4 } Return (Arg3) }: on q35 the OS gets every PCIe
 * feature it asks to control (the PCI host bridge UUID; others are
 * "unrecognized UUID"), above all native hot-plug, so Linux's pciehp
 * drives the root ports' slots. What a port lacks (AER, DPC) the OS finds
 * absent from its capabilities. */
static size_t osc_aml(uint8_t *out)
{
	static const uint8_t predicate[] = {
		0x92, 0x93, 0x68,	/* LNot (LEqual (Arg0, */
		0x11, 0x13, 0x0a, 0x10, /* Buffer (16) { the UUID } */
		0x5b, 0x4d, 0xdb, 0x33, 0xf7, 0x1f, 0x1c, 0x40,
		0x96, 0x57, 0x74, 0x41, 0xc0, 0x3d, 0xd7, 0x66,
		0x7d, 'C', 'D', 'W', '1', 0x0a, 0x04, 'C', 'D', 'W', '1', /* Or (CDW1, 4, CDW1) */
	};
	static const uint8_t head[] = {
		'_', 'O', 'S', 'C', 0x04,		   /* 4 arguments, not serialized */
		0x8a, 0x6b, 0x00, 'C', 'D', 'W', '1', /* CreateDWordField (Arg3, 0, CDW1) */
	};
	uint8_t body[96];
	size_t n = sizeof(head);

	memcpy(body, head, n);
	n += aml_pkg(body + n, "\xa0", 1, predicate, sizeof(predicate));
	body[n++] = 0xa4; /* Return (Arg3) */
	body[n++] = 0x6b;
	return aml_pkg(out, "\x14", 1, body, n);
}

/* Scope (\_SB) { Device (PCI0) { _HID, _UID 0, _CRS, _PRT } }: the root
 * bus, so Linux scans it, with every pin of each slot routed (slot_pin_gsi).
 * On q35 it is a PCI Express root (PNP0A08, compatible with PNP0A03) and
 * its memory window starts above the ECAM window, at 0xc0000000, where
 * SeaBIOS starts placing BARs there, and it has an _OSC (osc_aml). */
static size_t pci0_aml(uint8_t *out, bool q35)
{
	static const uint8_t pcie_ids[] = {
		0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0a, 0x08, /* EisaId ("PNP0A08") */
		0x08, '_', 'C', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0a, 0x03, /* EisaId ("PNP0A03") */
	};
	static const uint8_t ids[] = {
		0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0a, 0x03, /* EisaId ("PNP0A03") */
		0x08, '_', 'U', 'I', 'D', 0x00,
		/* Name (_CRS, ResourceTemplate () {...}): the windows Linux may
		 * place BARs in (as QEMU's, with a fixed 32-bit memory hole) */
		0x08, '_', 'C', 'R', 'S', 0x11, 0x40 | ((84 + 4) & 0xf), (84 + 4) >> 4, 0x0a, 84,
		/* WordBusNumber 0-0xff */
		0x88, 0x0d, 0x00, 0x02, 0x0c, 0x00, 0, 0, 0x00, 0x00, 0xff, 0x00, 0, 0, 0x00, 0x01,
		/* IO (Decode16, 0xcf8, 0xcf8, 1, 8) */
		0x47, 0x01, 0xf8, 0x0c, 0xf8, 0x0c, 0x01, 0x08,
		/* WordIO 0x0000-0x0cf7 and 0x0d00-0xffff */
		0x88, 0x0d, 0x00, 0x01, 0x0c, 0x03, 0, 0, 0x00, 0x00, 0xf7, 0x0c, 0, 0, 0xf8, 0x0c,
		0x88, 0x0d, 0x00, 0x01, 0x0c, 0x03, 0, 0, 0x00, 0x0d, 0xff, 0xff, 0, 0, 0x00, 0xf3,
		/* DWordMemory 0xe0000000-0xfebfffff, cacheable, read-write */
		0x87, 0x17, 0x00, 0x00, 0x0c, 0x03, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0xe0, 0xff, 0xff,
		0xbf, 0xfe, 0, 0, 0, 0, 0x00, 0x00, 0xc0, 0x1e,
		0x79, 0x00, /* EndTag */
		0x08, '_', 'P', 'R', 'T',
	};
	uint8_t prt[PCI0_AML_MAX], dev[PCI0_AML_MAX];
	size_t n = 1, d = 4;
	uint8_t *crs_mem;

	prt[0] = 0; /* NumElements */
	for (unsigned slot = 0; slot < 32; slot++) {
		for (unsigned pin = 0; pin < 4; pin++) {
			/* Package (4) { address, pin, source Zero (a GSI), GSI } */
			uint8_t e[11] = {4, 0x0c, 0, 0, 0, 0, 0x0a, 0, 0x00, 0x0a, 0};

			if (!slot_pin_gsi(slot, pin, q35))
				continue;
			put_le32(e + 2, slot << 16 | 0xffff);
			e[7] = (uint8_t)pin;
			e[10] = (uint8_t)slot_pin_gsi(slot, pin, q35);
			n += aml_pkg(prt + n, "\x12", 1, e, sizeof(e));
			prt[0]++;
		}
	}
	memcpy(dev, "PCI0", 4);
	if (q35) {
		memcpy(dev + d, pcie_ids, sizeof(pcie_ids));
		d += sizeof(pcie_ids);
		/* skip ids' own _HID */
		memcpy(dev + d, ids + 10, sizeof(ids) - 10);
		d += sizeof(ids) - 10;
	} else {
		memcpy(dev + d, ids, sizeof(ids));
		d += sizeof(ids);
	}
	crs_mem = dev + d - sizeof(ids) + PCI0_CRS_MEM_AT;
	if (q35 && crs_mem[0] == 0x87) { /* DWordMemory 0xc0000000-0xfebfffff */
		put_le32(crs_mem + 10, 0xc0000000u);
		put_le32(crs_mem + 22, 0xfec00000u - 0xc0000000u);
	}
	d += aml_pkg(dev + d, "\x12", 1, prt, n);
	if (q35)
		d += osc_aml(dev + d);
	memcpy(prt, "\x5c_SB_", 5);
	n = 5 + aml_pkg(prt + 5, "\x5b\x82", 2, dev, d);
	return aml_pkg(out, "\x10", 1, prt, n);
}

/* MCFG: the q35 ECAM window for segment 0, buses 0-255. */
static uint8_t *build_mcfg(struct acpi_buf *b)
{
	uint8_t *t = sdt(b, "MCFG", MCFG_LEN, 1);

	if (!t)
		return NULL;
	put_le64(t + SDT_HDR_LEN + 8, Q35_ECAM_BASE);
	t[SDT_HDR_LEN + 8 + 10] = 0;	/* start bus */
	t[SDT_HDR_LEN + 8 + 11] = (uint8_t)((Q35_ECAM_SIZE >> 20) - 1); /* end bus */
	sdt_done(b, t, MCFG_LEN);
	return t;
}

/* Scope (\_SB) { Device (PEVT) { _HID "QEMU0001", _STA 0xF, _CRS IO
 * (Decode16, port, port, 1, 1) } }: QEMU's pvpanic device, which Linux's
 * pvpanic driver (pvpanic-mmio, also for I/O ports) binds to. */
static size_t pvpanic_aml(uint8_t *out, uint16_t port)
{
	uint8_t dev[64] = {
		'P', 'E', 'V', 'T',
		0x08, '_', 'H', 'I', 'D', 0x0d, 'Q', 'E', 'M', 'U', '0', '0', '0', '1', 0x00,
		0x08, '_', 'S', 'T', 'A', 0x0a, 0x0f,
		0x08, '_', 'C', 'R', 'S', 0x11, 13, 0x0a, 10, /* Buffer (10) */
		0x47, 0x01, 0, 0, 0, 0, 0x01, 0x01,	       /* IO (Decode16, ...) */
		0x79, 0x00,				       /* EndTag */
	};
	const size_t d = 45, io = 35;
	uint8_t scope[80];
	size_t n;

	put_le16(dev + io + 2, port);
	put_le16(dev + io + 4, port);
	memcpy(scope, "\x5c_SB_", 5);
	n = 5 + aml_pkg(scope + 5, "\x5b\x82", 2, dev, d);
	return aml_pkg(out, "\x10", 1, scope, n);
}

static uint8_t *build_dsdt(struct acpi_buf *b, uint16_t pvpanic_port, bool q35, bool s3)
{
	uint8_t aml[PCI0_AML_MAX + 64 + 96];
	size_t pci0 = pci0_aml(aml, q35);
	size_t s3_len = s3 ? sizeof(dsdt_s3_aml) : 0;
	size_t len;
	uint8_t *t;

	if (pvpanic_port)
		pci0 += pvpanic_aml(aml + pci0, pvpanic_port);

	len = SDT_HDR_LEN + sizeof(dsdt_aml) + pci0 + s3_len;
	t = sdt(b, "DSDT", len, 2);
	if (!t)
		return NULL;
	memcpy(t + SDT_HDR_LEN, dsdt_aml, sizeof(dsdt_aml));
	memcpy(t + SDT_HDR_LEN + sizeof(dsdt_aml), dsdt_s3_aml, s3_len);
	memcpy(t + SDT_HDR_LEN + sizeof(dsdt_aml) + s3_len, aml, pci0);
	sdt_done(b, t, len);
	return t;
}

static uint8_t *build_facs(struct acpi_buf *b)
{
	uint8_t *t = take(b, FACS_LEN, 64);

	if (!t)
		return NULL;
	memcpy(t, "FACS", 4);
	put_le32(t + 4, FACS_LEN);
	t[32] = 2;			/* version */
	return t;
}

static uint8_t *build_fadt(struct acpi_buf *b, uint32_t facs, uint32_t dsdt)
{
	uint8_t *t = sdt(b, "FACP", FADT_LEN, 6);

	if (!t)
		return NULL;
	put_ptr(b, t + 36, 4, facs);
	put_ptr(b, t + 40, 4, dsdt);
	put_le16(t + 46, ACPI_SCI_IRQ);
	/* SMI_CMD (48) stays 0: the machine is always in ACPI mode. */
	put_le32(t + 56, ACPI_PM_BASE);	/* PM1a_EVT_BLK */
	put_le32(t + 64, ACPI_PM_BASE + 4); /* PM1a_CNT_BLK */
	t[88] = 4;			/* PM1_EVT_LEN */
	t[89] = 2;			/* PM1_CNT_LEN */
	put_le32(t + 76, ACPI_PM_BASE + 8); /* PM_TMR_BLK: acpi_pm's timer */
	t[91] = 4;			/* PM_TMR_LEN */
	put_le16(t + 96, 101);		/* P_LVL2_LAT > 100: no C2 */
	put_le16(t + 98, 1001);		/* P_LVL3_LAT > 1000: no C3 */
	put_le16(t + 109, 0);		/* IAPC_BOOT_ARCH: no legacy devices, no 8042 */
	/* WBINVD works, PROC_C1; PWR_BUTTON clear: the power button is the
	 * fixed-feature one in PM1 (devices/isa/acpi_pm.c, QMP system_powerdown),
	 * which Linux's button driver only registers when told so. No sleep
	 * button (SLP_BUTTON set: not fixed, and no control-method one). */
	put_le32(t + 112, (1u << 0) | (1u << 2) | (1u << 5));
	put_ptr(b, t + 140, 8, dsdt);	/* X_DSDT */
	sdt_done(b, t, FADT_LEN);
	return t;
}

static uint8_t *build_madt(struct acpi_buf *b, unsigned ncpus, const uint8_t *apic_ids)
{
	size_t len = SDT_HDR_LEN + 8 + ncpus * MADT_LAPIC_LEN + MADT_IOAPIC_LEN + MADT_ISO_LEN +
		     MADT_NMI_LEN;
	uint8_t *t = sdt(b, "APIC", len, 4), *p;

	if (!t)
		return NULL;
	put_le32(t + 36, FW_LAPIC_GPA);
	put_le32(t + 40, 1);		/* PCAT_COMPAT: dual 8259s present */
	p = t + 44;
	for (unsigned i = 0; i < ncpus; i++, p += MADT_LAPIC_LEN) {
		p[0] = 0;		/* processor local APIC */
		p[1] = MADT_LAPIC_LEN;
		p[2] = i;		/* ACPI processor UID */
		p[3] = fw_apic_id(apic_ids, i);
		put_le32(p + 4, 1);	/* enabled */
	}
	p[0] = 1; /* I/O APIC after the CPUs, GSI base 0 */
	p[1] = MADT_IOAPIC_LEN;
	p[2] = fw_ioapic_id(apic_ids, ncpus);
	put_le32(p + 4, FW_IOAPIC_GPA);
	p += MADT_IOAPIC_LEN;
	p[0] = 2;			/* interrupt source override: the SCI */
	p[1] = MADT_ISO_LEN;
	p[3] = ACPI_SCI_IRQ;		/* ISA bus 0, IRQ 9 -> GSI 9 */
	put_le32(p + 4, ACPI_SCI_IRQ);
	put_le16(p + 8, 0x000d);		/* active high, level triggered */
	p += MADT_ISO_LEN;
	p[0] = 4;			/* local APIC NMI: all CPUs, LINT1 */
	p[1] = MADT_NMI_LEN;
	p[2] = 0xff;
	p[5] = 1;
	sdt_done(b, t, len);
	return t;
}

/* DMA Remapping table (VT-d spec, chapter 8): one DRHD covering every PCI
 * device, with the I/O APIC's source ID in its device scope so Linux can
 * remap its interrupts. */
static uint8_t *build_dmar(struct acpi_buf *b, unsigned ioapic_id, unsigned flags)
{
	size_t len = DMAR_HDR_LEN + DRHD_LEN + DMAR_SCOPE_LEN;
	uint8_t *t = sdt(b, "DMAR", len, 1), *p;

	if (!t)
		return NULL;
	t[36] = 48 - 1; /* host address width - 1 */
	t[37] = (flags & ACPI_DMAR_INTR_REMAP ? 1 : 0) | (flags & ACPI_DMAR_X2APIC_OPT_OUT ? 2 : 0);
	p = t + DMAR_HDR_LEN;
	put_le16(p, 0); /* DRHD */
	put_le16(p + 2, DRHD_LEN + DMAR_SCOPE_LEN);
	p[4] = 1;	    /* INCLUDE_PCI_ALL */
	put_le16(p + 6, 0); /* segment 0 */
	put_le64(p + 8, INTEL_IOMMU_BASE);
	p += DRHD_LEN;
	p[0] = 3; /* device scope: I/O APIC */
	p[1] = DMAR_SCOPE_LEN;
	p[4] = (uint8_t)ioapic_id;		   /* enumeration ID: the MADT's I/O APIC id */
	p[5] = ACPI_DMAR_IOAPIC_SID >> 8;	   /* start bus */
	p[6] = (ACPI_DMAR_IOAPIC_SID >> 3) & 0x1f; /* path: device, function */
	p[7] = ACPI_DMAR_IOAPIC_SID & 7;
	sdt_done(b, t, len);
	return t;
}

static uint8_t *build_xsdt(struct acpi_buf *b, const uint32_t *ents, unsigned n, bool wide)
{
	unsigned esz = wide ? 8 : 4;
	size_t len = SDT_HDR_LEN + n * esz;
	uint8_t *t = sdt(b, wide ? "XSDT" : "RSDT", len, 1);

	if (!t)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		put_ptr(b, t + SDT_HDR_LEN + i * esz, (uint8_t)esz, ents[i]);
	sdt_done(b, t, len);
	return t;
}

/* The RSDP (RSDP_LEN bytes, zeroed) for the tables in b. */
static void build_rsdp(struct acpi_buf *b, uint8_t *rsdp, uint32_t rsdt, uint32_t xsdt)
{
	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "VMM   ", 6);
	rsdp[15] = 2;			/* ACPI 2.0+ */
	put_le32(rsdp + 16, rsdt);
	put_le32(rsdp + 20, RSDP_LEN);
	put_le64(rsdp + 24, xsdt);
	if (!b->lk) {
		rsdp[8] = fw_checksum(rsdp, 20);
		rsdp[32] = fw_checksum(rsdp, RSDP_LEN);
		return;
	}
	/* in the F segment, where the guest's scan for "RSD PTR " looks */
	linker_allocate(b->lk, ACPI_FW_RSDP_FILE, 16, ACPI_LOADER_ZONE_FSEG);
	linker_add_pointer(b->lk, ACPI_FW_RSDP_FILE, 16, 4, b->file);
	linker_add_pointer(b->lk, ACPI_FW_RSDP_FILE, 24, 8, b->file);
	/* the 1.0 checksum first: the extended one covers its byte */
	linker_add_checksum(b->lk, ACPI_FW_RSDP_FILE, 0, 20, 8);
	linker_add_checksum(b->lk, ACPI_FW_RSDP_FILE, 0, RSDP_LEN, 32);
}

/* Every table but the RSDP into b, then the RSDP into rsdp. */
static int build_all(struct acpi_buf *b, uint8_t *rsdp, const struct acpi_machine *m)
{
	uint8_t *dsdt, *facs, *fadt, *madt, *xsdt, *rsdt;
	bool q35 = m->dmar & ACPI_MACHINE_Q35;
	uint32_t ents[4];
	unsigned n = 2;

	if (m->ncpus == 0 || m->ncpus > 254 || fw_ioapic_id(m->apic_ids, m->ncpus) > 255)
		return -EINVAL;
	if (b->lk) /* FACS needs 64-byte alignment */
		linker_allocate(b->lk, b->file, 64, ACPI_LOADER_ZONE_HIGH);
	dsdt = build_dsdt(b, m->pvpanic_port, q35, !(m->dmar & ACPI_NO_S3));
	facs = build_facs(b);
	if (!dsdt || !facs)
		return -ENOSPC;
	fadt = build_fadt(b, gpa_of(b, facs), gpa_of(b, dsdt));
	madt = build_madt(b, m->ncpus, m->apic_ids);
	if (!fadt || !madt)
		return -ENOSPC;
	ents[0] = gpa_of(b, fadt);
	ents[1] = gpa_of(b, madt);
	if (m->dmar & ACPI_DMAR_PRESENT) {
		uint8_t *t = build_dmar(b, fw_ioapic_id(m->apic_ids, m->ncpus), m->dmar);

		if (!t)
			return -ENOSPC;
		ents[n++] = gpa_of(b, t);
	}
	if (q35) {
		uint8_t *t = build_mcfg(b);

		if (!t)
			return -ENOSPC;
		ents[n++] = gpa_of(b, t);
	}
	xsdt = build_xsdt(b, ents, n, true);
	rsdt = build_xsdt(b, ents, n, false);
	if (!xsdt || !rsdt)
		return -ENOSPC;
	memset(rsdp, 0, RSDP_LEN);
	build_rsdp(b, rsdp, gpa_of(b, rsdt), gpa_of(b, xsdt));
	return b->lk ? b->lk->err : 0;
}

int acpi_build(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, uint16_t pvpanic_port)
{
	return acpi_build_dmar(buf, len, gpa, ncpus, NULL, pvpanic_port, 0);
}

int acpi_build_dmar(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, const uint8_t *apic_ids,
		    uint16_t pvpanic_port, unsigned dmar)
{
	const struct acpi_machine m = {ncpus, apic_ids, pvpanic_port, dmar};
	struct acpi_buf b;
	int ret;

	/* the RSDP first, the other tables from the next 64-byte boundary */
	if (len < ACPI_RSDP_ROOM)
		return -ENOSPC;
	b = (struct acpi_buf){.base = buf + ACPI_RSDP_ROOM, .len = len - ACPI_RSDP_ROOM,
			      .gpa = gpa + ACPI_RSDP_ROOM};
	memset(buf, 0, ACPI_RSDP_ROOM);
	ret = build_all(&b, buf, &m);
	return ret < 0 ? ret : (int)(ACPI_RSDP_ROOM + b.used);
}

int acpi_build_fw_cfg(struct acpi_fw_blobs *out, unsigned ncpus, const uint8_t *apic_ids,
		      uint16_t pvpanic_port, unsigned dmar)
{
	const struct acpi_machine m = {ncpus, apic_ids, pvpanic_port, dmar};
	struct acpi_linker lk = {.cmds = out->loader, .max = sizeof(out->loader)};
	struct acpi_buf b = {.base = out->tables, .len = sizeof(out->tables),
			     .file = ACPI_FW_TABLES_FILE, .lk = &lk};
	int ret = build_all(&b, out->rsdp, &m);

	out->tables_len = b.used;
	out->loader_len = lk.len;
	return ret;
}
