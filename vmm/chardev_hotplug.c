/* chardev_hotplug.c — chardev-add and chardev-remove at run time (QMP and
 * HMP), what libvirt sends around device_add of a <channel>: the new
 * chardev is a -chardev given late (the same parser, the same table) and
 * is opened at once, as QEMU does (a pty's path is in the answer, a
 * socket listens). Until a device takes it, it is a spare chardev
 * (m->spare_chr[i], listed by query-chardev); a port's device_add takes
 * it and device_del gives it back. */
#include <stdio.h>
#include <string.h>

#include "vmm/chardev.h"
#include "vmm/machine.h"

static int find_def(const struct control_config *c, const char *id)
{
	for (unsigned i = 0; id[0] && i < c->n_chardevs; i++)
		if (!strcmp(c->chardevs[i].id, id))
			return (int)i;
	return -1;
}

/* Add and remove cycles must not use up the table: the entry just parsed
 * at n moves into the first one chardev-remove emptied. Its index now. */
static unsigned take_hole(struct machine *m, unsigned n)
{
	struct control_config *c = &m->cfg_rw->control;

	for (unsigned j = 0; j < n; j++)
		if (!c->chardevs[j].id[0] && !m->spare_chr[j]) {
			c->chardevs[j] = c->chardevs[n];
			memset(&c->chardevs[n], 0, sizeof(c->chardevs[n]));
			c->n_chardevs = n;
			return j;
		}
	return n;
}

static void drop_def(struct machine *m, unsigned i)
{
	struct control_config *c = &m->cfg_rw->control;

	memset(&c->chardevs[i], 0, sizeof(c->chardevs[i]));
	if (i + 1 == c->n_chardevs)
		c->n_chardevs = i;
}

int machine_chardev_add(struct machine *m, const char *opts, const char **pty, char *err,
			size_t errlen)
{
	struct control_config *c = m->cfg_rw ? &m->cfg_rw->control : NULL;
	struct chardev_spec spec;
	unsigned n, i;

	*pty = NULL;
	if (!c || !m->board_ready) {
		snprintf(err, errlen, "There is no guest");
		return -1;
	}
	n = c->n_chardevs;
	if (cli_parse_chardev_opt(m->cfg_rw, NULL, opts, err, errlen) < 0)
		return -1;
	i = take_hole(m, n);
	if (!c->chardevs[i].id[0]) {
		drop_def(m, i);
		snprintf(err, errlen, "Parameter 'id' is missing");
		return -1;
	}
	if (cli_chardev_spec(&c->chardevs[i], &spec, err, errlen) < 0)
		goto fail;
	if (spec.kind == CHARDEV_STDIO || spec.kind == CHARDEV_MON_STDIO) {
		snprintf(err, errlen, "chardev-add: stdio is only for the command line");
		goto fail;
	}
	/* a guest that runs is not held for a client (QEMU waits only at
	 * start-up) */
	spec.wait = spec.sock.wait = false;
	if (!(m->spare_chr[i] = chardev_new(&spec, m->host.loop, err, errlen)))
		goto fail;
	*pty = chardev_pty_path(m->spare_chr[i]);
	return (int)i;
fail:
	drop_def(m, i);
	return -1;
}

bool machine_chardev_exists(struct machine *m, const char *id)
{
	return m->cfg_rw && find_def(&m->cfg_rw->control, id) >= 0;
}

int machine_chardev_remove(struct machine *m, const char *id, char *err, size_t errlen)
{
	struct control_config *c = m->cfg_rw ? &m->cfg_rw->control : NULL;
	int i = c ? find_def(c, id) : -1;

	if (i < 0) {
		snprintf(err, errlen, "Chardev '%s' not found", id);
		return -1;
	}
	if (c->chardevs[i].used) { /* a serial port, monitor or virtio-serial port has it */
		snprintf(err, errlen, "Chardev '%s' is busy", id);
		return -1;
	}
	chardev_free(m->spare_chr[i]);
	m->spare_chr[i] = NULL;
	drop_def(m, (unsigned)i);
	return 0;
}

struct chardev *machine_chardev_take(struct machine *m, const char *id)
{
	int i = find_def(&m->cfg->control, id);
	struct chardev *chr = i >= 0 ? m->spare_chr[i] : NULL;

	if (chr)
		m->spare_chr[i] = NULL;
	return chr;
}

void machine_chardev_give_back(struct machine *m, const char *id, struct chardev *chr)
{
	struct control_config *c = &m->cfg_rw->control;
	int i = find_def(c, id);

	if (i >= 0)
		c->chardevs[i].used = false;
	if (!chr)
		return;
	if (i < 0 || m->spare_chr[i]) {
		chardev_free(chr);
		return;
	}
	chardev_detach_frontends(chr);
	m->spare_chr[i] = chr;
}

/* HMP chardev-add takes -chardev's text, as QEMU's does. */
void hmp_chardev(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	const char *pty;
	char err[256];
	int r;

	if (argc != 2) {
		fprintf(out, "usage: %s\n",
			add ? "chardev-add BACKEND,id=ID,..." : "chardev-remove ID");
		return;
	}
	r = add ? machine_chardev_add(m, argv[1], &pty, err, sizeof(err))
		: machine_chardev_remove(m, argv[1], err, sizeof(err));
	if (r < 0)
		fprintf(out, "Error: %s\n", err);
	else if (add && pty)
		fprintf(out, "char device redirected to %s (label %s)\n", pty,
			m->cfg->control.chardevs[r].id);
}
