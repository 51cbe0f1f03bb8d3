/* runtime_job.c: the job step of tests/e2e/runtime.sh, run against a real
 * pair: creates a source and an output topic with librdkafka's admin API,
 * produces keyed rows, submits through the SQL Gateway a bounded streaming
 * INSERT from a Kafka source table into an upsert-kafka sink, waits for the
 * job to finish, reads the output topic back and checks the final value of
 * every key. Prints the job's run time; exits 0 only when all was right.
 * usage: e2e_runtime_job BOOTSTRAP GATEWAY_URL REST_URL TAG */
#include "worker/clients/gateway.h"
#include "worker/clients/kafka.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define JOB_TIMEOUT_S 120

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int produce_rows(sx_kafka_t *kafka, const char *topic, sx_error_t *err)
{
    static const char *const rows[] = {"{\"k\":\"a\",\"v\":1}", "{\"k\":\"b\",\"v\":2}",
                                       "{\"k\":\"a\",\"v\":3}", "{\"k\":\"c\",\"v\":5}",
                                       "{\"k\":\"b\",\"v\":-2}"};
    sx_kafka_record_t records[5];
    for (int i = 0; i < 5; i++)
        records[i] = (sx_kafka_record_t){.value = rows[i],
                                         .value_len = strlen(rows[i]),
                                         .timestamp_ms = 1700000000000LL + i};
    return sx_kafka_produce(kafka, topic, records, 5, err);
}

/* The broker's spans: the source holds offsets 0 to 5, a topic never made
 * is not known (what the shared replays take for a topic Kafka lost). */
static int check_spans(sx_kafka_t *kafka, const char *src, sx_error_t *err)
{
    int64_t low = -1, high = -1;
    if (sx_kafka_topic_span(kafka, src, &low, &high, err) != 0 || low != 0 || high != 5)
        return sx_error_set(err, "span of %s: %lld to %lld", src, (long long)low,
                            (long long)high);
    char never[160];
    snprintf(never, sizeof never, "%s_never_made", src);
    int rc = sx_kafka_topic_span(kafka, never, &low, &high, err);
    if (rc != 1)
        return sx_error_prefix(err, "span of %s: %d, not 1 (unknown topic)", never, rc),
               -1;
    return 0;
}

/* Runs the INSERT and waits for the job to finish; returns its run time or -1. */
static double run_job(sx_gateway_t *gw, const char *bootstrap, const char *src,
                      const char *out, sx_error_t *err)
{
    char ddl[1024];
    snprintf(
        ddl, sizeof ddl,
        "CREATE TABLE src (k STRING, v BIGINT) WITH ('connector'='kafka', "
        "'topic'='%s', 'properties.bootstrap.servers'='%s', 'format'='json', "
        "'scan.startup.mode'='earliest-offset', 'scan.bounded.mode'='latest-offset')",
        src, bootstrap);
    if (sx_gateway_execute(gw, ddl, NULL, err) != SX_GATEWAY_OK)
        return -1;
    snprintf(ddl, sizeof ddl,
             "CREATE TABLE snk (k STRING, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
             "WITH ('connector'='upsert-kafka', 'topic'='%s', "
             "'properties.bootstrap.servers'='%s', 'key.format'='json', "
             "'value.format'='json')",
             out, bootstrap);
    if (sx_gateway_execute(gw, ddl, NULL, err) != SX_GATEWAY_OK)
        return -1;
    double start = now_s();
    char job[SX_JOB_ID_SIZE];
    if (sx_gateway_execute(gw, "INSERT INTO snk SELECT k, SUM(v) FROM src GROUP BY k",
                           job, err) != SX_GATEWAY_OK)
        return -1;
    sx_job_state_t state = SX_JOB_RUNNING;
    while (state == SX_JOB_RUNNING && now_s() - start < JOB_TIMEOUT_S) {
        usleep(200 * 1000);
        if (sx_gateway_job_state(gw, job, &state, err) != 0)
            return -1;
    }
    if (state != SX_JOB_FINISHED) {
        sx_error_set(err, "job %s ended in state %d (2 failed, 3 canceled, 0 running)",
                     job, (int)state);
        return -1;
    }
    return now_s() - start;
}

/* The latest `total` of `key` in the upsert changelog; -999 when absent. */
static long long final_total(const sx_kafka_message_t *messages, size_t count,
                             const char *key)
{
    long long total = -999;
    char want[32];
    snprintf(want, sizeof want, "{\"k\":\"%s\"}", key);
    for (size_t i = 0; i < count; i++) {
        if (!messages[i].key || strcmp(messages[i].key, want) != 0)
            continue;
        json_t *value = messages[i].value ? json_loads(messages[i].value, 0, NULL) : NULL;
        total = value ? json_integer_value(json_object_get(value, "total")) : -999;
        json_decref(value);
    }
    return total;
}

static int check_output(sx_kafka_t *kafka, const char *topic, sx_error_t *err)
{
    sx_kafka_message_t *messages = NULL;
    size_t count = 0;
    if (sx_kafka_read_topic(kafka, topic, &messages, &count, err) != 0)
        return -1;
    static const struct {
        const char *key;
        long long total;
    } expected[] = {{"a", 4}, {"b", 0}, {"c", 5}};
    int rc = 0;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        long long got = final_total(messages, count, expected[i].key);
        if (got != expected[i].total)
            rc =
                sx_error_set(err, "key %s: final total %lld, expected %lld (%zu records)",
                             expected[i].key, got, expected[i].total, count);
    }
    printf("output topic %s: %zu changelog records\n", topic, count);
    sx_kafka_messages_free(&messages, count);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: e2e_runtime_job BOOTSTRAP GATEWAY_URL REST_URL TAG\n");
        return 2;
    }
    const char *bootstrap = argv[1], *tag = argv[4];
    char src[128], out[128];
    snprintf(src, sizeof src, "e2e_runtime_%s_%d_src", tag, (int)getpid());
    snprintf(out, sizeof out, "e2e_runtime_%s_%d_out", tag, (int)getpid());
    sx_error_t err;
    sx_error_clear(&err);
    sx_kafka_t *kafka = sx_kafka_new(bootstrap, 10000, &err);
    sx_gateway_t *gw = kafka ? sx_gateway_new(argv[2], argv[3], 10000, &err) : NULL;
    double seconds = -1;
    int rc = 1;
    if (gw && sx_kafka_create_topic(kafka, src, &err) == 0 &&
        sx_kafka_create_topic(kafka, out, &err) == 0 &&
        produce_rows(kafka, src, &err) == 0 && check_spans(kafka, src, &err) == 0 &&
        sx_gateway_open_session(gw, tag, &err) == 0 &&
        (seconds = run_job(gw, bootstrap, src, out, &err)) >= 0 &&
        check_output(kafka, out, &err) == 0) {
        printf("job finished in %.2f s\n", seconds);
        rc = 0;
    }
    if (rc != 0)
        fprintf(stderr, "e2e_runtime_job %s: %s\n", tag, err.msg);
    sx_gateway_destroy(&gw);
    sx_kafka_destroy(&kafka);
    return rc;
}
