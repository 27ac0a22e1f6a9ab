/* raw-kvm-loop.c — the peer of bench/core-pio.sh and core-mmio.sh: a
 * KVM_RUN loop with no VMM around it.
 *
 *   raw-kvm-loop pio|mmio N
 *
 * One VM with 2 MiB of RAM, the in-kernel irqchip and PIT (as build/vmm
 * has them), one vCPU put straight into 64-bit ring 3 with IOPL 3 and a TSS
 * I/O bitmap allowing every port, running the hot loop of pio-loop.elf
 * (N times `out %al, $0x80`) or mmio-loop.elf (N 32-bit stores to
 * 0xd0000000, where no memory is), then one `out` to 0xf4. The loop
 * handles only those exits. Prints the time per exit measured around the
 * loop on the host and, as the payloads do, the loop's TSC cycles read in
 * the guest (the figure bench/core-exit-lib.sh compares). Exit status 0, or
 * 1 with a one-line reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kernel/kvm/kvm.h"

#define RAM_SIZE (2u << 20)
#define PML4_GPA 0x1000u
#define PDPT_GPA 0x2000u
#define PD_GPA 0x3000u
#define TSS_GPA 0x4000u /* to 0x6069 with the I/O bitmap */
#define PD_3G_GPA 0x7000u
#define MMIO_TARGET 0xd0000000u
#define CODE_GPA 0x10000u
#define LOOP_PORT 0x80
#define DONE_PORT 0xf4

#define TSS_IOMAP_OFF 104u
#define TSS_LIMIT (TSS_IOMAP_OFF + 65536u / 8u) /* + the all-ones byte */

/* rcx = N, rbx = MMIO_TARGET on entry; like pio-loop.elf, the loop is
 * timed with rdtsc in the guest, and the cycles come back in rax:
 *   rdtsc; rsi = t0; test %rcx,%rcx; jz done
 * 1: out %al,$0x80 (or mov %eax,(%rbx)); dec %rcx; jnz 1b
 * done: rdtsc; rax = t1 - t0; out %al,$0xf4; jmp done */
#define EXIT_INSN_OFF 17
static const uint8_t out_insn[2] = {0xe6, LOOP_PORT}; /* out %al,$0x80 */
static const uint8_t mov_insn[2] = {0x89, 0x03};      /* mov %eax,(%rbx) */
/* clang-format off */
static uint8_t guest_code[] = {
	0x0f, 0x31,		/* rdtsc */
	0x48, 0xc1, 0xe2, 0x20, /* shl $32,%rdx */
	0x48, 0x09, 0xd0,	/* or %rdx,%rax */
	0x48, 0x89, 0xc6,	/* mov %rax,%rsi */
	0x48, 0x85, 0xc9,	/* test %rcx,%rcx */
	0x74, 0x07,		/* jz +7 */
	0x90, 0x90,		/* the exiting instruction (EXIT_INSN_OFF) */
	0x48, 0xff, 0xc9,	/* dec %rcx */
	0x75, 0xf9,		/* jnz -7 */
	0x0f, 0x31,		/* rdtsc */
	0x48, 0xc1, 0xe2, 0x20, /* shl $32,%rdx */
	0x48, 0x09, 0xd0,	/* or %rdx,%rax */
	0x48, 0x29, 0xf0,	/* sub %rsi,%rax */
	0xe6, DONE_PORT,	/* out %al,$0xf4 */
	0xeb, 0xfc,		/* jmp -4 */
};
/* clang-format on */

static int fail(const char *what, int err)
{
	fprintf(stderr, "raw-kvm-loop: %s: %s\n", what, strerror(-err));
	return 1;
}

/* Identity map of the first 2 MiB and of the 2 MiB at MMIO_TARGET with
 * user-accessible large pages, the TSS with an all-zero (all ports
 * allowed) I/O bitmap, and the code. */
static void setup_memory(uint8_t *ram, bool mmio)
{
	uint64_t *pml4 = (uint64_t *)(ram + PML4_GPA), *pdpt = (uint64_t *)(ram + PDPT_GPA);
	uint64_t *pd = (uint64_t *)(ram + PD_GPA), *pd_3g = (uint64_t *)(ram + PD_3G_GPA);
	uint8_t *tss = ram + TSS_GPA;

	pml4[0] = PDPT_GPA | 7; /* present, writable, user */
	pdpt[0] = PD_GPA | 7;
	pdpt[3] = PD_3G_GPA | 7;
	pd[0] = 0x87; /* 2 MiB page at 0 */
	pd_3g[(MMIO_TARGET >> 21) & 511] = MMIO_TARGET | 0x87;
	memcpy(tss + 102, &(uint16_t){TSS_IOMAP_OFF}, 2);
	tss[TSS_LIMIT] = 0xff;
	memcpy(guest_code + EXIT_INSN_OFF, mmio ? mov_insn : out_insn, 2);
	memcpy(ram + CODE_GPA, guest_code, sizeof(guest_code));
}

static struct kvm_segment segment(uint16_t sel, uint8_t type, bool code)
{
	return (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = sel,
		.type = type,
		.present = 1,
		.dpl = 3,
		.s = 1,
		.l = code,
		.db = !code,
		.g = 1,
	};
}

static int setup_vcpu(struct kvm_vcpu *cpu, uint64_t n)
{
	struct kvm_sregs s;
	struct kvm_regs r = {.rip = CODE_GPA, .rcx = n, .rbx = MMIO_TARGET, .rflags = 0x3002};
	int ret = kvm_vcpu_get_sregs(cpu, &s);

	if (ret < 0)
		return ret;
	s.cs = segment(0x2b, 0xb, true);
	s.ds = s.es = s.fs = s.gs = s.ss = segment(0x23, 0x3, false);
	s.tr = (struct kvm_segment){.base = TSS_GPA,
				    .limit = TSS_LIMIT,
				    .selector = 0x30,
				    .type = 0xb,
				    .present = 1}; /* busy 64-bit TSS */
	s.cr3 = PML4_GPA;
	s.cr4 = 0x20;			  /* PAE */
	s.cr0 = 0x80000001 | 0x10 | 0x20; /* PG, PE, ET, NE */
	s.efer = 0x500;			  /* LME, LMA */
	ret = kvm_vcpu_set_sregs(cpu, &s);
	return ret < 0 ? ret : kvm_vcpu_set_regs(cpu, &r);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool is_done(const struct kvm_run *run)
{
	return run->exit_reason == KVM_EXIT_IO && run->io.port == DONE_PORT;
}

static bool is_loop_exit(const struct kvm_run *run, bool mmio)
{
	if (mmio)
		return run->exit_reason == KVM_EXIT_MMIO && run->mmio.phys_addr == MMIO_TARGET;
	return run->exit_reason == KVM_EXIT_IO && run->io.port == LOOP_PORT;
}

/* The hot loop: KVM_RUN and a check of the exit; nothing else. */
static int run_loop(struct kvm_vcpu *cpu, bool mmio, uint64_t *exits)
{
	struct kvm_run *run = cpu->run;

	for (;;) {
		int ret = kvm_vcpu_run(cpu);

		if (ret < 0)
			return fail("KVM_RUN", ret);
		if (is_done(run))
			return 0;
		if (!is_loop_exit(run, mmio)) {
			fprintf(stderr, "raw-kvm-loop: unexpected exit %s (%u)\n",
				kvm_exit_name(run->exit_reason), run->exit_reason);
			return 1;
		}
		++*exits;
	}
}

int main(int argc, char **argv)
{
	bool mmio = argc == 3 && !strcmp(argv[1], "mmio");
	uint64_t n, exits = 0, t0, t1;
	struct kvm_regs regs;
	struct kvm_sys sys;
	struct kvm_vm vm;
	struct kvm_vcpu cpu;
	char err[256];
	uint8_t *ram;
	char *end;
	int ret;

	if (argc != 3 || (!mmio && strcmp(argv[1], "pio"))) {
		fprintf(stderr, "usage: raw-kvm-loop pio|mmio N\n");
		return 1;
	}
	n = strtoull(argv[2], &end, 0);
	if (!*argv[2] || *end) {
		fprintf(stderr, "raw-kvm-loop: N: not a number: %s\n", argv[2]);
		return 1;
	}
	if (kvm_open(&sys, NULL, err, sizeof(err)) < 0 ||
	    kvm_vm_create(&sys, &vm, err, sizeof(err)) < 0) {
		fprintf(stderr, "raw-kvm-loop: %s\n", err);
		return 1;
	}
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return fail("mmap", -12);
	setup_memory(ram, mmio);
	ret = kvm_vm_add_mem(&vm, 0, RAM_SIZE, ram, 0);
	if (ret < 0)
		return fail("KVM_SET_USER_MEMORY_REGION", ret);
	if ((ret = kvm_vm_create_irqchip(&vm)) < 0 || (ret = kvm_vm_create_pit2(&vm)) < 0)
		return fail("in-kernel irqchip/PIT", ret);
	if ((ret = kvm_vcpu_create(&vm, 0, &cpu)) < 0 || (ret = setup_vcpu(&cpu, n)) < 0)
		return fail("vCPU", ret);
	t0 = now_ns();
	ret = run_loop(&cpu, mmio, &exits);
	t1 = now_ns();
	if (ret)
		return ret;
	if (exits != n) {
		fprintf(stderr, "raw-kvm-loop: %llu exits, expected %llu\n",
			(unsigned long long)exits, (unsigned long long)n);
		return 1;
	}
	if ((ret = kvm_vcpu_get_regs(&cpu, &regs)) < 0)
		return fail("KVM_GET_REGS", ret);
	printf("raw-kvm-loop: %s: %llu exits in %.3f ms (%.2f us per exit), %llu tsc cycles in the "
	       "guest\n",
	       argv[1], (unsigned long long)n, (t1 - t0) / 1e6,
	       n ? (t1 - t0) / 1e3 / (double)n : 0.0, (unsigned long long)regs.rax);
	kvm_vcpu_destroy(&cpu);
	kvm_vm_destroy(&vm);
	kvm_close(&sys);
	munmap(ram, RAM_SIZE);
	return 0;
}
