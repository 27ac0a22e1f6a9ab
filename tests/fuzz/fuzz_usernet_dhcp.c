/* fuzz_usernet_dhcp.c — usernet's DHCP server (dhcp.c: BOOTP fields,
 * options with overload, the lease table) and its stateless DHCPv6 server
 * (dhcp6.c), fed UDP payloads as they arrive from the guest. One server
 * lives across inputs (leases accumulate; the clock moves so they expire).
 * Input: records (fuzz.h); a record's first byte picks v4 (even) or v6. */
#include <string.h>

#include "netstack/usernet/internal.h"
#include "tests/fuzz/fuzz.h"

static struct dhcp_server server;
static struct usernet_stats stats;
static uint64_t now_s = 1000;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = {0x52, 0x55, 10, 0, 2, 2};
	static const uint8_t dns6[16] = {0xfd, 0, [15] = 3};
	static bool ready;
	uint8_t out[2048];
	const uint8_t *msg;
	size_t len;

	if (!ready) {
		struct usernet_cfg cfg = {.hostname = "fuzz", .domain = "example.org"};

		usernet_cfg_defaults(&cfg);
		cfg.dhcp_count = 4; /* small: exhaustion is reachable */
		dhcp_server_init(&server, &cfg, &stats);
		ready = true;
	}
	while (fuzz_next_record(&data, &size, &msg, &len)) {
		struct dhcp_dest dest;

		if (!len)
			continue;
		if (msg[0] & 1)
			dhcp6_handle(mac, dns6, msg + 1, len - 1, out, sizeof(out), &stats);
		else
			dhcp_handle(&server, msg + 1, len - 1, now_s, out, DHCP_REPLY_MAX, &dest);
		now_s += 3600;
	}
	return 0;
}
