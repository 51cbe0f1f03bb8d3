/* result.c: a task's outcome and the output files made from them (see
 * result.h). Every JSON field name lives in this file:
 *   OUT/NAME/results.jsonl     one line per task ID, task_ids.txt order (with
 *     n > 1 samples: per (task ID, sample), each task's samples ascending):
 *     {"task_id", "sample"?: K, "score": 0|1, "strict": 0|1, "status", "detail",
 *      "attempts", "seconds", "worker", "engine"?, "cached"?: true, "stable"?:
 * true|false, "csv": "/abs/path.csv"|null, "steps"?: {"prepare", "replay", "submit",
 *      "run", "materialize", "score", "cleanup"}, "changelog"?: {"insert",
 *      "update_before", "update_after", "delete", "tombstone", "rows"}}
 *     ("sample" on every line of a method with several samples, else never;
 *     csv is carried so a results file alone can rebuild the submission;
 *     "cached" only when a worker's result cache served the final CSV;
 *     "stable" only after --repeat, for the tasks whose runs were compared;
 *     "engine" only for a result a worker computed: its engine's label;
 *     steps, seconds per step, only for a task a worker executed; changelog,
 *     the sink changelog's records by kind and the final relation's rows,
 *     only for a task whose changelog a worker folded into its final CSV).
 *   OUT/NAME/submission.jsonl  the official evaluator's index, same order:
 *     {"task_id", "csv": "/abs/path.csv"|null} (sample 0's; with n > 1 samples
 *     OUT/NAME/samples/K/submission.jsonl is sample K's, for every K < n)
 *   OUT/summary.json
 *     {"methods": {NAME: {"correct", "total", "samples"?, "ex", "ex_ci"?: [low, high],
 *      "strict_correct", "ex_strict", "ex_strict_ci"?, "pass_at_k"?: {"1": x, ...},
 *      "maj_at_n"?, "ex_not_strict", "strict_not_ex", "cached", "unstable",
 *      "repeats", "by_status": {STATUS: count, ... every status},
 *      "per_sample"?: [{"sample", "correct", "ex", "strict_correct", "ex_strict"},
 *      ...]}},
 *      "comparisons"?: [{"a", "b", "strict"?, ...} (figures.c), ...],
 *      "subset"?: {...},
 *      "run"?: {"command", "streamex", "bench"?, "bench_fingerprint"?, "tasks"?,
 *      "profile"?, "engine"?, "bootstrap"?: {"resamples", "seed"}, "started"?, "ended"?,
 *      "wall_seconds"?, "workers"?: {NAME: RUNTIME},
 *      "inputs"?: {"kind", "files": {NAME: PATH}}}}
 *     (ex_strict has ex's denominator; ex_not_strict and strict_not_ex count
 *     the tasks where the frozen and strict verdicts differ, each way; the
 *     intervals and "bootstrap" only with --bootstrap B > 0; "samples",
 *     "per_sample", "pass_at_k" and "maj_at_n" only with n > 1 samples, where
 *     every count is over the (task, sample) pairs, total stays the task IDs
 *     and ex = correct / (total * n), the mean of the samples' EX; "run" says what
 *     common/report/report.c needs to write OUT/report.html from OUT alone,
 *     times as UTC "YYYY-MM-DDTHH:MM:SS.mmmZ").
 * Files are written whole through sx_file_write_atomic (temporary name,
 * fsync, rename), so a crash never leaves half a file. */
#include "common/results/result.h"

#include "common/results/jsonout.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"
#include "common/sample.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define F_TASK_ID "task_id"
#define F_SCORE "score"
#define F_STRICT "strict"
#define F_STATUS "status"
#define F_DETAIL "detail"
#define F_ATTEMPTS "attempts"
#define F_SECONDS "seconds"
#define F_WORKER "worker"
#define F_ENGINE "engine"
#define F_CSV "csv"
#define F_STEPS "steps"
#define F_SAMPLE SX_SAMPLE_FIELD
#define F_CHANGELOG "changelog"
#define F_ROWS "rows"

static const char *const s_change_names[SX_CHANGE_KINDS] = {
    "insert", "update_before", "update_after", "delete", "tombstone"};

const char *sx_change_kind_name(sx_change_kind_t kind)
{
    return (unsigned)kind < SX_CHANGE_KINDS ? s_change_names[kind] : "unknown";
}

static const char *const s_step_names[SX_STEP_COUNT] = {
    "prepare", "replay", "submit", "run", "materialize", "score", "cleanup"};

const char *sx_step_name(int step)
{
    return s_step_names[step];
}

double *sx_step_slot(sx_timings_t *t, int step)
{
    double *slots[SX_STEP_COUNT] = {&t->prepare,     &t->replay, &t->submit, &t->run,
                                    &t->materialize, &t->score,  &t->cleanup};
    return slots[step];
}

double sx_step_seconds(const sx_timings_t *t, int step)
{
    return *sx_step_slot((sx_timings_t *)t, step);
}
#define F_CACHED "cached"
#define F_STABLE "stable"

static char *copy_or_empty(const char *s)
{
    return sx_strdup(s ? s : "");
}

void sx_result_init(sx_result_t *result, const char *task_id, sx_status_t status,
                    const char *detail, const char *csv)
{
    memset(result, 0, sizeof *result);
    result->task_id = copy_or_empty(task_id);
    result->status = status;
    result->score = status == SX_STATUS_MATCH ? 1 : 0;
    result->detail = copy_or_empty(detail);
    result->worker = copy_or_empty("");
    result->csv = sx_strdup_or_null(csv);
}

void sx_result_clear(sx_result_t *result)
{
    if (!result)
        return;
    free(result->task_id);
    free(result->detail);
    free(result->worker);
    free(result->engine);
    free(result->csv);
    memset(result, 0, sizeof *result);
}

/* Seconds are written to the millisecond; every real in its shortest form
 * (common/results/jsonout.h). */
static double to_ms(double seconds)
{
    return round(seconds * 1000) / 1000;
}

static json_t *csv_json(const char *csv)
{
    return csv ? json_string(csv) : json_null();
}

/* The "steps" object, or NULL for a task no worker executed. */
static json_t *steps_json(const sx_timings_t *t)
{
    bool any = false;
    for (int i = 0; i < SX_STEP_COUNT; i++)
        any = any || sx_step_seconds(t, i) > 0;
    if (!any)
        return NULL;
    json_t *o = json_object();
    for (int i = 0; i < SX_STEP_COUNT; i++) {
        json_object_set_new(o, sx_step_name(i), json_real(to_ms(sx_step_seconds(t, i))));
    }
    return o;
}

/* The "changelog" object, or NULL when no changelog was folded. */
static json_t *changelog_json(const sx_changelog_counts_t *c)
{
    if (!c->known)
        return NULL;
    json_t *o = json_object();
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        json_object_set_new(o, s_change_names[k],
                            json_integer((json_int_t)c->records[k]));
    json_object_set_new(o, F_ROWS, json_integer((json_int_t)c->rows));
    return o;
}

/* One results.jsonl line; with_sample writes "sample" (a method with
 * several samples writes it on every line, sample 0's too). */
static char *result_json(const sx_result_t *r, bool with_sample)
{
    json_t *steps = steps_json(&r->steps);
    json_t *o = json_object();
    json_object_set_new(o, F_TASK_ID, json_string(r->task_id));
    if (with_sample)
        json_object_set_new(o, F_SAMPLE, json_integer(r->sample));
    json_object_set_new(o, F_SCORE, json_integer(r->score));
    json_object_set_new(o, F_STRICT, json_integer(r->strict));
    json_object_set_new(o, F_STATUS, json_string(sx_status_name(r->status)));
    json_object_set_new(o, F_DETAIL, json_string(r->detail ? r->detail : ""));
    json_object_set_new(o, F_ATTEMPTS, json_integer(r->attempts));
    json_object_set_new(o, F_SECONDS, json_real(to_ms(r->seconds)));
    json_object_set_new(o, F_WORKER, json_string(r->worker ? r->worker : ""));
    if (r->engine && r->engine[0])
        json_object_set_new(o, F_ENGINE, json_string(r->engine));
    if (r->cached)
        json_object_set_new(o, F_CACHED, json_true());
    if (r->repeated)
        json_object_set_new(o, F_STABLE, json_boolean(!r->unstable));
    json_object_set_new(o, F_CSV, csv_json(r->csv));
    if (steps)
        json_object_set_new(o, F_STEPS, steps);
    json_t *changelog = changelog_json(&r->changelog);
    if (changelog)
        json_object_set_new(o, F_CHANGELOG, changelog);
    char *text = sx_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

char *sx_result_to_json(const sx_result_t *r)
{
    return result_json(r, r->sample != 0);
}

static int get_string(json_t *o, const char *key, bool nullable, char **out,
                      sx_error_t *err)
{
    json_t *v = json_object_get(o, key);
    if (nullable && (!v || json_is_null(v))) {
        *out = NULL;
        return 0;
    }
    if (!json_is_string(v))
        return sx_error_set(err, "field \"%s\" must be a string%s", key,
                            nullable ? " or null" : "");
    *out = sx_strdup(json_string_value(v));
    return 0;
}

/* The optional "steps" object: every step, each a number >= 0, nothing else. */
static int get_steps(json_t *o, sx_timings_t *t, sx_error_t *err)
{
    json_t *steps = json_object_get(o, F_STEPS);
    if (!steps)
        return 0;
    if (!json_is_object(steps) || json_object_size(steps) != SX_STEP_COUNT)
        return sx_error_set(err, "field \"steps\" must be an object of the %d steps",
                            SX_STEP_COUNT);
    for (int i = 0; i < SX_STEP_COUNT; i++) {
        json_t *v = json_object_get(steps, sx_step_name(i));
        if (!json_is_number(v) || json_number_value(v) < 0)
            return sx_error_set(err, "field \"steps\": \"%s\" must be a number >= 0",
                                sx_step_name(i));
        *sx_step_slot(t, i) = json_number_value(v);
    }
    return 0;
}

/* The optional "changelog" object: every kind and "rows", each an integer
 * >= 0, nothing else. */
static int get_changelog(json_t *o, sx_changelog_counts_t *c, sx_error_t *err)
{
    json_t *changelog = json_object_get(o, F_CHANGELOG);
    if (!changelog)
        return 0;
    if (!json_is_object(changelog) || json_object_size(changelog) != SX_CHANGE_KINDS + 1)
        return sx_error_set(err,
                            "field \"changelog\" must be an object of the %d record "
                            "kinds and \"rows\"",
                            SX_CHANGE_KINDS);
    for (int k = 0; k <= SX_CHANGE_KINDS; k++) {
        const char *name = k < SX_CHANGE_KINDS ? s_change_names[k] : F_ROWS;
        json_t *v = json_object_get(changelog, name);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return sx_error_set(
                err, "field \"changelog\": \"%s\" must be an integer >= 0", name);
        *(k < SX_CHANGE_KINDS ? &c->records[k] : &c->rows) =
            (uint64_t)json_integer_value(v);
    }
    c->known = true;
    return 0;
}

int sx_result_from_json(const char *line, sx_result_t *result, sx_error_t *err)
{
    memset(result, 0, sizeof *result);
    json_error_t jerr;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(o)) {
        json_decref(o);
        return sx_error_set(err, "not a JSON object%s%s", o ? "" : ": ",
                            o ? "" : jerr.text);
    }
    json_t *score = json_object_get(o, F_SCORE);
    json_t *strict = json_object_get(o, F_STRICT);
    json_t *attempts = json_object_get(o, F_ATTEMPTS);
    json_t *seconds = json_object_get(o, F_SECONDS);
    json_t *cached = json_object_get(o, F_CACHED);
    json_t *stable = json_object_get(o, F_STABLE);
    const char *status = json_string_value(json_object_get(o, F_STATUS));
    int rc = get_string(o, F_TASK_ID, false, &result->task_id, err);
    if (rc == 0)
        rc = sx_sample_get(o, SX_SAMPLES_LIMIT, &result->sample, err);
    if (rc == 0)
        rc = get_string(o, F_DETAIL, false, &result->detail, err);
    if (rc == 0)
        rc = get_string(o, F_WORKER, false, &result->worker, err);
    if (rc == 0)
        rc = get_string(o, F_CSV, true, &result->csv, err);
    if (rc == 0)
        rc = get_string(o, F_ENGINE, true, &result->engine, err);
    if (rc == 0 && result->engine && !result->engine[0])
        rc = sx_error_set(err, "field \"engine\" must not be empty when present");
    if (rc == 0 && sx_status_parse(status, &result->status) != 0)
        rc = sx_error_set(err, "field \"status\" is not a known status");
    if (rc == 0 && (!json_is_integer(score) ||
                    json_integer_value(score) != (result->status == SX_STATUS_MATCH)))
        rc = sx_error_set(err, "field \"score\" must be 1 for match and 0 otherwise");
    bool scored =
        result->status == SX_STATUS_MATCH || result->status == SX_STATUS_MISMATCH;
    if (rc == 0 && (!json_is_integer(strict) || json_integer_value(strict) < 0 ||
                    json_integer_value(strict) > scored))
        rc = sx_error_set(err, "field \"strict\" must be 0 or 1, and 0 unless the status "
                               "is match or mismatch");
    if (rc == 0 && (!json_is_integer(attempts) || json_integer_value(attempts) < 0))
        rc = sx_error_set(err, "field \"attempts\" must be an integer >= 0");
    if (rc == 0 && (!json_is_number(seconds) || json_number_value(seconds) < 0))
        rc = sx_error_set(err, "field \"seconds\" must be a number >= 0");
    if (rc == 0)
        rc = get_steps(o, &result->steps, err);
    if (rc == 0)
        rc = get_changelog(o, &result->changelog, err);
    if (rc == 0 && cached && !json_is_true(cached))
        rc = sx_error_set(err, "field \"cached\" must be true when present");
    if (rc == 0 && stable && !json_is_boolean(stable))
        rc = sx_error_set(err, "field \"stable\" must be true or false when present");
    if (rc == 0) {
        result->cached = cached != NULL;
        result->repeated = stable != NULL;
        result->unstable = stable && !json_is_true(stable);
        result->score = (int)json_integer_value(score);
        result->strict = (int)json_integer_value(strict);
        result->attempts = (int)json_integer_value(attempts);
        result->seconds = json_number_value(seconds);
    }
    json_decref(o);
    if (rc != 0)
        sx_result_clear(result);
    return rc;
}

typedef struct {
    sx_result_t *results;
    size_t count, cap;
} results_read_t;

static int read_result(char *line, size_t number, void *arg, sx_error_t *err)
{
    (void)number;
    results_read_t *r = arg;
    if (r->count == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->results = sx_realloc(r->results, r->cap, sizeof *r->results);
    }
    int rc = sx_result_from_json(line, &r->results[r->count], err);
    if (rc == 0)
        r->count++;
    return rc;
}

int sx_results_read(const char *path, sx_result_t **results, size_t *count,
                    sx_error_t *err)
{
    *results = NULL;
    *count = 0;
    size_t size = 0;
    char *data = sx_file_read(path, (size_t)1 << 30, &size, err);
    if (!data)
        return -1;
    results_read_t r = {0};
    int rc = sx_lines_each(path, data, size, read_result, &r, err);
    free(data);
    *results = r.results;
    *count = r.count;
    if (rc != 0)
        sx_results_free(results, count);
    return rc;
}

void sx_results_free(sx_result_t **results, size_t *count)
{
    for (size_t i = 0; *results && i < *count; i++)
        sx_result_clear(&(*results)[i]);
    free(*results);
    *results = NULL;
    *count = 0;
}

char *sx_submission_entry_to_json(const char *task_id, const char *csv)
{
    json_t *o = json_object();
    json_object_set_new(o, F_TASK_ID, json_string(task_id));
    json_object_set_new(o, F_CSV, csv_json(csv));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

int sx_submission_entry_from_json(const char *line, int max_samples, char **task_id,
                                  int *sample, char **csv, sx_error_t *err)
{
    *task_id = NULL;
    *csv = NULL;
    *sample = 0;
    json_error_t jerr;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(o)) {
        json_decref(o);
        return sx_error_set(err, "not a JSON object%s%s", o ? "" : ": ",
                            o ? "" : jerr.text);
    }
    const char *key;
    json_t *value;
    int rc = 0;
    json_object_foreach(o, key, value)
    {
        if (rc == 0 && strcmp(key, F_TASK_ID) != 0 && strcmp(key, F_CSV) != 0 &&
            strcmp(key, F_SAMPLE) != 0)
            rc = sx_error_set(err, "unknown field \"%s\"", key);
    }
    if (rc == 0)
        rc = get_string(o, F_TASK_ID, false, task_id, err);
    if (rc == 0)
        rc = sx_sample_get(o, max_samples, sample, err);
    if (rc == 0 && !json_object_get(o, F_CSV))
        rc = sx_error_set(err, "field \"csv\" is missing (use null for no CSV)");
    if (rc == 0)
        rc = get_string(o, F_CSV, true, csv, err);
    json_decref(o);
    if (rc != 0) {
        free(*task_id);
        free(*csv);
        *task_id = *csv = NULL;
    }
    return rc;
}

/* Writes one JSON line (freed) to out; false when it could not be made. */
static bool put_line(FILE *out, char *line)
{
    if (line) {
        fputs(line, out);
        fputc('\n', out);
    }
    free(line);
    return line != NULL;
}

/* Counts one result into the summary, and names it when its verdicts differ. */
static void tally(sx_method_summary_t *summary, const sx_result_t *r)
{
    summary->correct += r->status == SX_STATUS_MATCH;
    if ((unsigned)r->status < SX_STATUS_COUNT)
        summary->by_status[r->status]++;
    summary->strict_correct += r->strict == 1;
    summary->ex_not_strict += r->score == 1 && r->strict != 1;
    summary->strict_not_ex += r->score != 1 && r->strict == 1;
    summary->cached += r->cached;
    summary->unstable += r->repeated && r->unstable;
    if (summary->per_sample) {
        summary->per_sample[r->sample].correct += r->status == SX_STATUS_MATCH;
        summary->per_sample[r->sample].strict_correct += r->strict == 1;
    }
    if ((r->score == 1) == (r->strict == 1) || summary->listed == SX_SUMMARY_LISTED)
        return;
    size_t i = summary->listed++;
    if (summary->per_sample)
        snprintf(summary->differing[i].task_id, sizeof summary->differing[i].task_id,
                 "%s sample %d", r->task_id, r->sample);
    else
        snprintf(summary->differing[i].task_id, sizeof summary->differing[i].task_id,
                 "%s", r->task_id);
    snprintf(summary->differing[i].detail, sizeof summary->differing[i].detail, "%s",
             r->detail ? r->detail : "");
}

/* n of a method's results (1 + the largest sample number), once checked
 * that they run task by task, each task's samples 0 to n - 1 in order. */
static int count_samples(const char *method, const sx_result_t *results, size_t count,
                         size_t *n, sx_error_t *err)
{
    int most = 0;
    for (size_t i = 0; i < count; i++)
        most = results[i].sample > most ? results[i].sample : most;
    *n = (size_t)most + 1;
    if (count % *n != 0)
        return sx_error_set(err, "%s: %zu results are not tasks of %zu samples each",
                            method, count, *n);
    for (size_t i = 0; i < count; i++) {
        const sx_result_t *first = &results[i - i % *n];
        if ((size_t)results[i].sample != i % *n ||
            strcmp(results[i].task_id, first->task_id) != 0)
            return sx_error_set(err,
                                "%s: result %zu (task %s, sample %d) breaks the order of "
                                "%zu samples per task",
                                method, i, results[i].task_id, results[i].sample, *n);
    }
    return 0;
}

/* OUT/NAME/samples/K/submission.jsonl */
static void sample_index_path(char *path, size_t size, const char *out_dir,
                              const char *method, size_t sample)
{
    snprintf(path, size, "%s/%s/samples/%zu/submission.jsonl", out_dir, method, sample);
}

int sx_results_write(const char *out_dir, const char *method, const sx_result_t *results,
                     size_t count, sx_method_summary_t *summary, sx_error_t *err)
{
    char path[PATH_MAX], index_path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", out_dir, method);
    size_t n = 1;
    if (count_samples(method, results, count, &n, err) != 0 ||
        sx_mkdirs_for(path, err) != 0)
        return -1;
    memset(summary, 0, sizeof *summary);
    summary->method = sx_strdup(method);
    summary->total = count / n;
    summary->samples = n;
    if (n > 1)
        summary->per_sample = sx_alloc(n, sizeof *summary->per_sample);
    summary->task_correct = sx_alloc(count / n + 1, sizeof *summary->task_correct);
    summary->task_strict = sx_alloc(count / n + 1, sizeof *summary->task_strict);
    /* Line by line into every file, never a whole file in memory; all of a
     * method's files are made durable together. submission.jsonl is sample
     * 0's, also in samples/0/ when there are several. */
    sx_file_batch_t *batch = sx_file_batch_new();
    FILE *lines = sx_file_batch_stream(batch, path, err);
    snprintf(index_path, sizeof index_path, "%s/%s/submission.jsonl", out_dir, method);
    FILE *first = lines ? sx_file_batch_stream(batch, index_path, err) : NULL;
    FILE **index = sx_alloc(n, sizeof *index); /* samples/K/, one per sample */
    bool opened = first != NULL;
    for (size_t k = 0; k < n && n > 1 && opened; k++) {
        sample_index_path(index_path, sizeof index_path, out_dir, method, k);
        opened = sx_mkdirs_for(index_path, err) == 0 &&
                 (index[k] = sx_file_batch_stream(batch, index_path, err)) != NULL;
    }
    bool made = opened;
    for (size_t i = 0; i < count && made; i++) {
        const sx_result_t *r = &results[i];
        made = put_line(lines, result_json(r, n > 1)) &&
               (n == 1 || put_line(index[i % n],
                                   sx_submission_entry_to_json(r->task_id, r->csv))) &&
               (i % n != 0 ||
                put_line(first, sx_submission_entry_to_json(r->task_id, r->csv)));
        tally(summary, r);
        summary->task_correct[i / n] += r->score == 1;
        summary->task_strict[i / n] += r->strict == 1;
    }
    int rc = !opened ? -1
             : !made ? sx_error_set(err, "%s: out of memory", path)
                     : sx_file_batch_commit(batch, err);
    sx_file_batch_destroy(&batch);
    free(index);
    return rc;
}

static double share(size_t count, size_t total)
{
    return total ? (double)count / (double)total : 0.0;
}

/* n of a summary (an unset one counts one sample). */
static size_t samples_of(const sx_method_summary_t *s)
{
    return s->per_sample ? s->samples : 1;
}

/* summary.json's "per_sample": each sample's own EX and strict EX. */
static json_t *per_sample_json(const sx_method_summary_t *s)
{
    json_t *list = json_array();
    for (size_t k = 0; k < s->samples; k++) {
        const sx_sample_tally_t *t = &s->per_sample[k];
        json_t *o = json_object();
        json_object_set_new(o, "sample", json_integer((json_int_t)k));
        json_object_set_new(o, "correct", json_integer((json_int_t)t->correct));
        json_object_set_new(o, "ex", json_real(share(t->correct, s->total)));
        json_object_set_new(o, "strict_correct",
                            json_integer((json_int_t)t->strict_correct));
        json_object_set_new(o, "ex_strict",
                            json_real(share(t->strict_correct, s->total)));
        json_array_append_new(list, o);
    }
    return list;
}

char *sx_engines_add(char *joined, const char *engine)
{
    if (!engine || !engine[0])
        return joined;
    if (!joined)
        return sx_strdup(engine);
    size_t n = strlen(engine);
    for (const char *at = joined; (at = strstr(at, engine)) != NULL; at += n)
        if ((at == joined || at[-1] == ' ') && (at[n] == '\0' || at[n] == ';'))
            return joined;
    char *more = sx_format("%s; %s", joined, engine);
    free(joined);
    return more;
}

double sx_run_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A Unix time as UTC to the millisecond, or null when unknown. */
static json_t *time_json(double t)
{
    if (t <= 0)
        return json_null();
    long long ms = (long long)(t * 1000.0 + 0.5);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char text[64];
    gmtime_r(&secs, &tm);
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(text + n, sizeof text - n, ".%03dZ", (int)(ms % 1000));
    return json_string(text);
}

static void set_string(json_t *o, const char *key, const char *value)
{
    if (value)
        json_object_set_new(o, key, json_string(value));
}

static json_t *run_json(const sx_run_info_t *run, const sx_method_summary_t *summaries,
                        size_t count)
{
    json_t *o = json_object();
    set_string(o, "command", run->command);
    set_string(o, "streamex", SX_VERSION);
    char *bench = run->bench ? realpath(run->bench, NULL) : NULL;
    set_string(o, "bench", bench ? bench : run->bench);
    free(bench);
    set_string(o, "bench_fingerprint", run->bench_fingerprint);
    if (run->task_count)
        json_object_set_new(o, "tasks", json_integer((json_int_t)run->task_count));
    set_string(o, "profile", run->profile);
    set_string(o, "engine", run->engine);
    if (run->bootstrap.resamples)
        json_object_set_new(o, "bootstrap",
                            json_pack("{sI sI}", "resamples",
                                      (json_int_t)run->bootstrap.resamples, "seed",
                                      (json_int_t)run->bootstrap.seed));
    json_object_set_new(o, "started", time_json(run->started));
    json_object_set_new(o, "ended", time_json(run->ended));
    if (run->started > 0 && run->ended >= run->started)
        json_object_set_new(o, "wall_seconds",
                            json_real(to_ms(run->ended - run->started)));
    if (run->worker_count) {
        json_t *workers = json_object();
        for (size_t i = 0; i < run->worker_count; i++)
            set_string(workers, run->worker_names[i], run->worker_runtimes[i]);
        json_object_set_new(o, "workers", workers);
    }
    if (!run->method_files)
        return o;
    json_t *files = json_object();
    for (size_t m = 0; m < count; m++) {
        char *path = run->method_files[m] ? realpath(run->method_files[m], NULL) : NULL;
        if (path || run->method_files[m])
            set_string(files, summaries[m].method ? summaries[m].method : "",
                       path ? path : run->method_files[m]);
        free(path);
    }
    json_t *inputs = json_object();
    set_string(inputs, "kind", run->inputs_kind);
    json_object_set_new(inputs, "files", files);
    json_object_set_new(o, "inputs", inputs);
    return o;
}

/* Whether every method has per-task values over the same tasks, the
 * statistics' input. */
static bool tallied_alike(const sx_method_summary_t *summaries, size_t count)
{
    for (size_t m = 0; m < count; m++)
        if (!summaries[m].task_correct || summaries[m].total != summaries[0].total)
            return false;
    return count > 0;
}

/* A method's per-task values: each task's share of right samples (heap). */
static double *task_values(const sx_method_summary_t *s, const unsigned *right)
{
    double *values = sx_alloc(s->total + 1, sizeof *values);
    for (size_t t = 0; t < s->total; t++)
        values[t] = (double)right[t] / (double)samples_of(s);
    return values;
}

/* pass@k for k = 1..n of a method with n > 1 samples, into s->pass_at_k. */
static int pass_at_k(sx_method_summary_t *s, sx_error_t *err)
{
    free(s->pass_at_k);
    s->pass_at_k = NULL;
    if (!s->per_sample || !s->task_correct || !s->total)
        return 0;
    s->pass_at_k = sx_alloc(s->samples, sizeof *s->pass_at_k);
    for (unsigned k = 1; k <= s->samples; k++)
        if (sx_stats_pass_at_k_mean(s->task_correct, s->total, (unsigned)s->samples, k,
                                    &s->pass_at_k[k - 1], err) < 0)
            return -1;
    /* pass@1 is the mean EX over samples, c / n per task: written as ex is
     * (correct / (total n)), so the two read alike to the last digit. */
    s->pass_at_k[0] = share(s->correct, s->total * s->samples);
    return 0;
}

static json_t *pass_at_k_json(const sx_method_summary_t *s)
{
    json_t *o = json_object();
    for (size_t k = 1; k <= s->samples; k++) {
        char key[24];
        snprintf(key, sizeof key, "%zu", k);
        json_object_set_new(o, key, json_real(s->pass_at_k[k - 1]));
    }
    return o;
}

/* Each method's intervals and pass@k into its summary and every pair's
 * comparisons, as a JSON array (NULL when the methods were not tallied from
 * results). */
static json_t *figures(sx_method_summary_t *summaries, size_t count,
                       const sx_run_info_t *run, sx_error_t *err, int *rc)
{
    *rc = 0;
    if (!tallied_alike(summaries, count))
        return NULL;
    double **ex = sx_alloc(count, sizeof *ex);
    double **strict = sx_alloc(count, sizeof *strict);
    sx_stats_interval_t *ex_ci = sx_alloc(count, sizeof *ex_ci);
    sx_stats_interval_t *strict_ci = sx_alloc(count, sizeof *strict_ci);
    sx_comparison_t *pairs = sx_alloc(count * (count - 1) + 1, sizeof *pairs);
    int got = 0;
    for (size_t m = 0; m < count; m++) {
        ex[m] = task_values(&summaries[m], summaries[m].task_correct);
        strict[m] = task_values(&summaries[m], summaries[m].task_strict);
        got = got < 0 ? got : pass_at_k(&summaries[m], err);
    }
    sx_bootstrap_t none = {0};
    if (got == 0)
        got = sx_figures_compute((const double *const *)ex, (const double *const *)strict,
                                 count, summaries[0].total, run ? &run->bootstrap : &none,
                                 ex_ci, strict_ci, pairs, err);
    json_t *array = got < 0 ? NULL : json_array();
    for (size_t m = 0; got >= 0 && m < count; m++) {
        summaries[m].has_ci = got == 1;
        summaries[m].ex_ci = ex_ci[m];
        summaries[m].strict_ci = strict_ci[m];
    }
    for (size_t i = 0, p = 0; array && i < count; i++)
        for (size_t j = i + 1; j < count; j++, p++)
            for (size_t k = 2 * p; k < 2 * p + 2; k++)
                json_array_append_new(
                    array, sx_comparison_json(
                               &pairs[k], summaries[i].method ? summaries[i].method : "",
                               summaries[j].method ? summaries[j].method : ""));
    for (size_t m = 0; m < count; m++) {
        free(ex[m]);
        free(strict[m]);
    }
    free(ex);
    free(strict);
    free(ex_ci);
    free(strict_ci);
    free(pairs);
    *rc = got < 0 ? -1 : 0;
    return array;
}

int sx_summary_majority(sx_method_summary_t *summary, const sx_result_t *results,
                        size_t count, const bool *ignore_order, sx_error_t *err)
{
    summary->has_majority = false;
    summary->maj_correct = 0;
    size_t n = samples_of(summary);
    if (n < 2 || count != summary->total * n)
        return 0;
    const char **paths = sx_alloc(n, sizeof *paths);
    int rc = 0;
    for (size_t t = 0; t < summary->total && rc == 0; t++) {
        for (size_t k = 0; k < n; k++)
            paths[k] = results[t * n + k].csv;
        long winner = sx_majority_sample(paths, n, ignore_order[t], err);
        if (winner < -1) {
            sx_error_prefix(err, "maj@%zu of %s/%s", n, summary->method,
                            results[t * n].task_id);
            rc = -1;
        } else
            summary->maj_correct += winner >= 0 && results[t * n + (size_t)winner].score;
    }
    free(paths);
    summary->has_majority = rc == 0;
    return rc;
}

int sx_summary_write(const char *out_dir, sx_method_summary_t *summaries, size_t count,
                     const sx_run_info_t *run, sx_error_t *err)
{
    int rc = 0;
    json_t *comparisons = figures(summaries, count, run, err, &rc);
    if (rc != 0)
        return -1;
    json_t *methods = json_object();
    for (size_t m = 0; m < count; m++) {
        const sx_method_summary_t *s = &summaries[m];
        json_t *by_status = json_object();
        for (int i = 0; i < SX_STATUS_COUNT; i++)
            json_object_set_new(by_status, sx_status_name((sx_status_t)i),
                                json_integer((json_int_t)s->by_status[i]));
        size_t units = s->total * samples_of(s);
        json_t *o = json_object();
        json_object_set_new(o, "correct", json_integer((json_int_t)s->correct));
        json_object_set_new(o, "total", json_integer((json_int_t)s->total));
        if (s->per_sample)
            json_object_set_new(o, "samples", json_integer((json_int_t)s->samples));
        json_object_set_new(o, "ex", json_real(share(s->correct, units)));
        if (s->has_ci)
            json_object_set_new(o, "ex_ci", sx_interval_json(&s->ex_ci));
        json_object_set_new(o, "strict_correct",
                            json_integer((json_int_t)s->strict_correct));
        json_object_set_new(o, "ex_strict", json_real(share(s->strict_correct, units)));
        if (s->has_ci)
            json_object_set_new(o, "ex_strict_ci", sx_interval_json(&s->strict_ci));
        if (s->pass_at_k)
            json_object_set_new(o, "pass_at_k", pass_at_k_json(s));
        if (s->has_majority)
            json_object_set_new(o, "maj_at_n",
                                json_real(share(s->maj_correct, s->total)));
        json_object_set_new(o, "ex_not_strict",
                            json_integer((json_int_t)s->ex_not_strict));
        json_object_set_new(o, "strict_not_ex",
                            json_integer((json_int_t)s->strict_not_ex));
        json_object_set_new(o, "cached", json_integer((json_int_t)s->cached));
        json_object_set_new(o, "unstable", json_integer((json_int_t)s->unstable));
        json_object_set_new(o, "repeats", json_integer((json_int_t)s->repeats));
        json_object_set_new(o, "by_status", by_status);
        if (s->per_sample)
            json_object_set_new(o, "per_sample", per_sample_json(s));
        json_object_set_new(methods, s->method ? s->method : "", o);
    }
    json_t *root = json_object();
    json_object_set_new(root, "methods", methods);
    if (comparisons && json_array_size(comparisons))
        json_object_set_new(root, "comparisons", comparisons);
    else
        json_decref(comparisons);
    if (count && summaries[0].bench_tasks) {
        json_t *subset = json_object();
        json_object_set_new(subset, "selected_by", json_string("--tasks"));
        json_object_set_new(subset, "tasks",
                            json_integer((json_int_t)summaries[0].total));
        json_object_set_new(subset, "bench_tasks",
                            json_integer((json_int_t)summaries[0].bench_tasks));
        json_object_set_new(subset, "note",
                            json_string("total, ex and ex_strict count this subset of "
                                        "task IDs, not the whole bench"));
        json_object_set_new(root, "subset", subset);
    }
    if (run)
        json_object_set_new(root, "run", run_json(run, summaries, count));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    rc = sx_json_write_file(path, root, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
    json_decref(root);
    return rc;
}

/* "NAME: pass@1 = x, ..., pass@n = y; maj@n = z" of a method with n > 1
 * samples, as far as the summary has them. */
static void print_samples_figures(FILE *out, const sx_method_summary_t *s)
{
    if (!s->pass_at_k && !s->has_majority)
        return;
    fprintf(out, "%s:", s->method);
    for (size_t k = 1; s->pass_at_k && k <= s->samples; k++)
        fprintf(out, "%s pass@%zu = %.4f", k > 1 ? "," : "", k, s->pass_at_k[k - 1]);
    if (s->has_majority)
        fprintf(out, "%s maj@%zu = %.4f", s->pass_at_k ? ";" : "", s->samples,
                share(s->maj_correct, s->total));
    fputc('\n', out);
}

/* ", 95% CI [low, high]" when the summary has its intervals. */
static void print_interval(FILE *out, const sx_method_summary_t *s,
                           const sx_stats_interval_t *ci)
{
    if (s->has_ci)
        fprintf(out, ", 95%% CI [%.4f, %.4f]", ci->low, ci->high);
}

void sx_summary_print(FILE *out, const sx_method_summary_t *summary)
{
    const sx_method_summary_t *s = summary;
    size_t units = s->total * samples_of(s);
    fprintf(out, "%s: EX = %zu/%zu = %.4f", s->method, s->correct, units,
            share(s->correct, units));
    if (s->per_sample)
        fprintf(out, " (mean over %zu samples of %zu task IDs)", s->samples, s->total);
    if (s->bench_tasks)
        fprintf(out, " over a subset: %zu of %zu task IDs (--tasks)", s->total,
                s->bench_tasks);
    print_interval(out, s, &s->ex_ci);
    fputc('\n', out);
    for (size_t k = 0; s->per_sample && k < s->samples; k++) {
        const sx_sample_tally_t *t = &s->per_sample[k];
        fprintf(out, "%s: sample %zu: EX = %zu/%zu = %.4f, strict EX = %zu/%zu = %.4f\n",
                s->method, k, t->correct, s->total, share(t->correct, s->total),
                t->strict_correct, s->total, share(t->strict_correct, s->total));
    }
    print_samples_figures(out, s);
    fprintf(out, "%s: strict EX = %zu/%zu = %.4f", s->method, s->strict_correct, units,
            share(s->strict_correct, units));
    print_interval(out, s, &s->strict_ci);
    fprintf(out, " (EX but not strict: %zu, strict but not EX: %zu)\n", s->ex_not_strict,
            s->strict_not_ex);
    if (s->cached)
        fprintf(out,
                "%s: %zu of %zu results from the result cache (scored again, not "
                "executed)\n",
                s->method, s->cached, units);
    if (s->repeats)
        fprintf(out, "%s: %zu of %zu tasks not stable over %zu runs%s\n", s->method,
                s->unstable, s->total, s->repeats,
                s->unstable ? " (results.jsonl: \"stable\": false)" : "");
    for (size_t i = 0; i < s->listed; i++)
        fprintf(out, "  %s: %s\n", s->differing[i].task_id, s->differing[i].detail);
    size_t differing = s->ex_not_strict + s->strict_not_ex;
    if (differing > s->listed)
        fprintf(out,
                "  ... and %zu more (results.jsonl: \"strict\" differs from \"score\")\n",
                differing - s->listed);
}

void sx_method_summary_clear(sx_method_summary_t *summary)
{
    if (!summary)
        return;
    free(summary->method);
    free(summary->per_sample);
    free(summary->task_correct);
    free(summary->task_strict);
    free(summary->pass_at_k);
    memset(summary, 0, sizeof *summary);
}

/* ---- self-test ----------------------------------------------------------- */

/* What sx_summary_print prints (heap). */
static char *printed_summary(const sx_method_summary_t *summary)
{
    char *printed = NULL;
    size_t printed_size = 0;
    FILE *out = open_memstream(&printed, &printed_size);
    SX_CHECK(out);
    sx_summary_print(out, summary);
    fclose(out);
    return printed;
}

static void test_result_json_round_trips(void)
{
    sx_result_t r;
    sx_result_init(&r, "t01", SX_STATUS_MATCH, "ok \"quoted\"", "/x/t01.csv");
    SX_CHECK(r.strict == 0);
    r.strict = 1;
    r.attempts = 2;
    r.seconds = 1.5;
    char *line = sx_result_to_json(&r);
    SX_CHECK(strstr(line,
                    "\"task_id\":\"t01\",\"score\":1,\"strict\":1,\"status\":\"match\""));
    sx_result_t back;
    SX_CHECK(sx_result_from_json(line, &back, NULL) == 0);
    SX_CHECK(strcmp(back.task_id, "t01") == 0 && back.score == 1 && back.attempts == 2);
    SX_CHECK(back.strict == 1);
    SX_CHECK(strcmp(back.detail, r.detail) == 0 && strcmp(back.csv, r.csv) == 0);
    SX_CHECK(back.seconds == 1.5 && strcmp(back.worker, "") == 0);
    SX_CHECK(!back.cached && !strstr(line, "cached")); /* only said when true */
    free(line);
    sx_result_clear(&back);
    r.cached = true; /* served by a worker's result cache */
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, ",\"worker\":\"\",\"cached\":true,\"csv\":\"/x/t01.csv\"}"));
    SX_CHECK(sx_result_from_json(line, &back, NULL) == 0 && back.cached);
    SX_CHECK(!back.repeated && !strstr(line, "stable"));
    free(line);
    sx_result_clear(&back);
    r.repeated = r.unstable = true; /* --repeat found runs that differ */
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, ",\"cached\":true,\"stable\":false,\"csv\":"));
    SX_CHECK(sx_result_from_json(line, &back, NULL) == 0 && back.repeated &&
             back.unstable);
    free(line);
    sx_result_clear(&back);
    sx_result_clear(&r);
    sx_result_clear(&r); /* harmless twice */
    sx_error_t err;
    /* Each line differs from a valid one in one field. */
#define LINE(task, score, strict, status, attempts, seconds)                             \
    "{\"task_id\":" task ",\"score\":" score ",\"strict\":" strict ",\"status\":" status \
    ",\"detail\":\"\",\"attempts\":" attempts ",\"seconds\":" seconds                    \
    ",\"worker\":\"\"}"
    SX_CHECK(sx_result_from_json(LINE("\"t\"", "0", "1", "\"mismatch\"", "3", "0.5"),
                                 &back, &err) == 0);
    SX_CHECK(back.status == SX_STATUS_MISMATCH && back.score == 0 && back.strict == 1);
    SX_CHECK(back.attempts == 3 && back.seconds == 0.5 && back.csv == NULL);
    sx_result_clear(&back);
    static const char *const bad[][2] = {
        {LINE("\"t\"", "1", "0", "\"mismatch\"", "0", "0"),
         "field \"score\" must be 1 for match and 0 otherwise"},
        {LINE("\"t\"", "0", "0", "\"match\"", "0", "0"),
         "field \"score\" must be 1 for match and 0 otherwise"},
        {LINE("\"t\"", "true", "0", "\"match\"", "0", "0"),
         "field \"score\" must be 1 for match and 0 otherwise"},
        /* strict: required, 0 or 1, and 1 only for a scored task */
        {LINE("\"t\"", "0", "null", "\"mismatch\"", "0", "0"),
         "field \"strict\" must be"},
        {LINE("\"t\"", "0", "2", "\"mismatch\"", "0", "0"), "field \"strict\" must be"},
        {LINE("\"t\"", "0", "-1", "\"mismatch\"", "0", "0"), "field \"strict\" must be"},
        {LINE("\"t\"", "0", "1", "\"timeout\"", "0", "0"), "field \"strict\" must be"},
        {LINE("\"t\"", "0", "0", "\"maybe\"", "0", "0"),
         "field \"status\" is not a known status"},
        {LINE("\"t\"", "0", "0", "\"mismatch\"", "-1", "0"),
         "field \"attempts\" must be an integer >= 0"},
        {LINE("\"t\"", "0", "0", "\"mismatch\"", "1.5", "0"),
         "field \"attempts\" must be an integer >= 0"},
        {LINE("\"t\"", "0", "0", "\"mismatch\"", "0", "-0.5"),
         "field \"seconds\" must be a number >= 0"},
        {"{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":\"mismatch\",\"detail\":"
         "\"\",\"attempts\":1,\"seconds\":1,\"worker\":\"\",\"cached\":false}",
         "field \"cached\" must be true when present"},
        {"{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":\"mismatch\",\"detail\":"
         "\"\",\"attempts\":1,\"seconds\":1,\"worker\":\"\",\"stable\":0}",
         "field \"stable\" must be true or false when present"},
        {LINE("\"t\"", "0", "0", "\"mismatch\"", "0", "\"1\""),
         "field \"seconds\" must be a number >= 0"},
        {LINE("1", "0", "0", "\"mismatch\"", "0", "0"), "task_id"},
        {"[]", "not a JSON object"},
        {"{", "not a JSON object"},
    };
#undef LINE
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sx_error_clear(&err);
        SX_CHECK(sx_result_from_json(bad[i][0], &back, &err) == -1);
        if (!strstr(err.msg, bad[i][1]))
            fprintf(stderr, "%s: '%s' lacks '%s'\n", bad[i][0], err.msg, bad[i][1]);
        SX_CHECK(strstr(err.msg, bad[i][1]) != NULL);
    }
}

/* Each line of bad[i][0] is refused with exactly the message bad[i][1], and
 * leaves no field behind. */
static void expect_refused(const char *const (*bad)[2], size_t count)
{
    for (size_t i = 0; i < count; i++) {
        sx_result_t back;
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_result_from_json(bad[i][0], &back, &err) == -1);
        if (strcmp(err.msg, bad[i][1]) != 0)
            fprintf(stderr, "%s: '%s' is not '%s'\n", bad[i][0], err.msg, bad[i][1]);
        SX_CHECK(strcmp(err.msg, bad[i][1]) == 0);
        SX_CHECK(back.task_id == NULL && back.detail == NULL);
    }
}

/* Every refusal of a results.jsonl line, in full: a missing field is named
 * like a wrong one, and JSON that is no object says only that (it once
 * ended in a dangling ": "). */
static void test_result_refusals_in_full(void)
{
#define FIELDS(rest)                                                                     \
    "{\"task_id\":\"t\",\"status\":\"mismatch\",\"detail\":\"\",\"worker\":\"\"" rest "}"
#define STEPS(run)                                                                       \
    FIELDS(",\"score\":0,\"strict\":0,\"attempts\":1,\"seconds\":1,\"steps\":{"          \
           "\"prepare\":0,\"replay\":0,\"submit\":0,\"run\":" run ",\"materialize\":0,"  \
           "\"score\":0,\"cleanup\":0}")
    static const char *const bad[][2] = {
        {"[]", "not a JSON object"},
        {"{", "not a JSON object: string or '}' expected near end of file"},
        {FIELDS(",\"strict\":0,\"attempts\":1,\"seconds\":1"),
         "field \"score\" must be 1 for match and 0 otherwise"},
        {FIELDS(",\"score\":0,\"attempts\":1,\"seconds\":1"),
         "field \"strict\" must be 0 or 1, and 0 unless the status is match or "
         "mismatch"},
        {FIELDS(",\"score\":0,\"strict\":0,\"seconds\":1"),
         "field \"attempts\" must be an integer >= 0"},
        {FIELDS(",\"score\":0,\"strict\":0,\"attempts\":1"),
         "field \"seconds\" must be a number >= 0"},
        {FIELDS(",\"score\":0,\"strict\":0,\"attempts\":1,\"seconds\":-1"),
         "field \"seconds\" must be a number >= 0"},
        {FIELDS(",\"score\":0,\"strict\":0,\"attempts\":1,\"seconds\":1,\"csv\":1"),
         "field \"csv\" must be a string or null"},
        {"{\"status\":\"mismatch\"}", "field \"task_id\" must be a string"},
        {STEPS("-0.5"), "field \"steps\": \"run\" must be a number >= 0"},
        {STEPS("\"1\""), "field \"steps\": \"run\" must be a number >= 0"},
    };
#undef STEPS
    sx_result_t back;
    expect_refused(bad, sizeof bad / sizeof bad[0]);
    /* "stable": true is a repeated task whose runs agree; a null csv is none. */
    SX_CHECK(sx_result_from_json(
                 FIELDS(",\"score\":0,\"strict\":0,\"attempts\":1,\"seconds\":2,"
                        "\"stable\":true,\"csv\":null"),
                 &back, NULL) == 0);
    SX_CHECK(back.repeated && !back.unstable && back.csv == NULL && back.seconds == 2);
    char *line = sx_result_to_json(&back);
    SX_CHECK(strstr(line, ",\"stable\":true,\"csv\":null}"));
    free(line);
    sx_result_clear(&back);
#undef FIELDS
    /* NULL strings are written as empty ones; clearing NULL does nothing. */
    sx_result_t r;
    sx_result_init(&r, NULL, SX_STATUS_TIMEOUT, NULL, NULL);
    SX_CHECK(strcmp(r.task_id, "") == 0 && strcmp(r.detail, "") == 0 && r.csv == NULL);
    free(r.detail);
    free(r.worker);
    r.detail = r.worker = NULL;
    line = sx_result_to_json(&r);
    SX_CHECK(strcmp(line, "{\"task_id\":\"\",\"score\":0,\"strict\":0,\"status\":"
                          "\"timeout\",\"detail\":\"\",\"attempts\":0,\"seconds\":0.0,"
                          "\"worker\":\"\",\"csv\":null}") == 0);
    free(line);
    sx_result_clear(&r);
    sx_result_clear(NULL);
    sx_method_summary_clear(NULL);
}

static void test_submission_entries(void)
{
    char *id, *csv;
    int sample;
    sx_error_t err;
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":null}", 1, &id,
                                           &sample, &csv, &err) == 0);
    SX_CHECK(strcmp(id, "a") == 0 && csv == NULL && sample == 0);
    free(id);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":\"x.csv\"}", 1,
                                           &id, &sample, &csv, &err) == 0);
    SX_CHECK(strcmp(csv, "x.csv") == 0);
    free(id);
    free(csv);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\"}", 1, &id, &sample, &csv,
                                           &err) == -1);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":1,\"csv\":null}", 1, &id,
                                           &sample, &csv, &err) == -1);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":null,\"x\":1}", 1,
                                           &id, &sample, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "unknown field \"x\"") == 0);
    /* The first unknown field is the one named. */
    SX_CHECK(sx_submission_entry_from_json("{\"y\":1,\"task_id\":\"a\",\"x\":1}", 1, &id,
                                           &sample, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "unknown field \"y\"") == 0 && id == NULL && csv == NULL);
    SX_CHECK(sx_submission_entry_from_json("[\"a\"]", 1, &id, &sample, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "not a JSON object") == 0);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\"", 1, &id, &sample, &csv, &err) ==
             -1);
    SX_CHECK(strcmp(err.msg, "not a JSON object: ':' expected near end of file") == 0);
    /* "sample": an integer below max_samples, 0 when absent. */
    SX_CHECK(
        sx_submission_entry_from_json("{\"task_id\":\"a\",\"sample\":2,\"csv\":null}", 3,
                                      &id, &sample, &csv, &err) == 0);
    SX_CHECK(strcmp(id, "a") == 0 && sample == 2 && csv == NULL);
    free(id);
    static const char *const bad[][2] = {
        {"{\"task_id\":\"a\",\"sample\":3,\"csv\":null}",
         "sample 3 is not below --max-samples 3"},
        {"{\"task_id\":\"a\",\"sample\":-1,\"csv\":null}", "sample -1 is negative"},
        {"{\"task_id\":\"a\",\"sample\":\"1\",\"csv\":null}",
         "sample must be an integer, not \"1\""},
        {"{\"task_id\":\"a\",\"sample\":1.5,\"csv\":null}",
         "sample must be an integer, not 1.5"},
        {"{\"task_id\":\"a\",\"sample\":false,\"csv\":null}",
         "sample must be an integer, not false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        SX_CHECK(sx_submission_entry_from_json(bad[i][0], 3, &id, &sample, &csv, &err) ==
                 -1);
        SX_CHECK(strcmp(err.msg, bad[i][1]) == 0 && id == NULL && csv == NULL);
    }
    char *line = sx_submission_entry_to_json("t1", NULL);
    SX_CHECK(strcmp(line, "{\"task_id\":\"t1\",\"csv\":null}") == 0);
    free(line);
}

static void test_writers_make_every_file(void)
{
    char dir[] = "/tmp/sx-result-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_result_t results[4];
    sx_result_init(&results[0], "t1", SX_STATUS_MATCH, "strict 0: rows do not align",
                   "/a/t1.csv");
    sx_result_init(&results[1], "t2", SX_STATUS_MISSING_PREDICTION, "no line", NULL);
    sx_result_init(&results[2], "t3", SX_STATUS_MISMATCH,
                   "gold column 0; strict 1: a numeric pairing", "/a/t3.csv");
    results[2].strict = 1;
    sx_result_init(&results[3], "t4", SX_STATUS_MATCH, "", "/a/t4.csv");
    results[3].strict = 1;
    sx_method_summary_t summary;
    sx_error_t err;
    SX_CHECK(sx_results_write(dir, "m", results, 4, &summary, &err) == 0);
    SX_CHECK(summary.total == 4 && summary.correct == 2 && summary.strict_correct == 2);
    SX_CHECK(summary.ex_not_strict == 1 && summary.strict_not_ex == 1 &&
             summary.listed == 2);
    SX_CHECK(summary.by_status[SX_STATUS_MISSING_PREDICTION] == 1);
    SX_CHECK(sx_summary_write(dir, &summary, 1, NULL, &err) == 0);
    char path[PATH_MAX];
    size_t size;
    snprintf(path, sizeof path, "%s/m/submission.jsonl", dir);
    char *text = sx_file_read(path, 1 << 20, &size, &err);
    SX_CHECK(text && strstr(text, "{\"task_id\":\"t2\",\"csv\":null}\n"));
    free(text);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    text = sx_file_read(path, 1 << 20, &size, &err);
    SX_CHECK(text &&
             strstr(text, "\"correct\": 2,\n      \"total\": 4,\n      \"ex\": 0.5,\n"
                          "      \"strict_correct\": 2,\n      \"ex_strict\": 0.5,\n"
                          "      \"ex_not_strict\": 1,\n      \"strict_not_ex\": 1,"));
    free(text);
    snprintf(path, sizeof path, "%s/m/results.jsonl", dir);
    text = sx_file_read(path, 1 << 20, &size, &err);
    SX_CHECK(text && strstr(text, "\"task_id\":\"t2\",\"score\":0,\"strict\":0,"));
    free(text);
    char *printed = printed_summary(&summary);
    SX_CHECK(strcmp(printed,
                    "m: EX = 2/4 = 0.5000\n"
                    "m: strict EX = 2/4 = 0.5000 (EX but not strict: 1, strict but "
                    "not EX: 1)\n"
                    "  t1: strict 0: rows do not align\n"
                    "  t3: gold column 0; strict 1: a numeric pairing\n") == 0);
    free(printed);
    /* Past SX_SUMMARY_LISTED differing tasks, the rest are counted. */
    summary.listed = SX_SUMMARY_LISTED;
    summary.ex_not_strict = SX_SUMMARY_LISTED + 3;
    printed = printed_summary(&summary);
    SX_CHECK(strstr(printed, "  ... and 4 more (results.jsonl: \"strict\" differs from "
                             "\"score\")\n"));
    free(printed);
    static const char *const files[] = {"m/results.jsonl", "m/submission.jsonl",
                                        "summary.json", "m", ""};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        i < 3 ? unlink(path) : rmdir(path);
    }
    for (int i = 0; i < 4; i++)
        sx_result_clear(&results[i]);
    sx_method_summary_clear(&summary);
}

static char *read_all(const char *path)
{
    size_t size;
    char *text = sx_file_read(path, 1 << 20, &size, NULL);
    SX_CHECK(text);
    return text;
}

static char *read_all_of(const char *dir, const char *file)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return read_all(path);
}

static bool starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* DIR/FILE's text equals want. */
static void check_file(const char *dir, const char *file, const char *want)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_all(path);
    if (strcmp(text, want) != 0)
        fprintf(stderr, "%s:\n%s\nwant:\n%s\n", path, text, want);
    SX_CHECK(strcmp(text, want) == 0);
    free(text);
}

/* Two tasks of three samples: every (task, sample) once in results.jsonl
 * with "sample", submission.jsonl sample 0's and samples/K/submission.jsonl
 * each sample's, the tallies over every pair and per sample, EX the mean of
 * the samples' EX; results out of task-then-sample order are refused. */
static void test_writers_with_samples(void)
{
    char dir[] = "/tmp/sx-result-samples-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    static const struct {
        const char *task;
        int sample;
        sx_status_t status;
        int strict;
    } rows[] = {
        {"t1", 0, SX_STATUS_MATCH, 1}, {"t1", 1, SX_STATUS_MISMATCH, 0},
        {"t1", 2, SX_STATUS_MATCH, 0}, {"t2", 0, SX_STATUS_TIMEOUT, 0},
        {"t2", 1, SX_STATUS_MATCH, 1}, {"t2", 2, SX_STATUS_MISSING_PREDICTION, 0},
    };
    sx_result_t results[6];
    for (size_t i = 0; i < 6; i++) {
        char csv[64];
        snprintf(csv, sizeof csv, "/c/%s.%d.csv", rows[i].task, rows[i].sample);
        bool has_csv =
            rows[i].status == SX_STATUS_MATCH || rows[i].status == SX_STATUS_MISMATCH;
        sx_result_init(&results[i], rows[i].task, rows[i].status, "",
                       has_csv ? csv : NULL);
        results[i].sample = rows[i].sample;
        results[i].strict = rows[i].strict;
    }
    sx_method_summary_t summary;
    sx_error_t err;
    SX_CHECK(sx_results_write(dir, "m", results, 6, &summary, &err) == 0);
    SX_CHECK(summary.total == 2 && summary.samples == 3 && summary.correct == 3 &&
             summary.strict_correct == 2 && summary.ex_not_strict == 1 &&
             summary.listed == 1);
    SX_CHECK(strcmp(summary.differing[0].task_id, "t1 sample 2") == 0);
    SX_CHECK(summary.by_status[SX_STATUS_MATCH] == 3 &&
             summary.by_status[SX_STATUS_TIMEOUT] == 1 &&
             summary.by_status[SX_STATUS_MISSING_PREDICTION] == 1);
    SX_CHECK(summary.per_sample[0].correct == 1 && summary.per_sample[1].correct == 1 &&
             summary.per_sample[2].correct == 1 &&
             summary.per_sample[2].strict_correct == 0);
    char *lines = read_all_of(dir, "m/results.jsonl");
    SX_CHECK(starts_with(lines, "{\"task_id\":\"t1\",\"sample\":0,\"score\":1,"));
    SX_CHECK(strstr(lines, "\n{\"task_id\":\"t2\",\"sample\":2,\"score\":0,\"strict\":0,"
                           "\"status\":\"missing_prediction\""));
    free(lines);
    check_file(dir, "m/submission.jsonl",
               "{\"task_id\":\"t1\",\"csv\":\"/c/"
               "t1.0.csv\"}\n{\"task_id\":\"t2\",\"csv\":null}\n");
    check_file(dir, "m/samples/0/submission.jsonl",
               "{\"task_id\":\"t1\",\"csv\":\"/c/"
               "t1.0.csv\"}\n{\"task_id\":\"t2\",\"csv\":null}\n");
    check_file(dir, "m/samples/1/submission.jsonl",
               "{\"task_id\":\"t1\",\"csv\":\"/c/t1.1.csv\"}\n"
               "{\"task_id\":\"t2\",\"csv\":\"/c/t2.1.csv\"}\n");
    check_file(dir, "m/samples/2/submission.jsonl",
               "{\"task_id\":\"t1\",\"csv\":\"/c/"
               "t1.2.csv\"}\n{\"task_id\":\"t2\",\"csv\":null}\n");
    SX_CHECK(sx_summary_write(dir, &summary, 1, NULL, &err) == 0);
    char *text = read_all_of(dir, "summary.json");
    SX_CHECK(strstr(text, "\"correct\": 3,\n      \"total\": 2,\n      \"samples\": 3,\n"
                          "      \"ex\": 0.5,\n      \"strict_correct\": 2,\n"
                          "      \"ex_strict\": 0.3333333333333333,\n"));
    SX_CHECK(strstr(text,
                    "\"per_sample\": [\n        {\n          \"sample\": 0,\n"
                    "          \"correct\": 1,\n          \"ex\": 0.5,\n"
                    "          \"strict_correct\": 1,\n          \"ex_strict\": 0.5\n"
                    "        },"));
    SX_CHECK(strstr(text,
                    "\"sample\": 2,\n          \"correct\": 1,\n          \"ex\": 0.5,\n"
                    "          \"strict_correct\": 0,\n          \"ex_strict\": 0.0\n"));
    /* pass@k: t1 has 2 of 3 samples right, t2 1 of 3: pass@2 is the mean of
     * 1 and 1 - C(2,2)/C(3,2) = 2/3 */
    SX_CHECK(strstr(text, "\"pass_at_k\": {\n        \"1\": 0.5,\n        \"2\": "));
    SX_CHECK(fabs(strtod(strstr(text, "\"2\": ") + 5, NULL) - 5.0 / 6) < 1e-15);
    SX_CHECK(strstr(text, "\"3\": 1.0\n      },") && !strstr(text, "maj_at_n"));
    free(text);
    char *printed = printed_summary(&summary);
    SX_CHECK(strcmp(printed,
                    "m: EX = 3/6 = 0.5000 (mean over 3 samples of 2 task IDs)\n"
                    "m: sample 0: EX = 1/2 = 0.5000, strict EX = 1/2 = 0.5000\n"
                    "m: sample 1: EX = 1/2 = 0.5000, strict EX = 1/2 = 0.5000\n"
                    "m: sample 2: EX = 1/2 = 0.5000, strict EX = 0/2 = 0.0000\n"
                    "m: pass@1 = 0.5000, pass@2 = 0.8333, pass@3 = 1.0000\n"
                    "m: strict EX = 2/6 = 0.3333 (EX but not strict: 1, strict but not "
                    "EX: 0)\n"
                    "  t1 sample 2: \n") == 0);
    free(printed);
    sx_method_summary_clear(&summary);
    /* Out of order: a sample missing from a task, samples swapped. */
    SX_CHECK(sx_results_write(dir, "bad", results, 5, &summary, &err) == -1);
    SX_CHECK(strcmp(err.msg, "bad: 5 results are not tasks of 3 samples each") == 0);
    sx_method_summary_clear(&summary);
    results[1].sample = 2;
    results[2].sample = 1;
    SX_CHECK(sx_results_write(dir, "bad", results, 6, &summary, &err) == -1);
    SX_CHECK(strcmp(err.msg, "bad: result 1 (task t1, sample 2) breaks the order of 3 "
                             "samples per task") == 0);
    sx_method_summary_clear(&summary);
    /* A result line of sample K > 0 carries it alone, and reads back. */
    char *line = sx_result_to_json(&results[1]);
    SX_CHECK(starts_with(line, "{\"task_id\":\"t1\",\"sample\":2,\"score\":0,"));
    sx_result_t back;
    SX_CHECK(sx_result_from_json(line, &back, &err) == 0 && back.sample == 2);
    sx_result_clear(&back);
    free(line);
    line = sx_result_to_json(&results[0]);
    SX_CHECK(!strstr(line, "sample"));
    SX_CHECK(sx_result_from_json(line, &back, &err) == 0 && back.sample == 0);
    sx_result_clear(&back);
    free(line);
    SX_CHECK(sx_result_from_json("{\"task_id\":\"t\",\"sample\":-2,\"score\":0}", &back,
                                 &err) == -1);
    SX_CHECK(strcmp(err.msg, "sample -2 is negative") == 0);
    for (size_t i = 0; i < 6; i++)
        sx_result_clear(&results[i]);
    snprintf(err.msg, sizeof err.msg, "rm -rf %s", dir);
    SX_CHECK(system(err.msg) == 0);
}

/* The writers at their edges: no results, a result without detail whose
 * verdicts differ, folders that cannot be made or written, a summary of
 * no methods, of a nameless method, with input files (found, missing,
 * none) and with a clock that went back; the printout of stable repeats. */
static void test_writers_at_their_edges(void)
{
    char dir[] = "/tmp/sx-result-edges-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[PATH_MAX], want[2 * PATH_MAX + 300];
    sx_method_summary_t summary;
    sx_error_t err;
    SX_CHECK(sx_results_write(dir, "none", NULL, 0, &summary, &err) == 0);
    SX_CHECK(summary.total == 0 && summary.correct == 0 && summary.listed == 0);
    snprintf(path, sizeof path, "%s/none/results.jsonl", dir);
    char *text = read_all(path);
    SX_CHECK(strcmp(text, "") == 0);
    free(text);
    snprintf(path, sizeof path, "%s/none/submission.jsonl", dir);
    text = read_all(path);
    SX_CHECK(strcmp(text, "") == 0);
    free(text);
    sx_method_summary_clear(&summary);

    sx_result_t r;
    sx_result_init(&r, "t1", SX_STATUS_MATCH, NULL, NULL);
    free(r.detail);
    r.detail = NULL;
    SX_CHECK(sx_results_write(dir, "m", &r, 1, &summary, &err) == 0);
    SX_CHECK(summary.listed == 1 && strcmp(summary.differing[0].task_id, "t1") == 0 &&
             strcmp(summary.differing[0].detail, "") == 0);
    sx_method_summary_clear(&summary);

    /* Unstable repeats are counted; past SX_SUMMARY_LISTED tasks whose
     * verdicts differ, the rest are counted but not listed. */
    sx_result_t many[SX_SUMMARY_LISTED + 2];
    for (size_t i = 0; i < SX_SUMMARY_LISTED + 2; i++) {
        char id[16];
        snprintf(id, sizeof id, "t%zu", i);
        sx_result_init(&many[i], id, SX_STATUS_MATCH, "strict 0: why", NULL);
        many[i].repeated = true;
        many[i].unstable = i < 3;
    }
    SX_CHECK(sx_results_write(dir, "many", many, SX_SUMMARY_LISTED + 2, &summary, &err) ==
             0);
    SX_CHECK(summary.unstable == 3 && summary.ex_not_strict == SX_SUMMARY_LISTED + 2 &&
             summary.listed == SX_SUMMARY_LISTED);
    SX_CHECK(strcmp(summary.differing[SX_SUMMARY_LISTED - 1].task_id, "t19") == 0);
    sx_method_summary_clear(&summary);
    for (size_t i = 0; i < SX_SUMMARY_LISTED + 2; i++)
        sx_result_clear(&many[i]);

    /* METHOD below a file; results.jsonl a folder: submission.jsonl is then
     * not written either. */
    snprintf(path, sizeof path, "%s/m/results.jsonl", dir);
    SX_CHECK(sx_results_write(path, "x", &r, 1, &summary, &err) == -1);
    snprintf(want, sizeof want, "%s/x: cannot create folder: Not a directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    snprintf(path, sizeof path, "%s/dir/results.jsonl", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    SX_CHECK(sx_results_write(dir, "dir", &r, 1, &summary, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot rename into place: Is a directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    sx_method_summary_clear(&summary);
    snprintf(path, sizeof path, "%s/dir/submission.jsonl", dir);
    SX_CHECK(!sx_file_exists(path));
    sx_result_clear(&r);

    /* summary.json of no methods: no subset, EX 0 of 0 never divides. */
    SX_CHECK(sx_summary_write(dir, NULL, 0, NULL, &err) == 0);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    text = read_all(path);
    SX_CHECK(strcmp(text, "{\n  \"methods\": {}\n}\n") == 0);
    free(text);
    sx_method_summary_t two[2] = {{.method = "m"}, {.method = NULL, .total = 1}};
    char input[PATH_MAX + 20], missing[PATH_MAX + 20];
    snprintf(input, sizeof input, "%s/m/results.jsonl", dir);
    snprintf(missing, sizeof missing, "%s/gone.jsonl", dir);
    const char *files[] = {input, NULL};
    sx_run_info_t run = {.started = 2000,
                         .ended = 1000,
                         .method_files = files,
                         .inputs_kind = "predictions"};
    SX_CHECK(sx_summary_write(dir, two, 2, &run, &err) == 0);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    text = read_all(path);
    /* No wall_seconds when ended is before started; a method without input
     * file is left out of inputs.files. */
    snprintf(want, sizeof want,
             "\n  \"run\": {\n    \"streamex\": \"%s\",\n"
             "    \"started\": \"1970-01-01T00:33:20.000Z\",\n"
             "    \"ended\": \"1970-01-01T00:16:40.000Z\",\n"
             "    \"inputs\": {\n      \"kind\": \"predictions\",\n      \"files\": {\n"
             "        \"m\": \"%s\"\n      }\n    }\n  }\n}\n",
             SX_VERSION, input);
    SX_CHECK(strstr(text, want) && strcmp(strstr(text, want), want) == 0);
    SX_CHECK(strstr(text, "\n    \"\": {\n      \"correct\": 0,\n      \"total\": 1,\n"
                          "      \"ex\": 0.0,\n"));
    free(text);
    files[0] = missing;
    files[1] = missing;
    run.bench = missing;
    SX_CHECK(sx_summary_write(dir, two, 2, &run, &err) == 0);
    text = read_all(path);
    /* A bench or an input file that is gone is named as given. */
    snprintf(want, sizeof want, "    \"bench\": \"%s\",\n", missing);
    SX_CHECK(strstr(text, want));
    snprintf(want, sizeof want,
             "      \"files\": {\n        \"m\": \"%s\",\n        \"\": \"%s\"\n      }",
             missing, missing);
    SX_CHECK(strstr(text, want));
    free(text);
    snprintf(path, sizeof path, "%s/m/results.jsonl/out", dir);
    SX_CHECK(sx_summary_write(path, two, 1, NULL, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot create folder: Not a directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* Repeats that all agree: the count, without the pointer to results.jsonl. */
    sx_method_summary_t repeated = {.method = "m", .total = 3, .repeats = 2};
    char *printed = printed_summary(&repeated);
    SX_CHECK(strcmp(printed, "m: EX = 0/3 = 0.0000\n"
                             "m: strict EX = 0/3 = 0.0000 (EX but not strict: 0, strict "
                             "but not EX: 0)\n"
                             "m: 0 of 3 tasks not stable over 2 runs\n") == 0);
    free(printed);
    snprintf(want, sizeof want, "rm -rf %s", dir);
    SX_CHECK(system(want) == 0);
}

/* Each summary's task values reach summary.json's statistics: the
 * intervals with run.bootstrap (the same bounds sx_stats_bootstrap gives the
 * verdicts alone), printed on the EX lines; the comparisons of every pair
 * with or without them; --bootstrap 0 leaves the intervals out. */
static void test_summary_carries_the_statistics(void)
{
    char dir[] = "/tmp/sx-result-figures-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    static const sx_status_t a[] = {SX_STATUS_MATCH, SX_STATUS_MATCH, SX_STATUS_MISMATCH,
                                    SX_STATUS_MATCH, SX_STATUS_TIMEOUT};
    static const sx_status_t b[] = {SX_STATUS_MATCH, SX_STATUS_MISMATCH,
                                    SX_STATUS_MISMATCH, SX_STATUS_MISMATCH,
                                    SX_STATUS_MATCH};
    sx_method_summary_t summaries[2];
    sx_result_t results[5];
    sx_error_t err;
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < 5; i++) {
            char id[16];
            snprintf(id, sizeof id, "t%d", i);
            sx_result_init(&results[i], id, (m ? b : a)[i], "", NULL);
            results[i].strict = results[i].score && i != 0;
        }
        SX_CHECK(sx_results_write(dir, m ? "b" : "a", results, 5, &summaries[m], &err) ==
                 0);
        for (int i = 0; i < 5; i++)
            sx_result_clear(&results[i]);
    }
    sx_run_info_t run = {.bootstrap = {1000, 3}};
    SX_CHECK(sx_summary_write(dir, summaries, 2, &run, &err) == 0);
    const double a_ex[] = {1, 1, 0, 1, 0};
    sx_stats_interval_t want;
    SX_CHECK(sx_stats_bootstrap(a_ex, 5, 1000, 3, &want, &err) == 1);
    SX_CHECK(summaries[0].has_ci && summaries[0].ex_ci.low == want.low &&
             summaries[0].ex_ci.high == want.high);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *ci =
        json_object_get(json_object_get(json_object_get(root, "methods"), "a"), "ex_ci");
    SX_CHECK(json_real_value(json_array_get(ci, 0)) == want.low &&
             json_real_value(json_array_get(ci, 1)) == want.high);
    json_t *bootstrap = json_object_get(json_object_get(root, "run"), "bootstrap");
    SX_CHECK(json_integer_value(json_object_get(bootstrap, "resamples")) == 1000 &&
             json_integer_value(json_object_get(bootstrap, "seed")) == 3);
    json_t *pairs = json_object_get(root, "comparisons");
    SX_CHECK(json_array_size(pairs) == 2);
    json_t *ex = json_array_get(pairs, 0), *strict = json_array_get(pairs, 1);
    /* EX: t0 both, t1 t3 only a, t4 only b, t2 neither; strict: t0 is 0 */
    SX_CHECK(json_integer_value(json_object_get(ex, "both")) == 1 &&
             json_integer_value(json_object_get(ex, "only_a")) == 2 &&
             json_integer_value(json_object_get(ex, "only_b")) == 1 &&
             json_integer_value(json_object_get(ex, "neither")) == 1 &&
             json_real_value(json_object_get(ex, "ex_diff")) == 0.2 &&
             json_real_value(json_object_get(ex, "mcnemar_p")) == 1.0);
    SX_CHECK(!json_object_get(ex, "strict") && json_object_get(ex, "ex_diff_ci"));
    SX_CHECK(json_is_true(json_object_get(strict, "strict")) &&
             json_integer_value(json_object_get(strict, "both")) == 0 &&
             json_integer_value(json_object_get(strict, "neither")) == 2);
    json_decref(root);
    char *printed = NULL;
    size_t printed_size = 0;
    FILE *out = open_memstream(&printed, &printed_size);
    sx_summary_print(out, &summaries[0]);
    fclose(out);
    char line[160];
    snprintf(line, sizeof line, "a: EX = 3/5 = 0.6000, 95%% CI [%.4f, %.4f]\n", want.low,
             want.high);
    SX_CHECK(strncmp(printed, line, strlen(line)) == 0);
    SX_CHECK(strstr(printed, "a: strict EX = 2/5 = 0.4000, 95% CI ["));
    free(printed);
    /* --bootstrap 0: the comparisons without intervals, no "bootstrap" */
    run.bootstrap.resamples = 0;
    SX_CHECK(sx_summary_write(dir, summaries, 2, &run, &err) == 0 &&
             !summaries[1].has_ci);
    char *text = read_all(path);
    SX_CHECK(!strstr(text, "_ci") && !strstr(text, "bootstrap") &&
             strstr(text, "\"comparisons\": [\n    {\n      \"a\": \"a\",\n"));
    free(text);
    run.bootstrap.resamples = SX_STATS_MAX_RESAMPLES + 1;
    SX_CHECK(sx_summary_write(dir, summaries, 2, &run, &err) == -1 &&
             strstr(err.msg, "more than the bound"));
    for (int m = 0; m < 2; m++)
        sx_method_summary_clear(&summaries[m]);
    snprintf(line, sizeof line, "rm -rf %s", dir);
    SX_CHECK(system(line) == 0);
}

/* Seconds to the millisecond, ratios in their shortest exact form. */
static void test_numbers_read_like_a_person_wrote_them(void)
{
    sx_result_t r;
    sx_result_init(&r, "t", SX_STATUS_MATCH, "", NULL);
    r.seconds = 0.45123456;
    char *line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, "\"seconds\":0.451,"));
    free(line);
    r.seconds = 12;
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, "\"seconds\":12.0,"));
    free(line);
    sx_result_clear(&r);
    char dir[] = "/tmp/sx-result-numbers-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_method_summary_t summary = {
        .method = "m", .total = 30, .correct = 17, .strict_correct = 15};
    sx_run_info_t run = {.started = 1000.25, .ended = 1012.5};
    sx_error_t err;
    SX_CHECK(sx_summary_write(dir, &summary, 1, &run, &err) == 0);
    char path[PATH_MAX];
    size_t size;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = sx_file_read(path, 1 << 20, &size, &err);
    SX_CHECK(text && strstr(text, "\"ex\": 0.5666666666666667,") &&
             strstr(text, "\"ex_strict\": 0.5,") &&
             strstr(text, "\"wall_seconds\": 12.25"));
    SX_CHECK(strtod(strstr(text, "\"ex\": ") + 6, NULL) == 17.0 / 30);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* Steps are written for an executed task only, to the millisecond, and
 * read back whole; a steps object missing a step or holding a bad one is
 * refused with its reason. */
static void test_steps_travel_with_the_result(void)
{
    sx_result_t r, back;
    sx_result_init(&r, "t", SX_STATUS_MISMATCH, "", NULL);
    char *line = sx_result_to_json(&r);
    SX_CHECK(!strstr(line, "steps"));
    free(line);
    for (int i = 0; i < SX_STEP_COUNT; i++)
        *sx_step_slot(&r.steps, i) = 0.5 + i;
    r.steps.run = 12.34567;
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, "\"steps\":{\"prepare\":0.5,\"replay\":1.5,\"submit\":2.5,"
                          "\"run\":12.346,\"materialize\":4.5,\"score\":5.5,"
                          "\"cleanup\":6.5}}"));
    SX_CHECK(sx_result_from_json(line, &back, NULL) == 0);
    SX_CHECK(back.steps.prepare == 0.5 && back.steps.run == 12.346 &&
             back.steps.cleanup == 6.5 && sx_step_seconds(&back.steps, 4) == 4.5);
    SX_CHECK(strcmp(sx_step_name(3), "run") == 0);
    sx_result_clear(&back);
    free(line);
    sx_result_clear(&r);
#define STEPS(steps)                                                                     \
    "{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":\"mismatch\",\"detail\":"    \
    "\"\","                                                                              \
    "\"attempts\":1,\"seconds\":1,\"worker\":\"w\",\"steps\":" steps "}"
    static const char *const bad[][2] = {
        {STEPS("[]"), "field \"steps\" must be an object of the 7 steps"},
        {STEPS("{\"run\":1}"), "field \"steps\" must be an object of the 7 steps"},
        {STEPS("{\"prepare\":0,\"replay\":0,\"submit\":0,\"run\":-1,\"materialize\":0,"
               "\"score\":0,\"cleanup\":0}"),
         "field \"steps\": \"run\" must be a number >= 0"},
        {STEPS("{\"prepare\":0,\"replay\":0,\"submit\":0,\"run\":0,\"materialize\":0,"
               "\"score\":0,\"later\":0}"),
         "field \"steps\": \"cleanup\" must be a number >= 0"},
    };
#undef STEPS
    expect_refused(bad, sizeof bad / sizeof bad[0]);
}

/* The changelog figures are written only when known, after the steps, and
 * read back whole; an object missing a kind or holding a bad count is
 * refused with its reason. */
static void test_changelog_travels_with_the_result(void)
{
    sx_result_t r, back;
    sx_result_init(&r, "t", SX_STATUS_MATCH, "", NULL);
    SX_CHECK(!r.changelog.known);
    char *line = sx_result_to_json(&r);
    SX_CHECK(!strstr(line, "changelog"));
    free(line);
    r.steps.run = 1;
    r.changelog =
        (sx_changelog_counts_t){.known = true, .records = {7, 2, 2, 1, 3}, .rows = 6};
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line,
                    "\"cleanup\":0.0},\"changelog\":{\"insert\":7,\"update_before\":2,"
                    "\"update_after\":2,\"delete\":1,\"tombstone\":3,\"rows\":6}}"));
    SX_CHECK(sx_result_from_json(line, &back, NULL) == 0);
    SX_CHECK(back.changelog.known && back.changelog.rows == 6);
    SX_CHECK(memcmp(back.changelog.records, r.changelog.records,
                    sizeof r.changelog.records) == 0);
    free(line);
    sx_result_clear(&back);
    sx_result_clear(&r);
    SX_CHECK(strcmp(sx_change_kind_name(SX_CHANGE_UPDATE_AFTER), "update_after") == 0);
    SX_CHECK(strcmp(sx_change_kind_name(SX_CHANGE_KINDS), "unknown") == 0);
#define CHANGELOG(changelog)                                                             \
    "{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":\"mismatch\",\"detail\":"    \
    "\"\",\"attempts\":1,\"seconds\":1,\"worker\":\"w\",\"changelog\":" changelog "}"
    static const char *const bad[][2] = {
        {CHANGELOG("[]"),
         "field \"changelog\" must be an object of the 5 record kinds and \"rows\""},
        {CHANGELOG("{\"insert\":1}"),
         "field \"changelog\" must be an object of the 5 record kinds and \"rows\""},
        {CHANGELOG("{\"insert\":1,\"update_before\":0,\"update_after\":0,\"delete\":-1,"
                   "\"tombstone\":0,\"rows\":1}"),
         "field \"changelog\": \"delete\" must be an integer >= 0"},
        {CHANGELOG("{\"insert\":1,\"update_before\":0,\"update_after\":0,\"delete\":0,"
                   "\"tombstone\":0,\"rows\":1.5}"),
         "field \"changelog\": \"rows\" must be an integer >= 0"},
        {CHANGELOG("{\"insert\":1,\"update_before\":0,\"update_after\":0,\"delete\":0,"
                   "\"tombstone\":0,\"row\":1}"),
         "field \"changelog\": \"rows\" must be an integer >= 0"},
    };
#undef CHANGELOG
    expect_refused(bad, sizeof bad / sizeof bad[0]);
}

/* A result made by sx_result_init has every text field (the given ones,
 * else empty), no CSV unless given, and its status's score. */
static void test_init_fills_every_field(void)
{
    sx_result_t r;
    sx_result_init(&r, "t1", SX_STATUS_MATCH, NULL, NULL);
    SX_CHECK(strcmp(r.task_id, "t1") == 0 && strcmp(r.detail, "") == 0);
    SX_CHECK(r.worker && strcmp(r.worker, "") == 0 && r.csv == NULL);
    SX_CHECK(r.score == 1 && r.strict == 0 && r.attempts == 0);
    sx_result_clear(&r);
    sx_result_init(&r, NULL, SX_STATUS_TIMEOUT, "after 1 s", "/x/t1.csv");
    SX_CHECK(strcmp(r.task_id, "") == 0 && strcmp(r.detail, "after 1 s") == 0);
    SX_CHECK(strcmp(r.csv, "/x/t1.csv") == 0 && r.score == 0);
    sx_result_clear(&r);
    sx_result_clear(NULL);
}

/* The run clock is the wall clock in seconds, its fraction below one: a
 * summary's started and ended times are read from it. (time() may lag the
 * clock by a tick, hence a second of room above.) */
static void test_run_clock_is_the_wall_clock(void)
{
    time_t before = time(NULL);
    double now = sx_run_clock();
    time_t after = time(NULL);
    SX_CHECK(now >= (double)before && now < (double)after + 2);
}

/* The engine that computed a result travels with it, said only when
 * known; a run's engines are joined once each. */
static void test_engine_travels_with_the_result(void)
{
    sx_result_t r, back;
    sx_error_t err;
    sx_result_init(&r, "t1", SX_STATUS_MATCH, NULL, "/x/t1.csv");
    SX_CHECK(r.engine == NULL);
    char *line = sx_result_to_json(&r);
    SX_CHECK(!strstr(line, "engine"));
    free(line);
    r.worker = (free(r.worker), sx_strdup("w0"));
    r.engine = sx_strdup("flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1");
    line = sx_result_to_json(&r);
    SX_CHECK(strstr(line, ",\"worker\":\"w0\",\"engine\":\"flink-2.2.1/kafka-connector-"
                          "5.0.0-2.2/kafka-3.9.1\",\"csv\":"));
    SX_CHECK(sx_result_from_json(line, &back, &err) == 0);
    SX_CHECK(strcmp(back.engine, r.engine) == 0);
    free(line);
    sx_result_clear(&back);
    sx_result_clear(&r);
    SX_CHECK(
        sx_result_from_json("{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":"
                            "\"mismatch\",\"detail\":\"\",\"attempts\":1,\"seconds\":1,"
                            "\"worker\":\"\",\"engine\":\"\"}",
                            &back, &err) == -1);
    SX_CHECK(strcmp(err.msg, "field \"engine\" must not be empty when present") == 0);
    SX_CHECK(
        sx_result_from_json("{\"task_id\":\"t\",\"score\":0,\"strict\":0,\"status\":"
                            "\"mismatch\",\"detail\":\"\",\"attempts\":1,\"seconds\":1,"
                            "\"worker\":\"\",\"engine\":2}",
                            &back, &err) == -1);
    SX_CHECK(strcmp(err.msg, "field \"engine\" must be a string or null") == 0);

    char *joined = sx_engines_add(NULL, NULL);
    SX_CHECK(joined == NULL);
    joined = sx_engines_add(joined, "flink-1.20.3/a");
    joined = sx_engines_add(joined, "");
    joined = sx_engines_add(joined, "flink-1.20.3/a");
    SX_CHECK(strcmp(joined, "flink-1.20.3/a") == 0);
    joined = sx_engines_add(joined, "flink-1.20.3"); /* a prefix is another engine */
    joined = sx_engines_add(joined, "simulated");
    joined = sx_engines_add(joined, "flink-1.20.3");
    SX_CHECK(strcmp(joined, "flink-1.20.3/a; flink-1.20.3; simulated") == 0);
    free(joined);
}

void sx_result_test(bool verbose)
{
    (void)verbose;
    test_run_clock_is_the_wall_clock();
    test_init_fills_every_field();
    test_steps_travel_with_the_result();
    test_changelog_travels_with_the_result();
    test_numbers_read_like_a_person_wrote_them();
    test_result_json_round_trips();
    test_result_refusals_in_full();
    test_submission_entries();
    test_writers_make_every_file();
    test_writers_at_their_edges();
    test_writers_with_samples();
    test_summary_carries_the_statistics();
    test_engine_travels_with_the_result();
}
