/* Unit tests for -cpu parsing and the CPU models on a synthetic CPUID. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "vmm/cli/cpuid.h"

static struct kvm_cpuid2 *fake_host(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 10 * sizeof(c->entries[0]));

	c->nent = 9;
	c->entries[0] = (struct kvm_cpuid_entry2){
		.function = 1, .ecx = 0xffffffffu, .edx = 0xffffffffu, .ebx = 0x00ff0800};
	c->entries[1] =
		(struct kvm_cpuid_entry2){.function = 7, .ebx = 0xffffffffu, .ecx = 0xffffffffu};
	c->entries[2] = (struct kvm_cpuid_entry2){.function = 0xd, .eax = 7, .ebx = 0x340};
	c->entries[3] = (struct kvm_cpuid_entry2){.function = 0xb, .index = 1, .ebx = 8};
	c->entries[4] = (struct kvm_cpuid_entry2){.function = 0x40000001, .eax = 0x3fbfb};
	c->entries[5] = (struct kvm_cpuid_entry2){.function = 0x80000001, .ecx = ~0u, .edx = ~0u};
	c->entries[6] = (struct kvm_cpuid_entry2){.function = 0, .eax = 0xd, .ebx = 0x756e6547};
	c->entries[7] = (struct kvm_cpuid_entry2){.function = 0x80000008, .eax = 0x3930};
	c->entries[8] = (struct kvm_cpuid_entry2){.function = 0x40000000, .eax = 0x40000001};
	c->entries[1].ebx &= ~(1u << 14); /* no MPX on this host */
	return c;
}

START_TEST(parse_models_and_switches)
{
	struct cpu_spec s;
	char err[128];

	ck_assert_int_eq(cpu_spec_parse("host", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.model, CPU_MODEL_HOST);
	ck_assert_int_eq(cpu_spec_parse("kvm64,+popcnt,-sse3", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.model, CPU_MODEL_KVM64);
	ck_assert_uint_eq(s.nsw, 2);
	ck_assert(s.sw[0].on && !s.sw[1].on);
	ck_assert_int_eq(cpu_spec_parse("vmm", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.model, CPU_MODEL_BASELINE);
	ck_assert_int_eq(cpu_spec_parse("max,host-phys-bits", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.model, CPU_MODEL_HOST);
	ck_assert_uint_eq(s.phys_bits, 0);
	ck_assert_int_eq(
		cpu_spec_parse("IvyBridge,phys-bits=36,host-phys-bits=off", &s, err, sizeof(err)),
		0);
	ck_assert_int_eq(s.model, CPU_MODEL_IVYBRIDGE);
	ck_assert_uint_eq(s.phys_bits, 36);
	ck_assert_int_eq(cpu_spec_parse("Skylake-Server,host-phys-bits,+vmx,+vmx-mbec", &s, err,
					sizeof(err)),
			 0);
	ck_assert_int_eq(cpu_spec_parse("Opteron_G1,vendor=AuthenticAMD", &s, err, sizeof(err)), 0);
	ck_assert_str_eq(s.vendor, "AuthenticAMD");
	ck_assert_int_eq(cpu_spec_parse("qemu64,+x2apic,+tsc-deadline,sse4.1=on,popcnt=off", &s,
					err, sizeof(err)),
			 0);
	ck_assert_int_eq(s.model, CPU_MODEL_QEMU64);
	ck_assert_uint_eq(s.nsw, 4);
	ck_assert(s.sw[2].on && !s.sw[3].on);
	ck_assert_int_eq(cpu_spec_parse("host,migratable=no", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(cpu_spec_parse("host,hv_passthrough", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(cpu_spec_parse("max,phys-bits=99", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(cpu_spec_parse("max,avx=maybe", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(cpu_spec_parse("pentium", &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown model 'pentium'"));
	ck_assert_int_eq(cpu_spec_parse("vmm,+warp", &s, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown feature 'warp'"));
	ck_assert_int_eq(cpu_spec_parse("vmm,popcorn", &s, err, sizeof(err)), -1);
}
END_TEST

START_TEST(models_hide_features)
{
	struct kvm_cpuid2 *c = fake_host();
	struct cpu_spec s;
	char err[128];

	cpu_spec_parse("baseline", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 3);
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 26), 0);		/* xsave */
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 23), 1u << 23);	/* popcnt stays */
	ck_assert_uint_eq(c->entries[1].ebx & (1u << 20 | 1u << 7), 0); /* smap, smep */
	ck_assert_uint_eq(c->entries[2].eax, 0);			/* leaf 0xd gone */
	ck_assert_uint_eq(c->entries[0].ebx >> 24, 3);			/* APIC id */
	ck_assert_uint_eq(c->entries[3].edx, 3);			/* x2APIC id */
	/* kvmclock, async PF, steal time, PV EOI kept; PV unhalt, IPI and
	 * sched yield (hypercalls) hidden. */
	ck_assert_uint_eq(c->entries[4].eax, 0x3fbfb & ~(1u << 7 | 1u << 11 | 1u << 13));
	free(c);

	c = fake_host();
	ck_assert_int_eq(cpu_spec_parse("vmm,+kvm-pv-ipi", &s, err, sizeof(err)), 0);
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[4].eax & (1u << 11 | 1u << 7), 1u << 11);
	free(c);

	c = fake_host();
	cpu_spec_parse("kvm64,+sse4_2", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 23), 0);	     /* popcnt hidden */
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 20), 1u << 20); /* +sse4_2 */
	ck_assert_uint_eq(c->entries[0].ecx & 1, 1);		     /* sse3 kept */
	ck_assert_uint_eq(c->entries[1].ebx, 0);		     /* no leaf 7 features */
	free(c);

	c = fake_host();
	cpu_spec_parse("host,-popcnt", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 1);
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 26), 1u << 26); /* host keeps xsave */
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 23), 0);
	ck_assert_uint_eq(c->entries[4].eax, 0x3fbfb); /* all KVM leaves */
	ck_assert_uint_eq(c->entries[1].ebx & (1u << 20 | 1u << 7 | 1u << 5),
			  1u << 20 | 1u << 7 | 1u << 5); /* smap, smep, avx2 */
	ck_assert_uint_eq(c->entries[2].eax, 7);	 /* AVX state kept */
	free(c);
}
END_TEST

/* QEMU's named models: their feature lists intersected with KVM's. */
START_TEST(named_models)
{
	struct kvm_cpuid2 *c = fake_host();
	struct cpu_spec s;
	char err[128];

	ck_assert_int_eq(cpu_spec_parse("qemu64,+x2apic,+tsc-deadline,+mpx", &s, err, sizeof(err)),
			 0);
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[0].ecx, 1u | 1u << 13 | 1u << 21 | 1u << 24 | 1u << 31);
	free(c);

	/* The hypervisor bit even where KVM does not report it (nested KVM). */
	c = fake_host();
	c->entries[0].ecx &= ~(1u << 31);
	cpu_spec_parse("host", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[0].ecx >> 31, 1);
	free(c);
	c = fake_host();
	cpu_spec_parse("host,-hypervisor", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[0].ecx >> 31, 0);
	free(c);

	c = fake_host();
	cpu_spec_parse("qemu64,+x2apic,+tsc-deadline,+mpx", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[1].ebx, 0); /* +mpx: KVM lacks it */
	ck_assert_uint_eq(c->entries[5].edx, 1u << 11 | 1u << 20 | 1u << 29);
	ck_assert_uint_eq(c->entries[5].ecx, 1);			     /* lahf-lm */
	ck_assert_uint_eq(c->entries[4].eax & (1u << 7 | 1u << 0), 1u << 0); /* kvmclock */
	ck_assert_uint_eq(c->entries[2].eax, 0);			     /* no xsave */
	free(c);

	c = fake_host();
	cpu_spec_parse("IvyBridge,phys-bits=36,vendor=AuthenticAMD", &s, err, sizeof(err));
	cpuid_apply(c, &s, NULL, 0);
	ck_assert_uint_eq(c->entries[1].ebx, 1u << 0 | 1u << 7 | 1u << 9); /* fsgsbase smep erms */
	ck_assert_uint_eq(c->entries[0].ecx & (1u << 28 | 1u << 26 | 1u << 12),
			  1u << 28 | 1u << 26);
	ck_assert_uint_eq(c->entries[2].eax, 7); /* x87 SSE YMM */
	ck_assert_uint_eq(c->entries[7].eax & 0xff, 36);
	ck_assert_uint_eq(c->entries[6].ebx, 0x68747541); /* "Auth" */
	free(c);
}
END_TEST

START_TEST(tsc_leaf)
{
	struct kvm_cpuid2 *c = fake_host();

	cpuid_set_tsc_leaf(c, 2500000);
	ck_assert_uint_eq(c->nent, 10);
	ck_assert_uint_eq(c->entries[8].eax, 0x40000010);
	ck_assert_uint_eq(c->entries[9].function, 0x40000010);
	ck_assert_uint_eq(c->entries[9].eax, 2500000);
	ck_assert_uint_eq(c->entries[9].ebx, 1000000);
	cpuid_set_tsc_leaf(c, 2500000); /* idempotent */
	ck_assert_uint_eq(c->nent, 10);
	free(c);
}
END_TEST

/* A host's topology leaves, rewritten for -smp 12,dies=2,cores=3,threads=2
 * (APIC ID fields: thread bit 0, core bits 1-2, die bit 3, package 4+)
 * as QEMU fills them. */
static struct kvm_cpuid2 *topology_host(void)
{
	static const struct {
		unsigned leaf, sub, eax;
	} ents[] = {
		{1, 0, 0},	    {4, 0, 0x21},	{4, 1, 0x63}, {4, 2, 0},	 {0xb, 0, 0},
		{0xb, 1, 0},  {0xb, 2, 0},	{0x1f, 0, 0}, {0x1f, 1, 0},	 {0x1f, 2, 0},
		{0x1f, 3, 0}, {0x80000008, 0, 0x3030}, {0x8000001e, 0, 0},
	};
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 16 * sizeof(c->entries[0]));

	for (unsigned i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
		c->entries[c->nent++] = (struct kvm_cpuid_entry2){
			.function = ents[i].leaf, .index = ents[i].sub, .eax = ents[i].eax,
			.ebx = 0xffffffffu, .ecx = 0xf000, .edx = 0xffffffffu};
	return c;
}

static const struct kvm_cpuid_entry2 *leaf(const struct kvm_cpuid2 *c, unsigned fn, unsigned sub)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == sub)
			return &c->entries[i];
	ck_abort_msg("no leaf %#x.%u", fn, sub);
	return NULL;
}

#define ASSERT_REGS(c, fn, sub, a, b, cx)                                                          \
	do {                                                                                       \
		const struct kvm_cpuid_entry2 *e_ = leaf(c, fn, sub);                              \
		ck_assert_msg(e_->eax == (a) && e_->ebx == (b) && e_->ecx == (cx),                 \
			      "leaf %#x.%u: %#x %#x %#x", fn, sub, e_->eax, e_->ebx, e_->ecx);     \
	} while (0)

START_TEST(topology_leaves)
{
	const struct cpu_topology t = {12, 1, 2, 3, 2, 12};
	const struct cpu_topology cores4 = {4, 1, 1, 4, 1, 4};
	struct kvm_cpuid2 *c = topology_host();
	struct cpu_spec s;
	char err[128];

	cpu_spec_parse("host", &s, err, sizeof(err));
	cpuid_apply(c, &s, &t, 7); /* thread 1 of core 0 of die 1: APIC ID 9 */
	/* APIC ID; 6 per package: QEMU 7.2 leaves the dies out of the count */
	ck_assert_uint_eq(leaf(c, 1, 0)->ebx >> 16, 9u << 8 | 6);
	ck_assert_uint_eq(leaf(c, 1, 0)->edx >> 28 & 1, 1);	     /* HTT */
	ck_assert_uint_eq(leaf(c, 4, 0)->eax, 2u << 26 | 1u << 14 | 0x21); /* 3 cores, L1 by 2 */
	ck_assert_uint_eq(leaf(c, 4, 1)->eax, 2u << 26 | 15u << 14 | 0x63); /* L3: the package */
	ck_assert_uint_eq(leaf(c, 4, 2)->eax, 0);
	ASSERT_REGS(c, 0xb, 0, 1, 2, 0x100);	 /* SMT: 1 bit, 2 threads */
	ASSERT_REGS(c, 0xb, 1, 4, 6, 0x201);	 /* core: 4 bits to the package */
	ASSERT_REGS(c, 0xb, 2, 0, 0, 2);	 /* the end */
	ck_assert_uint_eq(leaf(c, 0xb, 1)->edx, 9);
	ASSERT_REGS(c, 0x1f, 0, 1, 2, 0x100);
	ASSERT_REGS(c, 0x1f, 1, 3, 6, 0x201);	 /* core: 3 bits to the die */
	ASSERT_REGS(c, 0x1f, 2, 4, 12, 0x502);	 /* die */
	ASSERT_REGS(c, 0x1f, 3, 0, 0, 3);
	ck_assert_uint_eq(leaf(c, 0x80000008, 0)->ecx, 4u << 12 | 5); /* 6 threads, 4 ID bits */
	ASSERT_REGS(c, 0x8000001e, 0, 9, 1u << 8 | 3, 1u << 8 | 1);
	free(c);

	c = topology_host(); /* one die: no leaf 0x1F, as in QEMU */
	cpuid_apply(c, &s, &cores4, 3);
	ck_assert_uint_eq(leaf(c, 1, 0)->ebx >> 16, 3u << 8 | 4);
	ASSERT_REGS(c, 0x1f, 0, 0, 0, 0);
	ASSERT_REGS(c, 0xb, 1, 2, 4, 0x201);
	free(c);

	/* KVM listing only 0xB.0 and no 0x1F: 0xB's subleaves are added */
	c = topology_host();
	c->nent = 5; /* leaves 1, 4.0-2, 0xB.0 */
	c->entries[c->nent++] = (struct kvm_cpuid_entry2){.function = 0, .eax = 0xd};
	cpuid_add_topology_leaves(c, 16, &t);
	cpuid_apply(c, &s, &t, 7);
	ASSERT_REGS(c, 0xb, 1, 4, 6, 0x201);
	ASSERT_REGS(c, 0xb, 2, 0, 0, 2);
	ck_assert_uint_eq(leaf(c, 0, 0)->eax, 0xd); /* the host's level, as QEMU's -cpu host */
	ck_assert_uint_eq(c->nent, 6 + 2);	      /* 0xB.1-2 */
	free(c);

	c = topology_host(); /* no topology: a package per vCPU */
	cpuid_apply(c, &s, NULL, 3);
	ck_assert_uint_eq(leaf(c, 1, 0)->ebx >> 16, 3u << 8 | 1);
	ck_assert_uint_eq(leaf(c, 1, 0)->edx >> 28 & 1, 0);
	ASSERT_REGS(c, 0xb, 1, 0, 1, 0x201);
	free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpuid");
	TCase *tc = tcase_create("models");

	tcase_add_test(tc, parse_models_and_switches);
	tcase_add_test(tc, models_hide_features);
	tcase_add_test(tc, named_models);
	tcase_add_test(tc, tsc_leaf);
	tcase_add_test(tc, topology_leaves);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
