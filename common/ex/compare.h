/* compare.h: Spider 2.0's compare_pandas_table on frames read by frame.c.
 * A comparator is built once per prediction (its column vectors converted,
 * normalized and, with ignore_order, sorted once) and then asked about one
 * gold table or many row subsets of it (the tie adapter). It reads the
 * prediction frame's cells where they are: the frame must outlive it. */
#ifndef SX_COMPARE_H
#define SX_COMPARE_H

#include "common/error.h"
#include "common/ex/frame.h"
#include "common/ex/types.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct _sx_compare_t sx_compare_t;

sx_compare_t *sx_compare_new(const sx_frame_t *pred, bool ignore_order,
                             sx_profile_t profile);
void sx_compare_destroy(sx_compare_t **self_p);

/* compare_pandas_table(pred, gold restricted to `rows` (NULL = every row, in
 * file order), condition_cols, ignore_order): 1 match, 0 mismatch (detail
 * says which gold column found no equal column), -1 error (a condition
 * column beyond gold's columns) with err set. */
int sx_compare_gold(sx_compare_t *self, const sx_frame_t *gold, const size_t *rows,
                    size_t row_count, const long *condition_cols, size_t condition_count,
                    char *detail, size_t detail_size, sx_error_t *err);

/* 0 when every condition column is one of gold's columns, else -1 with err
 * set (pandas' IndexError in gold.iloc[:, condition_cols]). */
int sx_compare_check_columns(const sx_frame_t *gold, const long *condition_cols,
                             size_t condition_count, sx_error_t *err);

/* The frozen comparison's rules for single values, shared with strict.c so
 * that both verdicts mean the same thing by "equal": the value after the
 * profile's NaN rule (2025-11: NaN becomes 0); equality (both NaN, or both
 * numbers within math.isclose(abs_tol=1e-2), or the same string); and a
 * number's value as a double (bool as 0/1, NaN for a string). */
bool sx_compare_values_equal(const sx_value_t *a, const sx_value_t *b);

/* Inline: strict.c reads every cell through them in its sorts, where a call
 * per cell would make the strict check markedly slower
 * (docs/internals/measurements.md). */
static inline sx_value_t sx_compare_profile_value(sx_value_t value, sx_profile_t profile)
{
    if (profile == SX_PROFILE_SPIDER2_LITE_2025_11 && value.kind == SX_VALUE_NAN)
        return (sx_value_t){.kind = SX_VALUE_INT, .i = 0}; /* pd.isna(x) -> 0 */
    return value;
}

static inline double sx_compare_number(const sx_value_t *value)
{
    switch (value->kind) {
    case SX_VALUE_INT:
        return (double)value->i;
    case SX_VALUE_UINT:
        return (double)value->u;
    case SX_VALUE_BOOL:
        return value->b ? 1.0 : 0.0;
    case SX_VALUE_FLOAT:
    case SX_VALUE_NAN:
        return value->f;
    case SX_VALUE_STR:
        break;
    }
    return (double)NAN;
}

void sx_compare_test(bool verbose);

#endif
