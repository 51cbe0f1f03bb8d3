/* agent.c: the worker's loop (see agent.h). The main thread owns the DEALER
 * socket: it heartbeats, receives shards and files, hands tasks to free
 * slots in order, spools and sends results, and gives back the tasks it has
 * not handed to a slot when the coordinator recalls them (RECALL, for an
 * idle worker). Each slot is a thread (a zactor) that makes, uses and
 * destroys its own executor and runs one task at a time, so a long Flink job
 * never stops the heartbeats and `slots` tasks overlap on one pair. A job
 * travels to a slot and back as a pointer over the slot's pipe; between the
 * two sends the slot's thread alone touches it. Local layout under
 * work_dir:
 *   cache/HASH          bench files by content hash, each received once
 *   bench/...           hard links into cache/, laid out as a bench folder
 *   spool/              results not yet acknowledged
 *   csv/                final CSVs while a task runs
 * The result cache (resultcache.h) is elsewhere: one folder per machine,
 * shared by every worker and run on it. */
#include "worker/agent.h"

#include "common/clock.h"
#include "common/log.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/signals.h"
#include "proto/proto.h"
#include "worker/resultcache.h"
#include "worker/spool.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Paths under work_dir must leave room for bench file paths. */
#define WORK_DIR_MAX 1024

/* One task on its way through a slot. */
typedef struct {
    sx_msg_task_t task; /* owned copies */
    char csv_path[PATH_MAX];
    char cache_key[41]; /* "" = not looked up in the cache nor stored */
    sx_result_t result;
    sx_timings_t timings;
    double seconds;
} job_t;

/* A received shard and how far it got. A shard whose files cannot be stored
 * here (disk full) or stop coming is failed: its tasks are answered with
 * infra_error, so the coordinator retries them instead of waiting for us. */
typedef struct {
    sx_msg_t *assign;
    size_t next_task;
    size_t end_task;     /* its tasks still here: next_task .. end_task - 1 */
    size_t files_cached; /* its first files known to be in the cache, which
                            keeps every file it stores: each is looked at
                            once, not again on every message */
    bool materialized;
    char *failed;     /* why its files could not be had; NULL = fine */
    int64_t received; /* when it arrived */
} local_shard_t;

typedef struct _slot_t slot_t;

struct _sx_agent_t {
    sx_agent_config_t config;
    char *endpoint, *name, *work_dir, *cert_path, *server_cert_path, *runtime;
    char cache_dir[WORK_DIR_MAX + 16], bench_dir[WORK_DIR_MAX + 16],
        csv_dir[WORK_DIR_MAX + 16];
    sx_spool_t *spool;
    sx_resultcache_t *cache; /* NULL = none; read and written on the slots' threads */
    zsock_t *dealer;
    zsock_t *stop;        /* sx_agent_run's, or NULL */
    zpoller_t *poller;    /* the dealer, the slots and stop: one per connection */
    slot_t *slots;        /* config.slots of them */
    zlist_t *shards;      /* local_shard_t* in arrival order */
    zhashx_t *requested;  /* hashes asked for and not yet received */
    int64_t last_file_at; /* when a bench file was last stored */
    int64_t coordinator_expires;
    int64_t loop_at; /* when the loop last came round (sx_clock_stall_ms) */
    int64_t last_sent;
    int backoff_ms;
    size_t executed;
};

/* One slot: a thread running one job at a time on its own executor. */
struct _slot_t {
    sx_agent_t *agent;
    int index;
    zactor_t *actor;
    job_t *job;       /* the job it runs, NULL = free (the main thread's record) */
    bool opened;      /* its executor was made; set before zactor_new returns */
    sx_error_t error; /* why it was not */
};

/* ---- the slots' threads ------------------------------------------------ */

/* A cache hit: the CSV copied from the cache and scored again. */
static bool serve_from_cache(sx_agent_t *self, job_t *job,
                             const sx_exec_request_t *request)
{
    sx_error_t err;
    sx_changelog_counts_t changelog;
    int hit =
        sx_resultcache_get(self->cache, job->cache_key, job->csv_path, &changelog, &err);
    if (hit < 0)
        sx_warn("task %s: result cache: %s; the task runs", job->task.task_id, err.msg);
    if (hit <= 0)
        return false;
    self->config.score(self->config.exec_ctx, request, &job->result);
    job->result.cached = true;
    job->result.changelog = changelog; /* of the execution that made the CSV */
    job->timings = (sx_timings_t){0};
    return true;
}

/* Keeps a genuine execution outcome with a final CSV (resultcache.h). */
static void store_in_cache(sx_agent_t *self, const job_t *job)
{
    sx_error_t err;
    if (sx_resultcache_keeps(job->result.status) && job->result.csv &&
        sx_resultcache_put(self->cache, job->cache_key, job->result.csv,
                           &job->result.changelog, &err) != 0)
        sx_warn("task %s: %s", job->task.task_id, err.msg);
}

/* Runs one job on a slot's thread: from the cache when it holds the job's
 * key, else through the slot's executor (and into the cache). */
static void run_job(sx_agent_t *self, void *slot_ctx, job_t *job)
{
    sx_exec_request_t request = {self->bench_dir,   job->task.task_id, job->task.sql,
                                 job->task.attempt, job->csv_path,     job->task.method,
                                 job->task.sample};
    bool cached = self->cache && job->cache_key[0];
    if (cached && serve_from_cache(self, job, &request))
        return;
    self->config.exec(slot_ctx, &request, &job->result, &job->timings);
    if (cached)
        store_in_cache(self, job);
}

/* The next job the main thread hands this slot; NULL when the slot is to
 * end ($TERM, or the pipe interrupted). */
static job_t *next_job(zsock_t *pipe)
{
    for (;;) {
        zmsg_t *msg = zmsg_recv(pipe);
        if (!msg)
            return NULL;
        zframe_t *frame = zmsg_first(msg);
        bool term = zframe_streq(frame, "$TERM");
        job_t *job = NULL;
        if (!term && zframe_size(frame) == sizeof job)
            memcpy(&job, zframe_data(frame), sizeof job);
        zmsg_destroy(&msg);
        if (term || job)
            return job;
    }
}

/* A slot's thread: makes the slot's executor, runs the jobs it is handed,
 * one at a time, and closes the executor when the agent ends. */
static void slot_actor(zsock_t *pipe, void *arg)
{
    slot_t *slot = arg;
    const sx_agent_config_t *c = &slot->agent->config;
    void *ctx =
        c->open_slot ? c->open_slot(c->exec_ctx, slot->index, &slot->error) : c->exec_ctx;
    slot->opened = ctx != NULL;
    zsock_signal(pipe, 0); /* zactor_new returns: `opened` is set */
    job_t *job;
    while (slot->opened && (job = next_job(pipe)) != NULL) {
        int64_t start = zclock_mono();
        run_job(slot->agent, ctx, job);
        job->seconds = (double)(zclock_mono() - start) / 1000.0;
        zsock_send(pipe, "p", job);
        /* The job is the main thread's again: work the executor may leave
         * until after its result is sent (its cleanup) goes here. */
        if (c->finish)
            c->finish(ctx);
    }
    if (slot->opened && c->close_slot)
        c->close_slot(ctx);
}

static void job_destroy(job_t **job_p)
{
    job_t *job = *job_p;
    if (!job)
        return;
    free(job->task.method);
    free(job->task.task_id);
    free(job->task.sql);
    sx_result_clear(&job->result);
    free(job);
    *job_p = NULL;
}

/* ---- set-up ------------------------------------------------------------ */

/* Starts every slot's thread; each makes its executor before zactor_new
 * returns, so a slot that could not is known here. */
static int start_slots(sx_agent_t *self, sx_error_t *err)
{
    int count = self->config.slots;
    self->slots = sx_alloc((size_t)count, sizeof *self->slots);
    for (int i = 0; i < count; i++) {
        slot_t *slot = &self->slots[i];
        *slot = (slot_t){.agent = self, .index = i};
        slot->actor = zactor_new(slot_actor, slot);
        if (!slot->opened)
            return sx_error_set(err, "worker %s: slot %d: %s", self->name, i,
                                slot->error.msg);
    }
    return 0;
}

/* Ends every slot's thread, each once its running task is over. */
static void stop_slots(sx_agent_t *self)
{
    for (int i = 0; self->slots && i < self->config.slots; i++) {
        zactor_destroy(&self->slots[i].actor);
        job_destroy(&self->slots[i].job);
    }
    free(self->slots);
    self->slots = NULL;
}

sx_agent_t *sx_agent_new(const sx_agent_config_t *config, sx_error_t *err)
{
    if (!config->endpoint || !config->work_dir || !config->exec ||
        (config->result_cache_dir && !config->score))
        return sx_error_set(err,
                            "worker needs an endpoint, a work folder and an executor "
                            "(and a scorer for a result cache)"),
               NULL;
    if (!config->cert_path && !config->insecure &&
        !sx_endpoint_is_loopback(config->endpoint))
        return sx_error_set(err,
                            "%s: plain TCP to a non-loopback address is refused; give "
                            "--cert and --server-cert (CURVE) or --insecure",
                            config->endpoint),
               NULL;
    if (strlen(config->work_dir) > WORK_DIR_MAX)
        return sx_error_set(err, "%s: work folder path longer than %d bytes",
                            config->work_dir, WORK_DIR_MAX),
               NULL;
    if (config->slots > SX_PROTO_SLOTS_MAX)
        return sx_error_set(err, "--slots %d: at most %d tasks run at once on one worker",
                            config->slots, SX_PROTO_SLOTS_MAX),
               NULL;
    if (config->cert_path && !config->server_cert_path)
        return sx_error_set(err, "--cert needs --server-cert, the coordinator's public "
                                 "certificate"),
               NULL;
    char host[256] = "worker";
    gethostname(host, sizeof host - 1);
    sx_agent_t *self = sx_alloc(1, sizeof *self);
    self->config = *config;
    self->endpoint = sx_strdup(config->endpoint);
    char default_name[300];
    snprintf(default_name, sizeof default_name, "%s-%ld", host, (long)getpid());
    self->name = sx_strdup(config->name ? config->name : default_name);
    self->work_dir = sx_strdup(config->work_dir);
    self->cert_path = sx_strdup_or_null(config->cert_path);
    self->server_cert_path = sx_strdup_or_null(config->server_cert_path);
    self->runtime = sx_strdup(config->runtime ? config->runtime : "unknown");
    sx_agent_config_t *c = &self->config;
    if (c->capacity <= 0)
        c->capacity = 2;
    if (c->heartbeat_ms <= 0)
        c->heartbeat_ms = 1000;
    if (c->dead_after_ms <= 0)
        c->dead_after_ms = 5 * c->heartbeat_ms;
    if (c->reconnect_min_ms <= 0)
        c->reconnect_min_ms = 250;
    if (c->reconnect_max_ms < c->reconnect_min_ms)
        c->reconnect_max_ms = 32 * c->reconnect_min_ms;
    if (c->files_wait_ms <= 0)
        c->files_wait_ms = 60000;
    if (c->slots <= 0)
        c->slots = 1;
    snprintf(self->cache_dir, sizeof self->cache_dir, "%s/cache", self->work_dir);
    snprintf(self->bench_dir, sizeof self->bench_dir, "%s/bench", self->work_dir);
    snprintf(self->csv_dir, sizeof self->csv_dir, "%s/csv", self->work_dir);
    char spool_dir[PATH_MAX];
    snprintf(spool_dir, sizeof spool_dir, "%s/spool", self->work_dir);
    self->shards = zlist_new();
    self->requested = zhashx_new();
    if (!sx_name_is_safe(self->name) || sx_mkdirs(self->cache_dir, err) != 0 ||
        sx_mkdirs(self->bench_dir, err) != 0 || sx_mkdirs(self->csv_dir, err) != 0 ||
        !(self->spool = sx_spool_open(spool_dir, err)) ||
        (c->result_cache_dir &&
         !(self->cache = sx_resultcache_open(
               c->result_cache_dir,
               c->result_cache_runtime ? c->result_cache_runtime : "", err)))) {
        if (!sx_name_is_safe(self->name))
            sx_error_set(err, "worker name '%s' must be [A-Za-z0-9_.-]+", self->name);
        sx_agent_destroy(&self);
        return NULL;
    }
    if (start_slots(self, err) != 0) {
        sx_agent_destroy(&self);
        return NULL;
    }
    self->backoff_ms = c->reconnect_min_ms;
    return self;
}

static void shard_destroy(local_shard_t **shard_p)
{
    local_shard_t *shard = *shard_p;
    if (!shard)
        return;
    sx_msg_destroy(&shard->assign);
    free(shard->failed);
    free(shard);
    *shard_p = NULL;
}

static void forget_shards(sx_agent_t *self)
{
    local_shard_t *shard;
    while ((shard = zlist_pop(self->shards)) != NULL)
        shard_destroy(&shard);
    zhashx_purge(self->requested);
}

void sx_agent_destroy(sx_agent_t **self_p)
{
    sx_agent_t *self = *self_p;
    if (!self)
        return;
    stop_slots(self); /* waits for the running tasks to end */
    zpoller_destroy(&self->poller);
    zsock_destroy(&self->dealer);
    if (self->shards)
        forget_shards(self);
    zlist_destroy(&self->shards);
    zhashx_destroy(&self->requested);
    sx_spool_destroy(&self->spool);
    sx_resultcache_destroy(&self->cache);
    free(self->endpoint);
    free(self->name);
    free(self->work_dir);
    free(self->cert_path);
    free(self->server_cert_path);
    free(self->runtime);
    free(self);
    *self_p = NULL;
}

size_t sx_agent_executed(const sx_agent_t *self)
{
    return self->executed;
}

/* ---- talking to the coordinator ---------------------------------------- */

static void send_msg(sx_agent_t *self, const sx_msg_t *msg)
{
    sx_error_t err;
    if (sx_msg_send(msg, self->dealer, NULL, &err) != 0)
        sx_warn("to coordinator: %s", err.msg);
    self->last_sent = zclock_mono();
}

static int resend_one(const char *key, const void *data, size_t size, void *arg)
{
    sx_agent_t *self = arg;
    sx_debug("resending spooled result %s", key);
    sx_msg_send_raw(data, size, self->dealer, NULL, NULL);
    return 0;
}

static int apply_curve(sx_agent_t *self, sx_error_t *err)
{
    zcert_t *mine = zcert_load(self->cert_path);
    zcert_t *server = zcert_load(self->server_cert_path);
    int rc = 0;
    if (!mine)
        rc = sx_error_set(err, "%s: cannot load the worker certificate", self->cert_path);
    else if (!server)
        rc = sx_error_set(err, "%s: cannot load the coordinator certificate",
                          self->server_cert_path);
    else {
        zcert_apply(mine, self->dealer);
        zsock_set_curve_serverkey(self->dealer, zcert_public_txt(server));
    }
    zcert_destroy(&mine);
    zcert_destroy(&server);
    return rc;
}

/* What the loop waits on: the dealer, every slot and stop; made with each
 * dealer, destroyed with it. */
static void make_poller(sx_agent_t *self)
{
    self->poller = zpoller_new(self->dealer, NULL);
    for (int i = 0; i < self->config.slots; i++)
        zpoller_add(self->poller, self->slots[i].actor);
    if (self->stop)
        zpoller_add(self->poller, self->stop);
}

/* A fresh socket, HELLO, and every unacknowledged result again. */
static int connect_coordinator(sx_agent_t *self, sx_error_t *err)
{
    zpoller_destroy(&self->poller);
    zsock_destroy(&self->dealer);
    self->dealer = zsock_new(ZMQ_DEALER);
    make_poller(self);
    zsock_set_linger(self->dealer, 0);
    zsock_set_maxmsgsize(self->dealer, (int64_t)SX_PROTO_MAX_BYTES + 1024);
    zsock_set_sndhwm(self->dealer, 0);
    /* With no connected peer (coordinator down, CURVE refused) a DEALER send
     * would block; time out instead so the loop keeps its heartbeat clock. */
    zsock_set_sndtimeo(self->dealer, self->config.heartbeat_ms);
    if (self->cert_path && apply_curve(self, err) != 0)
        return -1;
    if (zsock_connect(self->dealer, "%s", self->endpoint) != 0)
        return sx_error_set(err, "cannot connect to %s", self->endpoint);
    sx_msg_t *hello = sx_msg_hello(self->name, self->config.capacity, self->config.slots,
                                   self->runtime);
    send_msg(self, hello);
    sx_msg_destroy(&hello);
    sx_spool_each(self->spool, resend_one, self, NULL);
    self->coordinator_expires = zclock_mono() + self->config.dead_after_ms;
    self->loop_at = zclock_mono(); /* the back-off before is no stall */
    sx_info("worker %s connected to %s (%zu spooled results resent)", self->name,
            self->endpoint, sx_spool_count(self->spool));
    return 0;
}

/* Waits ms in short slices; true as soon as `stop` has a message or a stop
 * signal came. */
static bool wait_unless_stopped(int ms, zsock_t *stop)
{
    zpoller_t *poller = stop ? zpoller_new(stop, NULL) : NULL;
    int64_t end = zclock_mono() + ms;
    bool stopped = false;
    while (!stopped && !sx_signals_caught() && zclock_mono() < end) {
        int slice = (int)(end - zclock_mono() < 100 ? end - zclock_mono() : 100);
        if (poller)
            stopped = zpoller_wait(poller, slice) == stop;
        else
            zclock_sleep(slice);
    }
    zpoller_destroy(&poller);
    return stopped || sx_signals_caught();
}

/* Waits (interruptibly) for the back-off, then connects again. Shards not
 * started are forgotten: the coordinator requeues them when it drops us. */
static int reconnect(sx_agent_t *self, zsock_t *stop, sx_error_t *err)
{
    sx_warn("coordinator silent or gone: reconnecting in %d ms", self->backoff_ms);
    forget_shards(self);
    zpoller_destroy(&self->poller);
    zsock_destroy(&self->dealer);
    if (wait_unless_stopped(self->backoff_ms, stop))
        return 1;
    self->backoff_ms = self->backoff_ms * 2 > self->config.reconnect_max_ms
                           ? self->config.reconnect_max_ms
                           : self->backoff_ms * 2;
    return connect_coordinator(self, err);
}

/* ---- files ------------------------------------------------------------- */

static void object_path(const sx_agent_t *self, const char *hash, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", self->cache_dir, hash);
}

static void request_missing(sx_agent_t *self, const sx_msg_t *assign)
{
    for (size_t i = 0; i < assign->file_count; i++) {
        const char *hash = assign->files[i].hash;
        char path[PATH_MAX];
        object_path(self, hash, path, sizeof path);
        if (sx_file_exists(path) || zhashx_lookup(self->requested, hash))
            continue;
        zhashx_insert(self->requested, hash, (void *)1);
        sx_msg_t *request = sx_msg_new(SX_MSG_FILE_REQUEST);
        request->hash = sx_strdup(hash);
        send_msg(self, request);
        sx_msg_destroy(&request);
    }
}

/* Marks every waiting shard that needs hash as failed (see local_shard_t). */
static void fail_shards_needing(sx_agent_t *self, const char *hash, const char *why)
{
    for (local_shard_t *shard = zlist_first(self->shards); shard;
         shard = zlist_next(self->shards)) {
        for (size_t i = 0; i < shard->assign->file_count && !shard->failed; i++)
            if (strcmp(shard->assign->files[i].hash, hash) == 0)
                shard->failed = sx_strdup(why);
    }
}

static void on_file(sx_agent_t *self, const sx_msg_t *msg)
{
    char actual[41];
    sx_hash_bytes(msg->data, msg->size, actual);
    if (strcmp(actual, msg->hash) != 0) {
        sx_warn("rejected FILE %s: its bytes hash to %s", msg->hash, actual);
        return;
    }
    char path[PATH_MAX];
    object_path(self, msg->hash, path, sizeof path);
    sx_error_t err;
    if (sx_file_write_atomic(path, msg->data, msg->size, &err) != 0) {
        sx_err("%s", err.msg);
        fail_shards_needing(self, msg->hash, err.msg);
    } else
        self->last_file_at = zclock_mono();
    zhashx_delete(self->requested, msg->hash);
}

/* Links bench/PATH to cache/HASH, unless it already is that file. The
 * link is tried first: its folder is there for all but a task's first
 * file, and making the folders costs a call per path component. */
static int place_file(sx_agent_t *self, const sx_msg_file_t *file, sx_error_t *err)
{
    char object[PATH_MAX], target[PATH_MAX];
    object_path(self, file->hash, object, sizeof object);
    snprintf(target, sizeof target, "%s/%s", self->bench_dir, file->path);
    struct stat have, want;
    if (stat(object, &want) != 0)
        return sx_error_set(err, "%s: not in the cache", file->hash);
    if (stat(target, &have) == 0 && have.st_ino == want.st_ino &&
        have.st_dev == want.st_dev)
        return 0;
    int rc = link(object, target);
    if (rc != 0 && errno == EEXIST) { /* another file of that name: replaced */
        unlink(target);
        rc = link(object, target);
    } else if (rc != 0 && errno == ENOENT) { /* a new folder */
        if (sx_mkdirs_for(target, err) != 0)
            return -1;
        rc = link(object, target);
    }
    if (rc != 0)
        return sx_error_set(err, "%s: cannot link from the cache: %s", target,
                            strerror(errno));
    return 0;
}

/* True once every file of the shard is cached and placed in bench/. */
static bool shard_ready(sx_agent_t *self, local_shard_t *shard)
{
    if (shard->materialized || shard->failed)
        return true;
    for (; shard->files_cached < shard->assign->file_count; shard->files_cached++) {
        char path[PATH_MAX];
        object_path(self, shard->assign->files[shard->files_cached].hash, path,
                    sizeof path);
        if (!sx_file_exists(path))
            return false;
    }
    for (size_t i = 0; i < shard->assign->file_count && !shard->failed; i++) {
        sx_error_t err;
        if (place_file(self, &shard->assign->files[i], &err) != 0) {
            sx_err("%s", err.msg);
            shard->failed = sx_strdup(err.msg);
        }
    }
    shard->materialized = true;
    return true;
}

/* ---- tasks ------------------------------------------------------------- */

static job_t *job_new(sx_agent_t *self, const sx_msg_task_t *task)
{
    job_t *job = sx_alloc(1, sizeof *job);
    job->task = (sx_msg_task_t){sx_strdup(task->method),
                                sx_strdup(task->task_id),
                                sx_strdup_or_null(task->sql),
                                task->attempt,
                                task->token,
                                task->sample};
    char sample[32] = "";
    if (task->sample)
        snprintf(sample, sizeof sample, ".s%d", task->sample);
    snprintf(job->csv_path, sizeof job->csv_path, "%s/%s.%s%s.%d.csv", self->csv_dir,
             task->method, task->task_id, sample, task->attempt);
    return job;
}

static void finish_job(sx_agent_t *self, job_t *job);

/* Answers every task of a failed shard with infra_error, and drops it. */
static void answer_failed_shard(sx_agent_t *self, local_shard_t *shard)
{
    char detail[1024];
    snprintf(detail, sizeof detail, "worker %s cannot get the task's files: %s",
             self->name, shard->failed);
    for (size_t i = shard->next_task; i < shard->end_task; i++) {
        job_t *job = job_new(self, &shard->assign->tasks[i]);
        sx_result_init(&job->result, job->task.task_id, SX_STATUS_INFRA_ERROR, detail,
                       NULL);
        finish_job(self, job);
        job_destroy(&job);
    }
    zlist_remove(self->shards, shard);
    shard_destroy(&shard);
}

/* Whether the first shard waits for files that stopped coming: the
 * coordinator refuses files for units it took back (their deadline passed),
 * and a shard waiting for them would block every shard behind it. */
static bool files_stalled(sx_agent_t *self, local_shard_t *shard)
{
    int64_t progress =
        shard->received > self->last_file_at ? shard->received : self->last_file_at;
    if (zclock_mono() - progress < self->config.files_wait_ms)
        return false;
    char why[128];
    snprintf(why, sizeof why, "no bench file arrived for %d ms",
             self->config.files_wait_ms);
    shard->failed = sx_strdup(why);
    return true;
}

/* A slot with nothing to run, or NULL. */
static slot_t *free_slot(sx_agent_t *self)
{
    for (int i = 0; i < self->config.slots; i++)
        if (!self->slots[i].job)
            return &self->slots[i];
    return NULL;
}

/* Whether a slot runs this method's task and sample (then the task waits:
 * agent.h). */
static bool slot_runs(const sx_agent_t *self, const sx_msg_task_t *task)
{
    for (int i = 0; i < self->config.slots; i++) {
        const job_t *job = self->slots[i].job;
        if (job && strcmp(job->task.task_id, task->task_id) == 0 &&
            strcmp(job->task.method, task->method) == 0 &&
            job->task.sample == task->sample)
            return true;
    }
    return false;
}

/* Hands the next task in order to `slot` (or answers a failed shard).
 * Returns whether it did, so the caller may go on with the next one. */
static bool start_next_task(sx_agent_t *self, slot_t *slot)
{
    local_shard_t *shard = zlist_first(self->shards);
    if (!shard)
        return false;
    if (!shard_ready(self, shard) && !files_stalled(self, shard))
        return false;
    if (shard->failed) {
        answer_failed_shard(self, shard);
        return true;
    }
    const sx_msg_task_t *task = &shard->assign->tasks[shard->next_task];
    if (slot_runs(self, task))
        return false;
    job_t *job = job_new(self, task);
    shard->next_task++;
    if (self->cache && job->task.sql && !shard->assign->no_cache)
        sx_resultcache_key(self->cache, job->task.task_id, job->task.sample,
                           job->task.sql, shard->assign->files, shard->assign->file_count,
                           job->cache_key);
    if (shard->next_task >= shard->end_task) {
        zlist_pop(self->shards);
        shard_destroy(&shard);
    }
    slot->job = job;
    zsock_send(slot->actor, "p", job);
    return true;
}

/* Fills the free slots with the next tasks, in order. */
static void start_tasks(sx_agent_t *self)
{
    slot_t *slot;
    while ((slot = free_slot(self)) != NULL && start_next_task(self, slot))
        ;
}

/* One entry per dispatch: the token tells two dispatches of one attempt apart. */
static void spool_key(char *key, size_t size, const char *method, const char *task_id,
                      uint64_t token)
{
    snprintf(key, size, "%s.%s.%llu", method, task_id, (unsigned long long)token);
}

/* One line per finished task in the worker's log; one that did not match
 * says why. */
static void log_task_line(const job_t *job)
{
    bool match = job->result.status == SX_STATUS_MATCH;
    char sample[32] = "";
    if (job->task.sample)
        snprintf(sample, sizeof sample, " sample %d", job->task.sample);
    sx_info("task %s/%s%s attempt %d: %s (%.1f s%s)%s%s", job->task.method,
            job->task.task_id, sample, job->task.attempt,
            sx_status_name(job->result.status), job->seconds,
            job->result.cached ? ", from the result cache" : "", match ? "" : ": ",
            match ? "" : job->result.detail);
}

/* Turns a finished job into a spooled, sent RESULT. */
static void finish_job(sx_agent_t *self, job_t *job)
{
    sx_msg_t *msg = sx_msg_new(SX_MSG_RESULT);
    msg->method = sx_strdup(job->task.method);
    sx_status_t status = job->result.status;
    char detail[SX_ERROR_MAX + 16];
    snprintf(detail, sizeof detail, "%s", job->result.detail ? job->result.detail : "");
    sx_error_t err;
    if (job->result.csv) {
        msg->data =
            sx_file_read(job->result.csv, SX_PROTO_MAX_BYTES - 65536, &msg->size, &err);
        if (!msg->data) {
            /* A verdict whose CSV cannot be shipped is not one: retried. */
            sx_err("task %s: final CSV: %s", job->task.task_id, err.msg);
            status = SX_STATUS_INFRA_ERROR;
            snprintf(detail, sizeof detail, "final CSV: %s", err.msg);
        }
        unlink(job->result.csv);
    }
    sx_result_init(&msg->result, job->task.task_id, status, detail, NULL);
    msg->result.sample = job->task.sample;
    msg->result.attempts = job->task.attempt;
    msg->token = job->task.token;
    msg->result.seconds = job->seconds;
    msg->result.strict = status == SX_STATUS_INFRA_ERROR ? 0 : job->result.strict;
    msg->result.cached = status != SX_STATUS_INFRA_ERROR && job->result.cached;
    if (status == job->result.status) /* its final CSV travels with it */
        msg->result.changelog = job->result.changelog;
    free(msg->result.worker);
    msg->result.worker = sx_strdup(self->name);
    msg->result.steps = job->timings;
    size_t size = 0;
    char *data = sx_msg_encode(msg, &size, &err);
    char key[700];
    spool_key(key, sizeof key, job->task.method, job->task.task_id, job->task.token);
    if (!data)
        sx_err("task %s: %s", job->task.task_id, err.msg);
    else if (sx_spool_put(self->spool, key, data, size, &err) != 0)
        sx_err("task %s: cannot spool its result: %s", job->task.task_id, err.msg);
    if (data && self->dealer) {
        sx_msg_send_raw(data, size, self->dealer, NULL, NULL);
        self->last_sent = zclock_mono();
    }
    log_task_line(job);
    free(data);
    sx_msg_destroy(&msg);
    self->executed++;
}

/* A slot's job came back: its result goes out, and the slot is free. */
static void on_slot(sx_agent_t *self, slot_t *slot)
{
    job_t *job = NULL;
    if (zsock_recv(slot->actor, "p", &job) != 0 || job != slot->job)
        return;
    finish_job(self, job);
    slot->job = NULL;
    job_destroy(&job);
}

/* The slots with nothing to run. */
static int free_slots(const sx_agent_t *self)
{
    int count = 0;
    for (int i = 0; i < self->config.slots; i++)
        count += self->slots[i].job == NULL;
    return count;
}

/* Answers a RECALL: gives back every task of the shards held here that has
 * not gone to a slot, but for the next one of each free slot (they start as
 * soon as their files are here: another worker would have to fetch them
 * too), and forgets them, so the coordinator can hand them to an idle
 * worker. A task on a slot is in no shard's remainder (next_task is past
 * it): it is never given back, and its RESULT comes as usual. This thread
 * alone starts tasks, so "not started" cannot change while the answer is
 * made. */
static void on_recall(sx_agent_t *self)
{
    sx_msg_t *release = sx_msg_new(SX_MSG_RELEASE);
    size_t keep = (size_t)free_slots(self);
    zlist_t *kept = zlist_new();
    local_shard_t *shard;
    while ((shard = zlist_pop(self->shards)) != NULL) {
        size_t left = shard->end_task - shard->next_task;
        size_t staying = left < keep ? left : keep;
        keep -= staying;
        for (size_t i = shard->next_task + staying; i < shard->end_task; i++) {
            const sx_msg_task_t *task = &shard->assign->tasks[i];
            sx_msg_add_task(release, task->method, task->task_id, NULL, 0, task->token)
                ->sample = task->sample;
        }
        shard->end_task = shard->next_task + staying;
        if (staying)
            zlist_append(kept, shard);
        else
            shard_destroy(&shard);
    }
    zlist_destroy(&self->shards);
    self->shards = kept;
    sx_info("worker %s: coordinator recalled the tasks not started: %zu given back",
            self->name, release->task_count);
    send_msg(self, release);
    sx_msg_destroy(&release);
}

/* ---- the loop ---------------------------------------------------------- */

/* Returns 0 to go on, 1 when the coordinator said the run is over, 2 when
 * it asked for a reconnect, -1 when it turned this worker away (err says
 * why: e.g. another engine than the run's). */
static int on_coordinator(sx_agent_t *self, sx_error_t *err)
{
    sx_error_t bad;
    sx_msg_t *msg = sx_msg_recv(self->dealer, NULL, &bad);
    if (!msg) {
        sx_warn("rejected a message from the coordinator: %s", bad.msg);
        return 0;
    }
    int rc = 0;
    self->coordinator_expires = zclock_mono() + self->config.dead_after_ms;
    self->backoff_ms = self->config.reconnect_min_ms;
    if (!sx_msg_from_coordinator(msg->type)) {
        sx_warn("rejected %s: not a coordinator's message", sx_msg_type_name(msg->type));
    } else if (msg->type == SX_MSG_ASSIGN) {
        request_missing(self, msg);
        local_shard_t *shard = sx_alloc(1, sizeof *shard);
        shard->assign = msg;
        shard->received = zclock_mono();
        shard->end_task = shard->assign->task_count;
        msg = NULL;
        if (shard->assign->task_count == 0)
            shard_destroy(&shard);
        else
            zlist_append(self->shards, shard);
    } else if (msg->type == SX_MSG_ACK) {
        char key[700];
        spool_key(key, sizeof key, msg->method, msg->result.task_id, msg->token);
        sx_spool_remove(self->spool, key);
    } else if (msg->type == SX_MSG_FILE) {
        on_file(self, msg);
    } else if (msg->type == SX_MSG_RECALL) {
        on_recall(self);
    } else if (msg->type == SX_MSG_GOODBYE && msg->final &&
               strncmp(msg->reason, "refused: ", 9) == 0) {
        rc = sx_error_set(err, "the coordinator %s", msg->reason);
    } else if (msg->type == SX_MSG_GOODBYE) {
        sx_info("worker %s: coordinator says goodbye: %s", self->name, msg->reason);
        rc = msg->final ? 1 : 2;
    }
    sx_msg_destroy(&msg);
    return rc;
}

static void heartbeat(sx_agent_t *self)
{
    if (zclock_mono() - self->last_sent < self->config.heartbeat_ms)
        return;
    sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
    send_msg(self, beat);
    sx_msg_destroy(&beat);
}

/* Waits up to ms for the coordinator, a slot or `stop`; returns which
 * (a slot's actor for a slot), NULL on timeout, with *terminated set when
 * the wait was interrupted. */
static void *wait_for_input(sx_agent_t *self, int ms, bool *terminated)
{
    void *which = zpoller_wait(self->poller, ms);
    *terminated = zpoller_terminated(self->poller);
    return which;
}

/* The slot whose actor is `which`, or NULL. */
static slot_t *slot_of(sx_agent_t *self, void *which)
{
    for (int i = 0; which && i < self->config.slots; i++)
        if (which == (void *)self->slots[i].actor)
            return &self->slots[i];
    return NULL;
}

/* The worker's own stall is not the coordinator's silence (see
 * sx_clock_stall_ms): the coordinator's expiry moves by it. */
static void excuse_own_stall(sx_agent_t *self)
{
    int64_t stall = sx_clock_stall_ms(&self->loop_at, self->config.heartbeat_ms);
    if (sx_clock_stall_is_long(stall, self->config.dead_after_ms))
        sx_warn("worker %s stood still for %lld ms: the coordinator's silence counts "
                "from now",
                self->name, (long long)stall);
    self->coordinator_expires += stall;
}

int sx_agent_run(sx_agent_t *self, zsock_t *stop, sx_error_t *err)
{
    self->stop = stop;
    if (connect_coordinator(self, err) != 0)
        return -1;
    int rc = 1;
    while (!sx_signals_caught()) {
        start_tasks(self);
        bool terminated = false;
        void *which = wait_for_input(self, self->config.heartbeat_ms / 2, &terminated);
        if (stop && which == stop)
            break;
        int state = 0;
        slot_t *slot = slot_of(self, which);
        if (which == self->dealer)
            state = on_coordinator(self, err);
        else if (slot)
            on_slot(self, slot);
        else if (terminated)
            break;
        if (state == 1 || state == -1) {
            rc = state == 1 ? 0 : -1;
            break;
        }
        excuse_own_stall(self);
        if (state == 2 || zclock_mono() >= self->coordinator_expires) {
            int again = reconnect(self, stop, err);
            if (again != 0) {
                rc = again;
                break;
            }
        }
        heartbeat(self);
    }
    if (rc == 1 && self->dealer) {
        sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
        bye->reason = sx_strdup("worker stopping");
        send_msg(self, bye);
        sx_msg_destroy(&bye);
        zsock_set_linger(self->dealer, 500);
    }
    return rc;
}
