/* executor.c: one task through the protocol of docs/execution.md (see
 * executor.h). The steps run in order, each timed: prepare (load the task,
 * check the candidate, convert the sources, fill the DDL), replay (create the
 * task's topics, produce every source and wait for every acknowledgement),
 * submit (the executor's gateway session, reused from the task before or a
 * fresh one, the registered DDL, the INSERT), run (poll the job until it
 * ends or the task timeout cancels it), materialize (read the whole output
 * topic, write the final CSV), score (only now open gold and evaluation),
 * settle (a verdict against the query stands only on a pair whose processes
 * did not change during the task) and cleanup (cancel a job still running,
 * drop the task's tables from the session, delete its topics), which runs
 * whatever happened before, once the result is on its way
 * (sx_executor_finish_task). The first step that fails decides the status;
 * later steps are skipped. */
#include "worker/exec/executor.h"

#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/signals.h"
#include "common/bench/task.h"
#include "worker/sql/ddl.h"
#include "worker/clients/gateway.h"
#include "worker/clients/kafka.h"
#include "worker/exec/materialize.h"
#include "worker/exec/prepare.h"
#include "worker/sql/sqlcheck.h"

#include <czmq.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Per-request deadline of Kafka and gateway calls (not of the job). */
#define CLIENT_TIMEOUT_MS 10000
#define JOB_POLL_MS 100
/* A job's state is asked for this often during its first seconds: most
 * jobs of a benchmark end within them, and the time between a job's end
 * and the poll that sees it is the task's too. A state poll costs the
 * JobManager well under a millisecond. */
#define JOB_FAST_POLL_MS 25
#define JOB_FAST_POLL_S 2.0
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

typedef struct run run_t;

struct _sx_executor_t {
    char *bootstrap;
    char *run_id;
    sx_profile_t profile;
    bool keep;
    sx_kafka_t *kafka;
    sx_gateway_t *gateway; /* its session, once open, serves task after task */
    sx_pair_t *pair;       /* NULL: not checked */
    sx_replays_t *replays; /* shared source topics; NULL: each task replays its own */
    zlist_t *leftover;     /* topics a cleanup could not delete (Kafka was down) */
    run_t *finishing;      /* the last task, until sx_executor_finish_task */
    sx_changelog_trace_fn *trace; /* sx_executor_set_trace */
    void *trace_arg;
    size_t trace_limit;
};

/* Everything one run of one task owns, released by run_release(). */
struct run {
    sx_executor_t *self;
    const sx_exec_request_t *request; /* NULL once sx_executor_run has returned */
    char *task_id;
    char prefix[512]; /* of the task's topic names (topic_prefix) */
    sx_task_t *task;
    char *statement;         /* the candidate as submitted */
    sx_prepare_t **prepared; /* one per source */
    char **topics;           /* one per source, then the sink's */
    char **ddls;             /* same order */
    size_t table_count;      /* sources + 1 */
    size_t own_first;        /* topics[own_first..] are the task's own: not shared */
    size_t topics_created;   /* of its own, made: cleanup deletes them */
    double shared_prepare_s; /* prepare seconds spent in shared replays */
    sx_topic_maker_fn *make_topics; /* NULL: the executor creates the topics */
    void *make_topics_arg;
    bool in_session; /* its DDL went to the session: cleanup drops its tables */
    bool job_live;   /* a job was submitted and not seen ending */
    char job_id[SX_JOB_ID_SIZE];
    sx_pair_identity_t pair_at_start; /* the pair's processes when the task began */
    sx_status_t status;
    int strict; /* the strict verdict beside status, once scored */
    char detail[SX_ERROR_MAX];
    char csv[PATH_MAX];              /* absolute path of the final CSV, "" when none */
    sx_changelog_counts_t changelog; /* the CSV's changelog figures */
};

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
    sx_executor_finish_task(self);
    sx_gateway_destroy(&self->gateway);
    sx_kafka_destroy(&self->kafka);
    zlist_destroy(&self->leftover);
    free(self->bootstrap);
    free(self->run_id);
    free(self);
    *self_p = NULL;
}

void sx_executor_set_replays(sx_executor_t *self, sx_replays_t *replays)
{
    self->replays = replays;
}

void sx_executor_set_trace(sx_executor_t *self, sx_changelog_trace_fn *trace, void *arg,
                           size_t limit)
{
    self->trace = trace;
    self->trace_arg = arg;
    self->trace_limit = limit;
}

/* sx.<run>[.<method>].<task>[.s<sample>].<attempt>: what every topic of one
 * execution starts with, unique per run, method, task, sample and attempt
 * (docs/execution.md, step 3). Not yet sanitized. */
static void topic_prefix(run_t *run)
{
    const sx_exec_request_t *request = run->request;
    char sample[32] = "";
    if (request->sample)
        snprintf(sample, sizeof sample, ".s%d", request->sample);
    snprintf(run->prefix, sizeof run->prefix, "sx.%s.%s%s%s%s.%d", run->self->run_id,
             request->method ? request->method : "", request->method ? "." : "",
             request->task_id, sample, request->attempt);
}

/* <prefix>.<table>, in Kafka's legal characters. */
static char *topic_name(const run_t *run, const char *table)
{
    char raw[1024], legal[256];
    snprintf(raw, sizeof raw, "%s.%s", run->prefix, table);
    sx_kafka_topic_sanitize(raw, legal, sizeof legal);
    return sx_strdup(legal);
}

/* ---- prepare ------------------------------------------------------------- */

/* Source i's DDL for its topic; -1 when the DDL is broken (input_error). */
static int fill_source_ddl(run_t *run, size_t i, const char *topic)
{
    const sx_source_t *source = &run->task->sources[i];
    sx_error_t err;
    free(run->ddls[i]);
    run->ddls[i] = sx_ddl_source(source->ddl, topic, run->self->bootstrap, &err);
    if (!run->ddls[i])
        return fail(run, SX_STATUS_INPUT_ERROR, "task %s: DDL of source %s: %s",
                    run->task->task_id, source->name, err.msg);
    return 0;
}

/* A private source is prepared now and gets the task's own topic; a shared
 * one (with a registry) is prepared by its replay, if it needs one, and its
 * DDL, checked now, is filled once its topic is known. */
static int prepare_tables(run_t *run)
{
    const sx_task_t *task = run->task;
    run->table_count = task->source_count + 1;
    run->own_first = run->self->replays ? task->source_count : 0;
    run->prepared = sx_alloc(task->source_count, sizeof *run->prepared);
    run->topics = sx_alloc(run->table_count, sizeof *run->topics);
    run->ddls = sx_alloc(run->table_count, sizeof *run->ddls);
    sx_error_t err;
    for (size_t i = 0; i < task->source_count; i++) {
        const sx_source_t *source = &task->sources[i];
        if (i < run->own_first) {
            if (fill_source_ddl(run, i, "sx.shared") != 0)
                return -1;
            continue;
        }
        run->prepared[i] = sx_prepare_scan(task->task_id, source, &err);
        if (!run->prepared[i])
            return fail(run, SX_STATUS_INPUT_ERROR, "%s", err.msg);
        run->topics[i] = topic_name(run, source->name);
        if (fill_source_ddl(run, i, run->topics[i]) != 0)
            return -1;
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

/* The verdict of a replay that did not get its records into Kafka. */
static int replay_failed(run_t *run, sx_replay_rc_t rc, const sx_error_t *err)
{
    return fail(
        run, rc == SX_REPLAY_INPUT_ERROR ? SX_STATUS_INPUT_ERROR : SX_STATUS_INFRA_ERROR,
        "%s", err->msg);
}

/* Produces one private source's records in replay order, converted again
 * from its file as they go (the scan kept their event times only); they
 * are in Kafka then, and the scan's memory goes back before the query
 * runs. */
static int replay_source(run_t *run, size_t index)
{
    sx_error_t err;
    sx_replay_rc_t rc =
        sx_replay_produce(run->self->kafka, run->topics[index], run->task->task_id,
                          &run->task->sources[index], run->prepared[index], &err);
    sx_prepare_destroy(&run->prepared[index]);
    return rc == SX_REPLAY_READY ? 0 : replay_failed(run, rc, &err);
}

/* Creates the task's own topics (private sources', the sink's) on the pair's
 * Kafka in one request, counting those cleanup must delete, unless the
 * caller makes them (sx_executor_run_on_made_topics). */
static int make_topics(run_t *run, sx_error_t *err)
{
    const char *const *own = (const char *const *)run->topics + run->own_first;
    size_t count = run->table_count - run->own_first;
    if (run->make_topics)
        return run->make_topics(run->make_topics_arg, own, count, err);
    if (sx_kafka_create_topics(run->self->kafka, own, count, err) != 0)
        return -1;
    run->topics_created = count;
    return 0;
}

/* The shared topic of each source from the registry, replayed now if no
 * task replayed it before. */
static int acquire_shared(run_t *run)
{
    for (size_t i = 0; i < run->own_first; i++) {
        char topic[256];
        double prepare_s = 0;
        sx_error_t err;
        sx_replay_rc_t rc = sx_replays_acquire(run->self->replays, run->self->kafka,
                                               run->task->task_id, &run->task->sources[i],
                                               topic, sizeof topic, &prepare_s, &err);
        run->shared_prepare_s += prepare_s;
        if (rc != SX_REPLAY_READY)
            return replay_failed(run, rc, &err);
        run->topics[i] = sx_strdup(topic);
        if (fill_source_ddl(run, i, topic) != 0)
            return -1;
    }
    return 0;
}

static int step_replay(run_t *run)
{
    sx_error_t err;
    if (acquire_shared(run) != 0)
        return -1;
    if (make_topics(run, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    /* Live and static sources alike are complete in Kafka before the query
     * starts; bounded reading then sees exactly these rows. */
    for (size_t i = run->own_first; i < run->task->source_count; i++)
        if (replay_source(run, i) != 0)
            return -1;
    return 0;
}

/* ---- submit and run ------------------------------------------------------ */

/* `text` as a SQL string literal ('' for each quote) or, with quote '`',
 * as a quoted identifier. */
static char *sql_quote(const char *text, char quote)
{
    char *out = sx_alloc(2 * strlen(text) + 3, 1), *p = out;
    *p++ = quote;
    for (; *text; text++) {
        if (*text == quote)
            *p++ = quote;
        *p++ = *text;
    }
    *p = quote; /* the zeroed allocation ends the string */
    return out;
}

/* Names the task's job (pipeline.name, the sweep's mark) in the session. */
static sx_gateway_rc_t name_job(run_t *run, sx_error_t *err)
{
    char name[512], sample[32] = "";
    if (run->request->sample)
        snprintf(sample, sizeof sample, " sample %d", run->request->sample);
    snprintf(name, sizeof name, JOB_NAME_PREFIX "%s %s%s attempt %d", run->self->run_id,
             run->task->task_id, sample, run->request->attempt);
    char *literal = sql_quote(name, '\'');
    char *set = sx_format("SET 'pipeline.name' = %s", literal);
    sx_gateway_rc_t rc = sx_gateway_configure(run->self->gateway, set, err);
    free(set);
    free(literal);
    return rc;
}

/* The session this task runs in: the executor's own, reused from the task
 * before (whose tables cleanup dropped), or a fresh one when there is none
 * or the one there is no longer answers (the gateway restarted, or closed
 * it after its idle timeout). */
static int begin_session(run_t *run, sx_error_t *err)
{
    sx_gateway_t *gateway = run->self->gateway;
    bool reused = sx_gateway_session(gateway)[0] != '\0';
    if (!reused && sx_gateway_open_session(gateway, NULL, err) != 0)
        return -1;
    if (name_job(run, err) == SX_GATEWAY_OK)
        return 0;
    if (!reused)
        return -1;
    sx_debug("task %s: a fresh session: %s", run->task_id, err->msg);
    sx_gateway_detach_session(gateway);
    if (sx_gateway_open_session(gateway, NULL, err) != 0)
        return -1;
    return name_job(run, err) == SX_GATEWAY_OK ? 0 : -1;
}

static int step_submit(run_t *run)
{
    sx_gateway_t *gateway = run->self->gateway;
    sx_error_t err;
    if (begin_session(run, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    run->in_session = true;
    for (size_t i = 0; i < run->table_count; i++) {
        sx_gateway_rc_t rc = sx_gateway_configure(gateway, run->ddls[i], &err);
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
    return sx_pair_intact(run->self->pair, &run->pair_at_start, err);
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
        bool young = sx_clock_seconds() - submitted_at < JOB_FAST_POLL_S;
        zclock_sleep(young ? JOB_FAST_POLL_MS : JOB_POLL_MS);
    }
}

/* ---- materialize and score ----------------------------------------------- */

/* The relation being folded as the output topic is read. A record that does
 * not fold is remembered and the read goes on to the end, so that a Kafka
 * error still makes the task infra_error as when the topic was read whole
 * first. */
typedef struct {
    sx_materialize_t *relation;
    const sx_executor_t *self; /* its trace */
    size_t traced;
    bool failed;
    sx_error_t err;
} folding_t;

static int fold_message(const sx_kafka_message_t *message, void *arg, sx_error_t *err)
{
    (void)err;
    folding_t *folding = arg;
    if (folding->failed)
        return 0;
    if (sx_materialize_apply(folding->relation, message->offset, message->key,
                             message->key_len, message->value, message->value_len,
                             &folding->err) != 0)
        folding->failed = true;
    const sx_executor_t *self = folding->self;
    if (self->trace && folding->traced < self->trace_limit) {
        folding->traced++;
        self->trace(self->trace_arg, message->offset,
                    sx_materialize_last_kinds(folding->relation), message->key,
                    message->key_len, message->value, message->value_len);
    }
    return 0;
}

static int write_relation(run_t *run, sx_materialize_t *relation)
{
    sx_error_t err;
    const char *path = run->request->csv_path;
    if (sx_mkdirs_for(path, NULL) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "cannot create the folder of %s", path);
    if (sx_materialize_write(relation, path, &err) != 0)
        return fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    if (!realpath(path, run->csv))
        return fail(run, SX_STATUS_INFRA_ERROR, "%s: written but not found again", path);
    return 0;
}

static int step_materialize(run_t *run)
{
    const sx_task_t *task = run->task;
    const char *topic = run->topics[task->source_count];
    folding_t folding = {.relation =
                             sx_materialize_new(task->sink_changelog, task->output_schema,
                                                task->output_column_count),
                         .self = run->self};
    sx_error_t err;
    int rc = 0;
    if (sx_kafka_read_topic_each(run->self->kafka, topic, fold_message, &folding, &err) !=
        0)
        rc = fail(run, SX_STATUS_INFRA_ERROR, "%s", err.msg);
    else if (!folding.failed &&
             sx_materialize_finish(folding.relation, &folding.err) != 0)
        folding.failed = true;
    if (rc == 0 && folding.failed)
        rc = fail(run, SX_STATUS_MATERIALIZE_ERROR, "task %s: output topic %s: %s",
                  task->task_id, topic, folding.err.msg);
    if (rc == 0)
        rc = write_relation(run, folding.relation);
    if (rc == 0)
        sx_materialize_counts(folding.relation, &run->changelog);
    sx_materialize_destroy(&folding.relation);
    /* The consumer's fetched buffers (freed in its own threads' heaps) and
     * the relation go back to the system before scoring reads both CSVs:
     * kept, they would add to the scoring's peak (bench/heavy,
     * docs/internals/measurements.md). */
    malloc_trim(0);
    return rc;
}

/* Gold and evaluation are opened here, after the final CSV exists. */
static void step_score(run_t *run)
{
    run->status =
        sx_score_task(run->request->bench_dir, run->task->task_id, run->csv,
                      run->self->profile, &run->strict, run->detail, sizeof run->detail);
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

/* Drops the task's tables, so that the next task in this session starts
 * from a catalog as empty as a fresh session's: its tables and settings are
 * its own whatever this one did. Every table is in the default database
 * (the DDL check allows no other), and a DROP that fails (a TEMPORARY table,
 * which DROP TABLE refuses, a gateway in trouble) closes the session: the
 * next task opens a fresh one. The task's one setting, the job's name, is
 * set again by every task. */
static void clear_session(run_t *run)
{
    sx_gateway_t *gateway = run->self->gateway;
    if (!sx_gateway_session(gateway)[0] || !run->in_session)
        return;
    sx_error_t err;
    sx_gateway_rc_t rc = SX_GATEWAY_OK;
    for (size_t i = 0; i < run->table_count && rc == SX_GATEWAY_OK; i++) {
        const char *table = i < run->task->source_count ? run->task->sources[i].name
                                                        : run->task->sink_name;
        char *name = sql_quote(table, '`');
        char *drop = sx_format("DROP TABLE IF EXISTS %s", name);
        rc = sx_gateway_configure(gateway, drop, &err);
        free(drop);
        free(name);
    }
    if (rc == SX_GATEWAY_OK)
        return;
    sx_debug("task %s: closing the session: %s", run->task_id, err.msg);
    if (sx_gateway_close_session(gateway, &err) != 0)
        sx_warn("task %s: %s", run->task_id, err.msg);
}

/* Leaves the pair clean for the next task whatever happened. A cleanup
 * problem is logged, not a verdict: the next task's names are fresh anyway. */
static void step_cleanup(run_t *run)
{
    sx_executor_t *self = run->self;
    sx_error_t err;
    if (run->job_live && cancel_job(run, &err) != 0)
        sx_warn("task %s: cancelling job %s: %s", run->task_id, run->job_id, err.msg);
    if (self->keep) {
        sx_info("task %s: keeping topics %s.*, gateway session %s and job %s",
                run->task_id, run->prefix, sx_gateway_session(self->gateway),
                run->job_id[0] ? run->job_id : "(none)");
        sx_gateway_detach_session(self->gateway);
        return;
    }
    clear_session(run);
    const char *const *own = (const char *const *)run->topics + run->own_first;
    if (run->topics_created > 0 &&
        sx_kafka_delete_topics(self->kafka, own, run->topics_created, &err) != 0) {
        sx_warn("task %s: %s (tried again before the next task)", run->task_id, err.msg);
        for (size_t i = 0; i < run->topics_created; i++)
            zlist_append(self->leftover, (char *)own[i]);
    }
}

/* Deletes the topics earlier cleanups could not (the broker was down then;
 * the watchdog has restarted it since). */
static void delete_leftover(sx_executor_t *self)
{
    size_t count = zlist_size(self->leftover);
    if (count == 0)
        return;
    sx_error_t err;
    if (sx_kafka_delete_topic_list(self->kafka, self->leftover, &err) == 0) {
        sx_info("deleted %zu topic(s) an earlier cleanup could not", count);
        zlist_purge(self->leftover);
    } else {
        sx_warn("%s (tried again before the next task)", err.msg);
    }
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

int sx_executor_sweep(sx_executor_t *self, bool owns, size_t *removed, sx_error_t *err)
{
    *removed = 0;
    sweep_jobs(self, owns, removed);
    char **topics = NULL;
    size_t count = 0;
    if (sx_kafka_list_topics(self->kafka, "sx.", &topics, &count, err) != 0)
        return sx_error_prefix(err, "sweep"), -1;
    int rc = 0;
    if (count > 0 && !owns) {
        sx_info("sweep: %zu topic(s) sx.* of earlier runs on a shared pair: left", count);
    } else if (count > 0 &&
               sx_kafka_delete_topics(self->kafka, (const char *const *)topics, count,
                                      err) != 0) {
        rc = -1;
        sx_error_prefix(err, "sweep");
    } else {
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
    /* table_count is set where topics and ddls are allocated. */
    for (size_t i = 0; i < run->table_count; i++) {
        free(run->topics[i]);
        free(run->ddls[i]);
    }
    free(run->prepared);
    free(run->topics);
    free(run->ddls);
    free(run->statement);
    free(run->task_id);
    sx_task_destroy(&run->task);
    free(run);
}

/* Runs the steps in order, timing each; stops at the first that fails. */
static void run_steps(run_t *run, sx_timings_t *timings)
{
    double t = sx_clock_seconds();
    int rc = step_prepare(run);
    timings->prepare = sx_clock_seconds() - t;
    if (rc == 0) {
        t = sx_clock_seconds();
        rc = step_replay(run);
        /* A shared source is prepared when it is first replayed. */
        timings->replay = sx_clock_seconds() - t - run->shared_prepare_s;
        timings->prepare += run->shared_prepare_s;
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
}

static void execute(sx_executor_t *self, const sx_exec_request_t *request,
                    sx_topic_maker_fn *make_topics, void *make_topics_arg,
                    sx_result_t *result, sx_timings_t *timings)
{
    double start = sx_clock_seconds();
    /* The task before, unless its caller finished it already. */
    sx_executor_finish_task(self);
    memset(timings, 0, sizeof *timings);
    run_t *run = sx_new(run_t);
    *run = (run_t){.self = self,
                   .request = request,
                   .task_id = sx_strdup(request->task_id),
                   .make_topics = make_topics,
                   .make_topics_arg = make_topics_arg,
                   .status = SX_STATUS_INFRA_ERROR};
    topic_prefix(run);
    delete_leftover(self);
    if (self->pair)
        sx_pair_identify(self->pair, &run->pair_at_start);
    run_steps(run, timings);
    if (run->status != SX_STATUS_MATCH && run->status != SX_STATUS_MISMATCH &&
        run->status != SX_STATUS_MISSING_PREDICTION)
        sx_debug("task %s attempt %d: %s: %s", request->task_id, request->attempt,
                 sx_status_name(run->status), run->detail);
    sx_result_init(result, request->task_id, run->status, run->detail,
                   run->csv[0] ? run->csv : NULL);
    bool scored = run->status == SX_STATUS_MATCH || run->status == SX_STATUS_MISMATCH;
    result->strict = scored ? run->strict : 0;
    if (run->csv[0]) /* settle removes the CSV of a verdict it takes back */
        result->changelog = run->changelog;
    result->attempts = request->attempt;
    result->seconds = sx_clock_seconds() - start;
    /* Cleanup waits for sx_executor_finish_task: the verdict does not
     * depend on it, so the caller can pass the result on first. */
    run->request = NULL;
    self->finishing = run;
}

double sx_executor_finish_task(sx_executor_t *self)
{
    if (!self->finishing)
        return 0;
    double start = sx_clock_seconds();
    step_cleanup(self->finishing);
    run_release(self->finishing);
    self->finishing = NULL;
    return sx_clock_seconds() - start;
}

void sx_executor_run(sx_executor_t *self, const sx_exec_request_t *request,
                     sx_result_t *result, sx_timings_t *timings)
{
    execute(self, request, NULL, NULL, result, timings);
}

void sx_executor_run_on_made_topics(sx_executor_t *self, const sx_exec_request_t *request,
                                    sx_topic_maker_fn *make_topics, void *arg,
                                    sx_result_t *result, sx_timings_t *timings)
{
    execute(self, request, make_topics, arg, result, timings);
}
