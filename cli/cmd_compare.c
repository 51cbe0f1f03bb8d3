/* cmd_compare.c: `streamex compare OUT_A[:METHOD] OUT_B[:METHOD]`, two
 * outputs of one bench (runs on other days, Flink versions or profiles, or
 * two methods of one run) compared task by task: the paired figures of
 * summary.json's comparisons (common/results/figures.h), EX and strict, then
 * every task whose verdict, status or final relation differs, with both
 * sides' details. The relations are compared as --repeat compares them
 * (common/csv.h, the task's ignore_order). docs/commands.md documents the
 * output, the table and the JSON. */
#include "cli/commands.h"
#include "cli/options.h"
#include "common/bench/bench.h"
#include "common/csv.h"
#include "common/ex/score.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/results/figures.h"
#include "common/results/jsonout.h"
#include "common/results/result.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char s_usage[] =
    "usage: streamex compare OUT_A[:METHOD] OUT_B[:METHOD] [--json] [--bootstrap B]\n"
    "                        [--seed S]\n"
    "\n"
    "Compares one method of output folder OUT_A with one of OUT_B (run,\n"
    "coordinator, score or merge outputs of the same bench: runs on other days,\n"
    "Flink versions or profiles, or two methods of one run) over every task ID:\n"
    "the tasks both got right, only A, only B and neither, EX(A) - EX(B) with its\n"
    "paired bootstrap 95% interval, and the exact McNemar p-value, for EX and for\n"
    "strict EX; then every task whose verdict, status or final relation differs,\n"
    "with both sides' status, detail and final CSV. Final relations are compared\n"
    "as --repeat compares them: the same header and rows, as multisets where the\n"
    "task's evaluation ignores row order. METHOD may be left out when the folder\n"
    "has one method. Two outputs of different benches (summary.json's\n"
    "run.bench_fingerprint) are refused.\n"
    "\n"
    "  --json                 the figures and tasks as one JSON object\n"
    "                         (docs/commands.md) instead of the "
    "table\n" SX_BOOTSTRAP_OPTIONS_HELP "  -h, --help             this text\n"
    "\n"
    "Exit status: 0 compared (whatever the differences), 2 bad usage or outputs\n"
    "that cannot be compared.\n";

/* One side of the comparison: a method of an output folder. */
typedef struct {
    char *out;    /* the folder, as given */
    char *method; /* heap */
    char *label;  /* "OUT:METHOD" */
    json_t *summary;
    const char *fingerprint; /* borrowed from summary */
    const char *bench;       /* run.bench, or NULL */
    sx_result_t *results;    /* task then sample: tasks x samples */
    size_t count;
    size_t samples, tasks;
    double *ex, *strict;            /* per task: the share of right samples */
    size_t correct, strict_correct; /* over every (task, sample) */
} side_t;

typedef enum { REL_SAME, REL_DIFFERENT, REL_NONE, REL_UNKNOWN } relation_t;

static const char *const s_relation_names[] = {"same", "different", "none", "unknown"};

/* A (task, sample) whose verdict, status or final relation differs. */
typedef struct {
    size_t task, sample;
    const sx_result_t *a, *b; /* each side's result */
    relation_t relation;
    char error[SX_ERROR_MAX]; /* REL_UNKNOWN: why */
    const char *words[4];     /* what differs */
    size_t words_count;
} differing_t;

static bool is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The method names of a summary, ", "-separated (heap). */
static char *method_list(json_t *methods)
{
    char *list = sx_strdup("");
    const char *name;
    json_t *m;
    json_object_foreach(methods, name, m)
    {
        char *longer = sx_format("%s%s%s", list, *list ? ", " : "", name);
        free(list);
        list = longer;
    }
    return list;
}

/* OUT, or OUT:METHOD when OUT alone is no folder. */
static int split_argument(const char *arg, side_t *side, sx_error_t *err)
{
    const char *colon = strrchr(arg, ':');
    if (is_folder(arg) || !colon) {
        side->out = sx_strdup(arg);
        return is_folder(arg) ? 0 : sx_error_set(err, "%s: no such output folder", arg);
    }
    side->out = sx_strndup(arg, (size_t)(colon - arg));
    side->method = sx_strdup(colon + 1);
    if (!is_folder(side->out))
        return sx_error_set(err, "%s: no such output folder", side->out);
    return 0;
}

/* The method of the side: the one named, else the folder's only one. */
static int pick_method(side_t *side, json_t *methods, sx_error_t *err)
{
    char *list = method_list(methods);
    int rc = 0;
    if (side->method && !json_object_get(methods, side->method))
        rc = sx_error_set(err, "%s has no method '%s' (its methods: %s)", side->out,
                          side->method, list);
    else if (!side->method && json_object_size(methods) != 1)
        rc = sx_error_set(err, "%s holds %zu methods (%s): name one as %s:METHOD",
                          side->out, json_object_size(methods), list, side->out);
    else if (!side->method)
        side->method = sx_strdup(json_object_iter_key(json_object_iter(methods)));
    free(list);
    return rc;
}

/* The side's samples per task (1 + the largest sample number) and tasks,
 * once its results are seen to run task by task, each task's samples in
 * order, as sx_results_write writes them. */
static int count_tasks(side_t *side, const char *path, sx_error_t *err)
{
    side->samples = 1;
    for (size_t i = 0; i < side->count; i++)
        if ((size_t)side->results[i].sample >= side->samples)
            side->samples = (size_t)side->results[i].sample + 1;
    side->tasks = side->count / side->samples;
    for (size_t i = 0; i < side->count; i++) {
        const sx_result_t *r = &side->results[i], *first = r - i % side->samples;
        if ((size_t)r->sample != i % side->samples || strcmp(r->task_id, first->task_id))
            return sx_error_set(err,
                                "%s:%zu: task %s sample %d breaks the order of %zu "
                                "samples per task",
                                path, i + 1, r->task_id, r->sample, side->samples);
    }
    return side->count % side->samples == 0
               ? 0
               : sx_error_set(err, "%s: %zu results are not tasks of %zu samples each",
                              path, side->count, side->samples);
}

static int load_side(const char *arg, side_t *side, sx_error_t *err)
{
    if (split_argument(arg, side, err) != 0)
        return -1;
    char *path = sx_format("%s/summary.json", side->out);
    json_error_t jerr;
    side->summary = sx_file_exists(path) ? json_load_file(path, 0, &jerr) : NULL;
    int rc = 0;
    if (!side->summary)
        rc = sx_error_set(err, "%s: %s", path,
                          sx_file_exists(path) ? jerr.text
                                               : "missing (not an output of run, "
                                                 "coordinator, score or merge)");
    free(path);
    if (rc != 0 || pick_method(side, json_object_get(side->summary, "methods"), err) != 0)
        return -1;
    json_t *run = json_object_get(side->summary, "run");
    side->fingerprint = json_string_value(json_object_get(run, "bench_fingerprint"));
    side->bench = json_string_value(json_object_get(run, "bench"));
    if (!side->fingerprint)
        return sx_error_set(err,
                            "%s/summary.json names no bench fingerprint "
                            "(run.bench_fingerprint): cannot tell which bench it ran",
                            side->out);
    side->label = sx_format("%s:%s", side->out, side->method);
    path = sx_format("%s/%s/results.jsonl", side->out, side->method);
    rc = sx_results_read(path, &side->results, &side->count, err);
    if (rc == 0)
        rc = count_tasks(side, path, err);
    free(path);
    if (rc != 0)
        return -1;
    side->ex = sx_alloc(side->tasks + 1, sizeof *side->ex);
    side->strict = sx_alloc(side->tasks + 1, sizeof *side->strict);
    for (size_t i = 0; i < side->count; i++) {
        const sx_result_t *r = &side->results[i];
        side->ex[i / side->samples] += r->score == 1; /* counted, then shared */
        side->strict[i / side->samples] += r->strict == 1;
        side->correct += r->score == 1;
        side->strict_correct += r->strict == 1;
    }
    for (size_t t = 0; t < side->tasks; t++) {
        side->ex[t] /= (double)side->samples;
        side->strict[t] /= (double)side->samples;
    }
    return 0;
}

static void free_side(side_t *side)
{
    free(side->out);
    free(side->method);
    free(side->label);
    json_decref(side->summary);
    sx_results_free(&side->results, &side->count);
    free(side->ex);
    free(side->strict);
}

/* The two sides ran one bench, and hold the same task IDs in its order. */
static int check_alike(const side_t *a, const side_t *b, sx_error_t *err)
{
    if (strcmp(a->fingerprint, b->fingerprint) != 0)
        return sx_error_set(err,
                            "%s and %s are outputs of different benches: %s ran %s "
                            "(fingerprint %s), %s ran %s (fingerprint %s)",
                            a->out, b->out, a->out, a->bench ? a->bench : "a bench",
                            a->fingerprint, b->out, b->bench ? b->bench : "a bench",
                            b->fingerprint);
    if (a->tasks != b->tasks)
        return sx_error_set(err,
                            "%s has %zu tasks, %s has %zu: not the same task IDs (a "
                            "--tasks subset?)",
                            a->label, a->tasks, b->label, b->tasks);
    for (size_t t = 0; t < a->tasks; t++) {
        const char *x = a->results[t * a->samples].task_id;
        const char *y = b->results[t * b->samples].task_id;
        if (strcmp(x, y) != 0)
            return sx_error_set(err,
                                "%s and %s do not hold the same task IDs: task %zu is "
                                "'%s' in one, '%s' in the other",
                                a->label, b->label, t + 1, x, y);
    }
    return 0;
}

/* Whether the two final relations of a task are the same. */
static relation_t relation_of(const sx_bench_t *bench, const sx_result_t *a,
                              const sx_result_t *b, char *error, size_t size)
{
    if (!a->csv && !b->csv)
        return REL_NONE;
    if (!a->csv || !b->csv)
        return REL_DIFFERENT;
    bool same = false;
    sx_error_t err;
    if (sx_csv_same_relation(a->csv, b->csv, sx_task_ignores_order(bench, a->task_id),
                             &same, &err) != 0) {
        snprintf(error, size, "%s", err.msg);
        return REL_UNKNOWN;
    }
    return same ? REL_SAME : REL_DIFFERENT;
}

/* What differs about a (task, sample), in words, into d->words. */
static void differences(differing_t *d)
{
    d->words_count = 0;
    if (d->a->score != d->b->score)
        d->words[d->words_count++] = "verdict";
    if (d->a->strict != d->b->strict)
        d->words[d->words_count++] = "strict verdict";
    if (d->a->status != d->b->status)
        d->words[d->words_count++] = "status";
    if (d->relation == REL_DIFFERENT || d->relation == REL_UNKNOWN)
        d->words[d->words_count++] = "final relation";
}

/* The samples both sides have of each task. */
static size_t shared_samples(const side_t *a, const side_t *b)
{
    return a->samples < b->samples ? a->samples : b->samples;
}

/* Side s's result of task t, sample k. */
static const sx_result_t *result_of(const side_t *s, size_t t, size_t k)
{
    return &s->results[t * s->samples + k];
}

/* The (task, sample)s that differ, in task then sample order (heap; *count
 * of them): each sample both sides have. */
static differing_t *find_differing(const sx_bench_t *bench, const side_t *a,
                                   const side_t *b, size_t *count)
{
    size_t n = shared_samples(a, b);
    differing_t *list = sx_alloc(a->tasks * n + 1, sizeof *list);
    *count = 0;
    for (size_t t = 0; t < a->tasks; t++)
        for (size_t k = 0; k < n; k++) {
            differing_t *d = &list[*count];
            *d = (differing_t){.task = t, .sample = k};
            d->a = result_of(a, t, k);
            d->b = result_of(b, t, k);
            d->relation = relation_of(bench, d->a, d->b, d->error, sizeof d->error);
            differences(d);
            *count += d->words_count > 0;
        }
    return list;
}

/* ---- the table ----------------------------------------------------------- */

/* count / all, 0 when there is nothing. */
static double share(size_t count, size_t all)
{
    return all ? (double)count / (double)all : 0.0;
}

static void print_side(const char *which, const side_t *s)
{
    printf("%s: %s: EX = %zu/%zu = %.4f", which, s->label, s->correct, s->count,
           share(s->correct, s->count));
    if (s->samples > 1)
        printf(" (mean over %zu samples)", s->samples);
    printf(", strict EX = %zu/%zu = %.4f\n", s->strict_correct, s->count,
           share(s->strict_correct, s->count));
}

/* "ID", or "ID sample K" when a side has several samples. */
static void print_unit(const side_t *a, const side_t *b, const differing_t *d)
{
    printf("%s", result_of(a, d->task, 0)->task_id);
    if (a->samples > 1 || b->samples > 1)
        printf(" sample %zu", d->sample);
}

static void print_row(const char *name, const sx_comparison_t *c)
{
    char ci[64] = "";
    if (c->has_ci)
        snprintf(ci, sizeof ci, "[%+.4f, %+.4f]", c->ex_diff_ci.low, c->ex_diff_ci.high);
    printf("%-10s %10zu %7zu %7zu %8zu %14s%+.4f %-20s %.4g\n", name, c->both, c->only_a,
           c->only_b, c->neither, "", c->ex_diff, ci, c->mcnemar_p);
}

static void print_result(const char *which, const sx_result_t *r)
{
    printf("  %s: %s, strict %d, final CSV %s%s%s\n", which, sx_status_name(r->status),
           r->strict, r->csv ? r->csv : "none", r->detail[0] ? ": " : "", r->detail);
}

static void print_table(const side_t *a, const side_t *b, const sx_bootstrap_t *bootstrap,
                        const sx_comparison_t *cmp, const differing_t *list, size_t count)
{
    print_side("A", a);
    print_side("B", b);
    printf("bench fingerprint %s, %zu task IDs", a->fingerprint, a->tasks);
    if (a->samples > 1 || b->samples > 1)
        printf(" (each by its share of right samples; below, samples 0-%zu)",
               shared_samples(a, b) - 1);
    if (bootstrap->resamples)
        printf("; 95%% CI: paired bootstrap, %u resamples, seed %llu",
               bootstrap->resamples, (unsigned long long)bootstrap->seed);
    printf("\n\n%-10s %10s %7s %7s %8s %21s %-20s %s\n", "", "both right", "only A",
           "only B", "neither", "EX(A) - EX(B)", bootstrap->resamples ? "95% CI" : "",
           "McNemar p");
    print_row("EX", &cmp[0]);
    print_row("strict EX", &cmp[1]);
    printf("\n%zu %s whose verdict, status or final relation differs%s\n", count,
           a->samples > 1 || b->samples > 1 ? "(task, sample)s" : "task(s)",
           count ? ":" : "");
    for (size_t i = 0; i < count; i++) {
        const differing_t *d = &list[i];
        print_unit(a, b, d);
        printf(":");
        for (size_t w = 0; w < d->words_count; w++)
            printf("%s %s", w ? "," : "", d->words[w]);
        if (d->relation == REL_UNKNOWN)
            printf(" (cannot compare: %s)", d->error);
        printf("\n");
        print_result("A", d->a);
        print_result("B", d->b);
    }
}

/* ---- the JSON ------------------------------------------------------------ */

static json_t *side_json(const side_t *s)
{
    char *abs = realpath(s->out, NULL);
    json_t *o = json_pack("{ss ss sI sI sI}", "out", abs ? abs : s->out, "method",
                          s->method, "correct", (json_int_t)s->correct, "strict_correct",
                          (json_int_t)s->strict_correct, "total", (json_int_t)s->tasks);
    if (s->samples > 1)
        json_object_set_new(o, "samples", json_integer((json_int_t)s->samples));
    json_object_set_new(o, "ex", json_real(share(s->correct, s->count)));
    json_object_set_new(o, "ex_strict", json_real(share(s->strict_correct, s->count)));
    free(abs);
    return o;
}

static json_t *result_json(const sx_result_t *r)
{
    return json_pack("{ss si si ss so}", "status", sx_status_name(r->status), "score",
                     r->score, "strict", r->strict, "detail", r->detail, "csv",
                     r->csv ? json_string(r->csv) : json_null());
}

static void print_json(const side_t *a, const side_t *b, const sx_bootstrap_t *bootstrap,
                       const sx_comparison_t *cmp, const differing_t *list, size_t count)
{
    json_t *root = json_object();
    json_object_set_new(root, "a", side_json(a));
    json_object_set_new(root, "b", side_json(b));
    json_object_set_new(root, "bench",
                        json_pack("{ss* ss sI}", "path", a->bench, "fingerprint",
                                  a->fingerprint, "tasks", (json_int_t)a->tasks));
    if (bootstrap->resamples)
        json_object_set_new(root, "bootstrap",
                            json_pack("{sI sI}", "resamples",
                                      (json_int_t)bootstrap->resamples, "seed",
                                      (json_int_t)bootstrap->seed));
    json_object_set_new(root, "comparisons",
                        json_pack("[oo]", sx_comparison_json(&cmp[0], a->label, b->label),
                                  sx_comparison_json(&cmp[1], a->label, b->label)));
    json_t *tasks = json_array();
    for (size_t i = 0; i < count; i++) {
        const differing_t *d = &list[i];
        json_t *differs = json_array();
        for (size_t w = 0; w < d->words_count; w++)
            json_array_append_new(differs, json_string(d->words[w]));
        json_t *o = json_pack("{ss}", "task_id", d->a->task_id);
        if (a->samples > 1 || b->samples > 1)
            json_object_set_new(o, "sample", json_integer((json_int_t)d->sample));
        json_object_set_new(o, "differs", differs);
        json_object_set_new(o, "relation", json_string(s_relation_names[d->relation]));
        if (d->relation == REL_UNKNOWN)
            json_object_set_new(o, "relation_error", json_string(d->error));
        json_object_set_new(o, "a", result_json(d->a));
        json_object_set_new(o, "b", result_json(d->b));
        json_array_append_new(tasks, o);
    }
    json_object_set_new(root, "differing", tasks);
    char *text = sx_json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("%s\n", text);
    free(text);
    json_decref(root);
}

/* ---- the command --------------------------------------------------------- */

static int compare(const char *arg_a, const char *arg_b, bool as_json,
                   const sx_bootstrap_t *bootstrap)
{
    side_t a = {0}, b = {0};
    sx_error_t err;
    sx_error_clear(&err);
    int rc = load_side(arg_a, &a, &err);
    if (rc == 0)
        rc = load_side(arg_b, &b, &err);
    if (rc == 0)
        rc = check_alike(&a, &b, &err);
    sx_comparison_t cmp[2];
    if (rc == 0)
        rc = sx_comparison_make(a.ex, b.ex, a.tasks, false, bootstrap, &cmp[0], &err);
    if (rc == 0)
        rc = sx_comparison_make(a.strict, b.strict, a.tasks, true, bootstrap, &cmp[1],
                                &err);
    if (rc != 0) {
        fprintf(stderr, "streamex compare: %s\n", err.msg);
        free_side(&a);
        free_side(&b);
        return 2;
    }
    /* Each task's ignore_order is its evaluation's, in the bench the
     * outputs name; without it, row order counts. */
    const char *bench_dir = a.bench ? a.bench : b.bench;
    sx_bench_t *bench = bench_dir ? sx_bench_open(bench_dir, &err) : NULL;
    if (!bench)
        sx_warn("the bench (%s) cannot be opened: final relations are compared with "
                "row order counting",
                bench_dir ? err.msg : "summary.json names none");
    size_t count = 0;
    differing_t *list = find_differing(bench, &a, &b, &count);
    if (as_json)
        print_json(&a, &b, bootstrap, cmp, list, count);
    else
        print_table(&a, &b, bootstrap, cmp, list, count);
    fflush(stdout);
    free(list);
    sx_bench_destroy(&bench);
    free_side(&a);
    free_side(&b);
    return 0;
}

int sx_cmd_compare(int argc, char **argv)
{
    sx_log_set_component("compare");
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          SX_BOOTSTRAP_LONGOPTS,
                                          {NULL, 0, NULL, 0}};
    bool as_json = false;
    sx_bootstrap_t bootstrap = SX_BOOTSTRAP_DEFAULT;
    sx_error_t err;
    sx_error_clear(&err);
    int c, taken;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if ((taken = sx_bootstrap_option(c, optarg, &bootstrap, &err)) < 0)
            return sx_usage_error("compare", s_usage, "%s", err.msg);
        else if (taken)
            continue;
        else if (c == 'j')
            as_json = true;
        else if (c == 'h') {
            fputs(s_usage, stdout);
            return 0;
        } else
            return sx_option_error("compare", c, argv, s_usage);
    }
    if (argc - optind != 2)
        return sx_usage_error("compare", s_usage,
                              "expected two outputs, OUT_A and OUT_B");
    return compare(argv[optind], argv[optind + 1], as_json, &bootstrap);
}
