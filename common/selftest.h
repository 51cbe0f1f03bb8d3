/* selftest.h: the check used by every module's sx_NAME_test(). Unlike
 * assert() it is never compiled out (release builds define NDEBUG) and it
 * names the file and line of the failed expectation. */
#ifndef SX_SELFTEST_H
#define SX_SELFTEST_H

#include <stdio.h>
#include <stdlib.h>

#define SX_CHECK(expr)                                                                   \
    do {                                                                                 \
        if (!(expr)) {                                                                   \
            fprintf(stderr, "%s:%d: self-test failed: %s\n", __FILE__, __LINE__, #expr); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

#endif
