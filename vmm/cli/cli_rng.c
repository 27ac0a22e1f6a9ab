/* cli_rng.c — the random number generator's options, as QEMU's:
 *   -object rng-random,id=ID[,filename=PATH]   (default /dev/urandom)
 *   -object rng-builtin,id=ID                  (getrandom(2))
 *   -device virtio-rng-pci[,rng=ID][,max-bytes=N][,period=MS][,id=NAME]
 *           [,bus=pci.0|pcie.0|ROOT-PORT-ID][,addr=SLOT[.FN]]
 * Without rng= the device gets a builtin source of its own, as in QEMU.
 * The files are opened here, at the end of parsing, before the machine
 * opens /dev/kvm: a path that cannot be read is reported first. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/cli/cli.h"

#define RNG_DEV_HELP                                                                               \
	"rng=ID of a -object rng-random or rng-builtin, max-bytes=N, period=MS, id=NAME, "         \
	"bus=pci.0|pcie.0|ROOT-PORT-ID, addr=SLOT[.FN] (slot 2-31; 0 behind a root port)"

static bool copy_str(char *dst, size_t size, const char *val)
{
	if (!val || !*val || strlen(val) >= size)
		return false;
	strcpy(dst, val);
	return true;
}

int cli_find_rng_object(const struct rng_config *r, const char *id)
{
	for (unsigned i = 0; id[0] && i < r->n_objects; i++)
		if (!strcmp(r->objects[i].id, id))
			return (int)i;
	return -1;
}

/* Where a new object goes: an entry object-del emptied, or the end. */
static int object_slot(struct rng_config *r)
{
	for (unsigned i = 0; i < r->n_objects; i++)
		if (!r->objects[i].id[0])
			return (int)i;
	return r->n_objects < CLI_MAX_RNG ? (int)r->n_objects++ : -1;
}

int cli_parse_rng_object(struct vmm_config *cfg, const char *type, char *props, char *err,
			 size_t errlen)
{
	struct rng_config *r = &cfg->rng;
	struct rng_object_spec o = {.fd = -1};
	bool builtin = !strcmp(type, "rng-builtin");
	char *key, *v;
	int slot;

	if (!builtin)
		strcpy(o.filename, "/dev/urandom");
	while (cli_next_kv(&props, &key, &v)) {
		bool ok = false;

		if (!strcmp(key, "id"))
			ok = copy_str(o.id, sizeof(o.id), v);
		else if (!builtin && !strcmp(key, "filename"))
			ok = copy_str(o.filename, sizeof(o.filename), v);
		if (!ok) {
			snprintf(err, errlen, "%s: invalid %s '%s' (id=ID%s)", type, key,
				 v ? v : "", builtin ? "" : ", filename=PATH");
			return -1;
		}
	}
	if (!o.id[0]) {
		snprintf(err, errlen, "%s: needs id=ID", type);
		return -1;
	}
	if (cli_find_rng_object(r, o.id) >= 0) {
		snprintf(err, errlen, "%s: duplicate id '%s'", type, o.id);
		return -1;
	}
	slot = object_slot(r);
	if (slot < 0) {
		snprintf(err, errlen, "too many rng objects (at most %d)", CLI_MAX_RNG);
		return -1;
	}
	r->objects[slot] = o;
	return slot;
}

/* max-bytes: 0 .. 2^63-1; period: 1 .. 2^32-1 ms (QEMU's limits). */
static bool rng_dev_prop(struct rng_dev_spec *d, const char *key, const char *v)
{
	int transport;
	uint64_t n;

	transport = cli_virtio_transport_prop(key, v);
	if (transport)
		return transport > 0;
	if (!strcmp(key, "rng"))
		return copy_str(d->rng, sizeof(d->rng), v);
	if (!strcmp(key, "id"))
		return copy_str(d->id, sizeof(d->id), v);
	if (!strcmp(key, "bus")) /* libvirt's bus=pci.0 (pcie.0 on q35), or a root port */
		return v && cli_parse_bus(v, d->bus, sizeof(d->bus)) == 0;
	if (!strcmp(key, "addr"))
		return v && cli_parse_pci_addr(v, &d->devfn) == 0 &&
		       (d->devfn >= 2 << 3 || d->devfn == 0); /* 0: behind a root port */
	if (!v || cli_parse_u64(v, &n) < 0)
		return false;
	if (!strcmp(key, "max-bytes") && n <= INT64_MAX) {
		d->max_bytes = n;
		return true;
	}
	if (!strcmp(key, "period") && n > 0 && n <= UINT32_MAX) {
		d->period_ms = (uint32_t)n;
		return true;
	}
	return false;
}

int cli_parse_virtio_rng(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct rng_config *r = &cfg->rng;
	struct rng_dev_spec d = {
		.object = -1, .max_bytes = INT64_MAX, .period_ms = 1u << 16, .devfn = -1};
	char *key, *v;

	while (props && cli_next_kv(&props, &key, &v)) {
		if (!rng_dev_prop(&d, key, v)) {
			snprintf(err, errlen, "virtio-rng-pci: invalid %s '%s' (%s)", key,
				 v ? v : "", RNG_DEV_HELP);
			return -1;
		}
	}
	if (r->n_devs == CLI_MAX_RNG) {
		snprintf(err, errlen, "too many virtio-rng-pci devices (at most %d)", CLI_MAX_RNG);
		return -1;
	}
	r->devs[r->n_devs++] = d;
	return 0;
}

/* Readable, non-blocking (a FIFO that has nothing must not stall the
 * device's thread), and not a directory. */
static int open_source(struct rng_object_spec *o, char *err, size_t errlen)
{
	struct stat st;

	o->fd = open(o->filename, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (o->fd >= 0 && fstat(o->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(o->fd);
		o->fd = -1;
		errno = EISDIR;
	}
	if (o->fd < 0) {
		snprintf(err, errlen, "-object rng-random,id=%s: cannot open '%s': %s", o->id,
			 o->filename, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_resolve_rng(struct vmm_config *cfg, char *err, size_t errlen)
{
	struct rng_config *r = &cfg->rng;

	for (unsigned i = 0; i < r->n_devs; i++) {
		struct rng_dev_spec *d = &r->devs[i];

		if (!d->rng[0])
			continue;
		d->object = cli_find_rng_object(r, d->rng);
		if (d->object < 0) {
			snprintf(err, errlen,
				 "-device virtio-rng-pci: no -object rng-random or rng-builtin "
				 "with id=%s",
				 d->rng);
			return -1;
		}
	}
	for (unsigned i = 0; i < r->n_objects; i++)
		if (r->objects[i].filename[0] && r->objects[i].fd < 0 &&
		    open_source(&r->objects[i], err, errlen) < 0)
			return -1;
	return 0;
}

int cli_add_rng_object(struct vmm_config *cfg, const char *type, const char *props, char *err,
		       size_t errlen)
{
	char buf[512];
	int i;

	if (strcmp(type, "rng-random") && strcmp(type, "rng-builtin")) {
		snprintf(err, errlen, "object type '%s': vmm adds rng-random and rng-builtin",
			 type);
		return -1;
	}
	if (snprintf(buf, sizeof(buf), "%s", props) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "%s: properties too long", type);
		return -1;
	}
	i = cli_parse_rng_object(cfg, type, buf, err, errlen);
	if (i < 0)
		return -1;
	if (cfg->rng.objects[i].filename[0] && open_source(&cfg->rng.objects[i], err, errlen) < 0) {
		cli_remove_rng_object(cfg, (unsigned)i);
		return -1;
	}
	return i;
}

void cli_remove_rng_object(struct vmm_config *cfg, unsigned i)
{
	struct rng_config *r = &cfg->rng;

	if (r->objects[i].fd >= 0)
		close(r->objects[i].fd);
	memset(&r->objects[i], 0, sizeof(r->objects[i]));
	r->objects[i].fd = -1;
	while (r->n_objects && !r->objects[r->n_objects - 1].id[0])
		r->n_objects--;
}

void cli_close_rng(struct vmm_config *cfg)
{
	for (unsigned i = 0; i < cfg->rng.n_objects; i++) {
		if (cfg->rng.objects[i].fd >= 0)
			close(cfg->rng.objects[i].fd);
		cfg->rng.objects[i].fd = -1;
	}
}
