/* gdbstub.c — the GDB remote serial protocol over TCP or a unix socket
 * (-gdb, -s), one debugger at a time, on the main thread's event loop.
 *
 * Each vCPU is a thread (ids 1..n). The target description is generated
 * from the register table below: the amd64 core registers with x87, SSE,
 * fs_base/gs_base, and the control registers and EFER as an extra feature.
 * Memory goes through the selected vCPU's page tables. Z0 breakpoints are
 * software ones: an INT3 patched into guest memory (the original byte
 * kept and restored at z0 and detach), which KVM hands to the VMM; where
 * the address is not mapped yet (a kernel symbol before the kernel set up
 * its page tables) a debug register takes it instead. Z1 breakpoints and
 * Z2-Z4 watchpoints (write, read = access on x86, access) are debug
 * registers (debug.c), four in all, shared with the monitor's `break`.
 * Stops and steps share debug.c's machinery with the monitor's
 * break/stepi; a stop is reported to the debugger through the machine's
 * STOP event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/backends.h"
#include "vmm/control/gdb_regs.h"
#include "vmm/control/gdbstub.h"
#include "vmm/control/listen.h"

#define PACKET_MAX 16384
#define MEM_MAX 4096 /* bytes per m/M request (PacketSize allows it) */
#define SW_BP_MAX 64
#define INT3 0xcc

/* A Z0 breakpoint: an INT3 in guest memory, or a debug register where
 * the address could not be written. */
struct sw_bp {
	uint64_t addr;
	uint8_t orig;
	bool hw;
};

struct gdb_state {
	struct machine *m;
	struct listen_spec spec;
	int listen_fd, fd;
	bool no_ack, running;
	unsigned g_cpu, c_cpu; /* Hg: registers and memory; Hc: step */
	char pkt[PACKET_MAX];
	size_t pkt_len;
	enum { IDLE, IN_PACKET, CSUM1, CSUM2 } rx;
	char *xml;
	struct sw_bp sw[SW_BP_MAX];
	unsigned n_sw;
};

static struct gdb_state gs = {.listen_fd = -1, .fd = -1};

/* ------------------------------------------------------------ transport */

static void send_raw(const char *buf, size_t len)
{
	while (len && gs.fd >= 0) {
		ssize_t n = send(gs.fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			usleep(1000); /* the debugger is slow to read; it will */
			continue;
		}
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void reply_bin(const char *data, size_t len)
{
	static char out[2 * PACKET_MAX + 8];
	size_t n = 0;
	unsigned sum = 0;

	out[n++] = '$';
	for (size_t i = 0; i < len && n < sizeof(out) - 8; i++) {
		char c = data[i];

		if (c == '$' || c == '#' || c == '}' || c == '*') {
			out[n++] = '}';
			sum += '}';
			c ^= 0x20;
		}
		out[n++] = c;
		sum += (unsigned char)c;
	}
	n += (size_t)snprintf(out + n, 4, "#%02x", sum & 0xff);
	send_raw(out, n);
}

static void reply(const char *s)
{
	reply_bin(s, strlen(s));
}

static void to_hex(char *out, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static int from_hex(const char *s, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		p[i] = (uint8_t)v;
	}
	return 0;
}

/* ------------------------------------------------------------ registers */

static size_t put_reg(char *out, struct cpu_state *st, unsigned i)
{
	uint32_t scratch = 0;

	to_hex(out, gdb_reg_ptr(st, i, &scratch), gdb_reg_bytes(i));
	return 2 * gdb_reg_bytes(i);
}

static void cmd_read_regs(void)
{
	static char out[PACKET_MAX];
	struct cpu_state st;
	size_t n = 0;

	if (gdb_load_state(&gs.m->vcpus[gs.g_cpu], &st) < 0) {
		reply("E14");
		return;
	}
	for (unsigned i = 0; i < gdb_reg_count(); i++)
		n += put_reg(out + n, &st, i);
	out[n] = 0;
	reply(out);
}

static int set_reg(struct cpu_state *st, unsigned i, const char *hex)
{
	uint32_t scratch;
	uint8_t buf[16];

	if (from_hex(hex, buf, gdb_reg_bytes(i)) < 0)
		return -1;
	if (gdb_reg_writable(i))
		memcpy(gdb_reg_ptr(st, i, &scratch), buf, gdb_reg_bytes(i));
	return 0;
}

static void cmd_write_regs(const char *hex)
{
	struct cpu_state st;

	if (gdb_load_state(&gs.m->vcpus[gs.g_cpu], &st) < 0) {
		reply("E14");
		return;
	}
	for (unsigned i = 0; i < gdb_reg_count() && *hex; i++) {
		if (strlen(hex) < 2 * gdb_reg_bytes(i) || set_reg(&st, i, hex) < 0) {
			reply("E22");
			return;
		}
		hex += 2 * gdb_reg_bytes(i);
	}
	reply(gdb_store_state(&gs.m->vcpus[gs.g_cpu], &st) < 0 ? "E14" : "OK");
}

static void cmd_reg(const char *args, bool write)
{
	struct cpu_state st;
	char *end, out[40];
	unsigned long i = strtoul(args, &end, 16);

	if (i >= gdb_reg_count() || (write && *end != '=')) {
		reply(write ? "E22" : "E45");
		return;
	}
	if (gdb_load_state(&gs.m->vcpus[gs.g_cpu], &st) < 0) {
		reply("E14");
		return;
	}
	if (!write) {
		out[put_reg(out, &st, (unsigned)i)] = 0;
		reply(out);
		return;
	}
	if (strlen(end + 1) < 2 * gdb_reg_bytes(i) || set_reg(&st, (unsigned)i, end + 1) < 0) {
		reply("E22");
		return;
	}
	reply(gdb_store_state(&gs.m->vcpus[gs.g_cpu], &st) < 0 ? "E14" : "OK");
}

/* --------------------------------------------------------------- memory */

static int parse_addr_len(const char *s, uint64_t *addr, uint64_t *len, char **end)
{
	*addr = strtoull(s, end, 16);
	if (**end != ',')
		return -1;
	*len = strtoull(*end + 1, end, 16);
	return *len <= MEM_MAX ? 0 : -1;
}

static void cmd_read_mem(const char *args)
{
	static char out[2 * MEM_MAX + 1];
	uint8_t buf[MEM_MAX];
	uint64_t addr, len;
	char *end;

	if (parse_addr_len(args, &addr, &len, &end) < 0) {
		reply("E22");
		return;
	}
	if (vcpu_read_linear(&gs.m->vcpus[gs.g_cpu], addr, buf, len) < 0) {
		reply("E14");
		return;
	}
	to_hex(out, buf, len);
	out[2 * len] = 0;
	reply(out);
}

static void cmd_write_mem(const char *args)
{
	uint8_t buf[MEM_MAX];
	uint64_t addr, len;
	char *end;

	if (parse_addr_len(args, &addr, &len, &end) < 0 || *end != ':' ||
	    strlen(end + 1) < 2 * len || from_hex(end + 1, buf, len) < 0) {
		reply("E22");
		return;
	}
	reply(vcpu_write_linear(&gs.m->vcpus[gs.g_cpu], addr, buf, len) < 0 ? "E14" : "OK");
}

/* ---------------------------------------------------- execution control */

static void stop_reply(int sig, unsigned cpu)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "T%02xthread:%x;", sig, cpu + 1);
	reply(buf);
}

/* A debug stop of vCPU cpu: a watchpoint's says which address, so gdb
 * shows the old and new values. */
static void debug_stop_reply(unsigned cpu)
{
	const struct machine_debug *d = &gs.m->debug;
	const struct vcpu *v = &gs.m->vcpus[cpu];
	char buf[64];

	for (unsigned i = 0; i < d->n_bp; i++) {
		if (!(v->debug_dr6 & (1ull << i)) || d->bp_type[i] == KVM_HW_BP_EXEC)
			continue;
		snprintf(buf, sizeof(buf), "T05thread:%x;%s:%llx;", cpu + 1,
			 d->bp_type[i] == KVM_HW_BP_WRITE ? "watch" : "awatch",
			 (unsigned long long)d->bp[i]);
		reply(buf);
		return;
	}
	stop_reply(5, cpu);
}

static void resume(void)
{
	machine_debug_cont(gs.m);
	gs.running = true; /* the STOP event answers the debugger */
}

static void step(unsigned cpu)
{
	uint64_t pc;

	machine_step_cpu(gs.m, cpu, &pc); /* a halted vCPU times out: stopped anyway */
	gs.g_cpu = cpu;
	stop_reply(5, cpu);
}

/* Thread id (1-based, -1 / 0 any) to a vCPU index; -1 when invalid. */
static int thread_cpu(const char *s, unsigned fallback)
{
	long t = strtol(s, NULL, 16);

	if (t == -1 || t == 0)
		return (int)fallback;
	return t >= 1 && t <= (long)gs.m->ncpus ? (int)t - 1 : -1;
}

/* vCont;ACTION[:TID];... — a step anywhere wins (gdb steps one thread and
 * lets the others continue; all vCPUs run during the step here). */
static void cmd_vcont(const char *args)
{
	for (const char *a = args; a && *a; a = strchr(a + 1, ';')) {
		const char *act = *a == ';' ? a + 1 : a;

		if (*act == 's' || *act == 'S') {
			const char *colon = strchr(act, ':');
			int cpu = colon ? thread_cpu(colon + 1, gs.c_cpu) : (int)gs.c_cpu;

			step(cpu < 0 ? gs.c_cpu : (unsigned)cpu);
			return;
		}
	}
	resume();
}

static int find_sw(uint64_t addr)
{
	for (unsigned i = 0; i < gs.n_sw; i++)
		if (gs.sw[i].addr == addr)
			return (int)i;
	return -1;
}

static unsigned count_patched(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < gs.n_sw; i++)
		n += !gs.sw[i].hw;
	return n;
}

/* Z0: patch an INT3, or take a debug register where the address cannot
 * be read and written through the vCPU's page tables. */
static const char *sw_insert(uint64_t addr)
{
	struct vcpu *v = &gs.m->vcpus[gs.g_cpu];
	struct sw_bp b = {addr, 0, false};
	static const uint8_t int3 = INT3;

	if (find_sw(addr) >= 0)
		return "OK";
	if (gs.n_sw == SW_BP_MAX)
		return "E28";
	if (machine_debug_set_sw_bp(gs.m, true) == 0 &&
	    vcpu_read_linear(v, addr, &b.orig, 1) == 0 &&
	    vcpu_write_linear(v, addr, &int3, 1) == 0) {
		gs.sw[gs.n_sw++] = b;
		return "OK";
	}
	machine_debug_set_sw_bp(gs.m, count_patched() > 0);
	b.hw = true;
	if (machine_break_insert(gs.m, addr) < 0)
		return "E28";
	gs.sw[gs.n_sw++] = b;
	return "OK";
}

static void sw_remove_at(unsigned i)
{
	struct sw_bp b = gs.sw[i];

	if (b.hw)
		machine_break_remove(gs.m, b.addr, false);
	else
		vcpu_write_linear(&gs.m->vcpus[gs.g_cpu], b.addr, &b.orig, 1);
	gs.sw[i] = gs.sw[--gs.n_sw];
	machine_debug_set_sw_bp(gs.m, count_patched() > 0);
}

static void sw_remove_all(void)
{
	while (gs.n_sw)
		sw_remove_at(gs.n_sw - 1);
}

/* Z/z TYPE,ADDR,KIND: 0 software breakpoint, 1 hardware breakpoint, 2
 * write, 3 read, 4 access watchpoint (KIND = length). */
static void cmd_break(const char *p, bool insert)
{
	static const enum kvm_hw_bp_type watch[] = {KVM_HW_BP_WRITE, KVM_HW_BP_ACCESS,
						    KVM_HW_BP_ACCESS};
	unsigned type = (unsigned)(p[0] - '0');
	uint64_t addr, len;
	char *end;
	int i;

	if (type > 4 || p[1] != ',') {
		reply("");
		return;
	}
	addr = strtoull(p + 2, &end, 16);
	len = *end == ',' ? strtoull(end + 1, NULL, 16) : 1;
	if (type == 0 && insert) {
		reply(sw_insert(addr));
	} else if (type == 0) {
		if ((i = find_sw(addr)) >= 0)
			sw_remove_at((unsigned)i);
		reply("OK");
	} else if (type == 1 && insert) {
		reply(machine_break_insert(gs.m, addr) < 0 ? "E28" : "OK");
	} else if (type == 1) {
		machine_break_remove(gs.m, addr, false);
		reply("OK");
	} else if (insert) {
		i = machine_watch_insert(gs.m, addr, (unsigned)len, watch[type - 2]);
		reply(i == -EINVAL ? "E22" : i < 0 ? "E28" : "OK");
	} else {
		machine_watch_remove(gs.m, addr, (unsigned)len, watch[type - 2]);
		reply("OK");
	}
}

static void cmd_set_thread(const char *p)
{
	int cpu = thread_cpu(p + 1, p[0] == 'g' ? gs.g_cpu : gs.c_cpu);

	if (cpu < 0) {
		reply("E22");
		return;
	}
	if (p[0] == 'g')
		gs.g_cpu = (unsigned)cpu;
	else
		gs.c_cpu = (unsigned)cpu;
	reply("OK");
}

/* ----------------------------------------------------------- queries */

static void cmd_xfer(const char *p)
{
	static char out[PACKET_MAX];
	const char *annex = "features:read:target.xml:";
	unsigned long off, len;
	size_t total;

	if (strncmp(p, annex, strlen(annex)) ||
	    sscanf(p + strlen(annex), "%lx,%lx", &off, &len) != 2) {
		reply("");
		return;
	}
	if (!gs.xml)
		gs.xml = gdb_target_xml();
	total = gs.xml ? strlen(gs.xml) : 0;
	if (off >= total) {
		reply("l");
		return;
	}
	if (len > sizeof(out) - 2)
		len = sizeof(out) - 2;
	if (len > total - off)
		len = total - off;
	out[0] = off + len < total ? 'm' : 'l';
	memcpy(out + 1, gs.xml + off, len);
	reply_bin(out, len + 1);
}

static void cmd_query(const char *p)
{
	char buf[1024];

	if (!strncmp(p, "qSupported", 10)) {
		snprintf(buf, sizeof(buf),
			 "PacketSize=%x;qXfer:features:read+;QStartNoAckMode+;"
			 "vContSupported+",
			 PACKET_MAX);
		reply(buf);
	} else if (!strncmp(p, "qXfer:", 6)) {
		cmd_xfer(p + 6);
	} else if (!strcmp(p, "qfThreadInfo")) {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "m");

		for (unsigned i = 0; i < gs.m->ncpus && n < sizeof(buf) - 8; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%x", i ? "," : "",
					      i + 1);
		reply(buf);
	} else if (!strcmp(p, "qsThreadInfo")) {
		reply("l");
	} else if (!strcmp(p, "qC")) {
		snprintf(buf, sizeof(buf), "QC%x", gs.g_cpu + 1);
		reply(buf);
	} else if (!strcmp(p, "qAttached")) {
		reply("1");
	} else if (!strncmp(p, "qSymbol", 7)) {
		reply("OK");
	} else if (!strcmp(p, "QStartNoAckMode")) {
		reply("OK");
		gs.no_ack = true;
	} else {
		reply("");
	}
}

/* -------------------------------------------------------------- dispatch */

static void close_client(void);

static void handle_packet(char *p)
{
	switch (p[0]) {
	case '?':
		stop_reply(5,
			   gs.m->debug.last_stop_cpu < gs.m->ncpus ? gs.m->debug.last_stop_cpu : 0);
		break;
	case 'g':
		cmd_read_regs();
		break;
	case 'G':
		cmd_write_regs(p + 1);
		break;
	case 'p':
	case 'P':
		cmd_reg(p + 1, p[0] == 'P');
		break;
	case 'm':
		cmd_read_mem(p + 1);
		break;
	case 'M':
		cmd_write_mem(p + 1);
		break;
	case 'c':
	case 'C':
		resume();
		break;
	case 's':
	case 'S':
		step(gs.c_cpu);
		break;
	case 'v':
		if (!strcmp(p, "vCont?"))
			reply("vCont;c;C;s;S");
		else if (!strncmp(p, "vCont", 5))
			cmd_vcont(p + 5);
		else
			reply("");
		break;
	case 'Z':
	case 'z':
		cmd_break(p + 1, p[0] == 'Z');
		break;
	case 'H':
		cmd_set_thread(p + 1);
		break;
	case 'T':
		reply(thread_cpu(p + 1, 0) < 0 ? "E22" : "OK");
		break;
	case 'q':
	case 'Q':
		cmd_query(p);
		break;
	case 'D':
		reply("OK");
		close_client();
		break;
	case 'k':
		close_client();
		machine_host_quit(gs.m, "host-qmp-quit");
		break;
	default:
		reply("");
	}
}

/* Ctrl-C: stop everything, tell the debugger SIGINT. */
static void interrupt(void)
{
	if (!gs.running)
		return;
	gs.running = false;
	machine_stop_for(gs.m, RUN_STATE_DEBUG);
	stop_reply(2, gs.g_cpu);
}

/* Checksums are not verified: the transport (TCP, unix) is reliable. */
static void receive_byte(char c)
{
	switch (gs.rx) {
	case IDLE:
		if (c == '$') {
			gs.rx = IN_PACKET;
			gs.pkt_len = 0;
		} else if (c == 0x03) {
			interrupt();
		}
		return; /* '+' / '-' acks: replies are not resent */
	case IN_PACKET:
		if (c == '#')
			gs.rx = CSUM1;
		else if (gs.pkt_len < PACKET_MAX - 1)
			gs.pkt[gs.pkt_len++] = c;
		return;
	case CSUM1:
		gs.rx = CSUM2;
		return;
	case CSUM2:
		gs.rx = IDLE;
		gs.pkt[gs.pkt_len] = 0;
		if (!gs.no_ack)
			send_raw("+", 1);
		handle_packet(gs.pkt);
		return;
	}
}

static void on_client(void *opaque, int fd, unsigned events)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_client();
		return;
	}
	for (ssize_t i = 0; i < n && gs.fd >= 0; i++)
		receive_byte(buf[i]);
}

static void on_accept(void *opaque, int fd, unsigned events);

/* Detach: breakpoints out, the machine runs on, the next debugger may come. */
static void close_client(void)
{
	if (gs.fd < 0)
		return;
	evloop_del_fd(gs.m->host.loop, gs.fd);
	close(gs.fd);
	gs.fd = -1;
	gs.running = false;
	sw_remove_all();
	machine_break_remove(gs.m, 0, true);
	if (machine_run_state(gs.m) == RUN_STATE_DEBUG)
		machine_debug_cont(gs.m);
	evloop_add_fd(gs.m->host.loop, gs.listen_fd, EV_READ, on_accept, NULL);
}

static void on_accept(void *opaque, int fd, unsigned events)
{
	int client = listen_accept(fd, false);

	if (client < 0)
		return;
	evloop_del_fd(gs.m->host.loop, gs.listen_fd); /* one debugger at a time */
	gs.fd = client;
	gs.no_ack = false;
	gs.rx = IDLE;
	gs.g_cpu = gs.c_cpu = 0;
	evloop_add_fd(gs.m->host.loop, client, EV_READ, on_client, NULL);
	/* As QEMU: a debugger that attaches finds the machine stopped. */
	machine_stop_for(gs.m, RUN_STATE_DEBUG);
}

/* The machine stopped (breakpoint, step, `stop`, a panic) while the
 * debugger waited for it. */
static void on_event(void *opaque, const char *name, const char *data)
{
	if (gs.fd < 0)
		return;
	if (strcmp(name, "STOP") || !gs.running)
		return;
	gs.running = false;
	if (machine_run_state(gs.m) == RUN_STATE_DEBUG) {
		gs.g_cpu = gs.m->debug.last_stop_cpu;
		debug_stop_reply(gs.g_cpu);
	} else {
		stop_reply(2, gs.g_cpu);
	}
}

static int listen_on(struct machine *m, const struct listen_spec *spec, char *err, size_t errlen)
{
	static bool listening_to_events;
	int fd = listen_open(spec, err, errlen);

	if (fd < 0)
		return -1;
	gs.m = m;
	gs.spec = *spec;
	gs.listen_fd = fd;
	evloop_add_fd(m->host.loop, gs.listen_fd, EV_READ, on_accept, NULL);
	if (!listening_to_events && machine_add_listener(m, on_event, NULL) < 0)
		return -1;
	listening_to_events = true;
	return 0;
}

int gdbstub_start(struct machine *m, char *err, size_t errlen)
{
	char where[160];

	if (!m->cfg->control.gdb_given)
		return 0;
	if (listen_on(m, &m->cfg->control.gdb, err, errlen) < 0)
		return -1;
	listen_describe(&gs.spec, where, sizeof(where));
	fprintf(stderr, "vmm: gdbstub listening on %s\n", where);
	return 0;
}

/* The debugger (if any) detached, the listener closed. */
static void stop_listening(void)
{
	close_client(); /* re-arms the listener: taken away just below */
	evloop_del_fd(gs.m->host.loop, gs.listen_fd);
	listen_close(&gs.spec, gs.listen_fd);
	gs.listen_fd = -1;
}

void gdbstub_hmp(struct machine *m, const struct listen_spec *spec, const char *dev, FILE *out)
{
	char err[200], where[160];

	if (!spec) {
		if (gs.listen_fd < 0) {
			fprintf(out, "gdbserver is not running\n");
			return;
		}
		stop_listening();
		fprintf(out, "gdbserver stopped\n");
		return;
	}
	if (gs.listen_fd >= 0) {
		listen_describe(&gs.spec, where, sizeof(where));
		fprintf(out, "gdbserver already listening on %s ('gdbserver none' first)\n", where);
		return;
	}
	if (listen_on(m, spec, err, sizeof(err)) < 0) {
		fprintf(out, "gdbserver: %s\n", err);
		return;
	}
	fprintf(out, "Waiting for gdb connection on device '%s'\n", dev);
}

void gdbstub_stop(void)
{
	if (gs.fd >= 0) {
		char exited[8];

		/* The machine is gone: the debugger hears the exit status. */
		snprintf(exited, sizeof(exited), "W%02x", gs.m->exit_status & 0xff);
		reply(exited);
		evloop_del_fd(gs.m->host.loop, gs.fd);
		close(gs.fd);
		gs.fd = -1;
	}
	if (gs.listen_fd >= 0) {
		evloop_del_fd(gs.m->host.loop, gs.listen_fd);
		listen_close(&gs.spec, gs.listen_fd);
		gs.listen_fd = -1;
	}
	free(gs.xml);
	gs.xml = NULL;
}
