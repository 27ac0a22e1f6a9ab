/* usernet.h — user-mode networking: one public header.
 *
 * A backend that owns a virtual LAN (10.0.2.0/24 by default: gateway
 * 10.0.2.2, DNS 10.0.2.3, first DHCP address 10.0.2.15, like QEMU), takes
 * the guest's Ethernet frames with usernet_input() and emits frames through
 * the send callback, and relays the guest's traffic to host sockets:
 * DHCP server, DNS forwarder, TCP/UDP NAT, ICMP echo, port forwarding.
 *
 * Two implementations behind one type (struct usernet_cfg.impl):
 *   USERNET_IMPL_NETSTACK  terminates guest traffic in netstack (default)
 *   USERNET_IMPL_SLIRP     Debian's libslirp through an adapter
 *
 * Event loop: all calls on one thread. Feed the frames that arrived with
 * usernet_input(), then wait until usernet_fd() is readable or
 * usernet_timeout_ms() passes (0 right after input: relaying to host
 * sockets happens in the poll, once per batch), then call usernet_poll().
 * The send callback runs inside usernet_input()/usernet_poll(); it must
 * not call back into usernet.
 *
 * IPv4 addresses are in host byte order, IPv6 ones 16 bytes in network
 * order.
 */
#ifndef USERNET_H
#define USERNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct usernet;

enum usernet_impl {
	USERNET_IMPL_NETSTACK,
	USERNET_IMPL_SLIRP,
};

/* Emit one Ethernet frame (no FCS) toward the guest. */
typedef void (*usernet_send_fn)(void *opaque, const void *frame, size_t len);

/* Zero means "default" for every field. */
struct usernet_cfg {
	enum usernet_impl impl;
	uint32_t net;	       /* 10.0.2.0 */
	unsigned prefix;       /* 24 */
	uint32_t gateway;      /* net + 2: the host as seen by the guest */
	uint32_t dns;	       /* net + 3: the DNS forwarder */
	uint32_t dhcp_start;   /* net + 15 */
	unsigned dhcp_count;   /* leases: 16 */
	unsigned lease_time_s; /* 86400 */
	unsigned mtu;	       /* IP MTU of the virtual LAN: 1500 */
	const char *hostname;  /* DHCP option 12 offered to the guest, or NULL */
	const char *domain;    /* DHCP option 15, or NULL */
	/* DNS forwarder upstream: "A", "A:PORT", "V6" or "[V6]:PORT"
	 * overrides the resolvers (IPv4 and IPv6) read from resolv_conf
	 * (NULL: /etc/resolv.conf). */
	const char *dns_upstream;
	const char *resolv_conf;
	bool no_host_loopback; /* gateway address does not reach 127.0.0.1 */
	/* Frames come with checksums the sender vouches for, or left partial
	 * (a TAP or virtio-net with checksum offload): do not verify them.
	 * netstack implementation only; libslirp always verifies. */
	bool rx_csum_trusted;
	/* TCP segments up to 64 KiB may arrive in one frame (TSO/GSO on the
	 * TAP or virtio-net). netstack implementation only. */
	bool rx_gso;
	/* Limits (netstack implementation; counters in usernet_stats). */
	unsigned max_tcp_flows; /* 4096 */
	unsigned max_udp_flows; /* 1024 */
	unsigned udp_idle_s;	/* UDP/ICMP flow idle timeout: 60 s */
	unsigned tcp_buf;	/* relay buffer per direction per flow: 64 KiB */
	unsigned max_conn_rate; /* new outbound TCP flows per second: 0 = no limit */
	unsigned tcp_window;	/* guest-side socket buffers (bytes): 1 MiB */
	uint8_t gateway_mac[6]; /* the virtual hosts' MAC: 52:55:0a:00:02:02 */
	/* IPv6 (netstack implementation; libslirp's defaults): the prefix
	 * fd00::/64 advertised for SLAAC (RA with O=1: stateless DHCPv6 for
	 * DNS, and RDNSS), the host at ::2 (reaches the host's ::1), the DNS
	 * forwarder at ::3. ipv6_off: IPv4 only. */
	bool ipv6_off;
	/* A migration's destination (netstack implementation): hostfwd rules
	 * are bound only at usernet_load / usernet_load_fds, which take the
	 * source's sockets when they came along, else bind once the port is
	 * free (usernet_stats' hostfwd_waiting counts the busy ones). */
	bool hostfwd_wait;
	uint8_t ipv6_net[16];
	unsigned ipv6_prefix;
	uint8_t ipv6_host[16];
	uint8_t ipv6_dns[16];
	usernet_send_fn send;
	void *opaque;
};

/* Fills cfg with the defaults (and keeps impl/send/opaque as they are). */
void usernet_cfg_defaults(struct usernet_cfg *cfg);
/* QEMU's -netdev user spellings: "ipv6=on|off", "ipv6-net=A/LEN",
 * "ipv6-host=A", "ipv6-dns=A". 0, -EINVAL, or -ENOENT (not one of them). */
int usernet_parse_ipv6_option(struct usernet_cfg *cfg, const char *opt);
/* Parse "netstack" / "slirp"; 0 or -EINVAL. */
int usernet_parse_impl(const char *s, enum usernet_impl *impl);
const char *usernet_impl_name(enum usernet_impl impl);

/* NULL on failure with a one-line reason in err (errlen bytes). */
struct usernet *usernet_new(const struct usernet_cfg *cfg, char *err, size_t errlen);
void usernet_free(struct usernet *u);

/* One frame from the guest (any length; bad frames are counted). */
void usernet_input(struct usernet *u, const void *frame, size_t len);
/* An fd readable when host-side work is pending (epoll fd). */
int usernet_fd(struct usernet *u);
/* ms until usernet_poll() must run even when the fd stays quiet; -1 none. */
int usernet_timeout_ms(struct usernet *u);
/* Do the pending host-side work and timers; never blocks. */
void usernet_poll(struct usernet *u);

/* Port forwarding. spec: "tcp:HADDR:HPORT-GADDR:GPORT" or "udp:..."; HADDR
 * may be empty (127.0.0.1), GADDR empty (the first DHCP address); either
 * may be an IPv6 address in brackets ("tcp:[::1]:2222-:22").
 * 0, or -errno with a one-line reason in err. */
int usernet_hostfwd_add(struct usernet *u, const char *spec, char *err, size_t errlen);
int usernet_hostfwd_remove(struct usernet *u, const char *spec, char *err, size_t errlen);
/* Whether spec is a rule hostfwd_add would take (the syntax only; the
 * host port may still be busy): 0 or -EINVAL with err. */
int usernet_hostfwd_check(const char *spec, char *err, size_t errlen);

/* Save/restore (netstack implementation; impl=slirp: -ENOTSUP).
 * usernet_save() gives a malloc'd snapshot (the caller frees it):
 * the DHCP leases and, per guest TCP connection through the NAT, what it
 * takes to reset it. usernet_load() puts a snapshot into a usernet just
 * made with the same LAN settings: the guest keeps its leases (it renews
 * and keeps its address), and every saved TCP connection gets a RST at
 * the next usernet_poll() (the host sockets stayed behind), so the
 * guest's application sees ECONNRESET at once instead of hanging. A
 * snapshot that is truncated, malformed or from another LAN is refused
 * with a one-line reason and changes nothing. 0 or -errno. */
int usernet_save(struct usernet *u, void **buf, size_t *len, char *err, size_t errlen);
int usernet_load(struct usernet *u, const void *buf, size_t len, char *err, size_t errlen);
/* Within one host the connections go on: usernet_save_fds also saves
 * each connection's whole guest-side TCP state and relay, and gives the
 * host sockets' fds (a malloc'd array the caller frees; the fds stay
 * this usernet's: pass them on, e.g. with SCM_RIGHTS, before
 * usernet_free). usernet_load_fds takes them in the same order (it dups
 * what it uses; the caller keeps its own): a connection whose fd came
 * along goes on with no loss and no duplicate, any other one is reset as
 * usernet_load does. Once the other usernet has them, the saving one
 * calls usernet_hand_over(): it sends the guest nothing more and lets go
 * of the host sockets without RST or FIN; usernet_free is all that may
 * follow. Until then it runs on unchanged (a failed migration). */
int usernet_save_fds(struct usernet *u, void **buf, size_t *len, int **fds, unsigned *nfds,
		     char *err, size_t errlen);
int usernet_load_fds(struct usernet *u, const void *buf, size_t len, const int *fds,
		     unsigned nfds, char *err, size_t errlen);
void usernet_hand_over(struct usernet *u);

struct usernet_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes, rx_bad;
	uint64_t dhcp_discover, dhcp_offer, dhcp_request, dhcp_ack, dhcp_nak, dhcp_release,
		dhcp_bad, dhcp_exhausted;
	uint64_t dns_queries, dns_replies, dns_errors;
	uint64_t udp_flows, udp_flows_now, udp_tx, udp_rx, udp_idle_closed, udp_limit_drop,
		udp_unreachable;
	uint64_t icmp_echo, icmp_reply, icmp_unsupported;
	uint64_t tcp_flows, tcp_flows_now, tcp_connect_fail, tcp_limit_refused, tcp_rate_refused,
		tcp_bytes_out, tcp_bytes_in, tcp_unsupported;
	uint64_t hostfwd_accepted, hostfwd_failed, hostfwd_waiting;
	uint64_t dhcp6_info, icmp6_echo, udp6_tx, tcp6_flows;
};
void usernet_stats(struct usernet *u, struct usernet_stats *st);
/* "name value" lines for a monitor; returns the length written (snprintf). */
int usernet_stats_format(const struct usernet_stats *st, char *buf, size_t len);

/* netstack-host's --user-net mode (netstack/usernet/host.c): argc/argv are
 * netstack-host's own; returns the process exit status. */
int usernet_host_main(int argc, char **argv);

#endif /* USERNET_H */
