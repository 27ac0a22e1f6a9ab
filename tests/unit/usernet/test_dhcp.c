/* test_dhcp.c — usernet's DHCP server on raw BOOTP payloads: the
 * DISCOVER/OFFER/REQUEST/ACK/NAK/RELEASE/DECLINE exchanges, the lease
 * table, reply options, and hostile input (wrong op, truncated, option
 * overflow, missing end option, exhaustion, random bytes). */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/internal.h"
#include "tests/unit/check_run.h"

static struct dhcp_server srv;
static struct usernet_stats stats;
static uint8_t out[DHCP_REPLY_MAX];
static struct dhcp_dest dest;

#define NET 0x0a000200u
#define GW (NET + 2)
#define DNS (NET + 3)
#define FIRST (NET + 15)

static void setup_n(unsigned count)
{
	struct usernet_cfg c = {0};

	c.send = (usernet_send_fn)1;
	c.dhcp_count = count;
	c.hostname = "guest";
	c.mtu = 1400;
	c.lease_time_s = 3600;
	usernet_cfg_defaults(&c);
	memset(&stats, 0, sizeof(stats));
	ck_assert_int_eq(dhcp_server_init(&srv, &c, &stats), 0);
}

static void setup(void)
{
	setup_n(16);
}

static void teardown(void)
{
	dhcp_server_free(&srv);
}

/* A request message: fixed part, cookie, then the given option bytes. */
struct msg {
	uint8_t b[600];
	size_t len;
};

static void msg_init(struct msg *m, uint8_t mac_last, uint8_t type)
{
	static const uint8_t cookie[4] = {99, 130, 83, 99};

	memset(m, 0, sizeof(*m));
	m->b[0] = 1; /* BOOTREQUEST */
	m->b[1] = 1;
	m->b[2] = 6;
	m->b[4] = 0x12; /* xid */
	m->b[5] = 0x34;
	memcpy(m->b + 28, (uint8_t[6]){0x02, 0, 0, 0, 0, mac_last}, 6);
	memcpy(m->b + 236, cookie, 4);
	m->len = 240;
	if (type) {
		m->b[m->len++] = 53;
		m->b[m->len++] = 1;
		m->b[m->len++] = type;
	}
}

static void msg_opt32(struct msg *m, uint8_t code, uint32_t v)
{
	m->b[m->len++] = code;
	m->b[m->len++] = 4;
	v = htonl(v);
	memcpy(m->b + m->len, &v, 4);
	m->len += 4;
}

static void msg_end(struct msg *m)
{
	m->b[m->len++] = 255;
}

static size_t run(struct msg *m, uint64_t now)
{
	return dhcp_handle(&srv, m->b, m->len, now, out, sizeof(out), &dest);
}

/* Find option code in the reply; its length in *len, NULL if absent. */
static const uint8_t *reply_opt(size_t rlen, uint8_t code, unsigned *len)
{
	size_t i = 240;

	while (i < rlen && out[i] != 255) {
		if (out[i] == 0) {
			i++;
			continue;
		}
		if (out[i] == code) {
			*len = out[i + 1];
			return out + i + 2;
		}
		i += 2 + out[i + 1];
	}
	return NULL;
}

static uint32_t reply_u32(size_t rlen, uint8_t code)
{
	unsigned l = 0;
	const uint8_t *p = reply_opt(rlen, code, &l);
	uint32_t v;

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(l, 4);
	memcpy(&v, p, 4);
	return ntohl(v);
}

static uint32_t yiaddr(void)
{
	uint32_t v;

	memcpy(&v, out + 16, 4);
	return ntohl(v);
}

static int reply_type(size_t rlen)
{
	unsigned l = 0;
	const uint8_t *p = reply_opt(rlen, 53, &l);

	return p && l == 1 ? p[0] : -1;
}

/* DISCOVER then REQUEST for the offered address; returns it. */
static uint32_t lease(uint8_t mac_last, uint64_t now)
{
	struct msg m;
	size_t n;
	uint32_t a;

	msg_init(&m, mac_last, 1);
	msg_end(&m);
	n = run(&m, now);
	if (!n)
		return 0;
	ck_assert_int_eq(reply_type(n), 2);
	a = yiaddr();
	msg_init(&m, mac_last, 3);
	msg_opt32(&m, 50, a);
	msg_opt32(&m, 54, GW);
	msg_end(&m);
	n = run(&m, now);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(reply_type(n), 5);
	ck_assert_uint_eq(yiaddr(), a);
	return a;
}

START_TEST(test_discover_offer_options)
{
	struct msg m;
	size_t n;
	unsigned l;
	const uint8_t *p;

	msg_init(&m, 1, 1);
	msg_end(&m);
	n = run(&m, 100);
	ck_assert_uint_ge(n, 300);
	ck_assert_int_eq(out[0], 2);	       /* BOOTREPLY */
	ck_assert_mem_eq(out + 4, m.b + 4, 4); /* xid */
	ck_assert_mem_eq(out + 28, m.b + 28, 6);
	ck_assert_int_eq(reply_type(n), 2);
	ck_assert_uint_eq(yiaddr(), FIRST);
	ck_assert_uint_eq(reply_u32(n, 54), GW);
	ck_assert_uint_eq(reply_u32(n, 3), GW);
	ck_assert_uint_eq(reply_u32(n, 6), DNS);
	ck_assert_uint_eq(reply_u32(n, 1), 0xffffff00u);
	ck_assert_uint_eq(reply_u32(n, 51), 3600);
	p = reply_opt(n, 26, &l);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(l, 2);
	ck_assert_uint_eq((unsigned)p[0] << 8 | p[1], 1400);
	p = reply_opt(n, 12, &l);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(l, 5);
	ck_assert_mem_eq(p, "guest", 5);
	ck_assert(!dest.broadcast);
	ck_assert_uint_eq(dest.addr, FIRST);
	ck_assert_uint_eq(stats.dhcp_discover, 1);
	ck_assert_uint_eq(stats.dhcp_offer, 1);
}
END_TEST

START_TEST(test_broadcast_flag)
{
	struct msg m;

	msg_init(&m, 1, 1);
	m.b[10] = 0x80;
	msg_end(&m);
	ck_assert_uint_gt(run(&m, 1), 0);
	ck_assert(dest.broadcast);
}
END_TEST

START_TEST(test_request_ack_and_same_address_again)
{
	uint32_t a = lease(1, 10), b = lease(2, 10);

	ck_assert_uint_eq(a, FIRST);
	ck_assert_uint_eq(b, FIRST + 1);
	/* A bound client asking again keeps its address. */
	ck_assert_uint_eq(lease(1, 20), FIRST);
	ck_assert_uint_eq(stats.dhcp_ack, 3);
}
END_TEST

START_TEST(test_request_foreign_address_nak)
{
	struct msg m;
	size_t n;

	lease(1, 10);
	/* Client 2 asks for client 1's address, then one outside the range. */
	msg_init(&m, 2, 3);
	msg_opt32(&m, 50, FIRST);
	msg_end(&m);
	n = run(&m, 11);
	ck_assert_int_eq(reply_type(n), 6);
	ck_assert(dest.broadcast);
	msg_init(&m, 2, 3);
	msg_opt32(&m, 50, NET + 200);
	msg_end(&m);
	ck_assert_int_eq(reply_type(run(&m, 11)), 6);
	/* No address at all. */
	msg_init(&m, 2, 3);
	msg_end(&m);
	ck_assert_int_eq(reply_type(run(&m, 11)), 6);
	ck_assert_uint_eq(stats.dhcp_nak, 3);
}
END_TEST

START_TEST(test_request_other_server_drops_offer)
{
	struct msg m;

	msg_init(&m, 1, 1);
	msg_end(&m);
	ck_assert_uint_gt(run(&m, 1), 0);
	msg_init(&m, 1, 3);
	msg_opt32(&m, 50, FIRST);
	msg_opt32(&m, 54, NET + 99);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 1), 0);
	/* Our offer is gone: another client may take the address. */
	ck_assert_uint_eq(lease(2, 2), FIRST);
}
END_TEST

START_TEST(test_release_frees)
{
	struct msg m;
	uint32_t a = lease(1, 10), ci = htonl(a);

	/* A release from another MAC changes nothing. */
	msg_init(&m, 9, 7);
	memcpy(m.b + 12, &ci, 4);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 11), 0);
	ck_assert_uint_eq(lease(2, 11), FIRST + 1);
	msg_init(&m, 1, 7);
	memcpy(m.b + 12, &ci, 4);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 12), 0);
	ck_assert_uint_eq(stats.dhcp_release, 2);
	ck_assert_uint_eq(lease(3, 13), FIRST);
}
END_TEST

START_TEST(test_decline_holds_address)
{
	struct msg m;
	uint32_t a = lease(1, 10);

	msg_init(&m, 1, 4);
	msg_opt32(&m, 50, a);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 11), 0);
	/* The declined address is not offered, not even to the same client. */
	ck_assert_uint_eq(lease(1, 12), FIRST + 1);
}
END_TEST

START_TEST(test_inform)
{
	struct msg m;
	uint32_t ci = htonl(NET + 77);
	size_t n;
	unsigned l;

	msg_init(&m, 1, 8);
	memcpy(m.b + 12, &ci, 4);
	msg_end(&m);
	n = run(&m, 1);
	ck_assert_int_eq(reply_type(n), 5);
	ck_assert_uint_eq(yiaddr(), 0);
	ck_assert_ptr_null(reply_opt(n, 51, &l)); /* no lease time for INFORM */
	ck_assert_uint_eq(dest.addr, NET + 77);
}
END_TEST

START_TEST(test_exhaustion)
{
	struct msg m;

	teardown();
	setup_n(4);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(lease((uint8_t)(10 + i), 100), FIRST + (uint32_t)i);
	msg_init(&m, 50, 1);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 200), 0);
	ck_assert_uint_eq(stats.dhcp_exhausted, 1);
	/* After the leases run out (3600 s), the address comes back. */
	ck_assert_uint_eq(lease(50, 100 + 3600), FIRST);
}
END_TEST

START_TEST(test_offer_hold_expires)
{
	struct msg m;

	teardown();
	setup_n(1);
	msg_init(&m, 1, 1);
	msg_end(&m);
	ck_assert_uint_gt(run(&m, 0), 0);
	msg_init(&m, 2, 1);
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 30), 0); /* held for client 1 */
	ck_assert_uint_gt(run(&m, 61), 0); /* never requested: released */
}
END_TEST

START_TEST(test_overload_options_in_file)
{
	struct msg m;

	msg_init(&m, 1, 0);
	m.b[m.len++] = 52;
	m.b[m.len++] = 1;
	m.b[m.len++] = 1; /* file carries options */
	msg_end(&m);
	/* file field at 108: message type DISCOVER, end */
	memcpy(m.b + 108, (uint8_t[]){53, 1, 1, 255}, 4);
	ck_assert_int_eq(reply_type(run(&m, 1)), 2);
	/* The same with no end option in file: rejected. */
	memset(m.b + 108, 0, 128);
	memcpy(m.b + 108, (uint8_t[]){53, 1, 1}, 3);
	ck_assert_uint_eq(run(&m, 1), 0);
}
END_TEST

START_TEST(test_hostile_wrong_op)
{
	struct msg m;

	msg_init(&m, 1, 1);
	msg_end(&m);
	m.b[0] = 2; /* a BOOTREPLY from a client */
	ck_assert_uint_eq(run(&m, 1), 0);
	m.b[0] = 1;
	m.b[2] = 16; /* hlen */
	ck_assert_uint_eq(run(&m, 1), 0);
	m.b[2] = 6;
	m.b[28] = 0x01; /* multicast chaddr */
	ck_assert_uint_eq(run(&m, 1), 0);
	m.b[28] = 0x02;
	m.b[236] = 0; /* cookie */
	ck_assert_uint_eq(run(&m, 1), 0);
	ck_assert_uint_eq(stats.dhcp_bad, 4);
	ck_assert_uint_eq(stats.dhcp_offer, 0);
}
END_TEST

START_TEST(test_hostile_truncated)
{
	struct msg m;

	msg_init(&m, 1, 1);
	msg_end(&m);
	for (size_t len = 0; len < 240; len += 7) {
		m.len = len;
		ck_assert_uint_eq(run(&m, 1), 0);
	}
	/* Cut inside the message-type option. */
	msg_init(&m, 1, 1);
	m.len = 242;
	ck_assert_uint_eq(run(&m, 1), 0);
	ck_assert_uint_eq(stats.dhcp_offer, 0);
}
END_TEST

START_TEST(test_hostile_option_overflow)
{
	struct msg m;

	msg_init(&m, 1, 1);
	m.b[m.len++] = 12;
	m.b[m.len++] = 200; /* claims 200 bytes, 3 follow */
	memcpy(m.b + m.len, "abc", 3);
	m.len += 3;
	ck_assert_uint_eq(run(&m, 1), 0);
	ck_assert_uint_eq(stats.dhcp_bad, 1);
}
END_TEST

START_TEST(test_hostile_no_end_and_no_type)
{
	struct msg m;

	msg_init(&m, 1, 1); /* no end option */
	ck_assert_uint_eq(run(&m, 1), 0);
	msg_init(&m, 1, 0); /* no message type */
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 1), 0);
	msg_init(&m, 1, 2); /* an OFFER sent by a client */
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 1), 0);
	msg_init(&m, 1, 99); /* unknown type */
	msg_end(&m);
	ck_assert_uint_eq(run(&m, 1), 0);
	ck_assert_uint_eq(stats.dhcp_bad, 4);
}
END_TEST

START_TEST(test_hostile_random)
{
	struct msg m;
	unsigned seed = 1;

	for (int i = 0; i < 20000; i++) {
		size_t n;

		msg_init(&m, (uint8_t)i, 0);
		m.len = 240 + (size_t)(rand_r(&seed) % 300);
		for (size_t j = 240; j < m.len; j++)
			m.b[j] = (uint8_t)rand_r(&seed);
		/* Bias toward option codes the server reads. */
		if (i & 1) {
			m.b[240] = 53;
			m.b[241] = 1;
			m.b[242] = (uint8_t)(1 + rand_r(&seed) % 8);
		}
		n = run(&m, (uint64_t)i);
		ck_assert_uint_le(n, sizeof(out));
	}
	ck_assert_uint_gt(stats.dhcp_bad, 0);
}
END_TEST

/* Stateless DHCPv6 (dhcp6.c): the Reply to an Information-Request, and
 * what it refuses. */
START_TEST(test_dhcp6_information_request)
{
	static const uint8_t mac[6] = {0x52, 0x55, 0x0a, 0, 2, 2};
	uint8_t dns[16] = {0xfd, [15] = 3}, rep[512];
	uint8_t ir[] = {11, 1, 2, 3, 0, 1, 0, 4, 0xde, 0xad, 0xbe, 0xef, 0, 6, 0, 2, 0, 23};
	struct usernet_stats st = {0};
	size_t n;

	n = dhcp6_handle(mac, dns, ir, sizeof(ir), rep, sizeof(rep), &st);
	ck_assert_uint_gt(n, 4);
	ck_assert_uint_eq(rep[0], 7);					    /* Reply */
	ck_assert_mem_eq(rep + 1, ir + 1, 3);				    /* transaction id */
	ck_assert(memmem(rep, n, (uint8_t[]){0, 2, 0, 10, 0, 3, 0, 1}, 8)); /* our DUID-LL */
	ck_assert(memmem(rep, n, mac, 6));
	ck_assert(memmem(rep, n, (uint8_t[]){0, 1, 0, 4, 0xde, 0xad, 0xbe, 0xef}, 8));
	ck_assert(memmem(rep, n, (uint8_t[]){0, 23, 0, 16}, 4));
	ck_assert(memmem(rep, n, dns, 16));
	ck_assert_uint_eq(st.dhcp6_info, 1);
	/* Solicit (stateful): not ours to answer. */
	ir[0] = 1;
	ck_assert_uint_eq(dhcp6_handle(mac, dns, ir, sizeof(ir), rep, sizeof(rep), &st), 0);
	ir[0] = 11;
	/* An option running past the end. */
	ir[15] = 40; /* the ORO claims 40 bytes */
	ck_assert_uint_eq(dhcp6_handle(mac, dns, ir, sizeof(ir), rep, sizeof(rep), &st), 0);
	ck_assert_uint_eq(st.dhcp_bad, 1);
	/* Addressed to another server. */
	{
		uint8_t other[] = {11, 1, 2, 3, 0, 2, 0, 10, 0, 3, 0, 1, 1, 2, 3, 4, 5, 6};

		ck_assert_uint_eq(
			dhcp6_handle(mac, dns, other, sizeof(other), rep, sizeof(rep), &st), 0);
		ck_assert_uint_eq(st.dhcp_bad, 2);
	}
	/* Truncated header. */
	ck_assert_uint_eq(dhcp6_handle(mac, dns, ir, 3, rep, sizeof(rep), &st), 0);
}
END_TEST

static Suite *dhcp_suite(void)
{
	Suite *s = suite_create("usernet_dhcp");
	TCase *t = tcase_create("dhcp");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_discover_offer_options);
	tcase_add_test(t, test_broadcast_flag);
	tcase_add_test(t, test_request_ack_and_same_address_again);
	tcase_add_test(t, test_request_foreign_address_nak);
	tcase_add_test(t, test_request_other_server_drops_offer);
	tcase_add_test(t, test_release_frees);
	tcase_add_test(t, test_decline_holds_address);
	tcase_add_test(t, test_inform);
	tcase_add_test(t, test_exhaustion);
	tcase_add_test(t, test_offer_hold_expires);
	tcase_add_test(t, test_overload_options_in_file);
	tcase_add_test(t, test_hostile_wrong_op);
	tcase_add_test(t, test_hostile_truncated);
	tcase_add_test(t, test_hostile_option_overflow);
	tcase_add_test(t, test_hostile_no_end_and_no_type);
	tcase_add_test(t, test_hostile_random);
	tcase_add_test(t, test_dhcp6_information_request);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(dhcp_suite());
}
