/* digest.c: content hashes and input fingerprints (see digest.h), on CZMQ's
 * zdigest (SHA-1). */
#include "common/digest.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <czmq.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct _sx_digest_t {
    zdigest_t *digest;
};

static void digest_hex(zdigest_t *digest, char hex[41])
{
    const byte *raw = zdigest_data(digest);
    for (size_t i = 0; i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
}

void sx_hash_bytes(const void *data, size_t size, char hex[41])
{
    zdigest_t *digest = zdigest_new();
    zdigest_update(digest, (const byte *)data, size);
    digest_hex(digest, hex);
    zdigest_destroy(&digest);
}

int sx_hash_file(const char *path, char hex[41], uint64_t *size_p, sx_error_t *err)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    zdigest_t *digest = zdigest_new();
    char buffer[65536];
    size_t got = 0;
    uint64_t total = 0;
    while ((got = fread(buffer, 1, sizeof buffer, in)) > 0) {
        zdigest_update(digest, (const byte *)buffer, got);
        total += got;
    }
    int rc = ferror(in) ? sx_error_set(err, "%s: read error", path) : 0;
    fclose(in);
    digest_hex(digest, hex);
    zdigest_destroy(&digest);
    if (size_p)
        *size_p = total;
    return rc;
}

sx_digest_t *sx_digest_new(void)
{
    sx_digest_t *self = sx_alloc(1, sizeof *self);
    self->digest = zdigest_new();
    return self;
}

void sx_digest_destroy(sx_digest_t **self_p)
{
    sx_digest_t *self = *self_p;
    if (!self)
        return;
    zdigest_destroy(&self->digest);
    free(self);
    *self_p = NULL;
}

static void add(sx_digest_t *self, const void *data, size_t size)
{
    zdigest_update(self->digest, (const byte *)data, size);
}

void sx_digest_line(sx_digest_t *self, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = zsys_vprintf(format, args);
    va_end(args);
    add(self, text, strlen(text));
    add(self, "\n", 1);
    zstr_free(&text);
}

void sx_digest_sql(sx_digest_t *self, const char *sql)
{
    sx_digest_line(self, "%s", sql ? "sql" : "no prediction");
    if (sql)
        add(self, sql, strlen(sql) + 1);
}

void sx_digest_file(sx_digest_t *self, const char *hash, const char *path)
{
    sx_digest_line(self, "%s %s", hash, path);
}

void sx_digest_hex(sx_digest_t *self, char hex[41])
{
    digest_hex(self->digest, hex);
}

/* ---- self-test --------------------------------------------------------- */

/* The fingerprint of one fixed set of inputs, one of them changed by `vary`. */
static void fingerprint(int vary, char hex[41])
{
    sx_digest_t *d = sx_digest_new();
    sx_digest_line(d, "streamex %s", vary == 1 ? "0.2" : "0.1");
    sx_digest_sql(d, vary == 2 ? NULL : vary == 3 ? "SELECT 2" : "SELECT 1");
    sx_digest_file(d, vary == 4 ? "b" : "a", vary == 5 ? "tasks/t/y" : "tasks/t/x");
    sx_digest_hex(d, hex);
    sx_digest_destroy(&d);
    sx_digest_destroy(&d); /* harmless */
}

void sx_digest_test(bool verbose)
{
    (void)verbose;
    char hex[41], other[41];
    sx_hash_bytes("abc", 3, hex);
    SX_CHECK(strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
    /* The layout is fixed, since journals keep fingerprints of it: lines,
     * then the SQL with its NUL, then "HASH PATH" lines. */
    const char stream[] = "streamex 0.1\nsql\nSELECT 1\0a tasks/t/x\n";
    sx_hash_bytes(stream, sizeof stream - 1, other);
    fingerprint(0, hex);
    SX_CHECK(strcmp(hex, other) == 0);
    for (int vary = 1; vary <= 5; vary++) {
        fingerprint(vary, other);
        SX_CHECK(strcmp(hex, other) != 0);
    }
    /* The NUL after the SQL: a candidate cannot pass for the lines after it. */
    sx_digest_t *d = sx_digest_new();
    sx_digest_sql(d, "SELECT 1");
    sx_digest_line(d, "x");
    sx_digest_hex(d, hex);
    sx_digest_destroy(&d);
    d = sx_digest_new();
    sx_digest_sql(d, "SELECT 1\nx");
    sx_digest_hex(d, other);
    sx_digest_destroy(&d);
    SX_CHECK(strcmp(hex, other) != 0);
    char dir[] = "/tmp/sx-digest-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *f = fopen(path, "wb");
    SX_CHECK(f && fwrite("abc", 1, 3, f) == 3 && fclose(f) == 0);
    uint64_t size = 0;
    SX_CHECK(sx_hash_file(path, other, &size, NULL) == 0 && size == 3);
    sx_hash_bytes("abc", 3, hex);
    SX_CHECK(strcmp(hex, other) == 0);
    unlink(path);
    sx_error_t err;
    SX_CHECK(sx_hash_file(path, other, NULL, &err) == -1 &&
             strstr(err.msg, "cannot open"));
    rmdir(dir);
}
