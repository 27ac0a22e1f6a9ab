/* state_fwd.c — hostfwd rules in usernet's snapshot (state.h has the
 * format). Within one host each rule's socket goes with it: the
 * destination cannot bind the port the source holds, and a connection
 * waiting in the listen queue is accepted by the destination, not lost.
 * The loading usernet's own rules decide which ports are open; a rule
 * without its socket (a file, another host) opens nothing.
 *
 * REC_FWD body: u8 flags (FWD_UDP, FWD_HOST6, FWD_GUEST6), u8 zero,
 * u16 host port, 16 bytes host address, u16 guest port, 16 bytes guest
 * address (IPv4: a u32 then zeros), u32 the index of its fd among the
 * snapshot's (saved only with the fds). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/state.h"

#define FWD_UDP 1
#define FWD_HOST6 2
#define FWD_GUEST6 4

static void put_addr(struct wbuf *w, bool v6, uint32_t a4, const uint8_t a6[16])
{
	static const uint8_t zeros[12];

	if (v6) {
		w_bytes(w, a6, 16);
		return;
	}
	w_u32(w, a4);
	w_bytes(w, zeros, sizeof(zeros));
}

void state_save_fwds(struct un_ns *n, struct wbuf *w, int **fds, unsigned *nfds, unsigned *cap)
{
	if (!fds) /* without its socket a rule opens nothing on load */
		return;
	for (struct un_fwd *fw = n->fwds; fw; fw = fw->next) {
		const struct usernet_fwd *f = &fw->spec;

		if (fw->w.fd < 0 || !state_push_fd(w, fds, nfds, cap, fw->w.fd))
			continue;
		w_rec(w, REC_FWD, REC_FWD_LEN);
		w_u8(w, (uint8_t)((f->udp ? FWD_UDP : 0) | (f->host6 ? FWD_HOST6 : 0) |
				  (f->guest6 ? FWD_GUEST6 : 0)));
		w_u8(w, 0);
		w_u16(w, f->host_port);
		put_addr(w, f->host6, f->host_addr, f->host_addr6);
		w_u16(w, f->guest_port);
		put_addr(w, f->guest6, f->guest_addr, f->guest_addr6);
		w_u32(w, *nfds - 1);
	}
}

/* An IPv4 address is a u32 and twelve zero bytes. */
static bool get_addr(struct rbuf *r, bool v6, uint32_t *a4, uint8_t a6[16])
{
	uint8_t b[16];

	r_bytes(r, b, 16);
	if (v6) {
		memcpy(a6, b, 16);
		return true;
	}
	*a4 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	for (int i = 4; i < 16; i++)
		if (b[i])
			return false;
	return true;
}

int state_load_fwd(struct rbuf *r, struct loaded *ld, char *err, size_t errlen)
{
	struct loaded_fwd x = {0};
	uint8_t flags = r_u8(r), zero = r_u8(r);
	bool ok;

	x.spec.udp = flags & FWD_UDP;
	x.spec.host6 = flags & FWD_HOST6;
	x.spec.guest6 = flags & FWD_GUEST6;
	x.spec.host_port = r_u16(r);
	ok = get_addr(r, x.spec.host6, &x.spec.host_addr, x.spec.host_addr6);
	x.spec.guest_port = r_u16(r);
	ok = get_addr(r, x.spec.guest6, &x.spec.guest_addr, x.spec.guest_addr6) && ok;
	x.fd_index = r_u32(r);
	if (r->bad || zero || (flags & ~(FWD_UDP | FWD_HOST6 | FWD_GUEST6)) || !ok ||
	    !x.spec.guest_port)
		return usernet_fail(err, errlen, -EINVAL, "usernet state: bad hostfwd record");
	for (unsigned i = 0; i < ld->nfwds; i++)
		if (un_fwd_same_host(&ld->fwds[i].spec, &x.spec))
			return usernet_fail(err, errlen, -EINVAL,
					    "usernet state: hostfwd port %u saved twice",
					    x.spec.host_port);
	if (ld->nfwds == ld->fwd_cap) {
		unsigned cap = ld->fwd_cap ? ld->fwd_cap * 2 : 8;
		struct loaded_fwd *p = realloc(ld->fwds, cap * sizeof(*p));

		if (!p)
			return usernet_fail(err, errlen, -ENOMEM, "usernet state: out of memory");
		ld->fwds = p;
		ld->fwd_cap = cap;
	}
	ld->fwds[ld->nfwds++] = x;
	return 0;
}

void state_apply_fwds(struct un_ns *n, const struct loaded *ld, const int *fds, unsigned nfds)
{
	for (unsigned i = 0; i < ld->nfwds; i++) {
		const struct loaded_fwd *x = &ld->fwds[i];
		int fd = fds && x->fd_index < nfds ? fds[x->fd_index] : -1;

		/* A forward that cannot be had is left out, as a busy port
		 * would be: the guest and its other forwards run on. */
		un_fwd_adopt(n, &x->spec, fd);
	}
	un_fwd_listen(n);
}
