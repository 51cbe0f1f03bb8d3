/* clock.c: the monotonic clock in seconds (see clock.h). */
#include "common/clock.h"

#include "common/selftest.h"

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

bool sx_clock_stall_is_long(int64_t stall_ms, int dead_after_ms)
{
    return stall_ms >= dead_after_ms / 2;
}

/* ---- self-test ----------------------------------------------------------- */

/* A loop that came round within its period stood still for 0 ms; one whose
 * previous turn was period + 400 ms ago stood still for 400 ms or a little
 * more (the test's own time), and the next turn counts from now. The
 * warning's threshold is half the dead-after time, inclusive. */
void sx_clock_test(bool verbose)
{
    int64_t last = zclock_mono();
    SX_CHECK(sx_clock_stall_ms(&last, 60000) == 0);
    int64_t now = zclock_mono();
    last = now - 1000 - 400;
    int64_t stall = sx_clock_stall_ms(&last, 1000);
    SX_CHECK(stall >= 400 && stall < 60000 && last >= now);
    SX_CHECK(!sx_clock_stall_is_long(0, 6000));
    SX_CHECK(!sx_clock_stall_is_long(2999, 6000));
    SX_CHECK(sx_clock_stall_is_long(3000, 6000));
    SX_CHECK(sx_clock_stall_is_long(3001, 6000));
    if (verbose)
        fprintf(stderr, "sx_clock_test: a stall of %lld ms measured\n", (long long)stall);
}
