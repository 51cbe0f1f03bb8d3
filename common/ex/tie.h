/* tie.h: the tie adapter of docs/ex.md. A tie task's gold file holds
 * every legal answer row; the prediction is scored with the unchanged
 * comparison against each gold that the policy allows, and matches when one
 * of them does; the strict check (strict.h) goes through the same policies. Gold subsets
 * keep gold's column dtypes (as `gold.iloc[rows]` would) and its file order. */
#ifndef SX_TIE_H
#define SX_TIE_H

#include "common/ex/compare.h"
#include "common/ex/frame.h"
#include "common/ex/types.h"
#include "common/ex/strict.h"

/* At most this many gold subsets are compared for one task; a policy that
 * needs more is an evaluation error, never a hang. */
#define SX_TIE_MAX_COMBINATIONS 100000

/* 0 when gold has the rows the policy picks from (at least one row for
 * any_one_argmax, at least k for any_k_from_tie_set; nothing for ordinary
 * tasks), else -1 with err set. */
int sx_tie_check_fits(const sx_frame_t *gold, const sx_evaluation_t *evaluation,
                      sx_error_t *err);

/* A comparison of the prediction with gold restricted to `rows` (file
 * order): 1 match, 0 mismatch, -1 error with err set. The frozen check
 * (compare.h) and the strict one (strict.h) both go through the adapter. */
typedef int(sx_tie_check_fn)(void *arg, const size_t *rows, size_t row_count,
                             sx_error_t *err);

/* Returns 1 when `check` matches some gold the policy allows, 0 mismatch
 * (detail says why), -1 error with err set (policy inconsistent with gold,
 * too many combinations, or the check's own error). */
int sx_tie_match(sx_tie_check_fn *check, void *arg, const sx_frame_t *gold,
                 size_t pred_rows, const sx_evaluation_t *evaluation, char *detail,
                 size_t detail_size, sx_error_t *err);

/* The two checks, as sx_tie_check_fn: arg is an sx_tie_target_t; the
 * frozen one is sx_compare_gold, the strict one sx_strict_gold, both on
 * the evaluation's condition columns. */
typedef struct {
    sx_compare_t *frozen;
    sx_strict_t *strict;
    const sx_frame_t *gold;
    const sx_evaluation_t *evaluation;
} sx_tie_target_t;

int sx_tie_frozen_check(void *target, const size_t *rows, size_t row_count,
                        sx_error_t *err);
int sx_tie_strict_check(void *target, const size_t *rows, size_t row_count,
                        sx_error_t *err);

void sx_tie_test(bool verbose);

#endif
