/* kit.h — the guest payload kit: what a test payload can use.
 *
 * A payload is a multiboot v1 kernel. entry.S switches from the 32-bit
 * multiboot entry to 64-bit long mode with identity page tables covering the
 * first 4 GiB (2 MiB pages, user-accessible), then kit_main() sets up the
 * serial port, IDT and TSS and calls the payload's guest_main(). Its return
 * value is the exit code written to isa-debug-exit.
 *
 * Ring 0 is emulated instruction by instruction on some hosts (nested KVM),
 * so hot loops belong in ring 3: run_user() runs a function there; the TSS
 * I/O bitmap allows every port (the nested hosts drop IOPL on the way to
 * ring 3), so it can use in/out, the serial printf and guest_exit().
 *
 * On those hosts (kvm_pvm) software cannot get from ring 3 back to ring 0:
 * `int N` never reaches the guest IDT and `syscall` arrives at LSTAR still
 * in ring 3. So a function run by run_user() must end the payload itself
 * (print, guest_exit()); it does not return there.
 */
#ifndef GUEST_KIT_H
#define GUEST_KIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------- multiboot info */

#define MB_INFO_MEMORY (1u << 0)
#define MB_INFO_CMDLINE (1u << 2)
#define MB_INFO_MODS (1u << 3)
#define MB_INFO_MMAP (1u << 6)
#define MB_INFO_LOADER_NAME (1u << 9)

struct mb_info {
	uint32_t flags;
	uint32_t mem_lower, mem_upper;
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count, mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length, mmap_addr;
	uint32_t drives_length, drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
} __attribute__((packed));

/* Set by entry.S from EAX/EBX at the multiboot entry. */
extern uint32_t kit_boot_magic;
extern uint32_t kit_boot_info;

const struct mb_info *kit_mbi(void);
/* The multiboot command line ("" when the loader gave none). */
const char *kit_cmdline(void);
/* The value of the first "key=NUMBER" word on the command line, or def. */
uint64_t kit_cmdline_uint(const char *key, uint64_t def);

/* ------------------------------------------------------------- port I/O */

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

/* Busy-wait us microseconds (at most 54000) on PIT channel 2. */
void kit_pit_wait_us(unsigned us);
/* The TSC rate, measured against the PIT over 50 ms. */
uint64_t kit_tsc_hz(void);

/* --------------------------------------------------------------- output */

void serial_putc(char c);
void serial_puts(const char *s);
int vprintf(const char *fmt, va_list ap);
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exit through isa-debug-exit (port 0xf4): the VMM exits with status
 * (code << 1) | 1. Halts forever when no such device is present. */
__attribute__((noreturn)) void guest_exit(uint32_t code);

/* ---------------------------------------------------------------- rings */

/* Run fn(arg) in ring 3 with IOPL 3 on the kit's user stack. Where the CPU
 * follows the SDM, fn's result comes back through `syscall`; on the kvm_pvm
 * hosts that return path lands in ring 3, and the kit then ends the payload
 * with "guest: run_user: ..." and exit code 0x7d. Portable payloads call
 * guest_exit() from fn. Boot CPU only; not reentrant. */
long run_user(long (*fn)(void *arg), void *arg);

/* --------------------------------------------------------------- libc-ish */

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

/* ------------------------------------------------------------- payload */

/* Each payload defines this; it runs in ring 0 on the boot CPU. */
int guest_main(void);

/* For SMP payloads: the kit's page tables, GDT and IDT, shared by all CPUs. */
extern uint64_t kit_pml4[];
void kit_load_idt(void);

/* Interrupt handlers: KIT_IRQ_STUB(stub, fn) defines an assembly entry
 * `stub` that saves the caller-saved registers around the C function
 * `void fn(void)` and returns with iretq; kit_set_gate installs it as
 * interrupt gate vec of the shared IDT. fn sends the EOI itself. */
#define KIT_IRQ_STUB(stub, fn)                                                               \
	__asm__(".text\n" #stub ":\n"                                                        \
		"push %rax; push %rcx; push %rdx; push %rsi; push %rdi\n"                    \
		"push %r8; push %r9; push %r10; push %r11\n"                                 \
		"call " #fn "\n"                                                             \
		"pop %r11; pop %r10; pop %r9; pop %r8\n"                                     \
		"pop %rdi; pop %rsi; pop %rdx; pop %rcx; pop %rax\n"                         \
		"iretq\n");                                                                 \
	extern char stub[]
void kit_set_gate(unsigned vec, const void *stub);

#define KIT_CS64 0x08
#define KIT_DS 0x10
#define KIT_CS32 0x18

#endif /* GUEST_KIT_H */
