/* dispatch.c: what is sent to workers: the bench files each task needs
 * (by content hash, so a worker fetches a file once), which queued units go
 * to which worker (those with the most free slots first, never back to a
 * worker that spent an attempt of the unit while another could take it),
 * dropping a worker, and recalling unstarted units for an idle worker. */
#include "coordinator/coordinator_int.h"

#include "common/clock.h"
#include "common/csv.h"
#include "common/digest.h"
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

/* ---- files by hash ----------------------------------------------------- */

static void free_manifest_file(void **item)
{
    manifest_file_t *f = *item;
    if (f) {
        free(f->path);
        free(f);
    }
    *item = NULL;
}

static void add_manifest_file(sx_coordinator_t *self, zlistx_t *list, const char *rel)
{
    char abs[PATH_MAX];
    snprintf(abs, sizeof abs, "%s/%s", sx_bench_dir(self->bench), rel);
    manifest_file_t *f = sx_alloc(1, sizeof *f);
    sx_error_t err;
    struct stat st;
    if (sx_bench_file_check(self->bench, rel, &err) != 0 ||
        sx_hash_file(abs, f->hash, &f->size, &err) != 0) {
        /* A missing gold or evaluation file is the worker's eval_error to
         * report; the shard goes without it. Any other refused file (a link
         * out of its folder, a FIFO, too large) is never shipped, loudly. */
        if (lstat(abs, &st) == 0)
            sx_err("%s: not shipped", err.msg);
        else
            sx_debug("%s", err.msg);
        free(f);
        return;
    }
    f->path = sx_strdup(rel);
    zlistx_add_end(list, f);
    if (!zhashx_lookup(self->files, f->hash))
        zhashx_insert(self->files, f->hash, sx_strdup(rel));
}

typedef struct {
    sx_coordinator_t *self;
    zlistx_t *list;
} manifest_walk_t;

static void add_task_file(const char *rel, void *arg)
{
    manifest_walk_t *walk = arg;
    if (sx_proto_safe_path(rel))
        add_manifest_file(walk->self, walk->list, rel);
}

/* The files a worker needs for one task: task_ids.txt, the task folder,
 * gold and evaluation (hashed once, then cached). */
zlistx_t *coord_manifest_of(sx_coordinator_t *self, const char *task_id)
{
    zlistx_t *list = zhashx_lookup(self->manifests, task_id);
    if (list)
        return list;
    list = zlistx_new();
    zlistx_set_destructor(list, free_manifest_file);
    add_manifest_file(self, list, "task_ids.txt");
    manifest_walk_t walk = {self, list};
    sx_bench_task_files(self->bench, task_id, add_task_file, &walk);
    zhashx_insert(self->manifests, task_id, list);
    return list;
}

/* The task's timeout_s (task.json, read once a task), for the attempt's
 * deadline. A task.json that cannot be read gets the longest timeout: the
 * worker reports it. */
static int unit_timeout_s(sx_coordinator_t *self, unit_t *unit)
{
    if (unit->timeout_s > 0)
        return unit->timeout_s;
    intptr_t known = (intptr_t)zhashx_lookup(self->timeouts, unit->task_id);
    if (known > 0)
        return unit->timeout_s = (int)known;
    json_t *root = sx_task_json_read(sx_bench_dir(self->bench), unit->task_id, NULL);
    json_t *value = root ? json_object_get(root, "timeout_s") : NULL;
    json_int_t seconds = !root                    ? SX_TASK_TIMEOUT_MAX
                         : json_is_integer(value) ? json_integer_value(value)
                                                  : SX_TASK_TIMEOUT_DEFAULT;
    json_decref(root);
    unit->timeout_s = seconds >= 1 && seconds <= SX_TASK_TIMEOUT_MAX
                          ? (int)seconds
                          : SX_TASK_TIMEOUT_MAX;
    zhashx_insert(self->timeouts, unit->task_id, (void *)(intptr_t)unit->timeout_s);
    return unit->timeout_s;
}

/* Bench file bytes kept in memory at most: a file goes to every worker
 * that runs one of its tasks, read from disk once rather than each time. */
#define FILE_BYTES_KEPT ((size_t)64 << 20)

zchunk_t *coord_file_bytes(sx_coordinator_t *self, const char *hash, const char *rel,
                           sx_error_t *err)
{
    zchunk_t *bytes = zhashx_lookup(self->file_bytes, hash);
    if (bytes)
        return bytes;
    /* The file is read now, maybe long after its manifest was made: the
     * input rule is checked again, and only the bytes hashed then are sent
     * (a file replaced since, by a link out of its folder or otherwise,
     * never is); those are what is kept. */
    char path[PATH_MAX], sha1[41] = "";
    snprintf(path, sizeof path, "%s/%s", sx_bench_dir(self->bench), rel);
    size_t size = 0;
    char *data = sx_bench_file_check(self->bench, rel, err) == 0
                     ? sx_file_read(path, SX_PROTO_MAX_BYTES - 4096, &size, err)
                     : NULL;
    if (data)
        sx_hash_bytes(data, size, sha1);
    if (data && strcmp(sha1, hash) != 0) {
        sx_error_set(err, "%s: changed since it was hashed for the shard", path);
        free(data);
        data = NULL;
    }
    if (!data)
        return NULL;
    bytes = zchunk_new(data, size);
    free(data);
    if (self->file_bytes_kept + size <= FILE_BYTES_KEPT) {
        zhashx_insert(self->file_bytes, hash, bytes);
        self->file_bytes_kept += size;
    }
    return bytes;
}

void coord_destroy_manifest(void **item)
{
    zlistx_t *list = *item;
    zlistx_destroy(&list);
    *item = NULL;
}

/* ---- workers ----------------------------------------------------------- */

void coord_send_to(sx_coordinator_t *self, worker_t *w, const sx_msg_t *msg)
{
    sx_error_t err;
    if (sx_msg_send(msg, self->router, w->routing_id, &err) != 0)
        sx_warn("to worker %s: %s", w->name, err.msg);
    w->last_sent = zclock_mono();
}

void coord_send_goodbye(sx_coordinator_t *self, zframe_t *routing_id, const char *reason,
                        bool final)
{
    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = sx_strdup(reason);
    bye->final = final;
    sx_msg_send(bye, self->router, routing_id, NULL);
    sx_msg_destroy(&bye);
}

/* Requeues every unit a worker held, in their order, and forgets the worker.
 * With `lost` (it went silent, it died), the ones it may have been running
 * spend an attempt: a worker starts its units in order, at most `slots` at
 * once, and a unit leaves its hands only by a result or a release, so those
 * are among its first `slots` units. The others never started. */
void coord_drop_worker(sx_coordinator_t *self, worker_t *w, const char *why, bool lost)
{
    size_t count = w->held;
    unit_t **units = sx_alloc(count + 1, sizeof *units);
    size_t n = 0;
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        for (unit_t *unit = zlist_first(shard->units); unit;
             unit = zlist_next(shard->units))
            units[n++] = unit;
    if (w->dropped > 1)
        sx_info("worker %s: %zu of its results or released tasks answered no current "
                "attempt: dropped",
                w->name, w->dropped);
    /* Back to the front of the queue last to first, so they keep their order. */
    for (size_t i = count; i-- > 0;) {
        bool spent = lost && i < (size_t)w->slots;
        coord_end_attempt(self, units[i], w->name, why, spent, spent ? NULL : w->key);
    }
    free(units);
    if (w->credited)
        zlistx_delete(self->credited, w->credited);
    if (zhashx_lookup(self->names, w->name) == w)
        zhashx_delete(self->names, w->name);
    self->rebalance = true;
    coord_engine_count(self, w->engine, -1);
    zhashx_delete(self->workers, w->key);
}

/* Whether the unit would rather go elsewhere than to w: it failed there, its
 * previous --repeat round ran there, or that session let it go unspent
 * (HELLO again). */
static bool shuns(unit_t *unit, const worker_t *w)
{
    return coord_failed_on(unit, w->name) ||
           (unit->ran_on && strcmp(unit->ran_on, w->name) == 0) ||
           (unit->dropped_by && strcmp(unit->dropped_by, w->key) == 0);
}

/* Whether a worker other than w that the unit does not shun is here. */
static bool another_could_take(sx_coordinator_t *self, unit_t *unit, worker_t *w)
{
    for (worker_t *v = zhashx_first(self->workers); v; v = zhashx_next(self->workers))
        if (v != w && !shuns(unit, v))
            return true;
    return false;
}

/* Units for one shard, skipping those that shun this worker while another
 * worker could take them, and those that failed here a moment ago: a broken
 * worker that fails everything at once (a full disk) must not spend every
 * attempt of a unit while the healthy ones are paused or reconnecting. A
 * worker whose slots are all busy (not `idle`) takes no unit given back by
 * a RELEASE: it would wait there again, behind running ones, and the next
 * idle worker would recall it again (with hundreds of workers, every
 * worker's units going round on each idle one). */
static zlist_t *take_units(sx_coordinator_t *self, worker_t *w, bool idle)
{
    zlist_t *taken = zlist_new();
    for (unit_t *unit = zlist_first(self->queue);
         unit && zlist_size(taken) < self->config.shard_size;
         unit = zlist_next(self->queue)) {
        if ((unit->given_back && !idle) ||
            (coord_failed_on(unit, w->name) && zclock_mono() < unit->retry_at) ||
            (shuns(unit, w) && another_could_take(self, unit, w)))
            continue;
        zlist_append(taken, unit);
    }
    for (unit_t *unit = zlist_first(taken); unit; unit = zlist_next(taken)) {
        zlist_remove(self->queue, unit);
        self->queued_given_back -= unit->given_back;
        unit->given_back = false;
    }
    return taken;
}

static void assign_shard(sx_coordinator_t *self, worker_t *w, zlist_t *units)
{
    shard_t *shard = sx_alloc(1, sizeof *shard);
    shard->id = ++self->next_shard_id;
    shard->worker = w;
    shard->units = units;
    sx_msg_t *msg = sx_msg_new(SX_MSG_ASSIGN);
    msg->shard_id = shard->id;
    zhashx_t *seen = zhashx_new();
    int64_t now = zclock_mono();
    for (unit_t *unit = zlist_first(units); unit; unit = zlist_next(units)) {
        unit->state = UNIT_HELD;
        unit->shard = shard;
        unit->token = ++self->next_token;
        /* The worker runs what it holds in order, `slots` at a time: this
         * unit waits at most for every one before it (with one slot, exactly
         * that; with more, the bound is generous, never short). */
        w->pending_ms += (int64_t)unit_timeout_s(self, unit) * 1000;
        unit->deadline = now + w->pending_ms + self->config.attempt_grace_ms;
        if (unit->deadline < self->next_deadline)
            self->next_deadline = unit->deadline;
        w->held++;
        sx_msg_add_task(msg, self->methods[unit->method].name, unit->task_id, unit->sql,
                        unit->attempts + 1, unit->token)
            ->sample = unit->sample;
        zlistx_t *files = coord_manifest_of(self, unit->task_id);
        for (manifest_file_t *f = zlistx_first(files); f; f = zlistx_next(files)) {
            if (zhashx_lookup(seen, f->path))
                continue;
            zhashx_insert(seen, f->path, f);
            sx_msg_add_file(msg, f->path, f->hash, f->size);
        }
    }
    zhashx_destroy(&seen);
    msg->no_cache = self->config.repeat > 1;
    zlist_append(w->shards, shard);
    coord_credit_changed(self, w);
    sx_debug("shard %llu (%zu tasks) to worker %s", (unsigned long long)shard->id,
             zlist_size(units), w->name);
    coord_send_to(self, w, msg);
    sx_msg_destroy(&msg);
}

/* Slots of w with nothing to run: a unit it got now would start at once. */
static int free_slots(const worker_t *w)
{
    return w->held < (size_t)w->slots ? w->slots - (int)w->held : 0;
}

/* Credit: a worker gets shards up to its capacity, and past it while one of
 * its slots has nothing to run (with many slots, a slot must not wait for a
 * whole shard to end before the next one comes). */
static bool has_credit(const worker_t *w)
{
    return (int)zlist_size(w->shards) < w->capacity || free_slots(w) > 0;
}

/* Keeps `credited` (the workers dispatch looks at) true to w's credit, so
 * that a dispatch costs what the workers with credit cost, not every
 * worker connected; and notes that a recall may be due (what w holds
 * changed). Called whenever w's shards or units change. */
void coord_credit_changed(sx_coordinator_t *self, worker_t *w)
{
    bool credit = has_credit(w);
    if (credit && !w->credited)
        w->credited = zlistx_add_end(self->credited, w);
    else if (!credit && w->credited) {
        zlistx_delete(self->credited, w->credited);
        w->credited = NULL;
    }
    self->rebalance = true;
}

/* qsort's order for dispatch: the most free slots first. */
static int fewer_free_slots(const void *a, const void *b)
{
    return free_slots(*(worker_t *const *)b) - free_slots(*(worker_t *const *)a);
}

/* Credit-based dispatch (has_credit). */
void coord_dispatch(sx_coordinator_t *self)
{
    size_t count = zlistx_size(self->credited);
    if (zlist_size(self->queue) == 0 || count == 0)
        return;
    /* A copy, not `credited`: assigning changes it. The workers with the most
     * free slots come first, so the units a busy one gave back (RELEASE) go
     * where they start at once rather than back behind its running ones. */
    worker_t **workers = sx_alloc(count, sizeof *workers);
    size_t n = 0;
    for (worker_t *w = zlistx_first(self->credited); w; w = zlistx_next(self->credited))
        workers[n++] = w;
    qsort(workers, n, sizeof *workers, fewer_free_slots);
    for (size_t i = 0; i < n; i++) {
        worker_t *w = workers[i];
        bool idle = free_slots(w) > 0;
        if (!idle && zlist_size(self->queue) == self->queued_given_back)
            continue; /* nothing it may take (take_units), without a look */
        while (zlist_size(self->queue) > 0 && has_credit(w)) {
            zlist_t *units = take_units(self, w, idle);
            if (zlist_size(units) == 0) {
                zlist_destroy(&units);
                break;
            }
            assign_shard(self, w, units);
        }
    }
    free(workers);
}

/* ---- rebalancing ------------------------------------------------------- */

/* Whether w holds a unit it may not have started yet that `idle` would take:
 * a worker runs what it holds in order, `slots` units at a time, so each
 * unit after its first `slots` may still be waiting. */
static bool holds_unstarted_for(const worker_t *w, const worker_t *idle)
{
    int position = 0;
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        for (unit_t *unit = zlist_first(shard->units); unit;
             unit = zlist_next(shard->units))
            if (position++ >= w->slots && !shuns(unit, idle))
                return true;
    return false;
}

/* No task waits behind another while a slot has nothing to run: once the
 * queue is empty and some worker has a free slot (it holds fewer units than
 * it runs at once; with one slot, it holds nothing), each worker holding
 * units such a one would take is sent a RECALL (at most one outstanding per
 * worker); its RELEASE puts the units it has not started back in the queue,
 * and dispatch hands them to the workers with the most free slots first. A
 * worker with a free slot counts as idle, not only one holding nothing:
 * otherwise the units a many-slot worker queues behind its slow ones wait
 * while another's slots stand empty. A worker that never answers keeps its
 * units until its heartbeat or their deadlines give them up. */
void coord_recall_for_idle(sx_coordinator_t *self)
{
    /* Whether to recall depends on what the workers hold alone: looked at
     * again only once that changed, not on every message. */
    if (zlist_size(self->queue) > 0 || !self->rebalance)
        return;
    self->rebalance = false;
    zlist_t *idle = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        if (free_slots(w) > 0)
            zlist_append(idle, w);
    for (worker_t *w = zlist_size(idle) ? zhashx_first(self->workers) : NULL; w;
         w = zhashx_next(self->workers)) {
        if (w->recalled || w->held <= (size_t)w->slots)
            continue; /* a recall is out, or it runs all it holds */
        worker_t *v = zlist_first(idle);
        while (v && !holds_unstarted_for(w, v))
            v = zlist_next(idle);
        if (!v)
            continue;
        sx_debug("worker %s is idle: recalling the tasks worker %s has not started",
                 v->name, w->name);
        sx_msg_t *recall = sx_msg_new(SX_MSG_RECALL);
        coord_send_to(self, w, recall);
        sx_msg_destroy(&recall);
        w->recalled = true;
    }
    zlist_destroy(&idle);
}
