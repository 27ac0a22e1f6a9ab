/* smp.elf — start every CPU the firmware tables list and count them in.
 *
 * The BSP finds the CPUs in the ACPI MADT (RSDP in the EBDA or at
 * 0xe0000-0xfffff) or else in the MP table (or only there with mp=1 on the
 * command line), copies the real-mode trampoline to SMP_TRAMP_BASE and
 * sends INIT, SIPI, SIPI to each AP through its local APIC. Every AP gets
 * to long mode, prints one line and bumps the check-in counter. The BSP
 * waits up to timeout=MS (default 5000) and prints
 * "smp: N of M cpus checked in"; exit code 0 when N == M. phantom=ID adds
 * an APIC ID no CPU has, to exercise the timeout. With ipi=N the BSP then
 * pings every AP N times with a fixed IPI, each AP answers with one, and
 * the BSP prints the median round trip in TSC cycles ("smp: ipi ...");
 * exit code 4 when an answer is missing.
 *
 * Everything here runs in ring 0, which some hosts emulate: the code does
 * few instructions per exit and delays come from PIT channel 2.
 */
#include "smp.h"
#include "kit.h"

/* ------------------------------------------------------------ tables */

struct cpu_list {
	const char *source;
	uint32_t lapic_base;
	unsigned n;
	uint8_t apic_id[SMP_MAX_CPUS];
	unsigned skipped;  /* enabled CPUs beyond SMP_MAX_CPUS */
	unsigned disabled; /* listed but not enabled */
};

struct __attribute__((packed)) u16p {
	uint16_t v;
};
struct __attribute__((packed)) u32p {
	uint32_t v;
};
struct __attribute__((packed)) u64p {
	uint64_t v;
};

/* A physical address as a pointer gcc cannot see through: reads of fixed
 * addresses (0x40e) otherwise trip its array-bounds analysis. */
static void *phys(uintptr_t a)
{
	__asm__("" : "+r"(a));
	return (void *)a;
}

static uint16_t rd16(uintptr_t a)
{
	return ((const struct u16p *)phys(a))->v;
}

static uint32_t rd32(uintptr_t a)
{
	return ((const struct u32p *)phys(a))->v;
}

static uint64_t rd64(uintptr_t a)
{
	return ((const struct u64p *)phys(a))->v;
}

static bool sums_to_zero(uintptr_t a, size_t n)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += *(const uint8_t *)(a + i);
	return sum == 0;
}

static void cpu_add(struct cpu_list *c, uint32_t apic_id)
{
	if (c->n < SMP_MAX_CPUS && apic_id < 255)
		c->apic_id[c->n++] = (uint8_t)apic_id;
	else
		c->skipped++;
}

/* The EBDA's first KiB, then [lo, hi): the places firmware puts the RSDP
 * and the MP floating pointer, 16-byte aligned. */
static uintptr_t scan(uint64_t sig, size_t sig_len, bool (*valid)(uintptr_t), uintptr_t lo,
		      uintptr_t hi)
{
	uintptr_t ebda = (uintptr_t)rd16(0x40e) << 4;
	uint64_t mask = sig_len == 8 ? ~0ull : (1ull << (8 * sig_len)) - 1;
	uintptr_t ranges[2][2] = {{ebda, ebda + 1024}, {lo, hi}};

	for (unsigned r = 0; r < 2; r++) {
		if (!ranges[r][0])
			continue;
		for (uintptr_t a = ranges[r][0]; a < ranges[r][1]; a += 16)
			if ((rd64(a) & mask) == sig && valid(a))
				return a;
	}
	return 0;
}

#define RSDP_SIG 0x2052545020445352ull /* "RSD PTR " */
#define MADT_SIG 0x43495041u	       /* "APIC" */
#define MP_SIG 0x5f504d5fu	       /* "_MP_" */
#define PCMP_SIG 0x504d4350u	       /* "PCMP" */

static bool rsdp_valid(uintptr_t a)
{
	return sums_to_zero(a, 20);
}

/* The MADT through the XSDT (revision >= 2) or the RSDT, or 0. */
static uintptr_t find_madt_table(uintptr_t rsdp)
{
	bool xsdt = *(const uint8_t *)(rsdp + 15) >= 2 && rd64(rsdp + 24);
	uintptr_t sdt = xsdt ? (uintptr_t)rd64(rsdp + 24) : rd32(rsdp + 16);
	unsigned step = xsdt ? 8 : 4;
	uint32_t len;

	if (!sdt || !sums_to_zero(sdt, rd32(sdt + 4)))
		return 0;
	len = rd32(sdt + 4);
	for (uint32_t off = 36; off + step <= len; off += step) {
		uintptr_t t = step == 8 ? (uintptr_t)rd64(sdt + off) : rd32(sdt + off);

		if (t && rd32(t) == MADT_SIG && sums_to_zero(t, rd32(t + 4)))
			return t;
	}
	return 0;
}

static bool cpus_from_madt(struct cpu_list *c)
{
	uintptr_t rsdp = scan(RSDP_SIG, 8, rsdp_valid, 0xe0000, 0x100000), madt, end;

	if (!rsdp || !(madt = find_madt_table(rsdp)))
		return false;
	c->source = "ACPI MADT";
	c->lapic_base = rd32(madt + 36);
	end = madt + rd32(madt + 4);
	for (uintptr_t e = madt + 44; e + 2 <= end; e += *(const uint8_t *)(e + 1)) {
		uint8_t type = *(const uint8_t *)e, len = *(const uint8_t *)(e + 1);

		if (len < 2)
			break;			    /* malformed: stop rather than loop */
		if (type == 0 && (rd32(e + 4) & 1)) /* processor local APIC, enabled */
			cpu_add(c, *(const uint8_t *)(e + 3));
		else if (type == 0)
			c->disabled++;
		else if (type == 9 && (rd32(e + 8) & 1)) /* x2APIC: not startable here */
			c->skipped++;
		else if (type == 5) /* local APIC address override */
			c->lapic_base = (uint32_t)rd64(e + 4);
	}
	return c->n > 0;
}

static bool mp_valid(uintptr_t a)
{
	uint8_t len = *(const uint8_t *)(a + 8);

	return len && sums_to_zero(a, 16u * len) && rd32(a + 4);
}

static bool cpus_from_mp(struct cpu_list *c)
{
	uintptr_t fp = scan(MP_SIG, 4, mp_valid, 0x9fc00, 0xa0000), t, e;
	unsigned count;

	if (!fp)
		fp = scan(MP_SIG, 4, mp_valid, 0xf0000, 0x100000);
	if (!fp)
		return false;
	t = rd32(fp + 4);
	if (rd32(t) != PCMP_SIG || !sums_to_zero(t, rd16(t + 4)))
		return false;
	c->source = "MP table";
	c->lapic_base = rd32(t + 36);
	count = rd16(t + 34);
	e = t + 44;
	for (unsigned i = 0; i < count && e < t + rd16(t + 4); i++) {
		uint8_t type = *(const uint8_t *)e;

		if (type == 0) { /* processor: id at 1, flags at 3 (bit 0 enabled) */
			if (*(const uint8_t *)(e + 3) & 1)
				cpu_add(c, *(const uint8_t *)(e + 1));
			else
				c->disabled++;
			e += 20;
		} else if (type <= 4) {
			e += 8;
		} else {
			break;
		}
	}
	return c->n > 0;
}

/* -------------------------------------------------------- local APIC */

#define LAPIC_ID 0x20
#define LAPIC_SVR 0xf0
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define ICR_INIT 0x4500	   /* INIT, level assert */
#define ICR_STARTUP 0x4600 /* start-up; vector in the low byte */
#define ICR_BUSY (1u << 12)

static uintptr_t lapic = 0xfee00000;

static uint32_t lapic_read(unsigned reg)
{
	return *(volatile uint32_t *)(lapic + reg);
}

static void lapic_write(unsigned reg, uint32_t v)
{
	*(volatile uint32_t *)(lapic + reg) = v;
}

static unsigned lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

static bool send_ipi(unsigned apic_id, uint32_t cmd)
{
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, cmd);
	for (unsigned i = 0; i < 1000; i++)
		if (!(lapic_read(LAPIC_ICR_LO) & ICR_BUSY))
			return true;
	return false;
}

/* ------------------------------------------------------------- IPIs */

#define VEC_PING 0x70
#define VEC_PONG 0x71
#define ICR_FIXED 0x4000 /* fixed, physical, assert */

static unsigned ipi_rounds, bsp_id;
static bool print_topology;

/* topo=1: the topology CPUID gives this CPU (leaf 1's APIC ID, count and
 * HTT; leaf 0xB's levels; 0x1F's with dies), compared with QEMU's by
 * core-smp.sh. */
static void cpuid_count(unsigned leaf, unsigned sub, unsigned r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}

static void show_topology(unsigned id)
{
	unsigned l1[4], b0[4], b1[4];

	cpuid_count(1, 0, l1);
	cpuid_count(0xb, 0, b0);
	cpuid_count(0xb, 1, b1);
	printf("smp: topo apic %u leaf1 %x htt %u 0xb.0 %x %x %x %x 0xb.1 %x %x %x %x\n", id,
	       l1[1] >> 16, l1[3] >> 28 & 1, b0[0] & 0x1f, b0[1] & 0xffff, b0[2] & 0xffff, b0[3],
	       b1[0] & 0x1f, b1[1] & 0xffff, b1[2] & 0xffff, b1[3]);
	cpuid_count(0, 0, l1);
	if (l1[0] < 0x1f)
		return;
	cpuid_count(0x1f, 1, b0);
	cpuid_count(0x1f, 2, b1);
	if (b0[1] & 0xffff) /* leaf 0x1F in use: the core and die levels */
		printf("smp: topo apic %u 0x1f.1 %x %x %x 0x1f.2 %x %x %x\n", id, b0[0] & 0x1f,
		       b0[1] & 0xffff, b0[2] & 0xffff, b1[0] & 0x1f, b1[1] & 0xffff,
		       b1[2] & 0xffff);
}
static volatile unsigned pongs;

/* AP: a ping from the BSP; answer it. */
void smp_ping(void);
void smp_ping(void)
{
	lapic_write(LAPIC_ICR_HI, bsp_id << 24);
	lapic_write(LAPIC_ICR_LO, ICR_FIXED | VEC_PONG);
	lapic_write(0xb0, 0); /* EOI */
}

/* BSP: the answer. */
void smp_pong(void);
void smp_pong(void)
{
	pongs++;
	lapic_write(0xb0, 0);
}

KIT_IRQ_STUB(stub_ping, smp_ping);
KIT_IRQ_STUB(stub_pong, smp_pong);

/* ------------------------------------------------------------- the APs */

static struct cpu_list cpus;
static volatile int print_lock;
static volatile unsigned checked_in; /* APs */
static volatile bool arrived[SMP_MAX_CPUS];
unsigned smp_next_slot;
uint8_t smp_ap_stacks[SMP_MAX_CPUS << SMP_AP_STACK_SHIFT] __attribute__((aligned(4096)));

extern const char smp_tramp_start[], smp_tramp_end[], smp_tramp_gdtr[];

static void lock(void)
{
	while (__atomic_exchange_n(&print_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void unlock(void)
{
	__atomic_store_n(&print_lock, 0, __ATOMIC_RELEASE);
}

__attribute__((noreturn)) void smp_ap_main(unsigned slot);
void smp_ap_main(unsigned slot)
{
	unsigned id = lapic_id();

	kit_load_idt();
	lock();
	for (unsigned i = 0; i < cpus.n; i++)
		if (cpus.apic_id[i] == id)
			arrived[i] = true;
	printf("smp: cpu with apic id %u checked in (arrival %u)\n", id, slot + 1);
	if (print_topology)
		show_topology(id);
	__atomic_add_fetch(&checked_in, 1, __ATOMIC_SEQ_CST);
	unlock();
	if (ipi_rounds) {
		/* answer pings: interrupts on, halted in between */
		lapic_write(LAPIC_SVR, 0x1ff);
		for (;;)
			__asm__ volatile("sti; hlt; cli");
	}
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* ------------------------------------------------------------- the BSP */

struct __attribute__((packed)) gdtr {
	uint16_t limit;
	uint64_t base;
};

/* The trampoline to SMP_TRAMP_BASE, with this CPU's GDTR in it. */
static void copy_trampoline(void)
{
	uint8_t *dst = phys(SMP_TRAMP_BASE);
	struct gdtr *gdtr = (struct gdtr *)(dst + (smp_tramp_gdtr - smp_tramp_start));

	memcpy(dst, smp_tramp_start, (size_t)(smp_tramp_end - smp_tramp_start));
	__asm__ volatile("sgdt %0" : "=m"(*gdtr));
}

/* INIT to every AP, 10 ms, then two start-up IPIs 200 us apart (MP spec
 * B.4). A second SIPI to an AP already running is ignored. */
static void start_aps(unsigned bsp)
{
	uint32_t sipi = ICR_STARTUP | (SMP_TRAMP_BASE >> 12);

	for (unsigned i = 0; i < cpus.n; i++)
		if (cpus.apic_id[i] != bsp && !send_ipi(cpus.apic_id[i], ICR_INIT))
			printf("smp: INIT to apic id %u not delivered\n", cpus.apic_id[i]);
	kit_pit_wait_us(10000);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < cpus.n; i++)
			if (cpus.apic_id[i] != bsp && !arrived[i])
				send_ipi(cpus.apic_id[i], sipi);
		kit_pit_wait_us(200);
	}
}

/* Ping each AP `ipi_rounds` times; the median round trip over all. */
static int ping_aps(unsigned bsp)
{
	static uint64_t rtt[256];
	unsigned n = 0, missing = 0;

	/* firmware may leave the PIT ticking through the PIC at vector 8 */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	for (unsigned i = 0; i < cpus.n; i++) {
		if (cpus.apic_id[i] == bsp || !arrived[i])
			continue;
		for (unsigned r = 0; r < ipi_rounds; r++) {
			unsigned before = pongs;
			uint64_t t0 = rdtsc();

			__asm__ volatile("sti");
			send_ipi(cpus.apic_id[i], ICR_FIXED | VEC_PING);
			/* ~1 s at up to 4 GHz; the answer takes microseconds */
			while (pongs == before && rdtsc() - t0 < 4000000000ull)
				cpu_relax();
			__asm__ volatile("cli");
			if (pongs == before) {
				missing++;
				break;
			}
			if (n < sizeof(rtt) / sizeof(rtt[0]))
				rtt[n++] = rdtsc() - t0;
		}
	}
	for (unsigned i = 1; i < n; i++) /* insertion sort: n is small */
		for (unsigned j = i; j && rtt[j - 1] > rtt[j]; j--) {
			uint64_t t = rtt[j];

			rtt[j] = rtt[j - 1];
			rtt[j - 1] = t;
		}
	printf("smp: ipi round trips: %u answered, %u missing, median %lu cycles\n", n, missing,
	       n ? rtt[n / 2] : 0);
	return missing ? 4 : 0;
}

static void wait_aps(unsigned want, uint64_t timeout_ms)
{
	for (uint64_t ms = 0; ms < timeout_ms && checked_in < want; ms++)
		kit_pit_wait_us(1000);
}

int guest_main(void)
{
	uint64_t timeout_ms = kit_cmdline_uint("timeout", 5000);
	bool mp_only = kit_cmdline_uint("mp", 0) != 0;
	unsigned bsp, n;

	if (!(!mp_only && cpus_from_madt(&cpus)) && !cpus_from_mp(&cpus)) {
		printf("smp: no ACPI MADT and no MP table listing a CPU\n");
		return 2;
	}
	if (kit_cmdline_uint("phantom", 0)) /* test the timeout: a CPU that is not there */
		cpu_add(&cpus, (uint32_t)kit_cmdline_uint("phantom", 0));
	if (cpus.lapic_base)
		lapic = cpus.lapic_base;
	bsp = bsp_id = lapic_id();
	ipi_rounds = (unsigned)kit_cmdline_uint("ipi", 0);
	print_topology = kit_cmdline_uint("topo", 0) != 0;
	kit_set_gate(VEC_PING, stub_ping);
	kit_set_gate(VEC_PONG, stub_pong);
	printf("smp: %u cpus in the %s, local APIC at %lx, bsp apic id %u\n", cpus.n, cpus.source,
	       (uint64_t)lapic, bsp);
	if (print_topology)
		show_topology(bsp);
	if (cpus.disabled)
		printf("smp: %u more cpus listed as disabled\n", cpus.disabled);
	if (cpus.skipped)
		printf("smp: %u more cpus not startable (x2APIC or over %u)\n", cpus.skipped,
		       SMP_MAX_CPUS);
	lapic_write(LAPIC_SVR, 0x1ff); /* software-enable, spurious vector 0xff */
	for (unsigned i = 0; i < cpus.n; i++)
		if (cpus.apic_id[i] == bsp)
			arrived[i] = true;
	if (cpus.n > 1) {
		copy_trampoline();
		start_aps(bsp);
		wait_aps(cpus.n - 1, timeout_ms);
	}
	lock();
	n = 1 + checked_in;
	for (unsigned i = 0; i < cpus.n; i++)
		if (!arrived[i])
			printf("smp: apic id %u did not check in\n", cpus.apic_id[i]);
	printf("smp: %u of %u cpus checked in\n", n, cpus.n);
	unlock();
	if (n != cpus.n)
		return 1;
	return ipi_rounds && cpus.n > 1 ? ping_aps(bsp) : 0;
}
