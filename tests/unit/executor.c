/* tests/unit/executor.c: the task executor's tests, first the scripted fake Flink's
 * own self-test. Outcomes decided before Kafka or Flink are touched (missing
 * prediction, rejected SQL, broken task, unreachable Kafka) run against
 * nothing. Every verdict decided on the cluster runs the executor's own code
 * against librdkafka's in-process mock Kafka and the scripted fake Flink of
 * tests/kit/fakeflink.h: the mock has no topic admin API, so only topic
 * creation is stood in for (sx_mockkafka_make_topics, through
 * sx_executor_run_on_made_topics); the replay itself, the job polling,
 * cancel, root cause, materialization, scoring and settling are the real
 * code. They live here rather than in worker/exec/executor.c because the fake
 * Flink is test code, which the program must not carry. The same paths on
 * the real runtime: tests/e2e/exec.sh and tests/e2e/chaos.sh. */
#include "worker/exec/executor.h"

#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/signals.h"
#include "tests/kit/fakeflink.h"
#include "tests/kit/logfile.h"
#include "tests/kit/mockkafka.h"
#include "worker/clients/kafka.h"

#include <czmq.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_file(const char *dir, const char *name, const char *text)
{
    char *path = sx_format("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    free(path);
    SX_CHECK(f);
    fputs(text, f);
    fclose(f);
}

/* source_option and sink_option are one more option of the source's and
 * the sink's WITH list, e.g. ",'k'='v'"; create how the source's DDL begins
 * ("CREATE TABLE", "CREATE TEMPORARY TABLE"); changelog the sink's. */
static void write_task(const char *dir, const char *id, int timeout_s,
                       const char *source_option, const char *sink_option,
                       const char *create, const char *changelog)
{
    char path[PATH_MAX], json[2048];
    snprintf(path, sizeof path, "%s/tasks/%s/sources", dir, id);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "s.csv", "id,v\n1,a\n");
    snprintf(
        json, sizeof json,
        "{\"task_id\": \"%s\", \"question\": \"q\", \"sources\": [{\"name\": \"s\", "
        "\"kind\": \"static\", \"file\": \"sources/s.csv\", \"columns\": [{\"name\": "
        "\"id\"}, {\"name\": \"v\"}], \"ddl\": \"%s s (id BIGINT, v STRING) "
        "WITH ('connector'='kafka','topic'='${topic}','properties.bootstrap."
        "servers'='${bootstrap}','format'='json'%s)\"}], \"sink\": {\"name\": "
        "\"result\", \"changelog\": \"%s\", \"ddl\": \"CREATE TABLE result (id "
        "BIGINT) WITH ('connector'='kafka','topic'='${topic}','properties.bootstrap."
        "servers'='${bootstrap}','format'='json'%s)\"}, \"output_schema\": [{\"name\": "
        "\"id\", \"type\": \"BIGINT\"}], \"timeout_s\": %d}\n",
        id, create, source_option, changelog, sink_option, timeout_s);
    snprintf(path, sizeof path, "%s/tasks/%s", dir, id);
    write_file(path, "task.json", json);
}

/* A bench of eight tasks, one static source and an append sink each: t1
 * (30 s, gold is the row id=1), t2 (1 s, no gold nor evaluation), t3,
 * whose sink DDL has a placeholder the executor does not fill, t4, t1
 * with a TEMPORARY source table, t5, whose source CSV has a row of three
 * fields, t6, whose source DDL has a placeholder the executor does not fill,
 * t7 (30 s, no gold nor evaluation) and t8, t7 with an upsert sink. */
static void write_bench(const char *dir)
{
    const char *group = ",'properties.group.id'='${group}'";
    write_file(dir, "task_ids.txt", "t1\nt2\nt3\nt4\nt5\nt6\nt7\nt8\n");
    write_task(dir, "t1", 30, "", "", "CREATE TABLE", "append");
    write_task(dir, "t2", 1, "", "", "CREATE TABLE", "append");
    write_task(dir, "t3", 30, "", group, "CREATE TABLE", "append");
    write_task(dir, "t4", 30, "", "", "CREATE TEMPORARY TABLE", "append");
    write_task(dir, "t5", 30, "", "", "CREATE TABLE", "append");
    write_task(dir, "t6", 30, group, "", "CREATE TABLE", "append");
    write_task(dir, "t7", 30, "", "", "CREATE TABLE", "append");
    write_task(dir, "t8", 30, "", "", "CREATE TABLE", "upsert");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tasks/t5/sources", dir);
    write_file(path, "s.csv", "id,v\n1,a,b\n");
    snprintf(path, sizeof path, "%s/gold", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "t1.csv", "id\n1\n");
    write_file(path, "t4.csv", "id\n1\n");
    snprintf(path, sizeof path, "%s/evaluation", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    write_file(path, "t1.json", "{}\n");
    write_file(path, "t4.json", "{}\n");
}

/* Outcomes decided before Kafka or Flink are touched, so an executor
 * pointed at nothing still gives each its own status. */
static void test_outcome(sx_executor_t *executor, const char *bench, const char *task_id,
                         const char *sql, sx_status_t expected, const char *detail)
{
    sx_exec_request_t request = {bench, task_id, sql, 1, "/nonexistent/never.csv",
                                 NULL,  0};
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
 * elsewhere), never a verdict on the query. The first step it fails is the
 * creation of the task's own topics, in one request (the source's and the
 * sink's), which the detail names by the scheme sx.<run>.<task>.<attempt>.
 * <table>: nothing is replayed into topics that were not made. Real code, no
 * stand-in; the cause after the prefix is librdkafka's. */
static void test_unreachable_kafka(sx_executor_t *executor, const char *bench)
{
    sx_exec_request_t request = {
        bench, "t1", "SELECT id FROM s", 2, "/nonexistent/t1.csv", NULL, 0};
    sx_result_t result;
    sx_timings_t timings;
    sx_executor_run(executor, &request, &result, &timings);
    static const char want[] =
        "Kafka at 127.0.0.1:1: creating topic sx.selftest.t1.2.s and others: ";
    if (strncmp(result.detail, want, strlen(want)) != 0)
        fprintf(stderr, "got \"%s\"\nwant \"%s...\"\n", result.detail, want);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR);
    SX_CHECK(strncmp(result.detail, want, strlen(want)) == 0);
    SX_CHECK(result.attempts == 2 && result.csv == NULL);
    SX_CHECK(timings.replay > 0 && timings.submit == 0);
    sx_result_clear(&result);
}

/* The mock Kafka of the tests below. Topic creation, which it cannot do,
 * is stood in for by sx_mockkafka_make_topics; the sources are then
 * produced by the executor's real replay. */
static sx_mockkafka_t *s_mock;

/* What the fake job writes to the sink topic when its INSERT arrives: one
 * record a line of value, each with key (NULL: none). */
typedef struct {
    sx_kafka_t *kafka;
    char topic[128];
    const char *value;
    const char *key;
} sink_output_t;

static void write_sink(void *arg)
{
    sink_output_t *output = arg;
    sx_kafka_record_t records[4];
    size_t count = 0;
    const char *line = output->value;
    for (;;) {
        size_t len = strcspn(line, "\n");
        records[count++] =
            (sx_kafka_record_t){.key = output->key,
                                .key_len = output->key ? strlen(output->key) : 0,
                                .value = line,
                                .value_len = len,
                                .timestamp_ms = 1};
        if (!line[len] || count == 4)
            break;
        line += len + 1;
    }
    sx_error_t err;
    SX_CHECK(sx_kafka_produce(output->kafka, output->topic, records, count, &err) == 0);
}

typedef struct {
    const char *bench;
    const char *bootstrap; /* the mock's */
    const char *csv_dir;
    sx_pair_t *pair;
    sink_output_t *output;
    int runs;                       /* each run has its own run id, so its own topics */
    bool keep;                      /* the executor's --keep */
    sx_replays_t *replays;          /* shared source topics; NULL: private replays */
    sx_topic_maker_fn *make_topics; /* NULL: sx_mockkafka_make_topics */
    void *make_topics_arg;
    sx_changelog_trace_fn *trace; /* the executor's trace, NULL: none */
    void *trace_arg;
    size_t trace_limit;
} harness_t;

/* An executor on the mock Kafka, the gateway `fake` and the REST API at
 * rest_url, with run id run_id, --keep and the pair as the harness says. */
static sx_executor_t *executor_at(const harness_t *h, const sx_fakeflink_t *fake,
                                  const char *rest_url, const char *run_id)
{
    sx_executor_config_t config = {
        h->bootstrap, sx_fakeflink_url(fake),          rest_url,
        run_id,       SX_PROFILE_SPIDER2_LITE_2025_11, h->keep,
        h->pair};
    sx_error_t err;
    sx_executor_t *executor = sx_executor_new(&config, &err);
    SX_CHECK(executor);
    return executor;
}

/* The same with `fake` as its REST API too. */
static sx_executor_t *executor_on(const harness_t *h, const sx_fakeflink_t *fake,
                                  const char *run_id)
{
    return executor_at(h, fake, sx_fakeflink_url(fake), run_id);
}

/* The steps of a run that took `wall` seconds: each took 0 or more, and
 * together no more than the run (they follow one another within it; a
 * shared source's preparation, timed inside the replay, counts as
 * preparing); the cleanup is left for sx_executor_finish_task. A
 * microsecond of slack for the rounding of the clock's readings. */
static void check_timings(const sx_timings_t *timings, double wall)
{
    double sum = 0;
    for (int step = 0; step < SX_STEP_COUNT; step++) {
        double seconds = sx_step_seconds(timings, step);
        SX_CHECK(seconds >= -1e-6 && seconds <= wall + 1e-6);
        sum += seconds;
    }
    SX_CHECK(sum <= wall + 1e-6 && timings->cleanup == 0);
}

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
    sx_executor_t *executor = executor_on(h, fake, run_id);
    sx_executor_set_replays(executor, h->replays);
    sx_executor_set_trace(executor, h->trace, h->trace_arg, h->trace_limit);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s.csv", h->csv_dir, task_id);
    sx_exec_request_t request = {h->bench, task_id, "SELECT id FROM s", 3, csv, NULL, 0};
    sx_timings_t timings;
    double start = sx_clock_seconds();
    if (h->make_topics)
        sx_executor_run_on_made_topics(executor, &request, h->make_topics,
                                       h->make_topics_arg, result, &timings);
    else
        sx_executor_run_on_made_topics(executor, &request, sx_mockkafka_make_topics,
                                       s_mock, result, &timings);
    check_timings(&timings, sx_clock_seconds() - start);
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
    SX_CHECK(result->changelog.known == scored); /* the figures of the CSV's changelog */
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

/* The verdict of a gateway that cannot open a session (HTTP 503). */
static void check_no_session(sx_result_t *result, sx_fakeflink_t *fake)
{
    char want[SX_ERROR_MAX];
    snprintf(want, sizeof want,
             "opening a SQL Gateway session: POST %s/v1/sessions: HTTP 503: "
             "Internal server error.",
             sx_fakeflink_url(fake));
    check_verdict(result, SX_STATUS_INFRA_ERROR, want);
}

/* Verdicts decided while the job is being submitted: a session, DDL or
 * INSERT the cluster cannot take is infra trouble (retried elsewhere), never
 * the task's or the query's fault; the fake's address is in each detail. */
static void test_submit_verdicts(harness_t *h)
{
    sx_result_t result;
    sx_fakeflink_script_t no_session = {.session_status = 503};
    sx_fakeflink_t *fake = run_on_fake(h, &no_session, "t1", &result);
    check_no_session(&result, fake);
    SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions/") == 0);
    sx_fakeflink_destroy(&fake);
    /* The job's name (SET) or a DDL refused: no INSERT, nor a fresh session
     * for a fresh one's refusal. Requests to configure the session: the SET
     * alone; the SET, the refused CREATE and cleanup's two DROPs. */
    sx_fakeflink_script_t refused[] = {{.set_error = s_slot_cause},
                                       {.ddl_error = s_slot_cause}};
    const int configures[] = {1, 4};
    for (int i = 0; i < 2; i++) {
        fake = expect(
            h, &refused[i], "t1", SX_STATUS_INFRA_ERROR,
            "configuring the session: HTTP 500: org.apache.flink.runtime.jobmanager."
            "scheduler.NoResourceAvailableException: Could not acquire the minimum "
            "required resources.");
        SX_CHECK(sx_fakeflink_count(fake, "POST /v2/sessions/fake-session/"
                                          "configure-session") == configures[i]);
        SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions/fake-session/statements") ==
                 0);
        sx_fakeflink_destroy(&fake);
    }
    sx_fakeflink_script_t insert = {.insert_error = s_slot_cause};
    fake = expect(h, &insert, "t1", SX_STATUS_INFRA_ERROR,
                  "statement result: HTTP 500: org.apache.flink.runtime.jobmanager."
                  "scheduler.NoResourceAvailableException: Could not acquire the minimum "
                  "required resources.");
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
    /* As Flink does, CANCELLING before CANCELED: the cancel is waited for,
     * and cleanup has nothing left to cancel. */
    sx_fakeflink_script_t slow = {.states = "RUNNING",
                                  .after_cancel = "CANCELLING,CANCELLING,CANCELED"};
    fake = expect(h, &slow, "t2", SX_STATUS_TIMEOUT,
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
    /* The job's tasks cannot be read at the timeout: still the query's
     * timeout, never a guess that the cluster gave it no slot. */
    sx_fakeflink_script_t unknown = {
        .states = "RUNNING", .after_cancel = "CANCELED", .job_status = 500};
    fake = expect(h, &unknown, "t2", SX_STATUS_TIMEOUT,
                  "job did not finish within 1 s; cancelled");
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB "?mode=cancel") == 1);
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
    /* A record that does not fold; of several, the first is named. An
     * upsert sink's values (t8) are read once the topic is read to its end
     * (only each key's latest counts): one that does not fold then is
     * materialize_error too. */
    const struct {
        const char *task, *key, *value;
    } unfolding[] = {{"t1", NULL, "not json"},
                     {"t1", NULL, "not json\n{\"id\":1}\n[]"},
                     {"t8", "{\"id\":1}", "not json"}};
    char want[SX_ERROR_MAX];
    for (size_t i = 0; i < sizeof unfolding / sizeof unfolding[0]; i++) {
        output->key = unfolding[i].key;
        output->value = unfolding[i].value;
        snprintf(want, sizeof want,
                 "task %s: output topic sx.fake%d.%s.3.result: offset 0: the value is "
                 "not valid JSON: '[' or '{' expected near 'not'",
                 unfolding[i].task, h->runs + 1, unfolding[i].task);
        fake = expect(h, &finished, unfolding[i].task, SX_STATUS_MATERIALIZE_ERROR, want);
        sx_fakeflink_destroy(&fake);
    }
    output->key = NULL;
    /* A final CSV that cannot be written is not the query's doing. */
    const char *csv_dir = h->csv_dir;
    h->csv_dir = "/dev/null/csv";
    output->value = "{\"id\":1}";
    fake = expect(h, &finished, "t1", SX_STATUS_INFRA_ERROR,
                  "cannot create the folder of /dev/null/csv/t1.csv");
    sx_fakeflink_destroy(&fake);
    h->csv_dir = csv_dir;
    /* Nor one that cannot take the final CSV's name (a folder has it). */
    char taken[512];
    snprintf(taken, sizeof taken, "%s/t1.csv", h->csv_dir);
    unlink(taken);
    SX_CHECK(mkdir(taken, 0755) == 0);
    snprintf(want, sizeof want, "%s: cannot write the final CSV: Is a directory", taken);
    fake = expect(h, &finished, "t1", SX_STATUS_INFRA_ERROR, want);
    sx_fakeflink_destroy(&fake);
    SX_CHECK(rmdir(taken) == 0);
    /* The DDL goes through configure-session (one request each), the
     * INSERT is the one statement whose operation is closed; the task's
     * tables are dropped after it, and the session is closed with the
     * executor. --keep leaves tables, session (and topics and job) for a
     * look; the verdict is the same. */
    fake = expect(h, &finished, "t1", SX_STATUS_MATCH, "");
    SX_CHECK(sx_fakeflink_count(fake,
                                "POST /v2/sessions/fake-session/configure-session") == 5);
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session/operations/") ==
             1);
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session") == 2);
    SX_CHECK(sx_fakeflink_tables(fake) == 0);
    sx_fakeflink_destroy(&fake);
    h->keep = true;
    fake = expect(h, &finished, "t1", SX_STATUS_MATCH, "");
    SX_CHECK(sx_fakeflink_count(fake, "DELETE /v1/sessions/fake-session") == 1);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    SX_CHECK(sx_fakeflink_tables(fake) == 2);
    sx_fakeflink_destroy(&fake);
    h->keep = false;
    /* Gold and evaluation are the bench's: missing, they are eval_error. A
     * task of 30 s (t7): on a loaded machine t2's 1 s can pass in the
     * submit alone, and the verdict is then timeout. */
    output->value = "{\"id\":1}";
    snprintf(want, sizeof want,
             "%s/evaluation/t7.json: cannot open: No such file or directory", h->bench);
    fake = expect(h, &finished, "t7", SX_STATUS_EVAL_ERROR, want);
    sx_fakeflink_destroy(&fake);
}

/* The records the trace saw: "OFFSET:KINDS:KEY:VALUE;" each. */
static void trace_into(void *arg, int64_t offset, unsigned kinds, const void *key,
                       size_t key_len, const void *value, size_t value_len)
{
    char *seen = arg;
    size_t used = strlen(seen);
    snprintf(seen + used, 512 - used, "%lld:%#x:%.*s:%.*s;", (long long)offset, kinds,
             (int)key_len, key ? (const char *)key : "", (int)value_len,
             value ? (const char *)value : "");
}

/* A result carries its changelog's figures: an upsert sink (t8) that wrote
 * one key three times is an insert and two update_afters, one row; the
 * trace sees the first two records as they came. */
static void test_changelog_figures(harness_t *h, sink_output_t *output)
{
    sx_fakeflink_script_t finished = {
        .states = "RUNNING,FINISHED", .on_insert = write_sink, .arg = output};
    output->key = "{\"id\":1}";
    output->value = "{\"id\":1}\n{\"id\":1}\n{\"id\":1}";
    char seen[512] = "";
    h->trace = trace_into;
    h->trace_arg = seen;
    h->trace_limit = 2;
    sx_result_t result;
    sx_fakeflink_t *fake = run_on_fake(h, &finished, "t8", &result);
    SX_CHECK(result.status == SX_STATUS_EVAL_ERROR && result.changelog.known);
    const uint64_t want[SX_CHANGE_KINDS] = {1, 0, 2, 0, 0};
    SX_CHECK(memcmp(result.changelog.records, want, sizeof want) == 0);
    SX_CHECK(result.changelog.rows == 1);
    if (strcmp(seen, "0:0x1:{\"id\":1}:{\"id\":1};1:0x4:{\"id\":1}:{\"id\":1};") != 0)
        fprintf(stderr, "trace saw %s\n", seen);
    SX_CHECK(strcmp(seen, "0:0x1:{\"id\":1}:{\"id\":1};1:0x4:{\"id\":1}:{\"id\":1};") ==
             0);
    sx_result_clear(&result);
    sx_fakeflink_destroy(&fake);
    h->trace = NULL;
    output->key = NULL;
}

/* Kafka refusing a source's records (a Produce error librdkafka does not
 * retry, injected into the mock) is infra_error before any session is
 * opened, with Kafka's reason; `topic` is the source topic named. */
static void expect_refused_replay(harness_t *h, const char *topic)
{
    rd_kafka_mock_push_request_errors(sx_mockkafka_cluster(s_mock), 0 /* Produce */, 1,
                                      RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    sx_fakeflink_script_t script = {.states = "FINISHED"};
    sx_result_t result;
    sx_fakeflink_t *fake = run_on_fake(h, &script, "t1", &result);
    char want[SX_ERROR_MAX];
    snprintf(want, sizeof want, "Kafka at %s: %s", h->bootstrap, topic);
    if (result.status != SX_STATUS_INFRA_ERROR ||
        strncmp(result.detail, want, strlen(want)))
        fprintf(stderr, "got %s: \"%s\"\n", sx_status_name(result.status), result.detail);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR && result.csv == NULL);
    SX_CHECK(strncmp(result.detail, want, strlen(want)) == 0);
    SX_CHECK(strcmp(strrchr(result.detail, ':'), ": Topic authorization failed") == 0);
    SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions") == 0);
    sx_result_clear(&result);
    sx_fakeflink_destroy(&fake);
}

static void broker_down(void *arg)
{
    (void)arg;
    SX_CHECK(rd_kafka_mock_broker_set_down(sx_mockkafka_cluster(s_mock), 1) == 0);
}

/* Kafka gone when the finished job's output is read (its broker taken down
 * the moment the job starts): infra_error naming the output topic once the
 * client's 10 s deadline passes, never a verdict on an output nobody read. */
static void test_output_unreadable(harness_t *h)
{
    sx_fakeflink_script_t script = {.states = "RUNNING,FINISHED",
                                    .on_insert = broker_down};
    sx_result_t result;
    sx_fakeflink_t *fake = run_on_fake(h, &script, "t1", &result);
    SX_CHECK(rd_kafka_mock_broker_set_up(sx_mockkafka_cluster(s_mock), 1) == 0);
    char want[SX_ERROR_MAX];
    snprintf(want, sizeof want,
             "Kafka at %s: offsets of sx.fake%d.t1.3.result: ", h->bootstrap, h->runs);
    if (result.status != SX_STATUS_INFRA_ERROR ||
        strncmp(result.detail, want, strlen(want)) != 0)
        fprintf(stderr, "got %s: \"%s\"\n", sx_status_name(result.status), result.detail);
    SX_CHECK(result.status == SX_STATUS_INFRA_ERROR && result.csv == NULL);
    SX_CHECK(strncmp(result.detail, want, strlen(want)) == 0);
    sx_result_clear(&result);
    sx_fakeflink_destroy(&fake);
}

/* task_id's verdict is input_error `detail`, decided before a session was
 * opened: nothing of the task reached Flink. */
static void expect_input_error(harness_t *h, const char *task_id, const char *detail)
{
    sx_fakeflink_script_t script = {.states = "FINISHED"};
    sx_fakeflink_t *fake = expect(h, &script, task_id, SX_STATUS_INPUT_ERROR, detail);
    SX_CHECK(sx_fakeflink_count(fake, "POST /v1/sessions") == 0);
    sx_fakeflink_destroy(&fake);
}

/* Verdicts decided by the replay, private (the task's own source topic) or
 * through a registry of shared source topics: a source whose rows do not
 * convert is the task's input_error, Kafka refusing the records is
 * infra_error; neither reaches Flink. */
static void test_replay_verdicts(harness_t *h, sink_output_t *output)
{
    (void)output;
    char topic[128];
    snprintf(topic, sizeof topic, "sx.fake%d.t1.3.s", h->runs + 1);
    expect_refused_replay(h, topic);
    sx_error_t err;
    h->replays = sx_replays_new(h->bootstrap, "reg", false, &err);
    SX_CHECK(h->replays);
    sx_replays_set_topic_maker(h->replays, sx_mockkafka_make_topics, s_mock);
    expect_input_error(h, "t5",
                       "task t5: sources/s.csv:2: 3 fields where the header has 2");
    /* A shared source's DDL is checked before its replay: never replayed. */
    expect_input_error(h, "t6",
                       "task t6: DDL of source s: unknown placeholder ${group} in the "
                       "string at line 1, column 167 (only ${topic} and ${bootstrap} are "
                       "filled)");
    SX_CHECK(sx_replays_count(h->replays) == 1);
    expect_refused_replay(h, "sx.reg.src.");
    SX_CHECK(sx_replays_count(h->replays) == 2);
    sx_replays_destroy(&h->replays);
}

/* A topic maker that first adds a row to the source file `arg` names, so
 * that the file changes between its scan (prepare) and its replay. */
static int make_topics_after_edit(void *arg, const char *const *topics, size_t count,
                                  sx_error_t *err)
{
    FILE *f = fopen(arg, "a");
    SX_CHECK(f);
    fputs("2,b\n", f);
    fclose(f);
    return sx_mockkafka_make_topics(s_mock, topics, count, err);
}

/* A private source whose file changed after it was scanned is the task's
 * input_error naming the first line that differs: its records are
 * converted again as they are replayed, and never unchecked ones. */
static void test_source_changed(harness_t *h)
{
    char dir[PATH_MAX], path[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/tasks/t7/sources", h->bench);
    snprintf(path, sizeof path, "%s/s.csv", dir);
    h->make_topics = make_topics_after_edit;
    h->make_topics_arg = path;
    expect_input_error(h, "t7",
                       "task t7: sources/s.csv:3: the file changed since it was read");
    h->make_topics = NULL;
    write_file(dir, "s.csv", "id,v\n1,a\n");
}

/* On a pair whose components are not (or no longer) the processes the task
 * started with, a failure is the pair's. The pair here is one that does not
 * run at all (a real sx_pair_t over an empty folder): the job is cancelled
 * at the first pair check, and a verdict reached before it (the INSERT
 * refused) is turned into infra_error with the original kept in the detail.
 * sx_pair_test checks dead and restarted components on live processes. */
static void test_pair_changed(harness_t *h, sink_output_t *output)
{
    char dir[] = "/tmp/sx-executor-pair-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_pair_config_t config;
    sx_pair_config_defaults(&config, 7);
    config.runtime_dir = dir;
    sx_error_t err;
    h->pair = sx_pair_new(&config, &err);
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
    sx_pair_destroy(&h->pair);
    SX_CHECK(rmdir(dir) == 0);
}

/* Sweeps with `executor`, owning the pair or not, at info level; returns
 * sx_executor_sweep's value, *logged what it logged (the caller frees). */
static int sweep_logged(sx_executor_t *executor, bool owns, const char *log,
                        size_t *removed, sx_error_t *err, char **logged)
{
    sx_logfile_t caught;
    sx_logfile_start(&caught, log, SX_LOG_INFO);
    *removed = 99;
    int rc = sx_executor_sweep(executor, owns, removed, err);
    sx_logfile_stop(&caught);
    *logged = sx_logfile_messages(&caught);
    return rc;
}

/* Whether `logged` is `want`, saying what it is if not. */
static bool logged_as(const char *logged, const char *want)
{
    if (strcmp(logged, want) == 0)
        return true;
    fprintf(stderr, "logged:\n%swant:\n%s", logged, want);
    return false;
}

/* On a pair the caller does not own (a shared one), the sweep only says
 * what earlier runs left: the running job of "streamex old" among the
 * fake's jobs, not cancelled, and the sx.* topics Kafka lists (the earlier
 * tests'), not deleted; it warns of nothing. A Flink whose job list cannot
 * be read is warned of, and the topics are still looked at. On a pair the
 * caller owns, the job is cancelled and counted, then the topics deleted:
 * the mock Kafka cannot delete topics (no admin API: librdkafka gives up
 * after the executor's 10 s), so the sweep fails naming the deletion, then
 * librdkafka's cause, with the cancelled job its one removal and no topic
 * said deleted. A real deletion: e2e_exec. */
static void test_sweep(harness_t *h)
{
    char **topics = NULL;
    size_t count = 0, removed = 0;
    sx_error_t err;
    SX_CHECK(sx_kafka_list_topics(h->output->kafka, "sx.", &topics, &count, &err) == 0);
    sx_kafka_topics_free(&topics, count);
    SX_CHECK(count > 0);
    char left[128], want[512], log[PATH_MAX], *logged = NULL;
    snprintf(left, sizeof left,
             "sweep: %zu topic(s) sx.* of earlier runs on a shared pair: left\n", count);
    snprintf(log, sizeof log, "%s/sweep.log", h->bench);
    sx_fakeflink_script_t script = {.states = "RUNNING"};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);

    sx_executor_t *executor = executor_on(h, fake, "sweep");
    SX_CHECK(sweep_logged(executor, false, log, &removed, &err, &logged) == 0);
    snprintf(want, sizeof want,
             "sweep: job " JOB " of an earlier run still runs (shared pair: left)\n%s",
             left);
    SX_CHECK(logged_as(logged, want) && removed == 0);
    SX_CHECK(sx_fakeflink_count(fake, "GET /jobs/overview") == 1);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH ") == 0);
    free(logged);

    SX_CHECK(sweep_logged(executor, true, log, &removed, &err, &logged) == -1);
    SX_CHECK(logged_as(logged, "sweep: cancelled job " JOB " left by an earlier run\n"));
    snprintf(want, sizeof want, "sweep: Kafka at %s: deleting topics: ", h->bootstrap);
    if (strncmp(err.msg, want, strlen(want)) != 0)
        fprintf(stderr, "got \"%s\"\nwant \"%s...\"\n", err.msg, want);
    SX_CHECK(strncmp(err.msg, want, strlen(want)) == 0 && removed == 1);
    SX_CHECK(sx_fakeflink_count(fake, "PATCH /jobs/" JOB) == 1);
    free(logged);
    sx_executor_destroy(&executor);

    executor = executor_at(h, fake, "http://127.0.0.1:1", "sweep");
    SX_CHECK(sweep_logged(executor, false, log, &removed, &err, &logged) == 0);
    static const char listing[] = "sweep: listing jobs: ";
    const char *next = strchr(logged, '\n');
    if (strncmp(logged, listing, strlen(listing)) != 0 || !next)
        fprintf(stderr, "logged:\n%s", logged);
    SX_CHECK(strncmp(logged, listing, strlen(listing)) == 0);
    SX_CHECK(next && logged_as(next + 1, left) && removed == 0);
    free(logged);
    sx_executor_destroy(&executor);
    sx_fakeflink_destroy(&fake);
}

/* Runs task_id (attempt `attempt`, so its topics are new) on an executor
 * the test keeps; the fake writes `value` to the sink when the job starts
 * if the script says on_insert = write_sink. */
static void run_on(sx_executor_t *executor, harness_t *h, const char *task_id,
                   int attempt, sx_result_t *result)
{
    snprintf(h->output->topic, sizeof h->output->topic, "sx.reuse.%s.%d.result", task_id,
             attempt);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s.csv", h->csv_dir, task_id);
    sx_exec_request_t request = {h->bench, task_id, "SELECT id FROM s", attempt, csv,
                                 NULL,     0};
    sx_timings_t timings;
    sx_executor_run_on_made_topics(executor, &request, sx_mockkafka_make_topics, s_mock,
                                   result, &timings);
    SX_CHECK(timings.cleanup == 0);
}

/* t1 on the reused session: it matches (its CREATE TABLE, without IF NOT
 * EXISTS, would be refused had a table of the task before been left), its
 * job has its own name, and after its cleanup the catalog is empty. */
static void check_clean_next(sx_executor_t *executor, harness_t *h, sx_fakeflink_t *fake,
                             sx_fakeflink_script_t *script, int attempt)
{
    h->output->value = "{\"id\":1}";
    *script = (sx_fakeflink_script_t){
        .states = "FINISHED", .on_insert = write_sink, .arg = h->output};
    sx_result_t result;
    run_on(executor, h, "t1", attempt, &result);
    check_verdict(&result, SX_STATUS_MATCH, "");
    char name[256], want[256];
    sx_fakeflink_job_name(fake, name, sizeof name);
    snprintf(want, sizeof want, "streamex reuse t1 attempt %d", attempt);
    SX_CHECK(strcmp(name, want) == 0);
    SX_CHECK(sx_executor_finish_task(executor) > 0);
    SX_CHECK(sx_fakeflink_tables(fake) == 0);
}

/* Sessions the fake opened and closed (requests on /v1/sessions itself,
 * not on what is below it). */
static int sessions(sx_fakeflink_t *fake, const char *method)
{
    char path[64], below[64];
    snprintf(path, sizeof path, "%s /v1/sessions", method);
    snprintf(below, sizeof below, "%s /v1/sessions/%s", method,
             strcmp(method, "POST") == 0 ? "" : "fake-session/");
    return sx_fakeflink_count(fake, path) - sx_fakeflink_count(fake, below);
}

/* Finishes the task on `executor` (its cleanup); returns what that warned,
 * one message a line (the caller frees). */
static char *finish_warned(sx_executor_t *executor, const harness_t *h)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/cleanup.log", h->bench);
    sx_logfile_t caught;
    sx_logfile_start(&caught, log, SX_LOG_WARN);
    sx_executor_finish_task(executor);
    sx_logfile_stop(&caught);
    return sx_logfile_messages(&caught);
}

/* The gateway restarts while a task runs on `executor`: the cleanup can
 * neither drop the task's tables nor close the session, which is one
 * warning, not a verdict (the next task opens a fresh session). */
static void check_cleanup_session_lost(sx_executor_t *executor, harness_t *h,
                                       sx_fakeflink_t *fake, int attempt)
{
    sx_result_t result;
    run_on(executor, h, "t1", attempt, &result);
    check_verdict(&result, SX_STATUS_MATCH, "");
    sx_fakeflink_forget_session(fake);
    char *warned = finish_warned(executor, h);
    /* The DELETE's URL names the fake's port. */
    static const char closing[] = "task t1: closing SQL Gateway session: DELETE http",
                      lost[] = "/v1/sessions/fake-session: HTTP 500: "
                               "org.apache.flink.table.gateway.api.utils."
                               "SqlGatewayException: Session 'fake-session' does not "
                               "exist.\n";
    size_t n = strlen(warned);
    bool one_line = n > strlen(lost) && strncmp(warned, closing, strlen(closing)) == 0 &&
                    strcmp(warned + n - strlen(lost), lost) == 0 &&
                    strchr(warned, '\n') == warned + n - 1;
    if (!one_line)
        fprintf(stderr, "logged:\n%s", warned);
    SX_CHECK(one_line);
    free(warned);
}

/* One executor keeps one gateway session, task after task, whatever the
 * task before did: matched, failed in Flink, timed out (its job cancelled),
 * its job cancelled by someone else; the task after it sees none of its
 * tables and names its own job. A table cleanup cannot drop (a TEMPORARY
 * one: DROP TABLE refuses it) closes the session, and a session the gateway
 * forgot (it restarted) is replaced: the next task gets a fresh session, or
 * infra_error when the gateway cannot open one. */
static void test_session_reuse(harness_t *h, sink_output_t *output)
{
    sx_fakeflink_script_t script = {0};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_executor_t *executor = executor_on(h, fake, "reuse");
    output->value = "{\"id\":1}";
    struct {
        const char *task;
        sx_fakeflink_script_t script;
        sx_status_t status;
    } before[] = {
        {"t1",
         {.states = "FINISHED", .on_insert = write_sink, .arg = output},
         SX_STATUS_MATCH},
        {"t1", {.insert_error = s_sql_trace}, SX_STATUS_FLINK_ERROR},
        {"t2", {.states = "RUNNING", .after_cancel = "CANCELED"}, SX_STATUS_TIMEOUT},
        {"t1", {.states = "RUNNING,CANCELED"}, SX_STATUS_INFRA_ERROR},
    };
    int attempt = 0;
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
        script = before[i].script;
        sx_result_t result;
        run_on(executor, h, before[i].task, ++attempt, &result);
        SX_CHECK(result.status == before[i].status);
        sx_result_clear(&result);
        check_clean_next(executor, h, fake, &script, ++attempt);
    }
    SX_CHECK(sessions(fake, "POST") == 1 && sessions(fake, "DELETE") == 0);
    /* A TEMPORARY table: the session is closed, and opened afresh. */
    script = (sx_fakeflink_script_t){
        .states = "FINISHED", .on_insert = write_sink, .arg = output};
    sx_result_t result;
    run_on(executor, h, "t4", ++attempt, &result);
    check_verdict(&result, SX_STATUS_MATCH, "");
    /* Closing it is the plan, not a problem: no warning. */
    char *warned = finish_warned(executor, h);
    SX_CHECK(logged_as(warned, ""));
    free(warned);
    SX_CHECK(sessions(fake, "DELETE") == 1);
    check_clean_next(executor, h, fake, &script, ++attempt);
    SX_CHECK(sessions(fake, "POST") == 2);
    /* The gateway restarted between two tasks. */
    sx_fakeflink_forget_session(fake);
    check_clean_next(executor, h, fake, &script, ++attempt);
    SX_CHECK(sessions(fake, "POST") == 3 && sessions(fake, "DELETE") == 1);
    /* It restarted while a task ran. */
    check_cleanup_session_lost(executor, h, fake, ++attempt);
    check_clean_next(executor, h, fake, &script, ++attempt);
    SX_CHECK(sessions(fake, "POST") == 4);
    /* It restarted and cannot open the fresh one: infra_error. */
    sx_fakeflink_forget_session(fake);
    script.session_status = 503;
    run_on(executor, h, "t1", ++attempt, &result);
    check_no_session(&result, fake);
    SX_CHECK(sessions(fake, "POST") == 5);
    sx_executor_destroy(&executor);
    sx_fakeflink_destroy(&fake);
}

/* One method's executor (of one sample), with its own fake Flink, in a
 * thread of its own. */
typedef struct {
    harness_t *h;
    sx_replays_t *replays;
    const char *method;
    int sample;
    pthread_barrier_t *start;
    sink_output_t output;
    sx_result_t result;
} method_run_t;

static void *run_method(void *arg)
{
    method_run_t *m = arg;
    sx_error_t err;
    m->output.kafka = sx_kafka_new(m->h->bootstrap, 5000, &err);
    SX_CHECK(m->output.kafka);
    char sample[16] = "";
    if (m->sample)
        snprintf(sample, sizeof sample, ".s%d", m->sample);
    snprintf(m->output.topic, sizeof m->output.topic, "sx.shared.%s.t1%s.1.result",
             m->method, sample);
    m->output.value = "{\"id\":1}";
    sx_fakeflink_script_t script = {
        .states = "RUNNING,FINISHED", .on_insert = write_sink, .arg = &m->output};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_executor_t *executor = executor_on(m->h, fake, "shared");
    sx_executor_set_replays(executor, m->replays);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/%s.t1%s.csv", m->h->csv_dir, m->method, sample);
    sx_exec_request_t request = {m->h->bench, "t1",      "SELECT id FROM s", 1,
                                 csv,         m->method, m->sample};
    sx_timings_t timings;
    pthread_barrier_wait(m->start);
    double start = sx_clock_seconds();
    sx_executor_run_on_made_topics(executor, &request, sx_mockkafka_make_topics, s_mock,
                                   &m->result, &timings);
    check_timings(&timings, sx_clock_seconds() - start);
    sx_executor_destroy(&executor);
    sx_fakeflink_destroy(&fake);
    sx_kafka_destroy(&m->output.kafka);
    return NULL;
}

/* Two methods' executors running the same task at once, and a second sample
 * of the first method's, with one registry of shared source topics: the
 * source is replayed once, into the shared topic (no private source topic is
 * made), each gets its verdict from a sink topic of its own. The
 * source has 20,000 rows here, so that preparing it, done within the first
 * replay, takes longer than the task's own preparation: counted on the
 * wrong side, it would leave that task a negative prepare time. */
static void test_shared_sources(harness_t *h, sink_output_t *output)
{
    (void)output;
    sx_error_t err;
    char sources[PATH_MAX], path[PATH_MAX + 8];
    snprintf(sources, sizeof sources, "%s/tasks/t1/sources", h->bench);
    snprintf(path, sizeof path, "%s/s.csv", sources);
    FILE *big = fopen(path, "w");
    SX_CHECK(big && fputs("id,v\n", big) >= 0);
    for (int i = 1; i <= 20000; i++)
        SX_CHECK(fprintf(big, "%d,a\n", i) > 0);
    SX_CHECK(fclose(big) == 0);
    sx_replays_t *replays = sx_replays_new(h->bootstrap, "shared", true, &err);
    SX_CHECK(replays);
    sx_replays_set_topic_maker(replays, sx_mockkafka_make_topics, s_mock);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 3);
    method_run_t runs[3] = {{h, replays, "m1", 0, &start, {0}, {0}},
                            {h, replays, "m2", 0, &start, {0}, {0}},
                            {h, replays, "m1", 2, &start, {0}, {0}}};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++)
        SX_CHECK(pthread_create(&threads[i], NULL, run_method, &runs[i]) == 0);
    for (int i = 0; i < 3; i++) {
        SX_CHECK(pthread_join(threads[i], NULL) == 0);
        check_verdict(&runs[i].result, SX_STATUS_MATCH, "");
    }
    pthread_barrier_destroy(&start);
    SX_CHECK(sx_replays_count(replays) == 1);
    char **topics = NULL;
    size_t count = 0;
    SX_CHECK(sx_kafka_list_topics(output->kafka, "sx.shared.", &topics, &count, &err) ==
             0);
    size_t shared = 0, sinks = 0, sampled = 0;
    for (size_t i = 0; i < count; i++) {
        shared += strncmp(topics[i], "sx.shared.src.", 14) == 0;
        sinks += strstr(topics[i], ".t1.1.result") != NULL;
        sampled += strcmp(topics[i], "sx.shared.m1.t1.s2.1.result") == 0;
    }
    SX_CHECK(count == 4 && shared == 1 && sinks == 2 && sampled == 1);
    sx_kafka_topics_free(&topics, count);
    sx_replays_destroy(&replays);
    write_file(sources, "s.csv", "id,v\n1,a\n");
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

/* A run id the user gave (exec --run-id) may hold a quote: the job's name
 * is still one SQL string literal, and Flink gets the name as given. */
static void test_quoted_job_name(harness_t *h)
{
    sx_fakeflink_script_t script = {.insert_error = s_sql_trace};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_executor_t *executor = executor_on(h, fake, "it's");
    sx_result_t result;
    run_on(executor, h, "t1", 1, &result);
    check_verdict(&result, SX_STATUS_FLINK_ERROR,
                  "org.apache.flink.table.api.ValidationException: SQL validation "
                  "failed. Column 'nope' not found in any table");
    char name[256];
    sx_fakeflink_job_name(fake, name, sizeof name);
    SX_CHECK(strcmp(name, "streamex it's t1 attempt 1") == 0);
    sx_executor_destroy(&executor);
    sx_fakeflink_destroy(&fake);
}

/* Runs `tests` with the mock Kafka and the harness. */
typedef void(fake_test_fn)(harness_t *h, sink_output_t *output);

static void with_mock_kafka(const char *bench, fake_test_fn *tests)
{
    s_mock = sx_mockkafka_new();
    char csv_dir[PATH_MAX];
    snprintf(csv_dir, sizeof csv_dir, "%s/csv", bench);
    sx_error_t err;
    sink_output_t output = {.kafka =
                                sx_kafka_new(sx_mockkafka_bootstrap(s_mock), 5000, &err)};
    SX_CHECK(output.kafka);
    harness_t h = {.bench = bench,
                   .bootstrap = sx_mockkafka_bootstrap(s_mock),
                   .csv_dir = csv_dir,
                   .output = &output};
    tests(&h, &output);
    sx_kafka_destroy(&output.kafka);
    sx_mockkafka_destroy(&s_mock);
}

static void fake_flink_tests(harness_t *h, sink_output_t *output)
{
    test_replay_verdicts(h, output);
    test_source_changed(h);
    test_flink_verdicts(h, output);
    test_submit_verdicts(h);
    test_timeouts(h);
    test_output_verdicts(h, output);
    test_changelog_figures(h, output);
    test_output_unreadable(h);
    test_pair_changed(h, output);
    test_sweep(h);
    test_session_reuse(h, output);
    test_quoted_job_name(h);
    test_shared_sources(h, output);
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

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_fakeflink_test(verbose);
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
    test_outcome(executor, bench, "t5", "SELECT id FROM s", SX_STATUS_INPUT_ERROR,
                 "task t5: sources/s.csv:2: 3 fields where the header has 2");
    test_outcome(executor, bench, "t6", "SELECT id FROM s", SX_STATUS_INPUT_ERROR,
                 "task t6: DDL of source s: unknown placeholder ${group} in the "
                 "string at line 1, column 167 (only ${topic} and ${bootstrap} are "
                 "filled)");
    test_unreachable_kafka(executor, bench);
    sx_executor_destroy(&executor);
    SX_CHECK(executor == NULL);
    sx_executor_destroy(&executor); /* twice: harmless */
    /* Each address and the run id are needed. */
    for (int missing = 0; missing < 4; missing++) {
        sx_executor_config_t lacking = config;
        const char **field[] = {&lacking.bootstrap, &lacking.gateway_url,
                                &lacking.rest_url, &lacking.run_id};
        *field[missing] = NULL;
        SX_CHECK(sx_executor_new(&lacking, &err) == NULL);
        SX_CHECK(strcmp(err.msg, "executor needs Kafka, gateway and REST addresses and "
                                 "a run id") == 0);
    }
    config.bootstrap = "";
    SX_CHECK(sx_executor_new(&config, &err) == NULL);
    SX_CHECK(strcmp(err.msg,
                    "Kafka client needs a bootstrap address and a positive timeout") ==
             0);
    test_interrupt_in_child(bench);
    with_mock_kafka(bench, fake_flink_tests);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", bench);
    SX_CHECK(system(command) == 0);
    sx_log_set_level(saved);
    printf("test_executor: OK\n");
    return 0;
}
