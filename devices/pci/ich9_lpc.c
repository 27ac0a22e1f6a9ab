/* ich9_lpc.c — the ICH9 LPC bridge at 00:1f.0 (8086:2918), the PCI-ISA
 * bridge of -machine q35 in place of the PIIX3.
 *
 * The ISA devices behind it are the board's usual ones. What the bridge
 * adds is configuration: PMBASE (0x40, bits 15:7; bit 0 reads 1) and
 * ACPI_CNTL (0x44, bit 7 ACPI_EN) decide where the ACPI PM block decodes;
 * the PIRQx_ROUT registers (0x60-0x63 for A-D, 0x68-0x6b for E-H: bit 7
 * disables, bits 3:0 an ISA IRQ) as the firmware leaves them; RCBA (0xf0:
 * bits 31:14 the base, bit 0 enable) maps the 16 KiB root complex
 * register block. The PM block's SMI_EN and SMI_STS (PMBASE + 0x30,
 * + 0x34) live here: vmm has no SMM, so SMI_EN reads APMC_EN set from
 * reset, as QEMU's ICH9 does without SMM; SeaBIOS then takes SMM as set
 * up already and leaves it alone. INTx: every PIRQ also drives its own I/O APIC input
 * (16-23), which is what the DSDT's _PRT tells an APIC-mode OS; this
 * model raises only that input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/ich9.h"
#include "state/state.h"
#include "devices/pci/pci.h"

#define PMBASE 0x40
#define PMBASE_RTE 0x01
#define ACPI_CNTL 0x44
#define ACPI_CNTL_EN 0x80
#define PIRQA_ROUT 0x60
#define PIRQE_ROUT 0x68
#define PIRQ_DISABLE 0x80
#define RCBA 0xf0
#define RCBA_EN 0x01
#define RCRB_SIZE 0x4000u
#define FW_RCBA 0xfed1c000u
#define SMI_OFF 0x30 /* from PMBASE: SMI_EN, then SMI_STS */
#define SMI_LEN 8
#define SMI_EN_APMC_EN (1u << 5)

struct ich9_lpc {
	struct pci_dev pci;
	struct dev_host *host;
	struct acpi_pm *pm;
	pthread_mutex_t lock; /* guards rcrb */
	uint32_t rcrb_mapped; /* 0: not mapped */
	uint16_t smi_mapped;  /* port of SMI_EN, 0: not mapped */
	uint32_t smi_en;      /* under lock */
	uint8_t rcrb[RCRB_SIZE];
};

/* Called with the bus lock held. */
static int route(void *opaque, unsigned slot, unsigned pin)
{
	return (int)ICH9_PIRQ_GSI(ich9_slot_pirq(slot, pin & 3));
}

static uint32_t cfg32(const struct ich9_lpc *l, unsigned off)
{
	const uint8_t *p = &l->pci.cfg[off];

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void smi_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ich9_lpc *l = opaque;
	uint64_t v;

	pthread_mutex_lock(&l->lock);
	v = (uint64_t)l->smi_en >> (8 * off); /* SMI_STS: no SMI is ever raised */
	pthread_mutex_unlock(&l->lock);
	io_data_put(data, size, off < 4 ? v : 0);
}

static void smi_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ich9_lpc *l = opaque;
	uint64_t v = io_data_get(data, size);

	pthread_mutex_lock(&l->lock);
	for (unsigned i = 0; i < size && off + i < 4; i++) {
		unsigned shift = 8 * (unsigned)(off + i);

		l->smi_en = (l->smi_en & ~(0xffu << shift)) | (uint32_t)(v >> (8 * i) & 0xff)
								      << shift;
	}
	pthread_mutex_unlock(&l->lock);
}

static const struct io_ops smi_ops = {smi_read, smi_write};

static void place_smi(struct ich9_lpc *l, uint16_t base)
{
	uint16_t want = base ? (uint16_t)(base + SMI_OFF) : 0;

	if (want == l->smi_mapped)
		return;
	if (l->smi_mapped)
		iobus_unregister(l->host->pio, l->smi_mapped);
	l->smi_mapped = 0;
	if (want && iobus_register(l->host->pio, want, SMI_LEN, &smi_ops, l, "ich9-smi"))
		fprintf(stderr, "vmm: ich9-lpc: cannot place SMI_EN at %#x\n", want);
	else
		l->smi_mapped = want;
}

static void apply_pmbase(struct ich9_lpc *l)
{
	uint16_t base = (uint16_t)(cfg32(l, PMBASE) & 0xff80);
	int ret;

	if (!l->pm)
		return;
	if (!(l->pci.cfg[ACPI_CNTL] & ACPI_CNTL_EN))
		base = 0;
	ret = acpi_pm_set_base(l->pm, base);
	if (ret)
		fprintf(stderr, "vmm: ich9-lpc: cannot place the ACPI PM block at %#x: %s\n", base,
			strerror(-ret));
	place_smi(l, ret ? 0 : base);
}

static void rcrb_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ich9_lpc *l = opaque;

	pthread_mutex_lock(&l->lock);
	memcpy(data, &l->rcrb[off], off + size <= RCRB_SIZE ? size : 0);
	pthread_mutex_unlock(&l->lock);
}

static void rcrb_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ich9_lpc *l = opaque;

	pthread_mutex_lock(&l->lock);
	if (off + size <= RCRB_SIZE)
		memcpy(&l->rcrb[off], data, size);
	pthread_mutex_unlock(&l->lock);
}

static const struct io_ops rcrb_ops = {rcrb_read, rcrb_write};

static void apply_rcba(struct ich9_lpc *l)
{
	uint32_t v = cfg32(l, RCBA), want = v & RCBA_EN ? v & ~(RCRB_SIZE - 1) : 0;

	if (want == l->rcrb_mapped)
		return;
	if (l->rcrb_mapped)
		iobus_unregister(l->host->mmio, l->rcrb_mapped);
	l->rcrb_mapped = 0;
	if (want && iobus_register(l->host->mmio, want, RCRB_SIZE, &rcrb_ops, l, "ich9-rcrb"))
		fprintf(stderr, "vmm: ich9-lpc: RCBA at %#x overlaps another region\n", want);
	else
		l->rcrb_mapped = want;
}

static void cfg_written(struct pci_dev *d, unsigned off, unsigned size)
{
	struct ich9_lpc *l = d->opaque;

	if (off < ACPI_CNTL + 1 && off + size > PMBASE)
		apply_pmbase(l);
	if (off < RCBA + 4 && off + size > RCBA)
		apply_rcba(l);
}

static void lpc_regs_reset(struct ich9_lpc *l)
{
	memset(&l->pci.cfg[PMBASE], 0, 8);
	l->pci.cfg[PMBASE] = PMBASE_RTE;
	memset(&l->pci.cfg[PIRQA_ROUT], PIRQ_DISABLE, 4);
	memset(&l->pci.cfg[PIRQE_ROUT], PIRQ_DISABLE, 4);
	memset(&l->pci.cfg[RCBA], 0, 4);
	pthread_mutex_lock(&l->lock);
	memset(l->rcrb, 0, sizeof(l->rcrb));
	l->smi_en = SMI_EN_APMC_EN;
	pthread_mutex_unlock(&l->lock);
}

static void lpc_reset(void *opaque)
{
	struct ich9_lpc *l = opaque;

	lpc_regs_reset(l);
	apply_pmbase(l);
	apply_rcba(l);
}

struct ich9_lpc *ich9_lpc_new(struct dev_host *host, struct pci_bus *bus, struct acpi_pm *pm)
{
	struct ich9_lpc *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->host = host;
	l->pm = pm;
	pthread_mutex_init(&l->lock, NULL);
	pci_dev_init(&l->pci, "ich9-lpc", 0x8086, 0x2918, 0x060100, 0x02);
	l->pci.opaque = l;
	l->pci.cfg_written = cfg_written;
	l->pci.cfg[0x0e] = 0x80; /* multi-function: SMBus at 00:1f.3 */
	l->pci.wmask[PMBASE] = 0x80;
	l->pci.wmask[PMBASE + 1] = 0xff;
	l->pci.wmask[ACPI_CNTL] = ACPI_CNTL_EN | 0x07; /* + SCI IRQ select */
	memset(&l->pci.wmask[PIRQA_ROUT], 0x8f, 4);
	memset(&l->pci.wmask[PIRQE_ROUT], 0x8f, 4);
	l->pci.wmask[RCBA] = RCBA_EN;
	l->pci.wmask[RCBA + 1] = 0xc0;
	l->pci.wmask[RCBA + 2] = 0xff;
	l->pci.wmask[RCBA + 3] = 0xff;
	lpc_regs_reset(l);
	if (pci_bus_add(bus, &l->pci, ICH9_LPC_DEVFN)) {
		pthread_mutex_destroy(&l->lock);
		free(l);
		return NULL;
	}
	apply_pmbase(l);
	pci_bus_set_route(bus, route, l);
	dev_on_reset(host, lpc_reset, l);
	return l;
}

void ich9_lpc_firmware_setup(struct ich9_lpc *l, uint16_t pm_base, const uint8_t isa_irq[4])
{
	struct pci_bus *bus = l->pci.bus;

	for (unsigned i = 0; i < 4; i++) {
		pci_cfg_write(bus, ICH9_LPC_DEVFN, PIRQA_ROUT + i, 1, isa_irq[i]);
		pci_cfg_write(bus, ICH9_LPC_DEVFN, PIRQE_ROUT + i, 1, isa_irq[i]);
	}
	pci_cfg_write(bus, ICH9_LPC_DEVFN, PMBASE, 4, pm_base | PMBASE_RTE);
	pci_cfg_write(bus, ICH9_LPC_DEVFN, ACPI_CNTL, 1, ACPI_CNTL_EN);
	pci_cfg_write(bus, ICH9_LPC_DEVFN, RCBA, 4, FW_RCBA | RCBA_EN);
}

#define LPC_STATE_VERSION 2 /* 2: smi-en */

/* Snapshot: config space (PMBASE, ACPI_CNTL, PIRQA-H, RCBA) and the root
 * complex register block; loading maps the PM block and RCRB there. */
void ich9_lpc_save(struct ich9_lpc *l, struct state_writer *w)
{
	state_begin(w, "ich9-lpc@1f,0", LPC_STATE_VERSION);
	pci_dev_save(&l->pci, w);
	pthread_mutex_lock(&l->lock);
	state_put_bytes(w, "rcrb", l->rcrb, RCRB_SIZE);
	state_put_u32(w, "smi-en", l->smi_en);
	pthread_mutex_unlock(&l->lock);
	state_end(w);
}

int ich9_lpc_load(struct ich9_lpc *l, const struct state_reader *r, char *err, size_t errlen)
{
	static uint8_t rcrb[RCRB_SIZE]; /* 16 KiB: off the stack */
	struct state_node n;
	uint32_t smi_en = SMI_EN_APMC_EN; /* version 1 streams: the reset value */

	if (state_node_open(&n, r, "ich9-lpc@1f,0", LPC_STATE_VERSION, err, errlen) < 0 ||
	    state_get_bytes(&n, "rcrb", rcrb, RCRB_SIZE) < 0 ||
	    (n.version >= 2 && state_get_u32(&n, "smi-en", &smi_en) < 0) ||
	    pci_dev_load(&l->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&l->lock);
	memcpy(l->rcrb, rcrb, RCRB_SIZE);
	l->smi_en = smi_en;
	pthread_mutex_unlock(&l->lock);
	apply_pmbase(l);
	apply_rcba(l);
	return 0;
}

void ich9_lpc_free(struct ich9_lpc *l)
{
	if (!l)
		return;
	if (l->pci.bus)
		pci_bus_set_route(l->pci.bus, NULL, NULL);
	pci_bus_remove(&l->pci);
	if (l->rcrb_mapped)
		iobus_unregister(l->host->mmio, l->rcrb_mapped);
	if (l->smi_mapped)
		iobus_unregister(l->host->pio, l->smi_mapped);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
