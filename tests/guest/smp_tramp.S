/* smp_tramp.S — the AP start-up trampoline of smp.elf.
 *
 * The BSP copies [smp_tramp_start, smp_tramp_end) to SMP_TRAMP_BASE (a
 * page below 1 MiB) and stores its GDTR at smp_tramp_gdtr in the copy; a
 * SIPI with vector SMP_TRAMP_BASE >> 12 starts an AP there in real mode with
 * CS = SMP_TRAMP_BASE >> 4, IP = 0. Everything else is absolute: the kit's
 * page tables and code live below 4 GiB. The AP loads the kit's GDT, goes to
 * 32-bit protected mode, turns on PAE, long mode and paging with the kit's
 * page tables, and jumps to smp_ap_entry64 in the loaded image. The copy
 * must be made (and the GDTR stored) before the first SIPI.
 */
#include "kit_asm.h"
#include "smp.h"

#define TRAMP_ADDR(sym) (SMP_TRAMP_BASE + (sym) - smp_tramp_start)

	.section .note.GNU-stack, "", @progbits

	.section .rodata
	.code16
	.globl smp_tramp_start, smp_tramp_end
smp_tramp_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	lgdtl smp_tramp_gdtr - smp_tramp_start
	movl %cr0, %eax
	orl $1, %eax			/* PE */
	movl %eax, %cr0
	ljmpl $0x18, $TRAMP_ADDR(tramp_pm32)

	.code32
tramp_pm32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	KIT_ENABLE_LONG_MODE
	ljmpl $0x08, $smp_ap_entry64

/* The BSP stores its GDTR here (sgdt, 10 bytes) in the copy; lgdtl in real
 * mode reads the limit and the low 32 bits of the base. */
	.balign 8
	.globl smp_tramp_gdtr
smp_tramp_gdtr:
	.fill 10, 1, 0
smp_tramp_end:

/* The 64-bit entry, reached through the kit's 64-bit code segment. Each AP
 * takes the next stack slot with an atomic add, then runs smp_ap_main(slot). */
	.text
	.code64
	.globl smp_ap_entry64
smp_ap_entry64:
	KIT_LOAD_DATA_SEGMENTS
	movl $1, %edi
	lock xaddl %edi, smp_next_slot(%rip)
	movl %edi, %eax
	incl %eax
	shll $SMP_AP_STACK_SHIFT, %eax
	leaq smp_ap_stacks(%rip), %rsp
	addq %rax, %rsp			/* top of slot %edi's stack */
	call smp_ap_main
1:	cli
	hlt
	jmp 1b
