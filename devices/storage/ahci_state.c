/* ahci_state.c — snapshots of an AHCI controller (see ahci.h). */
#include <stdio.h>
#include <string.h>

#include "devices/storage/ahci_internal.h"
#include "devices/storage/atapi.h"
#include "state/state.h"

#define AHCI_STATE_VERSION 1

/* A port's registers, in the order they are saved. */
#define PORT_REGS(X) X(is) X(ie) X(cmd) X(tfd) X(sig) X(ssts) X(sctl) X(serr) X(sact) X(ci)

static void ahci_node(const struct ahci *s, char *buf, size_t len)
{
	snprintf(buf, len, "ahci@%x,%x", s->pci.devfn >> 3, s->pci.devfn & 7);
}

static void port_save(const struct ahci_port *p, struct state_writer *w)
{
	char node[16];

	snprintf(node, sizeof(node), "port@%u", p->index);
	state_begin(w, node, AHCI_STATE_VERSION);
	state_put_u64(w, "clb", p->clb);
	state_put_u64(w, "fb", p->fb);
#define PUT(r) state_put_u32(w, #r, p->r);
	PORT_REGS(PUT)
#undef PUT
	if (p->cdrom)
		atapi_save(p->cdrom, w);
	state_end(w);
}

void ahci_save(struct ahci *s, struct state_writer *w)
{
	char node[32];

	ahci_node(s, node, sizeof(node));
	state_begin(w, node, AHCI_STATE_VERSION);
	pci_dev_save(&s->pci, w);
	pthread_mutex_lock(&s->lock);
	state_put_u32(w, "ghc", s->ghc);
	state_put_u32(w, "is", s->is);
	state_put_u32(w, "idp-index", s->idp_index);
	for (unsigned i = 0; i < AHCI_PORTS; i++)
		port_save(&s->port[i], w);
	pthread_mutex_unlock(&s->lock);
	state_end(w);
}

struct port_regs {
	uint64_t clb, fb;
#define DECL(r) uint32_t r;
	PORT_REGS(DECL)
#undef DECL
};

static int port_read(struct ahci_port *p, const struct state_reader *r, const char *parent,
		     struct port_regs *v, char *err, size_t errlen)
{
	char path[64];
	struct state_node n;

	snprintf(path, sizeof(path), "%s/port@%u", parent, p->index);
	if (state_node_open(&n, r, path, AHCI_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u64(&n, "clb", &v->clb) < 0 || state_get_u64(&n, "fb", &v->fb) < 0)
		return -1;
#define GET(x)                                                                                     \
	if (state_get_u32(&n, #x, &v->x) < 0)                                                      \
		return -1;
	PORT_REGS(GET)
#undef GET
	/* commands run to completion inside the register write that issues
	 * them, so a saved port never holds one: PxCI is clear (PxSACT may
	 * hold tags the guest marked before issuing them) */
	if (v->ci)
		return state_node_fail(&n, "commands %#x still issued", v->ci);
	if ((v->clb & 0x3ff) || (v->fb & 0xff))
		return state_node_fail(&n, "clb %#llx or fb %#llx misaligned",
				       (unsigned long long)v->clb, (unsigned long long)v->fb);
	if (p->cdrom && atapi_load(p->cdrom, &n) < 0)
		return -1;
	return state_node_close(&n);
}

int ahci_load(struct ahci *s, const struct state_reader *r, char *err, size_t errlen)
{
	struct port_regs v[AHCI_PORTS];
	uint32_t ghc, is, idp;
	struct state_node n;
	char node[32];

	ahci_node(s, node, sizeof(node));
	if (state_node_open(&n, r, node, AHCI_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u32(&n, "ghc", &ghc) < 0 || state_get_u32(&n, "is", &is) < 0 ||
	    state_get_u32(&n, "idp-index", &idp) < 0)
		return -1;
	if (is >> AHCI_PORTS)
		return state_node_fail(&n, "is %#x names ports beyond %u", is, AHCI_PORTS);
	for (unsigned i = 0; i < AHCI_PORTS; i++)
		if (port_read(&s->port[i], r, node, &v[i], err, errlen) < 0)
			return -1;
	if (pci_dev_load(&s->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&s->lock);
	s->ghc = ghc;
	s->is = is;
	s->idp_index = idp;
	s->irq_raised = false; /* an MSI for it went out before the save */
	for (unsigned i = 0; i < AHCI_PORTS; i++) {
		struct ahci_port *p = &s->port[i];

		p->clb = v[i].clb;
		p->fb = v[i].fb;
#define SET(x) p->x = v[i].x;
		PORT_REGS(SET)
#undef SET
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}
