/* strict.h: the strict, row-aligned EX verdict reported beside the frozen
 * Spider 2.0 one (docs/ex.md), never instead of it. The prediction,
 * restricted to one distinct column per gold column, must equal gold as a
 * multiset of rows (ignore_order) or as a sequence, with the frozen
 * comparison's value rules (compare.h: profile NaN rule, isclose with
 * abs_tol=1e-2, NaN equal to NaN). Close numbers are paired by value through
 * an exact matching, so the verdict never depends on a sort order.
 * Like compare.h, a checker is built once per prediction and then asked
 * about one gold table or many row subsets of it (the tie adapter). */
#ifndef SX_STRICT_H
#define SX_STRICT_H

#include "common/error.h"
#include "common/ex/frame.h"
#include "common/ex/types.h"

#include <stdbool.h>
#include <stddef.h>

/* The search (column assignments, then a row matching for each) stops after
 * this many steps (a row-pair check or an assignment tried) per prediction,
 * over all the golds it is asked about. Past the bound the strict verdict is
 * 0 with the reason SX_STRICT_GAVE_UP; the frozen verdict never depends on it. */
#define SX_STRICT_MAX_STEPS 20000000u

/* Why a prediction is not strictly equal, from the first step that failed
 * to the last; a checker asked several times keeps the furthest one. */
typedef enum {
    SX_STRICT_NO_COLUMN = 0, /* a gold column equals no prediction column */
    SX_STRICT_SHARED_COLUMN, /* only one prediction column for two gold columns */
    SX_STRICT_ROWS_DO_NOT_ALIGN,
    SX_STRICT_GAVE_UP, /* SX_STRICT_MAX_STEPS reached */
} sx_strict_reason_t;

/* Why a prediction can be strictly equal and still miss the frozen verdict:
 * with ignore_order the frozen check sorts each column by str() and pairs
 * close numbers in that order (only that can make it stricter). */
#define SX_STRICT_PAIRING_MISSED "a numeric pairing the string sort missed"

typedef struct _sx_strict_t sx_strict_t;

/* The checker reads the prediction frame's cells where they are: the frame
 * must outlive it. */
sx_strict_t *sx_strict_new(const sx_frame_t *pred, bool ignore_order,
                           sx_profile_t profile);
void sx_strict_destroy(sx_strict_t **self_p);

/* The strict verdict of the prediction against gold restricted to `rows`
 * (NULL = every row) and to condition_cols (none = every gold column):
 * 1 equal, 0 not (sx_strict_reason says why), -1 error with err set (a
 * condition column beyond gold's). */
int sx_strict_gold(sx_strict_t *self, const sx_frame_t *gold, const size_t *rows,
                   size_t row_count, const long *condition_cols, size_t condition_count,
                   sx_error_t *err);
sx_strict_reason_t sx_strict_reason(const sx_strict_t *self);
/* "rows do not align", "one prediction column used for two gold columns"... */
const char *sx_strict_reason_text(sx_strict_reason_t reason);

/* The column assignment the checker settled on over all the golds it was
 * asked about: the first under which the rows aligned (*aligned true), else
 * the first that gave every compared gold column a distinct prediction
 * column equal to it on its own (gold columns in order, each trying
 * prediction columns from the left). Returns its length, the number of gold
 * columns compared (0: no such assignment: the row counts differ, or some
 * gold column has no distinct equal column); (*columns)[i] is the
 * prediction column of compared gold column i, owned by the checker. */
size_t sx_strict_assignment(const sx_strict_t *self, const size_t **columns,
                            bool *aligned);

/* The order the checker sorts values in: NaN, then numbers by value, then
 * strings by bytes (then a float NaN). Values the comparison calls equal
 * are neighbours in it: those equal to one value form a range. */
int sx_strict_value_order(const sx_value_t *a, const sx_value_t *b);

void sx_strict_test(bool verbose);

#endif
