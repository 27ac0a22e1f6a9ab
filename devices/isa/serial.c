/* serial.c — 16550A UART.
 *
 * Transmission is instantaneous: a byte written to THR goes straight to the
 * backend and THR/TSR are always empty again, so THRE and TEMT stay set.
 * The receive side has the real 16-byte FIFO with its trigger levels.
 * The interrupt line is level-triggered and only driven on changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/serial.h"
#include "state/state.h"

#define FIFO_SIZE 16

enum {
	UART_RBR = 0, /* read, DLAB=0 */
	UART_THR = 0, /* write, DLAB=0 */
	UART_IER = 1,
	UART_IIR = 2, /* read */
	UART_FCR = 2, /* write */
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_MSR = 6,
	UART_SCR = 7,
};

#define IER_RDI 0x01  /* received data available */
#define IER_THRI 0x02 /* THR empty */
#define IER_RLSI 0x04 /* receiver line status */
#define IER_MSI 0x08  /* modem status */

#define IIR_NO_INT 0x01
#define IIR_MSI 0x00
#define IIR_THRI 0x02
#define IIR_RDI 0x04
#define IIR_RLSI 0x06
#define IIR_CTI 0x0c /* character timeout */
#define IIR_FIFO_ON 0xc0

#define FCR_ENABLE 0x01
#define FCR_CLEAR_RX 0x02
#define FCR_CLEAR_TX 0x04

#define LCR_DLAB 0x80

#define MCR_DTR 0x01
#define MCR_RTS 0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10

#define LSR_DR 0x01
#define LSR_OE 0x02
#define LSR_BI 0x10
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

#define MSR_DCTS 0x01
#define MSR_DDSR 0x02
#define MSR_TERI 0x04
#define MSR_DDCD 0x08
#define MSR_CTS 0x10
#define MSR_DSR 0x20
#define MSR_RI 0x40
#define MSR_DCD 0x80
#define MSR_DELTA 0x0f

struct serial {
	pthread_mutex_t lock;
	struct dev_host *host;
	struct char_backend be;
	uint16_t base;
	unsigned irq;
	bool irq_level;
	char name[16];
	char node[16]; /* its node in a state tree: serial@3f8 */

	uint8_t ier, lcr, mcr, lsr, msr, scr, fcr;
	uint16_t divisor;
	bool thr_ipending; /* THRE interrupt not yet acknowledged */
	bool rx_was_full;  /* tell the backend when room appears */

	uint8_t rx[FIFO_SIZE];
	unsigned rx_head, rx_count;
};

static unsigned rx_trigger(const struct serial *s)
{
	static const unsigned levels[4] = {1, 4, 8, 14};

	if (!(s->fcr & FCR_ENABLE))
		return 1;
	return levels[s->fcr >> 6];
}

static unsigned rx_capacity(const struct serial *s)
{
	return s->fcr & FCR_ENABLE ? FIFO_SIZE : 1;
}

/* The highest-priority pending interrupt as the IIR reports it. */
static uint8_t pending_iir(const struct serial *s)
{
	if ((s->ier & IER_RLSI) && (s->lsr & (LSR_OE | LSR_BI)))
		return IIR_RLSI;
	if ((s->ier & IER_RDI) && s->rx_count)
		return s->rx_count >= rx_trigger(s) ? IIR_RDI : IIR_CTI;
	if ((s->ier & IER_THRI) && s->thr_ipending)
		return IIR_THRI;
	if ((s->ier & IER_MSI) && (s->msr & MSR_DELTA))
		return IIR_MSI;
	return IIR_NO_INT;
}

static void update_irq(struct serial *s)
{
	bool level = pending_iir(s) != IIR_NO_INT;

	if (level != s->irq_level) {
		s->irq_level = level;
		s->host->irq.set_level(s->host->irq.opaque, s->irq, level);
	}
}

/* Queue one received byte; an overrun when the FIFO is full. */
static bool rx_push(struct serial *s, uint8_t byte)
{
	if (s->rx_count >= rx_capacity(s)) {
		s->lsr |= LSR_OE;
		return false;
	}
	s->rx[(s->rx_head + s->rx_count) % FIFO_SIZE] = byte;
	s->rx_count++;
	s->lsr |= LSR_DR;
	return true;
}

static uint8_t rx_pop(struct serial *s)
{
	uint8_t byte;

	if (!s->rx_count)
		return 0;
	byte = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % FIFO_SIZE;
	if (--s->rx_count == 0)
		s->lsr &= ~LSR_DR;
	return byte;
}

static void rx_clear(struct serial *s)
{
	s->rx_head = s->rx_count = 0;
	s->lsr &= ~LSR_DR;
}

/* Modem status inputs: in loopback they follow MCR, else the line is up. */
static void update_msr(struct serial *s)
{
	uint8_t in, old = s->msr;

	if (s->mcr & MCR_LOOP)
		in = (s->mcr & MCR_DTR ? MSR_DSR : 0) | (s->mcr & MCR_RTS ? MSR_CTS : 0) |
		     (s->mcr & MCR_OUT1 ? MSR_RI : 0) | (s->mcr & MCR_OUT2 ? MSR_DCD : 0);
	else
		in = MSR_DCD | MSR_DSR | MSR_CTS;
	s->msr = (uint8_t)((old & MSR_DELTA) | in);
	if ((in ^ old) & MSR_CTS)
		s->msr |= MSR_DCTS;
	if ((in ^ old) & MSR_DSR)
		s->msr |= MSR_DDSR;
	if ((in ^ old) & MSR_DCD)
		s->msr |= MSR_DDCD;
	if ((old & MSR_RI) && !(in & MSR_RI))
		s->msr |= MSR_TERI;
}

static void transmit(struct serial *s, uint8_t byte)
{
	if (s->mcr & MCR_LOOP)
		rx_push(s, byte);
	else if (s->be.write)
		s->be.write(s->be.opaque, &byte, 1);
	s->thr_ipending = true;
}

/* Returns whether the backend should hear that input fits again. */
static bool read_reg(struct serial *s, unsigned reg, uint8_t *val)
{
	bool notify = false;
	uint8_t iir;

	switch (reg) {
	case UART_RBR:
		if (s->lcr & LCR_DLAB) {
			*val = (uint8_t)s->divisor;
			break;
		}
		*val = rx_pop(s);
		if (s->rx_was_full && s->rx_count < rx_capacity(s)) {
			s->rx_was_full = false;
			notify = true;
		}
		break;
	case UART_IER:
		*val = s->lcr & LCR_DLAB ? (uint8_t)(s->divisor >> 8) : s->ier;
		break;
	case UART_IIR:
		iir = pending_iir(s);
		if (iir == IIR_THRI)
			s->thr_ipending = false; /* reading IIR acknowledges THRE */
		*val = (uint8_t)(iir | (s->fcr & FCR_ENABLE ? IIR_FIFO_ON : 0));
		break;
	case UART_LCR:
		*val = s->lcr;
		break;
	case UART_MCR:
		*val = s->mcr;
		break;
	case UART_LSR:
		*val = s->lsr;
		s->lsr &= ~(LSR_OE | LSR_BI);
		break;
	case UART_MSR:
		*val = s->msr;
		s->msr &= ~MSR_DELTA;
		break;
	default:
		*val = s->scr;
		break;
	}
	return notify;
}

static void write_fcr(struct serial *s, uint8_t val)
{
	if ((val ^ s->fcr) & FCR_ENABLE)
		rx_clear(s); /* toggling the FIFO enable resets it */
	if (val & FCR_CLEAR_RX)
		rx_clear(s);
	s->fcr = val & 0xc1;
}

static bool write_reg(struct serial *s, unsigned reg, uint8_t val)
{
	switch (reg) {
	case UART_THR:
		if (s->lcr & LCR_DLAB)
			s->divisor = (uint16_t)((s->divisor & 0xff00) | val);
		else
			transmit(s, val);
		break;
	case UART_IER:
		if (s->lcr & LCR_DLAB) {
			s->divisor = (uint16_t)((s->divisor & 0xff) | val << 8);
			break;
		}
		/* Enabling THRE with THR empty raises the interrupt at once. */
		if ((val & IER_THRI) && !(s->ier & IER_THRI))
			s->thr_ipending = true;
		s->ier = val & 0x0f;
		break;
	case UART_FCR:
		write_fcr(s, val);
		break;
	case UART_LCR:
		s->lcr = val;
		break;
	case UART_MCR:
		s->mcr = val & 0x1f;
		update_msr(s);
		break;
	case UART_SCR:
		s->scr = val;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
	return s->rx_was_full && s->rx_count < rx_capacity(s);
}

static void serial_io_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct serial *s = opaque;
	uint8_t val = 0xff;
	bool notify;

	pthread_mutex_lock(&s->lock);
	notify = read_reg(s, (unsigned)off, &val);
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	memset(data, 0, size);
	*(uint8_t *)data = val;
	if (notify && s->be.rx_ready)
		s->be.rx_ready(s->be.opaque);
}

static void serial_io_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct serial *s = opaque;
	bool notify;

	pthread_mutex_lock(&s->lock);
	notify = write_reg(s, (unsigned)off, *(const uint8_t *)data);
	if (notify)
		s->rx_was_full = false;
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	if (notify && s->be.rx_ready)
		s->be.rx_ready(s->be.opaque);
}

static const struct io_ops serial_ops = {serial_io_read, serial_io_write};

/* Power-on state (as after a hardware reset of the chip). */
static void serial_reset(void *opaque)
{
	struct serial *s = opaque;

	pthread_mutex_lock(&s->lock);
	s->ier = s->lcr = s->mcr = s->scr = s->fcr = 0;
	s->lsr = LSR_THRE | LSR_TEMT;
	s->msr = MSR_DCD | MSR_DSR | MSR_CTS;
	s->divisor = 12; /* 9600 baud */
	s->thr_ipending = false;
	rx_clear(s);
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

struct serial *serial_new(struct dev_host *host, uint16_t base, unsigned irq,
			  const struct char_backend *be)
{
	struct serial *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->host = host;
	s->base = base;
	s->irq = irq;
	if (be)
		s->be = *be;
	snprintf(s->name, sizeof(s->name), "serial@%#x", base);
	snprintf(s->node, sizeof(s->node), "serial@%x", base);
	serial_reset(s);
	if (iobus_register(host->pio, base, 8, &serial_ops, s, s->name) < 0 ||
	    dev_on_reset(host, serial_reset, s) < 0) {
		iobus_unregister(host->pio, base);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void serial_free(struct serial *s)
{
	if (!s)
		return;
	iobus_unregister(s->host->pio, s->base);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

size_t serial_receive(struct serial *s, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	/* In loopback the receiver is cut off from the line. */
	while (!(s->mcr & MCR_LOOP) && n < len && s->rx_count < rx_capacity(s))
		rx_push(s, buf[n++]);
	if (n < len)
		s->rx_was_full = true;
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t serial_can_receive(struct serial *s)
{
	size_t room;

	pthread_mutex_lock(&s->lock);
	room = s->mcr & MCR_LOOP ? 0 : rx_capacity(s) - s->rx_count;
	if (!room)
		s->rx_was_full = true;
	pthread_mutex_unlock(&s->lock);
	return room;
}

/* ------------------------------------------------------------ snapshot */

/* The layout of the node; bump when a property changes. rx_was_full is
 * host-side flow control, recomputed by the backend's next can_receive. */
#define SERIAL_STATE_VERSION 1

/* The registers and latches a snapshot carries. */
struct serial_regs {
	uint8_t ier, lcr, mcr, lsr, msr, scr, fcr;
	uint16_t divisor;
	bool thr_ipending;
	uint8_t rx[FIFO_SIZE];
	uint32_t rx_head, rx_count;
};

void serial_save(struct serial *s, struct state_writer *w)
{
	pthread_mutex_lock(&s->lock);
	state_begin(w, s->node, SERIAL_STATE_VERSION);
	state_put_u8(w, "ier", s->ier);
	state_put_u8(w, "lcr", s->lcr);
	state_put_u8(w, "mcr", s->mcr);
	state_put_u8(w, "lsr", s->lsr);
	state_put_u8(w, "msr", s->msr);
	state_put_u8(w, "scr", s->scr);
	state_put_u8(w, "fcr", s->fcr);
	state_put_u16(w, "divisor", s->divisor);
	state_put_u8(w, "thr-ipending", s->thr_ipending);
	state_put_bytes(w, "rx-fifo", s->rx, sizeof(s->rx));
	state_put_u32(w, "rx-head", s->rx_head);
	state_put_u32(w, "rx-count", s->rx_count);
	state_end(w);
	pthread_mutex_unlock(&s->lock);
}

/* Read and check every property; values the device could never hold are
 * refused, so the FIFO indices stay inside the FIFO. */
static int serial_read_regs(struct state_node *n, struct serial_regs *v)
{
	if (state_get_u8_max(n, "ier", 0x0f, &v->ier) || state_get_u8(n, "lcr", &v->lcr) ||
	    state_get_u8_max(n, "mcr", 0x1f, &v->mcr) || state_get_u8(n, "lsr", &v->lsr) ||
	    state_get_u8(n, "msr", &v->msr) || state_get_u8(n, "scr", &v->scr) ||
	    state_get_u8(n, "fcr", &v->fcr) || state_get_u16(n, "divisor", &v->divisor) ||
	    state_get_bool(n, "thr-ipending", &v->thr_ipending) ||
	    state_get_bytes(n, "rx-fifo", v->rx, sizeof(v->rx)) ||
	    state_get_u32_max(n, "rx-head", FIFO_SIZE - 1, &v->rx_head) ||
	    state_get_u32_max(n, "rx-count", FIFO_SIZE, &v->rx_count))
		return -1;
	if (v->fcr & ~0xc1)
		return state_node_fail(n, "fcr %#x has bits the FCR never keeps", v->fcr);
	if (v->rx_count > (v->fcr & FCR_ENABLE ? FIFO_SIZE : 1))
		return state_node_fail(n, "%u bytes in a receive FIFO of %u", v->rx_count,
				       v->fcr & FCR_ENABLE ? FIFO_SIZE : 1);
	if (!!(v->lsr & LSR_DR) != !!v->rx_count)
		return state_node_fail(n, "lsr data-ready disagrees with rx-count %u", v->rx_count);
	return state_node_close(n);
}

int serial_load(struct serial *s, const struct state_reader *r, char *err, size_t errlen)
{
	struct serial_regs v = {0};
	struct state_node n;

	if (state_node_open(&n, r, s->node, SERIAL_STATE_VERSION, err, errlen) < 0 ||
	    serial_read_regs(&n, &v) < 0)
		return -1;
	pthread_mutex_lock(&s->lock);
	s->ier = v.ier;
	s->lcr = v.lcr;
	s->mcr = v.mcr;
	s->lsr = v.lsr;
	s->msr = v.msr;
	s->scr = v.scr;
	s->fcr = v.fcr;
	s->divisor = v.divisor;
	s->thr_ipending = v.thr_ipending;
	memcpy(s->rx, v.rx, sizeof(s->rx));
	s->rx_head = v.rx_head;
	s->rx_count = v.rx_count;
	s->rx_was_full = false;
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	/* a backend that stalled on a full FIFO before the load may send again */
	if (s->be.rx_ready)
		s->be.rx_ready(s->be.opaque);
	return 0;
}
