/* tests/unit/materialize.c: the output changelog (upsert, debezium, append)
 * folded into the final relation and written as the final CSV; and, on
 * random upsert changelogs, that folding only each key's latest raw value
 * gives the relation record-by-record decoding gave. */
#include "worker/exec/materialize.h"

#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char key[32];
    char *value; /* NULL: a tombstone */
} change_t;

static unsigned s_state = 1313;

static unsigned next_random(unsigned bound)
{
    s_state = s_state * 1103515245u + 12345u;
    return (s_state >> 16) % bound;
}

/* A value as Flink's JSON writer could write it: some columns, numbers in
 * their own text, strings that need CSV quoting, nested values; sometimes
 * without the key column (EXCEPT_KEY). */
static char *random_value(unsigned id)
{
    static const char *const numbers[] = {"1.50", "-0", "1.0E10",
                                          "0.1",  "7",  "12345678901234567890123"};
    static const char *const strings[] = {
        "\"a\"",           "\"b, \\\"q\\\"\"", "\"\"", "\"line\\nbreak\"",
        "\" lead\"",       "\"\\u00e9\"",      "null", "true",
        "[1,{\"x\":2.50}]"};
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    SX_CHECK(out);
    fputc('{', out);
    const char *comma = "";
    if (next_random(4) != 0) {
        fprintf(out, "\"id\":%u", id);
        comma = ",";
    }
    if (next_random(3) != 0) {
        fprintf(out, "%s\"name\":%s", comma, strings[next_random(9)]);
        comma = ",";
    }
    if (next_random(3) != 0)
        fprintf(out, "%s\"v\":%s", comma, numbers[next_random(6)]);
    fputc('}', out);
    SX_CHECK(fclose(out) == 0);
    return text;
}

static char *fold(const change_t *changes, const size_t *order, size_t count,
                  size_t *rows)
{
    static const sx_field_t schema[] = {
        {"id", "BIGINT"}, {"name", "STRING"}, {"v", "DOUBLE"}};
    sx_materialize_t *self = sx_materialize_new(SX_CHANGELOG_UPSERT, schema, 3);
    sx_error_t err;
    for (size_t i = 0; i < count; i++) {
        const change_t *c = &changes[order ? order[i] : i];
        SX_CHECK(sx_materialize_apply(self, (int64_t)i, c->key, strlen(c->key), c->value,
                                      c->value ? strlen(c->value) : 0, &err) == 0);
    }
    SX_CHECK(sx_materialize_finish(self, &err) == 0);
    *rows = sx_materialize_row_count(self);
    char dir[] = "/tmp/sx_test_materialize_XXXXXX", path[64];
    SX_CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.csv", dir);
    SX_CHECK(sx_materialize_write(self, path, &err) == 0);
    size_t size;
    char *csv = sx_file_read(path, 1 << 20, &size, &err);
    SX_CHECK(csv);
    unlink(path);
    rmdir(dir);
    sx_materialize_destroy(&self);
    return csv;
}

/* The relation of a random changelog with many updates, deletes and
 * re-inserts per key equals the relation of each key's last record alone
 * (the record-by-record semantics: a key's line is its latest value's),
 * applied in another order. */
static void test_upsert_fold_equals_latest_records(void)
{
    enum { KEYS = 6, MAX_CHANGES = 400 };
    change_t *changes = sx_alloc(MAX_CHANGES, sizeof *changes);
    for (int round = 0; round < 300; round++) {
        size_t count = 1 + next_random(MAX_CHANGES);
        long last[KEYS];
        for (size_t k = 0; k < KEYS; k++)
            last[k] = -1;
        for (size_t i = 0; i < count; i++) {
            unsigned k = next_random(KEYS);
            /* Keys 4 and 5 are raw text, no JSON object: they add no column. */
            snprintf(changes[i].key, sizeof changes[i].key, k < 4 ? "{\"id\":%u}" : "k%u",
                     k);
            changes[i].value = next_random(5) == 0 ? NULL : random_value(k);
            last[k] = (long)i;
        }
        size_t survivors[KEYS], n = 0, live = 0;
        for (size_t k = KEYS; k-- > 0;)
            if (last[k] >= 0) {
                survivors[n++] = (size_t)last[k];
                live += changes[last[k]].value != NULL;
            }
        size_t rows_all, rows_latest;
        char *all = fold(changes, NULL, count, &rows_all);
        char *latest = fold(changes, survivors, n, &rows_latest);
        if (strcmp(all, latest) != 0)
            fprintf(stderr, "round %d: folded\n%s\nlatest records\n%s\n", round, all,
                    latest);
        SX_CHECK(strcmp(all, latest) == 0);
        SX_CHECK(rows_all == live && rows_latest == live);
        free(all);
        free(latest);
        for (size_t i = 0; i < count; i++)
            free(changes[i].value);
    }
    free(changes);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_materialize_test(verbose);
    test_upsert_fold_equals_latest_records();
    printf("test_materialize: OK\n");
    return 0;
}
