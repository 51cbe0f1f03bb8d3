/* jsonout.c: sx_json_dumps (see jsonout.h). Jansson writes the document with
 * 17 significant digits, which every double survives; each real of that text
 * (a number with a '.' or an exponent, outside strings) is then written
 * again in its shortest round-trip form. */
#include "common/results/jsonout.h"

#include "common/files.h"
#include "common/selftest.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plain decimals with the fewest places that read back (1e-4 <= |v| < 1e16),
 * else the fewest significant digits in exponent form. */
void sx_json_real_text(double value, char *out, size_t size)
{
    double magnitude = fabs(value);
    if (magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e16)) {
        for (int places = 1; places <= 25; places++) {
            snprintf(out, size, "%.*f", places, value);
            if (strtod(out, NULL) == value)
                break;
        }
        /* %.Nf keeps N places: drop the zeros that do not change the value. */
        size_t end = strlen(out);
        while (end > 2 && out[end - 1] == '0' && out[end - 2] != '.')
            out[--end] = '\0';
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, size, "%.*g", digits, value);
        if (strtod(out, NULL) == value)
            return;
    }
}

/* Length of the string literal starting at text (its quotes included). */
static size_t string_length(const char *text)
{
    size_t i = 1;
    while (text[i] && text[i] != '"')
        i += text[i] == '\\' && text[i + 1] ? 2 : 1;
    return text[i] ? i + 1 : i;
}

static size_t number_length(const char *text, bool *real)
{
    size_t i = 0;
    *real = false;
    while (text[i] && strchr("+-0123456789.eE", text[i])) {
        *real = *real || strchr(".eE", text[i]) != NULL;
        i++;
    }
    return i;
}

char *sx_json_dumps(const json_t *json, size_t flags)
{
    char *text = json_dumps(json, flags | JSON_REAL_PRECISION(17));
    if (!text)
        return NULL;
    char *out = NULL;
    size_t out_size = 0;
    FILE *stream = open_memstream(&out, &out_size);
    if (!stream)
        return free(text), NULL;
    for (const char *p = text; *p;) {
        bool real = false;
        size_t length = *p == '"'                   ? string_length(p)
                        : strchr("-0123456789", *p) ? number_length(p, &real)
                                                    : 1;
        if (real) {
            char shortest[64];
            sx_json_real_text(strtod(p, NULL), shortest, sizeof shortest);
            fputs(shortest, stream);
        } else {
            fwrite(p, 1, length, stream);
        }
        p += length;
    }
    free(text);
    if (fclose(stream) != 0)
        return free(out), NULL;
    return out;
}

/* ---- self-test -------------------------------------------------------- */

static void check_real(double value, const char *want)
{
    char text[64];
    sx_json_real_text(value, text, sizeof text);
    if (strcmp(text, want) != 0)
        fprintf(stderr, "sx_json_real_text(%.17g) = %s, want %s\n", value, text, want);
    SX_CHECK(strcmp(text, want) == 0);
}

/* The text of json and a newline (its length in *size), path's folders
 * made; NULL with err set (naming path) when either cannot be. */
static char *file_text(const char *path, const json_t *json, size_t flags, size_t *size,
                       sx_error_t *err)
{
    char *text = sx_json_dumps(json, flags);
    if (!text)
        return sx_error_set(err, "%s: out of memory", path), NULL;
    if (sx_mkdirs_for(path, err) != 0) {
        free(text);
        return NULL;
    }
    *size = strlen(text) + 1;
    text[*size - 1] = '\n'; /* json_dumps leaves room: replace the NUL */
    return text;
}

int sx_json_write_file(const char *path, const json_t *json, size_t flags,
                       sx_error_t *err)
{
    size_t size = 0;
    char *text = file_text(path, json, flags, &size, err);
    int rc = text ? sx_file_write_atomic(path, text, size, err) : -1;
    free(text);
    return rc;
}

int sx_json_batch_add(sx_file_batch_t *batch, const char *path, const json_t *json,
                      size_t flags, sx_error_t *err)
{
    size_t size = 0;
    char *text = file_text(path, json, flags, &size, err);
    int rc = text ? sx_file_batch_add(batch, path, text, size, err) : -1;
    free(text);
    return rc;
}

void sx_jsonout_test(bool verbose)
{
    if (verbose)
        printf(" * sx_jsonout: ");
    /* A file: the text, a newline, its folder made; a path that cannot be
     * made is an error naming it. */
    char dir[] = "/tmp/sx-jsonout-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/a/b.json", dir);
    json_t *o = json_pack("{sf}", "ex", 0.5);
    sx_error_t err;
    SX_CHECK(sx_json_write_file(path, o, JSON_COMPACT, &err) == 0);
    size_t size = 0;
    char *written = sx_file_read(path, 1024, &size, &err);
    SX_CHECK(written && strcmp(written, "{\"ex\":0.5}\n") == 0);
    free(written);
    snprintf(path, sizeof path, "%s/a/b.json/c.json", dir);
    SX_CHECK(sx_json_write_file(path, o, JSON_COMPACT, &err) == -1 &&
             strstr(err.msg, path));
    json_decref(o);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
    /* Python's repr of the same doubles. */
    check_real(17.0 / 30, "0.5666666666666667");
    check_real(1.0 / 6, "0.16666666666666666");
    check_real(14.0 / 15, "0.9333333333333333");
    check_real(0.5, "0.5");
    check_real(1.0, "1.0");
    check_real(0.0, "0.0");
    check_real(300.0, "300.0");
    check_real(12.345, "12.345");
    check_real(0.1, "0.1");
    check_real(-2.5, "-2.5");
    check_real(1e-5, "1e-05");
    check_real(1e300, "1e+300");

    /* One document: each real its own shortest form; integers and strings
     * that look like numbers untouched. */
    json_t *doc = json_pack("{s:f, s:f, s:i, s:s, s:[f, s], s:f}", "a", 1.0 / 6, "b",
                            17.0 / 30, "n", 42, "s", "0.56666666666666665 \"1.50\"",
                            "list", 300.0, "x\\\"2.50", "t", 12.345);
    char *text = sx_json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    SX_CHECK(text);
    SX_CHECK(strcmp(text, "{\"a\":0.16666666666666666,\"b\":0.5666666666666667,\"n\":42,"
                          "\"s\":\"0.56666666666666665 \\\"1.50\\\"\","
                          "\"list\":[300.0,\"x\\\\\\\"2.50\"],\"t\":12.345}") == 0);
    json_t *back = json_loads(text, 0, NULL);
    SX_CHECK(back && json_equal(back, doc));
    json_decref(back);
    free(text);
    json_decref(doc);
    if (verbose)
        printf("OK\n");
}
