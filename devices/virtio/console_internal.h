/* console_internal.h — virtio-serial's state, shared by console.c (the
 * queues, snapshots) and console_ports.c (ports added and removed while
 * the guest runs). Not for other devices. */
#ifndef DEVICES_VIRTIO_CONSOLE_INTERNAL_H
#define DEVICES_VIRTIO_CONSOLE_INTERNAL_H

#include "devices/virtio/virtio.h"

#define CONSOLE_QUEUE_SIZE 128
#define CTRL_RXQ 2
#define CTRL_TXQ 3
#define CTRL_HDR 8 /* struct virtio_console_control */
#define OUTBOX_SIZE 64
#define RX_BUF 4096   /* host bytes waiting for a receive buffer, per port */
#define TX_RETRY_MS 2 /* a backend that took part of a chain: try again */

struct ctrl_msg {
	uint16_t len;
	uint8_t data[CTRL_HDR + VIRTIO_CONSOLE_NAME_MAX];
};

struct console_port {
	struct virtio_console_port_opts o;
	bool present;
	bool guest_ready;      /* PORT_READY 1 received */
	bool guest_open;       /* PORT_OPEN 1 received (a program has the port) */
	bool host_open;	       /* the backend is connected */
	bool host_waiting;     /* can_receive said 0: call rx_ready when room */
	bool tx_stalled;       /* the backend took part of the head chain */
	uint32_t tx_off;       /* bytes of the head transmit chain already taken */
	uint64_t st_rx, st_tx; /* bytes to / from the guest */
	size_t rx_len;
	uint8_t rx[RX_BUF];
};

struct virtio_console {
	struct virtio_pci *vp;
	struct virtio_dev_ops ops;
	struct virtio_console_config cfg; /* little-endian, read by the guest */
	unsigned max_ports;
	struct console_port port[VIRTIO_CONSOLE_MAX_PORTS];
	struct ctrl_msg outbox[OUTBOX_SIZE];
	unsigned ob_head, ob_count;
	struct virtio_console_stats st;
	struct virtq_chain chain; /* the I/O thread's */
};

/* Queue a control message to the driver (transport lock held); name is
 * PORT_NAME's, else NULL. A full outbox counts it as dropped. */
void console_queue_ctrl(struct virtio_console *vc, uint32_t id, uint16_t event, uint16_t value,
			const char *name);

#endif /* DEVICES_VIRTIO_CONSOLE_INTERNAL_H */
