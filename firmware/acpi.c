/* acpi.c — the ACPI tables for direct boot: RSDP (2.0), XSDT and RSDT
 * (FADT, MADT), FADT with a PM1a event/control block at ACPI_PM_BASE (the
 * acpi_pm device) and a FACS, a DSDT that only defines _S5 so the guest's
 * `poweroff` writes SLP_TYP=ACPI_S5_SLP_TYP|SLP_EN, and a MADT with every
 * vCPU, the IOAPIC and the SCI's interrupt source override. */
#include <errno.h>
#include <string.h>

#include "firmware/firmware.h"
#include "firmware/le.h"

#define SDT_HDR_LEN 36
#define RSDP_LEN 36
#define FACS_LEN 64
#define FADT_LEN 276		/* revision 6 */
#define MADT_LAPIC_LEN 8
#define MADT_IOAPIC_LEN 12
#define MADT_ISO_LEN 10
#define MADT_NMI_LEN 6

/* The DSDT body: Name (_S5, Package (4) { 5, 5, 0, 0 }). */
static const uint8_t dsdt_aml[] = {
	0x08, '_', 'S', '5', '_',	/* NameOp, NameString "_S5_" */
	0x12, 0x08, 0x04,		/* PackageOp, PkgLength 8, NumElements 4 */
	0x0a, ACPI_S5_SLP_TYP,		/* BytePrefix SLP_TYPa */
	0x0a, ACPI_S5_SLP_TYP,		/* BytePrefix SLP_TYPb */
	0x00, 0x00,			/* ZeroOp, ZeroOp (reserved) */
};

struct acpi_buf {
	uint8_t *base;
	size_t len, used;
	uint32_t gpa;
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

static void sdt_done(uint8_t *t, size_t len)
{
	t[9] = fw_checksum(t, len);
}

static uint8_t *build_dsdt(struct acpi_buf *b)
{
	size_t len = SDT_HDR_LEN + sizeof(dsdt_aml);
	uint8_t *t = sdt(b, "DSDT", len, 2);

	if (!t)
		return NULL;
	memcpy(t + SDT_HDR_LEN, dsdt_aml, sizeof(dsdt_aml));
	sdt_done(t, len);
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
	put_le32(t + 36, facs);
	put_le32(t + 40, dsdt);
	put_le16(t + 46, ACPI_SCI_IRQ);
	/* SMI_CMD (48) stays 0: the machine is always in ACPI mode. */
	put_le32(t + 56, ACPI_PM_BASE);	/* PM1a_EVT_BLK */
	put_le32(t + 64, ACPI_PM_BASE + 4); /* PM1a_CNT_BLK */
	t[88] = 4;			/* PM1_EVT_LEN */
	t[89] = 2;			/* PM1_CNT_LEN */
	put_le16(t + 96, 101);		/* P_LVL2_LAT > 100: no C2 */
	put_le16(t + 98, 1001);		/* P_LVL3_LAT > 1000: no C3 */
	put_le16(t + 109, 0);		/* IAPC_BOOT_ARCH: no legacy devices, no 8042 */
	/* WBINVD works, PROC_C1, power and sleep buttons are not fixed. */
	put_le32(t + 112, (1u << 0) | (1u << 2) | (1u << 4) | (1u << 5));
	put_le64(t + 140, dsdt);		/* X_DSDT */
	sdt_done(t, FADT_LEN);
	return t;
}

static uint8_t *build_madt(struct acpi_buf *b, unsigned ncpus)
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
		p[3] = i;		/* APIC id */
		put_le32(p + 4, 1);	/* enabled */
	}
	p[0] = 1;			/* I/O APIC, id ncpus, GSI base 0 */
	p[1] = MADT_IOAPIC_LEN;
	p[2] = ncpus;
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
	sdt_done(t, len);
	return t;
}

static uint8_t *build_xsdt(struct acpi_buf *b, const uint32_t *ents, unsigned n, bool wide)
{
	unsigned esz = wide ? 8 : 4;
	size_t len = SDT_HDR_LEN + n * esz;
	uint8_t *t = sdt(b, wide ? "XSDT" : "RSDT", len, 1);

	if (!t)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		if (wide)
			put_le64(t + SDT_HDR_LEN + i * 8, ents[i]);
		else
			put_le32(t + SDT_HDR_LEN + i * 4, ents[i]);
	}
	sdt_done(t, len);
	return t;
}

int acpi_build(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus)
{
	struct acpi_buf b = {.base = buf, .len = len, .gpa = gpa};
	uint8_t *rsdp, *dsdt, *facs, *fadt, *madt, *xsdt, *rsdt;
	uint32_t ents[2];

	if (ncpus == 0 || ncpus > 254)
		return -EINVAL;
	rsdp = take(&b, RSDP_LEN, 16);
	dsdt = build_dsdt(&b);
	facs = build_facs(&b);
	if (!rsdp || !dsdt || !facs)
		return -ENOSPC;
	fadt = build_fadt(&b, gpa_of(&b, facs), gpa_of(&b, dsdt));
	madt = build_madt(&b, ncpus);
	if (!fadt || !madt)
		return -ENOSPC;
	ents[0] = gpa_of(&b, fadt);
	ents[1] = gpa_of(&b, madt);
	xsdt = build_xsdt(&b, ents, 2, true);
	rsdt = build_xsdt(&b, ents, 2, false);
	if (!xsdt || !rsdt)
		return -ENOSPC;

	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "VMM   ", 6);
	rsdp[15] = 2;			/* ACPI 2.0+ */
	put_le32(rsdp + 16, gpa_of(&b, rsdt));
	put_le32(rsdp + 20, RSDP_LEN);
	put_le64(rsdp + 24, gpa_of(&b, xsdt));
	rsdp[8] = fw_checksum(rsdp, 20);
	rsdp[32] = fw_checksum(rsdp, RSDP_LEN);
	return b.used;
}
