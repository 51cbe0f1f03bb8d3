/* pyrepr.c: Python's float repr and math.isclose (see pyrepr.h).
 * repr finds the fewest significant digits that read back exactly: the
 * digit count is searched with printf's correctly rounded %.*e and strtod
 * (round-tripping is monotone in the digit count, so a binary search
 * works). Where a power of two has a narrower gap below it than above, the
 * nearest short string may fail while its upper neighbour reads back; that
 * neighbour is tried too, as David Gay's shortest mode (Python's) would
 * find it. The digits are then laid out as
 * Python does: positional for decimal exponents -4 <= e < 16, else d[.ddd]e[+-]XX. */
#include "common/ex/pyrepr.h"

#include "common/selftest.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Significant digits of x with `count` digits, correctly rounded, and the
 * decimal exponent of the first digit. */
static void digits_of(double x, int count, char *digits, int *exponent)
{
    char text[40];
    snprintf(text, sizeof text, "%.*e", count - 1, x);
    size_t n = 0;
    const char *p = text;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    digits[n] = '\0';
    *exponent = atoi(p + 1);
}

static bool reads_back(const char *digits, int exponent, double x)
{
    char text[48];
    snprintf(text, sizeof text, "0.%se%d", digits, exponent + 1);
    return strtod(text, NULL) == x;
}

/* The next digit string of the same length above `digits`; false when all
 * digits are 9 (that neighbour has another exponent and is not shorter). */
static bool increment(char *digits)
{
    for (int i = (int)strlen(digits) - 1; i >= 0; i--) {
        if (digits[i] != '9') {
            digits[i]++;
            return true;
        }
        digits[i] = '0';
    }
    return false;
}

static void shortest_digits(double x, char *digits, int *exponent)
{
    /* Fast path for normal numbers: when 15 digits read back, the shortest
     * string is those 15 digits without trailing zeros (any string that
     * reads back lies within half an ulp of x, 2^-53 relative, far inside
     * the rounding step of the 15th digit). Subnormals have wider ulps. */
    int low = 1, high = 17;
    if (x >= DBL_MIN) {
        digits_of(x, 15, digits, exponent);
        bool fifteen = reads_back(digits, *exponent, x);
        low = fifteen ? 15 : 16;
        high = fifteen ? 15 : 17;
    }
    while (low < high) {
        int mid = (low + high) / 2;
        digits_of(x, mid, digits, exponent);
        if (reads_back(digits, *exponent, x))
            high = mid;
        else
            low = mid + 1;
    }
    digits_of(x, low, digits, exponent);
    int mantissa_exp;
    if (low > 1 && frexp(x, &mantissa_exp) == 0.5) {
        char shorter[24];
        int shorter_exp;
        digits_of(x, low - 1, shorter, &shorter_exp);
        if (increment(shorter) && reads_back(shorter, shorter_exp, x)) {
            strcpy(digits, shorter);
            *exponent = shorter_exp;
        }
    }
    /* Trailing zeros are not significant in the repr. */
    size_t n = strlen(digits);
    while (n > 1 && digits[n - 1] == '0')
        digits[--n] = '\0';
}

static size_t layout(const char *digits, int exponent, bool negative, char *buf)
{
    size_t n = strlen(digits), len = 0;
    if (negative)
        buf[len++] = '-';
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            buf[len++] = '0';
            buf[len++] = '.';
            for (int i = -1; i > exponent; i--)
                buf[len++] = '0';
            memcpy(buf + len, digits, n);
            len += n;
        } else {
            for (int i = 0; i <= exponent; i++)
                buf[len++] = (size_t)i < n ? digits[i] : '0';
            buf[len++] = '.';
            if ((size_t)exponent + 1 < n) {
                memcpy(buf + len, digits + exponent + 1, n - (size_t)exponent - 1);
                len += n - (size_t)exponent - 1;
            } else {
                buf[len++] = '0';
            }
        }
        buf[len] = '\0';
        return len;
    }
    buf[len++] = digits[0];
    if (n > 1) {
        buf[len++] = '.';
        memcpy(buf + len, digits + 1, n - 1);
        len += n - 1;
    }
    len += (size_t)sprintf(buf + len, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
    return len;
}

size_t sx_py_float_repr(double x, char *buf)
{
    if (isnan(x))
        return (size_t)sprintf(buf, "nan");
    if (isinf(x))
        return (size_t)sprintf(buf, x < 0 ? "-inf" : "inf");
    if (x == 0)
        return (size_t)sprintf(buf, signbit(x) ? "-0.0" : "0.0");
    char digits[24];
    int exponent;
    shortest_digits(fabs(x), digits, &exponent);
    return layout(digits, exponent, x < 0, buf);
}

bool sx_py_isclose(double a, double b, double abs_tol)
{
    const double rel_tol = 1e-09;
    if (a == b)
        return true;
    if (isinf(a) || isinf(b))
        return false;
    double diff = fabs(b - a);
    return diff <= fabs(rel_tol * b) || diff <= fabs(rel_tol * a) || diff <= abs_tol;
}

void sx_pyrepr_test(bool verbose)
{
    (void)verbose;
    static const struct {
        double x;
        const char *repr;
    } cases[] = {
        {1.0, "1.0"},
        {0.1, "0.1"},
        {1e-05, "1e-05"},
        {0.0001, "0.0001"},
        {1e16, "1e+16"},
        {1e15, "1000000000000000.0"},
        {123456789012345.6, "123456789012345.6"},
        {1.5e16, "1.5e+16"},
        {-2.5, "-2.5"},
        {0.30000000000000004, "0.30000000000000004"},
        {9.223372036854776e18, "9.223372036854776e+18"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {2.0 / 3.0, "0.6666666666666666"},
        {100.0, "100.0"},
        {1e22, "1e+22"},
        {1e23, "1e+23"},
        {-0.0, "-0.0"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {NAN, "nan"},
        {9007199254740993.0, "9007199254740992.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[SX_PY_FLOAT_REPR_MAX];
        size_t n = sx_py_float_repr(cases[i].x, buf);
        if (strcmp(buf, cases[i].repr) != 0)
            fprintf(stderr, "repr: got %s want %s\n", buf, cases[i].repr);
        SX_CHECK(strcmp(buf, cases[i].repr) == 0 && n == strlen(buf));
    }
    SX_CHECK(sx_py_isclose(1.0, 1.009, 1e-2));
    SX_CHECK(!sx_py_isclose(1.0, 1.011, 1e-2));
    SX_CHECK(sx_py_isclose(INFINITY, INFINITY, 1e-2));
    SX_CHECK(!sx_py_isclose(INFINITY, 1e308, 1e-2));
    SX_CHECK(!sx_py_isclose(NAN, NAN, 1e-2));
    SX_CHECK(sx_py_isclose(1e12, 1e12 + 900, 1e-2)); /* relative tolerance */
}
