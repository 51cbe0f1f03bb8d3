/* floor_jobs.c: bench/floor's job half: N bounded jobs submitted back to
 * back through a pair's SQL Gateway from S sessions at once, each session
 * waiting for its job's end before the next. The sessions are opened as the
 * executor opens them (sx_gateway_open_session: STREAMING, parallelism 1, no
 * restarts) and a job's end is polled every POLL_MS, tighter than the
 * executor's polls, so a floor is the engine's and not a poll interval's.
 *
 * Two floors:
 * - trivial (no BENCH): datagen of 10 rows into blackhole, the two tables
 *   made once per session: what Flink itself needs for a job, the floor a
 *   streamex task is measured against.
 * - queries (BENCH PREDICTIONS BOOTSTRAP): each task's own statement over
 *   Kafka as the executor sends it (its sources' and sink's DDL filled the
 *   same way, sx_ddl_source and sx_ddl_fill; its SQL through sx_sqlcheck;
 *   its sources replayed by the worker's own registry, sx_replays_acquire),
 *   in a session of its own, as the executor does, but with every topic
 *   made and every source replayed before the clock starts, and no sink
 *   read, no scoring, no topic deleted per task: what Flink needs for the
 *   benchmark's queries themselves, the part of a task streamex cannot cut.
 *   Its topics are deleted after the jobs.
 * Prints one JSON line: jobs, sessions, finished, failed, wall_s,
 * jobs_per_s (and, for queries, setup_s: the topics and replays).
 * usage: floor_jobs GATEWAY_URL REST_URL JOBS SESSIONS [BENCH PREDICTIONS BOOTSTRAP] */
#include "common/bench/bench.h"
#include "common/bench/predictions.h"
#include "common/bench/task.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/mem.h"
#include "worker/clients/gateway.h"
#include "worker/clients/kafka.h"
#include "worker/exec/replays.h"
#include "worker/sql/ddl.h"
#include "worker/sql/sqlcheck.h"

#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define POLL_MS 5
#define KAFKA_TIMEOUT_MS 30000

/* One job: the tables its session needs, then its statement. */
typedef struct {
    char **ddls;
    size_t ddl_count;
    char *statement;
} job_t;

typedef struct {
    const char *gateway_url, *rest_url;
    long jobs;
    job_t *queries; /* one a job (queries floor), or NULL (trivial floor) */
    atomic_long next, finished, failed;
} floor_t;

static const char *const trivial_ddls[] = {
    "CREATE TEMPORARY TABLE floor_source (x INT) WITH "
    "('connector'='datagen','number-of-rows'='10')",
    "CREATE TEMPORARY TABLE floor_sink (x INT) WITH ('connector'='blackhole')"};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int configure(sx_gateway_t *gw, const char *const *ddls, size_t count,
                     sx_error_t *err)
{
    for (size_t i = 0; i < count; i++)
        if (sx_gateway_configure(gw, ddls[i], err) != SX_GATEWAY_OK)
            return -1;
    return 0;
}

/* A statement's job to its end: submitted, then polled until it is no
 * longer running. 0 when it finished. */
static int run_job(sx_gateway_t *gw, const char *statement, sx_error_t *err)
{
    char job_id[SX_JOB_ID_SIZE] = "";
    if (sx_gateway_execute(gw, statement, job_id, err) != SX_GATEWAY_OK)
        return -1;
    sx_job_state_t state = SX_JOB_RUNNING;
    while (state == SX_JOB_RUNNING) {
        if (sx_gateway_job_state(gw, job_id, &state, err) != 0)
            return -1;
        if (state == SX_JOB_RUNNING)
            sleep_ms(POLL_MS);
    }
    return state == SX_JOB_FINISHED ? 0 : sx_error_set(err, "job %s failed", job_id);
}

/* A task's query in a session of its own, as the executor runs it. */
static int run_query(sx_gateway_t *gw, const job_t *job, sx_error_t *err)
{
    if (sx_gateway_open_session(gw, "sx-floor", err) != 0)
        return -1;
    int rc = configure(gw, (const char *const *)job->ddls, job->ddl_count, err) == 0
                 ? run_job(gw, job->statement, err)
                 : -1;
    sx_error_t close_err;
    if (sx_gateway_close_session(gw, &close_err) != 0 && rc == 0)
        rc = sx_error_set(err, "%s", close_err.msg);
    return rc;
}

static void *session(void *arg)
{
    floor_t *f = arg;
    sx_error_t err;
    sx_gateway_t *gw = sx_gateway_new(f->gateway_url, f->rest_url, 60000, &err);
    if (!gw || (!f->queries &&
                (sx_gateway_open_session(gw, "sx-floor", &err) != 0 ||
                 configure(gw, trivial_ddls, sizeof trivial_ddls / sizeof *trivial_ddls,
                           &err) != 0))) {
        fprintf(stderr, "floor_jobs: session: %s\n", err.msg);
        sx_gateway_destroy(&gw);
        return NULL;
    }
    long i;
    while ((i = atomic_fetch_add(&f->next, 1)) < f->jobs) {
        int rc =
            f->queries
                ? run_query(gw, &f->queries[i], &err)
                : run_job(gw, "INSERT INTO floor_sink SELECT x FROM floor_source", &err);
        if (rc != 0)
            fprintf(stderr, "floor_jobs: job %ld: %s\n", i, err.msg);
        atomic_fetch_add(rc == 0 ? &f->finished : &f->failed, 1);
    }
    sx_gateway_destroy(&gw);
    return NULL;
}

/* ---- the queries floor's set-up ------------------------------------------ */

/* What the set-up makes on the pair's Kafka: the sources' topics through
 * the worker's own replay registry (a source replayed once, its copies in
 * other tasks reading the same topic, as on a worker; deleted when it is
 * destroyed) and a sink topic per task. */
typedef struct {
    const char *bootstrap;
    sx_kafka_t *kafka;
    sx_replays_t *replays;
    zlist_t *sinks;
} kafka_setup_t;

/* A task's job: its tables' DDL filled with topics that are ready. */
static int make_query(kafka_setup_t *k, const sx_task_t *task, const char *sql,
                      long index, job_t *job, sx_error_t *err)
{
    job->ddls = sx_alloc(task->source_count + 1, sizeof *job->ddls);
    char topic[256];
    double prepare_s;
    for (size_t s = 0; s < task->source_count; s++) {
        if (sx_replays_acquire(k->replays, k->kafka, task->task_id, &task->sources[s],
                               topic, sizeof topic, &prepare_s, err) != SX_REPLAY_READY)
            return -1;
        job->ddls[job->ddl_count] =
            sx_ddl_source(task->sources[s].ddl, topic, k->bootstrap, err);
        if (!job->ddls[job->ddl_count++])
            return -1;
    }
    snprintf(topic, sizeof topic, "sx-floor-sink-%ld", index);
    if (sx_kafka_create_topic(k->kafka, topic, err) != 0)
        return -1;
    zlist_append(k->sinks, sx_strdup(topic));
    job->ddls[job->ddl_count] = sx_ddl_fill(task->sink_ddl, topic, k->bootstrap, err);
    if (!job->ddls[job->ddl_count++])
        return -1;
    job->statement = sx_sqlcheck(sql, task->sink_name, err);
    return job->statement ? 0 : -1;
}

/* The first `count` tasks of the bench, each with its prediction, into
 * jobs (count of them, zeroed), which the caller frees either way. */
static int make_queries(const char *bench_dir, const char *predictions_path,
                        kafka_setup_t *k, long count, job_t *jobs, sx_error_t *err)
{
    sx_bench_t *bench = sx_bench_open(bench_dir, err);
    sx_predictions_t *predictions =
        bench ? sx_predictions_load(predictions_path, bench, err) : NULL;
    int rc = predictions ? 0 : -1;
    if (rc == 0 && sx_bench_task_count(bench) < (size_t)count)
        rc = sx_error_set(err, "%s has %zu tasks, fewer than %ld", bench_dir,
                          sx_bench_task_count(bench), count);
    for (long i = 0; rc == 0 && i < count; i++) {
        const char *id = sx_bench_task_id(bench, (size_t)i);
        const char *sql = sx_predictions_sql(predictions, id);
        sx_task_t *task = sql ? sx_task_load(bench_dir, id, err) : NULL;
        if (!sql)
            sx_error_set(err, "no prediction");
        rc = task ? make_query(k, task, sql, i, &jobs[i], err) : -1;
        if (rc != 0)
            sx_error_prefix(err, "task %s: ", id);
        sx_task_destroy(&task);
    }
    sx_predictions_destroy(&predictions);
    sx_bench_destroy(&bench);
    return rc;
}

static void free_queries(job_t *jobs, long count)
{
    for (long i = 0; i < count; i++) {
        for (size_t d = 0; d < jobs[i].ddl_count; d++)
            free(jobs[i].ddls[d]);
        free(jobs[i].ddls);
        free(jobs[i].statement);
    }
    free(jobs);
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 8) {
        fprintf(stderr, "usage: floor_jobs GATEWAY_URL REST_URL JOBS SESSIONS "
                        "[BENCH PREDICTIONS BOOTSTRAP]\n");
        return 2;
    }
    floor_t f = {.gateway_url = argv[1], .rest_url = argv[2], .jobs = atol(argv[3])};
    long sessions = atol(argv[4]);
    if (f.jobs < 1 || sessions < 1 || sessions > 64) {
        fprintf(stderr, "floor_jobs: JOBS >= 1 and 1 <= SESSIONS <= 64\n");
        return 2;
    }
    sx_error_t err;
    kafka_setup_t k = {.sinks = zlist_new()};
    zlist_autofree(k.sinks);
    double setup_s = 0;
    bool ready = true;
    if (argc == 8) {
        double t = sx_clock_seconds();
        f.queries = sx_alloc((size_t)f.jobs, sizeof *f.queries);
        k.bootstrap = argv[7];
        k.kafka = sx_kafka_new(k.bootstrap, KAFKA_TIMEOUT_MS, &err);
        k.replays = k.kafka ? sx_replays_new(k.bootstrap, "floor", false, &err) : NULL;
        ready =
            k.replays && make_queries(argv[5], argv[6], &k, f.jobs, f.queries, &err) == 0;
        setup_s = sx_clock_seconds() - t;
    }
    double started = sx_clock_seconds(), wall = 0;
    if (ready) {
        pthread_t threads[64];
        for (long i = 0; i < sessions; i++)
            pthread_create(&threads[i], NULL, session, &f);
        for (long i = 0; i < sessions; i++)
            pthread_join(threads[i], NULL);
        wall = sx_clock_seconds() - started;
    } else {
        fprintf(stderr, "floor_jobs: %s\n", err.msg);
    }
    if (k.kafka && zlist_size(k.sinks) > 0 &&
        sx_kafka_delete_topic_list(k.kafka, k.sinks, &err) != 0)
        fprintf(stderr, "floor_jobs: deleting the sink topics: %s\n", err.msg);
    sx_replays_destroy(&k.replays);
    sx_kafka_destroy(&k.kafka);
    zlist_destroy(&k.sinks);
    if (f.queries)
        free_queries(f.queries, f.jobs);
    long finished = atomic_load(&f.finished), failed = atomic_load(&f.failed);
    printf("{\"jobs\": %ld, \"sessions\": %ld, \"finished\": %ld, \"failed\": %ld, "
           "\"wall_s\": %.3f, \"jobs_per_s\": %.3f, \"setup_s\": %.3f}\n",
           f.jobs, sessions, finished, failed, wall, wall > 0 ? finished / wall : 0.0,
           setup_s);
    return finished == f.jobs ? 0 : 1;
}
