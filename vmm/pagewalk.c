/* pagewalk.c — guest-virtual to guest-physical, reading the guest's own
 * page tables out of guest RAM (for the monitor's `x` and state dumps). */
#include <errno.h>

#include "devices/dev_host.h"
#include "vmm/machine.h"

#define CR0_PG (1ull << 31)
#define CR4_PSE (1ull << 4)
#define CR4_PAE (1ull << 5)
#define CR4_LA57 (1ull << 12)
#define EFER_LMA (1ull << 10)

#define PTE_P 1ull
#define PTE_PS (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

static int read_entry(const struct guest_mem *mem, uint64_t addr, unsigned size, uint64_t *e)
{
	uint32_t e32;

	if (size == 4) {
		if (guest_mem_read(mem, addr, &e32, 4) < 0)
			return -EFAULT;
		*e = e32;
		return 0;
	}
	return guest_mem_read(mem, addr, e, 8) < 0 ? -EFAULT : 0;
}

/* 64-bit entries: 4 or 5 levels (long mode) or 3 (PAE). Large pages at
 * the PDPT (1 GiB) and PD (2 MiB) levels. */
static int walk_pae(const struct guest_mem *mem, uint64_t cr3, unsigned levels, uint64_t gva,
		    uint64_t *gpa)
{
	uint64_t table = levels == 3 ? cr3 & ~0x1full : cr3 & PTE_ADDR;

	for (unsigned level = levels; level >= 1; level--) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t index = (gva >> shift) & (level == 3 && levels == 3 ? 3 : 511);
		uint64_t e;

		if (read_entry(mem, table + index * 8, 8, &e) < 0 || !(e & PTE_P))
			return -EFAULT;
		/* PS means a large page in a PD, and in a PDPT outside PAE. */
		if (level == 1 || ((e & PTE_PS) && (level == 2 || (level == 3 && levels > 3)))) {
			uint64_t mask = (1ull << shift) - 1;

			*gpa = (e & PTE_ADDR & ~mask) | (gva & mask);
			return 0;
		}
		table = e & PTE_ADDR;
	}
	return -EFAULT;
}

/* Legacy 32-bit paging: two levels of 4-byte entries, 4 MiB pages with PSE. */
static int walk_32(const struct guest_mem *mem, uint64_t cr3, bool pse, uint64_t gva,
		   uint64_t *gpa)
{
	uint32_t va = (uint32_t)gva;
	uint64_t pde, pte;

	if (read_entry(mem, (cr3 & 0xfffff000u) + (va >> 22) * 4, 4, &pde) < 0 || !(pde & PTE_P))
		return -EFAULT;
	if (pse && (pde & PTE_PS)) {
		*gpa = (pde & 0xffc00000u) | (va & 0x3fffff);
		return 0;
	}
	if (read_entry(mem, (pde & 0xfffff000u) + ((va >> 12) & 1023) * 4, 4, &pte) < 0 ||
	    !(pte & PTE_P))
		return -EFAULT;
	*gpa = (pte & 0xfffff000u) | (va & 0xfff);
	return 0;
}

int page_walk(const struct guest_mem *mem, const struct paging_mode *pm, uint64_t gva,
	      uint64_t *gpa)
{
	if (!(pm->cr0 & CR0_PG)) {
		*gpa = gva;
		return 0;
	}
	if (pm->efer & EFER_LMA)
		return walk_pae(mem, pm->cr3, pm->cr4 & CR4_LA57 ? 5 : 4, gva, gpa);
	if (pm->cr4 & CR4_PAE)
		return walk_pae(mem, pm->cr3, 3, gva & 0xffffffffu, gpa);
	return walk_32(mem, pm->cr3, pm->cr4 & CR4_PSE, gva, gpa);
}
