/* diff.c: the row-level diff of a miss (see diff.h).
 *  1. Columns: the strict check's assignment when it has one (it is run here
 *     on the prediction, through the tie adapter for a tie task), else by
 *     name, then by shared values (the largest pairing of two sorted
 *     columns, which in value order pairs greedily: values equal to one
 *     value form a range of that order).
 *  2. Rows: a maximum pairing of gold rows with prediction rows equal cell by
 *     cell. An ordinary task first pairs both sides sorted the same way in
 *     one merge, then pairs what is left by augmenting paths (Kuhn); a tie
 *     task pairs by augmenting paths alone, mandatory rows first, so no
 *     legal answer keeps more mandatory rows than the one found. A gold row's
 *     candidates are the prediction rows whose value in the key column (the
 *     paired prediction column with the most distinct values in a sample)
 *     equals its own: a range of the prediction rows sorted key first.
 *  3. What is left unpaired on each side is missing and extra. */
#include "common/ex/diff.h"

#include "common/ex/compare.h"
#include "common/ex/score.h"
#include "common/ex/strict.h"
#include "common/ex/tie.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE SIZE_MAX

/* One side's rows on the compared columns, cells read with the profile's
 * NaN rule (the frame keeps them; nothing is copied). */
typedef struct {
    const sx_value_t **columns; /* compared column i's cells; NULL: no column */
    size_t ncols, rows;
    sx_profile_t profile;
} table_t;

struct _sx_diff_t {
    sx_answer_kind_t kind;
    bool ignore_order;
    long k, mandatory;
    long *condition_cols;
    size_t condition_count;
    sx_profile_t profile;
    size_t ncols;       /* compared gold columns */
    size_t *gold_cols;  /* gold column of each */
    size_t *pred_cols;  /* prediction column paired with each, NONE: none */
    const char **by;    /* how each was paired */
    json_t *gold_names; /* strings, one per compared column */
    json_t *pred_names; /* strings or null */
    size_t gold_rows, pred_rows;
    size_t missing, extra, from_tie_set;
    json_t *missing_rows, *extra_rows;
    bool ordered_diff;       /* first_difference applies */
    size_t first_difference; /* NONE: the sequences are equal */
    json_t *first_gold, *first_pred;
    const char *rule;
    bool exact;
    char *note;
};

static sx_value_t cell(const table_t *t, size_t c, size_t r)
{
    return sx_compare_profile_value(t->columns[c][r], t->profile);
}

static bool rows_equal(const table_t *g, size_t gr, const table_t *p, size_t pr)
{
    for (size_t c = 0; c < g->ncols; c++) {
        if (!p->columns[c])
            return false;
        sx_value_t x = cell(g, c, gr), y = cell(p, c, pr);
        if (!sx_compare_values_equal(&x, &y))
            return false;
    }
    return true;
}

/* ---- values as JSON ------------------------------------------------------ */

static json_t *cell_json(const sx_value_t *v)
{
    switch (v->kind) {
    case SX_VALUE_NAN:
        return json_null();
    case SX_VALUE_INT:
        return json_integer((json_int_t)v->i);
    case SX_VALUE_UINT:
        return v->u <= INT64_MAX ? json_integer((json_int_t)v->u)
                                 : json_real((double)v->u);
    case SX_VALUE_BOOL:
        return json_boolean(v->b);
    case SX_VALUE_FLOAT:
        if (isnan(v->f))
            return json_null();
        if (isinf(v->f))
            return json_string(v->f > 0 ? "inf" : "-inf");
        return json_real(v->f);
    case SX_VALUE_STR:
        break;
    }
    return json_string(v->str);
}

/* Row r of a side as read (no NaN rule), on its compared columns. */
static json_t *row_json(const table_t *t, size_t r)
{
    json_t *row = json_array();
    for (size_t c = 0; c < t->ncols; c++)
        json_array_append_new(row,
                              t->columns[c] ? cell_json(&t->columns[c][r]) : json_null());
    return row;
}

/* ---- the order of rows ---------------------------------------------------- */

typedef struct {
    const table_t *table;
    const size_t *priority; /* the columns to order on, in priority */
} row_order_t;

static int row_cmp(const void *pa, const void *pb, void *arg)
{
    const row_order_t *o = arg;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (size_t i = 0; i < o->table->ncols; i++) {
        sx_value_t x = cell(o->table, o->priority[i], a),
                   y = cell(o->table, o->priority[i], b);
        int c = sx_strict_value_order(&x, &y);
        if (c != 0)
            return c;
    }
    return (a > b) - (a < b);
}

static size_t *sorted_rows(const table_t *t, const size_t *priority)
{
    size_t *order = sx_alloc(t->rows + 1, sizeof *order);
    for (size_t r = 0; r < t->rows; r++)
        order[r] = r;
    row_order_t o = {t, priority};
    qsort_r(order, t->rows, sizeof *order, row_cmp, &o);
    return order;
}

/* One column's cells sorted by value. */
static size_t *sorted_column(const sx_value_t *cells, size_t rows, sx_profile_t profile)
{
    const sx_value_t *columns[1] = {cells};
    table_t t = {columns, 1, rows, profile};
    size_t zero = 0;
    return sorted_rows(&t, &zero);
}

/* ---- columns ------------------------------------------------------------- */

/* How many values of two columns pair one to one, equal: both sorted by
 * value, a merge pairs as many as any pairing can. */
static size_t shared_values(const sx_value_t *a, const size_t *a_order, size_t a_rows,
                            const sx_value_t *b, const size_t *b_order, size_t b_rows,
                            sx_profile_t profile)
{
    size_t i = 0, j = 0, shared = 0;
    while (i < a_rows && j < b_rows) {
        sx_value_t x = sx_compare_profile_value(a[a_order[i]], profile);
        sx_value_t y = sx_compare_profile_value(b[b_order[j]], profile);
        if (sx_compare_values_equal(&x, &y)) {
            shared++;
            i++;
            j++;
        } else if (sx_strict_value_order(&x, &y) <= 0) {
            i++;
        } else {
            j++;
        }
    }
    return shared;
}

/* The assignment of the strict check, run on the prediction as scoring runs
 * it; true when it has one. */
static bool strict_columns(sx_diff_t *self, const sx_frame_t *gold,
                           const sx_frame_t *pred, const sx_evaluation_t *ev)
{
    /* The check compares nothing when the row counts differ: spare it. */
    size_t wanted = ev->kind == SX_ANSWER_ORDINARY         ? sx_frame_row_count(gold)
                    : ev->kind == SX_ANSWER_ANY_ONE_ARGMAX ? 1
                                                           : (size_t)ev->k;
    if (sx_frame_row_count(pred) != wanted)
        return false;
    sx_strict_t *strict = sx_strict_new(pred, ev->ignore_order, self->profile);
    sx_tie_target_t target = {.strict = strict, .gold = gold, .evaluation = ev};
    sx_error_t err;
    char detail[256];
    if (ev->kind == SX_ANSWER_ORDINARY)
        sx_tie_strict_check(&target, NULL, 0, &err);
    else
        sx_tie_match(sx_tie_strict_check, &target, gold, sx_frame_row_count(pred), ev,
                     detail, sizeof detail, &err);
    const size_t *columns;
    bool aligned;
    bool found = sx_strict_assignment(strict, &columns, &aligned) == self->ncols;
    for (size_t i = 0; found && i < self->ncols; i++) {
        self->pred_cols[i] = columns[i];
        self->by[i] = "strict";
    }
    sx_strict_destroy(&strict);
    return found;
}

/* Names first, then shared values (diff.h). */
static void fallback_columns(sx_diff_t *self, const sx_frame_t *gold,
                             const sx_frame_t *pred)
{
    size_t pcols = sx_frame_column_count(pred), rows = sx_frame_row_count(pred);
    size_t gold_rows = sx_frame_row_count(gold);
    bool *used = sx_alloc(pcols + 1, sizeof *used);
    for (size_t i = 0; i < self->ncols; i++) {
        const char *name = sx_frame_column_name(gold, self->gold_cols[i]);
        for (size_t p = 0; p < pcols && self->pred_cols[i] == NONE; p++)
            if (!used[p] && strcmp(sx_frame_column_name(pred, p), name) == 0) {
                used[p] = true;
                self->pred_cols[i] = p;
                self->by[i] = "name";
            }
    }
    size_t **pred_orders = sx_alloc(pcols + 1, sizeof *pred_orders);
    for (size_t i = 0; i < self->ncols; i++) {
        if (self->pred_cols[i] != NONE)
            continue;
        const sx_value_t *g = sx_frame_column(gold, self->gold_cols[i])->values;
        size_t *g_order = sorted_column(g, gold_rows, self->profile);
        size_t free_columns = 0;
        for (size_t p = 0; p < pcols; p++)
            free_columns += !used[p];
        size_t best = NONE, best_shared = 0;
        for (size_t p = 0; p < pcols; p++) {
            if (free_columns && used[p])
                continue;
            const sx_value_t *v = sx_frame_column(pred, p)->values;
            if (!pred_orders[p])
                pred_orders[p] = sorted_column(v, rows, self->profile);
            size_t shared = shared_values(g, g_order, gold_rows, v, pred_orders[p], rows,
                                          self->profile);
            if (best == NONE || shared > best_shared) {
                best = p;
                best_shared = shared;
            }
        }
        free(g_order);
        if (best == NONE)
            continue;
        self->pred_cols[i] = best;
        self->by[i] = free_columns ? "values" : "shared";
        used[best] = true;
    }
    for (size_t p = 0; p < pcols; p++)
        free(pred_orders[p]);
    free(pred_orders);
    free(used);
}

/* ---- rows ---------------------------------------------------------------- */

typedef struct {
    size_t u, k, v; /* gold row, next candidate position, prediction row taken */
} step_t;

typedef struct {
    const table_t *gold, *pred;
    size_t key;
    size_t *pred_order; /* prediction rows sorted key column first */
    size_t *gold_match, *pred_match, *seen, *lo, *hi;
    step_t *stack;
    size_t stamp, steps;
    bool gave_up;
} pairing_t;

static bool spend(pairing_t *m)
{
    if (++m->steps <= SX_DIFF_MAX_STEPS)
        return true;
    m->gave_up = true;
    return false;
}

/* [lo, hi) of gold row u: the positions of pred_order whose key value equals
 * gold's (a range, since equal values are neighbours in value order). */
static void candidate_range(pairing_t *m, size_t u)
{
    sx_value_t x = cell(m->gold, m->key, u);
    size_t a = 0, b = m->pred->rows;
    while (a < b) { /* first value at or after x, or equal to it */
        size_t mid = a + (b - a) / 2;
        sx_value_t v = cell(m->pred, m->key, m->pred_order[mid]);
        if (sx_strict_value_order(&v, &x) >= 0 || sx_compare_values_equal(&v, &x))
            b = mid;
        else
            a = mid + 1;
    }
    m->lo[u] = a;
    b = m->pred->rows;
    while (a < b) { /* first value after x and not equal to it */
        size_t mid = a + (b - a) / 2;
        sx_value_t v = cell(m->pred, m->key, m->pred_order[mid]);
        if (sx_strict_value_order(&v, &x) > 0 && !sx_compare_values_equal(&v, &x))
            b = mid;
        else
            a = mid + 1;
    }
    m->hi[u] = a;
}

/* One augmenting path from gold row root (Kuhn, iteratively): true when
 * found and applied. */
static bool augment(pairing_t *m, size_t root)
{
    m->stamp++;
    size_t depth = 0;
    m->stack[0] = (step_t){root, m->lo[root], NONE};
    for (;;) {
        step_t *f = &m->stack[depth];
        if (f->k == m->hi[f->u]) {
            if (depth == 0)
                return false;
            depth--;
            continue;
        }
        size_t v = m->pred_order[f->k++];
        if (m->seen[v] == m->stamp)
            continue;
        if (!spend(m))
            return false;
        if (!rows_equal(m->gold, f->u, m->pred, v))
            continue;
        m->seen[v] = m->stamp;
        f->v = v;
        if (m->pred_match[v] == NONE) {
            for (size_t d = 0; d <= depth; d++) {
                m->gold_match[m->stack[d].u] = m->stack[d].v;
                m->pred_match[m->stack[d].v] = m->stack[d].u;
            }
            return true;
        }
        size_t next = m->pred_match[v];
        m->stack[++depth] = (step_t){next, m->lo[next], NONE};
    }
}

/* Rows of the prediction key_column looks at: evenly spread, so that a
 * large relation's key is chosen at the cost of a small one's. */
#define KEY_SAMPLE 4096

/* The compared column whose prediction column has the most distinct values
 * among KEY_SAMPLE rows. */
static size_t key_column(const table_t *pred)
{
    size_t stride = pred->rows > KEY_SAMPLE ? pred->rows / KEY_SAMPLE : 1;
    size_t n = (pred->rows + stride - 1) / stride;
    sx_value_t *sample = sx_alloc(n + 1, sizeof *sample);
    size_t best = 0, best_distinct = 0;
    for (size_t c = 0; c < pred->ncols; c++) {
        for (size_t i = 0; i < n; i++)
            sample[i] = pred->columns[c][i * stride];
        size_t *order = sorted_column(sample, n, pred->profile);
        const sx_value_t *columns[1] = {sample};
        table_t t = {columns, 1, n, pred->profile};
        size_t distinct = n > 0;
        for (size_t r = 1; r < n; r++) {
            sx_value_t a = cell(&t, 0, order[r - 1]), b = cell(&t, 0, order[r]);
            distinct += sx_strict_value_order(&a, &b) != 0;
        }
        free(order);
        if (distinct > best_distinct) {
            best = c;
            best_distinct = distinct;
        }
    }
    free(sample);
    return best;
}

/* Pairs gold rows with prediction rows: gold_match / pred_match filled. */
static void pair_rows(pairing_t *m, bool merge_first)
{
    size_t ng = m->gold->rows, np = m->pred->rows, ncols = m->gold->ncols;
    m->gold_match = sx_alloc(ng + 1, sizeof *m->gold_match);
    m->pred_match = sx_alloc(np + 1, sizeof *m->pred_match);
    for (size_t r = 0; r < ng; r++)
        m->gold_match[r] = NONE;
    for (size_t r = 0; r < np; r++)
        m->pred_match[r] = NONE;
    for (size_t c = 0; c < ncols; c++)
        if (!m->pred->columns[c])
            return; /* a gold column nothing stands for: no row is equal */
    if (ng == 0 || np == 0)
        return;
    m->key = key_column(m->pred);
    size_t *priority = sx_alloc(ncols + 1, sizeof *priority);
    priority[0] = m->key;
    for (size_t c = 0, n = 1; c < ncols; c++)
        if (c != m->key)
            priority[n++] = c;
    m->pred_order = sorted_rows(m->pred, priority);
    if (merge_first) {
        size_t *gold_order = sorted_rows(m->gold, priority);
        for (size_t i = 0, j = 0; i < ng && j < np && spend(m);) {
            size_t g = gold_order[i], p = m->pred_order[j];
            if (rows_equal(m->gold, g, m->pred, p)) {
                m->gold_match[g] = p;
                m->pred_match[p] = g;
                i++;
                j++;
                continue;
            }
            /* The two rows in one order: the gold row's on gold's columns
             * against the prediction row's, column by column. */
            int c = 0;
            for (size_t k = 0; k < ncols && c == 0; k++) {
                sx_value_t x = cell(m->gold, priority[k], g),
                           y = cell(m->pred, priority[k], p);
                c = sx_strict_value_order(&x, &y);
            }
            if (c <= 0)
                i++;
            else
                j++;
        }
        free(gold_order);
    }
    m->seen = sx_alloc(np + 1, sizeof *m->seen);
    m->lo = sx_alloc(ng + 1, sizeof *m->lo);
    m->hi = sx_alloc(ng + 1, sizeof *m->hi);
    m->stack = sx_alloc(ng + 1, sizeof *m->stack);
    for (size_t u = 0; u < ng; u++)
        candidate_range(m, u);
    for (size_t u = 0; u < ng && !m->gave_up; u++)
        if (m->gold_match[u] == NONE)
            augment(m, u);
    free(priority);
}

static void pairing_free(pairing_t *m)
{
    free(m->pred_order);
    free(m->gold_match);
    free(m->pred_match);
    free(m->seen);
    free(m->lo);
    free(m->hi);
    free(m->stack);
}

/* ---- the diff ------------------------------------------------------------ */

void sx_diff_destroy(sx_diff_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_diff_t *self = *self_p;
    free(self->condition_cols);
    free(self->gold_cols);
    free(self->pred_cols);
    free(self->by);
    json_decref(self->gold_names);
    json_decref(self->pred_names);
    json_decref(self->missing_rows);
    json_decref(self->extra_rows);
    json_decref(self->first_gold);
    json_decref(self->first_pred);
    free(self->note);
    free(self);
    *self_p = NULL;
}

size_t sx_diff_missing_count(const sx_diff_t *self)
{
    return self->missing;
}

size_t sx_diff_extra_count(const sx_diff_t *self)
{
    return self->extra;
}

/* Rows of a side left unpaired: counted, the first SX_DIFF_ROWS_SHOWN (of
 * those `from` on) listed in file order. */
static size_t unpaired(const table_t *t, const size_t *match, size_t from, size_t to,
                       json_t *list)
{
    size_t count = 0;
    for (size_t r = from; r < to; r++) {
        if (match[r] != NONE)
            continue;
        if (count++ < SX_DIFF_ROWS_SHOWN)
            json_array_append_new(list, row_json(t, r));
    }
    return count;
}

/* Without ignore_order: the first position where the sequences differ. */
static void first_difference(sx_diff_t *self, const table_t *g, const table_t *p)
{
    size_t n = g->rows > p->rows ? g->rows : p->rows;
    self->ordered_diff = true;
    self->first_difference = NONE;
    for (size_t i = 0; i < n; i++) {
        if (i < g->rows && i < p->rows && rows_equal(g, i, p, i))
            continue;
        self->first_difference = i;
        self->first_gold = i < g->rows ? row_json(g, i) : json_null();
        self->first_pred = i < p->rows ? row_json(p, i) : json_null();
        return;
    }
}

/* Missing, extra and the rule of a tie task: the legal answer closest to
 * the prediction keeps its mandatory rows and the tie rows it pairs with. */
static void tie_outcome(sx_diff_t *self, const table_t *g, const table_t *p,
                        const pairing_t *m)
{
    bool argmax = self->kind == SX_ANSWER_ANY_ONE_ARGMAX;
    size_t k = argmax ? 1 : (size_t)self->k;
    size_t mandatory = argmax ? 0 : (size_t)self->mandatory;
    size_t paired = 0, paired_mandatory = 0;
    for (size_t r = 0; r < g->rows; r++) {
        paired += m->gold_match[r] != NONE;
        paired_mandatory += r < mandatory && m->gold_match[r] != NONE;
    }
    size_t lacking = mandatory - paired_mandatory;
    size_t tie_wanted = k - mandatory, tie_paired = paired - paired_mandatory;
    self->from_tie_set = tie_paired < tie_wanted ? tie_wanted - tie_paired : 0;
    unpaired(g, m->gold_match, 0, mandatory, self->missing_rows);
    self->missing = lacking + self->from_tie_set;
    self->extra = unpaired(p, m->pred_match, 0, p->rows, self->extra_rows);
    self->rule = p->rows < k       ? "too few rows"
                 : p->rows > k     ? "too many rows"
                 : lacking > 0     ? "a mandatory row missing"
                 : self->extra > 0 ? "a row outside the tie set"
                                   : NULL;
}

static void compare_rows(sx_diff_t *self, const sx_frame_t *gold, const sx_frame_t *pred)
{
    const sx_value_t **gold_columns = sx_alloc(self->ncols + 1, sizeof *gold_columns);
    const sx_value_t **pred_columns = sx_alloc(self->ncols + 1, sizeof *pred_columns);
    for (size_t i = 0; i < self->ncols; i++) {
        gold_columns[i] = sx_frame_column(gold, self->gold_cols[i])->values;
        pred_columns[i] = self->pred_cols[i] == NONE
                              ? NULL
                              : sx_frame_column(pred, self->pred_cols[i])->values;
    }
    table_t g = {gold_columns, self->ncols, self->gold_rows, self->profile};
    table_t p = {pred_columns, self->ncols, self->pred_rows, self->profile};
    pairing_t m = {.gold = &g, .pred = &p};
    bool tie = self->kind != SX_ANSWER_ORDINARY;
    pair_rows(&m, !tie);
    self->exact = !m.gave_up;
    if (tie) {
        tie_outcome(self, &g, &p, &m);
    } else {
        self->missing = unpaired(&g, m.gold_match, 0, g.rows, self->missing_rows);
        self->extra = unpaired(&p, m.pred_match, 0, p.rows, self->extra_rows);
        if (!self->ignore_order)
            first_difference(self, &g, &p);
    }
    pairing_free(&m);
    free(gold_columns);
    free(pred_columns);
}

sx_diff_t *sx_diff_new(const sx_frame_t *gold, const sx_frame_t *pred,
                       const sx_evaluation_t *ev, sx_profile_t profile, const char *note,
                       sx_error_t *err)
{
    if (sx_compare_check_columns(gold, ev->condition_cols, ev->condition_count, err) !=
            0 ||
        sx_tie_check_fits(gold, ev, err) != 0)
        return NULL;
    sx_diff_t *self = sx_new(sx_diff_t);
    self->kind = ev->kind;
    self->ignore_order = ev->ignore_order;
    self->k = ev->k;
    self->mandatory = ev->mandatory_rows;
    self->condition_count = ev->condition_count;
    self->condition_cols =
        sx_alloc(ev->condition_count + 1, sizeof *self->condition_cols);
    for (size_t i = 0; i < ev->condition_count; i++)
        self->condition_cols[i] = ev->condition_cols[i];
    self->profile = profile;
    self->note = sx_strdup_or_null(note);
    self->ncols = ev->condition_count ? ev->condition_count : sx_frame_column_count(gold);
    self->gold_cols = sx_alloc(self->ncols + 1, sizeof *self->gold_cols);
    self->pred_cols = sx_alloc(self->ncols + 1, sizeof *self->pred_cols);
    self->by = sx_alloc(self->ncols + 1, sizeof *self->by);
    self->gold_names = json_array();
    self->pred_names = json_array();
    for (size_t i = 0; i < self->ncols; i++) {
        self->gold_cols[i] = ev->condition_count ? (size_t)ev->condition_cols[i] : i;
        self->pred_cols[i] = NONE;
    }
    self->gold_rows = sx_frame_row_count(gold);
    self->pred_rows = pred ? sx_frame_row_count(pred) : 0;
    self->missing_rows = json_array();
    self->extra_rows = json_array();
    if (pred && !strict_columns(self, gold, pred, ev))
        fallback_columns(self, gold, pred);
    for (size_t i = 0; i < self->ncols; i++) {
        json_array_append_new(self->gold_names, json_string(sx_frame_column_name(
                                                    gold, self->gold_cols[i])));
        json_array_append_new(self->pred_names, self->pred_cols[i] == NONE
                                                    ? json_null()
                                                    : json_string(sx_frame_column_name(
                                                          pred, self->pred_cols[i])));
    }
    compare_rows(self, gold, pred);
    return self;
}

sx_diff_t *sx_diff_files(const char *gold_csv, const char *pred_csv,
                         const sx_evaluation_t *evaluation, sx_profile_t profile,
                         sx_error_t *err)
{
    sx_frame_t *gold = sx_gold_read(gold_csv, err);
    if (!gold)
        return NULL;
    sx_error_t pred_err;
    sx_frame_t *pred = sx_frame_read(NULL, pred_csv, &pred_err);
    char note[SX_ERROR_MAX + 64];
    if (!pred)
        snprintf(note, sizeof note, "the prediction cannot be read: %s", pred_err.msg);
    sx_diff_t *diff =
        sx_diff_new(gold, pred, evaluation, profile, pred ? NULL : note, err);
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
    return diff;
}

sx_diff_t *sx_diff_task(const char *bench_dir, const char *task_id, const char *pred_csv,
                        sx_profile_t profile, sx_error_t *err)
{
    char *gold = NULL;
    sx_evaluation_t *evaluation = NULL;
    sx_diff_t *diff = NULL;
    if (sx_score_inputs(bench_dir, task_id, &gold, &evaluation, err) == 0)
        diff = sx_diff_files(gold, pred_csv, evaluation, profile, err);
    sx_evaluation_destroy(&evaluation);
    free(gold);
    return diff;
}

static json_t *policy_json(const sx_diff_t *self)
{
    static const char *const kinds[] = {"ordinary", "any_one_argmax",
                                        "any_k_from_tie_set"};
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(kinds[self->kind]));
    if (self->kind == SX_ANSWER_ANY_K_FROM_TIE_SET) {
        json_object_set_new(o, "k", json_integer(self->k));
        json_object_set_new(o, "mandatory_rows", json_integer(self->mandatory));
    }
    json_object_set_new(o, "ignore_order", json_boolean(self->ignore_order));
    json_t *cols = json_array();
    for (size_t i = 0; i < self->condition_count; i++)
        json_array_append_new(cols, json_integer(self->condition_cols[i]));
    json_object_set_new(o, "condition_cols", cols);
    json_object_set_new(o, "tolerance", json_real(1e-2));
    return o;
}

static json_t *columns_json(const sx_diff_t *self)
{
    json_t *list = json_array();
    for (size_t i = 0; i < self->ncols; i++) {
        bool paired = self->pred_cols[i] != NONE;
        json_t *o = json_object();
        json_object_set(o, "gold", json_array_get(self->gold_names, i));
        json_object_set_new(o, "gold_index",
                            json_integer((json_int_t)self->gold_cols[i]));
        json_object_set(o, "prediction", json_array_get(self->pred_names, i));
        json_object_set_new(o, "prediction_index",
                            paired ? json_integer((json_int_t)self->pred_cols[i])
                                   : json_null());
        json_object_set_new(o, "by", paired ? json_string(self->by[i]) : json_null());
        json_array_append_new(list, o);
    }
    return list;
}

/* Why a miss shows no row of difference, when it does not. */
static const char *empty_diff_note(const sx_diff_t *self, int verdict)
{
    bool shared = false;
    for (size_t i = 0; i < self->ncols; i++)
        shared = shared || (self->by[i] && strcmp(self->by[i], "shared") == 0);
    if (self->missing || self->extra || self->rule || !self->exact ||
        (self->ordered_diff && self->first_difference != NONE))
        return NULL;
    if (shared)
        return "the rows are equal with one prediction column standing for two gold "
               "columns: the frozen comparison accepts that, the strict one does not";
    if (verdict == 0)
        return "the rows are equal: the frozen comparison, which sorts each column by "
               "str(), paired close numbers otherwise (" SX_STRICT_PAIRING_MISSED ")";
    return NULL;
}

json_t *sx_diff_json(const sx_diff_t *self, const char *task_id, int verdict, int strict)
{
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(task_id));
    json_object_set_new(o, "verdict", json_integer(verdict));
    json_object_set_new(o, "strict", json_integer(strict));
    json_object_set_new(o, "profile", json_string(sx_profile_name(self->profile)));
    json_object_set_new(o, "policy", policy_json(self));
    json_object_set_new(o, "gold_rows", json_integer((json_int_t)self->gold_rows));
    json_object_set_new(o, "prediction_rows", json_integer((json_int_t)self->pred_rows));
    json_object_set_new(o, "columns", columns_json(self));
    json_t *missing = json_object();
    json_object_set_new(missing, "count", json_integer((json_int_t)self->missing));
    json_object_set(missing, "rows", self->missing_rows);
    if (self->kind != SX_ANSWER_ORDINARY)
        json_object_set_new(missing, "from_tie_set",
                            json_integer((json_int_t)self->from_tie_set));
    json_object_set_new(o, "missing", missing);
    json_t *extra = json_object();
    json_object_set_new(extra, "count", json_integer((json_int_t)self->extra));
    json_object_set(extra, "rows", self->extra_rows);
    json_object_set_new(o, "extra", extra);
    if (self->ordered_diff) {
        json_t *first = json_null();
        if (self->first_difference != NONE) {
            first = json_object();
            json_object_set_new(first, "position",
                                json_integer((json_int_t)self->first_difference));
            json_object_set(first, "gold", self->first_gold);
            json_object_set(first, "prediction", self->first_pred);
        }
        json_object_set_new(o, "first_difference", first);
    }
    if (self->kind != SX_ANSWER_ORDINARY)
        json_object_set_new(o, "rule",
                            self->rule ? json_string(self->rule) : json_null());
    json_object_set_new(o, "exact", json_boolean(self->exact));
    const char *note = self->note ? self->note : empty_diff_note(self, verdict);
    if (note)
        json_object_set_new(o, "note", json_string(note));
    return o;
}

/* ---- self-test ----------------------------------------------------------- */

/* The diff of two CSV texts as compact JSON (reals to 15 digits). */
static char *diff_text(const char *gold_csv, const char *pred_csv,
                       const sx_evaluation_t *ev, sx_profile_t profile, int verdict,
                       int strict)
{
    sx_error_t err;
    sx_frame_t *gold = sx_frame_parse("g.csv", gold_csv, strlen(gold_csv), &err);
    sx_frame_t *pred = sx_frame_parse("p.csv", pred_csv, strlen(pred_csv), &err);
    SX_CHECK(gold && pred);
    sx_diff_t *diff = sx_diff_new(gold, pred, ev, profile, NULL, &err);
    SX_CHECK(diff);
    json_t *o = sx_diff_json(diff, "t1", verdict, strict);
    char *text =
        json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(o);
    sx_diff_destroy(&diff);
    sx_frame_destroy(&gold);
    sx_frame_destroy(&pred);
    return text;
}

#define NOV SX_PROFILE_SPIDER2_LITE_2025_11
#define MAR SX_PROFILE_SPIDER2_LITE_2025_03
#define HEAD(policy)                                                                     \
    "{\"task_id\":\"t1\",\"verdict\":0,\"strict\":0,\"profile\":\"spider2-lite-2025-"    \
    "11\","                                                                              \
    "\"policy\":" policy ","
#define UNORDERED                                                                        \
    "{\"kind\":\"ordinary\",\"ignore_order\":true,\"condition_cols\":[],"                \
    "\"tolerance\":0.01}"

static void check_text(char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        fprintf(stderr, "diff:\n got %s\nwant %s\n", got, want);
    SX_CHECK(strcmp(got, want) == 0);
    free(got);
}

/* Ordinary tasks: columns by the strict check, by name, by values, shared;
 * multisets with the tolerance; the profile's NaN rule; without
 * ignore_order the first position that differs. */
static void test_diff_of_ordinary_tasks(void)
{
    sx_evaluation_t unordered = {.ignore_order = true}, ordered = {0};
    /* Fewer rows: no strict assignment; columns by name, in another order. */
    check_text(
        diff_text("a,b\n1,x\n2,y\n3,z\n", "b,a\ny,2\nw,9\n", &unordered, NOV, 0, 0),
        HEAD(UNORDERED) "\"gold_rows\":3,\"prediction_rows\":2,\"columns\":["
                        "{\"gold\":\"a\",\"gold_index\":0,\"prediction\":\"a\","
                        "\"prediction_index\":1,"
                        "\"by\":\"name\"},{\"gold\":\"b\",\"gold_index\":1,"
                        "\"prediction\":\"b\","
                        "\"prediction_index\":0,\"by\":\"name\"}],\"missing\":{\"count\":"
                        "2,\"rows\":"
                        "[[1,\"x\"],[3,\"z\"]]},\"extra\":{\"count\":1,\"rows\":[[9,"
                        "\"w\"]]},"
                        "\"exact\":true}");
    /* Another name: by values; 1.0 and 1.005 are equal, the second 2.5 is
     * one too many, the second 1.0 missing (a multiset). */
    check_text(
        diff_text("v\n1.0\n1.0\n2.5\n", "w\n1.005\n2.5\n2.5\n", &unordered, NOV, 0, 0),
        HEAD(UNORDERED) "\"gold_rows\":3,\"prediction_rows\":3,\"columns\":["
                        "{\"gold\":\"v\",\"gold_index\":0,\"prediction\":\"w\","
                        "\"prediction_index\":0,"
                        "\"by\":\"values\"}],\"missing\":{\"count\":1,\"rows\":[[1.0]]},"
                        "\"extra\":{\"count\":1,\"rows\":[[2.5]]},\"exact\":true}");
    /* In order: the same multiset, the first difference at position 1. */
    check_text(
        diff_text("k\n1\n2\n3\n", "k\n1\n3\n2\n", &ordered, NOV, 0, 0),
        HEAD("{\"kind\":\"ordinary\",\"ignore_order\":false,\"condition_cols\":[],"
             "\"tolerance\":0.01}") "\"gold_rows\":3,\"prediction_rows\":3,"
                                    "\"columns\":[{\"gold\":\"k\",\"gold_index\":0,"
                                    "\"prediction\":\"k\","
                                    "\"prediction_index\":0,\"by\":\"name\"}],"
                                    "\"missing\":{\"count\":0,\"rows\":[]},"
                                    "\"extra\":{\"count\":0,\"rows\":[]},\"first_"
                                    "difference\":{\"position\":1,"
                                    "\"gold\":[2],\"prediction\":[3]},\"exact\":true}");
    /* Condition columns, every column right, rows scrambled between them
     * (EX 1, strict 0): the strict check's columns, rows on them. */
    long cond[] = {0, 2};
    sx_evaluation_t conditioned = {
        .condition_cols = cond, .condition_count = 2, .ignore_order = true};
    char *got = diff_text("id,name,score\n1,a,10\n2,b,20\n", "score,id\n20,1\n10,2\n",
                          &conditioned, NOV, 1, 0);
    check_text(
        got,
        "{\"task_id\":\"t1\",\"verdict\":1,\"strict\":0,\"profile\":"
        "\"spider2-lite-2025-11\",\"policy\":{\"kind\":\"ordinary\",\"ignore_order\":"
        "true,\"condition_cols\":[0,2],\"tolerance\":0.01},\"gold_rows\":2,"
        "\"prediction_rows\":2,\"columns\":[{\"gold\":\"id\",\"gold_index\":0,"
        "\"prediction\":\"id\",\"prediction_index\":1,\"by\":\"strict\"},{\"gold\":"
        "\"score\",\"gold_index\":2,\"prediction\":\"score\",\"prediction_index\":0,"
        "\"by\":\"strict\"}],\"missing\":{\"count\":2,\"rows\":[[1,10],[2,20]]},"
        "\"extra\":{\"count\":2,\"rows\":[[1,20],[2,10]]},\"exact\":true}");
    /* One prediction column for two gold columns (EX 1, strict 0). */
    got = diff_text("a,b\n1,1\n2,2\n", "x\n1\n2\n", &unordered, NOV, 1, 0);
    SX_CHECK(strstr(got, "{\"gold\":\"a\",\"gold_index\":0,\"prediction\":\"x\","
                         "\"prediction_index\":0,\"by\":\"values\"},{\"gold\":\"b\","
                         "\"gold_index\":1,\"prediction\":\"x\",\"prediction_index\":0,"
                         "\"by\":\"shared\"}]"));
    SX_CHECK(strstr(got, "\"missing\":{\"count\":0,\"rows\":[]},\"extra\":{\"count\":0,"
                         "\"rows\":[]},\"exact\":true,\"note\":\"the rows are equal with "
                         "one prediction column standing for two gold columns"));
    free(got);
    /* The frozen sort pairs -0.001 with -1.5 (EX 0, strict 1): no row differs. */
    got = diff_text("a\n0\n-1.5\n", "a\n-0.001\n-1.5\n", &unordered, NOV, 0, 1);
    SX_CHECK(strstr(got, "\"by\":\"strict\"}],\"missing\":{\"count\":0,"));
    SX_CHECK(strstr(got, "\"note\":\"the rows are equal: the frozen comparison"));
    free(got);
    /* A missing value is 0 in 2025-11 and only NaN in 2025-03; rows show it
     * as read (null). */
    got = diff_text("a,b\n,x\n1,y\n", "a,b\n0,x\n1,y\n", &unordered, MAR, 0, 0);
    SX_CHECK(strstr(got, "\"missing\":{\"count\":1,\"rows\":[[null,\"x\"]]},\"extra\":"
                         "{\"count\":1,\"rows\":[[0,\"x\"]]}"));
    free(got);
    got = diff_text("a,b\n,x\n1,y\n", "a,b\n0,x\n1,y\n", &unordered, NOV, 1, 1);
    SX_CHECK(strstr(got, "\"missing\":{\"count\":0,\"rows\":[]}"));
    free(got);
}

/* Tie tasks against their legal set, with the rule the prediction breaks. */
static void test_diff_of_tie_tasks(void)
{
    sx_evaluation_t two_of = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET,
                              .k = 2,
                              .mandatory_rows = 1,
                              .ignore_order = true};
    check_text(
        diff_text("t\nM\nA\nB\n", "t\nA\nB\n", &two_of, NOV, 0, 0),
        HEAD(
            "{\"kind\":\"any_k_from_tie_set\",\"k\":2,\"mandatory_rows\":1,"
            "\"ignore_order\":true,\"condition_cols\":[],\"tolerance\":0.01}") "\"gold_"
                                                                               "rows\":3,"
                                                                               "\"predict"
                                                                               "ion_"
                                                                               "rows\":2,"
                                                                               "\"columns"
                                                                               "\":[{"
                                                                               "\"gold\":"
                                                                               "\"t\","
                                                                               "\"gold_"
                                                                               "index\":"
                                                                               "0,"
                                                                               "\"predict"
                                                                               "ion\":"
                                                                               "\"t\","
                                                                               "\"predict"
                                                                               "ion_"
                                                                               "index\":"
                                                                               "0,\"by\":"
                                                                               "\"name\"}"
                                                                               "],"
                                                                               "\"missing"
                                                                               "\":{"
                                                                               "\"count\""
                                                                               ":1,"
                                                                               "\"rows\":"
                                                                               "[[\"M\"]]"
                                                                               ",\"from_"
                                                                               "tie_"
                                                                               "set\":0},"
                                                                               "\"extra\""
                                                                               ":"
                                                                               "{\"count"
                                                                               "\":0,"
                                                                               "\"rows\":"
                                                                               "[]},"
                                                                               "\"rule\":"
                                                                               "\"a "
                                                                               "mandatory"
                                                                               " row "
                                                                               "missing\""
                                                                               ","
                                                                               "\"exact\""
                                                                               ":true}");
    sx_evaluation_t argmax = {.kind = SX_ANSWER_ANY_ONE_ARGMAX, .ignore_order = true};
    check_text(
        diff_text("p\n5\n7\n", "p\n6\n", &argmax, NOV, 0, 0),
        HEAD("{\"kind\":\"any_one_argmax\",\"ignore_order\":true,\"condition_cols\":"
             "[],\"tolerance\":0.01}") "\"gold_rows\":2,\"prediction_rows\":1,"
                                       "\"columns\":[{\"gold\":\"p\",\"gold_index\":0,"
                                       "\"prediction\":\"p\","
                                       "\"prediction_index\":0,\"by\":\"name\"}],"
                                       "\"missing\":{\"count\":1,\"rows\":"
                                       "[],\"from_tie_set\":1},\"extra\":{\"count\":1,"
                                       "\"rows\":[[6]]},\"rule\":"
                                       "\"a row outside the tie set\",\"exact\":true}");
    char *got = diff_text("p\n5\n7\n", "p\n7\n5\n", &argmax, NOV, 0, 0);
    SX_CHECK(strstr(got,
                    "\"missing\":{\"count\":0,\"rows\":[],\"from_tie_set\":0},"
                    "\"extra\":{\"count\":0,\"rows\":[]},\"rule\":\"too many rows\""));
    free(got);
    sx_evaluation_t two = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 2};
    got = diff_text("p\n1\n2\n3\n", "p\n2\n", &two, NOV, 0, 0);
    SX_CHECK(strstr(got,
                    "\"missing\":{\"count\":1,\"rows\":[],\"from_tie_set\":1},"
                    "\"extra\":{\"count\":0,\"rows\":[]},\"rule\":\"too few rows\""));
    free(got);
    /* The strict check's columns on a subset of the right size: the legal
     * answer {2, 3} is there, the mandatory row 1 is not. */
    sx_evaluation_t mandatory = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET,
                                 .k = 2,
                                 .mandatory_rows = 1,
                                 .ignore_order = true};
    /* 1.005 equals the mandatory 1.009 and the tied 1.000: it is paired with
     * the mandatory row, so only 7 is out of place and one tie row is
     * wanted (pairing in sorted order would have taken 1.000 and found the
     * mandatory row missing). */
    got = diff_text("v\n1.009\n1.000\n5\n", "v\n1.005\n7\n", &mandatory, NOV, 0, 0);
    SX_CHECK(strstr(got,
                    "\"missing\":{\"count\":1,\"rows\":[],\"from_tie_set\":1},"
                    "\"extra\":{\"count\":1,\"rows\":[[7.0]]},\"rule\":\"a row outside "
                    "the tie set\""));
    free(got);
    got = diff_text("q,p\nm,1\nx,2\ny,3\n", "p,q\n2,x\n3,y\n", &mandatory, NOV, 0, 0);
    SX_CHECK(strstr(got,
                    "\"by\":\"name\"}],\"missing\":{\"count\":1,\"rows\":[[\"m\",1]],"
                    "\"from_tie_set\":0},"));
    free(got);
}

/* An unreadable prediction lacks every gold row; a bad evaluation is no
 * diff but an error; a row count past the shown rows is still counted. */
static void test_diff_edges(void)
{
    char gold[] = "/tmp/sx-diff-gold-XXXXXX", pred[] = "/tmp/sx-diff-pred-XXXXXX";
    int fd = mkstemp(gold);
    SX_CHECK(fd >= 0 && write(fd, "a\n1\n2\n", 6) == 6);
    close(fd);
    fd = mkstemp(pred);
    SX_CHECK(fd >= 0);
    close(fd);
    sx_evaluation_t ev = {0};
    sx_error_t err;
    sx_diff_t *diff = sx_diff_files(gold, pred, &ev, NOV, &err);
    SX_CHECK(diff && sx_diff_missing_count(diff) == 2 && sx_diff_extra_count(diff) == 0);
    json_t *o = sx_diff_json(diff, "t1", 0, 0);
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    SX_CHECK(strstr(text,
                    "\"columns\":[{\"gold\":\"a\",\"gold_index\":0,\"prediction\":null,"
                    "\"prediction_index\":null,\"by\":null}],\"missing\":{\"count\":2,"
                    "\"rows\":[[1],[2]]}"));
    SX_CHECK(strstr(text, "\"first_difference\":{\"position\":0,\"gold\":[1],"
                          "\"prediction\":null}"));
    SX_CHECK(strstr(text, "\"note\":\"the prediction cannot be read: "));
    SX_CHECK(strstr(text, "No columns to parse from file\"}"));
    free(text);
    json_decref(o);
    sx_diff_destroy(&diff);
    sx_diff_destroy(&diff);
    long beyond = 3;
    sx_evaluation_t wide = {.condition_cols = &beyond, .condition_count = 1};
    SX_CHECK(!sx_diff_files(gold, pred, &wide, NOV, &err));
    sx_evaluation_t three = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 3};
    SX_CHECK(!sx_diff_files(gold, pred, &three, NOV, &err));
    SX_CHECK(strstr(err.msg, "does not fit gold's 2 rows"));
    SX_CHECK(!sx_diff_files("/nonexistent.csv", pred, &ev, NOV, &err));
    unlink(gold);
    unlink(pred);
    /* 30 rows lacking, 20 shown. */
    char many[256] = "v\n";
    for (int i = 0; i < 30; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%d\n", i);
    sx_evaluation_t unordered = {.ignore_order = true};
    text = diff_text(many, "v\n29\n", &unordered, NOV, 0, 0);
    SX_CHECK(strstr(text,
                    "\"missing\":{\"count\":29,\"rows\":[[0],[1],[2],[3],[4],[5],[6],"
                    "[7],[8],[9],[10],[11],[12],[13],[14],[15],[16],[17],[18],[19]]}"));
    free(text);
}

#undef HEAD
#undef UNORDERED
#undef NOV
#undef MAR

void sx_diff_test(bool verbose)
{
    (void)verbose;
    test_diff_of_ordinary_tasks();
    test_diff_of_tie_tasks();
    test_diff_edges();
}
