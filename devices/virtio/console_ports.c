/* console_ports.c — virtio-serial ports added and removed while the guest
 * runs (QMP device_add / device_del of a virtserialport or virtconsole,
 * what libvirt sends for `virsh attach-device` of a <channel>).
 *
 * The multiport control protocol (virtio spec 5.3.6.2) carries it: a new
 * port is announced with PORT_ADD once the driver is up (before that,
 * DEVICE_READY announces every present port, the new one included); the
 * driver answers PORT_READY and the device then names the port, as for a
 * port present from the start. A removed port is announced with
 * PORT_REMOVE: the driver unplugs /dev/vportNpM and drops the buffers it
 * had posted on the port's queues, so nothing of the port stays here. */
#include <stdio.h>
#include <string.h>

#include "devices/virtio/console_internal.h"
#include "devices/virtio/virtio.h"

int virtio_console_check_port(unsigned max_ports, const struct virtio_console_port_opts *p,
			      char *err, size_t errlen)
{
	if (p->id >= max_ports) {
		snprintf(err, errlen, "virtio-serial: port nr %u is not below max_ports %u", p->id,
			 max_ports);
		return -1;
	}
	if (p->name && strlen(p->name) > VIRTIO_CONSOLE_NAME_MAX) {
		snprintf(err, errlen, "virtio-serial: port name longer than %d bytes",
			 VIRTIO_CONSOLE_NAME_MAX);
		return -1;
	}
	return 0;
}

/* The driver has read the control queues' set-up: a PORT_ADD now reaches
 * it. One sent just before its DEVICE_READY is answered twice, which the
 * Linux driver takes (a port it already has gets PORT_READY again). */
static bool driver_up(struct virtio_console *vc)
{
	return virtio_pci_queue(vc->vp, CTRL_RXQ) != NULL;
}

int virtio_console_port_add(struct virtio_console *vc, const struct virtio_console_port_opts *o,
			    char *err, size_t errlen)
{
	struct console_port *p;

	if (virtio_console_check_port(vc->max_ports, o, err, errlen) < 0)
		return -1;
	virtio_pci_lock(vc->vp);
	p = &vc->port[o->id];
	if (p->present) {
		virtio_pci_unlock(vc->vp);
		snprintf(err, errlen, "virtio-serial: port nr %u is already in use", o->id);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	p->o = *o;
	p->present = true;
	/* Chains the driver posted on the queue while no port was there got
	 * no service and no re-armed doorbell: the I/O thread's retry serves
	 * them, as it does a stalled backend. */
	p->tx_stalled = true;
	if (driver_up(vc))
		console_queue_ctrl(vc, o->id, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
	virtio_pci_unlock(vc->vp);
	virtio_pci_wake(vc->vp);
	return 0;
}

int virtio_console_port_remove(struct virtio_console *vc, unsigned id)
{
	struct console_port *p;

	if (id >= vc->max_ports)
		return -1;
	virtio_pci_lock(vc->vp);
	p = &vc->port[id];
	if (!p->present) {
		virtio_pci_unlock(vc->vp);
		return -1;
	}
	/* Its backend goes with it: the guest's open port is not reported
	 * closed (QEMU sends no VSERPORT_CHANGE either). */
	p->present = false;
	p->guest_ready = p->guest_open = p->tx_stalled = false;
	p->rx_len = 0;
	if (driver_up(vc))
		console_queue_ctrl(vc, id, VIRTIO_CONSOLE_PORT_REMOVE, 1, NULL);
	virtio_pci_unlock(vc->vp);
	virtio_pci_wake(vc->vp);
	return 0;
}
