/* wlan.h — the virtual WLAN's radio medium: libwlan.a.
 *
 * Guests' radios are Linux's mac80211_hwsim over virtio (devices/virtio/
 * hwsim.c). Every frame a radio sends is a generic-netlink message of the
 * MAC80211_HWSIM family (hwsim_msg.c parses it as hostile input); the
 * medium (medium.c) asks the regulatory seam (regulatory.c: regdb's
 * verdict under ONE domain for the whole medium, plus DFS CAC, radar
 * non-occupancy and a path-loss model) and then hands a copy to every
 * other radio and the ACK status back to the sender. relay.c carries the
 * same messages over a unix socket to the wlan-medium daemon, so several
 * VMs share one medium. regdb knows nothing of this; this library knows
 * nothing of the VMM (a port is a callback).
 */
#ifndef VMM_DEVICES_WLAN_H
#define VMM_DEVICES_WLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "regdb/regdb.h"

/* ------------------------------------------------------- hwsim_msg.c */

/* Linux's drivers/net/wireless/mac80211_hwsim.h: not a UAPI header, so no
 * package ships it; these are its ABI values. */
enum hwsim_cmd {
	HWSIM_CMD_UNSPEC,
	HWSIM_CMD_REGISTER,
	HWSIM_CMD_FRAME,
	HWSIM_CMD_TX_INFO_FRAME,
	HWSIM_CMD_NEW_RADIO,
	HWSIM_CMD_DEL_RADIO,
	HWSIM_CMD_GET_RADIO,
	HWSIM_CMD_ADD_MAC_ADDR,
	HWSIM_CMD_DEL_MAC_ADDR,
};

enum hwsim_attr {
	HWSIM_ATTR_UNSPEC,
	HWSIM_ATTR_ADDR_RECEIVER,
	HWSIM_ATTR_ADDR_TRANSMITTER,
	HWSIM_ATTR_FRAME,
	HWSIM_ATTR_FLAGS,
	HWSIM_ATTR_RX_RATE,
	HWSIM_ATTR_SIGNAL,
	HWSIM_ATTR_TX_INFO,
	HWSIM_ATTR_COOKIE,
	HWSIM_ATTR_FREQ = 19,
	HWSIM_ATTR_PAD = 20,
	HWSIM_ATTR_TX_INFO_FLAGS = 21,
	HWSIM_ATTR_MAX = 25,
};

enum hwsim_tx_flags {
	HWSIM_TX_CTL_REQ_TX_STATUS = 1u << 0,
	HWSIM_TX_CTL_NO_ACK = 1u << 1,
	HWSIM_TX_STAT_ACK = 1u << 2,
};

/* MAC80211_HWSIM_TX_RC_* width bits of struct hwsim_tx_rate_flag. */
#define HWSIM_RC_MCS (1u << 3)
#define HWSIM_RC_VHT_MCS (1u << 8)
#define HWSIM_RC_40_MHZ (1u << 5)
#define HWSIM_RC_80_MHZ (1u << 9)
#define HWSIM_RC_160_MHZ (1u << 10)

#define HWSIM_TX_MAX_RATES 4	     /* IEEE80211_TX_MAX_RATES */
#define HWSIM_TX_INFO_LEN 8	     /* 4 x struct hwsim_tx_rate {s8 idx; u8 count} */
#define HWSIM_TX_INFO_FLAGS_LEN 12   /* 4 x {s8 idx; u16 flags} packed */
#define HWSIM_MAX_FRAME_LEN 2304     /* IEEE80211_MAX_DATA_LEN: the receiver's limit */
#define HWSIM_MAX_MSG_LEN 4096	     /* a whole message, any command */
#define HWSIM_GENL_DEFAULT_TYPE 0x10 /* GENL_MIN_ID, until the guest names its family */
#define ETH_ALEN_WLAN 6

/* One parsed message: pointers into the caller's buffer. */
struct hwsim_msg {
	uint8_t cmd;
	uint16_t nl_type; /* the guest's genl family id */
	uint32_t present; /* 1u << HWSIM_ATTR_* */
	const uint8_t *tx_addr, *rx_addr;
	const uint8_t *frame;
	uint32_t frame_len;
	uint32_t flags, rx_rate, signal, freq;
	uint64_t cookie;
	const uint8_t *tx_info, *tx_info_flags;
};

/* 0, or -1 with *why naming the defect: nlmsg/genl header lengths, each
 * attribute's bounds and exact size, the command's mandatory attributes
 * and the 802.11 header (version 0, not the reserved type, long enough for
 * its type). */
int hwsim_msg_parse(const void *buf, size_t len, struct hwsim_msg *m, const char **why);
/* Channel width (MHz) the sender's first rate uses: 20, 40, 80 or 160. */
uint32_t hwsim_msg_width_mhz(const struct hwsim_msg *m);
/* The legacy rate index to give receivers (0 for HT/VHT MCS rates). */
uint32_t hwsim_msg_rx_rate(const struct hwsim_msg *m);

/* The medium's answers; each returns the message length (<= size) or 0. */
size_t hwsim_build_frame(uint8_t *buf, size_t size, uint16_t nl_type, const uint8_t *rx_addr,
			 const uint8_t *frame, uint32_t frame_len, uint32_t rx_rate, int32_t signal,
			 uint32_t freq);
size_t hwsim_build_tx_info(uint8_t *buf, size_t size, uint16_t nl_type, const uint8_t *tx_addr,
			   uint32_t flags, int32_t signal, const uint8_t *tx_info, uint64_t cookie);
/* What a guest driver sends (tests and the benchmark build these). */
size_t hwsim_build_tx(uint8_t *buf, size_t size, const uint8_t *tx_addr, const uint8_t *frame,
		      uint32_t frame_len, uint32_t flags, uint32_t freq, uint32_t width_mhz,
		      uint64_t cookie);
size_t hwsim_build_mac_addr(uint8_t *buf, size_t size, bool add, const uint8_t *hw_addr,
			    const uint8_t *vif_addr);

/* 802.11 frame kinds the regulatory rules care about. */
enum regdb_frame wlan_frame_kind(const uint8_t *frame, uint32_t len);

/* -------------------------------------------------- regulatory.c, medium.c */

/* Why the medium dropped a message. */
enum wlan_drop {
	WLAN_DROP_MALFORMED,   /* not a well-formed hwsim message */
	WLAN_DROP_NO_RULE,     /* frequency outside every rule */
	WLAN_DROP_WIDTH,       /* channel wider than the rule allows */
	WLAN_DROP_NO_IR,       /* beacon or probe request on a NO-IR channel */
	WLAN_DROP_DFS_PASSIVE, /* probe request on a DFS channel */
	WLAN_DROP_CAC,	       /* beacon on a DFS channel before CAC has passed */
	WLAN_DROP_RADAR,       /* channel closed by radar (non-occupancy period) */
	WLAN_DROP_NO_OUTDOOR,  /* indoor-only rule, the machine is outdoor */
	WLAN_DROP_OTHER_RULE,  /* another rule flag (NO-INDOOR, PTP-ONLY, NO-OFDM...) */
	WLAN_DROP_RX_OVERFLOW, /* a receiver's queue was full */
	WLAN_DROP_N,
};

const char *wlan_drop_name(enum wlan_drop d); /* "no-ir" style; WLAN_DROP_N: "allowed" */

/* Nanoseconds; tests inject a virtual clock. */
typedef uint64_t (*wlan_clock_fn)(void *opaque);

struct wlan_medium_cfg {
	const char *country; /* alpha2; NULL: world "00" */
	const char *regdb;   /* regulatory.db or db.txt; NULL: the packaged one */
	bool outdoor;
	bool no_enforce; /* deliver everything (the benchmark's baseline) */
	int cac_s;	 /* < 0: the rule's CAC time */
	int nop_s;	 /* < 0: 1800 s (IEEE80211_DFS_MIN_NOP_TIME_MS) */
	/* path loss: signal = min(txpower, rule EIRP) - (20 log10 f/MHz - 27.55
	 * + 10 n log10 distance/m); 0 picks 20 dBm, 10 m, n = 3 */
	int txpower_dbm;
	double distance_m, path_exp;
	wlan_clock_fn clock; /* NULL: CLOCK_MONOTONIC */
	void *clock_opaque;
};

struct wlan_medium;
struct wlan_port;

/* Where the medium sends a message for the guest behind a port. Called
 * with the medium's lock held: queue it, never call back into the medium.
 * false: no room (counted as rx-overflow for the receiving radio). */
typedef bool (*wlan_deliver_fn)(void *opaque, const void *msg, size_t len);

struct wlan_medium *wlan_medium_new(const struct wlan_medium_cfg *cfg, char *err, size_t errlen);
void wlan_medium_free(struct wlan_medium *m);
/* A guest (or a daemon client) joins; name labels its radios in `info wlan`. */
struct wlan_port *wlan_port_attach(struct wlan_medium *m, const char *name, wlan_deliver_fn fn,
				   void *opaque);
/* Off the air: p's radios are forgotten, its input from now on ignored, but
 * p stays valid (a device thread may still be sending) until detached. */
void wlan_port_close(struct wlan_port *p);
/* Close and free p: nobody may use it any more. */
void wlan_port_detach(struct wlan_port *p);
/* One message from the guest behind p (any thread). */
void wlan_port_input(struct wlan_port *p, const void *msg, size_t len);

/* Snapshots and migration (medium_state.c): the medium's domain, its
 * enforcement switch and regulatory.db, the radar closures, and the radios
 * of ports[0..n_ports-1] (each saved with its index there: the loading
 * process passes its own ports for the same devices in the same order).
 * Times are saved as what is left of them, so a medium in another process
 * continues the same CAC and non-occupancy periods. Load checks the whole
 * node before it changes anything: 0, or -1 with a one-line err. */
struct state_writer;
struct state_reader;
void wlan_medium_save(struct wlan_medium *m, struct state_writer *w, const char *name,
		      struct wlan_port *const *ports, unsigned n_ports);
int wlan_medium_load(struct wlan_medium *m, const struct state_reader *r, const char *name,
		     struct wlan_port *const *ports, unsigned n_ports, char *err, size_t errlen);

/* Runtime control (monitor, daemon control socket): 0, or -1 with err. */
int wlan_medium_set_country(struct wlan_medium *m, const char *alpha2, char *err, size_t errlen);
int wlan_medium_reload(struct wlan_medium *m, const char *path, char *err, size_t errlen);
/* Radar on the 20 MHz channel holding freq: closed for the NOP. */
int wlan_medium_radar(struct wlan_medium *m, uint32_t freq_mhz, char *err, size_t errlen);
void wlan_medium_set_enforce(struct wlan_medium *m, bool on);
void wlan_medium_info_regdomain(struct wlan_medium *m, FILE *out);
void wlan_medium_info(struct wlan_medium *m, FILE *out);
/* One monitor-style command line ("wlan_country DE", "info wlan", ...)
 * for the daemon's control socket and the VMM's monitor. */
void wlan_medium_command(struct wlan_medium *m, const char *line, FILE *out);
/* Totals for tests: drops for a reason (all radios), frames delivered. */
uint64_t wlan_medium_drops(struct wlan_medium *m, enum wlan_drop d);
uint64_t wlan_medium_delivered(struct wlan_medium *m);

/* The regulatory seam (regulatory.c), exported for the unit tests and the
 * benchmark: the verdict for one transmission. */
struct wlan_reg;
struct wlan_tx {
	uint32_t freq_mhz, width_mhz;
	enum regdb_frame kind;
	uint64_t on_channel_ns; /* how long the radio has been on freq */
};
struct wlan_reg *wlan_reg_new(const struct wlan_medium_cfg *cfg, char *err, size_t errlen);
void wlan_reg_free(struct wlan_reg *r);
/* WLAN_DROP_N when the frame may go; *signal_dbm its received signal. */
enum wlan_drop wlan_reg_check(struct wlan_reg *r, const struct wlan_tx *tx, uint64_t now,
			      int32_t *signal_dbm);
int wlan_reg_set_country(struct wlan_reg *r, const char *alpha2, char *err, size_t errlen);
int wlan_reg_reload(struct wlan_reg *r, const char *path, char *err, size_t errlen);
/* Both at once: on error (the database lacks alpha2) nothing changes. */
int wlan_reg_reload_country(struct wlan_reg *r, const char *path, const char *alpha2, char *err,
			    size_t errlen);
/* Radar at now on freq's channel: returns the end of its NOP (ns). */
uint64_t wlan_reg_radar(struct wlan_reg *r, uint32_t freq_mhz, uint64_t now);
bool wlan_reg_overlaps(uint32_t freq_mhz, uint32_t width_mhz, uint32_t lo_mhz, uint32_t hi_mhz);
/* The path-loss signal alone (enforcement off). */
int32_t wlan_reg_signal(struct wlan_reg *r, uint32_t freq_mhz);
void wlan_reg_print(struct wlan_reg *r, FILE *out);
const char *wlan_reg_country(struct wlan_reg *r);
uint64_t wlan_reg_nop_ns(const struct wlan_reg *r);
/* Channels radar closed: [lo, hi) MHz until until_ns. */
#define WLAN_MAX_RADAR 16
struct wlan_radar {
	uint32_t lo_mhz, hi_mhz;
	uint64_t until_ns;
};
/* The closures still running at now, into out[WLAN_MAX_RADAR]: how many. */
unsigned wlan_reg_radars(const struct wlan_reg *r, uint64_t now, struct wlan_radar *out);
/* Replace them (a restored snapshot's; at most WLAN_MAX_RADAR). */
void wlan_reg_set_radars(struct wlan_reg *r, const struct wlan_radar *list, unsigned n);

/* ------------------------------------------------------------ relay.c */

/* The daemon's wire format, both directions: u32 little-endian length,
 * then one hwsim message. The connection is the radio's identity: two VMs'
 * radios may share a MAC, so the daemon routes by (connection, address). */
#define WLAN_RELAY_MAX (HWSIM_MAX_MSG_LEN + 4)

/* A VM's end: connects to the daemon at path and, on its own thread,
 * hands every message from the daemon to fn. NULL with err set. */
struct wlan_relay;
struct wlan_relay *wlan_relay_connect(const char *path, wlan_deliver_fn fn, void *opaque, char *err,
				      size_t errlen);
/* No more messages to fn (the thread is gone); sends are dropped. */
void wlan_relay_close(struct wlan_relay *r);
void wlan_relay_free(struct wlan_relay *r);
void wlan_relay_send(struct wlan_relay *r, const void *msg, size_t len);
/* Reassembly of length-prefixed messages from a stream: feed bytes, get
 * each complete message through fn; -1 on a bad length (close the peer). */
struct wlan_stream {
	uint8_t buf[WLAN_RELAY_MAX];
	size_t have;
};
int wlan_stream_feed(struct wlan_stream *s, const uint8_t *data, size_t len,
		     void (*fn)(void *opaque, const uint8_t *msg, size_t len), void *opaque);
/* Write one framed message (non-blocking socket: a full socket drops it). */
int wlan_stream_send(int fd, const void *msg, size_t len);

/* ----------------------------------------------------------- vif_log.c */

/* The interface addresses a guest's radios announced to the daemon over
 * one connection (HWSIM_CMD_ADD_MAC_ADDR minus DEL, counted), each kept as
 * the guest's own message: saved in a migration and replayed on the
 * destination's connection. Not locked: one thread notes (the device's),
 * save and load run with the device stopped. */
#define WLAN_VIF_LOG_MAX 32
#define WLAN_VIF_MSG_MAX 96 /* an ADD_MAC_ADDR message is 48 bytes */
struct wlan_vif_log {
	struct {
		uint8_t refs, len;
		uint8_t msg[WLAN_VIF_MSG_MAX];
		uint8_t hw[ETH_ALEN_WLAN], addr[ETH_ALEN_WLAN];
	} e[WLAN_VIF_LOG_MAX];
	unsigned n;
};
/* A message the guest sends to the daemon: ADD/DEL_MAC_ADDR are noted. */
void wlan_vif_log_note(struct wlan_vif_log *l, const void *msg, size_t len);
void wlan_vif_log_save(const struct wlan_vif_log *l, struct state_writer *w, const char *name);
/* Checks every record (an ADD_MAC_ADDR hwsim_msg_parse accepts) before l
 * changes: 0, or -1 with a one-line err. */
int wlan_vif_log_load(struct wlan_vif_log *l, const struct state_reader *r, const char *name,
		      char *err, size_t errlen);
/* Each ADD as many times as it counts, on r's connection. */
void wlan_vif_log_replay(const struct wlan_vif_log *l, struct wlan_relay *r);

#endif /* VMM_DEVICES_WLAN_H */
