/* heavy_data.c: the data half of bench/heavy (read that script's top comment
 * first). Built by CMake as build/heavy_data, never run by ctest.
 *   heavy_data generate DIR [ROWS] [KEYS]
 *       writes a bench of two tasks over one live source of ROWS rows
 *       (default 1,000,000; KEYS group keys, default 10,000) with an event
 *       time out of file order and ties: heavy_filter (a filter into an
 *       append sink) and heavy_group (GROUP BY key into an upsert sink, one
 *       update per row), with gold, evaluation and predictions.
 *   heavy_data prepare BENCH TASK
 *       times the preparation of the task's sources alone (no Kafka), as a
 *       replay makes it: sx_prepare_scan, then every record handed over in
 *       replay order by sx_prepare_each.
 *   heavy_data materialize upsert|append ROWS KEYS OUT.csv
 *       times sx_materialize on ROWS records shaped as Flink's JSON writer
 *       shapes the two tasks' sinks (upsert: ROWS updates over KEYS keys),
 *       generated on the fly, and the write of the final CSV.
 * prepare and materialize print one line "NAME seconds S rows N rate R/s
 * digest D", where D (FNV-1a 64 of the records in replay order, their
 * timestamps, or of the final CSV) lets two builds be compared for identical
 * output on the full-size data. */
#include "common/clock.h"
#include "common/error.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/bench/task.h"
#include "worker/exec/materialize.h"
#include "worker/exec/prepare.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define BASE_EPOCH_S 1704067200 /* 2024-01-01 00:00:00 UTC */

static uint64_t fnv(uint64_t hash, const void *bytes, size_t length)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ p[i]) * 1099511628211ull;
    return hash;
}

/* ---- generate ------------------------------------------------------------ */

/* The row's group key, amount and event time (seconds after BASE_EPOCH_S):
 * time mostly rising, jittered back by up to 12 s so the sort has work and
 * ties. */
static void row_values(long i, long keys, long *key, long *amount, long *seconds)
{
    unsigned long mix = (unsigned long)i * 2654435761ul;
    *key = (long)(mix % (unsigned long)keys);
    *amount = (long)((mix >> 16) % 100);
    *seconds = i / 4 + (long)((mix >> 8) % 13);
}

static void make_dirs(const char *dir)
{
    const char *subdirs[] = {"",
                             "/tasks",
                             "/tasks/heavy_filter",
                             "/tasks/heavy_filter/sources",
                             "/tasks/heavy_group",
                             "/tasks/heavy_group/sources",
                             "/gold",
                             "/evaluation"};
    char path[4096];
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
        snprintf(path, sizeof path, "%s%s", dir, subdirs[i]);
        mkdir(path, 0755);
    }
}

static FILE *open_out(const char *dir, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *out = fopen(path, "wb");
    if (!out) {
        fprintf(stderr, "heavy_data: cannot write %s\n", path);
        exit(1);
    }
    return out;
}

static void write_text(const char *dir, const char *rel, const char *text)
{
    FILE *out = open_out(dir, rel);
    fputs(text, out);
    fclose(out);
}

static const char source_json[] =
    "\"sources\":[{\"name\":\"events\",\"kind\":\"live\",\"file\":\"sources/events.csv\","
    "\"columns\":[{\"name\":\"id\"},{\"name\":\"k\"},{\"name\":\"amount\"},"
    "{\"name\":\"ts\",\"from\":\"at\",\"time\":{\"from\":\"%Y-%m-%d %H:%M:%S\","
    "\"to\":\"sql\"}}],"
    "\"ddl\":\"CREATE TABLE events (id BIGINT, k BIGINT, amount BIGINT, ts TIMESTAMP(3), "
    "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='kafka',"
    "'topic'='${topic}','properties.bootstrap.servers'='${bootstrap}','format'='json',"
    "'scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset')\","
    "\"event_time\":\"ts\"}],";

static void write_tasks(const char *dir)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"task_id\":\"heavy_filter\",\"question\":\"heavy: filter\",%s"
             "\"sink\":{\"name\":\"result\",\"changelog\":\"append\",\"ddl\":\"CREATE "
             "TABLE `result` (id BIGINT, k BIGINT, amount BIGINT) WITH "
             "('connector'='kafka','topic'='${topic}','properties.bootstrap.servers'='${"
             "bootstrap}','format'='json')\"},"
             "\"output_schema\":[{\"name\":\"id\",\"type\":\"BIGINT\"},{\"name\":\"k\","
             "\"type\":\"BIGINT\"},{\"name\":\"amount\",\"type\":\"BIGINT\"}],"
             "\"timeout_s\":900}\n",
             source_json);
    write_text(dir, "tasks/heavy_filter/task.json", text);
    snprintf(
        text, sizeof text,
        "{\"task_id\":\"heavy_group\",\"question\":\"heavy: group\",%s"
        "\"sink\":{\"name\":\"result\",\"changelog\":\"upsert\",\"ddl\":\"CREATE "
        "TABLE `result` (k BIGINT, cnt BIGINT, total BIGINT, PRIMARY KEY (k) NOT "
        "ENFORCED) WITH ('connector'='upsert-kafka','topic'='${topic}','properties."
        "bootstrap.servers'='${bootstrap}','key.format'='json','value.format'='json')"
        "\"},"
        "\"output_schema\":[{\"name\":\"k\",\"type\":\"BIGINT\"},{\"name\":\"cnt\","
        "\"type\":\"BIGINT\"},{\"name\":\"total\",\"type\":\"BIGINT\"}],"
        "\"timeout_s\":900}\n",
        source_json);
    write_text(dir, "tasks/heavy_group/task.json", text);
    write_text(dir, "task_ids.txt", "heavy_filter\nheavy_group\n");
    write_text(dir, "predictions.jsonl",
               "{\"task_id\":\"heavy_filter\",\"sql\":\"SELECT id, k, amount FROM events "
               "WHERE amount >= 50\"}\n"
               "{\"task_id\":\"heavy_group\",\"sql\":\"SELECT k, COUNT(*) AS cnt, "
               "SUM(amount) AS total FROM events GROUP BY k\"}\n");
    const char *evaluation = "{\"ignore_order\": true, \"answer_policy\": {\"kind\": "
                             "\"ordinary\"}}\n";
    write_text(dir, "evaluation/heavy_filter.json", evaluation);
    write_text(dir, "evaluation/heavy_group.json", evaluation);
}

static int generate(const char *dir, long rows, long keys)
{
    make_dirs(dir);
    write_tasks(dir);
    /* Each task has its own copy of the rows (a link out of a task folder
     * would be refused). */
    FILE *csv = open_out(dir, "tasks/heavy_filter/sources/events.csv");
    FILE *copy = open_out(dir, "tasks/heavy_group/sources/events.csv");
    FILE *gold = open_out(dir, "gold/heavy_filter.csv");
    fputs("id,k,amount,at\n", csv);
    fputs("id,k,amount,at\n", copy);
    fputs("id,k,amount\n", gold);
    long *count = sx_alloc((size_t)keys, sizeof *count);
    long *total = sx_alloc((size_t)keys, sizeof *total);
    for (long i = 0; i < rows; i++) {
        long key, amount, seconds;
        row_values(i, keys, &key, &amount, &seconds);
        time_t t = BASE_EPOCH_S + seconds;
        struct tm tm;
        gmtime_r(&t, &tm);
        char at[32];
        strftime(at, sizeof at, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(csv, "%ld,%ld,%ld,%s\n", i, key, amount, at);
        fprintf(copy, "%ld,%ld,%ld,%s\n", i, key, amount, at);
        if (amount >= 50)
            fprintf(gold, "%ld,%ld,%ld\n", i, key, amount);
        count[key]++;
        total[key] += amount;
    }
    fclose(csv);
    fclose(copy);
    fclose(gold);
    gold = open_out(dir, "gold/heavy_group.csv");
    fputs("k,cnt,total\n", gold);
    for (long key = 0; key < keys; key++)
        if (count[key] > 0)
            fprintf(gold, "%ld,%ld,%ld\n", key, count[key], total[key]);
    fclose(gold);
    free(count);
    free(total);
    return 0;
}

/* ---- prepare ------------------------------------------------------------- */

static void report(const char *name, double seconds, size_t rows, uint64_t digest)
{
    printf("%s seconds %.3f rows %zu rate %.0f/s digest %016llx\n", name, seconds, rows,
           seconds > 0 ? (double)rows / seconds : 0.0, (unsigned long long)digest);
}

/* Folds a record, as a replay hands it to Kafka, into the digest. */
static int digest_record(const char *value, size_t length, int64_t timestamp, void *arg,
                         sx_error_t *err)
{
    (void)err;
    uint64_t *digest = arg;
    *digest = fnv(*digest, value, length + 1);
    *digest = fnv(*digest, &timestamp, sizeof timestamp);
    return 0;
}

/* The scan and the records handed over in replay order, as a replay makes
 * them: the seconds are the whole conversion's (both readings of the file). */
static int prepare(const char *bench, const char *task_id)
{
    sx_error_t err;
    sx_task_t *task = sx_task_load(bench, task_id, &err);
    if (!task) {
        fprintf(stderr, "heavy_data: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    for (size_t s = 0; s < task->source_count && rc == 0; s++) {
        const sx_source_t *source = &task->sources[s];
        double start = sx_clock_seconds();
        uint64_t digest = 14695981039346656037ull;
        sx_prepare_t *prepared = sx_prepare_scan(task_id, source, &err);
        rc = !prepared || sx_prepare_each(prepared, task_id, source, digest_record,
                                          &digest, &err) != 0;
        double seconds = sx_clock_seconds() - start;
        if (rc == 0)
            report("prepare", seconds, sx_prepare_count(prepared), digest);
        else
            fprintf(stderr, "heavy_data: %s\n", err.msg);
        sx_prepare_destroy(&prepared);
    }
    sx_task_destroy(&task);
    return rc;
}

/* ---- materialize --------------------------------------------------------- */

static int materialize(const char *kind, long rows, long keys, const char *out)
{
    static const sx_field_t group_schema[] = {
        {"k", "BIGINT"}, {"cnt", "BIGINT"}, {"total", "BIGINT"}};
    static const sx_field_t filter_schema[] = {
        {"id", "BIGINT"}, {"k", "BIGINT"}, {"amount", "BIGINT"}};
    bool upsert = strcmp(kind, "upsert") == 0;
    sx_materialize_t *relation =
        sx_materialize_new(upsert ? SX_CHANGELOG_UPSERT : SX_CHANGELOG_APPEND,
                           upsert ? group_schema : filter_schema, 3);
    long *count = sx_alloc((size_t)keys, sizeof *count);
    long *total = sx_alloc((size_t)keys, sizeof *total);
    sx_error_t err;
    int rc = 0;
    double start = sx_clock_seconds();
    for (long i = 0; i < rows && rc == 0; i++) {
        long key, amount, seconds;
        row_values(i, keys, &key, &amount, &seconds);
        char k[64], v[128];
        int kl = 0, vl;
        if (upsert) {
            count[key]++;
            total[key] += amount;
            kl = snprintf(k, sizeof k, "{\"k\":%ld}", key);
            vl = snprintf(v, sizeof v, "{\"k\":%ld,\"cnt\":%ld,\"total\":%ld}", key,
                          count[key], total[key]);
        } else {
            vl = snprintf(v, sizeof v, "{\"id\":%ld,\"k\":%ld,\"amount\":%ld}", i, key,
                          amount);
        }
        rc = sx_materialize_apply(relation, i, upsert ? k : NULL, (size_t)kl, v,
                                  (size_t)vl, &err);
    }
    if (rc == 0)
        rc = sx_materialize_finish(relation, &err);
    if (rc == 0)
        rc = sx_materialize_write(relation, out, &err);
    double seconds = sx_clock_seconds() - start;
    if (rc != 0)
        fprintf(stderr, "heavy_data: %s\n", err.msg);
    size_t size = 0;
    char *csv = rc == 0 ? sx_file_read(out, 1ul << 34, &size, &err) : NULL;
    if (csv)
        report(upsert ? "materialize-upsert" : "materialize-append", seconds,
               (size_t)rows, fnv(14695981039346656037ull, csv, size));
    free(csv);
    free(count);
    free(total);
    sx_materialize_destroy(&relation);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "generate") == 0)
        return generate(argv[2], argc > 3 ? atol(argv[3]) : 1000000,
                        argc > 4 ? atol(argv[4]) : 10000);
    if (argc == 4 && strcmp(argv[1], "prepare") == 0)
        return prepare(argv[2], argv[3]);
    if (argc == 6 && strcmp(argv[1], "materialize") == 0)
        return materialize(argv[2], atol(argv[3]), atol(argv[4]), argv[5]);
    fprintf(stderr, "usage: heavy_data generate DIR [ROWS] [KEYS]\n"
                    "       heavy_data prepare BENCH TASK\n"
                    "       heavy_data materialize upsert|append ROWS KEYS OUT.csv\n");
    return 2;
}
