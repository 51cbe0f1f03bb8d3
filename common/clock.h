/* clock.h: durations and deadlines in seconds, on the monotonic clock.
 * CZMQ already gives the clock in milliseconds and microseconds
 * (zclock_mono, zclock_usecs) and the sleep (zclock_sleep); timings and
 * timeouts are kept in seconds as doubles (results.jsonl's steps, a task's
 * timeout_s), so this one helper says it once. */
#ifndef SX_CLOCK_H
#define SX_CLOCK_H

/* Seconds since an arbitrary start, never going backwards: only the
 * difference of two readings means anything. */
double sx_clock_seconds(void);

#endif
