/* cmd_worker.c: `streamex worker --connect tcp://HOST:PORT`, one worker of a
 * distributed run: its own Kafka + Flink pair (started here, or an existing
 * one given by endpoints), the agent loop that talks to the coordinator. */
#include "cli/commands.h"
#include "cli/runopts.h"
#include "common/log.h"
#include "proto/proto.h"
#include "worker/pair/engine.h"
#include "worker/pair/pair.h"
#include "worker/backend.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char s_usage[] =
    "usage: streamex worker --connect tcp://HOST:PORT [options]\n"
    "\n"
    "Executes shards for a coordinator on a Kafka + Flink pair and returns each\n"
    "task's final CSV and verdict. Reconnects with back-off when the\n"
    "coordinator goes away; unacknowledged results are re-sent.\n"
    "\n"
    "  --connect ENDPOINT     the coordinator\n"
    "  --name NAME            worker name (default HOST-INDEX)\n"
    "  --capacity N           shards held at once (default 2)\n" SX_SLOTS_OPTION_HELP
    "  --work-dir DIR         cache, spool and CSVs (default ./streamex-worker-NAME)\n"
    "  --index I              local pair index: ports and folder (default 0)\n"
    "  --kafka-bootstrap H:P  use an existing pair instead of starting one; needs\n"
    "  --flink-gateway URL    all three\n"
    "  --flink-rest URL\n" SX_FLINK_OPTION_HELP
    "  --profile P            comparison profile (spider2-lite-2025-11 default)\n"
    "  --simulate SPEC        simulate execution (tests), e.g. "
    "delay_ms=20\n" SX_CACHE_OPTIONS_HELP
    "  --heartbeat-ms MS      heartbeat interval (default 1000)\n"
    "  --dead-after-ms MS     the coordinator is gone after this (default 5 beats)\n"
    "  --cert FILE            CURVE: this worker's certificate ('streamex keygen')\n"
    "  --server-cert FILE     CURVE: the coordinator's public certificate\n"
    "  --insecure             allow plain TCP to a non-loopback address\n"
    "\n"
    "Exit status: 0 the coordinator ended the run, 128+N stopped by signal N (its\n"
    "pair's start included), 1 stopped, 2 bad usage or error.\n";

enum {
    OPT_CONNECT = SX_OPT_NEXT,
    OPT_NAME,
    OPT_CAPACITY,
    OPT_SLOTS,
    OPT_WORK_DIR,
    OPT_INDEX,
    OPT_BOOTSTRAP,
    OPT_GATEWAY,
    OPT_REST,
    OPT_CERT,
    OPT_SERVER_CERT,
    OPT_INSECURE,
    OPT_FLINK,
    OPT_HELP
};

static int parse(int argc, char **argv, sx_agent_config_t *agent,
                 sx_backend_config_t *backend, sx_runopts_t *opts, sx_error_t *err)
{
    static const struct option longs[] = {
        SX_RUN_LONGOPTS,
        SX_CACHE_LONGOPTS,
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"name", required_argument, NULL, OPT_NAME},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"slots", required_argument, NULL, OPT_SLOTS},
        {"work-dir", required_argument, NULL, OPT_WORK_DIR},
        {"index", required_argument, NULL, OPT_INDEX},
        {"kafka-bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
        {"flink-gateway", required_argument, NULL, OPT_GATEWAY},
        {"flink-rest", required_argument, NULL, OPT_REST},
        {"cert", required_argument, NULL, OPT_CERT},
        {"server-cert", required_argument, NULL, OPT_SERVER_CERT},
        {"insecure", no_argument, NULL, OPT_INSECURE},
        {"flink", required_argument, NULL, OPT_FLINK},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0}};
    int c;
    long value = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        int shared = sx_runopts_apply(opts, c, optarg, err);
        if (shared < 0)
            return -1;
        if (shared)
            continue;
        switch (c) {
        case OPT_CONNECT:
            agent->endpoint = optarg;
            break;
        case OPT_NAME:
            agent->name = optarg;
            break;
        case OPT_CAPACITY:
            if (sx_option_int("capacity", optarg, 1, SX_RUN_CAPACITY_MAX, &value, err) !=
                0)
                return -1;
            agent->capacity = (int)value;
            break;
        case OPT_SLOTS:
            if (sx_option_int("slots", optarg, 1, SX_PROTO_SLOTS_MAX, &value, err) != 0)
                return -1;
            backend->slots = (int)value;
            break;
        case OPT_WORK_DIR:
            agent->work_dir = optarg;
            break;
        case OPT_INDEX:
            if (sx_option_int("index", optarg, 0, SX_PAIR_MAX_INDEX, &value, err) != 0)
                return -1;
            backend->index = (int)value;
            break;
        case OPT_BOOTSTRAP:
            backend->bootstrap = optarg;
            break;
        case OPT_GATEWAY:
            backend->gateway = optarg;
            break;
        case OPT_REST:
            backend->rest = optarg;
            break;
        case OPT_CERT:
            agent->cert_path = optarg;
            break;
        case OPT_SERVER_CERT:
            agent->server_cert_path = optarg;
            break;
        case OPT_INSECURE:
            agent->insecure = true;
            break;
        case OPT_FLINK:
            if (sx_engine_selector_check(optarg, err) != 0)
                return -1;
            backend->flink = optarg;
            break;
        case OPT_HELP:
            return 1;
        default:
            return sx_option_unknown(c, argv, err);
        }
    }
    if (optind < argc)
        return sx_error_set(err, "unexpected argument '%s'", argv[optind]);
    if (!agent->endpoint)
        return sx_error_set(err, "--connect is required");
    bool rerun = false;
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        rerun |= opts->rerun[s];
    if (opts->bench || opts->method_count || opts->output || opts->resume ||
        opts->subset_count || opts->shard_size || opts->retries || opts->task_count ||
        rerun || opts->repeat)
        return sx_error_set(err,
                            "bench, methods, output, sharding, --repeat, --tasks and "
                            "--rerun are the coordinator's options, not a worker's");
    if (opts->allow_mixed_engines)
        return sx_error_set(err, "--allow-mixed-engines is the coordinator's option, "
                                 "not a worker's");
    if (backend->flink && (opts->simulate || backend->bootstrap))
        return sx_error_set(err, "--flink picks the engine of the worker's own pair; "
                                 "--simulate and an existing pair have none to pick");
    return 0;
}

int sx_cmd_worker(int argc, char **argv)
{
    sx_agent_config_t agent = {0};
    sx_backend_config_t backend_config = {.slots = SX_RUN_SLOTS_DEFAULT};
    sx_runopts_t opts = {0};
    sx_error_t err;
    sx_error_clear(&err);
    int parsed = parse(argc, argv, &agent, &backend_config, &opts, &err);
    if (parsed != 0) {
        sx_runopts_free(&opts);
        if (parsed == 1) {
            fputs(s_usage, stdout);
            return 0;
        }
        return sx_usage_error("worker", s_usage, "%s", err.msg);
    }
    agent.heartbeat_ms = opts.heartbeat_ms;
    agent.dead_after_ms = opts.dead_after_ms;
    char name[128], work[PATH_MAX], run_id[128];
    if (!agent.name) {
        char host[64] = "worker";
        gethostname(host, sizeof host - 1);
        /* Stable across restarts (the spool folder follows the name) and
         * distinct per pair on one host. */
        snprintf(name, sizeof name, "%s-%d", host, backend_config.index);
        agent.name = name;
    }
    if (!agent.work_dir) {
        snprintf(work, sizeof work, "streamex-worker-%s", agent.name);
        agent.work_dir = work;
    }
    char component[160];
    snprintf(component, sizeof component, "worker %s", agent.name);
    sx_log_set_component(component);
    snprintf(run_id, sizeof run_id, "%s-%ld", agent.name, (long)time(NULL));
    backend_config.simulate = opts.simulate;
    backend_config.profile = opts.profile;
    backend_config.run_id = run_id;
    char cache_dir[PATH_MAX];
    backend_config.cache_dir = sx_runopts_cache_dir(&opts, cache_dir, sizeof cache_dir);
    sx_backend_t backend;
    int rc = -1;
    if (sx_backend_open(&backend, &backend_config, &agent, &err) == 0) {
        sx_agent_t *worker = sx_agent_new(&agent, &err);
        if (worker) {
            rc = sx_agent_run(worker, NULL, &err);
            sx_agent_destroy(&worker);
        }
        sx_backend_close(&backend);
    }
    /* A pod deleted while its pair starts exits 143, not 2: the chart's
     * workers Job fails as a whole on 2. */
    int code = sx_run_exit_code(rc, 0, 0);
    if (sx_error_is_set(&err))
        fprintf(stderr, "streamex worker: %s\n", err.msg);
    sx_runopts_free(&opts);
    return code;
}
