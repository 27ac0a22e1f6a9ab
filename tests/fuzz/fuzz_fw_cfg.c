/* fuzz_fw_cfg.c — fw_cfg's ports and DMA interface (fw_cfg.c): selector
 * and data port reads, and DMA descriptors (control bits, lengths,
 * addresses, SELECT/SKIP/READ/WRITE chains) written into guest RAM and
 * started through 0x514/0x518. Input: fuzz_dev.h's ops on 0x510-0x51b;
 * a fresh device with a few items and files per input. */
#include "devices/isa/fw_cfg.h"
#include "tests/fuzz/fuzz_dev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;
	static uint8_t blob[5000];
	struct fw_cfg *f;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		fuzz_dev_window(&d, false, 0x510, 12);
		for (size_t i = 0; i < sizeof(blob); i++)
			blob[i] = (uint8_t)(i * 7);
	}
	f = fw_cfg_new(&d.fake.host);
	fw_cfg_add_u64(f, FW_CFG_RAM_SIZE, FUZZ_RAM);
	fw_cfg_add_u16(f, FW_CFG_NB_CPUS, 2);
	fw_cfg_add(f, FW_CFG_UUID, "0123456789abcdef", 16);
	fw_cfg_add_file(f, "etc/e820", blob, 20 * 5);
	fw_cfg_add_file(f, "bootorder", "/pci@i0cf8/ide@1,1/drive@0/disk@0\n", 35);
	fw_cfg_add_file(f, "etc/big", blob, sizeof(blob));
	fw_cfg_add_file(f, "etc/empty", "", 0);
	fuzz_dev_run(&d, data, size);
	fw_cfg_free(f);
	return 0;
}
