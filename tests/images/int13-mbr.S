/* int13-mbr.S — a boot sector that reads its disk through the BIOS the
 * two ways a loader does and checks what it got: CHS reads (int 13h
 * AH=02) of LBA 1-62 (rest of track 0) and 63-125 (all of head 1) into
 * 1000:0000, then an EDD extended read (AH=41 check, AH=42) of LBA 126-252
 * into 2000:0000. The 16-bit sums of those two areas must equal the words
 * the image builder stored at 0x1f8 and 0x1fa. Prints "chs ok" and "lba
 * ok" on COM1 and exits with status 33; a failed call or a bad sum exits
 * with status 35 after printing which step failed. */
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw %ax, %ss
	movw $0x7c00, %sp
	sti
	movb %dl, drive

	movw $0x1000, %ax
	movw %ax, %es
	movw $0x023e, %ax	/* read 62 sectors: C0 H0 S2-63 */
	xorw %bx, %bx
	movw $0x0002, %cx
	xorb %dh, %dh
	call chs_read
	movw $0x023f, %ax	/* read 63 sectors: C0 H1 S1-63 */
	movw $62 * 512, %bx
	movw $0x0001, %cx
	movb $1, %dh
	call chs_read
	movw $125 * 256, %cx	/* words */
	call sum_es
	cmpw sum_chs, %ax
	jne bad_sum
	call await_tick
	movw $msg_chs, %si
	call puts

	movw $0x4100, %ax	/* EDD present? */
	movw $0x55aa, %bx
	movb drive, %dl
	int $0x13
	jc no_edd
	cmpw $0xaa55, %bx
	jne no_edd
	movw $0x4200, %ax
	movw $dap, %si
	movb drive, %dl
	int $0x13
	jc io_error
	movw $0x2000, %ax
	movw %ax, %es
	movw $127 * 256, %cx
	call sum_es
	cmpw sum_lba, %ax
	jne bad_sum
	movw $msg_lba, %si
	call puts
	movb $0x10, %al
	jmp quit

chs_read:
	movb drive, %dl
	int $0x13
	jc io_error
	ret
no_edd:
	movw $msg_noedd, %si
	jmp fail
io_error:
	movw $msg_io, %si
	jmp fail
bad_sum:
	movw $msg_sum, %si
fail:
	call puts
	movb $0x11, %al
quit:
	movw $0xf4, %dx
	outb %al, %dx
1:	hlt
	jmp 1b

/* sum of %cx words at %es:0 -> %ax */
sum_es:
	xorw %ax, %ax
	xorw %di, %di
1:	addw %es:(%di), %ax
	addw $2, %di
	loop 1b
	ret

/* SeaBIOS's serial console holds the last character printed through
 * int 10h (the third dot of "Booting from Hard Disk...") until its timer
 * handler flushes it. Writing to COM1 before a tick would put "chs ok"
 * ahead of that dot, an order that depends on the host's speed; after one
 * tick the console has nothing pending. */
await_tick:
	movw 0x46c, %ax
1:	hlt
	cmpw 0x46c, %ax
	je 1b
	ret

/* Interrupts off while a message goes out: SeaBIOS's serial console
 * writes its pending newline from the timer interrupt, which on a slow
 * host otherwise lands inside a message ("chs" "\n" " ok"). */
puts:
	pushfw
	cli
	movw $0x3f8, %dx
1:	lodsb
	testb %al, %al
	jz 2f
	outb %al, %dx
	jmp 1b
2:	popfw
	ret

	.p2align 2
dap:	.byte 16, 0
	.word 127		/* sectors */
	.word 0, 0x2000		/* buffer offset, segment */
	.quad 126		/* first LBA */
drive:	.byte 0x80
msg_chs:	.asciz "chs ok\n"
msg_lba:	.asciz "lba ok\n"
msg_noedd:	.asciz "no EDD\n"
msg_io:		.asciz "int 13h error\n"
msg_sum:	.asciz "bad checksum\n"
	.org 0x1f8
sum_chs:	.word 0		/* filled in by the image builder */
sum_lba:	.word 0
	.org 510
	.byte 0x55, 0xaa
