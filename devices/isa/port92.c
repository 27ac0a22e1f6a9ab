/* port92.c — system control port A (0x92) of the PC/AT chipset: bit 1
 * gates A20 ("fast A20"), a 0 -> 1 edge of bit 0 resets the CPU. The A20
 * gate is kept as written, but memory always behaves as if A20 were on
 * (KVM has no A20 mask; SeaBIOS and Linux only ever turn it on). */
#include <stdlib.h>

#include "devices/dev_host.h"
#include "devices/isa/port92.h"
#include "state/state.h"

#define PORT92_STATE_VERSION 1

#define PORT92 0x92
#define PORT92_RESET 0x01
#define PORT92_A20 0x02

struct port92 {
	pthread_mutex_t lock;
	struct dev_host *host;
	void (*reset_fn)(void *opaque);
	void *opaque;
	uint8_t value;
};

static void port92_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct port92 *p = opaque;
	uint8_t v;

	pthread_mutex_lock(&p->lock);
	v = p->value;
	pthread_mutex_unlock(&p->lock);
	io_data_put(data, size, v);
}

static void port92_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct port92 *p = opaque;
	uint8_t v = (uint8_t)io_data_get(data, 1);
	bool reset;

	pthread_mutex_lock(&p->lock);
	reset = (v & PORT92_RESET) && !(p->value & PORT92_RESET);
	p->value = v & (PORT92_RESET | PORT92_A20);
	pthread_mutex_unlock(&p->lock);
	if (reset)
		p->reset_fn(p->opaque);
}

static const struct io_ops port92_ops = {port92_read, port92_write};

static void port92_reset(void *opaque)
{
	struct port92 *p = opaque;

	pthread_mutex_lock(&p->lock);
	p->value = PORT92_A20; /* SeaBIOS and QEMU start with A20 enabled */
	pthread_mutex_unlock(&p->lock);
}

struct port92 *port92_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque)
{
	struct port92 *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->host = host;
	p->reset_fn = reset_fn;
	p->opaque = opaque;
	port92_reset(p);
	if (iobus_register(host->pio, PORT92, 1, &port92_ops, p, "port92") < 0) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	if (dev_on_reset(host, port92_reset, p) < 0) {
		iobus_unregister(host->pio, PORT92);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

void port92_save(struct port92 *p, struct state_writer *w)
{
	pthread_mutex_lock(&p->lock);
	state_begin(w, "port92@92", PORT92_STATE_VERSION);
	state_put_u8(w, "value", p->value);
	state_end(w);
	pthread_mutex_unlock(&p->lock);
}

int port92_load(struct port92 *p, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;
	uint8_t v;

	if (state_node_open(&n, r, "port92@92", PORT92_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u8_max(&n, "value", PORT92_RESET | PORT92_A20, &v) < 0 ||
	    state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&p->lock);
	p->value = v;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void port92_free(struct port92 *p)
{
	if (!p)
		return;
	iobus_unregister(p->host->pio, PORT92);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
