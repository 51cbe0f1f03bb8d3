/* selftest.h: the check used by every module's sx_NAME_test(). Unlike
 * assert() it is never compiled out (release builds define NDEBUG) and it
 * names the file and line of the failed expectation. */
#ifndef SX_SELFTEST_H
#define SX_SELFTEST_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SX_CHECK(expr)                                                                   \
    do {                                                                                 \
        if (!(expr)) {                                                                   \
            fprintf(stderr, "%s:%d: self-test failed: %s\n", __FILE__, __LINE__, #expr); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* Fills out[0..length) with bytes of `alphabet` drawn by a linear
 * congruential generator from *state: the random texts the self-tests feed
 * their parsers, the same for the same seed on every machine. */
static inline void sx_selftest_random_text(char *out, size_t length, const char *alphabet,
                                           unsigned *state)
{
    size_t size = strlen(alphabet);
    for (size_t i = 0; i < length; i++) {
        *state = *state * 1103515245u + 12345u;
        out[i] = alphabet[(*state >> 16) % size];
    }
}

#endif
