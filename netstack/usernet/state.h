/* state.h — usernet's snapshot format, shared by state.c (header, LAN,
 * leases, the entry points) and state_tcp.c (guest TCP connections).
 *
 * "USNT", a version (u32), then records of u16 type, u16 zero, u32 body
 * length, body; every integer big endian. A loader checks each length
 * against what is left and each record's size and values before anything
 * changes. */
#ifndef USERNET_STATE_H
#define USERNET_STATE_H

#include "netstack/usernet/backend.h"

#define STATE_MAGIC "USNT"
#define STATE_VERSION 2 /* 1: no REC_FWD; still loaded */

enum rec_type {
	REC_LAN = 1,   /* net, prefix, gateway, DHCP range it was saved on */
	REC_LEASE = 2, /* one DHCP lease: address, MAC, state, seconds left */
	REC_RESET = 3, /* a guest TCP connection to reset: 4-tuple, MAC, seq */
	REC_FLOW = 4,  /* a guest TCP connection to carry on (with its host fd) */
	REC_FWD = 5,   /* a hostfwd rule, with its host socket's fd or none */
};

/* Writing: a growing buffer; oom once any allocation failed. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};
void w_bytes(struct wbuf *w, const void *src, size_t n);
void w_u8(struct wbuf *w, uint8_t v);
void w_u16(struct wbuf *w, uint16_t v);
void w_u32(struct wbuf *w, uint32_t v);
void w_rec(struct wbuf *w, enum rec_type type, uint32_t len);
/* Appends fd to *fds (capacity *cap); false (w->oom set) when out of
 * memory. */
bool state_push_fd(struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap, int fd);

/* Reading: past the end yields zeros and sets bad. */
struct rbuf {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};
const uint8_t *r_take(struct rbuf *r, size_t n);
void r_bytes(struct rbuf *r, void *dst, size_t n);
uint8_t r_u8(struct rbuf *r);
uint16_t r_u16(struct rbuf *r);
uint32_t r_u32(struct rbuf *r);

/* A guest connection to reset: addresses as the guest sees them. */
struct un_reset {
	bool v6;
	uint8_t mac[6];		      /* all zero: unknown, no RST can be addressed */
	uint8_t gaddr[16], raddr[16]; /* IPv4: the first 4 bytes */
	uint16_t gport, rport;
	uint32_t seq, ack;
};

/* A connection as loaded: reset, or carried on when its fd came along. */
struct loaded_conn {
	struct un_reset rst;
	bool live;
	uint32_t fd_index;
	struct ns_tcp_snapshot tcp;
	struct un_flow_view view; /* s and fd filled when applied */
	const uint8_t *snd, *rcv; /* point into the snapshot */
};

/* A forward as loaded: its rule and which fd is its socket. */
struct loaded_fwd {
	struct usernet_fwd spec;
	uint32_t fd_index; /* its socket's among the load's fds */
};

/* What a load applies once the whole buffer has checked out. */
struct loaded {
	uint32_t version;
	bool have_lan;
	struct loaded_fwd *fwds;
	unsigned nfwds, fwd_cap;
	struct dhcp_lease *leases; /* dhcp.count entries */
	struct loaded_conn *conns;
	unsigned nconns, cap;
};

/* state_fwd.c: REC_FWD records (with fds only: each bound forward, its
 * socket's fd appended), one record checked into ld, and the forwards
 * applied: the sockets that came adopted (un_fwd_adopt), then every
 * unbound rule bound (un_fwd_listen). */
#define REC_FWD_LEN 42
void state_save_fwds(struct un_ns *n, struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap);
int state_load_fwd(struct rbuf *r, struct loaded *ld, char *err, size_t errlen);
void state_apply_fwds(struct un_ns *n, const struct loaded *ld, const int *fds, unsigned nfds);

/* state_tcp.c */
/* RESET records, or FLOW records (fds != NULL) for the connections that
 * can move, their host fds appended to *fds (capacity *cap). */
void state_save_conns(struct un_ns *n, struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap);
int state_load_conn(struct un_ns *n, enum rec_type type, struct rbuf *r, size_t len,
		    struct loaded *ld, char *err, size_t errlen);
/* Carries on the live connections whose fd is in fds (dup'd), queues
 * RSTs for the others. */
void state_apply_conns(struct un_ns *n, struct loaded *ld, const int *fds, unsigned nfds);

#endif /* USERNET_STATE_H */
