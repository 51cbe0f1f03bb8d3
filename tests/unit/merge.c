/* tests/unit/merge.c: the merge of --shard outputs (coordinator/merge.c) on a
 * throw-away bench of four tasks: an overlap that agrees is merged and a task
 * in no input is reported; an overlap that disagrees (even at the same
 * score or only the strict verdict), a --tasks subset (unless allowed), a
 * foreign task, the output itself as an input, no inputs, an output or bench
 * that cannot be used, inputs without results, a line that is no result and a
 * CSV that cannot be copied are refused, naming what is wrong; two methods
 * from two inputs merge with the inputs' workers united; shards of different
 * engines are refused unless allowed. */
#include "coordinator/merge.h"

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/results/result.h"
#include "common/selftest.h"
#include "tests/kit/testbench.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* summary.json's statistics are result.c's and figures.c's to test. */
static const sx_bootstrap_t s_no_bootstrap = {0};

static void write_results(const char *out, const char *method, const char *const *ids,
                          const sx_status_t *statuses, size_t count)
{
    sx_result_t *results = sx_alloc(count, sizeof *results);
    char csv[PATH_MAX];
    for (size_t i = 0; i < count; i++) {
        snprintf(csv, sizeof csv, "%s/%s/csv/%s.csv", out, method, ids[i]);
        SX_CHECK(sx_mkdirs_for(csv, NULL) == 0 &&
                 sx_file_write_atomic(csv, "x\n1\n", 4, NULL) == 0);
        sx_result_init(&results[i], ids[i], statuses[i], "", csv);
    }
    sx_method_summary_t summary;
    SX_CHECK(sx_results_write(out, method, results, count, &summary, NULL) == 0);
    sx_method_summary_clear(&summary);
    for (size_t i = 0; i < count; i++)
        sx_result_clear(&results[i]);
    free(results);
}

/* OUT/summary.json naming the workers of a run (run.workers). */
static void write_workers(const char *out, const char *const *names,
                          const char *const *runtimes, size_t count)
{
    sx_method_summary_t summary = {.method = "m1", .total = 4};
    sx_run_info_t run = {.command = "run",
                         .worker_names = names,
                         .worker_runtimes = runtimes,
                         .worker_count = count};
    SX_CHECK(sx_summary_write(out, &summary, 1, &run, NULL) == 0);
}

/* The whole of a file, for exact comparisons. */
static char *slurp(const char *path)
{
    size_t size = 0;
    char *data = sx_file_read(path, 1 << 20, &size, NULL);
    SX_CHECK(data);
    return data;
}

/* A shard output computed on `engine`: t001 or t002 (by `which`) of m1,
 * its result and summary.json's run naming the engine. */
static void write_engine_output(const char *out, int which, const char *engine)
{
    char id[8], csv[PATH_MAX];
    snprintf(id, sizeof id, "t00%d", which);
    snprintf(csv, sizeof csv, "%s/m1/csv/%s.csv", out, id);
    SX_CHECK(sx_mkdirs_for(csv, NULL) == 0 &&
             sx_file_write_atomic(csv, "x\n1\n", 4, NULL) == 0);
    sx_result_t r;
    sx_result_init(&r, id, SX_STATUS_MATCH, "", csv);
    r.engine = sx_strdup(engine);
    sx_method_summary_t summary;
    SX_CHECK(sx_results_write(out, "m1", &r, 1, &summary, NULL) == 0);
    sx_run_info_t run = {.command = "run", .engine = engine};
    SX_CHECK(sx_summary_write(out, &summary, 1, &run, NULL) == 0);
    sx_method_summary_clear(&summary);
    sx_result_clear(&r);
}

/* Shards of different engines are refused, naming both inputs and both
 * engines, unless allowed; the merge's run names the engines of its
 * results, and each result keeps its own. */
static void test_mixed_engines(const char *bench)
{
    static const char e120[] = "flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1";
    static const char e22[] = "flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1";
    char x[PATH_MAX], y[PATH_MAX], z[PATH_MAX], out[PATH_MAX], want[4 * PATH_MAX];
    snprintf(x, sizeof x, "%s/engine-x", bench);
    snprintf(y, sizeof y, "%s/engine-y", bench);
    snprintf(z, sizeof z, "%s/engine-z", bench);
    snprintf(out, sizeof out, "%s/engine-merged", bench);
    write_engine_output(x, 1, e120);
    write_engine_output(y, 2, e120);
    write_engine_output(z, 2, e22);
    sx_merge_report_t report;
    sx_error_t err;
    const char *same[] = {x, y};
    SX_CHECK(sx_merge(bench, same, 2, out, 0, &s_no_bootstrap, &report, &err) == 0);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/summary.json", out);
    char *data = slurp(path);
    snprintf(want, sizeof want, "\"engine\": \"%s\"", e120);
    SX_CHECK(strstr(data, want));
    free(data);
    const char *mixed[] = {x, z};
    SX_CHECK(sx_merge(bench, mixed, 2, out, 0, &s_no_bootstrap, &report, &err) == -1);
    snprintf(want, sizeof want,
             "%s was computed on %s, %s on %s: a mixed EX describes no engine "
             "(--allow-mixed-engines merges them anyway)",
             x, e120, z, e22);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_merge(bench, mixed, 2, out, SX_MERGE_ALLOW_MIXED_ENGINES, &s_no_bootstrap,
                      &report, &err) == 0);
    data = slurp(path);
    snprintf(want, sizeof want, "\"engine\": \"%s; %s\"", e120, e22);
    SX_CHECK(strstr(data, want));
    free(data);
    snprintf(path, sizeof path, "%s/m1/results.jsonl", out);
    data = slurp(path);
    snprintf(want, sizeof want, "\"task_id\":\"t002\"");
    char *t002 = strstr(data, want);
    snprintf(want, sizeof want, "\"engine\":\"%s\"", e22);
    SX_CHECK(t002 && strstr(t002, want) && strstr(t002, want) < strchr(t002, '\n'));
    free(data);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_log_level_t saved = sx_log_level();
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    char *bench = sx_testbench_make(4, NULL);
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], out[PATH_MAX];
    snprintf(a, sizeof a, "%s/shard0", bench);
    snprintf(b, sizeof b, "%s/shard1", bench);
    snprintf(c, sizeof c, "%s/shard1-rerun", bench);
    snprintf(out, sizeof out, "%s/merged", bench);
    const char *ids_a[] = {"t001", "t003"}, *ids_b[] = {"t002", "t003"},
               *ids_c[] = {"t003"};
    const sx_status_t st_a[] = {SX_STATUS_MATCH, SX_STATUS_MISMATCH};
    const sx_status_t st_b[] = {SX_STATUS_MATCH, SX_STATUS_MISMATCH};
    const sx_status_t st_c[] = {SX_STATUS_MATCH};
    write_results(a, "m1", ids_a, st_a, 2);
    write_results(b, "m1", ids_b, st_b, 2);
    write_results(c, "m1", ids_c, st_c, 1);

    /* An overlap that agrees is fine; t004 is in no input: reported, scored 0. */
    const char *inputs[] = {a, b};
    sx_merge_report_t report;
    sx_error_t err;
    SX_CHECK(sx_merge(bench, inputs, 2, out, false, &s_no_bootstrap, &report, &err) == 0);
    SX_CHECK(report.methods == 1 && report.tasks == 4 && report.missing == 1);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", out);
    SX_CHECK(sx_testbench_count_lines(path) == 4);
    snprintf(path, sizeof path, "%s/m1/csv/t002.csv", out);
    SX_CHECK(sx_file_exists(path));
    snprintf(path, sizeof path, "%s/report.html", out);
    SX_CHECK(sx_file_exists(path));

    /* An overlap that disagrees is refused, naming both inputs. */
    const char *clash[] = {a, c};
    SX_CHECK(sx_merge(bench, clash, 2, out, false, &s_no_bootstrap, &report, &err) == -1);
    SX_CHECK(strstr(err.msg, "m1/t003 disagrees") && strstr(err.msg, "shard1-rerun"));
    /* A --tasks output is refused, naming it, unless allowed. */
    sx_method_summary_t summary = {.method = "m1", .total = 1, .bench_tasks = 4};
    SX_CHECK(sx_summary_write(c, &summary, 1, NULL, &err) == 0);
    const char *subset[] = {a, b, c};
    SX_CHECK(sx_merge(bench, subset, 3, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    SX_CHECK(strstr(err.msg, "shard1-rerun is the output of a --tasks subset (1 of 4 "
                             "task IDs): merging it into a full output needs "
                             "--allow-subset"));
    const char *subset_ok[] = {c};
    SX_CHECK(sx_merge(bench, subset_ok, 1, out, true, &s_no_bootstrap, &report, &err) ==
             0);
    SX_CHECK(report.tasks == 4 && report.missing == 3);
    /* The same score is not the same verdict: mismatch against flink_error
     * (both 0) is refused too, naming both statuses. */
    char d[PATH_MAX + 16], e[PATH_MAX + 16], want[4 * PATH_MAX];
    snprintf(d, sizeof d, "%s/shard1-failed", bench);
    const sx_status_t st_d[] = {SX_STATUS_FLINK_ERROR};
    write_results(d, "m1", ids_c, st_d, 1);
    const char *same_score[] = {a, d};
    SX_CHECK(sx_merge(bench, same_score, 2, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want,
             "m1/t003 disagrees: %s says mismatch, %s says flink_error", a, d);
    SX_CHECK(strcmp(err.msg, want) == 0);
    /* A task the bench does not have would change the denominator: refused. */
    snprintf(e, sizeof e, "%s/shard-foreign", bench);
    const char *ids_e[] = {"t099"};
    write_results(e, "m1", ids_e, st_c, 1);
    const char *foreign[] = {a, e};
    SX_CHECK(sx_merge(bench, foreign, 2, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want, "%s/m1: task 't099' is not in task_ids.txt", e);
    SX_CHECK(strcmp(err.msg, want) == 0);
    const char *self_input[] = {out};
    SX_CHECK(sx_merge(bench, self_input, 1, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want, "%s: the output cannot also be an input", out);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* Nothing to merge, an output below a file, a bench that is not one,
     * and inputs without any METHOD/results.jsonl are refused. */
    SX_CHECK(sx_merge(bench, inputs, 0, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    SX_CHECK(strcmp(err.msg, "nothing to merge: give the shard outputs") == 0);
    snprintf(path, sizeof path, "%s/m1/results.jsonl/sub", out);
    SX_CHECK(sx_merge(bench, inputs, 2, path, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want, "%s: cannot create folder: Not a directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    snprintf(path, sizeof path, "%s/no-bench", bench);
    SX_CHECK(sx_merge(path, inputs, 2, out, false, &s_no_bootstrap, &report, &err) == -1);
    snprintf(want, sizeof want, "%s/task_ids.txt: cannot open: No such file or directory",
             path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    snprintf(path, sizeof path, "%s/no-such-input", bench);
    const char *none[] = {path, d};
    snprintf(d, sizeof d, "%s/shard-empty", bench);
    SX_CHECK(sx_mkdirs(d, NULL) == 0);
    SX_CHECK(sx_merge(bench, none, 2, out, false, &s_no_bootstrap, &report, &err) == -1);
    SX_CHECK(strcmp(err.msg, "no METHOD/results.jsonl in any input") == 0);

    /* The same status with another strict verdict is another verdict. */
    sx_result_t strict[1];
    sx_result_init(&strict[0], "t003", SX_STATUS_MISMATCH, "", NULL);
    strict[0].strict = 1;
    sx_method_summary_t written;
    snprintf(d, sizeof d, "%s/shard-strict", bench);
    SX_CHECK(sx_results_write(d, "m1", strict, 1, &written, NULL) == 0);
    sx_method_summary_clear(&written);
    sx_result_clear(&strict[0]);
    const char *strict_clash[] = {a, d};
    SX_CHECK(sx_merge(bench, strict_clash, 2, out, false, &s_no_bootstrap, &report,
                      &err) == -1);
    snprintf(want, sizeof want, "m1/t003 disagrees: %s says mismatch, %s says mismatch",
             a, d);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* A result whose CSV is gone cannot be merged: named with the task. */
    snprintf(path, sizeof path, "%s/m1/csv/t001.csv", a);
    char moved[PATH_MAX + 80];
    snprintf(moved, sizeof moved, "%s.moved", path);
    SX_CHECK(rename(path, moved) == 0);
    SX_CHECK(sx_merge(bench, inputs, 2, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want, "m1/t001: %s: cannot open: No such file or directory",
             path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(rename(moved, path) == 0);

    /* Two methods, each in one input; a result without a CSV keeps none;
     * the workers of the inputs are united, a name two inputs give
     * different runtimes keeping both, a runtime that is no text left out;
     * a report.html that cannot be written is only a warning. */
    char m2[PATH_MAX + 16];
    snprintf(m2, sizeof m2, "%s/shard-m2", bench);
    sx_result_t timeout[1];
    sx_result_init(&timeout[0], "t002", SX_STATUS_TIMEOUT, "after 1 s", NULL);
    SX_CHECK(sx_results_write(m2, "m2", timeout, 1, &written, NULL) == 0);
    sx_method_summary_clear(&written);
    sx_result_clear(&timeout[0]);
    const char *names_a[] = {"w0", "w1"}, *rt_a[] = {"flink-a", "flink-a"};
    write_workers(a, names_a, rt_a, 2);
    snprintf(path, sizeof path, "%s/summary.json", m2);
    const char *summary_m2 = "{\"methods\": {}, \"run\": {\"workers\": "
                             "{\"w0\": \"flink-b\", \"w1\": \"flink-a\", \"w2\": 7}}}\n";
    SX_CHECK(sx_file_write_atomic(path, summary_m2, strlen(summary_m2), NULL) == 0);
    snprintf(e, sizeof e, "%s/merged2", bench);
    snprintf(path, sizeof path, "%s/report.html", e);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    const char *two[] = {a, m2};
    SX_CHECK(sx_merge(bench, two, 2, e, false, &s_no_bootstrap, &report, &err) == 0);
    SX_CHECK(report.methods == 2 && report.tasks == 4 && report.missing == 2 + 3);
    snprintf(path, sizeof path, "%s/m2/results.jsonl", e);
    char *data = slurp(path);
    SX_CHECK(strstr(data, "\"t002\"") && strstr(data, "\"timeout\"") &&
             !strstr(data, "t002.csv"));
    free(data);
    snprintf(path, sizeof path, "%s/summary.json", e);
    data = slurp(path);
    SX_CHECK(strstr(data, "\"workers\": {\n      \"w0\": \"flink-a; flink-b\",\n"
                          "      \"w1\": \"flink-a\"\n    }"));
    free(data);

    /* A line that is no result stops the merge at its input, naming the
     * line, before the inputs and methods after it are read. */
    snprintf(d, sizeof d, "%s/shard-bad", bench);
    snprintf(path, sizeof path, "%s/m1/results.jsonl", d);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, "{}\n{}\n", 6, NULL) == 0);
    const char *bad_first[] = {d, a, m2};
    SX_CHECK(sx_merge(bench, bad_first, 3, out, false, &s_no_bootstrap, &report, &err) ==
             -1);
    snprintf(want, sizeof want, "%s:1: field \"task_id\" must be a string", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(report.methods == 0);

    /* A CSV that cannot be copied into OUT (its METHOD is a file there). */
    snprintf(e, sizeof e, "%s/merged3", bench);
    snprintf(path, sizeof path, "%s/m1", e);
    SX_CHECK(sx_mkdirs(e, NULL) == 0 && sx_file_write_atomic(path, "", 0, NULL) == 0);
    SX_CHECK(sx_merge(bench, inputs, 2, e, false, &s_no_bootstrap, &report, &err) == -1);
    snprintf(want, sizeof want, "m1/t001: %s/csv: cannot create folder: Not a directory",
             path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    test_mixed_engines(bench);
    sx_testbench_remove(&bench);
    sx_log_set_level(saved);
    printf("test_merge: OK\n");
    return 0;
}
