/* Unit tests for the network options (vmm/cli/cli_net.c): the default NIC,
 * -netdev + -device virtio-net-pci, -nic, -net none, -nodefaults, MACs,
 * and the one-line errors. */
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

START_TEST(default_nic_on_user_networking)
{
	static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

	ck_assert_int_eq(PARSE("-m", "64"), 0);
	ck_assert_uint_eq(cfg.n_netdevs, 1);
	ck_assert_uint_eq(cfg.n_nics, 1);
	ck_assert_str_eq(cfg.netdevs[0].type, "user");
	ck_assert_str_eq(cfg.netdevs[0].id, "user.0");
	ck_assert_str_eq(cfg.nics[0].id, "virtio-net-pci.0");
	ck_assert_mem_eq(cfg.nics[0].mac, mac, 6);
	ck_assert_int_eq(cfg.nics[0].devfn, -1);
	/* no NIC at all */
	ck_assert_int_eq(PARSE("-nic", "none"), 0);
	ck_assert_uint_eq(cfg.n_nics + cfg.n_netdevs, 0);
	ck_assert_int_eq(PARSE("-net", "none"), 0);
	ck_assert_uint_eq(cfg.n_nics, 0);
	ck_assert_int_eq(PARSE("-nodefaults"), 0);
	ck_assert_uint_eq(cfg.n_nics, 0);
}
END_TEST

START_TEST(netdev_and_device)
{
	ck_assert_int_eq(
		PARSE("-netdev", "user,id=n0,net=10.1.0.0/16,hostfwd=tcp::2222-:22", "-device",
		      "virtio-net-pci,netdev=n0,mac=52:54:00:aa:bb:cc,addr=5,id=net0,bus=pci.0",
		      "-netdev", "tap,id=t1,ifname=tap9,script=no,downscript=no,queues=2",
		      "-device", "virtio-net-pci,netdev=t1,mq=on,vectors=6"),
		0);
	ck_assert(!cfg.nics[0].mq);
	ck_assert(cfg.nics[1].mq);
	ck_assert_uint_eq(cfg.n_netdevs, 2);
	ck_assert_uint_eq(cfg.n_nics, 2);
	ck_assert_str_eq(cfg.netdevs[0].opts, "id=n0,net=10.1.0.0/16,hostfwd=tcp::2222-:22");
	ck_assert_str_eq(cfg.netdevs[1].type, "tap");
	ck_assert_str_eq(cfg.nics[0].id, "net0");
	ck_assert_int_eq(cfg.nics[0].devfn, 5 << 3);
	ck_assert_uint_eq(cfg.nics[0].mac[5], 0xcc);
	ck_assert_uint_eq(cfg.nics[1].netdev, 1);
	ck_assert_uint_eq(cfg.nics[1].mac[5], 0x57); /* the second default MAC */
	ck_assert_str_eq(cfg.nics[1].id, "virtio-net-pci.1");
}
END_TEST

START_TEST(nic_shorthand)
{
	ck_assert_int_eq(PARSE("-nic", "user,model=virtio-net-pci,mac=52:54:00:01:02:03,"
				       "hostfwd=udp::5353-:53,restrict=on"),
			 0);
	ck_assert_uint_eq(cfg.n_nics, 1);
	ck_assert_str_eq(cfg.netdevs[0].type, "user");
	/* the NIC's properties stay with the NIC, the rest goes to the backend */
	ck_assert_str_eq(cfg.netdevs[0].opts, "hostfwd=udp::5353-:53,restrict=on");
	ck_assert_uint_eq(cfg.nics[0].mac[5], 3);
	ck_assert_str_eq(cfg.netdevs[cfg.nics[0].netdev].id, cfg.nics[0].netdev_id);
}
END_TEST

START_TEST(network_errors)
{
	ck_assert_int_eq(PARSE("-netdev", "bridge,id=b0"), -1);
	ck_assert_ptr_nonnull(strstr(err, "-netdev: unknown type 'bridge'"));
	ck_assert_int_eq(PARSE("-netdev", "user"), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs id="));
	ck_assert_int_eq(PARSE("-netdev", "user,id=a", "-netdev", "user,id=a"), -1);
	ck_assert_ptr_nonnull(strstr(err, "duplicate id"));
	ck_assert_int_eq(PARSE("-device", "virtio-net-pci,netdev=nope"), -1);
	ck_assert_ptr_nonnull(strstr(err, "netdev 'nope' not found"));
	ck_assert_int_eq(PARSE("-device", "virtio-net-pci"), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs netdev="));
	ck_assert_int_eq(PARSE("-netdev", "user,id=a", "-device",
			       "virtio-net-pci,netdev=a,mac=01:00:00:00:00:01"),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "invalid mac"));
	ck_assert_int_eq(PARSE("-netdev", "user,id=a", "-device", "virtio-net-pci,netdev=a,addr=1"),
			 -1);
	ck_assert_int_eq(PARSE("-netdev", "user,id=a", "-device", "virtio-net-pci,netdev=a",
			       "-device", "virtio-net-pci,netdev=a"),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "used by two NICs"));
	ck_assert_int_eq(
		PARSE("-netdev", "user,id=a", "-device", "virtio-net-pci,netdev=a,vectors=x"), -1);
	ck_assert_int_eq(
		PARSE("-netdev", "user,id=a", "-device", "virtio-net-pci,netdev=a,mq=maybe"), -1);
	ck_assert_int_eq(PARSE("-nic", "user,model=e1000"), -1);
	ck_assert_int_eq(PARSE("-net", "nic"), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_net");
	TCase *tc = tcase_create("net");

	tcase_add_test(tc, default_nic_on_user_networking);
	tcase_add_test(tc, netdev_and_device);
	tcase_add_test(tc, nic_shorthand);
	tcase_add_test(tc, network_errors);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
