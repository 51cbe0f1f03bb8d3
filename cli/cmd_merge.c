/* cmd_merge.c: `streamex merge --bench BENCH OUT1 OUT2 ... --output OUT`,
 * the outputs of `--shard I/N` runs combined into one (coordinator/merge.h). */
#include "cli/commands.h"
#include "cli/ending.h"
#include "cli/options.h"
#include "common/files.h"
#include "common/log.h"
#include "coordinator/merge.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char s_usage[] =
    "usage: streamex merge --bench BENCH OUT1 OUT2 ... --output OUT [--allow-subset]\n"
    "                      [--bootstrap B] [--seed S] [--allow-mixed-engines]\n"
    "\n"
    "Merges the outputs of 'streamex run --shard I/N' (or coordinator) runs into\n"
    "OUT: every method, every task ID of BENCH/task_ids.txt exactly once. A task\n"
    "in two inputs with different verdicts is refused; a task in no input is\n"
    "reported on stderr and scores 0. The output of a --tasks run (a subset of\n"
    "task IDs, marked in its summary.json) is refused unless --allow-subset;\n"
    "outputs computed on different engines (summary.json's run.engine) are\n"
    "refused unless --allow-mixed-engines. OUT/summary.json's intervals and\n"
    "comparisons are computed over the merged results.\n"
    "\n" SX_BOOTSTRAP_OPTIONS_HELP "\n"
    "Exit status: 0 merged and complete, 1 merged with missing tasks, 2 refused\n"
    "or bad usage.\n";

int sx_cmd_merge(int argc, char **argv)
{
    sx_log_set_component("merge");
    static const struct option longs[] = {{"bench", required_argument, NULL, 'b'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"allow-subset", no_argument, NULL, 'a'},
                                          {"allow-mixed-engines", no_argument, NULL, 'e'},
                                          {"help", no_argument, NULL, 'h'},
                                          SX_BOOTSTRAP_LONGOPTS,
                                          {NULL, 0, NULL, 0}};
    const char *bench = NULL, *output = NULL;
    unsigned allow = 0;
    sx_bootstrap_t bootstrap = SX_BOOTSTRAP_DEFAULT;
    sx_error_t err;
    sx_error_clear(&err);
    int c, taken;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if ((taken = sx_bootstrap_option(c, optarg, &bootstrap, &err)) < 0)
            return sx_usage_error("merge", s_usage, "%s", err.msg);
        else if (taken)
            continue;
        else if (c == 'b')
            bench = optarg;
        else if (c == 'o')
            output = optarg;
        else if (c == 'a')
            allow |= SX_MERGE_ALLOW_SUBSET;
        else if (c == 'e')
            allow |= SX_MERGE_ALLOW_MIXED_ENGINES;
        else if (c == 'h') {
            fputs(s_usage, stdout);
            return 0;
        } else {
            return sx_option_error("merge", c, argv, s_usage);
        }
    }
    if (!bench || !output || optind >= argc)
        return sx_usage_error("merge", s_usage,
                              "--bench, --output and at least one input are required");
    sx_merge_report_t report;
    if (sx_output_path_check(output, &err) != 0) {
        fprintf(stderr, "streamex merge: %s\n", err.msg);
        return 2;
    }
    if (sx_merge(bench, (const char *const *)argv + optind, (size_t)(argc - optind),
                 output, allow, &bootstrap, &report, &err) != 0) {
        fprintf(stderr, "streamex merge: %s\n", err.msg);
        return 2;
    }
    printf("merged %zu method(s) x %zu tasks into %s; %zu missing (scored 0)\n",
           report.methods, report.tasks, output, report.missing);
    int code = report.missing ? 1 : 0;
    sx_ending_print(stdout, output, code,
                    "merged, but some tasks were in no input and score 0 (named above)");
    return code;
}
