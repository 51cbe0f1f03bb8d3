/* problems.h: a list of every problem a validation found, for callers that
 * must report them all instead of stopping at the first (`streamex check`).
 * Each problem is one finished message a person can act on, naming the file
 * and line or the task ID ("task t1: sources[0].kind: ..."). The loaders that
 * return a single sx_error_t (sx_task_load, sx_bench_open, ...) are built on
 * the same checks and report the first problem of the list. */
#ifndef SX_PROBLEMS_H
#define SX_PROBLEMS_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

/* A garbage input can hold millions of problems: only this many messages are
 * kept, the rest are counted (sx_problems_count includes them). */
#define SX_PROBLEMS_KEPT 1000

typedef struct _sx_problems_t sx_problems_t;

sx_problems_t *sx_problems_new(void);
void sx_problems_destroy(sx_problems_t **self_p);

/* Adds one problem (printf-style). An allocation failure still counts it. */
void sx_problems_add(sx_problems_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Every problem found, kept or not. */
size_t sx_problems_count(const sx_problems_t *self);
/* Messages kept, in the order found: min(count, SX_PROBLEMS_KEPT). */
size_t sx_problems_kept(const sx_problems_t *self);
const char *sx_problems_get(const sx_problems_t *self, size_t index);
/* Copies problem `index` into err and returns -1 (the first new problem of a
 * validation becomes a loader's error). */
int sx_problems_to_error(const sx_problems_t *self, size_t index, sx_error_t *err);

void sx_problems_test(bool verbose);

#endif
