/* coordinator.h: the distributed run (docs/outputs.md, docs/cluster.md). The coordinator
 * loads the bench and every method's predictions, splits the (method, task,
 * sample) units into shards and hands them over a ROUTER socket to workers that ask
 * for them (credit: a worker never holds more shards than the capacity it
 * announced). It serves the bench files a shard needs by content hash,
 * journals every settled result before acknowledging it, and writes
 * OUT/NAME/{csv,results.jsonl,submission.jsonl} and OUT/summary.json when
 * every pair is settled.
 *
 * Reliability in the style of the zguide's Paranoid Pirate: heartbeats both
 * ways; a worker silent for dead_after_ms is dead and its unsettled tasks go
 * back to the queue; every dispatch carries an attempt token and has a
 * deadline (the task's timeout_s for it and every unit queued before it on
 * that worker, plus attempt_grace_ms); infra_error is retried until
 * retry_budget attempts, on a worker it has not failed on when one is
 * connected, else on the same one after dead_after_ms; any other verdict is
 * final. Attempts are spent by what a task did (infra_error, its worker lost
 * while running it, its deadline missed), never by a repeated HELLO or a
 * reconnect (the units such a session lets go do not go back to it while
 * another worker is connected). A worker's unstarted units go to an idle
 * worker: once the queue is empty and a worker has a free slot (it holds
 * fewer units than it runs at once), the coordinator sends a RECALL to each
 * worker holding units the idle one would take, and requeues, without
 * spending an attempt, the units the RELEASE answer lists that the worker
 * still holds under those tokens (at most one RECALL outstanding per
 * worker). A RESULT is applied only when it answers the current token of a
 * unit its sender holds; any other is logged, acknowledged and dropped.
 * Bench files are served only to a worker holding a shard that needs them.
 *
 * Storage failures stop the run: when a CSV or journal record cannot be
 * written, sx_coordinator_run returns 1 with the error (the journal stays a
 * valid prefix, --resume completes the run later). The journal keeps a
 * fingerprint of each verdict's inputs (candidate SQL, task files, profile,
 * version): --resume re-executes the units whose inputs changed, and with
 * `rerun` also the settled units of the statuses it names (their journal
 * records stay: the last record of a unit for its current inputs holds).
 *
 * `tasks` narrows the run to an explicit subset of task IDs (--tasks): every
 * output then counts that subset, and summary.json says so.
 *
 * Several samples per task (common/sample.h): a method whose predictions
 * reach sample n - 1 has n units per task, each executed, journaled, retried
 * and resumed on its own; sample K > 0's final CSV is
 * OUT/NAME/samples/K/csv/ID.csv. --repeat is refused with several samples. */
#ifndef SX_COORDINATOR_H
#define SX_COORDINATOR_H

#include "common/error.h"
#include "common/ex/score.h"
#include "common/results/figures.h"
#include "common/status.h"

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *bench_dir;
    const char *const *method_names;     /* method_count names ... */
    const char *const *prediction_files; /* ... and their predictions files */
    size_t method_count;
    const char *out_dir;
    const char *endpoint;  /* where the ROUTER binds, e.g. tcp://HOST:PORT */
    size_t shard_size;     /* tasks per shard (default 4) */
    int heartbeat_ms;      /* default 1000 */
    int dead_after_ms;     /* default 5000 */
    int retry_budget;      /* attempts for infra_error (default 3) */
    int attempt_grace_ms;  /* added to an attempt's deadline (default 60000) */
    sx_profile_t profile;  /* the workers' comparison profile, for the fingerprint */
    bool resume;           /* continue from OUT/journal.jsonl */
    size_t subset_index;   /* --shard I/N: only tasks whose position % N == I */
    size_t subset_count;   /* 0 = every task */
    const char *cert_path; /* CURVE: the coordinator's certificate (czmq format) */
    const char *allow_dir; /* CURVE: public certificates of allowed workers */
    bool insecure;         /* allow plain TCP on a non-loopback address */
    /* A run computes every verdict on one engine (a mixed EX describes no
     * engine): a worker whose HELLO names another engine (the first word of
     * its runtime) than a connected worker's or a settled result's is
     * refused before any task goes to it, with a final GOODBYE whose reason
     * starts "refused: ", unless this is set (--allow-mixed-engines). */
    bool allow_mixed_engines;

    /* --tasks: only these task IDs (task_count of them; 0 = no --tasks). */
    const char *const *tasks;
    size_t task_count;
    /* --rerun: settled units of these statuses run again (needs resume). */
    bool rerun[SX_STATUS_COUNT];
    /* --repeat N (0 or 1: once): once every unit is settled, each one whose
     * run gave a final CSV runs again, N - 1 more rounds, preferably on
     * another worker than its last run's and never from a result cache.
     * A round's CSV that is another relation than the first run's (order
     * counting only where the evaluation says so) is kept beside it as
     * OUT/NAME/csv/ID.runK.csv and the task is "stable": false; a round
     * that ends without a CSV (timeout, flink_error) counts as a difference,
     * an infra_error as none. Verdicts, the journal and the figures are the
     * first run's; repeats are not journaled (a --resume repeats again). */
    int repeat;
    /* --max-samples: sample numbers must be below it (0: SX_SAMPLES_DEFAULT). */
    int max_samples;

    /* Called about every progress_ms with a JSON line describing the run
     * (see sx_coordinator_status_json); NULL = no progress. */
    void (*progress)(const char *json, void *arg);
    void *progress_arg;
    int progress_ms;
    /* What summary.json's "run" calls the command ("run"; NULL: "coordinator"). */
    const char *command;
    /* Where the final "NAME: EX = ..." lines go (NULL = nowhere). */
    FILE *summary_out;
    /* summary.json's intervals (--bootstrap, --seed; {0}: none). */
    sx_bootstrap_t bootstrap;
} sx_coordinator_config_t;

typedef struct _sx_coordinator_t sx_coordinator_t;

/* Loads everything, replays the journal when resuming and binds. */
sx_coordinator_t *sx_coordinator_new(const sx_coordinator_config_t *config,
                                     sx_error_t *err);
void sx_coordinator_destroy(sx_coordinator_t **self_p);

/* The endpoint actually bound (a port of '*' resolved), for local workers. */
const char *sx_coordinator_endpoint(const sx_coordinator_t *self);

/* Serves workers until every pair is settled (writes the outputs, says a
 * final goodbye, returns 0), or until interrupted (Ctrl-C), a message on
 * `stop`, or a result that cannot be stored (returns 1, with err set in the
 * last case; the journal keeps what was settled). -1 on a fatal error. */
int sx_coordinator_run(sx_coordinator_t *self, zsock_t *stop, sx_error_t *err);

/* Tasks settled so far, those replayed from the journal included. */
size_t sx_coordinator_settled(const sx_coordinator_t *self);
/* Settled units whose final status is infra_error (every method). */
size_t sx_coordinator_infra_errors(const sx_coordinator_t *self);

/* {"done", "total", "correct", "failures", "cached", "ex", "elapsed_s", "eta_s",
 *  "workers": [{"name", "shards", "done", "state"}]} as a heap string. */
char *sx_coordinator_status_json(sx_coordinator_t *self);

/* No sx_coordinator_test here: the coordinator is tested by
 * tests/unit/coordinator.c against fake workers and a throw-away bench,
 * which are test code and stay out of the program. */

#endif
