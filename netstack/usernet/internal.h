/* internal.h — usernet's private declarations shared by its files. */
#ifndef USERNET_INTERNAL_H
#define USERNET_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "netstack/usernet/usernet.h"

/* ------------------------------------------------------------ backends */

struct usernet_fwd;

/* One implementation of struct usernet (netstack or libslirp). */
struct usernet_ops {
	const char *name;
	/* Returns the implementation's state or NULL with err filled. */
	void *(*create)(const struct usernet_cfg *cfg, char *err, size_t errlen);
	void (*destroy)(void *impl);
	void (*input)(void *impl, const void *frame, size_t len);
	int (*fd)(void *impl);
	int (*timeout_ms)(void *impl);
	void (*poll)(void *impl);
	int (*hostfwd)(void *impl, bool add, const struct usernet_fwd *fwd, char *err,
		       size_t errlen);
	void (*stats)(void *impl, struct usernet_stats *st);
	/* NULL: the implementation keeps no state across a save. fds NULL:
	 * no host socket moves (connections are saved to be reset). */
	int (*save)(void *impl, void **buf, size_t *len, int **fds, unsigned *nfds, char *err,
		    size_t errlen);
	int (*load)(void *impl, const void *buf, size_t len, const int *fds, unsigned nfds,
		    char *err, size_t errlen);
	void (*hand_over)(void *impl);
};

extern const struct usernet_ops usernet_netstack_ops;
extern const struct usernet_ops usernet_slirp_ops;

/* Formats a one-line reason into err (may be NULL); returns rc. */
int usernet_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------- helpers */

/* A parsed hostfwd spec (usernet.c). */
struct usernet_fwd {
	bool udp;
	uint32_t host_addr, guest_addr;
	uint16_t host_port, guest_port;
	bool host6, guest6; /* the address is host_addr6 / guest_addr6 */
	uint8_t host_addr6[16], guest_addr6[16];
};
/* "tcp:HADDR:HPORT-GADDR:GPORT"; empty HADDR = 127.0.0.1, empty GADDR =
 * guest_default. 0 or -EINVAL. */
int usernet_parse_fwd(const char *spec, uint32_t guest_default, struct usernet_fwd *fwd);

/* Up to max nameservers (IPv4 or IPv6, port unset) from a resolv.conf
 * (resolv.c); the count, or -errno (-ENODATA: no usable nameserver line). */
struct ns_sockaddr;
int usernet_read_resolvers(const char *path, struct ns_sockaddr *addrs, unsigned max);

/* ---------------------------------------------------------------- DHCP */

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
#define DHCP_MSG_MIN 240   /* fixed BOOTP part + magic cookie */
#define DHCP_REPLY_MAX 576 /* what every client must accept */

enum dhcp_lease_state { LEASE_FREE, LEASE_OFFERED, LEASE_BOUND, LEASE_DECLINED };

struct dhcp_lease {
	uint8_t mac[6];
	enum dhcp_lease_state state;
	uint64_t expires_s;
};

/* Counters live in the caller's usernet_stats. */
struct dhcp_server {
	uint32_t server_id, mask, router, dns, start;
	unsigned count, lease_time_s, mtu;
	char hostname[64], domain[64];
	struct dhcp_lease *leases; /* count entries, index = addr - start */
	struct usernet_stats *stats;
};

/* Where a reply goes (RFC 2131 4.1): broadcast, or unicast to the
 * client's hardware and IP address. */
struct dhcp_dest {
	bool broadcast;
	uint8_t mac[6];
	uint32_t addr;
};

int dhcp_server_init(struct dhcp_server *d, const struct usernet_cfg *cfg,
		     struct usernet_stats *stats);
void dhcp_server_free(struct dhcp_server *d);
/* Handle one BOOTP/DHCP message (the UDP payload). Writes the reply (UDP
 * payload) into out (cap >= DHCP_REPLY_MAX) and returns its length, or 0
 * when nothing is to be sent (malformed, not for us, RELEASE, exhausted). */
size_t dhcp_handle(struct dhcp_server *d, const uint8_t *msg, size_t len, uint64_t now_s,
		   uint8_t *out, size_t cap, struct dhcp_dest *dest);

/* Stateless DHCPv6 (dhcp6.c): the Reply (UDP payload) to an
 * Information-Request in out, its length, or 0 (not one, malformed). */
#define DHCP6_SERVER_PORT 547
#define DHCP6_CLIENT_PORT 546
size_t dhcp6_handle(const uint8_t server_mac[6], const uint8_t dns[16], const uint8_t *msg,
		    size_t len, uint8_t *out, size_t cap, struct usernet_stats *stats);

/* ----------------------------------------------------------- NAT table */

struct nat_key {
	uint8_t proto;
	uint32_t gaddr, raddr; /* guest side, remote side (IPv4) */
	uint16_t gport, rport;
	bool v6;
	uint8_t gaddr6[16], raddr6[16]; /* IPv6 flows */
};

/* Embedded in a flow; the table never allocates entries. */
struct nat_entry {
	struct nat_key key;
	struct nat_entry *hnext;
	struct nat_entry *prev, *next; /* LRU: oldest first */
	uint64_t last_us;
};

struct nat_table {
	struct nat_entry **buckets;
	unsigned nbuckets, count, max;
	struct nat_entry lru; /* sentinel */
};

int nat_table_init(struct nat_table *t, unsigned max);
void nat_table_destroy(struct nat_table *t);
struct nat_entry *nat_find(struct nat_table *t, const struct nat_key *k);
/* 0, -EEXIST (same key present) or -ENOSPC (table at its limit). */
int nat_insert(struct nat_table *t, struct nat_entry *e, uint64_t now_us);
void nat_remove(struct nat_table *t, struct nat_entry *e);
/* Used now: becomes the youngest. */
void nat_touch(struct nat_table *t, struct nat_entry *e, uint64_t now_us);
/* The least recently used entry, NULL when empty. */
struct nat_entry *nat_oldest(struct nat_table *t);

#endif /* USERNET_INTERNAL_H */
