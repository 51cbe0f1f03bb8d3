/* report.c: gathers OUT/report.html's material from OUT (summary.json and
 * every OUT/NAME/results.jsonl) and, when they are still where summary.json's
 * "run" object says, from the bench (questions, gold, answer policies) and
 * the predictions files (candidate SQL) into the model (model.h); then has
 * html.c write it.
 * Only the outputs are required: a missing bench or predictions file leaves
 * those parts of the page out, it is not an error. */
#include "common/report/report.h"

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/report/html.h"
#include "common/report/model.h"
#include "common/ex/score.h"
#include "common/selftest.h"

#include <czmq.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Results files streamex wrote: generous, they hold one short line a task. */
#define RESULTS_MAX_BYTES ((size_t)1 << 30)
/* Checks that m's `count` results run task by task, each task's samples
 * 0 to n - 1 in order, and sets m->samples to n. */
static int check_samples(sx_report_method_t *m, size_t count, const char *path,
                         sx_error_t *err)
{
    m->samples = 1;
    for (size_t i = 0; i < count; i++)
        if ((size_t)m->results[i].sample >= m->samples)
            m->samples = (size_t)m->results[i].sample + 1;
    if (count % m->samples != 0)
        return sx_error_set(err, "%s: %zu lines are not tasks of %zu samples each", path,
                            count, m->samples);
    for (size_t i = 0; i < count; i++) {
        const sx_result_t *first = &m->results[i - i % m->samples];
        if ((size_t)m->results[i].sample != i % m->samples ||
            strcmp(m->results[i].task_id, first->task_id) != 0)
            return sx_error_set(err,
                                "%s:%zu: task \"%s\" sample %d breaks the order of %zu "
                                "samples per task",
                                path, i + 1, m->results[i].task_id, m->results[i].sample,
                                m->samples);
    }
    return 0;
}

/* Reads OUT/NAME/results.jsonl into m->results; the first method read
 * fixes the task IDs, every other must list the same ones in that order
 * (each with its own number of samples). */
static int load_results(sx_report_t *r, sx_report_method_t *m, sx_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", r->out_dir, m->name);
    size_t size = 0;
    char *data = sx_file_read(path, RESULTS_MAX_BYTES, &size, err);
    if (!data)
        return -1;
    sx_lines_t lines;
    sx_lines_init(&lines, path, data, size);
    char *line;
    size_t length, count = 0, cap = 0;
    int rc = 0, more;
    bool first = r->task_ids == NULL;
    while (rc == 0 && (more = sx_lines_next(&lines, &line, &length, err)) != 0) {
        if (more < 0 || length == 0) {
            rc = more < 0 ? -1 : 0;
            continue;
        }
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            m->results = sx_realloc(m->results, cap, sizeof *m->results);
        }
        rc = sx_result_from_json(line, &m->results[count], err);
        if (rc != 0) {
            sx_error_prefix(err, "%s:%zu", path, lines.number);
            break;
        }
        count++;
    }
    free(data);
    if (rc == 0)
        rc = check_samples(m, count, path, err);
    size_t tasks = rc == 0 ? count / m->samples : 0;
    for (size_t t = 0; rc == 0 && !first && t < tasks; t++) {
        const char *id = sx_report_result(m, t, 0)->task_id;
        if (t >= r->task_count || strcmp(id, r->task_ids[t]) != 0)
            rc = sx_error_set(err, "%s: task \"%s\" is not task %zu of %s's results",
                              path, id, t + 1, r->methods[0].name);
    }
    if (rc == 0 && !first && tasks != r->task_count)
        rc = sx_error_set(err, "%s: %zu tasks, %s has %zu", path, tasks,
                          r->methods[0].name, r->task_count);
    if (rc == 0 && first) {
        r->task_count = tasks;
        r->task_ids = sx_alloc(tasks + 1, sizeof *r->task_ids);
        for (size_t t = 0; t < tasks; t++)
            r->task_ids[t] = sx_report_result(m, t, 0)->task_id; /* borrowed */
    }
    if (rc != 0) {
        for (size_t i = 0; i < count; i++)
            sx_result_clear(&m->results[i]);
        free(m->results);
        m->results = NULL;
    }
    return rc;
}

/* The bench and predictions named by the "run" object, when still there. */
static void open_inputs(sx_report_t *r)
{
    const char *bench = json_string_value(json_object_get(r->run, "bench"));
    sx_error_t err;
    if (bench && !(r->bench = sx_bench_open(bench, &err)))
        sx_warn("report: %s: questions and gold left out", err.msg);
    json_t *inputs = json_object_get(r->run, "inputs");
    const char *kind = json_string_value(json_object_get(inputs, "kind"));
    if (!r->bench || !kind || strcmp(kind, "predictions") != 0)
        return;
    json_t *files = json_object_get(inputs, "files");
    for (size_t m = 0; m < r->method_count; m++) {
        const char *path = json_string_value(json_object_get(files, r->methods[m].name));
        /* Any bound a run may have had (--max-samples): the page only shows. */
        if (path && !(r->methods[m].sql = sx_predictions_load_samples(
                          path, r->bench, SX_SAMPLES_LIMIT, &err)))
            sx_warn("report: %s: candidate SQL of %s left out", err.msg,
                    r->methods[m].name);
    }
}

static int load(sx_report_t *r, const char *out_dir, sx_error_t *err)
{
    memset(r, 0, sizeof *r);
    r->out_dir = out_dir;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    json_error_t jerr;
    r->summary = json_load_file(path, 0, &jerr);
    json_t *methods = json_object_get(r->summary, "methods");
    if (!json_is_object(methods) || json_object_size(methods) == 0)
        return sx_error_set(err, "%s: %s", path,
                            r->summary ? "no \"methods\" object" : jerr.text);
    r->run = json_object_get(r->summary, "run");
    r->methods = sx_alloc(json_object_size(methods), sizeof *r->methods);
    const char *name;
    json_t *tally;
    int rc = 0;
    json_object_foreach(methods, name, tally)
    {
        if (rc != 0)
            break;
        sx_report_method_t *m = &r->methods[r->method_count++];
        m->name = sx_strdup(name);
        m->tally = tally;
        rc = sx_name_is_safe(name) ? load_results(r, m, err)
                                   : sx_error_set(err,
                                                  "%s: method name \"%s\" is not "
                                                  "a safe folder name",
                                                  path, name);
    }
    if (rc == 0)
        open_inputs(r);
    return rc;
}

static void unload(sx_report_t *r)
{
    for (size_t m = 0; m < r->method_count; m++) {
        sx_report_method_t *method = &r->methods[m];
        for (size_t i = 0; method->results && i < r->task_count * method->samples; i++)
            sx_result_clear(&method->results[i]);
        free(method->results);
        free(method->name);
        sx_predictions_destroy(&method->sql);
    }
    free(r->methods);
    free(r->task_ids);
    sx_bench_destroy(&r->bench);
    json_decref(r->summary);
    memset(r, 0, sizeof *r);
}

int sx_report_write(const char *out_dir, sx_error_t *err)
{
    sx_report_t report;
    int rc = load(&report, out_dir, err);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/report.html", out_dir);
    /* Straight into the file: the page of a large run is tens of MB. */
    sx_file_batch_t *batch = sx_file_batch_new();
    FILE *out = rc == 0 ? sx_file_batch_stream(batch, path, err) : NULL;
    if (rc == 0 && !out)
        rc = -1;
    if (out) {
        sx_report_html(out, &report);
        rc = sx_file_batch_commit(batch, err);
    }
    sx_file_batch_destroy(&batch);
    unload(&report);
    return rc;
}

/* ---- self-test ----------------------------------------------------------- */

/* OUT/report.html written again, and read (heap). */
static char *written_page(const char *dir)
{
    sx_error_t err;
    SX_CHECK(sx_report_write(dir, &err) == 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/report.html", dir);
    size_t size;
    char *page = sx_file_read(path, 1 << 24, &size, &err);
    SX_CHECK(page);
    return page;
}

/* A method's candidate and detail with markup in them come out escaped,
 * every task ID and the EX are on the page. */
static void test_report_of_a_scored_out(void)
{
    char dir[] = "/tmp/sx-report-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/t2.csv", dir);
    FILE *f = fopen(csv, "w");
    SX_CHECK(f);
    fputs("a,b\n<script>alert(1)</script>,2\n", f);
    fclose(f);
    sx_result_t results[2];
    sx_result_init(&results[0], "t1", SX_STATUS_MATCH, "", NULL);
    sx_result_init(&results[1], "t2", SX_STATUS_MISMATCH,
                   "gold column 1 has no equal column in the prediction </script>", csv);
    results[1].seconds = 1.25;
    results[1].changelog =
        (sx_changelog_counts_t){.known = true, .records = {2, 0, 1, 0, 0}, .rows = 2};
    sx_method_summary_t summary;
    sx_error_t err;
    SX_CHECK(sx_results_write(dir, "m1", results, 2, &summary, &err) == 0);
    sx_run_info_t run = {
        .command = "score", .started = 1796310000.5, .ended = 1796310002.0};
    SX_CHECK(sx_summary_write(dir, &summary, 1, &run, &err) == 0);
    /* t2's diff (OUT/NAME/diff/ID.json) beside its previews, escaped. */
    char diff[PATH_MAX];
    snprintf(diff, sizeof diff, "%s/m1/diff/t2.json", dir);
    const char *diff_json =
        "{\"task_id\":\"t2\",\"columns\":[{\"gold\":\"a\",\"prediction\":\"a\","
        "\"by\":\"name\"},{\"gold\":\"b\",\"prediction\":null,\"by\":null}],"
        "\"missing\":{\"count\":25,\"rows\":[[\"<b>\",null],[1.5,true]]},"
        "\"extra\":{\"count\":0,\"rows\":[]},\"first_difference\":{\"position\":3,"
        "\"gold\":[1,2],\"prediction\":null},\"exact\":true,\"note\":\"n&b\"}\n";
    SX_CHECK(sx_mkdirs_for(diff, NULL) == 0 &&
             sx_file_write_atomic(diff, diff_json, strlen(diff_json), NULL) == 0);
    char *page = written_page(dir);
    char path[PATH_MAX];
    SX_CHECK(strstr(page, "1/2"));
    SX_CHECK(strstr(page, "id=\"task=t1\"") && strstr(page, "id=\"task=t2\""));
    SX_CHECK(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    SX_CHECK(!strstr(page, "<script>alert"));
    SX_CHECK(strstr(page, "prediction &lt;/script&gt;"));
    SX_CHECK(strstr(page, "2026-12-03T15:00:00.500Z"));
    /* t2's changelog figures in its view, and as the method's total over the
     * one task that has them (t1's has none: "-"). */
    const char *figures = "insert 2 &middot; update_before 0 &middot; update_after 1 "
                          "&middot; delete 0 &middot; tombstone 0 &middot; rows 2";
    char want[512];
    snprintf(want, sizeof want, "<th>changelog</th><td>%s</td>", figures);
    SX_CHECK(strstr(page, want) && strstr(page, "<th>changelog</th><td>-</td>"));
    snprintf(want, sizeof want,
             "<td>%s<br><span class=\"muted\">over 1 task(s) with a folded "
             "changelog</span></td>",
             figures);
    SX_CHECK(strstr(page, want));
    SX_CHECK(strstr(page,
                    "<div><p>gold rows the final CSV lacks: 25</p><table class=\"csv\">"
                    "<tr><th>a</th><th>b</th></tr>\n<tr><td>&lt;b&gt;</td><td><span "
                    "class=\"muted\">NULL</span></td></tr>\n<tr><td>1.5</td><td>true"
                    "</td></tr>\n</table>\n<p class=\"muted\">first 2 rows shown</p>"));
    SX_CHECK(strstr(page, "<div><p>rows gold lacks: 0</p></div>"));
    SX_CHECK(strstr(page,
                    "<p class=\"muted\">columns: gold a = prediction a (name), gold b "
                    "= prediction <span class=\"muted\">NULL</span> (<span "
                    "class=\"muted\">NULL</span>); first difference at position 3: "
                    "gold [1, 2], prediction <span class=\"muted\">NULL</span>; "
                    "n&amp;b</p>"));
    free(page);
    /* Without summary.json there is nothing to report. */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    unlink(path);
    SX_CHECK(sx_report_write(dir, &err) == -1 && strstr(err.msg, "summary.json"));
    static const char *const files[] = {"report.html", "t2.csv", "m1/results.jsonl",
                                        "m1/submission.jsonl", "m1/diff/t2.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/m1/diff", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/m1", dir);
    rmdir(path);
    rmdir(dir);
    for (int i = 0; i < 2; i++)
        sx_result_clear(&results[i]);
    sx_method_summary_clear(&summary);
}

/* A method of two samples per task: the grid cell is sample 0's and counts
 * the matching samples, the task view shows each sample; results out of
 * task-then-sample order are refused, naming the line. */
static void test_report_of_samples(void)
{
    char dir[] = "/tmp/sx-report-samples-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_result_t results[4];
    static const sx_status_t statuses[] = {SX_STATUS_MATCH, SX_STATUS_MISMATCH,
                                           SX_STATUS_TIMEOUT, SX_STATUS_MATCH};
    for (int i = 0; i < 4; i++) {
        sx_result_init(&results[i], i < 2 ? "t1" : "t2", statuses[i], "", NULL);
        results[i].sample = i % 2;
    }
    sx_method_summary_t summary;
    sx_error_t err;
    SX_CHECK(sx_results_write(dir, "m1", results, 4, &summary, &err) == 0);
    SX_CHECK(sx_summary_write(dir, &summary, 1, NULL, &err) == 0);
    char *page = written_page(dir);
    char path[PATH_MAX];
    SX_CHECK(strstr(page, ">match 1/2</a>") && strstr(page, ">timeout 1/2</a>"));
    SX_CHECK(strstr(page, "2/4 = 0.5000"));
    SX_CHECK(strstr(page, "<h4>m1, sample 1: <span class=\"cell s-mismatch\">"));
    SX_CHECK(strstr(page, "<h4>m1, sample 1: <span class=\"cell s-match\">"));
    free(page);
    /* Swapped samples: refused with the line. */
    results[0].sample = 1;
    results[1].sample = 0;
    sx_method_summary_clear(&summary);
    snprintf(path, sizeof path, "%s/m1/results.jsonl", dir);
    FILE *f = fopen(path, "w");
    SX_CHECK(f);
    for (int i = 0; i < 4; i++) {
        char *line = sx_result_to_json(&results[i]);
        fprintf(f, "%s\n", line);
        free(line);
    }
    SX_CHECK(fclose(f) == 0);
    SX_CHECK(sx_report_write(dir, &err) == -1);
    char want[PATH_MAX + 100];
    snprintf(want, sizeof want,
             "%s:1: task \"t1\" sample 1 breaks the order of 2 samples per task", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    for (int i = 0; i < 4; i++)
        sx_result_clear(&results[i]);
    snprintf(want, sizeof want, "rm -rf %s", dir);
    SX_CHECK(system(want) == 0);
}

static void test_escape(void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    sx_report_escape(out, "</script><img src=x onerror=\"alert('x')\">&\x01");
    /* UTF-8 kept; a Latin-1 byte, a cut sequence, a surrogate each U+FFFD. */
    sx_report_escape(out, "|caf\xc3\xa9 \xe2\x82\xac caf\xe9 \xe2\x82 \xed\xa0\x80|");
    fclose(out);
    SX_CHECK(strcmp(text, "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;x&#39;)"
                          "&quot;&gt;&amp;&#xfffd;"
                          "|caf\xc3\xa9 \xe2\x82\xac caf&#xfffd; &#xfffd;&#xfffd; "
                          "&#xfffd;&#xfffd;&#xfffd;|") == 0);
    free(text);
}

/* A preview never blocks on a FIFO a submission points at. */
static void test_preview_refuses_a_fifo(void)
{
    char dir[] = "/tmp/sx-report-fifo-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fifo.csv", dir);
    SX_CHECK(mkfifo(path, 0600) == 0);
    sx_report_preview_t preview;
    sx_report_preview_read(NULL, path, &preview);
    SX_CHECK(!preview.table && strstr(preview.error, "a FIFO, not a regular file"));
    sx_report_preview_clear(&preview);
    unlink(path);
    rmdir(dir);
}

void sx_report_test(bool verbose)
{
    (void)verbose;
    test_escape();
    test_preview_refuses_a_fifo();
    test_report_of_a_scored_out();
    test_report_of_samples();
}
