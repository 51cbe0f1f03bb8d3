/* resultcache.c: the worker's result cache (see resultcache.h). */
#include "worker/resultcache.h"

#include "common/digest.h"
#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "worker/exec/executor.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENTRY_MAGIC "streamex-result-cache 2"
#define ENTRY_FOLDER "v2"
/* An entry holds a CSV that travels in one RESULT frame. */
#define ENTRY_MAX_BYTES SX_PROTO_MAX_BYTES

struct _sx_resultcache_t {
    char *dir; /* DIR/v2 */
    char *runtime;
};

sx_resultcache_t *sx_resultcache_open(const char *dir, const char *runtime,
                                      sx_error_t *err)
{
    if (!dir || !*dir || !runtime)
        return sx_error_set(err, "result cache: no folder or no executor description"),
               NULL;
    sx_resultcache_t *self = sx_alloc(1, sizeof *self);
    self->dir = sx_format("%s/" ENTRY_FOLDER, dir);
    self->runtime = sx_strdup(runtime);
    if (sx_mkdirs(self->dir, err) != 0) {
        sx_error_prefix(err, "result cache");
        sx_resultcache_destroy(&self);
    }
    return self;
}

void sx_resultcache_destroy(sx_resultcache_t **self_p)
{
    sx_resultcache_t *self = *self_p;
    if (!self)
        return;
    free(self->dir);
    free(self->runtime);
    free(self);
    *self_p = NULL;
}

static int by_path(const void *a, const void *b)
{
    const sx_msg_file_t *x = *(const sx_msg_file_t *const *)a;
    const sx_msg_file_t *y = *(const sx_msg_file_t *const *)b;
    return strcmp(x->path, y->path);
}

void sx_resultcache_key(const sx_resultcache_t *self, const char *task_id, int sample,
                        const char *sql, const sx_msg_file_t *files, size_t file_count,
                        char key[41])
{
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "tasks/%s/", task_id);
    const sx_msg_file_t **own = sx_alloc(file_count + 1, sizeof *own);
    size_t count = 0;
    for (size_t i = 0; i < file_count; i++)
        if (strncmp(files[i].path, prefix, strlen(prefix)) == 0)
            own[count++] = &files[i];
    qsort(own, count, sizeof *own, by_path);
    sx_digest_t *digest = sx_digest_new();
    sx_digest_line(digest, "streamex final CSV, execution semantics %d",
                   SX_EXEC_SEMANTICS);
    sx_digest_line(digest, "%s", self->runtime);
    sx_digest_line(digest, "task %s", task_id);
    if (sample != 0)
        sx_digest_line(digest, "sample %d", sample);
    sx_digest_sql(digest, sql);
    for (size_t i = 0; i < count; i++)
        sx_digest_file(digest, own[i]->hash, own[i]->path);
    sx_digest_hex(digest, key);
    sx_digest_destroy(&digest);
    free(own);
}

bool sx_resultcache_keeps(sx_status_t status)
{
    return status == SX_STATUS_MATCH || status == SX_STATUS_MISMATCH;
}

static void entry_path(const sx_resultcache_t *self, const char *key, char *path,
                       size_t size)
{
    snprintf(path, size, "%s/%.2s/%s", self->dir, key, key);
}

/* The header's changelog figures: "-" (unknown) or the six counts, then the
 * newline. */
static bool entry_changelog(const char *text, sx_changelog_counts_t *c)
{
    *c = (sx_changelog_counts_t){0};
    if (strcmp(text, "-\n") == 0)
        return true;
    unsigned long long n[SX_CHANGE_KINDS + 1];
    char tail = 0;
    if (sscanf(text, "%llu %llu %llu %llu %llu %llu%c", &n[0], &n[1], &n[2], &n[3], &n[4],
               &n[5], &tail) != 7 ||
        tail != '\n' || strchr(text, '-'))
        return false;
    for (int k = 0; k < SX_CHANGE_KINDS; k++)
        c->records[k] = n[k];
    c->rows = n[SX_CHANGE_KINDS];
    c->known = true;
    return true;
}

/* The CSV inside an entry's bytes (and its changelog figures), or NULL
 * with why it is not a valid one. */
static const char *entry_csv(const char *data, size_t size, size_t *csv_size,
                             sx_changelog_counts_t *changelog, char *why, size_t why_size)
{
    const char *newline = memchr(data, '\n', size < 256 ? size : 256);
    char hash[41] = "", actual[41], header[257];
    unsigned long long want = 0;
    int used = 0;
    if (newline)
        snprintf(header, sizeof header, "%.*s", (int)(newline - data + 1), data);
    if (!newline ||
        sscanf(header, ENTRY_MAGIC " %40[0-9a-f] %llu %n", hash, &want, &used) != 2 ||
        used == 0 || strlen(hash) != 40 || !entry_changelog(header + used, changelog)) {
        snprintf(why, why_size, "no valid header");
        return NULL;
    }
    const char *csv = newline + 1;
    *csv_size = size - (size_t)(csv - data);
    if (*csv_size != want) {
        snprintf(why, why_size, "%zu bytes of CSV where its header says %llu", *csv_size,
                 want);
        return NULL;
    }
    sx_hash_bytes(csv, *csv_size, actual);
    if (strcmp(actual, hash) != 0) {
        snprintf(why, why_size, "its CSV hashes to %s, its header says %s", actual, hash);
        return NULL;
    }
    return csv;
}

int sx_resultcache_get(sx_resultcache_t *self, const char *key, const char *csv_path,
                       sx_changelog_counts_t *changelog, sx_error_t *err)
{
    char path[PATH_MAX];
    entry_path(self, key, path, sizeof path);
    if (access(path, F_OK) != 0)
        return 0;
    size_t size = 0, csv_size = 0;
    sx_error_t read_err;
    char *data = sx_file_read(path, ENTRY_MAX_BYTES, &size, &read_err);
    char why[SX_ERROR_MAX];
    const char *csv = NULL;
    if (!data)
        snprintf(why, sizeof why, "%s", read_err.msg);
    else
        csv = entry_csv(data, size, &csv_size, changelog, why, sizeof why);
    int rc = 0;
    if (!csv) {
        sx_warn("result cache: %s is corrupt (%s): removed, the task runs", path, why);
        unlink(path);
    } else if (sx_mkdirs_for(csv_path, err) != 0 ||
               sx_file_write_atomic(csv_path, csv, csv_size, err) != 0) {
        rc = -1;
    } else
        rc = 1;
    free(data);
    return rc;
}

int sx_resultcache_put(sx_resultcache_t *self, const char *key, const char *csv_path,
                       const sx_changelog_counts_t *changelog, sx_error_t *err)
{
    size_t size = 0;
    char *csv = sx_file_read(csv_path, ENTRY_MAX_BYTES - 128, &size, err);
    if (!csv)
        return -1;
    char hash[41], path[PATH_MAX];
    sx_hash_bytes(csv, size, hash);
    const uint64_t *n = changelog->records;
    char *header =
        changelog->known
            ? sx_format(ENTRY_MAGIC " %s %zu %llu %llu %llu %llu %llu %llu\n", hash, size,
                        (unsigned long long)n[0], (unsigned long long)n[1],
                        (unsigned long long)n[2], (unsigned long long)n[3],
                        (unsigned long long)n[4], (unsigned long long)changelog->rows)
            : sx_format(ENTRY_MAGIC " %s %zu -\n", hash, size);
    size_t header_size = strlen(header);
    char *data = sx_alloc(header_size + size + 1, 1);
    memcpy(data, header, header_size);
    memcpy(data + header_size, csv, size);
    entry_path(self, key, path, sizeof path);
    int rc = sx_mkdirs_for(path, err) == 0 &&
                     sx_file_write_atomic(path, data, header_size + size, err) == 0
                 ? 0
                 : -1;
    if (rc != 0)
        sx_error_prefix(err, "result cache");
    free(data);
    free(header);
    free(csv);
    return rc;
}

/* ---- self-test --------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0 &&
             sx_file_write_atomic(path, text, strlen(text), NULL) == 0);
}

static bool same_text(const char *path, const char *text)
{
    size_t size = 0;
    char *data = sx_file_read(path, 1 << 20, &size, NULL);
    bool same = data && size == strlen(text) && memcmp(data, text, size) == 0;
    free(data);
    return same;
}

/* Every input of the key changes it; files of other tasks and the order
 * the shard lists files in do not. */
static void test_key(sx_resultcache_t *cache, const char *dir)
{
    sx_msg_file_t files[] = {{"tasks/t1/task.json", "aa", 1},
                             {"tasks/t1/sources/s.csv", "bb", 1},
                             {"tasks/t2/task.json", "cc", 1},
                             {"gold/t1.csv", "dd", 1},
                             {"evaluation/t1.json", "ee", 1}};
    char key[41], other[41];
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", files, 5, key);
    SX_CHECK(strlen(key) == 40);
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", files, 5, other);
    SX_CHECK(strcmp(key, other) == 0);
    sx_resultcache_key(cache, "t1", 0, "SELECT 1 ", files, 5, other);
    SX_CHECK(strcmp(key, other) != 0); /* the SQL as submitted, byte for byte */
    sx_resultcache_key(cache, "t2", 0, "SELECT 1", files, 5, other);
    SX_CHECK(strcmp(key, other) != 0);
    /* Each sample of a task is its own execution: same SQL, another key. */
    char sample1[41];
    sx_resultcache_key(cache, "t1", 1, "SELECT 1", files, 5, sample1);
    sx_resultcache_key(cache, "t1", 2, "SELECT 1", files, 5, other);
    SX_CHECK(strcmp(key, sample1) != 0 && strcmp(key, other) != 0 &&
             strcmp(sample1, other) != 0);
    /* Another task's files, gold and evaluation are not part of it. */
    sx_msg_file_t fewer[] = {files[1], files[0]};
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", fewer, 2, other);
    SX_CHECK(strcmp(key, other) == 0);
    sx_msg_file_t changed[] = {files[0], {"tasks/t1/sources/s.csv", "bx", 1}};
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", changed, 2, other);
    SX_CHECK(strcmp(key, other) != 0);
    sx_msg_file_t renamed[] = {files[0], {"tasks/t1/sources/r.csv", "bb", 1}};
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", renamed, 2, other);
    SX_CHECK(strcmp(key, other) != 0);
    sx_resultcache_key(cache, "t1", 0, "SELECT 1", files, 1, other);
    SX_CHECK(strcmp(key, other) != 0); /* a file less */
    /* Another executor (versions), same inputs. */
    sx_resultcache_t *flink2 = sx_resultcache_open(
        dir, "flink 2.0.0, kafka connector 4.0.0-2.0, kafka 4.0.0", NULL);
    SX_CHECK(flink2);
    sx_resultcache_key(flink2, "t1", 0, "SELECT 1", files, 5, other);
    SX_CHECK(strcmp(key, other) != 0);
    sx_resultcache_destroy(&flink2);
    sx_resultcache_destroy(&flink2); /* harmless */
}

void sx_resultcache_test(bool verbose)
{
    (void)verbose;
    char dir[] = "/tmp/sx-resultcache-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    sx_error_t err;
    SX_CHECK(sx_resultcache_open("", "x", &err) == NULL);
    char cache_dir[256], csv[PATH_MAX], copy[PATH_MAX], entry[PATH_MAX];
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    snprintf(csv, sizeof csv, "%s/run/t1.csv", dir);
    snprintf(copy, sizeof copy, "%s/out/t1.csv", dir);
    sx_resultcache_t *cache =
        sx_resultcache_open(cache_dir,
                            "flink 1.20.3, kafka connector 3.4.0-1.20, "
                            "kafka 3.9.1",
                            &err);
    SX_CHECK(cache);
    test_key(cache, cache_dir);
    SX_CHECK(sx_resultcache_keeps(SX_STATUS_MATCH) &&
             sx_resultcache_keeps(SX_STATUS_MISMATCH));
    for (int s = 0; s < SX_STATUS_COUNT; s++)
        if (s != SX_STATUS_MATCH && s != SX_STATUS_MISMATCH)
            SX_CHECK(!sx_resultcache_keeps((sx_status_t)s));
    const char *key = "0123456789abcdef0123456789abcdef01234567";
    sx_changelog_counts_t changelog = {
        .known = true, .records = {5, 1, 1, 2, 1}, .rows = 3};
    sx_changelog_counts_t back;
    SX_CHECK(sx_resultcache_get(cache, key, copy, &back, &err) == 0); /* empty: a miss */
    SX_CHECK(!sx_file_exists(copy));
    write_file(csv, "a,b\n1,x\n");
    SX_CHECK(sx_resultcache_put(cache, key, csv, &changelog, &err) == 0);
    /* Written atomically: the entry and nothing beside it (no temporary). */
    snprintf(entry, sizeof entry, "%s/v2/01/%s", cache_dir, key);
    char listing[512];
    snprintf(listing, sizeof listing, "test \"$(ls -A %s/v2/01)\" = %s", cache_dir, key);
    SX_CHECK(system(listing) == 0);
    char hash[41];
    sx_hash_bytes("a,b\n1,x\n", 8, hash);
    char *want = sx_format("streamex-result-cache 2 %s 8 5 1 1 2 1 3\na,b\n1,x\n", hash);
    SX_CHECK(same_text(entry, want));
    free(want);
    SX_CHECK(sx_resultcache_get(cache, key, copy, &back, &err) == 1);
    SX_CHECK(same_text(copy, "a,b\n1,x\n"));
    SX_CHECK(back.known && back.rows == 3 &&
             memcmp(back.records, changelog.records, sizeof back.records) == 0);
    /* An empty CSV (a relation with no header row written) is an entry too;
     * figures not known are kept as not known. */
    write_file(csv, "");
    sx_changelog_counts_t unknown = {0};
    SX_CHECK(sx_resultcache_put(cache, key, csv, &unknown, &err) == 0);
    SX_CHECK(sx_resultcache_get(cache, key, copy, &back, &err) == 1 &&
             same_text(copy, ""));
    SX_CHECK(!back.known);
    /* Corrupt entries are misses, logged and removed: a flipped byte, a cut
     * file, a foreign header, an empty file, a changelog of five counts, a
     * negative count, the header of the format before (no changelog). */
    write_file(csv, "a,b\n1,x\n");
    const char *corrupt[] = {"a,b\n1,y\n", "a,b\n1,", NULL, "", "5", "-1", "v1"};
    for (size_t i = 0; i < sizeof corrupt / sizeof *corrupt; i++) {
        SX_CHECK(sx_resultcache_put(cache, key, csv, &changelog, &err) == 0);
        size_t size = 0;
        char *data = sx_file_read(entry, 1 << 20, &size, NULL);
        SX_CHECK(data);
        char *body = strchr(data, '\n') + 1;
        char *bad =
            corrupt[i] == NULL ? sx_format("not a cache entry\n%s", body)
            : i == 3           ? sx_format("%s", "")
            : i == 4 ? sx_format("streamex-result-cache 2 %s 8 5 1 1 2 1\n%s", hash, body)
            : i == 5
                ? sx_format("streamex-result-cache 2 %s 8 5 1 1 -1 1 3\n%s", hash, body)
            : i == 6 ? sx_format("streamex-result-cache 1 %s 8\n%s", hash, body)
                     : sx_format("%.*s%s", (int)(body - data), data, corrupt[i]);
        write_file(entry, bad);
        free(bad);
        free(data);
        unlink(copy);
        SX_CHECK(sx_resultcache_get(cache, key, copy, &back, &err) == 0);
        SX_CHECK(!sx_file_exists(copy) && !sx_file_exists(entry));
    }
    /* A missing CSV cannot be stored. */
    unlink(csv);
    SX_CHECK(sx_resultcache_put(cache, key, csv, &changelog, &err) == -1 &&
             strstr(err.msg, csv));
    sx_resultcache_destroy(&cache);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
