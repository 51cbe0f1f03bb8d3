/* prepare.c: step 1 of the protocol for one source (see prepare.h). The CSV
 * is read whole with the common reader; each data row becomes one JSON
 * record through the registered projection and time conversion, and live
 * rows are then sorted stably by event time. Any row that does not convert
 * stops the preparation with a message naming task, file, line, column and
 * value, because a task whose inputs are broken cannot be scored fairly. */
#include "worker/prepare.h"

#include "common/csv.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *value;
    int64_t timestamp;
    size_t sequence; /* file order, for a stable sort */
} record_t;

struct _sx_prepare_t {
    record_t *records;
    size_t count;
};

/* ---- time conversion ---------------------------------------------------- */

/* Reads [+-]digits[.digits] as a count of units of unit_ms milliseconds
 * (1000 for epoch_s, 1 for epoch_ms) and returns epoch milliseconds, the
 * fraction rounded half away from zero. The whole part must stay below
 * about 9.2e14 units (year 31000 even in milliseconds), so nothing here can
 * overflow. */
static int parse_epoch(const char *text, int64_t unit_ms, int64_t *ms)
{
    const char *p = text;
    bool negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    int64_t whole = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX / 1000 - 9) / 10)
            return -1;
        whole = whole * 10 + (*p - '0');
    }
    /* The fraction's first digits in ms, plus one more digit to round. */
    int64_t fraction = 0, scale = 1;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        int64_t digits = unit_ms == 1000 ? 4 : 1;
        for (int64_t i = 0; i < digits; i++, scale *= 10)
            fraction = fraction * 10 + ((*p >= '0' && *p <= '9') ? *p++ - '0' : 0);
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p != '\0')
        return -1;
    int64_t rounded = scale == 1 ? 0 : (fraction * unit_ms * 10 / scale + 5) / 10;
    int64_t value = whole * unit_ms + rounded;
    *ms = negative ? -value : value;
    return 0;
}

/* Index of the first %f conversion in pattern (skipping %% pairs), or -1. */
static long find_fraction(const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        if (*p != '%' || p[1] == '\0')
            continue;
        if (p[1] == 'f')
            return p - pattern;
        p++;
    }
    return -1;
}

/* strptime has no %f: each %f is cut from the pattern and its digits from
 * the value (found by matching the pattern before it), so one strptime call
 * then reads the rest with all its conversions together (%I with %p). The
 * first fraction gives the milliseconds, truncated. */
static int cut_fractions(char *value, char *pattern, int *millis)
{
    long at;
    bool first = true;
    while ((at = find_fraction(pattern)) >= 0) {
        char *prefix = sx_strndup(pattern, (size_t)at);
        struct tm scratch = {0};
        const char *p = at > 0 ? strptime(value, prefix, &scratch) : value;
        free(prefix);
        size_t digits = 0;
        while (p && p[digits] >= '0' && p[digits] <= '9')
            digits++;
        if (!p || digits == 0 || digits > 9)
            return -1;
        if (first) {
            *millis = 0;
            for (size_t i = 0; i < 3; i++)
                *millis = *millis * 10 + (i < digits ? p[i] - '0' : 0);
            first = false;
        }
        char *cut = value + (p - value);
        memmove(cut, cut + digits, strlen(cut + digits) + 1);
        memmove(pattern + at, pattern + at + 2, strlen(pattern + at + 2) + 1);
    }
    return 0;
}

/* Reads `text` with a strptime pattern (plus %f) as UTC epoch ms. The whole
 * text must match and the date must exist. */
static int parse_pattern(const char *text, const char *pattern, int64_t *ms)
{
    char *value = sx_strdup(text), *format = sx_strdup(pattern);
    int millis = 0, rc = -1;
    struct tm tm = {.tm_mday = 1};
    if (cut_fractions(value, format, &millis) == 0) {
        const char *end = strptime(value, format, &tm);
        struct tm asked = tm;
        time_t seconds = end && *end == '\0' ? timegm(&tm) : (time_t)-1;
        /* timegm normalizes (Feb 30 -> Mar 2): a change means no such time. */
        if (end && *end == '\0' && tm.tm_year == asked.tm_year &&
            tm.tm_mon == asked.tm_mon && tm.tm_mday == asked.tm_mday &&
            tm.tm_hour == asked.tm_hour && tm.tm_min == asked.tm_min &&
            tm.tm_sec == asked.tm_sec) {
            *ms = (int64_t)seconds * 1000 + millis;
            rc = 0;
        }
    }
    free(value);
    free(format);
    return rc;
}

static int parse_time(const sx_column_t *column, const char *text, int64_t *ms)
{
    switch (column->time_from) {
    case SX_TIME_EPOCH_S:
        return parse_epoch(text, 1000, ms);
    case SX_TIME_EPOCH_MS:
        return parse_epoch(text, 1, ms);
    case SX_TIME_STRFTIME:
        return parse_pattern(text, column->time_pattern, ms);
    default:
        return -1;
    }
}

/* "YYYY-MM-DD HH:MM:SS[.fff]" for epoch ms, or -1 outside years 0-9999. */
static int format_sql(int64_t ms, char *out, size_t size)
{
    int64_t seconds = ms / 1000 - (ms % 1000 < 0);
    int millis = (int)(ms - seconds * 1000);
    time_t t = (time_t)seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
        return -1;
    int n = snprintf(out, size, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (millis != 0)
        snprintf(out + n, size - (size_t)n, ".%03d", millis);
    return 0;
}

static const char *time_from_text(const sx_column_t *column)
{
    if (column->time_from == SX_TIME_EPOCH_S)
        return "epoch_s";
    if (column->time_from == SX_TIME_EPOCH_MS)
        return "epoch_ms";
    return column->time_pattern;
}

/* ---- rows --------------------------------------------------------------- */

/* What a row conversion needs to know and where to say it went wrong. */
typedef struct {
    const char *task_id;
    const sx_source_t *source;
    size_t width;   /* fields in the header */
    long *field_of; /* per output column: its index in the CSV record */
    long event_column;
} context_t;

/* Fills err with "task T: FILE:LINE: column C (as NAME): 'VALUE' WHY". */
static int row_error(const context_t *ctx, const sx_csv_record_t *record, size_t column,
                     const char *why, sx_error_t *err)
{
    const sx_column_t *c = &ctx->source->columns[column];
    long field = ctx->field_of[column];
    int shown = record->lengths[field] > 80 ? 80 : (int)record->lengths[field];
    return sx_error_set(err, "task %s: %s:%zu: column %s (as %s): '%.*s'%s %s",
                        ctx->task_id, ctx->source->file, record->line, c->from, c->name,
                        shown, record->fields[field],
                        shown < (int)record->lengths[field] ? "..." : "", why);
}

/* The JSON value of one output column of a row; *timestamp receives the
 * converted time of a time column. */
static json_t *convert_field(const context_t *ctx, const sx_csv_record_t *record,
                             size_t column, int64_t *timestamp, sx_error_t *err)
{
    const sx_column_t *c = &ctx->source->columns[column];
    const char *text = record->fields[ctx->field_of[column]];
    size_t length = record->lengths[ctx->field_of[column]];
    if (length == 0)
        return json_null();
    if (c->time_from == SX_TIME_NONE) {
        json_t *string = json_stringn(text, length);
        if (!string)
            row_error(ctx, record, column, "is not valid UTF-8", err);
        return string;
    }
    char why[300];
    snprintf(why, sizeof why, "does not convert from time format %s", time_from_text(c));
    if (strlen(text) != length || parse_time(c, text, timestamp) != 0) {
        row_error(ctx, record, column, why, err);
        return NULL;
    }
    if (c->time_to == SX_TIME_TO_EPOCH_MS)
        return json_integer((json_int_t)*timestamp);
    char sql[48];
    if (format_sql(*timestamp, sql, sizeof sql) != 0) {
        row_error(ctx, record, column, "is outside the years 0000-9999", err);
        return NULL;
    }
    return json_string(sql);
}

/* Converts one data row into a record. */
static int convert_row(const context_t *ctx, const sx_csv_record_t *record, record_t *out,
                       sx_error_t *err)
{
    if (record->count != ctx->width)
        return sx_error_set(err, "task %s: %s:%zu: %zu fields where the header has %zu",
                            ctx->task_id, ctx->source->file, record->line, record->count,
                            ctx->width);
    json_t *object = json_object();
    int rc = object ? 0 : sx_error_set(err, "out of memory");
    for (size_t i = 0; i < ctx->source->column_count && rc == 0; i++) {
        int64_t timestamp = 0;
        json_t *value = convert_field(ctx, record, i, &timestamp, err);
        if (!value)
            rc = -1;
        else if ((long)i == ctx->event_column && json_is_null(value))
            rc = row_error(ctx, record, i, "is NULL, but it is the event time", err);
        else if ((long)i == ctx->event_column)
            out->timestamp = timestamp;
        if (value &&
            json_object_set_new(object, ctx->source->columns[i].name, value) != 0)
            rc = sx_error_set(err, "out of memory");
    }
    if (rc == 0 && !(out->value = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        rc = sx_error_set(err, "out of memory");
    json_decref(object);
    return rc;
}

/* Maps every output column to its CSV field and finds the event time. */
static int build_context(context_t *ctx, const sx_csv_table_t *table, sx_error_t *err)
{
    const sx_source_t *source = ctx->source;
    ctx->width = table->records[0].count;
    ctx->event_column = -1;
    ctx->field_of = sx_alloc(source->column_count, sizeof(long));
    for (size_t i = 0; i < source->column_count; i++) {
        const sx_column_t *c = &source->columns[i];
        ctx->field_of[i] = sx_csv_column_index(table, c->from);
        if (ctx->field_of[i] < 0)
            return sx_error_set(err, "task %s: %s: no column %s in the header",
                                ctx->task_id, source->file, c->from);
        if (source->kind == SX_SOURCE_LIVE && source->event_time &&
            strcmp(c->name, source->event_time) == 0)
            ctx->event_column = (long)i;
    }
    if (source->kind == SX_SOURCE_LIVE &&
        (ctx->event_column < 0 ||
         source->columns[ctx->event_column].time_from == SX_TIME_NONE))
        return sx_error_set(
            err, "task %s: source %s: event time column %s has no time conversion",
            ctx->task_id, source->name,
            source->event_time ? source->event_time : "(none)");
    return 0;
}

static int compare_records(const void *a, const void *b)
{
    const record_t *x = a, *y = b;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

static int convert_table(sx_prepare_t *self, const context_t *ctx,
                         const sx_csv_table_t *table, sx_error_t *err)
{
    self->records = sx_alloc(table->count, sizeof *self->records);
    for (size_t r = 1; r < table->count; r++) {
        if (table->records[r].count == 0)
            continue; /* a blank line, skipped as pandas does */
        record_t *record = &self->records[self->count];
        record->sequence = self->count;
        if (convert_row(ctx, &table->records[r], record, err) != 0)
            return -1;
        self->count++;
    }
    if (ctx->source->kind == SX_SOURCE_LIVE)
        qsort(self->records, self->count, sizeof *self->records, compare_records);
    return 0;
}

sx_prepare_t *sx_prepare_new(const char *task_id, const sx_source_t *source,
                             sx_error_t *err)
{
    sx_csv_table_t *table = sx_csv_read(source->path, 0, err);
    if (!table) {
        sx_error_prefix(err, "task %s: source %s", task_id, source->name);
        return NULL;
    }
    sx_prepare_t *self = sx_new(sx_prepare_t);
    context_t ctx = {.task_id = task_id, .source = source};
    int rc = 0;
    if (table->count == 0)
        rc = sx_error_set(err, "task %s: %s: no header", task_id, source->file);
    if (rc == 0)
        rc = build_context(&ctx, table, err);
    if (rc == 0)
        rc = convert_table(self, &ctx, table, err);
    free(ctx.field_of);
    sx_csv_table_destroy(&table);
    if (rc != 0)
        sx_prepare_destroy(&self);
    return self;
}

void sx_prepare_destroy(sx_prepare_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_prepare_t *self = *self_p;
    for (size_t i = 0; self->records && i < self->count; i++)
        free(self->records[i].value);
    free(self->records);
    free(self);
    *self_p = NULL;
}

size_t sx_prepare_count(const sx_prepare_t *self)
{
    return self->count;
}

const char *sx_prepare_value(const sx_prepare_t *self, size_t index)
{
    return index < self->count ? self->records[index].value : NULL;
}

int64_t sx_prepare_timestamp(const sx_prepare_t *self, size_t index)
{
    return index < self->count ? self->records[index].timestamp : 0;
}

/* ---- self-test ---------------------------------------------------------- */

/* A source over a CSV written to a scratch folder. */
typedef struct {
    char dir[64];
    char path[128];
    sx_source_t source;
} fixture_t;

static void fixture_init(fixture_t *f, const char *csv, sx_source_kind_t kind,
                         sx_column_t *columns, size_t count, const char *event_time)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/sx_prepare_XXXXXX");
    SX_CHECK(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/rows.csv", f->dir);
    FILE *out = fopen(f->path, "wb");
    SX_CHECK(out && fputs(csv, out) >= 0 && fclose(out) == 0);
    f->source = (sx_source_t){.name = "bids",
                              .kind = kind,
                              .file = "sources/rows.csv",
                              .path = f->path,
                              .columns = columns,
                              .column_count = count,
                              .event_time = (char *)event_time};
}

static void fixture_clear(fixture_t *f)
{
    unlink(f->path);
    rmdir(f->dir);
}

/* Prepares and joins "timestamp value" lines, or returns the error. */
static void check_prepare(const char *csv, sx_source_kind_t kind, sx_column_t *columns,
                          size_t count, const char *event_time, const char *expected)
{
    fixture_t f;
    fixture_init(&f, csv, kind, columns, count, event_time);
    sx_error_t err;
    sx_error_clear(&err);
    sx_prepare_t *prepared = sx_prepare_new("t7", &f.source, &err);
    char got[2048] = "";
    if (!prepared)
        snprintf(got, sizeof got, "%s", err.msg);
    for (size_t i = 0; prepared && i < sx_prepare_count(prepared); i++) {
        size_t used = strlen(got);
        snprintf(got + used, sizeof got - used, "%lld %s\n",
                 (long long)sx_prepare_timestamp(prepared, i),
                 sx_prepare_value(prepared, i));
    }
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "prepare: got\n%s\nexpected\n%s\n", got, expected);
    SX_CHECK(strcmp(got, expected) == 0);
    SX_CHECK(!prepared || sx_prepare_value(prepared, sx_prepare_count(prepared)) == NULL);
    sx_prepare_destroy(&prepared);
    sx_prepare_destroy(&prepared);
    fixture_clear(&f);
}

#define COLUMN(name, from)                                                               \
    {                                                                                    \
        (char *)(name), (char *)(from), SX_TIME_NONE, NULL, SX_TIME_TO_SQL               \
    }
#define TIME(name, from, kind, pattern, to)                                              \
    {                                                                                    \
        (char *)(name), (char *)(from), (kind), (char *)(pattern), (to)                  \
    }

static void test_projection_nulls_and_order(void)
{
    /* Renamed, reordered and dropped columns; empty fields are null; values
     * stay text; live rows sorted by event time, ties in file order. */
    sx_column_t columns[] = {
        COLUMN("auction", "auction_id"), COLUMN("price", "price"),
        TIME("bid_time", "ts", SX_TIME_STRFTIME, "%Y-%m-%d %H:%M:%S", SX_TIME_TO_SQL)};
    check_prepare(
        "price,auction_id,extra,ts\n"
        "1.50,7,x,2024-01-01 00:00:05\n"
        ",8,y,2024-01-01 00:00:01\n"
        "\n"
        "\"2,5\",9,z,2024-01-01 00:00:05\n"
        "3,10,w,2024-01-01 00:00:01\n",
        SX_SOURCE_LIVE, columns, 3, "bid_time",
        "1704067201000 {\"auction\":\"8\",\"price\":null,\"bid_time\":\"2024-01-01 "
        "00:00:01\"}\n"
        "1704067201000 {\"auction\":\"10\",\"price\":\"3\",\"bid_time\":\"2024-01-01 "
        "00:00:01\"}\n"
        "1704067205000 {\"auction\":\"7\",\"price\":\"1.50\",\"bid_time\":\"2024-01-01 "
        "00:00:05\"}\n"
        "1704067205000 {\"auction\":\"9\",\"price\":\"2,5\",\"bid_time\":\"2024-01-01 "
        "00:00:05\"}\n");
    /* Static sources keep file order and carry no timestamp. */
    sx_column_t names[] = {COLUMN("id", "id"), COLUMN("name", "name")};
    check_prepare(
        "id,name\n2,b\n1,\"a \"\"q\"\"\"\n", SX_SOURCE_STATIC, names, 2, NULL,
        "0 {\"id\":\"2\",\"name\":\"b\"}\n0 {\"id\":\"1\",\"name\":\"a \\\"q\\\"\"}\n");
    check_prepare("id,name\n", SX_SOURCE_STATIC, names, 2, NULL, "");
}

static void test_time_conversions(void)
{
    sx_column_t epoch_s[] = {TIME("t", "t", SX_TIME_EPOCH_S, NULL, SX_TIME_TO_SQL)};
    check_prepare("t\n1700000000\n1700000000.25\n-1.5\n", SX_SOURCE_LIVE, epoch_s, 1, "t",
                  "-1500 {\"t\":\"1969-12-31 23:59:58.500\"}\n"
                  "1700000000000 {\"t\":\"2023-11-14 22:13:20\"}\n"
                  "1700000000250 {\"t\":\"2023-11-14 22:13:20.250\"}\n");
    sx_column_t epoch_ms[] = {
        TIME("t", "t", SX_TIME_EPOCH_MS, NULL, SX_TIME_TO_EPOCH_MS)};
    check_prepare("t\n1700000000123\n5.5\n", SX_SOURCE_LIVE, epoch_ms, 1, "t",
                  "6 {\"t\":6}\n1700000000123 {\"t\":1700000000123}\n");
    sx_column_t fraction[] = {
        TIME("t", "t", SX_TIME_STRFTIME, "%Y-%m-%dT%H:%M:%S.%f", SX_TIME_TO_SQL)};
    check_prepare("t\n2024-01-01T10:00:00.5\n2024-01-01T10:00:00.123456789\n",
                  SX_SOURCE_LIVE, fraction, 1, "t",
                  "1704103200123 {\"t\":\"2024-01-01 10:00:00.123\"}\n"
                  "1704103200500 {\"t\":\"2024-01-01 10:00:00.500\"}\n");
    /* %I with %p still works when a %f sits between them. */
    sx_column_t twelve[] = {
        TIME("t", "t", SX_TIME_STRFTIME, "%d/%m/%Y %I:%M:%S.%f %p", SX_TIME_TO_EPOCH_MS)};
    check_prepare("t\n02/03/2024 01:02:03.04 PM\n", SX_SOURCE_LIVE, twelve, 1, "t",
                  "1709384523040 {\"t\":1709384523040}\n");
    sx_column_t date_only[] = {
        TIME("d", "d", SX_TIME_STRFTIME, "%d.%m.%Y", SX_TIME_TO_SQL)};
    check_prepare("d\n29.02.2024\n", SX_SOURCE_STATIC, date_only, 1, NULL,
                  "0 {\"d\":\"2024-02-29 00:00:00\"}\n");
}

static void test_bad_rows_name_the_place(void)
{
    sx_column_t columns[] = {
        COLUMN("id", "id"),
        TIME("bid_time", "ts", SX_TIME_STRFTIME, "%Y-%m-%d %H:%M:%S", SX_TIME_TO_SQL)};
    const char *header = "id,ts\n1,2024-01-01 00:00:00\n";
    char csv[256];
    snprintf(csv, sizeof csv, "%s2,2024-02-30 00:00:00\n", header);
    check_prepare(
        csv, SX_SOURCE_LIVE, columns, 2, "bid_time",
        "task t7: sources/rows.csv:3: column ts (as bid_time): '2024-02-30 00:00:00' "
        "does not convert from time format %Y-%m-%d %H:%M:%S");
    snprintf(csv, sizeof csv, "%s2,2024-01-01 00:00:00 junk\n", header);
    check_prepare(
        csv, SX_SOURCE_LIVE, columns, 2, "bid_time",
        "task t7: sources/rows.csv:3: column ts (as bid_time): '2024-01-01 00:00:00 "
        "junk' does not convert from time format %Y-%m-%d %H:%M:%S");
    snprintf(csv, sizeof csv, "%s\n\n2,\n", header);
    check_prepare(
        csv, SX_SOURCE_LIVE, columns, 2, "bid_time",
        "task t7: sources/rows.csv:5: column ts (as bid_time): '' is NULL, but it is "
        "the event time");
    snprintf(csv, sizeof csv, "%s3\n", header);
    check_prepare(csv, SX_SOURCE_LIVE, columns, 2, "bid_time",
                  "task t7: sources/rows.csv:3: 1 fields where the header has 2");
    snprintf(csv, sizeof csv, "%s\xff,2024-01-01 00:00:00\n", header);
    check_prepare(
        csv, SX_SOURCE_LIVE, columns, 2, "bid_time",
        "task t7: sources/rows.csv:3: column id (as id): '\xff' is not valid UTF-8");
    sx_column_t epoch[] = {TIME("t", "t", SX_TIME_EPOCH_S, NULL, SX_TIME_TO_SQL)};
    check_prepare(
        "t\n12e3\n", SX_SOURCE_LIVE, epoch, 1, "t",
        "task t7: sources/rows.csv:2: column t (as t): '12e3' does not convert from "
        "time format epoch_s");
    check_prepare(
        "t\n99999999999999\n", SX_SOURCE_LIVE, epoch, 1, "t",
        "task t7: sources/rows.csv:2: column t (as t): '99999999999999' is outside "
        "the years 0000-9999");
}

static void test_unreadable_csv_names_task_and_source(void)
{
    sx_column_t epoch[] = {TIME("t", "t", SX_TIME_EPOCH_S, NULL, SX_TIME_TO_SQL)};
    fixture_t f;
    fixture_init(&f, "t\n\"1\n", SX_SOURCE_LIVE, epoch, 1, "t");
    sx_error_t err;
    SX_CHECK(sx_prepare_new("t7", &f.source, &err) == NULL);
    SX_CHECK(strncmp(err.msg, "task t7: source bids: /tmp/", 27) == 0);
    SX_CHECK(strstr(err.msg, "/rows.csv:3: malformed quoting") != NULL);
    fixture_clear(&f);
    f.source.path = "/nonexistent/rows.csv";
    SX_CHECK(sx_prepare_new("t7", &f.source, &err) == NULL);
    SX_CHECK(
        strstr(err.msg, "task t7: source bids: /nonexistent/rows.csv: cannot open") ==
        err.msg);
}

/* Random time values against patterns with %f and %p: each converts or is
 * refused, never a crash; whatever converts formats back within 0-9999. */
static void test_random_times_never_crash(void)
{
    static const char alphabet[] = "0123456789-:./ TAPMf%";
    static const sx_column_t columns[] = {
        TIME("t", "t", SX_TIME_STRFTIME, "%Y-%m-%d %H:%M:%S.%f", SX_TIME_TO_SQL),
        TIME("t", "t", SX_TIME_STRFTIME, "%d/%m/%Y %I:%M:%S.%f %p", SX_TIME_TO_SQL),
        TIME("t", "t", SX_TIME_EPOCH_S, NULL, SX_TIME_TO_SQL),
        TIME("t", "t", SX_TIME_EPOCH_MS, NULL, SX_TIME_TO_SQL)};
    unsigned state = 4242;
    char value[40], sql[48];
    for (int round = 0; round < 40000; round++) {
        size_t length = (size_t)(round % (int)sizeof value);
        for (size_t i = 0; i < length; i++) {
            state = state * 1103515245u + 12345u;
            value[i] = alphabet[(state >> 16) % (sizeof alphabet - 1)];
        }
        value[length] = '\0';
        int64_t ms = 0;
        if (parse_time(&columns[round % 4], value, &ms) == 0 &&
            format_sql(ms, sql, sizeof sql) == 0)
            SX_CHECK(strlen(sql) == 19 || strlen(sql) == 23);
    }
}

void sx_prepare_test(bool verbose)
{
    test_random_times_never_crash();
    (void)verbose;
    test_projection_nulls_and_order();
    test_time_conversions();
    test_bad_rows_name_the_place();
    test_unreadable_csv_names_task_and_source();
}
