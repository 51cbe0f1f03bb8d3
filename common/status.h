/* status.h: the verdict vocabulary of docs/outputs.md. Every task of every
 * method ends with exactly one of these; only `match` scores 1. The names
 * are what results.jsonl and summary.json carry, kept here in one place. */
#ifndef SX_STATUS_H
#define SX_STATUS_H

#include <stdbool.h>

typedef enum {
    SX_STATUS_MATCH = 0,
    SX_STATUS_MISMATCH,
    SX_STATUS_MISSING_PREDICTION,
    SX_STATUS_REJECTED_SQL,
    SX_STATUS_FLINK_ERROR,
    SX_STATUS_TIMEOUT,
    SX_STATUS_MATERIALIZE_ERROR,
    SX_STATUS_INPUT_ERROR,
    SX_STATUS_INFRA_ERROR,
    SX_STATUS_EVAL_ERROR,
    SX_STATUS_COUNT
} sx_status_t;

/* "match", "mismatch", ... */
const char *sx_status_name(sx_status_t status);
/* Returns 0 and sets *status for a known name, -1 otherwise. */
int sx_status_parse(const char *name, sx_status_t *status);
/* infra_error is the only status worth another attempt (docs/outputs.md). */
bool sx_status_is_retryable(sx_status_t status);

void sx_status_test(bool verbose);

#endif
