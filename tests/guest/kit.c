/* kit.c — the guest kit's C side: boot, traps, serial printf, exit, cmdline.
 * Runs in ring 0 at boot (keep it short) and in ring 3 for the hot paths.
 */
#include "kit.h"

#define COM1 0x3f8
#define DEBUG_EXIT_PORT 0xf4
#define MB_BOOT_MAGIC 0x2BADB002

/* ---------------------------------------------------------------- libc */

void *memcpy(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* -------------------------------------------------------------- serial */

static void serial_init(void)
{
	outb(COM1 + 1, 0x00); /* no interrupts: we poll */
	outb(COM1 + 3, 0x80); /* DLAB */
	outb(COM1 + 0, 0x01); /* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03); /* 8N1 */
	outb(COM1 + 2, 0x07); /* FIFO on, cleared */
}

void serial_putc(char c)
{
	/* LSR bit 5: transmit holding register empty. Bounded so a missing
	 * UART (reads as 0xff anyway) cannot hang the guest. */
	for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
		cpu_relax();
	outb(COM1, (uint8_t)c);
}

void serial_puts(const char *s)
{
	while (*s)
		serial_putc(*s++);
}

/* -------------------------------------------------------------- printf */

static void put_number(uint64_t v, unsigned base, int width, char pad, bool negative)
{
	char buf[24];
	int n = 0;

	do {
		buf[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (negative)
		buf[n++] = '-';
	while (width-- > n)
		serial_putc(pad);
	while (n)
		serial_putc(buf[--n]);
}

/* Supports %c %s %d %i %u %x %p %% with an optional 0/width and l/ll/z. */
int vprintf(const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int width = 0, longs = 0;
		char pad = ' ';

		if (*fmt != '%') {
			serial_putc(*fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z')
			longs++, fmt++;
		switch (*fmt) {
		case 'c':
			serial_putc((char)va_arg(ap, int));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			serial_puts(s ? s : "(null)");
			break;
		}
		case 'd':
		case 'i': {
			int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);

			put_number(v < 0 ? -(uint64_t)v : (uint64_t)v, 10, width, pad, v < 0);
			break;
		}
		case 'u':
			put_number(longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width,
				   pad, false);
			break;
		case 'x':
			put_number(longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, width,
				   pad, false);
			break;
		case 'p':
			serial_puts("0x");
			put_number((uintptr_t)va_arg(ap, void *), 16, width, pad, false);
			break;
		case '\0':
			return 0;
		default:
			serial_putc(*fmt);
		}
	}
	return 0;
}

int printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

void guest_exit(uint32_t code)
{
	outl(DEBUG_EXIT_PORT, code);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* -------------------------------------------------------------- timing */

#define PIT_HZ 1193182u

/* Mode 0 on channel 2, polling the OUT2 bit in port 0x61, as Linux's TSC
 * calibration does. Bounded so a missing PIT cannot hang the guest. */
void kit_pit_wait_us(unsigned us)
{
	uint32_t count = (uint32_t)((uint64_t)us * PIT_HZ / 1000000u);

	outb(0x61, (uint8_t)((inb(0x61) & ~0x02) | 0x01)); /* gate on, speaker off */
	outb(0x43, 0xb0);				   /* channel 2, lo/hi, mode 0 */
	outb(0x42, (uint8_t)count);
	outb(0x42, (uint8_t)(count >> 8));
	for (unsigned i = 0; i < us * 4 + 1000 && !(inb(0x61) & 0x20); i++)
		cpu_relax();
}

uint64_t kit_tsc_hz(void)
{
	uint64_t t0 = rdtsc();

	kit_pit_wait_us(50000);
	return (rdtsc() - t0) * 20;
}

/* ------------------------------------------------------------- cmdline */

const struct mb_info *kit_mbi(void)
{
	if (kit_boot_magic != MB_BOOT_MAGIC)
		return NULL;
	return (const struct mb_info *)(uintptr_t)kit_boot_info;
}

const char *kit_cmdline(void)
{
	const struct mb_info *mbi = kit_mbi();

	if (!mbi || !(mbi->flags & MB_INFO_CMDLINE) || !mbi->cmdline)
		return "";
	return (const char *)(uintptr_t)mbi->cmdline;
}

static bool word_has_key(const char *w, const char *key, size_t klen)
{
	return !memcmp(w, key, klen) && w[klen] == '=';
}

uint64_t kit_cmdline_uint(const char *key, uint64_t def)
{
	const char *p = kit_cmdline();
	size_t klen = strlen(key);

	while (*p) {
		while (*p == ' ')
			p++;
		if (word_has_key(p, key, klen)) {
			uint64_t v = 0;

			for (p += klen + 1; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (uint64_t)(*p - '0');
			return v;
		}
		while (*p && *p != ' ')
			p++;
	}
	return def;
}

/* --------------------------------------------------------- IDT and TSS */

struct idt_gate {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, zero;
} __attribute__((packed));

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3, iomap_base;
	/* All ports allowed from ring 3, for CPUs that check the bitmap
	 * rather than IOPL; the last byte must be all-ones. */
	uint8_t iomap[65536 / 8 + 1];
} __attribute__((packed));

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern const uint64_t kit_trap_stubs[];
extern const uint32_t kit_ntrap_stubs;
extern char kit_user_return[];
extern char kit_trap_stack_top[];
extern uint64_t kit_gdt_tss[2];

static struct idt_gate idt[256] __attribute__((aligned(16)));
static struct tss64 tss __attribute__((aligned(16)));

#define MSR_EFER 0xc0000080
#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_FMASK 0xc0000084
#define EFER_SCE 1ull

static uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static void set_gate(unsigned vec, uint64_t handler, unsigned dpl)
{
	idt[vec] = (struct idt_gate){
		.off_lo = (uint16_t)handler,
		.sel = KIT_CS64,
		.type = (uint8_t)(0x8e | (dpl << 5)), /* present 64-bit interrupt gate */
		.off_mid = (uint16_t)(handler >> 16),
		.off_hi = (uint32_t)(handler >> 32),
	};
}

void kit_set_gate(unsigned vec, const void *stub)
{
	set_gate(vec & 0xff, (uintptr_t)stub, 0);
}

void kit_load_idt(void)
{
	struct desc_ptr p = {sizeof(idt) - 1, (uintptr_t)idt};

	__asm__ volatile("lidt %0" : : "m"(p));
}

static void traps_init(void)
{
	uint64_t base = (uintptr_t)&tss;

	for (unsigned v = 0; v < kit_ntrap_stubs; v++)
		set_gate(v, kit_trap_stubs[v], 0);
	kit_load_idt();

	tss.rsp[0] = (uintptr_t)kit_trap_stack_top;
	tss.iomap_base = offsetof(struct tss64, iomap);
	tss.iomap[sizeof(tss.iomap) - 1] = 0xff;
	kit_gdt_tss[0] = (sizeof(tss) - 1) | (base & 0xffffff) << 16 | 0x89ull << 40 |
			 (base >> 24 & 0xff) << 56;
	kit_gdt_tss[1] = base >> 32;
	__asm__ volatile("ltr %w0" : : "r"(0x30));
	/* The way back from ring 3 (run_user): syscall into kit_user_return. */
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	wrmsr(MSR_STAR, (uint64_t)KIT_CS64 << 32);
	wrmsr(MSR_LSTAR, (uintptr_t)kit_user_return);
	wrmsr(MSR_FMASK, 0x200);
}

struct trap_frame {
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

__attribute__((noreturn)) void kit_trap(const struct trap_frame *f);
void kit_trap(const struct trap_frame *f)
{
	uint64_t cr2;

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	printf("guest: exception %lu error %lx at rip %lx (ring %lu) rsp %lx cr2 %lx\n", f->vector,
	       f->error, f->rip, f->cs & 3, f->rsp, cr2);
	guest_exit(0x7e);
}

/* Reached in ring 3 when `syscall` did not switch to ring 0 (kvm_pvm). */
__attribute__((noreturn)) void kit_user_return_failed(void);
void kit_user_return_failed(void)
{
	printf("guest: run_user: syscall stayed in ring 3, cannot return to ring 0; "
	       "end the ring-3 function with guest_exit()\n");
	guest_exit(0x7d);
}

/* ---------------------------------------------------------------- boot */

__attribute__((noreturn)) void kit_main(void);
void kit_main(void)
{
	serial_init();
	traps_init();
	if (kit_boot_magic != MB_BOOT_MAGIC)
		printf("guest: not started by a multiboot loader (eax %x)\n", kit_boot_magic);
	guest_exit((uint32_t)guest_main());
}
