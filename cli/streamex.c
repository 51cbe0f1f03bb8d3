/* streamex.c: the entry point. Finds the subcommand and hands it the rest of
 * the command line; global flags (-v, -q, --version, --help) are read here. */
#include "cli/commands.h"
#include "common/crash.h"
#include "common/install.h"
#include "common/log.h"
#include "common/signals.h"
#include "worker/pair/engine.h"

#include <czmq.h>

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t s_commands[] = {
    {"check", sx_cmd_check, "validate a benchmark folder and predictions files"},
    {"score", sx_cmd_score,
     "score existing final CSVs against gold (no Kafka, no Flink)"},
    {"run", sx_cmd_run, "the whole pipeline on this machine: coordinator + N workers"},
    {"coordinator", sx_cmd_coordinator, "shard tasks to remote workers over ZeroMQ"},
    {"worker", sx_cmd_worker,
     "execute shards for a coordinator on a local Kafka + Flink"},
    {"doctor", sx_cmd_doctor,
     "find tasks whose gold differs from Flink BATCH (--oracle batch)"},
    {"exec", sx_cmd_exec, "execute one task on a local pair and print its verdict"},
    {"runtime", sx_cmd_runtime, "start, inspect or stop one worker's Kafka + Flink pair"},
    {"merge", sx_cmd_merge, "merge the outputs of --shard runs into one"},
    {"report", sx_cmd_report, "write OUT/report.html again from a run's outputs"},
    {"compare", sx_cmd_compare,
     "compare two outputs of one bench task by task, with paired statistics"},
    {"keygen", sx_cmd_keygen, "make a CURVE certificate for a coordinator or worker"},
};
#define COMMAND_COUNT (sizeof s_commands / sizeof s_commands[0])

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: streamex [-v|-q] COMMAND [OPTIONS]\n\n"
            "Runs the StreamSQLBench execution-accuracy protocol: candidate Flink SQL\n"
            "replayed through real Kafka and Flink, final relations scored with the\n"
            "Spider 2.0 comparison.\n\ncommands:\n");
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-12s %s\n", s_commands[i].name, s_commands[i].summary);
    fprintf(out, "\n'streamex COMMAND --help' describes one command.\n"
                 "-v logs debug lines, -q only errors; logs go to stderr.\n");
}

/* streamex's version, the Flink and Kafka versions its runtime is pinned to
 * (runtime/versions.env of the source tree or of the install), then every
 * engine installed in the runtime folder and the --flink that picks it. */
static int print_version(void)
{
    printf("streamex %s\n", SX_VERSION);
    sx_install_versions_t v;
    sx_error_t err;
    if (sx_install_pinned_versions(&v, &err) != 0) {
        fprintf(stderr, "streamex: %s\n", err.msg);
        return 2;
    }
    printf("Flink %s (Kafka connector %s)\nKafka %s\n", v.flink,
           v.connector[0] ? v.connector : "unknown", v.kafka);
    char *dir = sx_install_runtime_dir(NULL);
    sx_engine_t engines[SX_ENGINE_MAX];
    size_t count = sx_engine_list(dir, engines, SX_ENGINE_MAX);
    printf("engines installed in %s:%s\n", dir,
           count ? "" : " none (scripts/setup-runtime.sh [--flink X.Y])");
    for (size_t i = 0; i < count; i++) {
        char label[SX_ENGINE_TEXT], series[32];
        sx_engine_label(&engines[i], label, sizeof label);
        sx_engine_series(&engines[i], series, sizeof series);
        printf("  %s (%s--flink %s)\n", label, engines[i].is_default ? "default; " : "",
               series);
    }
    free(dir);
    return 0;
}

int main(int argc, char **argv)
{
    /* Before any thread exists: every thread inherits the blocked stop
     * signals, and CZMQ's own handler (installed by zsys_init) is switched
     * off again at once. */
    sx_crash_report_install();
    if (sx_signals_start() != 0) {
        fprintf(stderr, "streamex: cannot set up signal handling\n");
        return 2;
    }
    /* Blocks of 1 MB and more are mapped and given back when freed: the
     * default threshold rises up to 32 MB as such blocks are freed, and
     * the large arrays of one step (a Kafka read's, a CSV's columns) then
     * stay in the heap under the next step's. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    zsys_init();
    zsys_handler_set(NULL);
    /* CZMQ's own lines (zauth's handshake verdicts among them) join ours on
     * stderr: stdout is for machine-readable output only. */
    zsys_set_logstream(stderr);
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        const char *flag = argv[first];
        if (strcmp(flag, "-v") == 0)
            sx_log_set_level(SX_LOG_DEBUG);
        else if (strcmp(flag, "-q") == 0)
            sx_log_set_level(SX_LOG_ERROR);
        else if (strcmp(flag, "--version") == 0) {
            return print_version();
        } else if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            print_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "streamex: unknown option '%s'\n", flag);
            print_usage(stderr);
            return 2;
        }
    }
    if (first >= argc) {
        print_usage(stderr);
        return 2;
    }
    /* Every command says what is wrong with its options itself, once, in its
     * own words (cli/options.h): getopt's messages would say it twice. */
    opterr = 0;
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[first], s_commands[i].name) == 0)
            return s_commands[i].run(argc - first, argv + first);
    fprintf(stderr, "streamex: unknown command '%s'\n", argv[first]);
    print_usage(stderr);
    return 2;
}
