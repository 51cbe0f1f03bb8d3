/* error.h: how an error travels from where it happens to the one place that
 * reports it. A function that can fail takes an `sx_error_t *err` and returns
 * a status (or NULL); it fills err with a message a person can act on, naming
 * the file, line, task or peer. Callers add context with sx_error_prefix and
 * decide at one level what the user sees: nothing deep inside prints or exits.
 * err may be NULL when the caller does not want the message. */
#ifndef SX_ERROR_H
#define SX_ERROR_H

#include <stdbool.h>
#include <stddef.h>

#define SX_ERROR_MAX 2048

typedef struct {
    char msg[SX_ERROR_MAX];
} sx_error_t;

/* Replaces err's message (printf-style). Always returns -1, so a failing
 * function can `return sx_error_set (err, "...")`. */
int sx_error_set(sx_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts "context: " in front of err's message, e.g. the file being read. */
void sx_error_prefix(sx_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void sx_error_clear(sx_error_t *err);
bool sx_error_is_set(const sx_error_t *err);

void sx_error_test(bool verbose);

#endif
