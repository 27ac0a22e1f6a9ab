/* kit_asm.h — assembler macros the boot CPU's entry (entry.S) and the AP
 * trampoline (smp_tramp.S) share. Include from .S files only. */
#ifndef GUEST_KIT_ASM_H
#define GUEST_KIT_ASM_H

/* In 32-bit protected mode: PAE, the kit's page tables, EFER.LME, then
 * paging on. A far jump to a 64-bit code segment must follow. */
.macro KIT_ENABLE_LONG_MODE
	movl %cr4, %eax
	orl $0x20, %eax			/* PAE */
	movl %eax, %cr4
	movl $kit_pml4, %eax
	movl %eax, %cr3
	movl $0xC0000080, %ecx		/* EFER.LME */
	rdmsr
	orl $0x100, %eax
	wrmsr
	movl %cr0, %eax
	orl $0x80000001, %eax		/* PG | PE */
	movl %eax, %cr0
.endm

/* In 64-bit mode: the kit's ring-0 data segment, FS and GS null. */
.macro KIT_LOAD_DATA_SEGMENTS
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorl %eax, %eax
	movw %ax, %fs
	movw %ax, %gs
.endm

#endif /* GUEST_KIT_ASM_H */
