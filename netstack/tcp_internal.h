/* tcp_internal.h — private state of the TCP engine (tcp*.c, socket.c).
 *
 * Files: tcp.c      control block life, listener queues, ISN, ICMP errors
 *        tcp_in.c   segment arrival (RFC 9293 3.10.7, RFC 5961, PAWS)
 *        tcp_out.c  building and sending segments, Nagle, SWS, probes
 *        tcp_timer.c retransmission/TLP, persist, delayed ACK, keepalive,
 *                   2MSL
 *        tcp_cc.c   RTO estimator, congestion control, loss recovery
 *        tcp_sack.c out-of-order map, SACK blocks, sender scoreboard
 *        tcp_opt.c  option parsing and building
 *        tcp_ring.c byte rings
 *        tcp_usr.c  the user's requests (socket.c adds blocking on top)
 *        tcp_state.c a connection moved to another stack (save/restore)
 *
 * One struct tcb per connection (and per listener). Send and receive data
 * live in fixed ring buffers allocated once per connection: segments are
 * copied from the send ring straight into the stack's tx frame, received
 * payload is copied straight into the receive ring, out-of-order data
 * included (it is placed at its final offset; a small range list says
 * which parts are present). No per-segment allocation anywhere. */
#ifndef NETSTACK_TCP_INTERNAL_H
#define NETSTACK_TCP_INTERNAL_H

#include "netstack/internal.h"

/* ------------------------------------------------- sequence arithmetic */

/* Modulo-2^32 comparisons (RFC 9293 3.4): a is before b when the signed
 * distance from b to a is negative. */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) SEQ_LT(b, a)
#define SEQ_GEQ(a, b) SEQ_LEQ(b, a)

static inline uint32_t seq_max(uint32_t a, uint32_t b)
{
	return SEQ_GT(a, b) ? a : b;
}

static inline uint32_t seq_min(uint32_t a, uint32_t b)
{
	return SEQ_LT(a, b) ? a : b;
}

/* lo <= s < hi */
static inline bool seq_in(uint32_t s, uint32_t lo, uint32_t hi)
{
	return SEQ_LEQ(lo, s) && SEQ_LT(s, hi);
}

static inline uint32_t u32_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline uint32_t u32_max(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* ------------------------------------------------------------ constants */

enum {
	TCP_DEFAULT_SNDBUF = 256 * 1024,
	TCP_DEFAULT_RCVBUF = 256 * 1024,
	TCP_MIN_BUF = 2048,
	TCP_MAX_BUF = 16 << 20,
	TCP_DEFAULT_MSS = 536, /* RFC 9293 3.7.1: when the peer sends none */
	TCP_MAX_WSCALE = 14,
	TCP_OOO_MAX = 32,  /* out-of-order ranges kept per connection */
	TCP_SACKB_MAX = 32, /* SACK scoreboard ranges kept per connection */
	TCP_DUPTHRESH = 3,
	TCP_MAX_REORDER = 32, /* largest adaptive dupthresh */
	TCP_CHALLENGE_ACK_LIMIT = 1000, /* per second and stack (RFC 5961 7) */
	TCP_SYN_RETRIES = 6,
	TCP_SYNACK_RETRIES = 5,
	TCP_MAX_RETRIES = 15,
	TCP_ORPHAN_PROBES = 8, /* zero-window probes an orphan gets */
	TCP_SYN_IP_MAX = 68, /* IP header (max 60; IPv6 40) + 8, for ICMP refusals */
};

#define TCP_RTO_INIT_US 1000000u /* RFC 6298 2.1 */
#define TCP_RTO_MIN_US 200000u	 /* Linux's floor; RFC 6298 allows lower than 1 s */
#define TCP_RTO_MAX_US 60000000u /* RFC 6298 2.5 */
#define TCP_RTO_AFTER_SYN_LOSS_US 3000000u /* RFC 6298 5.7 */
#define TCP_CLOCK_G_US 1000u	 /* clock granularity G of RFC 6298 */
#define TCP_PTO_MIN_US 10000u	 /* RFC 8985 7.2 */
#define TCP_PAWS_IDLE_US (24ull * 24 * 3600 * 1000000) /* RFC 7323 5.5 */

/* ------------------------------------------------------------- options */

#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WS 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TS 8

struct tcp_sack_block {
	uint32_t start, end;
};

/* Options of one received segment. */
struct tcp_opts {
	bool mss_ok, ws_ok, sack_perm, ts_ok;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	struct tcp_sack_block sack[4];
};

/* What a SYN or SYN-ACK announces (ws < 0: no window scale option). */
struct tcp_syn_opts {
	uint16_t mss;
	int ws;
	bool sack_perm, ts;
	uint32_t tsval, tsecr;
};

/* 0, or -1 when the option list is malformed (the segment is dropped). */
int tcp_opt_parse(const uint8_t *p, size_t len, struct tcp_opts *o);
/* Builders return the option bytes written (a multiple of 4, <= 40). */
size_t tcp_opt_build_syn(uint8_t *p, const struct tcp_syn_opts *so);
size_t tcp_opt_build(uint8_t *p, bool ts, uint32_t tsval, uint32_t tsecr,
		     const struct tcp_sack_block *sack, unsigned nsack);

/* --------------------------------------------------------------- rings */

struct tcp_ring {
	uint8_t *buf;
	uint32_t cap, head, len; /* bytes [head, head + len) mod cap */
};

int ring_init(struct tcp_ring *r, uint32_t cap);
void ring_free(struct tcp_ring *r);
static inline uint32_t ring_space(const struct tcp_ring *r)
{
	return r->cap - r->len;
}
/* Copy n bytes in at offset off from the head (off + n <= cap); the
 * length is not changed (out-of-order placement uses this too). */
void ring_put(struct tcp_ring *r, uint32_t off, const void *src, uint32_t n);
/* Copy n bytes out from offset off (off + n <= len). */
void ring_get(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t n);
void ring_consume(struct tcp_ring *r, uint32_t n);
/* The first n bytes (n <= len) in place: up to two pieces, iov[1] empty
 * unless they wrap. */
void ring_peek(const struct tcp_ring *r, uint32_t n, struct ns_iov iov[2]);
/* ring_get() that also returns ns_csum_add(sum, the bytes) from the same
 * pass; sum must cover an even number of bytes before them. */
uint32_t ring_get_csum(const struct tcp_ring *r, uint32_t off, void *dst, uint32_t n,
		       uint32_t sum);
/* An empty ring starts over at the front, where the cache is warm; only
 * when nothing sits beyond len (no out-of-order data). */
static inline void ring_rewind(struct tcp_ring *r)
{
	if (!r->len)
		r->head = 0;
}

/* ------------------------------------------------------- RTO estimator */

/* RFC 6298 smoothed RTT, variance and RTO, all in µs. */
struct rtt_est {
	uint32_t srtt, rttvar, rto;
	bool valid; /* a sample has been taken */
};

void rtt_init(struct rtt_est *r);
void rtt_sample(struct rtt_est *r, uint32_t rtt_us);
/* One of n samples expected per RTT (RFC 7323 appendix G): alpha and
 * beta are divided by n, so an RTT's worth of per-ACK samples moves the
 * estimate as much as one sample per RTT would. */
void rtt_sample_n(struct rtt_est *r, uint32_t rtt_us, uint32_t n);
/* The RTO after `shift` consecutive expirations (doubling, capped). */
uint32_t rtt_backoff_rto(const struct rtt_est *r, unsigned shift);

/* ----------------------------------------------------------------- tcb */

/* A range of sequence space [start, end); stamp orders by recency. */
struct seq_range {
	uint32_t start, end, stamp;
};

/* Settings a user may change; a listener's are copied into its children. */
struct tcp_cfg {
	uint32_t sndbuf, rcvbuf;
	uint16_t maxseg; /* 0: from the MTU */
	bool nodelay, keepalive, sack, ts, ws, defer_accept, reuseaddr;
	uint32_t keepidle_s, keepintvl_s, keepcnt;
	uint32_t delack_ms, linger2_ms, user_timeout_ms;
};

struct tcb;

struct tcb_list {
	struct tcb *head, *tail;
	unsigned len;
};

struct tcb {
	struct ns_stack *st;
	struct tcb *next, *prev; /* st->tcbs, once linked */
	bool linked;
	struct ns_chan *chan;	 /* our key in the demux tree, NULL when unbound */
	struct ns_sock *sock;	 /* NULL: orphan (closed by the user) or unaccepted */
	int state;
	struct tcp_cfg cfg;
	struct ipaddr laddr, raddr;
	uint16_t lport, rport;
	int err;	/* pending -errno for the user (SO_ERROR) */
	int soft_err;	/* ICMP soft error, reported if the connection times out */
	bool user_wr_shut; /* user asked for a FIN (shutdown WR / close) */
	bool user_rd_shut;
	bool fin_rcvd;
	bool reset; /* ended by a RST or error: reads report err */

	/* listener */
	struct tcb_list synq, accq; /* half-open children, ready children */
	unsigned backlog;
	/* child of a listener */
	struct tcb *parent;
	struct tcb_list *q_list;
	struct tcb *q_prev, *q_next;
	bool deferred;		  /* DEFER_ACCEPT: SYN-ACK not sent yet */
	uint8_t syn_ip[TCP_SYN_IP_MAX]; /* the SYN's IP header + 8, for ICMP */
	uint8_t syn_ip_len;

	/* send side (RFC 9293 3.3.1) */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, max_snd_wnd, snd_wl1, snd_wl2;
	uint32_t snd_buf_seq; /* sequence number of sndbuf's first byte */
	struct tcp_ring sndbuf;
	uint32_t snd_mss;     /* peer's MSS clamped to our path MTU */
	uint8_t snd_wscale, rcv_wscale;
	bool ws_on, ts_on, sack_on;

	/* receive side */
	uint32_t irs, rcv_nxt, rcv_adv; /* rcv_adv: right edge last advertised */
	uint32_t rcv_mss;		/* what we announced */
	struct tcp_ring rcvbuf;		/* in-order unread data, then the window */
	struct seq_range ooo[TCP_OOO_MAX]; /* sorted, disjoint, not touching */
	unsigned nooo;
	uint32_t ooo_bytes, ooo_stamp;
	bool ooo_fin;
	uint32_t ooo_fin_seq;
	uint32_t ts_recent, ts_offset, last_ack_sent;
	uint64_t ts_recent_age;
	unsigned delack_segs; /* full segments received since our last ACK */
	uint32_t rcv_freed;   /* bytes the user read since our last ACK */
	bool ack_now;	      /* an ACK must go out at the end of this input */
	bool force_small;     /* persist timer: send a sub-MSS window anyway */
	bool dsack;	      /* report dsack_blk in the next ACK (RFC 2883) */
	struct tcp_sack_block dsack_blk;

	/* congestion control (RFC 5681, 6582, 6675) */
	uint32_t cwnd, ssthresh, recover, ca_acked;
	uint64_t last_tx; /* last data segment sent (restart after idle) */
	unsigned dupthresh; /* grows when reordering is seen (3 at first) */
	/* Eifel (RFC 3522 / 4015): undo a reduction the timestamps prove
	 * spurious. */
	bool undo_valid;
	uint32_t undo_cwnd, undo_ssthresh, undo_tsval;
	unsigned undo_reorder; /* segments SACKed/dup-ACKed past the "hole" */
	unsigned dupacks;
	uint32_t lt_bytes; /* sent by limited transmit since the last new ACK */
	bool in_recovery;
	struct seq_range sacked[TCP_SACKB_MAX]; /* scoreboard, sorted */
	unsigned nsacked;
	uint32_t rexmit_nxt; /* SACK recovery: holes below this are resent */
	/* After an RTO until snd_una reaches recover: the go-back-N resend
	 * skips what the scoreboard (kept, RFC 6675 5.1) says arrived. */
	bool in_loss;
	bool sack_reneged; /* the receiver dropped SACKed data: forget it */
	uint64_t una_rexmit_at; /* when the segment at snd_una was last resent */

	/* retransmission */
	struct rtt_est rtt;
	unsigned backoff;  /* consecutive RTO expirations */
	bool tlp_armed;	   /* t_rexmit is the tail loss probe timer for now */
	bool tlp_done;	   /* one probe per new ACK (RFC 8985 7) */
	bool tlp_new;	   /* the probe may go beyond cwnd */
	bool rtt_timing;
	bool rtt_data; /* an RTT sample from data, not only the handshake */
	uint32_t rtt_seq;
	uint64_t rtt_start;
	uint64_t una_since; /* when snd_una's data was sent (user timeout) */

	unsigned persist_probes; /* unanswered zero-window probes */

	/* keepalive */
	uint64_t last_rx;
	unsigned keep_probes;

	struct ns_timer t_rexmit, t_persist, t_delack, t_keep, t_2msl;

	uint64_t n_rexmit, n_fast_rexmit, n_rto, bytes_acked, bytes_received;
};

static inline bool tcp_synchronized(int state)
{
	return state >= NS_TCP_ESTABLISHED;
}

/* Largest payload of one segment toward the peer, given the option bytes
 * it carries (RFC 6691: the MSS excludes options). */
static inline uint32_t tcp_seg_payload(const struct tcb *t, size_t optlen)
{
	uint32_t p = t->snd_mss - (uint32_t)optlen;

	return p > 8 ? p : 8;
}

/* SMSS of RFC 5681: the payload of a full segment (MSS less the
 * timestamp option every segment carries). cwnd counts in these. */
static inline uint32_t tcp_smss(const struct tcb *t)
{
	return tcp_seg_payload(t, t->ts_on ? 12 : 0);
}

/* Sequence number just past our FIN (valid once user_wr_shut). */
static inline uint32_t tcp_fin_seq(const struct tcb *t)
{
	return t->snd_buf_seq + t->sndbuf.len;
}

static inline bool tcp_fin_sent(const struct tcb *t)
{
	return t->user_wr_shut && SEQ_GT(t->snd_max, tcp_fin_seq(t));
}

static inline bool tcp_fin_acked(const struct tcb *t)
{
	return t->user_wr_shut && SEQ_GT(t->snd_una, tcp_fin_seq(t));
}

/* A received segment, parsed. */
struct tcp_seg {
	const struct ip_rx *rx;
	uint32_t seq, ack;
	uint32_t wnd; /* unscaled field */
	uint8_t flags;
	uint16_t sport, dport;
	const uint8_t *data;
	uint32_t len; /* payload bytes */
	struct tcp_opts opt;
};

static inline uint32_t seg_seqlen(const struct tcp_seg *s)
{
	return s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
}

/* tcp.c: connection life. A tcb is counted in st->tcbs (and against
 * tcp_max_conns) from connect/listen/SYN on: tcb_link(). */
struct tcb *tcb_new(struct ns_stack *st, const struct tcp_cfg *cfg);
void tcb_free(struct tcb *t);
int tcb_link(struct tcb *t);
void tcb_set_state(struct tcb *t, int state);
int tcb_bind_chan(struct tcb *t);
int tcb_alloc_bufs(struct tcb *t);
/* The connection is over: leave the demux, stop timers; freed now when
 * no socket holds it, else when the socket closes. */
void tcb_closed(struct tcb *t);
/* End with an error for the user (ECONNRESET, ETIMEDOUT, ...). */
void tcb_drop(struct tcb *t, int err);
void tcb_notify(struct tcb *t);
uint32_t tcp_isn(struct ns_stack *st, const struct tcb *t);
uint32_t tcp_ts_now(const struct tcb *t);
void tcp_default_cfg(struct tcp_cfg *c);
void tcp_enter_time_wait(struct tcb *t);
void tcp_child_established(struct tcb *t);
void tcb_list_remove(struct tcb *t);
void tcb_list_append(struct tcb_list *l, struct tcb *t);
uint32_t tcp_path_mss(struct ns_stack *st, const struct ipaddr *raddr, const struct tcp_cfg *cfg);
uint8_t tcp_choose_wscale(uint32_t rcvbuf);

/* tcp_usr.c: the user's requests (stack lock held, never sleep) */
int tcp_usr_bind(struct tcb *t, const struct ns_sockaddr *local);
int tcp_usr_listen(struct tcb *t, int backlog);
struct tcb *tcp_usr_accept(struct tcb *l);
int tcp_usr_connect(struct tcb *t, const struct ns_sockaddr *remote);
ssize_t tcp_usr_send(struct tcb *t, const void *buf, size_t len);
/* Bytes read, 0 at EOF, -EAGAIN when nothing is there yet, -errno. */
ssize_t tcp_usr_recv(struct tcb *t, void *buf, size_t len, bool peek);
/* In-place reads: the readable bytes (ns_recv_peek's result), and
 * releasing n of them as tcp_usr_recv() would. */
ssize_t tcp_usr_peek(struct tcb *t, struct ns_iov iov[2]);
int tcp_usr_consume(struct tcb *t, size_t n);
int tcp_usr_shutdown(struct tcb *t, int how);
/* Both detach the user: the tcb lives on (close) or goes (abort). */
void tcp_usr_close(struct tcb *t);
void tcp_usr_abort(struct tcb *t);
int tcp_usr_accept_complete(struct tcb *t);
int tcp_usr_accept_refuse(struct tcb *t, bool icmp, uint8_t code);
unsigned tcp_usr_events(const struct tcb *t);
void tcp_usr_info(const struct tcb *t, struct ns_tcp_info *info);
/* tcp_state.c: a connection moved between stacks (ns_tcp_save/restore). */
int tcp_usr_save(struct tcb *t, struct ns_tcp_snapshot *x, void **snd, void **rcv);
int tcp_usr_restore(struct tcb *t, const struct ns_tcp_snapshot *x, const void *snd, const void *rcv);
int tcp_usr_setopt(struct tcb *t, int opt, int val);
int tcp_usr_getopt(struct tcb *t, int opt, int *val);

/* tcp_in.c */
void tcp_input(struct ns_stack *st, const struct ip_rx *rx);

/* tcp_out.c */
void tcp_output(struct tcb *t);
void tcp_send_syn(struct tcb *t);
void tcp_send_ack(struct tcb *t);
void tcp_send_rst(struct tcb *t); /* abort: RST at snd_nxt */
void tcp_send_probe(struct tcb *t);
void tcp_send_reset_raw(struct ns_stack *st, const struct ipaddr *laddr, uint16_t lport,
			const struct ipaddr *raddr, uint16_t rport, uint32_t seq, uint32_t ack,
			uint8_t flags);
/* Answer a segment that has no connection (RFC 9293 3.10.7.1). */
void tcp_send_reset_reply(struct ns_stack *st, const struct tcp_seg *s);
/* Retransmit one segment's worth starting at seq; bytes sent. */
uint32_t tcp_retransmit_at(struct tcb *t, uint32_t seq, uint32_t max);
/* Tail loss probe: resend a segment to draw a (S)ACK before the RTO. */
void tcp_tlp_probe(struct tcb *t);
uint32_t tcp_rcv_wnd(const struct tcb *t);
/* After the user read: tell the peer if the window opened enough. */
void tcp_window_update(struct tcb *t);

/* tcp_timer.c */
void tcp_timers_init(struct tcb *t);
void tcp_timers_stop(struct tcb *t);
void tcp_arm_rexmit(struct tcb *t);
void tcp_tlp_maybe_arm(struct tcb *t);
void tcp_arm_persist(struct tcb *t);
void tcp_arm_keepalive(struct tcb *t);
void tcp_arm_delack(struct tcb *t);

/* tcp_cc.c */
void cc_init(struct tcb *t);
uint32_t cc_initial_window(const struct tcb *t);
/* RFC 5681 4.1: after an idle RTO, start again from the initial window. */
void cc_idle_restart(struct tcb *t);
uint32_t cc_flight(const struct tcb *t);
void cc_on_ack(struct tcb *t, uint32_t acked);
void cc_on_dupack(struct tcb *t);
/* Any ACK with new SACK information may show a loss (RFC 6675 5). */
void cc_maybe_recover(struct tcb *t);
void cc_on_rto(struct tcb *t);
/* SACK recovery: the resend of the first hole looks lost; resend it. */
void cc_check_lost_rexmit(struct tcb *t);
/* A new ACK arrived while a reduction may be undone: check its TSecr. */
void cc_check_spurious(struct tcb *t, const struct tcp_opts *o);
/* Sending during SACK recovery: the next retransmission, 0 if none. */
bool cc_sack_next_hole(struct tcb *t, uint32_t *seq, uint32_t *len);

/* tcp_sack.c */
/* Receiver: record bytes [start, end) placed out of order; false when
 * the range table is full (the bytes are then dropped). */
bool ooo_add(struct tcb *t, uint32_t start, uint32_t end);
/* Receiver: rcv_nxt advanced; absorb ranges now in order. Returns the
 * new rcv_nxt. */
uint32_t ooo_absorb(struct tcb *t, uint32_t rcv_nxt);
void ooo_clear(struct tcb *t);
/* SACK blocks for an outgoing ACK, most recent first. */
unsigned sack_blocks(const struct tcb *t, struct tcp_sack_block *out, unsigned max);
/* Sender: merge the segment's SACK blocks into the scoreboard. */
void sb_update(struct tcb *t, const struct tcp_opts *o);
/* Sender: snd_una moved, drop what it covers. */
void sb_trim(struct tcb *t);
void sb_clear(struct tcb *t);
uint32_t sb_sacked_bytes(const struct tcb *t);
/* SACKed bytes below seq. */
uint32_t sb_sacked_below(const struct tcb *t, uint32_t seq);
/* An ACK moved snd_una onto SACKed data: the receiver reneged. */
bool sb_reneged(const struct tcb *t);
/* RFC 6675 IsLost(): seq is below DupThresh segments' worth of SACKed data. */
uint32_t sb_lost_edge(const struct tcb *t);
/* The first un-SACKed range at or above seq below limit; false if none. */
bool sb_next_hole(const struct tcb *t, uint32_t seq, uint32_t limit, uint32_t *start,
		  uint32_t *end);

#endif /* NETSTACK_TCP_INTERNAL_H */
