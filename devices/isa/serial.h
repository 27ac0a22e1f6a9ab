/* serial.h — the 16550A UART and the byte-stream interface it writes to. */
#ifndef VMM_DEVICES_ISA_SERIAL_H
#define VMM_DEVICES_ISA_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* Where a device's byte stream goes and how it asks for more input. The
 * machine connects it to a chardev (stdio, file, socket, mux). */
struct char_backend {
	/* Bytes the guest sent; called on vCPU threads, must not block long. */
	void (*write)(void *opaque, const uint8_t *buf, size_t len);
	/* The device has room for input again (called with no device lock held). */
	void (*rx_ready)(void *opaque);
	void *opaque;
};

/* 16550A UART: 16-byte FIFOs, interrupts on `irq`, loopback, scratch. */
#define SERIAL_COM1_BASE 0x3f8
#define SERIAL_COM1_IRQ 4
struct serial;
struct serial *serial_new(struct dev_host *host, uint16_t base, unsigned irq,
			  const struct char_backend *be);
void serial_free(struct serial *s);
/* Host input: queues what fits in the receive FIFO, returns bytes taken. */
size_t serial_receive(struct serial *s, const uint8_t *buf, size_t len);
/* Room left in the receive FIFO. */
size_t serial_can_receive(struct serial *s);
/* Snapshot (state/state.h): the registers, the receive FIFO and the THRE
 * latch as node "serial@BASE" (hex) under the writer's current node. */
struct state_writer;
struct state_reader;
void serial_save(struct serial *s, struct state_writer *w);
/* Load that node from under r: 0, or -1 with err and the UART unchanged.
 * The interrupt line is driven to the loaded state. */
int serial_load(struct serial *s, const struct state_reader *r, char *err, size_t errlen);

#endif /* VMM_DEVICES_ISA_SERIAL_H */
