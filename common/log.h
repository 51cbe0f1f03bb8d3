/* log.h: one logging channel for the whole program, on stderr. Lines carry a
 * UTC timestamp, a level and the component ("coordinator", "worker 2", ...).
 * stdout is left to machine-readable output and progress. */
#ifndef SX_LOG_H
#define SX_LOG_H

#include <stdbool.h>

typedef enum {
    SX_LOG_DEBUG = 0,
    SX_LOG_INFO,
    SX_LOG_NOTE, /* routine, but worth a look: a task that did not match, a retry */
    SX_LOG_WARN,
    SX_LOG_ERROR,
    SX_LOG_OFF
} sx_log_level_t;

void sx_log_set_level(sx_log_level_t level);
sx_log_level_t sx_log_level(void);
/* The component name printed on every line of this process, e.g. "worker 1". */
void sx_log_set_component(const char *component);

void sx_log(sx_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define sx_debug(...) sx_log(SX_LOG_DEBUG, __VA_ARGS__)
#define sx_info(...) sx_log(SX_LOG_INFO, __VA_ARGS__)
#define sx_note(...) sx_log(SX_LOG_NOTE, __VA_ARGS__)
#define sx_warn(...) sx_log(SX_LOG_WARN, __VA_ARGS__)
#define sx_err(...) sx_log(SX_LOG_ERROR, __VA_ARGS__)

/* The live line of a terminal (`run`'s progress): drawn on stdout without a
 * newline and kept at the bottom, each log line printed above it (the live
 * line is cleared, the log line written, the live line drawn again). From
 * the first live line on, only lines of level NOTE and above are printed
 * (after sx_log_live_end too): the terminal shows the progress and what is
 * worth a look, not every finished task. Call only when stdout is a terminal.
 * sx_log_live_end ends the live line with a newline, so what follows starts on a line of
 * its own. */
void sx_log_live_set(const char *line);
void sx_log_live_end(void);

void sx_log_test(bool verbose);

#endif
