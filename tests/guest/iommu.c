/* iommu.elf — VT-d and the edu device end to end, run with
 * -M q35,kernel_irqchip=split -device intel-iommu,intremap=on -device edu:
 * the register handshake, queued invalidation (a wait descriptor's status
 * write), DMA remapping of the edu's DMA through 3-level tables (a 4 KiB
 * page and a 2 MiB page), a fault recorded for an unmapped IOVA, and
 * interrupt remapping of the edu's MSI and of a remappable-format I/O APIC
 * entry for its INTA. Exit code 0 when all of it held.
 *
 * Ring 0 is emulated on some hosts: straight-line code, bounded waits. */
#include "kit.h"

#define VTD 0xfed90000ul
#define LAPIC 0xfee00000ul
#define IOAPIC 0xfec00000ul
#define VEC_MSI 0x61
#define VEC_INTX 0x62
#define BIG_PAGE 0x1000000ul /* the 2 MiB page's RAM (16 MiB) */

/* VT-d registers */
#define GCMD 0x18
#define GSTS 0x1c
#define RTADDR 0x20
#define FSTS 0x34
#define IQT 0x88
#define IQA 0x90
#define IRTA 0xb8
#define FRCD 0x220

static uint64_t root[512] __attribute__((aligned(4096)));
static uint64_t ctx[512] __attribute__((aligned(4096)));
static uint64_t l3[512] __attribute__((aligned(4096)));
static uint64_t l2[512] __attribute__((aligned(4096)));
static uint64_t l1[512] __attribute__((aligned(4096)));
static uint64_t irt[512] __attribute__((aligned(4096))); /* 256 IRTEs */
static uint64_t queue[512] __attribute__((aligned(4096)));
static uint8_t page[4096] __attribute__((aligned(4096)));
static volatile uint32_t wait_status;
static uintptr_t edu;
static unsigned devfn;

static volatile uint32_t *reg32(uintptr_t a)
{
	__asm__("" : "+r"(a));
	return (volatile uint32_t *)a;
}

static volatile uint64_t *reg64(uintptr_t a)
{
	__asm__("" : "+r"(a));
	return (volatile uint64_t *)a;
}

static uint32_t cfg_read(unsigned off)
{
	outl(0xcf8, 0x80000000u | devfn << 8 | (off & 0xfc));
	return inl(0xcfc) >> (8 * (off & 3));
}

static void cfg_write32(unsigned off, uint32_t v)
{
	outl(0xcf8, 0x80000000u | devfn << 8 | off);
	outl(0xcfc, v);
}

static void gcmd_or(uint32_t bit)
{
	*reg32(VTD + GCMD) = *reg32(VTD + GSTS) | bit;
}

static volatile unsigned hits[256];

void irq_msi(void);
void irq_msi(void)
{
	hits[VEC_MSI]++;
	*reg32(edu + 0x64) = *reg32(edu + 0x24); /* ack */
	*reg32(LAPIC + 0xb0) = 0;
}

void irq_intx(void);
void irq_intx(void)
{
	hits[VEC_INTX]++;
	*reg32(edu + 0x64) = *reg32(edu + 0x24);
	*reg32(LAPIC + 0xb0) = 0;
}

KIT_IRQ_STUB(stub_msi, irq_msi);
KIT_IRQ_STUB(stub_intx, irq_intx);

static bool wait_hit(unsigned vec)
{
	__asm__ volatile("sti");
	for (unsigned i = 0; i < 10000000 && !hits[vec]; i++)
		cpu_relax();
	__asm__ volatile("cli");
	return hits[vec] != 0;
}

static int find_edu(void)
{
	for (devfn = 8; devfn < 256; devfn += 8)
		if (cfg_read(0) == 0x11e81234u)
			break;
	if (devfn >= 256) {
		printf("iommu: FAIL: no edu device\n");
		return 1;
	}
	edu = cfg_read(0x10) & ~0xful;
	cfg_write32(0x04, cfg_read(0x04) | 0x6); /* memory, bus master */
	if (*reg32(edu) != 0x010000edu) {
		printf("iommu: FAIL: edu id %x at %lx\n", *reg32(edu), (unsigned long)edu);
		return 1;
	}
	printf("iommu: edu at 00:%02x.0, BAR0 %lx\n", devfn >> 3, (unsigned long)edu);
	return 0;
}

static void edu_dma(uint64_t src, uint64_t dst, uint32_t count, uint32_t cmd)
{
	*reg64(edu + 0x80) = src;
	*reg64(edu + 0x88) = dst;
	*reg64(edu + 0x90) = count;
	*reg32(edu + 0x98) = cmd;
	while (*reg32(edu + 0x98) & 1)
		cpu_relax();
}

/* IOVA 0 -> page (4 KiB), IOVA [2M, 4M) -> BIG_PAGE (2 MiB), translation on */
static int test_dma(void)
{
	uint64_t fault;

	root[0] = (uintptr_t)ctx | 1;
	ctx[devfn * 2] = (uintptr_t)l3 | 1;
	ctx[devfn * 2 + 1] = 1 | 1u << 8; /* 39-bit, domain 1 */
	l3[0] = (uintptr_t)l2 | 3;
	l2[0] = (uintptr_t)l1 | 3;
	l2[1] = BIG_PAGE | 3 | 1u << 7;
	l1[0] = (uintptr_t)page | 3;
	*reg64(VTD + RTADDR) = (uintptr_t)root;
	gcmd_or(1u << 30); /* SRTP */
	gcmd_or(1u << 31); /* TE */
	memcpy(page, "through vt-d", 13);
	memset((void *)BIG_PAGE, 0, 64);
	edu_dma(0x0, 0x40000, 13, 1);	   /* IOVA 0 -> buffer */
	edu_dma(0x40000, 0x200010, 13, 3); /* buffer -> IOVA 2M + 16 */
	if (memcmp((void *)(BIG_PAGE + 16), "through vt-d", 13)) {
		printf("iommu: FAIL: DMA did not land in the 2 MiB page\n");
		return 1;
	}
	edu_dma(0x40000, 0x5000, 4, 3); /* unmapped: a write fault */
	fault = *reg64(VTD + FRCD + 8);
	if (!(*reg32(VTD + FSTS) & 2) || (fault & 0xffff) != devfn || ((fault >> 32) & 0xff) != 5 ||
	    *reg64(VTD + FRCD) != 0x5000) {
		printf("iommu: FAIL: fault status %x record %lx\n", *reg32(VTD + FSTS),
		       (unsigned long)fault);
		return 1;
	}
	printf("iommu: DMA remapped (4 KiB and 2 MiB pages), unmapped IOVA faulted (reason 5)\n");
	return 0;
}

static int test_qi(void)
{
	*reg64(VTD + IQA) = (uintptr_t)queue;
	gcmd_or(1u << 26);				 /* QIE */
	queue[0] = 2 | 1u << 4;				 /* IOTLB, global */
	queue[2] = 5 | 1u << 5 | (uint64_t)0x600d << 32; /* wait, status write */
	queue[3] = (uintptr_t)&wait_status;
	*reg64(VTD + IQT) = 32;
	if (wait_status != 0x600d) {
		printf("iommu: FAIL: invalidation wait status %x\n", wait_status);
		return 1;
	}
	printf("iommu: queued invalidation done\n");
	return 0;
}

static void irte(unsigned index, unsigned vector)
{
	irt[index * 2] = 1 | (uint64_t)vector << 16; /* fixed, physical, APIC 0 */
	irt[index * 2 + 1] = devfn | 1u << 18;	     /* source-id check */
}

static int test_ir(void)
{
	unsigned msi = cfg_read(0x34) & 0xff, line = cfg_read(0x3c) & 0xff;

	outb(0x21, 0xff); /* the 8259s: INTA reaches them too (IRQ line) */
	outb(0xa1, 0xff);
	kit_set_gate(VEC_MSI, stub_msi);
	kit_set_gate(VEC_INTX, stub_intx);
	*reg32(LAPIC + 0xf0) = 0x1ff; /* software enable */
	irte(3, VEC_MSI);
	irte(4, VEC_INTX);
	*reg64(VTD + IRTA) = (uintptr_t)irt | 7;
	gcmd_or(1u << 24); /* SIRTP */
	gcmd_or(1u << 25); /* IRE */
	/* INTA through a remappable-format I/O APIC entry: handle 4 */
	*reg32(IOAPIC) = 0x10 + 2 * line + 1;
	*reg32(IOAPIC + 0x10) = 1u << 16 | 4u << 17; /* format, index[14:0] << 49 */
	*reg32(IOAPIC) = 0x10 + 2 * line;
	*reg32(IOAPIC + 0x10) = VEC_INTX;
	*reg32(edu + 0x60) = 1;
	if (!wait_hit(VEC_INTX)) {
		printf("iommu: FAIL: remapped I/O APIC interrupt (pin %u) did not arrive\n", line);
		return 1;
	}
	/* the MSI in remappable format: handle 3 */
	cfg_write32(msi + 4, 0xfee00000u | 3u << 5 | 1u << 4);
	cfg_write32(msi + 8, 0);
	cfg_write32(msi + 12, 0);
	cfg_write32(msi, cfg_read(msi) | 1u << 16); /* MSI enable */
	*reg32(edu + 0x60) = 2;
	if (!wait_hit(VEC_MSI)) {
		printf("iommu: FAIL: remapped MSI did not arrive\n");
		return 1;
	}
	if (*reg32(VTD + FSTS) & ~2u) { /* PPF of the DMA test aside */
		printf("iommu: FAIL: fault status %x\n", *reg32(VTD + FSTS));
		return 1;
	}
	printf("iommu: remapped interrupts: I/O APIC %u, MSI %u\n", hits[VEC_INTX], hits[VEC_MSI]);
	return 0;
}

int guest_main(void)
{
	if (*reg32(VTD) != 0x10 || !(*reg64(VTD + 8) & (2u << 8))) {
		printf("iommu: FAIL: no VT-d unit at %lx\n", VTD);
		return 1;
	}
	if (find_edu() || test_qi() || test_dma() || test_ir())
		return 1;
	printf("iommu: all checks passed\n");
	return 0;
}
