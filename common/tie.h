/* tie.h: the tie adapter of SPEC section 6. A tie task's gold file holds
 * every legal answer row; the prediction is scored with the unchanged
 * comparison against each gold that the policy allows, and matches when one
 * of them does. Gold subsets keep gold's column dtypes (as `gold.iloc[rows]`
 * would) and its file order. */
#ifndef SX_TIE_H
#define SX_TIE_H

#include "common/compare.h"
#include "common/frame.h"
#include "common/score.h"

/* At most this many gold subsets are compared for one task; a policy that
 * needs more is an evaluation error, never a hang. */
#define SX_TIE_MAX_COMBINATIONS 100000

/* 0 when gold has the rows the policy picks from (at least one row for
 * any_one_argmax, at least k for any_k_from_tie_set; nothing for ordinary
 * tasks), else -1 with err set. */
int sx_tie_check_fits(const sx_frame_t *gold, const sx_evaluation_t *evaluation,
                      sx_error_t *err);

/* Returns 1 match, 0 mismatch (detail says why), -1 error with err set
 * (policy inconsistent with gold, too many combinations). */
int sx_tie_match(sx_compare_t *cmp, const sx_frame_t *gold, size_t pred_rows,
                 const sx_evaluation_t *evaluation, char *detail, size_t detail_size,
                 sx_error_t *err);

void sx_tie_test(bool verbose);

#endif
