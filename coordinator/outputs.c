/* outputs.c: the run's outputs once every unit is settled: each method's
 * results.jsonl, submission.jsonl (and samples/K/submission.jsonl) and CSVs
 * (common/results/; the units run task then sample, their order there), the
 * diffs of its misses (diffs.h), summary.json with the run's description, and
 * report.html (common/report/). */
#include "coordinator/coordinator_int.h"

#include "common/clock.h"
#include "common/csv.h"
#include "common/results/jsonout.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/bench/predictions.h"
#include "common/results/result.h"
#include "common/signals.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/ex/score.h"
#include "coordinator/diffs.h"
#include "coordinator/journal.h"
#include "common/report/report.h"
#include "common/files.h"
#include "proto/proto.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int coord_write_outputs(sx_coordinator_t *self, sx_error_t *err)
{
    sx_method_summary_t *summaries = sx_alloc(self->method_count, sizeof *summaries);
    sx_result_t *results = sx_alloc(self->unit_count + 1, sizeof *results);
    int rc = 0;
    for (size_t m = 0; m < self->method_count && rc == 0; m++) {
        size_t count = 0;
        for (size_t i = 0; i < self->unit_count; i++)
            if (self->units[i].method == m)
                results[count++] = self->units[i].result;
        rc = sx_results_write(self->out_dir, self->methods[m].name, results, count,
                              &summaries[m], err);
        if (rc == 0 && summaries[m].samples > 1) {
            /* maj@n compares a task's relations under its ignore_order */
            size_t tasks = summaries[m].total, n = summaries[m].samples;
            bool *ignore = sx_alloc(tasks + 1, sizeof *ignore);
            for (size_t t = 0; t < tasks; t++)
                ignore[t] = sx_task_ignores_order(self->bench, results[t * n].task_id);
            rc = sx_summary_majority(&summaries[m], results, count, ignore, err);
            free(ignore);
        }
        sx_error_t diff_err;
        if (rc == 0 &&
            sx_diffs_write(self->out_dir, self->methods[m].name, self->config.bench_dir,
                           self->config.profile, results, count, &diff_err) != 0)
            sx_warn("the diffs of %s's misses are not all written: %s",
                    self->methods[m].name, diff_err.msg);
        summaries[m].repeats = self->config.repeat > 1 ? (size_t)self->config.repeat : 0;
        if (self->config.task_count)
            summaries[m].bench_tasks = sx_bench_task_count(self->bench);
    }
    char fingerprint[41];
    sx_bench_fingerprint(self->bench, fingerprint);
    /* The workers by name, so summary.json reads the same whatever order
     * they joined in. */
    char *engines = NULL;
    for (size_t i = 0; i < self->unit_count; i++)
        engines = sx_engines_add(engines, self->units[i].result.engine);
    zlistx_t *keys = zhashx_keys(self->runtimes);
    zlistx_set_comparator(keys, (zlistx_comparator_fn *)strcmp);
    zlistx_sort(keys);
    size_t count = zlistx_size(keys), w = 0;
    const char **names = sx_alloc(count + 1, sizeof *names);
    const char **runtimes = sx_alloc(count + 1, sizeof *runtimes);
    for (const char *name = zlistx_first(keys); name; name = zlistx_next(keys), w++) {
        names[w] = name;
        runtimes[w] = zhashx_lookup(self->runtimes, name);
    }
    sx_run_info_t run = {self->config.command ? self->config.command : "coordinator",
                         self->config.bench_dir,
                         sx_bench_task_count(self->bench),
                         sx_profile_name(self->config.profile),
                         (const char *const *)self->config.prediction_files,
                         "predictions",
                         self->started_at,
                         sx_run_clock(),
                         fingerprint,
                         (const char *const *)names,
                         (const char *const *)runtimes,
                         count,
                         self->config.bootstrap,
                         engines};
    if (rc == 0)
        rc = sx_summary_write(self->out_dir, summaries, self->method_count, &run, err);
    sx_error_t report_err;
    if (rc == 0 && sx_report_write(self->out_dir, &report_err) != 0)
        sx_warn("report.html not written: %s", report_err.msg);
    for (size_t m = 0; rc == 0 && self->config.summary_out && m < self->method_count; m++)
        sx_summary_print(self->config.summary_out, &summaries[m]);
    if (rc == 0 && self->config.summary_out)
        coord_print_last_lines(self, self->config.summary_out);
    for (size_t m = 0; m < self->method_count; m++)
        sx_method_summary_clear(&summaries[m]);
    free(summaries);
    free(results);
    free(names);
    free(runtimes);
    free(engines);
    zlistx_destroy(&keys);
    return rc;
}
