/* diff.h: the row-level diff of a miss (docs/outputs.md, OUT/NAME/diff/ID.json):
 * the gold rows a final relation lacks and the rows it has that gold lacks,
 * under the task's own policy. Rows are compared on gold's compared columns
 * (condition_cols, else every column), each paired with one prediction
 * column, cell by cell with the comparison's value rules (compare.h: the
 * profile's NaN rule, numbers within abs_tol 1e-2, NaN equal to NaN), as
 * multisets: a maximum one-to-one pairing of gold rows with prediction rows
 * (whatever ignore_order says; without it the first position where the two
 * sequences differ is given too). Columns are paired as the strict check
 * paired them when it could (strict.h: the prediction has gold's row count
 * and each gold column has a distinct prediction column equal to it on its
 * own); otherwise by header name, then by the most values shared (see
 * sx_diff_new). A tie task is compared with its legal set: every gold row,
 * the first mandatory_rows of them required; the diff says which rule of the
 * policy the prediction breaks. The diff never changes a verdict: score.h
 * decides those, this only shows why. */
#ifndef SX_DIFF_H
#define SX_DIFF_H

#include "common/error.h"
#include "common/ex/frame.h"
#include "common/ex/types.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Rows of each side a diff lists; the counts cover them all. */
#define SX_DIFF_ROWS_SHOWN 20

/* The row pairing stops after this many row-pair checks; past it the
 * counts are upper bounds and the diff says "exact": false. */
#define SX_DIFF_MAX_STEPS 20000000u

typedef struct _sx_diff_t sx_diff_t;

/* The diff of pred against gold under evaluation and profile. pred NULL is a
 * prediction that cannot be read: no columns, no rows, and `note` (may be
 * NULL) says why. Column choice, when the strict check has no assignment:
 * each compared gold column in turn takes the first unused prediction
 * column with the same header name ("by": "name"); then each one left takes
 * the unused prediction column sharing the most values with it (the size of
 * the largest one-to-one pairing of equal values of the two columns) ("by":
 * "values"), ties to the leftmost; when no unused column is left, the
 * column sharing the most among all of them ("by": "shared"). NULL with err
 * set when the evaluation does not fit gold (a condition column beyond its
 * columns, a tie policy it cannot hold): such a task is eval_error, no miss. */
sx_diff_t *sx_diff_new(const sx_frame_t *gold, const sx_frame_t *pred,
                       const sx_evaluation_t *evaluation, sx_profile_t profile,
                       const char *note, sx_error_t *err);
void sx_diff_destroy(sx_diff_t **self_p);

/* The same from the two files, read as sx_score_files reads them: a
 * prediction that cannot be read is the diff of pred NULL, noted; a gold
 * that cannot be read is an error. */
sx_diff_t *sx_diff_files(const char *gold_csv, const char *pred_csv,
                         const sx_evaluation_t *evaluation, sx_profile_t profile,
                         sx_error_t *err);
/* The same with task_id's gold and evaluation from the bench in bench_dir. */
sx_diff_t *sx_diff_task(const char *bench_dir, const char *task_id, const char *pred_csv,
                        sx_profile_t profile, sx_error_t *err);

/* Gold rows the prediction lacks (for a tie task, the rows a legal answer
 * still needs) and prediction rows gold lacks. */
size_t sx_diff_missing_count(const sx_diff_t *self);
size_t sx_diff_extra_count(const sx_diff_t *self);

/* The diff as the object of OUT/NAME/diff/ID.json (a new reference):
 *   {"task_id", "verdict": 0|1, "strict": 0|1, "profile",
 *    "policy": {"kind", "k"?, "mandatory_rows"?, "ignore_order",
 *               "condition_cols": [...], "tolerance": 0.01},
 *    "gold_rows", "prediction_rows",
 *    "columns": [{"gold", "gold_index", "prediction", "prediction_index",
 *                 "by": "strict"|"name"|"values"|"shared"}, ...],
 *    "missing": {"count", "rows": [[...], ...], "from_tie_set"?},
 *    "extra": {"count", "rows": [...]},
 *    "first_difference"?: {"position", "gold": row|null, "prediction": row|null}|null,
 *    "rule"?: "too few rows"|"too many rows"|"a mandatory row missing"|
 *             "a row outside the tie set"|null,
 *    "exact": true|false, "note"?: "..."}
 * Rows are gold's compared columns in order (prediction rows: the columns
 * paired with them), at most SX_DIFF_ROWS_SHOWN each, in file order; a cell
 * is its value as read (null for a missing one, "inf"/"-inf" for the
 * infinities). "first_difference" only without ignore_order on an ordinary
 * task (position 0-based among data rows; null: the sequences are equal),
 * "rule" and "from_tie_set" only on a tie task. */
json_t *sx_diff_json(const sx_diff_t *self, const char *task_id, int verdict, int strict);

void sx_diff_test(bool verbose);

#endif
