/* coordinator.c: the coordinator's life cycle and its loop (see
 * coordinator.h, and coordinator_int.h for how the room's files share the
 * state): set-up (methods, the units of the run, the journal replayed for
 * --resume and --rerun, the ROUTER socket), then the loop that polls the
 * socket, expires silent workers and overdue attempts, dispatches and
 * reports progress until every unit is settled, and the run's status. */
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
#include "common/sample.h"
#include "proto/proto.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- set-up ------------------------------------------------------------ */

static void set_defaults(sx_coordinator_config_t *c)
{
    if (c->shard_size == 0)
        c->shard_size = 4;
    if (c->heartbeat_ms <= 0)
        c->heartbeat_ms = 1000;
    if (c->dead_after_ms <= 0)
        c->dead_after_ms = 5 * c->heartbeat_ms;
    if (c->retry_budget <= 0)
        c->retry_budget = 3;
    if (c->progress_ms <= 0)
        c->progress_ms = 1000;
    if (c->attempt_grace_ms <= 0)
        c->attempt_grace_ms = 60000;
    if (c->max_samples <= 0)
        c->max_samples = SX_SAMPLES_DEFAULT;
}

/* Names are safe (no '/'), so the key is unambiguous. */
void coord_unit_key(char *key, size_t size, const char *method, const char *task_id,
                    int sample)
{
    snprintf(key, size, "%s/%s/%d", method, task_id, sample);
}

/* Whether OUT/NAME would collide with a file of the OUT layout (the journal,
 * the summary, or the temporary files they are written through). */
static bool name_collides_with_out(const char *name)
{
    static const char *const taken[] = {"journal.jsonl", "summary.json", "report.html"};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        size_t len = strlen(taken[i]);
        if (strncmp(name, taken[i], len) == 0 && (name[len] == '\0' || name[len] == '.'))
            return true;
    }
    return false;
}

static int load_methods(sx_coordinator_t *self, sx_error_t *err)
{
    const sx_coordinator_config_t *c = &self->config;
    self->methods = sx_alloc(c->method_count, sizeof *self->methods);
    self->method_count = c->method_count;
    for (size_t m = 0; m < c->method_count; m++) {
        if (!sx_name_is_safe(c->method_names[m]))
            return sx_error_set(err, "method name '%s' is not a safe folder name",
                                c->method_names[m]);
        if (name_collides_with_out(c->method_names[m]))
            return sx_error_set(err,
                                "method name '%s' collides with OUT/%s of the output "
                                "layout: choose another name",
                                c->method_names[m], c->method_names[m]);
        for (size_t other = 0; other < m; other++)
            if (strcmp(c->method_names[other], c->method_names[m]) == 0)
                return sx_error_set(err, "method name '%s' is given twice",
                                    c->method_names[m]);
        self->methods[m].name = sx_strdup(c->method_names[m]);
        self->methods[m].predictions = sx_predictions_load_samples(
            c->prediction_files[m], self->bench, c->max_samples, err);
        if (!self->methods[m].predictions)
            return sx_error_prefix(err, "method %s", c->method_names[m]), -1;
        self->methods[m].samples = sx_predictions_samples(self->methods[m].predictions);
        self->methods[m].csv_folder_made =
            sx_alloc((size_t)self->methods[m].samples, sizeof(bool));
        /* A repeat compares a candidate's runs; a sample is another candidate
         * (each one its own run already): the two would need a stability per
         * (task, sample) that nothing reports yet. */
        if (c->repeat > 1 && self->methods[m].samples > 1)
            return sx_error_set(err,
                                "--repeat cannot be combined with several samples per "
                                "task: method %s has %d samples (%s); run --repeat on a "
                                "file of one sample per task",
                                c->method_names[m], self->methods[m].samples,
                                c->prediction_files[m]);
    }
    return 0;
}

static bool in_subset(const sx_coordinator_config_t *c, size_t index)
{
    return c->subset_count == 0 || index % c->subset_count == c->subset_index;
}

/* Marks the bench positions of the --tasks IDs in `selected`; an ID that is
 * not in task_ids.txt is an error naming every such ID. */
static int select_tasks(sx_coordinator_t *self, bool *selected, sx_error_t *err)
{
    const sx_coordinator_config_t *c = &self->config;
    char *unknown = NULL;
    size_t size = 0, count = 0;
    FILE *out = open_memstream(&unknown, &size);
    for (size_t i = 0; i < c->task_count; i++) {
        long index = sx_bench_index_of(self->bench, c->tasks[i]);
        if (index >= 0)
            selected[index] = true;
        else
            fprintf(out, "%s'%s'", count++ ? ", " : "", c->tasks[i]);
    }
    fclose(out);
    int rc = count ? sx_error_set(err, "--tasks: %zu ID(s) not in %s/task_ids.txt: %s",
                                  count, c->bench_dir, unknown)
                   : 0;
    free(unknown);
    return rc;
}

/* queue_order: the units grouped by their task (task_of[i] is units[i]'s
 * index in the bench), each task's in the order of units. */
static void order_by_task(sx_coordinator_t *self, const size_t *task_of, size_t tasks)
{
    size_t *next = sx_alloc(tasks + 1, sizeof *next);
    for (size_t i = 0; i < self->unit_count; i++)
        next[task_of[i] + 1]++;
    for (size_t t = 1; t <= tasks; t++)
        next[t] += next[t - 1];
    self->queue_order = sx_alloc(self->unit_count + 1, sizeof *self->queue_order);
    for (size_t i = 0; i < self->unit_count; i++)
        self->queue_order[next[task_of[i]]++] = &self->units[i];
    free(next);
}

static int build_units(sx_coordinator_t *self, sx_error_t *err)
{
    size_t tasks = sx_bench_task_count(self->bench);
    bool *selected = sx_alloc(tasks + 1, sizeof *selected);
    if (self->config.task_count && select_tasks(self, selected, err) != 0) {
        free(selected);
        return -1;
    }
    size_t units = 0;
    for (size_t m = 0; m < self->method_count; m++)
        units += tasks * (size_t)self->methods[m].samples;
    self->units = sx_alloc(units + 1, sizeof *self->units);
    size_t *task_of = sx_alloc(units + 1, sizeof *task_of);
    for (size_t t = 0; t < tasks; t++)
        self->run_tasks +=
            in_subset(&self->config, t) && (!self->config.task_count || selected[t]);
    /* Method by method, task by task, each task's samples in order: the order
     * of results.jsonl. */
    for (size_t m = 0; m < self->method_count; m++) {
        for (size_t t = 0; t < tasks; t++) {
            if (!in_subset(&self->config, t) || (self->config.task_count && !selected[t]))
                continue;
            for (int k = 0; k < self->methods[m].samples; k++) {
                task_of[self->unit_count] = t;
                unit_t *unit = &self->units[self->unit_count++];
                unit->method = m;
                unit->task_id = sx_bench_task_id(self->bench, t);
                unit->sample = k;
                unit->sql = sx_predictions_sample_sql(self->methods[m].predictions,
                                                      unit->task_id, k);
                char key[600];
                coord_unit_key(key, sizeof key, self->methods[m].name, unit->task_id, k);
                zhashx_insert(self->unit_index, key, unit);
            }
        }
    }
    order_by_task(self, task_of, tasks);
    free(task_of);
    free(selected);
    return 0;
}

/* Whether the CSV a journaled result points at is still the one journaled
 * (a record without a hash predates them and is taken as it is). */
static bool csv_is_journaled_one(const sx_result_t *result, const char *csv_sha1)
{
    if (!result->csv || !csv_sha1)
        return true;
    char hex[41];
    uint64_t size = 0;
    sx_error_t err;
    return sx_hash_file(result->csv, hex, &size, &err) == 0 && strcmp(hex, csv_sha1) == 0;
}

/* Replays one journal record. A unit's last record for its current inputs
 * holds (a --rerun appends the new verdict after the old one); a record for
 * other inputs, or whose CSV was replaced since, makes the unit run again
 * unless a later record holds. */
static int resume_visit(const char *method, const char *inputs, const char *csv_sha1,
                        const sx_result_t *result, void *arg, sx_error_t *err)
{
    (void)err;
    sx_coordinator_t *self = arg;
    unit_t *unit = coord_find_unit(self, method, result->task_id, result->sample);
    if (!unit) {
        sx_debug("journal: %s/%s sample %d is not part of this run, ignored", method,
                 result->task_id, result->sample);
        self->not_in_run++;
        return 0;
    }
    char want[41];
    coord_unit_inputs(self, unit, want);
    if (!inputs || strcmp(inputs, want) != 0) {
        /* Computed for another candidate (or task, profile, version). */
        sx_debug("journal: %s/%s: its inputs changed since it was settled", method,
                 result->task_id);
        unit->stale = unit->state != UNIT_SETTLED;
        return 0;
    }
    if (!csv_is_journaled_one(result, csv_sha1)) {
        /* This record replaced any earlier one for these inputs, but its CSV
         * is gone or another: neither verdict holds, the unit runs again. */
        sx_debug("journal: %s/%s: %s is not the CSV journaled with its verdict", method,
                 result->task_id, result->csv);
        if (unit->state == UNIT_SETTLED)
            coord_unsettle(self, unit);
        unit->stale = true;
        return 0;
    }
    if (unit->state == UNIT_SETTLED)
        coord_unsettle(self, unit); /* an earlier verdict, replaced by a rerun's */
    coord_mark_settled(self, unit, result);
    unit->stale = false;
    return 0;
}

/* --rerun: the settled units of the chosen statuses go back to new. */
static void apply_rerun(sx_coordinator_t *self)
{
    size_t count[SX_STATUS_COUNT] = {0};
    for (size_t i = 0; i < self->unit_count; i++) {
        unit_t *unit = &self->units[i];
        if (unit->state == UNIT_SETTLED && self->config.rerun[unit->result.status]) {
            count[unit->result.status]++;
            coord_unsettle(self, unit);
        }
    }
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        if (self->config.rerun[s])
            sx_info("--rerun %s: %zu settled task(s) run again", sx_status_name(s),
                    count[s]);
}

static int open_journal(sx_coordinator_t *self, sx_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/journal.jsonl", self->out_dir);
    struct stat st;
    if (!self->config.resume && stat(path, &st) == 0 && st.st_size > 0)
        return sx_error_set(err,
                            "%s exists: pass --resume to continue that run, or choose "
                            "another --output",
                            path);
    self->journal =
        sx_journal_open(path, self->config.resume ? resume_visit : NULL, self, err);
    return self->journal ? 0 : -1;
}

static int bind_router(sx_coordinator_t *self, sx_error_t *err)
{
    const sx_coordinator_config_t *c = &self->config;
    bool curve = c->cert_path != NULL;
    if (!curve && !c->insecure && !sx_endpoint_is_loopback(c->endpoint))
        return sx_error_set(err,
                            "%s: plain TCP on a non-loopback address is refused; give "
                            "--cert and --allow (CURVE) or --insecure",
                            c->endpoint);
    self->router = zsock_new(ZMQ_ROUTER);
    zsock_set_maxmsgsize(self->router, (int64_t)SX_PROTO_MAX_BYTES + 1024);
    zsock_set_router_mandatory(self->router, 0);
    zsock_set_sndhwm(self->router, 0);
    zsock_set_rcvhwm(self->router, 0);
    if (curve) {
        if (!c->allow_dir)
            return sx_error_set(err, "--cert needs --allow DIR of worker public keys");
        zcert_t *cert = zcert_load(c->cert_path);
        if (!cert)
            return sx_error_set(err,
                                "%s: cannot load the CURVE certificate (and its "
                                "_secret file)",
                                c->cert_path);
        self->auth = zactor_new(zauth, NULL);
        /* Verbose zauth logs each handshake, so a worker whose key is not in
         * the allow list shows up as "denied (CURVE) client_key=..." instead
         * of silently never joining. */
        zstr_sendx(self->auth, "VERBOSE", NULL);
        zsock_wait(self->auth);
        zstr_sendx(self->auth, "CURVE", c->allow_dir, NULL);
        zsock_wait(self->auth);
        zcert_apply(cert, self->router);
        zcert_destroy(&cert);
        zsock_set_curve_server(self->router, 1);
        zsock_set_zap_domain(self->router, "streamex");
    }
    if (zsock_bind(self->router, "%s", c->endpoint) < 0)
        return sx_error_set(err, "cannot bind %s: %s", c->endpoint,
                            zmq_strerror(zmq_errno()));
    self->endpoint = zsock_last_endpoint(self->router);
    return 0;
}

static void destroy_worker(void **item)
{
    worker_t *w = *item;
    if (!w)
        return;
    free(w->key);
    zframe_destroy(&w->routing_id);
    free(w->name);
    free(w->runtime);
    free(w->engine);
    zlist_destroy(&w->shards);
    free(w);
    *item = NULL;
}

static bool has_rerun(const sx_coordinator_config_t *config)
{
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        if (config->rerun[s])
            return true;
    return false;
}

/* A random start, so a token from another run (a worker's spool) never
 * matches a dispatch of this one. */
static uint64_t random_token_base(void)
{
    uint64_t value = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&value, sizeof value, 1, f) != 1)
        value = (uint64_t)zclock_time() * 2654435761u ^ (uint64_t)getpid();
    if (f)
        fclose(f);
    return value >> 1; /* room to count up */
}

sx_coordinator_t *sx_coordinator_new(const sx_coordinator_config_t *config,
                                     sx_error_t *err)
{
    sx_coordinator_t *self = sx_alloc(1, sizeof *self);
    self->config = *config;
    set_defaults(&self->config);
    self->unit_index = zhashx_new();
    self->queue = zlist_new();
    self->workers = zhashx_new();
    self->engines = zhashx_new();
    zhashx_set_destructor(self->workers, destroy_worker);
    self->names = zhashx_new();
    self->timeouts = zhashx_new();
    self->credited = zlistx_new();
    self->next_deadline = INT64_MAX;
    self->manifests = zhashx_new();
    zhashx_set_destructor(self->manifests, coord_destroy_manifest);
    self->files = zhashx_new();
    zhashx_set_destructor(self->files, (zhashx_destructor_fn *)zstr_free);
    self->file_bytes = zhashx_new();
    zhashx_set_destructor(self->file_bytes, (zhashx_destructor_fn *)zchunk_destroy);
    self->runtimes = zhashx_new();
    zhashx_set_destructor(self->runtimes, (zhashx_destructor_fn *)zstr_free);
    self->csvs = sx_file_batch_new();
    self->acks = zlist_new();
    self->started_ms = zclock_mono();
    self->round = 1;
    self->started_at = sx_run_clock();
    self->next_token = random_token_base();
    sx_error_clear(&self->fatal);
    int rc = -1;
    if (!config->out_dir || !config->bench_dir || !config->endpoint ||
        !config->method_count)
        sx_error_set(err,
                     "coordinator needs --bench, --method, --output and an endpoint");
    else if (config->subset_count && config->subset_index >= config->subset_count)
        sx_error_set(err, "--shard %zu/%zu: I must be below N", config->subset_index,
                     config->subset_count);
    else if (config->subset_count && config->task_count)
        sx_error_set(err, "--shard and --tasks cannot be combined: choose one subset");
    else if (has_rerun(config) && !config->resume)
        sx_error_set(err, "--rerun needs --resume: it re-executes settled tasks of the "
                          "journaled run in --output");
    else if (sx_mkdirs(config->out_dir, err) == 0 &&
             (self->out_dir = realpath(config->out_dir, NULL)) != NULL &&
             (self->bench = sx_bench_open(config->bench_dir, err)) != NULL &&
             load_methods(self, err) == 0) {
        if (build_units(self, err) == 0 && open_journal(self, err) == 0 &&
            bind_router(self, err) == 0)
            rc = 0;
    }
    if (rc != 0) {
        sx_coordinator_destroy(&self);
        return NULL;
    }
    size_t changed = 0;
    for (size_t i = 0; i < self->unit_count; i++)
        changed += self->units[i].stale && self->units[i].state != UNIT_SETTLED;
    if (changed)
        sx_warn("journal: %zu verdicts were computed for other inputs (a changed "
                "candidate, task, profile or streamex version) or their final CSV was "
                "replaced since: those tasks run again",
                changed);
    if (self->not_in_run)
        sx_info("journal: %zu record(s) of tasks outside this run's selection kept, "
                "not used",
                self->not_in_run);
    apply_rerun(self);
    self->settled_at_start = self->settled;
    coord_settle_missing_predictions(self);
    coord_commit(self);
    if (sx_error_is_set(&self->fatal)) {
        *err = self->fatal;
        sx_coordinator_destroy(&self);
        return NULL;
    }
    for (size_t i = 0; i < self->unit_count; i++)
        if (self->queue_order[i]->state == UNIT_NEW)
            coord_enqueue(self, self->queue_order[i], false);
    return self;
}

void sx_coordinator_destroy(sx_coordinator_t **self_p)
{
    sx_coordinator_t *self = *self_p;
    if (!self)
        return;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        for (shard_t *s = zlist_first(w->shards); s; s = zlist_next(w->shards))
            coord_free_shard(s);
    zhashx_destroy(&self->workers);
    zhashx_destroy(&self->engines);
    zhashx_destroy(&self->names);
    zhashx_destroy(&self->timeouts);
    zlistx_destroy(&self->credited);
    coord_flush_acks(self, false);
    zlist_destroy(&self->acks);
    sx_file_batch_destroy(&self->csvs);
    free(self->settling);
    zsock_destroy(&self->router);
    zactor_destroy(&self->auth);
    sx_journal_destroy(&self->journal);
    for (size_t i = 0; i < self->unit_count; i++) {
        sx_result_clear(&self->units[i].result); /* a --repeat round keeps it too */
        zlist_destroy(&self->units[i].failed_on);
        free(self->units[i].ran_on);
        free(self->units[i].dropped_by);
    }
    free(self->units);
    free(self->queue_order);
    for (size_t m = 0; m < self->method_count; m++) {
        free(self->methods[m].name);
        sx_predictions_destroy(&self->methods[m].predictions);
        free(self->methods[m].csv_folder_made);
    }
    free(self->methods);
    zhashx_destroy(&self->unit_index);
    zlist_destroy(&self->queue);
    zhashx_destroy(&self->manifests);
    zhashx_destroy(&self->files);
    zhashx_destroy(&self->file_bytes);
    zhashx_destroy(&self->runtimes);
    sx_bench_destroy(&self->bench);
    free(self->out_dir);
    free(self->endpoint);
    free(self);
    *self_p = NULL;
}

const char *sx_coordinator_endpoint(const sx_coordinator_t *self)
{
    return self->endpoint;
}

/* ---- the loop ---------------------------------------------------------- */

/* A worker that keeps heartbeating but returns nothing loses the units
 * whose deadline passed; each such attempt is spent. The held units are
 * looked at only once the earliest deadline may have come. */
static void expire_attempts(sx_coordinator_t *self, int64_t now)
{
    if (now < self->next_deadline)
        return;
    self->next_deadline = INT64_MAX;
    zlist_t *late = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        for (shard_t *shard = zlist_first(w->shards); shard;
             shard = zlist_next(w->shards))
            for (unit_t *unit = zlist_first(shard->units); unit;
                 unit = zlist_next(shard->units)) {
                if (now >= unit->deadline)
                    zlist_append(late, unit);
                else if (unit->deadline < self->next_deadline)
                    self->next_deadline = unit->deadline;
            }
    for (unit_t *unit = zlist_first(late); unit; unit = zlist_next(late)) {
        const char *name = unit->shard->worker->name;
        char why[512];
        snprintf(why, sizeof why, "worker %s returned no result within %d s + %d ms",
                 name, unit->timeout_s, self->config.attempt_grace_ms);
        char unit_name[600];
        coord_unit_name(self, unit, unit_name, sizeof unit_name);
        sx_warn("%s: %s", unit_name, why);
        coord_end_attempt(self, unit, name, why, true, NULL);
    }
    zlist_destroy(&late);
}

/* The coordinator's own stall is no worker's silence and eats no attempt's
 * time: every worker's expiry and every held unit's deadline move by it
 * (see sx_clock_stall_ms). */
static void excuse_own_stall(sx_coordinator_t *self)
{
    int64_t stall = sx_clock_stall_ms(&self->loop_at, self->config.heartbeat_ms);
    if (stall == 0)
        return;
    if (sx_clock_stall_is_long(stall, self->config.dead_after_ms))
        sx_warn("the coordinator stood still for %lld ms: its workers' silence and "
                "deadlines count from now",
                (long long)stall);
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        w->expires_at += stall;
        for (shard_t *shard = zlist_first(w->shards); shard;
             shard = zlist_next(w->shards))
            for (unit_t *unit = zlist_first(shard->units); unit;
                 unit = zlist_next(shard->units))
                unit->deadline += stall;
    }
    if (self->next_deadline != INT64_MAX)
        self->next_deadline += stall;
}

/* Declares silent workers dead and beats the ones sent nothing for a beat. */
static void beat_or_bury(sx_coordinator_t *self, int64_t now)
{
    self->next_beat_scan = now + self->config.heartbeat_ms / 4;
    zlist_t *dead = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (now >= w->expires_at)
            zlist_append(dead, w);
        else if (now - w->last_sent >= self->config.heartbeat_ms) {
            sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
            coord_send_to(self, w, beat);
            sx_msg_destroy(&beat);
        }
    }
    for (worker_t *w = zlist_first(dead); w; w = zlist_next(dead)) {
        char why[512];
        snprintf(why, sizeof why, "worker %s silent for %d ms", w->name,
                 self->config.dead_after_ms);
        sx_warn("%s: declared dead, %zu shards go back to the queue", why,
                zlist_size(w->shards));
        coord_drop_worker(self, w, why, true);
    }
    zlist_destroy(&dead);
}

/* Every worker is looked at four times a beat, not on every message: a
 * beat goes out, and a death is declared, at most a quarter beat late, and
 * a message costs the same with 8 workers or 256. Held units are looked at
 * once their earliest deadline may have come (expire_attempts). */
static void expire_and_beat(sx_coordinator_t *self)
{
    int64_t now = zclock_mono();
    if (now >= self->next_beat_scan)
        beat_or_bury(self, now);
    expire_attempts(self, now);
}

/* What the figures above do not say: that they count a --tasks subset
 * (that infra_error tasks are left is the command's last line, cli/ending.c). */
void coord_print_last_lines(sx_coordinator_t *self, FILE *out)
{
    if (self->config.task_count)
        fprintf(out,
                "subset: every figure above counts %zu of the %zu task IDs (--tasks)\n",
                self->run_tasks, sx_bench_task_count(self->bench));
}

/* How often the loop notes which units are running (the ETA's clock). */
#define NOTE_RUNNING_MS 250

/* Marks the units each worker is running now (the first `slots` it holds,
 * in order) with the time the loop first saw them so: the ETA counts how
 * long each has already run. Called on a timer, not per message, so its walk
 * over the workers costs nothing per result. */
static void note_running(sx_coordinator_t *self, int64_t now)
{
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        int running = 0;
        for (shard_t *shard = zlist_first(w->shards); shard && running < w->slots;
             shard = zlist_next(w->shards))
            for (unit_t *u = zlist_first(shard->units); u && running < w->slots;
                 u = zlist_next(shard->units), running++)
                if (!u->running_ms)
                    u->running_ms = now;
    }
}

/* Seconds a running unit still needs: the usual time a task takes less what
 * it has run, or, once it is past the usual time, as long again as it has
 * run so far (it is a slow one, and how slow is unknown); never past its
 * attempt's deadline, when it is given up. */
static double unit_remaining(const unit_t *u, double usual, int64_t now)
{
    double ran = (double)(now - u->running_ms) / 1000.0;
    double left = ran < usual ? usual - ran : ran;
    double until_deadline = (double)(u->deadline - now) / 1000.0;
    return until_deadline > 0 && left > until_deadline ? until_deadline : left;
}

/* The run's ETA in seconds (docs/commands.md, "Progress"), or -1 before any
 * task has been executed: the work left, the running units' remaining time
 * plus the usual time for each unit not running yet, spread over every
 * connected slot, but never less than the longest running unit needs. */
static double eta_seconds(sx_coordinator_t *self, int64_t now)
{
    if (self->settled == self->unit_count)
        return 0;
    if (!self->executed)
        return -1;
    double usual = self->executed_seconds / (double)self->executed;
    double work = 0, longest = 0;
    size_t running = 0, slots = 0;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        slots += (size_t)w->slots;
        for (shard_t *shard = zlist_first(w->shards); shard;
             shard = zlist_next(w->shards))
            for (unit_t *u = zlist_first(shard->units); u; u = zlist_next(shard->units)) {
                if (!u->running_ms)
                    continue;
                double left = unit_remaining(u, usual, now);
                work += left;
                longest = left > longest ? left : longest;
                running++;
            }
    }
    work += usual * (double)(self->unit_count - self->settled - running);
    double spread = work / (double)(slots ? slots : 1);
    return spread > longest ? spread : longest;
}

static void say_final_goodbye(sx_coordinator_t *self)
{
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        coord_send_goodbye(self, w->routing_id, "run complete", true);
    zsock_set_linger(self->router, 2000);
}

/* Hands the run's state (done/total, EX so far, workers, ETA) to the
 * progress callback, if there is one. */
static void report_progress(sx_coordinator_t *self)
{
    if (!self->config.progress)
        return;
    char *json = sx_coordinator_status_json(self);
    self->config.progress(json, self->config.progress_arg);
    free(json);
}

int sx_coordinator_run(sx_coordinator_t *self, zsock_t *stop, sx_error_t *err)
{
    zpoller_t *poller = zpoller_new(self->router, stop, NULL);
    int64_t next_progress = 0, next_running = 0;
    self->loop_at = zclock_mono();
    int rc = 1;
    sx_info("coordinator on %s: %zu tasks to settle (%zu already settled)",
            self->endpoint, self->unit_count - self->settled, self->settled);
    while (!sx_signals_caught()) {
        if (sx_error_is_set(&self->fatal))
            break;
        if (self->settled == self->unit_count && !coord_start_next_round(self)) {
            rc = 0;
            break;
        }
        coord_dispatch(self);
        coord_recall_for_idle(self);
        void *which = zpoller_wait(poller, self->config.heartbeat_ms / 2);
        if (which == stop && stop)
            break;
        if (which == self->router)
            coord_on_messages(self);
        else if (zpoller_terminated(poller))
            break;
        excuse_own_stall(self);
        expire_and_beat(self);
        coord_commit(self);
        if (zclock_mono() >= next_running) {
            note_running(self, zclock_mono());
            next_running = zclock_mono() + NOTE_RUNNING_MS;
        }
        if (zclock_mono() >= next_progress) {
            report_progress(self);
            next_progress = zclock_mono() + self->config.progress_ms;
        }
    }
    zpoller_destroy(&poller);
    sx_info("bench files: %zu sent (%llu bytes) to %zu worker session(s): %.0f bytes "
            "a session",
            self->files_sent, (unsigned long long)self->file_bytes_sent, self->sessions,
            self->sessions ? (double)self->file_bytes_sent / (double)self->sessions
                           : 0.0);
    report_progress(self); /* the final state, before the EX lines */
    if (rc == 0) {
        /* The workers go first: writing the outputs of a large run takes
         * longer than they wait for a silent coordinator, and a worker that
         * reconnected in the meantime would never hear that the run ended. */
        say_final_goodbye(self);
        if (coord_write_outputs(self, err) != 0)
            rc = -1;
    } else {
        if (sx_error_is_set(&self->fatal))
            *err = self->fatal;
        sx_warn("stopped with %zu of %zu settled; the journal keeps them: rerun with "
                "--resume",
                self->settled, self->unit_count);
    }
    return rc;
}

size_t sx_coordinator_settled(const sx_coordinator_t *self)
{
    return self->settled;
}

size_t sx_coordinator_infra_errors(const sx_coordinator_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->unit_count; i++)
        count += self->units[i].state == UNIT_SETTLED &&
                 self->units[i].result.status == SX_STATUS_INFRA_ERROR;
    return count;
}

char *sx_coordinator_status_json(sx_coordinator_t *self)
{
    double elapsed = (double)(zclock_mono() - self->started_ms) / 1000.0; /* to the ms */
    json_t *root = json_object();
    json_object_set_new(root, "done", json_integer((json_int_t)self->settled));
    json_object_set_new(root, "total", json_integer((json_int_t)self->unit_count));
    json_object_set_new(root, "correct", json_integer((json_int_t)self->correct));
    json_object_set_new(root, "failures", json_integer((json_int_t)self->failures));
    json_object_set_new(root, "cached", json_integer((json_int_t)self->cached));
    json_object_set_new(
        root, "ex", json_real(self->settled ? (double)self->correct / self->settled : 0));
    json_object_set_new(root, "elapsed_s", json_real(elapsed));
    double eta = eta_seconds(self, zclock_mono());
    json_object_set_new(root, "eta_s",
                        eta >= 0 ? json_real(round(eta * 1000) / 1000) : json_null());
    json_t *workers = json_array();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        json_t *item = json_object();
        json_object_set_new(item, "name", json_string(w->name));
        json_object_set_new(item, "shards",
                            json_integer((json_int_t)zlist_size(w->shards)));
        json_object_set_new(item, "done", json_integer((json_int_t)w->done));
        json_object_set_new(item, "state",
                            json_string(zlist_size(w->shards) ? "busy" : "idle"));
        json_array_append_new(workers, item);
    }
    json_object_set_new(root, "workers", workers);
    char *text = sx_json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return text;
}
