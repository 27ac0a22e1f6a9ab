/* ahci.c — the ICH9 AHCI controller's PCI function and registers: the
 * generic host control (CAP, GHC, IS, PI, VS), the six ports' registers
 * (command list and FIS areas, interrupts, engine start/stop, the SATA
 * status and control of a COMRESET) and the interrupt line or MSI. The
 * commands themselves run in ahci_cmd.c when the guest writes PxCI.
 *
 * Everything runs on the vCPU thread that wrote the register, under the
 * controller's lock; interrupts leave after it is dropped, as the PCI bus
 * (INTx routing, the MSI capability) has a lock of its own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/pci/pci.h"
#include "devices/storage/ahci.h"
#include "devices/storage/ahci_internal.h"

#define ABAR_SIZE 0x1000
#define IDP_SIZE 0x20
#define IDP_INDEX 0x10
#define IDP_DATA 0x14

/* generic host control */
#define HBA_CAP 0x00
#define HBA_GHC 0x04
#define HBA_IS 0x08
#define HBA_PI 0x0c
#define HBA_VS 0x10
#define HBA_CAP2 0x24
#define PORT_BASE 0x100
#define PORT_SIZE 0x80

#define GHC_HR (1u << 0)
#define GHC_IE (1u << 1)
#define GHC_AE (1u << 31)

/* 64-bit addressing, NCQ, AHCI only (AE always set), Gen 1 speed,
 * 32 command slots, six ports */
#define CAP_VALUE                                                                                  \
	((1u << 31) | (1u << 30) | (1u << 18) | (1u << 20) | ((AHCI_SLOTS - 1u) << 8) |            \
	 (AHCI_PORTS - 1u))
#define VS_1_0 0x00010000u

#define PCI_CAP_ID_SATA 0x12

/* ------------------------------------------------------------ interrupts */

void ahci_port_raise(struct ahci_port *p, uint32_t bits)
{
	struct ahci *s = p->ahci;

	p->is |= bits;
	if (p->is & p->ie) {
		s->is |= 1u << p->index;
		s->irq_raised = true;
	}
}

/* Drop the lock and bring the interrupt up to date: INTA follows the
 * level, an MSI goes out for each new interrupt. */
static void unlock_and_signal(struct ahci *s)
{
	bool level = (s->ghc & GHC_IE) && s->is;
	bool edge = level && s->irq_raised;

	s->irq_raised = false;
	pthread_mutex_unlock(&s->lock);
	if (s->pci.bus)
		pci_irq_signal(&s->pci, s->msi_cap, level, edge);
}

/* The MSI enable bit moved a pending interrupt between INTA and MSI; the
 * bus lock is held here, so it is signalled later on the main thread. */
static void resignal(void *opaque)
{
	struct ahci *s = opaque;

	pthread_mutex_lock(&s->lock);
	s->irq_raised = true;
	unlock_and_signal(s);
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct ahci *s = d->opaque;

	if (off > s->msi_cap + 3 || off + size <= s->msi_cap + 2)
		return;
	if (s->host->loop)
		evloop_call(s->host->loop, resignal, s);
}

/* ------------------------------------------------------------- the ports */

static bool port_has_device(const struct ahci_port *p)
{
	return p->disk || p->cdrom;
}

/* Link up at Gen 1 speed, interface active: or no device. */
static void port_link_up(struct ahci_port *p)
{
	p->ssts = port_has_device(p) ? 0x113 : 0;
	if (port_has_device(p))
		ahci_port_device_reset(p);
}

static void port_reset(struct ahci_port *p)
{
	p->clb = p->fb = 0;
	p->is = p->ie = p->serr = p->sact = p->ci = 0;
	p->cmd = CMD_SUD | CMD_POD;
	p->sctl = 0;
	p->tfd = 0x7f;
	p->sig = 0xffffffff;
	port_link_up(p);
}

static void hba_reset(struct ahci *s)
{
	s->ghc = GHC_AE;
	s->is = 0;
	for (unsigned i = 0; i < AHCI_PORTS; i++)
		port_reset(&s->port[i]);
}

/* PxCMD: the engines follow ST and FRE at once (CR, FR); stopping the
 * command engine drops the commands it had. */
static void port_write_cmd(struct ahci_port *p, uint32_t v)
{
	p->cmd = (p->cmd & ~CMD_WRITABLE) | (v & CMD_WRITABLE);
	p->cmd = (p->cmd & ~(CMD_CR | CMD_FR)) | (p->cmd & CMD_ST ? CMD_CR : 0) |
		 (p->cmd & CMD_FRE ? CMD_FR : 0);
	if (v & CMD_CLO)
		p->tfd &= ~(uint32_t)(ATA_BSY | ATA_DRQ);
	if (!(p->cmd & CMD_ST)) {
		p->ci = 0;
		p->sact = 0;
	} else {
		ahci_port_run(p);
	}
}

/* PxSCTL.DET = 1 holds COMRESET; going back to 0 brings the link up. */
static void port_write_sctl(struct ahci_port *p, uint32_t v)
{
	bool was_reset = (p->sctl & 0xf) == 1;

	p->sctl = v;
	if ((v & 0xf) == 1) {
		p->ssts = 0;
		p->tfd = 0x80; /* BSY */
	} else if (was_reset) {
		port_link_up(p);
	}
}

static uint32_t port_read(struct ahci_port *p, unsigned reg)
{
	switch (reg) {
	case PX_CLB:
		return (uint32_t)p->clb;
	case PX_CLBU:
		return (uint32_t)(p->clb >> 32);
	case PX_FB:
		return (uint32_t)p->fb;
	case PX_FBU:
		return (uint32_t)(p->fb >> 32);
	case PX_IS:
		return p->is;
	case PX_IE:
		return p->ie;
	case PX_CMD:
		return p->cmd;
	case PX_TFD:
		return p->tfd;
	case PX_SIG:
		return p->sig;
	case PX_SSTS:
		return p->ssts;
	case PX_SCTL:
		return p->sctl;
	case PX_SERR:
		return p->serr;
	case PX_SACT:
		return p->sact;
	case PX_CI:
		return p->ci;
	default:
		return 0;
	}
}

static void port_write(struct ahci_port *p, unsigned reg, uint32_t v)
{
	switch (reg) {
	case PX_CLB:
		p->clb = (p->clb & ~0xffffffffull) | (v & ~0x3ffu);
		break;
	case PX_CLBU:
		p->clb = (p->clb & 0xffffffffull) | (uint64_t)v << 32;
		break;
	case PX_FB:
		p->fb = (p->fb & ~0xffffffffull) | (v & ~0xffu);
		break;
	case PX_FBU:
		p->fb = (p->fb & 0xffffffffull) | (uint64_t)v << 32;
		break;
	case PX_IS:
		p->is &= ~v;
		break;
	case PX_IE:
		p->ie = v & 0xfdc000ffu;
		ahci_port_raise(p, 0); /* enabling a pending cause interrupts */
		break;
	case PX_CMD:
		port_write_cmd(p, v);
		break;
	case PX_SCTL:
		port_write_sctl(p, v);
		break;
	case PX_SERR:
		p->serr &= ~v;
		break;
	case PX_SACT:
		if (p->cmd & CMD_ST)
			p->sact |= v;
		break;
	case PX_CI:
		if (p->cmd & CMD_ST) {
			p->ci |= v;
			ahci_port_run(p);
		}
		break;
	}
}

/* ------------------------------------------------------------- the ABAR */

static uint32_t hba_read(struct ahci *s, unsigned off)
{
	if (off >= PORT_BASE && off < PORT_BASE + AHCI_PORTS * PORT_SIZE)
		return port_read(&s->port[(off - PORT_BASE) / PORT_SIZE], off % PORT_SIZE);
	switch (off) {
	case HBA_CAP:
		return CAP_VALUE;
	case HBA_GHC:
		return s->ghc;
	case HBA_IS:
		return s->is;
	case HBA_PI:
		return (1u << AHCI_PORTS) - 1;
	case HBA_VS:
		return VS_1_0;
	default:
		return 0;
	}
}

static void hba_write(struct ahci *s, unsigned off, uint32_t v)
{
	if (off >= PORT_BASE && off < PORT_BASE + AHCI_PORTS * PORT_SIZE) {
		port_write(&s->port[(off - PORT_BASE) / PORT_SIZE], off % PORT_SIZE, v);
		return;
	}
	switch (off) {
	case HBA_GHC:
		if (v & GHC_HR) {
			hba_reset(s);
			break;
		}
		s->ghc = GHC_AE | (v & GHC_IE);
		s->irq_raised = true; /* enabling with causes pending interrupts */
		break;
	case HBA_IS:
		s->is &= ~v;
		/* a port whose causes are still there keeps its bit */
		for (unsigned i = 0; i < AHCI_PORTS; i++)
			if (s->port[i].is & s->port[i].ie)
				s->is |= 1u << i;
		break;
	}
}

/* Registers are 32 bits wide; other sizes read or write the dword they
 * fall in (a 64-bit access: both halves). */
static void abar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ahci *s = opaque;
	uint64_t v;

	pthread_mutex_lock(&s->lock);
	v = hba_read(s, (unsigned)off & ~3u);
	if (size == 8)
		v |= (uint64_t)hba_read(s, ((unsigned)off & ~3u) + 4) << 32;
	else
		v >>= 8 * (off & 3);
	pthread_mutex_unlock(&s->lock);
	io_data_put(data, size, v);
}

static void abar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ahci *s = opaque;
	uint64_t v = io_data_get(data, size);

	pthread_mutex_lock(&s->lock);
	if (size >= 4) {
		hba_write(s, (unsigned)off & ~3u, (uint32_t)v);
		if (size == 8)
			hba_write(s, ((unsigned)off & ~3u) + 4, (uint32_t)(v >> 32));
	}
	unlock_and_signal(s);
}

static const struct io_ops abar_ops = {abar_read, abar_write};

/* BAR 4: the index/data pair reaching the ABAR through port I/O. */
static void idp_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ahci *s = opaque;
	uint32_t v = 0;

	if (off == IDP_INDEX)
		v = s->idp_index;
	else if (off == IDP_DATA && s->idp_index < ABAR_SIZE)
		abar_read(s, s->idp_index, &v, 4);
	io_data_put(data, size, v);
}

static void idp_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ahci *s = opaque;
	uint32_t v = (uint32_t)io_data_get(data, size);

	if (off == IDP_INDEX)
		s->idp_index = v & (ABAR_SIZE - 4);
	else if (off == IDP_DATA)
		abar_write(s, s->idp_index, &v, 4);
}

static const struct io_ops idp_ops = {idp_read, idp_write};

/* ------------------------------------------------------------- lifetime */

int ahci_dma(struct ahci *s, uint64_t addr, void *buf, uint64_t len, bool to_guest)
{
	if (!s->pci.bus) /* off a bus (unit tests): guest RAM directly */
		return to_guest ? guest_mem_write(s->host->mem, addr, buf, len)
				: guest_mem_read(s->host->mem, addr, buf, len);
	return to_guest ? pci_dma_write(&s->pci, addr, buf, len)
			: pci_dma_read(&s->pci, addr, buf, len);
}

static void ahci_reset(void *opaque)
{
	struct ahci *s = opaque;

	pthread_mutex_lock(&s->lock);
	hba_reset(s);
	unlock_and_signal(s);
}

static void add_caps(struct ahci *s)
{
	unsigned c;

	s->msi_cap = pci_msi_cap_add(&s->pci);
	/* SATA capability 1.0: the index/data pair at offset 0x10 of BAR 4 */
	c = pci_dev_add_cap(&s->pci, PCI_CAP_ID_SATA, 8);
	s->pci.cfg[c + 2] = 0x10;
	io_data_put(&s->pci.cfg[c + 4], 4, 0x4 | (IDP_INDEX / 4) << 4);
}

struct ahci *ahci_new(struct dev_host *host, struct pci_bus *bus, int devfn,
		      const struct ahci_drive drives[AHCI_PORTS])
{
	struct ahci *s;

	if (bus && devfn < 0)
		devfn = pci_bus_free_slot(bus);
	if (bus && (devfn < 0 || devfn > 0xff))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->host = host;
	pthread_mutex_init(&s->lock, NULL);
	pci_dev_init(&s->pci, "ich9-ahci", 0x8086, 0x2922, 0x010601, 0x02);
	s->pci.opaque = s;
	s->pci.cfg_written = cfg_written;
	s->pci.cfg[0x3d] = 1; /* INTA */
	pci_dev_set_bar(&s->pci, 4, IDP_SIZE, true, &idp_ops, s);
	pci_dev_set_bar(&s->pci, 5, ABAR_SIZE, false, &abar_ops, s);
	add_caps(s);
	for (unsigned i = 0; i < AHCI_PORTS; i++) {
		struct ahci_port *p = &s->port[i];

		p->ahci = s;
		p->index = i;
		p->cdrom = drives ? drives[i].cdrom : NULL;
		p->disk = drives && !p->cdrom ? drives[i].disk : NULL;
		if (p->cdrom)
			ata_id_cdrom(p->id, i);
		else if (p->disk)
			ata_id_disk(p->id, block_sectors(p->disk), i);
	}
	hba_reset(s);
	if (bus && pci_bus_add(bus, &s->pci, (uint8_t)devfn) < 0) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	dev_on_reset(host, ahci_reset, s);
	return s;
}

struct pci_dev *ahci_pci(struct ahci *s)
{
	return &s->pci;
}

void ahci_free(struct ahci *s)
{
	if (!s)
		return;
	pci_bus_remove(&s->pci);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
