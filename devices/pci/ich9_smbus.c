/* ich9_smbus.c — the ICH9 SMBus host controller at 00:1f.3 (8086:2930).
 *
 * Its registers sit behind SMB_BASE (config 0x20, BAR 4, 32 ports) and
 * HOSTC (0x40, bit 0 HST_EN) enables the host. No device sits on the bus
 * (QEMU's q35 has SPD EEPROMs there; vmm has none), so a transaction the
 * guest starts (HST_CNT START) finishes at once with DEV_ERR: what a
 * driver probing for devices expects from an empty bus. */
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pci.h"
#include "state/state.h"

#define SMB_BAR 4
#define SMB_IO_SIZE 32
#define HOSTC 0x40

/* I/O registers */
#define HST_STS 0x00
#define HST_CNT 0x02
#define HST_CMD 0x03
#define XMIT_SLVA 0x04
#define HST_D0 0x05
#define HST_D1 0x06
#define AUX_CTL 0x0d

#define STS_DEV_ERR 0x04
#define STS_INUSE 0x40
#define CNT_START 0x40

struct ich9_smbus {
	struct pci_dev pci;
	pthread_mutex_t lock;
	uint8_t io[SMB_IO_SIZE];
};

static void smb_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ich9_smbus *s = opaque;

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < size; i++) {
		unsigned r = (unsigned)off + i;

		((uint8_t *)data)[i] = r < SMB_IO_SIZE ? s->io[r] : 0xff;
		/* INUSE_STS is a semaphore: reading it takes it */
		if (r == HST_STS)
			s->io[HST_STS] |= STS_INUSE;
	}
	pthread_mutex_unlock(&s->lock);
}

static void smb_write_reg(struct ich9_smbus *s, unsigned r, uint8_t v)
{
	switch (r) {
	case HST_STS: /* write 1 to clear */
		s->io[HST_STS] &= (uint8_t)~v;
		break;
	case HST_CNT:
		s->io[HST_CNT] = v & (uint8_t)~CNT_START;
		if (v & CNT_START)
			s->io[HST_STS] |= STS_DEV_ERR; /* nobody acknowledged */
		break;
	case HST_CMD:
	case XMIT_SLVA:
	case HST_D0:
	case HST_D1:
	case AUX_CTL:
		s->io[r] = v;
		break;
	default:
		break;
	}
}

static void smb_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ich9_smbus *s = opaque;

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < size; i++)
		if (off + i < SMB_IO_SIZE)
			smb_write_reg(s, (unsigned)off + i, ((const uint8_t *)data)[i]);
	pthread_mutex_unlock(&s->lock);
}

static const struct io_ops smb_ops = {smb_read, smb_write};

static void smbus_reset(void *opaque)
{
	struct ich9_smbus *s = opaque;

	pthread_mutex_lock(&s->lock);
	memset(s->io, 0, sizeof(s->io));
	pthread_mutex_unlock(&s->lock);
	s->pci.cfg[HOSTC] = 0;
}

struct ich9_smbus *ich9_smbus_new(struct dev_host *host, struct pci_bus *bus)
{
	struct ich9_smbus *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pci_dev_init(&s->pci, "ich9-smbus", 0x8086, 0x2930, 0x0c0500, 0x02);
	s->pci.opaque = s;
	pci_dev_set_bar(&s->pci, SMB_BAR, SMB_IO_SIZE, true, &smb_ops, s);
	s->pci.wmask[HOSTC] = 0x1f;
	if (pci_bus_add(bus, &s->pci, ICH9_SMBUS_DEVFN)) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	dev_on_reset(host, smbus_reset, s);
	return s;
}

#define SMB_STATE_VERSION 1

void ich9_smbus_save(struct ich9_smbus *s, struct state_writer *w)
{
	state_begin(w, "ich9-smbus@1f,3", SMB_STATE_VERSION);
	pci_dev_save(&s->pci, w);
	pthread_mutex_lock(&s->lock);
	state_put_bytes(w, "io", s->io, SMB_IO_SIZE);
	pthread_mutex_unlock(&s->lock);
	state_end(w);
}

int ich9_smbus_load(struct ich9_smbus *s, const struct state_reader *r, char *err, size_t errlen)
{
	uint8_t io[SMB_IO_SIZE];
	struct state_node n;

	if (state_node_open(&n, r, "ich9-smbus@1f,3", SMB_STATE_VERSION, err, errlen) < 0 ||
	    state_get_bytes(&n, "io", io, SMB_IO_SIZE) < 0 || pci_dev_load(&s->pci, &n) < 0 ||
	    state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&s->lock);
	memcpy(s->io, io, SMB_IO_SIZE);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void ich9_smbus_free(struct ich9_smbus *s)
{
	if (!s)
		return;
	pci_bus_remove(&s->pci);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
