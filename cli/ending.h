/* ending.h: the last lines of every command that writes OUT (run,
 * coordinator, score, merge), on a terminal and off one alike: where the
 * outputs are, each method's EX line as summary.json holds it, report.html's
 * path and how to open it, and what a non-zero exit status means (exit 3's
 * count of infra_error tasks is the very last line). A newcomer
 * who piped the run into a log still learns where to look. */
#ifndef SX_ENDING_H
#define SX_ENDING_H

#include <stdio.h>

/* Prints the ending of a command whose outputs are in out_dir and that
 * exits with code; meaning says what code means (NULL when it is 0). The
 * EX lines and the report line are left out when OUT has no summary.json
 * or no report.html (a run stopped before writing them). */
void sx_ending_print(FILE *out, const char *out_dir, int code, const char *meaning);

/* What `run` and `coordinator` exit statuses mean (SX_RUN_EXIT_HELP), for
 * sx_ending_print; NULL for 0. */
const char *sx_ending_run_meaning(int code);

#endif
