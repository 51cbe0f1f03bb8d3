/* tie.c: the tie adapter (see tie.h).
 * any_one_argmax tries gold restricted to each single row.
 * any_k_from_tie_set keeps the first mandatory_rows rows and tries every
 * choice of k - mandatory_rows rows from the rest (the tie set), in
 * lexicographic order, each subset in file order. Every candidate gold has
 * exactly k rows (1 for argmax) and vectors of different lengths never match,
 * so a prediction with another row count is a mismatch without enumerating;
 * otherwise the number of candidates is bounded by SX_TIE_MAX_COMBINATIONS. */
#include "common/ex/tie.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C(n, r), or SIZE_MAX once it exceeds `cap`. */
static size_t combinations(size_t n, size_t r, size_t cap)
{
    if (r > n)
        return 0;
    if (r > n - r)
        r = n - r;
    size_t c = 1;
    for (size_t i = 1; i <= r; i++) {
        /* Exact (c is C(n-r+i-1, i-1)); c <= cap keeps the product small. */
        c = c * (n - r + i) / i;
        if (c > cap)
            return SIZE_MAX;
    }
    return c;
}

/* Advances `pick` (r ascending indexes below n) to the next combination. */
static bool next_combination(size_t *pick, size_t r, size_t n)
{
    size_t i = r;
    while (i > 0 && pick[i - 1] == n - r + i - 1)
        i--;
    if (i == 0)
        return false;
    pick[i - 1]++;
    for (size_t j = i; j < r; j++)
        pick[j] = pick[j - 1] + 1;
    return true;
}

static int try_subsets(sx_tie_check_fn *check, void *arg, const sx_frame_t *gold,
                       size_t mandatory, size_t choose, char *detail, size_t detail_size,
                       sx_error_t *err)
{
    size_t tie = sx_frame_row_count(gold) - mandatory;
    size_t *rows = sx_alloc(mandatory + choose + 1, sizeof *rows);
    size_t *pick = sx_alloc(choose + 1, sizeof *pick);
    for (size_t i = 0; i < mandatory; i++)
        rows[i] = i;
    for (size_t i = 0; i < choose; i++)
        pick[i] = i;
    int verdict = 0;
    do {
        for (size_t i = 0; i < choose; i++)
            rows[mandatory + i] = mandatory + pick[i];
        verdict = check(arg, rows, mandatory + choose, err);
    } while (verdict == 0 && next_combination(pick, choose, tie));
    free(rows);
    free(pick);
    if (verdict == 0)
        snprintf(detail, detail_size, "no allowed choice of tied gold rows matches");
    return verdict;
}

int sx_tie_frozen_check(void *target, const size_t *rows, size_t row_count,
                        sx_error_t *err)
{
    const sx_tie_target_t *t = target;
    return sx_compare_gold(t->frozen, t->gold, rows, row_count,
                           t->evaluation->condition_cols, t->evaluation->condition_count,
                           NULL, 0, err);
}

int sx_tie_strict_check(void *target, const size_t *rows, size_t row_count,
                        sx_error_t *err)
{
    const sx_tie_target_t *t = target;
    return sx_strict_gold(t->strict, t->gold, rows, row_count,
                          t->evaluation->condition_cols, t->evaluation->condition_count,
                          err);
}

int sx_tie_check_fits(const sx_frame_t *gold, const sx_evaluation_t *ev, sx_error_t *err)
{
    size_t rows = sx_frame_row_count(gold);
    if (ev->kind == SX_ANSWER_ANY_ONE_ARGMAX && rows == 0)
        return sx_error_set(err, "any_one_argmax: gold has no rows");
    if (ev->kind == SX_ANSWER_ANY_K_FROM_TIE_SET &&
        (ev->k < 1 || ev->mandatory_rows > ev->k || (size_t)ev->k > rows))
        return sx_error_set(err,
                            "any_k_from_tie_set: k=%ld (mandatory_rows=%ld) does not fit "
                            "gold's %zu rows",
                            ev->k, ev->mandatory_rows, rows);
    return 0;
}

int sx_tie_match(sx_tie_check_fn *check, void *arg, const sx_frame_t *gold,
                 size_t pred_rows, const sx_evaluation_t *ev, char *detail,
                 size_t detail_size, sx_error_t *err)
{
    size_t gold_rows = sx_frame_row_count(gold);
    bool argmax = ev->kind == SX_ANSWER_ANY_ONE_ARGMAX;
    size_t k = argmax ? 1 : (size_t)ev->k;
    size_t mandatory = argmax ? 0 : (size_t)ev->mandatory_rows;
    if (sx_tie_check_fits(gold, ev, err) != 0)
        return -1;
    /* As upstream, a bad condition column fails before any comparison. */
    if (sx_compare_check_columns(gold, ev->condition_cols, ev->condition_count, err) != 0)
        return -1;
    if (pred_rows != k) {
        snprintf(detail, detail_size, "prediction has %zu rows, a tie answer has %zu",
                 pred_rows, k);
        return 0;
    }
    size_t count =
        combinations(gold_rows - mandatory, k - mandatory, SX_TIE_MAX_COMBINATIONS);
    if (count == SIZE_MAX)
        return sx_error_set(err,
                            "tie policy allows more than %d gold combinations "
                            "(choose %zu of %zu tied rows)",
                            SX_TIE_MAX_COMBINATIONS, k - mandatory,
                            gold_rows - mandatory);
    return try_subsets(check, arg, gold, mandatory, k - mandatory, detail, detail_size,
                       err);
}

/* ---- self-test ----------------------------------------------------------- */

/* What the last tie_verdict said: the mismatch's detail or the error. */
static char s_said[SX_ERROR_MAX];

static int tie_verdict(const char *pred_csv, const char *gold_csv, sx_evaluation_t *ev,
                       sx_tie_check_fn *check)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_frame_t *pred = sx_frame_parse("p.csv", pred_csv, strlen(pred_csv), &err);
    sx_frame_t *gold = sx_frame_parse("g.csv", gold_csv, strlen(gold_csv), &err);
    SX_CHECK(pred && gold);
    sx_profile_t profile = SX_PROFILE_SPIDER2_LITE_2025_11;
    sx_tie_target_t target = {.frozen = sx_compare_new(pred, ev->ignore_order, profile),
                              .strict = sx_strict_new(pred, ev->ignore_order, profile),
                              .gold = gold,
                              .evaluation = ev};
    char detail[200] = "";
    int v = sx_tie_match(check, &target, gold, sx_frame_row_count(pred), ev, detail,
                         sizeof detail, &err);
    sx_compare_destroy(&target.frozen);
    sx_strict_destroy(&target.strict);
    sx_frame_destroy(&pred);
    sx_frame_destroy(&gold);
    snprintf(s_said, sizeof s_said, "%s", v < 0 ? err.msg : v == 0 ? detail : "");
    return v;
}

static void check_said(const char *expected)
{
    if (strcmp(s_said, expected) != 0)
        fprintf(stderr, "tie said '%s', expected '%s'\n", s_said, expected);
    SX_CHECK(strcmp(s_said, expected) == 0);
}

static int frozen(const char *pred_csv, const char *gold_csv, sx_evaluation_t *ev)
{
    return tie_verdict(pred_csv, gold_csv, ev, sx_tie_frozen_check);
}

static int strict(const char *pred_csv, const char *gold_csv, sx_evaluation_t *ev)
{
    return tie_verdict(pred_csv, gold_csv, ev, sx_tie_strict_check);
}

/* The strict check goes through the same policies: some allowed gold must
 * equal the prediction row for row. */
static void test_tie_policies_apply_to_strict(void)
{
    sx_evaluation_t argmax = {.kind = SX_ANSWER_ANY_ONE_ARGMAX};
    const char *tied = "team,points\nA,10\nB,10\n";
    SX_CHECK(frozen("t,p\nB,10\n", tied, &argmax) == 1);
    SX_CHECK(strict("t,p\nB,10\n", tied, &argmax) == 1);
    SX_CHECK(strict("t,p\nD,10\n", tied, &argmax) == 0);
    sx_evaluation_t two = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET,
                           .k = 3,
                           .mandatory_rows = 1,
                           .ignore_order = true};
    const char *ranked = "team,points\nZ,50\nA,11\nB,12\nC,13\n";
    SX_CHECK(frozen("t,p\nB,12\nZ,50\nA,11\n", ranked, &two) == 1);
    SX_CHECK(strict("t,p\nB,12\nZ,50\nA,11\n", ranked, &two) == 1);
    /* Each column is some allowed gold's, the rows are not. */
    SX_CHECK(frozen("t,p\nZ,11\nA,50\nB,12\n", ranked, &two) == 1);
    SX_CHECK(strict("t,p\nZ,11\nA,50\nB,12\n", ranked, &two) == 0);
    SX_CHECK(strict("t,p\nC,13\nZ,50\n", ranked, &two) == 0); /* 2 rows, k is 3 */
}

void sx_tie_test(bool verbose)
{
    (void)verbose;
    SX_CHECK(combinations(5, 2, 100) == 10);
    SX_CHECK(combinations(60, 30, SX_TIE_MAX_COMBINATIONS) == SIZE_MAX);
    SX_CHECK(combinations(3, 4, 100) == 0);
    sx_evaluation_t argmax = {.kind = SX_ANSWER_ANY_ONE_ARGMAX};
    const char *gold = "team,points\nA,10\nB,10\nC,10\n";
    SX_CHECK(frozen("t,p\nB,10\n", gold, &argmax) == 1);
    SX_CHECK(frozen("t,p\nD,10\n", gold, &argmax) == 0);
    check_said("no allowed choice of tied gold rows matches");
    SX_CHECK(frozen("t,p\nA,10\nB,10\n", gold, &argmax) == 0);
    check_said("prediction has 2 rows, a tie answer has 1");
    SX_CHECK(frozen("t,p\nA,10\n", "team,points\n", &argmax) == -1);
    check_said("any_one_argmax: gold has no rows");
    /* Only a tie policy needs gold rows: an ordinary gold may have none. */
    sx_error_t err;
    sx_frame_t *header_only = sx_frame_parse("g.csv", "team\n", 5, &err);
    sx_evaluation_t ordinary = {.kind = SX_ANSWER_ORDINARY};
    SX_CHECK(header_only && sx_tie_check_fits(header_only, &ordinary, &err) == 0);
    sx_frame_destroy(&header_only);
    long beyond = 4;
    sx_evaluation_t argmax_bad_cols = {.kind = SX_ANSWER_ANY_ONE_ARGMAX,
                                       .condition_cols = &beyond,
                                       .condition_count = 1};
    SX_CHECK(frozen("t,p\nA,10\nB,10\n", gold, &argmax_bad_cols) == -1);
    sx_evaluation_t two = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET,
                           .k = 3,
                           .mandatory_rows = 1,
                           .ignore_order = true};
    const char *ranked = "team,points\nZ,50\nA,10\nB,10\nC,10\n";
    SX_CHECK(frozen("t,p\nC,10\nZ,50\nA,10\n", ranked, &two) == 1);
    SX_CHECK(frozen("t,p\nC,10\nB,10\nA,10\n", ranked, &two) == 0); /* Z needed */
    /* A tied row is chosen at most once: A twice is no allowed answer. */
    SX_CHECK(frozen("t,p\nA,10\nZ,50\nA,10\n", ranked, &two) == 0);
    /* Every mandatory row is kept, each once: with two of them, Z and Y must
     * both appear beside one tied row (Z twice is no allowed answer). */
    sx_evaluation_t two_mandatory = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET,
                                     .k = 3,
                                     .mandatory_rows = 2,
                                     .ignore_order = true};
    const char *kept = "team,points\nZ,50\nY,40\nB,10\nC,10\n";
    SX_CHECK(frozen("t,p\nY,40\nC,10\nZ,50\n", kept, &two_mandatory) == 1);
    SX_CHECK(frozen("t,p\nZ,50\nZ,50\nC,10\n", kept, &two_mandatory) == 0);
    SX_CHECK(frozen("t,p\nB,10\nC,10\nZ,50\n", kept, &two_mandatory) == 0);
    sx_evaluation_t too_wide = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 5};
    SX_CHECK(frozen("t\n1\n2\n3\n4\n5\n", ranked, &too_wide) == -1);
    check_said("any_k_from_tie_set: k=5 (mandatory_rows=0) does not fit gold's 4 rows");
    sx_evaluation_t empty = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 0};
    SX_CHECK(frozen("t\n", ranked, &empty) == -1);
    check_said("any_k_from_tie_set: k=0 (mandatory_rows=0) does not fit gold's 4 rows");
    sx_evaluation_t over = {
        .kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 1, .mandatory_rows = 2};
    SX_CHECK(frozen("t\n1\n", ranked, &over) == -1);
    check_said("any_k_from_tie_set: k=1 (mandatory_rows=2) does not fit gold's 4 rows");
    /* 20 of 40 tied rows is ~1.4e11 golds: refused at once, not enumerated. */
    char gold40[512] = "v\n", pred20[256] = "v\n";
    for (int i = 0; i < 40; i++)
        snprintf(gold40 + strlen(gold40), sizeof gold40 - strlen(gold40), "7\n");
    for (int i = 0; i < 20; i++)
        snprintf(pred20 + strlen(pred20), sizeof pred20 - strlen(pred20), "7\n");
    sx_evaluation_t huge = {.kind = SX_ANSWER_ANY_K_FROM_TIE_SET, .k = 20};
    SX_CHECK(frozen(pred20, gold40, &huge) == -1);
    check_said("tie policy allows more than 100000 gold combinations (choose 20 of 40 "
               "tied rows)");
    SX_CHECK(strict(pred20, gold40, &huge) == -1);
    test_tie_policies_apply_to_strict();
}
