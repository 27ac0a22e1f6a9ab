/* lapic_internal.h — shared by devices/intc/lapic.c (registers, timer, the
 * vCPU side) and devices/intc/lapic_bus.c (delivery, MMIO); not public. */
#ifndef VMM_DEVICES_LAPIC_INTERNAL_H
#define VMM_DEVICES_LAPIC_INTERNAL_H

#include "devices/dev_host.h"
#include "devices/intc/lapic.h"

#define LAPIC_MIN_PERIOD_NS 50000ull
#define LAPIC_VERSION 0x14 /* integrated APIC */
#define LVT_COUNT 7	   /* CMCI, timer, thermal, perf, LINT0, LINT1, error */

/* register offsets */
enum {
	R_ID = 0x20,
	R_VER = 0x30,
	R_TPR = 0x80,
	R_APR = 0x90,
	R_PPR = 0xa0,
	R_EOI = 0xb0,
	R_RRD = 0xc0,
	R_LDR = 0xd0,
	R_DFR = 0xe0,
	R_SVR = 0xf0,
	R_ISR = 0x100,
	R_TMR = 0x180,
	R_IRR = 0x200,
	R_ESR = 0x280,
	R_LVT_CMCI = 0x2f0,
	R_ICR = 0x300,
	R_ICR2 = 0x310,
	R_LVT_TIMER = 0x320,
	R_LVT_THERMAL = 0x330,
	R_LVT_PERF = 0x340,
	R_LVT_LINT0 = 0x350,
	R_LVT_LINT1 = 0x360,
	R_LVT_ERROR = 0x370,
	R_TMICT = 0x380,
	R_TMCCT = 0x390,
	R_TDCR = 0x3e0,
	R_SELF_IPI = 0x3f0,
};

#define LVT_MASKED (1u << 16)
#define LVT_LEVEL (1u << 15)
#define LVT_TIMER_MODE (3u << 17)
#define TIMER_ONESHOT 0
#define TIMER_PERIODIC (1u << 17)
#define TIMER_TSC_DEADLINE (2u << 17)
#define SVR_ENABLED (1u << 8)
#define SVR_NO_EOI_BROADCAST (1u << 12)
#define APIC_BASE_BSP (1ull << 8)
#define APIC_BASE_EXTD (1ull << 10)
#define APIC_BASE_EN (1ull << 11)
#define APIC_BASE_ADDR 0x000ffffffffff000ull
#define APIC_WINDOW_SIZE 0x1000
#define ESR_SEND_ILLEGAL (1u << 5)
#define ESR_RECV_ILLEGAL (1u << 6)
#define ESR_ILLEGAL_REG (1u << 7)

enum {
	DM_FIXED = 0,
	DM_LOWEST = 1,
	DM_SMI = 2,
	DM_NMI = 4,
	DM_INIT = 5,
	DM_SIPI = 6,
	DM_EXTINT = 7
};

struct lapic {
	struct apic_bus *bus;
	unsigned cpu;
	uint32_t apic_id; /* initial APIC ID: -smp topologies leave gaps */
	pthread_mutex_t lock;
	uint8_t page[LAPIC_PAGE_SIZE];
	uint64_t base_msr;
	uint32_t esr_pending;
	uint64_t timer_start, timer_period, timer_next; /* ns; next 0 = off */
	uint64_t tsc_deadline;
	unsigned events;
	unsigned nmis; /* NMIs not yet taken (1 or 2 with LAPIC_EV_NMI) */
	uint8_t sipi_vector;
};

/* One xAPIC page on the MMIO bus; the APICs whose base it is answer. */
struct apic_window {
	struct apic_bus *bus;
	uint64_t base;
	bool mapped;
};

struct apic_bus {
	struct lapic_host host;
	struct iobus *mmio; /* NULL until apic_bus_map */
	pthread_mutex_t map_lock;
	bool overlap_logged;
	/* [0] the default base, always mapped; [1..n] relocated pages */
	struct apic_window *win;
	unsigned n;
	struct lapic *cpu[];
};

/* Register helpers (a's lock held). */
uint32_t lapic_reg(const struct lapic *a, unsigned off);
bool lapic_x2apic(const struct lapic *a);
bool lapic_hw_enabled(const struct lapic *a);
uint32_t lapic_apic_id(const struct lapic *a);
/* Accept an interrupt (lock held): true when the vCPU must look. */
bool lapic_accept(struct lapic *a, unsigned dm, unsigned vector, bool level);
/* Record an error and raise the error LVT (lock held). */
void lapic_error(struct lapic *a, uint32_t bits);
/* No lock held. */
void lapic_kick(struct lapic *a);
/* An ICR write: send the IPI (no lock held). */
void lapic_send_ipi(struct lapic *a, uint32_t lo, uint32_t dest);
/* An access to the xAPIC page at base (no lock held): false when this
 * APIC does not decode it (hardware-disabled, x2APIC, based elsewhere). */
bool lapic_mmio_read(struct lapic *a, uint64_t base, unsigned off, uint32_t *v);
bool lapic_mmio_write(struct lapic *a, uint64_t base, unsigned off, uint32_t v);
/* The page this APIC decodes, 0 for none (no lock held). */
uint64_t lapic_page_base(struct lapic *a);
/* Map the pages the APICs now decode, unmap the rest (no lock held). */
void apic_bus_remap(struct apic_bus *bus);
/* Re-arm a loaded timer (lock held; lapic_state.c). */
void lapic_timer_resume(struct lapic *a, uint64_t since_start, bool armed, uint64_t until_next);

#endif
