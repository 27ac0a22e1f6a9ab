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
/* Snapshot (state/state.h): the 128 CMOS bytes, the index register and the
 * guest clock as an offset from the host's UTC clock (hosts that migrate
 * share a clock), as node "rtc@70" under the writer's current node. */
struct state_writer;
struct state_reader;
void rtc_save(struct rtc *r, struct state_writer *w);
/* Load it from under rd: 0, or -1 with err and the RTC unchanged. The
 * timers are rearmed and IRQ 8 driven to the loaded flags. */
int rtc_load(struct rtc *r, const struct state_reader *rd, char *err, size_t errlen);

#endif /* VMM_DEVICES_TIMER_RTC_H */
