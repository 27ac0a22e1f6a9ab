/* preflight.c — every input file and rule checked before /dev/kvm opens.
 *
 * A user on a machine without KVM (or with a typo in a path) meets the
 * input error first, in one line, rather than fixing KVM and then meeting
 * the next one: the disks open as the board will open them, -kernel is
 * read and recognised, -initrd's files and -bios are readable, user
 * networking's options and hostfwd rules parse. What needs the machine
 * (a host port already taken, guest RAM too small) is still found later.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/machine.h"

static int check_drive(const struct drive_spec *d, const struct vmm_config *cfg, const char *what,
		       char *err, size_t errlen)
{
	struct block_opts o;
	struct block_dev *b;
	char why[256];

	if (!d->file)
		return 0;
	drive_block_opts(d, cfg->snapshot, &o);
	/* an incoming migration's source still holds the image's locks */
	o.inactive = cfg->incoming != NULL;
	/* The image is checked read-only (a format probe warns once, when the
	 * board opens it); write permission is asked of the file itself. */
	bool writable = !o.read_only && !o.snapshot;

	o.read_only = true;
	o.snapshot = false;
	b = block_open(&o, why, sizeof(why));
	if (!b) {
		snprintf(err, errlen, "%s: %s", what, why);
		return -1;
	}
	if (writable && access(d->file, W_OK) < 0) {
		snprintf(err, errlen,
			 "%s: cannot open '%s' for writing: %s (readonly=on, or "
			 "-snapshot, opens it read-only)",
			 what, d->file, strerror(errno));
		block_close(b);
		return -1;
	}
	block_close(b);
	return 0;
}

static int check_drives(const struct vmm_config *cfg, char *err, size_t errlen)
{
	static const char *const ide[CLI_MAX_DRIVES] = {"-hda", "-hdb",		  "-hdc",
							"-hdd", "-drive index=4", "-drive index=5"};
	char what[64];

	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++)
		if (check_drive(&cfg->drives[i], cfg, ide[i], err, errlen) < 0)
			return -1;
	for (unsigned i = 0; i < cfg->n_vdrives; i++) {
		snprintf(what, sizeof(what), "-drive %s", cfg->vdrives[i].id);
		if (check_drive(&cfg->vdrives[i], cfg, what, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int check_netdevs(const struct vmm_config *cfg, char *err, size_t errlen)
{
	char why[256];

	for (unsigned i = 0; i < cfg->n_netdevs; i++) {
		const struct netdev_spec *s = &cfg->netdevs[i];

		if (strcmp(s->type, "user") || netdev_user_check(s->opts, why, sizeof(why)) == 0)
			continue;
		snprintf(err, errlen, "-netdev %s,id=%s: %s", s->type, s->id, why);
		return -1;
	}
	return 0;
}

/* No -kernel: the firmware image, loaded and dropped. */
static int check_bios(const struct vmm_config *cfg, char *err, size_t errlen)
{
	struct bios_image img = {0};
	char why[256];

	if (cfg->kernel)
		return 0;
	if (bios_load(cfg->bios, &img, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "-bios: %s", why);
		return -1;
	}
	bios_free(&img);
	return 0;
}

int preflight_check(const struct vmm_config *cfg, char *err, size_t errlen)
{
	if (cfg->lv.machine_none) /* QMP only: no guest inputs are used */
		return 0;
	return check_drives(cfg, err, errlen) < 0 || boot_check_kernel(cfg, err, errlen) < 0 ||
			       check_bios(cfg, err, errlen) < 0 ||
			       check_netdevs(cfg, err, errlen) < 0
		       ? -1
		       : 0;
}
