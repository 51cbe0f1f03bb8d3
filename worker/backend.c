/* backend.c: opens and closes the executor behind a worker's agent (see
 * backend.h): the simulated one as it is (one for every slot), the real one
 * as an executor per slot on the one pair, each watching the pair before its
 * task, with the slots fitted to the pair's TaskManager slots, and a cached
 * CSV scored with the run's profile. */
#include "worker/backend.h"

#include "common/log.h"
#include "common/results/result.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "worker/clients/http.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scores a CSV the result cache served, as the executor's last step would. */
static void real_score(void *ctx, const sx_exec_request_t *request, sx_result_t *result)
{
    sx_backend_t *backend = ctx;
    char detail[SX_ERROR_MAX] = "";
    int strict = 0;
    sx_status_t status =
        sx_score_task(request->bench_dir, request->task_id, request->csv_path,
                      backend->profile, &strict, detail, sizeof detail);
    sx_result_init(result, request->task_id, status, detail, request->csv_path);
    result->strict = strict;
}

/* Points the agent at the result cache for an executor described by runtime. */
static void use_cache(sx_agent_config_t *agent, const sx_backend_config_t *config,
                      const char *runtime, sx_agent_score_fn *score)
{
    if (!config->cache_dir)
        return;
    agent->result_cache_dir = config->cache_dir;
    agent->result_cache_runtime = runtime;
    agent->score = score;
    sx_info("result cache: %s", config->cache_dir);
}

/* A slot of the real executor: the slot's own executor on the shared pair. */
typedef struct {
    sx_backend_t *backend;
    sx_executor_t *executor;
} real_slot_t;

/* Made on the slot's thread, which alone uses and destroys the executor. */
static void *real_open_slot(void *ctx, int slot, sx_error_t *err)
{
    sx_backend_t *backend = ctx;
    (void)slot; /* the agent names the slot in its error */
    sx_executor_t *executor = sx_executor_new(&backend->exec_config, err);
    if (!executor)
        return NULL;
    sx_executor_set_replays(executor, backend->replays);
    real_slot_t *self = sx_alloc(1, sizeof *self);
    *self = (real_slot_t){backend, executor};
    return self;
}

/* The slot's last task's cleanup, once its result is on its way. */
static void real_finish(void *slot_ctx)
{
    sx_executor_finish_task(((real_slot_t *)slot_ctx)->executor);
}

static void real_close_slot(void *slot_ctx)
{
    real_slot_t *self = slot_ctx;
    sx_executor_destroy(&self->executor);
    free(self);
}

/* What a Flink failure says when a resource of the TaskManager ran out that
 * every slot's job draws from: its heap (or metaspace), its network buffers,
 * its managed memory. */
static const char *const s_shared_exhausted[] = {"OutOfMemoryError",
                                                 "Insufficient number of network buffers",
                                                 "MemoryAllocationException"};

/* With several slots, a job that ran out of a TaskManager resource the
 * slots share may have lost it to another task's job: the failure is the
 * pair's load, not the query's, so it is infra_error (retried), never a
 * flink_error verdict. With one slot the query had the TaskManager to
 * itself, and the verdict stands. */
static void blame_shared_resources(int slots, sx_result_t *result)
{
    if (slots < 2 || result->status != SX_STATUS_FLINK_ERROR)
        return;
    for (size_t i = 0; i < sizeof s_shared_exhausted / sizeof *s_shared_exhausted; i++) {
        if (!strstr(result->detail, s_shared_exhausted[i]))
            continue;
        char *detail = sx_format("the TaskManager's memory, shared by %d slots, ran out "
                                 "(not the query's verdict; --slots 1 runs it alone): %s",
                                 slots, result->detail);
        free(result->detail);
        result->detail = detail;
        result->status = SX_STATUS_INFRA_ERROR;
        result->score = 0;
        return;
    }
}

/* Runs one task on the worker's pair. The pair is watched first: a component
 * that died since is restarted (and the task waits for it; the watch is one
 * slot's at a time, and a task another slot runs meanwhile sees its pair
 * change and ends infra_error), and a pair that cannot be brought back
 * makes the task infra_error, which the coordinator retries elsewhere. */
static void real_exec(void *slot_ctx, const sx_exec_request_t *request,
                      sx_result_t *result, sx_timings_t *timings)
{
    real_slot_t *slot = slot_ctx;
    sx_error_t err;
    int restarted = sx_pair_watch(slot->backend->pair, &err);
    if (restarted < 0) {
        sx_result_init(result, request->task_id, SX_STATUS_INFRA_ERROR, err.msg, NULL);
        *timings = (sx_timings_t){0};
        return;
    }
    if (restarted > 0)
        sx_warn("task %s: restarted %d dead component(s) of the pair first",
                request->task_id, restarted);
    sx_executor_run(slot->executor, request, result, timings);
    blame_shared_resources(slot->backend->slots, result);
}

/* The TaskManager slots Flink counts (REST /overview): slots-total and
 * slots-available. */
static int flink_slots(const char *rest_url, int *total, int *available, sx_error_t *err)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/overview", rest_url);
    sx_http_answer_t answer;
    if (sx_http_get(url, 10000, &answer, err) != 0)
        return -1;
    json_t *root = answer.status == 200 ? json_loads(answer.body, 0, NULL) : NULL;
    json_t *t = json_object_get(root, "slots-total");
    json_t *a = json_object_get(root, "slots-available");
    int rc = json_is_integer(t) && json_is_integer(a)
                 ? 0
                 : sx_error_set(err, "GET %s: HTTP %ld, no slot counts in the answer",
                                url, answer.status);
    *total = rc == 0 ? (int)json_integer_value(t) : 0;
    *available = rc == 0 ? (int)json_integer_value(a) : 0;
    json_decref(root);
    free(answer.body);
    return rc;
}

/* How long to wait for slots a job that just ended still holds: Flink frees
 * a finished job's slot a moment after the job reports FINISHED (the pair's
 * own warm-up job's too), and a worker that counted that slot as taken would
 * warn that other jobs hold one (docs/internals/measurements.md). */
#define SLOT_RELEASE_WAIT_MS 5000

int sx_backend_fit_slots(const char *rest_url, int wanted, int index, int wait_ms,
                         sx_error_t *err)
{
    int total = 0, available = 0, slots = 0;
    int64_t until = zclock_mono() + wait_ms;
    for (;;) {
        if (flink_slots(rest_url, &total, &available, err) != 0)
            return sx_error_prefix(err, "pair %d: TaskManager slots", index), -1;
        if (total < 1)
            return sx_error_set(err, "pair %d: Flink has no TaskManager slot", index);
        slots = total < wanted ? total : wanted;
        if (available >= slots || zclock_mono() >= until)
            break;
        zclock_sleep(200);
    }
    if (slots < wanted)
        sx_warn("pair %d: Flink has %d TaskManager slot(s): %d task(s) at once, not %d "
                "(one slot per task's job; more would wait for a slot inside their "
                "timeout)",
                index, total, total, wanted);
    if (available < slots)
        sx_warn("pair %d: %d of Flink's %d TaskManager slots are taken by other jobs: "
                "a task whose job waits for a slot past its timeout ends infra_error",
                index, total - available, total);
    return slots;
}

/* Caps the slots at the TaskManager slots the pair's Flink has: a job that
 * finds none free waits for one inside its task's timeout, where it would
 * end infra_error ("no slot") or, worse, start late and run out its
 * timeout. */
static int fit_slots(sx_backend_t *backend, int index, sx_error_t *err)
{
    int slots = sx_backend_fit_slots(sx_pair_rest_url(backend->pair), backend->slots,
                                     index, SLOT_RELEASE_WAIT_MS, err);
    if (slots < 0)
        return -1;
    backend->slots = slots;
    return 0;
}

/* Removes what an earlier run left on the pair, once, with an executor of
 * its own made and dropped here, before any slot starts. */
static void sweep_pair(sx_backend_t *backend, int index)
{
    sx_error_t err;
    sx_executor_t *sweeper = sx_executor_new(&backend->exec_config, &err);
    size_t swept = 0;
    if (!sweeper ||
        sx_executor_sweep(sweeper, sx_pair_owned(backend->pair), &swept, &err) != 0)
        sx_warn("pair %d: %s", index, err.msg);
    else if (swept > 0)
        sx_info("pair %d: swept %zu topic(s) and job(s) an earlier run left", index,
                swept);
    sx_executor_destroy(&sweeper);
}

/* Starts (or checks) the pair and fits the slots to it. */
static int open_pair(sx_backend_t *backend, const sx_backend_config_t *config,
                     sx_error_t *err)
{
    sx_pair_config_t pair_config;
    sx_pair_config_defaults(&pair_config, config->index);
    if (pair_config.slots < backend->slots)
        pair_config.slots = backend->slots;
    pair_config.flink = config->flink;
    pair_config.kafka_bootstrap = config->bootstrap;
    pair_config.flink_gateway = config->gateway;
    pair_config.flink_rest = config->rest;
    backend->pair = sx_pair_new(&pair_config, err);
    if (!backend->pair)
        return -1;
    sx_info("starting the Kafka + Flink pair %d", config->index);
    if (sx_pair_start(backend->pair, err) != 0)
        return -1;
    return fit_slots(backend, config->index, err);
}

int sx_backend_open(sx_backend_t *backend, const sx_backend_config_t *config,
                    sx_agent_config_t *agent, sx_error_t *err)
{
    *backend = (sx_backend_t){0};
    backend->profile = config->profile;
    backend->slots = config->slots > 0 ? config->slots : 1;
    agent->slots = backend->slots;
    if (config->simulate) {
        backend->sim = sx_simexec_new(config->simulate, err);
        if (!backend->sim)
            return -1;
        const char *engine = sx_simexec_engine(backend->sim);
        bool own = strcmp(engine, "simulated") != 0;
        agent->exec = sx_simexec_run;
        agent->exec_ctx = backend->sim;
        snprintf(backend->runtime, sizeof backend->runtime, "%s (no Kafka, no Flink)",
                 engine);
        agent->runtime = backend->runtime;
        /* Each simulated engine keys its own entries, like a real one. */
        snprintf(backend->versions, sizeof backend->versions, "simulated executor%s%s",
                 own ? " " : "", own ? engine : "");
        use_cache(agent, config, backend->versions, sx_simexec_score);
        return 0;
    }
    if (open_pair(backend, config, err) != 0) {
        sx_backend_close(backend);
        return -1;
    }
    sx_pair_t *pair = backend->pair;
    snprintf(backend->run_id, sizeof backend->run_id, "%s", config->run_id);
    backend->exec_config = (sx_executor_config_t){sx_pair_bootstrap(pair),
                                                  sx_pair_gateway_url(pair),
                                                  sx_pair_rest_url(pair),
                                                  backend->run_id,
                                                  config->profile,
                                                  false,
                                                  pair};
    sweep_pair(backend, config->index);
    backend->replays =
        sx_replays_new(backend->exec_config.bootstrap, backend->run_id, false, err);
    if (!backend->replays) {
        sx_backend_close(backend);
        return -1;
    }
    agent->slots = backend->slots;
    agent->exec = real_exec;
    agent->finish = real_finish;
    agent->exec_ctx = backend;
    agent->open_slot = real_open_slot;
    agent->close_slot = real_close_slot;
    sx_pair_describe(pair, backend->runtime, sizeof backend->runtime);
    agent->runtime = backend->runtime;
    sx_error_t why;
    if (sx_pair_versions(pair, backend->versions, sizeof backend->versions, &why) == 0)
        use_cache(agent, config, backend->versions, real_score);
    else if (config->cache_dir)
        sx_info("pair %d: no result cache: %s", config->index, why.msg);
    return 0;
}

void sx_backend_close(sx_backend_t *backend)
{
    sx_simexec_destroy(&backend->sim);
    sx_replays_destroy(&backend->replays);
    sx_pair_destroy(&backend->pair);
    *backend = (sx_backend_t){0};
}

/* ---- self-test -------------------------------------------------------- */

/* The simulated executor: the agent runs tasks through it, says so in
 * HELLO, and uses the result cache only when given one. A real pair is
 * opened by the cli_ and e2e_ tests. */
/* A flink_error that says a shared TaskManager resource ran out is
 * infra_error with several slots, and stays the verdict with one; other
 * failures stay as they are. */
static void test_shared_resources_blamed(void)
{
    static const char *const causes[] = {
        "java.lang.OutOfMemoryError: Java heap space",
        "java.io.IOException: Insufficient number of network buffers: required 2",
        "org.apache.flink.runtime.memory.MemoryAllocationException: Could not allocate",
        "java.lang.ArithmeticException: / by zero"};
    for (size_t i = 0; i < 4; i++) {
        for (int slots = 1; slots <= 2; slots++) {
            sx_result_t result;
            sx_result_init(&result, "t1", SX_STATUS_FLINK_ERROR, causes[i], NULL);
            blame_shared_resources(slots, &result);
            bool blamed = slots == 2 && i < 3;
            SX_CHECK(result.status ==
                     (blamed ? SX_STATUS_INFRA_ERROR : SX_STATUS_FLINK_ERROR));
            char *want = blamed
                             ? sx_format("the TaskManager's memory, shared by 2 slots, "
                                         "ran out (not the query's verdict; --slots 1 "
                                         "runs it alone): %s",
                                         causes[i])
                             : sx_strdup(causes[i]);
            SX_CHECK(strcmp(result.detail, want) == 0);
            free(want);
            sx_result_clear(&result);
        }
    }
    sx_result_t timeout;
    sx_result_init(&timeout, "t1", SX_STATUS_TIMEOUT, causes[0], NULL);
    blame_shared_resources(4, &timeout);
    SX_CHECK(timeout.status == SX_STATUS_TIMEOUT);
    sx_result_clear(&timeout);
}

void sx_backend_test(bool verbose)
{
    test_shared_resources_blamed();
    (void)verbose;
    sx_backend_config_t config = {.simulate = "delay_ms=1", .run_id = "test"};
    sx_agent_config_t agent = {0};
    sx_backend_t backend;
    sx_error_t err;
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == 0);
    SX_CHECK(backend.sim && !backend.pair);
    SX_CHECK(agent.exec == sx_simexec_run && agent.exec_ctx == backend.sim);
    SX_CHECK(agent.slots == 1 && agent.open_slot == NULL);
    SX_CHECK(strcmp(agent.runtime, "simulated (no Kafka, no Flink)") == 0);
    SX_CHECK(agent.result_cache_dir == NULL && agent.score == NULL);
    sx_backend_close(&backend);
    SX_CHECK(backend.sim == NULL);
    sx_backend_close(&backend);

    config.cache_dir = "/nonexistent/cache";
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == 0);
    SX_CHECK(strcmp(agent.result_cache_dir, "/nonexistent/cache") == 0);
    SX_CHECK(strcmp(agent.result_cache_runtime, "simulated executor") == 0);
    SX_CHECK(agent.score == sx_simexec_score);
    sx_backend_close(&backend);

    /* A simulated engine of its own says so first in HELLO, and keys its
     * cache entries apart. */
    config.simulate = "delay_ms=1,engine=b";
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == 0);
    SX_CHECK(strcmp(agent.runtime, "simulated-b (no Kafka, no Flink)") == 0);
    SX_CHECK(strcmp(agent.result_cache_runtime, "simulated executor simulated-b") == 0);
    sx_backend_close(&backend);
    config.simulate = "delay_ms=1,engine=two words";
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == -1);
    SX_CHECK(strstr(err.msg, "unknown or bad item 'engine=two words'") != NULL);
    config.simulate = "delay_ms=1";

    config.slots = 3;
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == 0);
    SX_CHECK(agent.slots == 3 && backend.slots == 3);
    sx_backend_close(&backend);

    config.simulate = "no_such_key=1";
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == -1);
    SX_CHECK(backend.sim == NULL);
}
