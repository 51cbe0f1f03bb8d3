/* materialize.c: the output changelog folded into the final relation (see
 * materialize.h). Each row is kept as its rendered CSV line, because the
 * final CSV is all that is scored: two rows the CSV cannot tell apart are
 * the same row. A debezium relation is a multiset (line -> count), built
 * record by record; an append relation, which only grows, is the list of
 * its lines (sorting puts equal ones together). An upsert relation first maps the raw
 * Kafka key to the raw bytes of its latest value (and their offset): a GROUP BY writes
 * one update per input row for a few keys, and only the surviving values
 * are decoded and rendered, by sx_materialize_finish, into key -> line. */
#include "worker/exec/materialize.h"

#include "common/csv.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <czmq.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct _sx_materialize_t {
    sx_changelog_t kind;
    char **columns; /* output_schema names */
    size_t column_count;
    zhashx_t *latest; /* upsert, until finished: key -> latest_t */
    zhashx_t *rows;   /* upsert: key -> line; debezium: line -> size_t count */
    char **lines;     /* append: every row's line */
    size_t row_count, line_capacity;
    char *key; /* upsert: the record's key as a C string, reused */
    size_t key_size;
    uint64_t counts[SX_CHANGE_KINDS]; /* records applied, by kind */
    unsigned last;                    /* kinds of the record last applied */
};

/* An upsert key's latest value, undecoded. */
typedef struct {
    int64_t offset;
    size_t length;
    char bytes[];
} latest_t;

static void free_item(void **item)
{
    free(*item);
    *item = NULL;
}

sx_materialize_t *sx_materialize_new(sx_changelog_t kind, const sx_field_t *schema,
                                     size_t column_count)
{
    sx_materialize_t *self = sx_new(sx_materialize_t);
    self->kind = kind;
    self->column_count = column_count;
    self->columns = sx_alloc(column_count, sizeof *self->columns);
    self->rows = zhashx_new();
    for (size_t i = 0; i < column_count; i++)
        self->columns[i] = sx_strdup(schema[i].name);
    zhashx_set_destructor(self->rows, free_item);
    if (kind == SX_CHANGELOG_UPSERT) {
        self->latest = zhashx_new();
        zhashx_set_destructor(self->latest, free_item);
    }
    return self;
}

void sx_materialize_destroy(sx_materialize_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_materialize_t *self = *self_p;
    for (size_t i = 0; self->columns && i < self->column_count; i++)
        free(self->columns[i]);
    free(self->columns);
    zhashx_destroy(&self->latest);
    zhashx_destroy(&self->rows);
    for (size_t i = 0; self->lines && i < self->row_count; i++)
        free(self->lines[i]);
    free(self->lines);
    free(self->key);
    free(self);
    *self_p = NULL;
}

size_t sx_materialize_row_count(const sx_materialize_t *self)
{
    return self->latest ? zhashx_size(self->latest) : self->row_count;
}

void sx_materialize_counts(const sx_materialize_t *self, sx_changelog_counts_t *counts)
{
    counts->known = true;
    memcpy(counts->records, self->counts, sizeof counts->records);
    counts->rows = sx_materialize_row_count(self);
}

unsigned sx_materialize_last_kinds(const sx_materialize_t *self)
{
    return self->last;
}

/* Counts the record just applied as `kind` (once per kind it is). */
static void count(sx_materialize_t *self, sx_change_kind_t kind)
{
    self->counts[kind]++;
    self->last |= 1u << kind;
}

/* ---- reading records ---------------------------------------------------- */

/* End of the JSON number starting at text[i], or i when none starts there. */
static size_t number_end(const char *text, size_t i, size_t length)
{
    size_t j = i;
    if (j < length && text[j] == '-')
        j++;
    if (j >= length || text[j] < '0' || text[j] > '9')
        return i;
    /* A leading 0 stands alone, as JSON requires. */
    if (text[j] == '0')
        j++;
    else
        while (j < length && text[j] >= '0' && text[j] <= '9')
            j++;
    if (j + 1 < length && text[j] == '.' && text[j + 1] >= '0' && text[j + 1] <= '9')
        for (j++; j < length && text[j] >= '0' && text[j] <= '9'; j++)
            ;
    if (j < length && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < length && (text[k] == '+' || text[k] == '-'))
            k++;
        if (k < length && text[k] >= '0' && text[k] <= '9') {
            for (j = k; j < length && text[j] >= '0' && text[j] <= '9'; j++)
                ;
        }
    }
    return j;
}

/* The JSON text with every number turned into a string of its exact text.
 * jansson would read numbers into int64/double (failing on big DECIMALs and
 * reprinting doubles its own way); the final CSV must carry the number as
 * Flink wrote it. Malformed input stays malformed for jansson to report. */
static char *quote_numbers(const char *text, size_t length, size_t *out_length)
{
    char *out = sx_alloc(3 * length + 1, 1);
    size_t n = 0;
    bool in_string = false;
    for (size_t i = 0; i < length; i++) {
        size_t end = in_string ? i : number_end(text, i, length);
        if (end > i) {
            out[n++] = '"';
            memcpy(out + n, text + i, end - i);
            n += end - i;
            out[n++] = '"';
            i = end - 1;
            continue;
        }
        out[n++] = text[i];
        if (in_string && text[i] == '\\' && i + 1 < length)
            out[n++] = text[++i];
        else if (text[i] == '"')
            in_string = !in_string;
    }
    out[n] = '\0';
    *out_length = n;
    return out;
}

/* Parses JSON bytes with numbers kept as text (see quote_numbers). */
static json_t *load_numbers_as_text(const void *bytes, size_t length, json_error_t *error)
{
    size_t quoted_length = 0;
    char *quoted = quote_numbers(bytes, length, &quoted_length);
    json_t *json = json_loadb(quoted, quoted_length, 0, error);
    free(quoted);
    return json;
}

/* Parses a record's bytes as a JSON object. */
static json_t *parse_object(const void *bytes, size_t length, int64_t offset,
                            const char *what, sx_error_t *err)
{
    json_error_t error;
    json_t *json = load_numbers_as_text(bytes, length, &error);
    if (!json) {
        sx_error_set(err, "offset %lld: the %s is not valid JSON: %s", (long long)offset,
                     what, error.text);
        return NULL;
    }
    if (!json_is_object(json)) {
        sx_error_set(err, "offset %lld: the %s is not a JSON object", (long long)offset,
                     what);
        json_decref(json);
        return NULL;
    }
    return json;
}

/* ---- rows ----------------------------------------------------------------- */

/* One column's CSV text: NULL for JSON null or absent. *owned receives a
 * heap copy to free when the text had to be built. */
static const char *column_text(const json_t *value, char **owned)
{
    *owned = NULL;
    if (!value || json_is_null(value))
        return NULL;
    if (json_is_string(value))
        return json_string_value(value);
    if (json_is_boolean(value))
        return json_is_true(value) ? "true" : "false";
    *owned = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER);
    return *owned;
}

/* The row's CSV line (newline included) over the output_schema columns,
 * each looked up in `row`, then in `fallback` (the upsert key) if absent. */
static char *render_row(const sx_materialize_t *self, const json_t *row,
                        const json_t *fallback)
{
    const char **fields = sx_alloc(self->column_count, sizeof *fields);
    char **owned = sx_alloc(self->column_count, sizeof *owned);
    char *line = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&line, &size);
    for (size_t i = 0; stream && i < self->column_count; i++) {
        json_t *value = json_object_get(row, self->columns[i]);
        if (!value && fallback)
            value = json_object_get(fallback, self->columns[i]);
        fields[i] = column_text(value, &owned[i]);
    }
    bool ok = stream && sx_csv_write_record(stream, fields, self->column_count) == 0;
    if (stream && fclose(stream) != 0)
        ok = false;
    for (size_t i = 0; i < self->column_count; i++)
        free(owned[i]);
    free(owned);
    free(fields);
    if (!ok) {
        free(line);
        return NULL;
    }
    return line;
}

/* Adds one copy of line to the relation; takes ownership of line. */
static void multiset_add(sx_materialize_t *self, char *line)
{
    if (self->kind == SX_CHANGELOG_APPEND) {
        if (self->row_count == self->line_capacity) {
            self->line_capacity = self->line_capacity ? 2 * self->line_capacity : 64;
            self->lines =
                sx_realloc(self->lines, self->line_capacity, sizeof *self->lines);
        }
        self->lines[self->row_count++] = line;
        return;
    }
    size_t *count = zhashx_lookup(self->rows, line);
    if (count) {
        (*count)++;
    } else {
        count = sx_new(size_t);
        *count = 1;
        zhashx_insert(self->rows, line, count);
    }
    free(line);
    self->row_count++;
}

/* Removes one copy of line; false when there is none. */
static bool multiset_remove(sx_materialize_t *self, const char *line)
{
    size_t *count = zhashx_lookup(self->rows, line);
    if (!count)
        return false;
    if (--*count == 0)
        zhashx_delete(self->rows, line);
    self->row_count--;
    return true;
}

static int insert_row(sx_materialize_t *self, const json_t *row, int64_t offset,
                      sx_error_t *err)
{
    char *line = render_row(self, row, NULL);
    if (!line)
        return sx_error_set(err, "offset %lld: out of memory", (long long)offset);
    multiset_add(self, line);
    return 0;
}

static int remove_row(sx_materialize_t *self, const json_t *row, int64_t offset,
                      sx_error_t *err)
{
    char *line = render_row(self, row, NULL);
    if (!line)
        return sx_error_set(err, "offset %lld: out of memory", (long long)offset);
    bool removed = multiset_remove(self, line);
    if (!removed) {
        line[strcspn(line, "\n")] = '\0';
        sx_error_set(err, "offset %lld: retracts a row that is not in the relation: %s",
                     (long long)offset, line);
    }
    free(line);
    return removed ? 0 : -1;
}

/* ---- the three changelog kinds ------------------------------------------ */

/* Keeps value as the key's latest (a NULL value deletes the key; a key
 * never inserted is fine): decoding waits for sx_materialize_finish. */
static int apply_upsert(sx_materialize_t *self, int64_t offset, const char *key,
                        size_t key_len, const void *value, size_t value_len,
                        sx_error_t *err)
{
    if (!self->latest)
        return sx_error_set(err, "offset %lld: the changelog is already finished",
                            (long long)offset);
    if (!key)
        return sx_error_set(err, "offset %lld: an upsert record without a key",
                            (long long)offset);
    if (memchr(key, '\0', key_len))
        return sx_error_set(err, "offset %lld: the key holds a NUL byte",
                            (long long)offset);
    if (key_len + 1 > self->key_size) {
        self->key_size = 2 * key_len + 1;
        self->key = sx_realloc(self->key, self->key_size, 1);
    }
    memcpy(self->key, key, key_len);
    self->key[key_len] = '\0';
    bool live = zhashx_lookup(self->latest, self->key) != NULL;
    if (!value) {
        zhashx_delete(self->latest, self->key);
        count(self, live ? SX_CHANGE_DELETE : SX_CHANGE_TOMBSTONE);
        return 0;
    }
    latest_t *latest = sx_alloc(1, sizeof *latest + value_len);
    latest->offset = offset;
    latest->length = value_len;
    memcpy(latest->bytes, value, value_len);
    zhashx_update(self->latest, self->key, latest);
    count(self, live ? SX_CHANGE_UPDATE_AFTER : SX_CHANGE_INSERT);
    return 0;
}

/* One surviving upsert value's line: the row its value gives, with the key
 * columns the value leaves out taken from the key. */
static char *render_latest(const sx_materialize_t *self, const char *key,
                           const latest_t *latest, sx_error_t *err)
{
    json_t *row =
        parse_object(latest->bytes, latest->length, latest->offset, "value", err);
    if (!row)
        return NULL;
    /* Key columns left out of the value (EXCEPT_KEY) come from the key; a
     * key in another format simply adds nothing. */
    json_error_t ignored;
    json_t *key_object = load_numbers_as_text(key, strlen(key), &ignored);
    if (key_object && !json_is_object(key_object)) {
        json_decref(key_object);
        key_object = NULL;
    }
    char *line = render_row(self, row, key_object);
    if (!line)
        sx_error_set(err, "offset %lld: out of memory", (long long)latest->offset);
    json_decref(key_object);
    json_decref(row);
    return line;
}

/* Renders every key's latest value into key -> line; the error reported is
 * the one of the smallest offset, as record-by-record decoding would have
 * stopped there first. */
static int finish_upsert(sx_materialize_t *self, sx_error_t *err)
{
    int64_t failed_at = INT64_MAX;
    for (latest_t *latest = zhashx_first(self->latest); latest;
         latest = zhashx_next(self->latest)) {
        const char *key = zhashx_cursor(self->latest);
        sx_error_t error;
        char *line = render_latest(self, key, latest, &error);
        if (line) {
            zhashx_insert(self->rows, key, line);
        } else if (latest->offset < failed_at) {
            failed_at = latest->offset;
            *err = error;
        }
    }
    self->row_count = zhashx_size(self->rows);
    zhashx_destroy(&self->latest);
    return failed_at == INT64_MAX ? 0 : -1;
}

/* An "after"/"before" image: NULL when absent or null, an error when it is
 * something other than an object. */
static int image(const json_t *envelope, const char *name, const json_t **out,
                 int64_t offset, sx_error_t *err)
{
    const json_t *value = json_object_get(envelope, name);
    *out = value && !json_is_null(value) ? value : NULL;
    if (*out && !json_is_object(*out))
        return sx_error_set(err, "offset %lld: \"%s\" is not a JSON object",
                            (long long)offset, name);
    return 0;
}

static int apply_debezium_op(sx_materialize_t *self, const json_t *envelope,
                             int64_t offset, sx_error_t *err)
{
    const char *op = json_string_value(json_object_get(envelope, "op"));
    const json_t *before, *after;
    if (image(envelope, "before", &before, offset, err) != 0 ||
        image(envelope, "after", &after, offset, err) != 0)
        return -1;
    if (!op || strlen(op) != 1 || !strchr("crud", op[0]))
        return sx_error_set(err, "offset %lld: \"op\" is not one of c, r, u, d",
                            (long long)offset);
    bool removes = op[0] == 'u' || op[0] == 'd';
    bool inserts = op[0] != 'd';
    if ((removes && !before) || (inserts && !after))
        return sx_error_set(err, "offset %lld: op \"%s\" without its \"%s\" row",
                            (long long)offset, op,
                            removes && !before ? "before" : "after");
    if (removes && remove_row(self, before, offset, err) != 0)
        return -1;
    if (inserts && insert_row(self, after, offset, err) != 0)
        return -1;
    if (op[0] == 'u') {
        count(self, SX_CHANGE_UPDATE_BEFORE);
        count(self, SX_CHANGE_UPDATE_AFTER);
    } else {
        count(self, op[0] == 'd' ? SX_CHANGE_DELETE : SX_CHANGE_INSERT);
    }
    return 0;
}

static int apply_debezium(sx_materialize_t *self, int64_t offset, const void *value,
                          size_t value_len, sx_error_t *err)
{
    if (!value) { /* Kafka tombstone after a delete: not an operation */
        count(self, SX_CHANGE_TOMBSTONE);
        return 0;
    }
    json_t *json = parse_object(value, value_len, offset, "value", err);
    if (!json)
        return -1;
    /* With debezium-json.schema-include the envelope sits in "payload". */
    const json_t *envelope = json;
    const json_t *payload = json_object_get(json, "payload");
    if (json_is_object(payload) && !json_object_get(json, "op"))
        envelope = payload;
    int rc = apply_debezium_op(self, envelope, offset, err);
    json_decref(json);
    return rc;
}

static int apply_append(sx_materialize_t *self, int64_t offset, const void *value,
                        size_t value_len, sx_error_t *err)
{
    if (!value)
        return sx_error_set(
            err, "offset %lld: a record without a value in an append changelog",
            (long long)offset);
    json_t *row = parse_object(value, value_len, offset, "value", err);
    if (!row)
        return -1;
    int rc = insert_row(self, row, offset, err);
    json_decref(row);
    if (rc == 0)
        count(self, SX_CHANGE_INSERT);
    return rc;
}

int sx_materialize_apply(sx_materialize_t *self, int64_t offset, const void *key,
                         size_t key_len, const void *value, size_t value_len,
                         sx_error_t *err)
{
    self->last = 0;
    switch (self->kind) {
    case SX_CHANGELOG_UPSERT:
        return apply_upsert(self, offset, key, key_len, value, value_len, err);
    case SX_CHANGELOG_DEBEZIUM:
        return apply_debezium(self, offset, value, value_len, err);
    case SX_CHANGELOG_APPEND:
        return apply_append(self, offset, value, value_len, err);
    }
    return sx_error_set(err, "unknown changelog kind %d", (int)self->kind);
}

int sx_materialize_finish(sx_materialize_t *self, sx_error_t *err)
{
    return self->latest ? finish_upsert(self, err) : 0;
}

/* ---- writing ------------------------------------------------------------ */

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every row's line (repeated per copy), sorted; the lines stay owned by the
 * relation. */
static const char **sorted_lines(const sx_materialize_t *self)
{
    const char **lines = sx_alloc(self->row_count, sizeof *lines);
    size_t n = 0;
    if (self->kind == SX_CHANGELOG_APPEND)
        for (; n < self->row_count; n++)
            lines[n] = self->lines[n];
    for (void *item = zhashx_first(self->rows); item; item = zhashx_next(self->rows)) {
        if (self->kind == SX_CHANGELOG_UPSERT) {
            lines[n++] = item;
            continue;
        }
        const char *line = zhashx_cursor(self->rows);
        for (size_t copy = 0; copy < *(size_t *)item; copy++)
            lines[n++] = line;
    }
    qsort(lines, n, sizeof *lines, compare_lines);
    return lines;
}

static int write_csv(const sx_materialize_t *self, FILE *out)
{
    const char **lines = sorted_lines(self);
    int rc =
        sx_csv_write_record(out, (const char *const *)self->columns, self->column_count);
    for (size_t i = 0; rc == 0 && i < self->row_count; i++)
        rc = fputs(lines[i], out) == EOF ? -1 : 0;
    free(lines);
    return rc;
}

int sx_materialize_write(const sx_materialize_t *self, const char *path, sx_error_t *err)
{
    if (self->latest)
        return sx_error_set(err, "%s: the changelog is not finished", path);
    char *temporary = sx_format("%s.tmp", path);
    FILE *out = fopen(temporary, "wb");
    int rc = out ? write_csv(self, out) : -1;
    if (out && (fflush(out) != 0 || fsync(fileno(out)) != 0))
        rc = -1;
    if (out && fclose(out) != 0)
        rc = -1;
    if (rc == 0 && rename(temporary, path) != 0)
        rc = -1;
    if (rc != 0) {
        sx_error_set(err, "%s: cannot write the final CSV: %s", path, strerror(errno));
        unlink(temporary);
    }
    free(temporary);
    return rc;
}

/* ---- self-test ---------------------------------------------------------- */

/* A record of a test changelog; NULL key/value are absent. */
typedef struct {
    const char *key;
    const char *value;
} record_t;

static sx_materialize_t *relation_of(sx_changelog_t kind)
{
    static const sx_field_t schema[] = {
        {"id", "BIGINT"}, {"name", "STRING"}, {"v", "DOUBLE"}};
    return sx_materialize_new(kind, schema, 3);
}

/* Applies records in offset order to `self` (destroyed here); returns the CSV
 * written, or the error. */
static char *materialize_into(sx_materialize_t *self, const record_t *records,
                              size_t count)
{
    sx_error_t err;
    sx_error_clear(&err);
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        const char *key = records[i].key, *value = records[i].value;
        rc = sx_materialize_apply(self, (int64_t)i, key, key ? strlen(key) : 0, value,
                                  value ? strlen(value) : 0, &err);
    }
    if (rc == 0)
        rc = sx_materialize_finish(self, &err);
    char *result = NULL;
    if (rc != 0) {
        result = sx_strdup(err.msg);
    } else {
        char dir[] = "/tmp/sx_materialize_XXXXXX";
        SX_CHECK(mkdtemp(dir));
        char path[64];
        snprintf(path, sizeof path, "%s/out.csv", dir);
        SX_CHECK(sx_materialize_write(self, path, &err) == 0);
        size_t size;
        result = sx_file_read(path, 4095, &size, &err);
        SX_CHECK(result);
        unlink(path);
        rmdir(dir);
    }
    sx_materialize_destroy(&self);
    return result;
}

static char *materialize(sx_changelog_t kind, const record_t *records, size_t count)
{
    return materialize_into(relation_of(kind), records, count);
}

static void check_materialize(sx_changelog_t kind, const record_t *records, size_t count,
                              const char *expected)
{
    char *got = materialize(kind, records, count);
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "materialize %s: got\n%s\nexpected\n%s\n",
                sx_changelog_name(kind), got, expected);
    SX_CHECK(strcmp(got, expected) == 0);
    free(got);
}

#define CHECK_MATERIALIZE(kind, records, expected)                                       \
    check_materialize(kind, records, sizeof records / sizeof records[0], expected)

static void test_append_keeps_duplicates_and_number_text(void)
{
    static const record_t records[] = {
        {NULL, "{\"id\":2,\"name\":\"b, \\\"quoted\\\"\",\"v\":1.0E10}"},
        {NULL, "{\"id\":12345678901234567890123,\"name\":null,\"v\":0.1}"},
        {"ignored", "{\"id\":2,\"name\":\"b, \\\"quoted\\\"\",\"v\":1.0E10}"},
        {NULL, "{\"id\":-0,\"v\":-2.5e-3,\"extra\":true}"},
        {NULL, "{\"id\":3,\"name\":true,\"v\":{\"x\":[1,\"y\"]}}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_APPEND, records,
                      "id,name,v\n"
                      "-0,,-2.5e-3\n"
                      "12345678901234567890123,,0.1\n"
                      "2,\"b, \"\"quoted\"\"\",1.0E10\n"
                      "2,\"b, \"\"quoted\"\"\",1.0E10\n"
                      "3,true,\"{\"\"x\"\":[\"\"1\"\",\"\"y\"\"]}\"\n");
    static const record_t empty[] = {{NULL, "{\"id\":1}"}};
    check_materialize(SX_CHANGELOG_APPEND, empty, 0, "id,name,v\n");
}

static void test_upsert_keeps_latest_and_deletes_on_tombstone(void)
{
    static const record_t records[] = {
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"v\":1.5}"},
        {"{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"v\":2}"},
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"v\":3.5}"},
        {"{\"id\":2}", NULL},
        {"{\"id\":9}", NULL},
        {"{\"id\":3}", "{\"name\":\"c\",\"v\":4}"}, /* EXCEPT_KEY: id from the key */
        {"{\"id\":2}", NULL},
        {"{\"id\":4}", "{\"id\":4,\"name\":\"d\"}"},
        {"{\"id\":4}", NULL},
        {"{\"id\":4}", "{\"id\":4,\"name\":\"e\"}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_UPSERT, records, "id,name,v\n1,a,3.5\n3,c,4\n4,e,\n");
    static const record_t keyless[] = {{NULL, "{\"id\":1}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_UPSERT, keyless,
                      "offset 0: an upsert record without a key");
    /* A key that is no JSON object still identifies the row; it adds no
     * column. */
    static const record_t raw_keys[] = {
        {"1", "{\"id\":1,\"name\":\"a\"}"},
        {"2", "{\"id\":2,\"name\":\"b\"}"},
        {"1", "{\"id\":1,\"name\":\"c\"}"},
        {"[2]", "{\"name\":\"d\"}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_UPSERT, raw_keys, "id,name,v\n,d,\n1,c,\n2,b,\n");
    /* Keys are kept as C strings: one holding a NUL byte would be cut there
     * and fold into another key's row, so it is an error. */
    sx_materialize_t *self = relation_of(SX_CHANGELOG_UPSERT);
    sx_error_t err;
    SX_CHECK(sx_materialize_apply(self, 7, "a\0b", 3, "{}", 2, &err) == -1);
    SX_CHECK(strcmp(err.msg, "offset 7: the key holds a NUL byte") == 0);
    sx_materialize_destroy(&self);
    /* A kind that is none of the three is refused, not guessed. */
    self = relation_of((sx_changelog_t)3);
    SX_CHECK(sx_materialize_apply(self, 0, NULL, 0, "{}", 2, &err) == -1);
    SX_CHECK(strcmp(err.msg, "unknown changelog kind 3") == 0);
    sx_materialize_destroy(&self);
}

/* Many updates per key, deletes and re-inserts: only each key's latest value
 * is decoded, so a superseded malformed value is no error; a surviving one
 * is, at the smallest such offset. */
static void test_upsert_decodes_only_surviving_values(void)
{
    static const record_t records[] = {
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"v\":1"},
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"v\":2}"},
        {"{\"id\":2}", "not json"},
        {"{\"id\":2}", NULL},
        {"{\"id\":3}", "{\"id\":3,\"name\":\"c\"}"},
        {"{\"id\":3}", NULL},
        {"{\"id\":3}", "[3]"},
        {"{\"id\":3}", "{\"name\":\"c2\",\"v\":0.5}"},
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"v\":3}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_UPSERT, records, "id,name,v\n1,a,3\n3,c2,0.5\n");
    static const record_t survivors_malformed[] = {
        {"{\"id\":1}", "{\"id\":1}"}, {"{\"id\":2}", "{\"id\":2"},  {"{\"id\":3}", "[3]"},
        {"{\"id\":4}", "{"},          {"{\"id\":2}", "{\"id\":2}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_UPSERT, survivors_malformed,
                      "offset 2: the value is not a JSON object");
    sx_materialize_t *self = relation_of(SX_CHANGELOG_UPSERT);
    sx_error_t err;
    for (size_t i = 0; i < 5; i++) {
        const record_t *r = &survivors_malformed[i];
        SX_CHECK(sx_materialize_apply(self, (int64_t)i, r->key, strlen(r->key), r->value,
                                      strlen(r->value), &err) == 0);
    }
    SX_CHECK(sx_materialize_row_count(self) == 4);
    SX_CHECK(sx_materialize_write(self, "/tmp/unused.csv", &err) == -1);
    SX_CHECK(strcmp(err.msg, "/tmp/unused.csv: the changelog is not finished") == 0);
    SX_CHECK(sx_materialize_finish(self, &err) == -1);
    SX_CHECK(strncmp(err.msg, "offset 2: ", 10) == 0);
    SX_CHECK(sx_materialize_row_count(self) == 2);
    SX_CHECK(sx_materialize_finish(self, &err) == 0);
    SX_CHECK(sx_materialize_apply(self, 5, "k", 1, "{}", 2, &err) == -1);
    SX_CHECK(strcmp(err.msg, "offset 5: the changelog is already finished") == 0);
    sx_materialize_destroy(&self);
}

static void test_debezium_multiset_with_retractions(void)
{
    /* A Top-2 as Flink writes it: -U/+U become d/c pairs. */
    static const record_t records[] = {
        {NULL,
         "{\"before\":null,\"after\":{\"id\":1,\"name\":\"x\",\"v\":10},\"op\":\"c\"}"},
        {NULL,
         "{\"before\":null,\"after\":{\"id\":2,\"name\":\"y\",\"v\":20},\"op\":\"c\"}"},
        {NULL,
         "{\"before\":{\"id\":1,\"name\":\"x\",\"v\":10},\"after\":null,\"op\":\"d\"}"},
        {NULL,
         "{\"before\":null,\"after\":{\"id\":3,\"name\":\"z\",\"v\":30},\"op\":\"c\"}"},
        {NULL, NULL},
        {NULL,
         "{\"before\":null,\"after\":{\"id\":3,\"name\":\"z\",\"v\":30},\"op\":\"r\"}"},
        {NULL,
         "{\"before\":{\"id\":3,\"name\":\"z\",\"v\":30},\"after\":{\"id\":3,\"name\":"
         "\"z\",\"v\":31},\"op\":\"u\"}"},
        {NULL,
         "{\"schema\":{},\"payload\":{\"before\":{\"id\":2,\"name\":\"y\",\"v\":20},"
         "\"after\":null,\"op\":\"d\"}}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, records, "id,name,v\n3,z,30\n3,z,31\n");
    static const record_t missing[] = {
        {NULL,
         "{\"before\":null,\"after\":{\"id\":1,\"name\":\"x\",\"v\":10},\"op\":\"c\"}"},
        {NULL,
         "{\"before\":{\"id\":1,\"name\":\"x\",\"v\":10.0},\"after\":null,\"op\":\"d\"}"},
    };
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, missing,
                      "offset 1: retracts a row that is not in the relation: 1,x,10.0");
    static const record_t bad_op[] = {
        {NULL, "{\"before\":null,\"after\":{},\"op\":\"x\"}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, bad_op,
                      "offset 0: \"op\" is not one of c, r, u, d");
    static const record_t no_after[] = {
        {NULL, "{\"before\":null,\"after\":null,\"op\":\"c\"}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, no_after,
                      "offset 0: op \"c\" without its \"after\" row");
    static const record_t no_before[] = {
        {NULL, "{\"before\":null,\"after\":{\"id\":1},\"op\":\"u\"}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, no_before,
                      "offset 0: op \"u\" without its \"before\" row");
    static const record_t delete_without_before[] = {
        {NULL, "{\"after\":{\"id\":1},\"op\":\"d\"}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, delete_without_before,
                      "offset 0: op \"d\" without its \"before\" row");
    static const record_t not_object[] = {
        {NULL, "{\"before\":null,\"after\":[1],\"op\":\"c\"}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, not_object,
                      "offset 0: \"after\" is not a JSON object");
    static const record_t no_op[] = {{NULL, "{\"before\":null,\"after\":{\"id\":1}}"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_DEBEZIUM, no_op,
                      "offset 0: \"op\" is not one of c, r, u, d");
}

static void test_bad_records_name_the_offset(void)
{
    static const record_t broken[] = {{NULL, "{\"id\":1}"}, {NULL, "{\"id\":1"}};
    char *got = materialize(SX_CHANGELOG_APPEND, broken, 2);
    SX_CHECK(strncmp(got, "offset 1: the value is not valid JSON: ", 39) == 0);
    free(got);
    static const record_t leading_zero[] = {{NULL, "{\"id\":01}"}};
    got = materialize(SX_CHANGELOG_APPEND, leading_zero, 1);
    SX_CHECK(strncmp(got, "offset 0: the value is not valid JSON: ", 39) == 0);
    free(got);
    /* An exponent's sign is '+' or '-' only: "1e,2" is no number. */
    static const record_t bad_exponent[] = {{NULL, "{\"id\":1e,2}"}};
    got = materialize(SX_CHANGELOG_APPEND, bad_exponent, 1);
    SX_CHECK(strncmp(got, "offset 0: the value is not valid JSON: ", 39) == 0);
    free(got);
    static const record_t array[] = {{NULL, "[1,2]"}};
    CHECK_MATERIALIZE(SX_CHANGELOG_APPEND, array,
                      "offset 0: the value is not a JSON object");
    static const record_t no_value[] = {{"k", NULL}};
    CHECK_MATERIALIZE(SX_CHANGELOG_APPEND, no_value,
                      "offset 0: a record without a value in an append changelog");
}

/* A one-column relation keeps its NULL and empty rows: each is written "",
 * never a blank line that pandas would skip (docs/benchmark.md). */
static void test_one_column_null_rows_are_not_blank_lines(void)
{
    static const sx_field_t schema[] = {{"name", "STRING"}};
    static const record_t records[] = {
        {NULL, "{\"name\":null}"},    {NULL, "{\"name\":\"\"}"},  {NULL, "{}"},
        {NULL, "{\"name\":\"\\t\"}"}, {NULL, "{\"name\":\"x\"}"},
    };
    sx_materialize_t *self = sx_materialize_new(SX_CHANGELOG_APPEND, schema, 1);
    SX_CHECK(self);
    char *got = materialize_into(self, records, sizeof records / sizeof records[0]);
    SX_CHECK(strcmp(got, "name\n\"\t\"\n\"\"\n\"\"\n\"\"\nx\n") == 0);
    free(got);
}

static void test_row_count_and_write_errors(void)
{
    sx_materialize_t *self = relation_of(SX_CHANGELOG_DEBEZIUM);
    sx_error_t err;
    const char *insert = "{\"after\":{\"id\":1},\"op\":\"c\"}";
    SX_CHECK(sx_materialize_apply(self, 0, NULL, 0, insert, strlen(insert), &err) == 0);
    SX_CHECK(sx_materialize_apply(self, 1, NULL, 0, insert, strlen(insert), &err) == 0);
    SX_CHECK(sx_materialize_row_count(self) == 2);
    SX_CHECK(sx_materialize_write(self, "/nonexistent/dir/out.csv", &err) == -1);
    SX_CHECK(strstr(err.msg, "/nonexistent/dir/out.csv: cannot write the final CSV") ==
             err.msg);
    /* A full disk (the temporary file is /dev/full) and a final name taken
     * by a folder: each is an error with its reason, and neither leaves a
     * final CSV or its temporary file behind. */
    char dir[] = "/tmp/sx_materialize_XXXXXX", path[64], tmp[80], want[160];
    SX_CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.csv", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    SX_CHECK(symlink("/dev/full", tmp) == 0);
    SX_CHECK(sx_materialize_write(self, path, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot write the final CSV: No space left on device",
             path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(access(path, F_OK) != 0 && access(tmp, F_OK) != 0);
    SX_CHECK(mkdir(path, 0700) == 0);
    SX_CHECK(sx_materialize_write(self, path, &err) == -1);
    snprintf(want, sizeof want, "%s: cannot write the final CSV: Is a directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(access(tmp, F_OK) != 0);
    SX_CHECK(rmdir(path) == 0 && rmdir(dir) == 0);
    sx_materialize_destroy(&self);
    sx_materialize_destroy(&self);
}

/* Applies records in offset order, checking the kinds each one counts as
 * (kinds[i]: bits 1u << sx_change_kind_t, 0 for a record that fails), and
 * returns the counts once finished. */
static sx_changelog_counts_t count_records(sx_changelog_t kind, const record_t *records,
                                           const unsigned *kinds, size_t n)
{
    sx_materialize_t *self = relation_of(kind);
    sx_error_t err;
    for (size_t i = 0; i < n; i++) {
        const char *key = records[i].key, *value = records[i].value;
        int rc = sx_materialize_apply(self, (int64_t)i, key, key ? strlen(key) : 0, value,
                                      value ? strlen(value) : 0, &err);
        SX_CHECK((rc == 0) == (kinds[i] != 0));
        if (sx_materialize_last_kinds(self) != kinds[i])
            fprintf(stderr, "record %zu: kinds %#x, expected %#x\n", i,
                    sx_materialize_last_kinds(self), kinds[i]);
        SX_CHECK(sx_materialize_last_kinds(self) == kinds[i]);
    }
    SX_CHECK(sx_materialize_finish(self, &err) == 0);
    sx_changelog_counts_t counts;
    sx_materialize_counts(self, &counts);
    sx_materialize_destroy(&self);
    SX_CHECK(counts.known);
    return counts;
}

static bool counts_are(const sx_changelog_counts_t *c, uint64_t insert,
                       uint64_t update_before, uint64_t update_after, uint64_t deleted,
                       uint64_t tombstone, uint64_t rows)
{
    const uint64_t want[SX_CHANGE_KINDS] = {insert, update_before, update_after, deleted,
                                            tombstone};
    return memcmp(c->records, want, sizeof want) == 0 && c->rows == rows;
}

#define I (1u << SX_CHANGE_INSERT)
#define UB (1u << SX_CHANGE_UPDATE_BEFORE)
#define UA (1u << SX_CHANGE_UPDATE_AFTER)
#define D (1u << SX_CHANGE_DELETE)
#define T (1u << SX_CHANGE_TOMBSTONE)

/* Each sink kind's records counted by kind (materialize.h), record by
 * record; the final relation has insert - delete rows. */
static void test_changelog_counted_by_kind(void)
{
    /* upsert: a key's first value is an insert, later ones update_after; a
     * tombstone deletes a live key and is only a tombstone for another. */
    static const record_t upsert[] = {
        {"{\"id\":1}", "{\"id\":1,\"name\":\"a\"}"}, /* insert */
        {"{\"id\":2}", "{\"id\":2,\"name\":\"b\"}"}, /* insert */
        {"{\"id\":1}", "{\"id\":1,\"name\":\"c\"}"}, /* update_after */
        {"{\"id\":1}", "{\"id\":1,\"name\":\"d\"}"}, /* update_after */
        {"{\"id\":2}", NULL},                        /* delete */
        {"{\"id\":2}", NULL},                        /* tombstone: 2 is gone */
        {"{\"id\":9}", NULL},                        /* tombstone: 9 never was */
        {"{\"id\":2}", "{\"id\":2,\"name\":\"e\"}"}, /* insert again */
        {NULL, "{\"id\":3}"},                        /* no key: fails, not counted */
        {"{\"id\":3}", "{\"id\":3}"},                /* insert */
    };
    static const unsigned upsert_kinds[] = {I, I, UA, UA, D, T, T, I, 0, I};
    sx_changelog_counts_t c =
        count_records(SX_CHANGELOG_UPSERT, upsert, upsert_kinds, 10);
    SX_CHECK(counts_are(&c, 4, 0, 2, 1, 2, 3));
    /* debezium: c and r insert, u is a before and an after, d deletes; a
     * Kafka tombstone is counted as one; a retraction of a row that is not
     * there fails and is not counted. */
    static const record_t debezium[] = {
        {NULL, "{\"after\":{\"id\":1},\"op\":\"c\"}"},
        {NULL, "{\"after\":{\"id\":2},\"op\":\"r\"}"},
        {NULL, "{\"before\":{\"id\":1},\"after\":{\"id\":3},\"op\":\"u\"}"},
        {NULL, "{\"before\":{\"id\":2},\"op\":\"d\"}"},
        {NULL, NULL},
        {NULL, "{\"before\":{\"id\":2},\"op\":\"d\"}"},
        {NULL, "{\"payload\":{\"after\":{\"id\":4},\"op\":\"c\"}}"},
        {NULL, "{\"before\":{\"id\":4},\"after\":{\"id\":4,\"v\":1},\"op\":\"u\"}"},
    };
    static const unsigned debezium_kinds[] = {I, I, UB | UA, D, T, 0, I, UB | UA};
    c = count_records(SX_CHANGELOG_DEBEZIUM, debezium, debezium_kinds, 8);
    SX_CHECK(counts_are(&c, 3, 2, 2, 1, 1, 2));
    /* append: every record an insert, duplicates included. */
    static const record_t append[] = {
        {NULL, "{\"id\":1}"}, {"k", "{\"id\":1}"}, {NULL, "[1]"}, {NULL, "{\"id\":2}"}};
    static const unsigned append_kinds[] = {I, I, 0, I};
    c = count_records(SX_CHANGELOG_APPEND, append, append_kinds, 4);
    SX_CHECK(counts_are(&c, 3, 0, 0, 0, 0, 3));
    /* Nothing read: all zero, and still known. */
    c = count_records(SX_CHANGELOG_UPSERT, NULL, NULL, 0);
    SX_CHECK(counts_are(&c, 0, 0, 0, 0, 0, 0));
}

#undef I
#undef UB
#undef UA
#undef D
#undef T

/* Random records made of JSON-significant bytes: each is applied or fails
 * with a message naming its offset, never a crash. */
static void test_random_records_never_crash(void)
{
    static const char alphabet[] = "{}[]\":,\\-+.0123eEtruefalsnbeforeafteropcd ";
    static const sx_changelog_t kinds[] = {SX_CHANGELOG_UPSERT, SX_CHANGELOG_DEBEZIUM,
                                           SX_CHANGELOG_APPEND};
    unsigned state = 99;
    char value[48];
    for (size_t k = 0; k < 3; k++) {
        sx_materialize_t *self = relation_of(kinds[k]);
        for (int round = 0; round < 8000; round++) {
            size_t length = (size_t)(round % (int)sizeof value);
            sx_selftest_random_text(value, length, alphabet, &state);
            sx_error_t err;
            sx_error_clear(&err);
            if (sx_materialize_apply(self, round, value, length % 7, value, length,
                                     &err) != 0)
                SX_CHECK(strncmp(err.msg, "offset ", 7) == 0);
        }
        sx_error_t err;
        sx_error_clear(&err);
        if (sx_materialize_finish(self, &err) != 0)
            SX_CHECK(strncmp(err.msg, "offset ", 7) == 0);
        sx_materialize_destroy(&self);
    }
}

void sx_materialize_test(bool verbose)
{
    test_random_records_never_crash();
    (void)verbose;
    test_append_keeps_duplicates_and_number_text();
    test_upsert_keeps_latest_and_deletes_on_tombstone();
    test_upsert_decodes_only_surviving_values();
    test_debezium_multiset_with_retractions();
    test_bad_records_name_the_offset();
    test_one_column_null_rows_are_not_blank_lines();
    test_row_count_and_write_errors();
    test_changelog_counted_by_kind();
}
