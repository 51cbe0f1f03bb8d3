/* coordinator_int.h: what the files of the coordinator share, and nothing
 * outside coordinator/ includes. The coordinator shards (method, task, sample) units
 * over a ROUTER socket to workers and settles their results (see coordinator.h). The
 * pieces: `unit_t` is one (method, task, sample) with its attempts and final result;
 * `shard_t` is a batch of units held by one worker; `worker_t` is one connected worker
 * (one routing id) with its credit and heartbeat deadline. The loop polls the socket,
 * applies each message, expires silent workers and overdue attempts, and dispatches
 * queued units to workers with free credit, those with the most free slots first. A
 * worker runs up to `slots` units at once (its HELLO says how many), the first ones it
 * holds, in order. When the queue is empty and a worker has a free slot, a worker holding
 * units it has not started is sent a RECALL; its RELEASE gives them back unspent (a
 * worker holds shards of several units but runs only `slots` at a time, so without this
 * the last units of a run wait behind slow tasks while another worker could run them).
 *
 * Safety does not depend on timing: a unit is in exactly one state (queued,
 * held by one shard of one worker under one attempt token, settling, or
 * settled), and every change goes through coord_enqueue / coord_end_attempt /
 * coord_settle / coord_commit (units.c). The loop takes every message waiting
 * at once and commits the results among them together: one fsync of the
 * journal for all of them, after which they count and are acknowledged. A
 * RESULT counts only when it answers the current token of a unit its sender holds; any
 * other RESULT is logged and dropped without touching state. A RELEASE takes
 * back only units its sender holds under the tokens it names; the units a
 * worker keeps are still the ones it runs next, in order. */
#ifndef SX_COORDINATOR_INT_H
#define SX_COORDINATOR_INT_H

#include "common/bench/bench.h"
#include "common/bench/predictions.h"
#include "common/files.h"
#include "common/results/result.h"
#include "coordinator/coordinator.h"
#include "coordinator/journal.h"
#include "proto/proto.h"

#include <czmq.h>
#include <stdio.h>

typedef struct _shard_t shard_t;
typedef struct _worker_t worker_t;

/* UNIT_SETTLING: its result is in the batch of the loop's next commit
 * (coord_commit), not yet durable: held by nobody, neither counted nor
 * acknowledged. */
typedef enum {
    UNIT_NEW,
    UNIT_QUEUED,
    UNIT_HELD,
    UNIT_SETTLING,
    UNIT_SETTLED
} unit_state_t;

typedef struct {
    size_t method;       /* index into methods */
    const char *task_id; /* owned by the bench */
    int sample;          /* which candidate of the task */
    const char *sql;     /* owned by the predictions; NULL = missing */
    int attempts;        /* spent: infra_error, its worker lost, its deadline missed */
    int timeout_s;       /* the task's, read at its first dispatch */
    bool stale;          /* the journal holds a verdict for other inputs */
    unit_state_t state;
    uint64_t token;     /* the current dispatch, while held */
    int64_t deadline;   /* when the current dispatch is given up, while held */
    sx_result_t result; /* when settled */
    zlist_t *failed_on; /* names of the workers that spent one of its attempts */
    int64_t retry_at;   /* not back to one of those before this */
    char *dropped_by;   /* routing id of the session that let it go unspent */
    char *ran_on;       /* --repeat: the worker of its previous round */
    bool given_back;    /* queued after a RELEASE: it goes only to a worker with a
                           free slot, where it starts at once (coord_dispatch) */
    shard_t *shard;     /* the shard holding it, while held */
    int64_t running_ms; /* when the loop first saw it among its worker's running
                           units (coord_note_running), 0 while it is not */
} unit_t;

struct _shard_t {
    uint64_t id;
    worker_t *worker;
    zlist_t *units; /* unit_t*, unsettled ones still held */
};

struct _worker_t {
    char *key; /* routing id in hex */
    zframe_t *routing_id;
    char *name;
    char *runtime; /* what it executes on, as its HELLO said */
    char *engine;  /* the engine its results are computed on: runtime's first word */
    int capacity;
    int slots;       /* units it runs at once: the first `slots` it holds */
    zlist_t *shards; /* shard_t* */
    size_t held;     /* units it holds, over all its shards */
    void *credited;  /* its handle in the coordinator's `credited`, while it
                        has credit (coord_credit_changed) */
    int64_t expires_at;
    int64_t last_sent;
    int64_t pending_ms; /* timeouts of the units it holds, summed */
    size_t done;
    size_t dropped; /* results (and released tasks) that answered no current
                       attempt of its units */
    bool recalled;  /* a RECALL is out, its RELEASE not in yet */
};

typedef struct {
    char *name;
    sx_predictions_t *predictions;
    int samples;           /* n: units per task */
    bool *csv_folder_made; /* per sample: its csv/ folder exists, made at its
                              first CSV */
} method_t;

/* A bench file a task needs, relative to BENCH. */
typedef struct {
    char *path;
    char hash[41];
    uint64_t size;
} manifest_file_t;

struct _sx_coordinator_t {
    sx_coordinator_config_t config;
    char *out_dir; /* absolute */
    char *endpoint;
    sx_bench_t *bench;
    method_t *methods;
    size_t method_count;
    unit_t *units;        /* method by method: the order of results.jsonl */
    unit_t **queue_order; /* the units task by task: the order they are queued
                             in, so that a shard holds one task's units and
                             its files and sources go to one worker */
    size_t unit_count;
    zhashx_t *unit_index;     /* coord_unit_key -> unit_t* */
    zlist_t *queue;           /* unit_t* waiting for a worker */
    size_t queued_given_back; /* of them, given back by a RELEASE */
    zhashx_t *workers;        /* key -> worker_t* */
    zhashx_t *engines;        /* engine -> how many connected workers and settling
                                 or settled results hold it (coord_engine_count):
                                 a HELLO's engine is checked without a scan */
    zhashx_t *names;          /* name -> worker_t*, its connected session */
    zlistx_t *credited;       /* worker_t* that have credit: what dispatch looks at */
    zhashx_t *manifests;      /* task_id -> zlistx of manifest_file_t* */
    zhashx_t *timeouts;       /* task_id -> its timeout_s, as a pointer-sized integer */
    zhashx_t *files;          /* hash -> path relative to BENCH */
    zhashx_t *file_bytes;     /* hash -> zchunk_t*, the files read (coord_file_bytes) */
    size_t file_bytes_kept;
    zhashx_t *runtimes; /* worker name -> its runtime, for the workers whose
                           results counted (summary.json's run.workers) */
    sx_journal_t *journal;
    /* The group commit: the units settling this turn of the loop, their
     * CSVs, and the acknowledgements (held_ack_t*, in arrival order) that
     * wait for the commit making them durable. */
    unit_t **settling;
    size_t settling_count, settling_cap;
    sx_file_batch_t *csvs;
    zlist_t *acks;
    zsock_t *router;
    zactor_t *auth;
    uint64_t next_shard_id;
    uint64_t next_token; /* starts at a random value: tokens of another run never match */
    sx_error_t fatal;    /* set when a result cannot be made durable: the run stops */
    size_t settled, correct, failures, settled_at_start;
    size_t cached;     /* settled results a worker's result cache served */
    size_t sessions;   /* HELLOs taken: worker sessions of this run */
    size_t files_sent; /* FILE messages, and their bench file bytes */
    uint64_t file_bytes_sent;
    int round;         /* --repeat: the round running, from 1 */
    size_t not_in_run; /* journal records of units outside this run (--tasks, --shard) */
    size_t run_tasks;  /* task IDs in this run (a --tasks or --shard subset, or all) */
    int64_t started_ms;
    double executed_seconds; /* summed over the units a worker executed this run */
    size_t executed;         /* and their count: the ETA's usual time a task */
    int64_t loop_at;         /* when the loop last came round (sx_clock_stall_ms) */
    int64_t next_deadline;   /* no held unit's deadline comes before this */
    int64_t next_beat_scan;  /* when every worker's silence and beat is looked at */
    bool rebalance;          /* what workers hold changed since the last look for
                                an idle worker (coord_recall_for_idle) */
    double started_at;       /* Unix time, for summary.json's "run" */
};

/* units.c: the units' state machine */
void coord_end_attempt(sx_coordinator_t *self, unit_t *unit, const char *worker_name,
                       const char *why, bool spent, const char *dropped_by);
/* Counts a worker's engine in (+1, it joined) or out (-1, it left) of
 * self->engines. */
void coord_engine_count(sx_coordinator_t *self, const char *engine, int sign);
/* The same for a unit's result when it becomes settling or settled (+1) or
 * stops being either (-1); a result without an engine (one the coordinator
 * made, an older journal's) counts nothing. */
void coord_result_engine_count(sx_coordinator_t *self, const unit_t *unit, int sign);
void coord_enqueue(sx_coordinator_t *self, unit_t *unit, bool front);
void coord_fail_run(sx_coordinator_t *self, const sx_error_t *err);
bool coord_failed_on(unit_t *unit, const char *name);
unit_t *coord_find_unit(sx_coordinator_t *self, const char *method, const char *task_id,
                        int sample);
/* "METHOD/TASK", or "METHOD/TASK sample K" for K > 0, for messages. */
void coord_unit_name(const sx_coordinator_t *self, const unit_t *unit, char *out,
                     size_t size);
void coord_free_shard(shard_t *shard);
void coord_mark_settled(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result);
void coord_release_from_shard(sx_coordinator_t *self, unit_t *unit);
int coord_settle(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                 const void *csv, size_t csv_size, sx_error_t *err);
void coord_settle_missing_predictions(sx_coordinator_t *self);
void coord_tally(sx_coordinator_t *self, const sx_result_t *result, int sign);
void coord_unit_inputs(sx_coordinator_t *self, const unit_t *unit, char hex[41]);
void coord_unsettle(sx_coordinator_t *self, unit_t *unit);
/* Makes the settling units durable (their CSVs, then one journal fsync),
 * settles and counts them, and sends the held acknowledgements; on failure
 * stops the run (fatal) and sends none. */
int coord_commit(sx_coordinator_t *self);

/* dispatch.c: files, dispatch, dropping and recalling */
void coord_credit_changed(sx_coordinator_t *self, worker_t *w);
void coord_destroy_manifest(void **item);
/* The bytes of the bench file hash at rel (relative to BENCH), checked
 * against the input rule and that hash when read, kept in memory once read
 * (up to a bound: a chunk not kept is the caller's); NULL with err set. */
zchunk_t *coord_file_bytes(sx_coordinator_t *self, const char *hash, const char *rel,
                           sx_error_t *err);
void coord_dispatch(sx_coordinator_t *self);
void coord_drop_worker(sx_coordinator_t *self, worker_t *w, const char *why, bool lost);
zlistx_t *coord_manifest_of(sx_coordinator_t *self, const char *task_id);
void coord_recall_for_idle(sx_coordinator_t *self);
void coord_send_goodbye(sx_coordinator_t *self, zframe_t *routing_id, const char *reason,
                        bool final);
void coord_send_to(sx_coordinator_t *self, worker_t *w, const sx_msg_t *msg);

/* messages.c: a worker's messages */
void coord_on_messages(sx_coordinator_t *self);
void coord_flush_acks(sx_coordinator_t *self, bool send);

/* repeat.c: --repeat */
int coord_settle_repeat(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                        const void *csv, size_t csv_size, sx_error_t *err);
bool coord_start_next_round(sx_coordinator_t *self);

/* outputs.c: the run's outputs */
int coord_write_outputs(sx_coordinator_t *self, sx_error_t *err);

/* coordinator.c: set-up and the loop */
void coord_print_last_lines(sx_coordinator_t *self, FILE *out);
void coord_unit_key(char *key, size_t size, const char *method, const char *task_id,
                    int sample);

#endif
