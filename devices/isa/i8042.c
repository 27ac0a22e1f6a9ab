/* i8042.c — just enough of the PS/2 keyboard controller for firmware and
 * kernels to probe it and to reset the machine through it: status and data
 * ports, the command byte, the self tests, and the reset line (command
 * 0xfe, or writing the output port with bit 0 clear). The keyboard
 * answers its commands (reset, identify, set scancode set, LEDs...) as a
 * PS/2 keyboard does, so firmware finds one and stops waiting, but no key
 * is ever pressed. Port 0x60 is the data port, 0x64 status (read) and
 * command (write): separate ops, since each port is its own region. */
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/i8042.h"
#include "state/state.h"

#define I8042_STATE_VERSION 1

#define I8042_DATA 0x60
#define I8042_CMD 0x64

#define STAT_OBF 0x01	 /* output buffer full */
#define STAT_SYS 0x04	 /* system flag: self test passed */
#define STAT_CMD 0x08	 /* last write was to the command port */
#define STAT_UNLOCK 0x10 /* keyboard not inhibited */

#define CMD_READ_CB 0x20
#define CMD_WRITE_CB 0x60
#define CMD_DISABLE_AUX 0xa7
#define CMD_ENABLE_AUX 0xa8
#define CMD_TEST_AUX 0xa9
#define CMD_SELF_TEST 0xaa
#define CMD_TEST_KBD 0xab
#define CMD_DISABLE_KBD 0xad
#define CMD_ENABLE_KBD 0xae
#define CMD_READ_OUTPORT 0xd0
#define CMD_WRITE_OUTPORT 0xd1
#define CMD_PULSE_RESET 0xfe

struct i8042 {
	pthread_mutex_t lock;
	struct dev_host *host;
	void (*reset_fn)(void *opaque);
	void *opaque;
	uint8_t status, cmd_byte, outport;
	/* Bytes for the guest to read at 0x60, oldest first; STAT_OBF is set
	 * while there is one. */
	uint8_t out[4];
	unsigned n_out;
	uint8_t pending_cmd; /* a command waiting for its data byte, or 0 */
	uint8_t kbd_pending; /* a keyboard command waiting for its argument */
};

static void put_output(struct i8042 *k, uint8_t v)
{
	if (k->n_out < sizeof(k->out))
		k->out[k->n_out++] = v;
	k->status |= STAT_OBF;
}

static uint8_t take_output(struct i8042 *k)
{
	uint8_t v = k->out[0];

	if (!k->n_out)
		return v; /* empty: the last byte again, as the latch would */
	for (unsigned i = 1; i < k->n_out; i++)
		k->out[i - 1] = k->out[i];
	if (--k->n_out == 0)
		k->status &= (uint8_t)~STAT_OBF;
	return v;
}

#define KBD_ACK 0xfa
#define KBD_SET_LEDS 0xed
#define KBD_SCANCODE_SET 0xf0
#define KBD_IDENTIFY 0xf2
#define KBD_TYPEMATIC 0xf3
#define KBD_RESET 0xff

/* A byte written to the keyboard (0x60 with no controller command
 * pending): the answers of an MF2 keyboard. */
static void keyboard_byte(struct i8042 *k, uint8_t v)
{
	if (k->kbd_pending) {
		k->kbd_pending = 0;
		put_output(k, KBD_ACK); /* the argument */
		return;
	}
	put_output(k, KBD_ACK);
	switch (v) {
	case KBD_RESET:
		put_output(k, 0xaa); /* self test passed */
		break;
	case KBD_IDENTIFY:
		put_output(k, 0xab);
		put_output(k, 0x83);
		break;
	case KBD_SET_LEDS:
	case KBD_SCANCODE_SET:
	case KBD_TYPEMATIC:
		k->kbd_pending = v;
		break;
	default:
		break;
	}
}

/* Returns whether the reset line was pulsed. */
static bool run_command(struct i8042 *k, uint8_t cmd)
{
	switch (cmd) {
	case CMD_READ_CB:
		put_output(k, k->cmd_byte);
		break;
	case CMD_WRITE_CB:
	case CMD_WRITE_OUTPORT:
		k->pending_cmd = cmd;
		break;
	case CMD_SELF_TEST:
		k->status |= STAT_SYS;
		put_output(k, 0x55);
		break;
	case CMD_TEST_KBD:
	case CMD_TEST_AUX:
		put_output(k, 0x00);
		break;
	case CMD_READ_OUTPORT:
		put_output(k, k->outport);
		break;
	case CMD_DISABLE_KBD:
		k->cmd_byte |= 0x10;
		break;
	case CMD_ENABLE_KBD:
		k->cmd_byte &= (uint8_t)~0x10;
		break;
	case CMD_DISABLE_AUX:
		k->cmd_byte |= 0x20;
		break;
	case CMD_ENABLE_AUX:
		k->cmd_byte &= (uint8_t)~0x20;
		break;
	case CMD_PULSE_RESET:
		return true;
	default:
		break; /* unimplemented commands are ignored */
	}
	return false;
}

static bool write_data(struct i8042 *k, uint8_t v)
{
	uint8_t cmd = k->pending_cmd;

	k->pending_cmd = 0;
	if (cmd == CMD_WRITE_CB) {
		k->cmd_byte = v;
	} else if (cmd == CMD_WRITE_OUTPORT) {
		k->outport = v;
		return !(v & 1); /* bit 0 is the CPU reset line, active low */
	} else {
		keyboard_byte(k, v);
	}
	return false;
}

static void data_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct i8042 *k = opaque;
	uint8_t v;

	pthread_mutex_lock(&k->lock);
	v = take_output(k);
	pthread_mutex_unlock(&k->lock);
	io_data_put(data, size, v);
}

static void status_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct i8042 *k = opaque;
	uint8_t v;

	pthread_mutex_lock(&k->lock);
	v = k->status;
	pthread_mutex_unlock(&k->lock);
	io_data_put(data, size, v);
}

/* One write to port 0x60 (is_cmd false) or 0x64. */
static void do_write(struct i8042 *k, bool is_cmd, const void *data, unsigned size)
{
	uint8_t v = (uint8_t)io_data_get(data, size);
	bool reset;

	pthread_mutex_lock(&k->lock);
	if (is_cmd) {
		k->status |= STAT_CMD;
		reset = run_command(k, v);
	} else {
		k->status &= (uint8_t)~STAT_CMD;
		reset = write_data(k, v);
	}
	pthread_mutex_unlock(&k->lock);
	if (reset)
		k->reset_fn(k->opaque);
}

static void data_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	do_write(opaque, false, data, size);
}

static void cmd_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	do_write(opaque, true, data, size);
}

static const struct io_ops data_ops = {data_read, data_write};
static const struct io_ops cmd_ops = {status_read, cmd_write};

static void i8042_reset(void *opaque)
{
	struct i8042 *k = opaque;

	pthread_mutex_lock(&k->lock);
	k->status = STAT_UNLOCK;
	k->cmd_byte = 0x45; /* keyboard interrupt, translation, system flag */
	k->outport = 0x03;  /* reset line high, A20 enabled */
	k->pending_cmd = 0;
	k->kbd_pending = 0;
	k->n_out = 0;
	pthread_mutex_unlock(&k->lock);
}

struct i8042 *i8042_new(struct dev_host *host, void (*reset_fn)(void *opaque), void *opaque)
{
	struct i8042 *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	pthread_mutex_init(&k->lock, NULL);
	k->host = host;
	k->reset_fn = reset_fn;
	k->opaque = opaque;
	i8042_reset(k);
	if (iobus_register(host->pio, I8042_DATA, 1, &data_ops, k, "i8042") < 0 ||
	    iobus_register(host->pio, I8042_CMD, 1, &cmd_ops, k, "i8042") < 0 ||
	    dev_on_reset(host, i8042_reset, k) < 0) {
		iobus_unregister(host->pio, I8042_DATA);
		iobus_unregister(host->pio, I8042_CMD);
		pthread_mutex_destroy(&k->lock);
		free(k);
		return NULL;
	}
	return k;
}

void i8042_save(struct i8042 *k, struct state_writer *w)
{
	pthread_mutex_lock(&k->lock);
	state_begin(w, "i8042@60", I8042_STATE_VERSION);
	state_put_u8(w, "status", k->status);
	state_put_u8(w, "command-byte", k->cmd_byte);
	state_put_u8(w, "output-port", k->outport);
	state_put_bytes(w, "output", k->out, sizeof(k->out));
	state_put_u32(w, "output-count", k->n_out);
	state_put_u8(w, "pending-command", k->pending_cmd);
	state_put_u8(w, "keyboard-pending", k->kbd_pending);
	state_end(w);
	pthread_mutex_unlock(&k->lock);
}

int i8042_load(struct i8042 *k, const struct state_reader *r, char *err, size_t errlen)
{
	struct i8042 v;
	struct state_node n;

	if (state_node_open(&n, r, "i8042@60", I8042_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u8(&n, "status", &v.status) < 0 ||
	    state_get_u8(&n, "command-byte", &v.cmd_byte) < 0 ||
	    state_get_u8(&n, "output-port", &v.outport) < 0 ||
	    state_get_bytes(&n, "output", v.out, sizeof(v.out)) < 0 ||
	    state_get_u32_max(&n, "output-count", sizeof(v.out), &v.n_out) < 0 ||
	    state_get_u8(&n, "pending-command", &v.pending_cmd) < 0 ||
	    state_get_u8(&n, "keyboard-pending", &v.kbd_pending) < 0)
		return -1;
	if (!!(v.status & STAT_OBF) != !!v.n_out)
		return state_node_fail(&n, "status output-full disagrees with output-count %u",
				       v.n_out);
	if (v.pending_cmd && v.pending_cmd != CMD_WRITE_CB && v.pending_cmd != CMD_WRITE_OUTPORT)
		return state_node_fail(&n, "pending-command %#x takes no data byte", v.pending_cmd);
	if (v.kbd_pending && v.kbd_pending != KBD_SET_LEDS && v.kbd_pending != KBD_SCANCODE_SET &&
	    v.kbd_pending != KBD_TYPEMATIC)
		return state_node_fail(&n, "keyboard-pending %#x takes no argument", v.kbd_pending);
	if (state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&k->lock);
	k->status = v.status;
	k->cmd_byte = v.cmd_byte;
	k->outport = v.outport;
	memcpy(k->out, v.out, sizeof(k->out));
	k->n_out = v.n_out;
	k->pending_cmd = v.pending_cmd;
	k->kbd_pending = v.kbd_pending;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

void i8042_free(struct i8042 *k)
{
	if (!k)
		return;
	iobus_unregister(k->host->pio, I8042_DATA);
	iobus_unregister(k->host->pio, I8042_CMD);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
