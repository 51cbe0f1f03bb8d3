/* stats_probe.c: common/results/stats.h behind JSON lines, for
 * tests/cli/stats_reference.sh, which holds the answers to scipy, numpy and
 * brute force (tests/cli/stats_reference.py). Each stdin line is one request,
 * each stdout line its answer, in order:
 *   {"op": "rng", "seed": S, "count": N}            {"out": ["hex64", ...]}
 *   {"op": "below", "seed": S, "bound": B, "count": N}   {"out": [y, ...]}
 *   {"op": "means", "values": [...], "resamples": B, "seed": S}  {"rc", "means"}
 *   {"op": "interval", "draws": [...]}              {"low", "high"}
 *   {"op": "bootstrap", "values": [...], "resamples": B, "seed": S}
 *   {"op": "paired", "a": [...], "b": [...], "resamples": B, "seed": S}
 *                                                   {"rc", "low", "high"}
 *   {"op": "mcnemar", "only_a": A, "only_b": B}     {"p"}
 *   {"op": "pass_at_k", "samples": N, "correct": C, "k": K}   {"value"} (NaN: null)
 *   {"op": "pass_at_k_mean", "correct": [...], "samples": N, "k": K}  {"rc", "mean"}
 *   {"op": "majority", "relation": [...]}           {"winner"}
 * A failing call answers {"rc": -1, "error": MESSAGE}; a request it cannot
 * read ends the probe with status 2.
 * usage: cli_stats_probe < REQUESTS > ANSWERS */
#include "common/results/jsonout.h"
#include "common/mem.h"
#include "common/results/stats.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t field_u64(json_t *request, const char *key)
{
    return (uint64_t)json_integer_value(json_object_get(request, key));
}

/* The numbers of request[key] into a new array; its length into *count. */
static double *field_doubles(json_t *request, const char *key, size_t *count)
{
    json_t *array = json_object_get(request, key);
    *count = json_array_size(array);
    double *values = sx_alloc(*count ? *count : 1, sizeof *values);
    for (size_t i = 0; i < *count; i++)
        values[i] = json_number_value(json_array_get(array, i));
    return values;
}

/* The answer of a call that returned rc (1, 0 or -1), with `name` (an
 * interval when NULL) when rc is 1. */
static json_t *rc_answer(int rc, const sx_error_t *err, const char *name, json_t *value)
{
    if (rc < 0) {
        json_decref(value);
        return json_pack("{s:i, s:s}", "rc", rc, "error", err->msg);
    }
    json_t *reply = json_pack("{s:i}", "rc", rc);
    if (rc == 1)
        json_object_set_new(reply, name, value);
    else
        json_decref(value);
    return reply;
}

static json_t *interval_answer(int rc, sx_stats_interval_t ci, const sx_error_t *err)
{
    json_t *reply = rc_answer(rc, err, "low", json_real(ci.low));
    if (rc == 1)
        json_object_set_new(reply, "high", json_real(ci.high));
    return reply;
}

static json_t *op_rng(json_t *request, bool bounded)
{
    sx_stats_rng_t rng;
    sx_stats_rng_seed(&rng, field_u64(request, "seed"));
    json_t *out = json_array();
    uint32_t bound = (uint32_t)field_u64(request, "bound");
    for (uint64_t i = field_u64(request, "count"); i > 0; i--) {
        char hex[17];
        if (bounded) {
            json_array_append_new(out, json_integer(sx_stats_rng_below(&rng, bound)));
        } else {
            snprintf(hex, sizeof hex, "%016" PRIx64, sx_stats_rng_next(&rng));
            json_array_append_new(out, json_string(hex));
        }
    }
    return json_pack("{s:o}", "out", out);
}

static json_t *op_means(json_t *request)
{
    sx_error_t err = {{0}};
    unsigned resamples = (unsigned)field_u64(request, "resamples");
    size_t tasks;
    double *values = field_doubles(request, "values", &tasks);
    double *means = sx_alloc(resamples ? resamples : 1, sizeof *means);
    int rc = sx_stats_resample_means(values, tasks, resamples, field_u64(request, "seed"),
                                     means, &err);
    json_t *array = json_array();
    for (unsigned i = 0; rc == 1 && i < resamples; i++)
        json_array_append_new(array, json_real(means[i]));
    free(values);
    free(means);
    return rc_answer(rc, &err, "means", array);
}

static json_t *op_interval(json_t *request)
{
    size_t count;
    double *draws = field_doubles(request, "draws", &count);
    sx_stats_interval_t ci = sx_stats_interval95(draws, count);
    free(draws);
    return interval_answer(1, ci, NULL);
}

static json_t *op_bootstrap(json_t *request, bool paired)
{
    sx_error_t err = {{0}};
    sx_stats_interval_t ci = {0, 0};
    unsigned resamples = (unsigned)field_u64(request, "resamples");
    uint64_t seed = field_u64(request, "seed");
    size_t tasks, others = 0;
    double *a = field_doubles(request, paired ? "a" : "values", &tasks);
    double *b = paired ? field_doubles(request, "b", &others) : NULL;
    int rc = !paired ? sx_stats_bootstrap(a, tasks, resamples, seed, &ci, &err)
             : others == tasks
                 ? sx_stats_bootstrap_paired(a, b, tasks, resamples, seed, &ci, &err)
                 : sx_error_set(&err, "a and b differ in length");
    free(a);
    free(b);
    return interval_answer(rc, ci, &err);
}

static json_t *op_pass_at_k(json_t *request, bool mean)
{
    unsigned samples = (unsigned)field_u64(request, "samples");
    unsigned k = (unsigned)field_u64(request, "k");
    if (!mean) {
        double value =
            sx_stats_pass_at_k(samples, (unsigned)field_u64(request, "correct"), k);
        return json_pack("{s:o}", "value", isnan(value) ? json_null() : json_real(value));
    }
    sx_error_t err = {{0}};
    size_t tasks;
    double *numbers = field_doubles(request, "correct", &tasks);
    unsigned *correct = sx_alloc(tasks ? tasks : 1, sizeof *correct);
    for (size_t t = 0; t < tasks; t++)
        correct[t] = (unsigned)numbers[t];
    double value = 0;
    int rc = sx_stats_pass_at_k_mean(correct, tasks, samples, k, &value, &err);
    free(numbers);
    free(correct);
    return rc_answer(rc, &err, "mean", json_real(value));
}

static json_t *op_majority(json_t *request)
{
    size_t samples;
    double *numbers = field_doubles(request, "relation", &samples);
    long *relation = sx_alloc(samples ? samples : 1, sizeof *relation);
    for (size_t i = 0; i < samples; i++)
        relation[i] = (long)numbers[i];
    long winner = sx_stats_majority(relation, samples);
    free(numbers);
    free(relation);
    return json_pack("{s:I}", "winner", (json_int_t)winner);
}

static json_t *answer(json_t *request, const char *op)
{
    if (strcmp(op, "rng") == 0 || strcmp(op, "below") == 0)
        return op_rng(request, op[0] == 'b');
    if (strcmp(op, "means") == 0)
        return op_means(request);
    if (strcmp(op, "interval") == 0)
        return op_interval(request);
    if (strcmp(op, "bootstrap") == 0 || strcmp(op, "paired") == 0)
        return op_bootstrap(request, op[0] == 'p');
    if (strcmp(op, "mcnemar") == 0)
        return json_pack("{s:f}", "p",
                         sx_stats_mcnemar_p(field_u64(request, "only_a"),
                                            field_u64(request, "only_b")));
    if (strcmp(op, "pass_at_k") == 0 || strcmp(op, "pass_at_k_mean") == 0)
        return op_pass_at_k(request, op[strlen("pass_at_k")] != '\0');
    if (strcmp(op, "majority") == 0)
        return op_majority(request);
    return NULL;
}

int main(void)
{
    char *line = NULL;
    size_t size = 0;
    int status = 0;
    for (size_t number = 1; getline(&line, &size, stdin) > 0; number++) {
        json_error_t error;
        json_t *request = json_loads(line, 0, &error);
        const char *op = json_string_value(json_object_get(request, "op"));
        json_t *reply = op ? answer(request, op) : NULL;
        json_decref(request);
        char *text = reply ? sx_json_dumps(reply, JSON_COMPACT) : NULL;
        json_decref(reply);
        if (!text) {
            fprintf(stderr, "stdin:%zu: not a request this probe knows\n", number);
            status = 2;
            break;
        }
        printf("%s\n", text);
        free(text);
    }
    free(line);
    return status;
}
