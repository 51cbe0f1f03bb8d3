/* oracle.h: a task's query run by Flink in BATCH mode over the task's own
 * prepared rows (`streamex doctor --oracle batch`). Each source becomes a
 * filesystem table of JSON lines holding exactly the records a worker would
 * replay (worker/exec/prepare.h), declared with the task's own DDL but for its
 * WITH clause; the sink likewise becomes a filesystem table. The job's
 * output is the final relation (BATCH output is insert-only), written as a
 * final CSV the same way the materializer writes one. Where the streaming
 * final relation differs from this one, the task's gold depends on the
 * execution mode or on timing. The Flink cluster must see this machine's
 * files (a local pair). */
#ifndef SX_ORACLE_H
#define SX_ORACLE_H

#include "common/error.h"
#include "common/bench/task.h"
#include "worker/clients/gateway.h"

#include <stdbool.h>

/* Runs `sql` (a candidate as docs/predictions.md allows) for `task` in BATCH mode through
 * `gateway` (no session open), using `work_dir` (created, then removed) for
 * the tables' files, and writes the result to csv_path. Returns
 * SX_GATEWAY_SQL_ERROR when the query or a DDL fails in BATCH mode (err has
 * Flink's reason), SX_GATEWAY_INFRA_ERROR for any other failure. */
sx_gateway_rc_t sx_oracle_batch(sx_gateway_t *gateway, const sx_task_t *task,
                                const char *sql, const char *work_dir,
                                const char *csv_path, sx_error_t *err);

/* The DDL with its top-level WITH (...) options replaced by a filesystem
 * table of JSON lines at `path`; NULL with err set when it has none. */
char *sx_oracle_filesystem_ddl(const char *ddl, const char *path, sx_error_t *err);

void sx_oracle_test(bool verbose);

#endif
