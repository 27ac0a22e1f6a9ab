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

/* Parse "MODEL[,+feat|-feat|feat=on|off|phys-bits=N|host-phys-bits[=on|off]|
 * vendor=V]..." with QEMU's model and feature names. 0, or -1 with a
 * one-line reason in err. */
int cpu_spec_parse(const char *arg, struct cpu_spec *spec, char *err, size_t errlen);
/* Rewrite the supported entries in c for vCPU apic_id: model, switches,
 * topology. Idempotent on the same c. A +feat KVM cannot offer is left out
 * (with a warning once), as QEMU does without enforce. */
void cpuid_apply(struct kvm_cpuid2 *c, const struct cpu_spec *spec, unsigned apic_id);
/* Add KVM's timing leaf 0x40000010 (TSC and APIC bus kHz), as Firecracker,
 * cloud-hypervisor and QEMU's invtsc do; c must have room for one entry
 * more than nent. Nothing when tsc_khz is 0 or there are no KVM leaves. */
void cpuid_set_tsc_leaf(struct kvm_cpuid2 *c, unsigned tsc_khz);

#endif /* VMM_CPUID_H */
