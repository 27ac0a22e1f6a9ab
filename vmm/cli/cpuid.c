/* cpuid.c — -cpu models over KVM_GET_SUPPORTED_CPUID, with QEMU's names.
 *
 * host, max: what KVM supports (the default, as Firecracker and
 *        cloud-hypervisor give): KVM already leaves out what it cannot
 *        virtualize; vmm adds the KVM timing leaf 0x40000010.
 * baseline (old name vmm): host minus what a KVM that emulates guest ring 0
 *        (kvm_pvm) cannot run: XSAVE and the AVX family that needs it, SMAP,
 *        SMEP, PKU, TSX, UMIP, and the KVM features that work by hypercall
 *        (VMCALL never completes there). The tests pick it on such hosts.
 * kvm64, qemu64, Opteron_G1, IvyBridge, Skylake-Server: QEMU's models as
 *        feature lists, intersected with what KVM supports, plus the KVM
 *        paravirt features QEMU turns on for every model under KVM.
 * Switches: +feat, -feat, feat=on|off, phys-bits=N, host-phys-bits[=on|off],
 * vendor=STRING; enforce, check, migratable=... are accepted and ignored;
 * vmx-* (VMX capability controls) are accepted and follow KVM's. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cpuid.h"

enum { EAX, EBX, ECX, EDX };

struct feature {
	const char *name; /* QEMU's spelling, '-' for '_' and '.' */
	unsigned leaf, sub, reg, bit;
};

#define L1 1, 0
#define L7 7, 0
#define LXSAVE 0xd, 1
#define LX1 0x80000001, 0
#define LSVM 0x8000000a, 0
#define LKVM 0x40000001, 0
static const struct feature features[] = {
	{"fpu", L1, EDX, 0},
	{"vme", L1, EDX, 1},
	{"de", L1, EDX, 2},
	{"pse", L1, EDX, 3},
	{"tsc", L1, EDX, 4},
	{"msr", L1, EDX, 5},
	{"pae", L1, EDX, 6},
	{"mce", L1, EDX, 7},
	{"cx8", L1, EDX, 8},
	{"apic", L1, EDX, 9},
	{"sep", L1, EDX, 11},
	{"mtrr", L1, EDX, 12},
	{"pge", L1, EDX, 13},
	{"mca", L1, EDX, 14},
	{"cmov", L1, EDX, 15},
	{"pat", L1, EDX, 16},
	{"pse36", L1, EDX, 17},
	{"clflush", L1, EDX, 19},
	{"ds", L1, EDX, 21},
	{"acpi", L1, EDX, 22},
	{"mmx", L1, EDX, 23},
	{"fxsr", L1, EDX, 24},
	{"sse", L1, EDX, 25},
	{"sse2", L1, EDX, 26},
	{"ss", L1, EDX, 27},
	{"ht", L1, EDX, 28},

	{"pni", L1, ECX, 0},
	{"pclmulqdq", L1, ECX, 1},
	{"dtes64", L1, ECX, 2},
	{"monitor", L1, ECX, 3},
	{"vmx", L1, ECX, 5},
	{"smx", L1, ECX, 6},
	{"ssse3", L1, ECX, 9},
	{"fma", L1, ECX, 12},
	{"cx16", L1, ECX, 13},
	{"pdcm", L1, ECX, 15},
	{"pcid", L1, ECX, 17},
	{"sse4-1", L1, ECX, 19},
	{"sse4-2", L1, ECX, 20},
	{"x2apic", L1, ECX, 21},
	{"movbe", L1, ECX, 22},
	{"popcnt", L1, ECX, 23},
	{"tsc-deadline", L1, ECX, 24},
	{"aes", L1, ECX, 25},
	{"xsave", L1, ECX, 26},
	{"avx", L1, ECX, 28},
	{"f16c", L1, ECX, 29},
	{"rdrand", L1, ECX, 30},
	{"hypervisor", L1, ECX, 31},

	{"fsgsbase", L7, EBX, 0},
	{"tsc-adjust", L7, EBX, 1},
	{"sgx", L7, EBX, 2},
	{"bmi1", L7, EBX, 3},
	{"hle", L7, EBX, 4},
	{"avx2", L7, EBX, 5},
	{"smep", L7, EBX, 7},
	{"bmi2", L7, EBX, 8},
	{"erms", L7, EBX, 9},
	{"invpcid", L7, EBX, 10},
	{"rtm", L7, EBX, 11},
	{"mpx", L7, EBX, 14},
	{"avx512f", L7, EBX, 16},
	{"avx512dq", L7, EBX, 17},
	{"rdseed", L7, EBX, 18},
	{"adx", L7, EBX, 19},
	{"smap", L7, EBX, 20},
	{"avx512ifma", L7, EBX, 21},
	{"clflushopt", L7, EBX, 23},
	{"clwb", L7, EBX, 24},
	{"intel-pt", L7, EBX, 25},
	{"avx512cd", L7, EBX, 28},
	{"sha-ni", L7, EBX, 29},
	{"avx512bw", L7, EBX, 30},
	{"avx512vl", L7, EBX, 31},
	{"avx512vbmi", L7, ECX, 1},
	{"umip", L7, ECX, 2},
	{"pku", L7, ECX, 3},
	{"waitpkg", L7, ECX, 5},
	{"avx512vbmi2", L7, ECX, 6},
	{"gfni", L7, ECX, 8},
	{"vaes", L7, ECX, 9},
	{"vpclmulqdq", L7, ECX, 10},
	{"avx512vnni", L7, ECX, 11},
	{"avx512bitalg", L7, ECX, 12},
	{"avx512-vpopcntdq", L7, ECX, 14},
	{"la57", L7, ECX, 16},
	{"rdpid", L7, ECX, 22},
	{"cldemote", L7, ECX, 25},
	{"movdiri", L7, ECX, 27},
	{"movdir64b", L7, ECX, 28},
	{"fsrm", L7, EDX, 4},
	{"md-clear", L7, EDX, 10},
	{"serialize", L7, EDX, 14},
	{"tsx-ldtrk", L7, EDX, 16},
	{"spec-ctrl", L7, EDX, 26},
	{"stibp", L7, EDX, 27},
	{"arch-capabilities", L7, EDX, 29},
	{"ssbd", L7, EDX, 31},

	{"xsaveopt", LXSAVE, EAX, 0},
	{"xsavec", LXSAVE, EAX, 1},
	{"xgetbv1", LXSAVE, EAX, 2},
	{"xsaves", LXSAVE, EAX, 3},

	{"lahf-lm", LX1, ECX, 0},
	{"cmp-legacy", LX1, ECX, 1},
	{"svm", LX1, ECX, 2},
	{"extapic", LX1, ECX, 3},
	{"cr8legacy", LX1, ECX, 4},
	{"abm", LX1, ECX, 5},
	{"sse4a", LX1, ECX, 6},
	{"misalignsse", LX1, ECX, 7},
	{"3dnowprefetch", LX1, ECX, 8},
	{"osvw", LX1, ECX, 9},
	{"xop", LX1, ECX, 11},
	{"skinit", LX1, ECX, 12},
	{"fma4", LX1, ECX, 16},
	{"tbm", LX1, ECX, 21},
	{"topoext", LX1, ECX, 22},
	{"syscall", LX1, EDX, 11},
	{"nx", LX1, EDX, 20},
	{"mmxext", LX1, EDX, 22},
	{"fxsr-opt", LX1, EDX, 25},
	{"pdpe1gb", LX1, EDX, 26},
	{"rdtscp", LX1, EDX, 27},
	{"lm", LX1, EDX, 29},

	{"npt", LSVM, EDX, 0},
	{"lbrv", LSVM, EDX, 1},
	{"nrip-save", LSVM, EDX, 3},
	{"tsc-scale", LSVM, EDX, 4},
	{"vmcb-clean", LSVM, EDX, 5},
	{"pause-filter", LSVM, EDX, 10},
	{"pfthreshold", LSVM, EDX, 12},
	{"avic", LSVM, EDX, 13},
	{"vgif", LSVM, EDX, 16},

	{"kvmclock", LKVM, EAX, 0},
	{"kvm-nopiodelay", LKVM, EAX, 1},
	{"kvm-mmu", LKVM, EAX, 2},
	{"kvmclock2", LKVM, EAX, 3},
	{"kvm-asyncpf", LKVM, EAX, 4},
	{"kvm-steal-time", LKVM, EAX, 5},
	{"kvm-pv-eoi", LKVM, EAX, 6},
	{"kvm-pv-unhalt", LKVM, EAX, 7},
	{"kvm-pv-tlb-flush", LKVM, EAX, 9},
	{"kvm-asyncpf-vmexit", LKVM, EAX, 10},
	{"kvm-pv-ipi", LKVM, EAX, 11},
	{"kvm-poll-control", LKVM, EAX, 12},
	{"kvm-pv-sched-yield", LKVM, EAX, 13},
	{"kvm-asyncpf-int", LKVM, EAX, 14},
	{"kvm-msi-ext-dest-id", LKVM, EAX, 15},
	{"kvmclock-stable-bit", LKVM, EAX, 24},
};
#define NFEAT (sizeof(features) / sizeof(features[0]))

/* Other spellings QEMU accepts for the same bit. */
static const char *const aliases[][2] = {
	{"sse3", "pni"},
	{"tsc-deadline-timer", "tsc-deadline"},
	{"pclmuldq", "pclmulqdq"},
	{"xd", "nx"},
	{"i64", "lm"},
};

/* The words a model controls: outside them a named model keeps what KVM
 * reports (topology, caches, leaf 0xd sizes...). */
static const struct {
	unsigned leaf, sub, reg;
} model_words[] = {
	{L1, EDX},     {L1, ECX},  {L7, EBX},  {L7, ECX},   {L7, EDX},
	{LXSAVE, EAX}, {LX1, ECX}, {LX1, EDX}, {LSVM, EDX}, {LKVM, EAX},
};
#define NWORDS (sizeof(model_words) / sizeof(model_words[0]))

/* QEMU's models as feature lists. QEMU under KVM adds to every model the
 * paravirt features below and x2apic (its kvm_default_props). */
#define KVM_DEFAULTS                                                                               \
	"kvmclock kvmclock2 kvm-nopiodelay kvm-asyncpf kvm-asyncpf-int kvm-steal-time "            \
	"kvm-pv-eoi kvmclock-stable-bit x2apic hypervisor "
#define P6_BASE                                                                                    \
	"fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "         \
	"fxsr sse sse2 syscall nx lm "
#define IVY_BASE                                                                                   \
	P6_BASE "vme pni pclmulqdq ssse3 cx16 pcid sse4-1 sse4-2 popcnt tsc-deadline aes "         \
		"xsave avx f16c rdrand lahf-lm rdtscp fsgsbase smep erms xsaveopt "
static const struct {
	const char *name, *features; /* features NULL: all KVM supports */
	const char *desc;	     /* -cpu help */
} models[CPU_MODEL_COUNT] = {
	[CPU_MODEL_HOST] = {"host", NULL, "every feature KVM offers (the default)"},
	[CPU_MODEL_BASELINE] = {"baseline", NULL,
				"host without what a KVM emulating guest ring 0 cannot run"},
	[CPU_MODEL_KVM64] = {"kvm64", KVM_DEFAULTS P6_BASE "pni cx16", "QEMU's kvm64 features"},
	[CPU_MODEL_QEMU64] = {"qemu64", KVM_DEFAULTS P6_BASE "pni cx16 lahf-lm",
			      "QEMU's qemu64 features"},
	[CPU_MODEL_OPTERON_G1] = {"Opteron_G1", KVM_DEFAULTS P6_BASE "pni",
				  "QEMU's Opteron_G1 features"},
	[CPU_MODEL_IVYBRIDGE] = {"IvyBridge", KVM_DEFAULTS IVY_BASE, "QEMU's IvyBridge features"},
	[CPU_MODEL_SKYLAKE_SERVER] = {"Skylake-Server",
				      KVM_DEFAULTS IVY_BASE
				      "fma movbe pdpe1gb abm 3dnowprefetch tsc-adjust bmi1 hle "
				      "avx2 bmi2 invpcid rtm mpx avx512f avx512dq rdseed adx smap "
				      "clflushopt clwb avx512cd avx512bw avx512vl pku xsavec "
				      "xgetbv1 spec-ctrl ssbd",
				      "QEMU's Skylake-Server features"},
};

const char *cpu_model_name(unsigned model)
{
	return model < CPU_MODEL_COUNT ? models[model].name : NULL;
}

const char *cpu_model_desc(unsigned model)
{
	return model < CPU_MODEL_COUNT ? models[model].desc : NULL;
}

const char *cpu_feature_name(unsigned i)
{
	return i < NFEAT ? features[i].name : NULL;
}

/* What the baseline model removes from host. */
#define KVM_HYPERCALL_FEATURES "kvm-pv-unhalt kvm-pv-ipi kvm-pv-sched-yield "
static const char baseline_hides[] = "xsave avx fma f16c avx2 avx512f smap smep pku hle rtm "
				     "umip waitpkg " KVM_HYPERCALL_FEATURES;

/* Names compare with '_' and '.' as '-', case-insensitively (QEMU's rule). */
static bool name_eq(const char *a, size_t alen, const char *b)
{
	size_t i;

	for (i = 0; i < alen && b[i]; i++) {
		char x = a[i] == '_' || a[i] == '.' ? '-' : tolower((unsigned char)a[i]);

		if (x != b[i])
			return false;
	}
	return i == alen && !b[i];
}

static int feature_index(const char *name, size_t len)
{
	for (unsigned i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (name_eq(name, len, aliases[i][0]))
			return feature_index(aliases[i][1], strlen(aliases[i][1]));
	for (unsigned i = 0; i < NFEAT; i++)
		if (name_eq(name, len, features[i].name))
			return i;
	return -1;
}

static int parse_model(const char *arg, size_t len, struct cpu_spec *spec)
{
	if (len == 0 || name_eq(arg, len, "vmm")) { /* the old name of baseline */
		spec->model = len ? CPU_MODEL_BASELINE : CPU_MODEL_HOST;
		return 0;
	}
	if (name_eq(arg, len, "max")) {
		spec->model = CPU_MODEL_HOST;
		return 0;
	}
	for (unsigned i = 0; i < CPU_MODEL_COUNT; i++) {
		char lower[32];
		size_t n = strlen(models[i].name);

		for (size_t j = 0; j <= n && j < sizeof(lower); j++)
			lower[j] = models[i].name[j] == '_' ? '-' : tolower(models[i].name[j]);
		if (name_eq(arg, len, lower)) {
			spec->model = i;
			return 0;
		}
	}
	return -1;
}

/* "on"/"off" (also yes/no, true/false) for key=value switches. */
static int parse_onoff(const char *v, size_t len)
{
	if (name_eq(v, len, "on") || name_eq(v, len, "yes") || name_eq(v, len, "true"))
		return 1;
	if (name_eq(v, len, "off") || name_eq(v, len, "no") || name_eq(v, len, "false"))
		return 0;
	return -1;
}

static int add_switch(struct cpu_spec *spec, const char *name, size_t len, bool on, char *err,
		      size_t errlen)
{
	int idx = feature_index(name, len);

	if (len > 4 && !strncmp(name, "vmx-", 4))
		return 0; /* VMX controls: KVM's nested VMX MSRs decide */
	if (idx < 0)
		return snprintf(err, errlen, "-cpu: unknown feature '%.*s'", (int)len, name), -1;
	if (spec->nsw == CPU_MAX_SWITCHES)
		return snprintf(err, errlen, "-cpu: more than %d switches", CPU_MAX_SWITCHES), -1;
	spec->sw[spec->nsw].feat = idx;
	spec->sw[spec->nsw++].on = on;
	return 0;
}

/* key=value switches; 1 when key is not one of the properties. */
static int parse_property(struct cpu_spec *spec, const char *key, size_t klen, const char *val,
			  size_t vlen, char *err, size_t errlen)
{
	int onoff = parse_onoff(val, vlen);

	if (name_eq(key, klen, "phys-bits")) {
		char *end;
		unsigned long n = strtoul(val, &end, 10);

		if (end != val + vlen || n < 32 || n > 52)
			return snprintf(err, errlen, "-cpu: phys-bits must be 32-52, got '%.*s'",
					(int)vlen, val),
			       -1;
		spec->phys_bits = n;
		return 0;
	}
	if (name_eq(key, klen, "vendor")) {
		if (vlen != 12)
			return snprintf(err, errlen,
					"-cpu: vendor must be 12 characters, got '%.*s'", (int)vlen,
					val),
			       -1;
		memcpy(spec->vendor, val, 12);
		return 0;
	}
	if (name_eq(key, klen, "migratable") || name_eq(key, klen, "enforce") ||
	    name_eq(key, klen, "check") || name_eq(key, klen, "host-phys-bits") ||
	    name_eq(key, klen, "l3-cache") || name_eq(key, klen, "pmu")) {
		if (onoff < 0)
			return snprintf(err, errlen, "-cpu: %.*s takes on or off", (int)klen, key),
			       -1;
		/* host-phys-bits=off with no phys-bits: QEMU's default 40 */
		if (name_eq(key, klen, "host-phys-bits") && !onoff && !spec->phys_bits)
			spec->phys_bits = 40;
		return 0;
	}
	if (onoff < 0)
		return snprintf(err, errlen, "-cpu: %.*s takes on or off, got '%.*s'", (int)klen,
				key, (int)vlen, val),
		       -1;
	return add_switch(spec, key, klen, onoff, err, errlen);
}

static int parse_switch(struct cpu_spec *spec, const char *p, size_t len, char *err, size_t errlen)
{
	const char *eq = memchr(p, '=', len);

	if (len >= 2 && (p[0] == '+' || p[0] == '-'))
		return add_switch(spec, p + 1, len - 1, p[0] == '+', err, errlen);
	if (eq)
		return parse_property(spec, p, eq - p, eq + 1, len - (eq - p) - 1, err, errlen);
	if (name_eq(p, len, "host-phys-bits") || name_eq(p, len, "enforce") ||
	    name_eq(p, len, "check"))
		return 0;
	if (feature_index(p, len) >= 0) /* a bare feature name turns it on */
		return add_switch(spec, p, len, true, err, errlen);
	return snprintf(err, errlen,
			"-cpu: expected +feature, -feature or feature=on|off, got '%.*s'", (int)len,
			p),
	       -1;
}

int cpu_spec_parse(const char *arg, struct cpu_spec *spec, char *err, size_t errlen)
{
	const char *p, *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);

	memset(spec, 0, sizeof(*spec));
	if (parse_model(arg, len, spec) < 0)
		return snprintf(err, errlen,
				"-cpu: unknown model '%.*s' (host, max, baseline, qemu64, kvm64, "
				"Opteron_G1, IvyBridge, Skylake-Server)",
				(int)len, arg),
		       -1;
	for (p = comma; p && *p; p = comma) {
		p++;
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len && parse_switch(spec, p, len, err, errlen) < 0)
			return -1;
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

/* Clear, in the model's words, every bit the list of names does not hold. */
static void keep_only(struct kvm_cpuid2 *c, const char *list)
{
	__u32 mask[NWORDS] = {0};

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");
		int idx = n ? feature_index(p, n) : -1;

		for (unsigned w = 0; idx >= 0 && w < NWORDS; w++)
			if (model_words[w].leaf == features[idx].leaf &&
			    model_words[w].sub == features[idx].sub &&
			    model_words[w].reg == features[idx].reg)
				mask[w] |= 1u << features[idx].bit;
		p += n + (p[n] == ' ');
	}
	for (unsigned w = 0; w < NWORDS; w++) {
		struct kvm_cpuid_entry2 *e = find(c, model_words[w].leaf, model_words[w].sub);

		if (e)
			*reg_of(e, model_words[w].reg) &= mask[w];
	}
}

static void set_feature(struct kvm_cpuid2 *c, const struct feature *f, bool on)
{
	struct kvm_cpuid_entry2 *e = find(c, f->leaf, f->sub);

	if (!e)
		return;
	if (on)
		*reg_of(e, f->reg) |= 1u << f->bit;
	else
		*reg_of(e, f->reg) &= ~(1u << f->bit);
}

static void hide_list(struct kvm_cpuid2 *c, const char *list)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");

		if (n)
			set_feature(c, &features[feature_index(p, n)], false);
		p += n + (p[n] == ' ');
	}
}

static bool has_feature(struct kvm_cpuid2 *c, const struct feature *f)
{
	struct kvm_cpuid_entry2 *e = find(c, f->leaf, f->sub);

	return e && (*reg_of(e, f->reg) >> f->bit & 1);
}

/* +feat: only what KVM offers (checked on the entries before the model
 * masked them); the rest is left out with one warning, as QEMU does. */
static void apply_switches(struct kvm_cpuid2 *c, const struct cpu_spec *spec, const bool *offered)
{
	static bool warned;

	for (unsigned i = 0; i < spec->nsw; i++) {
		const struct feature *f = &features[spec->sw[i].feat];
		bool on = spec->sw[i].on && offered[i];

		if (spec->sw[i].on && !offered[i] && !warned)
			fprintf(stderr, "vmm: warning: KVM does not offer CPU feature '%s'\n",
				f->name);
		warned |= spec->sw[i].on && !offered[i];
		set_feature(c, f, on);
	}
}

/* Leaves 0xB and 0x1F, one level per subleaf: the APIC ID bits below the
 * next level, the logical processors in it, the level type. */
#define LEVEL_INVALID 0u
#define LEVEL_SMT 1u
#define LEVEL_CORE 2u
#define LEVEL_DIE 5u

static void set_level(struct kvm_cpuid_entry2 *e, unsigned shift, unsigned count, unsigned type,
		      unsigned apic_id)
{
	e->eax = shift;
	e->ebx = count & 0xffff;
	e->ecx = type << 8 | (e->index & 0xff);
	e->edx = apic_id;
}

static void set_extended_topology(struct kvm_cpuid_entry2 *e, const struct cpu_topology *t,
				  unsigned apic_id)
{
	unsigned per_die = t->cores * t->threads, per_pkg = per_die * t->dies;

	if (e->function == 0x1f && t->dies < 2) { /* QEMU: leaf 0x1F only with dies */
		e->eax = e->ebx = e->ecx = e->edx = 0;
		return;
	}
	if (e->index == 0)
		set_level(e, topo_core_offset(t), t->threads, LEVEL_SMT, apic_id);
	else if (e->index == 1 && e->function == 0xb)
		set_level(e, topo_pkg_offset(t), per_die, LEVEL_CORE, apic_id); /* QEMU 7.2's */
	else if (e->index == 1)
		set_level(e, topo_die_offset(t), per_die, LEVEL_CORE, apic_id);
	else if (e->index == 2 && e->function == 0x1f)
		set_level(e, topo_pkg_offset(t), per_pkg, LEVEL_DIE, apic_id);
	else
		set_level(e, 0, 0, LEVEL_INVALID, apic_id);
}

/* Leaf 4 (KVM passes the host's caches): cores per package in 31:26, the
 * logical processors sharing the cache in 25:14 (a thread's siblings for
 * L1 and L2, the package for L3). */
static void set_cache_sharing(struct kvm_cpuid_entry2 *e, const struct cpu_topology *t)
{
	unsigned level = e->eax >> 5 & 7, sharing;

	if (!(e->eax & 0x1f)) { /* no cache: the list's end */
		e->eax &= 0x3fff;
		return;
	}
	sharing = level >= 3 ? 1u << topo_pkg_offset(t) : 1u << topo_core_offset(t);
	e->eax = (e->eax & 0x3fff) | (t->cores - 1) << 26 | (sharing - 1) << 14;
}

static void set_topology(struct kvm_cpuid2 *c, const struct cpu_topology *t, unsigned index)
{
	/* QEMU 7.2 counts cores * threads as a package's logical processors
	 * (its nr_cores leaves dies out) in leaves 1, 0xB.1, 4, 0x80000008 */
	unsigned apic_id = topo_apic_id(t, index), per_pkg = t->cores * t->threads;
	struct topo_ids id = topo_ids_of(t, index);

	for (unsigned i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1) {
			e->ebx = (e->ebx & 0x0000ffffu) | (per_pkg & 0xff) << 16 | apic_id << 24;
			if (per_pkg > 1)
				e->edx |= 1u << 28; /* HTT: the count above is valid */
			else
				e->edx &= ~(1u << 28);
		} else if (e->function == 4) {
			set_cache_sharing(e, t);
		} else if (e->function == 0xb || e->function == 0x1f) {
			set_extended_topology(e, t, apic_id);
		} else if (e->function == 0x80000008) {
			/* AMD: threads per package - 1, the APIC ID bits for them */
			e->ecx = (e->ecx & ~0xf0ffu) | (per_pkg - 1) | topo_pkg_offset(t) << 12;
		} else if (e->function == 0x8000001e) {
			/* AMD: extended APIC ID, threads per core and core id, node */
			e->eax = apic_id;
			e->ebx = (t->threads - 1) << 8 | ((id.die * t->cores + id.core) & 0xff);
			e->ecx = (t->dies - 1) << 8 | ((id.socket * t->dies + id.die) & 0xff);
			e->edx = 0;
		}
	}
}

/* XSAVE state components follow the features that use them. */
static void fix_xsave(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *l1 = find(c, 1, 0), *l7 = find(c, 7, 0), *xs = find(c, 0xd, 0);

	if (!l1 || !xs)
		return;
	if (!(l1->ecx & (1u << 26))) {
		l1->ecx &= ~(1u << 27 | 1u << 28); /* OSXSAVE, AVX need XSAVE */
		for (unsigned i = 0; i < c->nent; i++)
			if (c->entries[i].function == 0xd)
				c->entries[i].eax = c->entries[i].ebx = c->entries[i].ecx =
					c->entries[i].edx = 0;
		return;
	}
	if (!(l1->ecx & (1u << 28)))
		xs->eax &= ~(1u << 2); /* YMM */
	if (!l7 || !(l7->ebx & (1u << 16)))
		xs->eax &= ~(7u << 5); /* opmask, ZMM */
	if (!l7 || !(l7->ecx & (1u << 3)))
		xs->eax &= ~(1u << 9); /* PKRU */
}

static void set_vendor_and_phys_bits(struct kvm_cpuid2 *c, const struct cpu_spec *spec)
{
	struct kvm_cpuid_entry2 *l0 = find(c, 0, 0), *l88 = find(c, 0x80000008, 0);

	if (spec->vendor[0] && l0) {
		memcpy(&l0->ebx, spec->vendor, 4);
		memcpy(&l0->edx, spec->vendor + 4, 4);
		memcpy(&l0->ecx, spec->vendor + 8, 4);
	}
	if (spec->phys_bits && l88)
		l88->eax = (l88->eax & ~0xffu) | spec->phys_bits;
}

void cpuid_apply(struct kvm_cpuid2 *c, const struct cpu_spec *spec, const struct cpu_topology *topo,
		 unsigned index)
{
	/* without a topology: a single-core package per vCPU */
	const struct cpu_topology own = {index + 1, index + 1, 1, 1, 1, index + 1};
	bool offered[CPU_MAX_SWITCHES];
	const char *list = models[spec->model].features;

	for (unsigned i = 0; i < spec->nsw; i++)
		offered[i] = has_feature(c, &features[spec->sw[i].feat]) ||
			     !strcmp(features[spec->sw[i].feat].name, "hypervisor");
	if (spec->model == CPU_MODEL_BASELINE)
		hide_list(c, baseline_hides);
	if (list) {
		struct kvm_cpuid_entry2 *l71 = find(c, 7, 1);

		keep_only(c, list);
		if (l71) /* leaf 7.1 (AVX-VNNI, ...): no named model here has any */
			l71->eax = l71->ebx = l71->ecx = l71->edx = 0;
	}
	/* Every model says "hypervisor" (as QEMU and Firecracker do; a KVM
	 * nested on another may not report it): without it Linux takes itself
	 * for bare hardware, never looks at the KVM leaves, and runs without
	 * kvmclock (refined-jiffies when the TSC cannot be calibrated).
	 * -hypervisor still turns it off. */
	set_feature(c, &features[feature_index("hypervisor", 10)], true);
	apply_switches(c, spec, offered);
	fix_xsave(c);
	set_vendor_and_phys_bits(c, spec);
	set_topology(c, topo ? topo : &own, index);
}

/* The subleaf, added (zero, index significant) when KVM did not list it. */
static bool ensure_subleaf(struct kvm_cpuid2 *c, unsigned capacity, unsigned leaf, unsigned sub)
{
	if (find(c, leaf, sub))
		return true;
	if (c->nent >= capacity)
		return false;
	c->entries[c->nent++] = (struct kvm_cpuid_entry2){
		.function = leaf, .index = sub, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX};
	return true;
}

void cpuid_add_topology_leaves(struct kvm_cpuid2 *c, unsigned capacity,
			       const struct cpu_topology *topo)
{
	/* 0x1F only where KVM lists it: QEMU's -cpu host keeps the host's
	 * level too (seen with dies=2: no 0x1F under QEMU on such a host) */
	for (unsigned sub = 0; sub < 3; sub++)
		ensure_subleaf(c, capacity, 0xb, sub);
}

void cpuid_set_tsc_leaf(struct kvm_cpuid2 *c, unsigned tsc_khz)
{
	struct kvm_cpuid_entry2 *base = find(c, 0x40000000, 0), *e = find(c, 0x40000010, 0);

	if (!tsc_khz || !base)
		return;
	if (!e) {
		e = &c->entries[c->nent++];
		*e = (struct kvm_cpuid_entry2){.function = 0x40000010};
	}
	if (base->eax < 0x40000010)
		base->eax = 0x40000010;
	e->eax = tsc_khz;
	e->ebx = 1000000; /* KVM's local APIC timer counts at 1 GHz */
}
