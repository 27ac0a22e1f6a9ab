/* Unit tests of the radio medium (wlan/): the verdict per rule kind
 * in real countries of the packaged regulatory.db, delivery and ACK
 * status, a country change in flight, DFS CAC and radar non-occupancy on
 * a virtual clock, malformed hwsim messages and the relay framing. */
#include <check.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wlan/wlan.h"
#include "tests/unit/check_run.h"

#define S(x) ((uint64_t)(x)*1000000000ull)

static const uint8_t HW_A[6] = {0x42, 0, 0, 0, 0, 0}, PERM_A[6] = {0x02, 0, 0, 0, 0, 0};
static const uint8_t HW_B[6] = {0x42, 0, 0, 0, 1, 0}, PERM_B[6] = {0x02, 0, 0, 0, 1, 0};
static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ------------------------------------------------------------ fixtures */

struct inbox {
	unsigned n;
	bool full; /* refuse messages: the receiver's queue overflows */
	uint8_t msg[16][HWSIM_MAX_MSG_LEN];
	size_t len[16];
};

static uint64_t vclock;
static struct inbox in_a, in_b;
static struct wlan_medium *med;
static struct wlan_port *port_a, *port_b;

static uint64_t virtual_clock(void *opaque)
{
	return vclock;
}

static bool keep(void *opaque, const void *msg, size_t len)
{
	struct inbox *in = opaque;

	if (in->full)
		return false;
	ck_assert_uint_lt(in->n, 16);
	memcpy(in->msg[in->n], msg, len);
	in->len[in->n++] = len;
	return true;
}

static void medium_up(const char *country, bool outdoor, int cac_s, int nop_s)
{
	struct wlan_medium_cfg c = {.country = country,
				    .outdoor = outdoor,
				    .cac_s = cac_s,
				    .nop_s = nop_s,
				    .clock = virtual_clock};
	char err[256] = "";

	vclock = S(1000);
	memset(&in_a, 0, sizeof(in_a));
	memset(&in_b, 0, sizeof(in_b));
	med = wlan_medium_new(&c, err, sizeof(err));
	ck_assert_msg(med, "medium: %s", err);
	port_a = wlan_port_attach(med, "vm-a", keep, &in_a);
	port_b = wlan_port_attach(med, "vm-b", keep, &in_b);
	ck_assert(port_a && port_b);
}

static void medium_down(void)
{
	wlan_port_detach(port_a);
	wlan_port_detach(port_b);
	wlan_medium_free(med);
}

/* An 802.11 header: frame control, duration, addr1..3, sequence. */
static size_t frame(uint8_t *f, uint8_t fc0, const uint8_t *addr1, const uint8_t *addr2)
{
	memset(f, 0, 40);
	f[0] = fc0;
	memcpy(f + 4, addr1, 6);
	memcpy(f + 10, addr2, 6);
	memcpy(f + 16, addr2, 6);
	return 40;
}

enum { BEACON = 0x80, PROBE = 0x40, DATA = 0x08 };

static void send_frame(struct wlan_port *p, const uint8_t *hw, const uint8_t *perm, uint8_t fc0,
		       const uint8_t *to, uint32_t freq, uint32_t width, uint64_t cookie)
{
	uint8_t f[40], msg[512];
	size_t fl = frame(f, fc0, to, perm);
	size_t n = hwsim_build_tx(msg, sizeof(msg), hw, f, (uint32_t)fl, HWSIM_TX_CTL_REQ_TX_STATUS,
				  freq, width, cookie);

	ck_assert_uint_gt(n, 0);
	wlan_port_input(p, msg, n);
}

/* Radio B makes itself known (hwsim does this when an interface comes up). */
static void announce_b(void)
{
	uint8_t msg[128];
	size_t n = hwsim_build_mac_addr(msg, sizeof(msg), true, HW_B, PERM_B);

	wlan_port_input(port_b, msg, n);
}

static void parsed(const struct inbox *in, unsigned i, struct hwsim_msg *m)
{
	/* what the medium sends is checked by the same parser, minus the
	 * guest-side command check: parse the attributes via a FRAME view */
	const char *why = NULL;
	uint8_t copy[HWSIM_MAX_MSG_LEN];

	ck_assert_uint_lt(i, in->n);
	memcpy(copy, in->msg[i], in->len[i]);
	hwsim_msg_parse(copy, in->len[i], m, &why);
	ck_assert_uint_ge(in->len[i], NLMSG_HDRLEN + GENL_HDRLEN);
	m->cmd = in->msg[i][NLMSG_HDRLEN];
}

/* ---------------------------------------------- delivery and ACK status */

START_TEST(unicast_delivered_and_acked)
{
	struct hwsim_msg m;

	medium_up("DE", false, -1, -1);
	announce_b();
	send_frame(port_a, HW_A, PERM_A, DATA, PERM_B, 5180, 20, 77);
	ck_assert_uint_eq(in_b.n, 1);
	parsed(&in_b, 0, &m);
	ck_assert_uint_eq(m.cmd, HWSIM_CMD_FRAME);
	ck_assert_mem_eq(m.rx_addr, HW_B, 6);
	ck_assert_uint_eq(m.freq, 5180);
	ck_assert_uint_eq(m.frame_len, 40);
	ck_assert_int_lt((int32_t)m.signal, -30); /* path loss at 10 m */
	ck_assert_int_gt((int32_t)m.signal, -90);
	ck_assert_uint_eq(in_a.n, 1);
	parsed(&in_a, 0, &m);
	ck_assert_uint_eq(m.cmd, HWSIM_CMD_TX_INFO_FRAME);
	ck_assert_mem_eq(m.tx_addr, HW_A, 6);
	ck_assert_uint_eq(m.cookie, 77);
	ck_assert(m.flags & HWSIM_TX_STAT_ACK);
	ck_assert_uint_eq(wlan_medium_delivered(med), 1);
	medium_down();
}
END_TEST

START_TEST(nobody_home_means_no_ack)
{
	static const uint8_t stranger[6] = {0x02, 9, 9, 9, 9, 9};
	struct hwsim_msg m;

	medium_up("DE", false, -1, -1);
	announce_b();
	send_frame(port_a, HW_A, PERM_A, DATA, stranger, 5180, 20, 5);
	ck_assert_uint_eq(in_b.n, 0);
	parsed(&in_a, 0, &m);
	ck_assert(!(m.flags & HWSIM_TX_STAT_ACK));
	/* B on another channel does not hear a unicast frame for it either */
	send_frame(port_b, HW_B, PERM_B, DATA, PERM_A, 2412, 20, 6);
	in_b.n = 0;
	send_frame(port_a, HW_A, PERM_A, DATA, PERM_B, 5180, 20, 7);
	ck_assert_uint_eq(in_b.n, 0);
	medium_down();
}
END_TEST

/* hwsim announces an interface's address when it comes up and again for
 * each scan run from it, and withdraws the scan's at its end: the medium
 * counts, so the interface keeps its address (a station whose MAC is not
 * the radio's permanent one could not authenticate before). */
START_TEST(scan_withdrawal_keeps_the_interface_address)
{
	const uint8_t own[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	uint8_t msg[128];
	size_t add = 0, del;

	medium_up("DE", false, -1, -1);
	for (unsigned i = 0; i < 2; i++) { /* the interface, then a scan */
		add = hwsim_build_mac_addr(msg, sizeof(msg), true, HW_B, own);
		wlan_port_input(port_b, msg, add);
	}
	del = hwsim_build_mac_addr(msg, sizeof(msg), false, HW_B, own);
	wlan_port_input(port_b, msg, del); /* the scan is over */
	send_frame(port_a, HW_A, PERM_A, DATA, own, 5180, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	wlan_port_input(port_b, msg, del); /* the interface goes down */
	send_frame(port_a, HW_A, PERM_A, DATA, own, 5180, 20, 2);
	ck_assert_uint_eq(in_b.n, 1);
	medium_down();
}
END_TEST

START_TEST(broadcast_reaches_every_other_radio)
{
	struct hwsim_msg m;

	medium_up("DE", false, -1, -1);
	announce_b();
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 2412, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	ck_assert_uint_eq(in_a.n, 1); /* only the TX status, not its own beacon */
	parsed(&in_a, 0, &m);
	ck_assert(!(m.flags & HWSIM_TX_STAT_ACK));
	medium_down();
}
END_TEST

START_TEST(same_mac_in_two_vms_routed_by_port)
{
	/* both VMs have radio 0: each keeps its own counters and channel */
	medium_up("DE", false, -1, -1);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 2412, 20, 1);
	send_frame(port_b, HW_A, PERM_A, DATA, BCAST, 2412, 20, 2);
	ck_assert_uint_eq(in_a.n, 2); /* B's broadcast plus A's own TX status */
	ck_assert_uint_eq(in_b.n, 1); /* B's TX status only: it joined after A sent */
	medium_down();
}
END_TEST

START_TEST(full_receiver_counted_as_overflow)
{
	medium_up("DE", false, -1, -1);
	announce_b();
	in_b.full = true;
	send_frame(port_a, HW_A, PERM_A, DATA, PERM_B, 5180, 20, 1);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_RX_OVERFLOW), 1);
	medium_down();
}
END_TEST

START_TEST(closed_port_is_off_the_air)
{
	medium_up("DE", false, -1, -1);
	announce_b();
	wlan_port_close(port_b);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 2412, 20, 1);
	ck_assert_uint_eq(in_b.n, 0); /* nothing delivered to it */
	send_frame(port_b, HW_B, PERM_B, DATA, BCAST, 2412, 20, 2);
	ck_assert_uint_eq(in_a.n, 1); /* its input ignored: only A's own status */
	ck_assert_uint_eq(wlan_medium_delivered(med), 0);
	medium_down();
}
END_TEST

/* ------------------------------------------------ verdicts per country */

struct rule_case {
	const char *country;
	bool outdoor;
	uint32_t freq, width;
	enum regdb_frame kind;
	enum wlan_drop want;
};

#define OK WLAN_DROP_N
static const struct rule_case rule_cases[] = {
	/* world: everything passive outside 2.4 GHz channels 1-11 */
	{"00", false, 2412, 20, REGDB_FRAME_BEACON, OK},
	{"00", false, 2467, 20, REGDB_FRAME_BEACON, WLAN_DROP_NO_IR},
	{"00", false, 5180, 20, REGDB_FRAME_BEACON, WLAN_DROP_NO_IR},
	{"00", false, 5180, 20, REGDB_FRAME_DATA, OK},
	{"00", false, 5500, 20, REGDB_FRAME_PROBE, WLAN_DROP_NO_IR},
	{"00", false, 5900, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_RULE},
	/* US: U-NII-1 open, DFS passive, 5.9 GHz NO-IR */
	{"US", false, 5180, 80, REGDB_FRAME_BEACON, OK},
	{"US", false, 5260, 20, REGDB_FRAME_PROBE, WLAN_DROP_DFS_PASSIVE},
	{"US", false, 5865, 20, REGDB_FRAME_BEACON, WLAN_DROP_NO_IR},
	{"US", false, 2484, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_RULE},
	{"US", false, 2462, 20, REGDB_FRAME_BEACON, OK},
	/* DE: indoor-only U-NII-1/2, 40 MHz in 2.4 GHz */
	{"DE", false, 5180, 160, REGDB_FRAME_DATA, OK},
	{"DE", true, 5180, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_OUTDOOR},
	{"DE", true, 5500, 20, REGDB_FRAME_DATA, OK},
	{"DE", false, 2442, 80, REGDB_FRAME_DATA, WLAN_DROP_WIDTH},
	{"DE", false, 2484, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_RULE},
	{"DE", false, 5745, 80, REGDB_FRAME_BEACON, OK},
	/* JP: 4.9 GHz, channel 14 CCK only */
	{"JP", false, 4920, 20, REGDB_FRAME_BEACON, OK},
	{"JP", false, 2484, 20, REGDB_FRAME_DATA, WLAN_DROP_OTHER_RULE},
	{"JP", false, 5745, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_RULE},
	{"JP", false, 5500, 20, REGDB_FRAME_PROBE, WLAN_DROP_DFS_PASSIVE},
	/* IL: DFS and indoor-only across most of 5 GHz */
	{"IL", true, 5500, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_OUTDOOR},
	{"IL", true, 5260, 20, REGDB_FRAME_DATA, WLAN_DROP_NO_OUTDOOR},
	{"IL", true, 5745, 20, REGDB_FRAME_DATA, OK},
	{"IL", false, 5500, 20, REGDB_FRAME_PROBE, WLAN_DROP_DFS_PASSIVE},
};

START_TEST(rule_kinds_in_real_countries)
{
	const struct rule_case *c = &rule_cases[_i];
	struct wlan_medium_cfg cfg = {
		.country = c->country, .outdoor = c->outdoor, .cac_s = 0, .nop_s = -1};
	struct wlan_tx tx = {c->freq, c->width, c->kind, S(1)};
	char err[256];
	struct wlan_reg *r = wlan_reg_new(&cfg, err, sizeof(err));
	int32_t sig;

	ck_assert_msg(r, "%s", err);
	for (int pass = 0; pass < 2; pass++) /* the cached answer is the same */
		ck_assert_msg(wlan_reg_check(r, &tx, S(2), &sig) == c->want,
			      "%s%s %u MHz/%u kind %d: got %s, want %s", c->country,
			      c->outdoor ? " outdoor" : "", c->freq, c->width, c->kind,
			      wlan_drop_name(wlan_reg_check(r, &tx, S(2), &sig)),
			      wlan_drop_name(c->want));
	wlan_reg_free(r);
}
END_TEST

START_TEST(country_by_alpha3_and_name)
{
	struct wlan_medium_cfg cfg = {.country = "DEU", .cac_s = -1, .nop_s = -1};
	char err[256];
	struct wlan_reg *r = wlan_reg_new(&cfg, err, sizeof(err));

	ck_assert_msg(r, "%s", err);
	ck_assert_str_eq(wlan_reg_country(r), "DE");
	ck_assert_int_eq(wlan_reg_set_country(r, "Japan", err, sizeof(err)), 0);
	ck_assert_str_eq(wlan_reg_country(r), "JP");
	ck_assert_int_eq(wlan_reg_set_country(r, "Atlantis", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown country"));
	ck_assert_str_eq(wlan_reg_country(r), "JP");
	wlan_reg_free(r);
}
END_TEST

/* ------------------------------------------- runtime changes, DFS, radar */

START_TEST(country_change_in_flight)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	medium_up("DE", false, -1, -1);
	announce_b();
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	wlan_medium_command(med, "wlan_country 00", f);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 2);
	ck_assert_uint_eq(in_b.n, 1); /* world: NO-IR on 5180 */
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_NO_IR), 1);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5180, 20, 3);
	ck_assert_uint_eq(in_b.n, 2); /* data still flows */
	wlan_medium_command(med, "wlan_country DE", f);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 4);
	ck_assert_uint_eq(in_b.n, 3);
	wlan_medium_command(med, "wlan_country XX", f);
	wlan_medium_command(med, "info wlan", f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "regulatory domain now 00"));
	ck_assert_ptr_nonnull(strstr(out, "wlan_country: no regulatory domain for 'XX'"));
	ck_assert_ptr_nonnull(strstr(out, " no-ir=1"));
	ck_assert_ptr_nonnull(strstr(out, "medium: country DE"));
	free(out);
	medium_down();
}
END_TEST

START_TEST(regdb_reload_applies_to_every_radio)
{
	static const char dbtxt[] = "country 00:\n\t(2402 - 2472 @ 40), (20)\n"
				    "country DE: DFS-ETSI\n\t(5170 - 5250 @ 80), (20), NO-IR\n";
	char path[] = "/tmp/vmm-wlan-db-XXXXXX", err[256];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, dbtxt, sizeof(dbtxt) - 1), (int)sizeof(dbtxt) - 1);
	close(fd);
	medium_up("DE", false, -1, -1);
	announce_b();
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	ck_assert_int_eq(wlan_medium_reload(med, path, err, sizeof(err)), 0);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 2);
	ck_assert_uint_eq(in_b.n, 1); /* the new database's DE: NO-IR */
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_NO_IR), 1);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 2412, 20, 3);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_NO_RULE), 1);
	ck_assert_int_eq(wlan_medium_reload(med, "/nonexistent/regulatory.db", err, sizeof(err)),
			 -1);
	ck_assert_uint_gt(strlen(err), 0);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 4);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_NO_IR), 2); /* unchanged */
	unlink(path);
	medium_down();
}
END_TEST

START_TEST(cac_and_radar_on_virtual_time)
{
	char err[128];

	medium_up("DE", false, 10, 30);
	announce_b();
	uint64_t t0 = vclock;

	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 1);
	vclock = t0 + S(9);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 2);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_CAC), 2);
	ck_assert_uint_eq(in_b.n, 0);
	vclock = t0 + S(10);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 3);
	ck_assert_uint_eq(in_b.n, 1);
	/* a non-DFS channel needs no CAC; leaving restarts it */
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5180, 20, 4);
	ck_assert_uint_eq(in_b.n, 2);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 5);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_CAC), 3);
	vclock = t0 + S(20);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 6);
	ck_assert_uint_eq(in_b.n, 3);
	/* radar: every frame on the channel (and a wide one over it) is
	 * dropped for the NOP, then beacons wait for a new CAC */
	ck_assert_int_eq(wlan_medium_radar(med, 5500, err, sizeof(err)), 0);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5500, 20, 7);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5520, 80, 8);
	vclock = t0 + S(49);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5500, 20, 9);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_RADAR), 3);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5580, 20, 10); /* another channel */
	ck_assert_uint_eq(in_b.n, 4);
	vclock = t0 + S(50);
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 5500, 20, 11);
	ck_assert_uint_eq(in_b.n, 5);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 12);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_CAC), 4);
	vclock = t0 + S(60);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5500, 20, 13);
	ck_assert_uint_eq(in_b.n, 6);
	ck_assert_int_eq(wlan_medium_radar(med, 100, err, sizeof(err)), -1);
	medium_down();
}
END_TEST

START_TEST(enforcement_off_delivers_everything)
{
	medium_up("00", false, -1, -1);
	announce_b();
	wlan_medium_set_enforce(med, false);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5900, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	wlan_medium_set_enforce(med, true);
	send_frame(port_a, HW_A, PERM_A, BEACON, BCAST, 5900, 20, 2);
	ck_assert_uint_eq(in_b.n, 1);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_NO_RULE), 1);
	medium_down();
}
END_TEST

/* ------------------------------------------------------ malformed input */

static size_t valid_msg(uint8_t *msg)
{
	uint8_t f[40];

	frame(f, DATA, BCAST, PERM_A);
	return hwsim_build_tx(msg, 512, HW_A, f, 40, 0, 2412, 20, 9);
}

/* Offsets in valid_msg's layout: headers 20; TRANSMITTER 20 (12 bytes);
 * FRAME 32 (44); FLAGS 76 (8); FREQ 84 (8); TX_INFO 92 (12); TX_INFO_FLAGS
 * 104 (16); COOKIE 120 (12); total 132. */
enum { A_TX = 20, A_FRAME = 32, A_FLAGS = 76, A_FREQ = 84, A_INFO = 92, A_COOKIE = 120 };

struct mutation {
	const char *name;
	size_t len;	      /* 0: the whole message */
	int at, value, width; /* poke value (width 1/2/4 bytes) at offset; at < 0: none */
};

static const struct mutation mutations[] = {
	{"empty", 1, -1, 0, 0},
	{"half a netlink header", 10, -1, 0, 0},
	{"no genetlink header", 19, -1, 0, 0},
	{"nlmsg_len beyond the buffer", 0, 0, 4000, 4},
	{"nlmsg_len below the headers", 0, 0, 12, 4},
	{"truncated in an attribute header", 22, 0, 22, 4},
	{"attribute longer than the message", 0, A_FRAME, 400, 2},
	{"attribute length below its header", 0, A_FLAGS, 2, 2},
	{"address of 5 bytes", 0, A_TX, 9, 2},
	{"flags of 3 bytes", 0, A_FLAGS, 7, 2},
	{"tx info of 7 bytes", 0, A_INFO, 11, 2},
	{"cookie of 4 bytes", 0, A_COOKIE, 8, 2},
	{"empty frame", 0, A_FRAME, 4, 2},
	{"frame of 9 bytes", 0, A_FRAME, 13, 2},
	{"protocol version 1", 0, A_FRAME + 4, 0x09, 1},
	{"reserved frame type", 0, A_FRAME + 4, 0x0c, 1},
	{"no frequency", 0, A_FREQ + 2, 0x7f, 2},
	{"frequency 0", 0, A_FREQ + 4, 0, 4},
	{"no cookie", 0, A_COOKIE + 2, 0x7f, 2},
	{"a command the guest does not send", 0, 16, HWSIM_CMD_TX_INFO_FRAME, 1},
	{"message cut inside the frame", 60, 0, 60, 4},
};

START_TEST(malformed_message_dropped_and_counted)
{
	const struct mutation *mu = &mutations[_i];
	uint8_t msg[512];
	size_t n = valid_msg(msg);
	struct hwsim_msg m;
	const char *why = NULL;
	uint32_t v = (uint32_t)mu->value;

	ck_assert_uint_eq(n, 132);
	ck_assert_int_eq(hwsim_msg_parse(msg, n, &m, &why), 0);
	if (mu->at >= 0)
		memcpy(msg + mu->at, &v, (size_t)mu->width);
	if (mu->len)
		n = mu->len;
	ck_assert_msg(hwsim_msg_parse(msg, n, &m, &why) == -1, "%s: accepted", mu->name);
	ck_assert_ptr_nonnull(why);
	medium_up("DE", false, -1, -1);
	announce_b();
	wlan_port_input(port_a, msg, n);
	ck_assert_uint_eq(wlan_medium_drops(med, WLAN_DROP_MALFORMED), 1);
	ck_assert_uint_eq(in_b.n, 0);
	/* the radio keeps working */
	send_frame(port_a, HW_A, PERM_A, DATA, BCAST, 2412, 20, 1);
	ck_assert_uint_eq(in_b.n, 1);
	medium_down();
}
END_TEST

START_TEST(random_corruption_never_crashes)
{
	uint8_t good[512], msg[512];
	size_t n = valid_msg(good);
	unsigned seed = 1;

	medium_up("DE", false, -1, -1);
	announce_b();
	for (int i = 0; i < 20000; i++) {
		memcpy(msg, good, n);
		for (int k = 0; k < 1 + i % 4; k++)
			msg[rand_r(&seed) % n] = (uint8_t)rand_r(&seed);
		wlan_port_input(port_a, msg, 1 + rand_r(&seed) % n);
		in_a.n = in_b.n = 0;
	}
	ck_assert_uint_gt(wlan_medium_drops(med, WLAN_DROP_MALFORMED), 1000);
	medium_down();
}
END_TEST

START_TEST(medium_messages_parse_back)
{
	uint8_t f[40], buf[256], info[HWSIM_TX_INFO_LEN] = {3, 1};
	struct hwsim_msg m;
	size_t n;

	frame(f, DATA, BCAST, PERM_A);
	n = hwsim_build_frame(buf, sizeof(buf), 0x1c, HW_B, f, 40, 2, -55, 5180);
	hwsim_msg_parse(buf, n, &m, NULL);
	ck_assert_uint_eq(m.nl_type, 0x1c);
	ck_assert_uint_eq(m.rx_rate, 2);
	ck_assert_int_eq((int32_t)m.signal, -55);
	n = hwsim_build_tx_info(buf, sizeof(buf), 0x1c, HW_A, HWSIM_TX_STAT_ACK, -50, info,
				1ull << 40);
	hwsim_msg_parse(buf, n, &m, NULL);
	ck_assert_uint_eq(m.cookie, 1ull << 40);
	ck_assert_mem_eq(m.tx_info, info, sizeof(info));
	ck_assert_uint_eq(hwsim_build_frame(buf, 40, 0x1c, HW_B, f, 40, 0, 0, 5180), 0);
}
END_TEST

START_TEST(rx_rate_is_a_legacy_index)
{
	uint8_t f[40], buf[512];
	struct hwsim_msg m;
	size_t n;

	frame(f, DATA, BCAST, PERM_A);
	n = hwsim_build_tx(buf, sizeof(buf), HW_A, f, 40, 0, 5180, 20, 1);
	ck_assert_int_eq(hwsim_msg_parse(buf, n, &m, NULL), 0);
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 0);
	((uint8_t *)m.tx_info)[0] = 5; /* 5 GHz legacy index 5 */
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 5);
	((uint8_t *)m.tx_info)[0] = 9; /* past the 5 GHz table (8) */
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 0);
	m.freq = 2412; /* 12 legacy rates at 2.4 GHz */
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 9);
	((uint8_t *)m.tx_info_flags)[1] = HWSIM_RC_MCS; /* MCS 9: no legacy index */
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 0);
	((uint8_t *)m.tx_info)[0] = 0xff; /* -1: no rate */
	((uint8_t *)m.tx_info_flags)[1] = 0;
	ck_assert_uint_eq(hwsim_msg_rx_rate(&m), 0);
}
END_TEST

/* ------------------------------------------------------------- relay */

static unsigned got_msgs;
static size_t got_len;

static void got(void *opaque, const uint8_t *msg, size_t len)
{
	got_msgs++;
	got_len = len;
}

START_TEST(relay_stream_reassembles_and_rejects_bad_lengths)
{
	static struct wlan_stream s;
	uint8_t wire[2 * (4 + 132)], msg[512];
	uint32_t n = (uint32_t)valid_msg(msg);

	for (int k = 0; k < 2; k++) {
		memcpy(wire + k * (4 + n), &n, 4);
		memcpy(wire + k * (4 + n) + 4, msg, n);
	}
	got_msgs = 0;
	memset(&s, 0, sizeof(s));
	for (size_t i = 0; i < sizeof(wire); i += 7) /* in odd-sized pieces */
		ck_assert_int_eq(wlan_stream_feed(&s, wire + i,
						  sizeof(wire) - i < 7 ? sizeof(wire) - i : 7, got,
						  NULL),
				 0);
	ck_assert_uint_eq(got_msgs, 2);
	ck_assert_uint_eq(got_len, n);
	n = HWSIM_MAX_MSG_LEN + 1;
	ck_assert_int_eq(wlan_stream_feed(&s, (uint8_t *)&n, 4, got, NULL), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wlan");
	TCase *t = tcase_create("medium");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, unicast_delivered_and_acked);
	tcase_add_test(t, nobody_home_means_no_ack);
	tcase_add_test(t, scan_withdrawal_keeps_the_interface_address);
	tcase_add_test(t, broadcast_reaches_every_other_radio);
	tcase_add_test(t, same_mac_in_two_vms_routed_by_port);
	tcase_add_test(t, full_receiver_counted_as_overflow);
	tcase_add_test(t, closed_port_is_off_the_air);
	tcase_add_loop_test(t, rule_kinds_in_real_countries, 0,
			    sizeof(rule_cases) / sizeof(rule_cases[0]));
	tcase_add_test(t, country_by_alpha3_and_name);
	tcase_add_test(t, country_change_in_flight);
	tcase_add_test(t, regdb_reload_applies_to_every_radio);
	tcase_add_test(t, cac_and_radar_on_virtual_time);
	tcase_add_test(t, enforcement_off_delivers_everything);
	tcase_add_loop_test(t, malformed_message_dropped_and_counted, 0,
			    sizeof(mutations) / sizeof(mutations[0]));
	tcase_add_test(t, random_corruption_never_crashes);
	tcase_add_test(t, medium_messages_parse_back);
	tcase_add_test(t, rx_rate_is_a_legacy_index);
	tcase_add_test(t, relay_stream_reassembles_and_rejects_bad_lengths);
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
