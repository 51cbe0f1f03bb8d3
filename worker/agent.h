/* agent.h: the worker's side of the distributed run. An agent connects a
 * DEALER socket to the coordinator, says HELLO with its capacity, receives
 * shards, fetches the bench files each shard needs by content hash into a
 * local cache (laid out as a bench folder, so nothing is shared with the
 * coordinator's file system and no file travels twice), runs up to `slots`
 * tasks at once, each through its slot's own executor on the slot's own
 * thread, starting them in the order it received them, and returns results. Every result
 * is spooled to disk before it is sent and dropped only on ACK; after a
 * reconnect (the coordinator went silent: back-off doubling from
 * reconnect_min_ms to reconnect_max_ms) or a restart the spool is sent again.
 * Every RESULT carries the attempt token of its ASSIGN task. With a result
 * cache, a task whose key is cached is not executed: its CSV is copied from
 * the cache and scored again, and its RESULT says "cached". A shard whose
 * files cannot be stored here (disk full) or stop coming (files_wait_ms) is
 * answered with infra_error at once, so the coordinator retries it
 * elsewhere instead of waiting. On RECALL the agent gives back (RELEASE)
 * every task of its shards that it has not handed to a slot, so an idle
 * worker can run them, but for the next one of each free slot (a slot is
 * free while its next task's files are on their way: another worker would
 * fetch them too, and with hundreds of workers every recall would move
 * every worker's tasks); those running finish and are reported as usual. A
 * task is not started while a slot still runs the same method, task and
 * sample (a dispatch of the coordinator's before a reconnect): the two would
 * share the attempt's topics and final CSV; it waits for that slot, and so do the
 * tasks after it, so the running ones stay the first the agent holds.
 *
 * The executor is a function pointer so tests can plug in a simulated one;
 * the real one wraps sx_executor_run. */
#ifndef SX_AGENT_H
#define SX_AGENT_H

#include "common/error.h"
#include "worker/exec/executor.h"

#include <czmq.h>
#include <stdbool.h>

/* Runs one task; same contract as sx_executor_run. Called on a slot's
 * thread with the slot's context, one task at a time per slot. */
typedef void(sx_agent_exec_fn)(void *slot_ctx, const sx_exec_request_t *request,
                               sx_result_t *result, sx_timings_t *timings);
/* Makes slot number `slot`'s context (its own executor) on the slot's
 * thread, which alone uses it and closes it; NULL with err set when it
 * cannot (the agent is not made). */
typedef void *(sx_agent_open_slot_fn)(void *ctx, int slot, sx_error_t *err);
typedef void(sx_agent_close_slot_fn)(void *slot_ctx);
/* Scores the final CSV already at request->csv_path (a result cache hit)
 * as the executor would have: fills status, score, strict, detail, csv. */
typedef void(sx_agent_score_fn)(void *ctx, const sx_exec_request_t *request,
                                sx_result_t *result);

typedef struct {
    const char *endpoint; /* coordinator, e.g. "tcp://10.0.0.5:5555" */
    const char *name;     /* worker name in results and logs */
    const char *runtime;  /* what the executor runs on, said in HELLO (the
                             coordinator's summary lists it per worker) */
    int capacity;         /* shards held at once (default 2: one running, one ready) */
    int slots;            /* tasks run at once (default 1; 1 to SX_PROTO_SLOTS_MAX) */
    const char *work_dir; /* cache/, bench/, spool/ and csv/ live here */
    sx_agent_exec_fn *exec;
    void *exec_ctx;
    /* Each slot's context: open_slot(exec_ctx, slot) on the slot's thread
     * before its first task, close_slot on it when the agent ends. Without
     * open_slot every slot runs exec on exec_ctx itself, which must then be
     * safe to use from several threads at once. */
    sx_agent_open_slot_fn *open_slot;
    sx_agent_close_slot_fn *close_slot;
    /* Called with the slot's context on the slot's thread once a task's
     * result went to the main thread: the task's cleanup, which the verdict
     * does not wait for. NULL: none. */
    void (*finish)(void *slot_ctx);
    /* The result cache (worker/resultcache.h): its folder (NULL = none), what
     * the executor is (its versions, part of every key) and how a cached CSV
     * is scored again (with exec_ctx). A hit never reaches exec. */
    const char *result_cache_dir;
    const char *result_cache_runtime;
    sx_agent_score_fn *score;
    int heartbeat_ms;      /* default 1000 */
    int dead_after_ms;     /* coordinator silent this long = gone (default 5000) */
    int reconnect_min_ms;  /* default 250 */
    int reconnect_max_ms;  /* default 8000 */
    int files_wait_ms;     /* a shard whose files stop coming (no file stored for this
                              long) is answered with infra_error (default 60000) */
    const char *cert_path; /* CURVE: this worker's certificate */
    const char *server_cert_path; /* CURVE: the coordinator's public certificate */
    bool insecure;                /* allow plain TCP to a non-loopback address */
} sx_agent_config_t;

typedef struct _sx_agent_t sx_agent_t;

sx_agent_t *sx_agent_new(const sx_agent_config_t *config, sx_error_t *err);
void sx_agent_destroy(sx_agent_t **self_p);

/* Works until the coordinator says the run is over (returns 0) or until
 * interrupted or a message arrives on `stop` (returns 1); -1 (err says why)
 * when it cannot reach the coordinator or the coordinator refused it (a
 * final GOODBYE "refused: ...", e.g. another engine than the run's). */
int sx_agent_run(sx_agent_t *self, zsock_t *stop, sx_error_t *err);

/* Tasks executed by this agent so far. */
size_t sx_agent_executed(const sx_agent_t *self);

/* No sx_agent_test here: the agent is tested by tests/unit/agent.c against a
 * fake coordinator and a throw-away bench, test code kept out of the program. */

#endif
