/* topology.c — -smp as QEMU 7.2 reads it, and the APIC IDs it implies.
 *
 * -smp [cpus=]N[,sockets=S][,dies=D][,cores=C][,threads=T][,maxcpus=M]:
 * missing values are computed as QEMU 7.2's pc machines do (cores are
 * preferred over sockets), and the same inconsistencies are errors with
 * QEMU's wording. An APIC ID is a bit field per level, each level as wide
 * as its count needs (so with cores=3 the core field is 2 bits wide and
 * the IDs skip 3), which is what QEMU gives guests and what CPUID leaves
 * 0xB/0x1F describe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cpuid.h"

/* Keeps every product of the values within 64 bits. */
#define SMP_VALUE_MAX 65535u

static const char *const smp_keys[SMP_NKEYS] = {"cpus",	 "sockets", "dies",
						"cores", "threads", "maxcpus"};

static int parse_count(const char *s, size_t len, unsigned *v)
{
	char buf[24], *end;
	unsigned long long n;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	n = strtoull(buf, &end, 0);
	if (*end || n > 0xffffffffull)
		return -1;
	*v = (unsigned)n;
	return 0;
}

int smp_request_parse(const char *arg, struct smp_request *r, char *err, size_t errlen)
{
	const char *p = arg;
	bool first = true;

	memset(r, 0, sizeof(*r));
	while (*p) {
		size_t len = strcspn(p, ","), klen;
		const char *eq = memchr(p, '=', len), *val = p;
		int key = SMP_CPUS;

		if (eq) { /* key=value; a bare first value is cpus */
			klen = (size_t)(eq - p);
			for (key = 0; key < SMP_NKEYS; key++)
				if (strlen(smp_keys[key]) == klen &&
				    !strncmp(p, smp_keys[key], klen))
					break;
			if (key == SMP_NKEYS)
				return snprintf(err, errlen, "Parameter 'smp.%.*s' is unexpected",
						(int)klen, p),
				       -1;
			val = eq + 1;
		} else if (!first) {
			return snprintf(err, errlen, "Parameter 'smp.%.*s' is unexpected", (int)len,
					p),
			       -1;
		}
		if (parse_count(val, len - (size_t)(val - p), &r->v[key]) < 0)
			return snprintf(err, errlen, "Parameter 'smp.%s' expects integer",
					smp_keys[key]),
			       -1;
		if (r->v[key] > SMP_VALUE_MAX) /* far above any machine's limit */
			return snprintf(err, errlen, "Parameter 'smp.%s' is above %u",
					smp_keys[key], SMP_VALUE_MAX),
			       -1;
		r->given[key] = true;
		first = false;
		p += len + (p[len] == ',');
	}
	return 0;
}

static void hierarchy(const struct cpu_topology *t, char *buf, size_t len)
{
	snprintf(buf, len, "sockets (%u) * dies (%u) * cores (%u) * threads (%u)", t->sockets,
		 t->dies, t->cores, t->threads);
}

/* QEMU 7.2's rule: given values stay, cores are computed before sockets,
 * threads last; what is left over must multiply to maxcpus. */
static void fill_missing(struct cpu_topology *t)
{
	unsigned long long per; /* each value is at most SMP_VALUE_MAX: no overflow */

	t->dies = t->dies ? t->dies : 1;
	if (!t->cpus && !t->maxcpus) {
		t->sockets = t->sockets ? t->sockets : 1;
		t->cores = t->cores ? t->cores : 1;
		t->threads = t->threads ? t->threads : 1;
	} else {
		t->maxcpus = t->maxcpus ? t->maxcpus : t->cpus;
		if (!t->cores) {
			t->sockets = t->sockets ? t->sockets : 1;
			t->threads = t->threads ? t->threads : 1;
			per = t->sockets * t->dies * t->threads;
			t->cores = (unsigned)(t->maxcpus / per);
		} else if (!t->sockets) {
			t->threads = t->threads ? t->threads : 1;
			per = t->dies * t->cores * t->threads;
			t->sockets = (unsigned)(t->maxcpus / per);
		}
		if (!t->threads)
			t->threads = (unsigned)(t->maxcpus / ((unsigned long long)t->sockets *
							      t->dies * t->cores));
	}
	if (!t->maxcpus)
		t->maxcpus = t->sockets * t->dies * t->cores * t->threads;
	if (!t->cpus)
		t->cpus = t->maxcpus;
}

int smp_resolve(const struct smp_request *r, const char *machine, unsigned max_cpus,
		struct cpu_topology *t, char *err, size_t errlen)
{
	unsigned long long product;
	char h[128];

	for (int k = 0; k < SMP_NKEYS; k++)
		if (r->given[k] && !r->v[k]) {
			/* QEMU 7.2 warns and treats a 0 as not given */
			fprintf(stderr, "vmm: warning: Deprecated CPU topology (considered "
					"invalid): CPU topology parameters must be greater than "
					"zero\n");
			break;
		}
	*t = (struct cpu_topology){r->v[SMP_CPUS],  r->v[SMP_SOCKETS], r->v[SMP_DIES],
				   r->v[SMP_CORES], r->v[SMP_THREADS], r->v[SMP_MAXCPUS]};
	fill_missing(t);
	product = (unsigned long long)t->sockets * t->dies * t->cores * t->threads;
	hierarchy(t, h, sizeof(h));
	if (product != t->maxcpus)
		return snprintf(err, errlen,
				"Invalid CPU topology: product of the hierarchy must "
				"match maxcpus: %s != maxcpus (%u)",
				h, t->maxcpus),
		       -1;
	if (t->maxcpus < t->cpus)
		return snprintf(err, errlen,
				"Invalid CPU topology: maxcpus must be equal to or "
				"greater than smp: %s == maxcpus (%u) < smp_cpus (%u)",
				h, t->maxcpus, t->cpus),
		       -1;
	if (t->maxcpus > max_cpus)
		return snprintf(err, errlen,
				"Invalid SMP CPUs %u. The max CPUs supported by "
				"machine '%s' is %u",
				t->maxcpus, machine, max_cpus),
		       -1;
	if (t->maxcpus > t->cpus)
		return snprintf(err, errlen,
				"maxcpus=%u above the %u CPUs present needs CPU "
				"hot-plug, which vmm does not have",
				t->maxcpus, t->cpus),
		       -1;
	if (topo_apic_id(t, t->cpus - 1) > TOPO_MAX_APIC_ID)
		return snprintf(err, errlen,
				"this topology needs APIC IDs up to %u; vmm's xAPIC "
				"machine has at most %u",
				topo_apic_id(t, t->cpus - 1), TOPO_MAX_APIC_ID),
		       -1;
	return 0;
}

/* Bits a field holding 0..count-1 needs. */
static unsigned width(unsigned count)
{
	unsigned w = 0;

	while (count > 1u << w)
		w++;
	return w;
}

unsigned topo_core_offset(const struct cpu_topology *t)
{
	return width(t->threads);
}

unsigned topo_die_offset(const struct cpu_topology *t)
{
	return topo_core_offset(t) + width(t->cores);
}

unsigned topo_pkg_offset(const struct cpu_topology *t)
{
	return topo_die_offset(t) + width(t->dies);
}

unsigned topo_apic_id(const struct cpu_topology *t, unsigned index)
{
	struct topo_ids id = topo_ids_of(t, index);

	return id.socket << topo_pkg_offset(t) | id.die << topo_die_offset(t) |
	       id.core << topo_core_offset(t) | id.thread;
}
