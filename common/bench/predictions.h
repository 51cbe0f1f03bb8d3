/* predictions.h: a method's predictions file (docs/predictions.md), one JSON object
 * a line: {"task_id": ID, "sql": "...", "sample"?: K}. Loading checks it against
 * the bench: a line that is not JSON, a missing or non-string field, an
 * unknown task ID, a bad sample number (common/sample.h) or a second
 * prediction for one (task, sample) is an error naming file and line. A
 * (task, sample) with no line is a missing prediction (sql NULL), never an
 * error. Several samples per task: a line without "sample" is sample 0, and
 * the method has n = 1 + its largest sample number samples (1 for a file
 * without any), each (task, sample) below n a candidate of its own.
 *
 * Decided here: `task_id`, `sql` and `sample` are the only fields (any other is an
 * error, so a misspelt "SQL" is caught rather than read as missing); an
 * empty or blank `sql` is kept as it is, a candidate that validation
 * rejects later (rejected_sql), not a load error; blank lines anywhere are
 * skipped, as JSONL readers do; CRLF endings are fine. A NUL byte is an
 * error naming its line (the lines after it are still read). The file is
 * read under the input rule of files.h (a regular file, SX_MAX_JSONL_BYTES). */
#ifndef SX_PREDICTIONS_H
#define SX_PREDICTIONS_H

#include "common/error.h"
#include "common/bench/problems.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/sample.h"

typedef struct _sx_predictions_t sx_predictions_t;

/* err receives the first problem found. Sample numbers must be below
 * max_samples (--max-samples). */
sx_predictions_t *sx_predictions_load_samples(const char *path, const sx_bench_t *bench,
                                              int max_samples, sx_error_t *err);
/* The same with the default bound, SX_SAMPLES_DEFAULT. */
sx_predictions_t *sx_predictions_load(const char *path, const sx_bench_t *bench,
                                      sx_error_t *err);
/* The same, adding every problem found to `problems` and returning the
 * predictions of the good lines; NULL only when the file cannot be read. */
sx_predictions_t *sx_predictions_check(const char *path, const sx_bench_t *bench,
                                       sx_problems_t *problems);
void sx_predictions_destroy(sx_predictions_t **self_p);
/* The candidate SQL of a task's sample 0, or NULL for a missing prediction. */
const char *sx_predictions_sql(const sx_predictions_t *self, const char *task_id);
/* The candidate SQL of one sample of a task, or NULL for a missing one. */
const char *sx_predictions_sample_sql(const sx_predictions_t *self, const char *task_id,
                                      int sample);
/* n: 1 + the largest sample number of the file (1 when it has none). */
int sx_predictions_samples(const sx_predictions_t *self);
/* Predictions kept: (task, sample) pairs with a line. */
size_t sx_predictions_count(const sx_predictions_t *self);

void sx_predictions_test(bool verbose);

#endif
