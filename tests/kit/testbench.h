/* testbench.h: a throw-away benchmark folder for the self-tests of the
 * distributed machinery: N tasks t001..tN with a task.json, one source CSV,
 * gold and evaluation, plus a predictions file whose SQL carries the
 * simulated executor's markers (see worker/simexec.h). Not for real runs. */
#ifndef SX_TESTBENCH_H
#define SX_TESTBENCH_H

#include <stddef.h>

/* Makes the folder under /tmp and returns its path (heap). markers[i] is
 * appended to task i's SQL; NULL or "" = plain, "-" = no prediction line.
 * The predictions are DIR/preds.jsonl. */
char *sx_testbench_make(size_t tasks, const char *const *markers);
/* Removes the folder and frees the path. */
void sx_testbench_remove(char **dir_p);
/* Lines of a file, -1 when it cannot be read. */
long sx_testbench_count_lines(const char *path);

#endif
