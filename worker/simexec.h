/* simexec.h: a simulated executor for tests and dry runs of the distributed
 * machinery (`streamex worker --simulate SPEC`, `streamex run --simulate
 * SPEC`). It never touches Kafka or Flink: it sleeps, then "executes" a task
 * by copying its gold CSV as the final CSV (so file transfer is exercised)
 * and reports the verdict the candidate SQL asks for in a marker comment:
 *   /\*sim:STATUS*\/   that status on every attempt (e.g. sim:flink_error)
 *   /\*sim:flaky*\/    infra_error on attempt 1, match afterwards
 *   /\*sim:slow*\/     ten times the usual delay
 *   /\*sim:unstable*\/ match, with a final CSV that is gold and one row more,
 *                     another on every run (what --repeat must catch)
 * with no marker: match (missing prediction: missing_prediction). A
 * simulated task with a final CSV reports a changelog of one insert per
 * data row of that CSV (its "rows" the same), as an append sink would.
 * SPEC is comma-separated key=value: delay_ms=N (default 10),
 * engine=NAME (the engine it says it computes on: "simulated-NAME" rather
 * than "simulated", so that tests can mix engines), and
 * infra_error=ID (repeatable): task ID fails with infra_error on every
 * attempt whatever its SQL says, an infrastructure failure injected from
 * outside the prediction (its verdict's inputs stay the same, as for a real
 * broker outage: what `--rerun infra_error` is for). A CSV it wrote is
 * scored again (a result cache hit) as it scored it: match, or mismatch for
 * a candidate marked sim:mismatch. One simulated executor serves every slot
 * of a worker at once (its calls are thread-safe); it counts the tasks it
 * ran at the same time, and logs the most when destroyed ("at most K at
 * once"), which is how tests see that slots overlap without a clock. */
#ifndef SX_SIMEXEC_H
#define SX_SIMEXEC_H

#include "common/error.h"
#include "worker/exec/executor.h"

#include <stdbool.h>

typedef struct _sx_simexec_t sx_simexec_t;

sx_simexec_t *sx_simexec_new(const char *spec, sx_error_t *err);
void sx_simexec_destroy(sx_simexec_t **self_p);
/* The sx_agent_exec_fn of a simulated executor (ctx is an sx_simexec_t). */
void sx_simexec_run(void *ctx, const sx_exec_request_t *request, sx_result_t *result,
                    sx_timings_t *timings);

/* The sx_agent_score_fn of a simulated executor (ctx is an sx_simexec_t). */
void sx_simexec_score(void *ctx, const sx_exec_request_t *request, sx_result_t *result);

/* The engine its results are computed on: "simulated" or "simulated-NAME". */
const char *sx_simexec_engine(const sx_simexec_t *self);

/* The most tasks sx_simexec_run had in hand at the same moment so far. */
int sx_simexec_most_at_once(const sx_simexec_t *self);

void sx_simexec_test(bool verbose);

#endif
