/* pc_cmos.c — the CMOS bytes SeaBIOS reads besides fw_cfg: memory sizes,
 * CPU count and the boot devices (0x3d, 0x38, as the Bochs BIOS defined
 * them). Kept apart from fw_cfg_content.c so fw_cfg users do not pull in
 * the RTC. */
#include "devices/timer/rtc.h"
#include "firmware/firmware.h"

#define DEFAULT_ORDER "cdn"

/* CMOS boot device codes (0x3d, 0x38) as the Bochs BIOS defined them. */
static unsigned cmos_code(char c)
{
	switch (c) {
	case 'c': return 2;
	case 'd': return 3;
	case 'n': return 4;
	default: return 0;
	}
}

void pc_cmos_setup(struct rtc *rtc, const struct pc_fw_config *c)
{
	const char *order = c->boot_order ? c->boot_order : DEFAULT_ORDER;
	unsigned dev[3] = {0, 0, 0};
	uint64_t below, above;

	pc_ram_split(c, &below, &above);
	rtc_set_pc_config(rtc, below, above, c->ncpus);
	for (unsigned i = 0; i < 3 && order[i]; i++)
		dev[i] = cmos_code(order[i]);
	rtc_cmos_set(rtc, 0x3d, (uint8_t)(dev[1] << 4 | dev[0]));
	/* bit 0: do not check the floppy boot signature */
	rtc_cmos_set(rtc, 0x38, (uint8_t)(dev[2] << 4 | 1));
}
