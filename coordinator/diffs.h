/* diffs.h: OUT/NAME/diff/ID.json, the row-level diff of every miss of a
 * method (common/ex/diff.h, docs/outputs.md): a task scored (match or
 * mismatch) whose frozen or strict verdict is 0 gets one, computed from its
 * final CSV and the bench's gold and evaluation, so no diff travels from the
 * workers. `run`, `coordinator` and `score` write them beside results.jsonl;
 * `merge` copies the shards' (diffs.h is the writer all share). */
#ifndef SX_DIFFS_H
#define SX_DIFFS_H

#include "common/error.h"
#include "common/ex/types.h"
#include "common/results/result.h"

#include <stddef.h>

/* Whether a result gets a diff: scored, with a final CSV, and a verdict 0. */
bool sx_diffs_wanted(const sx_result_t *result);

/* Writes the diff of each of results (count, of method) that wants one and
 * removes the diff file of each that does not (an earlier verdict's, after
 * --rerun or changed inputs). A diff that cannot be computed is logged and
 * skipped; -1 with err set when a file cannot be written or removed. */
int sx_diffs_write(const char *out_dir, const char *method, const char *bench_dir,
                   sx_profile_t profile, const sx_result_t *results, size_t count,
                   sx_error_t *err);

#endif
