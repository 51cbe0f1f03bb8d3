/* cmd_score.c: `streamex score`, the official evaluator's job on existing
 * final CSVs (docs/outputs.md, docs/ex.md): for each method, read its submission.jsonl
 * (task ID -> CSV path or null), score every task ID of task_ids.txt with
 * the Spider 2.0 comparison (common/ex/score.h), and write OUT/NAME/results.jsonl,
 * OUT/NAME/submission.jsonl, the diffs of the misses (OUT/NAME/diff/) and
 * OUT/summary.json. No Kafka, no Flink. */
#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/options.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/results/result.h"
#include "common/ex/score.h"
#include "common/signals.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/files.h"
#include "common/log.h"
#include "common/report/report.h"
#include "common/sample.h"
#include "coordinator/diffs.h"

#include <czmq.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_usage[] =
    "usage: streamex score --bench BENCH --method NAME=SUBMISSION.jsonl [--method ...]\n"
    "                      --output OUT [--profile PROFILE] [--max-samples N]\n"
    "                      [--bootstrap B] [--seed S]\n"
    "\n"
    "Scores existing final CSVs against gold, as the benchmark's official\n"
    "evaluator does. SUBMISSION.jsonl holds one {\"task_id\": ID, \"csv\": PATH|null}\n"
    "a line; a relative PATH is taken from the submission file's folder. Every\n"
    "ID of BENCH/task_ids.txt is scored, in that order, and stays in the\n"
    "denominator:\n"
    "  no line or csv null      missing_prediction (score 0)\n"
    "  CSV pandas cannot read   mismatch (score 0, like the official evaluator;\n"
    "   (missing, empty, ...)    detail says why)\n"
    "  gold or evaluation bad   eval_error (score 0)\n"
    "Several samples per task: a line may carry \"sample\": K (0 <= K < N); a\n"
    "line without it is sample 0; every (ID, sample K < n) is scored, n = 1 +\n"
    "the largest K, and one without a line is missing_prediction.\n"
    "An unknown task ID, an (ID, sample) given twice, a bad sample number or a\n"
    "line that is not such an object is an error naming the file and line;\n"
    "nothing is written then.\n"
    "Writes OUT/NAME/results.jsonl (attempts 0, worker \"\", seconds = time to\n"
    "score), OUT/NAME/submission.jsonl (absolute paths), OUT/NAME/diff/ID.json\n"
    "for each task whose verdict or strict verdict is 0 (the gold rows its CSV\n"
    "lacks and the rows it has that gold lacks) and OUT/summary.json (with the\n"
    "95% intervals and every pair of methods compared: docs/statistics.md),\n"
    "and prints 'NAME: EX = correct/total = 0.xxxx, 95% CI [low, high]' for each\n"
    "method, then the strict, row-aligned EX beside it (never instead of it)\n"
    "and the tasks where the two verdicts differ, with the reason.\n"
    "\n"
    "  --bench BENCH          the benchmark folder (docs/benchmark.md)\n"
    "  --method NAME=FILE     a method's submission.jsonl; repeatable\n"
    "  --output OUT           the output folder\n"
    "  --profile PROFILE      spider2-lite-2025-11 (default: NaN counts as 0) or\n"
    "                         spider2-lite-2025-03 (NaN equals only NaN)\n"
    "  --max-samples N        sample numbers must be below N (default "
    "100)\n" SX_BOOTSTRAP_OPTIONS_HELP "  -h, --help             this text\n"
    "\n" SX_FILE_LIMITS_HELP "\n"
    "Exit status: 0 every task scored (whatever the verdicts), 2 bad usage, an\n"
    "unreadable bench or submission, or outputs that cannot be written.\n";

typedef struct {
    const char *bench_dir;
    const char *out_dir;
    sx_profile_t profile;
    int max_samples;
    sx_method_arg_t *methods;
    size_t method_count;
    sx_bootstrap_t bootstrap;
} score_args_t;

/* Parses the command line; returns -1 to go on, else the exit code. */
static int parse_arguments(int argc, char **argv, score_args_t *args)
{
    static const struct option options[] = {
        {"bench", required_argument, NULL, 'b'},
        {"method", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"profile", required_argument, NULL, 'p'},
        {"max-samples", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        SX_BOOTSTRAP_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int option;
    while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        sx_error_t err;
        int taken = sx_bootstrap_option(option, optarg, &args->bootstrap, &err);
        if (taken < 0)
            return sx_usage_error("score", s_usage, "%s", err.msg);
        if (taken)
            continue;
        switch (option) {
        case 'b':
            args->bench_dir = optarg;
            break;
        case 'o':
            args->out_dir = optarg;
            break;
        case 'p':
            if (sx_profile_parse(optarg, &args->profile) != 0)
                return sx_usage_error("score", s_usage, "unknown profile '%s'", optarg);
            break;
        case 's': {
            long value = 0;
            if (sx_option_int("max-samples", optarg, 1, SX_SAMPLES_LIMIT, &value, &err) !=
                0)
                return sx_usage_error("score", s_usage, "%s", err.msg);
            args->max_samples = (int)value;
            break;
        }
        case 'm':
            if (sx_method_args_add(&args->methods, &args->method_count, optarg, &err) !=
                0)
                return sx_usage_error("score", s_usage, "%s", err.msg);
            break;
        case 'h':
            fputs(s_usage, stdout);
            return 0;
        default:
            return sx_option_error("score", option, argv, s_usage);
        }
    }
    const char *missing = optind < argc         ? NULL
                          : !args->bench_dir    ? "--bench BENCH"
                          : !args->method_count ? "--method NAME=FILE"
                          : !args->out_dir      ? "--output OUT"
                                                : NULL;
    if (optind < argc)
        return sx_usage_error("score", s_usage, "unexpected argument '%s'", argv[optind]);
    if (missing)
        return sx_usage_error("score", s_usage, "%s is required", missing);
    return -1;
}

/* A CSV path from a submission line: relative paths start at `base`, the
 * submission file's folder made absolute once (not per line: scoring
 * thousands of small CSVs should not cost a realpath each). */
static char *resolve_csv(const char *base, const char *csv)
{
    if (csv[0] == '/')
        return sx_strdup(csv);
    return sx_format("%s/%s", base, csv);
}

/* The absolute folder of a file, or NULL. */
static char *absolute_folder(const char *path, sx_error_t *err)
{
    char *copy = sx_strdup(path);
    char *folder = realpath(dirname(copy), NULL);
    if (!folder)
        sx_error_set(err, "%s: cannot resolve its folder", path);
    free(copy);
    return folder;
}

/* One (task, sample) a submission has a line for. */
typedef struct {
    size_t line;
    char *csv; /* absolute, or NULL for null */
} entry_t;

static void free_entry(void **item_p)
{
    entry_t *entry = *item_p;
    if (entry)
        free(entry->csv);
    free(entry);
    *item_p = NULL;
}

/* The submission's table key of (task index, sample). */
static void entry_key(char *key, size_t size, long index, int sample)
{
    snprintf(key, size, "%ld/%d", index, sample);
}

/* What load_entry reads a submission's lines into. */
typedef struct {
    const sx_bench_t *bench;
    int max_samples;
    zhashx_t *entries;
    int *samples;
    const char *base;
} submission_t;

static int load_entry(char *line, size_t number, void *arg, sx_error_t *err)
{
    submission_t *s = arg;
    char *task_id = NULL, *csv = NULL, key[64], which[48] = "";
    int sample = 0;
    int rc =
        sx_submission_entry_from_json(line, s->max_samples, &task_id, &sample, &csv, err);
    long index = rc == 0 ? sx_bench_index_of(s->bench, task_id) : -1;
    entry_key(key, sizeof key, index, sample);
    const entry_t *first = index >= 0 ? zhashx_lookup(s->entries, key) : NULL;
    if (sample > 0)
        snprintf(which, sizeof which, " sample %d", sample);
    if (rc == 0 && index < 0)
        rc = sx_error_set(err, "task \"%s\" is not in task_ids.txt", task_id);
    else if (first)
        rc = sx_error_set(err, "task \"%s\"%s appears twice (first on line %zu)", task_id,
                          which, first->line);
    if (rc == 0) {
        entry_t *entry = sx_alloc(1, sizeof *entry);
        entry->line = number;
        entry->csv = csv ? resolve_csv(s->base, csv) : NULL;
        zhashx_insert(s->entries, key, entry);
        *s->samples = sample >= *s->samples ? sample + 1 : *s->samples;
    }
    free(task_id);
    free(csv);
    return rc;
}

/* Reads a submission into `entries` by (task, sample); *samples is n, 1 +
 * the largest sample number. */
static int load_submission(const char *path, const sx_bench_t *bench, int max_samples,
                           zhashx_t *entries, int *samples, sx_error_t *err)
{
    size_t size = 0;
    char *base = absolute_folder(path, err);
    char *data = base ? sx_file_load(NULL, path, SX_FILE_JSONL, &size, err) : NULL;
    if (!data) {
        free(base);
        return -1;
    }
    *samples = 1;
    submission_t s = {bench, max_samples, entries, samples, base};
    int rc = sx_lines_each(path, data, size, load_entry, &s, err);
    free(data);
    free(base);
    return rc;
}

/* Scores one task of one method into *result. */
static void score_task(const sx_bench_t *bench, const char *task_id, const char *csv,
                       bool has_line, sx_profile_t profile, sx_result_t *result)
{
    double start = sx_clock_seconds();
    if (!csv) {
        sx_result_init(result, task_id, SX_STATUS_MISSING_PREDICTION,
                       has_line ? "csv is null" : "no line in the submission", NULL);
        result->seconds = sx_clock_seconds() - start;
        return;
    }
    char detail[SX_ERROR_MAX] = "";
    sx_status_t status;
    int strict = 0;
    sx_error_t err;
    char *spec = sx_bench_evaluation_path(bench, task_id);
    char *gold = sx_bench_gold_path(bench, task_id);
    sx_evaluation_t *evaluation = sx_evaluation_load(spec, &err);
    if (!evaluation) {
        status = SX_STATUS_EVAL_ERROR;
        snprintf(detail, sizeof detail, "%.*s", (int)sizeof detail - 1, err.msg);
    } else {
        status = sx_score_files(gold, csv, evaluation, profile, &strict, detail,
                                sizeof detail);
    }
    sx_result_init(result, task_id, status, detail, csv);
    result->strict = strict;
    result->seconds = sx_clock_seconds() - start;
    sx_evaluation_destroy(&evaluation);
    free(spec);
    free(gold);
}

/* Scores every (task, sample) of one method into *results (*count of
 * them: tasks x n, task then sample); stops early, returning 1, when a stop
 * signal comes. */
static int score_method(const score_args_t *args, const sx_bench_t *bench,
                        const sx_method_arg_t *method, sx_result_t **results,
                        size_t *count, sx_error_t *err)
{
    zhashx_t *entries = zhashx_new();
    zhashx_set_destructor(entries, free_entry);
    int samples = 1;
    int rc =
        load_submission(method->file, bench, args->max_samples, entries, &samples, err);
    size_t tasks = sx_bench_task_count(bench), n = (size_t)samples;
    *count = rc == 0 ? tasks * n : 0;
    *results = sx_alloc(*count + 1, sizeof **results);
    for (size_t i = 0; rc == 0 && i < *count; i++) {
        char key[64];
        entry_key(key, sizeof key, (long)(i / n), (int)(i % n));
        const entry_t *entry = zhashx_lookup(entries, key);
        if (sx_signals_caught())
            rc = 1;
        else
            score_task(bench, sx_bench_task_id(bench, i / n), entry ? entry->csv : NULL,
                       entry != NULL, args->profile, &(*results)[i]);
        (*results)[i].sample = (int)(i % n);
    }
    zhashx_destroy(&entries);
    return rc;
}

/* Writes every method's files, then the summary, then the report (a report
 * that cannot be written is a warning: the scores are already whole). */
static int write_outputs(const score_args_t *args, const sx_bench_t *bench,
                         sx_result_t **results, const size_t *counts,
                         sx_method_summary_t *summaries, double started, sx_error_t *err)
{
    size_t count = sx_bench_task_count(bench);
    bool *ignore = NULL; /* each task's, for maj@n's relations */
    int rc = 0;
    for (size_t m = 0; m < args->method_count && rc == 0; m++) {
        rc = sx_results_write(args->out_dir, args->methods[m].name, results[m], counts[m],
                              &summaries[m], err);
        if (rc == 0 && summaries[m].samples > 1) {
            ignore = ignore ? ignore : sx_bench_ignore_order(bench);
            rc = sx_summary_majority(&summaries[m], results[m], counts[m], ignore, err);
        }
        sx_error_t diff_err;
        if (rc == 0 &&
            sx_diffs_write(args->out_dir, args->methods[m].name, args->bench_dir,
                           args->profile, results[m], counts[m], &diff_err) != 0)
            sx_warn("the diffs of %s's misses are not all written: %s",
                    args->methods[m].name, diff_err.msg);
    }
    free(ignore);
    if (rc != 0)
        return -1;
    const char **files = sx_alloc(args->method_count + 1, sizeof *files);
    for (size_t m = 0; m < args->method_count; m++)
        files[m] = args->methods[m].file;
    char fingerprint[41];
    sx_bench_fingerprint(bench, fingerprint);
    sx_run_info_t run = {.command = "score",
                         .bench = args->bench_dir,
                         .task_count = count,
                         .profile = sx_profile_name(args->profile),
                         .method_files = files,
                         .inputs_kind = "submission",
                         .started = started,
                         .ended = sx_run_clock(),
                         .bench_fingerprint = fingerprint,
                         .bootstrap = args->bootstrap};
    rc = sx_summary_write(args->out_dir, summaries, args->method_count, &run, err);
    free(files);
    if (rc != 0)
        return -1;
    sx_error_t report_err;
    if (sx_report_write(args->out_dir, &report_err) != 0)
        sx_warn("report.html not written: %s", report_err.msg);
    for (size_t m = 0; m < args->method_count; m++)
        sx_summary_print(stdout, &summaries[m]);
    return 0;
}

static void free_results(sx_result_t **results, size_t methods, const size_t *counts)
{
    for (size_t m = 0; m < methods; m++) {
        for (size_t i = 0; results[m] && i < counts[m]; i++)
            sx_result_clear(&results[m][i]);
        free(results[m]);
    }
    free(results);
}

/* Scores every method first and writes only then: a stop signal before the
 * writing leaves OUT untouched (exit 128 + N); once writing has begun it is
 * finished, so the outputs are whole. */
static int run(const score_args_t *args)
{
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_file_limits_check(&err) != 0 ||
        sx_output_path_check(args->out_dir, &err) != 0) {
        fprintf(stderr, "streamex score: %s\n", err.msg);
        return 2;
    }
    double started = sx_run_clock();
    sx_bench_t *bench = sx_bench_open(args->bench_dir, &err);
    if (!bench) {
        fprintf(stderr, "streamex score: %s\n", err.msg);
        return 2;
    }
    sx_method_summary_t *summaries = sx_alloc(args->method_count, sizeof *summaries);
    sx_result_t **results = sx_alloc(args->method_count, sizeof *results);
    size_t *counts = sx_alloc(args->method_count, sizeof *counts);
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < args->method_count; m++)
        rc = score_method(args, bench, &args->methods[m], &results[m], &counts[m], &err);
    if (rc == 0)
        rc = write_outputs(args, bench, results, counts, summaries, started, &err);
    if (rc < 0)
        fprintf(stderr, "streamex score: %s\n", err.msg);
    else if (rc == 1)
        fprintf(stderr, "streamex score: stopped by signal %d; nothing written\n",
                sx_signals_caught());
    for (size_t m = 0; m < args->method_count; m++)
        sx_method_summary_clear(&summaries[m]);
    free(summaries);
    free_results(results, args->method_count, counts);
    free(counts);
    sx_bench_destroy(&bench);
    return rc == 0 ? 0 : rc == 1 ? sx_signals_exit_code() : 2;
}

int sx_cmd_score(int argc, char **argv)
{
    score_args_t args = {.profile = SX_PROFILE_SPIDER2_LITE_2025_11,
                         .max_samples = SX_SAMPLES_DEFAULT,
                         .bootstrap = SX_BOOTSTRAP_DEFAULT};
    int code = parse_arguments(argc, argv, &args);
    if (code < 0) {
        code = run(&args);
        sx_ending_print(stdout, args.out_dir, code,
                        code == 2   ? "a fatal error (the message above says which)"
                        : code != 0 ? "stopped by a signal; nothing written"
                                    : NULL);
    }
    sx_method_args_free(&args.methods, &args.method_count);
    return code;
}
