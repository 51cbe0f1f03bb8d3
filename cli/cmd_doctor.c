/* cmd_doctor.c: `streamex doctor`, for benchmark authors. Two checks of a
 * bench's reference queries. `doctor --bench B [--repeat N]` runs them
 * through the real path (`streamex run`'s coordinator and workers, each on
 * its own Kafka + Flink pair, never from the result cache) N times and
 * lists every task whose reference does not match its gold or whose final
 * relation is not the same on every run (--repeat: a gold that depends on
 * timing, such as processing time). `doctor --oracle batch`: a
 * gold relation is the final relation of a reference query run in Flink
 * STREAMING mode; where Flink BATCH over the very same rows gives another
 * relation, the gold depends on the execution mode or on timing, and a
 * method can be right and score 0. doctor runs each reference query in
 * BATCH mode (worker/check/oracle.h), scores the batch relation against gold with
 * the EX comparison, and lists every task that differs, naming the cause
 * where it is a known one (found by tests/differential): a global aggregate
 * over empty input, event times before 1970, a zero-delay watermark on tied
 * event times (worker/check/hazards.h), dedup or Top-N whose order has ties,
 * and what differs between engines (QUALIFY, an unbounded OVER aggregation):
 * gold made on one engine, BATCH run on another (--flink). */
#include "cli/commands.h"
#include "cli/runopts.h"
#include "common/csv.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/bench/predictions.h"
#include "common/bench/problems.h"
#include "common/results/result.h"
#include "common/ex/score.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "proto/proto.h"
#include "worker/check/hazards.h"
#include "worker/check/oracle.h"
#include "worker/exec/prepare.h"
#include "worker/pair/engine.h"
#include "worker/pair/pair.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Each HTTP request to the gateway or Flink REST; jobs wait longer. */
#define CLIENT_TIMEOUT_MS 30000

static const char s_usage[] =
    "usage: streamex doctor --bench BENCH [--repeat N] [--reference FILE]\n"
    "                       [--output DIR] [--index I] [--workers W] [--slots S]\n"
    "                       [--flink X.Y]\n"
    "       streamex doctor --oracle batch --bench BENCH [--reference FILE]\n"
    "                       [--output DIR] [--index N [--flink X.Y] | --flink-gateway\n"
    "                        URL --flink-rest URL]\n"
    "\n"
    "Without --oracle: runs each task's reference query (FILE, default\n"
    "BENCH/reference.jsonl) through the real path N times (default 1), as\n"
    "`streamex run --repeat N --no-cache` does, on W local workers (default 1)\n"
    "with pairs I.. (default 0; started and stopped here), each running S tasks\n"
    "at once (default 4), and lists every task\n"
    "whose reference does not match gold or whose final relation is not the same\n"
    "on every run, into the output folder DIR (default streamex-doctor), which keeps\n"
    "the other runs' CSVs of an unstable task (reference/csv/ID.runK.csv).\n"
    "--simulate SPEC runs the simulated executor instead (tests). --flink X.Y\n"
    "runs them on that engine (scripts/setup-runtime.sh --flink X.Y installs it).\n"
    "Exit status: 0 every reference matches and is stable, 1 some task is listed,\n"
    "2 bad usage or the run failed.\n"
    "\n"
    "With --oracle batch:\n"
    "Runs each task's reference query (FILE, default BENCH/reference.jsonl, one\n"
    "{\"task_id\", \"sql\"} a line) with Flink in BATCH mode over the task's own\n"
    "prepared rows, compares the result with gold/ID.csv (the streaming final\n"
    "relation) under the task's evaluation, and lists every task where the two\n"
    "differ, with the known cause when there is one. Uses the running local pair N\n"
    "(default 0; start it with `streamex runtime up --index N --detach`) or the\n"
    "given Flink, which must see this machine's files. --flink X.Y: the local\n"
    "pair must run that engine. --output keeps each batch relation as DIR/ID.csv.\n"
    "\n"
    "Exit status: 0 no task differs (tasks that fail in BATCH mode, such as\n"
    "session windows, are listed but cannot be compared), 1 some task differs,\n"
    "2 bad usage or no Flink.\n";

typedef struct {
    const char *bench;
    const char *reference;
    const char *output;
    const char *gateway;
    const char *rest;
    const char *flink; /* --flink X.Y: the engine of the local pairs */
    int index;
    bool batch;  /* --oracle batch */
    long repeat; /* streaming: runs of each reference */
    long workers;
    long slots;           /* streaming: tasks each worker runs at once */
    const char *simulate; /* streaming, tests: the simulated executor */
} doctor_options_t;

typedef struct {
    size_t same, differ, failed, unreferenced;
} doctor_tally_t;

/* 0: options ready; 1: --help; -1: bad usage (err says why). */
static int parse_options(int argc, char **argv, doctor_options_t *opt, sx_error_t *err)
{
    static const struct option longs[] = {
        {"oracle", required_argument, 0, 'O'},
        {"bench", required_argument, 0, 'b'},
        {"reference", required_argument, 0, 'r'},
        {"output", required_argument, 0, 'o'},
        {"flink-gateway", required_argument, 0, 'G'},
        {"flink-rest", required_argument, 0, 'R'},
        {"index", required_argument, 0, 'i'},
        {"repeat", required_argument, 0, 'n'},
        {"workers", required_argument, 0, 'w'},
        {"slots", required_argument, 0, 'S'},
        {"simulate", required_argument, 0, 's'},
        {"flink", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *opt = (doctor_options_t){.repeat = 1, .workers = 1, .slots = SX_RUN_SLOTS_DEFAULT};
    bool oracle = false, repeat = false, workers = false;
    optind = 1;
    int c;
    long index = 0;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 'O':
            if (strcmp(optarg, "batch") != 0)
                return sx_error_set(err, "--oracle '%s': only 'batch' is known", optarg);
            oracle = true;
            break;
        case 'b':
            opt->bench = optarg;
            break;
        case 'r':
            opt->reference = optarg;
            break;
        case 'o':
            opt->output = optarg;
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
        case 'n':
            if (sx_option_int("repeat", optarg, 1, SX_RUN_REPEAT_MAX, &opt->repeat,
                              err) != 0)
                return -1;
            repeat = true;
            break;
        case 'w':
            if (sx_option_int("workers", optarg, 1, SX_RUN_WORKERS_MAX, &opt->workers,
                              err) != 0)
                return -1;
            workers = true;
            break;
        case 'S':
            if (sx_option_int("slots", optarg, 1, SX_PROTO_SLOTS_MAX, &opt->slots, err) !=
                0)
                return -1;
            workers = true; /* a streaming option */
            break;
        case 's':
            opt->simulate = optarg;
            workers = true; /* a streaming option */
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
    if (!opt->bench)
        return sx_error_set(err, "--bench is required");
    opt->batch = oracle;
    if (oracle && (repeat || workers))
        return sx_error_set(err,
                            "--repeat, --workers, --slots and --simulate are for the "
                            "streaming check, not --oracle batch");
    if (!oracle && (opt->gateway || opt->rest))
        return sx_error_set(err,
                            "--flink-gateway and --flink-rest are for --oracle batch");
    if (opt->index + opt->workers - 1 > SX_PAIR_MAX_INDEX)
        return sx_error_set(err, "--index + --workers goes past pair index %d",
                            SX_PAIR_MAX_INDEX);
    if (!opt->gateway != !opt->rest)
        return sx_error_set(err, "--flink-gateway and --flink-rest go together");
    if (opt->flink && (opt->gateway || opt->simulate))
        return sx_error_set(err, "--flink picks the engine of the local pairs; the given "
                                 "Flink and --simulate have none to pick");
    return 0;
}

/* Data rows of a CSV as pandas counts them (blank lines skipped), or -1. */
static long data_rows(const char *path)
{
    sx_csv_table_t *table = sx_csv_read(path, 0, NULL);
    long rows = table && table->count > 0 ? 0 : -1;
    for (size_t i = 1; table && i < table->count; i++)
        rows += table->records[i].count > 0;
    sx_csv_table_destroy(&table);
    return rows;
}

/* Prints the reference's engine hazards as causes (worker/check/hazards.h):
 * gold made on one engine, BATCH run on another; returns how many. */
static int print_engine_causes(const char *sql, const sx_task_t *task)
{
    unsigned found = sx_hazards_engine(sql, task);
    int printed = 0;
    for (int h = 0; h < SX_ENGINE_HAZARDS; h++)
        if (found & sx_hazards_engine_flag(h)) {
            printf("  cause: the reference uses %s\n", sx_hazards_engine_text(h));
            printed++;
        }
    return printed;
}

/* Prints the known causes that fit the task; returns how many. */
static int print_causes(const sx_task_t *task, const char *sql, long gold_rows,
                        long batch_rows)
{
    int found = 0;
    if (gold_rows == 0 && batch_rows == 1) {
        printf("  cause: a global aggregate over no rows: BATCH gives one row, "
               "STREAMING none\n");
        found++;
    }
    sx_problems_t *hazards = sx_problems_new();
    for (size_t i = 0; hazards && i < task->source_count; i++) {
        sx_prepare_t *prepared = sx_prepare_scan(task->task_id, &task->sources[i], NULL);
        if (prepared)
            sx_hazards_source(task->task_id, &task->sources[i], prepared, hazards);
        sx_prepare_destroy(&prepared);
    }
    for (size_t i = 0; hazards && i < sx_problems_kept(hazards); i++, found++)
        printf("  cause: %s\n", sx_problems_get(hazards, i));
    sx_problems_destroy(&hazards);
    if (strcasestr(sql, "ROW_NUMBER")) {
        printf("  cause: a dedup or Top-N: with ties in its ORDER BY, the row kept "
               "depends on arrival order\n");
        found++;
    }
    found += print_engine_causes(sql, task);
    if (!found)
        printf("  cause: none of the known ones\n");
    return found;
}

/* Runs one task's reference in BATCH mode and compares it with gold. */
static void doctor_task(sx_gateway_t *gateway, const sx_bench_t *bench, const char *id,
                        const char *sql, const char *csv, const char *work,
                        doctor_tally_t *tally)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_task_t *task = sx_task_load(sx_bench_dir(bench), id, &err);
    sx_gateway_rc_t rc = task ? sx_oracle_batch(gateway, task, sql, work, csv, &err)
                              : SX_GATEWAY_SQL_ERROR;
    if (rc != SX_GATEWAY_OK) {
        printf("task %s: fails in BATCH mode: %s\n", id, err.msg);
        print_engine_causes(sql, task);
        tally->failed++;
        sx_task_destroy(&task);
        return;
    }
    char *gold = sx_bench_gold_path(bench, id);
    char *spec = sx_bench_evaluation_path(bench, id);
    sx_evaluation_t *evaluation = sx_evaluation_load(spec, &err);
    char detail[512] = "";
    int strict = 0; /* the frozen verdict decides "same relation" here */
    sx_status_t status = evaluation ? sx_score_files(gold, csv, evaluation,
                                                     SX_PROFILE_SPIDER2_LITE_2025_11,
                                                     &strict, detail, sizeof detail)
                                    : SX_STATUS_EVAL_ERROR;
    if (status == SX_STATUS_MATCH) {
        tally->same++;
    } else {
        long gold_rows = data_rows(gold), batch_rows = data_rows(csv);
        printf("task %s: gold (STREAMING, %ld rows) differs from BATCH (%ld rows): %s\n",
               id, gold_rows, batch_rows, evaluation ? detail : err.msg);
        print_causes(task, sql, gold_rows, batch_rows);
        tally->differ++;
    }
    sx_evaluation_destroy(&evaluation);
    free(gold);
    free(spec);
    sx_task_destroy(&task);
}

static int doctor(const doctor_options_t *opt, sx_gateway_t *gateway, const char *work)
{
    sx_error_t err;
    sx_bench_t *bench = sx_bench_open(opt->bench, &err);
    char *reference =
        bench && !opt->reference ? sx_format("%s/reference.jsonl", opt->bench) : NULL;
    sx_predictions_t *references =
        bench ? sx_predictions_load(opt->reference ? opt->reference : reference, bench,
                                    &err)
              : NULL;
    free(reference);
    if (!references) {
        fprintf(stderr, "streamex doctor: %s\n", err.msg);
        sx_bench_destroy(&bench);
        return 2;
    }
    doctor_tally_t tally = {0};
    for (size_t i = 0; i < sx_bench_task_count(bench); i++) {
        const char *id = sx_bench_task_id(bench, i);
        const char *sql = sx_predictions_sql(references, id);
        if (!sql) {
            tally.unreferenced++;
            continue;
        }
        char csv[4096], task_work[4096];
        snprintf(csv, sizeof csv, "%s/%s.csv", opt->output ? opt->output : work, id);
        snprintf(task_work, sizeof task_work, "%s/work-%s", work, id);
        doctor_task(gateway, bench, id, sql, csv, task_work, &tally);
        if (!opt->output)
            unlink(csv);
    }
    printf("doctor: %zu tasks: %zu agree with BATCH, %zu differ, %zu fail in BATCH mode, "
           "%zu without a reference\n",
           sx_bench_task_count(bench), tally.same, tally.differ, tally.failed,
           tally.unreferenced);
    sx_predictions_destroy(&references);
    sx_bench_destroy(&bench);
    return tally.differ ? 1 : 0;
}

/* ---- the streaming check: the references through the real path --------- */

typedef struct {
    size_t tasks, good, wrong, unstable, unreferenced;
} streaming_tally_t;

/* Names the CSVs --repeat kept beside a task's final CSV. */
static void print_kept_runs(const char *csv, long repeat)
{
    size_t stem = strlen(csv) > 4 ? strlen(csv) - 4 : 0; /* without ".csv" */
    for (long k = 2; k <= repeat; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s.run%ld.csv", (int)stem, csv, k);
        if (sx_file_exists(path))
            printf("  run %ld: %s\n", k, path);
    }
}

/* Lists one reference's problems from its results.jsonl line. */
static int judge_line(const char *line, long repeat, streaming_tally_t *tally,
                      sx_error_t *err)
{
    sx_result_t r;
    if (sx_result_from_json(line, &r, err) != 0)
        return -1;
    bool wrong = r.status != SX_STATUS_MATCH && r.status != SX_STATUS_MISSING_PREDICTION;
    if (r.status == SX_STATUS_MISSING_PREDICTION)
        tally->unreferenced++;
    if (wrong)
        printf("task %s: the reference does not match gold: %s%s%s\n", r.task_id,
               sx_status_name(r.status), r.detail[0] ? ": " : "", r.detail);
    if (r.repeated && r.unstable) {
        printf("task %s: the reference is not stable over %ld runs (final CSV %s)\n",
               r.task_id, repeat, r.csv ? r.csv : "none");
        if (r.csv)
            print_kept_runs(r.csv, repeat);
    }
    tally->tasks++;
    tally->wrong += wrong;
    tally->unstable += r.repeated && r.unstable;
    tally->good += r.status == SX_STATUS_MATCH && !r.unstable;
    sx_result_clear(&r);
    return 0;
}

static int judge_results(const char *out, long repeat, streaming_tally_t *tally,
                         sx_error_t *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reference/results.jsonl", out);
    size_t size = 0;
    char *data = sx_file_read(path, (size_t)1 << 30, &size, err);
    if (!data)
        return -1;
    sx_lines_t lines;
    sx_lines_init(&lines, path, data, size);
    char *line = NULL;
    size_t length = 0;
    int rc = 0, got = 0;
    while (rc == 0 && (got = sx_lines_next(&lines, &line, &length, err)) == 1)
        if (judge_line(line, repeat, tally, err) != 0) {
            sx_error_prefix(err, "%s:%zu", path, lines.number);
            rc = -1;
        }
    free(data);
    return rc == 0 && got < 0 ? -1 : rc;
}

/* Runs the references (no result cache) into out, then judges them. */
static int doctor_streaming(const doctor_options_t *opt, const char *out)
{
    sx_runopts_t run = {0};
    sx_error_t err;
    sx_error_clear(&err);
    char *method = opt->reference ? sx_format("reference=%s", opt->reference)
                                  : sx_format("reference=%s/reference.jsonl", opt->bench);
    run.bench = opt->bench;
    run.output = out;
    run.repeat = (int)opt->repeat;
    run.no_cache = true;
    run.simulate = opt->simulate;
    int code = sx_method_args_add(&run.methods, &run.method_count, method, &err) == 0
                   ? sx_run_local(&run,
                                  &(sx_local_run_t){.workers = opt->workers,
                                                    .capacity = 2,
                                                    .first_index = opt->index,
                                                    .slots = opt->slots,
                                                    .flink = opt->flink,
                                                    .quiet = true,
                                                    .command = "doctor"},
                                  &err)
                   : 2;
    free(method);
    sx_runopts_free(&run);
    streaming_tally_t tally = {0};
    if (code != 0 && code != 3) {
        fprintf(stderr,
                "streamex doctor: the run of the references failed (exit %d)%s%s\n", code,
                sx_error_is_set(&err) ? ": " : "", sx_error_is_set(&err) ? err.msg : "");
        return 2;
    }
    if (judge_results(out, opt->repeat, &tally, &err) != 0) {
        fprintf(stderr, "streamex doctor: %s\n", err.msg);
        return 2;
    }
    printf("doctor: %zu tasks, each reference run %ld time(s): %zu match gold and are "
           "stable, %zu do not match gold, %zu not stable, %zu without a reference "
           "(output in %s)\n",
           tally.tasks, opt->repeat, tally.good, tally.wrong, tally.unstable,
           tally.unreferenced, out);
    return tally.wrong || tally.unstable ? 1 : 0;
}

/* The engine local pair opt->index runs, into out: the one --flink asks
 * for (or the default) when the pair runs it; else a message on stderr and
 * -1. A pair that does not run is the gateway check's to report. */
static int local_engine(const doctor_options_t *opt, char *out, size_t size)
{
    sx_pair_config_t config;
    sx_pair_config_defaults(&config, opt->index);
    config.flink = opt->flink;
    sx_error_t err;
    sx_pair_t *pair = sx_pair_new(&config, &err);
    int rc = pair ? sx_pair_check_running_engine(pair, &err) : -1;
    if (rc == 0)
        sx_pair_describe(pair, out, size);
    else
        fprintf(stderr, "streamex doctor: %s\n", err.msg);
    sx_pair_destroy(&pair);
    return rc;
}

int sx_cmd_doctor(int argc, char **argv)
{
    doctor_options_t opt;
    sx_error_t err;
    sx_error_clear(&err);
    int parsed = parse_options(argc, argv, &opt, &err);
    if (parsed == 1) {
        fputs(s_usage, stdout);
        return 0;
    }
    if (parsed != 0)
        return sx_usage_error("doctor", s_usage, "%s", err.msg);
    if (!opt.batch)
        return doctor_streaming(&opt, opt.output ? opt.output : "streamex-doctor");
    char engine[300] = "the given Flink";
    if (!opt.gateway && local_engine(&opt, engine, sizeof engine) != 0)
        return 2;
    char gateway_url[64], rest_url[64];
    snprintf(gateway_url, sizeof gateway_url, "http://127.0.0.1:%d",
             sx_pair_port(opt.index, SX_PORT_GATEWAY));
    snprintf(rest_url, sizeof rest_url, "http://127.0.0.1:%d",
             sx_pair_port(opt.index, SX_PORT_FLINK_REST));
    sx_gateway_t *gateway =
        sx_gateway_new(opt.gateway ? opt.gateway : gateway_url,
                       opt.rest ? opt.rest : rest_url, CLIENT_TIMEOUT_MS, &err);
    if (!gateway || sx_gateway_check(gateway, &err) != 0) {
        fprintf(stderr,
                "streamex doctor: no Flink at %s: %s (start pair %d with `streamex "
                "runtime up --index %d --detach`)\n",
                opt.gateway ? opt.gateway : gateway_url, err.msg, opt.index, opt.index);
        sx_gateway_destroy(&gateway);
        return 2;
    }
    char work[] = "/tmp/sx-doctor-XXXXXX";
    int code = 2;
    if (!mkdtemp(work))
        fprintf(stderr, "streamex doctor: cannot make a work folder in /tmp\n");
    else if (opt.output && sx_mkdirs(opt.output, &err) != 0)
        fprintf(stderr, "streamex doctor: %s\n", err.msg);
    else {
        printf("engine: %s\n", engine);
        code = doctor(&opt, gateway, work);
    }
    rmdir(work);
    sx_gateway_destroy(&gateway);
    return code;
}
