/* prepare.h: step 1 of the protocol (docs/execution.md) for one source: read its
 * CSV (all original rows), apply the registered projection and time
 * conversion, and produce the records to replay, in replay order. Each record
 * value is a compact JSON object keyed by the output column names, in
 * projection order. An empty CSV field is JSON null. Every other value is a
 * JSON string holding the text as converted: flink-json reads every scalar
 * SQL type (numbers, BOOLEAN, DECIMAL, dates, timestamps) from a JSON string,
 * so strings never change a value, while guessing JSON numbers could (a
 * VARCHAR "1.50" would come back as "1.5"). The one exception is a time
 * column converted `to: epoch_ms`, written as a JSON number.
 * Time conversion (read as UTC): `from` is epoch_s or epoch_ms (an integer,
 * or a decimal whose fraction is rounded to the millisecond) or a strptime
 * pattern (task.c has checked its conversions), which may use %f for a
 * fraction of a second (1 to 9 digits, truncated to the millisecond). The
 * whole value must match, and an impossible date such as February 30 is an
 * error rather than silently moved to March. `to: sql` writes
 * "YYYY-MM-DD HH:MM:SS", plus ".fff" when the millisecond is not 0 (Flink's
 * SQL timestamp format reads both into TIMESTAMP(3); a TIMESTAMP_LTZ column
 * would need a trailing 'Z', so it takes `epoch_ms` and TO_TIMESTAMP_LTZ in
 * a computed column); years must be 0000-9999.
 * Live sources are sorted stably by event time (the record timestamp, epoch
 * ms); a NULL event time is an error, since Flink cannot assign a watermark
 * to it. Static sources keep file order. Blank CSV lines are skipped as
 * pandas does; a record with the wrong number of fields is an error. Every
 * error names the task, the file, the line, the column and the value, and
 * makes the task input_error. */
#ifndef SX_PREPARE_H
#define SX_PREPARE_H

#include "common/error.h"
#include "common/bench/task.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _sx_prepare_t sx_prepare_t;

/* Reads source->path and converts every row. task_id is used in messages. */
sx_prepare_t *sx_prepare_new(const char *task_id, const sx_source_t *source,
                             sx_error_t *err);
/* The same conversion, with the same errors, keeping only each record's
 * event time and its row (no value): for a source of millions of rows,
 * whose values sx_prepare_each then makes again as it hands them over. */
sx_prepare_t *sx_prepare_scan(const char *task_id, const sx_source_t *source,
                              sx_error_t *err);
void sx_prepare_destroy(sx_prepare_t **self_p);

/* Number of records (= data rows of the CSV). */
size_t sx_prepare_count(const sx_prepare_t *self);
/* The index-th record's value: a NUL-terminated JSON object (NULL when
 * scanned). */
const char *sx_prepare_value(const sx_prepare_t *self, size_t index);
/* Its event time in epoch ms (live sources; 0 for static sources). */
int64_t sx_prepare_timestamp(const sx_prepare_t *self, size_t index);

/* Hands every record to `each` in replay order: the values kept or, for a
 * scan of source, converted again from the file row by row as it is read.
 * A live source's rows out of file order wait converted until their turn,
 * so memory grows with how far a row stands from its place, not with the
 * file (a file in event-time order needs none). A file that no longer
 * converts to the scanned rows and event times is an error naming it. A
 * non-zero return from `each` stops the handing over and is returned
 * (`each` fills err). */
typedef int(sx_prepare_fn)(const char *value, size_t length, int64_t timestamp, void *arg,
                           sx_error_t *err);
int sx_prepare_each(const sx_prepare_t *self, const char *task_id,
                    const sx_source_t *source, sx_prepare_fn *each, void *arg,
                    sx_error_t *err);

void sx_prepare_test(bool verbose);

#endif
