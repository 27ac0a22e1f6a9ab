/* Unit tests for the control plane's options (vmm/cli/cli_control.c): -action,
 * -no-shutdown, -device pvpanic, -qmp, -chardev socket + -mon, -gdb, -s,
 * -daemonize, -pidfile. */
#include <check.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "tests/unit/vmm/cli_args.h"
#include "vmm/cli/cli.h"

static struct vmm_config cfg;
static char err[512];

static int parse(const char *const *args)
{
	return cli_parse_list(args, &cfg, err, sizeof(err));
}

#define PARSE(...) parse((const char *const[]){__VA_ARGS__, NULL})

/* -sandbox with QEMU's defaults and groups, -runas, -chroot. */
START_TEST(sandbox_options)
{
	const struct sandbox_config *sb = &cfg.control.sandbox;

	ck_assert_int_eq(PARSE("-m", "64"), 0);
	ck_assert(!sb->on);
	ck_assert_int_eq(PARSE("-sandbox", "on"), 0);
	ck_assert(sb->on && !sb->allow_obsolete && sb->allow_elevate && sb->allow_spawn &&
		  sb->allow_resource);
	ck_assert_int_eq(PARSE("-sandbox", "on,obsolete=allow,elevateprivileges=deny,spawn=deny,"
					   "resourcecontrol=deny"),
			 0);
	ck_assert(sb->on && sb->allow_obsolete && !sb->allow_elevate && !sb->allow_spawn &&
		  !sb->allow_resource);
	ck_assert_int_eq(PARSE("-sandbox", "on,elevateprivileges=children"), 0);
	ck_assert(sb->allow_elevate);
	ck_assert_int_eq(PARSE("-sandbox", "off"), 0);
	ck_assert(!sb->on);
	ck_assert_int_eq(PARSE("-sandbox", "spawn=deny"), -1);
	ck_assert_ptr_nonnull(strstr(err, "expected on or off first"));
	ck_assert_int_eq(PARSE("-sandbox", "on,spawn=children"), -1);
	ck_assert_ptr_nonnull(strstr(err, "spawn=children: expected deny|allow"));
	ck_assert_int_eq(PARSE("-sandbox", "on,network=deny"), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown option 'network'"));
	ck_assert_int_eq(PARSE("-runas", "nobody", "-chroot", "/var/empty"), 0);
	ck_assert_str_eq(cfg.control.runas, "nobody");
	ck_assert_str_eq(cfg.control.chroot, "/var/empty");
	ck_assert_int_eq(PARSE("-chroot", ""), -1);
}
END_TEST

START_TEST(actions)
{
	ck_assert_int_eq(PARSE("-m", "64"), 0);
	ck_assert_int_eq(cfg.control.reboot, ACTION_REBOOT_RESET);
	ck_assert_int_eq(cfg.control.shutdown, ACTION_SHUTDOWN_POWEROFF);
	ck_assert_int_eq(cfg.control.panic, ACTION_PANIC_SHUTDOWN);
	ck_assert_int_eq(PARSE("-action", "reboot=shutdown,shutdown=pause,panic=exit-failure"), 0);
	ck_assert_int_eq(cfg.control.reboot, ACTION_REBOOT_SHUTDOWN);
	ck_assert_int_eq(cfg.control.shutdown, ACTION_SHUTDOWN_PAUSE);
	ck_assert_int_eq(cfg.control.panic, ACTION_PANIC_EXIT_FAILURE);
	ck_assert_int_eq(PARSE("-action", "panic=none", "-action", "panic=pause"), 0);
	ck_assert_int_eq(cfg.control.panic, ACTION_PANIC_PAUSE);
	ck_assert_int_eq(PARSE("-no-shutdown"), 0);
	ck_assert_int_eq(cfg.control.shutdown, ACTION_SHUTDOWN_PAUSE);
	ck_assert_int_eq(PARSE("-action", "panic=explode"), -1);
	ck_assert_ptr_nonnull(strstr(err, "-action: panic=explode: expected shutdown|pause"));
	ck_assert_int_eq(PARSE("-action", "watchdog=reset"), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown action 'watchdog'"));
	ck_assert_int_eq(PARSE("-action", "reboot"), -1);
}
END_TEST

START_TEST(pvpanic)
{
	ck_assert_int_eq(PARSE("-device", "pvpanic"), 0);
	ck_assert_uint_eq(cfg.n_devices, 1);
	ck_assert_int_eq(cfg.devices[0].kind, DEVICE_PVPANIC);
	ck_assert_uint_eq(cfg.devices[0].iobase, 0x505);
	ck_assert_int_eq(PARSE("-device", "pvpanic,ioport=0x600", "-device", "isa-debug-exit"), 0);
	ck_assert_uint_eq(cfg.devices[0].iobase, 0x600);
	ck_assert_int_eq(cfg.devices[1].kind, DEVICE_ISA_DEBUG_EXIT);
	ck_assert_int_eq(PARSE("-device", "pvpanic,ioport=0x10000"), -1);
	ck_assert_int_eq(PARSE("-device", "pvpanic,iobase=1"), -1);
	ck_assert_ptr_nonnull(strstr(err, "-device: pvpanic"));
}
END_TEST

START_TEST(qmp_sockets)
{
	const struct listen_spec *q = cfg.control.qmp;

	ck_assert_int_eq(PARSE("-qmp", "unix:/tmp/q.sock,server,nowait", "-qmp",
			       "tcp:127.0.0.1:4444,server=on,wait=off"),
			 0);
	ck_assert_uint_eq(cfg.control.n_qmp, 2);
	ck_assert_int_eq(q[0].kind, LISTEN_UNIX);
	ck_assert_str_eq(q[0].path, "/tmp/q.sock");
	ck_assert(!q[0].wait);
	ck_assert_int_eq(q[1].kind, LISTEN_TCP);
	ck_assert_str_eq(q[1].host, "127.0.0.1");
	ck_assert_str_eq(q[1].port, "4444");
	ck_assert_int_eq(PARSE("-qmp", "unix:/tmp/q,server"), 0);
	ck_assert(q[0].wait); /* QEMU: a server waits unless told not to */
	ck_assert_int_eq(PARSE("-qmp", "unix:/tmp/q"), -1);
	ck_assert_ptr_nonnull(strstr(err, "server"));
	/* -qmp stdio: the terminal's only user (the default serial wants it) */
	ck_assert_int_eq(PARSE("-nodefaults", "-qmp", "stdio"), 0);
	ck_assert_int_eq(cfg.control.qmp[0].kind, LISTEN_STDIO);
	ck_assert_int_eq(PARSE("-qmp", "stdio"), -1);
	ck_assert_ptr_nonnull(strstr(err, "-serial none"));
	ck_assert_int_eq(PARSE("-serial", "none", "-qmp", "stdio"), 0);
	ck_assert_int_eq(PARSE("-qmp", "tcp:host:port,server"), -1);
	ck_assert_int_eq(PARSE("-qmp", "unix:/tmp/q,server,bogus"), -1);
}
END_TEST

START_TEST(libvirt_monitor)
{
	const struct listen_spec *q = cfg.control.qmp;

	ck_assert_int_eq(PARSE("-chardev", "socket,id=charmonitor,fd=27,server=on,wait=off", "-mon",
			       "chardev=charmonitor,id=monitor,mode=control"),
			 0);
	ck_assert_uint_eq(cfg.control.n_qmp, 1);
	ck_assert_int_eq(q[0].kind, LISTEN_FD);
	ck_assert_int_eq(q[0].fd, 27);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,path=/tmp/m.sock,server=on,wait=off",
			       "-mon", "chardev=m,mode=control"),
			 0);
	ck_assert_int_eq(q[0].kind, LISTEN_UNIX);
	ck_assert_str_eq(q[0].path, "/tmp/m.sock");
	ck_assert_int_eq(PARSE("-mon", "chardev=nope,mode=control"), -1);
	ck_assert_ptr_nonnull(strstr(err, "no -chardev with id 'nope'"));
	/* mode=readline (QEMU's default): the HMP monitor on that chardev */
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,path=/tmp/m,server=on", "-mon",
			       "chardev=m,mode=readline"),
			 0);
	ck_assert(cfg.monitor_given);
	ck_assert_int_eq(cfg.monitor.kind, CHARDEV_UNIX);
	ck_assert_str_eq(cfg.monitor.path, "/tmp/m");
	ck_assert_str_eq(cfg.monitor.id, "m");
	ck_assert(cfg.monitor.wait);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=t,host=127.0.0.1,port=4444,server=on,"
					   "wait=off,telnet=on",
			       "-serial", "chardev:t"),
			 0);
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_TCP);
	ck_assert(cfg.serial[0].sock.telnet && !cfg.serial[0].wait);
	ck_assert_str_eq(cfg.serial[0].sock.port, "4444");
	ck_assert_int_eq(PARSE("-serial", "chardev:nope"), -1);
	ck_assert_int_eq(PARSE("-monitor", "telnet:127.0.0.1:4445,server,nowait"), 0);
	ck_assert_int_eq(cfg.monitor.kind, CHARDEV_TCP);
	ck_assert(cfg.monitor.sock.telnet && !cfg.monitor.wait);
	ck_assert_int_eq(PARSE("-serial", "tcp::4446,server=on"), 0);
	ck_assert(cfg.serial[0].wait && !cfg.serial[0].sock.telnet);
	ck_assert_int_eq(PARSE("-serial", "tcp:127.0.0.1:4446,reconnect=3"), 0); /* a client */
	ck_assert(cfg.serial[0].sock.client);
	ck_assert_uint_eq(cfg.serial[0].sock.reconnect, 3);
	ck_assert_int_eq(PARSE("-serial", "tcp:127.0.0.1:4446,server=on,reconnect=3"), -1);
	ck_assert_int_eq(PARSE("-qmp", "tcp:127.0.0.1:4446"), -1); /* QMP listens */
	ck_assert_int_eq(PARSE("-serial", "pty"), 0);
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_PTY);
	ck_assert_int_eq(PARSE("-chardev", "file,id=f,path=/tmp/f,append=on", "-serial",
			       "chardev:f"),
			 0);
	ck_assert(cfg.serial[0].append);
	/* ringbuf: QEMU's default size, a power of two, "memory" its alias */
	ck_assert_int_eq(PARSE("-chardev", "ringbuf,id=r", "-serial", "chardev:r"), 0);
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_RINGBUF);
	ck_assert_uint_eq(cfg.serial[0].ring_size, 65536);
	ck_assert_int_eq(PARSE("-chardev", "memory,id=r,size=1024"), 0);
	ck_assert(cfg.control.chardevs[0].spec.memory);
	ck_assert_uint_eq(cfg.control.chardevs[0].spec.ring_size, 1024);
	ck_assert_int_eq(PARSE("-chardev", "ringbuf,id=r,size=1000"), -1);
	ck_assert_int_eq(PARSE("-chardev", "ringbuf,id=r,size=x"), -1);
	ck_assert_int_eq(PARSE("-chardev", "ringbuf,id=r,size=0x80000000"), -1);
	/* server=off: a client, dialled again every reconnect= seconds */
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,path=/tmp/m,reconnect=2", "-mon",
			       "chardev=m,mode=readline"),
			 0);
	ck_assert(cfg.monitor.sock.client);
	ck_assert_uint_eq(cfg.monitor.sock.reconnect, 2);
	ck_assert_int_eq(cfg.monitor.kind, CHARDEV_UNIX);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,path=/tmp/m", "-mon",
			       "chardev=m,mode=control"),
			 -1); /* QMP listens */
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,path=/tmp/m,server=on,reconnect=1"), -1);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=m,host=h,port=1,reconnect=x"), -1);
	ck_assert_int_eq(PARSE("-chardev", "spicevmc,id=x"), -1);
	ck_assert_int_eq(PARSE("-chardev", "pty,id=x", "-mon", "chardev=x,mode=control"), -1);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=a,path=/x,server=on", "-chardev",
			       "socket,id=a,path=/y,server=on"),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "duplicate id"));
}
END_TEST

START_TEST(gdb_and_process)
{
	ck_assert_int_eq(PARSE("-s", "-S"), 0);
	ck_assert(cfg.control.gdb_given);
	ck_assert_int_eq(cfg.control.gdb.kind, LISTEN_TCP);
	ck_assert_str_eq(cfg.control.gdb.host, "");
	ck_assert_str_eq(cfg.control.gdb.port, "1234");
	ck_assert(!cfg.control.gdb.wait);
	ck_assert_int_eq(PARSE("-gdb", "unix:/tmp/g"), 0);
	ck_assert_int_eq(cfg.control.gdb.kind, LISTEN_UNIX);
	ck_assert_int_eq(PARSE("-gdb", "udp::1"), -1);
	ck_assert_int_eq(PARSE("-daemonize", "-pidfile", "/tmp/p"), 0);
	ck_assert(cfg.control.daemonize);
	ck_assert_str_eq(cfg.control.pidfile, "/tmp/p");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_control");
	TCase *tc = tcase_create("cli_control");

	tcase_add_test(tc, actions);
	tcase_add_test(tc, pvpanic);
	tcase_add_test(tc, qmp_sockets);
	tcase_add_test(tc, libvirt_monitor);
	tcase_add_test(tc, gdb_and_process);
	tcase_add_test(tc, sandbox_options);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
