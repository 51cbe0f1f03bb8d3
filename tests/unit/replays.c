/* tests/unit/replays.c: the shared source topics (worker/exec/replays.h) on the mock
 * Kafka of tests/kit/mockkafka.h: keys, one replay shared, eight tasks
 * asking at once, failed replays, topics checked before use, a file changed
 * between its scan and its replay. Shared topics
 * under the executor: tests/unit/executor.c, and on the real pair
 * tests/e2e/shared.sh. */
#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "tests/kit/mockkafka.h"
#include "worker/exec/replays.h"

#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sx_mockkafka_t *s_mock;

static char s_dir[] = "/tmp/sx-replays-test-XXXXXX";

static char *write_csv(const char *name, const char *text)
{
    char *path = sx_format("%s/%s", s_dir, name);
    FILE *f = fopen(path, "w");
    SX_CHECK(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* A live source "bids" of file `name`: id, and ts converted `to` (sql or
 * epoch_ms); static when live is false. */
typedef struct {
    sx_source_t source;
    sx_column_t columns[2];
} test_source_t;

static void source_init(test_source_t *t, char *path, bool live, sx_time_to_t to,
                        const char *id_name)
{
    memset(t, 0, sizeof *t);
    t->columns[0] = (sx_column_t){.name = (char *)id_name, .from = "id"};
    t->columns[1] = (sx_column_t){.name = "ts",
                                  .from = "ts",
                                  .time_from = SX_TIME_STRFTIME,
                                  .time_pattern = "%Y-%m-%d %H:%M:%S",
                                  .time_to = to};
    t->source = (sx_source_t){.name = "bids",
                              .kind = live ? SX_SOURCE_LIVE : SX_SOURCE_STATIC,
                              .file = "sources/bids.csv",
                              .path = path,
                              .columns = t->columns,
                              .column_count = 2,
                              .event_time = live ? "ts" : NULL};
}

static void key_of(const test_source_t *t, char key[41])
{
    sx_error_t err;
    SX_CHECK(sx_replays_key(&t->source, key, &err) == 0);
}

/* Identical prepared sources share a key (another table name, DDL or path
 * of the same content too); another projection, time conversion, file
 * content or kind never does. */
static void test_keys(char *csv, char *copy, char *other)
{
    test_source_t base, same, renamed, epoch, changed, fixed;
    source_init(&base, csv, true, SX_TIME_TO_SQL, "id");
    source_init(&same, copy, true, SX_TIME_TO_SQL, "id");
    same.source.name = "other_table";
    same.source.ddl = "CREATE TABLE other_table (...)";
    source_init(&renamed, csv, true, SX_TIME_TO_SQL, "bid_id");
    source_init(&epoch, csv, true, SX_TIME_TO_EPOCH_MS, "id");
    source_init(&changed, other, true, SX_TIME_TO_SQL, "id");
    source_init(&fixed, csv, false, SX_TIME_TO_SQL, "id");
    char k[6][41];
    key_of(&base, k[0]);
    key_of(&same, k[1]);
    key_of(&renamed, k[2]);
    key_of(&epoch, k[3]);
    key_of(&changed, k[4]);
    key_of(&fixed, k[5]);
    SX_CHECK(strcmp(k[0], k[1]) == 0);
    for (int i = 2; i < 6; i++)
        for (int j = 0; j < i; j++)
            SX_CHECK(strcmp(k[i], k[j]) != 0);
    source_init(&base, "/nonexistent/bids.csv", true, SX_TIME_TO_SQL, "id");
    sx_error_t err;
    SX_CHECK(sx_replays_key(&base.source, k[0], &err) == -1);
}

/* The topic holds exactly `count` records from offset 0. */
static void check_span(sx_kafka_t *kafka, const char *topic, int64_t count)
{
    int64_t low = -1, high = -1;
    sx_error_t err;
    SX_CHECK(sx_kafka_topic_span(kafka, topic, &low, &high, &err) == 0);
    SX_CHECK(low == 0 && high == count);
}

static sx_replay_rc_t acquire(sx_replays_t *replays, sx_kafka_t *kafka,
                              const test_source_t *t, char *topic, double *prepare_s)
{
    sx_error_t err;
    return sx_replays_acquire(replays, kafka, "t1", &t->source, topic, 256, prepare_s,
                              &err);
}

/* A replay is the rows in event-time order, each record's timestamp its
 * event time; a second task declaring the same source reads the same topic,
 * neither prepared nor replayed again. */
static void test_shared(sx_replays_t *replays, sx_kafka_t *kafka, char *csv, char *copy)
{
    test_source_t first, second;
    source_init(&first, csv, true, SX_TIME_TO_SQL, "id");
    source_init(&second, copy, true, SX_TIME_TO_SQL, "id");
    char topic[256], again[256];
    double prepare_s = -1;
    size_t before = sx_replays_count(replays);
    SX_CHECK(acquire(replays, kafka, &first, topic, &prepare_s) == SX_REPLAY_READY);
    SX_CHECK(prepare_s > 0 && sx_replays_count(replays) == before + 1);
    sx_kafka_message_t *messages = NULL;
    size_t count = 0;
    sx_error_t err;
    SX_CHECK(sx_kafka_read_topic(kafka, topic, &messages, &count, &err) == 0);
    SX_CHECK(count == 3);
    SX_CHECK(strcmp(messages[0].value, "{\"id\":\"1\",\"ts\":\"2024-01-01 00:00:01\"}") ==
             0);
    SX_CHECK(messages[0].timestamp_ms == 1704067201000LL);
    SX_CHECK(messages[1].timestamp_ms == 1704067202000LL);
    SX_CHECK(messages[2].timestamp_ms == 1704067203000LL);
    sx_kafka_messages_free(&messages, count);
    SX_CHECK(acquire(replays, kafka, &second, again, &prepare_s) == SX_REPLAY_READY);
    SX_CHECK(strcmp(topic, again) == 0 && prepare_s == 0);
    SX_CHECK(sx_replays_count(replays) == before + 1);
    SX_CHECK(strncmp(topic, "sx.selftest.src.", 16) == 0);
}

typedef struct {
    sx_replays_t *replays;
    const char *bootstrap;
    const test_source_t *source;
    pthread_barrier_t *start; /* every thread waits here, so all ask at once */
    char topic[256];
    sx_replay_rc_t rc;
} asker_t;

static void *ask(void *arg)
{
    asker_t *a = arg;
    sx_error_t err;
    sx_kafka_t *kafka = sx_kafka_new(a->bootstrap, 5000, &err);
    SX_CHECK(kafka);
    pthread_barrier_wait(a->start);
    double prepare_s;
    a->rc = acquire(a->replays, kafka, a->source, a->topic, &prepare_s);
    /* Whoever gets the topic finds every record of it acknowledged. */
    if (a->rc == SX_REPLAY_READY)
        check_span(kafka, a->topic, 3);
    sx_kafka_destroy(&kafka);
    return NULL;
}

/* Eight tasks asking for one source at once: exactly one replay, and all
 * get its topic once it is complete. */
static void test_concurrent(sx_replays_t *replays, const char *bootstrap, char *csv)
{
    enum { ASKERS = 8 };
    test_source_t fixed;
    source_init(&fixed, csv, false, SX_TIME_TO_SQL, "id");
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, ASKERS);
    asker_t askers[ASKERS];
    pthread_t threads[ASKERS];
    size_t before = sx_replays_count(replays);
    for (int i = 0; i < ASKERS; i++) {
        askers[i] =
            (asker_t){replays, bootstrap, &fixed, &start, "", SX_REPLAY_INFRA_ERROR};
        SX_CHECK(pthread_create(&threads[i], NULL, ask, &askers[i]) == 0);
    }
    for (int i = 0; i < ASKERS; i++) {
        SX_CHECK(pthread_join(threads[i], NULL) == 0);
        SX_CHECK(askers[i].rc == SX_REPLAY_READY);
        SX_CHECK(strcmp(askers[i].topic, askers[0].topic) == 0);
    }
    pthread_barrier_destroy(&start);
    SX_CHECK(sx_replays_count(replays) == before + 1);
}

/* A replay that fails leaves nothing ready: a source whose rows do not
 * convert is the task's input_error each time it is asked for; Kafka
 * refusing the records is infra_error, and the next task replays anew. */
static void test_failures(sx_replays_t *replays, sx_kafka_t *kafka, char *bad, char *csv)
{
    test_source_t broken, good;
    source_init(&broken, bad, true, SX_TIME_TO_EPOCH_MS, "id");
    char topic[256] = "";
    sx_error_t err;
    double prepare_s;
    size_t before = sx_replays_count(replays);
    for (int i = 1; i <= 2; i++) {
        SX_CHECK(sx_replays_acquire(replays, kafka, "t7", &broken.source, topic,
                                    sizeof topic, &prepare_s,
                                    &err) == SX_REPLAY_INPUT_ERROR);
        SX_CHECK(strcmp(err.msg, "task t7: sources/bids.csv:3: column ts (as ts): "
                                 "'yesterday' does not convert from time format "
                                 "%Y-%m-%d %H:%M:%S") == 0);
        SX_CHECK(sx_replays_count(replays) == before + (size_t)i);
    }
    source_init(&good, csv, true, SX_TIME_TO_EPOCH_MS, "id");
    rd_kafka_mock_push_request_errors(sx_mockkafka_cluster(s_mock), 0 /* Produce */, 1,
                                      RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    SX_CHECK(sx_replays_acquire(replays, kafka, "t8", &good.source, topic, sizeof topic,
                                &prepare_s, &err) == SX_REPLAY_INFRA_ERROR);
    char want[512];
    snprintf(want, sizeof want, "Kafka at %s: sx.selftest.src.",
             sx_mockkafka_bootstrap(s_mock));
    SX_CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    SX_CHECK(strcmp(strrchr(err.msg, ':'), ": Topic authorization failed") == 0);
    SX_CHECK(acquire(replays, kafka, &good, topic, &prepare_s) == SX_REPLAY_READY);
    SX_CHECK(sx_replays_count(replays) == before + 4);
    check_span(kafka, topic, 3);
}

/* A shared topic that no longer holds exactly its records (one more was
 * written: Kafka is not what the replay left; a topic Kafka lost takes the
 * same path, sx_kafka_topic_span saying 1) is replayed again into a new
 * topic; a broker that does not answer is infra_error, never a replay
 * nobody can check. */
static void test_checked_before_use(sx_replays_t *replays, sx_kafka_t *kafka, char *csv)
{
    test_source_t source;
    source_init(&source, csv, true, SX_TIME_TO_SQL, "id");
    char topic[256], again[256];
    double prepare_s;
    SX_CHECK(acquire(replays, kafka, &source, topic, &prepare_s) == SX_REPLAY_READY);
    size_t before = sx_replays_count(replays);
    sx_kafka_record_t extra = {.value = "{}", .value_len = 2, .timestamp_ms = 1};
    sx_error_t err;
    SX_CHECK(sx_kafka_produce(kafka, topic, &extra, 1, &err) == 0);
    SX_CHECK(acquire(replays, kafka, &source, again, &prepare_s) == SX_REPLAY_READY);
    SX_CHECK(strcmp(topic, again) != 0 && prepare_s > 0);
    SX_CHECK(sx_replays_count(replays) == before + 1);
    check_span(kafka, again, 3);
    /* The broker down: no answer, no verdict. */
    sx_kafka_t *impatient = sx_kafka_new(sx_mockkafka_bootstrap(s_mock), 500, &err);
    SX_CHECK(impatient);
    SX_CHECK(rd_kafka_mock_broker_set_down(sx_mockkafka_cluster(s_mock), 1) == 0);
    SX_CHECK(sx_replays_acquire(replays, impatient, "t1", &source.source, topic,
                                sizeof topic, &prepare_s, &err) == SX_REPLAY_INFRA_ERROR);
    SX_CHECK(strstr(err.msg, again) != NULL);
    SX_CHECK(rd_kafka_mock_broker_set_up(sx_mockkafka_cluster(s_mock), 1) == 0);
    SX_CHECK(sx_replays_count(replays) == before + 1);
    sx_kafka_destroy(&impatient);
}

/* A replay converts the scanned file again as it produces: a file changed
 * since its scan is the task's input_error, with what was produced dropped,
 * and the same client then replays the file as it is now. */
static void test_changed_file(sx_kafka_t *kafka, const char *rows)
{
    char *path = write_csv("changing.csv", rows);
    test_source_t t;
    source_init(&t, path, true, SX_TIME_TO_SQL, "id");
    sx_error_t err;
    sx_prepare_t *scan = sx_prepare_scan("t9", &t.source, &err);
    SX_CHECK(scan && sx_prepare_count(scan) == 3);
    free(write_csv("changing.csv", "id,ts\n3,2024-01-01 00:00:03\n1,2024-01-01 "
                                   "00:00:01\n2,2024-01-01 00:00:05\n"));
    const char *topics[] = {"sx.selftest.changed", "sx.selftest.rescanned"};
    SX_CHECK(sx_mockkafka_make_topics(s_mock, topics, 2, &err) == 0);
    SX_CHECK(sx_replay_produce(kafka, topics[0], "t9", &t.source, scan, &err) ==
             SX_REPLAY_INPUT_ERROR);
    SX_CHECK(strcmp(err.msg, "task t9: sources/bids.csv:4: the file changed since it "
                             "was read") == 0);
    sx_prepare_destroy(&scan);
    scan = sx_prepare_scan("t9", &t.source, &err);
    SX_CHECK(scan && sx_replay_produce(kafka, topics[1], "t9", &t.source, scan, &err) ==
                         SX_REPLAY_READY);
    check_span(kafka, topics[1], 3);
    sx_prepare_destroy(&scan);
    unlink(path);
    free(path);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    SX_CHECK(mkdtemp(s_dir));
    const char rows[] = "id,ts\n3,2024-01-01 00:00:03\n1,2024-01-01 00:00:01\n"
                        "2,2024-01-01 00:00:02\n";
    char *csv = write_csv("a.csv", rows);
    char *copy = write_csv("copy.csv", rows);
    char *other = write_csv("b.csv", "id,ts\n3,2024-01-01 00:00:03\n1,2024-01-01 "
                                     "00:00:01\n2,2024-01-01 00:00:09\n");
    char *bad = write_csv("bad.csv", "id,ts\n1,2024-01-01 00:00:01\n2,yesterday\n");
    test_keys(csv, copy, other);
    s_mock = sx_mockkafka_new();
    const char *bootstrap = sx_mockkafka_bootstrap(s_mock);
    sx_error_t err;
    sx_kafka_t *kafka = sx_kafka_new(bootstrap, 5000, &err);
    sx_replays_t *replays = sx_replays_new(bootstrap, "selftest", true, &err);
    SX_CHECK(kafka && replays);
    sx_replays_set_topic_maker(replays, sx_mockkafka_make_topics, s_mock);
    int64_t start = zclock_mono();
    test_shared(replays, kafka, csv, copy);
    test_concurrent(replays, bootstrap, csv);
    test_failures(replays, kafka, bad, csv);
    test_checked_before_use(replays, kafka, other);
    test_changed_file(kafka, rows);
    if (verbose)
        printf("replays: %lld ms\n", (long long)(zclock_mono() - start));
    sx_replays_destroy(&replays);
    SX_CHECK(replays == NULL);
    sx_replays_destroy(&replays);
    SX_CHECK(sx_replays_new(NULL, "r", false, &err) == NULL);
    sx_kafka_destroy(&kafka);
    sx_mockkafka_destroy(&s_mock);
    for (char **path = (char *[]){csv, copy, other, bad, NULL}; *path; path++) {
        unlink(*path);
        free(*path);
    }
    SX_CHECK(rmdir(s_dir) == 0);
    printf("test_replays: OK\n");
    return 0;
}
