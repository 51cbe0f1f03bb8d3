/* runopts.h: what `streamex coordinator` and `streamex run` share: the
 * options that describe a distributed run (bench, methods, output, sharding,
 * heartbeats, retries, resume, --shard I/N) and the live progress display.
 * The executor a worker uses is worker/backend.h's. */
#ifndef SX_RUNOPTS_H
#define SX_RUNOPTS_H

#include "cli/options.h"
#include "common/ex/score.h"
#include "coordinator/coordinator.h"

#include <getopt.h>
#include <stdbool.h>

/* Bounds of option values that more than one command takes (the pair
 * index's is SX_PAIR_MAX_INDEX, worker/pair/pair.h). */
#define SX_RUN_WORKERS_MAX 64     /* --workers of run and doctor */
#define SX_RUN_CAPACITY_MAX 1024  /* --capacity of run and worker */
#define SX_RUN_REPEAT_MAX 100     /* --repeat of run, coordinator and doctor */
#define SX_RUN_SUBSETS_MAX 100000 /* N of --shard I/N */
/* --slots of run, worker and doctor: tasks a worker runs at once on its
 * pair. 4 is where bench/scale is fastest on a 2-core machine; 8 is slower
 * (docs/execution.md says why, docs/internals/measurements.md the figures). */
#define SX_RUN_SLOTS_DEFAULT 4

enum {
    SX_OPT_BENCH = 1000,
    SX_OPT_METHOD,
    SX_OPT_OUTPUT,
    SX_OPT_SHARD_SIZE,
    SX_OPT_HEARTBEAT_MS,
    SX_OPT_DEAD_AFTER_MS,
    SX_OPT_RETRIES,
    SX_OPT_RESUME,
    SX_OPT_SHARD,
    SX_OPT_SIMULATE,
    SX_OPT_PROFILE,
    SX_OPT_RERUN,
    SX_OPT_TASKS,
    SX_OPT_CACHE,
    SX_OPT_NO_CACHE,
    SX_OPT_REPEAT,
    SX_OPT_PROGRESS_MS,
    SX_OPT_MAX_SAMPLES,
    SX_OPT_ALLOW_MIXED_ENGINES,
    SX_OPT_NEXT /* first free value for a command's own options */
};

/* getopt_long entries for the options above; put first in a command's table. */
#define SX_RUN_LONGOPTS                                                                  \
    {"bench", required_argument, NULL, SX_OPT_BENCH},                                    \
        {"method", required_argument, NULL, SX_OPT_METHOD},                              \
        {"output", required_argument, NULL, SX_OPT_OUTPUT},                              \
        {"shard-size", required_argument, NULL, SX_OPT_SHARD_SIZE},                      \
        {"heartbeat-ms", required_argument, NULL, SX_OPT_HEARTBEAT_MS},                  \
        {"dead-after-ms", required_argument, NULL, SX_OPT_DEAD_AFTER_MS},                \
        {"retries", required_argument, NULL, SX_OPT_RETRIES},                            \
        {"resume", no_argument, NULL, SX_OPT_RESUME},                                    \
        {"shard", required_argument, NULL, SX_OPT_SHARD},                                \
        {"simulate", required_argument, NULL, SX_OPT_SIMULATE},                          \
        {"rerun", required_argument, NULL, SX_OPT_RERUN},                                \
        {"tasks", required_argument, NULL, SX_OPT_TASKS},                                \
        {"repeat", required_argument, NULL, SX_OPT_REPEAT},                              \
        {"progress-ms", required_argument, NULL, SX_OPT_PROGRESS_MS},                    \
        {"max-samples", required_argument, NULL, SX_OPT_MAX_SAMPLES},                    \
        SX_BOOTSTRAP_LONGOPTS,                                                           \
        {"allow-mixed-engines", no_argument, NULL, SX_OPT_ALLOW_MIXED_ENGINES},          \
    {                                                                                    \
        "profile", required_argument, NULL, SX_OPT_PROFILE                               \
    }

/* The result cache's options, for the commands that execute (run, worker). */
#define SX_CACHE_LONGOPTS                                                                \
    {"cache", required_argument, NULL, SX_OPT_CACHE},                                    \
    {                                                                                    \
        "no-cache", no_argument, NULL, SX_OPT_NO_CACHE                                   \
    }

#define SX_CACHE_OPTIONS_HELP                                                            \
    "  --cache DIR            result cache: a task whose final CSV is cached for the\n"  \
    "                         same candidate, task files and Kafka/Flink versions is\n"  \
    "                         scored again, not executed (default $SX_CACHE_DIR, else\n" \
    "                         $XDG_CACHE_HOME/streamex or ~/.cache/streamex; none "      \
    "with\n"                                                                             \
    "                         --simulate or an existing pair)\n"                         \
    "  --no-cache             neither read nor write the result cache\n"

/* --flink of the commands whose pairs streamex starts (run, worker, exec,
 * doctor; runtime's is in cli/pairopts.h). */
#define SX_FLINK_OPTION_HELP                                                             \
    "  --flink X.Y            the engine: Flink X.Y as installed by\n"                   \
    "                         scripts/setup-runtime.sh --flink X.Y (default: the\n"      \
    "                         default engine; streamex --version lists them)\n"

#define SX_SLOTS_OPTION_HELP                                                             \
    "  --slots N              tasks a worker runs at once on its pair (default 4; its\n" \
    "                         Flink gets at least N TaskManager slots, an existing\n"    \
    "                         one with fewer caps it)\n"

#define SX_RUN_EXIT_HELP                                                                 \
    "Exit status: 0 every task settled and OUT written; 3 the same, but some tasks\n"    \
    "ended infra_error (the last line says how many: rerun them with --resume\n"         \
    "--rerun infra_error); 1 stopped before the end (resumable: Ctrl-C once a task\n"    \
    "is settled, or a result that could not be stored, e.g. a full disk); 2 bad\n"       \
    "usage or a fatal error; 128+N stopped by signal N before any task was settled\n"    \
    "(a pair's start included). That wins over a fatal error, a fatal error over\n"      \
    "a stop, a stop over infra_error.\n"

#define SX_RUN_OPTIONS_HELP                                                              \
    "  --bench BENCH          the benchmark folder\n"                                    \
    "  --method NAME=PREDS    a method and its predictions (JSONL); repeatable\n"        \
    "  --output OUT           where results go (OUT/NAME/..., OUT/summary.json)\n"       \
    "  --shard-size N         tasks per shard (default 4)\n"                             \
    "  --heartbeat-ms MS      heartbeat interval (default 1000)\n"                       \
    "  --dead-after-ms MS     a silent worker is dead after this (default 5 beats)\n"    \
    "  --retries N            attempts for infra_error (default 3)\n"                    \
    "  --resume               continue the run journaled in OUT/journal.jsonl\n"         \
    "  --rerun S[,S...]       with --resume: execute again the settled tasks of these\n" \
    "                         statuses (e.g. infra_error,timeout); their new results\n"  \
    "                         replace the old in OUT, the journal keeps both\n"          \
    "  --tasks ID,...|@FILE   only these task IDs (FILE: one per line); every figure\n"  \
    "                         and summary.json then count that subset\n"                 \
    "  --repeat N             run each candidate N times (another worker where there\n"  \
    "                         are several, never from the result cache); a task whose\n" \
    "                         final relations differ is \"stable\": false, the other\n"  \
    "                         runs' CSVs kept as csv/ID.runK.csv; verdicts: run 1's\n"   \
    "                         (not with several samples per task)\n"                     \
    "  --max-samples N        sample numbers of predictions must be below N (default\n"  \
    "                         100); each (task, sample) is executed and scored\n"        \
    "  --shard I/N            only tasks whose position modulo N is I (CI matrices;\n"   \
    "                         combine the outputs with 'streamex merge')\n"              \
    "  --simulate SPEC        workers simulate execution (tests), e.g. delay_ms=20\n"    \
    "  --profile P            comparison profile (spider2-lite-2025-11 default)\n"       \
    "  --progress-ms MS       progress every MS (default 500 on a terminal, 5000 off\n"  \
    "                         one; the coordinator's 2000)\n"                            \
    "  --allow-mixed-engines  let workers of different engines (--flink) into one\n"     \
    "                         run; refused by default: a mixed EX describes no "         \
    "engine\n" SX_BOOTSTRAP_OPTIONS_HELP

typedef struct {
    const char *bench;
    sx_method_arg_t *methods;
    size_t method_count;
    const char *output;
    size_t shard_size;
    int heartbeat_ms;
    int dead_after_ms;
    int retries;
    int progress_ms; /* 0: the command's default */
    bool resume;
    bool rerun[SX_STATUS_COUNT];
    char **tasks; /* --tasks, heap copies */
    size_t task_count;
    size_t subset_index, subset_count;
    const char *simulate;
    sx_profile_t profile;
    int repeat;        /* --repeat N */
    int max_samples;   /* --max-samples N (0: the default) */
    const char *cache; /* --cache DIR */
    bool no_cache;     /* --no-cache */
    /* --bootstrap, --seed: a command starts from SX_BOOTSTRAP_DEFAULT ({0}: no
     * intervals) */
    sx_bootstrap_t bootstrap;
    bool allow_mixed_engines; /* --allow-mixed-engines */
    /* filled by sx_runopts_config */
    const char **names, **files;
} sx_runopts_t;

/* Handles one getopt result: 1 when it was a shared option, 0 when it is
 * the command's own, -1 on a bad value (err says why). */
int sx_runopts_apply(sx_runopts_t *opts, int c, const char *arg, sx_error_t *err);
/* Checks that bench, methods and output are there and fills the
 * coordinator config (which points into opts). */
int sx_runopts_config(sx_runopts_t *opts, sx_coordinator_config_t *config,
                      sx_error_t *err);
void sx_runopts_free(sx_runopts_t *opts);

/* The result cache folder the options ask for, into dir: --cache DIR;
 * none with --no-cache or, unless --cache, with --simulate; else
 * $SX_CACHE_DIR (empty or "off": none), $XDG_CACHE_HOME/streamex or
 * $HOME/.cache/streamex. Returns dir, or NULL for no cache. */
const char *sx_runopts_cache_dir(const sx_runopts_t *opts, char *dir, size_t size);

/* `streamex run`'s pipeline in this process (cmd_run.c): a coordinator on a
 * loopback port and `workers` local workers, worker W on pair first_index+W
 * (or simulated), for the options in opts. quiet: no progress, EX lines or
 * table on stdout (`doctor --bench` reads OUT instead). Returns the exit
 * status (sx_run_exit_code). */
typedef struct {
    long workers, capacity, first_index;
    long slots;        /* tasks each worker runs at once */
    const char *flink; /* the workers' engine (--flink X.Y), NULL the default */
    bool quiet;
    const char *command; /* summary.json's "run" command (NULL: "run") */
} sx_local_run_t;
int sx_run_local(sx_runopts_t *opts, const sx_local_run_t *args, sx_error_t *err);

/* The exit status of run, coordinator and worker from what their loop
 * returned (0 done, 1 stopped, -1 fatal): for a finished run, 3 when
 * infra_errors tasks ended infra_error (the infrastructure failed them, not
 * the method), else 0; after a signal with nothing settled, 128 + the
 * signal (130 for Ctrl-C, 143 for SIGTERM), even when it cut a pair's start
 * short as an error; else 2 for a fatal error, 1 (resumable) for a stop. */
int sx_run_exit_code(int rc, size_t settled, size_t infra_errors);

/* The coordinator's progress callback: on a terminal, one line redrawn in
 * place (done/total, EX so far, failures, workers, ETA); otherwise the JSON
 * line itself, on stdout. arg unused. */
void sx_progress_print(const char *json, void *arg);
/* Ends the redrawn line on a terminal. */
void sx_progress_end(void);
/* On a terminal, after a complete run: one row per method from
 * OUT/summary.json (EX, strict EX, each with its 95 % interval when
 * summary.json has it, the count of each status that occurred),
 * the wall time and the path of OUT/report.html. Off a terminal, nothing:
 * the "NAME: EX = ..." lines stay the machine-readable summary. */
void sx_run_table_print(const char *out_dir);

#endif
