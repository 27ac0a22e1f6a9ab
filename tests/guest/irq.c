/* irq.elf — interrupts end to end, the same under every kernel_irqchip
 * mode, with the local APIC in xAPIC mode (MMIO) or, with -append
 * x2apic=1, in x2APIC mode (MSRs 0x800+): the local APIC timer (periodic), a level-triggered I/O
 * APIC line with its EOI (COM1's THRE interrupt on pin 4: one EOI while the line is still asserted
 * must deliver it again, remote IRR must hold it back until then), a self IPI, a self NMI, and CR8
 * holding back a lower class, CR8 read back in the TPR, and (xAPIC) the page moved by
 * IA32_APIC_BASE. Prints the median latencies, in TSC cycles, of a self IPI (ICR write -> handler)
 * and of a device interrupt (the UART raising its line -> handler). Exit code 0 when everything
 * arrived as expected.
 *
 * Ring 0 is emulated on some hosts: few instructions, waits bounded by
 * the TSC.
 */
#include "kit.h"

#define LAPIC 0xfee00000ul
#define LAPIC_MOVED 0xfed40000ul /* kvm-unit-tests' alternate APIC base */
#define IOAPIC 0xfec00000ul
#define COM1 0x3f8
#define VEC_TIMER 0x40
#define VEC_UART 0x51
#define VEC_IPI 0x62
#define LAT_SAMPLES 15

static uintptr_t lapic_base = LAPIC;

static volatile uint32_t *lapic_reg(unsigned off)
{
	uintptr_t a = lapic_base + off;

	__asm__("" : "+r"(a));
	return (volatile uint32_t *)a;
}

static bool x2apic;

static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

/* xAPIC register offset off is x2APIC MSR 0x800 + off / 16; the ICR is
 * one 64-bit MSR there (a self shorthand needs no destination). */
static void lapic_write(unsigned off, uint32_t v)
{
	if (x2apic)
		wrmsr(0x800 + (off >> 4), v);
	else
		*lapic_reg(off) = v;
}

/* x2APIC mode: EXTD and EN in IA32_APIC_BASE, if CPUID offers it. */
static int enter_x2apic(void)
{
	uint32_t a = 1, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	if (!(c & (1u << 21))) {
		printf("irq: FAIL: x2apic=1 but CPUID.1:ECX.x2APIC is clear\n");
		return 1;
	}
	wrmsr(0x1b, rdmsr(0x1b) | (1u << 11) | (1u << 10));
	x2apic = true;
	if ((uint32_t)rdmsr(0x802) != 0) { /* x2APIC ID of the BSP */
		printf("irq: FAIL: x2APIC ID %u\n", (unsigned)rdmsr(0x802));
		return 1;
	}
	printf("irq: x2APIC mode\n");
	return 0;
}

static void ioapic_write(unsigned reg, uint32_t v)
{
	uintptr_t a = IOAPIC;

	__asm__("" : "+r"(a));
	*(volatile uint32_t *)a = reg;
	*(volatile uint32_t *)(a + 0x10) = v;
}

/* ----------------------------------------------------------- handlers */

static volatile unsigned timer_ticks, uart_hits, ipi_hits, nmi_hits;
static volatile uint64_t handler_tsc;

void irq_timer(void);
void irq_timer(void)
{
	timer_ticks++;
	lapic_write(0xb0, 0);
}

void irq_uart(void);
void irq_uart(void)
{
	if (!uart_hits)
		handler_tsc = rdtsc(); /* the first delivery: raise -> handler */
	/* The first time, leave the UART asserting: the EOI must bring the
	 * interrupt back. The second time, acknowledge it (read IIR). */
	if (++uart_hits >= 2)
		(void)inb(COM1 + 2);
	lapic_write(0xb0, 0);
}

void irq_ipi(void);
void irq_ipi(void)
{
	handler_tsc = rdtsc();
	ipi_hits++;
	lapic_write(0xb0, 0);
}

void irq_nmi(void);
void irq_nmi(void)
{
	nmi_hits++;
}

KIT_IRQ_STUB(stub_timer, irq_timer);
KIT_IRQ_STUB(stub_uart, irq_uart);
KIT_IRQ_STUB(stub_ipi, irq_ipi);
KIT_IRQ_STUB(stub_nmi, irq_nmi);

/* ------------------------------------------------------------- helpers */

static uint64_t tsc_per_ms;

/* PIT channel 2 as a stopwatch: 10 ms to calibrate the TSC. */
static void calibrate_tsc(void)
{
	uint64_t t0;

	outb(0x61, (inb(0x61) & ~0x02) | 0x01);
	outb(0x43, 0xb0);
	outb(0x42, 11932 & 0xff);
	outb(0x42, 11932 >> 8);
	t0 = rdtsc();
	while (!(inb(0x61) & 0x20))
		;
	tsc_per_ms = (rdtsc() - t0) / 10;
	if (!tsc_per_ms)
		tsc_per_ms = 1000000;
}

/* Wait with interrupts on until *counter reaches want or ms pass. */
static bool wait_for(volatile unsigned *counter, unsigned want, unsigned ms)
{
	uint64_t end = rdtsc() + ms * tsc_per_ms;

	__asm__ volatile("sti");
	while (*counter < want && rdtsc() < end)
		cpu_relax();
	__asm__ volatile("cli");
	return *counter >= want;
}

static void sort(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* --------------------------------------------------------------- tests */

static int test_timer(void)
{
	lapic_write(0x3e0, 0xb);		 /* divide by 1 */
	lapic_write(0x320, 0x20000 | VEC_TIMER); /* periodic */
	lapic_write(0x380, 1000000);		 /* ~1 ms on a 1 GHz APIC bus */
	wait_for(&timer_ticks, 5, 2000);
	lapic_write(0x380, 0);
	lapic_write(0x320, 0x10000);
	printf("irq: lapic timer: %u ticks\n", timer_ticks);
	return timer_ticks >= 5 ? 0 : 1;
}

static int test_level_line(uint64_t *lat)
{
	uint64_t t0;

	/* pin 4: vector, fixed, physical APIC 0, active high, level */
	ioapic_write(0x10 + 2 * 4 + 1, 0);
	ioapic_write(0x10 + 2 * 4, 0x8000 | VEC_UART);
	t0 = rdtsc();
	outb(COM1 + 1, 0x02); /* THRE interrupt: the line rises at once */
	wait_for(&uart_hits, 2, 1000);
	*lat = handler_tsc - t0;
	outb(COM1 + 1, 0x00);
	wait_for(&uart_hits, 3, 50); /* nothing more may come */
	ioapic_write(0x10 + 2 * 4, 0x10000);
	/* 2 as on hardware; KVM's in-kernel I/O APIC on some hosts adds a
	 * spurious third (the UART no longer asserting), which guests
	 * tolerate. Less is a lost EOI, more a level storm. */
	printf("irq: level-triggered line: %u deliveries\n", uart_hits);
	return uart_hits == 2 || uart_hits == 3 ? 0 : 1;
}

static int test_ipi_and_cr8(uint64_t *lat)
{
	uint64_t samples[LAT_SAMPLES];
	unsigned before;

	for (unsigned i = 0; i < LAT_SAMPLES; i++) {
		uint64_t t0;

		before = ipi_hits;
		t0 = rdtsc();
		__asm__ volatile("sti");
		lapic_write(0x300, 0x44000 | VEC_IPI); /* fixed, self */
		while (ipi_hits == before && rdtsc() - t0 < 1000 * tsc_per_ms)
			cpu_relax();
		__asm__ volatile("cli");
		samples[i] = handler_tsc - t0;
	}
	sort(samples, LAT_SAMPLES);
	*lat = samples[LAT_SAMPLES / 2];
	/* CR8 = 7 holds back class 6; lowering it lets the IPI in */
	before = ipi_hits;
	__asm__ volatile("mov %0, %%cr8" : : "r"(7ul));
	lapic_write(0x300, 0x44000 | VEC_IPI);
	wait_for(&ipi_hits, before + 1, 20);
	if (ipi_hits != before) {
		printf("irq: FAIL: an IPI got through CR8 = 7\n");
		return 1;
	}
	__asm__ volatile("mov %0, %%cr8" : : "r"(0ul));
	wait_for(&ipi_hits, before + 1, 1000);
	printf("irq: self IPIs: %u, CR8 held one back until lowered\n", ipi_hits);
	return ipi_hits == LAT_SAMPLES + 1 ? 0 : 1;
}

static int test_nmi(void)
{
	lapic_write(0x300, 0x44400); /* NMI, self */
	wait_for(&nmi_hits, 1, 1000);
	printf("irq: NMI: %u\n", nmi_hits);
	return nmi_hits == 1 ? 0 : 1;
}

/* CR8 is the TPR's upper nibble: raising it (no exit on any host) must
 * show in the TPR register read right after. */
static int test_cr8_tpr(void)
{
	uint32_t tpr;

	__asm__ volatile("mov %0, %%cr8" : : "r"(5ul));
	tpr = x2apic ? (uint32_t)rdmsr(0x808) : *lapic_reg(0x80);
	__asm__ volatile("mov %0, %%cr8" : : "r"(0ul));
	printf("irq: CR8 = 5 reads back as TPR 0x%x\n", tpr);
	return (tpr & 0xf0) == 0x50 ? 0 : 1;
}

/* xAPIC: IA32_APIC_BASE moves the register page; a self IPI sent through
 * the moved page arrives, and the page comes back. */
static int test_apic_base(void)
{
	uint32_t ver = *lapic_reg(0x30);
	uint64_t base = rdmsr(0x1b);
	unsigned before = ipi_hits;
	bool ok;

	if (x2apic)
		return 0;
	wrmsr(0x1b, (base & 0xfff) | LAPIC_MOVED);
	lapic_base = LAPIC_MOVED;
	ok = *lapic_reg(0x30) == ver;
	lapic_write(0x80, 0x20);
	ok = ok && *lapic_reg(0x80) == 0x20;
	lapic_write(0x80, 0);
	lapic_write(0x300, 0x44000 | VEC_IPI);
	wait_for(&ipi_hits, before + 1, 1000);
	ok = ok && ipi_hits == before + 1;
	wrmsr(0x1b, base);
	lapic_base = LAPIC;
	ok = ok && *lapic_reg(0x30) == ver;
	printf("irq: APIC base moved to 0x%lx and back: %s\n", LAPIC_MOVED, ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}

int guest_main(void)
{
	uint64_t ipi_lat = 0, dev_lat = 0;
	int fails = 0;

	calibrate_tsc();
	outb(0x21, 0xff); /* the PICs stay out of this */
	outb(0xa1, 0xff);
	kit_set_gate(2, stub_nmi);
	kit_set_gate(VEC_TIMER, stub_timer);
	kit_set_gate(VEC_UART, stub_uart);
	kit_set_gate(VEC_IPI, stub_ipi);
	if (kit_cmdline_uint("x2apic", 0) && enter_x2apic())
		return 1;
	lapic_write(0xf0, 0x1ff); /* APIC on, spurious vector 0xff */
	fails += test_timer();
	fails += test_level_line(&dev_lat);
	fails += test_ipi_and_cr8(&ipi_lat);
	fails += test_nmi();
	fails += test_cr8_tpr();
	fails += test_apic_base();
	printf("irq: latency self-IPI %lu cycles, device line %lu cycles (%lu cycles/us)\n",
	       ipi_lat, dev_lat, tsc_per_ms / 1000);
	printf("irq: %s\n", fails ? "FAILED" : "all interrupts as expected");
	return fails ? 1 : 0;
}
