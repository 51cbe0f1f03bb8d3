/* stats.h: the statistics of a run's figures, apart from how results are
 * stored. Everything is over the task IDs (SPEC section 5): a value per task
 * (0/1 for one sample, the share of correct samples with several), the
 * percentile-bootstrap 95 % interval of their mean and of a paired
 * difference, the exact McNemar p-value of two methods, pass@k and maj@n's
 * vote. A figure comes out the same for the same inputs and seed on every
 * machine: the draws come from a documented generator, not from rand().
 *
 * Functions that may have no figure return 1 when they wrote it, 0 when there
 * is none (no task, or --bootstrap 0) and -1 with err for arguments outside
 * their bounds. */
#ifndef SX_STATS_H
#define SX_STATS_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the generator -------------------------------------------------------
 * xoshiro256** 1.0 (Blackman and Vigna), its 256-bit state filled by four
 * outputs of splitmix64 started at the seed, as its authors recommend: any
 * 64-bit seed, 0 included, gives a valid state. */
typedef struct {
    uint64_t s[4];
} sx_stats_rng_t;

void sx_stats_rng_seed(sx_stats_rng_t *rng, uint64_t seed);
uint64_t sx_stats_rng_next(sx_stats_rng_t *rng);
/* A uniform integer in [0, bound), bound >= 1, without modulo bias: Lemire's
 * multiply-shift of the top 32 bits of one output, the rare low products
 * that would favour some values redrawn. */
uint32_t sx_stats_rng_below(sx_stats_rng_t *rng, uint32_t bound);

/* ---- the bootstrap -------------------------------------------------------
 * Resample b (0 <= b < resamples) draws `tasks` task indices with
 * replacement, one sx_stats_rng_below(tasks) each in turn, from one
 * generator seeded with `seed`; its mean is the sum of the drawn values, in
 * draw order, over tasks. The draws depend only on (tasks, resamples, seed),
 * so every method of a run with the same seed is resampled alike, and a
 * paired difference is the difference of two methods' resampled means. */

/* The bound on resamples: 10^6 resamples of 402 tasks take seconds and 8 MB
 * of means; more buys no precision a 95 % interval can show. */
#define SX_STATS_MAX_RESAMPLES 1000000u

typedef struct {
    double low, high;
} sx_stats_interval_t;

/* The resampled means of values[0..tasks) into means[0..resamples). Every
 * value must be finite; tasks fit 32 bits. */
int sx_stats_resample_means(const double *values, size_t tasks, unsigned resamples,
                            uint64_t seed, double *means, sx_error_t *err);
/* The 2.5th and 97.5th percentiles of draws[0..count), count >= 1, with
 * numpy.percentile's default (linear) interpolation; sorts draws. */
sx_stats_interval_t sx_stats_interval95(double *draws, size_t count);
/* The 95 % percentile-bootstrap interval of the mean of values[0..tasks). */
int sx_stats_bootstrap(const double *values, size_t tasks, unsigned resamples,
                       uint64_t seed, sx_stats_interval_t *ci, sx_error_t *err);
/* The same for mean(a_i - b_i): both methods' means over the same resamples,
 * their differences' percentiles. */
int sx_stats_bootstrap_paired(const double *a, const double *b, size_t tasks,
                              unsigned resamples, uint64_t seed, sx_stats_interval_t *ci,
                              sx_error_t *err);
/* Every interval of a run at once, each method's means drawn once: for
 * methods[0..count) of tasks values each, each[m] is method m's interval and
 * pairs[p] the paired interval of methods i - j for every i < j, in the
 * order (0,1), (0,2), ..., (0,count-1), (1,2), ...: count (count - 1) / 2
 * of them. The same bounds as one sx_stats_bootstrap(_paired) per figure, at
 * a fifth of the cost for 10 methods; it holds count x resamples means. */
int sx_stats_bootstrap_methods(const double *const *methods, size_t count, size_t tasks,
                               unsigned resamples, uint64_t seed,
                               sx_stats_interval_t *each, sx_stats_interval_t *pairs,
                               sx_error_t *err);

/* ---- paired verdicts -----------------------------------------------------
 * The exact two-sided McNemar p-value: the binomial test of only_a successes
 * in only_a + only_b discordant tasks at 1/2, as scipy.stats.binomtest's
 * two-sided pvalue, min(1, 2 P(X <= min(only_a, only_b))); 1 with no
 * discordant task. Summed from the pmf in log space, so it neither
 * overflows nor loses precision at 10^5 tasks (an underflowing tail is 0);
 * its cost grows with min(only_a, only_b). */
double sx_stats_mcnemar_p(uint64_t only_a, uint64_t only_b);

/* ---- several samples per task ------------------------------------------ */

/* pass@k of one task with `correct` of `samples` right: the unbiased
 * estimator 1 - C(samples - correct, k) / C(samples, k), as the product
 * 1 - prod_{i = samples-correct+1}^{samples} (1 - k / i); exactly 1 when
 * samples - correct < k, 0 when correct is 0. NaN unless
 * 1 <= k <= samples and correct <= samples. */
double sx_stats_pass_at_k(unsigned samples, unsigned correct, unsigned k);
/* Its mean over tasks: correct[t] of `samples` right for task t. */
int sx_stats_pass_at_k_mean(const unsigned *correct, size_t tasks, unsigned samples,
                            unsigned k, double *mean, sx_error_t *err);

/* maj@n's vote among one task's samples: relation[i] names sample i's final
 * relation (samples with equal relations have equal ids: for example the
 * lowest sample number holding that relation), negative for a sample
 * without a final CSV, which does not vote. Returns the lowest sample number
 * of the relation most samples produced, ties going to the relation a lower
 * sample number produced; -1 when no sample votes. */
long sx_stats_majority(const long *relation, size_t samples);

void sx_stats_test(bool verbose);

#endif
