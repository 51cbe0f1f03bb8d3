/* runopts.c: options and progress display shared by `streamex coordinator`,
 * `streamex worker` and `streamex run` (see runopts.h). */
#include "cli/runopts.h"

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/sample.h"
#include "common/signals.h"
#include "common/status.h"
#include "worker/simexec.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --shard I/N: both through the checked parser, whose own message gives
 * way to the one that says what I/N must be. */
static int parse_subset(const char *arg, sx_runopts_t *opts, sx_error_t *err)
{
    const char *slash = strchr(arg, '/');
    long i = 0, n = 0;
    if (!slash ||
        sx_option_int("shard", strndupa(arg, (size_t)(slash - arg)), 0,
                      SX_RUN_SUBSETS_MAX - 1, &i, err) != 0 ||
        sx_option_int("shard", slash + 1, 1, SX_RUN_SUBSETS_MAX, &n, err) != 0 || i >= n)
        return sx_error_set(err, "--shard '%s': expected I/N with 0 <= I < N", arg);
    opts->subset_index = (size_t)i;
    opts->subset_count = (size_t)n;
    return 0;
}

static int parse_rerun(const char *arg, sx_runopts_t *opts, sx_error_t *err)
{
    char *copy = sx_strdup(arg), *save = NULL;
    int rc = 0, count = 0;
    for (char *name = strtok_r(copy, ",", &save); name && rc == 0;
         name = strtok_r(NULL, ",", &save), count++) {
        sx_status_t status;
        if (sx_status_parse(name, &status) == 0)
            opts->rerun[status] = true;
        else
            rc = sx_error_set(err,
                              "--rerun '%s': unknown status '%s' (statuses: match, "
                              "mismatch, missing_prediction, rejected_sql, flink_error, "
                              "timeout, materialize_error, input_error, infra_error, "
                              "eval_error)",
                              arg, name);
    }
    free(copy);
    return rc == 0 && count == 0 ? sx_error_set(err, "--rerun: no status given") : rc;
}

/* --tasks ID,ID,... or --tasks @FILE (IDs separated by newlines, commas or
 * blanks). Whether each ID is in the bench is the coordinator's to check. */
static int parse_tasks(const char *arg, sx_runopts_t *opts, sx_error_t *err)
{
    char *text = NULL;
    if (arg[0] == '@') {
        size_t size = 0;
        text = sx_file_read(arg + 1, (size_t)1 << 24, &size, err);
        if (!text)
            return sx_error_prefix(err, "--tasks %s", arg), -1;
    } else
        text = sx_strdup(arg);
    size_t before = opts->task_count;
    char *save = NULL;
    for (char *id = strtok_r(text, ", \t\r\n", &save); id;
         id = strtok_r(NULL, ", \t\r\n", &save)) {
        opts->tasks = sx_realloc(opts->tasks, opts->task_count + 1, sizeof *opts->tasks);
        opts->tasks[opts->task_count++] = sx_strdup(id);
    }
    free(text);
    return opts->task_count > before ? 0
                                     : sx_error_set(err, "--tasks '%s': no task ID", arg);
}

int sx_runopts_apply(sx_runopts_t *opts, int c, const char *arg, sx_error_t *err)
{
    long value = 0;
    int rc = sx_bootstrap_option(c, arg, &opts->bootstrap, err);
    if (rc != 0)
        return rc;
    switch (c) {
    case SX_OPT_BENCH:
        opts->bench = arg;
        break;
    case SX_OPT_METHOD:
        rc = sx_method_args_add(&opts->methods, &opts->method_count, arg, err);
        break;
    case SX_OPT_OUTPUT:
        opts->output = arg;
        break;
    case SX_OPT_SHARD_SIZE:
        rc = sx_option_int("shard-size", arg, 1, 10000, &value, err);
        opts->shard_size = (size_t)value;
        break;
    case SX_OPT_HEARTBEAT_MS:
        rc = sx_option_int("heartbeat-ms", arg, 10, 600000, &value, err);
        opts->heartbeat_ms = (int)value;
        break;
    case SX_OPT_DEAD_AFTER_MS:
        rc = sx_option_int("dead-after-ms", arg, 20, 3600000, &value, err);
        opts->dead_after_ms = (int)value;
        break;
    case SX_OPT_RETRIES:
        rc = sx_option_int("retries", arg, 1, 100, &value, err);
        opts->retries = (int)value;
        break;
    case SX_OPT_PROGRESS_MS:
        rc = sx_option_int("progress-ms", arg, 10, 600000, &value, err);
        opts->progress_ms = (int)value;
        break;
    case SX_OPT_RESUME:
        opts->resume = true;
        break;
    case SX_OPT_SHARD:
        rc = parse_subset(arg, opts, err);
        break;
    case SX_OPT_SIMULATE: { /* a bad spec is bad usage, refused before anything exists */
        sx_simexec_t *probe = sx_simexec_new(arg, err);
        rc = probe ? 0 : -1;
        sx_simexec_destroy(&probe);
        opts->simulate = arg;
        break;
    }
    case SX_OPT_RERUN:
        rc = parse_rerun(arg, opts, err);
        break;
    case SX_OPT_TASKS:
        rc = parse_tasks(arg, opts, err);
        break;
    case SX_OPT_REPEAT:
        rc = sx_option_int("repeat", arg, 1, SX_RUN_REPEAT_MAX, &value, err);
        opts->repeat = (int)value;
        break;
    case SX_OPT_MAX_SAMPLES:
        rc = sx_option_int("max-samples", arg, 1, SX_SAMPLES_LIMIT, &value, err);
        opts->max_samples = (int)value;
        break;
    case SX_OPT_CACHE:
        opts->cache = arg;
        break;
    case SX_OPT_NO_CACHE:
        opts->no_cache = true;
        break;
    case SX_OPT_ALLOW_MIXED_ENGINES:
        opts->allow_mixed_engines = true;
        break;
    case SX_OPT_PROFILE:
        if (sx_profile_parse(arg, &opts->profile) != 0)
            rc = sx_error_set(err, "--profile '%s': unknown profile", arg);
        break;
    default:
        return 0;
    }
    return rc == 0 ? 1 : -1;
}

int sx_runopts_config(sx_runopts_t *opts, sx_coordinator_config_t *config,
                      sx_error_t *err)
{
    if (!opts->bench || !opts->method_count || !opts->output)
        return sx_error_set(err, "--bench, --method and --output are required");
    if (sx_output_path_check(opts->output, err) != 0)
        return -1;
    free(opts->names);
    free(opts->files);
    opts->names = sx_alloc(opts->method_count, sizeof *opts->names);
    opts->files = sx_alloc(opts->method_count, sizeof *opts->files);
    for (size_t i = 0; i < opts->method_count; i++) {
        opts->names[i] = opts->methods[i].name;
        opts->files[i] = opts->methods[i].file;
    }
    *config = (sx_coordinator_config_t){0};
    config->bench_dir = opts->bench;
    config->method_names = opts->names;
    config->prediction_files = opts->files;
    config->method_count = opts->method_count;
    config->out_dir = opts->output;
    config->shard_size = opts->shard_size;
    config->heartbeat_ms = opts->heartbeat_ms;
    config->dead_after_ms = opts->dead_after_ms;
    config->retry_budget = opts->retries;
    config->profile = opts->profile;
    config->resume = opts->resume;
    config->subset_index = opts->subset_index;
    config->subset_count = opts->subset_count;
    config->tasks = (const char *const *)opts->tasks;
    config->task_count = opts->task_count;
    memcpy(config->rerun, opts->rerun, sizeof config->rerun);
    config->repeat = opts->repeat;
    config->progress_ms = opts->progress_ms;
    config->max_samples = opts->max_samples;
    config->bootstrap = opts->bootstrap;
    config->allow_mixed_engines = opts->allow_mixed_engines;
    return 0;
}

void sx_runopts_free(sx_runopts_t *opts)
{
    sx_method_args_free(&opts->methods, &opts->method_count);
    free(opts->names);
    free(opts->files);
    opts->names = opts->files = NULL;
    for (size_t i = 0; i < opts->task_count; i++)
        free(opts->tasks[i]);
    free(opts->tasks);
    opts->tasks = NULL;
    opts->task_count = 0;
}

const char *sx_runopts_cache_dir(const sx_runopts_t *opts, char *dir, size_t size)
{
    const char *env = getenv("SX_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (opts->no_cache || (opts->simulate && !opts->cache))
        return NULL;
    if (opts->cache)
        snprintf(dir, size, "%s", opts->cache);
    else if (env)
        snprintf(dir, size, "%s", strcmp(env, "off") == 0 ? "" : env);
    else if (xdg && *xdg)
        snprintf(dir, size, "%s/streamex", xdg);
    else if (home && *home)
        snprintf(dir, size, "%s/.cache/streamex", home);
    else
        dir[0] = '\0';
    return dir[0] ? dir : NULL;
}

/* ---- progress ------------------------------------------------------------ */

static void format_eta(json_t *eta, char *out, size_t size)
{
    if (!json_is_number(eta)) {
        snprintf(out, size, "--");
        return;
    }
    long seconds = (long)json_number_value(eta);
    snprintf(out, size, "%ldm%02lds", seconds / 60, seconds % 60);
}

void sx_progress_print(const char *json, void *arg)
{
    (void)arg;
    if (!isatty(STDOUT_FILENO)) {
        printf("%s\n", json);
        fflush(stdout);
        return;
    }
    json_t *root = json_loads(json, 0, NULL);
    if (!root)
        return;
    char line[1024], eta[32];
    format_eta(json_object_get(root, "eta_s"), eta, sizeof eta);
    int used =
        snprintf(line, sizeof line,
                 "[%lld/%lld] EX so far %.4f  failures %lld  cached %lld  ETA %s |",
                 json_integer_value(json_object_get(root, "done")),
                 json_integer_value(json_object_get(root, "total")),
                 json_number_value(json_object_get(root, "ex")),
                 json_integer_value(json_object_get(root, "failures")),
                 json_integer_value(json_object_get(root, "cached")), eta);
    json_t *workers = json_object_get(root, "workers");
    size_t i;
    json_t *w;
    json_array_foreach(workers, i, w)
    {
        if (used < 0 || (size_t)used >= sizeof line - 64)
            break;
        used += snprintf(line + used, sizeof line - (size_t)used, " %s:%s(%lld)",
                         json_string_value(json_object_get(w, "name")),
                         json_string_value(json_object_get(w, "state")),
                         json_integer_value(json_object_get(w, "done")));
    }
    /* Log lines scroll above the live line; the last redraw (every task
     * settled) ends it, so the EX lines printed next start on their own. */
    sx_log_live_set(line);
    if (json_integer_value(json_object_get(root, "done")) ==
        json_integer_value(json_object_get(root, "total")))
        sx_log_live_end();
    json_decref(root);
}

void sx_progress_end(void)
{
    sx_log_live_end();
}

/* Whether any method of summary.json has tasks of that status. */
static bool status_occurs(json_t *methods, const char *status)
{
    const char *name;
    json_t *m;
    json_object_foreach(methods, name, m)
    {
        if (json_integer_value(json_object_get(json_object_get(m, "by_status"), status)))
            return true;
    }
    return false;
}

/* A table cell "c/t = x", followed by " [low, high]" when summary.json has
 * the figure's interval; with n samples, c and t count every (task,
 * sample). */
static void format_figure(char *out, size_t size, json_t *m, const char *correct,
                          const char *figure, const char *interval)
{
    json_t *samples = json_object_get(m, "samples");
    long long total = json_integer_value(json_object_get(m, "total")) *
                      (json_is_integer(samples) ? json_integer_value(samples) : 1);
    int n = snprintf(out, size, "%lld/%lld = %.4f",
                     json_integer_value(json_object_get(m, correct)), total,
                     json_number_value(json_object_get(m, figure)));
    json_t *ci = json_object_get(m, interval);
    if (json_array_size(ci) == 2 && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, " [%.4f, %.4f]",
                 json_number_value(json_array_get(ci, 0)),
                 json_number_value(json_array_get(ci, 1)));
}

void sx_run_table_print(const char *out_dir)
{
    if (!isatty(STDOUT_FILENO))
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    json_t *summary = json_load_file(path, 0, NULL);
    json_t *methods = json_object_get(summary, "methods");
    const char *name;
    json_t *m;
    /* Wide enough for "c/t = x [low, high]" when the intervals are there. */
    int width = json_object_get(json_object_get(summary, "run"), "bootstrap") ? 34 : 18;
    printf("\n%-16s %-*s %-*s", "method", width, "EX", width, "strict EX");
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        if (status_occurs(methods, sx_status_name((sx_status_t)s)))
            printf(" %s", sx_status_name((sx_status_t)s));
    printf("\n");
    json_object_foreach(methods, name, m)
    {
        char ex[128], strict[128];
        format_figure(ex, sizeof ex, m, "correct", "ex", "ex_ci");
        format_figure(strict, sizeof strict, m, "strict_correct", "ex_strict",
                      "ex_strict_ci");
        printf("%-16s %-*s %-*s", name, width, ex, width, strict);
        for (int s = 0; s < SX_STATUS_COUNT; s++) {
            const char *status = sx_status_name((sx_status_t)s);
            if (status_occurs(methods, status))
                printf(" %*lld", (int)strlen(status),
                       json_integer_value(
                           json_object_get(json_object_get(m, "by_status"), status)));
        }
        printf("\n");
    }
    json_t *wall = json_object_get(json_object_get(summary, "run"), "wall_seconds");
    if (json_is_number(wall))
        printf("wall time %.3f s\n", json_number_value(wall));
    fflush(stdout);
    json_decref(summary);
}

int sx_run_exit_code(int rc, size_t settled, size_t infra_errors)
{
    if (rc == 0)
        return infra_errors ? 3 : 0;
    /* A signal also ends a pair's start as an error ("interrupted by
     * signal 15"): that is a stop, not bad usage, for a Job's
     * podFailurePolicy that fails the whole Job on 2. */
    if (sx_signals_caught() && settled == 0)
        return sx_signals_exit_code();
    return rc < 0 ? 2 : 1;
}
