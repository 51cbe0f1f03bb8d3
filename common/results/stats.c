/* stats.c: the statistics of a run's figures (see stats.h): the seeded
 * generator, the percentile bootstrap, McNemar's exact test, pass@k and
 * maj@n's vote. Held to scipy, numpy and brute force by
 * tests/cli/stats_reference.sh; bench/stats.c prints the interval's coverage
 * and cost. */
#include "common/results/stats.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generator ------------------------------------------------------- */

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void sx_stats_rng_seed(sx_stats_rng_t *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

uint64_t sx_stats_rng_next(sx_stats_rng_t *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint32_t sx_stats_rng_below(sx_stats_rng_t *rng, uint32_t bound)
{
    uint64_t product = (sx_stats_rng_next(rng) >> 32) * (uint64_t)bound;
    uint32_t low = (uint32_t)product;
    if (low < bound) {
        /* 2^32 mod bound: the products below it are the surplus that would
         * give some values one draw more than others. */
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            product = (sx_stats_rng_next(rng) >> 32) * (uint64_t)bound;
            low = (uint32_t)product;
        }
    }
    return (uint32_t)(product >> 32);
}

/* ---- the bootstrap ------------------------------------------------------- */

/* Whether a bootstrap of a (and b, when not NULL) has a figure: 1 to go on,
 * 0 for none (no task or no resample), -1 for arguments outside the bounds. */
static int bootstrap_ready(const double *a, const double *b, size_t tasks,
                           unsigned resamples, sx_error_t *err)
{
    if (resamples > SX_STATS_MAX_RESAMPLES)
        return sx_error_set(err, "bootstrap: %u resamples, more than the bound %u",
                            resamples, SX_STATS_MAX_RESAMPLES);
    if (tasks > UINT32_MAX)
        return sx_error_set(err, "bootstrap: %zu tasks, more than the bound %u", tasks,
                            UINT32_MAX);
    for (size_t i = 0; resamples > 0 && i < tasks; i++)
        if (!isfinite(a[i]) || (b && !isfinite(b[i])))
            return sx_error_set(err, "bootstrap: the value of task %zu is not finite", i);
    return tasks > 0 && resamples > 0;
}

/* The resampled means of a and, when b is not NULL, of b over the same draws
 * (see stats.h): one pass of draws for both. */
static void resample(const double *a, const double *b, size_t tasks, unsigned resamples,
                     uint64_t seed, double *means_a, double *means_b)
{
    sx_stats_rng_t rng;
    sx_stats_rng_seed(&rng, seed);
    uint32_t n = (uint32_t)tasks;
    for (unsigned r = 0; r < resamples; r++) {
        double sum_a = 0, sum_b = 0;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t i = sx_stats_rng_below(&rng, n);
            sum_a += a[i];
            if (b)
                sum_b += b[i];
        }
        means_a[r] = sum_a / (double)tasks;
        if (b)
            means_b[r] = sum_b / (double)tasks;
    }
}

/* resample's means for every method at once, means[m * resamples + r]: the
 * draws made once for all of them, and the methods' values laid side by
 * side per task, so a draw reads one row. Each mean sums the same values in
 * the same order as resample, so the bounds are the same to the last bit.
 * resample stays for one or two methods: it keeps their sums in
 * registers, where this walk through a row costs twice the time
 * (docs/internals/measurements.md). */
static void resample_rows(const double *const *methods, size_t count, size_t tasks,
                          unsigned resamples, uint64_t seed, double *means)
{
    double *rows = sx_alloc(tasks * count, sizeof *rows);
    for (size_t i = 0; i < tasks; i++)
        for (size_t m = 0; m < count; m++)
            rows[i * count + m] = methods[m][i];
    double *sums = sx_alloc(count, sizeof *sums);
    sx_stats_rng_t rng;
    sx_stats_rng_seed(&rng, seed);
    uint32_t n = (uint32_t)tasks;
    for (unsigned r = 0; r < resamples; r++) {
        memset(sums, 0, count * sizeof *sums);
        for (uint32_t j = 0; j < n; j++) {
            const double *row = rows + (size_t)sx_stats_rng_below(&rng, n) * count;
            size_t m = 0;
            /* Four at a time: the compiler's vector adds at -O2. */
            for (; m + 4 <= count; m += 4) {
                sums[m] += row[m];
                sums[m + 1] += row[m + 1];
                sums[m + 2] += row[m + 2];
                sums[m + 3] += row[m + 3];
            }
            for (; m < count; m++)
                sums[m] += row[m];
        }
        for (size_t m = 0; m < count; m++)
            means[m * resamples + r] = sums[m] / (double)tasks;
    }
    free(sums);
    free(rows);
}

int sx_stats_resample_means(const double *values, size_t tasks, unsigned resamples,
                            uint64_t seed, double *means, sx_error_t *err)
{
    int go = bootstrap_ready(values, NULL, tasks, resamples, err);
    if (go <= 0)
        return go;
    resample(values, NULL, tasks, resamples, seed, means, NULL);
    return 1;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy.percentile(sorted, percent) with method "linear": the virtual index
 * (count - 1) * percent / 100 between two order statistics, interpolated from
 * the nearer one as numpy's _lerp does, so the last bits agree too. */
static double percentile(const double *sorted, size_t count, double percent)
{
    double index = (percent / 100.0) * (double)(count - 1);
    double below = floor(index);
    size_t low = (size_t)below;
    size_t high = low + 1 < count ? low + 1 : count - 1;
    double gamma = index - below, a = sorted[low], b = sorted[high], diff = b - a;
    return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

sx_stats_interval_t sx_stats_interval95(double *draws, size_t count)
{
    qsort(draws, count, sizeof *draws, compare_doubles);
    return (sx_stats_interval_t){percentile(draws, count, 2.5),
                                 percentile(draws, count, 97.5)};
}

int sx_stats_bootstrap(const double *values, size_t tasks, unsigned resamples,
                       uint64_t seed, sx_stats_interval_t *ci, sx_error_t *err)
{
    return sx_stats_bootstrap_paired(values, NULL, tasks, resamples, seed, ci, err);
}

/* b NULL: the interval of a's mean alone. */
int sx_stats_bootstrap_paired(const double *a, const double *b, size_t tasks,
                              unsigned resamples, uint64_t seed, sx_stats_interval_t *ci,
                              sx_error_t *err)
{
    int go = bootstrap_ready(a, b, tasks, resamples, err);
    if (go <= 0)
        return go;
    double *means = sx_alloc(resamples, sizeof *means);
    double *other = b ? sx_alloc(resamples, sizeof *other) : NULL;
    resample(a, b, tasks, resamples, seed, means, other);
    for (unsigned i = 0; b && i < resamples; i++)
        means[i] -= other[i];
    *ci = sx_stats_interval95(means, resamples);
    free(means);
    free(other);
    return 1;
}

int sx_stats_bootstrap_methods(const double *const *methods, size_t count, size_t tasks,
                               unsigned resamples, uint64_t seed,
                               sx_stats_interval_t *each, sx_stats_interval_t *pairs,
                               sx_error_t *err)
{
    int go = count > 0;
    for (size_t m = 0; m < count && go > 0; m++)
        go = bootstrap_ready(methods[m], NULL, tasks, resamples, err);
    if (go <= 0)
        return go;
    double *means = sx_alloc(count * (size_t)resamples, sizeof *means);
    double *scratch = sx_alloc(resamples, sizeof *scratch);
    resample_rows(methods, count, tasks, resamples, seed, means);
    for (size_t i = 0, p = 0; i < count; i++) {
        const double *mean_i = means + i * resamples;
        memcpy(scratch, mean_i, resamples * sizeof *scratch);
        each[i] = sx_stats_interval95(scratch, resamples);
        for (size_t j = i + 1; j < count; j++, p++) {
            const double *mean_j = means + j * resamples;
            for (unsigned r = 0; r < resamples; r++)
                scratch[r] = mean_i[r] - mean_j[r];
            pairs[p] = sx_stats_interval95(scratch, resamples);
        }
    }
    free(means);
    free(scratch);
    return 1;
}

/* ---- McNemar ------------------------------------------------------------- */

double sx_stats_mcnemar_p(uint64_t only_a, uint64_t only_b)
{
    uint64_t n = only_a + only_b, k = only_a < only_b ? only_a : only_b;
    /* k = (n - 1) / 2 or n / 2: the lower tail holds half the mass or more. */
    if (2 * k + 1 >= n)
        return 1.0;
    /* log C(n, k) = sum_{j=1..k} log((n - k + j) / j), summed with Kahan's
     * compensation: its terms are exact to an ulp, the sum to a few, where
     * lgamma's would each carry an ulp of log(n!) (1e-10 at n = 10^5). */
    double log_choose = 0, carry = 0;
    for (uint64_t j = 1; j <= k; j++) {
        double term = log((double)(n - k + j) / (double)j) - carry;
        double sum = log_choose + term;
        carry = (sum - log_choose) - term;
        log_choose = sum;
    }
    /* P(X <= k) / P(X = k): the pmf relative to its last term, descending
     * by pmf(i - 1) = pmf(i) i / (n - i + 1) until the terms underflow. */
    double tail = 1, term = 1;
    for (uint64_t i = k; i > 0 && term > 0; i--) {
        term *= (double)i / (double)(n - i + 1);
        tail += term;
    }
    double log_cdf = log_choose - (double)n * M_LN2 + log(tail);
    double p = 2 * exp(log_cdf);
    return p < 1 ? p : 1.0;
}

/* ---- pass@k and maj@n ---------------------------------------------------- */

double sx_stats_pass_at_k(unsigned samples, unsigned correct, unsigned k)
{
    if (k < 1 || k > samples || correct > samples)
        return NAN;
    if (samples - correct < k)
        return 1.0;
    /* C(samples - correct, k) / C(samples, k): the chance that k samples
     * drawn without replacement are all wrong. */
    double all_wrong = 1.0;
    for (unsigned i = samples - correct + 1; i <= samples; i++)
        all_wrong *= 1.0 - (double)k / (double)i;
    return 1.0 - all_wrong;
}

int sx_stats_pass_at_k_mean(const unsigned *correct, size_t tasks, unsigned samples,
                            unsigned k, double *mean, sx_error_t *err)
{
    if (k < 1 || k > samples)
        return sx_error_set(err, "pass@%u: k must be between 1 and the %u samples", k,
                            samples);
    if (tasks == 0)
        return 0;
    double sum = 0;
    for (size_t t = 0; t < tasks; t++) {
        if (correct[t] > samples)
            return sx_error_set(err, "pass@%u: task %zu has %u correct of %u samples", k,
                                t, correct[t], samples);
        sum += sx_stats_pass_at_k(samples, correct[t], k);
    }
    *mean = sum / (double)tasks;
    return 1;
}

typedef struct {
    long relation;
    size_t sample;
} vote_t;

static int compare_votes(const void *a, const void *b)
{
    const vote_t *x = a, *y = b;
    if (x->relation != y->relation)
        return (x->relation > y->relation) - (x->relation < y->relation);
    return (x->sample > y->sample) - (x->sample < y->sample);
}

long sx_stats_majority(const long *relation, size_t samples)
{
    vote_t *votes = sx_alloc(samples ? samples : 1, sizeof *votes);
    size_t count = 0;
    for (size_t i = 0; i < samples; i++)
        if (relation[i] >= 0)
            votes[count++] = (vote_t){relation[i], i};
    /* Sorted by relation, then sample: each relation's run of votes starts at
     * its lowest sample number. */
    qsort(votes, count, sizeof *votes, compare_votes);
    long winner = -1;
    size_t most = 0;
    for (size_t start = 0, end = 0; start < count; start = end) {
        while (end < count && votes[end].relation == votes[start].relation)
            end++;
        size_t size = end - start;
        if (size > most || (size == most && (long)votes[start].sample < winner)) {
            most = size;
            winner = (long)votes[start].sample;
        }
    }
    free(votes);
    return winner;
}

/* ---- self-test ----------------------------------------------------------- */

static bool close_to(double x, double want, double relative)
{
    return fabs(x - want) <= relative * fabs(want);
}

static void test_rng(void)
{
    /* The authors' reference output of xoshiro256** from the state 1, 2, 3, 4,
     * and splitmix64's first output from 0. */
    sx_stats_rng_t rng = {{1, 2, 3, 4}};
    const uint64_t want[] = {11520u, 0u, 1509978240u, 1215971899390074240u,
                             1216172134540287360u};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        SX_CHECK(sx_stats_rng_next(&rng) == want[i]);
    sx_stats_rng_seed(&rng, 0);
    SX_CHECK(rng.s[0] == 0xe220a8397b1dcdafu);
    /* bound 3 * 2^30: a draw without the rejection would give y = 0 mod 3
     * two of the 2^32 inputs and the others one, half the draws instead of
     * a third. */
    sx_stats_rng_seed(&rng, 7);
    size_t hits = 0, draws = 30000;
    for (size_t i = 0; i < draws; i++) {
        uint32_t y = sx_stats_rng_below(&rng, 3u << 30);
        SX_CHECK(y < 3u << 30);
        hits += y % 3 == 0;
    }
    SX_CHECK(fabs((double)hits / (double)draws - 1.0 / 3) < 0.01);
    /* Small bounds: every value about as often (chi-square, 9 degrees of
     * freedom, under its 0.999 quantile 27.9), 1 always 0. */
    size_t counts[10] = {0};
    for (size_t i = 0; i < 100000; i++)
        counts[sx_stats_rng_below(&rng, 10)]++;
    double chi2 = 0;
    for (size_t v = 0; v < 10; v++)
        chi2 += (counts[v] - 10000.0) * (counts[v] - 10000.0) / 10000.0;
    SX_CHECK(chi2 < 27.9);
    for (size_t i = 0; i < 100; i++)
        SX_CHECK(sx_stats_rng_below(&rng, 1) == 0);
}

static void test_bootstrap(void)
{
    /* numpy.percentile([1, 2, 3, 4, 5], [2.5, 97.5]) = [1.1, 4.9]. */
    double draws[] = {5, 3, 1, 4, 2};
    sx_stats_interval_t ci = sx_stats_interval95(draws, 5);
    SX_CHECK(close_to(ci.low, 1.1, 1e-15) && close_to(ci.high, 4.9, 1e-15));
    double one[] = {0.25};
    ci = sx_stats_interval95(one, 1);
    SX_CHECK(ci.low == 0.25 && ci.high == 0.25);

    enum { TASKS = 402 };
    double half[TASKS], same[TASKS], ones[TASKS], zeros[TASKS], odd[TASKS];
    for (size_t i = 0; i < TASKS; i++) {
        half[i] = i % 2;
        same[i] = 0.75;
        odd[i] = (double)(i * 7 % 13) / 13.0; /* sums that round: order shows */
        ones[i] = 1;
        zeros[i] = 0;
    }
    sx_error_t err;
    SX_CHECK(sx_stats_bootstrap(same, TASKS, 500, 1, &ci, &err) == 1);
    SX_CHECK(ci.low == 0.75 && ci.high == 0.75);
    /* Half right of 402: the mean's standard error is 0.5 / sqrt(402) =
     * 0.0249, the interval about 0.5 -+ 0.049. */
    SX_CHECK(sx_stats_bootstrap(half, TASKS, 2000, 1, &ci, &err) == 1);
    SX_CHECK(ci.low > 0.44 && ci.low < 0.46 && ci.high > 0.54 && ci.high < 0.56);
    sx_stats_interval_t again, other;
    SX_CHECK(sx_stats_bootstrap(half, TASKS, 2000, 1, &again, &err) == 1);
    SX_CHECK(again.low == ci.low && again.high == ci.high);
    SX_CHECK(sx_stats_bootstrap(half, TASKS, 2000, 2, &other, &err) == 1);
    SX_CHECK(other.low != ci.low || other.high != ci.high);
    /* Paired against all zeros: the same draws, so the single interval. */
    SX_CHECK(sx_stats_bootstrap_paired(half, zeros, TASKS, 2000, 1, &other, &err) == 1);
    SX_CHECK(other.low == ci.low && other.high == ci.high);
    SX_CHECK(sx_stats_bootstrap_paired(half, half, TASKS, 2000, 1, &other, &err) == 1);
    SX_CHECK(other.low == 0 && other.high == 0);
    SX_CHECK(sx_stats_bootstrap_paired(ones, zeros, TASKS, 100, 1, &other, &err) == 1);
    SX_CHECK(other.low == 1 && other.high == 1);

    /* A run's intervals at once: the bounds of one call per figure, to the
     * last bit. */
    const double *methods[] = {half, ones, same, odd};
    sx_stats_interval_t each[4], pairs[6], want;
    SX_CHECK(sx_stats_bootstrap_methods(methods, 4, TASKS, 300, 5, each, pairs, &err) ==
             1);
    for (size_t i = 0, p = 0; i < 4; i++) {
        SX_CHECK(sx_stats_bootstrap(methods[i], TASKS, 300, 5, &want, &err) == 1);
        SX_CHECK(each[i].low == want.low && each[i].high == want.high);
        for (size_t j = i + 1; j < 4; j++, p++) {
            SX_CHECK(sx_stats_bootstrap_paired(methods[i], methods[j], TASKS, 300, 5,
                                               &want, &err) == 1);
            SX_CHECK(pairs[p].low == want.low && pairs[p].high == want.high);
        }
    }
    SX_CHECK(sx_stats_bootstrap_methods(methods, 0, TASKS, 300, 5, each, pairs, &err) ==
             0);
    SX_CHECK(sx_stats_bootstrap_methods(methods, 3, TASKS, 0, 5, each, pairs, &err) == 0);

    /* No figure for no task or no resample; bounds refused with a message. */
    SX_CHECK(sx_stats_bootstrap(half, 0, 100, 1, &ci, &err) == 0);
    SX_CHECK(sx_stats_bootstrap(half, TASKS, 0, 1, &ci, &err) == 0);
    SX_CHECK(sx_stats_bootstrap(half, 0, SX_STATS_MAX_RESAMPLES + 1, 1, &ci, &err) == -1);
    SX_CHECK(strcmp(err.msg, "bootstrap: 1000001 resamples, more than the bound "
                             "1000000") == 0);
    double means[4];
    SX_CHECK(sx_stats_resample_means(half, TASKS, 4, 1, means, &err) == 1);
    half[7] = NAN;
    SX_CHECK(sx_stats_resample_means(half, TASKS, 4, 1, means, &err) == -1);
    SX_CHECK(strcmp(err.msg, "bootstrap: the value of task 7 is not finite") == 0);
    SX_CHECK(sx_stats_bootstrap_paired(zeros, half, TASKS, 4, 1, &ci, &err) == -1);
    methods[2] = half;
    SX_CHECK(sx_stats_bootstrap_methods(methods, 3, TASKS, 4, 1, each, pairs, &err) ==
             -1);
}

/* C(n, k) exactly, n <= 60. */
static uint64_t choose(unsigned n, unsigned k)
{
    uint64_t c = 1;
    for (unsigned j = 1; j <= k; j++)
        c = c * (n - k + j) / j;
    return c;
}

static void test_mcnemar(void)
{
    SX_CHECK(sx_stats_mcnemar_p(0, 0) == 1.0);
    SX_CHECK(sx_stats_mcnemar_p(3, 3) == 1.0);
    SX_CHECK(sx_stats_mcnemar_p(2, 3) == 1.0);
    SX_CHECK(sx_stats_mcnemar_p(5, 0) == 0.0625);
    SX_CHECK(close_to(sx_stats_mcnemar_p(1, 5), 14.0 / 64, 1e-14));
    SX_CHECK(sx_stats_mcnemar_p(1, 5) == sx_stats_mcnemar_p(5, 1));
    /* Integer sums of binomial coefficients, every split of n <= 60. */
    for (unsigned n = 1; n <= 60; n++)
        for (unsigned a = 0; 2 * a + 1 < n; a++) {
            uint64_t mass = 0;
            for (unsigned i = 0; i <= a; i++)
                mass += choose(n, i);
            double want = ldexp((double)mass, 1 - (int)n);
            SX_CHECK(close_to(sx_stats_mcnemar_p(a, n - a), want, 1e-13));
        }
    SX_CHECK(sx_stats_mcnemar_p(0, 2000) == 0.0);
    double p = sx_stats_mcnemar_p(49800, 50200);
    SX_CHECK(p > 0.2 && p < 0.25);
}

static void test_pass_at_k(void)
{
    SX_CHECK(close_to(sx_stats_pass_at_k(5, 2, 1), 0.4, 1e-15));
    SX_CHECK(close_to(sx_stats_pass_at_k(5, 2, 2), 0.7, 1e-15));
    SX_CHECK(sx_stats_pass_at_k(5, 4, 2) == 1.0);
    SX_CHECK(sx_stats_pass_at_k(5, 0, 5) == 0.0);
    SX_CHECK(isnan(sx_stats_pass_at_k(5, 6, 1)) && isnan(sx_stats_pass_at_k(5, 1, 0)) &&
             isnan(sx_stats_pass_at_k(5, 1, 6)));
    for (unsigned n = 1; n <= 30; n++)
        for (unsigned c = 0; c <= n; c++)
            for (unsigned k = 1; k <= n; k++) {
                double want = 1.0 - (double)choose(n - c, k) / (double)choose(n, k);
                SX_CHECK(fabs(sx_stats_pass_at_k(n, c, k) - want) < 1e-14);
            }
    unsigned correct[] = {0, 1, 2};
    double mean = -1;
    sx_error_t err;
    SX_CHECK(sx_stats_pass_at_k_mean(correct, 3, 2, 1, &mean, &err) == 1 && mean == 0.5);
    SX_CHECK(sx_stats_pass_at_k_mean(correct, 3, 2, 2, &mean, &err) == 1 &&
             close_to(mean, 2.0 / 3, 1e-15));
    SX_CHECK(sx_stats_pass_at_k_mean(correct, 0, 2, 1, &mean, &err) == 0);
    SX_CHECK(sx_stats_pass_at_k_mean(correct, 3, 1, 1, &mean, &err) == -1);
    SX_CHECK(strcmp(err.msg, "pass@1: task 2 has 2 correct of 1 samples") == 0);
    SX_CHECK(sx_stats_pass_at_k_mean(correct, 3, 2, 3, &mean, &err) == -1);
    SX_CHECK(strcmp(err.msg, "pass@3: k must be between 1 and the 2 samples") == 0);
}

static void test_majority(void)
{
    SX_CHECK(sx_stats_majority(NULL, 0) == -1);
    SX_CHECK(sx_stats_majority((long[]){-1, -1}, 2) == -1);
    SX_CHECK(sx_stats_majority((long[]){5, 7, 7}, 3) == 1);
    SX_CHECK(sx_stats_majority((long[]){5, 7, 5, 7}, 4) == 0);
    SX_CHECK(sx_stats_majority((long[]){7, 5, 5, 7}, 4) == 0);
    SX_CHECK(sx_stats_majority((long[]){9, 5, 5, 7}, 4) == 1);
    SX_CHECK(sx_stats_majority((long[]){-1, 3, 4}, 3) == 1);
    SX_CHECK(sx_stats_majority((long[]){3, -1, 4, 4}, 4) == 2);
    SX_CHECK(sx_stats_majority((long[]){-1, -1, -1, 2, 2, 0}, 6) == 3);
}

void sx_stats_test(bool verbose)
{
    (void)verbose;
    test_rng();
    test_bootstrap();
    test_mcnemar();
    test_pass_at_k();
    test_majority();
}
