/* hazards.h: what in a task's inputs makes Flink STREAMING's final relation
 * depend on timing, or differ from what Flink BATCH computes over the same
 * rows (found by the differential test, tests/differential): a live source
 * with event times before 1970 (streaming interval joins drop every such
 * match and windows of such events may be lost), and a watermark with zero
 * delay on an event time that has ties (rows equal to the watermark count as
 * late). These are warnings for benchmark authors (`streamex check`), not
 * errors: the task is valid, its gold is fragile.
 *
 * A query's engine hazards: what in a candidate or a reference makes its
 * verdict depend on the engine it runs on (docs/internals/flink-2.md,
 * "What a query computes"), the same text for every engine, so no code
 * compares versions. */
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

/* The engine hazards, bit flags. */
typedef enum {
    /* QUALIFY: Flink 2.x parses it, Flink 1.20 refuses it (a parse error). */
    SX_HAZARD_QUALIFY = 1u << 0,
    /* An OVER aggregation over an unbounded frame (UNBOUNDED PRECEDING, or an
     * ORDER BY without ROWS or RANGE, whose default frame it is): Flink 2.x
     * computes it with another operator by default
     * (table.exec.unbounded-over.version 2) and, ordered by a column that is
     * not the time attribute, accepts it where Flink 1.20 refuses it. Ranking
     * functions (ROW_NUMBER, RANK, DENSE_RANK: dedup and Top-N) are not. */
    SX_HAZARD_UNBOUNDED_OVER = 1u << 1,
    /* A Top-1 (ROW_NUMBER kept where it is 1) ordered by anything but one
     * time attribute, which is a Rank rather than a deduplication: over an
     * append-only input Flink 2.2.1's planner takes it for insert-only and
     * loses its retractions, so a replaced row stays in the final relation
     * (seen with EXPLAIN CHANGELOG_MODE on 2.2.1); Flink 1.20 retracts it. Whether the
     * input is append-only is not read here: a warning, not a verdict. */
    SX_HAZARD_TOP1_RANK = 1u << 2,
} sx_engine_hazard_t;
#define SX_ENGINE_HAZARDS 3

/* The engine hazards of a query, read with the SQL lexer (so comments and
 * strings cannot fool it): an OR of sx_engine_hazard_t, 0 for none. task
 * (NULL: none known) gives the time attributes, its live sources' event
 * times, that tell a deduplication from a Top-1 Rank. */
unsigned sx_hazards_engine(const char *sql, const sx_task_t *task);
/* What hazard i (0 .. SX_ENGINE_HAZARDS - 1) is, for a warning or a cause:
 * its flag and a sentence that says what differs between the engines. */
sx_engine_hazard_t sx_hazards_engine_flag(int i);
const char *sx_hazards_engine_text(int i);

void sx_hazards_test(bool verbose);

#endif
