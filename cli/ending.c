/* ending.c: the last lines of run, coordinator, score and merge (ending.h). */
#include "cli/ending.h"

#include "common/files.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>

/* "NAME: EX = c/t = x" from a method's summary.json object, with the
 * subset it counts, its 95 % interval and the strict figure when
 * summary.json holds them. */
static void print_method(FILE *out, const char *name, json_t *m, json_t *subset)
{
    /* With n samples, correct counts (task, sample) units: n per task. */
    json_int_t samples = json_integer_value(json_object_get(m, "samples"));
    fprintf(out, "  %s: EX = %lld/%lld = %.4f", name,
            json_integer_value(json_object_get(m, "correct")),
            json_integer_value(json_object_get(m, "total")) * (samples > 1 ? samples : 1),
            json_number_value(json_object_get(m, "ex")));
    if (subset)
        fprintf(out, " over a subset: %lld of %lld task IDs (--tasks)",
                json_integer_value(json_object_get(subset, "tasks")),
                json_integer_value(json_object_get(subset, "bench_tasks")));
    if (samples > 1)
        fprintf(out, " (mean over %lld samples)", samples);
    json_t *ci = json_object_get(m, "ex_ci");
    if (json_array_size(ci) == 2)
        fprintf(out, ", 95%% CI [%.4f, %.4f]", json_number_value(json_array_get(ci, 0)),
                json_number_value(json_array_get(ci, 1)));
    fprintf(out, "; strict EX = %.4f\n",
            json_number_value(json_object_get(m, "ex_strict")));
}

void sx_ending_print(FILE *out, const char *out_dir, int code, const char *meaning)
{
    char *abs = realpath(out_dir, NULL);
    const char *dir = abs ? abs : out_dir;
    char path[PATH_MAX];
    fprintf(out, "output: %s\n", dir);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *summary = json_load_file(path, 0, NULL);
    const char *name;
    json_t *m;
    long long infra = 0;
    json_object_foreach(json_object_get(summary, "methods"), name, m)
    {
        print_method(out, name, m, json_object_get(summary, "subset"));
        infra += json_integer_value(
            json_object_get(json_object_get(m, "by_status"), "infra_error"));
    }
    json_decref(summary);
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (sx_file_exists(path))
        fprintf(out, "report: %s (open it in a browser, e.g. xdg-open %s)\n", path, path);
    if (code != 0 && meaning)
        fprintf(out, "exit %d: %s\n", code, meaning);
    /* The very last line of a run that exits 3, as scripts read it. */
    if (code == 3 && infra)
        fprintf(out,
                "infra_error: %lld task(s) ended on an infrastructure failure, not a "
                "verdict: rerun them with --resume --rerun infra_error\n",
                infra);
    fflush(out);
    free(abs);
}

const char *sx_ending_run_meaning(int code)
{
    switch (code) {
    case 0:
        return NULL;
    case 1:
        return "stopped before the end; the journal keeps what was settled: rerun with "
               "--resume to continue";
    case 2:
        return "bad usage or a fatal error (the message above says which)";
    case 3:
        return "every task settled, but some ended infra_error (next line)";
    default:
        return code > 128 ? "stopped by a signal before any task was settled" : NULL;
    }
}
