/* internal.h — the medium's state, shared by medium.c (the frame path)
 * and medium_ctl.c (commands and reports). Not a public header. */
#ifndef VMM_DEVICES_WLAN_INTERNAL_H
#define VMM_DEVICES_WLAN_INTERNAL_H

#include <pthread.h>

#include "wlan/wlan.h"

#define MAX_RADIOS 64
#define MAX_PORTS 32
#define MAX_VIFS 4

struct radio {
	struct wlan_port *port;
	uint8_t hw[ETH_ALEN_WLAN];
	uint8_t vif[MAX_VIFS][ETH_ALEN_WLAN];
	/* ADD_MAC_ADDR minus DEL_MAC_ADDR per address: hwsim announces an
	 * address once per interface and again for each scan it runs from
	 * it, and withdraws the scan's when the scan completes */
	uint8_t vif_refs[MAX_VIFS];
	unsigned n_vif;
	uint16_t nl_type;
	uint32_t freq_mhz;
	uint64_t on_since_ns;
	uint64_t tx, rx, acked, drops[WLAN_DROP_N];
};

struct wlan_port {
	struct wlan_medium *m;
	char name[32];
	wlan_deliver_fn fn;
	void *opaque;
	uint64_t malformed;
	bool told;   /* the first malformed message was reported */
	bool closed; /* wlan_port_close: input ignored, nothing delivered */
};

struct wlan_medium {
	pthread_mutex_t lock;
	struct wlan_reg *reg;
	bool enforce, outdoor;
	int cac_s, nop_s;     /* as configured (< 0: defaults) */
	char regdb_path[256]; /* "" : the packaged database */
	wlan_clock_fn clock;
	void *clock_opaque;
	struct radio radios[MAX_RADIOS];
	unsigned n_radios;
	struct wlan_port *ports[MAX_PORTS];
	uint64_t frames, delivered, drops[WLAN_DROP_N];
	uint8_t out[HWSIM_MAX_MSG_LEN]; /* the message being built (lock held) */
};

#endif
