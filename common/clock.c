/* clock.c: the monotonic clock in seconds (see clock.h). */
#include "common/clock.h"

#include <czmq.h>

double sx_clock_seconds(void)
{
    return (double)zclock_usecs() / 1e6;
}

int64_t sx_clock_stall_ms(int64_t *last_ms, int period_ms)
{
    int64_t now = zclock_mono();
    int64_t gap = now - *last_ms;
    *last_ms = now;
    return gap > period_ms ? gap - period_ms : 0;
}
