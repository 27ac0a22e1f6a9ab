/* reboot-mbr.S — a boot sector that counts its boots in LBA 1 of its own
 * disk (int 13h read, increment, write back), prints "boot N" on COM1 and
 * then resets the machine a different way each time: 0xcf9 after boot 1,
 * port 0x92 after boot 2, the i8042 (0xfe to 0x64) after boot 3; after
 * boot 4 it halts with interrupts on and waits for the monitor's
 * system_reset; boot 5 exits through isa-debug-exit (status 33). A failed
 * disk call exits with status 35. */
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movw $0x7c00, %sp
	sti
	movb %dl, drive
	movw $0x0201, %ax	/* read 1 sector */
	call disk
	incb 0x8000
	movw $0x0301, %ax	/* write it back */
	call disk
	/* SeaBIOS's serial console writes its text ("Booting from Hard
	 * Disk...") lazily, from the timer interrupt; wait for a tick so
	 * "boot N" does not land in the middle of it */
	movw 0x46c, %ax
1:	hlt
	cmpw 0x46c, %ax
	je 1b
	movw $msg, %si
	call puts
	movb 0x8000, %al
	addb $'0', %al
	call putc
	movb $'\n', %al
	call putc
	movb 0x8000, %al
	cmpb $1, %al
	je by_cf9
	cmpb $2, %al
	je by_port92
	cmpb $3, %al
	je by_i8042
	cmpb $4, %al
	je hang
	movb $0x10, %al
	jmp quit
by_cf9:
	movw $0xcf9, %dx
	movb $0x06, %al		/* hard reset + reset CPU */
	outb %al, %dx
	jmp hang
by_port92:
	inb $0x92, %al
	orb $1, %al
	outb %al, $0x92
	jmp hang
by_i8042:
	movb $0xfe, %al
	outb %al, $0x64
hang:
	hlt
	jmp hang

/* int 13h function %ah, one sector, CHS 0/0/2 (LBA 1) <-> 0000:8000 */
disk:
	movw $0x8000, %bx
	movw $0x0002, %cx
	xorb %dh, %dh
	movb drive, %dl
	int $0x13
	jc disk_error
	ret
disk_error:
	movb $0x11, %al
quit:
	movw $0xf4, %dx
	outb %al, %dx
	jmp hang

puts:
	lodsb
	testb %al, %al
	jz 1f
	call putc
	jmp puts
1:	ret

putc:
	movw $0x3f8, %dx
	outb %al, %dx
	ret

msg:	.asciz "boot "
drive:	.byte 0x80
	.org 510
	.byte 0x55, 0xaa
