/* materialize.h: step 4 of the protocol, after the job has finished: the
 * whole output topic, fed record by record in offset order, is materialized
 * into the final relation and written as the final CSV. Sink kinds
 * (task.json sink.changelog):
 *   upsert    key -> latest value; a NULL value (tombstone) deletes the key.
 *             A column missing from the value is taken from the key object
 *             (value.fields-include = EXCEPT_KEY). Only the values that
 *             survive (the latest of each key at the end) are decoded, by
 *             sx_materialize_finish: a superseded value is never decoded,
 *             so one that is malformed is no error. Flink's JSON writer wrote
 *             it, and only the surviving values decide the relation; keeping
 *             raw bytes per key spares decoding every update, which is most
 *             of the fold's time on a GROUP BY's changelog (bench/heavy
 *             --no-pair, docs/internals/measurements.md).
 *   debezium  {"before", "after", "op"} (or wrapped in {"payload": ...}):
 *             c/r insert `after`, d removes one row equal to `before`, u does
 *             both; the relation is a multiset. Removing a row that is not
 *             there is an error. NULL values (Kafka tombstones) are skipped.
 *   append    every value is an inserted row; duplicates are kept.
 * Every record applied is counted by kind (results.jsonl "changelog"), each
 * record once except a debezium update, which is one update_before and one
 * update_after:
 *   upsert    a value for a key not live (never seen, or deleted since) is an
 *             insert, for a live key an update_after; a tombstone (NULL
 *             value) for a live key is a delete, for a key not live a
 *             tombstone. upsert-kafka writes no before-images, so there is no
 *             update_before.
 *   debezium  op c and r are inserts, u an update_before and an update_after,
 *             d a delete; a NULL value (a Kafka tombstone) is a tombstone.
 *   append    every record is an insert.
 * So the final relation has insert - delete rows for every kind. A record
 * that fails to apply is not counted.  * A row is its output_schema columns taken by name
 * from the JSON object: null or missing -> NULL (empty CSV field), strings raw,
 * true/false, numbers exactly as Flink wrote them (the JSON number text is kept, so no
 * precision is lost on BIGINT or DECIMAL), nested values (ARRAY, MAP, ROW) as compact
 * JSON whose numbers are written as strings. Two rows are equal when their
 * CSV renderings are. The CSV has the output_schema header;
 * rows are sorted by their rendered CSV line (bytewise), so the file is the
 * same for the same relation whatever order the changelog came in. Malformed
 * JSON and impossible operations are errors naming the offset (the caller
 * makes the task materialize_error): from sx_materialize_apply, or for an
 * upsert value from sx_materialize_finish (the smallest offset among the
 * surviving values that are malformed). */
#ifndef SX_MATERIALIZE_H
#define SX_MATERIALIZE_H

#include "common/bench/task.h"
#include "common/error.h"
#include "common/results/result.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _sx_materialize_t sx_materialize_t;

/* schema (column_count entries) is copied. */
sx_materialize_t *sx_materialize_new(sx_changelog_t kind, const sx_field_t *schema,
                                     size_t column_count);
void sx_materialize_destroy(sx_materialize_t **self_p);

/* Applies one output-topic record. key/value NULL means the record has none
 * (a NULL value is a tombstone). offset is used in error messages. */
int sx_materialize_apply(sx_materialize_t *self, int64_t offset, const void *key,
                         size_t key_len, const void *value, size_t value_len,
                         sx_error_t *err);

/* Rows in the relation now. */
size_t sx_materialize_row_count(const sx_materialize_t *self);

/* The records applied so far by kind, and the rows of the relation (the
 * final relation's once finished); *counts is known. */
void sx_materialize_counts(const sx_materialize_t *self, sx_changelog_counts_t *counts);

/* The kinds of the record last applied, as bits 1u << sx_change_kind_t
 * (two for a debezium update); 0 when it failed to apply. */
unsigned sx_materialize_last_kinds(const sx_materialize_t *self);

/* Called once after the last record: decodes what apply deferred (the
 * surviving upsert values). Records applied after it are refused. On error
 * the relation holds the rows that did decode. */
int sx_materialize_finish(sx_materialize_t *self, sx_error_t *err);

/* Writes the final CSV (header + sorted rows) to path, through a temporary
 * file renamed into place. The changelog must be finished. */
int sx_materialize_write(const sx_materialize_t *self, const char *path, sx_error_t *err);

void sx_materialize_test(bool verbose);

#endif
