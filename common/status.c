/* status.c: names of the verdicts (see status.h). */
#include "common/status.h"

#include "common/selftest.h"

#include <string.h>

static const char *s_names[SX_STATUS_COUNT] = {
    "match",   "mismatch",          "missing_prediction", "rejected_sql", "flink_error",
    "timeout", "materialize_error", "input_error",        "infra_error",  "eval_error",
};

const char *sx_status_name(sx_status_t status)
{
    return (unsigned)status < SX_STATUS_COUNT ? s_names[status] : "unknown";
}

int sx_status_parse(const char *name, sx_status_t *status)
{
    for (int i = 0; name && i < SX_STATUS_COUNT; i++) {
        if (strcmp(name, s_names[i]) == 0) {
            *status = (sx_status_t)i;
            return 0;
        }
    }
    return -1;
}

bool sx_status_is_retryable(sx_status_t status)
{
    return status == SX_STATUS_INFRA_ERROR;
}

void sx_status_test(bool verbose)
{
    (void)verbose;
    for (int i = 0; i < SX_STATUS_COUNT; i++) {
        sx_status_t parsed;
        SX_CHECK(sx_status_parse(sx_status_name((sx_status_t)i), &parsed) == 0);
        SX_CHECK(parsed == (sx_status_t)i);
    }
    sx_status_t unused;
    SX_CHECK(sx_status_parse("matched", &unused) == -1);
    SX_CHECK(sx_status_parse(NULL, &unused) == -1);
    SX_CHECK(strcmp(sx_status_name(SX_STATUS_COUNT), "unknown") == 0);
    SX_CHECK(sx_status_is_retryable(SX_STATUS_INFRA_ERROR));
    SX_CHECK(!sx_status_is_retryable(SX_STATUS_FLINK_ERROR));
}
