/* coordinator.c: the workers' half of bench/coordinator (read that script's
 * top comment first). Built by CMake as build/coordinator_workers, never run
 * by ctest.
 *   coordinator_workers ENDPOINT WORKERS SLOTS CAPACITY WORK_DIR
 * runs WORKERS agents (worker/agent.h) in this one process, each on its own
 * thread with SLOTS slots and CAPACITY shards, named w0, w1, ..., all on one
 * simulated executor with delay_ms=0 (worker/simexec.h), against the
 * coordinator at ENDPOINT, until its final goodbye. One process rather than
 * WORKERS of them, so hundreds of workers fit on a small machine and the
 * coordinator's process is measured alone. It prints one line:
 *   busy_ms=B executed=N workers_done=D
 * B: from its start until every worker had started a task (-1: some never
 * did); N: the tasks the executor ran; D: the workers that ended because
 * the coordinator said the run was over. Exits 0 when every one did. */
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/mem.h"
#include "worker/agent.h"
#include "worker/simexec.h"

#include <czmq.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* How long the run may take before the workers are stopped. */
#define RUN_DEADLINE_MS (30 * 60 * 1000)

typedef struct {
    sx_agent_config_t agent;
    char name[32], work_dir[PATH_MAX];
    sx_simexec_t *sim;
    atomic_int *executed; /* every worker's tasks, counted together */
    atomic_llong busy_at; /* when its first task started; 0 = not yet */
    int rc;
} worker_t;

/* The agent's executor: the simulated one, with the first start noted. */
static void exec_noting_start(void *ctx, const sx_exec_request_t *request,
                              sx_result_t *result, sx_timings_t *timings)
{
    worker_t *w = ctx;
    long long none = 0;
    atomic_compare_exchange_strong(&w->busy_at, &none, (long long)zclock_mono());
    atomic_fetch_add(w->executed, 1);
    sx_simexec_run(w->sim, request, result, timings);
}

static void worker_actor(zsock_t *pipe, void *arg)
{
    worker_t *w = arg;
    zsock_signal(pipe, 0);
    sx_error_t err;
    sx_error_clear(&err);
    sx_agent_t *agent = sx_agent_new(&w->agent, &err);
    w->rc = agent ? sx_agent_run(agent, pipe, &err) : -1;
    if (w->rc < 0)
        fprintf(stderr, "coordinator_workers: %s: %s\n", w->name, err.msg);
    sx_agent_destroy(&agent);
    zstr_send(pipe, "done");
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: coordinator_workers ENDPOINT WORKERS SLOTS CAPACITY "
                        "WORK_DIR\n");
        return 2;
    }
    int count = atoi(argv[2]), slots = atoi(argv[3]), capacity = atoi(argv[4]);
    if (count < 1 || slots < 1 || capacity < 1) {
        fprintf(stderr,
                "coordinator_workers: WORKERS, SLOTS and CAPACITY must be >= 1\n");
        return 2;
    }
    /* Every worker has its socket and its slots' pipes: more than CZMQ's
     * default of 1024 sockets. 0 is the system's limit. */
    zsys_set_max_sockets(0);
    zsys_init();
    zsys_handler_set(NULL);
    sx_log_set_level(SX_LOG_WARN); /* no line per task */
    sx_error_t err;
    sx_simexec_t *sim = sx_simexec_new("delay_ms=0", &err);
    if (!sim) {
        fprintf(stderr, "coordinator_workers: %s\n", err.msg);
        return 2;
    }
    worker_t *workers = sx_alloc((size_t)count, sizeof *workers);
    zactor_t **actors = sx_alloc((size_t)count, sizeof *actors);
    atomic_int executed = 0;
    int64_t start = zclock_mono();
    for (int i = 0; i < count; i++) {
        worker_t *w = &workers[i];
        snprintf(w->name, sizeof w->name, "w%d", i);
        snprintf(w->work_dir, sizeof w->work_dir, "%s/w%d", argv[5], i);
        w->sim = sim;
        w->executed = &executed;
        w->agent = (sx_agent_config_t){.endpoint = argv[1],
                                       .name = w->name,
                                       .runtime = "simulated",
                                       .capacity = capacity,
                                       .slots = slots,
                                       .work_dir = w->work_dir,
                                       .exec = exec_noting_start,
                                       .exec_ctx = w};
        actors[i] = zactor_new(worker_actor, w);
    }
    zpoller_t *poller = zpoller_new(NULL);
    for (int i = 0; i < count; i++)
        zpoller_add(poller, actors[i]);
    int done = 0, finished = 0;
    int64_t busy_ms = -1;
    while (done < count && zclock_mono() - start < RUN_DEADLINE_MS) {
        zactor_t *which = zpoller_wait(poller, 10);
        if (which) {
            char *msg = zstr_recv(which);
            zstr_free(&msg);
            zpoller_remove(poller, which);
            done++;
        } else if (zpoller_terminated(poller))
            break;
        if (busy_ms < 0) {
            int64_t last = 0;
            for (int i = 0; i < count && last >= 0; i++) {
                int64_t at = atomic_load(&workers[i].busy_at);
                last = at == 0 ? -1 : at > last ? at : last;
            }
            if (last > 0)
                busy_ms = last - start;
        }
    }
    zpoller_destroy(&poller);
    for (int i = 0; i < count; i++) {
        zactor_destroy(&actors[i]);
        finished += workers[i].rc == 0;
    }
    printf("busy_ms=%lld executed=%d workers_done=%d\n", (long long)busy_ms,
           atomic_load(&executed), finished);
    free(actors);
    free(workers);
    sx_simexec_destroy(&sim);
    return finished == count ? 0 : 1;
}
