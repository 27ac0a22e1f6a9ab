/* Unit tests for virtio-serial's options (vmm/cli/cli_vserial.c): libvirt
 * 9.0's controller, channel and console as it writes them (key=value and
 * JSON, the agent's socket inherited as fd=N), QEMU's port numbering
 * (nr 0 kept for a virtconsole, free numbers from 1) and what is refused. */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

START_TEST(libvirt_forms)
{
	const struct vserport_spec *p = &cfg.vserial.ports[0];

	ck_assert_msg(PARSE("-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x5",
			    "-chardev", "socket,id=charchannel0,fd=3,server=on,wait=off", "-device",
			    "{\"driver\":\"virtserialport\",\"bus\":\"virtio-serial0.0\",\"nr\":1,"
			    "\"chardev\":\"charchannel0\",\"id\":\"channel0\","
			    "\"name\":\"org.qemu.guest_agent.0\"}",
			    "-chardev", "pty,id=charconsole0", "-device",
			    "virtconsole,chardev=charconsole0,id=console0") == 0,
		      "%s", err);
	ck_assert_uint_eq(cfg.vserial.n_buses, 1);
	ck_assert_str_eq(cfg.vserial.buses[0].id, "virtio-serial0");
	ck_assert_int_eq(cfg.vserial.buses[0].devfn, 5 << 3);
	ck_assert_uint_eq(cfg.vserial.buses[0].max_ports, CLI_VSERIAL_MAX_PORTS);
	ck_assert_uint_eq(cfg.vserial.n_ports, 2);
	ck_assert_int_eq(p->nr, 1);
	ck_assert(!p->console);
	ck_assert_str_eq(p->name, "org.qemu.guest_agent.0");
	ck_assert_str_eq(p->id, "channel0");
	ck_assert_int_eq(p->chr.kind, CHARDEV_UNIX);
	ck_assert_int_eq(p->chr.sock.kind, LISTEN_FD);
	ck_assert_int_eq(p->chr.sock.fd, 3);
	ck_assert_str_eq(p->chr.id, "charchannel0");
	ck_assert(p[1].console);
	ck_assert_int_eq(p[1].nr, 0); /* a virtconsole takes 0 when free */
	ck_assert_int_eq(p[1].chr.kind, CHARDEV_PTY);
}
END_TEST

START_TEST(numbering)
{
	ck_assert_msg(PARSE("-device", "virtio-serial,id=vs,max_ports=4", "-device",
			    "virtserialport,name=a", "-device", "virtserialport,nr=2,name=b",
			    "-device", "virtconsole", "-device", "virtconsole") == 0,
		      "%s", err);
	ck_assert_int_eq(cfg.vserial.ports[0].nr, 1); /* lowest free from 1 */
	ck_assert_int_eq(cfg.vserial.ports[1].nr, 2);
	ck_assert_int_eq(cfg.vserial.ports[2].nr, 0);
	ck_assert_int_eq(cfg.vserial.ports[3].nr, 3); /* 0 taken: the next free */
	ck_assert_uint_eq(cfg.vserial.buses[0].max_ports, 4);
}
END_TEST

static void refused(const char *const *args, const char *why)
{
	ck_assert_int_eq(parse(args), -1);
	ck_assert_msg(strstr(err, why), "'%s' does not say '%s'", err, why);
}

#define REFUSED(why, ...) refused((const char *const[]){__VA_ARGS__, NULL}, why)

START_TEST(refusals)
{
	REFUSED("no virtio-serial bus", "-device", "virtserialport,name=a");
	REFUSED("no virtio-serial bus 'x.0'", "-device", "virtio-serial-pci,id=vs", "-device",
		"virtserialport,bus=x.0");
	REFUSED("kept for a virtconsole", "-device", "virtio-serial-pci", "-device",
		"virtserialport,nr=0");
	REFUSED("already in use", "-device", "virtio-serial-pci", "-device", "virtserialport,nr=1",
		"-device", "virtserialport,nr=1");
	REFUSED("not below", "-device", "virtio-serial-pci,max_ports=2", "-device",
		"virtserialport,nr=2");
	REFUSED("is full", "-device", "virtio-serial-pci,id=vs,max_ports=2", "-device",
		"virtserialport", "-device", "virtserialport");
	REFUSED("invalid max_ports", "-device", "virtio-serial-pci,max_ports=32");
	REFUSED("not found", "-device", "virtio-serial-pci", "-device",
		"virtserialport,chardev=nope");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_vserial");
	TCase *t = tcase_create("core");

	tcase_add_test(t, libvirt_forms);
	tcase_add_test(t, numbering);
	tcase_add_test(t, refusals);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
