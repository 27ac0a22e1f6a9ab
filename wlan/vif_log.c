/* vif_log.c — what a guest's radios announced to the wlan-medium daemon
 * over one connection: each HWSIM_CMD_ADD_MAC_ADDR still in force (ADDs
 * minus DELs; hwsim announces an address again for each scan and
 * withdraws the scan's at its end), kept as the guest's own message.
 * A migration saves the log and the destination replays it on its own
 * connection: the daemon knows a radio's interface addresses only from
 * these messages, which the guest does not send again. */
#include <string.h>

#include "state/state.h"
#include "wlan/wlan.h"

#define VIF_LOG_VERSION 1
#define GENL_CMD_OFF 16 /* the genl command, after the 16-byte nlmsghdr */

void wlan_vif_log_note(struct wlan_vif_log *l, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct hwsim_msg msg;
	const char *why;
	unsigned i;

	if (len <= GENL_CMD_OFF || (b[GENL_CMD_OFF] != HWSIM_CMD_ADD_MAC_ADDR &&
				    b[GENL_CMD_OFF] != HWSIM_CMD_DEL_MAC_ADDR))
		return; /* frames: the hot path pays one compare */
	if (hwsim_msg_parse(buf, len, &msg, &why))
		return; /* the daemon refuses it too */
	for (i = 0; i < l->n; i++)
		if (!memcmp(l->e[i].hw, msg.tx_addr, ETH_ALEN_WLAN) &&
		    !memcmp(l->e[i].addr, msg.rx_addr, ETH_ALEN_WLAN))
			break;
	if (msg.cmd == HWSIM_CMD_DEL_MAC_ADDR) {
		if (i < l->n && --l->e[i].refs == 0)
			l->e[i] = l->e[--l->n];
		return;
	}
	if (i < l->n) {
		l->e[i].refs += l->e[i].refs < UINT8_MAX;
		return;
	}
	if (len > WLAN_VIF_MSG_MAX || l->n == WLAN_VIF_LOG_MAX)
		return;
	l->n++;
	l->e[i].refs = 1;
	l->e[i].len = (uint8_t)len;
	memcpy(l->e[i].msg, buf, len);
	memcpy(l->e[i].hw, msg.tx_addr, ETH_ALEN_WLAN);
	memcpy(l->e[i].addr, msg.rx_addr, ETH_ALEN_WLAN);
}

/* Records: refs, length, the message. */
#define RECS_MAX (WLAN_VIF_LOG_MAX * (2 + WLAN_VIF_MSG_MAX))

void wlan_vif_log_save(const struct wlan_vif_log *l, struct state_writer *w, const char *name)
{
	uint8_t recs[RECS_MAX];
	size_t off = 0;

	for (unsigned v = 0; v < l->n; v++) {
		recs[off] = l->e[v].refs;
		recs[off + 1] = l->e[v].len;
		memcpy(recs + off + 2, l->e[v].msg, l->e[v].len);
		off += 2u + l->e[v].len;
	}
	state_begin(w, name, VIF_LOG_VERSION);
	state_put_u32(w, "vif-count", l->n);
	state_put_u32(w, "vif-bytes", (uint32_t)off);
	state_put_bytes(w, "vifs", recs, off);
	state_end(w);
}

/* Every record an ADD_MAC_ADDR with a count, the bytes used up exactly. */
static int split_records(struct state_node *n, const uint8_t *recs, uint32_t bytes,
			 struct wlan_vif_log *out)
{
	uint32_t off = 0;

	for (uint32_t v = 0; v < out->n; v++) {
		struct hwsim_msg msg = {0};
		const char *why = "cut short";
		uint8_t refs = off + 1 < bytes ? recs[off] : 0;
		uint8_t len = off + 1 < bytes ? recs[off + 1] : 0;
		bool ok = refs && len && len <= WLAN_VIF_MSG_MAX && len <= bytes - off - 2 &&
			  !hwsim_msg_parse(recs + off + 2, len, &msg, &why);

		if (ok && msg.cmd != HWSIM_CMD_ADD_MAC_ADDR)
			why = "another command";
		if (!ok || msg.cmd != HWSIM_CMD_ADD_MAC_ADDR)
			return state_node_fail(n, "vif %u is not an ADD_MAC_ADDR message: %s", v,
					       why);
		out->e[v].refs = refs;
		out->e[v].len = len;
		memcpy(out->e[v].msg, recs + off + 2, len);
		memcpy(out->e[v].hw, msg.tx_addr, ETH_ALEN_WLAN);
		memcpy(out->e[v].addr, msg.rx_addr, ETH_ALEN_WLAN);
		off += 2u + len;
	}
	if (off != bytes)
		return state_node_fail(n, "%u bytes after the vifs", bytes - off);
	return 0;
}

int wlan_vif_log_load(struct wlan_vif_log *l, const struct state_reader *r, const char *name,
		      char *err, size_t errlen)
{
	struct wlan_vif_log got = {0};
	uint8_t recs[RECS_MAX];
	struct state_node n;
	uint32_t count, bytes;

	if (state_node_open(&n, r, name, VIF_LOG_VERSION, err, errlen) < 0 ||
	    state_get_u32_max(&n, "vif-count", WLAN_VIF_LOG_MAX, &count) < 0 ||
	    state_get_u32_max(&n, "vif-bytes", sizeof(recs), &bytes) < 0 ||
	    state_get_bytes(&n, "vifs", recs, bytes) < 0)
		return -1;
	got.n = count;
	if (split_records(&n, recs, bytes, &got) < 0 || state_node_close(&n) < 0)
		return -1;
	*l = got;
	return 0;
}

void wlan_vif_log_replay(const struct wlan_vif_log *l, struct wlan_relay *r)
{
	for (unsigned v = 0; v < l->n; v++) /* as often as the daemon had it */
		for (unsigned k = 0; k < l->e[v].refs; k++)
			wlan_relay_send(r, l->e[v].msg, l->e[v].len);
}
