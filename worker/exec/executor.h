/* executor.h: executes one task of the protocol (docs/execution.md) on one
 * worker's Kafka + Flink pair: prepare sources, replay them, run the candidate
 * through the SQL Gateway, materialize the output changelog into the final
 * CSV, score it. Every outcome is a status in the result, never a crash: a
 * wrong query is flink_error / timeout / rejected_sql, trouble with Kafka,
 * Flink or the worker itself is infra_error. The worker's agent (which talks
 * to the coordinator) and `streamex exec` both drive tasks through this. */
#ifndef SX_EXECUTOR_H
#define SX_EXECUTOR_H

#include "common/error.h"
#include "common/results/result.h"
#include "common/ex/score.h"
#include "worker/clients/kafka.h"
#include "worker/exec/replays.h"
#include "worker/pair/pair.h"

#include <stdbool.h>
#include <stddef.h>

/* The version of the execution semantics: what turns a candidate and a
 * task's files into a final CSV (preparation, replay, bounded completion,
 * materialization, the CSV's writing). Bump it with any change that can
 * alter a final CSV: the worker's result cache (resultcache.h) keys on it,
 * so no CSV computed by the old semantics is served again. */
#define SX_EXEC_SEMANTICS 1

/* Where the pair is and how to name things. */
typedef struct {
    const char *bootstrap;   /* Kafka bootstrap servers, e.g. "127.0.0.1:20092" */
    const char *gateway_url; /* SQL Gateway REST, e.g. "http://127.0.0.1:20083" */
    const char *rest_url;    /* Flink REST, e.g. "http://127.0.0.1:20081" */
    const char *run_id;      /* unique per run; part of every topic name */
    sx_profile_t profile;
    bool keep; /* keep topics and session for debugging */
    /* The pair's processes, or NULL. When given, a task whose pair changed
     * under it (a component died or was restarted) is infra_error, never
     * flink_error, timeout, materialize_error or mismatch: the pair is
     * watched while the job runs and checked again before such a verdict. */
    sx_pair_t *pair;
} sx_executor_config_t;

/* Called with each of the first records of the output topic, in offset
 * order, once it is folded into the relation: its kinds as bits
 * 1u << sx_change_kind_t (0 when it did not fold), key and value (NULL when
 * the record has none, bytes as Kafka holds them). */
typedef void(sx_changelog_trace_fn)(void *arg, int64_t offset, unsigned kinds,
                                    const void *key, size_t key_len, const void *value,
                                    size_t value_len);

/* One task to execute. bench_dir holds tasks/ID/ (task.json, sources) and,
 * for scoring only, gold/ID.csv and evaluation/ID.json. */
typedef struct {
    const char *bench_dir;
    const char *task_id;
    const char *sql;      /* candidate; NULL = missing prediction */
    int attempt;          /* 1-based; part of topic names */
    const char *csv_path; /* where the final CSV goes */
    const char *method;   /* the method's name, or NULL; part of topic names, so
                             two methods of one run never share a topic */
    int sample;           /* which candidate of the task; part of topic names
                             when not 0, so two samples never share a topic */
} sx_exec_request_t;

typedef struct _sx_executor_t sx_executor_t;

sx_executor_t *sx_executor_new(const sx_executor_config_t *config, sx_error_t *err);
void sx_executor_destroy(sx_executor_t **self_p);

/* Runs the request and fills *result (status, score, detail, csv = absolute
 * path when a final CSV was written, and then the changelog's figures) and
 * *timings. The task's cleanup
 * (cancel a job still running, drop its tables from the session, delete its
 * own topics) is left for sx_executor_finish_task, so timings->cleanup is
 * 0: the verdict does not depend on it. */
void sx_executor_run(sx_executor_t *self, const sx_exec_request_t *request,
                     sx_result_t *result, sx_timings_t *timings);

/* Cleans up after the last task run, once its result is on its way; returns
 * the seconds it took (0: nothing to do). The next sx_executor_run and
 * sx_executor_destroy do it when the caller has not. */
double sx_executor_finish_task(sx_executor_t *self);

/* Makes the executor read shared source topics from `replays` (see
 * replays.h), which several executors of one worker may share and which
 * must outlive them; NULL (the default): every task replays its sources
 * into topics of its own. */
void sx_executor_set_replays(sx_executor_t *self, sx_replays_t *replays);

/* Makes the executor call trace(arg, ...) with the first `limit` records of
 * each task's output topic (`streamex exec --changelog N`); NULL: none. */
void sx_executor_set_trace(sx_executor_t *self, sx_changelog_trace_fn *trace, void *arg,
                           size_t limit);

/* Removes what an earlier run that crashed left on the pair when the
 * caller `owns` it (started it, so nobody else uses it: sx_pair_owned):
 * topics named sx.*, and running streamex jobs. Gateway sessions die with
 * the gateway, which such a pair starts afresh. On a pair others may share
 * it only logs what it finds. Says what it removed in *removed (topics and
 * jobs counted). */
int sx_executor_sweep(sx_executor_t *self, bool owns, size_t *removed, sx_error_t *err);

/* sx_executor_run with the task's topics (its private sources', then its
 * sink's) made by make_topics(arg, ...) in place of the executor, which
 * fills and reads them as usual and never deletes them: for a test on
 * librdkafka's mock Kafka, which has no topic admin API. */
void sx_executor_run_on_made_topics(sx_executor_t *self, const sx_exec_request_t *request,
                                    sx_topic_maker_fn *make_topics, void *arg,
                                    sx_result_t *result, sx_timings_t *timings);

/* No sx_executor_test here: the executor is tested by tests/unit/executor.c,
 * against the scripted fake Flink of tests/kit/fakeflink.h, test code that
 * stays out of the program. */

#endif
