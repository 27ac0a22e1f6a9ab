/* cpuid.h — CPU models for -cpu: KVM_GET_SUPPORTED_CPUID filtered through
 * a model and +feat/-feat switches, with the topology of -smp (one
 * single-core package per vCPU, as in the MP table and MADT). */
#ifndef VMM_CPUID_H
#define VMM_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>

#define CPU_MAX_SWITCHES 32

enum cpu_model { CPU_MODEL_HOST, CPU_MODEL_VMM, CPU_MODEL_KVM64 };

struct cpu_spec {
	enum cpu_model model;
	unsigned nsw;
	struct {
		unsigned feat;	/* index into the feature table */
		bool on;
	} sw[CPU_MAX_SWITCHES];
};

/* Parse "MODEL[,+feat|-feat]..." (models: host, vmm (default), kvm64).
 * 0, or -1 with a one-line reason in err. */
int cpu_spec_parse(const char *arg, struct cpu_spec *spec, char *err, size_t errlen);
/* Rewrite the supported entries in c for vCPU apic_id: model, switches,
 * topology. The same spec gives the same CPUID on every host that has the
 * model's features (host: whatever KVM offers). */
void cpuid_apply(struct kvm_cpuid2 *c, const struct cpu_spec *spec, unsigned apic_id);

#endif /* VMM_CPUID_H */
