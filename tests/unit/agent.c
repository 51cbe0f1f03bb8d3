/* tests/unit/agent.c: self-tests of the worker side of the distributed run (the
 * result spool, the result cache, the simulated executor), then the agent's
 * test, which lives here rather than in worker/ because it needs test code
 * (the throw-away bench of tests/kit/testbench.h). A scripted fake
 * coordinator (a raw ROUTER) drives one agent with the simulated executor:
 * files are fetched by hash once and verified, a result is spooled until
 * acknowledged and re-sent after the coordinator vanishes and comes back,
 * garbage is ignored, a cache that cannot take a file turns the task into
 * infra_error, a final goodbye ends the agent, and a RECALL gives back
 * exactly the tasks not started. With slots, tasks run at once (the
 * simulated executor counts how many), one failing leaves the others alone,
 * a RECALL gives back only those no slot took, and a task whose earlier
 * dispatch still runs waits for it. Each executed task is finished (its
 * cleanup) once, and a silent coordinator is retried after a back-off that
 * doubles up to its maximum, which the agent sits out asleep. A result
 * counts as a heartbeat, and a stopped worker's goodbye outlives its
 * socket. */
#include "worker/agent.h"
#include "worker/resultcache.h"
#include "worker/spool.h"

#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "tests/kit/logfile.h"
#include "tests/kit/testbench.h"
#include "common/files.h"
#include "proto/proto.h"
#include "worker/simexec.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BEAT_MS 100
#define DEAD_MS                                                                          \
    1500 /* well above BEAT_MS, so a loaded machine does not kill a live fake */
/* How long a test waits for a message that must come. Generous, because a
 * loaded machine delays threads; a message that comes returns at once. */
#define WAIT_MS 10000

typedef struct {
    sx_agent_t *agent;
    int rc;
    clockid_t cpu; /* the agent's thread's CPU-time clock */
} run_t;

static void agent_actor(zsock_t *pipe, void *arg)
{
    run_t *run = arg;
    SX_CHECK(pthread_getcpuclockid(pthread_self(), &run->cpu) == 0);
    zsock_signal(pipe, 0);
    run->rc = sx_agent_run(run->agent, pipe, NULL);
    zstr_send(pipe, "done");
}

/* Next message from the agent, of any type (a frame that is none is
 * skipped); NULL on timeout. */
static sx_msg_t *expect_any(zsock_t *router, zframe_t **who, int timeout_ms)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    while (zclock_mono() < deadline) {
        zpoller_t *poller = zpoller_new(router, NULL);
        void *which = zpoller_wait(poller, 20);
        zpoller_destroy(&poller);
        if (!which)
            continue;
        zframe_t *sender = NULL;
        sx_msg_t *msg = sx_msg_recv(router, &sender, NULL);
        if (msg) {
            zframe_destroy(who);
            *who = sender;
            return msg;
        }
        zframe_destroy(&sender);
    }
    return NULL;
}

/* Next message of a type from the agent (others skipped); NULL on timeout. */
static sx_msg_t *expect(zsock_t *router, sx_msg_type_t type, zframe_t **who,
                        int timeout_ms)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    int64_t left;
    while ((left = deadline - zclock_mono()) > 0) {
        sx_msg_t *msg = expect_any(router, who, (int)left);
        if (msg && msg->type == type)
            return msg;
        sx_msg_destroy(&msg);
    }
    return NULL;
}

static sx_msg_t *make_assign(const char *bench, const char *task_id, int attempt)
{
    sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
    assign->shard_id = 1;
    sx_msg_add_task(assign, "m1", task_id, "SELECT 1", attempt, 100u * (unsigned)attempt);
    char rel[256], abs[PATH_MAX + 256], hash[41];
    for (int i = 0; i < 2; i++) {
        snprintf(rel, sizeof rel, i == 0 ? "tasks/%s/task.json" : "gold/%s.csv", task_id);
        snprintf(abs, sizeof abs, "%s/%s", bench, rel);
        uint64_t size = 0;
        SX_CHECK(sx_hash_file(abs, hash, &size, NULL) == 0);
        sx_msg_add_file(assign, rel, hash, size);
    }
    return assign;
}

/* Serves FILE_REQUESTs until a RESULT arrives; returns it and counts requests. */
static sx_msg_t *serve_until_result(zsock_t *router, const char *bench,
                                    const sx_msg_t *assign, zframe_t **who, int *requests)
{
    int64_t deadline = zclock_mono() + 3000;
    while (zclock_mono() < deadline) {
        zpoller_t *poller = zpoller_new(router, NULL);
        void *which = zpoller_wait(poller, 20);
        zpoller_destroy(&poller);
        if (!which)
            continue;
        zframe_t *sender = NULL;
        sx_msg_t *msg = sx_msg_recv(router, &sender, NULL);
        if (msg && msg->type == SX_MSG_RESULT) {
            zframe_destroy(who);
            *who = sender;
            return msg;
        }
        if (msg && msg->type == SX_MSG_FILE_REQUEST) {
            (*requests)++;
            for (size_t i = 0; i < assign->file_count; i++) {
                if (strcmp(assign->files[i].hash, msg->hash) != 0)
                    continue;
                char abs[PATH_MAX + 256];
                snprintf(abs, sizeof abs, "%s/%s", bench, assign->files[i].path);
                size_t size = 0;
                char *data = sx_file_read(abs, 1 << 20, &size, NULL);
                sx_msg_t *file = sx_msg_new(SX_MSG_FILE);
                file->hash = sx_strdup(msg->hash);
                /* First a corrupt copy, which the agent must refuse. */
                sx_msg_set_data(file, "tampered", 8);
                sx_msg_send(file, router, sender, NULL);
                free(file->data);
                file->data = data;
                file->size = size;
                sx_msg_send(file, router, sender, NULL);
                sx_msg_destroy(&file);
            }
        }
        zframe_destroy(&sender);
        sx_msg_destroy(&msg);
    }
    return NULL;
}

static long spool_entries(const char *work)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "ls '%s/spool' | wc -l", work);
    FILE *p = popen(cmd, "r");
    long n = -1;
    if (p) {
        if (fscanf(p, "%ld", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* The simulated executor, except that the final CSV of an attempt 3 is gone
 * before the agent reads it (as when the work folder's disk fails). */
static void exec_losing_csv(void *ctx, const sx_exec_request_t *request,
                            sx_result_t *result, sx_timings_t *timings)
{
    sx_simexec_run(ctx, request, result, timings);
    if (request->attempt == 3 && result->csv)
        SX_CHECK(unlink(result->csv) == 0);
}

/* A shard of task t001 under each of `count` methods and tokens (the first
 * with first_sql), shipping the files `like` ships. */
static sx_msg_t *shard_of(const sx_msg_t *like, uint64_t id, const char *first_sql,
                          const char *const *methods, const uint64_t *tokens,
                          size_t count)
{
    sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
    assign->shard_id = id;
    for (size_t i = 0; i < count; i++)
        sx_msg_add_task(assign, methods[i], "t001", i == 0 ? first_sql : "SELECT 1", 1,
                        tokens[i]);
    for (size_t i = 0; i < like->file_count; i++)
        sx_msg_add_file(assign, like->files[i].path, like->files[i].hash,
                        like->files[i].size);
    return assign;
}

/* An agent with the simulated executor (spec) on a thread, against a fake
 * coordinator (a ROUTER on an ipc endpoint of its own), whose first task
 * (t001, attempt 1) has fetched the bench files, so later shards shipping
 * the same files start at once. */
typedef struct {
    char *endpoint;
    zsock_t *router;
    sx_simexec_t *sim;
    run_t run;
    zactor_t *actor;
    zframe_t *who;
    int slots_said; /* in its HELLO */
    sx_msg_t *warm; /* the first shard: the files later ones ship */
} fixture_t;

static void fixture_start(fixture_t *f, const char *bench, sx_agent_config_t config,
                          const char *spec)
{
    f->endpoint = zsys_sprintf("ipc://%s/%s.sock", bench, config.name);
    f->router = zsock_new_router(f->endpoint);
    char work[PATH_MAX];
    snprintf(work, sizeof work, "%s/work-%s", bench, config.name);
    f->sim = sx_simexec_new(spec, NULL);
    config.endpoint = f->endpoint;
    config.work_dir = work;
    config.runtime = "agent test runtime";
    config.exec = sx_simexec_run;
    config.exec_ctx = f->sim;
    config.heartbeat_ms = BEAT_MS;
    f->run = (run_t){.agent = sx_agent_new(&config, NULL), .rc = -1};
    SX_CHECK(f->run.agent);
    f->actor = zactor_new(agent_actor, &f->run);
    f->who = NULL;
    sx_msg_t *hello = expect(f->router, SX_MSG_HELLO, &f->who, WAIT_MS);
    SX_CHECK(hello);
    f->slots_said = hello->slots;
    sx_msg_destroy(&hello);
    f->warm = make_assign(bench, "t001", 1);
    sx_msg_send(f->warm, f->router, f->who, NULL);
    int requests = 0;
    sx_msg_t *result = serve_until_result(f->router, bench, f->warm, &f->who, &requests);
    SX_CHECK(result && requests == 2);
    sx_msg_destroy(&result);
}

static void fixture_free(fixture_t *f)
{
    zactor_destroy(&f->actor);
    sx_agent_destroy(&f->run.agent);
    sx_simexec_destroy(&f->sim);
    sx_msg_destroy(&f->warm);
    zframe_destroy(&f->who);
    zsock_destroy(&f->router);
    zstr_free(&f->endpoint);
}

/* A final goodbye ends the agent, which executed `executed` tasks. */
static void fixture_end(fixture_t *f, size_t executed)
{
    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = sx_strdup("run complete");
    bye->final = true;
    sx_msg_send(bye, f->router, f->who, NULL);
    sx_msg_destroy(&bye);
    zpoller_t *poller = zpoller_new(f->actor, NULL);
    SX_CHECK(zpoller_wait(poller, WAIT_MS) == f->actor);
    zpoller_destroy(&poller);
    char *done = zstr_recv(f->actor);
    zstr_free(&done);
    SX_CHECK(f->run.rc == 0 && sx_agent_executed(f->run.agent) == executed);
    fixture_free(f);
}

/* Tasks whose cleanup (sx_agent_config_t.finish) ran, on the slots' threads. */
static atomic_int s_finished;

static void finish_counted(void *slot_ctx)
{
    (void)slot_ctx;
    s_finished++;
}

/* RECALL while the first task of two shards runs: the agent gives back
 * (RELEASE) exactly the three tasks it has not started, under their tokens,
 * and forgets them; the running one finishes and is reported; a second
 * RECALL finds nothing left to give back. Each task executed was finished
 * (its cleanup) once. */
static void test_recall_releases_unstarted(const char *bench)
{
    fixture_t f;
    fixture_start(&f, bench,
                  (sx_agent_config_t){.name = "w2",
                                      .capacity = 2,
                                      .dead_after_ms = DEAD_MS,
                                      .finish = finish_counted},
                  "delay_ms=20");
    const char *methods[] = {"m1", "m2", "m3", "m4"};
    const uint64_t tokens[] = {11, 12, 13, 14};
    sx_msg_t *shards[2] = {
        shard_of(f.warm, 2, "SELECT 1 /*sim:slow*/", methods, tokens, 2),
        shard_of(f.warm, 3, "SELECT 1", methods + 2, tokens + 2, 2)};
    for (int i = 0; i < 2; i++)
        SX_CHECK(sx_msg_send(shards[i], f.router, f.who, NULL) == 0);
    sx_msg_t *recall = sx_msg_new(SX_MSG_RECALL);
    SX_CHECK(sx_msg_send(recall, f.router, f.who, NULL) == 0);
    sx_msg_t *release = expect(f.router, SX_MSG_RELEASE, &f.who, WAIT_MS);
    SX_CHECK(release && release->task_count == 3);
    for (size_t i = 0; i < 3; i++)
        SX_CHECK(strcmp(release->tasks[i].method, methods[i + 1]) == 0 &&
                 strcmp(release->tasks[i].task_id, "t001") == 0 &&
                 release->tasks[i].token == tokens[i + 1]);
    sx_msg_destroy(&release);
    sx_msg_t *result = expect(f.router, SX_MSG_RESULT, &f.who, WAIT_MS);
    SX_CHECK(result && strcmp(result->method, "m1") == 0 && result->token == 11 &&
             result->result.status == SX_STATUS_MATCH);
    sx_msg_destroy(&result);
    SX_CHECK(sx_msg_send(recall, f.router, f.who, NULL) == 0);
    release = expect(f.router, SX_MSG_RELEASE, &f.who, WAIT_MS);
    SX_CHECK(release && release->task_count == 0);
    sx_msg_destroy(&release);
    SX_CHECK(expect(f.router, SX_MSG_RESULT, &f.who, 300) == NULL);
    sx_msg_destroy(&recall);
    for (int i = 0; i < 2; i++)
        sx_msg_destroy(&shards[i]);
    fixture_end(&f, 2);
    SX_CHECK(s_finished == 2);
}

/* The fixture with one slot whose tasks take no time, named `name`. */
static void fixture_start_quick(fixture_t *f, const char *bench, const char *name)
{
    fixture_start(
        f, bench,
        (sx_agent_config_t){.name = name, .capacity = 2, .dead_after_ms = DEAD_MS},
        "delay_ms=0");
}

/* Sends `assign` to the fixture's agent and serves the files it asks for
 * until its RESULT, which it returns; *requests counts the asks. */
static sx_msg_t *fixture_task(fixture_t *f, const char *bench, const sx_msg_t *assign,
                              int *requests)
{
    SX_CHECK(sx_msg_send(assign, f->router, f->who, NULL) == 0);
    *requests = 0;
    return serve_until_result(f->router, bench, assign, &f->who, requests);
}

/* A task whose files came but cannot be laid out in the worker's bench
 * folder (a file where its folder goes) is answered with infra_error at
 * once, naming the file and why, so the coordinator retries it elsewhere. */
static void test_files_not_placed(const char *bench)
{
    fixture_t f;
    fixture_start_quick(&f, bench, "w7");
    char blocker[PATH_MAX], want[2 * PATH_MAX];
    snprintf(blocker, sizeof blocker, "%s/work-w7/bench/tasks/t002", bench);
    FILE *file = fopen(blocker, "w");
    SX_CHECK(file && fclose(file) == 0);
    sx_msg_t *assign = make_assign(bench, "t002", 1);
    int requests;
    sx_msg_t *result = fixture_task(&f, bench, assign, &requests);
    snprintf(want, sizeof want,
             "worker w7 cannot get the task's files: %s/task.json: cannot link from the "
             "cache: Not a directory",
             blocker);
    SX_CHECK(result && result->result.status == SX_STATUS_INFRA_ERROR);
    SX_CHECK(strcmp(result->result.detail, want) == 0);
    SX_CHECK(result->result.attempts == 1 && result->size == 0 && requests == 2);
    sx_msg_destroy(&result);
    sx_msg_destroy(&assign);
    fixture_end(&f, 2);
}

/* An idle agent keeps beating, so the coordinator does not drop it. */
static void test_idle_beats(const char *bench)
{
    fixture_t f;
    fixture_start_quick(&f, bench, "w11");
    sx_msg_t *beat = expect(f.router, SX_MSG_HEARTBEAT, &f.who, WAIT_MS);
    SX_CHECK(beat);
    sx_msg_destroy(&beat);
    fixture_end(&f, 1);
}

/* A result is a sign of life too: while results come more often than
 * heartbeat_ms, no heartbeat goes. The fake coordinator sends each task only
 * once the previous result came, so a heartbeat that comes after result k
 * was sent at least BEAT_MS after that result, which left after task k was
 * sent: the check is that lower bound, which a loaded machine only raises.
 * An agent that beats regardless of its results beats right after one. */
static void test_results_count_as_beats(const char *bench)
{
    fixture_t f;
    fixture_start_quick(&f, bench, "w14");
    const char *methods[] = {"m1"};
    int64_t start = zclock_mono(), task_sent_at = INT64_MIN / 2;
    int tasks = 0;
    for (uint64_t token = 1000; zclock_mono() - start < 10 * BEAT_MS; token++) {
        int64_t beat_earliest = task_sent_at + BEAT_MS; /* after the last result */
        sx_msg_t *shard = shard_of(f.warm, token, "SELECT 1", methods, &token, 1);
        task_sent_at = zclock_mono();
        SX_CHECK(sx_msg_send(shard, f.router, f.who, NULL) == 0);
        sx_msg_destroy(&shard);
        sx_msg_t *msg;
        while ((msg = expect_any(f.router, &f.who, WAIT_MS)) &&
               msg->type == SX_MSG_HEARTBEAT) {
            SX_CHECK(zclock_mono() >= beat_earliest);
            sx_msg_destroy(&msg);
        }
        SX_CHECK(msg && msg->type == SX_MSG_RESULT && msg->token == token);
        sx_msg_destroy(&msg);
        tasks++;
    }
    SX_CHECK(tasks >= 10);
    fixture_end(&f, 1 + (size_t)tasks);
}

/* A worker that is stopped says goodbye, and its goodbye outlives its
 * socket by up to half a second (the socket's linger), as it must outlive
 * the process's end. Here the worker starts, says HELLO and is stopped
 * before its coordinator is up, so both messages wait in its socket (none
 * can be half-sent to a coordinator that went away); the coordinator binds
 * only once that socket was closed, and still gets both (a socket closed
 * without linger drops them). The socket finds the coordinator on its next
 * reconnect, within libzmq's 100 ms reconnect interval. */
static void test_goodbye_outlives_socket(const char *bench)
{
    char *endpoint = zsys_sprintf("ipc://%s/w15.sock", bench);
    char work[PATH_MAX];
    snprintf(work, sizeof work, "%s/work-w15", bench);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=0", NULL);
    sx_agent_config_t config = {.endpoint = endpoint,
                                .name = "w15",
                                .work_dir = work,
                                .exec = sx_simexec_run,
                                .exec_ctx = sim,
                                .heartbeat_ms = BEAT_MS,
                                .dead_after_ms = 3 * WAIT_MS};
    run_t run = {.agent = sx_agent_new(&config, NULL), .rc = -1};
    SX_CHECK(run.agent);
    zactor_t *actor = zactor_new(agent_actor, &run);
    zactor_destroy(&actor); /* the stop, which the agent sees after its HELLO */
    SX_CHECK(run.rc == 1);
    sx_agent_destroy(&run.agent);
    zsock_t *router = zsock_new_router(endpoint);
    SX_CHECK(router);
    zframe_t *who = NULL;
    sx_msg_t *hello = expect_any(router, &who, WAIT_MS);
    SX_CHECK(hello && hello->type == SX_MSG_HELLO);
    sx_msg_t *bye = expect_any(router, &who, WAIT_MS);
    SX_CHECK(bye && bye->type == SX_MSG_GOODBYE &&
             strcmp(bye->reason, "worker stopping") == 0);
    sx_msg_destroy(&hello);
    sx_msg_destroy(&bye);
    zframe_destroy(&who);
    zsock_destroy(&router);
    sx_simexec_destroy(&sim);
    zstr_free(&endpoint);
}

/* A bench file of 600 KiB (the protocol takes messages of up to
 * SX_PROTO_MAX_BYTES) comes whole in one FILE and the task runs: a socket
 * limit below the protocol's would drop it and the task would never run.
 * The worker's bench folder holds an older file of that name: it is
 * replaced. */
static void test_big_file(const char *bench)
{
    fixture_t f;
    fixture_start_quick(&f, bench, "w10");
    char path[PATH_MAX], placed[PATH_MAX], hash[41], copy[41];
    snprintf(path, sizeof path, "%s/tasks/t001/big.bin", bench);
    size_t size = 600 * 1024;
    char *data = sx_alloc(size, 1);
    for (size_t i = 0; i < size; i++)
        data[i] = (char)(i * 7919 % 251);
    sx_error_t err;
    SX_CHECK(sx_file_write_atomic(path, data, size, &err) == 0);
    free(data);
    uint64_t bytes = 0;
    SX_CHECK(sx_hash_file(path, hash, &bytes, NULL) == 0 && bytes == size);
    snprintf(placed, sizeof placed, "%s/work-w10/bench/tasks/t001/big.bin", bench);
    SX_CHECK(sx_mkdirs_for(placed, &err) == 0 &&
             sx_file_write_atomic(placed, "older", 5, &err) == 0);
    sx_msg_t *assign = make_assign(bench, "t001", 2);
    sx_msg_add_file(assign, "tasks/t001/big.bin", hash, bytes);
    int requests;
    sx_msg_t *result = fixture_task(&f, bench, assign, &requests);
    SX_CHECK(result && result->result.status == SX_STATUS_MATCH && requests == 1);
    SX_CHECK(sx_hash_file(placed, copy, &bytes, NULL) == 0 && strcmp(copy, hash) == 0);
    SX_CHECK(unlink(path) == 0);
    sx_msg_destroy(&result);
    sx_msg_destroy(&assign);
    fixture_end(&f, 2);
}

/* Sends a shard of task t001 under the given methods, SQL and tokens. */
static void send_shard(zsock_t *router, zframe_t *who, const sx_msg_t *like, uint64_t id,
                       const char *const *methods, const char *const *sql,
                       const uint64_t *tokens, size_t count)
{
    sx_msg_t *assign = shard_of(like, id, sql[0], methods, tokens, count);
    for (size_t i = 1; i < count; i++) {
        free(assign->tasks[i].sql);
        assign->tasks[i].sql = sx_strdup(sql[i]);
    }
    SX_CHECK(sx_msg_send(assign, router, who, NULL) == 0);
    sx_msg_destroy(&assign);
}

/* The tokens of the first `count` RESULTs with a token from `from` to 99, in
 * the order they first came (the spool's resends skipped). */
static void result_order(zsock_t *router, zframe_t **who, uint64_t from, uint64_t *order,
                         size_t count)
{
    for (size_t n = 0; n < count;) {
        sx_msg_t *result = expect(router, SX_MSG_RESULT, who, WAIT_MS);
        SX_CHECK(result);
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            seen |= order[i] == result->token;
        if (!seen && result->token >= from && result->token < 100) {
            SX_CHECK(result->result.status == SX_STATUS_MATCH);
            order[n++] = result->token;
        }
        sx_msg_destroy(&result);
    }
}

/* Three slots, four tasks: three run at once (the simulated executor saw
 * three in hand together, never four), the fourth waits and a RECALL gives
 * back exactly it; a task failing on one slot (infra_error, flink_error)
 * leaves the others' verdicts alone. Then a task whose earlier dispatch
 * (before a reconnect) still runs on a slot waits for it, and so does the
 * one after it: their results come after the first's. */
static void test_slots_run_tasks_at_once(const char *bench)
{
    fixture_t f;
    /* This fake coordinator never beats: only its GOODBYE below may make
     * the agent reconnect. */
    fixture_start(&f, bench,
                  (sx_agent_config_t){.name = "w3",
                                      .capacity = 2,
                                      .slots = 3,
                                      .dead_after_ms = 3 * WAIT_MS,
                                      .reconnect_min_ms = 50,
                                      .reconnect_max_ms = 200},
                  "delay_ms=300");
    SX_CHECK(f.slots_said == 3 && sx_simexec_most_at_once(f.sim) == 1);

    /* The agent starts a shard's tasks before it reads the next message, so
     * the RECALL finds three on slots and one waiting. */
    const char *methods[] = {"m1", "m2", "m3", "m4"};
    const char *sql[] = {"SELECT 1 /*sim:infra_error*/", "SELECT 1",
                         "SELECT 1 /*sim:flink_error*/", "SELECT 1"};
    const uint64_t tokens[] = {11, 12, 13, 14};
    send_shard(f.router, f.who, f.warm, 2, methods, sql, tokens, 4);
    sx_msg_t *recall = sx_msg_new(SX_MSG_RECALL);
    SX_CHECK(sx_msg_send(recall, f.router, f.who, NULL) == 0);
    sx_msg_destroy(&recall);
    sx_msg_t *release = expect(f.router, SX_MSG_RELEASE, &f.who, WAIT_MS);
    SX_CHECK(release && release->task_count == 1 &&
             strcmp(release->tasks[0].method, "m4") == 0 &&
             release->tasks[0].token == 14);
    sx_msg_destroy(&release);
    const sx_status_t want[] = {SX_STATUS_INFRA_ERROR, SX_STATUS_MATCH,
                                SX_STATUS_FLINK_ERROR};
    for (int i = 0; i < 3; i++) {
        sx_msg_t *result = expect(f.router, SX_MSG_RESULT, &f.who, WAIT_MS);
        SX_CHECK(result && result->token >= 11 && result->token <= 13);
        SX_CHECK(result->result.status == want[result->token - 11]);
        sx_msg_destroy(&result);
    }
    SX_CHECK(sx_simexec_most_at_once(f.sim) == 3);

    /* m1/t001 runs (slow: 3 s) when the coordinator asks for a reconnect
     * and sends it again (same attempt, new token), then m2/t001. */
    const char *slow[] = {"SELECT 1 /*sim:slow*/"};
    send_shard(f.router, f.who, f.warm, 3, methods, slow, (const uint64_t[]){21}, 1);
    sx_msg_t *again = sx_msg_new(SX_MSG_GOODBYE);
    again->reason = sx_strdup("reconnect");
    SX_CHECK(sx_msg_send(again, f.router, f.who, NULL) == 0);
    sx_msg_destroy(&again);
    sx_msg_t *hello = expect(f.router, SX_MSG_HELLO, &f.who, WAIT_MS);
    SX_CHECK(hello);
    sx_msg_destroy(&hello);
    const char *plain[] = {"SELECT 1", "SELECT 1"};
    send_shard(f.router, f.who, f.warm, 4, methods, plain, (const uint64_t[]){22, 23}, 2);
    uint64_t order[3];
    result_order(f.router, &f.who, 21, order, 3);
    SX_CHECK(order[0] == 21 && order[1] + order[2] == 45);
    fixture_end(&f, 7);
}

/* Two slots: a task waits only for a slot running its own method's same
 * task. Behind a slow m1/t002 (another task) and behind a slow m2/t001
 * (another method's), m1/t001 starts on the free slot at once and its
 * result comes first (0.3 s; the slow one takes ten times as long). */
static void test_slot_waits_only_for_its_own_task(const char *bench)
{
    fixture_t f;
    fixture_start(
        &f, bench,
        (sx_agent_config_t){
            .name = "w13", .capacity = 2, .slots = 2, .dead_after_ms = 3 * WAIT_MS},
        "delay_ms=300");
    sx_msg_t *other = make_assign(bench, "t002", 1); /* its files, fetched once */
    int requests = 0;
    sx_msg_t *result = fixture_task(&f, bench, other, &requests);
    SX_CHECK(result && result->result.status == SX_STATUS_MATCH && requests == 2);
    sx_msg_destroy(&result);
    const struct {
        const char *method, *task_id;
    } slow[] = {{"m1", "t002"}, {"m2", "t001"}};
    for (uint64_t i = 0; i < 2; i++) {
        sx_msg_t *assign = sx_msg_new(SX_MSG_ASSIGN);
        assign->shard_id = 30 + i;
        sx_msg_add_task(assign, slow[i].method, slow[i].task_id, "SELECT 1 /*sim:slow*/",
                        1, 30 + 2 * i);
        sx_msg_add_task(assign, "m1", "t001", "SELECT 1", 1, 31 + 2 * i);
        for (const sx_msg_t *files = f.warm; files;
             files = files == f.warm ? other : NULL)
            for (size_t k = 0; k < files->file_count; k++)
                sx_msg_add_file(assign, files->files[k].path, files->files[k].hash,
                                files->files[k].size);
        SX_CHECK(sx_msg_send(assign, f.router, f.who, NULL) == 0);
        sx_msg_destroy(&assign);
        uint64_t order[2];
        result_order(f.router, &f.who, 30 + 2 * i, order, 2);
        if (order[0] != 31 + 2 * i)
            fprintf(stderr, "behind %s/%s: results %llu then %llu\n", slow[i].method,
                    slow[i].task_id, (unsigned long long)order[0],
                    (unsigned long long)order[1]);
        SX_CHECK(order[0] == 31 + 2 * i && order[1] == 30 + 2 * i);
    }
    sx_msg_destroy(&other);
    fixture_end(&f, 6);
}

/* sx_agent_new(config) fails with exactly `want`. */
static void check_refused(const sx_agent_config_t *config, const char *want)
{
    sx_error_t err;
    SX_CHECK(sx_agent_new(config, &err) == NULL);
    if (strcmp(err.msg, want) != 0)
        fprintf(stderr, "got \"%s\"\nwant \"%s\"\n", err.msg, want);
    SX_CHECK(strcmp(err.msg, want) == 0);
}

/* sx_agent_run(config) cannot reach the coordinator: -1, exactly `want`. */
static void check_unconnected(const sx_agent_config_t *config, const char *want)
{
    sx_error_t err;
    sx_agent_t *agent = sx_agent_new(config, &err);
    SX_CHECK(agent);
    SX_CHECK(sx_agent_run(agent, NULL, &err) == -1);
    if (strcmp(err.msg, want) != 0)
        fprintf(stderr, "got \"%s\"\nwant \"%s\"\n", err.msg, want);
    SX_CHECK(strcmp(err.msg, want) == 0 && sx_agent_executed(agent) == 0);
    sx_agent_destroy(&agent);
}

/* A worker that cannot work says why, naming what is wrong, before it
 * connects (no executor, a result cache without a scorer, a work folder
 * path too long, --cert alone, a name that is no file name) or when it
 * connects (a certificate that does not load, an endpoint ZeroMQ refuses). */
static void test_refusals(const char *bench)
{
    char work[PATH_MAX], cert[PATH_MAX];
    snprintf(work, sizeof work, "%s/work-w6", bench);
    snprintf(cert, sizeof cert, "%s/w6.cert", bench);
    char *endpoint = zsys_sprintf("ipc://%s/none.sock", bench);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=0", NULL);
    const sx_agent_config_t good = {.endpoint = endpoint,
                                    .name = "w6",
                                    .work_dir = work,
                                    .exec = sx_simexec_run,
                                    .exec_ctx = sim};
    const char *needs = "worker needs an endpoint, a work folder and an executor (and "
                        "a scorer for a result cache)";
    sx_agent_config_t config = good;
    config.exec = NULL;
    check_refused(&config, needs);
    config = good;
    config.result_cache_dir = work;
    check_refused(&config, needs);
    char long_dir[1100], want[PATH_MAX + 64];
    memset(long_dir, 'w', 1025);
    long_dir[0] = '/';
    long_dir[1025] = '\0';
    config = good;
    config.work_dir = long_dir;
    snprintf(want, sizeof want, "%s: work folder path longer than 1024 bytes", long_dir);
    check_refused(&config, want);
    config = good;
    config.cert_path = cert;
    check_refused(&config, "--cert needs --server-cert, the coordinator's public "
                           "certificate");
    config = good;
    config.name = "w 6";
    check_refused(&config, "worker name 'w 6' must be [A-Za-z0-9_.-]+");

    config = good;
    config.cert_path = cert;
    config.server_cert_path = "/nonexistent/coordinator.cert";
    snprintf(want, sizeof want, "%s: cannot load the worker certificate", cert);
    check_unconnected(&config, want);
    zcert_t *mine = zcert_new();
    SX_CHECK(zcert_save(mine, cert) == 0);
    zcert_destroy(&mine);
    check_unconnected(&config,
                      "/nonexistent/coordinator.cert: cannot load the coordinator "
                      "certificate");
    config = good;
    config.endpoint = "bogus://nowhere";
    config.insecure = true;
    check_unconnected(&config, "cannot connect to bogus://nowhere");
    sx_agent_t *none = NULL;
    sx_agent_destroy(&none); /* harmless, as every destructor here */
    sx_simexec_destroy(&sim);
    zstr_free(&endpoint);
}

/* The back-offs the agent's log gave, "reconnecting in N ms", from the
 * file its stderr went to: at most `most` of them, into ms; returns how
 * many. */
static int logged_backoffs(const char *path, int *ms, int most)
{
    FILE *log = fopen(path, "r");
    SX_CHECK(log);
    char line[1024];
    int count = 0;
    while (count < most && fgets(line, sizeof line, log)) {
        const char *at = strstr(line, "reconnecting in ");
        if (at && sscanf(at, "reconnecting in %d ms", &ms[count]) == 1)
            count++;
    }
    fclose(log);
    return count;
}

/* An agent on a thread whose coordinator (a ROUTER) never answers, its
 * warnings caught in a file from stderr meanwhile; a fixture_t without its
 * first task. */
typedef struct {
    fixture_t f;
    sx_logfile_t log;
    int defaults_said; /* HELLOs with capacity 2 and 1 slot (agent.h's defaults) */
    pthread_t thread;  /* without a stop socket: the agent's plain thread */
    /* What watch_backoff saw: the back-off logged, the CPU the agent's
     * thread used in a second of it (ms), whether a HELLO came then. */
    int backoff_ms;
    int64_t backoff_cpu_ms;
    bool early_hello;
} silent_t;

/* The agent as streamex worker runs it: no stop socket (signals stop it). */
static void *agent_without_stop(void *arg)
{
    run_t *run = arg;
    run->rc = sx_agent_run(run->agent, NULL, NULL);
    return NULL;
}

/* stop_socket: the agent on an actor whose pipe stops it (streamex run's
 * workers); else on a plain thread with none (streamex worker's). */
static void silent_start(silent_t *s, const char *bench, sx_agent_config_t config,
                         bool stop_socket)
{
    *s = (silent_t){0};
    s->f.endpoint = zsys_sprintf("ipc://%s/%s.sock", bench, config.name);
    s->f.router = zsock_new_router(s->f.endpoint);
    char work[PATH_MAX];
    snprintf(work, sizeof work, "%s/work-%s", bench, config.name);
    char log[PATH_MAX + 64];
    snprintf(log, sizeof log, "%s/%s.log", bench, config.name);
    s->f.sim = sx_simexec_new("delay_ms=0", NULL);
    config.endpoint = s->f.endpoint;
    config.work_dir = work;
    config.exec = sx_simexec_run;
    config.exec_ctx = s->f.sim;
    config.heartbeat_ms = BEAT_MS;
    config.dead_after_ms = config.dead_after_ms ? config.dead_after_ms : 2 * BEAT_MS;
    s->f.run = (run_t){.agent = sx_agent_new(&config, NULL), .rc = -1};
    SX_CHECK(s->f.run.agent);
    sx_logfile_start(&s->log, log, SX_LOG_WARN);
    s->f.who = NULL;
    if (stop_socket) {
        s->f.actor = zactor_new(agent_actor, &s->f.run);
    } else {
        SX_CHECK(pthread_create(&s->thread, NULL, agent_without_stop, &s->f.run) == 0);
        SX_CHECK(pthread_getcpuclockid(s->thread, &s->f.run.cpu) == 0);
    }
}

/* HELLOs the agent says within WAIT_MS each, at most `most`. */
static int silent_hellos(silent_t *s, int most)
{
    int hellos = 0;
    sx_msg_t *hello;
    while (hellos < most &&
           (hello = expect(s->f.router, SX_MSG_HELLO, &s->f.who, WAIT_MS)) != NULL) {
        hellos++;
        s->defaults_said += hello->capacity == 2 && hello->slots == 1;
        sx_msg_destroy(&hello);
    }
    return hellos;
}

/* Stops the agent, gives stderr back. An agent without a stop socket is
 * ended by the coordinator's final goodbye, answered to each HELLO until
 * one lands (one sent late, to an agent that gave up again, is lost). */
static void silent_stop(silent_t *s)
{
    int64_t deadline = zclock_mono() + WAIT_MS;
    while (!s->f.actor && zclock_mono() < deadline) {
        sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
        bye->reason = sx_strdup("run complete");
        bye->final = true;
        sx_msg_send(bye, s->f.router, s->f.who, NULL);
        sx_msg_destroy(&bye);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        if (pthread_timedjoin_np(s->thread, NULL, &until) == 0)
            break;
        sx_msg_t *hello = expect(s->f.router, SX_MSG_HELLO, &s->f.who, WAIT_MS);
        sx_msg_destroy(&hello);
    }
    zactor_destroy(&s->f.actor);
    sx_logfile_stop(&s->log);
}

static void silent_end(silent_t *s)
{
    sx_agent_destroy(&s->f.run.agent);
    sx_simexec_destroy(&s->f.sim);
    zframe_destroy(&s->f.who);
    zsock_destroy(&s->f.router);
    zstr_free(&s->f.endpoint);
}

/* A coordinator that never answers is given up after dead_after_ms and
 * tried again after a back-off that doubles from reconnect_min_ms and stays
 * at reconnect_max_ms (each try a fresh HELLO): 50, 100, 200, 200 ms from
 * 50 up to 200; left unset (0), from 250 up to 32 times that (agent.h). The
 * back-offs are waited, not only logged: the HELLOs took at least their sum
 * and each dead_after_ms (a lower bound, which load only makes larger). */
static void test_backoff_doubles(const char *bench)
{
    const struct {
        const char *name;
        int min_ms, max_ms;
        int want[4];
    } cases[] = {{"w5", 50, 200, {50, 100, 200, 200}}, {"w9", 0, 0, {250, 500, 1000, 0}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int tries = cases[i].want[3] ? 4 : 3;
        int64_t started = zclock_mono();
        silent_t s;
        silent_start(&s, bench,
                     (sx_agent_config_t){.name = cases[i].name,
                                         .reconnect_min_ms = cases[i].min_ms,
                                         .reconnect_max_ms = cases[i].max_ms},
                     true);
        int hellos = silent_hellos(&s, tries + 1);
        int64_t elapsed = zclock_mono() - started;
        silent_stop(&s);
        int ms[4] = {0};
        SX_CHECK(hellos == tries + 1 && s.f.run.rc == 1);
        SX_CHECK(s.defaults_said == hellos); /* capacity and slots left unset */
        SX_CHECK(logged_backoffs(s.log.path, ms, tries) == tries);
        SX_CHECK(memcmp(ms, cases[i].want, sizeof ms) == 0);
        int waited = tries * 2 * BEAT_MS; /* dead_after_ms before each try */
        for (int k = 0; k < tries; k++)
            waited += ms[k];
        if (elapsed < waited)
            fprintf(stderr, "%s: %d HELLOs in %lld ms, less than the %d ms waited\n",
                    cases[i].name, hellos, (long long)elapsed, waited);
        SX_CHECK(elapsed >= waited);
        silent_end(&s);
    }
}

/* A coordinator that answers starts the back-off over: after back-offs of
 * 50 and 100 ms, a heartbeat answers the third HELLO, then silence again:
 * the next back-off is 50 ms, not 200. (A dead-after of 2 s: the heartbeat,
 * sent as the HELLO comes, must land before the agent gives up.) */
static void test_backoff_starts_over_once_answered(const char *bench)
{
    silent_t s;
    silent_start(&s, bench,
                 (sx_agent_config_t){.name = "w12",
                                     .dead_after_ms = 2000,
                                     .reconnect_min_ms = 50,
                                     .reconnect_max_ms = 400},
                 true);
    int hellos = silent_hellos(&s, 3);
    sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
    SX_CHECK(sx_msg_send(beat, s.f.router, s.f.who, NULL) == 0);
    sx_msg_destroy(&beat);
    hellos += silent_hellos(&s, 1);
    silent_stop(&s);
    int ms[3] = {0};
    SX_CHECK(hellos == 4 && s.f.run.rc == 1);
    SX_CHECK(logged_backoffs(s.log.path, ms, 3) == 3);
    if (ms[2] != 50)
        fprintf(stderr, "back-offs %d, %d, %d ms: the third should be 50\n", ms[0], ms[1],
                ms[2]);
    SX_CHECK(ms[0] == 50 && ms[1] == 100 && ms[2] == 50);
    silent_end(&s);
}

/* CPU time of a thread's clock, in ms. */
static int64_t cpu_ms(clockid_t clock)
{
    struct timespec ts;
    SX_CHECK(clock_gettime(clock, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the agent's warning that it backs off, then watches it for a
 * second (see silent_t). */
static void watch_backoff(silent_t *s)
{
    int64_t deadline = zclock_mono() + WAIT_MS;
    while (logged_backoffs(s->log.path, &s->backoff_ms, 1) == 0 &&
           zclock_mono() < deadline)
        zclock_sleep(10); /* polls the log file for the line, with a deadline */
    int64_t cpu_before = cpu_ms(s->f.run.cpu);
    sx_msg_t *early = expect(s->f.router, SX_MSG_HELLO, &s->f.who, 1000);
    s->backoff_cpu_ms = cpu_ms(s->f.run.cpu) - cpu_before;
    s->early_hello = early != NULL;
    sx_msg_destroy(&early);
}

/* Once stderr is back (silent_stop): the agent backed off for backoff_ms
 * and slept through the second watched, no HELLO, under 100 ms of CPU. */
static void check_slept(const silent_t *s, int backoff_ms)
{
    if (s->backoff_cpu_ms >= 100)
        fprintf(stderr, "%s: the agent used %lld ms of CPU in a second of back-off\n",
                s->f.endpoint, (long long)s->backoff_cpu_ms);
    SX_CHECK(s->backoff_ms == backoff_ms && !s->early_hello && s->backoff_cpu_ms < 100);
}

/* A stop during the back-off ends the agent at once (rc 1), without a
 * second HELLO: the wait is cut short, not sat out. The stop comes once the
 * agent's warning says it waits (a 60 s back-off) and the agent has been
 * seen waiting for a second: it sleeps, using less than a tenth of that
 * second's CPU (a back-off that spins until its end uses all it gets; load
 * only makes the agent's share smaller, never the quiet one larger). */
static void test_stop_during_backoff(const char *bench)
{
    silent_t s;
    silent_start(&s, bench,
                 (sx_agent_config_t){
                     .name = "w8", .reconnect_min_ms = 60000, .reconnect_max_ms = 60000},
                 true);
    int hellos = silent_hellos(&s, 1);
    watch_backoff(&s);
    int64_t stopped = zclock_mono();
    silent_stop(&s);
    check_slept(&s, 60000);
    SX_CHECK(hellos == 1 && s.f.run.rc == 1);
    SX_CHECK(zclock_mono() - stopped < WAIT_MS);
    SX_CHECK(expect(s.f.router, SX_MSG_HELLO, &s.f.who, 200) == NULL);
    silent_end(&s);
}

/* streamex worker runs the agent with no stop socket, where the back-off
 * sleeps without a poller: a second of it costs under 100 ms of CPU as
 * well, and the agent says HELLO again once it is over; the coordinator's
 * final goodbye ends it (rc 0). */
static void test_backoff_without_stop(const char *bench)
{
    silent_t s;
    silent_start(&s, bench,
                 (sx_agent_config_t){
                     .name = "w10", .reconnect_min_ms = 3000, .reconnect_max_ms = 3000},
                 false);
    int hellos = silent_hellos(&s, 1);
    watch_backoff(&s);
    hellos += silent_hellos(&s, 1);
    silent_stop(&s);
    check_slept(&s, 3000);
    SX_CHECK(hellos == 2 && s.f.run.rc == 0);
    silent_end(&s);
}

/* A slot whose executor cannot be made stops the agent from being made,
 * naming the slot and why; the slots made before it are closed again. */
static int s_opened, s_closed;

static void *open_second_fails(void *ctx, int slot, sx_error_t *err)
{
    if (slot == 1)
        return sx_error_set(err, "no Kafka client"), NULL;
    s_opened++;
    return ctx;
}

static void close_counted(void *slot_ctx)
{
    (void)slot_ctx;
    s_closed++;
}

static void test_slot_that_cannot_open(const char *bench)
{
    char work[PATH_MAX];
    snprintf(work, sizeof work, "%s/work-noslot", bench);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=0", NULL);
    sx_agent_config_t config = {.endpoint = "ipc:///nonexistent/agent.sock",
                                .name = "w4",
                                .slots = 3,
                                .work_dir = work,
                                .exec = sx_simexec_run,
                                .exec_ctx = sim,
                                .open_slot = open_second_fails,
                                .close_slot = close_counted};
    sx_error_t err;
    SX_CHECK(sx_agent_new(&config, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "worker w4: slot 1: no Kafka client") == 0);
    SX_CHECK(s_opened == 1 && s_closed == 1);
    config.slots = SX_PROTO_SLOTS_MAX + 1;
    SX_CHECK(sx_agent_new(&config, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "--slots 65: at most 64 tasks run at once on one worker") ==
             0);
    sx_simexec_destroy(&sim);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_spool_test(verbose);
    sx_resultcache_test(verbose);
    sx_simexec_test(verbose);
    sx_log_level_t saved = sx_log_level();
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    char *bench = sx_testbench_make(2, NULL);
    /* An ipc endpoint in the test's own folder: unlike a TCP port, nobody
     * else can take it while the coordinator is away, so tests running side
     * by side never talk to each other. */
    char *endpoint = zsys_sprintf("ipc://%s/coordinator.sock", bench);
    zsock_t *router = zsock_new_router(endpoint);

    sx_error_t err;
    sx_agent_config_t plain = {.endpoint = "tcp://192.0.2.1:5555", .work_dir = bench};
    plain.exec = sx_simexec_run;
    SX_CHECK(sx_agent_new(&plain, &err) == NULL && strstr(err.msg, "--insecure"));

    char work[PATH_MAX];
    snprintf(work, sizeof work, "%s/work", bench);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=5", NULL);
    sx_agent_config_t config = {.endpoint = endpoint,
                                .name = "w1",
                                .runtime = "agent test runtime",
                                .capacity = 1,
                                .work_dir = work,
                                .exec = exec_losing_csv,
                                .exec_ctx = sim,
                                .heartbeat_ms = BEAT_MS,
                                .dead_after_ms = DEAD_MS,
                                .reconnect_min_ms = 50,
                                .reconnect_max_ms = 200,
                                .files_wait_ms = 1000};
    run_t run = {.agent = sx_agent_new(&config, NULL), .rc = -1};
    SX_CHECK(run.agent);
    zactor_t *actor = zactor_new(agent_actor, &run);

    zframe_t *who = NULL;
    sx_msg_t *hello = expect(router, SX_MSG_HELLO, &who, WAIT_MS);
    SX_CHECK(hello && strcmp(hello->worker, "w1") == 0 && hello->capacity == 1);
    SX_CHECK(strcmp(hello->runtime, "agent test runtime") == 0);
    sx_msg_destroy(&hello);
    /* A frame that is no message: rejected, the agent goes on. */
    zframe_send(&who, router, ZFRAME_MORE | ZFRAME_REUSE);
    zstr_send(router, "junk");
    sx_msg_t *assign = make_assign(bench, "t001", 1);
    SX_CHECK(sx_msg_send(assign, router, who, NULL) == 0);
    int requests = 0;
    sx_msg_t *result = serve_until_result(router, bench, assign, &who, &requests);
    SX_CHECK(result && result->result.status == SX_STATUS_MATCH && requests == 2);
    SX_CHECK(result->size == 4 && memcmp(result->data, "x\n1\n", 4) == 0);
    sx_msg_destroy(&result);
    SX_CHECK(spool_entries(work) == 1);

    /* The coordinator vanishes without acknowledging, then comes back. The
     * agent goes by silence alone (it cannot see a ROUTER go): once it has
     * heard nothing for DEAD_MS it connects again with a HELLO and every
     * spooled result, whether the coordinator came back at once or later.
     * The test waits for that HELLO, not for a time. */
    zsock_destroy(&router);
    router = zsock_new_router(endpoint);
    SX_CHECK(router);
    hello = expect(router, SX_MSG_HELLO, &who, WAIT_MS);
    SX_CHECK(hello);
    sx_msg_destroy(&hello);
    result = expect(router, SX_MSG_RESULT, &who, WAIT_MS);
    SX_CHECK(result && strcmp(result->result.task_id, "t001") == 0);
    sx_msg_t *ack = sx_msg_new(SX_MSG_ACK);
    ack->method = sx_strdup("m1");
    ack->result.task_id = sx_strdup("t001");
    ack->result.attempts = 1;
    ack->token = 100;
    sx_msg_send(ack, router, who, NULL);
    sx_msg_destroy(&ack);
    sx_msg_destroy(&result);

    /* The same files again: served from the cache, never requested twice. */
    sx_msg_destroy(&assign);
    assign = make_assign(bench, "t001", 2);
    sx_msg_send(assign, router, who, NULL);
    requests = 0;
    result = serve_until_result(router, bench, assign, &who, &requests);
    SX_CHECK(result && result->result.attempts == 2 && result->token == 200 &&
             requests == 0);
    sx_msg_destroy(&result);
    SX_CHECK(spool_entries(work) == 1); /* the first ACK emptied the old entry */

    /* A match whose final CSV cannot be read is no match: infra_error,
     * retried elsewhere, with the reason and no CSV. */
    sx_msg_destroy(&assign);
    assign = make_assign(bench, "t001", 3);
    sx_msg_send(assign, router, who, NULL);
    result = serve_until_result(router, bench, assign, &who, &requests);
    SX_CHECK(result && result->result.status == SX_STATUS_INFRA_ERROR);
    SX_CHECK(result->result.score == 0 && result->result.attempts == 3);
    SX_CHECK(result->size == 0 && result->token == 300 && requests == 0);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof want,
             "final CSV: %s/csv/m1.t001.3.csv: cannot open: No such file or directory",
             work);
    SX_CHECK(strcmp(result->result.detail, want) == 0);
    sx_msg_destroy(&result);

    /* The cache cannot take a file (as on a full disk): the task is answered
     * with infra_error at once instead of waiting for files forever. */
    char cache[PATH_MAX + 16];
    snprintf(cache, sizeof cache, "%s/cache", work);
    char cmd[2 * PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", cache, cache);
    SX_CHECK(system(cmd) == 0);
    sx_msg_destroy(&assign);
    assign = make_assign(bench, "t002", 1);
    sx_msg_send(assign, router, who, NULL);
    requests = 0;
    result = serve_until_result(router, bench, assign, &who, &requests);
    SX_CHECK(result && result->result.status == SX_STATUS_INFRA_ERROR && requests > 0);
    SX_CHECK(strstr(result->result.detail, "cannot get the task's files"));
    SX_CHECK(result->token == 100);
    sx_msg_destroy(&result);

    /* Files that never come (the coordinator took the units back and refuses
     * them) do not block the agent: after files_wait_ms, infra_error. */
    sx_msg_destroy(&assign);
    assign = make_assign(bench, "t002", 2);
    sx_msg_add_file(assign, "tasks/t002/never.csv",
                    "0123456789abcdef0123456789abcdef01234567", 5);
    sx_msg_send(assign, router, who, NULL);
    result = expect(router, SX_MSG_RESULT, &who, WAIT_MS);
    SX_CHECK(result && result->result.status == SX_STATUS_INFRA_ERROR);
    SX_CHECK(strstr(result->result.detail, "no bench file arrived for 1000 ms"));
    sx_msg_destroy(&result);

    /* A worker's message sent to the worker and an empty shard change
     * nothing (nothing more is executed, see the count at the end); a
     * goodbye that is not final makes it connect again. */
    sx_msg_t *stray = sx_msg_hello("w9", 1, 1, "test runtime");
    SX_CHECK(sx_msg_send(stray, router, who, NULL) == 0);
    sx_msg_destroy(&stray);
    sx_msg_t *empty = sx_msg_new(SX_MSG_ASSIGN);
    empty->shard_id = 9;
    SX_CHECK(sx_msg_send(empty, router, who, NULL) == 0);
    sx_msg_destroy(&empty);
    sx_msg_t *again = sx_msg_new(SX_MSG_GOODBYE);
    again->reason = sx_strdup("reconnect");
    again->final = false;
    SX_CHECK(sx_msg_send(again, router, who, NULL) == 0);
    sx_msg_destroy(&again);
    hello = expect(router, SX_MSG_HELLO, &who, WAIT_MS);
    SX_CHECK(hello && strcmp(hello->worker, "w1") == 0);
    sx_msg_destroy(&hello);

    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = sx_strdup("run complete");
    bye->final = true;
    sx_msg_send(bye, router, who, NULL);
    sx_msg_destroy(&bye);
    zpoller_t *poller = zpoller_new(actor, NULL);
    SX_CHECK(zpoller_wait(poller, 3000) == actor);
    zpoller_destroy(&poller);
    char *done = zstr_recv(actor);
    zstr_free(&done);
    SX_CHECK(run.rc == 0 && sx_agent_executed(run.agent) == 5);
    zactor_destroy(&actor);
    sx_agent_destroy(&run.agent);
    sx_simexec_destroy(&sim);
    sx_msg_destroy(&assign);
    zframe_destroy(&who);
    zstr_free(&endpoint);
    zsock_destroy(&router);
    test_recall_releases_unstarted(bench);
    test_slots_run_tasks_at_once(bench);
    test_slot_waits_only_for_its_own_task(bench);
    test_slot_that_cannot_open(bench);
    test_backoff_doubles(bench);
    test_backoff_starts_over_once_answered(bench);
    test_stop_during_backoff(bench);
    test_backoff_without_stop(bench);
    test_refusals(bench);
    test_files_not_placed(bench);
    test_big_file(bench);
    test_idle_beats(bench);
    test_results_count_as_beats(bench);
    test_goodbye_outlives_socket(bench);
    sx_testbench_remove(&bench);
    sx_log_set_level(saved);
    printf("test_agent: OK\n");
    return 0;
}
