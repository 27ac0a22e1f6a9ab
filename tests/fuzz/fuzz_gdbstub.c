/* fuzz_gdbstub.c — the GDB remote protocol (vmm/control/gdbstub.c: packet framing,
 * acks and Ctrl-C, g/G/p/P registers, m/M memory, Z/z breakpoints, H/T
 * threads, vCont, q/Q queries, qXfer of the target description) on
 * fake_machine.h's machine. gdbstub.c is included for its static state and
 * receive_byte(); the debugger is a socketpair whose far end is drained.
 * Input: the bytes the debugger sends; a fresh connection per input. */
#include "vmm/control/gdbstub.c"

#include "tests/fuzz/fake_machine.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[65536];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		abort();
	gs.m = fake_machine();
	gs.fd = sv[0];
	gs.no_ack = false;
	gs.running = true;
	gs.g_cpu = gs.c_cpu = 0;
	gs.rx = IDLE;
	for (size_t i = 0; i < size && gs.fd >= 0; i++) {
		receive_byte((char)data[i]);
		if (data[i] == '#' || i + 1 == size)
			while (recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
	}
	if (gs.fd >= 0)
		close(gs.fd);
	gs.fd = -1;
	close(sv[1]);
	return 0;
}
