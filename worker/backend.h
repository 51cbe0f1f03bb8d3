/* backend.h: the executor behind a worker's agent, the simulated one
 * (worker/simexec.h) or the real executor (worker/exec/executor.h) on a Kafka +
 * Flink pair (worker/pair/pair.h): pair `index` started here, or an external
 * one. Opening it points the agent's config at it: how a task runs, how many
 * at once (slots), what it runs on (for HELLO) and, when it has versions to
 * key on, the result cache and how a cached CSV is scored again. `streamex
 * worker` and `streamex run` open one per worker.
 *
 * Slots on a real pair: each of the agent's slots makes its own executor on
 * its own thread (its own Kafka and Gateway clients), all on the one pair;
 * the sweep of what an earlier run left runs once, here, before any slot
 * starts. A task's job takes one TaskManager slot (the session's
 * parallelism.default is 1), so N tasks at once need N free TaskManager
 * slots, or a job would wait for one inside its task's timeout: a pair
 * started here gets at least N, and a pair that has fewer (an external
 * one) caps the slots at what it has, saying so. */
#ifndef SX_BACKEND_H
#define SX_BACKEND_H

#include "common/error.h"
#include "common/ex/score.h"
#include "worker/agent.h"
#include "worker/exec/executor.h"
#include "worker/exec/replays.h"
#include "worker/pair/pair.h"
#include "worker/simexec.h"

#include <stdbool.h>

typedef struct {
    sx_profile_t profile;             /* how a cached CSV is scored again */
    sx_simexec_t *sim;                /* the simulated executor, or NULL */
    sx_pair_t *pair;                  /* the real executor's pair, or NULL */
    sx_executor_config_t exec_config; /* what each slot's executor is made from */
    sx_replays_t *replays;            /* the slots' shared source topics */
    char run_id[128];
    int slots;          /* tasks at once, as the agent was told */
    char versions[128]; /* the pair's, for the result cache's keys */
    char runtime[300];  /* what the pair runs, for HELLO (sx_pair_describe) */
} sx_backend_t;

typedef struct {
    const char *simulate; /* non-NULL: simulated */
    int index;            /* pair index for a local pair */
    const char *flink;    /* its engine (worker/pair/engine.h): NULL the default */
    const char *bootstrap, *gateway, *rest; /* external pair: all or none */
    sx_profile_t profile;
    const char *run_id;
    const char *cache_dir; /* the result cache, NULL = none */
    int slots;             /* tasks at once (0: 1) */
} sx_backend_config_t;

/* Opens the executor config asks for (starting a local pair and sweeping
 * what an earlier run left on it) and fills agent's exec, exec_ctx, slot
 * functions, slots, runtime and result cache members, which point into
 * backend: it must outlive the agent. On failure closes what it opened. */
int sx_backend_open(sx_backend_t *backend, const sx_backend_config_t *config,
                    sx_agent_config_t *agent, sx_error_t *err);
/* Closes the executor and stops a pair it started. */
void sx_backend_close(sx_backend_t *backend);

/* How many of `wanted` tasks at once the Flink at rest_url can run, one
 * TaskManager slot each, waiting up to wait_ms for slots a job that just
 * ended still holds; warns when it caps `wanted` and when other jobs hold
 * slots (an external cluster shared with others). -1 when Flink does not
 * say or has no slot. Used by sx_backend_open; `index` names the pair. */
int sx_backend_fit_slots(const char *rest_url, int wanted, int index, int wait_ms,
                         sx_error_t *err);

void sx_backend_test(bool verbose);

#endif
