/* diffs.c: OUT/NAME/diff/ID.json for a method's misses (see diffs.h). Each
 * file is one line of compact JSON, reals in their shortest form
 * (jsonout.h), written atomically and durably in batches (common/files.h):
 * a large run's thousands of misses are synced together, not one by one. */
#include "coordinator/diffs.h"

#include "common/ex/diff.h"
#include "common/files.h"
#include "common/log.h"
#include "common/results/jsonout.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool sx_diffs_wanted(const sx_result_t *r)
{
    bool scored = r->status == SX_STATUS_MATCH || r->status == SX_STATUS_MISMATCH;
    return scored && r->csv && (r->score == 0 || r->strict == 0);
}

/* Diffs a batch holds at most before its commit: it keeps a descriptor
 * per file until then. */
#define DIFFS_A_COMMIT 256

static int add_one(sx_file_batch_t *batch, const char *path, const char *bench_dir,
                   sx_profile_t profile, const sx_result_t *r, sx_error_t *err)
{
    sx_error_t why;
    sx_diff_t *diff = sx_diff_task(bench_dir, r->task_id, r->csv, profile, &why);
    if (!diff) {
        sx_warn("%s: no diff: %s", path, why.msg);
        return 0;
    }
    json_t *o = sx_diff_json(diff, r->task_id, r->score, r->strict);
    sx_diff_destroy(&diff);
    int rc = sx_json_batch_add(batch, path, o, JSON_COMPACT | JSON_PRESERVE_ORDER, err);
    json_decref(o);
    return rc;
}

int sx_diffs_write(const char *out_dir, const char *method, const char *bench_dir,
                   sx_profile_t profile, const sx_result_t *results, size_t count,
                   sx_error_t *err)
{
    sx_file_batch_t *batch = sx_file_batch_new();
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        const sx_result_t *r = &results[i];
        char path[PATH_MAX];
        if (r->sample > 0) /* beside the sample's CSVs, samples/K/csv/ */
            snprintf(path, sizeof path, "%s/%s/samples/%d/diff/%s.json", out_dir, method,
                     r->sample, r->task_id);
        else
            snprintf(path, sizeof path, "%s/%s/diff/%s.json", out_dir, method,
                     r->task_id);
        if (sx_diffs_wanted(r)) {
            rc = add_one(batch, path, bench_dir, profile, r, err);
            if (rc == 0 && sx_file_batch_count(batch) == DIFFS_A_COMMIT)
                rc = sx_file_batch_commit(batch, err);
        } else if (unlink(path) != 0 && errno != ENOENT) {
            rc = sx_error_set(err, "%s: cannot remove the diff of an earlier verdict: %s",
                              path, strerror(errno));
        }
    }
    if (rc == 0)
        rc = sx_file_batch_commit(batch, err);
    sx_file_batch_destroy(&batch);
    return rc;
}
