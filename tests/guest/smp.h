/* smp.h — constants shared by smp.c and the AP trampoline (smp_tramp.S). */
#ifndef GUEST_SMP_H
#define GUEST_SMP_H

/* Where the trampoline is copied: page aligned below 1 MiB, the SIPI
 * vector is its page number. */
#define SMP_TRAMP_BASE 0x8000
#define SMP_MAX_CPUS 64
/* 4 KiB of stack per AP. */
#define SMP_AP_STACK_SHIFT 12

#endif /* GUEST_SMP_H */
