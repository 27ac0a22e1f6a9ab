/* i8259.c — the two cascaded 8259A programmable interrupt controllers
 * (master at 0x20/0x21, slave at 0xa0/0xa1, slave INT on master IRQ 2)
 * and the PIIX edge/level control registers (ELCR, 0x4d0/0x4d1).
 *
 * The ELCR lives here, not in the PIIX3 model: it only changes how this
 * PIC samples its inputs, and with the in-kernel PIC (kernel_irqchip=on)
 * KVM owns the ports, so one owner that exists exactly when the userspace
 * PIC does is the right one.
 *
 * Follows the 8259A datasheet: ICW1-4 initialisation, OCW1 (IMR), OCW2
 * (specific/non-specific EOI, rotation), OCW3 (IRR/ISR read, poll,
 * special mask), automatic EOI and special fully nested mode. The INTR
 * output is reported through a callback that carries no level: it runs
 * without our lock (the consumer may call i8259_ack at once) and the
 * consumer reads the current level with i8259_intr().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/intc/i8259.h"
#include "state/state.h"

#define ELCR_PORT 0x4d0

/* ICW1 and OCW2/OCW3 bits */
#define ICW1_IC4 0x01
#define ICW1_SNGL 0x02
#define ICW1_LTIM 0x08
#define ICW1_INIT 0x10
#define OCW3_SEL 0x08
#define OCW3_POLL 0x04
#define OCW3_RR 0x02
#define OCW3_RIS 0x01
#define OCW3_ESMM 0x40
#define OCW3_SMM 0x20
#define ICW4_AEOI 0x02
#define ICW4_SFNM 0x10

struct pic_chip {
	uint8_t irr, isr, imr;
	uint8_t last_level; /* input lines as last driven (edge detection) */
	uint8_t elcr, elcr_mask;
	uint8_t base;	      /* ICW2: vector of IRQ 0 */
	uint8_t priority_add; /* IRQ with the highest priority */
	uint8_t icw1;
	uint8_t init_step; /* 0 = operational, else the next ICW (2-4) */
	bool read_isr, poll, special_mask, auto_eoi, rotate_on_aeoi, sfnm;
};

struct i8259 {
	struct dev_host *host;
	pthread_mutex_t lock;
	struct pic_chip chip[2]; /* master, slave */
	bool out;		 /* INTR as last computed */
	uint64_t count[16];	 /* rising edges per IRQ, for `info irq` */
	void (*intr_changed)(void *opaque);
	void *opaque;
	struct pic_port {
		struct i8259 *p;
		unsigned n;
	} port[2]; /* bus opaques for the master's and slave's ports */
};

static const uint16_t chip_port[2] = {0x20, 0xa0};

/* Priority (0 highest) of the best bit in mask, 8 when none is set. */
static unsigned best_priority(const struct pic_chip *c, uint8_t mask)
{
	for (unsigned p = 0; p < 8; p++)
		if (mask & (1u << ((p + c->priority_add) & 7)))
			return p;
	return 8;
}

/* The IRQ the chip would present now, or -1. */
static int chip_pending(const struct pic_chip *c, bool master)
{
	unsigned req = best_priority(c, c->irr & ~c->imr), cur;
	uint8_t in_service = c->isr;

	if (req == 8)
		return -1;
	/* Special mask mode: masked levels in service do not block others. */
	if (c->special_mask)
		in_service &= ~c->imr;
	/* Special fully nested: the slave may interrupt its own service. */
	if (master && c->sfnm)
		in_service &= ~(1u << 2);
	cur = best_priority(c, in_service);
	return req < cur ? (int)((req + c->priority_add) & 7) : -1;
}

/* Drive one input of a chip; edge or level per LTIM and the ELCR. */
static void chip_input(struct pic_chip *c, unsigned irq, bool level)
{
	uint8_t mask = (uint8_t)(1u << irq);
	bool level_mode = (c->icw1 & ICW1_LTIM) || (c->elcr & mask);

	if (level_mode) {
		c->irr = level ? c->irr | mask : c->irr & ~mask;
	} else if (level && !(c->last_level & mask)) {
		c->irr |= mask;
	}
	c->last_level = level ? c->last_level | mask : c->last_level & ~mask;
}

/* The slave's INT feeds master IRQ 2: a pulse per evaluation, so the
 * master sees a new edge whenever the slave still requests. */
static void update_cascade(struct i8259 *p)
{
	if (chip_pending(&p->chip[1], false) >= 0) {
		chip_input(&p->chip[0], 2, true);
		chip_input(&p->chip[0], 2, false);
	}
}

/* Recompute INTR under the lock; true when it changed. */
static bool update_locked(struct i8259 *p)
{
	bool out;

	update_cascade(p);
	out = chip_pending(&p->chip[0], true) >= 0;
	if (out == p->out)
		return false;
	p->out = out;
	return true;
}

static void unlock_and_notify(struct i8259 *p, bool changed)
{
	pthread_mutex_unlock(&p->lock);
	if (changed && p->intr_changed)
		p->intr_changed(p->opaque);
}

/* INTA on one chip for irq: set ISR (unless AEOI), clear an edge IRR. */
static void chip_ack(struct pic_chip *c, unsigned irq)
{
	uint8_t mask = (uint8_t)(1u << irq);

	if (c->auto_eoi) {
		if (c->rotate_on_aeoi)
			c->priority_add = (uint8_t)((irq + 1) & 7);
	} else {
		c->isr |= mask;
	}
	if (!(c->elcr & mask) && !(c->icw1 & ICW1_LTIM))
		c->irr &= ~mask;
}

static int ack_locked(struct i8259 *p)
{
	struct pic_chip *m = &p->chip[0], *s = &p->chip[1];
	int irq = chip_pending(m, true), irq2;

	if (irq < 0) /* the request went away: spurious IRQ 7 */
		return (m->base + 7) & 0xff;
	chip_ack(m, (unsigned)irq);
	if (irq != 2)
		return (m->base + irq) & 0xff;
	irq2 = chip_pending(s, false);
	if (irq2 < 0)
		return (s->base + 7) & 0xff;
	chip_ack(s, (unsigned)irq2);
	return (s->base + irq2) & 0xff;
}

int i8259_ack(struct i8259 *p)
{
	int vector;
	bool changed;

	pthread_mutex_lock(&p->lock);
	vector = ack_locked(p);
	changed = update_locked(p);
	unlock_and_notify(p, changed);
	return vector;
}

bool i8259_intr(struct i8259 *p)
{
	bool out;

	pthread_mutex_lock(&p->lock);
	out = p->out;
	pthread_mutex_unlock(&p->lock);
	return out;
}

void i8259_set_irq(struct i8259 *p, unsigned irq, bool level)
{
	struct pic_chip *c;
	bool changed;

	if (irq >= 16)
		return;
	c = &p->chip[irq >> 3];
	pthread_mutex_lock(&p->lock);
	if (level && !(c->last_level & (1u << (irq & 7))))
		p->count[irq]++;
	chip_input(c, irq & 7, level);
	changed = update_locked(p);
	unlock_and_notify(p, changed);
}

/* ------------------------------------------------------------ registers */

static void chip_reset(struct pic_chip *c, bool keep_elcr)
{
	uint8_t elcr = c->elcr, elcr_mask = c->elcr_mask;

	memset(c, 0, sizeof(*c));
	c->elcr_mask = elcr_mask;
	c->elcr = keep_elcr ? elcr : 0;
}

/* OCW2: EOI and rotation commands (bits 7-5: R, SL, EOI). */
static void write_ocw2(struct pic_chip *c, uint8_t v)
{
	unsigned cmd = v >> 5, level = v & 7, prio;

	switch (cmd) {
	case 0: /* clear rotate in AEOI mode */
	case 4: /* set rotate in AEOI mode */
		c->rotate_on_aeoi = cmd == 4;
		break;
	case 1: /* non-specific EOI */
	case 5: /* rotate on non-specific EOI */
		prio = best_priority(c, c->isr);
		if (prio == 8)
			break;
		level = (prio + c->priority_add) & 7;
		c->isr &= ~(1u << level);
		if (cmd == 5)
			c->priority_add = (uint8_t)((level + 1) & 7);
		break;
	case 3: /* specific EOI */
		c->isr &= ~(1u << level);
		break;
	case 6: /* set priority: level becomes the lowest */
		c->priority_add = (uint8_t)((level + 1) & 7);
		break;
	case 7: /* rotate on specific EOI */
		c->isr &= ~(1u << level);
		c->priority_add = (uint8_t)((level + 1) & 7);
		break;
	default: /* 2: no operation */
		break;
	}
}

static void write_cmd(struct pic_chip *c, uint8_t v)
{
	if (v & ICW1_INIT) {
		/* ICW1: clears IMR and ISR, IRQ 7 lowest, read IRR, and the
		 * edge detectors, so a line held high needs a new edge. */
		uint8_t level_irr = c->irr & c->elcr;

		chip_reset(c, true);
		c->icw1 = v;
		c->init_step = 2;
		c->irr = level_irr;
		return;
	}
	if (!(v & OCW3_SEL)) {
		write_ocw2(c, v);
		return;
	}
	/* OCW3 */
	if (v & OCW3_RR)
		c->read_isr = v & OCW3_RIS;
	c->poll = v & OCW3_POLL;
	if (v & OCW3_ESMM)
		c->special_mask = v & OCW3_SMM;
}

static void write_data(struct pic_chip *c, uint8_t v)
{
	switch (c->init_step) {
	case 0:
		c->imr = v; /* OCW1 */
		return;
	case 2:
		c->base = v & 0xf8;
		c->init_step = c->icw1 & ICW1_SNGL ? 4 : 3;
		break;
	case 3: /* ICW3: the cascade wiring is fixed on a PC */
		c->init_step = 4;
		break;
	case 4:
		c->auto_eoi = v & ICW4_AEOI;
		c->sfnm = v & ICW4_SFNM;
		c->init_step = 0;
		return;
	}
	if (c->init_step == 4 && !(c->icw1 & ICW1_IC4))
		c->init_step = 0;
}

/* Poll: the highest request as 0x80 | irq, acknowledged like an INTA. */
static uint8_t poll_locked(struct i8259 *p, unsigned n)
{
	struct pic_chip *c = &p->chip[n];
	int irq = chip_pending(c, n == 0);

	c->poll = false;
	if (irq < 0)
		return 0;
	chip_ack(c, (unsigned)irq);
	/* Polling the slave ends the master's view of the cascade too. */
	if (n == 1 && p->chip[0].isr & (1u << 2) && !c->isr)
		p->chip[0].isr &= ~(1u << 2);
	return (uint8_t)(0x80 | irq);
}

static void pic_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct pic_port *pp = opaque;
	struct i8259 *p = pp->p;
	struct pic_chip *c = &p->chip[pp->n];
	bool changed = false;
	uint8_t v;

	pthread_mutex_lock(&p->lock);
	if (c->poll) {
		v = poll_locked(p, pp->n);
		changed = update_locked(p);
	} else if (off == 0) {
		v = c->read_isr ? c->isr : c->irr;
	} else {
		v = c->imr;
	}
	unlock_and_notify(p, changed);
	io_data_put(data, size, v);
}

static void pic_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct pic_port *pp = opaque;
	struct i8259 *p = pp->p;
	struct pic_chip *c = &p->chip[pp->n];
	uint8_t v = (uint8_t)io_data_get(data, size);
	bool changed;

	pthread_mutex_lock(&p->lock);
	if (off == 0)
		write_cmd(c, v);
	else
		write_data(c, v);
	changed = update_locked(p);
	unlock_and_notify(p, changed);
}

static const struct io_ops pic_ops = {pic_read, pic_write};

/* ELCR: 0x4d0 for IRQ 0-7, 0x4d1 for IRQ 8-15. */
static void elcr_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct i8259 *p = opaque;
	uint32_t v = 0;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < size && off + i < 2; i++)
		v |= (uint32_t)p->chip[off + i].elcr << (8 * i);
	pthread_mutex_unlock(&p->lock);
	io_data_put(data, size, v);
}

static void elcr_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct i8259 *p = opaque;
	uint32_t v = (uint32_t)io_data_get(data, size);
	bool changed;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < size && off + i < 2; i++) {
		struct pic_chip *c = &p->chip[off + i];

		c->elcr = (uint8_t)(v >> (8 * i)) & c->elcr_mask;
	}
	changed = update_locked(p);
	unlock_and_notify(p, changed);
}

static const struct io_ops elcr_ops = {elcr_read, elcr_write};

static void i8259_reset(void *opaque)
{
	struct i8259 *p = opaque;
	bool changed;

	pthread_mutex_lock(&p->lock);
	for (unsigned n = 0; n < 2; n++)
		chip_reset(&p->chip[n], false);
	memset(p->count, 0, sizeof(p->count));
	changed = update_locked(p);
	unlock_and_notify(p, changed);
}

struct i8259 *i8259_new(struct dev_host *host, void (*intr_changed)(void *opaque), void *opaque)
{
	struct i8259 *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return NULL;
	p->host = host;
	p->intr_changed = intr_changed;
	p->opaque = opaque;
	pthread_mutex_init(&p->lock, NULL);
	/* IRQ 0, 1, 2 (master) and 8, 13 (slave) are always edge triggered */
	p->chip[0].elcr_mask = 0xf8;
	p->chip[1].elcr_mask = 0xde;
	for (unsigned n = 0; n < 2; n++)
		p->port[n] = (struct pic_port){p, n};
	r = iobus_register(host->pio, chip_port[0], 2, &pic_ops, &p->port[0], "pic master");
	if (!r)
		r = iobus_register(host->pio, chip_port[1], 2, &pic_ops, &p->port[1], "pic slave");
	if (!r)
		r = iobus_register(host->pio, ELCR_PORT, 2, &elcr_ops, p, "elcr");
	if (r) {
		iobus_unregister(host->pio, chip_port[0]);
		iobus_unregister(host->pio, chip_port[1]);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	dev_on_reset(host, i8259_reset, p);
	return p;
}

void i8259_free(struct i8259 *p)
{
	if (!p)
		return;
	iobus_unregister(p->host->pio, chip_port[0]);
	iobus_unregister(p->host->pio, chip_port[1]);
	iobus_unregister(p->host->pio, ELCR_PORT);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* ------------------------------------------------------------- monitor */

size_t i8259_format(const struct i8259_state st[2], char *buf, size_t len)
{
	size_t n = 0;

	for (unsigned i = 0; i < 2; i++) {
		const struct i8259_state *c = &st[i];
		int w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
				 "pic%u: irr=%02x imr=%02x isr=%02x hprio=%u irq_base=%02x "
				 "rr_sel=%u elcr=%02x fnm=%u\n",
				 i, c->irr, c->imr, c->isr, c->priority_add, c->irq_base,
				 c->read_reg_select, c->elcr, c->special_fully_nested_mode);

		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}

size_t i8259_info(struct i8259 *p, char *buf, size_t len)
{
	struct i8259_state st[2];

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < 2; i++) {
		const struct pic_chip *c = &p->chip[i];

		st[i] = (struct i8259_state){c->irr,  c->imr,	   c->isr,  c->priority_add,
					     c->base, c->read_isr, c->elcr, c->sfnm};
	}
	pthread_mutex_unlock(&p->lock);
	return i8259_format(st, buf, len);
}

uint64_t i8259_irq_count(struct i8259 *p, unsigned irq)
{
	uint64_t c;

	if (irq >= 16)
		return 0;
	pthread_mutex_lock(&p->lock);
	c = p->count[irq];
	pthread_mutex_unlock(&p->lock);
	return c;
}

/* ------------------------------------------------------------ snapshot */

/* The layout of each chip's node; bump when a property changes. */
#define I8259_STATE_VERSION 1

static void chip_node_name(unsigned n, char *buf, size_t len)
{
	snprintf(buf, len, "pic@%x", chip_port[n]);
}

static void chip_save(const struct pic_chip *c, unsigned n, struct state_writer *w)
{
	char name[16];

	chip_node_name(n, name, sizeof(name));
	state_begin(w, name, I8259_STATE_VERSION);
	state_put_u8(w, "irr", c->irr);
	state_put_u8(w, "isr", c->isr);
	state_put_u8(w, "imr", c->imr);
	state_put_u8(w, "last-level", c->last_level);
	state_put_u8(w, "elcr", c->elcr);
	state_put_u8(w, "base", c->base);
	state_put_u8(w, "priority-add", c->priority_add);
	state_put_u8(w, "icw1", c->icw1);
	state_put_u8(w, "init-step", c->init_step);
	state_put_u8(w, "read-isr", c->read_isr);
	state_put_u8(w, "poll", c->poll);
	state_put_u8(w, "special-mask", c->special_mask);
	state_put_u8(w, "auto-eoi", c->auto_eoi);
	state_put_u8(w, "rotate-on-aeoi", c->rotate_on_aeoi);
	state_put_u8(w, "sfnm", c->sfnm);
	state_end(w);
}

void i8259_save(struct i8259 *p, struct state_writer *w)
{
	pthread_mutex_lock(&p->lock);
	for (unsigned n = 0; n < 2; n++)
		chip_save(&p->chip[n], n, w);
	pthread_mutex_unlock(&p->lock);
}

/* One chip's node into c (whose elcr_mask is already set), checked. */
static int chip_load(struct pic_chip *c, unsigned n, const struct state_reader *r, char *err,
		     size_t errlen)
{
	struct state_node node;
	char name[16];

	chip_node_name(n, name, sizeof(name));
	if (state_node_open(&node, r, name, I8259_STATE_VERSION, err, errlen) < 0)
		return -1;
	if (state_get_u8(&node, "irr", &c->irr) || state_get_u8(&node, "isr", &c->isr) ||
	    state_get_u8(&node, "imr", &c->imr) ||
	    state_get_u8(&node, "last-level", &c->last_level) ||
	    state_get_u8(&node, "elcr", &c->elcr) || state_get_u8(&node, "base", &c->base) ||
	    state_get_u8_max(&node, "priority-add", 7, &c->priority_add) ||
	    state_get_u8(&node, "icw1", &c->icw1) ||
	    state_get_u8_max(&node, "init-step", 4, &c->init_step) ||
	    state_get_bool(&node, "read-isr", &c->read_isr) ||
	    state_get_bool(&node, "poll", &c->poll) ||
	    state_get_bool(&node, "special-mask", &c->special_mask) ||
	    state_get_bool(&node, "auto-eoi", &c->auto_eoi) ||
	    state_get_bool(&node, "rotate-on-aeoi", &c->rotate_on_aeoi) ||
	    state_get_bool(&node, "sfnm", &c->sfnm))
		return -1;
	if (c->init_step == 1)
		return state_node_fail(&node, "init-step 1 does not exist (0, 2-4)");
	if (c->elcr & ~c->elcr_mask)
		return state_node_fail(&node, "elcr %#x sets fixed edge-triggered IRQs", c->elcr);
	if (c->base & 7)
		return state_node_fail(&node, "base %#x is not a multiple of 8", c->base);
	return state_node_close(&node);
}

int i8259_load(struct i8259 *p, const struct state_reader *r, char *err, size_t errlen)
{
	struct pic_chip chip[2];
	bool changed;

	pthread_mutex_lock(&p->lock);
	for (unsigned n = 0; n < 2; n++) {
		memset(&chip[n], 0, sizeof(chip[n]));
		chip[n].elcr_mask = p->chip[n].elcr_mask;
	}
	pthread_mutex_unlock(&p->lock);
	for (unsigned n = 0; n < 2; n++)
		if (chip_load(&chip[n], n, r, err, errlen) < 0)
			return -1;
	pthread_mutex_lock(&p->lock);
	memcpy(p->chip, chip, sizeof(chip));
	changed = update_locked(p);
	unlock_and_notify(p, changed);
	return 0;
}
