/* test_merge.c: the merge of --shard outputs (coordinator/merge.c) on a
 * throw-away bench of four tasks: an overlap that agrees is merged and a task
 * in no input is reported; an overlap that disagrees (even at the same
 * score), a --tasks subset (unless allowed), a foreign task and the output
 * itself as an input are refused, naming what is wrong. */
#include "coordinator/merge.h"

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/result.h"
#include "common/selftest.h"
#include "tests/kit/testbench.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(summary.method);
    for (size_t i = 0; i < count; i++)
        sx_result_clear(&results[i]);
    free(results);
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
    SX_CHECK(sx_merge(bench, inputs, 2, out, false, &report, &err) == 0);
    SX_CHECK(report.methods == 1 && report.tasks == 4 && report.missing == 1);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", out);
    SX_CHECK(sx_testbench_count_lines(path) == 4);
    snprintf(path, sizeof path, "%s/m1/csv/t002.csv", out);
    SX_CHECK(sx_file_exists(path));

    /* An overlap that disagrees is refused, naming both inputs. */
    const char *clash[] = {a, c};
    SX_CHECK(sx_merge(bench, clash, 2, out, false, &report, &err) == -1);
    SX_CHECK(strstr(err.msg, "m1/t003 disagrees") && strstr(err.msg, "shard1-rerun"));
    /* A --tasks output is refused, naming it, unless allowed. */
    sx_method_summary_t summary = {.method = "m1", .total = 1, .bench_tasks = 4};
    SX_CHECK(sx_summary_write(c, &summary, 1, NULL, &err) == 0);
    const char *subset[] = {a, b, c};
    SX_CHECK(sx_merge(bench, subset, 3, out, false, &report, &err) == -1);
    SX_CHECK(strstr(err.msg, "shard1-rerun is the output of a --tasks subset (1 of 4 "
                             "task IDs): merging it into a full output needs "
                             "--allow-subset"));
    const char *subset_ok[] = {c};
    SX_CHECK(sx_merge(bench, subset_ok, 1, out, true, &report, &err) == 0);
    SX_CHECK(report.tasks == 4 && report.missing == 3);
    /* The same score is not the same verdict: mismatch against flink_error
     * (both 0) is refused too, naming both statuses. */
    char d[PATH_MAX + 16], e[PATH_MAX + 16], want[4 * PATH_MAX];
    snprintf(d, sizeof d, "%s/shard1-failed", bench);
    const sx_status_t st_d[] = {SX_STATUS_FLINK_ERROR};
    write_results(d, "m1", ids_c, st_d, 1);
    const char *same_score[] = {a, d};
    SX_CHECK(sx_merge(bench, same_score, 2, out, false, &report, &err) == -1);
    snprintf(want, sizeof want,
             "m1/t003 disagrees: %s says mismatch, %s says flink_error", a, d);
    SX_CHECK(strcmp(err.msg, want) == 0);
    /* A task the bench does not have would change the denominator: refused. */
    snprintf(e, sizeof e, "%s/shard-foreign", bench);
    const char *ids_e[] = {"t099"};
    write_results(e, "m1", ids_e, st_c, 1);
    const char *foreign[] = {a, e};
    SX_CHECK(sx_merge(bench, foreign, 2, out, false, &report, &err) == -1);
    snprintf(want, sizeof want, "%s/m1: task 't099' is not in task_ids.txt", e);
    SX_CHECK(strcmp(err.msg, want) == 0);
    const char *self_input[] = {out};
    SX_CHECK(sx_merge(bench, self_input, 1, out, false, &report, &err) == -1);
    sx_testbench_remove(&bench);
    sx_log_set_level(saved);
    printf("test_merge: OK\n");
    return 0;
}
