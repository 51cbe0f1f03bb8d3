/* executor.c: one task through the protocol of docs/execution.md (see
 * executor.h). The steps run in order, each timed: prepare (load the task,
 * check the candidate, convert the sources, fill the DDL), replay (create the
 * task's topics, produce every source and wait for every acknowledgement),
 * submit (a fresh gateway session, the registered DDL, the INSERT), run
 * (poll the job until it ends or the task timeout cancels it), materialize
 * (read the whole output topic, write the final CSV), score (only now open
 * gold and evaluation), settle (a verdict against the query stands only on a
 * pair whose processes did not change during the task) and cleanup (cancel a
 * job still running, close the session, delete the topics), which runs
 * whatever happened before. The first step that fails decides the status;
 * later steps are skipped. */
#include "worker/executor.h"

#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/signals.h"
#include "common/task.h"
#include "worker/ddl.h"
#include "worker/fakeflink.h"
#include "worker/gateway.h"
#include "worker/kafka.h"
#include "worker/materialize.h"
#include "worker/prepare.h"
#include "worker/sqlcheck.h"

#include <czmq.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Per-request deadline of Kafka and gateway calls (not of the job). */
#define CLIENT_TIMEOUT_MS 10000
#define JOB_POLL_MS 100
/* Failed job-state polls in a row before the pair is deemed in trouble. */
#define STATE_MISSES_MAX 3
/* After a cancel request, how long to wait for Flink to confirm it. */
#define CANCEL_WAIT_MS 15000
/* How often a running job's pair is checked for a dead or restarted
 * component: Flink itself may take a minute to fail the job (Kafka's client
 * timeout, the TaskManager heartbeat). */
#define PAIR_CHECK_MS 1000
/* What every task's job name starts with (pipeline.name): the sweep's mark. */
#define JOB_NAME_PREFIX "streamex "

struct _sx_executor_t {
    char *bootstrap;
    char *run_id;
    sx_profile_t profile;
    bool keep;
    sx_kafka_t *kafka;
    sx_gateway_t *gateway;
    sx_runtime_t *pair; /* NULL: not checked */
    zlist_t *leftover;  /* topics a cleanup could not delete (Kafka was down) */
};

/* Everything one run of one task owns, released by run_release(). */
typedef struct {
    sx_executor_t *self;
    const sx_exec_request_t *request;
    sx_task_t *task;
    char *statement;         /* the candidate as submitted */
    sx_prepare_t **prepared; /* one per source */
    char **topics;           /* one per source, then the sink's */
    char **ddls;             /* same order */
    size_t table_count;      /* sources + 1 */
    size_t topics_created;   /* the first ones of topics[]: cleanup deletes them */
    bool job_live;           /* a job was submitted and not seen ending */
    char job_id[SX_JOB_ID_SIZE];
    sx_runtime_identity_t pair_at_start; /* the pair's processes when the task began */
    sx_status_t status;
    int strict; /* the strict verdict beside status, once scored */
    char detail[SX_ERROR_MAX];
    char csv[PATH_MAX]; /* absolute path of the final CSV, "" when none */
} run_t;

/* Records the verdict of a failed step; always returns -1. */
static int fail(run_t *run, sx_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(run_t *run, sx_status_t status, const char *fmt, ...)
{
    run->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run->detail, sizeof run->detail, fmt, ap);
    va_end(ap);
    return -1;
}

sx_executor_t *sx_executor_new(const sx_executor_config_t *config, sx_error_t *err)
{
    if (!config->bootstrap || !config->gateway_url || !config->rest_url ||
        !config->run_id) {
        sx_error_set(err,
                     "executor needs Kafka, gateway and REST addresses and a run id");
        return NULL;
    }
    sx_executor_t *self = sx_new(sx_executor_t);
    self->bootstrap = sx_strdup(config->bootstrap);
    self->run_id = sx_strdup(config->run_id);
    self->profile = config->profile;
    self->keep = config->keep;
    self->pair = config->pair;
    self->leftover = zlist_new(); /* CZMQ's constructors abort as mem.h does */
    zlist_autofree(self->leftover);
    self->kafka = sx_kafka_new(config->bootstrap, CLIENT_TIMEOUT_MS, err);
    if (self->kafka)
        self->gateway =
            sx_gateway_new(config->gateway_url, config->rest_url, CLIENT_TIMEOUT_MS, err);
    if (!self->gateway)
        sx_executor_destroy(&self);
    return self;
}

void sx_executor_destroy(sx_executor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_executor_t *self = *self_p;
    sx_gateway_destroy(&self->gateway);
    sx_kafka_destroy(&self->kafka);
    zlist_destroy(&self->leftover);
    free(self->bootstrap);
    free(self->run_id);
    free(self);
    *self_p = NULL;
}

/* sx.<run>[.<method>].<task>.<attempt>: what every topic of one execution
 * starts with, unique per run, method, task and attempt (docs/execution.md,
 * step 3). Not yet sanitized. */
static void topic_prefix(const run_t *run, char *out, size_t size)
{
    const sx_exec_request_t *request = run->request;
    snprintf(out, size, "sx.%s.%s%s%s.%d", run->self->run_id,
             request->method ? request->method : "", request->method ? "." : "",
             request->task_id, request->attempt);
}

/* <prefix>.<table>, in Kafka's legal characters. */
static char *topic_name(const run_t *run, const char *table)
{
    char prefix[512], raw[1024], legal[256];
    topic_prefix(run, prefix, sizeof prefix);
    snprintf(raw, sizeof raw, "%s.%s", prefix, table);
    sx_kafka_topic_sanitize(raw, legal, sizeof legal);
    return sx_strdup(legal);
}

/* ---- prepare ------------------------------------------------------------- */

static int prepare_tables(run_t *run)
{
    const sx_task_t *task = run->task;
    run->table_count = task->source_count + 1;
    run->prepared = sx_alloc(task->source_count, sizeof *run->prepared);
    run->topics = sx_alloc(run->table_count, sizeof *run->topics);
    run->ddls = sx_alloc(run->table_count, sizeof *run->ddls);
    sx_error_t err;
    for (size_t i = 0; i < task->source_count; i++) {
        const sx_source_t *source = &task->sources[i];
        run->prepared[i] = sx_prepare_new(task->task_id, source, &err);
        if (!run->prepared[i])
            return fail(run, SX_STATUS_INPUT_ERROR, "%s", err.msg);
        run->topics[i] = topic_name(run, source->name);
        run->ddls[i] =
            sx_ddl_source(source->ddl, run->topics[i], run->self->bootstrap, &err);
        if (!run->ddls[i])
            return fail(run, SX_STATUS_INPUT_ERROR, "task %s: DDL of source %s: %s",
                        task->task_id, source->name, err.msg);
    }
    size_t sink = task->source_count;
    run->topics[sink] = topic_name(run, task->sink_name);
    run->ddls[sink] =
        sx_ddl_fill(task->sink_ddl, run->topics[sink], run->self->bootstrap, &err);
    if (!run->ddls[sink])
        return fail(run, SX_STATUS_INPUT_ERROR, "task %s: DDL of sink %s: %s",
                    task->task_id, task->sink_name, err.msg);
    return 0;
}

static int step_prepare(run_t *run)
{
    const sx_exec_request_t *request = run->request;
    if (!request->sql)
        return fail(run, SX_STATUS_MISSING_PREDICTION, "no prediction for task %s",
                    request->task_id);
    sx_error_t err;
    run->task = sx_task_load(request->bench_dir, request->task_id, &err);
    if (!run->task)
        return fail(run, SX_STATUS_INPUT_ERROR, "%s", err.msg);
    run->statement = sx_sqlcheck(request->sql, run->task->sink_name, &err);
    if (!run->statement)
        return fail(run, SX_STATUS_REJECTED_SQL, "task %s: %s", request->task_id,
                    err.msg);
    return prepare_tables(run);
}

/* ---- replay -------------------------------------------------------------- */

static int replay_source(run_t *run, size_t index, sx_error_t *err)
{
    const sx_prepare_t *prepared = run->prepared[index];
    size_t count = sx_prepare_count(prepared);
    sx_kafka_record_t *records = sx_alloc(count, sizeof *records);
    for (size_t i = 0; i < count; i++) {
        records[i].value = sx_prepare_value(prepared, i);
        records[i].value_len = strlen(records[i].value);
        records[i].timestamp_ms = sx_prepare_timestamp(prepared, i);
    }
    int rc = sx_kafka_produce(run->self->kafka, run->topics[index], records, count, err);
    free(records);
    return rc;
}

static int step_replay(run_t *run)
{
    sx_error_t err;
    for (size_t i = 0; i < run->table_count; i++, run->topics_created++)
        if (sx_kafka_create_topic(run->self->kafka, run->topics[i], &err) != 0)
            return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    /* Live and static sources alike are complete in Kafka before the query
     * starts; bounded reading then sees exactly these rows. */
    for (size_t i = 0; i < run->task->source_count; i++)
        if (replay_source(run, i, &err) != 0)
            return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    return 0;
}

/* ---- submit and run ------------------------------------------------------ */

static int step_submit(run_t *run)
{
    sx_gateway_t *gateway = run->self->gateway;
    sx_error_t err;
    char name[512];
    snprintf(name, sizeof name, JOB_NAME_PREFIX "%s %s attempt %d", run->self->run_id,
             run->task->task_id, run->request->attempt);
    if (sx_gateway_open_session(gateway, name, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    for (size_t i = 0; i < run->table_count; i++) {
        sx_gateway_rc_t rc = sx_gateway_execute(gateway, run->ddls[i], NULL, &err);
        const char *table = i < run->task->source_count ? run->task->sources[i].name
                                                        : run->task->sink_name;
        if (rc == SX_GATEWAY_SQL_ERROR)
            return fail(run, SX_STATUS_INPUT_ERROR,
                        "task %s: Flink rejected the DDL of %s: %s", run->task->task_id,
                        table, err.msg);
        if (rc != SX_GATEWAY_OK)
            return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    }
    sx_gateway_rc_t rc = sx_gateway_execute(gateway, run->statement, run->job_id, &err);
    if (rc == SX_GATEWAY_SQL_ERROR)
        return fail(run, SX_STATUS_FLINK_ERROR, "%s", err.msg);
    if (rc != SX_GATEWAY_OK)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    if (!run->job_id[0])
        return fail(run, SX_STATUS_INFRA_ERROR,
                    "the gateway accepted the INSERT but gave no "
                    "job ID");
    run->job_live = true;
    sx_debug("task %s: job %s submitted", run->task->task_id, run->job_id);
    return 0;
}

/* Cancels a job and waits (briefly) for Flink to confirm it stopped. */
static int cancel_job(run_t *run, sx_error_t *err)
{
    sx_gateway_t *gateway = run->self->gateway;
    if (sx_gateway_job_cancel(gateway, run->job_id, err) != 0)
        return -1;
    double deadline = sx_clock_seconds() + CANCEL_WAIT_MS / 1e3;
    sx_job_state_t state = SX_JOB_RUNNING;
    while (sx_clock_seconds() < deadline) {
        if (sx_gateway_job_state(gateway, run->job_id, &state, err) != 0)
            return -1;
        if (state != SX_JOB_RUNNING) {
            run->job_live = false;
            return 0;
        }
        zclock_sleep(JOB_POLL_MS);
    }
    return sx_error_set(err, "job %s still running %d s after cancel", run->job_id,
                        CANCEL_WAIT_MS / 1000);
}

/* A failed job is the query's fault (flink_error with Flink's root cause)
 * unless the cause shows the cluster could not run it. */
static int job_failed(run_t *run)
{
    char cause[SX_ERROR_MAX];
    bool infra = false;
    sx_error_t err;
    if (sx_gateway_job_root_cause(run->self->gateway, run->job_id, cause, sizeof cause,
                                  &infra, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR,
                    "job %s failed and its root cause is unavailable: %s", run->job_id,
                    err.msg);
    if (infra)
        return fail(run, SX_STATUS_INFRA_ERROR, "job %s failed: %s", run->job_id, cause);
    return fail(run, SX_STATUS_FLINK_ERROR, "%s", cause);
}

/* 0 while the pair is the one the task started on; else -1, err says why. */
static int pair_intact(run_t *run, sx_error_t *err)
{
    if (!run->self->pair)
        return 0;
    return sx_runtime_intact(run->self->pair, &run->pair_at_start, err);
}

/* Polls the job until it ends; submitted_at starts the task's timeout. A
 * pair that changes meanwhile ends the attempt at once as infra_error (the
 * job is cancelled by cleanup): whatever the job does next is not the
 * query's doing. */
static int step_run(run_t *run, double submitted_at)
{
    sx_error_t err;
    int misses = 0; /* consecutive failed polls: one slow answer is not a verdict */
    double pair_checked = sx_clock_seconds();
    for (;;) {
        if (sx_clock_seconds() - pair_checked >= PAIR_CHECK_MS / 1e3) {
            if (pair_intact(run, &err) != 0)
                return fail(run, SX_STATUS_INFRA_ERROR, "job %s: %s", run->job_id,
                            err.msg);
            pair_checked = sx_clock_seconds();
        }
        sx_job_state_t state;
        if (sx_gateway_job_state(run->self->gateway, run->job_id, &state, &err) != 0) {
            if (++misses >= STATE_MISSES_MAX)
                return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
            zclock_sleep(JOB_POLL_MS);
            continue;
        }
        misses = 0;
        if (state != SX_JOB_RUNNING)
            run->job_live = false;
        if (state == SX_JOB_FINISHED)
            return 0;
        if (state == SX_JOB_FAILED)
            return job_failed(run);
        if (state == SX_JOB_CANCELED)
            return fail(run, SX_STATUS_INFRA_ERROR,
                        "job %s was cancelled outside streamex", run->job_id);
        if (sx_signals_caught()) /* not the query's verdict: cleanup cancels the job */
            return fail(run, SX_STATUS_INFRA_ERROR, "interrupted by signal %d",
                        sx_signals_caught());
        if (sx_clock_seconds() - submitted_at > run->task->timeout_s) {
            /* A job whose tasks never all got a slot was not run at all: the
             * cluster's fault (e.g. a killed TaskManager the JobManager still
             * counts), not a slow query. */
            char waiting[32] = "";
            if (sx_gateway_job_waiting(run->self->gateway, run->job_id, waiting,
                                       sizeof waiting, &err) == 0 &&
                waiting[0])
                return fail(run, SX_STATUS_INFRA_ERROR,
                            "job %s: a task still %s after %d s: the cluster gave it "
                            "no slot",
                            run->job_id, waiting, run->task->timeout_s);
            /* Else the verdict is the query's either way; a cancel that fails
             * is tried again by cleanup. */
            if (cancel_job(run, &err) != 0)
                return fail(run, SX_STATUS_TIMEOUT,
                            "job did not finish within %d s; cancel failed: %s",
                            run->task->timeout_s, err.msg);
            return fail(run, SX_STATUS_TIMEOUT,
                        "job did not finish within %d s; cancelled",
                        run->task->timeout_s);
        }
        zclock_sleep(JOB_POLL_MS);
    }
}

/* ---- materialize and score ----------------------------------------------- */

static int write_relation(run_t *run, const sx_kafka_message_t *messages, size_t count)
{
    const sx_task_t *task = run->task;
    sx_materialize_t *relation = sx_materialize_new(
        task->sink_changelog, task->output_schema, task->output_column_count);
    sx_error_t err;
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++)
        if (sx_materialize_apply(relation, messages[i].offset, messages[i].key,
                                 messages[i].key_len, messages[i].value,
                                 messages[i].value_len, &err) != 0)
            rc = fail(run, SX_STATUS_MATERIALIZE_ERROR, "task %s: output topic %s: %s",
                      task->task_id, run->topics[task->source_count], err.msg);
    const char *path = run->request->csv_path;
    if (rc == 0 && sx_mkdirs_for(path, NULL) != 0)
        rc = fail(run, SX_STATUS_INFRA_ERROR, "cannot create the folder of %s", path);
    if (rc == 0 && sx_materialize_write(relation, path, &err) != 0)
        rc = fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    if (rc == 0 && !realpath(path, run->csv))
        rc = fail(run, SX_STATUS_INFRA_ERROR, "%s: written but not found again", path);
    sx_materialize_destroy(&relation);
    return rc;
}

static int step_materialize(run_t *run)
{
    sx_kafka_message_t *messages = NULL;
    size_t count = 0;
    sx_error_t err;
    if (sx_kafka_read_topic(run->self->kafka, run->topics[run->task->source_count],
                            &messages, &count, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    int rc = write_relation(run, messages, count);
    sx_kafka_messages_free(&messages, count);
    return rc;
}

/* Gold and evaluation are opened here, after the final CSV exists. */
static int step_score(run_t *run)
{
    run->status =
        sx_score_task(run->request->bench_dir, run->task->task_id, run->csv,
                      run->self->profile, &run->strict, run->detail, sizeof run->detail);
    return run->status == SX_STATUS_EVAL_ERROR ? -1 : 0;
}

/* ---- settle -------------------------------------------------------------- */

/* A verdict that blames the query or its output is only given on a pair
 * that stayed whole: a component that died or was restarted during the task
 * makes it infra_error, which the coordinator retries once the pair is whole
 * again (the worker's watchdog restores it before the next task). */
static void step_settle(run_t *run)
{
    sx_status_t status = run->status;
    if (status != SX_STATUS_FLINK_ERROR && status != SX_STATUS_TIMEOUT &&
        status != SX_STATUS_MATERIALIZE_ERROR && status != SX_STATUS_MISMATCH)
        return;
    sx_error_t err;
    if (pair_intact(run, &err) == 0)
        return;
    char was[SX_ERROR_MAX];
    snprintf(was, sizeof was, "%s", run->detail);
    fail(run, SX_STATUS_INFRA_ERROR, "%s (the attempt had ended as %s: %s)", err.msg,
         sx_status_name(status), was);
    if (run->csv[0])
        unlink(run->csv);
    run->csv[0] = '\0';
}

/* ---- cleanup ------------------------------------------------------------- */

/* Leaves the pair clean for the next task whatever happened. A cleanup
 * problem is logged, not a verdict: the next task's names are fresh anyway. */
static void step_cleanup(run_t *run)
{
    sx_executor_t *self = run->self;
    sx_error_t err;
    if (run->job_live && cancel_job(run, &err) != 0)
        sx_warn("task %s: cancelling job %s: %s", run->request->task_id, run->job_id,
                err.msg);
    if (self->keep) {
        char prefix[512];
        topic_prefix(run, prefix, sizeof prefix);
        sx_info("task %s: keeping topics %s.*, gateway session %s and job %s",
                run->request->task_id, prefix, sx_gateway_session(self->gateway),
                run->job_id[0] ? run->job_id : "(none)");
        sx_gateway_detach_session(self->gateway);
        return;
    }
    if (sx_gateway_close_session(self->gateway, &err) != 0)
        sx_warn("task %s: %s", run->request->task_id, err.msg);
    if (run->topics_created > 0 &&
        sx_kafka_delete_topics(self->kafka, (const char *const *)run->topics,
                               run->topics_created, &err) != 0) {
        sx_warn("task %s: %s (tried again before the next task)", run->request->task_id,
                err.msg);
        for (size_t i = 0; i < run->topics_created; i++)
            zlist_append(self->leftover, run->topics[i]);
    }
}

/* Deletes the topics earlier cleanups could not (the broker was down then;
 * the watchdog has restarted it since). */
static void delete_leftover(sx_executor_t *self)
{
    size_t count = zlist_size(self->leftover);
    if (count == 0)
        return;
    const char **topics = sx_alloc(count, sizeof *topics);
    size_t n = 0;
    for (const char *t = zlist_first(self->leftover); t; t = zlist_next(self->leftover))
        topics[n++] = t;
    sx_error_t err;
    if (sx_kafka_delete_topics(self->kafka, topics, count, &err) == 0) {
        sx_info("deleted %zu topic(s) an earlier cleanup could not", count);
        zlist_purge(self->leftover);
    } else {
        sx_warn("%s (tried again before the next task)", err.msg);
    }
    free(topics);
}

/* ---- sweep --------------------------------------------------------------- */

static void sweep_jobs(sx_executor_t *self, bool remove, size_t *removed)
{
    char(*ids)[SX_JOB_ID_SIZE] = NULL;
    size_t count = 0;
    sx_error_t err;
    if (sx_gateway_running_jobs(self->gateway, JOB_NAME_PREFIX, &ids, &count, &err) != 0)
        sx_warn("sweep: listing jobs: %s", err.msg);
    for (size_t i = 0; i < count; i++) {
        if (!remove) {
            sx_info("sweep: job %s of an earlier run still runs (shared pair: left)",
                    ids[i]);
        } else if (sx_gateway_job_cancel(self->gateway, ids[i], &err) != 0) {
            sx_warn("sweep: cancelling job %s: %s", ids[i], err.msg);
        } else {
            sx_info("sweep: cancelled job %s left by an earlier run", ids[i]);
            (*removed)++;
        }
    }
    free(ids);
}

int sx_executor_sweep(sx_executor_t *self, size_t *removed, sx_error_t *err)
{
    *removed = 0;
    bool remove = self->pair && sx_runtime_owned(self->pair);
    sweep_jobs(self, remove, removed);
    char **topics = NULL;
    size_t count = 0;
    if (sx_kafka_list_topics(self->kafka, "sx.", &topics, &count, err) != 0)
        return sx_error_prefix(err, "sweep"), -1;
    int rc = 0;
    if (count > 0 && !remove) {
        sx_info("sweep: %zu topic(s) sx.* of earlier runs on a shared pair: left", count);
    } else if (count > 0 &&
               sx_kafka_delete_topics(self->kafka, (const char *const *)topics, count,
                                      err) != 0) {
        rc = -1;
        sx_error_prefix(err, "sweep");
    } else if (count > 0) {
        for (size_t i = 0; i < count; i++)
            sx_info("sweep: deleted topic %s left by an earlier run", topics[i]);
        *removed += count;
    }
    sx_kafka_topics_free(&topics, count);
    return rc;
}

static void run_release(run_t *run)
{
    for (size_t i = 0; run->prepared && i < run->task->source_count; i++)
        sx_prepare_destroy(&run->prepared[i]);
    for (size_t i = 0; i < run->table_count; i++) {
        free(run->topics ? run->topics[i] : NULL);
        free(run->ddls ? run->ddls[i] : NULL);
    }
    free(run->prepared);
    free(run->topics);
    free(run->ddls);
    free(run->statement);
    sx_task_destroy(&run->task);
}

/* How the task's topics come to exist and be filled: step_replay, or in the
 * self-test a stand-in for the mock Kafka cluster, which has no admin API. */
typedef int (*replay_fn_t)(run_t *run);

/* Runs the steps in order, timing each; stops at the first that fails. */
static void run_steps(run_t *run, replay_fn_t replay, sx_timings_t *timings)
{
    double t = sx_clock_seconds();
    int rc = step_prepare(run);
    timings->prepare = sx_clock_seconds() - t;
    if (rc == 0) {
        t = sx_clock_seconds();
        rc = replay(run);
        timings->replay = sx_clock_seconds() - t;
    }
    double submitted_at = sx_clock_seconds();
    if (rc == 0) {
        rc = step_submit(run);
        timings->submit = sx_clock_seconds() - submitted_at;
    }
    if (rc == 0) {
        t = sx_clock_seconds();
        rc = step_run(run, submitted_at);
        timings->run = sx_clock_seconds() - t;
    }
    if (rc == 0) {
        t = sx_clock_seconds();
        rc = step_materialize(run);
        timings->materialize = sx_clock_seconds() - t;
    }
    if (rc == 0) {
        t = sx_clock_seconds();
        step_score(run);
        timings->score = sx_clock_seconds() - t;
    }
    step_settle(run);
    t = sx_clock_seconds();
    step_cleanup(run);
    timings->cleanup = sx_clock_seconds() - t;
}

static void execute(sx_executor_t *self, const sx_exec_request_t *request,
                    replay_fn_t replay, sx_result_t *result, sx_timings_t *timings)
{
    double start = sx_clock_seconds();
    memset(timings, 0, sizeof *timings);
    run_t run = {.self = self, .request = request, .status = SX_STATUS_INFRA_ERROR};
    delete_leftover(self);
    if (self->pair)
        sx_runtime_identify(self->pair, &run.pair_at_start);
    run_steps(&run, replay, timings);
    if (run.status != SX_STATUS_MATCH && run.status != SX_STATUS_MISMATCH &&
        run.status != SX_STATUS_MISSING_PREDICTION)
        sx_debug("task %s attempt %d: %s: %s", request->task_id, request->attempt,
                 sx_status_name(run.status), run.detail);
    sx_result_init(result, request->task_id, run.status, run.detail,
                   run.csv[0] ? run.csv : NULL);
    /* A step after scoring (cleanup) may still have failed the task. */
    bool scored = run.status == SX_STATUS_MATCH || run.status == SX_STATUS_MISMATCH;
    result->strict = scored ? run.strict : 0;
    result->attempts = request->attempt;
    result->seconds = sx_clock_seconds() - start;
    run_release(&run);
}

void sx_executor_run(sx_executor_t *self, const sx_exec_request_t *request,
                     sx_result_t *result, sx_timings_t *timings)
{
    execute(self, request, step_replay, result, timings);
}

/* ---- self-test ------------------------------------------------------------
 * Outcomes decided before Kafka or Flink are touched run against nothing.
 * Every verdict decided on the cluster runs the executor's own code against
 * librdkafka's in-process mock Kafka and the scripted fake Flink of
 * worker/fakeflink.c: the mock has no topic admin API, so only topic creation
 * is stood in for (mock_replay); the replay itself, the job polling, cancel,
 * root cause, materialization, scoring and settling are the real code. The
 * same paths on the real runtime: tests/e2e_exec.sh and e2e_chaos.sh. */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    SX_CHECK(f);
    fputs(text, f);
    fclose(f);
}

/* sink_option is one more option of the sink's WITH list, e.g. ",'k'='v'". */
static void write_task(const char *dir, const char *id, int timeout_s,
                       const char *sink_option)
{
    char path[PATH_MAX], json[2048];
    snprintf(path, sizeof path, "%s/tasks/%s/sources", dir, id);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "s.csv", "id,v\n1,a\n");
    snprintf(
        json, sizeof json,
        "{\"task_id\": \"%s\", \"question\": \"q\", \"sources\": [{\"name\": \"s\", "
        "\"kind\": \"static\", \"file\": \"sources/s.csv\", \"columns\": [{\"name\": "
        "\"id\"}, {\"name\": \"v\"}], \"ddl\": \"CREATE TABLE s (id BIGINT, v STRING) "
        "WITH ('connector'='kafka','topic'='${topic}','properties.bootstrap."
        "servers'='${bootstrap}','format'='json')\"}], \"sink\": {\"name\": "
        "\"result\", \"changelog\": \"append\", \"ddl\": \"CREATE TABLE result (id "
        "BIGINT) WITH ('connector'='kafka','topic'='${topic}','properties.bootstrap."
        "servers'='${bootstrap}','format'='json'%s)\"}, \"output_schema\": [{\"name\": "
        "\"id\", \"type\": \"BIGINT\"}], \"timeout_s\": %d}\n",
        id, sink_option, timeout_s);
    snprintf(path, sizeof path, "%s/tasks/%s", dir, id);
    write_file(path, "task.json", json);
}

/* A bench of three tasks, one static source and an append sink each: t1
 * (30 s, gold is the row id=1), t2 (1 s, no gold nor evaluation) and t3,
 * whose sink DDL has a placeholder the executor does not fill. */
static void write_bench(const char *dir)
{
    write_file(dir, "task_ids.txt", "t1\nt2\nt3\n");
    write_task(dir, "t1", 30, "");
    write_task(dir, "t2", 1, "");
    write_task(dir, "t3", 30, ",'properties.group.id'='${group}'");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/gold", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "t1.csv", "id\n1\n");
    snprintf(path, sizeof path, "%s/evaluation", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "t1.json", "{}\n");
}

/* Outcomes decided before Kafka or Flink are touched, so an executor
 * pointed at nothing still gives each its own status. */
static void test_outcome(sx_executor_t *executor, const char *bench, const char *task_id,
                         const char *sql, sx_status_t expected, const char *detail)
{
    sx_exec_request_t request = {bench, task_id, sql, 1, "/nonexistent/never.csv", NULL};
    sx_result_t result;
    sx_timings_t timings;
    sx_executor_run(executor, &request, &result, &timings);
    if (result.status != expected || strcmp(result.detail, detail) != 0)
        fprintf(stderr, "got %s: \"%s\"\n", sx_status_name(result.status), result.detail);
    SX_CHECK(result.status == expected);
    SX_CHECK(strcmp(result.detail, detail) == 0);
    SX_CHECK(result.csv == NULL && result.score == 0 && result.attempts == 1);
    SX_CHECK(timings.submit == 0 && timings.run == 0);
    sx_result_clear(&result);
}

/* Past the checks, a Kafka that does not answer is infra trouble (retried
 * elsewhere), never a verdict on the query; the topic in the detail shows the
 * naming scheme sx.<run>.<task>.<attempt>.<table>. Real code, no stand-in. */
static void test_unreachable_kafka(sx_executor_t *executor, const char *bench)
{
    sx_exec_request_t request = {
        bench, "t1", "SELECT id FROM s", 2, "/nonexistent/t1.csv", NULL};
    sx_result_t result;
    sx_timings_t timings;
    sx_executor_run(executor, &request, &result, &timings);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR);
    SX_CHECK(strstr(result.detail, "sx.selftest.t1.2.s") != NULL);
    SX_CHECK(result.attempts == 2 && result.csv == NULL);
    SX_CHECK(timings.replay > 0 && timings.submit == 0);
    sx_result_clear(&result);
}

static rd_kafka_mock_cluster_t *s_mock; /* the mock Kafka of the tests below */

/* Stands in for step_replay's topic creation, which the mock cannot do; the
 * sources are then produced by the real replay_source. */
static int mock_replay(run_t *run)
{
    for (size_t i = 0; i < run->table_count; i++)
        SX_CHECK(rd_kafka_mock_topic_create(s_mock, run->topics[i], 1, 1) == 0);
    sx_error_t err;
    for (size_t i = 0; i < run->task->source_count; i++)
        if (replay_source(run, i, &err) != 0)
            return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    return 0;
}

/* What the fake job writes to the sink topic when its INSERT arrives. */
typedef struct {
    sx_kafka_t *kafka;
    char topic[128];
    const char *value;
} sink_output_t;

static void write_sink(void *arg)
{
    sink_output_t *output = arg;
    sx_kafka_record_t record = {
        .value = output->value, .value_len = strlen(output->value), .timestamp_ms = 1};
    sx_error_t err;
    SX_CHECK(sx_kafka_produce(output->kafka, output->topic, &record, 1, &err) == 0);
}

typedef struct {
    const char *bench;
    const char *bootstrap; /* the mock's */
    const char *csv_dir;
    sx_runtime_t *pair;
    sink_output_t *output;
    int runs;  /* each run has its own run id, so its own topics */
    bool keep; /* the executor's --keep */
} harness_t;

/* Runs task_id (attempt 3, candidate "SELECT id FROM s") on the fake Flink
 * with `script`, the executor watching `pair` (NULL: none); fills *result and
 * returns the fake for its request counts (the caller destroys it). */
static sx_fakeflink_t *run_on_fake(harness_t *h, sx_fakeflink_script_t *script,
                                   const char *task_id, sx_result_t *result)
{
    sx_fakeflink_t *fake = sx_fakeflink_new(script);
    SX_CHECK(fake);
    char run_id[32];
    snprintf(run_id, sizeof run_id, "fake%d", ++h->runs);
    snprintf(h->output->topic, sizeof h->output->topic, "sx.%s.%s.3.result", run_id,
             task_id);
    sx_executor_config_t config = {
        h->bootstrap, sx_fakeflink_url(fake),          sx_fakeflink_url(fake),
        run_id,       SX_PROFILE_SPIDER2_LITE_2025_11, h->keep,
        h->pair};
    sx_error_t err;
    sx_executor_t *executor = sx_executor_new(&config, &err);
    SX_CHECK(executor);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s.csv", h->csv_dir, task_id);
    sx_exec_request_t request = {h->bench, task_id, "SELECT id FROM s", 3, csv, NULL};
    sx_timings_t timings;
    execute(executor, &request, mock_replay, result, &timings);
    SX_CHECK(result->attempts == 3);
    sx_executor_destroy(&executor);
    return fake;
}

/* Exact status and detail, and a CSV exactly when the output was scored. */
static void check_verdict(sx_result_t *result, sx_status_t status, const char *detail)
{
    if (result->status != status || strcmp(result->detail, detail) != 0)
        fprintf(stderr, "got %s: \"%s\"\nwant %s: \"%s\"\n",
                sx_status_name(result->status), result->detail, sx_status_name(status),
                detail);
    SX_CHECK(result->status == status);
    SX_CHECK(strcmp(result->detail, detail) == 0);
    bool scored = status == SX_STATUS_MATCH || status == SX_STATUS_MISMATCH ||
                  status == SX_STATUS_EVAL_ERROR;
    SX_CHECK((result->csv != NULL) == scored);
    SX_CHECK(result->score == (status == SX_STATUS_MATCH));
    sx_result_clear(result);
}

/* One verdict on the fake whose detail does not name the fake's address. */
static sx_fakeflink_t *expect(harness_t *h, sx_fakeflink_script_t *script,
                              const char *task_id, sx_status_t status, const char *detail)
{
    sx_result_t result;
    sx_fakeflink_t *fake = run_on_fake(h, script, task_id, &result);
    check_verdict(&result, status, detail);
    return fake;
}

#define JOB SX_FAKEFLINK_JOB

static const char s_sql_trace[] =
    "org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed.\n"
    "Caused by: org.apache.flink.table.api.ValidationException: SQL validation failed. "
    "Column 'nope' not found in any table\n";
static const char s_query_cause[] =
    "org.apache.flink.runtime.JobException: Recovery is suppressed\n"
    "Caused by: java.lang.ArithmeticException: / by zero\n";
static const char s_slot_cause[] =
    "org.apache.flink.runtime.JobException: Recovery is suppressed\n"
    "Caused by: org.apache.flink.runtime.jobmanager.scheduler."
    "NoResourceAvailableException: Could not acquire the minimum required resources.\n";

/* Verdicts decided by what Flink says, on a pair nobody watches. */
static void test_flink_verdicts(harness_t *h, sink_output_t *output)
{
    char want[SX_ERROR_MAX];
    /* A DDL Flink refuses is the task's fault; an INSERT it refuses, the query's. */
    sx_fakeflink_script_t ddl = {.ddl_error = s_sql_trace};
    sx_fakeflink_t *fake =
        expect(h, &ddl, "t1", SX_STATUS_INPUT_ERROR,
               "task t1: Flink rejected the DDL of s: "
               "org.apache.flink.table.api.ValidationException: SQL "
               "validation failed. Column 'nope' not found in any table");
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t insert = {.insert_error = s_sql_trace};
    fake = expect(h, &insert, "t1", SX_STATUS_FLINK_ERROR,
                  "org.apache.flink.table.api.ValidationException: SQL validation "
                  "failed. Column 'nope' not found in any table");
    sx_fakeflink_destroy(&fake);
    /* A failed job: the query's root cause, or the cluster's. */
    sx_fakeflink_script_t failed = {.states = "RUNNING,FAILED",
                                    .root_exception = s_query_cause};
    fake = expect(h, &failed, "t1", SX_STATUS_FLINK_ERROR,
                  "java.lang.ArithmeticException: / by zero");
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t no_slot = {.states = "FAILED", .root_exception = s_slot_cause};
    fake = expect(h, &no_slot, "t1", SX_STATUS_INFRA_ERROR,
                  "job " JOB " failed: org.apache.flink.runtime.jobmanager.scheduler."
                  "NoResourceAvailableException: Could not acquire the minimum required "
                  "resources.");
    sx_fakeflink_destroy(&fake);
    /* A root cause that cannot be read: never guessed to be the query's. */
    sx_fakeflink_script_t unreadable = {.states = "FAILED", .exceptions_status = 503};
    sx_result_t result;
    sx_fakeflink_t *used = run_on_fake(h, &unreadable, "t1", &result);
    snprintf(want, sizeof want,
             "job " JOB " failed and its root cause is unavailable: GET "
             "%s/jobs/" JOB "/exceptions: HTTP 503: Internal server error.",
             sx_fakeflink_url(used));
    check_verdict(&result, SX_STATUS_INFRA_ERROR, want);
    sx_fakeflink_destroy(&used);
    /* Job-state polls that keep failing: the JobManager, not the query. One
     * failed poll alone is not a verdict (the job then finishes). */
    sx_fakeflink_script_t polls = {.states = "RUNNING,500,500,500"};
    used = run_on_fake(h, &polls, "t1", &result);
    snprintf(want, sizeof want,
             "GET %s/jobs/" JOB "/status: HTTP 500: Internal server error.",
             sx_fakeflink_url(used));
    check_verdict(&result, SX_STATUS_INFRA_ERROR, want);
    /* Four polls, then cleanup cancels the job it last saw running and asks once. */
    SX_CHECK(sx_fakeflink_count(used, "GET /jobs/" JOB "/status") == 5);
    SX_CHECK(sx_fakeflink_count(used, "PATCH /jobs/" JOB "?mode=cancel") == 1);
    sx_fakeflink_destroy(&used);
    output->value = "{\"id\":1}";
    sx_fakeflink_script_t one_miss = {
        .states = "500,FINISHED", .on_insert = write_sink, .arg = output};
    fake = expect(h, &one_miss, "t1", SX_STATUS_MATCH, "");
    sx_fakeflink_destroy(&fake);
    /* Cancelled by someone else: not a verdict on the query. */
    sx_fakeflink_script_t external = {.states = "RUNNING,CANCELED"};
    fake = expect(h, &external, "t1", SX_STATUS_INFRA_ERROR,
                  "job " JOB " was cancelled outside streamex");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    sx_fakeflink_destroy(&fake);
}

/* Verdicts decided while the job is being submitted: a session, DDL or
 * INSERT the cluster cannot take is infra trouble (retried elsewhere), never
 * the task's or the query's fault; the fake's address is in each detail. */
static void test_submit_verdicts(harness_t *h)
{
    char want[SX_ERROR_MAX];
    sx_result_t result;
    sx_fakeflink_script_t no_session = {.session_status = 503};
    sx_fakeflink_t *fake = run_on_fake(h, &no_session, "t1", &result);
    snprintf(want, sizeof want,
             "opening a SQL Gateway session: POST %s/v1/sessions: HTTP 503: "
             "Internal server error.",
             sx_fakeflink_url(fake));
    check_verdict(&result, SX_STATUS_INFRA_ERROR, want);
    SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions/") == 0);
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t ddl = {.ddl_error = s_slot_cause};
    fake = run_on_fake(h, &ddl, "t1", &result);
    snprintf(want, sizeof want,
             "statement result: HTTP 500: org.apache.flink.runtime.jobmanager.scheduler."
             "NoResourceAvailableException: Could not acquire the minimum required "
             "resources.");
    check_verdict(&result, SX_STATUS_INFRA_ERROR, want);
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t insert = {.insert_error = s_slot_cause};
    fake = expect(h, &insert, "t1", SX_STATUS_INFRA_ERROR, want);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    sx_fakeflink_destroy(&fake);
    /* Accepted but no job to watch: nothing to cancel either. */
    sx_fakeflink_script_t no_job = {.no_job_id = true};
    fake = expect(h, &no_job, "t1", SX_STATUS_INFRA_ERROR,
                  "the gateway accepted the INSERT but gave no job ID");
    SX_CHECK(sx_fakeflink_count(fake, "GET /jobs/") == 0);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    sx_fakeflink_destroy(&fake);
}

/* A job that outlives timeout_s (t2: 1 s) is the query's timeout whether or
 * not the cancel works; a failed cancel is tried once more by cleanup. */
static void test_timeouts(harness_t *h)
{
    sx_fakeflink_script_t cancels = {.states = "RUNNING", .after_cancel = "CANCELED"};
    sx_fakeflink_t *fake = expect(h, &cancels, "t2", SX_STATUS_TIMEOUT,
                                  "job did not finish within 1 s; cancelled");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 1);
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t refuses = {.states = "RUNNING", .cancel_status = 500};
    sx_result_t result;
    fake = run_on_fake(h, &refuses, "t2", &result);
    char want[SX_ERROR_MAX];
    snprintf(want, sizeof want,
             "job did not finish within 1 s; cancel failed: PATCH "
             "%s/jobs/" JOB "?mode=cancel: HTTP 500",
             sx_fakeflink_url(fake));
    check_verdict(&result, SX_STATUS_TIMEOUT, want);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 2);
    sx_fakeflink_destroy(&fake);
    /* Never started for want of a slot: infra_error, and cleanup cancels it. */
    sx_fakeflink_script_t no_slot = {
        .states = "RUNNING", .after_cancel = "CANCELED", .vertex_state = "SCHEDULED"};
    fake = expect(h, &no_slot, "t2", SX_STATUS_INFRA_ERROR,
                  "job " JOB ": a task still SCHEDULED after 1 s: the cluster gave it no "
                  "slot");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 1);
    sx_fakeflink_destroy(&fake);
}

/* The job finished: what the sink topic holds decides. */
static void test_output_verdicts(harness_t *h, sink_output_t *output)
{
    sx_fakeflink_script_t finished = {
        .states = "RUNNING,FINISHED", .on_insert = write_sink, .arg = output};
    output->value = "{\"id\":2}";
    sx_fakeflink_t *fake = expect(h, &finished, "t1", SX_STATUS_MISMATCH,
                                  "gold column 0 has no equal column in the prediction");
    sx_fakeflink_destroy(&fake);
    output->value = "not json";
    char want[SX_ERROR_MAX];
    snprintf(want, sizeof want,
             "task t1: output topic sx.fake%d.t1.3.result: offset 0: the value is not "
             "valid JSON: '[' or '{' expected near 'not'",
             h->runs + 1);
    fake = expect(h, &finished, "t1", SX_STATUS_MATERIALIZE_ERROR, want);
    sx_fakeflink_destroy(&fake);
    /* A final CSV that cannot be written is not the query's doing. */
    const char *csv_dir = h->csv_dir;
    h->csv_dir = "/dev/null/csv";
    output->value = "{\"id\":1}";
    fake = expect(h, &finished, "t1", SX_STATUS_INFRA_ERROR,
                  "cannot create the folder of /dev/null/csv/t1.csv");
    sx_fakeflink_destroy(&fake);
    h->csv_dir = csv_dir;
    /* The session is closed after every task (one DELETE beside those of
     * its three statements), unless --keep leaves it (and the topics and
     * job) for a look; the verdict is the same. */
    fake = expect(h, &finished, "t1", SX_STATUS_MATCH, "");
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session/operations/") ==
             3);
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session") == 4);
    sx_fakeflink_destroy(&fake);
    h->keep = true;
    fake = expect(h, &finished, "t1", SX_STATUS_MATCH, "");
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session") == 3);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    sx_fakeflink_destroy(&fake);
    h->keep = false;
    /* Gold and evaluation are the bench's: missing, they are eval_error. */
    output->value = "{\"id\":1}";
    snprintf(want, sizeof want,
             "%s/evaluation/t2.json: cannot open: No such file or directory", h->bench);
    fake = expect(h, &finished, "t2", SX_STATUS_EVAL_ERROR, want);
    sx_fakeflink_destroy(&fake);
}

/* On a pair whose components are not (or no longer) the processes the task
 * started with, a failure is the pair's. The pair here is one that does not
 * run at all (a real sx_runtime_t over an empty folder): the job is cancelled
 * at the first pair check, and a verdict reached before it (the INSERT
 * refused) is turned into infra_error with the original kept in the detail.
 * sx_runtime_test checks dead and restarted components on live processes. */
static void test_pair_changed(harness_t *h, sink_output_t *output)
{
    char dir[] = "/tmp/sx-executor-pair-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_runtime_config_t config;
    sx_runtime_config_defaults(&config, 7);
    config.runtime_dir = dir;
    sx_error_t err;
    h->pair = sx_runtime_new(&config, &err);
    SX_CHECK(h->pair);
    sx_fakeflink_script_t running = {.states = "RUNNING", .after_cancel = "CANCELED"};
    sx_fakeflink_t *fake = expect(h, &running, "t1", SX_STATUS_INFRA_ERROR,
                                  "job " JOB ": pair 7: kafka is not running");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 1);
    sx_fakeflink_destroy(&fake);
    sx_fakeflink_script_t insert = {.insert_error = s_sql_trace};
    fake = expect(h, &insert, "t1", SX_STATUS_INFRA_ERROR,
                  "pair 7: kafka is not running (the attempt had ended as flink_error: "
                  "org.apache.flink.table.api.ValidationException: SQL validation "
                  "failed. Column 'nope' not found in any table)");
    sx_fakeflink_destroy(&fake);
    /* A mismatch too: its CSV is not kept. */
    output->value = "{\"id\":2}";
    sx_fakeflink_script_t finished = {
        .states = "FINISHED", .on_insert = write_sink, .arg = output};
    fake = expect(h, &finished, "t1", SX_STATUS_INFRA_ERROR,
                  "pair 7: kafka is not running (the attempt had ended as mismatch: "
                  "gold column 0 has no equal column in the prediction)");
    sx_fakeflink_destroy(&fake);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/t1.csv", h->csv_dir);
    SX_CHECK(access(csv, F_OK) != 0);
    /* A match stands: nothing wrong was blamed on the query. */
    output->value = "{\"id\":1}";
    fake = expect(h, &finished, "t1", SX_STATUS_MATCH, "");
    sx_fakeflink_destroy(&fake);
    sx_runtime_destroy(&h->pair);
    SX_CHECK(rmdir(dir) == 0);
}

/* On a pair streamex does not own (none given: a shared one), the sweep
 * only lists what earlier runs left: the running job of "streamex old"
 * among the fake's jobs is not cancelled, no topic is deleted. */
static void test_sweep_shared_pair(harness_t *h)
{
    sx_fakeflink_script_t script = {.states = "RUNNING"};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_executor_config_t config = {
        h->bootstrap, sx_fakeflink_url(fake),          sx_fakeflink_url(fake),
        "sweep",      SX_PROFILE_SPIDER2_LITE_2025_11, false,
        NULL};
    sx_error_t err;
    sx_executor_t *executor = sx_executor_new(&config, &err);
    SX_CHECK(executor);
    size_t removed = 99;
    SX_CHECK(sx_executor_sweep(executor, &removed, &err) == 0 && removed == 0);
    SX_CHECK(sx_fakeflink_count(fake, "GET /jobs/overview") == 1);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    sx_executor_destroy(&executor);
    sx_fakeflink_destroy(&fake);
}

static void raise_sigterm(void *arg)
{
    (void)arg;
    kill(getpid(), SIGTERM);
}

/* A stop signal while the job runs is not the query's verdict: infra_error
 * "interrupted by signal 15" (retried elsewhere, never settled as a score),
 * and cleanup cancels the job. The signal comes from the fake Flink's thread
 * the moment the job starts, as a Ctrl-C would. */
static void test_interrupted(harness_t *h, sink_output_t *output)
{
    (void)output;
    sx_fakeflink_script_t running = {
        .states = "RUNNING", .after_cancel = "CANCELED", .on_insert = raise_sigterm};
    sx_fakeflink_t *fake =
        expect(h, &running, "t1", SX_STATUS_INFRA_ERROR, "interrupted by signal 15");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 1);
    sx_fakeflink_destroy(&fake);
}

/* Runs `tests` with the mock Kafka and the harness. */
typedef void(fake_test_fn)(harness_t *h, sink_output_t *output);

static void with_mock_kafka(const char *bench, fake_test_fn *tests)
{
    char reason[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", reason, sizeof reason);
    rd_kafka_t *owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, reason, sizeof reason);
    SX_CHECK(owner);
    s_mock = rd_kafka_mock_cluster_new(owner, 1);
    SX_CHECK(s_mock);
    char csv_dir[PATH_MAX];
    snprintf(csv_dir, sizeof csv_dir, "%s/csv", bench);
    sx_error_t err;
    sink_output_t output = {
        sx_kafka_new(rd_kafka_mock_cluster_bootstraps(s_mock), 5000, &err), "", NULL};
    SX_CHECK(output.kafka);
    harness_t h = {
        bench, rd_kafka_mock_cluster_bootstraps(s_mock), csv_dir, NULL, &output, 0,
        false};
    tests(&h, &output);
    sx_kafka_destroy(&output.kafka);
    rd_kafka_mock_cluster_destroy(s_mock);
    rd_kafka_destroy(owner);
}

static void fake_flink_tests(harness_t *h, sink_output_t *output)
{
    test_flink_verdicts(h, output);
    test_submit_verdicts(h);
    test_timeouts(h);
    test_output_verdicts(h, output);
    test_pair_changed(h, output);
    test_sweep_shared_pair(h);
}

/* A caught signal stays caught for the rest of a process, so the interrupt
 * runs in a child, forked while no thread runs (the mock Kafka and the fake
 * Flink start theirs in the child). */
static void test_interrupt_in_child(const char *bench)
{
    fflush(NULL);
    pid_t child = fork();
    SX_CHECK(child >= 0);
    if (child == 0) {
        SX_CHECK(sx_signals_start() == 0);
        with_mock_kafka(bench, test_interrupted);
        _exit(0);
    }
    int status = 0;
    SX_CHECK(waitpid(child, &status, 0) == child);
    SX_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void sx_executor_test(bool verbose)
{
    sx_log_level_t saved = sx_log_level();
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    char bench[] = "/tmp/sx-executor-test-XXXXXX";
    SX_CHECK(mkdtemp(bench));
    write_bench(bench);
    sx_error_t err;
    sx_executor_config_t config = {"127.0.0.1:1",
                                   "http://127.0.0.1:1",
                                   "http://127.0.0.1:1",
                                   "selftest",
                                   SX_PROFILE_SPIDER2_LITE_2025_11,
                                   false,
                                   NULL};
    sx_executor_t *executor = sx_executor_new(&config, &err);
    SX_CHECK(executor);
    test_outcome(executor, bench, "t1", NULL, SX_STATUS_MISSING_PREDICTION,
                 "no prediction for task t1");
    test_outcome(executor, bench, "t1", "DROP TABLE s", SX_STATUS_REJECTED_SQL,
                 "task t1: rejected: DROP TABLE statement");
    test_outcome(executor, bench, "t1", "SELECT id FROM s; SELECT 1",
                 SX_STATUS_REJECTED_SQL, "task t1: rejected: 2 statements");
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "task t9: %s/tasks/t9: no such folder", bench);
    test_outcome(executor, bench, "t9", "SELECT id FROM s", SX_STATUS_INPUT_ERROR, want);
    test_outcome(executor, bench, "t3", "SELECT id FROM s", SX_STATUS_INPUT_ERROR,
                 "task t3: DDL of sink result: unknown placeholder ${group} in the "
                 "string at line 1, column 162 (only ${topic} and ${bootstrap} are "
                 "filled)");
    test_unreachable_kafka(executor, bench);
    sx_executor_destroy(&executor);
    SX_CHECK(executor == NULL);
    config.run_id = NULL;
    SX_CHECK(sx_executor_new(&config, &err) == NULL);
    test_interrupt_in_child(bench);
    with_mock_kafka(bench, fake_flink_tests);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", bench);
    SX_CHECK(system(command) == 0);
    sx_log_set_level(saved);
}
