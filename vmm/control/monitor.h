/* monitor.h — the HMP-style monitor (help, info ..., x, xp, stop, cont,
 * system_reset, quit) on a chardev. Commands run on the main thread.
 *
 * The commands and `info` views are one table in monitor.c; the machine's
 * modules provide the functions it calls (they print into a FILE and never
 * include this header).
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
/* For test programs only (tests/integration/sandbox_hooks.c): an extra
 * `info NAME`, listed first; 0 or -ENOSPC. */
int monitor_add_info(const char *name, const char *help, void (*fn)(void *opaque, FILE *out),
		     void *opaque);
/* Run one command line, output to out (exported for tests). */
void monitor_execute(struct monitor *mon, const char *line, FILE *out);

/* hmp_extra.c: info version|kvm|name|uuid|chardev|qtree (opaque: the
 * machine), gdbserver, memsave / pmemsave. */
void hmp_info_version(void *opaque, FILE *out);
void hmp_info_kvm(void *opaque, FILE *out);
void hmp_info_name(void *opaque, FILE *out);
void hmp_info_uuid(void *opaque, FILE *out);
void hmp_info_chardev(void *opaque, FILE *out);
void hmp_info_qtree(void *opaque, FILE *out);
void hmp_gdbserver(void *opaque, int argc, char **argv, FILE *out);
/* ringbuf_read DEVICE SIZE (read true) / ringbuf_write DEVICE DATA: the
 * QMP commands, with QEMU's HMP output (control bytes as \uXXXX). */
void hmp_ringbuf(struct machine *m, int argc, char **argv, FILE *out, bool read);
void hmp_save_memory(struct machine *m, int argc, char **argv, FILE *out, bool virt);
/* dump.c: dump-guest-memory FILE (an ELF core of RAM and the vCPUs). */
void hmp_dump_guest_memory(struct machine *m, int argc, char **argv, FILE *out);

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
