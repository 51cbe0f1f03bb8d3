/* predictions.h: a method's predictions file (SPEC section 3), one JSON object
 * a line: {"task_id": ID, "sql": "..."}. Loading checks it against the bench:
 * a line that is not JSON, a missing or non-string field, an unknown task ID
 * or a second prediction for one ID is an error naming file and line. A task
 * with no line is a missing prediction (sql NULL), never an error. */
#ifndef SX_PREDICTIONS_H
#define SX_PREDICTIONS_H

#include "common/error.h"
#include "common/task.h"

typedef struct _sx_predictions_t sx_predictions_t;

sx_predictions_t *sx_predictions_load(const char *path, const sx_bench_t *bench,
                                      sx_error_t *err);
void sx_predictions_destroy(sx_predictions_t **self_p);
/* The candidate SQL of a task, or NULL for a missing prediction. */
const char *sx_predictions_sql(const sx_predictions_t *self, const char *task_id);
size_t sx_predictions_count(const sx_predictions_t *self);

void sx_predictions_test(bool verbose);

#endif
