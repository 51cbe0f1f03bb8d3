/* result.c: a task's outcome and the output files made from them (see
 * result.h). Every JSON field name lives in this file:
 *   OUT/NAME/results.jsonl     one line per task ID, task_ids.txt order:
 *     {"task_id", "score": 0|1, "strict": 0|1, "status", "detail", "attempts",
 *      "seconds", "worker", "cached"?: true, "stable"?: true|false,
 *      "csv": "/abs/path.csv"|null, "steps"?: {"prepare", "replay", "submit",
 *      "run", "materialize", "score", "cleanup"}}
 *     (csv is carried so a results file alone can rebuild the submission;
 *     "cached" only when a worker's result cache served the final CSV;
 *     "stable" only after --repeat, for the tasks whose runs were compared;
 *     steps, seconds per step, only for a task a worker executed).
 *   OUT/NAME/submission.jsonl  the official evaluator's index, same order:
 *     {"task_id", "csv": "/abs/path.csv"|null}
 *   OUT/summary.json
 *     {"methods": {NAME: {"correct", "total", "ex",
 *      "strict_correct", "ex_strict", "ex_not_strict", "strict_not_ex",
 *      "cached", "unstable", "repeats", "by_status": {STATUS: count, ... every status}}},
 *      "run"?: {"command", "streamex", "bench"?, "bench_fingerprint"?, "tasks"?,
 *      "profile"?, "started"?, "ended"?, "wall_seconds"?,
 *      "workers"?: {NAME: RUNTIME}, "inputs"?: {"kind", "files": {NAME: PATH}}}}
 *     (ex_strict has ex's denominator; the last two count the tasks where
 *     the frozen and strict verdicts differ, each way; "run" says what
 *     common/report/report.c needs to write OUT/report.html from OUT alone,
 *     times as UTC "YYYY-MM-DDTHH:MM:SS.mmmZ").
 * Files are written whole through sx_file_write_atomic (temporary name,
 * fsync, rename), so a crash never leaves half a file. */
#include "common/results/result.h"

#include "common/results/jsonout.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"

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
#define F_CSV "csv"
#define F_STEPS "steps"

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

char *sx_result_to_json(const sx_result_t *r)
{
    json_t *steps = steps_json(&r->steps);
    json_t *o = json_object();
    json_object_set_new(o, F_TASK_ID, json_string(r->task_id));
    json_object_set_new(o, F_SCORE, json_integer(r->score));
    json_object_set_new(o, F_STRICT, json_integer(r->strict));
    json_object_set_new(o, F_STATUS, json_string(sx_status_name(r->status)));
    json_object_set_new(o, F_DETAIL, json_string(r->detail ? r->detail : ""));
    json_object_set_new(o, F_ATTEMPTS, json_integer(r->attempts));
    json_object_set_new(o, F_SECONDS, json_real(to_ms(r->seconds)));
    json_object_set_new(o, F_WORKER, json_string(r->worker ? r->worker : ""));
    if (r->cached)
        json_object_set_new(o, F_CACHED, json_true());
    if (r->repeated)
        json_object_set_new(o, F_STABLE, json_boolean(!r->unstable));
    json_object_set_new(o, F_CSV, csv_json(r->csv));
    if (steps)
        json_object_set_new(o, F_STEPS, steps);
    char *text = sx_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
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
        rc = get_string(o, F_DETAIL, false, &result->detail, err);
    if (rc == 0)
        rc = get_string(o, F_WORKER, false, &result->worker, err);
    if (rc == 0)
        rc = get_string(o, F_CSV, true, &result->csv, err);
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

char *sx_submission_entry_to_json(const char *task_id, const char *csv)
{
    json_t *o = json_object();
    json_object_set_new(o, F_TASK_ID, json_string(task_id));
    json_object_set_new(o, F_CSV, csv_json(csv));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

int sx_submission_entry_from_json(const char *line, char **task_id, char **csv,
                                  sx_error_t *err)
{
    *task_id = NULL;
    *csv = NULL;
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
        if (rc == 0 && strcmp(key, F_TASK_ID) != 0 && strcmp(key, F_CSV) != 0)
            rc = sx_error_set(err, "unknown field \"%s\"", key);
    }
    if (rc == 0)
        rc = get_string(o, F_TASK_ID, false, task_id, err);
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
    if ((r->score == 1) == (r->strict == 1) || summary->listed == SX_SUMMARY_LISTED)
        return;
    size_t i = summary->listed++;
    snprintf(summary->differing[i].task_id, sizeof summary->differing[i].task_id, "%s",
             r->task_id);
    snprintf(summary->differing[i].detail, sizeof summary->differing[i].detail, "%s",
             r->detail ? r->detail : "");
}

int sx_results_write(const char *out_dir, const char *method, const sx_result_t *results,
                     size_t count, sx_method_summary_t *summary, sx_error_t *err)
{
    char path[PATH_MAX], index_path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", out_dir, method);
    snprintf(index_path, sizeof index_path, "%s/%s/submission.jsonl", out_dir, method);
    if (sx_mkdirs_for(path, err) != 0)
        return -1;
    memset(summary, 0, sizeof *summary);
    summary->method = sx_strdup(method);
    summary->total = count;
    /* Line by line into both files, never a whole file in memory; both are
     * made durable together. */
    sx_file_batch_t *batch = sx_file_batch_new();
    FILE *lines = sx_file_batch_stream(batch, path, err);
    FILE *index = lines ? sx_file_batch_stream(batch, index_path, err) : NULL;
    bool made = index != NULL;
    for (size_t i = 0; i < count && made; i++) {
        made = put_line(lines, sx_result_to_json(&results[i])) &&
               put_line(index,
                        sx_submission_entry_to_json(results[i].task_id, results[i].csv));
        tally(summary, &results[i]);
    }
    int rc = !index  ? -1
             : !made ? sx_error_set(err, "%s: out of memory", path)
                     : sx_file_batch_commit(batch, err);
    sx_file_batch_destroy(&batch);
    return rc;
}

static double share(size_t count, size_t total)
{
    return total ? (double)count / (double)total : 0.0;
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

int sx_summary_write(const char *out_dir, const sx_method_summary_t *summaries,
                     size_t count, const sx_run_info_t *run, sx_error_t *err)
{
    json_t *methods = json_object();
    for (size_t m = 0; m < count; m++) {
        const sx_method_summary_t *s = &summaries[m];
        json_t *by_status = json_object();
        for (int i = 0; i < SX_STATUS_COUNT; i++)
            json_object_set_new(by_status, sx_status_name((sx_status_t)i),
                                json_integer((json_int_t)s->by_status[i]));
        json_t *o = json_object();
        json_object_set_new(o, "correct", json_integer((json_int_t)s->correct));
        json_object_set_new(o, "total", json_integer((json_int_t)s->total));
        json_object_set_new(o, "ex", json_real(share(s->correct, s->total)));
        json_object_set_new(o, "strict_correct",
                            json_integer((json_int_t)s->strict_correct));
        json_object_set_new(o, "ex_strict",
                            json_real(share(s->strict_correct, s->total)));
        json_object_set_new(o, "ex_not_strict",
                            json_integer((json_int_t)s->ex_not_strict));
        json_object_set_new(o, "strict_not_ex",
                            json_integer((json_int_t)s->strict_not_ex));
        json_object_set_new(o, "cached", json_integer((json_int_t)s->cached));
        json_object_set_new(o, "unstable", json_integer((json_int_t)s->unstable));
        json_object_set_new(o, "repeats", json_integer((json_int_t)s->repeats));
        json_object_set_new(o, "by_status", by_status);
        json_object_set_new(methods, s->method ? s->method : "", o);
    }
    json_t *root = json_object();
    json_object_set_new(root, "methods", methods);
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
    char *text = sx_json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    int rc = !text                           ? sx_error_set(err, "out of memory")
             : sx_mkdirs_for(path, err) != 0 ? -1
                                             : 0;
    if (rc == 0) {
        size_t n = strlen(text);
        text[n] = '\n'; /* json_dumps leaves room: replace the NUL, write n+1 */
        rc = sx_file_write_atomic(path, text, n + 1, err);
    }
    free(text);
    return rc;
}

void sx_summary_print(FILE *out, const sx_method_summary_t *summary)
{
    const sx_method_summary_t *s = summary;
    fprintf(out, "%s: EX = %zu/%zu = %.4f", s->method, s->correct, s->total,
            share(s->correct, s->total));
    if (s->bench_tasks)
        fprintf(out, " over a subset: %zu of %zu task IDs (--tasks)", s->total,
                s->bench_tasks);
    fputc('\n', out);
    fprintf(out,
            "%s: strict EX = %zu/%zu = %.4f (EX but not strict: %zu, strict but not EX: "
            "%zu)\n",
            s->method, s->strict_correct, s->total, share(s->strict_correct, s->total),
            s->ex_not_strict, s->strict_not_ex);
    if (s->cached)
        fprintf(out,
                "%s: %zu of %zu results from the result cache (scored again, not "
                "executed)\n",
                s->method, s->cached, s->total);
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
    memset(summary, 0, sizeof *summary);
}

/* ---- self-test ----------------------------------------------------------- */

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
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_result_from_json(bad[i][0], &back, &err) == -1);
        if (strcmp(err.msg, bad[i][1]) != 0)
            fprintf(stderr, "%s: '%s' is not '%s'\n", bad[i][0], err.msg, bad[i][1]);
        SX_CHECK(strcmp(err.msg, bad[i][1]) == 0);
        SX_CHECK(back.task_id == NULL && back.detail == NULL);
    }
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
    sx_error_t err;
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":null}", &id, &csv,
                                           &err) == 0);
    SX_CHECK(strcmp(id, "a") == 0 && csv == NULL);
    free(id);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":\"x.csv\"}", &id,
                                           &csv, &err) == 0);
    SX_CHECK(strcmp(csv, "x.csv") == 0);
    free(id);
    free(csv);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\"}", &id, &csv, &err) == -1);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":1,\"csv\":null}", &id, &csv,
                                           &err) == -1);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\":\"a\",\"csv\":null,\"x\":1}",
                                           &id, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "unknown field \"x\"") == 0);
    /* The first unknown field is the one named. */
    SX_CHECK(sx_submission_entry_from_json("{\"y\":1,\"task_id\":\"a\",\"x\":1}", &id,
                                           &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "unknown field \"y\"") == 0 && id == NULL && csv == NULL);
    SX_CHECK(sx_submission_entry_from_json("[\"a\"]", &id, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "not a JSON object") == 0);
    SX_CHECK(sx_submission_entry_from_json("{\"task_id\"", &id, &csv, &err) == -1);
    SX_CHECK(strcmp(err.msg, "not a JSON object: ':' expected near end of file") == 0);
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
    char *printed = NULL;
    size_t printed_size = 0;
    FILE *out = open_memstream(&printed, &printed_size);
    sx_summary_print(out, &summary);
    fclose(out);
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
    out = open_memstream(&printed, &printed_size);
    sx_summary_print(out, &summary);
    fclose(out);
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
    char *printed = NULL;
    size_t printed_size = 0;
    FILE *out = open_memstream(&printed, &printed_size);
    sx_summary_print(out, &repeated);
    fclose(out);
    SX_CHECK(strcmp(printed, "m: EX = 0/3 = 0.0000\n"
                             "m: strict EX = 0/3 = 0.0000 (EX but not strict: 0, strict "
                             "but not EX: 0)\n"
                             "m: 0 of 3 tasks not stable over 2 runs\n") == 0);
    free(printed);
    snprintf(want, sizeof want, "rm -rf %s", dir);
    SX_CHECK(system(want) == 0);
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
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sx_error_t err;
        sx_error_clear(&err);
        SX_CHECK(sx_result_from_json(bad[i][0], &back, &err) == -1);
        SX_CHECK(strcmp(err.msg, bad[i][1]) == 0);
    }
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

void sx_result_test(bool verbose)
{
    (void)verbose;
    test_run_clock_is_the_wall_clock();
    test_init_fills_every_field();
    test_steps_travel_with_the_result();
    test_numbers_read_like_a_person_wrote_them();
    test_result_json_round_trips();
    test_result_refusals_in_full();
    test_submission_entries();
    test_writers_make_every_file();
    test_writers_at_their_edges();
}
