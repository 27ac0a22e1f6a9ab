/* ide-irq-mbr.S — the boot sector of seabios-ide-irqchip.sh: sector 1
 * through SeaBIOS's INT 13h, sector 2 through the IDE ports with the
 * disk's IRQ 14 (nIEN clear, sti; hlt until the handler ran), then three
 * ticks of SeaBIOS's IRQ 0 count; a line on COM1 for each, then
 * isa-debug-exit 0x10 (0x11: INT 13h failed, 0x12: no IRQ 14 in ~3 s). */
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movw $0x7c00, %sp
	/* INT 13h AH=02: sector 1 (CHS 0/0/2) of drive DL to 0:8000 */
	movw $0x0201, %ax
	movw $0x0002, %cx
	xorb %dh, %dh
	movw $0x8000, %bx
	int $0x13
	jc int13_fail
	cmpl $0x32454449, 0x8000	/* "IDE2" */
	jne int13_fail
	movw $m_int13, %si
	call puts

	/* IRQ 14: SeaBIOS's slave PIC base is 0x70, so vector 0x76 */
	cli
	movw $irq14, 0x76 * 4
	movw $0, 0x76 * 4 + 2
	inb $0xa1, %al
	andb $~0x40, %al
	outb %al, $0xa1
	inb $0x21, %al
	andb $~0x04, %al
	outb %al, $0x21
	movw $0x3f6, %dx		/* device control: nIEN = 0 */
	xorb %al, %al
	outb %al, %dx
	movw $0x1f2, %dx		/* one sector, LBA 2, master */
	movb $1, %al
	outb %al, %dx
	incw %dx
	movb $2, %al
	outb %al, %dx
	incw %dx
	xorb %al, %al
	outb %al, %dx
	incw %dx
	outb %al, %dx
	incw %dx
	movb $0xe0, %al
	outb %al, %dx
	incw %dx
	movb $0x20, %al			/* READ SECTORS */
	outb %al, %dx
	movw 0x46c, %bx
1:	cli
	cmpb $0, got14
	jne 2f
	movw 0x46c, %ax
	subw %bx, %ax
	cmpw $55, %ax			/* ~3 s of ticks */
	ja irq14_fail
	sti
	hlt
	jmp 1b
2:	movw $0x1f0, %dx
	movw $0x8200, %di
	movw $256, %cx
	cld
	rep insw
	cmpl $0x33454449, 0x8200	/* "IDE3" */
	jne irq14_fail
	movw $m_irq14, %si
	call puts

	/* IRQ 0: three more ticks */
	movw 0x46c, %bx
3:	sti
	hlt
	movw 0x46c, %ax
	subw %bx, %ax
	cmpw $3, %ax
	jb 3b
	movw $m_timer, %si
	call puts
	movb $0x10, %al
	jmp exit

int13_fail:
	movw $m_int13f, %si
	call puts
	movb $0x11, %al
	jmp exit
irq14_fail:
	movw $m_irq14f, %si
	call puts
	movb $0x12, %al
exit:	outb %al, $0xf4
	cli
	hlt

puts:	lodsb
	testb %al, %al
	jz 1f
	movw $0x3f8, %dx
	outb %al, %dx
	jmp puts
1:	ret

irq14:	pushw %ax
	pushw %dx
	movw $0x1f7, %dx		/* status: acknowledges INTRQ */
	inb %dx, %al
	movb $1, %cs:got14
	movb $0x20, %al
	outb %al, $0xa0
	outb %al, $0x20
	popw %dx
	popw %ax
	iret

got14:	.byte 0
m_int13:	.asciz "int13 ok\r\n"
m_irq14:	.asciz "irq14 ok\r\n"
m_timer:	.asciz "timer ok\r\n"
m_int13f:	.asciz "int13 FAIL\r\n"
m_irq14f:	.asciz "irq14 FAIL\r\n"
	.org 510
	.byte 0x55, 0xaa
