/* merge.c: merging shard outputs into one OUT (see merge.h). */
#include "coordinator/merge.h"

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/report/report.h"
#include "common/results/result.h"
#include "common/bench/bench.h"
#include "common/ex/score.h"
#include "common/bench/task.h"
#include "proto/proto.h"

#include <czmq.h>
#include <jansson.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One method's merged results, indexed like task_ids.txt, each task's n
 * samples in order (n: 1 + the largest sample number of any input). */
typedef struct {
    const char *method;
    sx_result_t *results;
    const char **origin; /* input each result came from, NULL = none yet */
    size_t count;        /* tasks x n */
    size_t samples;      /* n */
} merged_t;

/* A result line as read, with the input it came from. */
typedef struct {
    sx_result_t result;
    const char *input;
} read_t;

/* INPUT/METHOD/results.jsonl (heap). */
static char *results_path(const char *input, const char *method)
{
    return sx_format("%s/%s/results.jsonl", input, method);
}

/* Adds NAME for every INPUT/NAME/results.jsonl to the set of methods. */
static void find_methods(const char *input, zlistx_t *methods)
{
    DIR *dir = opendir(input);
    if (!dir)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *path = results_path(input, entry->d_name);
        if (sx_name_is_safe(entry->d_name) && sx_file_exists(path) &&
            !zlistx_find(methods, entry->d_name))
            zlistx_add_end(methods, sx_strdup(entry->d_name));
        free(path);
    }
    closedir(dir);
}

static int copy_file(const char *from, const char *to, sx_error_t *err)
{
    size_t size = 0;
    char *data = sx_file_read(from, (size_t)1 << 31, &size, err);
    int rc = data && sx_mkdirs_for(to, err) == 0
                 ? sx_file_write_atomic(to, data, size, err)
                 : -1;
    free(data);
    return rc;
}

/* Copies a final CSV to OUT/METHOD/csv/TASK.csv (a sample K > 0's to
 * OUT/METHOD/samples/K/csv/TASK.csv, as a run places it), and the diff of a
 * miss the input has beside it (diffs.h) to its diff/TASK.json; the CSV's
 * new path (heap), or NULL. */
static char *copy_csv(const char *from, const char *input, const char *out_dir,
                      const char *method, const char *task_id, int sample,
                      sx_error_t *err)
{
    /* OUT/METHOD, or OUT/METHOD/samples/K for a sample K > 0. */
    char *in_dir = sample ? sx_format("%s/%s/samples/%d", input, method, sample)
                          : sx_format("%s/%s", input, method);
    char *out = sample ? sx_format("%s/%s/samples/%d", out_dir, method, sample)
                       : sx_format("%s/%s", out_dir, method);
    char *to = sx_format("%s/csv/%s.csv", out, task_id);
    char *diff = sx_format("%s/diff/%s.json", in_dir, task_id);
    char *diff_to = sx_format("%s/diff/%s.json", out, task_id);
    free(in_dir);
    free(out);
    int rc = copy_file(from, to, err);
    if (rc == 0 && sx_file_exists(diff))
        rc = copy_file(diff, diff_to, err);
    free(diff);
    free(diff_to);
    if (rc == 0)
        return to;
    free(to);
    return NULL;
}

/* "TASK", or "TASK sample K" for K > 0, for messages. */
static void unit_name(char *out, size_t size, const sx_result_t *r)
{
    if (r->sample)
        snprintf(out, size, "%s sample %d", r->task_id, r->sample);
    else
        snprintf(out, size, "%s", r->task_id);
}

/* Takes one result line of an input into the merge. */
static int take(merged_t *m, const sx_bench_t *bench, const char *input,
                const char *out_dir, sx_result_t *r, sx_error_t *err)
{
    long task = sx_bench_index_of(bench, r->task_id);
    if (task < 0)
        return sx_error_set(err, "%s/%s: task '%s' is not in task_ids.txt", input,
                            m->method, r->task_id);
    size_t index = (size_t)task * m->samples + (size_t)r->sample;
    char name[200];
    unit_name(name, sizeof name, r);
    if (m->origin[index]) {
        const sx_result_t *have = &m->results[index];
        if (have->status != r->status || have->score != r->score ||
            have->strict != r->strict)
            return sx_error_set(err, "%s/%s disagrees: %s says %s, %s says %s", m->method,
                                name, m->origin[index], sx_status_name(have->status),
                                input, sx_status_name(r->status));
        return 0; /* the same verdict twice: an overlap that agrees */
    }
    if (r->csv) {
        char *to =
            copy_csv(r->csv, input, out_dir, m->method, r->task_id, r->sample, err);
        if (!to)
            return sx_error_prefix(err, "%s/%s", m->method, name), -1;
        free(r->csv);
        r->csv = to;
    }
    m->results[index] = *r;
    memset(r, 0, sizeof *r);
    m->origin[index] = input;
    return 0;
}

/* Reads every line of one input's results.jsonl (at path) into *lines. */
static int read_results(const char *input, const char *path, read_t **lines,
                        size_t *count, sx_error_t *err)
{
    size_t size = 0;
    char *data = sx_file_read(path, (size_t)1 << 31, &size, err);
    if (!data)
        return -1;
    int rc = 0;
    size_t line_no = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        *lines = sx_realloc(*lines, *count + 1, sizeof **lines);
        read_t *read = &(*lines)[*count];
        memset(read, 0, sizeof *read);
        read->input = input;
        if (sx_result_from_json(line, &read->result, err) != 0) {
            sx_error_prefix(err, "%s:%zu", path, line_no);
            rc = -1;
        } else
            (*count)++;
    }
    free(data);
    return rc;
}

/* Every input's results of the method (an input without results for it has
 * nothing to add). */
static int read_inputs(const char *method, const char *const *inputs, size_t input_count,
                       read_t **lines, size_t *count, sx_error_t *err)
{
    int rc = 0;
    for (size_t i = 0; i < input_count && rc == 0; i++) {
        char *path = results_path(inputs[i], method);
        if (sx_file_exists(path))
            rc = read_results(inputs[i], path, lines, count, err);
        free(path);
    }
    return rc;
}

static size_t fill_missing(merged_t *m, const sx_bench_t *bench)
{
    size_t missing = 0;
    for (size_t i = 0; i < m->count; i++) {
        if (m->origin[i])
            continue;
        const char *id = sx_bench_task_id(bench, i / m->samples);
        sx_result_init(&m->results[i], id, SX_STATUS_INFRA_ERROR,
                       "missing from every shard output", NULL);
        m->results[i].sample = (int)(i % m->samples);
        char name[200];
        unit_name(name, sizeof name, &m->results[i]);
        sx_warn("%s/%s: missing from every shard output (scored 0)", m->method, name);
        missing++;
    }
    return missing;
}

static int merge_method(merged_t *m, const sx_bench_t *bench, const char *const *inputs,
                        size_t input_count, const char *out_dir,
                        sx_method_summary_t *summary, size_t *missing, char **engines,
                        sx_error_t *err)
{
    read_t *lines = NULL;
    size_t count = 0;
    int rc = read_inputs(m->method, inputs, input_count, &lines, &count, err);
    m->samples = 1;
    for (size_t i = 0; i < count; i++)
        if ((size_t)lines[i].result.sample >= m->samples)
            m->samples = (size_t)lines[i].result.sample + 1;
    m->count = sx_bench_task_count(bench) * m->samples;
    m->results = sx_alloc(m->count + 1, sizeof *m->results);
    m->origin = sx_alloc(m->count + 1, sizeof *m->origin);
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = take(m, bench, lines[i].input, out_dir, &lines[i].result, err);
    if (rc == 0) {
        *missing += fill_missing(m, bench);
        rc = sx_results_write(out_dir, m->method, m->results, m->count, summary, err);
    }
    if (rc == 0 && m->samples > 1) {
        bool *ignore = sx_bench_ignore_order(bench);
        rc = sx_summary_majority(summary, m->results, m->count, ignore, err);
        free(ignore);
    }
    for (size_t i = 0; i < count; i++)
        sx_result_clear(&lines[i].result);
    free(lines);
    for (size_t i = 0; i < m->count; i++) {
        *engines = sx_engines_add(*engines, m->results[i].engine);
        sx_result_clear(&m->results[i]);
    }
    free(m->results);
    free(m->origin);
    return rc;
}

static bool same_folder(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    bool same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

/* An input's summary.json, or NULL when it has none (or none readable). */
static json_t *load_summary(const char *input)
{
    char *path = sx_format("%s/summary.json", input);
    json_t *root = sx_file_exists(path) ? json_load_file(path, 0, NULL) : NULL;
    free(path);
    return root;
}

/* Refuses an input whose summary.json says it counts a --tasks subset,
 * unless allowed (an input without summary.json is judged by its results). */
static int check_subset(const char *input, bool allow_subset, sx_error_t *err)
{
    json_t *root = load_summary(input);
    json_t *subset = json_object_get(root, "subset");
    int rc = 0;
    if (subset && !allow_subset)
        rc = sx_error_set(err,
                          "%s is the output of a --tasks subset (%lld of %lld task IDs): "
                          "merging it into a full output needs --allow-subset",
                          input, json_integer_value(json_object_get(subset, "tasks")),
                          json_integer_value(json_object_get(subset, "bench_tasks")));
    json_decref(root);
    return rc;
}

/* Refuses inputs whose summary.json name different engines (run.engine),
 * unless allowed. An input without one (scored only, or written before
 * results named their engine) does not count. */
static int check_engines(const char *const *inputs, size_t input_count, bool allowed,
                         sx_error_t *err)
{
    json_t *first = NULL;
    size_t first_at = 0;
    int rc = 0;
    for (size_t i = 0; i < input_count && rc == 0 && !allowed; i++) {
        json_t *root = load_summary(inputs[i]);
        json_t *engine = json_object_get(json_object_get(root, "run"), "engine");
        if (json_is_string(engine) && !first) {
            first = json_incref(engine);
            first_at = i;
        } else if (json_is_string(engine) && !json_equal(engine, first)) {
            rc = sx_error_set(err,
                              "%s was computed on %s, %s on %s: a mixed EX describes no "
                              "engine (--allow-mixed-engines merges them anyway)",
                              inputs[first_at], json_string_value(first), inputs[i],
                              json_string_value(engine));
        }
        json_decref(root);
    }
    json_decref(first);
    return rc;
}

/* The workers the inputs' summary.json name with what each ran on
 * (run.workers), united. Shard runs name their workers alike (w0, w1): a
 * name two inputs give different runtimes keeps both, joined by "; ". */
static json_t *input_workers(const char *const *inputs, size_t input_count)
{
    json_t *all = json_object();
    for (size_t i = 0; i < input_count; i++) {
        json_t *root = load_summary(inputs[i]);
        const char *name;
        json_t *runtime;
        json_object_foreach(json_object_get(json_object_get(root, "run"), "workers"),
                            name, runtime)
        {
            const char *text = json_string_value(runtime);
            const char *have = json_string_value(json_object_get(all, name));
            if (!text || (have && strstr(have, text)))
                continue;
            char *joined = have ? sx_format("%s; %s", have, text) : sx_strdup(text);
            json_object_set_new(all, name, json_string(joined));
            free(joined);
        }
        json_decref(root);
    }
    return all;
}

int sx_merge(const char *bench_dir, const char *const *inputs, size_t input_count,
             const char *out_dir, unsigned allow, const sx_bootstrap_t *bootstrap,
             sx_merge_report_t *report, sx_error_t *err)
{
    bool allow_subset = allow & SX_MERGE_ALLOW_SUBSET;
    memset(report, 0, sizeof *report);
    if (input_count == 0)
        return sx_error_set(err, "nothing to merge: give the shard outputs");
    for (size_t i = 0; i < input_count; i++)
        if (check_subset(inputs[i], allow_subset, err) != 0)
            return -1;
    if (check_engines(inputs, input_count, allow & SX_MERGE_ALLOW_MIXED_ENGINES, err) !=
        0)
        return -1;
    if (sx_mkdirs(out_dir, err) != 0)
        return -1;
    for (size_t i = 0; i < input_count; i++)
        if (same_folder(inputs[i], out_dir))
            return sx_error_set(err, "%s: the output cannot also be an input", out_dir);
    /* Absolute, so submission.jsonl maps every ID to an absolute CSV path
     * (docs/outputs.md) whatever folder merge was run from. */
    char *out = realpath(out_dir, NULL);
    if (!out)
        return sx_error_set(err, "%s: %s", out_dir, strerror(errno));
    sx_bench_t *bench = sx_bench_open(bench_dir, err);
    if (!bench) {
        free(out);
        return -1;
    }
    zlistx_t *methods = zlistx_new();
    zlistx_set_destructor(methods, (zlistx_destructor_fn *)zstr_free);
    zlistx_set_comparator(methods, (zlistx_comparator_fn *)strcmp);
    for (size_t i = 0; i < input_count; i++)
        find_methods(inputs[i], methods);
    zlistx_sort(methods);
    int rc = zlistx_size(methods)
                 ? 0
                 : sx_error_set(err, "no METHOD/results.jsonl in any input");
    size_t count = zlistx_size(methods);
    sx_method_summary_t *summaries = sx_alloc(count + 1, sizeof *summaries);
    size_t done = 0;
    char *engines = NULL;
    for (char *name = zlistx_first(methods); name && rc == 0;
         name = zlistx_next(methods)) {
        merged_t m = {.method = name};
        rc = merge_method(&m, bench, inputs, input_count, out, &summaries[done],
                          &report->missing, &engines, err);
        done += rc == 0;
    }
    char fingerprint[41];
    sx_bench_fingerprint(bench, fingerprint);
    json_t *workers = input_workers(inputs, input_count);
    size_t worker_count = json_object_size(workers), w = 0;
    const char **names = sx_alloc(worker_count + 1, sizeof *names);
    const char **runtimes = sx_alloc(worker_count + 1, sizeof *runtimes);
    const char *name;
    json_t *runtime;
    json_object_foreach(workers, name, runtime)
    {
        names[w] = name;
        runtimes[w++] = json_string_value(runtime);
    }
    sx_run_info_t run = {.command = "merge",
                         .bench = bench_dir,
                         .task_count = sx_bench_task_count(bench),
                         .ended = sx_run_clock(),
                         .bench_fingerprint = fingerprint,
                         .worker_names = names,
                         .worker_runtimes = runtimes,
                         .worker_count = w,
                         .bootstrap = *bootstrap,
                         .engine = engines};
    if (rc == 0)
        rc = sx_summary_write(out, summaries, done, &run, err);
    sx_error_t report_err;
    if (rc == 0 && sx_report_write(out, &report_err) != 0)
        sx_warn("report.html not written: %s", report_err.msg);
    free(names);
    free(runtimes);
    free(engines);
    json_decref(workers);
    report->methods = done;
    report->tasks = sx_bench_task_count(bench);
    for (size_t i = 0; i <= done; i++) /* the one that failed, too */
        sx_method_summary_clear(&summaries[i]);
    free(summaries);
    zlistx_destroy(&methods);
    sx_bench_destroy(&bench);
    free(out);
    return rc;
}
