/* logfile.h: what a test's code logs, caught in a file for a while. sx_log
 * writes to stderr; between sx_logfile_start and sx_logfile_stop stderr is
 * that file and the log level the test's, so the test can read exactly what
 * a user would have seen (a warning, or none). */
#ifndef SX_LOGFILE_H
#define SX_LOGFILE_H

#include "common/log.h"

#include <limits.h>

typedef struct {
    char path[PATH_MAX];
    int saved_stderr;
    sx_log_level_t saved_level;
} sx_logfile_t;

/* stderr goes to `path` (emptied first), at log level `level`. */
void sx_logfile_start(sx_logfile_t *self, const char *path, sx_log_level_t level);
/* stderr and the log level as they were before. */
void sx_logfile_stop(sx_logfile_t *self);
/* The messages caught (after sx_logfile_stop), each without its time and
 * level, one a line: "" when nothing was logged. The caller frees. */
char *sx_logfile_messages(const sx_logfile_t *self);

#endif
