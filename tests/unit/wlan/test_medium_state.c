/* Unit tests of the medium in the state tree (wlan/medium_state.c): a
 * medium saved on one virtual clock and loaded into a fresh one on
 * another keeps its runtime country, its radios' interface addresses,
 * their DFS CAC progress and the radar closures' time left; bad nodes are
 * refused with a reason and leave the loading medium as it was. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/devices/state_tree.h"
#include "wlan/wlan.h"

#define S(x) ((uint64_t)(x)*1000000000ull)
#define NODE "/devices/wlan-medium@0"
#define RADIO0 NODE "/radio@0"

static const uint8_t HW_A[6] = {0x42, 0, 0, 0, 0, 0}, PERM_A[6] = {0x02, 0, 0, 0, 0, 0};
static const uint8_t HW_B[6] = {0x42, 0, 0, 0, 1, 0};
static const uint8_t VIF_B[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

enum { BEACON = 0x80, DATA = 0x08 };

static uint64_t vclock;
static unsigned got_b; /* frames delivered to radio B's port */

struct side {
	struct wlan_medium *m;
	struct wlan_port *ports[2]; /* A, B */
};

static uint64_t virtual_clock(void *opaque)
{
	return vclock;
}

static bool count_b(void *opaque, const void *msg, size_t len)
{
	/* a HWSIM_CMD_FRAME (cmd after the 16-byte nlmsghdr), not TX status */
	if (opaque && ((const uint8_t *)msg)[16] == HWSIM_CMD_FRAME)
		got_b++;
	return true;
}

static void side_up(struct side *s, const char *country)
{
	struct wlan_medium_cfg c = {
		.country = country, .cac_s = 10, .nop_s = 30, .clock = virtual_clock};
	char err[256] = "";

	s->m = wlan_medium_new(&c, err, sizeof(err));
	ck_assert_msg(s->m, "medium: %s", err);
	s->ports[0] = wlan_port_attach(s->m, "a", count_b, NULL);
	s->ports[1] = wlan_port_attach(s->m, "b", count_b, &got_b);
	ck_assert(s->ports[0] && s->ports[1]);
}

static void side_down(struct side *s)
{
	wlan_port_detach(s->ports[0]);
	wlan_port_detach(s->ports[1]);
	wlan_medium_free(s->m);
}

static void send_from_a(struct side *s, uint8_t fc0, const uint8_t *to, uint32_t freq)
{
	uint8_t f[40] = {fc0}, msg[512];
	size_t n;

	memcpy(f + 4, to, 6);
	memcpy(f + 10, PERM_A, 6);
	memcpy(f + 16, PERM_A, 6);
	n = hwsim_build_tx(msg, sizeof(msg), HW_A, f, sizeof(f), HWSIM_TX_CTL_REQ_TX_STATUS, freq,
			   20, 1);
	ck_assert_uint_gt(n, 0);
	wlan_port_input(s->ports[0], msg, n);
}

static void announce_vif_b(struct side *s, bool add)
{
	uint8_t msg[128];
	size_t n = hwsim_build_mac_addr(msg, sizeof(msg), add, HW_B, VIF_B);

	wlan_port_input(s->ports[1], msg, n);
}

static bool country_is(struct side *s, const char *want)
{
	char buf[4096] = "", line[32];
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	wlan_medium_info(s->m, f);
	fclose(f);
	snprintf(line, sizeof(line), "country %s,", want);
	return strstr(buf, line) != NULL;
}

static void save_medium(void *dev, struct state_writer *w)
{
	struct side *s = dev;

	wlan_medium_save(s->m, w, "wlan-medium@0", s->ports, 2);
}

static int load_medium(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	struct side *s = dev;

	return wlan_medium_load(s->m, r, "wlan-medium@0", s->ports, 2, e, elen);
}

/* At t0 A starts its CAC on 5500 MHz (DFS under DE and FR); B has an
 * interface address of its own; the country becomes FR at run time; radar
 * closes 5600 MHz at t0 + 2 s. Saved at t0 + 5 s. */
static void *busy_tree(size_t *len)
{
	static struct side src;
	char err[128];
	void *blob;

	side_up(&src, "DE");
	vclock = S(1000);
	announce_vif_b(&src, true); /* the interface, and a scan running */
	announce_vif_b(&src, true);
	send_from_a(&src, BEACON, BCAST, 5500);
	ck_assert_int_eq(wlan_medium_set_country(src.m, "FR", err, sizeof(err)), 0);
	vclock += S(2);
	ck_assert_int_eq(wlan_medium_radar(src.m, 5600, err, sizeof(err)), 0);
	vclock += S(3);
	blob = save_tree(save_medium, &src, len);
	side_down(&src);
	return blob;
}

START_TEST(round_trip_on_another_clock)
{
	struct side dst;
	size_t len;
	void *blob = busy_tree(&len);

	vclock = S(7777); /* another process's clock */
	side_up(&dst, "DE");
	ck_assert_msg(load_tree(load_medium, &dst, blob, len) == 0, "%s", state_err);
	ck_assert(country_is(&dst, "FR"));
	/* A's CAC on 5500 had 5 of 10 s: beacons go after 5 s more, not 10 */
	send_from_a(&dst, BEACON, BCAST, 5500);
	vclock += S(4);
	send_from_a(&dst, BEACON, BCAST, 5500);
	ck_assert_uint_eq(wlan_medium_drops(dst.m, WLAN_DROP_CAC), 2);
	vclock += S(1);
	send_from_a(&dst, BEACON, BCAST, 5500);
	ck_assert_uint_eq(wlan_medium_drops(dst.m, WLAN_DROP_CAC), 2);
	/* B's own interface address still reaches B, after the scan too */
	got_b = 0;
	send_from_a(&dst, DATA, VIF_B, 5180);
	ck_assert_uint_eq(got_b, 1);
	announce_vif_b(&dst, false);
	send_from_a(&dst, DATA, VIF_B, 5180);
	ck_assert_uint_eq(got_b, 2);
	/* radar at t0 + 2 s with a 30 s NOP: 27 s left at the save */
	send_from_a(&dst, DATA, BCAST, 5600);
	ck_assert_uint_eq(wlan_medium_drops(dst.m, WLAN_DROP_RADAR), 1);
	vclock = S(7777) + S(27);
	send_from_a(&dst, DATA, BCAST, 5600);
	ck_assert_uint_eq(wlan_medium_drops(dst.m, WLAN_DROP_RADAR), 1);
	side_down(&dst);
	free(blob);
}
END_TEST

/* Each bad node is refused with its reason; the medium keeps DE. */
static const struct {
	const char *node, *prop;
	uint32_t v;
	int size;
	const char *why;
} bad_nodes[] = {
	{RADIO0, "port", 2, 4, "port 2"},
	{RADIO0, "vif-count", 5, 4, "vif-count"},
	{RADIO0, "vif-count", 0, 4, "vif-refs[0] is 2 with 0 addresses"},
	{RADIO0, "freq", 9000, 4, "freq"},
	{NODE, "radar-count", 17, 4, "radar-count"},
	{NODE, "radio-count", 65, 4, "radio-count"},
	{NODE, "radio-count", 3, 4, "radio@2"},
	{NODE, "radar-count", 2, 4, "radars"},
	{NODE, "enforce", 2, 1, "enforce"},
	{NODE, "country", 0x6431, 2, "alpha-2"},
	{NODE, "country", 0x5858, 2, "country XX"},
};

START_TEST(bad_node_refused)
{
	struct side dst;
	size_t len;
	void *blob = busy_tree(&len);
	void *b = patched_copy(blob, len, bad_nodes[_i].node, bad_nodes[_i].prop, bad_nodes[_i].v,
			       bad_nodes[_i].size);

	side_up(&dst, "DE");
	ck_assert_int_eq(load_tree(load_medium, &dst, b, len), -1);
	ck_assert_msg(strstr(state_err, bad_nodes[_i].why), "'%s' lacks '%s'", state_err,
		      bad_nodes[_i].why);
	ck_assert(country_is(&dst, "DE"));
	side_down(&dst);
	free(b);
	free(blob);
}
END_TEST

static void write_db(const char *path, const char *countries)
{
	FILE *f = fopen(path, "w");

	ck_assert(f);
	for (const char *c = countries; *c; c += 2)
		fprintf(f, "country %.2s:\n\t(2402 - 2482 @ 40), (20)\n\n", c);
	ck_assert_int_eq(fclose(f), 0);
}

/* The source runs on its own regulatory.db with country FR; by the time
 * the state loads, that file lost FR. The load fails and the destination
 * keeps its database: FR can still be set there afterwards. A reload of a
 * missing file before the save leaves the source on the file it had. */
START_TEST(db_without_the_country_changes_nothing)
{
	char path[] = "/tmp/wlan-state-db-XXXXXX", err[256];
	struct side src, dst;
	size_t len;
	void *blob;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_db(path, "00DEFR");
	side_up(&src, "DE");
	ck_assert_int_eq(wlan_medium_reload(src.m, path, err, sizeof(err)), 0);
	ck_assert_int_eq(wlan_medium_set_country(src.m, "FR", err, sizeof(err)), 0);
	/* a reload that fails keeps the path the medium runs on */
	ck_assert_int_eq(wlan_medium_reload(src.m, "/nonexistent/regulatory.db", err, sizeof(err)),
			 -1);
	blob = save_tree(save_medium, &src, &len);
	side_down(&src);

	write_db(path, "00DE");
	side_up(&dst, "DE");
	ck_assert_int_eq(load_tree(load_medium, &dst, blob, len), -1);
	ck_assert_msg(strstr(state_err, "country FR"), "%s", state_err);
	ck_assert(country_is(&dst, "DE"));
	ck_assert_msg(wlan_medium_set_country(dst.m, "FR", err, sizeof(err)) == 0, "%s", err);
	side_down(&dst);

	/* the file has FR again: the same state loads */
	write_db(path, "00DEFR");
	side_up(&dst, "DE");
	ck_assert_msg(load_tree(load_medium, &dst, blob, len) == 0, "%s", state_err);
	ck_assert(country_is(&dst, "FR"));
	side_down(&dst);
	unlink(path);
	free(blob);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wlan_state");
	TCase *t = tcase_create("medium");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, round_trip_on_another_clock);
	tcase_add_test(t, db_without_the_country_changes_nothing);
	tcase_add_loop_test(t, bad_node_refused, 0, sizeof(bad_nodes) / sizeof(bad_nodes[0]));
	suite_add_tcase(s, t);
	return check_run_suite(s);
}
