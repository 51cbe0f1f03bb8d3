/* floor_jobs.c: bench/floor's job half: N trivial bounded jobs (datagen of
 * 10 rows into blackhole) submitted back to back through a pair's SQL
 * Gateway from S sessions at once, each session waiting for its job's end
 * before the next: what Flink itself needs for a job, the floor a streamex
 * task is measured against. The sessions are opened as the executor opens
 * them (sx_gateway_open_session: STREAMING, parallelism 1, no restarts) and
 * a job's end is polled every POLL_MS, tighter than the executor's polls, so
 * the floor is the engine's and not a poll interval's.
 * Prints one JSON line: jobs, sessions, finished, failed, wall_s, jobs_per_s.
 * usage: floor_jobs GATEWAY_URL REST_URL JOBS SESSIONS */
#include "common/clock.h"
#include "common/error.h"
#include "worker/clients/gateway.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define POLL_MS 5

typedef struct {
    const char *gateway_url, *rest_url;
    long jobs;
    atomic_long next, finished, failed;
} floor_t;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One job to its end: submitted, then polled until it is no longer running. */
static void one_job(floor_t *f, sx_gateway_t *gw)
{
    sx_error_t err;
    char job_id[SX_JOB_ID_SIZE] = "";
    if (sx_gateway_execute(gw, "INSERT INTO floor_sink SELECT x FROM floor_source",
                           job_id, &err) != SX_GATEWAY_OK) {
        fprintf(stderr, "floor_jobs: submit: %s\n", err.msg);
        atomic_fetch_add(&f->failed, 1);
        return;
    }
    sx_job_state_t state = SX_JOB_RUNNING;
    while (state == SX_JOB_RUNNING) {
        if (sx_gateway_job_state(gw, job_id, &state, &err) != 0) {
            fprintf(stderr, "floor_jobs: job %s: %s\n", job_id, err.msg);
            atomic_fetch_add(&f->failed, 1);
            return;
        }
        if (state == SX_JOB_RUNNING)
            sleep_ms(POLL_MS);
    }
    atomic_fetch_add(state == SX_JOB_FINISHED ? &f->finished : &f->failed, 1);
}

static void *session(void *arg)
{
    floor_t *f = arg;
    sx_error_t err;
    sx_gateway_t *gw = sx_gateway_new(f->gateway_url, f->rest_url, 60000, &err);
    if (!gw || sx_gateway_open_session(gw, "sx-floor", &err) != 0 ||
        sx_gateway_configure(gw,
                             "CREATE TEMPORARY TABLE floor_source (x INT) WITH "
                             "('connector'='datagen','number-of-rows'='10')",
                             &err) != SX_GATEWAY_OK ||
        sx_gateway_configure(gw,
                             "CREATE TEMPORARY TABLE floor_sink (x INT) WITH "
                             "('connector'='blackhole')",
                             &err) != SX_GATEWAY_OK) {
        fprintf(stderr, "floor_jobs: session: %s\n", err.msg);
        sx_gateway_destroy(&gw);
        return NULL;
    }
    while (atomic_fetch_add(&f->next, 1) < f->jobs)
        one_job(f, gw);
    sx_gateway_destroy(&gw);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: floor_jobs GATEWAY_URL REST_URL JOBS SESSIONS\n");
        return 2;
    }
    floor_t f = {.gateway_url = argv[1], .rest_url = argv[2], .jobs = atol(argv[3])};
    long sessions = atol(argv[4]);
    if (f.jobs < 1 || sessions < 1 || sessions > 64) {
        fprintf(stderr, "floor_jobs: JOBS >= 1 and 1 <= SESSIONS <= 64\n");
        return 2;
    }
    pthread_t threads[64];
    double started = sx_clock_seconds();
    for (long i = 0; i < sessions; i++)
        pthread_create(&threads[i], NULL, session, &f);
    for (long i = 0; i < sessions; i++)
        pthread_join(threads[i], NULL);
    double wall = sx_clock_seconds() - started;
    long finished = atomic_load(&f.finished), failed = atomic_load(&f.failed);
    printf("{\"jobs\": %ld, \"sessions\": %ld, \"finished\": %ld, \"failed\": %ld, "
           "\"wall_s\": %.3f, \"jobs_per_s\": %.3f}\n",
           f.jobs, sessions, finished, failed, wall, wall > 0 ? finished / wall : 0.0);
    return finished == f.jobs ? 0 : 1;
}
