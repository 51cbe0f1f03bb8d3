/* cmd_coordinator.c: `streamex coordinator`, the coordinator of a run spread
 * over machines: binds a ROUTER socket, shards the (method, task) pairs to
 * the workers that connect, journals every settled result and writes OUT
 * (docs/outputs.md, docs/cluster.md). */
#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/runopts.h"
#include "common/log.h"

#include <stdio.h>
#include <string.h>

static const char s_usage[] =
    "usage: streamex coordinator --bench BENCH --method NAME=PREDS [...] --output OUT\n"
    "                            --bind tcp://HOST:PORT [options]\n"
    "\n"
    "Shards the tasks of every method to the workers that connect ('streamex\n"
    "worker --connect ...'), settles their results and writes OUT. Ctrl-C stops\n"
    "it; --resume continues from OUT/journal.jsonl.\n"
    "\n" SX_RUN_OPTIONS_HELP
    "  --bind ENDPOINT        where workers connect, e.g. tcp://*:5555\n"
    "  --cert FILE            CURVE: this coordinator's certificate ('streamex keygen')\n"
    "  --allow DIR            CURVE: public certificates of the workers allowed in\n"
    "  --insecure             allow plain TCP on a non-loopback address\n"
    "\n" SX_RUN_EXIT_HELP;

enum { OPT_BIND = SX_OPT_NEXT, OPT_CERT, OPT_ALLOW, OPT_INSECURE, OPT_HELP };

int sx_cmd_coordinator(int argc, char **argv)
{
    sx_log_set_component("coordinator");
    static const struct option longs[] = {SX_RUN_LONGOPTS,
                                          {"bind", required_argument, NULL, OPT_BIND},
                                          {"cert", required_argument, NULL, OPT_CERT},
                                          {"allow", required_argument, NULL, OPT_ALLOW},
                                          {"insecure", no_argument, NULL, OPT_INSECURE},
                                          {"help", no_argument, NULL, OPT_HELP},
                                          {NULL, 0, NULL, 0}};
    sx_runopts_t opts = {.bootstrap = SX_BOOTSTRAP_DEFAULT};
    const char *bind = NULL, *cert = NULL, *allow = NULL;
    bool insecure = false;
    sx_error_t err;
    sx_error_clear(&err);
    int c, code = 2;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        int shared = sx_runopts_apply(&opts, c, optarg, &err);
        if (shared < 0)
            goto usage;
        if (shared)
            continue;
        switch (c) {
        case OPT_BIND:
            bind = optarg;
            break;
        case OPT_CERT:
            cert = optarg;
            break;
        case OPT_ALLOW:
            allow = optarg;
            break;
        case OPT_INSECURE:
            insecure = true;
            break;
        case OPT_HELP:
            fputs(s_usage, stdout);
            sx_runopts_free(&opts);
            return 0;
        default:
            sx_option_unknown(c, argv, &err);
            goto usage;
        }
    }
    if (optind < argc)
        sx_error_set(&err, "unexpected argument '%s'", argv[optind]);
    else if (!bind)
        sx_error_set(&err, "--bind is required");
    sx_coordinator_config_t config;
    if (sx_error_is_set(&err) || sx_runopts_config(&opts, &config, &err) != 0)
        goto usage;
    config.endpoint = bind;
    config.cert_path = cert;
    config.allow_dir = allow;
    config.insecure = insecure;
    config.progress = sx_progress_print;
    config.summary_out = stdout;
    if (!config.progress_ms)
        config.progress_ms = 2000;
    sx_coordinator_t *coordinator = sx_coordinator_new(&config, &err);
    if (coordinator) {
        int rc = sx_coordinator_run(coordinator, NULL, &err);
        sx_progress_end();
        code = sx_run_exit_code(rc, sx_coordinator_settled(coordinator),
                                sx_coordinator_infra_errors(coordinator));
        sx_coordinator_destroy(&coordinator);
        if (rc == 0)
            sx_run_table_print(opts.output);
    }
    if (sx_error_is_set(&err))
        fprintf(stderr, "streamex coordinator: %s\n", err.msg);
    sx_ending_print(stdout, opts.output, code, sx_ending_run_meaning(code));
    sx_runopts_free(&opts);
    return code;
usage:
    sx_runopts_free(&opts);
    return sx_usage_error("coordinator", s_usage, "%s", err.msg);
}
