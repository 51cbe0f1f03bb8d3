/* cmd_check.c: `streamex check --bench BENCH [--method NAME=FILE ...]`, the
 * validation of a benchmark and of predictions files before anything runs.
 * It uses the same loaders the coordinator and workers use (common/bench/task.h,
 * common/bench/predictions.h, common/ex/score.h), but collects every problem instead
 * of stopping at the first. It goes further than loading: it fills every
 * DDL and prepares every source row as a worker would (worker/sql/ddl.h,
 * worker/exec/prepare.h), so a bench that passes check never ends in
 * input_error, and it opens what only scoring reads: each gold CSV and
 * evaluation JSON, checked against each other. Problems go to stderr one a
 * line, a summary to stdout. */
#include "cli/commands.h"
#include "cli/options.h"
#include "common/mem.h"
#include "common/signals.h"
#include "common/files.h"
#include "common/ex/frame.h"
#include "common/bench/predictions.h"
#include "common/bench/problems.h"
#include "common/ex/score.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "worker/sql/ddl.h"
#include "worker/check/hazards.h"
#include "worker/exec/prepare.h"
#include "worker/pair/pair.h"
#include "worker/sql/sqlcheck.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_usage[] =
    "usage: streamex check --bench BENCH [--method NAME=FILE ...]\n"
    "\n"
    "Validates a benchmark folder without executing anything: task_ids.txt,\n"
    "every tasks/ID/task.json and its DDL, every source CSV (each row converted\n"
    "as a worker would), gold/ID.csv against evaluation/ID.json, and each\n"
    "predictions file given with --method. Every problem found is printed to\n"
    "stderr, one a line, as 'FILE:LINE: message' or 'task ID: message'. With\n"
    "none, a summary goes to stdout: tasks, sources, tie tasks, and per method\n"
    "the predictions, the missing ones and the candidates the SQL check would\n"
    "reject (those score 0 as rejected_sql; they are not problems of the file).\n"
    "\n"
    "  --bench BENCH       the benchmark folder (docs/benchmark.md)\n"
    "  --method NAME=FILE  a predictions file, one JSON object a line; repeatable\n"
    "  -h, --help          this text\n"
    "\n" SX_FILE_LIMITS_HELP "\n"
    "Exit status: 0 no problem, 1 problems found, 2 bad usage.\n";

/* What the summary counts. */
typedef struct {
    size_t tasks;
    size_t live;
    size_t statics;
    size_t by_answer[SX_ANSWER_ANY_K_FROM_TIE_SET + 1];
    sx_problems_t *warnings; /* valid tasks whose streaming gold is fragile */
} tally_t;

typedef struct {
    size_t predicted; /* (task, sample) pairs with a prediction */
    size_t rejected;  /* candidates the SQL check turns down */
    size_t samples;   /* n: candidates per task */
} method_tally_t;

/* Gold as the evaluation reads it: read by the scorer's own pandas-style
 * reader, so check accepts and refuses exactly what scoring will. */
static bool gold_shape(const char *path, size_t *columns, size_t *rows,
                       sx_problems_t *problems)
{
    sx_error_t err;
    sx_frame_t *frame = sx_gold_read(path, &err);
    if (!frame) {
        sx_problems_add(problems, "%s", err.msg);
        return false;
    }
    *columns = sx_frame_column_count(frame);
    *rows = sx_frame_row_count(frame);
    sx_frame_destroy(&frame);
    return true;
}

/* What the evaluation asks of gold: every condition column exists, and a
 * tie task has the rows its adapter picks from. */
static void check_gold_fits(const char *gold, const char *spec,
                            const sx_evaluation_t *evaluation, sx_problems_t *problems)
{
    size_t columns, rows;
    if (!gold_shape(gold, &columns, &rows, problems))
        return;
    for (size_t i = 0; i < evaluation->condition_count; i++) {
        long col = evaluation->condition_cols[i];
        if (col < 0 || (size_t)col >= columns)
            sx_problems_add(problems,
                            "%s: condition_cols holds %ld but %s has %zu columns", spec,
                            col, gold, columns);
    }
    if (evaluation->kind == SX_ANSWER_ANY_ONE_ARGMAX && rows == 0)
        sx_problems_add(problems, "%s: any_one_argmax needs gold rows but %s has none",
                        spec, gold);
    if (evaluation->kind == SX_ANSWER_ANY_K_FROM_TIE_SET && (size_t)evaluation->k > rows)
        sx_problems_add(problems,
                        "%s: any_k_from_tie_set needs k = %ld rows but %s has %zu", spec,
                        evaluation->k, gold, rows);
}

/* gold/ID.csv and evaluation/ID.json: present, readable, consistent. */
static void check_evaluation_files(const sx_bench_t *bench, const char *id,
                                   tally_t *tally, sx_problems_t *problems)
{
    char *gold = sx_bench_gold_path(bench, id);
    char *spec = sx_bench_evaluation_path(bench, id);
    sx_error_t err;
    sx_evaluation_t *evaluation = sx_evaluation_load(spec, &err);
    if (!evaluation) {
        sx_problems_add(problems, "%s", err.msg);
        size_t columns, rows;
        gold_shape(gold, &columns, &rows, problems);
    } else {
        tally->by_answer[evaluation->kind]++;
        check_gold_fits(gold, spec, evaluation, problems);
        sx_evaluation_destroy(&evaluation);
    }
    free(gold);
    free(spec);
}

/* Checks that a DDL is the one CREATE TABLE of its table, then fills it as
 * a worker would, with stand-in topic and bootstrap. */
static void check_ddl(const sx_task_t *task, const char *where, const char *ddl,
                      const char *name, bool source, sx_problems_t *problems)
{
    static const char topic[] = "streamex-check", bootstrap[] = "127.0.0.1:9092";
    sx_error_t err;
    char *filled = NULL;
    if (sx_ddl_check_table(ddl, name, &err) == 0)
        filled = source ? sx_ddl_source(ddl, topic, bootstrap, &err)
                        : sx_ddl_fill(ddl, topic, bootstrap, &err);
    if (!filled)
        sx_problems_add(problems, "task %s: %s: %s", task->task_id, where, err.msg);
    free(filled);
}

/* The steps a worker takes before Kafka: DDL filling and the projection and
 * time conversion of every source row (the first bad row of each source),
 * and the streaming hazards of the prepared rows (worker/check/hazards.h). */
static void check_task_inputs(const sx_task_t *task, sx_problems_t *warnings,
                              sx_problems_t *problems)
{
    for (size_t i = 0; i < task->source_count; i++) {
        const sx_source_t *source = &task->sources[i];
        char where[64];
        snprintf(where, sizeof where, "sources[%zu].ddl", i);
        check_ddl(task, where, source->ddl, source->name, true, problems);
        sx_error_t err;
        sx_prepare_t *prepared = sx_prepare_scan(task->task_id, source, &err);
        if (!prepared)
            sx_problems_add(problems, "%s", err.msg);
        else if (warnings)
            sx_hazards_source(task->task_id, source, prepared, warnings);
        sx_prepare_destroy(&prepared);
    }
    check_ddl(task, "sink.ddl", task->sink_ddl, task->sink_name, false, problems);
}

/* Checks one task and its evaluation files; returns the task (for checking
 * candidates: its sink, its time attributes), NULL when it is broken. */
static sx_task_t *check_task(const sx_bench_t *bench, const char *id, tally_t *tally,
                             sx_problems_t *problems)
{
    sx_task_t *task = sx_task_check(sx_bench_dir(bench), id, problems);
    if (task) {
        for (size_t i = 0; i < task->source_count; i++) {
            if (task->sources[i].kind == SX_SOURCE_LIVE)
                tally->live++;
            else
                tally->statics++;
        }
        check_task_inputs(task, tally->warnings, problems);
    }
    check_evaluation_files(bench, id, tally, problems);
    return task;
}

/* How many of a method's candidates have each engine hazard, and the first
 * few of them, for one warning a hazard. */
#define HAZARD_NAMED 3
typedef struct {
    size_t count[SX_ENGINE_HAZARDS];
    const char *named[SX_ENGINE_HAZARDS][HAZARD_NAMED];
} engine_hazards_t;

static void count_engine_hazards(engine_hazards_t *seen, const sx_task_t *task,
                                 const char *sql)
{
    const char *task_id = task->task_id;
    unsigned found = sx_hazards_engine(sql, task);
    for (int h = 0; h < SX_ENGINE_HAZARDS; h++)
        if (found & sx_hazards_engine_flag(h) && seen->count[h]++ < HAZARD_NAMED)
            seen->named[h][seen->count[h] - 1] = task_id;
}

/* One warning a hazard the method's candidates have: "method NAME: N
 * candidate(s) (ID, ID, ID, ...) use WHAT". */
static void warn_engine_hazards(const char *method, const engine_hazards_t *seen,
                                sx_problems_t *warnings)
{
    for (int h = 0; h < SX_ENGINE_HAZARDS && warnings; h++) {
        if (!seen->count[h])
            continue;
        char ids[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < seen->count[h] && i < HAZARD_NAMED; i++)
            used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%s", i ? ", " : "",
                                     seen->named[h][i]);
        sx_problems_add(warnings, "method %s: %zu candidate(s) (%s%s) use %s", method,
                        seen->count[h], ids, seen->count[h] > HAZARD_NAMED ? ", ..." : "",
                        sx_hazards_engine_text(h));
    }
}

/* A method's predictions file: its problems, how many tasks it predicts and
 * how many candidates the SQL check would reject (rejected_sql, score 0:
 * not a problem of the file, but worth knowing before a run), and the
 * candidates whose verdict depends on the engine (warnings). */
static void check_method(const sx_bench_t *bench, const sx_method_arg_t *method,
                         sx_task_t *const *tasks, method_tally_t *tally,
                         sx_problems_t *warnings, sx_problems_t *problems)
{
    const char *file = method->file;
    sx_predictions_t *predictions = sx_predictions_check(file, bench, problems);
    if (!predictions)
        return;
    tally->predicted = sx_predictions_count(predictions);
    tally->samples = (size_t)sx_predictions_samples(predictions);
    engine_hazards_t seen;
    memset(&seen, 0, sizeof seen);
    for (size_t i = 0; i < sx_bench_task_count(bench); i++) {
        for (int k = 0; k < (int)tally->samples; k++) {
            const char *sql =
                sx_predictions_sample_sql(predictions, sx_bench_task_id(bench, i), k);
            if (!sql || !tasks[i])
                continue;
            sx_error_t err;
            char *statement = sx_sqlcheck(sql, tasks[i]->sink_name, &err);
            tally->rejected += statement == NULL;
            free(statement);
            count_engine_hazards(&seen, tasks[i], sql);
        }
    }
    warn_engine_hazards(method->name, &seen, warnings);
    sx_predictions_destroy(&predictions);
}

/* Parses the command line; returns -1 to go on, else the exit code. */
static int parse_arguments(int argc, char **argv, const char **bench_dir,
                           sx_method_arg_t **methods, size_t *method_count)
{
    static const struct option options[] = {
        {"bench", required_argument, NULL, 'b'},
        {"method", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int option;
    while ((option = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        sx_error_t err;
        switch (option) {
        case 'b':
            *bench_dir = optarg;
            break;
        case 'm':
            if (sx_method_args_add(methods, method_count, optarg, &err) != 0)
                return sx_usage_error("check", s_usage, "%s", err.msg);
            break;
        case 'h':
            fputs(s_usage, stdout);
            return 0;
        default:
            return sx_option_error("check", option, argv, s_usage);
        }
    }
    if (optind < argc)
        return sx_usage_error("check", s_usage, "unexpected argument '%s'", argv[optind]);
    if (!*bench_dir)
        return sx_usage_error("check", s_usage, "--bench BENCH is required");
    return -1;
}

static void print_bench_summary(const char *bench_dir, const tally_t *tally)
{
    printf(
        "bench %s: %zu tasks, %zu sources (%zu live, %zu static), tie tasks: ", bench_dir,
        tally->tasks, tally->live + tally->statics, tally->live, tally->statics);
    size_t argmax = tally->by_answer[SX_ANSWER_ANY_ONE_ARGMAX];
    size_t any_k = tally->by_answer[SX_ANSWER_ANY_K_FROM_TIE_SET];
    if (argmax + any_k == 0)
        printf("none\n");
    else
        printf("%zu any_one_argmax, %zu any_k_from_tie_set\n", argmax, any_k);
}

/* Prints every problem to stderr; returns the exit code. */
static int report(const sx_problems_t *problems)
{
    size_t count = sx_problems_count(problems);
    if (count == 0)
        return 0;
    for (size_t i = 0; i < sx_problems_kept(problems); i++)
        fprintf(stderr, "%s\n", sx_problems_get(problems, i));
    if (count > sx_problems_kept(problems))
        fprintf(stderr, "... and %zu more problems\n",
                count - sx_problems_kept(problems));
    fprintf(stderr, "streamex check: %zu problem%s found\n", count,
            count == 1 ? "" : "s");
    return 1;
}

/* Checks everything; prints the summary only when nothing is wrong. */
/* Whether the Kafka + Flink runtime is installed, and which versions: not a
 * problem of the bench (score needs no runtime), so it is only reported. */
static void print_runtime_line(void)
{
    char line[1024];
    sx_pair_describe_install(NULL, line, sizeof line);
    printf("runtime: %s\n", line);
}

static int check(const char *bench_dir, const sx_method_arg_t *methods,
                 size_t method_count, sx_problems_t *problems)
{
    sx_bench_t *bench = sx_bench_check(bench_dir, problems);
    if (!bench)
        return report(problems);
    tally_t tally = {.tasks = sx_bench_task_count(bench), .warnings = sx_problems_new()};
    sx_task_t **tasks = sx_alloc(tally.tasks, sizeof *tasks);
    method_tally_t *by_method = sx_alloc(method_count + 1, sizeof *by_method);
    /* A stop signal ends the check between two tasks (exit 128 + N). */
    for (size_t i = 0; i < tally.tasks && !sx_signals_caught(); i++)
        tasks[i] = check_task(bench, sx_bench_task_id(bench, i), &tally, problems);
    for (size_t i = 0; i < method_count && !sx_signals_caught(); i++)
        check_method(bench, &methods[i], tasks, &by_method[i], tally.warnings, problems);
    int code = 0;
    if (sx_signals_caught()) {
        fprintf(stderr, "streamex check: stopped by signal %d\n", sx_signals_caught());
        code = sx_signals_exit_code();
    } else {
        for (size_t i = 0; i < sx_problems_kept(tally.warnings); i++)
            fprintf(stderr, "warning: %s\n", sx_problems_get(tally.warnings, i));
        code = report(problems);
    }
    sx_problems_destroy(&tally.warnings);
    if (code == 0) {
        print_bench_summary(bench_dir, &tally);
        for (size_t i = 0; i < method_count; i++) {
            const method_tally_t *m = &by_method[i];
            printf("method %s: %zu predictions, %zu missing, %zu rejected before Flink",
                   methods[i].name, m->predicted, tally.tasks * m->samples - m->predicted,
                   m->rejected);
            if (m->samples > 1)
                printf(" (%zu samples per task)", m->samples);
            printf("\n");
        }
        print_runtime_line();
    }
    for (size_t i = 0; tasks && i < tally.tasks; i++)
        sx_task_destroy(&tasks[i]);
    free(tasks);
    free(by_method);
    sx_bench_destroy(&bench);
    return code;
}

int sx_cmd_check(int argc, char **argv)
{
    const char *bench_dir = NULL;
    sx_method_arg_t *methods = NULL;
    size_t method_count = 0;
    int code = parse_arguments(argc, argv, &bench_dir, &methods, &method_count);
    sx_error_t err;
    if (code < 0 && sx_file_limits_check(&err) != 0) {
        fprintf(stderr, "streamex check: %s\n", err.msg);
        code = 2;
    }
    if (code < 0) {
        sx_problems_t *problems = sx_problems_new();
        code = check(bench_dir, methods, method_count, problems);
        sx_problems_destroy(&problems);
    }
    sx_method_args_free(&methods, &method_count);
    return code;
}
