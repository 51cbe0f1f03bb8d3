/* clock.c: the monotonic clock in seconds (see clock.h). */
#include "common/clock.h"

#include <czmq.h>

double sx_clock_seconds(void)
{
    return (double)zclock_usecs() / 1e6;
}
