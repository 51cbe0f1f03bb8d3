/* cmd_report.c: `streamex report OUT`, OUT/report.html written again from
 * the outputs alone (common/report/report.h), e.g. after the bench was edited or
 * an older run that had no report. */
#include "cli/commands.h"
#include "cli/options.h"
#include "common/log.h"
#include "common/report/report.h"

#include <getopt.h>
#include <stdio.h>

static const char s_usage[] =
    "usage: streamex report OUT\n"
    "\n"
    "Writes OUT/report.html again from OUT/summary.json and every\n"
    "OUT/NAME/results.jsonl, with the questions, gold rows and candidate SQL of\n"
    "the bench and predictions files summary.json names, when they are still\n"
    "there. run, coordinator, score and merge write it at their end already.\n"
    "One self-contained file: open it in any browser, no network needed.\n"
    "\n"
    "Exit status: 0 written, 2 bad usage or OUT unreadable or not writable.\n";

int sx_cmd_report(int argc, char **argv)
{
    sx_log_set_component("report");
    static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        if (c == 'h') {
            fputs(s_usage, stdout);
            return 0;
        }
        return sx_option_error("report", c, argv, s_usage);
    }
    if (optind + 1 != argc)
        return sx_usage_error("report", s_usage, "one OUT folder is required");
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_report_write(argv[optind], &err) != 0) {
        fprintf(stderr, "streamex report: %s\n", err.msg);
        return 2;
    }
    printf("%s/report.html\n", argv[optind]);
    return 0;
}
