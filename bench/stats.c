/* stats.c: figures of the statistics core (common/results/stats.h). Built by CMake
 * as build/stats_bench, never run by ctest.
 *   stats_bench coverage [--seeds 1000] [--tasks 402] [--resamples 2000]
 *       a simulated method whose true EX p is known: each seed draws the
 *       tasks' verdicts as Bernoulli(p) and takes the bootstrap interval of
 *       their mean; per p, the share of seeds whose interval covers p (a
 *       95 % interval should cover it in about 95 %), the shares missed below
 *       and above, the mean width and the seeds whose tasks were all alike.
 *       Then the same for a paired difference whose true value is known.
 *   stats_bench cost [--methods 10] [--tasks 402] [--resamples 10000]
 *       the intervals of a run: every method's mean and every pair's
 *       difference (45 for 10 methods) with its McNemar p-value, by
 *       sx_stats_bootstrap_methods (each method's means drawn once), then
 *       with one sx_stats_bootstrap / sx_stats_bootstrap_paired call per
 *       figure; wall and CPU seconds of each, and a checksum of the figures
 *       (equal: the two ways give the same bounds). */
#include "common/clock.h"
#include "common/mem.h"
#include "common/results/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    unsigned seeds, tasks, resamples, methods;
} options_t;

/* A Bernoulli(p) draw: the top 53 bits of an output as a uniform in [0, 1). */
static double bernoulli(sx_stats_rng_t *rng, double p)
{
    return (double)(sx_stats_rng_next(rng) >> 11) * 0x1.0p-53 < p;
}

/* ---- coverage ------------------------------------------------------------ */

typedef struct {
    unsigned covered, below, above, degenerate;
    double width;
} tally_t;

static void tally(tally_t *t, sx_stats_interval_t ci, double truth)
{
    t->covered += ci.low <= truth && truth <= ci.high;
    t->below += ci.high < truth;
    t->above += ci.low > truth;
    t->degenerate += ci.low == ci.high;
    t->width += ci.high - ci.low;
}

static void print_tally(const char *name, double truth, const tally_t *t, unsigned seeds)
{
    printf("%-8s %6.3f %9.3f %9.3f %9.3f %8.4f %10u\n", name, truth,
           (double)t->covered / seeds, (double)t->below / seeds, (double)t->above / seeds,
           t->width / seeds, t->degenerate);
}

static int coverage(const options_t *o)
{
    static const double ps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99};
    double *a = sx_alloc(o->tasks, sizeof *a), *b = sx_alloc(o->tasks, sizeof *b);
    sx_error_t err;
    printf("coverage of the 95 %% interval: %u tasks, %u resamples, %u seeds\n", o->tasks,
           o->resamples, o->seeds);
    printf("%-8s %6s %9s %9s %9s %8s %10s\n", "figure", "truth", "covered", "p>high",
           "p<low", "width", "low=high");
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        tally_t t = {0};
        for (unsigned seed = 1; seed <= o->seeds; seed++) {
            sx_stats_rng_t data;
            sx_stats_rng_seed(&data, ((uint64_t)i << 32) | seed);
            for (unsigned j = 0; j < o->tasks; j++)
                a[j] = bernoulli(&data, ps[i]);
            sx_stats_interval_t ci;
            if (sx_stats_bootstrap(a, o->tasks, o->resamples, seed, &ci, &err) != 1)
                goto failed;
            tally(&t, ci, ps[i]);
        }
        print_tally("ex", ps[i], &t, o->seeds);
    }
    /* A paired difference: A right with p 0.6; B gives A's verdict on 70 % of
     * the tasks and a right one with p 0.4 on the others, so
     * E[A - B] = 0.3 (0.6 - 0.4) = 0.06. */
    tally_t t = {0};
    for (unsigned seed = 1; seed <= o->seeds; seed++) {
        sx_stats_rng_t data;
        sx_stats_rng_seed(&data, (99ull << 32) | seed);
        for (unsigned j = 0; j < o->tasks; j++) {
            a[j] = bernoulli(&data, 0.6);
            b[j] = bernoulli(&data, 0.7) ? a[j] : bernoulli(&data, 0.4);
        }
        sx_stats_interval_t ci;
        if (sx_stats_bootstrap_paired(a, b, o->tasks, o->resamples, seed, &ci, &err) != 1)
            goto failed;
        tally(&t, ci, 0.06);
    }
    print_tally("ex_diff", 0.06, &t, o->seeds);
    free(a);
    free(b);
    return 0;
failed:
    fprintf(stderr, "stats_bench: %s\n", err.msg);
    free(a);
    free(b);
    return 1;
}

/* ---- cost ------------------------------------------------------------------ */

static double cpu_seconds(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

/* McNemar's p-value of methods i and j, from their discordant tasks. */
static double mcnemar(double **values, unsigned i, unsigned j, unsigned tasks)
{
    uint64_t only_i = 0, only_j = 0;
    for (unsigned t = 0; t < tasks; t++) {
        only_i += values[i][t] > values[j][t];
        only_j += values[i][t] < values[j][t];
    }
    return sx_stats_mcnemar_p(only_i, only_j);
}

/* Every method's interval and every pair's in one call, with the pairs'
 * p-values; a checksum of the figures, to tell the two ways apart. */
static int intervals_shared(double **values, const options_t *o, double *sum,
                            sx_error_t *err)
{
    unsigned m = o->methods;
    sx_stats_interval_t *each = sx_alloc(m, sizeof *each);
    sx_stats_interval_t *pairs = sx_alloc((size_t)m * (m - 1) / 2, sizeof *pairs);
    int rc = sx_stats_bootstrap_methods((const double *const *)values, m, o->tasks,
                                        o->resamples, 40, each, pairs, err);
    for (unsigned i = 0, p = 0; i < m && rc == 1; i++) {
        *sum += each[i].low + each[i].high;
        for (unsigned j = i + 1; j < m; j++, p++)
            *sum += pairs[p].low + pairs[p].high + mcnemar(values, i, j, o->tasks);
    }
    free(each);
    free(pairs);
    return rc;
}

/* The same figures, one call each. */
static int intervals_per_call(double **values, const options_t *o, double *sum,
                              sx_error_t *err)
{
    sx_stats_interval_t ci;
    int rc = 1;
    for (unsigned i = 0; i < o->methods && rc == 1; i++) {
        rc = sx_stats_bootstrap(values[i], o->tasks, o->resamples, 40, &ci, err);
        *sum += ci.low + ci.high;
        for (unsigned j = i + 1; j < o->methods && rc == 1; j++) {
            rc = sx_stats_bootstrap_paired(values[i], values[j], o->tasks, o->resamples,
                                           40, &ci, err);
            *sum += ci.low + ci.high + mcnemar(values, i, j, o->tasks);
        }
    }
    return rc;
}

static int cost(const options_t *o)
{
    double **values = sx_alloc(o->methods, sizeof *values);
    sx_stats_rng_t data;
    sx_stats_rng_seed(&data, 402);
    for (unsigned i = 0; i < o->methods; i++) {
        values[i] = sx_alloc(o->tasks, sizeof **values);
        for (unsigned j = 0; j < o->tasks; j++)
            values[i][j] = bernoulli(&data, 0.3 + 0.05 * i);
    }
    printf("cost: %u methods, %u pairs, %u tasks, %u resamples\n", o->methods,
           o->methods * (o->methods - 1) / 2, o->tasks, o->resamples);
    printf("%-10s %8s %8s %s\n", "way", "wall_s", "cpu_s", "checksum");
    int (*ways[])(double **, const options_t *, double *,
                  sx_error_t *) = {intervals_shared, intervals_per_call};
    const char *names[] = {"methods", "per_call"};
    int status = 0;
    for (int w = 0; w < 2 && status == 0; w++) {
        sx_error_t err;
        double sum = 0, wall = sx_clock_seconds(), cpu = cpu_seconds();
        if (ways[w](values, o, &sum, &err) != 1) {
            fprintf(stderr, "stats_bench: %s\n", err.msg);
            status = 1;
        }
        printf("%-10s %8.3f %8.3f %.17g\n", names[w], sx_clock_seconds() - wall,
               cpu_seconds() - cpu, sum);
    }
    for (unsigned i = 0; i < o->methods; i++)
        free(values[i]);
    free(values);
    return status;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: stats_bench coverage [--seeds N] [--tasks N] [--resamples B]\n"
            "       stats_bench cost [--methods N] [--tasks N] [--resamples B]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    bool is_cost = strcmp(argv[1], "cost") == 0;
    if (!is_cost && strcmp(argv[1], "coverage") != 0)
        return usage();
    options_t o = {1000, 402, is_cost ? 10000 : 2000, 10};
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 == argc)
            return usage();
        char *end;
        unsigned long value = strtoul(argv[i + 1], &end, 10);
        if (*end || value < 1 || value > SX_STATS_MAX_RESAMPLES)
            return usage();
        if (strcmp(argv[i], "--seeds") == 0)
            o.seeds = (unsigned)value;
        else if (strcmp(argv[i], "--tasks") == 0)
            o.tasks = (unsigned)value;
        else if (strcmp(argv[i], "--resamples") == 0)
            o.resamples = (unsigned)value;
        else if (strcmp(argv[i], "--methods") == 0 && value >= 2)
            o.methods = (unsigned)value;
        else
            return usage();
    }
    return is_cost ? cost(&o) : coverage(&o);
}
