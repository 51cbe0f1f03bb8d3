/* units.c: the units' state machine (coordinator_int.h): a unit is queued,
 * held by one shard of one worker under one attempt token, settling, or
 * settled, and every change goes through coord_enqueue, coord_end_attempt
 * or coord_settle and coord_commit. A result is settled, and acknowledged,
 * only once the fsync holding its journal record is done, so an
 * acknowledged result survives a crash; the results of one turn of the loop
 * share that fsync (group commit). */
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

unit_t *coord_find_unit(sx_coordinator_t *self, const char *method, const char *task_id,
                        int sample)
{
    char key[600];
    coord_unit_key(key, sizeof key, method, task_id, sample);
    return zhashx_lookup(self->unit_index, key);
}

void coord_unit_name(const sx_coordinator_t *self, const unit_t *unit, char *out,
                     size_t size)
{
    int n = snprintf(out, size, "%s/%s", self->methods[unit->method].name, unit->task_id);
    if (unit->sample && n >= 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, " sample %d", unit->sample);
}

void coord_engine_count(sx_coordinator_t *self, const char *engine, int sign)
{
    intptr_t count = (intptr_t)zhashx_lookup(self->engines, engine) + sign;
    if (count > 0)
        zhashx_update(self->engines, engine, (void *)count);
    else
        zhashx_delete(self->engines, engine);
}

void coord_result_engine_count(sx_coordinator_t *self, const unit_t *unit, int sign)
{
    if (unit->result.engine && unit->result.engine[0])
        coord_engine_count(self, unit->result.engine, sign);
}

/* Counts a settled result in (+1) or out (-1) of the run's tallies. */
void coord_tally(sx_coordinator_t *self, const sx_result_t *result, int sign)
{
    sx_status_t status = result->status;
    self->settled += (size_t)sign;
    self->cached += result->cached ? (size_t)sign : 0;
    if (status == SX_STATUS_MATCH)
        self->correct += (size_t)sign;
    else if (status != SX_STATUS_MISMATCH && status != SX_STATUS_MISSING_PREDICTION)
        self->failures += (size_t)sign;
}

/* Keeps a copy of result as the unit's. */
static void keep_result(unit_t *unit, const sx_result_t *result)
{
    sx_result_init(&unit->result, result->task_id, result->status, result->detail,
                   result->csv);
    unit->result.sample = unit->sample;
    unit->result.attempts = result->attempts;
    unit->result.seconds = result->seconds;
    unit->result.strict = result->strict;
    unit->result.steps = result->steps;
    unit->result.cached = result->cached;
    unit->result.changelog = result->changelog;
    free(unit->result.worker);
    unit->result.worker = sx_strdup(result->worker ? result->worker : "");
    unit->result.engine = sx_strdup_or_null(result->engine);
}

/* Marks a unit settled without (re)writing its CSV or journal line. */
void coord_mark_settled(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result)
{
    keep_result(unit, result);
    unit->state = UNIT_SETTLED;
    coord_result_engine_count(self, unit, +1);
    coord_tally(self, result, +1);
}

/* Takes a settled unit back to new (its result forgotten here, not in the
 * journal): a later record replaces it, or --rerun executes it again with a
 * fresh retry budget. */
void coord_unsettle(sx_coordinator_t *self, unit_t *unit)
{
    coord_tally(self, &unit->result, -1);
    coord_result_engine_count(self, unit, -1);
    sx_result_clear(&unit->result);
    unit->state = UNIT_NEW;
    unit->attempts = 0;
}

/* The fingerprint of what a unit's verdict is computed from: the streamex
 * version, the comparison profile, the candidate SQL and the task's own files
 * (folder, gold, evaluation) by content hash. A journaled verdict is reused
 * only while its fingerprint is the unit's. */
void coord_unit_inputs(sx_coordinator_t *self, const unit_t *unit, char hex[41])
{
    sx_digest_t *digest = sx_digest_new();
    sx_digest_line(digest, "streamex %s", SX_VERSION);
    sx_digest_line(digest, "%s", sx_profile_name(self->config.profile));
    sx_digest_sql(digest, unit->sql);
    zlistx_t *files = coord_manifest_of(self, unit->task_id);
    for (manifest_file_t *f = zlistx_first(files); f; f = zlistx_next(files))
        if (strcmp(f->path, "task_ids.txt") != 0) /* the task's own files only */
            sx_digest_file(digest, f->hash, f->path);
    sx_digest_hex(digest, hex);
    sx_digest_destroy(&digest);
}

/* ---- settling ---------------------------------------------------------- */

/* Takes a unit out of the shard holding it; a shard with nothing left frees
 * its worker's credit. */
void coord_release_from_shard(sx_coordinator_t *self, unit_t *unit)
{
    shard_t *shard = unit->shard;
    if (!shard)
        return;
    worker_t *w = shard->worker;
    zlist_remove(shard->units, unit);
    unit->shard = NULL;
    unit->token = 0;
    w->pending_ms -= (int64_t)unit->timeout_s * 1000;
    w->held--;
    if (zlist_size(shard->units) == 0) {
        zlist_remove(w->shards, shard);
        coord_free_shard(shard);
    }
    coord_credit_changed(self, w);
}

/* OUT/NAME/csv/ID.csv, or OUT/NAME/samples/K/csv/ID.csv for a sample K > 0. */
static void csv_path(sx_coordinator_t *self, const unit_t *unit, char *path,
                     size_t path_size)
{
    char sample[48] = "";
    if (unit->sample)
        snprintf(sample, sizeof sample, "samples/%d/", unit->sample);
    snprintf(path, path_size, "%s/%s/%scsv/%s.csv", self->out_dir,
             self->methods[unit->method].name, sample, unit->task_id);
}

/* A match is routine; any other verdict is worth a look on a terminal
 * (sx_note), with its reason. */
static void log_settled(const sx_coordinator_t *self, const unit_t *unit,
                        const sx_result_t *result)
{
    bool match = result->status == SX_STATUS_MATCH;
    char attempts[48] = "", name[600];
    if (result->attempts > 0)
        snprintf(attempts, sizeof attempts, " after %d attempt(s)", result->attempts);
    coord_unit_name(self, unit, name, sizeof name);
    sx_log(match ? SX_LOG_DEBUG : SX_LOG_NOTE, "settled %s: %s%s%s%s", name,
           sx_status_name(result->status), attempts, match ? "" : ": ",
           match ? "" : result->detail);
}

/* Settles a unit for good, as far as this turn of the loop goes: its CSV
 * goes to a temporary name in OUT and its journal record (with the CSV's
 * hash) into the journal's batch, and the unit is settling: out of its
 * shard, held by nobody, not yet counted. coord_commit makes the turn's
 * CSVs and records durable together, then counts them. A CSV that cannot
 * be written leaves the unit as it was, and the caller stops the run. */
int coord_settle(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                 const void *csv, size_t csv_size, sx_error_t *err)
{
    if (self->round > 1)
        return coord_settle_repeat(self, unit, result, csv, csv_size, err);
    char path[PATH_MAX], csv_sha1[41];
    sx_result_t final = *result;
    final.csv = csv ? path : NULL;
    final.sample = unit->sample;
    csv_path(self, unit, path, sizeof path);
    method_t *method = &self->methods[unit->method];
    if (csv && !method->csv_folder_made[unit->sample] && sx_mkdirs_for(path, err) != 0)
        return -1;
    method->csv_folder_made[unit->sample] |= csv != NULL;
    if (csv && sx_file_batch_add(self->csvs, path, csv, csv_size, err) != 0)
        return -1;
    if (csv)
        sx_hash_bytes(csv, csv_size, csv_sha1);
    char inputs[41];
    coord_unit_inputs(self, unit, inputs);
    sx_journal_add(self->journal, self->methods[unit->method].name, inputs,
                   csv ? csv_sha1 : NULL, &final);
    coord_release_from_shard(self, unit);
    keep_result(unit, &final);
    unit->state = UNIT_SETTLING;
    coord_result_engine_count(self, unit, +1);
    if (self->settling_count == self->settling_cap) {
        self->settling_cap = self->settling_cap ? 2 * self->settling_cap : 64;
        self->settling =
            sx_realloc(self->settling, self->settling_cap, sizeof *self->settling);
    }
    self->settling[self->settling_count++] = unit;
    return 0;
}

/* What a failed commit could not settle, for its error: the results of
 * workers it held ("M/T", and how many more), so their senders, which keep
 * them spooled, are named; nothing for verdicts the coordinator made itself. */
static void prefix_unsettled(sx_coordinator_t *self, sx_error_t *err)
{
    const unit_t *first = NULL;
    size_t reported = 0;
    for (size_t i = 0; i < self->settling_count; i++) {
        const unit_t *unit = self->settling[i];
        if (unit->result.worker && unit->result.worker[0] && reported++ == 0)
            first = unit;
    }
    char name[600];
    if (reported > 0)
        coord_unit_name(self, first, name, sizeof name);
    if (reported == 1)
        sx_error_prefix(err, "cannot settle %s", name);
    else if (reported > 1)
        sx_error_prefix(err, "cannot settle %s and %zu more result(s)", name,
                        reported - 1);
}

int coord_commit(sx_coordinator_t *self)
{
    sx_error_t err;
    if (sx_file_batch_commit(self->csvs, &err) != 0 ||
        sx_journal_commit(self->journal, &err) != 0) {
        /* Nothing of the batch holds: its units stay settling, never
         * counted nor acknowledged, and the run stops. */
        sx_journal_drop(self->journal);
        prefix_unsettled(self, &err);
        coord_fail_run(self, &err);
        self->settling_count = 0;
        coord_flush_acks(self, false);
        return -1;
    }
    for (size_t i = 0; i < self->settling_count; i++) {
        unit_t *unit = self->settling[i];
        char path[PATH_MAX];
        csv_path(self, unit, path, sizeof path);
        /* A result without a CSV takes away the CSV an earlier verdict left
         * (a --rerun, changed inputs), now that its own record holds. */
        if (!unit->result.csv && unlink(path) != 0 && errno != ENOENT)
            sx_warn("%s: cannot remove the CSV of an earlier verdict: %s", path,
                    strerror(errno));
        unit->state = UNIT_SETTLED;
        coord_tally(self, &unit->result, +1);
        log_settled(self, unit, &unit->result);
        if (!unit->result.cached && unit->result.seconds > 0) {
            self->executed_seconds += unit->result.seconds;
            self->executed++;
        }
    }
    self->settling_count = 0;
    coord_flush_acks(self, true);
    return 0;
}

/* A unit that is not dispatched again gets its final result here. */
static int settle_locally(sx_coordinator_t *self, unit_t *unit, sx_status_t status,
                          const char *detail, sx_error_t *err)
{
    sx_result_t result;
    sx_result_init(&result, unit->task_id, status, detail, NULL);
    result.attempts = unit->attempts;
    int rc = coord_settle(self, unit, &result, NULL, 0, err);
    sx_result_clear(&result);
    return rc;
}

/* Records the first storage failure: the loop stops at its next turn and
 * hands it to the caller, who reports it. */
void coord_fail_run(sx_coordinator_t *self, const sx_error_t *err)
{
    if (!sx_error_is_set(&self->fatal))
        self->fatal = *err;
}

/* A missing prediction scores zero without a worker: nothing to execute. */
void coord_settle_missing_predictions(sx_coordinator_t *self)
{
    for (size_t i = 0; i < self->unit_count && !sx_error_is_set(&self->fatal); i++) {
        unit_t *unit = &self->units[i];
        if (unit->state == UNIT_NEW && !unit->sql) {
            sx_error_t err;
            char detail[64] = "no prediction for this task";
            if (unit->sample)
                snprintf(detail, sizeof detail,
                         "no prediction for sample %d of this task", unit->sample);
            if (settle_locally(self, unit, SX_STATUS_MISSING_PREDICTION, detail, &err) !=
                0)
                coord_fail_run(self, &err);
        }
    }
}

bool coord_failed_on(unit_t *unit, const char *name)
{
    for (const char *n = unit->failed_on ? zlist_first(unit->failed_on) : NULL; n;
         n = zlist_next(unit->failed_on))
        if (strcmp(n, name) == 0)
            return true;
    return false;
}

static void note_failure(unit_t *unit, const char *name)
{
    if (!unit->failed_on) {
        unit->failed_on = zlist_new();
        zlist_autofree(unit->failed_on); /* copies and frees the names */
    }
    if (!coord_failed_on(unit, name))
        zlist_append(unit->failed_on, (void *)name);
}

/* The one way into the queue: a unit is in it at most once. */
void coord_enqueue(sx_coordinator_t *self, unit_t *unit, bool front)
{
    if (unit->state == UNIT_QUEUED || unit->state == UNIT_SETTLING ||
        unit->state == UNIT_SETTLED) {
        char name[600];
        coord_unit_name(self, unit, name, sizeof name);
        sx_err("%s: refusing to queue it again (a bug)", name);
        return;
    }
    unit->state = UNIT_QUEUED;
    unit->token = 0;
    unit->running_ms = 0;
    self->queued_given_back += unit->given_back;
    if (front)
        zlist_push(self->queue, unit);
    else
        zlist_append(self->queue, unit);
}

/* Ends the current attempt of a held unit: its shard slot is freed, and it
 * goes back to the queue (front) or, when `spent` uses up its budget, is
 * settled as infra_error. `spent` is false for protocol noise (a repeated
 * HELLO, a reconnect, a worker leaving before it ran the unit); then
 * `dropped_by` names the session (routing id) that let it go, which does not
 * get it back while another worker is connected: a peer saying HELLO again
 * and again cannot hold a unit forever. */
void coord_end_attempt(sx_coordinator_t *self, unit_t *unit, const char *worker_name,
                       const char *why, bool spent, const char *dropped_by)
{
    if (unit->state != UNIT_HELD)
        return;
    coord_release_from_shard(self, unit);
    if (spent)
        unit->attempts++;
    if (spent && unit->attempts >= self->config.retry_budget) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s (after %d attempts)", why, unit->attempts);
        sx_error_t err;
        if (settle_locally(self, unit, SX_STATUS_INFRA_ERROR, detail, &err) != 0)
            coord_fail_run(self, &err);
        else
            return;
    }
    if (spent) {
        note_failure(unit, worker_name);
        unit->retry_at = zclock_mono() + self->config.dead_after_ms;
    }
    free(unit->dropped_by);
    unit->dropped_by = sx_strdup_or_null(dropped_by);
    coord_enqueue(self, unit, true);
}

void coord_free_shard(shard_t *shard)
{
    zlist_destroy(&shard->units);
    free(shard);
}
