/* mptable.c — Intel MultiProcessor Specification 1.4 tables: a floating
 * pointer and a configuration table listing every vCPU, one IOAPIC, an ISA
 * bus with IRQs 0-15 routed to IOAPIC pins 0-15 (the in-kernel irqchip's
 * default routing), ExtINT on LINT0 and NMI on LINT1. Linux uses these when
 * ACPI is off; payloads like smp.elf use them to find the CPUs. */
#include <errno.h>
#include <string.h>

#include "firmware/firmware.h"
#include "firmware/le.h"

#define MPC_HDR_LEN 44
#define MP_CPU_LEN 20
#define MP_SMALL_LEN 8
#define MP_ISA_IRQS 16

enum { MP_CPU, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_INT = 0, MP_NMI = 1, MP_EXTINT = 3 };

uint8_t fw_checksum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (n--)
		sum += *b++;
	return (uint8_t)-sum;
}

static uint8_t *mp_cpu(uint8_t *p, unsigned id)
{
	p[0] = MP_CPU;
	p[1] = id;			/* local APIC id */
	p[2] = 0x14;			/* local APIC version */
	p[3] = 1 | (id == 0 ? 2 : 0);	/* enabled, bootstrap processor */
	put_le32(p + 4, 0x600);		/* family 6 signature */
	put_le32(p + 8, 0x201);		/* CPUID.1 EDX: FPU, APIC */
	return p + MP_CPU_LEN;
}

static uint8_t *mp_small(uint8_t *p, const uint8_t e8[MP_SMALL_LEN])
{
	memcpy(p, e8, MP_SMALL_LEN);
	return p + MP_SMALL_LEN;
}

int mptable_build(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, const uint8_t *apic_ids)
{
	size_t need = 16 + MPC_HDR_LEN + ncpus * MP_CPU_LEN + MP_SMALL_LEN * (2 + MP_ISA_IRQS + 2);
	uint8_t ioapic_id;
	unsigned nent;
	uint8_t *cfg = buf + 16, *p;

	if (ncpus == 0 || ncpus > 254 || fw_ioapic_id(apic_ids, ncpus) > 255)
		return -EINVAL;
	ioapic_id = (uint8_t)fw_ioapic_id(apic_ids, ncpus);
	if (len < need)
		return -ENOSPC;
	memset(buf, 0, need);

	p = cfg + MPC_HDR_LEN;
	for (unsigned i = 0; i < ncpus; i++)
		p = mp_cpu(p, fw_apic_id(apic_ids, i));
	p = mp_small(p, (uint8_t[]){MP_BUS, 0, 'I', 'S', 'A', ' ', ' ', ' '});
	p = mp_small(p, (uint8_t[]){MP_IOAPIC, ioapic_id, 0x11, 1, 0, 0, 0, 0});
	put_le32(p - 4, FW_IOAPIC_GPA);
	/* type, flags (conforming), bus 0, bus IRQ, IOAPIC id, pin */
	for (uint8_t irq = 0; irq < MP_ISA_IRQS; irq++)
		p = mp_small(p, (uint8_t[]){MP_INTSRC, MP_INT, 0, 0, 0, irq, ioapic_id, irq});
	/* to every local APIC (0xff): ExtINT on LINT0, NMI on LINT1 */
	p = mp_small(p, (uint8_t[]){MP_LINTSRC, MP_EXTINT, 0, 0, 0, 0, 0xff, 0});
	p = mp_small(p, (uint8_t[]){MP_LINTSRC, MP_NMI, 0, 0, 0, 0, 0xff, 1});
	nent = ncpus + 2 + MP_ISA_IRQS + 2;

	memcpy(cfg, "PCMP", 4);
	put_le16(cfg + 4, p - cfg);	/* base table length */
	cfg[6] = 4;			/* spec revision 1.4 */
	memcpy(cfg + 8, "VMM     ", 8);
	memcpy(cfg + 16, "VMM-PC      ", 12);
	put_le16(cfg + 34, nent);
	put_le32(cfg + 36, FW_LAPIC_GPA);
	cfg[7] = fw_checksum(cfg, p - cfg);

	memcpy(buf, "_MP_", 4);
	put_le32(buf + 4, gpa + 16);	/* configuration table follows */
	buf[8] = 1;			/* length in 16-byte units */
	buf[9] = 4;
	buf[10] = fw_checksum(buf, 16);
	return p - buf;
}
