/* monitor.h — the HMP-style monitor (help, info ..., x, xp, stop, cont,
 * system_reset, quit) on a chardev. Commands run on the main thread.
 *
 * Others add `info` subcommands with monitor_add_info(): the handler
 * prints into a FILE (so devices need not know the monitor).
 */
#ifndef VMM_MONITOR_H
#define VMM_MONITOR_H

#include <stdio.h>

#include "vmm/chardev.h"
#include "vmm/machine.h"

struct monitor;

/* chr may be NULL: a monitor only driven by monitor_execute(). */
struct monitor *monitor_new(struct machine *m, struct chardev *chr);
void monitor_free(struct monitor *mon);
/* Register `info NAME`; 0 or -ENOSPC. */
int monitor_add_info(const char *name, const char *help, void (*fn)(void *opaque, FILE *out),
		     void *opaque);
/* Register `info NAME [ARG]`: fn gets the argument or NULL. */
int monitor_add_info_arg(const char *name, const char *help,
			 void (*fn)(void *opaque, const char *arg, FILE *out), void *opaque);
/* Register a command NAME (after the built-in ones); fn gets the words of
 * the line, argv[0] the name. 0 or -ENOSPC. */
int monitor_add_cmd(const char *name, const char *args, const char *help,
		    void (*fn)(void *opaque, int argc, char **argv, FILE *out), void *opaque);
/* Run one command line, output to out (exported for tests). */
void monitor_execute(struct monitor *mon, const char *line, FILE *out);

/* hmp_extra.c: info version|kvm|name|uuid; memsave / pmemsave. */
void hmp_extra_init(struct machine *m);
void hmp_save_memory(struct machine *m, int argc, char **argv, FILE *out, bool virt);
/* dump.c: dump-guest-memory FILE (an ELF core of RAM and the vCPUs). */
void hmp_dump_guest_memory(struct machine *m, int argc, char **argv, FILE *out);

/* net.c: hostfwd_add / hostfwd_remove [netdev_id] RULE, set_link NAME on|off. */
void hmp_hostfwd(struct machine *m, int argc, char **argv, FILE *out, bool add);
void hmp_set_link(struct machine *m, int argc, char **argv, FILE *out);
/* cdrom.c: change DEVICE FILE, eject [-f] DEVICE; info block's CD-ROM lines. */
void hmp_change(struct machine *m, int argc, char **argv, FILE *out);
void hmp_eject(struct machine *m, int argc, char **argv, FILE *out);
void hmp_cdrom_info(struct machine *m, unsigned index, FILE *out);

/* x/xp format: /[count][format][size] — exported for tests. */
struct mon_fmt {
	unsigned count;
	char format; /* x d u o c */
	unsigned size; /* 1, 2, 4, 8 */
};
int monitor_parse_fmt(const char *s, struct mon_fmt *f);

#endif /* VMM_MONITOR_H */
