/* cmd_run.c: `streamex run`, the whole pipeline on this machine: a
 * coordinator on a loopback port and N workers in this process, each with
 * its own Kafka + Flink pair (pair index I) or the simulated executor. One
 * command; Ctrl-C stops everything cleanly and `--resume` continues. */
#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/runopts.h"
#include "common/install.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/signals.h"
#include "proto/proto.h"
#include "worker/pair/engine.h"
#include "worker/pair/pair.h"
#include "worker/backend.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char s_usage[] =
    "usage: streamex run [--bench BENCH] [--method NAME=PREDS ...] [--output OUT]\n"
    "                    [--workers N] [options]\n"
    "\n"
    "Runs every method's predictions through N local workers, each with its own\n"
    "Kafka + Flink pair, and writes OUT (default: streamex-output). Without\n"
    "--bench and --method it runs the bundled sample bench and its predictions.\n"
    "Progress: a live line on a terminal, JSON lines otherwise. Ctrl-C stops;\n"
    "--resume continues.\n"
    "\n" SX_RUN_OPTIONS_HELP SX_CACHE_OPTIONS_HELP
    "  --workers N            local workers (default 2)\n"
    "  --capacity N           shards each worker holds at once (default "
    "2)\n" SX_SLOTS_OPTION_HELP "  --first-index I        worker W uses Kafka + Flink "
    "pair I+W (default 0)\n" SX_FLINK_OPTION_HELP "\n" SX_RUN_EXIT_HELP;

enum {
    OPT_WORKERS = SX_OPT_NEXT,
    OPT_CAPACITY,
    OPT_FIRST_INDEX,
    OPT_SLOTS,
    OPT_FLINK,
    OPT_HELP
};

/* The bundled sample bench: in the source tree, or in an install's share folder. */
static const char *sample_bench(void)
{
    static char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/examples/sample-bench", sx_install_share_dir());
    return path;
}

typedef struct {
    int index;
    char name[32];
    char work_dir[PATH_MAX];
    char endpoint[256];
    char run_id[64];
    const sx_runopts_t *opts;
    const char *flink;
    int capacity, slots;
    zsock_t *failures; /* PUSH: "failed" when the worker could not start */
} worker_job_t;

static void worker_actor(zsock_t *pipe, void *arg)
{
    worker_job_t *job = arg;
    zsock_signal(pipe, 0);
    char cache_dir[PATH_MAX];
    sx_agent_config_t agent = {.endpoint = job->endpoint,
                               .name = job->name,
                               .capacity = job->capacity,
                               .work_dir = job->work_dir,
                               .heartbeat_ms = job->opts->heartbeat_ms,
                               .dead_after_ms = job->opts->dead_after_ms};
    sx_backend_config_t backend_config = {
        .simulate = job->opts->simulate,
        .index = job->index,
        .flink = job->flink,
        .profile = job->opts->profile,
        .run_id = job->run_id,
        .cache_dir = sx_runopts_cache_dir(job->opts, cache_dir, sizeof cache_dir),
        .slots = job->slots};
    sx_backend_t backend;
    sx_error_t err;
    sx_error_clear(&err);
    int rc = -1;
    if (sx_backend_open(&backend, &backend_config, &agent, &err) == 0) {
        sx_agent_t *worker = sx_agent_new(&agent, &err);
        if (worker)
            rc = sx_agent_run(worker, pipe, &err);
        sx_agent_destroy(&worker);
        sx_backend_close(&backend);
    }
    if (rc < 0) {
        sx_err("worker %s: %s", job->name, err.msg);
        zstr_send(job->failures, "failed");
    }
}

typedef struct {
    sx_coordinator_t *coordinator;
    int rc;
    sx_error_t err;
} coordinator_job_t;

static void coordinator_actor(zsock_t *pipe, void *arg)
{
    coordinator_job_t *job = arg;
    zsock_signal(pipe, 0);
    job->rc = sx_coordinator_run(job->coordinator, pipe, &job->err);
    zstr_send(pipe, "done");
}

/* Waits for the coordinator to finish, for every worker to have failed, or
 * for a stop signal (the coordinator and workers see it too and wind down;
 * destroying their actors waits for them). */
static void wait_for_run(zactor_t *coordinator, zsock_t *failures, int workers)
{
    zpoller_t *poller = zpoller_new(coordinator, failures, NULL);
    int failed = 0;
    while (!sx_signals_caught()) {
        void *which = zpoller_wait(poller, 100);
        if (which == coordinator) {
            char *done = zstr_recv(coordinator);
            zstr_free(&done);
            break;
        }
        if (which == failures) {
            char *msg = zstr_recv(failures);
            zstr_free(&msg);
            if (++failed == workers) {
                sx_err("every worker failed to start: stopping");
                break;
            }
        }
    }
    zpoller_destroy(&poller);
}

static int apply_own(int c, char **argv, sx_local_run_t *args, sx_error_t *err)
{
    switch (c) {
    case OPT_WORKERS:
        return sx_option_int("workers", optarg, 1, SX_RUN_WORKERS_MAX, &args->workers,
                             err);
    case OPT_CAPACITY:
        return sx_option_int("capacity", optarg, 1, SX_RUN_CAPACITY_MAX, &args->capacity,
                             err);
    case OPT_FIRST_INDEX:
        return sx_option_int("first-index", optarg, 0, SX_PAIR_MAX_INDEX,
                             &args->first_index, err);
    case OPT_SLOTS:
        return sx_option_int("slots", optarg, 1, SX_PROTO_SLOTS_MAX, &args->slots, err);
    case OPT_FLINK:
        args->flink = optarg;
        return sx_engine_selector_check(optarg, err);
    case OPT_HELP:
        return 1;
    default:
        return sx_option_unknown(c, argv, err);
    }
}

static int parse(int argc, char **argv, sx_runopts_t *opts, sx_local_run_t *args,
                 sx_error_t *err)
{
    static const struct option longs[] = {
        SX_RUN_LONGOPTS,
        SX_CACHE_LONGOPTS,
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"first-index", required_argument, NULL, OPT_FIRST_INDEX},
        {"slots", required_argument, NULL, OPT_SLOTS},
        {"flink", required_argument, NULL, OPT_FLINK},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        int shared = sx_runopts_apply(opts, c, optarg, err);
        int rc = shared < 0 ? -1 : shared ? 0 : apply_own(c, argv, args, err);
        if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return sx_error_set(err, "unexpected argument '%s'", argv[optind]);
    if (args->first_index + args->workers - 1 > SX_PAIR_MAX_INDEX)
        return sx_error_set(err, "--first-index + --workers goes past pair index %d",
                            SX_PAIR_MAX_INDEX);
    if (args->flink && opts->simulate)
        return sx_error_set(err, "--flink picks the engine of the workers' pairs; "
                                 "--simulate starts none");
    if (!opts->bench && !opts->method_count) {
        char method[PATH_MAX + 64];
        opts->bench = sample_bench();
        snprintf(method, sizeof method, "sample=%s/predictions.jsonl", opts->bench);
        if (sx_method_args_add(&opts->methods, &opts->method_count, method, err) != 0)
            return -1;
    }
    if (!opts->output)
        opts->output = "streamex-output";
    return 0;
}

int sx_run_local(sx_runopts_t *opts, const sx_local_run_t *args, sx_error_t *err)
{
    sx_coordinator_config_t config;
    if (sx_runopts_config(opts, &config, err) != 0)
        return 2;
    /* An engine that is not installed is said once, here, not by each
     * worker as its pair fails to start. */
    sx_engine_t engine;
    const char *selector = sx_engine_selector(args->flink);
    if (selector && !opts->simulate && sx_engine_resolve(NULL, selector, &engine, err))
        return 2;
    config.endpoint = "tcp://127.0.0.1:*";
    config.command = args->command ? args->command : "run";
    config.progress = args->quiet ? NULL : sx_progress_print;
    config.summary_out = args->quiet ? NULL : stdout;
    if (!config.progress_ms)
        config.progress_ms = isatty(STDOUT_FILENO) ? 500 : 5000;
    coordinator_job_t cjob = {sx_coordinator_new(&config, err), -1, {{0}}};
    if (!cjob.coordinator)
        return 2;
    zsock_t *failures = zsock_new_pull("inproc://streamex-run-failures");
    int workers = (int)args->workers;
    worker_job_t *jobs = sx_alloc((size_t)workers, sizeof *jobs);
    zactor_t **actors = sx_alloc((size_t)workers, sizeof *actors);
    for (int i = 0; i < workers; i++) {
        worker_job_t *job = &jobs[i];
        job->index = (int)args->first_index + i;
        snprintf(job->name, sizeof job->name, "w%d", i);
        snprintf(job->work_dir, sizeof job->work_dir, "%s/.workers/w%d", opts->output, i);
        snprintf(job->endpoint, sizeof job->endpoint, "%s",
                 sx_coordinator_endpoint(cjob.coordinator));
        snprintf(job->run_id, sizeof job->run_id, "run%ld-w%d", (long)time(NULL), i);
        job->opts = opts;
        job->flink = args->flink;
        job->capacity = (int)args->capacity;
        job->slots = (int)args->slots;
        job->failures = zsock_new_push(">inproc://streamex-run-failures");
        actors[i] = zactor_new(worker_actor, job);
    }
    zactor_t *coordinator = zactor_new(coordinator_actor, &cjob);
    wait_for_run(coordinator, failures, workers);
    zactor_destroy(&coordinator); /* stops it if the workers failed */
    sx_progress_end();
    for (int i = 0; i < workers; i++) {
        zactor_destroy(&actors[i]);
        zsock_destroy(&jobs[i].failures);
    }
    free(actors);
    free(jobs);
    zsock_destroy(&failures);
    size_t settled = sx_coordinator_settled(cjob.coordinator);
    size_t infra_errors = sx_coordinator_infra_errors(cjob.coordinator);
    sx_coordinator_destroy(&cjob.coordinator);
    if (cjob.rc == 0 && !args->quiet)
        sx_run_table_print(opts->output);
    if (sx_error_is_set(&cjob.err))
        *err = cjob.err;
    return sx_run_exit_code(cjob.rc, settled, infra_errors);
}

int sx_cmd_run(int argc, char **argv)
{
    sx_log_set_component("run");
    sx_runopts_t opts = {.bootstrap = SX_BOOTSTRAP_DEFAULT};
    sx_local_run_t args = {.workers = 2, .capacity = 2, .slots = SX_RUN_SLOTS_DEFAULT};
    sx_error_t err;
    sx_error_clear(&err);
    int parsed = parse(argc, argv, &opts, &args, &err);
    int code = 0;
    if (parsed == 1)
        fputs(s_usage, stdout);
    else if (parsed != 0) {
        code = sx_usage_error("run", s_usage, "%s", err.msg);
    } else {
        code = sx_run_local(&opts, &args, &err);
        if (sx_error_is_set(&err))
            fprintf(stderr, "streamex run: %s\n", err.msg);
        else if (code == 1)
            fprintf(stderr, "streamex run: stopped; rerun with --resume to continue\n");
        else if (sx_signals_caught())
            fprintf(stderr,
                    "streamex run: stopped by signal %d before any task was "
                    "settled\n",
                    sx_signals_caught());
        if (!args.quiet && opts.output)
            sx_ending_print(stdout, opts.output, code, sx_ending_run_meaning(code));
    }
    sx_runopts_free(&opts);
    return code;
}
