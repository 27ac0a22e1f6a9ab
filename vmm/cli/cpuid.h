/* cpuid.h — CPU models for -cpu: KVM_GET_SUPPORTED_CPUID filtered through
 * a model and QEMU-style feature switches, with the topology of -smp (one
 * single-core package per vCPU, as in the MP table and MADT). */
#ifndef VMM_CPUID_H
#define VMM_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>

#define CPU_MAX_SWITCHES 32

/* host and max: everything KVM supports (the default). baseline (old name
 * vmm): host minus what a KVM that emulates guest ring 0 cannot run. The
 * rest are QEMU's named models, as feature lists. */
enum cpu_model {
	CPU_MODEL_HOST,
	CPU_MODEL_BASELINE,
	CPU_MODEL_KVM64,
	CPU_MODEL_QEMU64,
	CPU_MODEL_OPTERON_G1,
	CPU_MODEL_IVYBRIDGE,
	CPU_MODEL_SKYLAKE_SERVER,
	CPU_MODEL_COUNT
};

struct cpu_spec {
	enum cpu_model model;
	unsigned nsw;
	struct {
		unsigned feat; /* index into the feature table */
		bool on;
	} sw[CPU_MAX_SWITCHES];
	unsigned phys_bits; /* 0: KVM's (host-phys-bits) */
	char vendor[13];    /* "" : the host's */
};

/* -smp's values as given (vmm/topology.c). */
enum { SMP_CPUS, SMP_SOCKETS, SMP_DIES, SMP_CORES, SMP_THREADS, SMP_MAXCPUS, SMP_NKEYS };
struct smp_request {
	unsigned v[SMP_NKEYS];
	bool given[SMP_NKEYS];
};

/* The resolved topology: cpus vCPUs, sockets * dies * cores * threads. */
struct cpu_topology {
	unsigned cpus, sockets, dies, cores, threads, maxcpus;
};

struct topo_ids {
	unsigned socket, die, core, thread;
};

/* The xAPIC limit: 255 is the broadcast ID, and the I/O APIC takes the
 * ID after the last CPU's. */
#define TOPO_MAX_APIC_ID 254u

/* "[cpus=]N[,sockets=S][,dies=D][,cores=C][,threads=T][,maxcpus=M]":
 * 0, or -1 with QEMU's message ("Parameter 'smp.x' is unexpected"). */
int smp_request_parse(const char *arg, struct smp_request *r, char *err, size_t errlen);
/* The missing values computed as QEMU 7.2 does; an inconsistent topology,
 * more than max_cpus CPUs (QEMU's message names machine), maxcpus above
 * cpus (no hot-plug) or APIC IDs beyond xAPIC's are errors. A request
 * with nothing given is one CPU. */
int smp_resolve(const struct smp_request *r, const char *machine, unsigned max_cpus,
		struct cpu_topology *t, char *err, size_t errlen);
/* vCPU index (0..cpus-1) to its place and APIC ID: thread, core, die and
 * socket fields from bit 0 up, each as wide as its count needs. */
static inline struct topo_ids topo_ids_of(const struct cpu_topology *t, unsigned index)
{
	return (struct topo_ids){
		.thread = index % t->threads,
		.core = index / t->threads % t->cores,
		.die = index / (t->threads * t->cores) % t->dies,
		.socket = index / (t->threads * t->cores * t->dies),
	};
}
unsigned topo_apic_id(const struct cpu_topology *t, unsigned index);
unsigned topo_core_offset(const struct cpu_topology *t);
unsigned topo_die_offset(const struct cpu_topology *t);
unsigned topo_pkg_offset(const struct cpu_topology *t);

/* Parse "MODEL[,+feat|-feat|feat=on|off|phys-bits=N|host-phys-bits[=on|off]|
 * vendor=V]..." with QEMU's model and feature names. 0, or -1 with a
 * one-line reason in err. */
int cpu_spec_parse(const char *arg, struct cpu_spec *spec, char *err, size_t errlen);
/* Rewrite the supported entries in c for vCPU index: model, switches,
 * topology (leaves 1, 4, 0xB, 0x1F, 0x80000008, 0x8000001E as QEMU fills
 * them; topo NULL: every vCPU its own single-core package, APIC ID index).
 * Idempotent on the same c. A +feat KVM cannot offer is left out (with a
 * warning once), as QEMU does without enforce. */
void cpuid_apply(struct kvm_cpuid2 *c, const struct cpu_spec *spec, const struct cpu_topology *topo,
		 unsigned index);
/* KVM may list only some subleaves of 0xB: add the ones the topology
 * fills (0xB.0-2), within capacity entries. Before cpuid_apply. */
void cpuid_add_topology_leaves(struct kvm_cpuid2 *c, unsigned capacity,
			       const struct cpu_topology *topo);
/* -cpu help: the models' names and descriptions, the feature names (NULL
 * past the end). */
const char *cpu_model_name(unsigned model);
const char *cpu_model_desc(unsigned model);
const char *cpu_feature_name(unsigned i);
/* Add KVM's timing leaf 0x40000010 (TSC and APIC bus kHz), as Firecracker,
 * cloud-hypervisor and QEMU's invtsc do; c must have room for one entry
 * more than nent. Nothing when tsc_khz is 0 or there are no KVM leaves. */
void cpuid_set_tsc_leaf(struct kvm_cpuid2 *c, unsigned tsc_khz);

#endif /* VMM_CPUID_H */
