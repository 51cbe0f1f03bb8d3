/* coordinator.c: shards (method, task) pairs over a ROUTER socket to workers
 * and settles their results (see coordinator.h). The pieces: `unit_t` is one
 * (method, task) pair with its attempts and final result; `shard_t` is a batch
 * of units held by one worker; `worker_t` is one connected worker (one
 * routing id) with its credit and heartbeat deadline. The loop polls the
 * socket, applies each message, expires silent workers and overdue attempts,
 * and dispatches queued units to workers with free credit, those with the
 * most free slots first. A worker runs up to `slots` units at once (its
 * HELLO says how many), the first ones it holds, in order. When the queue is
 * empty and a worker has a free slot, a worker holding units it has not
 * started is sent a RECALL; its RELEASE gives them back unspent (a worker
 * holds shards of several units but runs only `slots` at a time, so without
 * this the last units of a run wait behind slow tasks while another worker
 * could run them).
 *
 * Safety does not depend on timing: a unit is in exactly one state (queued,
 * held by one shard of one worker under one attempt token, or settled), and
 * every change goes through enqueue / end_attempt / settle. A RESULT counts
 * only when it answers the current token of a unit its sender holds; any
 * other RESULT is logged and dropped without touching state. A RELEASE takes
 * back only units its sender holds under the tokens it names; the units a
 * worker keeps are still the ones it runs next, in order. */
#include "coordinator/coordinator.h"

#include "common/clock.h"
#include "common/csv.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/predictions.h"
#include "common/result.h"
#include "common/signals.h"
#include "common/task.h"
#include "common/score.h"
#include "coordinator/journal.h"
#include "common/report.h"
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
#include <unistd.h>

typedef struct _shard_t shard_t;
typedef struct _worker_t worker_t;

typedef enum { UNIT_NEW, UNIT_QUEUED, UNIT_HELD, UNIT_SETTLED } unit_state_t;

typedef struct {
    size_t method;       /* index into methods */
    const char *task_id; /* owned by the bench */
    const char *sql;     /* owned by the predictions; NULL = missing */
    int attempts;        /* spent: infra_error, its worker lost, its deadline missed */
    int timeout_s;       /* the task's, read at its first dispatch */
    bool stale;          /* the journal holds a verdict for other inputs */
    unit_state_t state;
    uint64_t token;     /* the current dispatch, while held */
    int64_t deadline;   /* when the current dispatch is given up, while held */
    sx_result_t result; /* when settled */
    zlist_t *failed_on; /* names of the workers that spent one of its attempts */
    int64_t retry_at;   /* not back to one of those before this */
    char *dropped_by;   /* routing id of the session that let it go unspent */
    char *ran_on;       /* --repeat: the worker of its previous round */
    shard_t *shard;     /* the shard holding it, while held */
} unit_t;

struct _shard_t {
    uint64_t id;
    worker_t *worker;
    zlist_t *units; /* unit_t*, unsettled ones still held */
};

struct _worker_t {
    char *key; /* routing id in hex */
    zframe_t *routing_id;
    char *name;
    char *runtime; /* what it executes on, as its HELLO said */
    int capacity;
    int slots;       /* units it runs at once: the first `slots` it holds */
    zlist_t *shards; /* shard_t* */
    int64_t expires_at;
    int64_t last_sent;
    int64_t pending_ms; /* timeouts of the units it holds, summed */
    size_t done;
    size_t dropped; /* results (and released tasks) that answered no current
                       attempt of its units */
    bool recalled;  /* a RECALL is out, its RELEASE not in yet */
};

typedef struct {
    char *name;
    sx_predictions_t *predictions;
} method_t;

/* A bench file a task needs, relative to BENCH. */
typedef struct {
    char *path;
    char hash[41];
    uint64_t size;
} manifest_file_t;

struct _sx_coordinator_t {
    sx_coordinator_config_t config;
    char *out_dir; /* absolute */
    char *endpoint;
    sx_bench_t *bench;
    method_t *methods;
    size_t method_count;
    unit_t *units;
    size_t unit_count;
    zhashx_t *unit_index; /* "method/task" -> unit_t* */
    zlist_t *queue;       /* unit_t* waiting for a worker */
    zhashx_t *workers;    /* key -> worker_t* */
    zhashx_t *manifests;  /* task_id -> zlistx of manifest_file_t* */
    zhashx_t *files;      /* hash -> absolute path */
    zhashx_t *runtimes;   /* worker name -> its runtime, for the workers whose
                             results counted (summary.json's run.workers) */
    sx_journal_t *journal;
    zsock_t *router;
    zactor_t *auth;
    uint64_t next_shard_id;
    uint64_t next_token; /* starts at a random value: tokens of another run never match */
    sx_error_t fatal;    /* set when a result cannot be made durable: the run stops */
    size_t settled, correct, failures, settled_at_start;
    size_t cached;     /* settled results a worker's result cache served */
    int round;         /* --repeat: the round running, from 1 */
    size_t not_in_run; /* journal records of units outside this run (--tasks, --shard) */
    int64_t started_ms;
    int64_t loop_at;   /* when the loop last came round (sx_clock_stall_ms) */
    double started_at; /* Unix time, for summary.json's "run" */
};

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
}

static void unit_key(char *key, size_t size, const char *method, const char *task_id)
{
    snprintf(key, size, "%s/%s", method, task_id);
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
        self->methods[m].predictions =
            sx_predictions_load(c->prediction_files[m], self->bench, err);
        if (!self->methods[m].predictions)
            return sx_error_prefix(err, "method %s", c->method_names[m]), -1;
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

static int build_units(sx_coordinator_t *self, sx_error_t *err)
{
    size_t tasks = sx_bench_task_count(self->bench);
    bool *selected = sx_alloc(tasks + 1, sizeof *selected);
    if (self->config.task_count && select_tasks(self, selected, err) != 0) {
        free(selected);
        return -1;
    }
    self->units = sx_alloc(self->method_count * tasks + 1, sizeof *self->units);
    for (size_t m = 0; m < self->method_count; m++) {
        for (size_t t = 0; t < tasks; t++) {
            if (!in_subset(&self->config, t) || (self->config.task_count && !selected[t]))
                continue;
            unit_t *unit = &self->units[self->unit_count++];
            unit->method = m;
            unit->task_id = sx_bench_task_id(self->bench, t);
            unit->sql = sx_predictions_sql(self->methods[m].predictions, unit->task_id);
            char key[600];
            unit_key(key, sizeof key, self->methods[m].name, unit->task_id);
            zhashx_insert(self->unit_index, key, unit);
        }
    }
    free(selected);
    return 0;
}

static unit_t *find_unit(sx_coordinator_t *self, const char *method, const char *task_id)
{
    char key[600];
    unit_key(key, sizeof key, method, task_id);
    return zhashx_lookup(self->unit_index, key);
}

/* Counts a settled result in (+1) or out (-1) of the run's tallies. */
static void tally(sx_coordinator_t *self, const sx_result_t *result, int sign)
{
    sx_status_t status = result->status;
    self->settled += (size_t)sign;
    self->cached += result->cached ? (size_t)sign : 0;
    if (status == SX_STATUS_MATCH)
        self->correct += (size_t)sign;
    else if (status != SX_STATUS_MISMATCH && status != SX_STATUS_MISSING_PREDICTION)
        self->failures += (size_t)sign;
}

/* Marks a unit settled without (re)writing its CSV or journal line. */
static void mark_settled(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result)
{
    sx_result_init(&unit->result, result->task_id, result->status, result->detail,
                   result->csv);
    unit->result.attempts = result->attempts;
    unit->result.seconds = result->seconds;
    unit->result.strict = result->strict;
    unit->result.steps = result->steps;
    unit->result.cached = result->cached;
    free(unit->result.worker);
    unit->result.worker = sx_strdup(result->worker ? result->worker : "");
    unit->state = UNIT_SETTLED;
    tally(self, result, +1);
}

/* Takes a settled unit back to new (its result forgotten here, not in the
 * journal): a later record replaces it, or --rerun executes it again with a
 * fresh retry budget. */
static void unsettle(sx_coordinator_t *self, unit_t *unit)
{
    tally(self, &unit->result, -1);
    sx_result_clear(&unit->result);
    unit->state = UNIT_NEW;
    unit->attempts = 0;
}

static zlistx_t *manifest_of(sx_coordinator_t *self, const char *task_id);

/* The fingerprint of what a unit's verdict is computed from: the streamex
 * version, the comparison profile, the candidate SQL and the task's own files
 * (folder, gold, evaluation) by content hash. A journaled verdict is reused
 * only while its fingerprint is the unit's. */
static void unit_inputs(sx_coordinator_t *self, const unit_t *unit, char hex[41])
{
    sx_digest_t *digest = sx_digest_new();
    sx_digest_line(digest, "streamex %s", SX_VERSION);
    sx_digest_line(digest, "%s", sx_profile_name(self->config.profile));
    sx_digest_sql(digest, unit->sql);
    zlistx_t *files = manifest_of(self, unit->task_id);
    for (manifest_file_t *f = zlistx_first(files); f; f = zlistx_next(files))
        if (strcmp(f->path, "task_ids.txt") != 0) /* the task's own files only */
            sx_digest_file(digest, f->hash, f->path);
    sx_digest_hex(digest, hex);
    sx_digest_destroy(&digest);
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
    unit_t *unit = find_unit(self, method, result->task_id);
    if (!unit) {
        sx_debug("journal: %s/%s is not part of this run, ignored", method,
                 result->task_id);
        self->not_in_run++;
        return 0;
    }
    char want[41];
    unit_inputs(self, unit, want);
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
            unsettle(self, unit);
        unit->stale = true;
        return 0;
    }
    if (unit->state == UNIT_SETTLED)
        unsettle(self, unit); /* an earlier verdict, replaced by a rerun's */
    mark_settled(self, unit, result);
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
            unsettle(self, unit);
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
    zlist_destroy(&w->shards);
    free(w);
    *item = NULL;
}

static void destroy_manifest(void **item)
{
    zlistx_t *list = *item;
    zlistx_destroy(&list);
    *item = NULL;
}

static void free_manifest_file(void **item)
{
    manifest_file_t *f = *item;
    if (f) {
        free(f->path);
        free(f);
    }
    *item = NULL;
}

static void settle_missing_predictions(sx_coordinator_t *self);
static void enqueue(sx_coordinator_t *self, unit_t *unit, bool front);

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
    zhashx_set_destructor(self->workers, destroy_worker);
    self->manifests = zhashx_new();
    zhashx_set_destructor(self->manifests, destroy_manifest);
    self->files = zhashx_new();
    zhashx_set_destructor(self->files, (zhashx_destructor_fn *)zstr_free);
    self->runtimes = zhashx_new();
    zhashx_set_destructor(self->runtimes, (zhashx_destructor_fn *)zstr_free);
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
    settle_missing_predictions(self);
    if (sx_error_is_set(&self->fatal)) {
        *err = self->fatal;
        sx_coordinator_destroy(&self);
        return NULL;
    }
    for (size_t i = 0; i < self->unit_count; i++)
        if (self->units[i].state == UNIT_NEW)
            enqueue(self, &self->units[i], false);
    return self;
}

static void free_shard(shard_t *shard)
{
    zlist_destroy(&shard->units);
    free(shard);
}

void sx_coordinator_destroy(sx_coordinator_t **self_p)
{
    sx_coordinator_t *self = *self_p;
    if (!self)
        return;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        for (shard_t *s = zlist_first(w->shards); s; s = zlist_next(w->shards))
            free_shard(s);
    zhashx_destroy(&self->workers);
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
    for (size_t m = 0; m < self->method_count; m++) {
        free(self->methods[m].name);
        sx_predictions_destroy(&self->methods[m].predictions);
    }
    free(self->methods);
    zhashx_destroy(&self->unit_index);
    zlist_destroy(&self->queue);
    zhashx_destroy(&self->manifests);
    zhashx_destroy(&self->files);
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

/* ---- settling ---------------------------------------------------------- */

/* Takes a unit out of the shard holding it; a shard with nothing left frees
 * its worker's credit. */
static void release_from_shard(unit_t *unit)
{
    shard_t *shard = unit->shard;
    if (!shard)
        return;
    zlist_remove(shard->units, unit);
    unit->shard = NULL;
    unit->token = 0;
    shard->worker->pending_ms -= (int64_t)unit->timeout_s * 1000;
    if (zlist_size(shard->units) == 0) {
        zlist_remove(shard->worker->shards, shard);
        free_shard(shard);
    }
}

static void csv_path(sx_coordinator_t *self, const unit_t *unit, char *path,
                     size_t path_size)
{
    snprintf(path, path_size, "%s/%s/csv/%s.csv", self->out_dir,
             self->methods[unit->method].name, unit->task_id);
}

/* A match is routine; any other verdict is worth a look on a terminal
 * (sx_note), with its reason. */
static void log_settled(const sx_coordinator_t *self, const unit_t *unit,
                        const sx_result_t *result)
{
    bool match = result->status == SX_STATUS_MATCH;
    char attempts[48] = "";
    if (result->attempts > 0)
        snprintf(attempts, sizeof attempts, " after %d attempt(s)", result->attempts);
    sx_log(match ? SX_LOG_DEBUG : SX_LOG_NOTE, "settled %s/%s: %s%s%s%s",
           self->methods[unit->method].name, unit->task_id,
           sx_status_name(result->status), attempts, match ? "" : ": ",
           match ? "" : result->detail);
}

/* Settles a unit for good: CSV into OUT, journal line (with the CSV's
 * hash), tallies. A unit that cannot be made durable stays as it was, and
 * the caller stops the run. A result without a CSV removes the CSV an
 * earlier verdict of the unit left (a --rerun, changed inputs), once its
 * own record is durable, so OUT never holds a CSV no result points at. */
static int settle_repeat(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                         const void *csv, size_t csv_size, sx_error_t *err);

static int settle(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
                  const void *csv, size_t csv_size, sx_error_t *err)
{
    if (self->round > 1)
        return settle_repeat(self, unit, result, csv, csv_size, err);
    char path[PATH_MAX], csv_sha1[41];
    sx_result_t final = *result;
    final.csv = csv ? path : NULL;
    csv_path(self, unit, path, sizeof path);
    if (csv && (sx_mkdirs_for(path, err) != 0 ||
                sx_file_write_atomic(path, csv, csv_size, err) != 0))
        return -1;
    if (csv)
        sx_hash_bytes(csv, csv_size, csv_sha1);
    char inputs[41];
    unit_inputs(self, unit, inputs);
    if (sx_journal_append(self->journal, self->methods[unit->method].name, inputs,
                          csv ? csv_sha1 : NULL, &final, err) != 0)
        return -1;
    if (!csv && unlink(path) != 0 && errno != ENOENT)
        sx_warn("%s: cannot remove the CSV of an earlier verdict: %s", path,
                strerror(errno));
    release_from_shard(unit);
    mark_settled(self, unit, &final);
    log_settled(self, unit, &final);
    return 0;
}

/* A unit that is not dispatched again gets its final result here. */
static int settle_locally(sx_coordinator_t *self, unit_t *unit, sx_status_t status,
                          const char *detail, sx_error_t *err)
{
    sx_result_t result;
    sx_result_init(&result, unit->task_id, status, detail, NULL);
    result.attempts = unit->attempts;
    int rc = settle(self, unit, &result, NULL, 0, err);
    sx_result_clear(&result);
    return rc;
}

/* Records the first storage failure: the loop stops at its next turn and
 * hands it to the caller, who reports it. */
static void fail_run(sx_coordinator_t *self, const sx_error_t *err)
{
    if (!sx_error_is_set(&self->fatal))
        self->fatal = *err;
}

/* A missing prediction scores zero without a worker: nothing to execute. */
static void settle_missing_predictions(sx_coordinator_t *self)
{
    for (size_t i = 0; i < self->unit_count && !sx_error_is_set(&self->fatal); i++) {
        unit_t *unit = &self->units[i];
        if (unit->state == UNIT_NEW && !unit->sql) {
            sx_error_t err;
            if (settle_locally(self, unit, SX_STATUS_MISSING_PREDICTION,
                               "no prediction for this task", &err) != 0)
                fail_run(self, &err);
        }
    }
}

static bool failed_on(unit_t *unit, const char *name)
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
    if (!failed_on(unit, name))
        zlist_append(unit->failed_on, (void *)name);
}

/* The one way into the queue: a unit is in it at most once. */
static void enqueue(sx_coordinator_t *self, unit_t *unit, bool front)
{
    if (unit->state == UNIT_QUEUED || unit->state == UNIT_SETTLED) {
        sx_err("%s/%s: refusing to queue it again (a bug)",
               self->methods[unit->method].name, unit->task_id);
        return;
    }
    unit->state = UNIT_QUEUED;
    unit->token = 0;
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
static void end_attempt(sx_coordinator_t *self, unit_t *unit, const char *worker_name,
                        const char *why, bool spent, const char *dropped_by)
{
    if (unit->state != UNIT_HELD)
        return;
    release_from_shard(unit);
    if (spent)
        unit->attempts++;
    if (spent && unit->attempts >= self->config.retry_budget) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s (after %d attempts)", why, unit->attempts);
        sx_error_t err;
        if (settle_locally(self, unit, SX_STATUS_INFRA_ERROR, detail, &err) != 0)
            fail_run(self, &err);
        else
            return;
    }
    if (spent) {
        note_failure(unit, worker_name);
        unit->retry_at = zclock_mono() + self->config.dead_after_ms;
    }
    free(unit->dropped_by);
    unit->dropped_by = sx_strdup_or_null(dropped_by);
    enqueue(self, unit, true);
}

/* ---- files by hash ----------------------------------------------------- */

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
static zlistx_t *manifest_of(sx_coordinator_t *self, const char *task_id)
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

/* The task's timeout_s (task.json), for the attempt's deadline. A task.json
 * that cannot be read gets the longest timeout: the worker reports it. */
static int unit_timeout_s(sx_coordinator_t *self, unit_t *unit)
{
    if (unit->timeout_s > 0)
        return unit->timeout_s;
    json_t *root = sx_task_json_read(sx_bench_dir(self->bench), unit->task_id, NULL);
    json_t *value = root ? json_object_get(root, "timeout_s") : NULL;
    json_int_t seconds = !root                    ? SX_TASK_TIMEOUT_MAX
                         : json_is_integer(value) ? json_integer_value(value)
                                                  : SX_TASK_TIMEOUT_DEFAULT;
    json_decref(root);
    unit->timeout_s = seconds >= 1 && seconds <= SX_TASK_TIMEOUT_MAX
                          ? (int)seconds
                          : SX_TASK_TIMEOUT_MAX;
    return unit->timeout_s;
}

/* ---- workers ----------------------------------------------------------- */

static void send_to(sx_coordinator_t *self, worker_t *w, const sx_msg_t *msg)
{
    sx_error_t err;
    if (sx_msg_send(msg, self->router, w->routing_id, &err) != 0)
        sx_warn("to worker %s: %s", w->name, err.msg);
    w->last_sent = zclock_mono();
}

static void send_goodbye(sx_coordinator_t *self, zframe_t *routing_id, const char *reason,
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
static void drop_worker(sx_coordinator_t *self, worker_t *w, const char *why, bool lost)
{
    size_t count = 0;
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        count += zlist_size(shard->units);
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
        end_attempt(self, units[i], w->name, why, spent, spent ? NULL : w->key);
    }
    free(units);
    zhashx_delete(self->workers, w->key);
}

/* Whether the unit would rather go elsewhere than to w: it failed there, its
 * previous --repeat round ran there, or that session let it go unspent
 * (HELLO again). */
static bool shuns(unit_t *unit, const worker_t *w)
{
    return failed_on(unit, w->name) ||
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
 * attempt of a unit while the healthy ones are paused or reconnecting. */
static zlist_t *take_units(sx_coordinator_t *self, worker_t *w)
{
    zlist_t *taken = zlist_new();
    for (unit_t *unit = zlist_first(self->queue);
         unit && zlist_size(taken) < self->config.shard_size;
         unit = zlist_next(self->queue)) {
        if ((failed_on(unit, w->name) && zclock_mono() < unit->retry_at) ||
            (shuns(unit, w) && another_could_take(self, unit, w)))
            continue;
        zlist_append(taken, unit);
    }
    for (unit_t *unit = zlist_first(taken); unit; unit = zlist_next(taken))
        zlist_remove(self->queue, unit);
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
        sx_msg_add_task(msg, self->methods[unit->method].name, unit->task_id, unit->sql,
                        unit->attempts + 1, unit->token);
        zlistx_t *files = manifest_of(self, unit->task_id);
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
    sx_debug("shard %llu (%zu tasks) to worker %s", (unsigned long long)shard->id,
             zlist_size(units), w->name);
    send_to(self, w, msg);
    sx_msg_destroy(&msg);
}

/* The units w holds, started or not. */
static size_t held_units(const worker_t *w)
{
    size_t count = 0;
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        count += zlist_size(shard->units);
    return count;
}

/* Slots of w with nothing to run: a unit it got now would start at once. */
static int free_slots(const worker_t *w)
{
    size_t held = held_units(w);
    return held < (size_t)w->slots ? w->slots - (int)held : 0;
}

/* Credit: a worker gets shards up to its capacity, and past it while one of
 * its slots has nothing to run (with many slots, a slot must not wait for a
 * whole shard to end before the next one comes). */
static bool has_credit(const worker_t *w)
{
    return (int)zlist_size(w->shards) < w->capacity || free_slots(w) > 0;
}

/* zlist_sort's order for dispatch: the most free slots first. */
static int fewer_free_slots(void *a, void *b)
{
    return free_slots(b) - free_slots(a);
}

/* Credit-based dispatch (has_credit). */
static void dispatch(sx_coordinator_t *self)
{
    if (zlist_size(self->queue) == 0)
        return;
    /* A list, not the table: take_units walks the table. The workers with the
     * most free slots come first, so the units a busy one gave back (RELEASE)
     * go where they start at once rather than back behind its running ones. */
    zlist_t *workers = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        if (has_credit(w))
            zlist_append(workers, w);
    zlist_sort(workers, fewer_free_slots);
    for (worker_t *w = zlist_first(workers); w; w = zlist_next(workers)) {
        while (zlist_size(self->queue) > 0 && has_credit(w)) {
            zlist_t *units = take_units(self, w);
            if (zlist_size(units) == 0) {
                zlist_destroy(&units);
                break;
            }
            assign_shard(self, w, units);
        }
    }
    zlist_destroy(&workers);
}

/* ---- messages ---------------------------------------------------------- */

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
        drop_worker(self, old, "worker said hello again", false);
    }
    for (old = zhashx_first(self->workers); old; old = zhashx_next(self->workers))
        if (strcmp(old->name, msg->worker) == 0)
            break;
    if (old) {
        sx_warn("worker %s reconnected: the shards of its old connection go back to the "
                "queue",
                old->name);
        drop_worker(self, old, "worker reconnected", false);
    }
    worker_t *w = sx_alloc(1, sizeof *w);
    w->key = sx_strdup(key);
    w->routing_id = zframe_dup(routing_id);
    w->name = sx_strdup(msg->worker);
    w->runtime = sx_strdup(msg->runtime);
    w->capacity = msg->capacity;
    w->slots = msg->slots;
    w->shards = zlist_new();
    w->expires_at = zclock_mono() + self->config.dead_after_ms;
    zhashx_insert(self->workers, key, w);
    sx_info("worker %s joined (capacity %d, %d slot(s), %s)", w->name, w->capacity,
            w->slots, w->runtime);
}

static void send_ack(sx_coordinator_t *self, worker_t *w, const sx_msg_t *result)
{
    sx_msg_t *ack = sx_msg_new(SX_MSG_ACK);
    ack->method = sx_strdup(result->method);
    ack->result.task_id = sx_strdup(result->result.task_id);
    ack->result.attempts = result->result.attempts;
    ack->token = result->token;
    send_to(self, w, ack);
    sx_msg_destroy(&ack);
}

/* Why a message of w about a unit under `token` (a RESULT, a RELEASE) must
 * not touch it, or NULL when it answers the current attempt of a unit w
 * holds. */
static const char *why_not_held(const unit_t *unit, const worker_t *w, uint64_t token)
{
    return !unit                         ? "not a task of this run"
           : unit->state == UNIT_SETTLED ? "already settled"
           : unit->state != UNIT_HELD    ? "not dispatched now"
           : unit->shard->worker != w    ? "held by another worker"
           : unit->token != token        ? "not its current attempt"
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
    unit_t *unit = find_unit(self, msg->method, msg->result.task_id);
    const sx_result_t *r = &msg->result;
    const char *why = why_not_held(unit, w, msg->token);
    if (why) {
        sx_log(dropped_level(w),
               "worker %s: result %s for %s/%s (token %llu): %s: dropped", w->name,
               sx_status_name(r->status), msg->method, r->task_id,
               (unsigned long long)msg->token, why);
        return 0;
    }
    w->done++;
    zhashx_update(self->runtimes, w->name, sx_strdup(w->runtime));
    if (sx_status_is_retryable(r->status)) {
        sx_warn("worker %s: %s/%s attempt %d: infra_error: %s", w->name, msg->method,
                r->task_id, unit->attempts + 1, r->detail);
        end_attempt(self, unit, w->name, r->detail, true, NULL);
        if (sx_error_is_set(&self->fatal))
            return *err = self->fatal, -1;
        return 0;
    }
    sx_result_t result = *r;
    result.attempts = unit->attempts + 1;
    result.worker = w->name;
    return settle(self, unit, &result, msg->data, msg->size, err);
}

static void on_result(sx_coordinator_t *self, worker_t *w, sx_msg_t *msg)
{
    sx_error_t err;
    if (apply_result(self, w, msg, &err) != 0) {
        /* Not durable: no ACK (the worker keeps it spooled), and the run stops. */
        sx_error_prefix(&err, "cannot settle %s/%s", msg->method, msg->result.task_id);
        fail_run(self, &err);
        return;
    }
    /* Dropped results are acknowledged too, so a worker's spool empties. */
    send_ack(self, w, msg);
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
    unit_t **units = sx_alloc(msg->task_count + 1, sizeof *units);
    size_t count = 0;
    for (size_t i = 0; i < msg->task_count; i++) {
        const sx_msg_task_t *task = &msg->tasks[i];
        unit_t *unit = find_unit(self, task->method, task->task_id);
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
    for (size_t i = count; i-- > 0;)
        end_attempt(self, units[i], w->name, "given back unstarted", false, NULL);
    free(units);
    sx_info("worker %s gave back %zu task(s) it had not started", w->name, count);
}

/* Whether a bench file (by hash) is one that a shard the worker holds needs. */
static bool worker_needs_file(sx_coordinator_t *self, worker_t *w, const char *hash)
{
    for (shard_t *shard = zlist_first(w->shards); shard; shard = zlist_next(w->shards))
        for (unit_t *unit = zlist_first(shard->units); unit;
             unit = zlist_next(shard->units)) {
            zlistx_t *files = manifest_of(self, unit->task_id);
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
    /* The file is read now, maybe long after its manifest was made: the
     * input rule is checked again, and only the bytes hashed then are sent
     * (a file replaced since, by a link out of its folder or otherwise,
     * never is). */
    char path[PATH_MAX], hash[41] = "";
    snprintf(path, sizeof path, "%s/%s", sx_bench_dir(self->bench), rel);
    sx_error_t err;
    size_t size = 0;
    char *data = sx_bench_file_check(self->bench, rel, &err) == 0
                     ? sx_file_read(path, SX_PROTO_MAX_BYTES - 4096, &size, &err)
                     : NULL;
    if (data)
        sx_hash_bytes(data, size, hash);
    if (data && strcmp(hash, msg->hash) != 0) {
        sx_error_set(&err, "%s: changed since it was hashed for the shard", path);
        free(data);
        data = NULL;
    }
    if (!data) {
        sx_err("file for worker %s: %s: not sent", w->name, err.msg);
        return;
    }
    sx_msg_t *file = sx_msg_new(SX_MSG_FILE);
    file->hash = sx_strdup(msg->hash);
    file->data = data;
    file->size = size;
    send_to(self, w, file);
    sx_msg_destroy(&file);
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
        send_goodbye(self, routing_id, "unknown worker: say HELLO first", false);
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
            drop_worker(self, w, "worker left", true);
        }
    }
    sx_msg_destroy(&msg);
    zstr_free(&key);
    zframe_destroy(&routing_id);
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
 * units until its heartbeat or their deadlines give them up, as before. */
static void recall_for_idle(sx_coordinator_t *self)
{
    if (zlist_size(self->queue) > 0)
        return;
    zlist_t *idle = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        if (free_slots(w) > 0)
            zlist_append(idle, w);
    for (worker_t *w = zlist_size(idle) ? zhashx_first(self->workers) : NULL; w;
         w = zhashx_next(self->workers)) {
        if (w->recalled)
            continue;
        worker_t *v = zlist_first(idle);
        while (v && !holds_unstarted_for(w, v))
            v = zlist_next(idle);
        if (!v)
            continue;
        sx_debug("worker %s is idle: recalling the tasks worker %s has not started",
                 v->name, w->name);
        sx_msg_t *recall = sx_msg_new(SX_MSG_RECALL);
        send_to(self, w, recall);
        sx_msg_destroy(&recall);
        w->recalled = true;
    }
    zlist_destroy(&idle);
}

/* ---- the loop ---------------------------------------------------------- */

/* A worker that keeps heartbeating but returns nothing loses the units
 * whose deadline passed; each such attempt is spent. */
static void expire_attempts(sx_coordinator_t *self, int64_t now)
{
    zlist_t *late = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        for (shard_t *shard = zlist_first(w->shards); shard;
             shard = zlist_next(w->shards))
            for (unit_t *unit = zlist_first(shard->units); unit;
                 unit = zlist_next(shard->units))
                if (now >= unit->deadline)
                    zlist_append(late, unit);
    for (unit_t *unit = zlist_first(late); unit; unit = zlist_next(late)) {
        const char *name = unit->shard->worker->name;
        char why[512];
        snprintf(why, sizeof why, "worker %s returned no result within %d s + %d ms",
                 name, unit->timeout_s, self->config.attempt_grace_ms);
        sx_warn("%s/%s: %s", self->methods[unit->method].name, unit->task_id, why);
        end_attempt(self, unit, name, why, true, NULL);
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
}

static void expire_and_beat(sx_coordinator_t *self)
{
    int64_t now = zclock_mono();
    zlist_t *dead = zlist_new();
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (now >= w->expires_at)
            zlist_append(dead, w);
        else if (now - w->last_sent >= self->config.heartbeat_ms) {
            sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
            send_to(self, w, beat);
            sx_msg_destroy(&beat);
        }
    }
    for (worker_t *w = zlist_first(dead); w; w = zlist_next(dead)) {
        char why[512];
        snprintf(why, sizeof why, "worker %s silent for %d ms", w->name,
                 self->config.dead_after_ms);
        sx_warn("%s: declared dead, %zu shards go back to the queue", why,
                zlist_size(w->shards));
        drop_worker(self, w, why, true);
    }
    zlist_destroy(&dead);
    expire_attempts(self, now);
}

/* What the figures above do not say: that they count a --tasks subset, and,
 * on the very last line, that infra_error tasks are left (the run exits 3). */
static void print_last_lines(sx_coordinator_t *self, FILE *out)
{
    size_t tasks = self->unit_count / self->method_count;
    if (self->config.task_count)
        fprintf(out,
                "subset: every figure above counts %zu of the %zu task IDs (--tasks)\n",
                tasks, sx_bench_task_count(self->bench));
    size_t infra = sx_coordinator_infra_errors(self);
    if (infra)
        fprintf(out,
                "infra_error: %zu task(s) ended on an infrastructure failure, not a "
                "verdict: rerun them with --resume --rerun infra_error\n",
                infra);
}

/* ---- --repeat ------------------------------------------------------------ */

/* Whether the task's evaluation ignores row order (false when unreadable:
 * then order counts, the stricter comparison). */
static bool task_ignores_order(sx_coordinator_t *self, const char *task_id)
{
    char *path = sx_bench_evaluation_path(self->bench, task_id);
    sx_error_t err;
    sx_evaluation_t *evaluation = sx_evaluation_load(path, &err);
    bool ignore = evaluation && evaluation->ignore_order;
    sx_evaluation_destroy(&evaluation);
    free(path);
    return ignore;
}

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
                             task_ignores_order(self, unit->task_id), &same,
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
static int settle_repeat(sx_coordinator_t *self, unit_t *unit, const sx_result_t *result,
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
    release_from_shard(unit);
    unit->state = UNIT_SETTLED;
    tally(self, &unit->result, +1);
    return 0;
}

/* After a round with every unit settled: queues the next one, if --repeat
 * asks for it and some unit has a final CSV to compare. Returns whether a
 * round started. */
static bool start_next_round(sx_coordinator_t *self)
{
    if (self->round >= self->config.repeat)
        return false;
    self->round++;
    size_t queued = 0;
    for (size_t i = 0; i < self->unit_count; i++) {
        unit_t *unit = &self->units[i];
        if (!unit->result.csv)
            continue;
        if (self->round == 2) {
            unit->result.repeated = true;
            free(unit->ran_on);
            unit->ran_on = sx_strdup(unit->result.worker ? unit->result.worker : "");
        }
        tally(self, &unit->result, -1);
        unit->state = UNIT_NEW;
        unit->attempts = 0;
        enqueue(self, unit, false);
        queued++;
    }
    sx_info("--repeat: run %d of %d for the %zu tasks with a final CSV", self->round,
            self->config.repeat, queued);
    return queued > 0;
}

static int write_outputs(sx_coordinator_t *self, sx_error_t *err)
{
    sx_method_summary_t *summaries = sx_alloc(self->method_count, sizeof *summaries);
    sx_result_t *results = sx_alloc(self->unit_count + 1, sizeof *results);
    int rc = 0;
    for (size_t m = 0; m < self->method_count && rc == 0; m++) {
        size_t count = 0;
        for (size_t i = 0; i < self->unit_count; i++)
            if (self->units[i].method == m)
                results[count++] = self->units[i].result;
        rc = sx_results_write(self->out_dir, self->methods[m].name, results, count,
                              &summaries[m], err);
        summaries[m].repeats = self->config.repeat > 1 ? (size_t)self->config.repeat : 0;
        if (self->config.task_count)
            summaries[m].bench_tasks = sx_bench_task_count(self->bench);
    }
    char fingerprint[41];
    sx_bench_fingerprint(self->bench, fingerprint);
    /* The workers by name, so summary.json reads the same whatever order
     * they joined in. */
    zlistx_t *keys = zhashx_keys(self->runtimes);
    zlistx_set_comparator(keys, (zlistx_comparator_fn *)strcmp);
    zlistx_sort(keys);
    size_t count = zlistx_size(keys), w = 0;
    const char **names = sx_alloc(count + 1, sizeof *names);
    const char **runtimes = sx_alloc(count + 1, sizeof *runtimes);
    for (const char *name = zlistx_first(keys); name; name = zlistx_next(keys), w++) {
        names[w] = name;
        runtimes[w] = zhashx_lookup(self->runtimes, name);
    }
    sx_run_info_t run = {self->config.command ? self->config.command : "coordinator",
                         self->config.bench_dir,
                         sx_bench_task_count(self->bench),
                         sx_profile_name(self->config.profile),
                         (const char *const *)self->config.prediction_files,
                         "predictions",
                         self->started_at,
                         sx_run_clock(),
                         fingerprint,
                         (const char *const *)names,
                         (const char *const *)runtimes,
                         count};
    if (rc == 0)
        rc = sx_summary_write(self->out_dir, summaries, self->method_count, &run, err);
    sx_error_t report_err;
    if (rc == 0 && sx_report_write(self->out_dir, &report_err) != 0)
        sx_warn("report.html not written: %s", report_err.msg);
    for (size_t m = 0; rc == 0 && self->config.summary_out && m < self->method_count; m++)
        sx_summary_print(self->config.summary_out, &summaries[m]);
    if (rc == 0 && self->config.summary_out)
        print_last_lines(self, self->config.summary_out);
    for (size_t m = 0; m < self->method_count; m++)
        free(summaries[m].method);
    free(summaries);
    free(results);
    free(names);
    free(runtimes);
    zlistx_destroy(&keys);
    return rc;
}

static void say_final_goodbye(sx_coordinator_t *self)
{
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        send_goodbye(self, w->routing_id, "run complete", true);
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
    int64_t next_progress = 0;
    self->loop_at = zclock_mono();
    int rc = 1;
    sx_info("coordinator on %s: %zu tasks to settle (%zu already settled)",
            self->endpoint, self->unit_count - self->settled, self->settled);
    while (!sx_signals_caught()) {
        if (sx_error_is_set(&self->fatal))
            break;
        if (self->settled == self->unit_count && !start_next_round(self)) {
            rc = 0;
            break;
        }
        dispatch(self);
        recall_for_idle(self);
        void *which = zpoller_wait(poller, self->config.heartbeat_ms / 2);
        if (which == stop && stop)
            break;
        if (which == self->router)
            on_message(self);
        else if (zpoller_terminated(poller))
            break;
        excuse_own_stall(self);
        expire_and_beat(self);
        if (zclock_mono() >= next_progress) {
            report_progress(self);
            next_progress = zclock_mono() + self->config.progress_ms;
        }
    }
    zpoller_destroy(&poller);
    report_progress(self); /* the final state, before the EX lines */
    if (rc == 0) {
        if (write_outputs(self, err) != 0)
            rc = -1;
        say_final_goodbye(self);
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
    size_t done_now = self->settled - self->settled_at_start;
    size_t left = self->unit_count - self->settled;
    json_t *root = json_object();
    json_object_set_new(root, "done", json_integer((json_int_t)self->settled));
    json_object_set_new(root, "total", json_integer((json_int_t)self->unit_count));
    json_object_set_new(root, "correct", json_integer((json_int_t)self->correct));
    json_object_set_new(root, "failures", json_integer((json_int_t)self->failures));
    json_object_set_new(root, "cached", json_integer((json_int_t)self->cached));
    json_object_set_new(
        root, "ex", json_real(self->settled ? (double)self->correct / self->settled : 0));
    json_object_set_new(root, "elapsed_s", json_real(elapsed));
    json_object_set_new(root, "eta_s",
                        done_now
                            ? json_real(round(elapsed / done_now * left * 1000) / 1000)
                            : json_null());
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
