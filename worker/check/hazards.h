/* hazards.h: what in a task's inputs makes Flink STREAMING's final relation
 * depend on timing, or differ from what Flink BATCH computes over the same
 * rows (found by the differential test, tests/differential): a live source
 * with event times before 1970 (streaming interval joins drop every such
 * match and windows of such events may be lost), and a watermark with zero
 * delay on an event time that has ties (rows equal to the watermark count as
 * late). These are warnings for benchmark authors (`streamex check`), not
 * errors: the task is valid, its gold is fragile. */
#ifndef SX_HAZARDS_H
#define SX_HAZARDS_H

#include "common/bench/problems.h"
#include "common/bench/task.h"
#include "worker/exec/prepare.h"

#include <stdbool.h>

/* Adds one warning per hazard of a prepared live source to `warnings`, each
 * naming the task and the source ("task t1: source bids: ..."). Static
 * sources have none. */
void sx_hazards_source(const char *task_id, const sx_source_t *source,
                       const sx_prepare_t *prepared, sx_problems_t *warnings);

/* True when the DDL declares a watermark with zero delay: `WATERMARK FOR c
 * AS c`, or c minus a zero interval (ASCII case ignored). The column may be
 * computed from the event time (epoch_ms sources): its ties are the event
 * time's. */
bool sx_hazards_zero_delay(const char *ddl);

void sx_hazards_test(bool verbose);

#endif
