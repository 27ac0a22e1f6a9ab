/* resolv.c — the host's DNS resolvers from resolv.conf (IPv4 lines only:
 * the forwarder's host sockets are IPv4). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netstack/netstack.h"
#include "netstack/usernet/internal.h"

int usernet_read_resolvers(const char *path, uint32_t *addrs, unsigned max)
{
	FILE *f = fopen(path ? path : "/etc/resolv.conf", "r");
	char line[256], word[64], val[64];
	unsigned n = 0;

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		uint32_t a;

		if (sscanf(line, " %63s %63s", word, val) != 2 || strcmp(word, "nameserver"))
			continue;
		if (ns_parse_addr(val, &a) == 0 && a != 0)
			addrs[n++] = a;
	}
	fclose(f);
	return n ? (int)n : -ENODATA;
}
