/* cpuid.c — -cpu models over KVM_GET_SUPPORTED_CPUID.
 *
 * host:  what KVM supports.
 * vmm:   the default; host minus features whose state or instructions a
 *        nested host's ring-0 emulator cannot handle (XSAVE and the AVX
 *        family that needs it, SMAP, SMEP, PKU, TSX, ...) — stable across
 *        hosts that share the baseline, and Linux boots on the CI hosts.
 * kvm64: like QEMU's kvm64: SSE2-era baseline, no POPCNT, SSE4, leaf 7.
 * The KVM paravirt leaves (0x4000000x, kvmclock) pass through, minus the
 * hypercall-based features in the vmm and kvm64 models. */
#include <stdio.h>
#include <string.h>

#include "vmm/cpuid.h"

enum { EAX, EBX, ECX, EDX };

struct feature {
	const char *name;
	unsigned leaf, reg, bit;
};

static const struct feature features[] = {
	{"sse3", 1, ECX, 0}, {"pclmulqdq", 1, ECX, 1}, {"ssse3", 1, ECX, 9},
	{"fma", 1, ECX, 12}, {"cx16", 1, ECX, 13}, {"pcid", 1, ECX, 17},
	{"sse4_1", 1, ECX, 19}, {"sse4_2", 1, ECX, 20}, {"x2apic", 1, ECX, 21},
	{"movbe", 1, ECX, 22}, {"popcnt", 1, ECX, 23}, {"tsc_deadline", 1, ECX, 24},
	{"aes", 1, ECX, 25}, {"xsave", 1, ECX, 26}, {"avx", 1, ECX, 28},
	{"f16c", 1, ECX, 29}, {"rdrand", 1, ECX, 30},
	{"fsgsbase", 7, EBX, 0}, {"bmi1", 7, EBX, 3}, {"hle", 7, EBX, 4},
	{"avx2", 7, EBX, 5}, {"smep", 7, EBX, 7}, {"bmi2", 7, EBX, 8},
	{"erms", 7, EBX, 9}, {"invpcid", 7, EBX, 10}, {"rtm", 7, EBX, 11},
	{"avx512f", 7, EBX, 16}, {"rdseed", 7, EBX, 18}, {"adx", 7, EBX, 19},
	{"smap", 7, EBX, 20}, {"clflushopt", 7, EBX, 23}, {"sha_ni", 7, EBX, 29},
	{"umip", 7, ECX, 2}, {"pku", 7, ECX, 3}, {"rdpid", 7, ECX, 22},
	{"lahf_lm", 0x80000001, ECX, 0}, {"abm", 0x80000001, ECX, 5},
	{"pdpe1gb", 0x80000001, EDX, 26}, {"rdtscp", 0x80000001, EDX, 27},
	/* KVM paravirt features (leaf 0x40000001) that work by hypercall. */
	{"kvm-pv-unhalt", 0x40000001, EAX, 7}, {"kvm-pv-ipi", 0x40000001, EAX, 11},
	{"kvm-pv-sched-yield", 0x40000001, EAX, 13},
};
#define NFEAT (sizeof(features) / sizeof(features[0]))

/* What each model removes from the supported set (feature names). */
/* Both named models also leave out the hypercall-based KVM features, as
 * QEMU's named models do: on the kvm_pvm hosts VMCALL never completes (an
 * -smp 4 Linux hangs in its first KVM_HC_SEND_IPI at CPU 1's bring-up). */
#define KVM_HYPERCALL_FEATURES "kvm-pv-unhalt", "kvm-pv-ipi", "kvm-pv-sched-yield"
static const char *const vmm_hides[] = {
	"xsave", "avx", "fma", "f16c", "avx2", "avx512f", "smap", "smep", "pku",
	"hle", "rtm", "umip", KVM_HYPERCALL_FEATURES, NULL,
};
static const char *const kvm64_hides[] = {
	"pclmulqdq", "ssse3", "fma", "pcid", "sse4_1", "sse4_2", "x2apic", "movbe",
	"popcnt", "tsc_deadline", "aes", "xsave", "avx", "f16c", "rdrand", "lahf_lm",
	"abm", "pdpe1gb", "rdtscp", KVM_HYPERCALL_FEATURES, NULL,
};

static int feature_index(const char *name, size_t len)
{
	for (unsigned i = 0; i < NFEAT; i++)
		if (strlen(features[i].name) == len && !strncmp(features[i].name, name, len))
			return i;
	return -1;
}

int cpu_spec_parse(const char *arg, struct cpu_spec *spec, char *err, size_t errlen)
{
	const char *p = arg, *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);

	memset(spec, 0, sizeof(*spec));
	if (len == 4 && !strncmp(arg, "host", 4))
		spec->model = CPU_MODEL_HOST;
	else if ((len == 3 && !strncmp(arg, "vmm", 3)) || len == 0)
		spec->model = CPU_MODEL_VMM;
	else if (len == 5 && !strncmp(arg, "kvm64", 5))
		spec->model = CPU_MODEL_KVM64;
	else
		return snprintf(err, errlen, "-cpu: unknown model '%.*s' (host, vmm, kvm64)",
				(int)len, arg), -1;
	for (p = comma; p && *p; p = comma) {
		int idx;

		p++;
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len < 2 || (p[0] != '+' && p[0] != '-'))
			return snprintf(err, errlen, "-cpu: expected +feature or -feature, got '%.*s'",
					(int)len, p), -1;
		idx = feature_index(p + 1, len - 1);
		if (idx < 0)
			return snprintf(err, errlen, "-cpu: unknown feature '%.*s'", (int)len - 1,
					p + 1), -1;
		if (spec->nsw == CPU_MAX_SWITCHES)
			return snprintf(err, errlen, "-cpu: more than %d switches", CPU_MAX_SWITCHES),
			       -1;
		spec->sw[spec->nsw].feat = idx;
		spec->sw[spec->nsw++].on = p[0] == '+';
	}
	return 0;
}

static __u32 *reg_of(struct kvm_cpuid_entry2 *e, unsigned reg)
{
	return reg == EAX ? &e->eax : reg == EBX ? &e->ebx : reg == ECX ? &e->ecx : &e->edx;
}

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, unsigned leaf, unsigned sub)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == leaf && c->entries[i].index == sub)
			return &c->entries[i];
	return NULL;
}

static void set_feature(struct kvm_cpuid2 *c, const struct feature *f, bool on)
{
	struct kvm_cpuid_entry2 *e = find(c, f->leaf, 0);

	if (!e)
		return;
	if (on)
		*reg_of(e, f->reg) |= 1u << f->bit;	/* +feat: the user's call */
	else
		*reg_of(e, f->reg) &= ~(1u << f->bit);
}

static void hide_all(struct kvm_cpuid2 *c, const char *const *names)
{
	for (; *names; names++)
		set_feature(c, &features[feature_index(*names, strlen(*names))], false);
}

static void set_topology(struct kvm_cpuid2 *c, unsigned apic_id)
{
	for (unsigned i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1) {
			e->ebx = (e->ebx & 0x0000ffffu) | 1u << 16 | apic_id << 24;
			e->edx &= ~(1u << 28);		/* HTT: one thread per package */
		} else if (e->function == 4) {
			e->eax &= 0x3fff;		/* one core, one thread sharing */
		} else if (e->function == 0xb || e->function == 0x1f) {
			e->eax = 0;
			e->ebx = e->index < 2 ? 1 : 0;
			e->ecx = e->index < 2 ? ((e->index + 1) << 8 | e->index) : e->index;
			e->edx = apic_id;
		}
	}
}

void cpuid_apply(struct kvm_cpuid2 *c, const struct cpu_spec *spec, unsigned apic_id)
{
	struct kvm_cpuid_entry2 *xsave_leaf;

	if (spec->model == CPU_MODEL_VMM)
		hide_all(c, vmm_hides);
	if (spec->model == CPU_MODEL_KVM64) {
		hide_all(c, kvm64_hides);
		for (unsigned i = 0; i < c->nent; i++)
			if (c->entries[i].function == 7)
				c->entries[i].ebx = c->entries[i].ecx = c->entries[i].edx = 0;
	}
	for (unsigned i = 0; i < spec->nsw; i++)
		set_feature(c, &features[spec->sw[i].feat], spec->sw[i].on);
	xsave_leaf = find(c, 1, 0);
	if (xsave_leaf && !(xsave_leaf->ecx & (1u << 26))) {
		xsave_leaf->ecx &= ~(1u << 27 | 1u << 28);	/* OSXSAVE, AVX need XSAVE */
		for (unsigned i = 0; i < c->nent; i++)
			if (c->entries[i].function == 0xd)
				c->entries[i].eax = c->entries[i].ebx = c->entries[i].ecx =
					c->entries[i].edx = 0;
	}
	set_topology(c, apic_id);
}
