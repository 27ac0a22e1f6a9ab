/* control.elf — a payload for the control plane's tests (exit status,
 * reset, pvpanic, power button, gdbstub). One action per run, chosen on
 * the command line:
 *
 *   triple=N    count the boots in RAM the kernel image does not cover
 *               (a reset keeps RAM, as a PC's does): print "control: boot
 *               K", triple-fault while K < N, then exit 0 (status 1)
 *   mmio_exec=1 jump into the PCI hole (no RAM, no device): KVM cannot
 *               fetch instructions from MMIO, an emulation failure
 *   pvpanic=1   print the pvpanic capability bits (port 0x505), report a
 *               panic, and exit 5 (status 11) if the VMM lets it run on
 *   powerbtn=1  wait for the ACPI power button (PM1 status bit 8), then
 *               power off through PM1 control (SLP_TYP 5 | SLP_EN)
 *   gdb=1       run gdb_target() (the gdbstub test's breakpoint) in a
 *               loop (ring 0) until gdb_done is set from the debugger
 *
 * Without any: print "control: idle" and spin (for QMP tests).
 */
#include "kit.h"

#define BOOT_COUNTER_GPA 0x2000000ull /* 32 MiB: above the image, inside -m 64 */
#define BOOT_MAGIC 0x544f4f42u	      /* "BOOT" */
#define PVPANIC_PORT 0x505
#define PM1_STS 0x600
#define PM1_CNT 0x604
#define PM1_PWRBTN (1u << 8)

__attribute__((noreturn)) static void triple_fault(void)
{
	static const struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) no_idt = {0, 0};

	/* #UD with an empty IDT: #GP, #DF, then the CPU shuts down. */
	__asm__ volatile("lidt %0; ud2" : : "m"(no_idt));
	for (;;)
		;
}

static int boots(uint64_t wanted)
{
	volatile uint32_t *counter = (volatile uint32_t *)BOOT_COUNTER_GPA;
	uint32_t k = counter[0] == BOOT_MAGIC ? counter[1] : 0;

	counter[0] = BOOT_MAGIC;
	counter[1] = k + 1;
	printf("control: boot %u\n", k);
	if (k < wanted)
		triple_fault();
	return 0;
}

static int pvpanic(void)
{
	printf("control: pvpanic caps %x\n", inb(PVPANIC_PORT));
	outb(PVPANIC_PORT, 1);
	printf("control: still running after the panic\n");
	return 5;
}

__attribute__((noreturn)) static long power_button(void *arg __attribute__((unused)))
{
	printf("control: waiting for the power button\n");
	while (!(inw(PM1_STS) & PM1_PWRBTN))
		cpu_relax();
	outw(PM1_STS, PM1_PWRBTN); /* acknowledge, as the OS does */
	printf("control: power button, powering off\n");
	outw(PM1_CNT, 5 << 10 | 1 << 13);
	guest_exit(7); /* not reached when the VMM powers off */
}

/* The gdbstub test: a breakpoint here, registers and memory checked. */
volatile uint64_t gdb_counter;
volatile uint64_t gdb_done;
uint64_t gdb_magic = 0x1122334455667788ull;

__attribute__((noinline)) uint64_t gdb_target(uint64_t x)
{
	gdb_counter += x;
	return gdb_counter;
}

/* Ring 0: the gdbstub's breakpoints are debug registers, which the nested
 * test hosts honour in ring 0 only. */
static int gdb_loop(void)
{
	printf("control: gdb loop\n");
	for (uint64_t i = 1; !gdb_done; i++)
		gdb_target(i);
	printf("control: gdb done counter=%lu\n", gdb_counter);
	return 0;
}

__attribute__((noreturn)) static long idle(void *arg __attribute__((unused)))
{
	printf("control: idle\n");
	for (;;)
		cpu_relax();
}

int guest_main(void)
{
	uint64_t triple = kit_cmdline_uint("triple", ~0ull);

	if (triple != ~0ull)
		return boots(triple);
	if (kit_cmdline_uint("mmio_exec", 0))
		((void (*)(void))0xd0000000ul)();
	if (kit_cmdline_uint("pvpanic", 0))
		return pvpanic();
	if (kit_cmdline_uint("powerbtn", 0))
		run_user(power_button, NULL); /* polling: ring 3 is native speed */
	if (kit_cmdline_uint("gdb", 0))
		return gdb_loop();
	run_user(idle, NULL); /* ring 3: spinning in emulated ring 0 would be costly */
	return 1;
}
