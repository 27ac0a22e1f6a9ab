/* fuzz_hwsim.c — mac80211_hwsim generic-netlink messages into the virtual
 * WLAN medium (wlan/: hwsim_msg.c's parser, medium.c's radios and
 * delivery, regulatory.c's verdicts, DFS CAC and radar non-occupancy)
 * with three radios' ports attached:
 *   port 0  a guest's virtio-wlan-pci (devices/virtio/hwsim.c on
 *           fuzz_vpci.h's stand-in transport): its messages come from TX
 *           chains in guest RAM, the medium's answers wait in its outbox
 *           for RX buffers;
 *   port 1  messages straight from the input (as the VMM's port gets them);
 *   port 2  the wlan-medium daemon's wire format (relay.c's wlan_stream:
 *           u32 length, message), reassembled from the input's bytes.
 * A virtual clock, country changes, radar events and monitor commands are
 * driven by the input too, so the regulatory paths (CAC passing, NOP
 * expiring, a new domain mid-stream) are reached.
 *
 * Every message the medium hands a port must be a well-formed netlink
 * message of at most HWSIM_MAX_MSG_LEN bytes (checked, every byte read).
 *
 * Input: a config byte (bit 0 outdoor, bit 1 enforcement off, bits 2-3
 * CAC time, bits 4-5 NOP time, bits 6-7 the first country), fuzz_vpci.h's
 * set-up of the device's two queues, then fuzz.h's records whose first
 * byte picks (% 8): 0 port 1's message, 1 bytes on port 2's stream,
 * 2 port 0's guest (fuzz_dev.h ops on RAM; step arg % 4: 0 TX doorbell,
 * 1 RX doorbell, 2 device reset, 3 the queues the device kicked), 3 the
 * clock advances (4-byte big-endian ms), 4 a country (one byte: from a
 * list; more: the text), 5 radar (2-byte MHz), 6 a monitor command
 * line, 7 enforcement on/off and `info wlan`. */
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "wlan/internal.h"
#include "tests/fuzz/fuzz_vpci.h"

static struct fuzz_dev d;
static uint64_t now_ns;
static struct wlan_medium *medium;
static struct wlan_port *ports[3];
static struct virtio_hwsim *dev;
static struct wlan_stream stream;
static FILE *devnull;

static uint64_t fuzz_clock(void *opaque)
{
	return now_ns;
}

static void bad_delivery(const char *what, size_t len)
{
	fprintf(stderr, "fuzz_hwsim: the medium sent a %zu-byte message with %s\n", len, what);
	abort();
}

/* What a port receives: the checks a guest driver's netlink code makes
 * (nlmsg_len, every attribute inside the message, a frame it can take). */
static bool check_delivered(void *opaque, const void *msg, size_t len)
{
	static uint8_t copy[HWSIM_MAX_MSG_LEN];
	struct nlmsghdr nh;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;

	if (len < off || len > sizeof(copy))
		bad_delivery("an impossible length", len);
	memcpy(copy, msg, len); /* ASan reads every byte */
	memcpy(&nh, copy, sizeof(nh));
	if (nh.nlmsg_len != len)
		bad_delivery("another nlmsg_len", len);
	while (off < len) {
		struct nlattr a;

		if (len - off < NLA_HDRLEN)
			bad_delivery("a truncated attribute", len);
		memcpy(&a, copy + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			bad_delivery("an attribute outside it", len);
		if (a.nla_type == HWSIM_ATTR_FRAME && a.nla_len - NLA_HDRLEN > HWSIM_MAX_FRAME_LEN)
			bad_delivery("a frame over 2304 bytes", len);
		off += NLA_ALIGN(a.nla_len);
	}
	return true;
}

static bool to_guest(void *opaque, const void *msg, size_t len)
{
	check_delivered(opaque, msg, len);
	return virtio_hwsim_receive(dev, msg, len);
}

static void guest_sent(void *opaque, const void *msg, size_t len)
{
	wlan_port_input(ports[0], msg, len);
}

static void stream_msg(void *opaque, const uint8_t *msg, size_t len)
{
	wlan_port_input(ports[2], msg, len);
}

static void guest_step(struct fuzz_dev *dv, unsigned arg)
{
	switch (arg % 4) {
	case 0:
	case 1:
		fuzz_vpci_serve(fuzz_vp, arg % 4);
		break;
	case 2:
		fuzz_vpci_reset(fuzz_vp);
		break;
	case 3:
		fuzz_vpci_serve_kicked(fuzz_vp);
		break;
	}
}

static void country(const uint8_t *p, size_t n)
{
	static const char *const known[] = {"00", "US", "DE", "JP", "FR", "GB", "CN", "BR",
					    "IN", "KR", "AU", "CA", "IL", "RU", "ZA", "XX"};
	char text[8], err[256];

	if (n <= 1) {
		snprintf(text, sizeof(text), "%s", known[(n ? p[0] : 0) % 16]);
	} else {
		n = n < sizeof(text) - 1 ? n : sizeof(text) - 1;
		memcpy(text, p, n);
		text[n] = 0;
	}
	wlan_medium_set_country(medium, text, err, sizeof(err));
}

static void command(const uint8_t *p, size_t n)
{
	char line[256];

	n = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
	memcpy(line, p, n);
	line[n] = 0;
	if (strstr(line, "reload")) /* would read whatever file the input names */
		return;
	wlan_medium_command(medium, line, devnull);
}

static void record(const uint8_t *r, size_t n)
{
	char err[256];
	unsigned op = n ? r[0] : 0;

	r += n ? 1 : 0;
	n -= n ? 1 : 0;
	switch (op % 8) {
	case 0:
		wlan_port_input(ports[1], r, n);
		break;
	case 1:
		if (wlan_stream_feed(&stream, r, n, stream_msg, NULL) < 0)
			stream.have = 0; /* the daemon closes such a peer; a new one connects */
		break;
	case 2:
		fuzz_dev_ops(&d, r, n);
		break;
	case 3:
		now_ns += fuzz_take(&r, &n, 4) * 1000000ull;
		break;
	case 4:
		country(r, n);
		break;
	case 5:
		wlan_medium_radar(medium, (uint32_t)fuzz_take(&r, &n, 2), err, sizeof(err));
		break;
	case 6:
		command(r, n);
		break;
	case 7:
		wlan_medium_set_enforce(medium, n && (r[0] & 1));
		wlan_medium_info(medium, devnull);
		break;
	}
}

static void report(void)
{
	struct virtio_hwsim_stats st;

	virtio_hwsim_stats(dev, &st);
	fprintf(stderr, "delivered %lu; virtio tx %lu rx %lu too-big %lu overflow %lu;",
		(unsigned long)wlan_medium_delivered(medium), (unsigned long)st.tx,
		(unsigned long)st.rx, (unsigned long)st.rx_too_big, (unsigned long)st.rx_overflow);
	for (unsigned i = 0; i < WLAN_DROP_N; i++)
		if (wlan_medium_drops(medium, i))
			fprintf(stderr, " %s %lu", wlan_drop_name(i),
				(unsigned long)wlan_medium_drops(medium, i));
	fprintf(stderr, "\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const first[4] = {NULL, "US", "DE", "JP"};
	static const int cac[4] = {-1, 0, 60, 600}, nop[4] = {-1, 0, 10, 1800};
	static bool quiet;
	struct wlan_medium_cfg c = {.clock = fuzz_clock};
	struct virtio_hwsim_opts o = {.devfn = -1, .send = guest_sent};
	unsigned cfg = (unsigned)fuzz_take(&data, &size, 1);
	const uint8_t *r;
	size_t n;
	char err[256];

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		d.step = guest_step;
		devnull = fopen("/dev/null", "w");
	}
	memset(d.fake.ram, 0, FUZZ_RAM);
	now_ns = 1000000000ull;
	c.outdoor = cfg & 1;
	c.no_enforce = cfg >> 1 & 1;
	c.cac_s = cac[cfg >> 2 & 3];
	c.nop_s = nop[cfg >> 4 & 3];
	c.country = first[cfg >> 6 & 3];
	medium = wlan_medium_new(&c, err, sizeof(err));
	dev = virtio_hwsim_new(&d.fake.host, NULL, &o, err, sizeof(err));
	if (!medium || !dev) {
		fprintf(stderr, "fuzz_hwsim: %s\n", err);
		abort();
	}
	ports[0] = wlan_port_attach(medium, "virtio", to_guest, NULL);
	ports[1] = wlan_port_attach(medium, "direct", check_delivered, NULL);
	ports[2] = wlan_port_attach(medium, "daemon", check_delivered, NULL);
	for (unsigned i = 0; i < 3; i++) /* one "malformed" line per run, not per input */
		ports[i]->told = quiet;
	stream.have = 0;
	fuzz_vpci_setup(fuzz_vp, &data, &size);
	while (fuzz_next_record(&data, &size, &r, &n))
		record(r, n);
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: how far it got */
		report();
	for (unsigned i = 0; i < 3; i++) {
		quiet |= ports[i]->told;
		wlan_port_detach(ports[i]);
	}
	virtio_hwsim_free(dev);
	wlan_medium_free(medium);
	return 0;
}
