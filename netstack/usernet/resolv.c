/* resolv.c — the host's DNS resolvers from resolv.conf, IPv4 and IPv6
 * (a scoped link-local "fe80::1%eth0" is skipped: the forwarder's
 * sockets carry no scope). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netstack/netstack.h"
#include "netstack/usernet/internal.h"

int usernet_read_resolvers(const char *path, struct ns_sockaddr *addrs, unsigned max)
{
	FILE *f = fopen(path ? path : "/etc/resolv.conf", "r");
	char line[256], word[64], val[64];
	unsigned n = 0;

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		static const uint8_t any6[16];
		struct ns_sockaddr a = {0};

		if (sscanf(line, " %63s %63s", word, val) != 2 || strcmp(word, "nameserver"))
			continue;
		if (ns_parse_addr(val, &a.addr) == 0 && a.addr != 0)
			addrs[n++] = a;
		else if (ns_parse_addr6(val, a.addr6) == 0 && memcmp(a.addr6, any6, 16)) {
			a.family = NS_AF_INET6;
			addrs[n++] = a;
		}
	}
	fclose(f);
	return n ? (int)n : -ENODATA;
}
