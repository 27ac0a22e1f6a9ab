/* exit-count.elf — writes to pci-testdev's counted port (its port I/O
 * BAR, test "portio-no-eventfd": one VM exit each, counted by the device)
 * until a byte arrives on the serial port, then the device's count
 * against the writes made. A VMM that saves a vCPU before KVM finished
 * its last OUT (KVM moves RIP past it only on the next KVM_RUN) has the
 * restored guest execute that OUT a second time: the device counts one
 * more than the guest wrote. */
#include "kit.h"
#include "virtio.h" /* the kit's PCI configuration access */

#define COM1_LSR 0x3fd
#define LSR_DATA_READY 0x01
#define TESTDEV_ID 0x00051b36u /* device 0005, vendor 1b36 */
#define PT_PORTIO_NO_EVENTFD 0
#define POLL_EVERY 1024

struct counted_port {
	uint16_t port;
	uint32_t data;
	uint16_t header;
};

__attribute__((noreturn)) static long count_loop(void *arg)
{
	const struct counted_port *p = arg;
	uint32_t writes = 0, counted;

	printf("exit-count: writing\n");
	while (!(inb(COM1_LSR) & LSR_DATA_READY))
		for (unsigned i = 0; i < POLL_EVERY; i++, writes++)
			outl(p->port, p->data);
	counted = inl((uint16_t)(p->header + 12));
	printf("exit-count: the device counted %u of %u writes\n", counted, writes);
	guest_exit(counted == writes ? 0 : 1);
}

int guest_main(void)
{
	static struct counted_port p;
	unsigned devfn;
	uint32_t bar;

	for (devfn = 8; devfn < 256; devfn += 8)
		if (pci_read32((uint8_t)devfn, 0) == TESTDEV_ID)
			break;
	if (devfn >= 256) {
		printf("exit-count: FAIL: no pci-testdev\n");
		return 1;
	}
	bar = pci_read32((uint8_t)devfn, 0x14);
	pci_write32((uint8_t)devfn, 0x04, pci_read32((uint8_t)devfn, 0x04) | 1); /* I/O decoding */
	p.header = (uint16_t)(bar & ~3u);
	outb(p.header, PT_PORTIO_NO_EVENTFD);
	if (inb((uint16_t)(p.header + 1)) != 4) {
		printf("exit-count: FAIL: pci-testdev at port %x has no 4-byte test\n", p.header);
		return 1;
	}
	p.port = (uint16_t)(p.header + inl((uint16_t)(p.header + 4)));
	p.data = inl((uint16_t)(p.header + 8));
	run_user(count_loop, &p);
	return 1; /* not reached */
}
