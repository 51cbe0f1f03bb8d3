/* messages.c: what the coordinator does with each message a worker sends
 * (proto.h): HELLO, RESULT (counted only when it answers the current token
 * of a unit its sender holds), RELEASE, FILE_REQUEST and heartbeats. */
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
#include "common/digest.h"
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

/* ---- messages ---------------------------------------------------------- */

/* Why a worker computing on `engine` may not join: the first connected
 * worker, or settled result, of another engine, said in a heap string; NULL
 * when it may. A run is one engine's (coordinator.h), so the refusal comes
 * before any task is dispatched to it. */
static char *engine_conflict(sx_coordinator_t *self, const char *name, const char *engine)
{
    if (self->config.allow_mixed_engines)
        return NULL;
    /* The counts say whether another engine is held; the scans below, over
     * every worker and unit, only name it, in a refusal. */
    bool other = false;
    for (void *n = zhashx_first(self->engines); n && !other;
         n = zhashx_next(self->engines))
        other = strcmp(zhashx_cursor(self->engines), engine) != 0;
    if (!other)
        return NULL;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        if (strcmp(w->engine, engine) != 0)
            return sx_format("refused: worker %s runs %s, but worker %s of this run runs "
                             "%s; a mixed EX describes no engine (the coordinator's "
                             "--allow-mixed-engines mixes them)",
                             name, engine, w->name, w->engine);
    for (size_t i = 0; i < self->unit_count; i++) {
        const unit_t *u = &self->units[i];
        const char *had = u->result.engine;
        /* A settling result counts: its worker may be gone, its commit not done. */
        if ((u->state == UNIT_SETTLED || u->state == UNIT_SETTLING) && had && had[0] &&
            strcmp(had, engine) != 0)
            return sx_format("refused: worker %s runs %s, but this run's result of %s/%s "
                             "was computed on %s; a mixed EX describes no engine (the "
                             "coordinator's --allow-mixed-engines mixes them)",
                             name, engine, self->methods[u->method].name, u->task_id,
                             had);
    }
    return NULL;
}

static void on_hello(sx_coordinator_t *self, const char *key, zframe_t *routing_id,
                     sx_msg_t *msg)
{
    /* A repeated HELLO, or a reconnect under the same name, is protocol
     * noise: the old session's units go back to the queue unspent, and its
     * results, should they still come, are answers to no current attempt. */
    worker_t *old = zhashx_lookup(self->workers, key);
    if (old) {
        sx_warn("worker %s said hello again (now %s): its shards go back to the queue",
                old->name, msg->worker);
        coord_drop_worker(self, old, "worker said hello again", false);
    }
    old = zhashx_lookup(self->names, msg->worker);
    if (old) {
        sx_warn("worker %s reconnected: the shards of its old connection go back to the "
                "queue",
                old->name);
        coord_drop_worker(self, old, "worker reconnected", false);
    }
    /* HELLO's runtime begins with the engine, one word (proto.h). */
    char *engine = sx_strndup(msg->runtime, strcspn(msg->runtime, " "));
    char *conflict = engine_conflict(self, msg->worker, engine);
    if (conflict) {
        sx_err("%s", conflict);
        coord_send_goodbye(self, routing_id, conflict, true);
        free(conflict);
        free(engine);
        return;
    }
    worker_t *w = sx_alloc(1, sizeof *w);
    w->engine = engine;
    w->key = sx_strdup(key);
    w->routing_id = zframe_dup(routing_id);
    w->name = sx_strdup(msg->worker);
    w->runtime = sx_strdup(msg->runtime);
    w->capacity = msg->capacity;
    w->slots = msg->slots;
    w->shards = zlist_new();
    w->expires_at = zclock_mono() + self->config.dead_after_ms;
    zhashx_insert(self->workers, key, w);
    coord_engine_count(self, w->engine, +1);
    zhashx_insert(self->names, w->name, w);
    coord_credit_changed(self, w);
    self->sessions++;
    sx_info("worker %s joined (capacity %d, %d slot(s), %s)", w->name, w->capacity,
            w->slots, w->runtime);
}

/* An acknowledgement waiting for the commit that makes its result durable;
 * its worker may be gone by then (it said GOODBYE in the same turn). */
typedef struct {
    zframe_t *routing_id;
    char *key;
    sx_msg_t *ack;
} held_ack_t;

static void hold_ack(sx_coordinator_t *self, worker_t *w, const sx_msg_t *result)
{
    held_ack_t *held = sx_alloc(1, sizeof *held);
    held->routing_id = zframe_dup(w->routing_id);
    held->key = sx_strdup(w->key);
    held->ack = sx_msg_new(SX_MSG_ACK);
    held->ack->method = sx_strdup(result->method);
    held->ack->result.task_id = sx_strdup(result->result.task_id);
    held->ack->result.attempts = result->result.attempts;
    held->ack->token = result->token;
    zlist_append(self->acks, held);
}

void coord_flush_acks(sx_coordinator_t *self, bool send)
{
    held_ack_t *held;
    while ((held = zlist_pop(self->acks)) != NULL) {
        worker_t *w = send ? zhashx_lookup(self->workers, held->key) : NULL;
        if (w)
            coord_send_to(self, w, held->ack);
        else if (send)
            sx_msg_send(held->ack, self->router, held->routing_id, NULL);
        zframe_destroy(&held->routing_id);
        free(held->key);
        sx_msg_destroy(&held->ack);
        free(held);
    }
}

/* Why a message of w about a unit under `token` (a RESULT, a RELEASE) must
 * not touch it, or NULL when it answers the current attempt of a unit w
 * holds. */
static const char *why_not_held(const unit_t *unit, const worker_t *w, uint64_t token)
{
    return !unit                          ? "not a task of this run"
           : unit->state == UNIT_SETTLED  ? "already settled"
           : unit->state == UNIT_SETTLING ? "being settled"
           : unit->state != UNIT_HELD     ? "not dispatched now"
           : unit->shard->worker != w     ? "held by another worker"
           : unit->token != token         ? "not its current attempt"
                                          : NULL;
}

/* How loud to say that a message of w about a unit was dropped: once per
 * connection, then at debug level, so a flood of forged messages cannot
 * flood the log; the count comes when it leaves. */
static sx_log_level_t dropped_level(worker_t *w)
{
    return w->dropped++ == 0 ? SX_LOG_INFO : SX_LOG_DEBUG;
}

/* Applies a result that answers the current attempt of a unit the sender
 * holds; anything else is logged and dropped without touching any state.
 * Returns -1 only when it cannot be made durable. */
static int apply_result(sx_coordinator_t *self, worker_t *w, sx_msg_t *msg,
                        sx_error_t *err)
{
    const sx_result_t *r = &msg->result;
    unit_t *unit = coord_find_unit(self, msg->method, r->task_id, r->sample);
    const char *why = why_not_held(unit, w, msg->token);
    if (why) {
        /* Named as coord_unit_name names a unit: " sample K" only for K > 0. */
        char sample[32] = "";
        if (r->sample)
            snprintf(sample, sizeof sample, " sample %d", r->sample);
        sx_log(dropped_level(w),
               "worker %s: result %s for %s/%s%s (token %llu): %s: dropped", w->name,
               sx_status_name(r->status), msg->method, r->task_id, sample,
               (unsigned long long)msg->token, why);
        return 0;
    }
    w->done++;
    zhashx_update(self->runtimes, w->name, sx_strdup(w->runtime));
    if (sx_status_is_retryable(r->status)) {
        char name[600];
        coord_unit_name(self, unit, name, sizeof name);
        sx_warn("worker %s: %s attempt %d: infra_error: %s", w->name, name,
                unit->attempts + 1, r->detail);
        coord_end_attempt(self, unit, w->name, r->detail, true, NULL);
        if (sx_error_is_set(&self->fatal))
            return *err = self->fatal, -1;
        return 0;
    }
    sx_result_t result = *r;
    result.attempts = unit->attempts + 1;
    result.worker = w->name;
    result.engine = w->engine;
    return coord_settle(self, unit, &result, msg->data, msg->size, err);
}

static void on_result(sx_coordinator_t *self, worker_t *w, sx_msg_t *msg)
{
    sx_error_t err;
    if (apply_result(self, w, msg, &err) != 0) {
        /* Not durable: no ACK (the worker keeps it spooled), and the run stops. */
        sx_error_prefix(&err, "cannot settle %s/%s", msg->method, msg->result.task_id);
        coord_fail_run(self, &err);
        return;
    }
    /* Dropped results are acknowledged too, so a worker's spool empties;
     * every acknowledgement waits for the turn's commit (coord_commit). */
    hold_ack(self, w, msg);
}

/* Takes back the units a worker gave up unstarted (its RELEASE answers our
 * RECALL): exactly those it holds under the listed tokens, unspent, to the
 * front of the queue in their order, where dispatch hands them to an idle
 * worker first. Any other listed unit is logged and ignored, like a stale
 * RESULT, and so is a RELEASE nobody asked for: units move only toward a
 * worker that is idle, so no peer can keep one by giving it back and taking
 * it again. What the worker keeps (the unit it runs) stays held: the units
 * of a worker remain the ones it runs next, in order (drop_worker counts on
 * it). */
static void on_release(sx_coordinator_t *self, worker_t *w, const sx_msg_t *msg)
{
    if (!w->recalled) {
        sx_log(dropped_level(w),
               "worker %s: RELEASE of %zu task(s) without a RECALL: ignored", w->name,
               msg->task_count);
        return;
    }
    w->recalled = false;
    self->rebalance = true;
    unit_t **units = sx_alloc(msg->task_count + 1, sizeof *units);
    size_t count = 0;
    for (size_t i = 0; i < msg->task_count; i++) {
        const sx_msg_task_t *task = &msg->tasks[i];
        unit_t *unit = coord_find_unit(self, task->method, task->task_id, task->sample);
        const char *why = why_not_held(unit, w, task->token);
        for (size_t j = 0; j < count && !why; j++)
            why = units[j] == unit ? "listed twice" : NULL;
        if (why)
            sx_log(dropped_level(w),
                   "worker %s: released %s/%s (token %llu): %s: ignored", w->name,
                   task->method, task->task_id, (unsigned long long)task->token, why);
        else
            units[count++] = unit;
    }
    /* Back to the front of the queue last to first, so they keep their order. */
    for (size_t i = count; i-- > 0;) {
        units[i]->given_back = true;
        coord_end_attempt(self, units[i], w->name, "given back unstarted", false, NULL);
    }
    free(units);
    sx_info("worker %s gave back %zu task(s) it had not started", w->name, count);
}

/* Whether a bench file (by hash) is one that a shard the worker holds needs. */
static bool worker_needs_file(sx_coordinator_t *self, worker_t *w, const char *hash)
{
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        for (unit_t *unit = zlist_first(shard->units); unit;
             unit = zlist_next(shard->units)) {
            zlistx_t *files = coord_manifest_of(self, unit->task_id);
            for (manifest_file_t *f = zlistx_first(files); f; f = zlistx_next(files))
                if (strcmp(f->hash, hash) == 0)
                    return true;
        }
    return false;
}

static void on_file_request(sx_coordinator_t *self, worker_t *w, sx_msg_t *msg)
{
    const char *rel = zhashx_lookup(self->files, msg->hash);
    if (!rel || !worker_needs_file(self, w, msg->hash)) {
        sx_warn("worker %s asked for file %s, which no shard it holds needs: refused",
                w->name, msg->hash);
        return;
    }
    sx_error_t err;
    zchunk_t *bytes = coord_file_bytes(self, msg->hash, rel, &err);
    if (!bytes) {
        sx_err("file for worker %s: %s: not sent", w->name, err.msg);
        return;
    }
    sx_msg_t *file = sx_msg_new(SX_MSG_FILE);
    file->hash = sx_strdup(msg->hash);
    file->data = (char *)zchunk_data(bytes); /* lent: taken back before destroy */
    file->size = zchunk_size(bytes);
    coord_send_to(self, w, file);
    self->files_sent++;
    self->file_bytes_sent += file->size;
    file->data = NULL;
    sx_msg_destroy(&file);
    if (!zhashx_lookup(self->file_bytes, msg->hash))
        zchunk_destroy(&bytes); /* not kept */
}

static void on_message(sx_coordinator_t *self)
{
    zframe_t *routing_id = NULL;
    sx_error_t err;
    sx_error_clear(&err);
    sx_msg_t *msg = sx_msg_recv(self->router, &routing_id, &err);
    char *key = routing_id ? zframe_strhex(routing_id) : NULL;
    worker_t *w = key ? zhashx_lookup(self->workers, key) : NULL;
    if (!msg) {
        sx_warn("rejected a message from %s: %s", w ? w->name : "an unknown peer",
                err.msg);
    } else if (!sx_msg_from_worker(msg->type)) {
        sx_warn("rejected %s from %s: not a worker's message",
                sx_msg_type_name(msg->type), w ? w->name : "an unknown peer");
    } else if (msg->type == SX_MSG_HELLO) {
        on_hello(self, key, routing_id, msg);
    } else if (!w) {
        /* Out of order: this peer never said hello (or was declared dead). */
        sx_warn("rejected %s from an unknown worker: asked it to say hello",
                sx_msg_type_name(msg->type));
        coord_send_goodbye(self, routing_id, "unknown worker: say HELLO first", false);
    } else {
        w->expires_at = zclock_mono() + self->config.dead_after_ms;
        if (msg->type == SX_MSG_RESULT)
            on_result(self, w, msg);
        else if (msg->type == SX_MSG_RELEASE)
            on_release(self, w, msg);
        else if (msg->type == SX_MSG_FILE_REQUEST)
            on_file_request(self, w, msg);
        else if (msg->type == SX_MSG_GOODBYE) {
            sx_info("worker %s left: %s", w->name, msg->reason);
            /* Leaving while it ran a unit ends that attempt. */
            coord_drop_worker(self, w, "worker left", true);
        }
    }
    sx_msg_destroy(&msg);
    zstr_free(&key);
    zframe_destroy(&routing_id);
}

/* At most this many messages a turn, so the loop still beats, expires and
 * dispatches under a flood; the results among them share one commit. */
#define MESSAGES_A_TURN 1024
/* At most this many results a commit: each holds a descriptor until then. */
#define RESULTS_A_COMMIT 256

void coord_on_messages(sx_coordinator_t *self)
{
    size_t taken = 0;
    do
        on_message(self);
    while (++taken < MESSAGES_A_TURN && self->settling_count < RESULTS_A_COMMIT &&
           !sx_error_is_set(&self->fatal) && (zsock_events(self->router) & ZMQ_POLLIN));
}
