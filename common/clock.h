/* clock.h: durations and deadlines in seconds, on the monotonic clock.
 * CZMQ already gives the clock in milliseconds and microseconds
 * (zclock_mono, zclock_usecs) and the sleep (zclock_sleep); timings and
 * timeouts are kept in seconds as doubles (results.jsonl's steps, a task's
 * timeout_s), so this one helper says it once. */
#ifndef SX_CLOCK_H
#define SX_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Seconds since an arbitrary start, never going backwards: only the
 * difference of two readings means anything. */
double sx_clock_seconds(void);

/* For a loop that comes round every period_ms or sooner, last_ms holding the
 * zclock_mono() of its previous call: how long it stood still beyond
 * period_ms since then (0 if it did not), and last_ms set to now. A peer's
 * silence counts only while we listen: a stopped process (SIGSTOP, a
 * suspended VM), a starved thread or a slow disk stops our loop, not the
 * peer, whose messages wait unread meanwhile. Only the part beyond the
 * period is excused, so a loop that is merely slow every time still lets a
 * dead peer's silence run out. */
int64_t sx_clock_stall_ms(int64_t *last_ms, int period_ms);

/* Whether a stall (sx_clock_stall_ms) is worth a warning: half the silence
 * after which a peer is taken for dead (dead_after_ms) or more, that is, it
 * came half way to losing a live peer. Shorter ones are routine. */
bool sx_clock_stall_is_long(int64_t stall_ms, int dead_after_ms);

void sx_clock_test(bool verbose);

#endif
