/* fuzz_qmp.c — QMP's protocol side (vmm/control/qmp.c: framing of JSON values
 * arriving in pieces, resynchronising after garbage, capability
 * negotiation, the request object's members) and its command table
 * (vmm/control/qmp_commands.c, human-monitor-command into vmm/control/monitor.c,
 * getfd/closefd in vmm/control/qmp_fds.c) on
 * fake_machine.h's machine. qmp.c is included for its static client code;
 * a client is a socketpair whose far end is drained. Input: records
 * (fuzz.h), each a piece of the byte stream as one read() returns it; a
 * fresh client per input. */
#include "vmm/control/qmp.c"

#include "tests/fuzz/fake_machine.h"
#include "tests/fuzz/fuzz.h"
#include "vmm/migration.h"

static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct qmp_server srv = {.listen_fd = -1};
	const uint8_t *rec;
	size_t len;
	int sv[2];

	if (!srv.m) {
		srv.m = fake_machine();
		qmp_commands_init(srv.m);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		abort();
	add_client(&srv, sv[0], sv[0]);
	while (srv.clients && !srv.clients->dead && fuzz_next_record(&data, &size, &rec, &len)) {
		receive(srv.clients, (const char *)rec, len);
		drain(sv[1]);
	}
	if (srv.clients)
		drop_client(srv.clients);
	sweep(&srv);
	close(sv[1]);
	return 0;
}

/* What qmp_commands.c takes from files the fake machine does not link
 * (qmp_libvirt.c, qmp_migration.c, cli_libvirt.c, chardev.c, net.c):
 * nothing to report. */
const struct qmp_command qmp_libvirt_commands[] = {{NULL, NULL, NULL}};
const struct qmp_command qmp_migration_commands[] = {{NULL, NULL, NULL}};

const struct migration_status *migration_status(void)
{
	static const struct migration_status none;

	return &none;
}

void qmp_virtio_block_info(struct machine *m, json_t *list)
{
}

void cli_uuid_string(const struct vmm_config *cfg, char out[37])
{
	snprintf(out, 37, "00000000-0000-0000-0000-000000000000");
}

const char *chardev_pty_path(const struct chardev *c)
{
	return NULL;
}

void chardev_describe(const struct chardev *c, char *buf, size_t len)
{
	snprintf(buf, len, "null");
}

int machine_set_link(struct machine *m, const char *name, bool up)
{
	return -ENOENT;
}
