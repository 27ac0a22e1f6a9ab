/* lapic_info.c — `info lapic` in QEMU's layout, from a register page
 * (the userspace model's, or KVM's struct kvm_lapic_state). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "devices/intc/lapic.h"

struct out {
	char *buf;
	size_t len, n;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0, fmt,
		      ap);
	va_end(ap);
	o->n += w > 0 ? (size_t)w : 0;
}

static uint32_t page_reg(const uint8_t *page, unsigned off)
{
	uint32_t v;

	memcpy(&v, page + off, 4);
	return v;
}

static void lvt(struct out *o, const char *name, uint32_t v, bool timer)
{
	static const char *const dm[8] = {"Fixed", "...",  "SMI", "...",
					  "NMI",   "INIT", "...", "ExtINT"};
	unsigned mode = (v >> 8) & 7;
	const char *tmode = "";

	if (timer)
		tmode = v & (1u << 17) ? "periodic" : v & (1u << 18) ? "tsc-deadline" : "one-shot";
	put(o, "%s\t 0x%08x %s %-5s %-6s %-7s %-12s %-6s", name, v,
	    v & (1u << 13) ? "active-lo" : "active-hi", v & (1u << 15) ? "level" : "edge",
	    v & (1u << 16) ? "masked" : "", v & (1u << 12) ? "pending" : "", tmode,
	    dm[timer ? 0 : mode]);
	if (timer || mode != 4)
		put(o, " (vec %u)\n", v & 0xff);
	else
		put(o, "\n");
}

static void vectors(struct out *o, const char *name, const uint8_t *page, unsigned base)
{
	bool any = false;

	put(o, "%s\t", name);
	for (unsigned v = 0; v < 256; v++) {
		bool tmr = page_reg(page, 0x180 + (v >> 5) * 16) & (1u << (v & 31));

		if (!(page_reg(page, base + (v >> 5) * 16) & (1u << (v & 31))))
			continue;
		put(o, "%u%s ", v, tmr ? "(level)" : "");
		any = true;
	}
	put(o, "%s\n", any ? "" : "(none)");
}

size_t lapic_format(const uint8_t page[LAPIC_PAGE_SIZE], unsigned cpu, bool x2apic, char *buf,
		    size_t len)
{
	static const char *const shorthand[4] = {"no-shorthand", "self", "all-self", "all"};
	struct out o = {buf, len, 0};
	uint32_t dcr = page_reg(page, 0x3e0), svr = page_reg(page, 0xf0);
	uint32_t icr = page_reg(page, 0x300), icr2 = page_reg(page, 0x310);
	uint32_t dfr = page_reg(page, 0xe0), ldr = page_reg(page, 0xd0);
	unsigned div = 1u << ((((dcr & 3) | ((dcr & 8) >> 1)) + 1) & 7);

	put(&o, "dumping local APIC state for CPU %-2u\n\n", cpu);
	lvt(&o, "LVT0", page_reg(page, 0x350), false);
	lvt(&o, "LVT1", page_reg(page, 0x360), false);
	lvt(&o, "LVTPC", page_reg(page, 0x340), false);
	lvt(&o, "LVTERR", page_reg(page, 0x370), false);
	lvt(&o, "LVTTHMR", page_reg(page, 0x330), false);
	lvt(&o, "LVTT", page_reg(page, 0x320), true);
	put(&o, "Timer\t DCR=0x%x (divide by %u) initial_count = %u current_count = %u\n", dcr, div,
	    page_reg(page, 0x380), page_reg(page, 0x390));
	put(&o, "SPIV\t 0x%08x APIC %s, focus=%s, spurious vec %u\n", svr,
	    svr & (1u << 8) ? "enabled" : "disabled", svr & (1u << 9) ? "on" : "off", svr & 0xff);
	put(&o, "ICR\t 0x%08x %s %s %s %s\n", icr, icr & (1u << 11) ? "logical" : "physical",
	    icr & (1u << 15) ? "level" : "edge", icr & (1u << 14) ? "assert" : "de-assert",
	    shorthand[(icr >> 18) & 3]);
	if (x2apic)
		put(&o, "ICR2\t 0x%08x cpu %u (X2APIC ID)\n", icr2, icr2);
	else if (icr & (1u << 11))
		put(&o, "ICR2\t 0x%08x mask %02x (APIC ID)\n", icr2, icr2 >> 24);
	else
		put(&o, "ICR2\t 0x%08x cpu %u (APIC ID)\n", icr2, icr2 >> 24);
	put(&o, "ESR\t 0x%08x\n", page_reg(page, 0x280));
	vectors(&o, "ISR", page, 0x100);
	vectors(&o, "IRR", page, 0x200);
	put(&o, "\nAPR 0x%02x TPR 0x%02x DFR 0x%02x LDR 0x%02x", page_reg(page, 0x90) & 0xff,
	    page_reg(page, 0x80) & 0xff, dfr >> 28, x2apic ? ldr : ldr >> 24);
	if (!x2apic && (dfr >> 28) == 0)
		put(&o, "(cluster %u: id %u)", ldr >> 28, (ldr >> 24) & 0xf);
	put(&o, " PPR 0x%02x\n", page_reg(page, 0xa0) & 0xff);
	return o.n;
}
