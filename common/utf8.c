/* utf8.c: the length of a well-formed UTF-8 sequence (utf8.h). */
#include "common/utf8.h"

#include "common/selftest.h"

#include <stdint.h>

size_t sx_utf8_length(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    /* Overlong forms, surrogates and code points above U+10FFFF: the lead
     * bytes allowed above leave these four second-byte ranges. */
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
        (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

/* ---- self-test --------------------------------------------------------- */

/* The test's own encoder, written from the table of RFC 3629 section 3
 * rather than from the checks above: out gets the shortest form of the code
 * point, its length is returned. */
static size_t encode(uint32_t point, unsigned char out[4])
{
    if (point < 0x80) {
        out[0] = (unsigned char)point;
        return 1;
    }
    if (point < 0x800) {
        out[0] = (unsigned char)(0xC0 | point >> 6);
        out[1] = (unsigned char)(0x80 | (point & 0x3F));
        return 2;
    }
    if (point < 0x10000) {
        out[0] = (unsigned char)(0xE0 | point >> 12);
        out[1] = (unsigned char)(0x80 | (point >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (point & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | point >> 18);
    out[1] = (unsigned char)(0x80 | (point >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (point >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (point & 0x3F));
    return 4;
}

/* Every code point, encoded: accepted at its length unless a surrogate, and
 * refused when cut short. */
static void test_every_code_point(void)
{
    unsigned char bytes[4];
    for (uint32_t point = 0; point <= 0x10FFFF; point++) {
        size_t n = encode(point, bytes);
        bool surrogate = point >= 0xD800 && point <= 0xDFFF;
        SX_CHECK(sx_utf8_length(bytes, n) == (surrogate ? 0 : n));
        if (n > 1)
            SX_CHECK(sx_utf8_length(bytes, n - 1) == 0);
    }
}

/* Every two-byte string: accepted exactly when it is the shortest form of
 * a code point from U+0080 to U+07FF; overlong forms of longer sequences,
 * stray continuation bytes and leads above U+10FFFF are refused. */
static void test_every_pair(void)
{
    for (unsigned a = 0x80; a <= 0xFF; a++)
        for (unsigned b = 0; b <= 0xFF; b++) {
            unsigned char s[2] = {(unsigned char)a, (unsigned char)b};
            uint32_t point = (a & 0x1F) << 6 | (b & 0x3F);
            bool shortest = a >= 0xC0 && a <= 0xDF && (b & 0xC0) == 0x80 && point >= 0x80;
            SX_CHECK(sx_utf8_length(s, 2) == (shortest ? 2 : 0));
        }
    const unsigned char overlong3[] = {0xE0, 0x9F, 0xBF};       /* U+07FF in three */
    const unsigned char overlong4[] = {0xF0, 0x8F, 0xBF, 0xBF}; /* U+FFFF in four */
    const unsigned char above[] = {0xF4, 0x90, 0x80, 0x80};     /* U+110000 */
    SX_CHECK(sx_utf8_length(overlong3, 3) == 0);
    SX_CHECK(sx_utf8_length(overlong4, 4) == 0);
    SX_CHECK(sx_utf8_length(above, 4) == 0);
}

void sx_utf8_test(bool verbose)
{
    test_every_code_point();
    test_every_pair();
    if (verbose)
        fprintf(stderr, "utf8: ok\n");
}
