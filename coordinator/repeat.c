/* repeat.c: --repeat N: each candidate runs N times, each round on another
 * worker where there are several; a task whose final relations differ is
 * marked unstable and its other runs' CSVs are kept beside the first. */
#include "coordinator/coordinator_int.h"

#include "common/clock.h"
#include "common/csv.h"
#include "common/results/jsonout.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/bench/predictions.h"
#include "common/results/result.h"
#include "common/signals.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "common/ex/score.h"
#include "coordinator/journal.h"
#include "common/report/report.h"
#include "common/files.h"
#include "proto/proto.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- --repeat ------------------------------------------------------------ */

/* Compares one repeat's outcome with the first run's: a CSV of the same
 * relation is dropped, another one kept as ID.runK.csv. Returns whether
 * they differ (*why says how), or -1 when the CSV cannot be stored. */
static int repeat_differs(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                          const void *csv, size_t csv_size, char *why, size_t why_size,
                          sx_error_t *err)
{
    if (!csv) {
        snprintf(why, why_size, "%s, where the first run gave a final CSV: %s",
                 sx_status_name(result->status), result->detail);
        return 1;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/csv/%s.run%d.csv", self->out_dir,
             self->methods[unit->method].name, unit->task_id, self->round);
    if (sx_file_write_atomic(path, csv, csv_size, err) != 0)
        return -1;
    bool same = false;
    sx_error_t cmp_err;
    if (sx_csv_same_relation(unit->result.csv, path,
                             sx_task_ignores_order(self->bench, unit->task_id), &same,
                             &cmp_err) != 0)
        snprintf(why, why_size, "cannot compare: %s", cmp_err.msg);
    else
        snprintf(why, why_size, "its final CSV (%s) is another relation", path);
    if (same)
        unlink(path);
    return !same;
}

/* Settles one repeat: the unit keeps its first result, marked unstable
 * when this run's relation differs. An infra_error proves nothing. */
int coord_settle_repeat(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                        const void *csv, size_t csv_size, sx_error_t *err)
{
    char why[SX_ERROR_MAX + PATH_MAX] = "";
    int differs =
        result->status == SX_STATUS_INFRA_ERROR
            ? 0
            : repeat_differs(self, unit, result, csv, csv_size, why, sizeof why, err);
    if (differs < 0)
        return -1;
    const char *name = self->methods[unit->method].name;
    const char *worker = result->worker ? result->worker : "";
    if (result->status == SX_STATUS_INFRA_ERROR)
        sx_warn("%s/%s run %d of %d on %s: infra_error, not compared: %s", name,
                unit->task_id, self->round, self->config.repeat, worker, result->detail);
    else if (differs)
        sx_note("%s/%s run %d of %d on %s: not stable: %s", name, unit->task_id,
                self->round, self->config.repeat, worker, why);
    else
        sx_info("%s/%s run %d of %d on %s: the same relation", name, unit->task_id,
                self->round, self->config.repeat, worker);
    unit->result.unstable |= differs == 1;
    free(unit->ran_on);
    unit->ran_on = sx_strdup(result->worker ? result->worker : "");
    coord_release_from_shard(self, unit);
    unit->state = UNIT_SETTLED;
    coord_result_engine_count(self, unit, +1);
    coord_tally(self, &unit->result, +1);
    return 0;
}

/* After a round with every unit settled: queues the next one, if --repeat
 * asks for it and some unit has a final CSV to compare. Returns whether a
 * round started. */
bool coord_start_next_round(sx_coordinator_t *self)
{
    if (self->round >= self->config.repeat)
        return false;
    self->round++;
    size_t queued = 0;
    for (size_t i = 0; i < self->unit_count; i++) {
        unit_t *unit = self->queue_order[i];
        if (!unit->result.csv)
            continue;
        if (self->round == 2) {
            unit->result.repeated = true;
            free(unit->ran_on);
            unit->ran_on = sx_strdup(unit->result.worker ? unit->result.worker : "");
        }
        coord_tally(self, &unit->result, -1);
        coord_result_engine_count(self, unit, -1);
        unit->state = UNIT_NEW;
        unit->attempts = 0;
        coord_enqueue(self, unit, false);
        queued++;
    }
    sx_info("--repeat: run %d of %d for the %zu tasks with a final CSV", self->round,
            self->config.repeat, queued);
    return queued > 0;
}
