/* cmd_runtime.c: `streamex runtime up|status|down` for people debugging one
 * worker's Kafka + Flink pair. `up` starts the pair and, in the foreground,
 * watches it (restarting a component that dies) until Ctrl-C or SIGTERM,
 * then stops it; `up --detach` returns once the pair is healthy and leaves it
 * running for a later `down`. Endpoints go to stdout as KEY=VALUE lines so
 * scripts can read them; everything else goes to the log on stderr. */
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/pairopts.h"
#include "common/log.h"
#include "common/signals.h"
#include "worker/pair/pair.h"

#include <czmq.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char s_usage[] =
    "usage: streamex runtime up|status|down [--detach] [OPTIONS]\n\n"
    "  up        start the pair of --index and wait until it is healthy; stays\n"
    "            in the foreground watching it until Ctrl-C, then stops it\n"
    "  up --detach  start it, print its endpoints and leave it running\n"
    "  status    each component's pid, health and resident memory\n"
    "            (exit 0 only when all are healthy)\n"
    "  down      stop the pair, whoever started it\n\n"
    "options:\n" SX_RUNTIME_OPTIONS_HELP
    "\nThe pair's conf, Kafka data, logs and pid files are under\n"
    ".runtime/pairs/N/; install it first with scripts/setup-runtime.sh.\n";

static void print_endpoints(const sx_pair_t *rt)
{
    printf("bootstrap=%s\ngateway=%s\nrest=%s\n", sx_pair_bootstrap(rt),
           sx_pair_gateway_url(rt), sx_pair_rest_url(rt));
    if (sx_pair_dir(rt))
        printf("dir=%s\n", sx_pair_dir(rt));
    fflush(stdout);
}

/* Watches the pair about once a second until a stop signal (returns its
 * 128 + N) or a failed restart (1). */
static int watch_until_signal(sx_pair_t *rt, int index)
{
    sx_error_t err;
    for (int tick = 1; !sx_signals_caught(); tick++) {
        zclock_sleep(100);
        if (tick % 10 == 0 && !sx_signals_caught() && sx_pair_watch(rt, &err) < 0) {
            fprintf(stderr, "streamex runtime: %s\n", err.msg);
            return 1;
        }
    }
    sx_info("pair %d: signal %d: stopping", index, sx_signals_caught());
    return sx_signals_exit_code();
}

static int run_up(sx_pair_config_t *config, bool detach)
{
    sx_error_t err;
    config->detached = detach;
    sx_pair_t *rt = sx_pair_new(config, &err);
    if (!rt) {
        fprintf(stderr, "streamex runtime: %s\n", err.msg);
        return 2;
    }
    int rc = 0;
    if (sx_pair_start(rt, &err) != 0) {
        fprintf(stderr, "streamex runtime: %s\n", err.msg);
        rc = sx_signals_caught() ? sx_signals_exit_code() : 1;
    } else if (sx_signals_caught()) {
        /* Healthy just as the signal came: a detached pair is not left behind. */
        if (sx_pair_stop(rt, &err) != 0)
            fprintf(stderr, "streamex runtime: %s\n", err.msg);
        rc = sx_signals_exit_code();
    } else {
        print_endpoints(rt);
        if (!detach)
            rc = watch_until_signal(rt, config->index);
    }
    sx_pair_destroy(&rt);
    return rc;
}

static int run_status(const sx_pair_config_t *config)
{
    sx_error_t err;
    sx_pair_t *rt = sx_pair_new(config, &err);
    sx_pair_status_t status;
    if (!rt || sx_pair_status(rt, &status, &err) != 0) {
        fprintf(stderr, "streamex runtime: %s\n", err.msg);
        sx_pair_destroy(&rt);
        return 2;
    }
    print_endpoints(rt);
    bool all_healthy = true;
    long total_kb = 0;
    printf("%-12s %8s %-8s %-9s %10s\n", "component", "pid", "process", "health",
           "rss_mib");
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++) {
        const sx_pair_component_t *c = &status.components[i];
        bool checked = !(status.external && strcmp(c->name, "taskmanager") == 0);
        all_healthy = all_healthy && (c->healthy || !checked);
        total_kb += c->rss_kb;
        printf("%-12s %8d %-8s %-9s %10.0f\n", c->name, (int)c->pid,
               status.external ? "external"
               : c->running    ? "running"
                               : "stopped",
               !checked     ? "-"
               : c->healthy ? "healthy"
                            : "down",
               (double)c->rss_kb / 1024.0);
    }
    printf("%-12s %8s %-8s %-9s %10.0f\n", "total", "", "", "",
           (double)total_kb / 1024.0);
    sx_pair_destroy(&rt);
    return all_healthy ? 0 : 1;
}

static int run_down(const sx_pair_config_t *config)
{
    sx_error_t err;
    sx_pair_t *rt = sx_pair_new(config, &err);
    int rc = rt ? sx_pair_stop(rt, &err) : -1;
    if (rc != 0)
        fprintf(stderr, "streamex runtime: %s\n", err.msg);
    else
        sx_info("pair %d stopped", config->index);
    sx_pair_destroy(&rt);
    return rc == 0 ? 0 : 1;
}

int sx_cmd_runtime(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(s_usage, stdout);
        return 0;
    }
    if (argc < 2) {
        fputs(s_usage, stderr);
        return 2;
    }
    const char *action = argv[1];
    sx_pair_config_t config;
    sx_pair_config_defaults(&config, 0);
    bool detach = false;
    sx_error_t err;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--detach") == 0) {
            detach = true;
            continue;
        }
        int taken = sx_pair_config_option(&config, argv[i],
                                          i + 1 < argc ? argv[i + 1] : NULL, &err);
        if (taken == 0)
            return sx_usage_error("runtime", s_usage, "unknown option '%s'", argv[i]);
        if (taken < 0)
            return sx_usage_error("runtime", s_usage, "%s", err.msg);
        i++;
    }
    /* A value out of range is bad usage like a malformed one: said here, with
     * the usage, not later by whichever action meets it first. */
    if (sx_pair_config_validate(&config, &err) != 0)
        return sx_usage_error("runtime", s_usage, "%s", err.msg);
    sx_log_set_component("runtime");
    if (strcmp(action, "up") == 0)
        return run_up(&config, detach);
    if (detach)
        return sx_usage_error("runtime", s_usage, "--detach only goes with 'up'");
    if (strcmp(action, "status") == 0)
        return run_status(&config);
    if (strcmp(action, "down") == 0)
        return run_down(&config);
    return sx_usage_error("runtime", s_usage, "unknown action '%s' (up, status or down)",
                          action);
}
