/* figures.c: a run's statistics from per-task verdicts (see figures.h). The
 * JSON names of the comparisons live here, beside the code that fills them;
 * the rest of summary.json's are result.c's. */
#include "common/results/figures.h"

#include "common/csv.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sx_comparison_count(const double *a, const double *b, size_t tasks, bool strict,
                         sx_comparison_t *c)
{
    memset(c, 0, sizeof *c);
    c->strict = strict;
    double sum = 0;
    for (size_t t = 0; t < tasks; t++) {
        if (a[t] > b[t])
            c->only_a++;
        else if (b[t] > a[t])
            c->only_b++;
        else if (a[t] > 0)
            c->both++;
        else
            c->neither++;
        sum += a[t] - b[t];
    }
    c->ex_diff = tasks ? sum / (double)tasks : 0.0;
    c->mcnemar_p = sx_stats_mcnemar_p(c->only_a, c->only_b);
}

int sx_comparison_make(const double *a, const double *b, size_t tasks, bool strict,
                       const sx_bootstrap_t *bootstrap, sx_comparison_t *c,
                       sx_error_t *err)
{
    sx_comparison_count(a, b, tasks, strict, c);
    int rc = sx_stats_bootstrap_paired(a, b, tasks, bootstrap->resamples, bootstrap->seed,
                                       &c->ex_diff_ci, err);
    c->has_ci = rc == 1;
    return rc < 0 ? -1 : 0;
}

json_t *sx_interval_json(const sx_stats_interval_t *ci)
{
    return json_pack("[ff]", ci->low, ci->high);
}

json_t *sx_comparison_json(const sx_comparison_t *c, const char *a, const char *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "a", json_string(a));
    json_object_set_new(o, "b", json_string(b));
    if (c->strict)
        json_object_set_new(o, "strict", json_true());
    json_object_set_new(o, "both", json_integer((json_int_t)c->both));
    json_object_set_new(o, "only_a", json_integer((json_int_t)c->only_a));
    json_object_set_new(o, "only_b", json_integer((json_int_t)c->only_b));
    json_object_set_new(o, "neither", json_integer((json_int_t)c->neither));
    json_object_set_new(o, "ex_diff", json_real(c->ex_diff));
    if (c->has_ci)
        json_object_set_new(o, "ex_diff_ci", sx_interval_json(&c->ex_diff_ci));
    json_object_set_new(o, "mcnemar_p", json_real(c->mcnemar_p));
    return o;
}

int sx_figures_compute(const double *const *values, const double *const *strict,
                       size_t count, size_t tasks, const sx_bootstrap_t *bootstrap,
                       sx_stats_interval_t *ex_ci, sx_stats_interval_t *strict_ci,
                       sx_comparison_t *comparisons, sx_error_t *err)
{
    size_t pairs = count * (count - (count > 0)) / 2;
    sx_stats_interval_t *ex_pairs = sx_alloc(pairs + 1, sizeof *ex_pairs);
    sx_stats_interval_t *strict_pairs = sx_alloc(pairs + 1, sizeof *strict_pairs);
    int rc = sx_stats_bootstrap_methods(values, count, tasks, bootstrap->resamples,
                                        bootstrap->seed, ex_ci, ex_pairs, err);
    if (rc > 0)
        rc = sx_stats_bootstrap_methods(strict, count, tasks, bootstrap->resamples,
                                        bootstrap->seed, strict_ci, strict_pairs, err);
    for (size_t i = 0, p = 0; rc >= 0 && i < count; i++)
        for (size_t j = i + 1; j < count; j++, p++) {
            sx_comparison_t *ex = &comparisons[2 * p], *st = &comparisons[2 * p + 1];
            sx_comparison_count(values[i], values[j], tasks, false, ex);
            sx_comparison_count(strict[i], strict[j], tasks, true, st);
            ex->has_ci = st->has_ci = rc == 1;
            ex->ex_diff_ci = ex_pairs[p];
            st->ex_diff_ci = strict_pairs[p];
        }
    free(ex_pairs);
    free(strict_pairs);
    return rc;
}

long sx_majority_sample(const char *const *paths, size_t samples, bool ignore_order,
                        sx_error_t *err)
{
    /* relation[k]: the lowest sample holding sample k's relation; each
     * sample is compared with the first sample of every relation before it. */
    long *relation = sx_alloc(samples + 1, sizeof *relation);
    long winner = -1;
    for (size_t k = 0; k < samples && winner == -1; k++) {
        relation[k] = paths[k] ? (long)k : -1;
        for (size_t j = 0; paths[k] && j < k && relation[k] == (long)k; j++) {
            bool same = false;
            if (relation[j] != (long)j)
                continue; /* no CSV, or not its relation's first sample */
            if (sx_csv_same_relation(paths[j], paths[k], ignore_order, &same, err) != 0)
                winner = -2;
            else if (same)
                relation[k] = (long)j;
        }
    }
    if (winner == -1)
        winner = sx_stats_majority(relation, samples);
    free(relation);
    return winner;
}

/* ---- self-test ----------------------------------------------------------- */

/* The four cells and McNemar's p of a small table worked by hand: 2 both,
 * 3 only A, 1 only B, 2 neither: p = 2 P(X <= 1 | 4, 1/2) = 2 * 5/16. */
static void test_counts_of_a_small_table(void)
{
    const double a[] = {1, 1, 1, 1, 1, 0, 0, 0}, b[] = {1, 1, 0, 0, 0, 1, 0, 0};
    sx_comparison_t c;
    sx_comparison_count(a, b, 8, false, &c);
    SX_CHECK(c.both == 2 && c.only_a == 3 && c.only_b == 1 && c.neither == 2);
    SX_CHECK(c.ex_diff == 0.25 && fabs(c.mcnemar_p - 0.625) < 1e-12 && !c.has_ci);
    /* Shares of samples: the signs of the differences; 0.5 = 0.5 is both. */
    const double x[] = {0.5, 1, 0, 0}, y[] = {0.5, 0.5, 0.5, 0};
    sx_comparison_count(x, y, 4, true, &c);
    SX_CHECK(c.both == 1 && c.only_a == 1 && c.only_b == 1 && c.neither == 1);
    SX_CHECK(c.strict && c.ex_diff == 0 && c.mcnemar_p == 1);
    sx_comparison_count(x, y, 0, false, &c);
    SX_CHECK(c.ex_diff == 0 && c.mcnemar_p == 1);
}

/* One call for a run gives each pair the interval sx_stats_bootstrap_paired
 * gives alone, and each method sx_stats_bootstrap's; B = 0 gives none. */
static void test_run_figures_match_one_call_each(void)
{
    double a[50], b[50], c[50];
    for (int t = 0; t < 50; t++) {
        a[t] = t % 3 != 0;
        b[t] = t % 2 == 0;
        c[t] = t % 5 == 0;
    }
    const double *values[] = {a, b, c}, *strict[] = {b, c, a};
    sx_bootstrap_t bootstrap = {2000, 7};
    sx_stats_interval_t ex_ci[3], strict_ci[3], alone;
    sx_comparison_t cmp[6], one;
    sx_error_t err;
    SX_CHECK(sx_figures_compute(values, strict, 3, 50, &bootstrap, ex_ci, strict_ci, cmp,
                                &err) == 1);
    SX_CHECK(sx_stats_bootstrap(c, 50, 2000, 7, &alone, &err) == 1);
    SX_CHECK(alone.low == ex_ci[2].low && alone.high == ex_ci[2].high);
    SX_CHECK(alone.low == strict_ci[1].low && alone.high == strict_ci[1].high);
    /* pair (1, 2) is the third; its strict twin compares c with a */
    SX_CHECK(sx_comparison_make(b, c, 50, false, &bootstrap, &one, &err) == 0);
    SX_CHECK(one.has_ci && cmp[4].has_ci && !cmp[4].strict && cmp[5].strict);
    SX_CHECK(one.ex_diff_ci.low == cmp[4].ex_diff_ci.low &&
             one.ex_diff_ci.high == cmp[4].ex_diff_ci.high);
    SX_CHECK(one.only_a == cmp[4].only_a && one.mcnemar_p == cmp[4].mcnemar_p);
    SX_CHECK(sx_comparison_make(c, a, 50, true, &bootstrap, &one, &err) == 0);
    SX_CHECK(one.ex_diff_ci.low == cmp[5].ex_diff_ci.low && one.both == cmp[5].both);
    bootstrap.resamples = 0;
    SX_CHECK(sx_figures_compute(values, strict, 3, 50, &bootstrap, ex_ci, strict_ci, cmp,
                                &err) == 0);
    sx_comparison_count(a, b, 50, false, &one);
    SX_CHECK(!cmp[0].has_ci && cmp[0].only_a == one.only_a && cmp[0].both == one.both);
    SX_CHECK(sx_comparison_make(a, b, 50, false, &bootstrap, &one, &err) == 0 &&
             !one.has_ci);
    bootstrap.resamples = SX_STATS_MAX_RESAMPLES + 1;
    SX_CHECK(sx_figures_compute(values, strict, 3, 50, &bootstrap, ex_ci, strict_ci, cmp,
                                &err) == -1);
    SX_CHECK(sx_comparison_make(a, b, 50, false, &bootstrap, &one, &err) == -1);
    SX_CHECK(sx_figures_compute(values, strict, 0, 50, &bootstrap, ex_ci, strict_ci, cmp,
                                &err) == 0);
}

/* The JSON of a comparison, with and without its interval. */
static void test_comparison_json(void)
{
    sx_comparison_t c = {.strict = true,
                         .both = 1,
                         .only_a = 2,
                         .only_b = 0,
                         .neither = 3,
                         .ex_diff = 1.0 / 3,
                         .has_ci = true,
                         .ex_diff_ci = {0.0, 0.5},
                         .mcnemar_p = 0.5};
    json_t *o = sx_comparison_json(&c, "m1", "m2");
    char *text =
        json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    SX_CHECK(strcmp(text, "{\"a\":\"m1\",\"b\":\"m2\",\"strict\":true,\"both\":1,"
                          "\"only_a\":2,\"only_b\":0,\"neither\":3,\"ex_diff\":0.333333,"
                          "\"ex_diff_ci\":[0.0,0.5],\"mcnemar_p\":0.5}") == 0);
    free(text);
    json_decref(o);
    c.strict = c.has_ci = false;
    o = sx_comparison_json(&c, "m1", "m2");
    SX_CHECK(!json_object_get(o, "strict") && !json_object_get(o, "ex_diff_ci"));
    json_decref(o);
}

/* maj@n's vote over CSV files: the same rows in another order are one
 * relation where order is ignored and two where it counts; a sample without
 * a CSV does not vote; ties go to the lower sample's relation; an unreadable
 * CSV is an error. */
static void test_majority_of_relations(void)
{
    char dir[] = "/tmp/sx-figures-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    static const char *const bodies[] = {"a\n1\n2\n", "a\n2\n1\n", "a\n3\n",
                                         "\"a\"\n\"1\"\n2\n"};
    char paths[4][PATH_MAX];
    for (int i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/s%d.csv", dir, i);
        SX_CHECK(sx_file_write_atomic(paths[i], bodies[i], strlen(bodies[i]), NULL) == 0);
    }
    /* samples: 3, (1,2) ordered, (2,1), (1,2) quoted: where order counts,
     * {1, 3} hold one relation (quoting changes no field) */
    const char *four[] = {paths[2], paths[0], paths[1], paths[3]};
    sx_error_t err;
    SX_CHECK(sx_majority_sample(four, 4, false, &err) == 1);
    SX_CHECK(sx_majority_sample(four, 4, true, &err) == 1);
    /* 3, (2,1), none, (1,2): ordered, three relations of one vote each: the
     * lowest sample wins; unordered, samples 1 and 3 agree */
    const char *gaps[] = {paths[2], paths[1], NULL, paths[0]};
    SX_CHECK(sx_majority_sample(gaps, 4, false, &err) == 0);
    SX_CHECK(sx_majority_sample(gaps, 4, true, &err) == 1);
    const char *none[] = {NULL, NULL};
    SX_CHECK(sx_majority_sample(none, 2, true, &err) == -1);
    SX_CHECK(sx_majority_sample(none, 0, true, &err) == -1);
    char gone[PATH_MAX + 16];
    snprintf(gone, sizeof gone, "%s/gone.csv", dir);
    const char *broken[] = {paths[0], gone};
    SX_CHECK(sx_majority_sample(broken, 2, true, &err) == -2 &&
             strstr(err.msg, "gone.csv"));
    const char *alone[] = {gone};
    SX_CHECK(sx_majority_sample(alone, 1, true, &err) == 0); /* nothing to compare */
    for (int i = 0; i < 4; i++)
        unlink(paths[i]);
    rmdir(dir);
}

void sx_figures_test(bool verbose)
{
    (void)verbose;
    test_majority_of_relations();
    test_counts_of_a_small_table();
    test_run_figures_match_one_call_each();
    test_comparison_json();
}
