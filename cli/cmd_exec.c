/* cmd_exec.c: `streamex exec`, one task on one Kafka + Flink pair, for a
 * person debugging one query: it runs the executor exactly as a worker
 * would and prints the verdict, the final CSV and where the time went. The
 * candidate comes from a SQL file or from a method's predictions file. */
#include "cli/commands.h"
#include "cli/options.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/signals.h"
#include "common/bench/predictions.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/ex/diff.h"
#include "common/results/jsonout.h"
#include "coordinator/diffs.h"
#include "worker/exec/executor.h"
#include "worker/pair/engine.h"
#include "worker/pair/pair.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* An external pair should already be up: how long to wait for its health. */
#define EXTERNAL_WAIT_S 10
/* The most records --changelog prints. */
#define CHANGELOG_MAX 1000000

typedef struct {
    const char *bench;
    const char *task;
    const char *sql_file;
    const char *method;
    const char *output;
    const char *bootstrap;
    const char *gateway;
    const char *rest;
    const char *run_id;
    const char *flink; /* the local pair's engine (--flink X.Y), NULL the default */
    int index;         /* local pair, when no external one is given */
    sx_profile_t profile;
    bool keep;
    size_t changelog; /* records of the output topic to print */
} exec_options_t;

static const char s_usage[] =
    "usage: streamex exec --bench BENCH --task ID (--sql FILE | --method "
    "NAME=PREDS)\n"
    "                     [--output CSV] [--keep] [--profile P] [--run-id ID]\n"
    "                     [--changelog N]\n"
    "                     [--index N [--flink X.Y] | --kafka-bootstrap HOST:PORT\n"
    "                      --flink-gateway URL --flink-rest URL]\n\n"
    "Executes one task as a worker does (replay through Kafka, the query on Flink\n"
    "in STREAMING mode, the output changelog materialized) and prints the verdict,\n"
    "the final CSV, the sink changelog's records by kind, and the time of each\n"
    "step; a task that did not match (or not strictly) also gets the gold rows\n"
    "its final relation lacks and the rows it has that gold lacks (the first 20\n"
    "of each). --changelog N prints the first N records of the output topic as\n"
    "they came (offset, kind, key, value). It uses local pair N (default 0):\n"
    "the running one if `streamex runtime up` left it up, else it starts it and\n"
    "stops it afterwards; or the external pair given by the three addresses.\n"
    "--flink X.Y picks the local pair's engine (scripts/setup-runtime.sh --flink\n"
    "X.Y installs it): a running pair of another engine is refused.\n"
    "--keep leaves the task's topics and gateway session in place for\n"
    "inspection. Exit code: 0 match, 1 any other verdict, 2 usage or no pair.\n";

/* 0: options ready; 1: --help; -1: bad usage (err says why). */
static int parse_options(int argc, char **argv, exec_options_t *opt, sx_error_t *err)
{
    static const struct option longs[] = {
        {"bench", required_argument, 0, 'b'},
        {"task", required_argument, 0, 't'},
        {"sql", required_argument, 0, 's'},
        {"method", required_argument, 0, 'm'},
        {"output", required_argument, 0, 'o'},
        {"keep", no_argument, 0, 'k'},
        {"profile", required_argument, 0, 'p'},
        {"run-id", required_argument, 0, 'r'},
        {"kafka-bootstrap", required_argument, 0, 'K'},
        {"flink-gateway", required_argument, 0, 'G'},
        {"flink-rest", required_argument, 0, 'R'},
        {"index", required_argument, 0, 'i'},
        {"changelog", required_argument, 0, 'c'},
        {"flink", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *opt = (exec_options_t){0};
    optind = 1;
    int c;
    long index = 0, records = 0;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 'b':
            opt->bench = optarg;
            break;
        case 't':
            opt->task = optarg;
            break;
        case 's':
            opt->sql_file = optarg;
            break;
        case 'm':
            opt->method = optarg;
            break;
        case 'o':
            opt->output = optarg;
            break;
        case 'k':
            opt->keep = true;
            break;
        case 'r':
            opt->run_id = optarg;
            break;
        case 'K':
            opt->bootstrap = optarg;
            break;
        case 'G':
            opt->gateway = optarg;
            break;
        case 'R':
            opt->rest = optarg;
            break;
        case 'i':
            if (sx_option_int("index", optarg, 0, SX_PAIR_MAX_INDEX, &index, err) != 0)
                return -1;
            opt->index = (int)index;
            break;
        case 'c':
            if (sx_option_int("changelog", optarg, 0, CHANGELOG_MAX, &records, err) != 0)
                return -1;
            opt->changelog = (size_t)records;
            break;
        case 'p':
            if (sx_profile_parse(optarg, &opt->profile) != 0)
                return sx_error_set(err, "unknown --profile '%s'", optarg);
            break;
        case 'f':
            if (sx_engine_selector_check(optarg, err) != 0)
                return -1;
            opt->flink = optarg;
            break;
        case 'h':
            return 1;
        default:
            return sx_option_unknown(c, argv, err);
        }
    }
    if (optind < argc)
        return sx_error_set(err, "unexpected argument '%s'", argv[optind]);
    if (!opt->bench || !opt->task)
        return sx_error_set(err, "--bench and --task are required");
    if (!opt->bootstrap != !opt->gateway || !opt->gateway != !opt->rest)
        return sx_error_set(err,
                            "an external pair needs --kafka-bootstrap, --flink-gateway "
                            "and --flink-rest together");
    if (opt->flink && opt->bootstrap)
        return sx_error_set(err, "--flink picks the engine of a local pair; an external "
                                 "pair runs its own");
    if (!opt->sql_file == !opt->method)
        return sx_error_set(err,
                            "give exactly one of --sql FILE and --method NAME=PREDS");
    return 0;
}

/* The largest --sql file: a query, not data (the limit of a task's other
 * files). */
#define SQL_MAX_BYTES ((size_t)64 << 20)

/* The candidate of the task: from --sql, or the method's prediction (NULL
 * for a missing one, which the executor turns into its verdict). */
static int load_candidate(const exec_options_t *opt, const sx_bench_t *bench, char **sql,
                          sx_error_t *err)
{
    *sql = NULL;
    if (opt->sql_file) {
        size_t size;
        *sql = sx_file_read_stream(opt->sql_file, SQL_MAX_BYTES, &size, err);
        return *sql ? 0 : -1;
    }
    sx_method_arg_t method;
    if (sx_method_arg_parse(opt->method, &method, err) != 0)
        return -1;
    sx_predictions_t *predictions = sx_predictions_load(method.file, bench, err);
    sx_method_arg_free(&method);
    if (!predictions)
        return -1;
    const char *found = sx_predictions_sql(predictions, opt->task);
    if (found)
        *sql = sx_strdup(found);
    sx_predictions_destroy(&predictions);
    return 0;
}

static void print_file(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        printf("(cannot open %s)\n", path);
        return;
    }
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0)
        fwrite(buffer, 1, n, stdout);
    fclose(in);
}

/* Bytes of a record's key or value as printable text: a byte outside
 * printable ASCII (and a backslash) escaped as \xHH; NULL as `none`. */
static void print_bytes(FILE *out, const void *bytes, size_t length, const char *none)
{
    if (!bytes) {
        fputs(none, out);
        return;
    }
    for (const unsigned char *p = bytes; p < (const unsigned char *)bytes + length; p++)
        fprintf(out, *p >= 0x20 && *p < 0x7f && *p != '\\' ? "%c" : "\\x%02x", *p);
}

/* The --changelog trace: each record as one line of the memstream arg. */
static void trace_record(void *arg, int64_t offset, unsigned kinds, const void *key,
                         size_t key_len, const void *value, size_t value_len)
{
    FILE *out = arg;
    fprintf(out, "  offset %lld  ", (long long)offset);
    const char *separator = "";
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        if (kinds & (1u << k)) {
            fprintf(out, "%s%s", separator, sx_change_kind_name((sx_change_kind_t)k));
            separator = "+";
        }
    fputs(kinds ? "  key " : "(does not fold)  key ", out);
    print_bytes(out, key, key_len, "(none)");
    fputs("  value ", out);
    print_bytes(out, value, value_len, "null");
    fputc('\n', out);
}

static void print_json(const char *before, json_t *value, const char *after)
{
    char *text =
        sx_json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    printf("%s%s%s", before, text ? text : "?", after);
    free(text);
}

/* One side of a diff: its count and the rows listed. */
static void print_rows(json_t *side, const char *what)
{
    size_t count = (size_t)json_integer_value(json_object_get(side, "count"));
    json_t *rows = json_object_get(side, "rows");
    printf("%s: %zu%s\n", what, count,
           json_array_size(rows) < count && json_array_size(rows) ? " (the first shown)"
                                                                  : "");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) print_json("  ", row, "\n");
}

/* The diff of a miss (OUT/NAME/diff/ID.json's content), in lines. */
static void print_diff(const exec_options_t *opt, const sx_result_t *result)
{
    if (!sx_diffs_wanted(result))
        return;
    sx_error_t err;
    sx_diff_t *diff =
        sx_diff_task(opt->bench, opt->task, result->csv, opt->profile, &err);
    if (!diff) {
        printf("diff: none: %s\n", err.msg);
        return;
    }
    json_t *o = sx_diff_json(diff, opt->task, result->score, result->strict);
    sx_diff_destroy(&diff);
    printf("diff against gold (EX %d, strict %d), columns:", result->score,
           result->strict);
    size_t i;
    json_t *column;
    json_array_foreach(json_object_get(o, "columns"), i, column)
    {
        print_json(i ? ", gold " : " gold ", json_object_get(column, "gold"), " = ");
        print_json("prediction ", json_object_get(column, "prediction"), "");
        print_json(" (by ", json_object_get(column, "by"), ")");
    }
    printf("\n");
    print_rows(json_object_get(o, "missing"), "gold rows the final relation lacks");
    json_t *from_tie = json_object_get(json_object_get(o, "missing"), "from_tie_set");
    if (json_integer_value(from_tie) > 0)
        printf("  and %lld more from the tie set\n", json_integer_value(from_tie));
    print_rows(json_object_get(o, "extra"), "rows it has that gold lacks");
    json_t *first = json_object_get(o, "first_difference");
    if (json_is_object(first)) {
        printf("first difference at position %lld:",
               json_integer_value(json_object_get(first, "position")));
        print_json(" gold ", json_object_get(first, "gold"), "");
        print_json(", prediction ", json_object_get(first, "prediction"), "\n");
    }
    json_t *rule = json_object_get(o, "rule");
    if (json_is_string(rule))
        printf("rule broken: %s\n", json_string_value(rule));
    json_t *note = json_object_get(o, "note");
    if (json_is_string(note))
        printf("note: %s\n", json_string_value(note));
    if (!json_is_true(json_object_get(o, "exact")))
        printf("note: the pairing stopped at its bound: the counts are upper bounds\n");
    json_decref(o);
}

static void print_changelog(const sx_changelog_counts_t *c)
{
    if (!c->known) {
        printf("changelog: none folded into a final CSV\n");
        return;
    }
    printf("changelog:");
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        printf("%s %s %llu", k ? "," : "", sx_change_kind_name((sx_change_kind_t)k),
               (unsigned long long)c->records[k]);
    printf("; final relation %llu rows\n", (unsigned long long)c->rows);
}

static void print_report(const sx_result_t *result, const sx_timings_t *t,
                         const char *engine)
{
    printf("task %s: %s (score %d)\n", result->task_id, sx_status_name(result->status),
           result->score);
    if (result->detail[0])
        printf("detail: %s\n", result->detail);
    printf("engine: %s\n", engine);
    if (result->csv) {
        printf("final CSV %s:\n", result->csv);
        print_file(result->csv);
    } else {
        printf("final CSV: none\n");
    }
    print_changelog(&result->changelog);
    printf(
        "timings (s): prepare %.3f  replay %.3f  submit %.3f  run %.3f  materialize %.3f"
        "  score %.3f  cleanup %.3f  total %.3f\n",
        t->prepare, t->replay, t->submit, t->run, t->materialize, t->score, t->cleanup,
        result->seconds);
}

/* The pair to run on: the external one given, local pair opt->index if it
 * already runs healthy, else that pair started now (and stopped when the
 * returned object is destroyed). */
static sx_pair_t *pair_open(const exec_options_t *opt, sx_error_t *err)
{
    sx_pair_config_t config;
    sx_pair_config_defaults(&config, opt->index);
    config.flink = opt->flink;
    config.kafka_bootstrap = opt->bootstrap;
    config.flink_gateway = opt->gateway;
    config.flink_rest = opt->rest;
    if (opt->bootstrap)
        config.start_timeout_s = EXTERNAL_WAIT_S;
    sx_pair_t *pair = sx_pair_new(&config, err);
    if (!pair)
        return NULL;
    sx_pair_status_t status;
    sx_error_t unused; /* a pair that is not up is simply started */
    bool healthy = !opt->bootstrap && sx_pair_status(pair, &status, &unused) == 0;
    for (int i = 0; healthy && i < SX_PAIR_COMPONENTS; i++)
        healthy = status.components[i].running && status.components[i].healthy;
    if (healthy && sx_pair_check_running_engine(pair, err) != 0) {
        sx_pair_destroy(&pair);
        return NULL;
    }
    if (healthy) {
        sx_info("using the running pair %d", opt->index);
        return pair;
    }
    if (!opt->bootstrap)
        sx_info("starting pair %d (stopped again at the end)", opt->index);
    if (sx_pair_start(pair, err) != 0)
        sx_pair_destroy(&pair);
    return pair;
}

static void remove_temp_csv(char *csv)
{
    unlink(csv);
    char *slash = strrchr(csv, '/');
    *slash = '\0';
    rmdir(csv);
}

static int execute(const exec_options_t *opt, const char *sql, sx_error_t *err)
{
    char run_id[64], csv[4096];
    snprintf(run_id, sizeof run_id, "exec-%ld-%d", (long)time(NULL), (int)getpid());
    if (opt->output)
        snprintf(csv, sizeof csv, "%s", opt->output);
    else
        snprintf(csv, sizeof csv, "%s/streamex-exec-%s/%s.csv",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", run_id, opt->task);
    sx_pair_t *pair = pair_open(opt, err);
    if (!pair)
        return sx_signals_caught() ? sx_signals_exit_code() : 2;
    sx_executor_config_t config = {sx_pair_bootstrap(pair),
                                   sx_pair_gateway_url(pair),
                                   sx_pair_rest_url(pair),
                                   opt->run_id ? opt->run_id : run_id,
                                   opt->profile,
                                   opt->keep,
                                   pair};
    sx_executor_t *executor = sx_executor_new(&config, err);
    if (!executor) {
        sx_pair_destroy(&pair);
        return 2;
    }
    char engine[300];
    sx_pair_describe(pair, engine, sizeof engine);
    char *records = NULL;
    size_t records_size = 0;
    FILE *trace = opt->changelog ? open_memstream(&records, &records_size) : NULL;
    sx_executor_set_trace(executor, trace ? trace_record : NULL, trace, opt->changelog);
    sx_exec_request_t request = {opt->bench, opt->task, sql, 1, csv, NULL, 0};
    sx_result_t result;
    sx_timings_t timings;
    sx_executor_run(executor, &request, &result, &timings);
    if (trace)
        fclose(trace);
    timings.cleanup = sx_executor_finish_task(executor);
    sx_executor_destroy(&executor);
    sx_pair_destroy(&pair);
    if (sx_signals_caught()) { /* no verdict: the run was cut, not the query */
        free(records);
        sx_result_clear(&result);
        if (!opt->output) /* our temporary folder goes with the CSV */
            remove_temp_csv(csv);
        return sx_signals_exit_code();
    }
    print_report(&result, &timings, engine);
    print_diff(opt, &result);
    if (opt->changelog)
        printf("first %zu records of the changelog, as they came:\n%s", opt->changelog,
               records && records[0] ? records : "  (none read)\n");
    free(records);
    int code = result.status == SX_STATUS_MATCH ? 0 : 1;
    sx_result_clear(&result);
    return code;
}

int sx_cmd_exec(int argc, char **argv)
{
    sx_log_set_component("exec");
    exec_options_t opt;
    sx_error_t err;
    sx_error_clear(&err);
    int parsed = parse_options(argc, argv, &opt, &err);
    if (parsed == 1) {
        fputs(s_usage, stdout);
        return 0;
    }
    if (parsed != 0)
        return sx_usage_error("exec", s_usage, "%s", err.msg);
    sx_bench_t *bench = sx_bench_open(opt.bench, &err);
    if (bench && sx_bench_index_of(bench, opt.task) < 0)
        sx_error_set(&err, "%s/task_ids.txt: no task '%s'", opt.bench, opt.task);
    char *sql = NULL;
    int code = 2;
    if (bench && !sx_error_is_set(&err) && load_candidate(&opt, bench, &sql, &err) == 0)
        code = execute(&opt, sql, &err);
    if (sx_error_is_set(&err))
        fprintf(stderr, "streamex exec: %s\n", err.msg);
    free(sql);
    sx_bench_destroy(&bench);
    return code;
}
