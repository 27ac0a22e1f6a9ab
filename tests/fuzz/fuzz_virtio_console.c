/* fuzz_virtio_console.c — virtio-serial's control messages (devices/
 * virtio/console.c) as the driver sends them on the control transmit
 * queue, each record one message, into a device with a console at port 0
 * and named ports 1 and 3 of max_ports 4. The first byte of a record
 * steers the host side before the message: bit 0 connects or disconnects
 * port 1's host end, bit 1 lets the driver take the outbox. Whatever the
 * messages, the outbox stays in bounds, each answer is a header plus at
 * most a name, and only existing ports open. console.c is included for
 * its static parser; no transport is needed for it. */
#include "devices/virtio/console.c"
#include "tests/fuzz/fuzz.h"

static unsigned opens;

static void count_open(void *opaque, bool open)
{
	opens += open;
}

static void check(const struct virtio_console *vc)
{
	if (vc->ob_count > OUTBOX_SIZE || vc->ob_head >= OUTBOX_SIZE)
		abort();
	for (unsigned i = 0; i < vc->ob_count; i++) {
		const struct ctrl_msg *m = &vc->outbox[(vc->ob_head + i) % OUTBOX_SIZE];

		if (m->len < CTRL_HDR || m->len > sizeof(m->data))
			abort();
	}
	for (unsigned i = 0; i < VIRTIO_CONSOLE_MAX_PORTS; i++)
		if (vc->port[i].guest_open && !vc->port[i].present)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct virtio_console vc;
	static const char *const names[4] = {NULL, "org.qemu.guest_agent.0", NULL, "org.test.0"};
	const uint8_t *rec;
	size_t len;

	memset(&vc, 0, sizeof(vc));
	vc.max_ports = 4;
	for (unsigned i = 0; i < 4; i++) {
		if (i == 2)
			continue;
		vc.port[i].present = true;
		vc.port[i].o = (struct virtio_console_port_opts){
			.id = i, .name = names[i], .console = i == 0, .guest_open = count_open};
	}
	while (fuzz_next_record(&data, &size, &rec, &len)) {
		const char *why = NULL;

		if (len && (rec[0] & 1)) { /* the host end of port 1 comes or goes */
			struct console_port *p = &vc.port[1];

			p->host_open = !p->host_open;
			if (p->guest_ready)
				console_queue_ctrl(&vc, 1, VIRTIO_CONSOLE_PORT_OPEN, p->host_open,
						   NULL);
		}
		if (len && (rec[0] & 2)) /* the driver takes what was queued */
			vc.ob_head = vc.ob_count = 0;
		if (len && ctrl_message(&vc, rec + 1, len - 1, &why) < 0 && !why)
			abort(); /* a refusal always says why */
		check(&vc);
	}
	return 0;
}
