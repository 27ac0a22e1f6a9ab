/* vserial.h — virtio-serial-pci's ports joined to their chardevs, and the
 * VSERPORT_CHANGE event (vmm/vserial.c). */
#ifndef VMM_VSERIAL_H
#define VMM_VSERIAL_H

#include <stdbool.h>

struct machine;
struct chardev;
struct vmm_vserial;
struct virtio_console;

/* -device virtio-serial-pci, virtserialport, virtconsole: the devices,
 * their chardevs opened and started. 0, or -1 with err. */
int vmm_vserial_init(struct machine *m, char *err, size_t errlen);
void vmm_vserial_free(struct vmm_vserial *v);
/* Port i's chardev (NULL past the end or without one) and its label. */
struct chardev *vmm_vserial_chardev(struct vmm_vserial *v, unsigned i, const char **label);
/* The virtio-serial-pci device b (NULL past the last): snapshots. */
struct virtio_console *vmm_vserial_dev(struct vmm_vserial *v, unsigned b);
/* Whether the guest has port i open (query-chardev's frontend-open). */
bool vmm_vserial_port_open(struct vmm_vserial *v, unsigned i);

/* device_add of a virtserialport / virtconsole (driver) at run time
 * (props: what follows the name): 0, or -1 with err in QEMU's words.
 * device_del of the port with this id: 0 (DEVICE_DELETED sent), or
 * -ENOENT when no port has it. */
int vmm_vserial_device_add(struct machine *m, const char *driver, char *props, char *err,
			   size_t errlen);
int vmm_vserial_device_del(struct machine *m, const char *id);

#endif /* VMM_VSERIAL_H */
