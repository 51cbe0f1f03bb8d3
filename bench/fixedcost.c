/* fixedcost.c: the executor half of bench/fixedcost (read that script's top
 * comment first). Built by CMake as build/fixedcost_exec, never run by ctest.
 *   fixedcost_exec BENCH PREDICTIONS INDEX [ROUNDS] [WARMUP] [private]
 * runs every task of PREDICTIONS (BENCH's task IDs in order) ROUNDS times
 * (default 1) through one sx_executor_t on the running local pair INDEX, as
 * a worker's executor thread does (the pair watched before each task, the
 * shared source topics of worker/exec/replays.h, unless `private`, the cleanup
 * after the result), after WARMUP untimed rounds (default 1). It prints where the CPU
 * went: the user + system seconds of each JVM of the pair (from /proc/PID/stat, before
 * and after the timed rounds) and of this process (getrusage), per task; and
 * where the wall time went: each step's seconds summed over the tasks. The
 * verdicts are counted: a change that saves time by changing them shows. */
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/bench/predictions.h"
#include "common/results/result.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "worker/exec/executor.h"
#include "worker/pair/pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct {
    sx_bench_t *bench;
    sx_predictions_t *predictions;
    sx_pair_t *pair;
    sx_executor_t *executor;
    sx_replays_t *replays; /* NULL: private replays */
    char csv_dir[4096];
    sx_timings_t steps; /* summed over the timed tasks */
    double *totals;     /* each timed task's seconds, for the median */
    size_t tasks;
    size_t counts[SX_STATUS_COUNT];
} batch_t;

/* utime + stime of a process in seconds, -1 when it cannot be read. */
static double process_cpu(pid_t pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *p = strrchr(line, ')'); /* the name may hold spaces */
    unsigned long long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                     &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* The CPU seconds of every component, then of this process. */
static int snapshot(sx_pair_t *pair, double cpu[SX_PAIR_COMPONENTS + 1],
                    sx_pair_status_t *status)
{
    sx_error_t err;
    if (sx_pair_status(pair, status, &err) != 0) {
        fprintf(stderr, "fixedcost: %s\n", err.msg);
        return -1;
    }
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++) {
        cpu[i] = process_cpu(status->components[i].pid);
        if (cpu[i] < 0) {
            fprintf(stderr, "fixedcost: %s is not running\n", status->components[i].name);
            return -1;
        }
    }
    cpu[SX_PAIR_COMPONENTS] = self_cpu();
    return 0;
}

static void run_task(batch_t *b, const char *task_id, int round, bool timed)
{
    char csv[4200];
    snprintf(csv, sizeof csv, "%s/%s.%d.csv", b->csv_dir, task_id, round);
    sx_exec_request_t request = {sx_bench_dir(b->bench),
                                 task_id,
                                 sx_predictions_sql(b->predictions, task_id),
                                 round + 1,
                                 csv,
                                 NULL,
                                 0};
    sx_result_t result;
    sx_timings_t timings;
    sx_error_t err;
    if (sx_pair_watch(b->pair, &err) < 0)
        fprintf(stderr, "fixedcost: %s\n", err.msg);
    sx_executor_run(b->executor, &request, &result, &timings);
    timings.cleanup = sx_executor_finish_task(b->executor);
    if (timed) {
        for (int s = 0; s < SX_STEP_COUNT; s++)
            *sx_step_slot(&b->steps, s) += sx_step_seconds(&timings, s);
        b->totals[b->tasks++] = result.seconds;
        b->counts[result.status]++;
    }
    if (result.status != SX_STATUS_MATCH)
        fprintf(stderr, "fixedcost: %s round %d: %s: %s\n", task_id, round,
                sx_status_name(result.status), result.detail);
    if (result.csv)
        unlink(result.csv);
    sx_result_clear(&result);
}

static void run_rounds(batch_t *b, int first, int rounds, bool timed)
{
    for (int r = first; r < first + rounds; r++)
        for (size_t i = 0; i < sx_bench_task_count(b->bench); i++)
            run_task(b, sx_bench_task_id(b->bench, i), r, timed);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_tables(batch_t *b, const double before[], const double after[],
                         const sx_pair_status_t *status, double wall)
{
    double n = (double)b->tasks, total = 0;
    for (int i = 0; i <= SX_PAIR_COMPONENTS; i++)
        total += after[i] - before[i];
    printf("%-12s %8s %8s %6s\n", "process", "cpu_s", "ms/task", "share");
    for (int i = 0; i <= SX_PAIR_COMPONENTS; i++) {
        double cpu = after[i] - before[i];
        printf("%-12s %8.2f %8.1f %5.1f%%\n",
               i < SX_PAIR_COMPONENTS ? status->components[i].name : "streamex", cpu,
               1e3 * cpu / n, 100 * cpu / total);
    }
    printf("%-12s %8.2f %8.1f %5.1f%%\n\n", "total", total, 1e3 * total / n, 100.0);
    double steps = 0;
    for (int s = 0; s < SX_STEP_COUNT; s++)
        steps += sx_step_seconds(&b->steps, s);
    printf("%-12s %8s %8s %6s\n", "step", "wall_s", "ms/task", "share");
    for (int s = 0; s < SX_STEP_COUNT; s++) {
        double t = sx_step_seconds(&b->steps, s);
        printf("%-12s %8.2f %8.1f %5.1f%%\n", sx_step_name(s), t, 1e3 * t / n,
               100 * t / steps);
    }
    printf("%-12s %8.2f %8.1f %5.1f%%\n\n", "total", steps, 1e3 * steps / n, 100.0);
    qsort(b->totals, b->tasks, sizeof *b->totals, by_value);
    printf("tasks %zu, wall %.2f s, %.2f tasks/s, median task %.3f s, cpu %.3f s/task\n",
           b->tasks, wall, n / wall, b->totals[b->tasks / 2], total / n);
    printf("verdicts:");
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        if (b->counts[s])
            printf(" %s %zu", sx_status_name((sx_status_t)s), b->counts[s]);
    printf("\n");
}

/* Opens the bench, the predictions, the running pair and one executor. */
static int batch_open(batch_t *b, const char *bench_dir, const char *predictions,
                      int index, bool shared, sx_error_t *err)
{
    b->bench = sx_bench_open(bench_dir, err);
    if (!b->bench)
        return -1;
    b->predictions = sx_predictions_load(predictions, b->bench, err);
    if (!b->predictions)
        return -1;
    sx_pair_config_t config;
    sx_pair_config_defaults(&config, index);
    b->pair = sx_pair_new(&config, err);
    if (!b->pair)
        return -1;
    char run_id[64];
    snprintf(run_id, sizeof run_id, "fixedcost-%d", (int)getpid());
    sx_executor_config_t exec = {sx_pair_bootstrap(b->pair),
                                 sx_pair_gateway_url(b->pair),
                                 sx_pair_rest_url(b->pair),
                                 run_id,
                                 SX_PROFILE_SPIDER2_LITE_2025_11,
                                 false,
                                 b->pair};
    b->executor = sx_executor_new(&exec, err);
    if (!b->executor)
        return -1;
    if (shared) {
        b->replays = sx_replays_new(exec.bootstrap, run_id, false, err);
        if (!b->replays)
            return -1;
        sx_executor_set_replays(b->executor, b->replays);
    }
    snprintf(b->csv_dir, sizeof b->csv_dir, "/tmp/sx-fixedcost-XXXXXX");
    if (!mkdtemp(b->csv_dir))
        return sx_error_set(err, "cannot make a folder in /tmp");
    return 0;
}

static void batch_close(batch_t *b)
{
    if (b->csv_dir[0])
        rmdir(b->csv_dir);
    sx_executor_destroy(&b->executor);
    sx_replays_destroy(&b->replays);
    sx_pair_destroy(&b->pair);
    sx_predictions_destroy(&b->predictions);
    sx_bench_destroy(&b->bench);
    free(b->totals);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 7 || (argc == 7 && strcmp(argv[6], "private") != 0)) {
        fprintf(stderr, "usage: fixedcost_exec BENCH PREDICTIONS INDEX [ROUNDS] [WARMUP] "
                        "[private]\n");
        return 2;
    }
    int index = atoi(argv[3]);
    int rounds = argc > 4 ? atoi(argv[4]) : 1;
    int warmup = argc > 5 ? atoi(argv[5]) : 1;
    sx_log_set_level(SX_LOG_WARN);
    batch_t b = {0};
    sx_error_t err;
    int rc = 1;
    if (batch_open(&b, argv[1], argv[2], index, argc < 7, &err) != 0) {
        fprintf(stderr, "fixedcost: %s\n", err.msg);
    } else {
        b.totals =
            calloc(sx_bench_task_count(b.bench) * (size_t)rounds + 1, sizeof *b.totals);
        run_rounds(&b, 0, warmup, false);
        double before[SX_PAIR_COMPONENTS + 1], after[SX_PAIR_COMPONENTS + 1];
        sx_pair_status_t status;
        if (snapshot(b.pair, before, &status) == 0) {
            double start = sx_clock_seconds();
            run_rounds(&b, warmup, rounds, true);
            double wall = sx_clock_seconds() - start;
            if (snapshot(b.pair, after, &status) == 0 && b.tasks > 0) {
                print_tables(&b, before, after, &status, wall);
                rc = 0;
            }
        }
    }
    batch_close(&b);
    return rc;
}
