/* rtc.h — the MC146818 CMOS RTC. */
#ifndef VMM_DEVICES_TIMER_RTC_H
#define VMM_DEVICES_TIMER_RTC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* MC146818 CMOS RTC at 0x70/0x71, IRQ 8. */
#define RTC_IRQ 8
struct rtc;
struct rtc *rtc_new(struct dev_host *host);
/* Called on the main thread when an enabled (AIE) alarm fires: the ACPI
 * wake source for S3. */
void rtc_set_alarm_fn(struct rtc *r, void (*fn)(void *opaque), void *opaque);
void rtc_free(struct rtc *r);
void rtc_cmos_set(struct rtc *r, unsigned index, uint8_t val);
uint8_t rtc_cmos_get(struct rtc *r, unsigned index);
/* The CMOS bytes firmware without fw_cfg reads: base/extended memory,
 * memory above 16 MiB and 4 GiB, CPU count. */
void rtc_set_pc_config(struct rtc *r, uint64_t ram_below_4g, uint64_t ram_above_4g,
		       unsigned ncpus);

#endif /* VMM_DEVICES_TIMER_RTC_H */
