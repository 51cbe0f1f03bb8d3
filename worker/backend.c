/* backend.c: opens and closes the executor behind a worker's agent (see
 * backend.h): the simulated one as it is, the real one wrapped so that its
 * pair is watched before each task and a cached CSV is scored with the
 * run's profile. */
#include "worker/backend.h"

#include "common/log.h"
#include "common/result.h"
#include "common/selftest.h"

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

/* Runs one task on the worker's pair. The pair is watched first: a component
 * that died since the last task is restarted (and the task waits for it),
 * and a pair that cannot be brought back makes the task infra_error, which
 * the coordinator retries elsewhere. */
static void real_exec(void *ctx, const sx_exec_request_t *request, sx_result_t *result,
                      sx_timings_t *timings)
{
    sx_backend_t *backend = ctx;
    sx_error_t err;
    int restarted = sx_runtime_watch(backend->pair, &err);
    if (restarted < 0) {
        sx_result_init(result, request->task_id, SX_STATUS_INFRA_ERROR, err.msg, NULL);
        *timings = (sx_timings_t){0};
        return;
    }
    if (restarted > 0)
        sx_warn("task %s: restarted %d dead component(s) of the pair first",
                request->task_id, restarted);
    sx_executor_run(backend->real, request, result, timings);
}

static void real_finish(void *ctx)
{
    sx_executor_finish_task(((sx_backend_t *)ctx)->real);
}

int sx_backend_open(sx_backend_t *backend, const sx_backend_config_t *config,
                    sx_agent_config_t *agent, sx_error_t *err)
{
    *backend = (sx_backend_t){0};
    backend->profile = config->profile;
    if (config->simulate) {
        backend->sim = sx_simexec_new(config->simulate, err);
        agent->exec = sx_simexec_run;
        agent->exec_ctx = backend->sim;
        agent->runtime = "simulated (no Kafka, no Flink)";
        use_cache(agent, config, "simulated executor", sx_simexec_score);
        return backend->sim ? 0 : -1;
    }
    sx_runtime_config_t pair_config;
    sx_runtime_config_defaults(&pair_config, config->index);
    pair_config.kafka_bootstrap = config->bootstrap;
    pair_config.flink_gateway = config->gateway;
    pair_config.flink_rest = config->rest;
    sx_runtime_t *pair = sx_runtime_new(&pair_config, err);
    if (!pair)
        return -1;
    backend->pair = pair;
    sx_info("starting the Kafka + Flink pair %d", config->index);
    if (sx_runtime_start(pair, err) != 0) {
        sx_backend_close(backend);
        return -1;
    }
    sx_executor_config_t exec_config = {sx_runtime_bootstrap(pair),
                                        sx_runtime_gateway_url(pair),
                                        sx_runtime_rest_url(pair),
                                        config->run_id,
                                        config->profile,
                                        false,
                                        pair};
    backend->real = sx_executor_new(&exec_config, err);
    backend->replays = sx_replays_new(exec_config.bootstrap, config->run_id, false, err);
    if (!backend->real || !backend->replays) {
        sx_backend_close(backend);
        return -1;
    }
    sx_executor_set_replays(backend->real, backend->replays);
    size_t swept = 0;
    sx_error_t sweep_err;
    if (sx_executor_sweep(backend->real, &swept, &sweep_err) != 0)
        sx_warn("pair %d: %s", config->index, sweep_err.msg);
    else if (swept > 0)
        sx_info("pair %d: swept %zu topic(s) and job(s) an earlier run left",
                config->index, swept);
    agent->exec = real_exec;
    agent->finish = real_finish;
    agent->exec_ctx = backend;
    sx_runtime_describe(pair, backend->runtime, sizeof backend->runtime);
    agent->runtime = backend->runtime;
    sx_error_t why;
    if (sx_runtime_versions(pair, backend->versions, sizeof backend->versions, &why) == 0)
        use_cache(agent, config, backend->versions, real_score);
    else if (config->cache_dir)
        sx_info("pair %d: no result cache: %s", config->index, why.msg);
    return 0;
}

void sx_backend_close(sx_backend_t *backend)
{
    sx_simexec_destroy(&backend->sim);
    sx_executor_destroy(&backend->real);
    sx_replays_destroy(&backend->replays);
    sx_runtime_destroy(&backend->pair);
    *backend = (sx_backend_t){0};
}

/* ---- self-test -------------------------------------------------------- */

/* The simulated executor: the agent runs tasks through it, says so in
 * HELLO, and uses the result cache only when given one. A real pair is
 * opened by the cli_ and e2e_ tests. */
void sx_backend_test(bool verbose)
{
    (void)verbose;
    sx_backend_config_t config = {.simulate = "delay_ms=1", .run_id = "test"};
    sx_agent_config_t agent = {0};
    sx_backend_t backend;
    sx_error_t err;
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == 0);
    SX_CHECK(backend.sim && !backend.pair && !backend.real);
    SX_CHECK(agent.exec == sx_simexec_run && agent.exec_ctx == backend.sim);
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

    config.simulate = "no_such_key=1";
    SX_CHECK(sx_backend_open(&backend, &config, &agent, &err) == -1);
    SX_CHECK(backend.sim == NULL);
}
