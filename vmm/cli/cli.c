/* cli.c — the command line, QEMU spellings, one table.
 *
 * Every option is one row of options[]: its name, the metavariable of its
 * value (NULL for a flag), the parser and the --help line. Parsers get the
 * row, so generic ones (string, flag) find their field through `offset`.
 * A parser returns 0, or -1 with the reason in err; cli_parse() prefixes
 * the option's name, so every message reads "-m: ...".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "vmm/cli/cli.h"

struct cli_option;
typedef int (*cli_parse_fn)(struct vmm_config *cfg, const struct cli_option *opt,
			    const char *val, char *err, size_t errlen);

struct cli_option {
	const char *name;
	const char *metavar; /* NULL: takes no value */
	cli_parse_fn parse;
	size_t offset; /* field for the generic parsers */
	const char *help;
};

#define MIB (1ull << 20)
#define MIN_RAM (2 * MIB)
#define MAX_RAM (1ull << 40)

/* ------------------------------------------------------ generic parsers */

static int cli_parse_string(struct vmm_config *cfg, const struct cli_option *opt,
			    const char *val, char *err, size_t errlen)
{
	if (!*val) {
		snprintf(err, errlen, "empty value");
		return -1;
	}
	*(const char **)((char *)cfg + opt->offset) = val;
	return 0;
}

/* A command line may be empty: QEMU takes `-append ""`, and scripts pass it. */
static int cli_parse_text(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			  char *err, size_t errlen)
{
	*(const char **)((char *)cfg + opt->offset) = val;
	return 0;
}

static int cli_parse_flag(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			  char *err, size_t errlen)
{
	*(bool *)((char *)cfg + opt->offset) = true;
	return 0;
}

/* Strict unsigned decimal or 0x-hex: the whole string, no sign. */
int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/* ------------------------------------------------------------ -m SIZE */

int cli_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t n, mult = MIB; /* a bare number is MiB, as in QEMU */
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'B':
			mult = 1;
			break;
		case 'K':
			mult = 1ull << 10;
			break;
		case 'M':
			mult = MIB;
			break;
		case 'G':
			mult = 1ull << 30;
			break;
		case 'T':
			mult = 1ull << 40;
			break;
		default:
			return -1;
		}
		if (end[1] && !((end[1] == 'i' || end[1] == 'B') && !end[2]))
			return -1;
	}
	if (n > UINT64_MAX / mult)
		return -1;
	*bytes = n * mult;
	return 0;
}

static int parse_memory(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			char *err, size_t errlen)
{
	uint64_t bytes;

	if (!strncmp(val, "size=", 5))
		val += 5;
	if (cli_parse_size(val, &bytes) < 0) {
		snprintf(err, errlen, "invalid size '%s' (examples: 512, 512M, 2G)", val);
		return -1;
	}
	if (bytes < MIN_RAM || bytes > MAX_RAM) {
		snprintf(err, errlen, "%s is out of range (2M to 1T)", val);
		return -1;
	}
	cfg->ram_size = (bytes + 0xfff) & ~0xfffull;
	return 0;
}

/* ------------------------------------------------------------ -smp N */

/* Kept as given: the topology is resolved once -machine is known
 * (QEMU's limit message names the machine). */
static int parse_smp(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		     char *err, size_t errlen)
{
	return smp_request_parse(val, &cfg->smp_req, err, errlen);
}

static int resolve_smp(struct vmm_config *cfg, char *err, size_t errlen)
{
	char why[256];

	if (smp_resolve(&cfg->smp_req, cfg->q35 ? "pc-q35-7.2" : "pc-i440fx-7.2", CLI_MAX_SMP,
			&cfg->topo, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "-smp: %s", why);
		return -1;
	}
	cfg->smp = cfg->topo.cpus;
	return 0;
}

/* ------------------------------------------------------- chardev specs */

/* unix:PATH[,server][,nowait] and the server=on / wait=off spellings. */
static int parse_unix(const char *s, struct chardev_spec *spec, char *err, size_t errlen)
{
	const char *comma = strchr(s, ',');
	size_t plen = comma ? (size_t)(comma - s) : strlen(s);
	bool server = false;

	spec->kind = CHARDEV_UNIX;
	spec->wait = true;

	if (plen >= sizeof(spec->path)) {
		snprintf(err, errlen, "unix: socket path too long");
		return -1;
	}
	memcpy(spec->path, s, plen);
	spec->path[plen] = 0;
	if (!*spec->path) {
		snprintf(err, errlen, "unix: needs a socket path");
		return -1;
	}
	while (comma) {
		const char *opt = comma + 1;
		size_t len;

		comma = strchr(opt, ',');
		len = comma ? (size_t)(comma - opt) : strlen(opt);
		if ((len == 6 && !strncmp(opt, "server", 6)) || (len == 9 && !strncmp(opt, "server=on", 9)))
			server = true;
		else if ((len == 6 && !strncmp(opt, "nowait", 6)) || (len == 8 && !strncmp(opt, "wait=off", 8)))
			spec->wait = false;
		else if (len == 7 && !strncmp(opt, "wait=on", 7))
			spec->wait = true;
		else {
			snprintf(err, errlen, "unknown unix socket option '%.*s'", (int)len, opt);
			return -1;
		}
	}
	if (!server) {
		snprintf(err, errlen, "unix: only server sockets are supported (add ,server,nowait)");
		return -1;
	}
	return 0;
}

int cli_parse_chardev(const char *s, bool allow_mon, struct chardev_spec *spec, char *err,
		      size_t errlen)
{
	memset(spec, 0, sizeof(*spec));
	if (!strcmp(s, "none")) {
		spec->kind = CHARDEV_NONE;
	} else if (!strcmp(s, "null")) {
		spec->kind = CHARDEV_NULL;
	} else if (!strcmp(s, "stdio")) {
		spec->kind = CHARDEV_STDIO;
	} else if (!strcmp(s, "mon:stdio") && allow_mon) {
		spec->kind = CHARDEV_MON_STDIO;
	} else if (!strncmp(s, "file:", 5)) {
		spec->kind = CHARDEV_FILE;
		if (strlen(s + 5) >= sizeof(spec->path)) {
			snprintf(err, errlen, "file: path too long");
			return -1;
		}
		strcpy(spec->path, s + 5);
		if (!*spec->path) {
			snprintf(err, errlen, "file: needs a path");
			return -1;
		}
	} else if (!strncmp(s, "unix:", 5)) {
		return parse_unix(s + 5, spec, err, errlen);
	} else if (!strcmp(s, "pty")) {
		spec->kind = CHARDEV_PTY;
	} else if (!strncmp(s, "tcp:", 4) || !strncmp(s, "telnet:", 7)) {
		spec->kind = CHARDEV_TCP;
		if (cli_parse_listen(s, LISTEN_MAY_DIAL, &spec->sock, err, errlen) < 0)
			return -1;
		spec->wait = spec->sock.wait;
	} else {
		snprintf(err, errlen,
			 "unsupported backend '%s' (use %sstdio, file:PATH, "
			 "unix:PATH,server,nowait, tcp:HOST:PORT,server=on, "
			 "telnet:HOST:PORT,server=on, pty, "
			 "chardev:ID, null or none)",
			 s, allow_mon ? "mon:stdio, " : "");
		return -1;
	}
	return 0;
}

static int parse_serial(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			char *err, size_t errlen)
{
	if (cfg->n_serial == CLI_MAX_SERIALS) {
		snprintf(err, errlen, "at most %d serial ports", CLI_MAX_SERIALS);
		return -1;
	}
	if (!strncmp(val, "chardev:", 8))
		return cli_chardev_lookup(cfg, val + 8, &cfg->serial[cfg->n_serial++], err, errlen);
	return cli_parse_chardev(val, true, &cfg->serial[cfg->n_serial++], err, errlen);
}

static int parse_monitor(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			 char *err, size_t errlen)
{
	if (!strncmp(val, "chardev:", 8))
		return cli_monitor_on_chardev(cfg, val + 8, err, errlen);
	cfg->monitor_given = true;
	return cli_parse_chardev(val, false, &cfg->monitor, err, errlen);
}

/* ------------------------------------------- -display, -vnc, -global */

/* -display none / -vnc none: vmm has no display to turn off. */
static int parse_no_display(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			    char *err, size_t errlen)
{
	if (strcmp(val, "none")) {
		snprintf(err, errlen, "only 'none' (vmm has no display)");
		return -1;
	}
	return 0;
}

/* -global: the settings kvm-unit-tests and libvirt pass. KVM's PIT
 * lost-tick policy (vmm leaves KVM's PIT at its default), and whether the
 * guest may suspend to RAM or disk (<pm> in a domain; virt-install writes
 * both off): disable_s3=1 takes _S3 out of the DSDT; vmm never offers S4. */
static int parse_global(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			char *err, size_t errlen)
{
	static const char *const pm[] = {"PIIX4_PM.", "ICH9-LPC."};
	const char *v;

	if (!strncmp(val, "kvm-pit.lost_tick_policy=", 25))
		return 0;
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++) {
		if (strncmp(val, pm[i], strlen(pm[i])))
			continue;
		v = val + strlen(pm[i]);
		if (!strncmp(v, "disable_s3=", 11) && (!strcmp(v + 11, "0") || !strcmp(v + 11, "1"))) {
			cfg->lv.no_s3 = v[11] == '1';
			return 0;
		}
		if (!strncmp(v, "disable_s4=", 11) &&
		    (!strcmp(v + 11, "0") || !strcmp(v + 11, "1")))
			return 0;
	}
	snprintf(err, errlen,
		 "unsupported '%s' (kvm-pit.lost_tick_policy=..., PIIX4_PM.disable_s3=0|1, "
		 "PIIX4_PM.disable_s4=0|1, ICH9-LPC.disable_s3=0|1, ICH9-LPC.disable_s4=0|1)",
		 val);
	return -1;
}

/* ------------------------------------------------------- networking */

static int parse_netdev(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			char *err, size_t errlen)
{
	if (cli_is_help(val)) {
		cfg->help_topic = CLI_HELP_NETDEV;
		return 0;
	}
	return cli_parse_netdev(cfg, val, err, errlen);
}

static int parse_nic(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		     char *err, size_t errlen)
{
	return cli_parse_nic(cfg, val, err, errlen);
}

static int parse_net(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		     char *err, size_t errlen)
{
	return cli_parse_net(cfg, val, err, errlen);
}

/* ------------------------------------------------ disks and firmware */

/* -hda..-hdd: the row's offset is the IDE index. */
static int parse_hdx(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		     char *err, size_t errlen)
{
	return cli_set_drive(cfg, (unsigned)opt->offset, val, err, errlen);
}

static int parse_cdrom(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		       char *err, size_t errlen)
{
	return cli_set_cdrom(cfg, val, err, errlen);
}

static int parse_drive(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		       char *err, size_t errlen)
{
	return cli_parse_drive(cfg, val, err, errlen);
}

static int parse_on_off(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
	if (!strcmp(v, "on") || !strcmp(v, "true")) {
		*out = true;
	} else if (!strcmp(v, "off") || !strcmp(v, "false")) {
		*out = false;
	} else {
		snprintf(err, errlen, "%s must be on or off, not '%s'", key, v);
		return -1;
	}
	return 0;
}

static int boot_order(struct vmm_config *cfg, const char *order, char *err, size_t errlen)
{
	size_t len = strlen(order);

	if (!len || len >= sizeof(cfg->boot_order_buf)) {
		snprintf(err, errlen, "invalid boot order '%s' (letters c, d, n)", order);
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		if (!strchr("cdn", order[i])) {
			snprintf(err, errlen, "invalid boot device '%c' (letters c, d, n)", order[i]);
			return -1;
		}
	strcpy(cfg->boot_order_buf, order);
	cfg->boot_order = cfg->boot_order_buf;
	return 0;
}

/* -boot [order=]DRIVES[,strict=on|off]: strict (libvirt sets it) tells
 * SeaBIOS to try only the devices with a bootindex (a HALT line ends the
 * bootorder file). */
static int parse_boot(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		      char *err, size_t errlen)
{
	char buf[128], *save = NULL, *tok;

	if (snprintf(buf, sizeof(buf), "%s", val) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		bool b;

		/* once=: this boot's order; vmm keeps it for resets too */
		if (!eq || !strncmp(tok, "order=", 6) || !strncmp(tok, "once=", 5)) {
			if (boot_order(cfg, eq ? eq + 1 : tok, err, errlen) < 0)
				return -1;
			continue;
		}
		*eq = 0;
		if (strcmp(tok, "strict")) {
			snprintf(err, errlen, "unknown parameter '%s' (order, once, strict)", tok);
			return -1;
		}
		if (parse_on_off(tok, eq + 1, &b, err, errlen) < 0)
			return -1;
		cfg->lv.boot_strict = b;
	}
	return 0;
}

static int parse_debugcon(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
			  char *err, size_t errlen)
{
	cfg->debugcon_given = true;
	if (cli_parse_chardev(val, false, &cfg->debugcon, err, errlen) < 0)
		return -1;
	if (cfg->debugcon.kind == CHARDEV_UNIX || cfg->debugcon.kind == CHARDEV_TCP ||
	    cfg->debugcon.kind == CHARDEV_PTY) {
		snprintf(err, errlen, "use file:PATH, stdio, null or none");
		return -1;
	}
	return 0;
}

/* --------------------------------------------------------- the rest */

/* -machine [pc,][type=pc,][accel=kvm,]kernel_irqchip=on|split|off,pit=on|off */
int cli_parse_machine(const char *val, struct vmm_config *cfg, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	bool pit = !cfg->no_pit;

	if (snprintf(buf, sizeof(buf), "%s", val) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *v = eq ? eq + 1 : tok;

		int known;

		if (eq)
			*eq = 0;
		known = cli_machine_key(cfg, tok, eq ? v : NULL, err, errlen); /* cli_libvirt.c */
		if (known < 0)
			return -1;
		if (known)
			continue;
		if ((!eq || !strcmp(tok, "type")) && cli_is_q35_name(v)) {
			cfg->q35 = true;
		} else if (eq && (!strcmp(tok, "kernel_irqchip") || !strcmp(tok, "kernel-irqchip"))) {
			bool on;

			if (!strcmp(v, "split")) {
				cfg->irqchip = IRQCHIP_SPLIT;
			} else if (parse_on_off(tok, v, &on, err, errlen) == 0) {
				cfg->irqchip = on ? IRQCHIP_ON : IRQCHIP_OFF;
			} else {
				snprintf(err, errlen, "kernel_irqchip must be on, split or off, not '%s'",
					 v);
				return -1;
			}
		} else if (eq && !strcmp(tok, "pit")) {
			if (parse_on_off(tok, v, &pit, err, errlen) < 0)
				return -1;
		} else {
			snprintf(err, errlen, "unsupported '%s%s%s' (pc, pc-i440fx-7.2, q35, none, accel=kvm, "
				 "kernel_irqchip=on|split|off, pit=on|off, usb=on|off, "
				 "dump-guest-core=on|off, memory-backend=ID)", tok, eq ? "=" : "",
				 eq ? v : "");
			return -1;
		}
	}
	cfg->no_pit = !pit;
	return 0;
}

static int parse_machine_opt(struct vmm_config *cfg, const struct cli_option *opt,
			     const char *val, char *err, size_t errlen)
{
	if (cli_is_help(val)) {
		cfg->help_topic = CLI_HELP_MACHINE;
		return 0;
	}
	return cli_parse_machine(val, cfg, err, errlen);
}

static int parse_name(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		      char *err, size_t errlen)
{
	if (!strncmp(val, "guest=", 6))
		val += 6;
	if (!*val) {
		snprintf(err, errlen, "empty name");
		return -1;
	}
	snprintf(cfg->name_buf, sizeof(cfg->name_buf), "%.*s", (int)strcspn(val, ","), val);
	cfg->name = cfg->name_buf;
	return 0;
}

static int parse_cpu(struct vmm_config *cfg, const struct cli_option *opt, const char *val,
		     char *err, size_t errlen)
{
	char why[256];

	if (cli_is_help(val)) {
		cfg->help_topic = CLI_HELP_CPU;
		return 0;
	}
	if (cpu_spec_parse(val, &cfg->cpu, why, sizeof(why)) == 0)
		return 0;
	/* cpu_spec_parse names -cpu itself; cli_parse adds the name again. */
	snprintf(err, errlen, "%s", strncmp(why, "-cpu: ", 6) ? why : why + 6);
	return -1;
}

#define FIELD(f) offsetof(struct vmm_config, f)

static const struct cli_option options[] = {
	{"-m", "SIZE", parse_memory, 0, "guest RAM; a bare number is MiB (512, 512M, 2G)"},
	{"-smp", "[cpus=]N[,sockets=S][,dies=D][,cores=C][,threads=T][,maxcpus=N]", parse_smp, 0,
	 "vCPUs (1-255) and their topology; missing values computed as QEMU does"},
	{"-cpu", "MODEL[,+feat,-feat...]", parse_cpu, 0,
	 "CPU model: host (default), max, baseline, qemu64, kvm64, IvyBridge, ..."},
	{"-kernel", "FILE", cli_parse_string, FIELD(kernel),
	 "boot this kernel: Linux bzImage, PVH ELF (vmlinux) or multiboot"},
	{"-initrd", "FILE", cli_parse_string, FIELD(initrd), "initial ramdisk / multiboot modules"},
	{"-append", "CMDLINE", cli_parse_text, FIELD(append), "kernel command line"},
	{"-nographic", NULL, cli_parse_flag, FIELD(nographic),
	 "no display (the default): serial and monitor on stdio"},
	{"-serial", "DEV", parse_serial, 0,
	 "next COM port: stdio, mon:stdio, file:PATH, unix:PATH,server,nowait, null, none"},
	{"-monitor", "DEV", parse_monitor, 0, "monitor: stdio, unix:PATH,server,nowait, none"},
	{"-device", "DRIVER,...", cli_parse_device, 0,
	 "add a device (help lists them): isa-debug-exit,iobase=0xf4,iosize=4, pc-testdev, "
	 "pvpanic, edu[,addr=SLOT[.FN]], pci-testdev[,addr=SLOT[.FN]], "
	 "intel-iommu[,intremap=on|off][,eim=on|off] "
	 "(needs -M q35; intremap needs kernel_irqchip=split or off) or virtio-blk-pci,drive=ID"
	 "[,bootindex=N][,serial=S][,addr=SLOT[.FN]][,num-queues=N] or "
	 "virtio-net-pci,netdev=ID[,mac=MAC][,addr=SLOT[.FN]][,id=NAME][,mq=on|off][,vectors=N] or "
	 "virtio-wlan-pci,medium=ID[,addr=SLOT[.FN]] (a mac80211_hwsim radio) or "
	 "virtio-rng-pci[,rng=ID][,max-bytes=N,period=MS][,addr=SLOT[.FN]] or "
	 "virtio-balloon-pci[,id=NAME][,addr=SLOT[.FN]][,deflate-on-oom=on|off]"
	 "[,free-page-reporting=on|off]"},
	{"-netdev", "user|tap,id=ID,...", parse_netdev, 0,
	 "network backend: user[,net=A/LEN][,host=A][,dns=A][,dhcpstart=A]"
	 "[,hostfwd=tcp|udp:[HADDR]:HPORT-[GADDR]:GPORT][,restrict=on|off][,ipv6=on|off]"
	 "[,impl=netstack|slirp] or "
	 "tap,ifname=NAME,script=no,downscript=no[,vnet_hdr=on|off][,queues=N]"},
	{"-nic", "user|tap|none,...", parse_nic, 0,
	 "a virtio-net NIC and its backend: the -netdev options plus "
	 "[model=virtio-net-pci][,mac=MAC][,addr=SLOT]; none: no NIC"},
	{"-net", "none", parse_net, 0, "no network card (by default one virtio-net NIC on user)"},
	{"-nodefaults", NULL, cli_parse_flag, FIELD(nodefaults),
	 "no default devices (the serial port on stdio, the NIC)"},
	{"-no-reboot", NULL, cli_parse_flag, FIELD(no_reboot), "exit instead of rebooting"},
	{"-vnc", "none", parse_no_display, 0, "no VNC server (vmm has no display)"},
	{"-enable-kvm", NULL, cli_parse_flag, FIELD(nographic), "accepted: KVM is always on"},
	{"-global", "kvm-pit.lost_tick_policy=P | PIIX4_PM.disable_s3=0|1 | ...", parse_global, 0,
	 "lost_tick_policy accepted (KVM's PIT keeps its default); PIIX4_PM./ICH9-LPC. "
	 "disable_s3=1 takes S3 out of the DSDT, disable_s4 is accepted (no S4)"},
	{"-S", NULL, cli_parse_flag, FIELD(start_paused), "start paused (monitor `cont` runs)"},
	{"-incoming", "URI", cli_parse_string, FIELD(incoming),
	 "load a migration stream from exec:CMD, file:PATH, unix:PATH, tcp:HOST:PORT (defer: QMP migrate-incoming)"},
	{"-name", "NAME", parse_name, 0, "guest name (thread and window titles)"},
	{"-hda", "FILE", parse_hdx, 0, "disk image (raw or qcow2) on IDE primary master"},
	{"-hdb", "FILE", parse_hdx, 1, "disk image (raw or qcow2) on IDE primary slave"},
	{"-hdc", "FILE", parse_hdx, 2, "disk image (raw or qcow2) on IDE secondary master"},
	{"-hdd", "FILE", parse_hdx, 3, "disk image (raw or qcow2) on IDE secondary slave"},
	{"-cdrom", "FILE", parse_cdrom, 0, "CD/DVD image on an ATAPI drive, IDE secondary master"},
	{"-drive", "file=F,...", parse_drive, 0,
	 "disk: file=F[,format=raw|qcow2],if=ide|virtio|none[,index=N][,media=disk|cdrom]"
	 "[,id=ID][,readonly=on]"
	 "[,cache=writeback|writethrough|none|directsync|unsafe][,aio=io_uring|threads]"
	 "[,file.locking=on|off|auto]"},
	{"-snapshot", NULL, cli_parse_flag, FIELD(snapshot), "disk writes go to a temporary overlay"},
	{"-bios", "FILE", cli_parse_string, FIELD(bios), "firmware image (default: SeaBIOS)"},
	{"-boot", "order=DRIVES", parse_boot, 0,
	 "firmware boot order: c disk, d CD-ROM, n network"},
	{"-debugcon", "DEV", parse_debugcon, 0, "port 0x402 debug console: file:PATH, stdio, null"},
	/* The control plane: cli_control.c. */
	{"-action", "ACTION=WHAT,...", cli_parse_action, 0,
	 "reboot=reset|shutdown,shutdown=poweroff|pause,panic=shutdown|pause|exit-failure|none"},
	{"-no-shutdown", NULL, cli_parse_no_shutdown, 0, "pause instead of exiting at shutdown"},
	{"-qmp", "DEV", cli_parse_qmp, 0,
	 "QMP on unix:PATH,server,nowait, tcp:HOST:PORT,server,nowait or stdio"},
	{"-chardev", "BACKEND,id=ID,...", cli_parse_chardev_opt, 0,
	 "socket (path=P|fd=N|host=H,port=P,server=on,wait=off), pty, file, null, stdio, "
	 "ringbuf[,size=N]; for -serial chardev:ID, -mon chardev=ID"},
	{"-mon", "chardev=ID,mode=control", cli_parse_mon, 0, "QMP on a -chardev socket"},
	{"-gdb", "DEV", cli_parse_gdb, 0, "gdbstub on tcp:[HOST]:PORT or unix:PATH"},
	{"-s", NULL, cli_parse_gdb_default, 0, "same as -gdb tcp::1234"},
	{"-daemonize", NULL, cli_parse_daemonize, 0, "run in the background once set up"},
	{"-pidfile", "FILE", cli_parse_pidfile, 0, "write the process id to FILE"},
	/* What libvirt adds to every command line: cli_libvirt.c. */
	{"-no-user-config", NULL, cli_parse_no_user_config, 0,
	 "read no configuration file (none is)"},
	{"-accel", "kvm", cli_parse_accel, 0, "the accelerator: KVM (the only one)"},
	{"-object", "TYPE,id=ID,...", cli_parse_object, 0,
	 "memory-backend-ram,id=ID,size=N (for -machine memory-backend=ID), secret, or "
	 "wlan-medium,id=ID,country=XX[,outdoor=on][,regdb=PATH][,cac=S][,nop=S][,enforce=off]"
	 "[,txpower=DBM][,distance=M] or wlan-medium,id=ID,socket=PATH (the wlan-medium daemon's), "
	 "rng-random,id=ID[,filename=PATH] (default /dev/urandom), rng-builtin,id=ID"},
	{"-blockdev", "driver=file|raw,node-name=N,...", cli_parse_blockdev, 0,
	 "a block node: file (filename=F) under raw (file=NODE); -device drive=NODE"},
	{"-overcommit", "mem-lock=on|off", cli_parse_overcommit, 0,
	 "mem-lock=on: lock guest and vmm memory in RAM"},
	{"-uuid", "UUID", cli_parse_uuid, 0, "the machine's UUID (SMBIOS, query-uuid)"},
	{"-display", "none", cli_parse_display, 0, "no display (vmm has none)"},
	{"-usb", NULL, cli_parse_usb, 0, "a piix3-usb-uhci USB controller at 01.2 (as -machine usb=on)"},
	{"-audiodev", "none,id=ID", cli_parse_audiodev, 0, "accepted: vmm has no sound card"},
	{"-rtc", "base=utc", cli_parse_rtc, 0, "the RTC runs on the host's UTC time"},
	{"-no-acpi", NULL, cli_parse_no_acpi, 0, "no ACPI tables (MP table only)"},
	{"-no-hpet", NULL, cli_parse_no_hpet, 0, "accepted: vmm has no HPET"},
	{"-msg", "timestamp=on|off", cli_parse_msg, 0, "accepted; messages are not timestamped"},
	{"-sandbox",
	 "on|off[,obsolete=deny|allow,elevateprivileges=...,spawn=...,resourcecontrol=...]",
	 cli_parse_sandbox, 0, "system-call allow-list (seccomp) once set up"},
	{"-runas", "USER", cli_parse_runas, 0, "drop to USER's uid/gid once set up"},
	{"-chroot", "DIR", cli_parse_chroot, 0, "chroot into DIR once set up"},
	{"-machine", "[pc|q35,]kernel_irqchip=on|split|off,pit=on|off", parse_machine_opt, 0,
	 "interrupt controllers in KVM (on), split, or in vmm (off); q35: QEMU's Q35 "
	 "(MCH with ECAM/MCFG, ICH9 LPC and SMBus, pcie-root-port) without AHCI (no "
	 "-hda/-cdrom), run-time hot-plug or extended config space"},
	{"-M", "pc|q35,...", parse_machine_opt, 0, "same as -machine"},
	{"-help", NULL, cli_parse_flag, FIELD(help), "print this help and exit"},
	{"-h", NULL, cli_parse_flag, FIELD(help), "same as -help"},
	{"-version", NULL, cli_parse_flag, FIELD(version), "print the version and exit"},
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const struct cli_option *find_option(const char *arg)
{
	/* QEMU accepts every option with one dash or two. */
	if (arg[0] == '-' && arg[1] == '-')
		arg++;
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (!strcmp(options[i].name, arg))
			return &options[i];
	return NULL;
}

static void apply_defaults(struct vmm_config *cfg)
{
	if (!cfg->ram_size)
		cfg->ram_size = 128 * MIB; /* QEMU's default */
	if (!cfg->append)
		cfg->append = "";
	if (cfg->n_serial == 0 && !cfg->nodefaults)
		cfg->serial[cfg->n_serial++] = (struct chardev_spec){.kind = CHARDEV_MON_STDIO};
}

static bool uses_stdio(const struct chardev_spec *s)
{
	return s->kind == CHARDEV_STDIO || s->kind == CHARDEV_MON_STDIO;
}

/* Only one character device can own the terminal (the mux shares it). */
static int check_stdio(const struct vmm_config *cfg, char *err, size_t errlen)
{
	unsigned users = cfg->monitor_given && uses_stdio(&cfg->monitor), qmp_stdio = 0;

	users += cfg->debugcon_given && uses_stdio(&cfg->debugcon);
	for (unsigned i = 0; i < cfg->n_serial; i++)
		users += uses_stdio(&cfg->serial[i]);
	for (unsigned i = 0; i < cfg->control.n_qmp; i++)
		qmp_stdio += cfg->control.qmp[i].kind == LISTEN_STDIO;
	if (users + qmp_stdio > 1) {
		snprintf(err, errlen,
			 "-serial/-monitor/-debugcon/-qmp: stdio used by more than one device (%s)",
			 qmp_stdio ? "with -qmp stdio: -nodefaults or -serial none"
				   : "use -serial mon:stdio to share it");
		return -1;
	}
	return 0;
}

int cli_parse(int argc, char **argv, struct vmm_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpu.model = CPU_MODEL_HOST; /* -cpu overrides */
	for (int i = 1; i < argc; i++) {
		const struct cli_option *opt = find_option(argv[i]);
		const char *val = NULL;
		char why[256] = "";

		if (!opt) {
			snprintf(err, errlen, "%s: %s", argv[i],
				 argv[i][0] == '-' ? "unknown option (see --help)"
						   : "unexpected argument (options start with -)");
			return -1;
		}
		if (opt->metavar) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s: requires an argument (%s)", opt->name,
					 opt->metavar);
				return -1;
			}
			val = argv[++i];
			/* libvirt's JSON spelling of -device, -netdev (cli_libvirt.c) */
			if ((!strcmp(opt->name, "-device") || !strcmp(opt->name, "-netdev")) &&
			    !(val = cli_json_to_opts(cfg, val,
						     opt->name[1] == 'd' ? "driver" : "type", why,
						     sizeof(why)))) {
				snprintf(err, errlen, "%s: %s", opt->name, why);
				return -1;
			}
		}
		if (opt->parse(cfg, opt, val, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: %s", opt->name, why);
			return -1;
		}
		if (cfg->help_topic != CLI_HELP_NONE || cfg->help || cfg->version)
			return 0; /* as QEMU: print it and exit, whatever follows */
	}
	if (cli_libvirt_finish(cfg, err, errlen) < 0 || resolve_smp(cfg, err, errlen) < 0)
		return -1;
	apply_defaults(cfg);
	if (cli_resolve_drives(cfg, err, errlen) < 0 || cli_resolve_sata(cfg, err, errlen) < 0 ||
	    cli_resolve_nics(cfg, err, errlen) < 0 || cli_check_q35(cfg, err, errlen) < 0 ||
	    cli_add_default_usb(cfg, err, errlen) < 0 || cli_resolve_wlan(cfg, err, errlen) < 0 ||
	    cli_resolve_rng(cfg, err, errlen) < 0 || cli_resolve_vserial(cfg, err, errlen) < 0)
		return -1;
	return check_stdio(cfg, err, errlen);
}

const char *cli_option_name(size_t i)
{
	return i < N_OPTIONS ? options[i].name : NULL;
}

/* Every row of the table, in its order: the option and its value on the
 * left; a left side wider than the column puts the text on the next line. */
void cli_usage(FILE *out, const char *argv0)
{
	enum { LEFT = 26 };

	fprintf(out, "usage: %s [options]\n\nvmm %s — a KVM virtual machine monitor with "
		     "QEMU's option spellings.\n\n", argv0, VMM_VERSION);
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct cli_option *o = &options[i];
		int n = fprintf(out, "  %s%s%s", o->name, o->metavar ? " " : "",
				o->metavar ? o->metavar : "");

		if (n - 2 > LEFT)
			fprintf(out, "\n  %-*s %s\n", LEFT, "", o->help);
		else
			fprintf(out, "%*s %s\n", LEFT - (n - 2), "", o->help);
	}
	fprintf(out, "\nHelp verbs, as in QEMU: -cpu help, -machine help, -device help, "
		     "-device NAME,help, -netdev help.\n"
		     "With mon:stdio (the default): Ctrl-A c switches between serial and "
		     "monitor, Ctrl-A x quits.\n");
}
