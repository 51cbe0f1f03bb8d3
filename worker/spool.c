/* spool.c: the worker's durable outbox of unacknowledged results (see
 * spool.h): one file per key under the spool folder, written atomically, so
 * a crash leaves either the old entry, the new one, or none. */
#include "worker/spool.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"
#include "proto/proto.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUFFIX ".result"

struct _sx_spool_t {
    char *dir;
};

sx_spool_t *sx_spool_open(const char *dir, sx_error_t *err)
{
    if (sx_mkdirs(dir, err) != 0)
        return NULL;
    sx_spool_t *self = sx_alloc(1, sizeof *self);
    self->dir = sx_strdup(dir);
    return self;
}

void sx_spool_destroy(sx_spool_t **self_p)
{
    if (!*self_p)
        return;
    free((*self_p)->dir);
    free(*self_p);
    *self_p = NULL;
}

static void entry_path(const sx_spool_t *self, const char *key, char *path, size_t size)
{
    snprintf(path, size, "%s/%s" SUFFIX, self->dir, key);
}

int sx_spool_put(sx_spool_t *self, const char *key, const void *data, size_t size,
                 sx_error_t *err)
{
    if (!sx_name_is_safe(key))
        return sx_error_set(err, "spool key '%s' is not a safe file name", key);
    char path[4096];
    entry_path(self, key, path, sizeof path);
    return sx_file_write_atomic(path, data, size, err);
}

void sx_spool_remove(sx_spool_t *self, const char *key)
{
    if (!sx_name_is_safe(key))
        return;
    char path[4096];
    entry_path(self, key, path, sizeof path);
    unlink(path);
}

/* Keys in a stable order, so resends are reproducible. */
static int list_keys(const sx_spool_t *self, char ***keys_p, size_t *count_p)
{
    struct dirent **entries = NULL;
    int n = scandir(self->dir, &entries, NULL, alphasort);
    if (n < 0)
        return -1;
    char **keys = sx_alloc((size_t)n + 1, sizeof *keys);
    size_t count = 0;
    size_t suffix_len = strlen(SUFFIX);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(entries[i]->d_name);
        if (len > suffix_len &&
            strcmp(entries[i]->d_name + len - suffix_len, SUFFIX) == 0)
            keys[count++] = sx_strndup(entries[i]->d_name, len - suffix_len);
        free(entries[i]);
    }
    free(entries);
    *keys_p = keys;
    *count_p = count;
    return 0;
}

static void free_keys(char **keys, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(keys[i]);
    free(keys);
}

size_t sx_spool_count(sx_spool_t *self)
{
    char **keys = NULL;
    size_t count = 0;
    if (list_keys(self, &keys, &count) != 0)
        return 0;
    free_keys(keys, count);
    return count;
}

int sx_spool_each(sx_spool_t *self,
                  int (*visit)(const char *key, const void *data, size_t size, void *arg),
                  void *arg, sx_error_t *err)
{
    char **keys = NULL;
    size_t count = 0;
    if (list_keys(self, &keys, &count) != 0)
        return sx_error_set(err, "%s: cannot list the spool", self->dir);
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        char path[4096];
        entry_path(self, keys[i], path, sizeof path);
        size_t size = 0;
        char *data = sx_file_read(path, (size_t)1 << 31, &size, NULL);
        if (!data)
            continue; /* removed by an ACK meanwhile */
        rc = visit(keys[i], data, size, arg);
        free(data);
    }
    free_keys(keys, count);
    return rc;
}

static int count_bytes(const char *key, const void *data, size_t size, void *arg)
{
    (void)key;
    (void)data;
    *(size_t *)arg += size;
    return 0;
}

void sx_spool_test(bool verbose)
{
    (void)verbose;
    char dir[] = "/tmp/sx-spool-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char sub[300];
    snprintf(sub, sizeof sub, "%s/spool", dir);
    sx_spool_t *spool = sx_spool_open(sub, NULL);
    SX_CHECK(spool && sx_spool_count(spool) == 0);
    SX_CHECK(sx_spool_put(spool, "m1.t1.1", "abc", 3, NULL) == 0);
    SX_CHECK(sx_spool_put(spool, "m1.t2.1", "defg", 4, NULL) == 0);
    SX_CHECK(sx_spool_put(spool, "../x", "no", 2, NULL) == -1);
    SX_CHECK(sx_spool_count(spool) == 2);
    /* Entries survive the process: a new handle sees them. */
    sx_spool_destroy(&spool);
    spool = sx_spool_open(sub, NULL);
    size_t bytes = 0;
    SX_CHECK(sx_spool_each(spool, count_bytes, &bytes, NULL) == 0 && bytes == 7);
    sx_spool_remove(spool, "m1.t1.1");
    sx_spool_remove(spool, "m1.t1.1"); /* a repeated ACK is harmless */
    SX_CHECK(sx_spool_count(spool) == 1);
    sx_spool_destroy(&spool);
    sx_spool_destroy(&spool);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
