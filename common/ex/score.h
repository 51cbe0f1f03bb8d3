/* score.h: the EX verdict of one task (docs/ex.md): the evaluation spec
 * of BENCH/evaluation/ID.json, the comparison profile, and the one function
 * both `streamex score` and the worker call to compare a final CSV with gold.
 * It is the face of common/ex/: the comparison itself (pandas-style reading
 * in frame.c, Spider 2.0 compare in compare.c, the strict row-aligned check
 * in strict.c, the tie adapter in tie.c) lives behind it, and those files
 * share only the types of types.h, never this header. */
#ifndef SX_SCORE_H
#define SX_SCORE_H

#include "common/bench/bench.h"
#include "common/error.h"
#include "common/ex/frame.h"
#include "common/ex/types.h"
#include "common/status.h"

#include <stdbool.h>
#include <stddef.h>

/* Loads and validates an evaluation JSON file (unknown fields, bad types,
 * negative indexes, k < 1, k < mandatory_rows ... are errors naming the
 * file). Whether it fits gold (condition columns, enough rows for the tie
 * policy) is checked by sx_score_files once gold is read. */
sx_evaluation_t *sx_evaluation_load(const char *path, sx_error_t *err);
void sx_evaluation_destroy(sx_evaluation_t **self_p);
/* Whether the task's evaluation ignores row order, for comparing two final
 * relations of it (--repeat, `compare`, maj@n's vote; common/csv.h
 * sx_csv_same_relation); false when it cannot be read (or bench is NULL):
 * then order counts, the stricter comparison. */
bool sx_task_ignores_order(const sx_bench_t *bench, const char *task_id);
/* The same for every task ID of the bench, in task_ids.txt order (heap). */
bool *sx_bench_ignore_order(const sx_bench_t *bench);

/* "spider2-lite-2025-11" / "spider2-lite-2025-03" */
int sx_profile_parse(const char *name, sx_profile_t *profile);
const char *sx_profile_name(sx_profile_t profile);

/* Reads BENCH/gold/ID.csv as pandas would, under the input rule with its
 * own folder as root (files.h): a link out of gold/ is refused. */
sx_frame_t *sx_gold_read(const char *gold_csv, sx_error_t *err);

/* Compares the final CSV pred_csv with gold_csv. Returns SX_STATUS_MATCH,
 * SX_STATUS_MISMATCH or SX_STATUS_EVAL_ERROR, the frozen verdict; *strict
 * receives the strict one beside it (strict.h: 0 or 1, 0 unless the status
 * is match or mismatch). detail (may be NULL) receives a short reason such
 * as which gold column found no equal column, and when the two verdicts
 * differ ends with "strict 0: WHY" or "strict 1: WHY". Never crashes or
 * hangs on bad files: those are mismatch (pred unreadable, as the official
 * evaluator scores it) or eval_error (gold unreadable). */
sx_status_t sx_score_files(const char *gold_csv, const char *pred_csv,
                           const sx_evaluation_t *evaluation, sx_profile_t profile,
                           int *strict, char *detail, size_t detail_size);

/* What scoring task_id needs from the bench in bench_dir: the path of its
 * gold CSV and its evaluation, loaded (both the caller's to free). -1 with
 * err set when the bench or the evaluation cannot be read. */
int sx_score_inputs(const char *bench_dir, const char *task_id, char **gold_csv,
                    sx_evaluation_t **evaluation, sx_error_t *err);

/* Scores the final CSV pred_csv of task_id against the gold and evaluation
 * of the bench in bench_dir (opened only now, after the CSV exists) with
 * sx_score_files; a bench, gold or evaluation that cannot be read is
 * eval_error with the reason in detail. The executor's last step and the
 * worker's result cache (a cached CSV scored again) share it. */
sx_status_t sx_score_task(const char *bench_dir, const char *task_id,
                          const char *pred_csv, sx_profile_t profile, int *strict,
                          char *detail, size_t detail_size);

void sx_score_test(bool verbose);

#endif
