/* exit_stats.h — counts of I/O and MMIO exits by address, to find where a
 * guest (SeaBIOS above all) spends its exits. Counting is one atomic add
 * in a fixed hash table, cheap next to the 15-45 us an exit costs here.
 * `info exits` prints the table; VMM_EXIT_STATS=1 prints it to stderr
 * when vmm exits. */
#ifndef VMM_EXIT_STATS_H
#define VMM_EXIT_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One port I/O exit of count accesses (> 1 for rep ins/outs). Any thread. */
void exit_stats_io(uint16_t port, bool is_write, uint32_t count);
/* One MMIO exit. Any thread. */
void exit_stats_mmio(uint64_t gpa, bool is_write);
/* The busiest addresses first, at most max_rows rows. */
void exit_stats_print(FILE *out, unsigned max_rows);
/* Register `info exits`, and the dump at exit when VMM_EXIT_STATS is set. */
void exit_stats_init(void);

#endif /* VMM_EXIT_STATS_H */
