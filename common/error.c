/* error.c: the error message buffer every fallible function fills (see error.h). */
#include "common/error.h"

#include "common/selftest.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sx_error_set(sx_error_t *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void sx_error_prefix(sx_error_t *err, const char *fmt, ...)
{
    if (!err)
        return;
    char context[SX_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    /* Build "context: message" then cut it to the buffer. */
    char joined[2 * SX_ERROR_MAX + 2];
    snprintf(joined, sizeof joined, "%s: %s", context, err->msg);
    snprintf(err->msg, sizeof err->msg, "%.*s", SX_ERROR_MAX - 1, joined);
}

void sx_error_clear(sx_error_t *err)
{
    if (err)
        err->msg[0] = '\0';
}

bool sx_error_is_set(const sx_error_t *err)
{
    return err && err->msg[0] != '\0';
}

void sx_error_test(bool verbose)
{
    (void)verbose;
    sx_error_t err;
    sx_error_clear(&err);
    SX_CHECK(!sx_error_is_set(&err));
    SX_CHECK(sx_error_set(&err, "column %s missing", "price") == -1);
    SX_CHECK(strcmp(err.msg, "column price missing") == 0);
    sx_error_prefix(&err, "%s:%d", "bids.csv", 3);
    SX_CHECK(strcmp(err.msg, "bids.csv:3: column price missing") == 0);
    SX_CHECK(sx_error_set(NULL, "ignored") == -1);
    /* A long message is cut, never overflows. */
    char big[SX_ERROR_MAX * 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sx_error_set(&err, "%s", big);
    SX_CHECK(strlen(err.msg) == SX_ERROR_MAX - 1);
}
