/* strict.c: the strict, row-aligned EX verdict (see strict.h).
 * For one gold table (or one row subset of it):
 *  1. Row counts must agree.
 *  2. Candidates: gold column i may take prediction column p when the two
 *     are equal on their own: as sequences, or with ignore_order as
 *     multisets, both sorted by value (NaN, then numbers by value, then
 *     strings by bytes) and paired in that order. Equality up to tolerance
 *     is closed under betweenness (x <= y <= z and x ~ z give x ~ y and
 *     y ~ z), so pairing two sorted columns in order finds a pairing
 *     whenever one exists: one column needs no search.
 *  3. Assignments: one distinct prediction column per gold column, by
 *     backtracking. Identical prediction columns are interchangeable, so only
 *     the first unused one of each kind is tried.
 *  4. Rows, with ignore_order: gold rows and prediction rows (on the
 *     assigned columns) must pair one to one, each pair equal in every
 *     column. Both sides are sorted row-wise and paired in order; the rows
 *     that leaves unpaired (close numbers crossing in several columns) are
 *     paired by augmenting paths (Kuhn), an exact bipartite matching. The
 *     candidates of a gold row are the prediction rows whose value in the
 *     most discriminating assigned column equals its own: a range of that
 *     column's sorted order, found by binary search.
 *     Without ignore_order, step 2 already compared the rows in place.
 * Every row-pair check and every assignment tried is a step; past
 * max_steps the checker gives up (verdict 0, reason SX_STRICT_GAVE_UP). */
#include "common/ex/strict.h"

#include "common/ex/compare.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX
#define GAVE_UP (-2)

/* A table's cells where its frame keeps them (nothing is copied: a
 * 500,000-row prediction and gold would cost 36 MB each), read with the
 * profile's NaN rule applied. */
typedef struct {
    const sx_value_t **columns; /* each column's cells */
    const size_t *rows;         /* row r is cell rows[r]; NULL: cell r */
    sx_profile_t profile;
} table_t;

struct _sx_strict_t {
    bool ignore_order;
    sx_profile_t profile;
    size_t rows, cols; /* of the prediction */
    table_t pred;
    size_t *sorted;   /* cols x rows: each column's rows by value (ignore_order) */
    size_t *kind;     /* kind[p]: the first column identical to column p */
    size_t *distinct; /* distinct values per column (ignore_order) */
    size_t steps, max_steps;
    sx_strict_reason_t reason;
    size_t *assignment; /* the assignment kept (sx_strict_assignment) */
    size_t assigned;    /* its gold columns, 0: none yet */
    bool aligned;       /* the rows aligned under it */
};

/* ---- the order of values --------------------------------------------------- */

static int value_class(const sx_value_t *v)
{
    if (v->kind == SX_VALUE_NAN)
        return 0;
    if (v->kind == SX_VALUE_STR)
        return 2;
    return isnan(sx_compare_number(v)) ? 3 : 1; /* a float NaN equals nothing */
}

/* NaN, then numbers by value, then strings by bytes. Two values in order 0
 * are interchangeable: equality treats them alike. */
static int value_order(const sx_value_t *a, const sx_value_t *b)
{
    int ca = value_class(a), cb = value_class(b);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (ca == 1) {
        double x = sx_compare_number(a), y = sx_compare_number(b);
        return (x > y) - (x < y);
    }
    if (ca != 2)
        return 0;
    return strcmp(a->str, b->str); /* bytewise, as unsigned char */
}

int sx_strict_value_order(const sx_value_t *a, const sx_value_t *b)
{
    return value_order(a, b);
}

static sx_value_t cell(const table_t *t, size_t c, size_t r)
{
    return sx_compare_profile_value(t->columns[c][t->rows ? t->rows[r] : r], t->profile);
}

/* Rows of a table, ordered on some of its columns. */
typedef struct {
    const table_t *table;
    const size_t *cols; /* the columns to order on, in priority */
    size_t count;
} row_order_t;

static int row_cmp(const void *pa, const void *pb, void *arg)
{
    const row_order_t *o = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (size_t i = 0; i < o->count; i++) {
        sx_value_t x = cell(o->table, o->cols[i], a), y = cell(o->table, o->cols[i], b);
        int c = value_order(&x, &y);
        if (c != 0)
            return c;
    }
    return (a > b) - (a < b);
}

static void sort_rows(size_t *order, size_t n, const table_t *table, const size_t *cols,
                      size_t count)
{
    row_order_t o = {table, cols, count};
    for (size_t r = 0; r < n; r++)
        order[r] = r;
    qsort_r(order, n, sizeof *order, row_cmp, &o);
}

/* ---- the checker ----------------------------------------------------------- */

void sx_strict_destroy(sx_strict_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_strict_t *self = *self_p;
    free(self->pred.columns);
    free(self->sorted);
    free(self->kind);
    free(self->distinct);
    free(self->assignment);
    free(self);
    *self_p = NULL;
}

static bool columns_identical(const sx_strict_t *self, size_t p, size_t q)
{
    for (size_t r = 0; r < self->rows; r++) {
        sx_value_t a = cell(&self->pred, p, r), b = cell(&self->pred, q, r);
        if (value_order(&a, &b) != 0)
            return false;
    }
    return true;
}

static void index_columns(sx_strict_t *self)
{
    for (size_t p = 0; p < self->cols; p++) {
        self->kind[p] = p;
        for (size_t q = 0; q < p && self->kind[p] == p; q++)
            if (self->kind[q] == q && columns_identical(self, p, q))
                self->kind[p] = q;
        if (!self->ignore_order)
            continue;
        size_t *order = self->sorted + p * self->rows;
        sort_rows(order, self->rows, &self->pred, &p, 1);
        self->distinct[p] = self->rows > 0;
        for (size_t k = 1; k < self->rows; k++) {
            sx_value_t a = cell(&self->pred, p, order[k - 1]),
                       b = cell(&self->pred, p, order[k]);
            self->distinct[p] += value_order(&a, &b) != 0;
        }
    }
}

sx_strict_t *sx_strict_new(const sx_frame_t *pred, bool ignore_order,
                           sx_profile_t profile)
{
    sx_strict_t *self = sx_new(sx_strict_t);
    self->ignore_order = ignore_order;
    self->profile = profile;
    self->rows = sx_frame_row_count(pred);
    self->cols = sx_frame_column_count(pred);
    self->max_steps = SX_STRICT_MAX_STEPS;
    self->pred =
        (table_t){sx_alloc(self->cols + 1, sizeof *self->pred.columns), NULL, profile};
    self->sorted = sx_alloc(self->rows * self->cols + 1, sizeof *self->sorted);
    self->kind = sx_alloc(self->cols + 1, sizeof *self->kind);
    self->distinct = sx_alloc(self->cols + 1, sizeof *self->distinct);
    for (size_t p = 0; p < self->cols; p++)
        self->pred.columns[p] = sx_frame_column(pred, p)->values;
    index_columns(self);
    return self;
}

sx_strict_reason_t sx_strict_reason(const sx_strict_t *self)
{
    return self->reason;
}

size_t sx_strict_assignment(const sx_strict_t *self, const size_t **columns,
                            bool *aligned)
{
    *columns = self->assignment;
    *aligned = self->aligned;
    return self->assigned;
}

const char *sx_strict_reason_text(sx_strict_reason_t reason)
{
    switch (reason) {
    case SX_STRICT_NO_COLUMN:
        return "a gold column equals no prediction column";
    case SX_STRICT_SHARED_COLUMN:
        return "one prediction column used for two gold columns";
    case SX_STRICT_ROWS_DO_NOT_ALIGN:
        return "rows do not align";
    case SX_STRICT_GAVE_UP:
        break;
    }
    return "strict check gave up past its bound";
}

/* ---- one gold -------------------------------------------------------------- */

typedef struct {
    size_t u, k, v; /* gold row, next candidate position, prediction row taken */
} frame_t;

/* The state of checking one gold (rows and columns picked). */
typedef struct {
    sx_strict_t *self;
    size_t n, ncols; /* rows, gold columns compared */
    table_t gold;    /* the gold columns compared, on the rows picked */
    bool *cand;      /* ncols x self->cols */
    size_t *assign;  /* prediction column of each gold column */
    bool *used;      /* prediction columns assigned */
    bool complete;   /* some assignment covered every gold column */
    size_t *gold_order, *pred_order, *gold_match, *pred_match, *seen, *lo, *hi;
    frame_t *stack;
    size_t stamp;
} search_t;

static sx_value_t gold_at(const search_t *s, size_t i, size_t r)
{
    return cell(&s->gold, i, r);
}

static sx_value_t pred_at(const search_t *s, size_t p, size_t r)
{
    return cell(&s->self->pred, p, r);
}

static bool spend(search_t *s)
{
    return ++s->self->steps <= s->self->max_steps;
}

static bool rows_equal(const search_t *s, size_t g, size_t p)
{
    for (size_t i = 0; i < s->ncols; i++) {
        sx_value_t x = gold_at(s, i, g), y = pred_at(s, s->assign[i], p);
        if (!sx_compare_values_equal(&x, &y))
            return false;
    }
    return true;
}

/* Whether gold column i equals prediction column p on its own. */
static bool column_candidate(search_t *s, size_t i, size_t p)
{
    for (size_t k = 0; k < s->n; k++) {
        size_t g = s->self->ignore_order ? s->gold_order[i * s->n + k] : k;
        size_t r = s->self->ignore_order ? s->self->sorted[p * s->self->rows + k] : k;
        sx_value_t x = gold_at(s, i, g), y = pred_at(s, p, r);
        if (!sx_compare_values_equal(&x, &y))
            return false;
    }
    return true;
}

/* [lo, hi) of gold row u: the prediction rows, in the sorted order of
 * column p, whose value equals gold value x (a range, by betweenness). */
static void candidate_range(search_t *s, size_t u, size_t p, const sx_value_t *x)
{
    const size_t *order = s->self->sorted + p * s->n;
    size_t a = 0, b = s->n;
    while (a < b) { /* first value at or after x, or equal to it */
        size_t m = a + (b - a) / 2;
        sx_value_t v = pred_at(s, p, order[m]);
        if (value_order(&v, x) >= 0 || sx_compare_values_equal(&v, x))
            b = m;
        else
            a = m + 1;
    }
    s->lo[u] = a;
    b = s->n;
    while (a < b) { /* first value after x and not equal to it */
        size_t m = a + (b - a) / 2;
        sx_value_t v = pred_at(s, p, order[m]);
        if (value_order(&v, x) > 0 && !sx_compare_values_equal(&v, x))
            b = m;
        else
            a = m + 1;
    }
    s->hi[u] = a;
}

/* One augmenting path from gold row root (Kuhn, iteratively): 1 found and
 * applied, 0 none, GAVE_UP. */
static int augment(search_t *s, size_t root, const size_t *order)
{
    s->stamp++;
    size_t depth = 0;
    s->stack[0] = (frame_t){root, s->lo[root], NONE};
    for (;;) {
        frame_t *f = &s->stack[depth];
        if (f->k == s->hi[f->u]) {
            if (depth == 0)
                return 0;
            depth--;
            continue;
        }
        size_t v = order[f->k++];
        if (s->seen[v] == s->stamp)
            continue;
        if (!spend(s))
            return GAVE_UP;
        if (!rows_equal(s, f->u, v))
            continue;
        s->seen[v] = s->stamp;
        f->v = v;
        if (s->pred_match[v] == NONE) {
            for (size_t d = 0; d <= depth; d++) {
                s->gold_match[s->stack[d].u] = s->stack[d].v;
                s->pred_match[s->stack[d].v] = s->stack[d].u;
            }
            return 1;
        }
        size_t next = s->pred_match[v];
        s->stack[++depth] = (frame_t){next, s->lo[next], NONE};
    }
}

/* The most discriminating assigned column: the fewest equal neighbours. */
static size_t key_column(const search_t *s)
{
    size_t best = 0;
    for (size_t i = 1; i < s->ncols; i++)
        if (s->self->distinct[s->assign[i]] > s->self->distinct[s->assign[best]])
            best = i;
    return best;
}

/* Whether the rows pair one to one under the current assignment: 1, 0 or
 * GAVE_UP. */
/* The matching's arrays, made when the first rows in sorted order do not
 * pair (most predictions that match never need them: 28 bytes a row), with
 * the pairs of the `paired` rows before. */
static void matching_begin(search_t *s, size_t paired)
{
    size_t n = s->n;
    if (!s->gold_match) {
        size_t **per_row[] = {&s->gold_match, &s->pred_match, &s->seen, &s->lo, &s->hi};
        for (size_t i = 0; i < sizeof per_row / sizeof per_row[0]; i++)
            *per_row[i] = sx_alloc(n + 1, sizeof **per_row[i]);
        s->stack = sx_alloc(n + 1, sizeof *s->stack);
    }
    for (size_t k = 0; k < paired; k++) {
        size_t g = s->gold_order[s->ncols * n + k], p = s->pred_order[k];
        s->gold_match[g] = p;
        s->pred_match[p] = g;
    }
}

static int match_rows(search_t *s)
{
    size_t n = s->n, unpaired = 0;
    sort_rows(s->pred_order, n, &s->self->pred, s->assign, s->ncols);
    for (size_t k = 0; k < n; k++) {
        size_t g = s->gold_order[s->ncols * n + k], p = s->pred_order[k];
        if (!spend(s))
            return GAVE_UP;
        bool equal = rows_equal(s, g, p);
        if (!equal && unpaired++ == 0)
            matching_begin(s, k);
        if (unpaired > 0) {
            s->gold_match[g] = equal ? p : NONE;
            s->pred_match[p] = equal ? g : NONE;
        }
    }
    if (unpaired == 0)
        return 1;
    size_t key = key_column(s);
    for (size_t u = 0; u < n; u++) {
        sx_value_t x = gold_at(s, key, u);
        candidate_range(s, u, s->assign[key], &x);
    }
    const size_t *order = s->self->sorted + s->assign[key] * n;
    for (size_t u = 0; u < n; u++) {
        int found = s->gold_match[u] == NONE ? augment(s, u, order) : 1;
        if (found != 1)
            return found; /* a row Kuhn cannot pair now never pairs */
    }
    return 1;
}

/* The first unused column of p's kind is p itself: else skip p. */
static bool first_unused_of_kind(const search_t *s, size_t p)
{
    for (size_t q = 0; q < p; q++)
        if (s->self->kind[q] == s->self->kind[p] && !s->used[q])
            return false;
    return true;
}

/* Keeps the complete assignment just checked: the first one the rows
 * aligned under, else the first one of all. */
static void keep_assignment(search_t *s, bool aligned)
{
    sx_strict_t *self = s->self;
    if (self->aligned || (self->assigned && !aligned))
        return;
    free(self->assignment);
    self->assignment = sx_alloc(s->ncols + 1, sizeof *self->assignment);
    memcpy(self->assignment, s->assign, s->ncols * sizeof *s->assign);
    self->assigned = s->ncols;
    self->aligned = aligned;
}

/* Assigns gold columns i.. and checks rows: 1, 0 or GAVE_UP. */
static int assign_from(search_t *s, size_t i)
{
    if (!spend(s))
        return GAVE_UP;
    if (i == s->ncols) {
        s->complete = true;
        int verdict = s->self->ignore_order ? match_rows(s) : 1;
        if (verdict != GAVE_UP)
            keep_assignment(s, verdict == 1);
        return verdict;
    }
    for (size_t p = 0; p < s->self->cols; p++) {
        if (!s->cand[i * s->self->cols + p] || s->used[p] || !first_unused_of_kind(s, p))
            continue;
        s->used[p] = true;
        s->assign[i] = p;
        int verdict = assign_from(s, i + 1);
        s->used[p] = false;
        if (verdict != 0)
            return verdict;
    }
    return 0;
}

static void search_free(search_t *s)
{
    free(s->gold.columns);
    free(s->cand);
    free(s->assign);
    free(s->used);
    free(s->gold_order);
    free(s->pred_order);
    free(s->gold_match);
    free(s->pred_match);
    free(s->seen);
    free(s->lo);
    free(s->hi);
    free(s->stack);
}

/* Allocates the search over gold's picked columns and rows. */
static void search_init(search_t *s, const sx_frame_t *gold, const size_t *rows,
                        const long *cols, sx_profile_t profile)
{
    size_t n = s->n, pc = s->self->cols + 1;
    s->gold = (table_t){sx_alloc(s->ncols + 1, sizeof *s->gold.columns), rows, profile};
    s->cand = sx_alloc(s->ncols * pc + 1, sizeof *s->cand);
    s->assign = sx_alloc(s->ncols + 1, sizeof *s->assign);
    s->used = sx_alloc(pc, sizeof *s->used);
    /* ncols column orders, then the row order on every column */
    s->gold_order = sx_alloc((s->ncols + 1) * n + 1, sizeof *s->gold_order);
    s->pred_order = sx_alloc(n + 1, sizeof *s->pred_order);
    for (size_t i = 0; i < s->ncols; i++)
        s->gold.columns[i] = sx_frame_column(gold, (size_t)cols[i])->values;
}

/* Steps 2 and 3 (and 4 through assign_from): 1, 0 (reason set) or GAVE_UP. */
static int search(search_t *s, sx_strict_reason_t *reason)
{
    size_t n = s->n;
    if (s->self->ignore_order) {
        for (size_t i = 0; i < s->ncols; i++)
            sort_rows(s->gold_order + i * n, n, &s->gold, &i, 1);
        size_t *all = s->assign; /* 0..ncols-1 for the row order of gold */
        for (size_t i = 0; i < s->ncols; i++)
            all[i] = i;
        sort_rows(s->gold_order + s->ncols * n, n, &s->gold, all, s->ncols);
    }
    *reason = SX_STRICT_NO_COLUMN;
    for (size_t i = 0; i < s->ncols; i++) {
        bool any = false;
        for (size_t p = 0; p < s->self->cols; p++) {
            bool c = s->self->kind[p] == p
                         ? column_candidate(s, i, p)
                         : s->cand[i * s->self->cols + s->self->kind[p]];
            s->cand[i * s->self->cols + p] = c;
            any = any || c;
        }
        if (!any)
            return 0;
    }
    int verdict = assign_from(s, 0);
    *reason = verdict == GAVE_UP ? SX_STRICT_GAVE_UP
              : s->complete      ? SX_STRICT_ROWS_DO_NOT_ALIGN
                                 : SX_STRICT_SHARED_COLUMN;
    return verdict;
}

int sx_strict_gold(sx_strict_t *self, const sx_frame_t *gold, const size_t *rows,
                   size_t row_count, const long *condition_cols, size_t condition_count,
                   sx_error_t *err)
{
    if (sx_compare_check_columns(gold, condition_cols, condition_count, err) != 0)
        return -1;
    search_t s = {.self = self};
    s.n = rows ? row_count : sx_frame_row_count(gold);
    s.ncols = condition_count ? condition_count : sx_frame_column_count(gold);
    if (s.n != self->rows)
        return 0; /* reason stays at least SX_STRICT_NO_COLUMN */
    long *every = NULL;
    if (!condition_count) {
        every = sx_alloc(s.ncols + 1, sizeof *every);
        for (size_t i = 0; i < s.ncols; i++)
            every[i] = (long)i;
    }
    const long *cols = condition_count ? condition_cols : every;
    sx_strict_reason_t reason = SX_STRICT_NO_COLUMN;
    search_init(&s, gold, rows, cols, self->profile);
    int verdict = search(&s, &reason);
    search_free(&s);
    free(every);
    if (verdict == GAVE_UP)
        verdict = 0;
    if (verdict == 0 && reason > self->reason)
        self->reason = reason;
    return verdict;
}

/* ---- self-test ----------------------------------------------------------- */

/* printf at the end of a text buffer */
static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

typedef struct {
    int frozen, strict;
    sx_strict_reason_t reason;
} verdicts_t;

static verdicts_t both(const char *pred_csv, const char *gold_csv, bool ignore_order,
                       sx_profile_t profile, const long *cols, size_t ncols,
                       size_t max_steps)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_frame_t *pred = sx_frame_parse("p.csv", pred_csv, strlen(pred_csv), &err);
    sx_frame_t *gold = sx_frame_parse("g.csv", gold_csv, strlen(gold_csv), &err);
    SX_CHECK(pred && gold);
    sx_compare_t *cmp = sx_compare_new(pred, ignore_order, profile);
    sx_strict_t *strict = sx_strict_new(pred, ignore_order, profile);
    if (max_steps)
        strict->max_steps = max_steps;
    verdicts_t v;
    v.frozen = sx_compare_gold(cmp, gold, NULL, 0, cols, ncols, NULL, 0, &err);
    v.strict = sx_strict_gold(strict, gold, NULL, 0, cols, ncols, &err);
    v.reason = sx_strict_reason(strict);
    sx_compare_destroy(&cmp);
    sx_strict_destroy(&strict);
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
    return v;
}

static bool is(verdicts_t v, int frozen, int strict)
{
    return v.frozen == frozen && v.strict == strict;
}

static void test_strict_cases_read_like_the_spec(void)
{
    const sx_profile_t NOV = SX_PROFILE_SPIDER2_LITE_2025_11;
    const sx_profile_t MAR = SX_PROFILE_SPIDER2_LITE_2025_03;
    const char *gold = "k,v\n1,x\n2,y\n3,z\n";
    /* Rows in another order: equal as a multiset, not as a sequence. */
    SX_CHECK(is(both("v,k\nz,3\nx,1\ny,2", gold, true, NOV, NULL, 0, 0), 1, 1));
    SX_CHECK(is(both("v,k\nz,3\nx,1\ny,2", gold, false, NOV, NULL, 0, 0), 0, 0));
    SX_CHECK(
        is(both("k,v,extra\n1,x,0\n2,y,0\n3,z,0", gold, false, NOV, NULL, 0, 0), 1, 1));
    /* Every column right, rows scrambled between columns. */
    verdicts_t v = both("k,v\n1,y\n2,z\n3,x", gold, true, NOV, NULL, 0, 0);
    SX_CHECK(is(v, 1, 0) && v.reason == SX_STRICT_ROWS_DO_NOT_ALIGN);
    /* The string sort pairs -0.001 with -1.5: the frozen check misses it. */
    SX_CHECK(is(both("a\n-0.001\n-1.5", "a\n0\n-1.5", true, NOV, NULL, 0, 0), 0, 1));
    /* One prediction column for two equal gold columns; two copies do. */
    v = both("x\n1\n2", "a,b\n1,1\n2,2", true, NOV, NULL, 0, 0);
    SX_CHECK(is(v, 1, 0) && v.reason == SX_STRICT_SHARED_COLUMN);
    SX_CHECK(is(both("x,y\n1,1\n2,2", "a,b\n1,1\n2,2", false, NOV, NULL, 0, 0), 1, 1));
    v = both("x\n1\n2", "a,b\n1,1\n2,2", false, NOV, NULL, 0, 0);
    SX_CHECK(is(v, 1, 0) && v.reason == SX_STRICT_SHARED_COLUMN);
    /* condition_cols: only those gold columns need a column of their own. */
    long second = 1;
    SX_CHECK(is(both("v\n7\n8", "k,v\nx,7\ny,8", true, NOV, &second, 1, 0), 1, 1));
    long beyond = 5;
    SX_CHECK(both("v\n7", "v\n7", true, NOV, &beyond, 1, 0).strict == -1);
    /* Close numbers crossing in two columns: sorted pairing fails, the
     * matching pairs (1.000, 10) with (1.002, 10). */
    SX_CHECK(is(both("a,b\n1.0005,20\n1.002,10", "a,b\n1.000,10\n1.001,20", true, NOV,
                     NULL, 0, 0),
                1, 1));
    SX_CHECK(is(
        both("a,b\n1.0005,20\n1.02,10", "a,b\n1.000,10\n1.001,20", true, NOV, NULL, 0, 0),
        0, 0));
    /* NULL-heavy frames: 2025-11 reads NaN as 0, 2025-03 keeps NaN equal to
     * NaN only; a NULL row must still land on a NULL row. */
    const char *nulls = "a,b\n,\n,x\n1,\n,\n";
    SX_CHECK(is(both("b,a\n,\n,1\nx,\n,\n", nulls, true, MAR, NULL, 0, 0), 1, 1));
    SX_CHECK(is(both("b,a\nx,\n,\n,1\n,\n", nulls, true, MAR, NULL, 0, 0), 1, 1));
    SX_CHECK(is(both("b,a\nx,1\n,\n,\n,\n", nulls, true, MAR, NULL, 0, 0), 1, 0));
    SX_CHECK(is(both("b,a\nx,0\n,\n,1\n,0\n", nulls, true, NOV, NULL, 0, 0), 1, 1));
    SX_CHECK(is(both("b,a\nx,0\n,\n,1\n,0\n", nulls, true, MAR, NULL, 0, 0), 0, 0));
    /* Header-only gold: no rows to align, but still a column each. */
    SX_CHECK(is(both("v,w\n", "a,b\n", true, NOV, NULL, 0, 0), 1, 1));
    SX_CHECK(is(both("v\n", "a,b\n", true, NOV, NULL, 0, 0), 1, 0));
    SX_CHECK(is(both("v\n1", "a\n", true, NOV, NULL, 0, 0), 0, 0));
}

/* The assignment kept, as "p0,p1,... aligned|first" or "none". */
static void assignment_of(const char *pred_csv, const char *gold_csv, bool ignore_order,
                          char *out, size_t size)
{
    sx_error_t err;
    sx_frame_t *pred = sx_frame_parse("p.csv", pred_csv, strlen(pred_csv), &err);
    sx_frame_t *gold = sx_frame_parse("g.csv", gold_csv, strlen(gold_csv), &err);
    SX_CHECK(pred && gold);
    sx_strict_t *strict =
        sx_strict_new(pred, ignore_order, SX_PROFILE_SPIDER2_LITE_2025_11);
    sx_strict_gold(strict, gold, NULL, 0, NULL, 0, &err);
    const size_t *columns;
    bool aligned;
    size_t n = sx_strict_assignment(strict, &columns, &aligned);
    snprintf(out, size, "%s", n ? "" : "none");
    for (size_t i = 0; i < n; i++)
        append(out, size, "%zu,", columns[i]);
    if (n)
        append(out, size, "%s", aligned ? "aligned" : "first");
    sx_strict_destroy(&strict);
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
}

static void test_strict_keeps_its_assignment(void)
{
    char got[64];
    const char *gold = "k,v\n1,x\n2,y\n";
    assignment_of("v,k\ny,2\nx,1\n", gold, true, got, sizeof got);
    SX_CHECK(strcmp(got, "1,0,aligned") == 0);
    /* Each column equal, rows scrambled: the first assignment tried. */
    assignment_of("k,v\n1,y\n2,x\n", gold, true, got, sizeof got);
    SX_CHECK(strcmp(got, "0,1,first") == 0);
    /* Two copies of k: the rows align with the second one only. */
    assignment_of("k,k2,v\n1,2,x\n2,1,y\n", gold, true, got, sizeof got);
    SX_CHECK(strcmp(got, "0,2,aligned") == 0);
    assignment_of("k,k2,v\n2,1,x\n1,2,y\n", gold, true, got, sizeof got);
    SX_CHECK(strcmp(got, "1,2,aligned") == 0);
    assignment_of("k,v\n1,x\n", gold, true, got, sizeof got); /* rows differ */
    SX_CHECK(strcmp(got, "none") == 0);
    assignment_of("x\n1\n2\n", "a,b\n1,1\n2,2\n", true, got, sizeof got); /* shared */
    SX_CHECK(strcmp(got, "none") == 0);
    assignment_of("v,k\nx,1\ny,2\n", gold, false, got, sizeof got);
    SX_CHECK(strcmp(got, "1,0,aligned") == 0);
}

static void test_strict_gives_up_past_its_bound(void)
{
    /* Each column alike in both, but every gold row pairs 0 with 1: the
     * matching checks 20 candidates for a row before it fails. */
    char pred[1024] = "k,v\n", gold[1024] = "k,v\n";
    for (int i = 0; i < 40; i++) {
        append(pred, sizeof pred, "%d,%d\n", i % 2, i % 2);
        append(gold, sizeof gold, "%d,%d\n", i % 2, (i + 1) % 2);
    }
    verdicts_t v = both(pred, gold, true, SX_PROFILE_SPIDER2_LITE_2025_11, NULL, 0, 0);
    SX_CHECK(is(v, 1, 0) && v.reason == SX_STRICT_ROWS_DO_NOT_ALIGN);
    v = both(pred, gold, true, SX_PROFILE_SPIDER2_LITE_2025_11, NULL, 0, 50);
    SX_CHECK(is(v, 1, 0) && v.reason == SX_STRICT_GAVE_UP);
    SX_CHECK(strcmp(sx_strict_reason_text(v.reason),
                    "strict check gave up past its bound") == 0);
}

/* ---- property: strict 1 exactly when some one-to-one column choice and row
 * permutation make every cell equal (brute force on small random frames). */

/* The random frames have at most 3 gold columns, 4 predicted ones and 5
 * rows; BRUTE_MAX bounds them all. */
#define BRUTE_MAX 8

typedef struct {
    const sx_frame_t *gold, *pred;
    sx_profile_t profile;
    bool ignore_order;
    size_t assign[BRUTE_MAX];
    bool used_col[BRUTE_MAX], used_row[BRUTE_MAX];
} brute_t;

static bool cell_equal(const brute_t *b, size_t i, size_t r, size_t p, size_t q)
{
    sx_value_t g =
        sx_compare_profile_value(sx_frame_column(b->gold, i)->values[r], b->profile);
    sx_value_t v =
        sx_compare_profile_value(sx_frame_column(b->pred, p)->values[q], b->profile);
    return sx_compare_values_equal(&g, &v);
}

static bool brute_rows(brute_t *b, size_t r)
{
    size_t n = sx_frame_row_count(b->gold);
    if (r == n)
        return true;
    for (size_t q = 0; q < n; q++) {
        if (b->used_row[q] || (!b->ignore_order && q != r))
            continue;
        bool ok = true;
        for (size_t i = 0; i < sx_frame_column_count(b->gold) && ok; i++)
            ok = cell_equal(b, i, r, b->assign[i], q);
        b->used_row[q] = true;
        ok = ok && brute_rows(b, r + 1);
        b->used_row[q] = false;
        if (ok)
            return true;
    }
    return false;
}

static bool brute_cols(brute_t *b, size_t i)
{
    if (i == sx_frame_column_count(b->gold))
        return brute_rows(b, 0);
    /* Never true here; it tells an optimizer that unrolls this recursion
     * that assign[i] stays in bounds (-O3's -Warray-bounds). */
    if (i >= BRUTE_MAX)
        return false;
    for (size_t p = 0; p < sx_frame_column_count(b->pred); p++) {
        if (b->used_col[p])
            continue;
        b->used_col[p] = true;
        b->assign[i] = p;
        bool ok = brute_cols(b, i + 1);
        b->used_col[p] = false;
        if (ok)
            return true;
    }
    return false;
}

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

/* A random cell of a numeric (close values, NULL) or text column. */
static const char *random_cell(unsigned *state, bool numeric)
{
    static const char *const numbers[] = {"1", "1.004", "1.009",  "1.016",
                                          "2", "",      "-0.001", "0"};
    static const char *const texts[] = {"a", "b", "", "NULL"};
    return numeric ? numbers[next_random(state) % 8] : texts[next_random(state) % 4];
}

static void test_strict_property_on_random_frames(bool verbose)
{
    unsigned state = 2026;
    size_t outcomes[2][2] = {{0}}; /* [ignore_order][strict] */
    for (int round = 0; round < 600; round++) {
        size_t ncols = 1 + next_random(&state) % 3, n = next_random(&state) % 6;
        bool numeric[4];
        const char *cells[4][6];
        char gold[512] = "", pred[512] = "";
        for (size_t i = 0; i < ncols; i++) {
            numeric[i] = next_random(&state) % 3 != 0;
            for (size_t r = 0; r < n; r++)
                cells[i][r] = random_cell(&state, numeric[i]);
        }
        /* pred: gold's columns (plus maybe a copy), in a random order; rows
         * permuted together, or each column on its own, or cells altered. */
        size_t pcols = ncols + next_random(&state) % 2, from[5], rowperm[4][6];
        for (size_t p = 0; p < pcols; p++)
            from[p] = p < ncols ? p : next_random(&state) % ncols;
        for (size_t p = pcols; p > 1; p--) {
            size_t j = next_random(&state) % p, t = from[p - 1];
            from[p - 1] = from[j];
            from[j] = t;
        }
        int mode = (int)(next_random(&state) % 4);
        for (size_t i = 0; i < 4; i++) {
            bool shared = i > 0 && mode != 1;
            for (size_t r = 0; r < n; r++)
                rowperm[i][r] = shared ? rowperm[0][r] : r;
            for (size_t r = n; r > 1 && !shared && mode != 3; r--) {
                size_t j = next_random(&state) % r, t = rowperm[i][r - 1];
                rowperm[i][r - 1] = rowperm[i][j];
                rowperm[i][j] = t;
            }
        }
        for (size_t i = 0; i < ncols; i++)
            append(gold, sizeof gold, "%sg%zu", i ? "," : "", i);
        for (size_t p = 0; p < pcols; p++)
            append(pred, sizeof pred, "%sp%zu", p ? "," : "", p);
        for (size_t r = 0; r < n; r++) {
            append(gold, sizeof gold, "\n");
            append(pred, sizeof pred, "\n");
            for (size_t i = 0; i < ncols; i++)
                append(gold, sizeof gold, "%s%s", i ? "," : "", cells[i][r]);
            for (size_t p = 0; p < pcols; p++) {
                size_t i = from[p];
                const char *cell = cells[i][rowperm[i][r]];
                if (mode == 2 && next_random(&state) % 5 == 0)
                    cell = random_cell(&state, numeric[i]);
                append(pred, sizeof pred, "%s%s", p ? "," : "", cell);
            }
        }
        append(gold, sizeof gold, "\n");
        append(pred, sizeof pred, "\n");
        for (int order = 0; order < 2; order++) {
            for (int prof = 0; prof < 2; prof++) {
                sx_error_t err;
                sx_frame_t *g = sx_frame_parse("g.csv", gold, strlen(gold), &err);
                sx_frame_t *p = sx_frame_parse("p.csv", pred, strlen(pred), &err);
                SX_CHECK(g && p);
                brute_t b = {.gold = g,
                             .pred = p,
                             .profile = (sx_profile_t)prof,
                             .ignore_order = order == 1};
                bool expect =
                    sx_frame_row_count(g) == sx_frame_row_count(p) && brute_cols(&b, 0);
                sx_strict_t *s = sx_strict_new(p, b.ignore_order, b.profile);
                int got = sx_strict_gold(s, g, NULL, 0, NULL, 0, &err);
                if (got != (int)expect)
                    fprintf(stderr,
                            "strict %d, brute force %d, ignore_order %d:\n%s--\n%s", got,
                            expect, order, gold, pred);
                SX_CHECK(got == (int)expect);
                outcomes[order][got]++;
                sx_strict_destroy(&s);
                sx_frame_destroy(&g);
                sx_frame_destroy(&p);
            }
        }
    }
    if (verbose)
        printf("strict property: in order %zu equal, %zu not; ignoring order %zu equal, "
               "%zu not\n",
               outcomes[0][1], outcomes[0][0], outcomes[1][1], outcomes[1][0]);
    for (int order = 0; order < 2; order++) /* both outcomes, well represented */
        SX_CHECK(outcomes[order][0] > 200 && outcomes[order][1] > 200);
}

void sx_strict_test(bool verbose)
{
    test_strict_cases_read_like_the_spec();
    test_strict_keeps_its_assignment();
    test_strict_gives_up_past_its_bound();
    test_strict_property_on_random_frames(verbose);
}
