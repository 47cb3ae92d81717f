/* SPDX-License-Identifier: BSD-2-Clause */
/* clock.c: the one place the library reads a clock, for the explicitly
 * named *_now convenience forms; every other entry point takes the time as
 * an argument. */
#define _POSIX_C_SOURCE 199309L
#include <time.h>

#include "ebb/tlbf.h"

int64_t ebb_tlbf_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
