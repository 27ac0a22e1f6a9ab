/* entry.S — multiboot v1 header, 32-bit entry, switch to long mode, traps,
 * and the ring-3 helper. The page tables are static data (no ring-0 loop
 * builds them): ring 0 may be emulated at ~1 us per instruction.
 */
#include "kit_asm.h"

#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00000003 /* page-align modules, give memory info */

#define USER_DS (0x20 | 3)
#define USER_CS (0x28 | 3)
#define TSS_SEL 0x30

	.section .note.GNU-stack, "", @progbits

	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

/* ---------------------------------------------------------- 32-bit entry */
	.section .text.entry, "ax"
	.code32
	.globl _start
_start:
	cli
	movl %eax, kit_boot_magic
	movl %ebx, kit_boot_info
	movl $boot_stack_top, %esp
	KIT_ENABLE_LONG_MODE
	lgdt kit_gdt_ptr
	ljmp $0x08, $long_entry

	.code64
long_entry:
	KIT_LOAD_DATA_SEGMENTS
	movq $boot_stack_top, %rsp
	call kit_main
1:	cli
	hlt
	jmp 1b

/* ------------------------------------------------------------- traps */
	.text
.macro TRAP_NOERR n
trap\n:	pushq $0
	pushq $\n
	jmp trap_common
.endm
.macro TRAP_ERR n
trap\n:	pushq $\n
	jmp trap_common
.endm

	TRAP_NOERR 0
	TRAP_NOERR 1
	TRAP_NOERR 2
	TRAP_NOERR 3
	TRAP_NOERR 4
	TRAP_NOERR 5
	TRAP_NOERR 6
	TRAP_NOERR 7
	TRAP_ERR 8
	TRAP_NOERR 9
	TRAP_ERR 10
	TRAP_ERR 11
	TRAP_ERR 12
	TRAP_ERR 13
	TRAP_ERR 14
	TRAP_NOERR 15
	TRAP_NOERR 16
	TRAP_ERR 17
	TRAP_NOERR 18
	TRAP_NOERR 19

trap_common:
	movq %rsp, %rdi			/* vector, error, rip, cs, rflags, rsp, ss */
	call kit_trap			/* does not return */
	jmp trap_common

	.section .rodata
	.balign 8
	.globl kit_trap_stubs
kit_trap_stubs:
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19
	.quad trap\n
	.endr
	.globl kit_ntrap_stubs
kit_ntrap_stubs:
	.long 20

/* ----------------------------------------------------------- ring 3 */
/* long run_user(long (*fn)(void *), void *arg): iretq to ring 3; when fn
 * returns, `syscall` (LSTAR = kit_user_return) is the way back, restoring
 * the ring-0 stack saved here. That works where the CPU follows the SDM. On
 * the nested kvm_pvm hosts it does not: `syscall` lands at LSTAR still in
 * ring 3 (and `int N` from ring 3 never reaches the IDT), so kit_user_return
 * checks CPL and, still in ring 3, ends the payload with a message. Hot
 * loops therefore finish the payload themselves with guest_exit(). */
	.text
	.globl run_user
run_user:
	pushq %rbx
	pushq %rbp
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, saved_kernel_rsp(%rip)
	pushq $USER_DS
	pushq $user_stack_top
	pushq $0x3002			/* IOPL 3, interrupts off */
	pushq $USER_CS
	pushq $user_trampoline
	iretq

user_trampoline:
	movw $USER_DS, %ax
	movw %ax, %ds
	movw %ax, %es
	movq %rdi, %rax
	movq %rsi, %rdi
	call *%rax
	syscall
	ud2

	.globl kit_user_return
kit_user_return:
	movw %cs, %cx
	testb $3, %cl
	jz 1f
	call kit_user_return_failed	/* still ring 3: see above */
1:	movw $0x10, %cx
	movw %cx, %ds
	movw %cx, %es
	movw %cx, %ss
	movq saved_kernel_rsp(%rip), %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbp
	popq %rbx
	ret

/* ------------------------------------------------------------- data */
	.data
	.balign 8
	.globl kit_gdt
kit_gdt:
	.quad 0
	.quad 0x00AF9A000000FFFF	/* 0x08 ring-0 code, 64-bit */
	.quad 0x00CF92000000FFFF	/* 0x10 ring-0 data */
	.quad 0x00CF9A000000FFFF	/* 0x18 ring-0 code, 32-bit (AP trampoline) */
	.quad 0x00CFF2000000FFFF	/* 0x20 ring-3 data */
	.quad 0x00AFFA000000FFFF	/* 0x28 ring-3 code, 64-bit */
	.globl kit_gdt_tss
kit_gdt_tss:
	.quad 0, 0			/* 0x30 TSS, filled by kit_main */
kit_gdt_end:
	.globl kit_gdt_ptr
kit_gdt_ptr:
	.word kit_gdt_end - kit_gdt - 1
	.quad kit_gdt

	.globl kit_boot_magic, kit_boot_info
kit_boot_magic:	.long 0
kit_boot_info:	.long 0
saved_kernel_rsp: .quad 0

/* Identity map of 0-4 GiB: PML4[0] -> PDPT[0..3] -> four page directories
 * of 2 MiB pages. Every level has U/S set so ring 3 can use it all. */
	.balign 4096
	.globl kit_pml4
kit_pml4:
	.quad kit_pdpt + 7
	.fill 511, 8, 0
kit_pdpt:
	.quad kit_pd + 0x0000 + 7
	.quad kit_pd + 0x1000 + 7
	.quad kit_pd + 0x2000 + 7
	.quad kit_pd + 0x3000 + 7
	.fill 508, 8, 0
kit_pd:
	.set page, 0
	.rept 2048
	.quad (page << 21) | 0x87	/* present, writable, user, 2 MiB */
	.set page, page + 1
	.endr

	.bss
	.balign 16
	.space 16384
boot_stack_top:
	.space 16384
	.globl kit_trap_stack_top
kit_trap_stack_top:
	.space 16384
user_stack_top:
