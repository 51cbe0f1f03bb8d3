/* compare.c: compare_pandas_table of xlang-ai/Spider2 (spider2-lite
 * evaluation_suite/evaluate.py), reproduced on typed frames.
 * The upstream steps, and where each lives here:
 *  - DataFrame.transpose().values.tolist(): columns become lists of Python
 *    values; when the selected columns mix int64/uint64/float64 (and nothing
 *    else) every value becomes a float, otherwise each keeps its own type
 *    (vector_build).
 *  - 2025-11 replaces every NaN by the int 0 first; 2025-03 keeps NaN.
 *  - ignore_order sorts each vector, stably, by (x is None, str(x),
 *    isinstance(x, (int, float))): keys are Python str() texts compared by
 *    code point (UTF-8 byte order is the same), then "is a number".
 *  - vectors match when lengths agree and pair by pair: both NaN, or both
 *    numbers (bool included) and math.isclose(abs_tol=1e-2), or equal.
 *  - every selected gold column must match some prediction column.
 * Prediction vectors are prepared once and reused against every gold table,
 * so a check is |gold cols| x |pred cols| linear vector comparisons. */
#include "common/ex/compare.h"

#include "common/ex/pyrepr.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-2

/* A column as the comparison sees it: the frame's cells (not copied),
 * restricted to gold rows, normalized as they are read, and with
 * ignore_order visited in sorted order. Only the order of positions is
 * kept: a 500,000-row column costs 4 MB here, not the 40 MB of a copy of
 * its values with their sort keys (bench/heavy). */
typedef struct {
    const sx_value_t *cells; /* the frame column's values */
    const size_t *rows;      /* position i is cell rows[i]; NULL: cell i */
    size_t *order;           /* ignore_order: positions sorted; NULL: 0, 1, ... */
    size_t count;
    bool to_float;
    sx_profile_t profile;
} vector_t;

/* The sort keys of a vector's positions while it is sorted: positions are
 * sorted, not keys, so that the sort's own copy is 8 bytes a row. */
typedef struct {
    union {
        const char *text; /* str(value), NUL-terminated (no value holds a NUL) */
        size_t offset;    /* a number's, while the texts are being written */
    } * keys;
    bool *numbers; /* isinstance(value, (int, float)) */
} sort_keys_t;

struct _sx_compare_t {
    bool ignore_order;
    sx_profile_t profile;
    vector_t *pred;
    size_t pred_count;
};

static bool is_number(const sx_value_t *v)
{
    return v->kind != SX_VALUE_STR; /* NaN is a float, bool is an int */
}

/* How DataFrame.values mixes the dtypes of the selected columns. */
static bool values_become_floats(const sx_frame_t *frame, const long *cols, size_t count)
{
    bool mixed = false, numeric = true;
    sx_dtype_t first = sx_frame_column(frame, (size_t)cols[0])->dtype;
    for (size_t i = 0; i < count; i++) {
        sx_dtype_t d = sx_frame_column(frame, (size_t)cols[i])->dtype;
        mixed = mixed || d != first;
        numeric = numeric &&
                  (d == SX_DTYPE_INT64 || d == SX_DTYPE_UINT64 || d == SX_DTYPE_FLOAT64);
    }
    return mixed && numeric;
}

static sx_value_t normalized(sx_value_t v, bool to_float, sx_profile_t profile)
{
    if (to_float && v.kind != SX_VALUE_NAN) {
        double d = sx_compare_number(&v);
        v = (sx_value_t){.kind = SX_VALUE_FLOAT, .f = d};
    }
    return sx_compare_profile_value(v, profile);
}

/* str(x) of a number into buf; strings are their own key. */
static size_t number_key(const sx_value_t *v, char *buf)
{
    switch (v->kind) {
    case SX_VALUE_INT:
        return (size_t)sprintf(buf, "%" PRId64, v->i);
    case SX_VALUE_UINT:
        return (size_t)sprintf(buf, "%" PRIu64, v->u);
    case SX_VALUE_BOOL:
        return (size_t)sprintf(buf, "%s", v->b ? "True" : "False");
    default:
        return sx_py_float_repr(v->f, buf);
    }
}

/* (str(x), isinstance(x, number), position): strcmp orders as the memcmp
 * of two texts with the shorter first, since neither holds a NUL. */
static int position_order(const void *pa, const void *pb, void *arg)
{
    const sort_keys_t *sort = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int c = strcmp(sort->keys[a].text, sort->keys[b].text);
    if (c == 0)
        c = (int)sort->numbers[a] - (int)sort->numbers[b];
    return c != 0 ? c : (a > b) - (a < b);
}

/* The value at position i of v, normalized, in v's order. */
static sx_value_t vector_at(const vector_t *v, size_t i)
{
    size_t position = v->order ? v->order[i] : i;
    size_t cell = v->rows ? v->rows[position] : position;
    return normalized(v->cells[cell], v->to_float, v->profile);
}

static void vector_free(vector_t *v)
{
    free(v->order);
    memset(v, 0, sizeof *v);
}

/* Sorts v's positions by (str(x), isinstance(x, number), position). The
 * keys live only while sorting: strings as the frame's own bytes, the
 * texts of numbers one after another (an int's is a few bytes, where a
 * slot for any float's would be 32). */
static void vector_sort(vector_t *v)
{
    sort_keys_t sort = {sx_alloc(v->count + 1, sizeof *sort.keys),
                        sx_alloc(v->count + 1, sizeof *sort.numbers)};
    char *texts = NULL;
    size_t used = 0, capacity = 0;
    for (size_t i = 0; i < v->count; i++) {
        sx_value_t value = vector_at(v, i);
        sort.numbers[i] = is_number(&value);
        if (value.kind == SX_VALUE_STR) {
            sort.keys[i].text = value.str;
            continue;
        }
        if (used + SX_PY_FLOAT_REPR_MAX > capacity) {
            capacity = 2 * capacity + 64 * SX_PY_FLOAT_REPR_MAX;
            texts = sx_realloc(texts, capacity, 1);
        }
        sort.keys[i].offset = used;
        used += number_key(&value, texts + used) + 1; /* its NUL too */
    }
    v->order = sx_alloc(v->count + 1, sizeof *v->order);
    for (size_t i = 0; i < v->count; i++) {
        if (sort.numbers[i])
            sort.keys[i].text = texts + sort.keys[i].offset;
        v->order[i] = i;
    }
    qsort_r(v->order, v->count, sizeof *v->order, position_order, &sort);
    free(texts);
    free(sort.keys);
    free(sort.numbers);
}

static void vector_build(vector_t *v, const sx_frame_column_t *col, const size_t *rows,
                         size_t row_count, bool to_float, const sx_compare_t *cmp)
{
    *v = (vector_t){.cells = col->values,
                    .rows = rows,
                    .count = row_count,
                    .to_float = to_float,
                    .profile = cmp->profile};
    if (cmp->ignore_order)
        vector_sort(v);
}

static bool values_match(const sx_value_t *a, const sx_value_t *b)
{
    if (a->kind == SX_VALUE_NAN && b->kind == SX_VALUE_NAN)
        return true;
    if (is_number(a) && is_number(b))
        return sx_py_isclose(sx_compare_number(a), sx_compare_number(b), TOLERANCE);
    if (a->kind != SX_VALUE_STR || b->kind != SX_VALUE_STR)
        return false;
    return strcmp(a->str, b->str) == 0;
}

static bool vectors_match(const vector_t *a, const vector_t *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++) {
        sx_value_t x = vector_at(a, i), y = vector_at(b, i);
        if (!values_match(&x, &y))
            return false;
    }
    return true;
}

bool sx_compare_values_equal(const sx_value_t *a, const sx_value_t *b)
{
    return values_match(a, b);
}

/* Every column index of a frame, for "no condition_cols". */
static long *all_columns(size_t count)
{
    long *cols = sx_alloc(count + 1, sizeof *cols);
    for (size_t i = 0; i < count; i++)
        cols[i] = (long)i;
    return cols;
}

void sx_compare_destroy(sx_compare_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_compare_t *self = *self_p;
    for (size_t i = 0; i < self->pred_count; i++)
        vector_free(&self->pred[i]);
    free(self->pred);
    free(self);
    *self_p = NULL;
}

sx_compare_t *sx_compare_new(const sx_frame_t *pred, bool ignore_order,
                             sx_profile_t profile)
{
    sx_compare_t *self = sx_new(sx_compare_t);
    size_t ncols = sx_frame_column_count(pred);
    long *cols = all_columns(ncols);
    self->ignore_order = ignore_order;
    self->profile = profile;
    self->pred = sx_alloc(ncols + 1, sizeof *self->pred);
    bool to_float = ncols > 0 && values_become_floats(pred, cols, ncols);
    for (size_t c = 0; c < ncols; c++, self->pred_count++)
        vector_build(&self->pred[c], sx_frame_column(pred, c), NULL,
                     sx_frame_row_count(pred), to_float, self);
    free(cols);
    return self;
}

int sx_compare_check_columns(const sx_frame_t *gold, const long *condition_cols,
                             size_t condition_count, sx_error_t *err)
{
    size_t gold_cols = sx_frame_column_count(gold);
    for (size_t i = 0; i < condition_count; i++)
        if (condition_cols[i] < 0 || (size_t)condition_cols[i] >= gold_cols)
            return sx_error_set(err, "condition column %ld is beyond gold's %zu columns",
                                condition_cols[i], gold_cols);
    return 0;
}

int sx_compare_gold(sx_compare_t *self, const sx_frame_t *gold, const size_t *rows,
                    size_t row_count, const long *condition_cols, size_t condition_count,
                    char *detail, size_t detail_size, sx_error_t *err)
{
    size_t gold_cols = sx_frame_column_count(gold);
    if (sx_compare_check_columns(gold, condition_cols, condition_count, err) != 0)
        return -1;
    long *every = condition_count ? NULL : all_columns(gold_cols);
    const long *cols = condition_count ? condition_cols : every;
    size_t count = condition_count ? condition_count : gold_cols;
    if (!rows)
        row_count = sx_frame_row_count(gold);
    bool to_float = count > 0 && values_become_floats(gold, cols, count);
    int verdict = 1;
    for (size_t i = 0; i < count && verdict == 1; i++) {
        vector_t g;
        vector_build(&g, sx_frame_column(gold, (size_t)cols[i]), rows, row_count,
                     to_float, self);
        bool found = false;
        for (size_t p = 0; p < self->pred_count && !found; p++)
            found = vectors_match(&g, &self->pred[p]);
        vector_free(&g);
        if (!found) {
            verdict = 0;
            if (detail)
                snprintf(detail, detail_size,
                         "gold column %ld has no equal column in the prediction",
                         cols[i]);
        }
    }
    free(every);
    return verdict;
}

/* ---- self-test ----------------------------------------------------------- */

static int verdict(const char *pred_csv, const char *gold_csv, bool ignore_order,
                   sx_profile_t profile, const long *cols, size_t ncols)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_frame_t *pred = sx_frame_parse("p.csv", pred_csv, strlen(pred_csv), &err);
    sx_frame_t *gold = sx_frame_parse("g.csv", gold_csv, strlen(gold_csv), &err);
    SX_CHECK(pred && gold);
    sx_compare_t *cmp = sx_compare_new(pred, ignore_order, profile);
    char detail[256] = "";
    int v = sx_compare_gold(cmp, gold, NULL, 0, cols, ncols, detail, sizeof detail, &err);
    sx_compare_destroy(&cmp);
    SX_CHECK(cmp == NULL);
    sx_compare_destroy(&cmp); /* a second destroy is harmless */
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
    return v;
}

static void test_compare_cases_read_like_the_spec(void)
{
    const sx_profile_t NOV = SX_PROFILE_SPIDER2_LITE_2025_11;
    const sx_profile_t MAR = SX_PROFILE_SPIDER2_LITE_2025_03;
    /* Headers and column order are ignored; extra prediction columns are fine. */
    SX_CHECK(verdict("x,y,z\n9,1,a\n8,2,b", "k,v\na,1\nb,2", false, NOV, NULL, 0) == 1);
    /* Order matters unless ignore_order. */
    SX_CHECK(verdict("v\n2\n1", "v\n1\n2", false, NOV, NULL, 0) == 0);
    SX_CHECK(verdict("v\n2\n1", "v\n1\n2", true, NOV, NULL, 0) == 1);
    /* Tolerance is absolute 1e-2 (plus Python's relative 1e-9). */
    SX_CHECK(verdict("v\n1.005", "v\n1", false, NOV, NULL, 0) == 1);
    SX_CHECK(verdict("v\n1.02", "v\n1", false, NOV, NULL, 0) == 0);
    /* Strings compare exactly, every byte; a number never equals a string. */
    SX_CHECK(verdict("v\nabc\nde", "v\nabc\nde", false, NOV, NULL, 0) == 1);
    SX_CHECK(verdict("v\nabc", "v\nabd", false, NOV, NULL, 0) == 0);
    SX_CHECK(verdict("v\nabc", "v\nabc ", false, NOV, NULL, 0) == 0);
    SX_CHECK(verdict("v\n1\nx", "v\n1\n2", false, NOV, NULL, 0) == 0);
    /* 2025-11 turns NaN into 0; 2025-03 keeps NaN (equal only to NaN). */
    SX_CHECK(verdict("v,w\n0,5\n1,6", "v,w\n,5\n1,6", false, NOV, NULL, 0) == 1);
    SX_CHECK(verdict("v,w\n0,5\n1,6", "v,w\n,5\n1,6", false, MAR, NULL, 0) == 0);
    SX_CHECK(verdict("v,w\n,1\n2,2", "v,w\nNA,1\n2,2", false, MAR, NULL, 0) == 1);
    /* Sorting uses str(): '10' < '9' for ints, and ints turned floats by a
     * float column sort as '10.0' < '9.0'; the pairs then compare as numbers. */
    SX_CHECK(verdict("a\n9\n10", "a\n10\n9", true, NOV, NULL, 0) == 1);
    SX_CHECK(verdict("a,b\n9,0.5\n10,1.5", "a\n10\n9", true, NOV, NULL, 0) == 1);
    /* Sorting by text can pair values that a numeric sort would not: pred
     * sorts as '-0.001' < '-1.5', gold as '-1.5' < '0.0'. */
    SX_CHECK(verdict("a\n-0.001\n-1.5", "a\n0\n-1.5", true, NOV, NULL, 0) == 0);
    /* Only a mix of numeric dtypes turns ints into floats: a gold of one
     * int column keeps str(int) keys, where 10**16 sorts before 15; as a
     * float its key "1e+16" would sort after "15.0" and pair wrongly with
     * the prediction's ints (kept as ints beside a text column). */
    SX_CHECK(verdict("a,b\n10000000000000000,x\n15,y", "a\n10000000000000000\n15", true,
                     NOV, NULL, 0) == 1);
    /* Equal str() keys put the string before the number: in a text column
     * 2025-11 turns NaN into the int 0, whose key "0" ties with the string
     * "0"; sorted, both sides pair "0" with "0" and 0 with 0, whatever the
     * rows' order (pandas agrees). */
    SX_CHECK(verdict("v,w\nx,1\n,2\n0,3", "v,w\nx,1\n0,2\n,3", true, NOV, NULL, 0) == 1);
    /* condition_cols picks gold columns only. */
    long second = 1;
    SX_CHECK(verdict("v\n7\n8", "k,v\nx,7\ny,8", false, NOV, &second, 1) == 1);
    long beyond = 5;
    SX_CHECK(verdict("v\n7", "v\n7", false, NOV, &beyond, 1) == -1);
    /* bool counts as a number. */
    SX_CHECK(verdict("v\nTrue\nFalse", "v\n1\n0", false, NOV, NULL, 0) == 1);
    /* Header-only gold: every gold column is an empty vector. */
    SX_CHECK(verdict("v\n", "a,b\n", false, NOV, NULL, 0) == 1);
    SX_CHECK(verdict("v\n1", "a\n", false, NOV, NULL, 0) == 0);
}

void sx_compare_test(bool verbose)
{
    (void)verbose;
    test_compare_cases_read_like_the_spec();
}
