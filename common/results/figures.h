/* figures.h: the statistics a run's outputs report (SPEC section 5,
 * docs/statistics.md), made from each method's per-task verdicts with the
 * core of stats.h: every method's 95 % bootstrap intervals of EX and strict
 * EX, and the paired comparison of two methods (the four counts, the EX
 * difference with its paired interval, the exact McNemar p-value).
 * summary.json (result.c) and `streamex compare` (cli/cmd_compare.c) both
 * report them through here, so they say the same thing the same way. */
#ifndef SX_FIGURES_H
#define SX_FIGURES_H

#include "common/error.h"
#include "common/results/stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --bootstrap B and --seed S: B resamples of the task IDs (0: no
 * intervals), drawn from the generator seeded with S. */
typedef struct {
    unsigned resamples;
    uint64_t seed;
} sx_bootstrap_t;

#define SX_BOOTSTRAP_DEFAULT_RESAMPLES 10000u
#define SX_BOOTSTRAP_DEFAULT_SEED 1u

/* Two methods' verdicts over the same task IDs, a_i and b_i each task's
 * value in [0, 1] (the verdict, or the share of right samples). A task
 * counts in both (a_i = b_i > 0), only_a (a_i > b_i), only_b (b_i > a_i) or
 * neither (both 0): with one sample, the four cells of McNemar's table;
 * with several, the signs of the per-task differences. ex_diff is
 * mean(a) - mean(b), its interval the paired bootstrap's, mcnemar_p the
 * exact two-sided binomial test of only_a in only_a + only_b at 1/2. */
typedef struct {
    bool strict; /* the strict verdicts' comparison */
    size_t both, only_a, only_b, neither;
    double ex_diff;
    bool has_ci; /* false with --bootstrap 0 or no task */
    sx_stats_interval_t ex_diff_ci;
    double mcnemar_p;
} sx_comparison_t;

/* The counts, ex_diff and mcnemar_p of values a and b (tasks each); no
 * interval (has_ci false). */
void sx_comparison_count(const double *a, const double *b, size_t tasks, bool strict,
                         sx_comparison_t *c);
/* The same with the paired bootstrap interval of ex_diff when
 * bootstrap->resamples > 0. -1 with err for a bootstrap out of bounds. */
int sx_comparison_make(const double *a, const double *b, size_t tasks, bool strict,
                       const sx_bootstrap_t *bootstrap, sx_comparison_t *c,
                       sx_error_t *err);

/* A comparison as summary.json and `compare --json` write it: {"a", "b",
 * "strict"?: true, "both", "only_a", "only_b", "neither", "ex_diff",
 * "ex_diff_ci"?: [low, high], "mcnemar_p"}. */
json_t *sx_comparison_json(const sx_comparison_t *c, const char *a, const char *b);
/* An interval as [low, high]. */
json_t *sx_interval_json(const sx_stats_interval_t *ci);

/* Every method's intervals and every pair's comparisons at once, each
 * method's resamples drawn once (sx_stats_bootstrap_methods): values[m]
 * and strict[m] are method m's per-task values (tasks each). Fills
 * ex_ci[m] and strict_ci[m] (when resamples > 0 and tasks > 0: returns 1;
 * else 0 and no interval) and, for each pair i < j in the order (0,1),
 * (0,2), ..., (1,2), ..., comparisons[2p] (EX) and comparisons[2p + 1]
 * (strict): count (count - 1) entries. -1 with err on bad bounds. */
int sx_figures_compute(const double *const *values, const double *const *strict,
                       size_t count, size_t tasks, const sx_bootstrap_t *bootstrap,
                       sx_stats_interval_t *ex_ci, sx_stats_interval_t *strict_ci,
                       sx_comparison_t *comparisons, sx_error_t *err);

/* maj@n's vote among one task's samples: paths[k] is sample k's final CSV
 * (NULL: none, and no vote). Samples hold the same relation when their CSVs
 * do as --repeat compares them (common/csv.h sx_csv_same_relation, under
 * the task's ignore_order); the winner is sx_stats_majority's: the lowest
 * sample number of the relation most samples produced, ties to the
 * relation a lower sample produced. Returns it, -1 when no sample votes,
 * -2 with err when a CSV cannot be read. */
long sx_majority_sample(const char *const *paths, size_t samples, bool ignore_order,
                        sx_error_t *err);

void sx_figures_test(bool verbose);

#endif
