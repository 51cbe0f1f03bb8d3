/* sample.c: the "sample" field of an input line (see sample.h). */
#include "common/sample.h"

#include "common/selftest.h"

#include <stdlib.h>
#include <string.h>

int sx_sample_get(const json_t *object, int max_samples, int *sample, sx_error_t *err)
{
    *sample = 0;
    const json_t *value = json_object_get(object, SX_SAMPLE_FIELD);
    if (!value)
        return 0;
    if (!json_is_integer(value)) {
        char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
        sx_error_set(err, SX_SAMPLE_FIELD " must be an integer, not %s",
                     text ? text : "this");
        free(text);
        return -1;
    }
    json_int_t k = json_integer_value(value);
    if (k < 0)
        return sx_error_set(err, SX_SAMPLE_FIELD " %lld is negative", (long long)k);
    if (k >= max_samples)
        return sx_error_set(err, SX_SAMPLE_FIELD " %lld is not below --max-samples %d",
                            (long long)k, max_samples);
    *sample = (int)k;
    return 0;
}

/* ---- self-test ---------------------------------------------------------- */

void sx_sample_test(bool verbose)
{
    static const struct {
        const char *line;
        int sample;        /* when good */
        const char *error; /* NULL = good */
    } cases[] = {
        {"{\"task_id\": \"t1\"}", 0, NULL},
        {"{\"sample\": 0}", 0, NULL},
        {"{\"sample\": 4}", 4, NULL},
        {"{\"sample\": 4.0}", 0, "sample must be an integer, not 4.0"},
        {"{\"sample\": 1.5}", 0, "sample must be an integer, not 1.5"},
        {"{\"sample\": \"1\"}", 0, "sample must be an integer, not \"1\""},
        {"{\"sample\": true}", 0, "sample must be an integer, not true"},
        {"{\"sample\": null}", 0, "sample must be an integer, not null"},
        {"{\"sample\": [1]}", 0, "sample must be an integer, not [1]"},
        {"{\"sample\": -1}", 0, "sample -1 is negative"},
        {"{\"sample\": 5}", 0, "sample 5 is not below --max-samples 5"},
        {"{\"sample\": 9223372036854775807}", 0,
         "sample 9223372036854775807 is not below --max-samples 5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *object = json_loads(cases[i].line, 0, NULL);
        SX_CHECK(object);
        sx_error_t err;
        sx_error_clear(&err);
        int sample = -7;
        int rc = sx_sample_get(object, 5, &sample, &err);
        if (verbose || (cases[i].error ? strcmp(err.msg, cases[i].error) != 0 : rc != 0))
            fprintf(stderr, "sample case %zu: rc %d '%s'\n", i, rc, err.msg);
        if (cases[i].error) {
            SX_CHECK(rc == -1 && strcmp(err.msg, cases[i].error) == 0 && sample == 0);
        } else {
            SX_CHECK(rc == 0 && sample == cases[i].sample);
        }
        json_decref(object);
    }
}
