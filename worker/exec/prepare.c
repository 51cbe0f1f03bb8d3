/* prepare.c: step 1 of the protocol for one source (see prepare.h). The CSV
 * is read with the common reader; each data row becomes one JSON record
 * through the registered projection and time conversion, and live rows are
 * then sorted stably by event time. Any row that does not convert stops the
 * preparation with a message naming task, file, line, column and value,
 * because a task whose inputs are broken cannot be scored fairly.
 * A source may hold millions of rows, so the records are written straight
 * into one growing buffer (no allocation per row, no JSON tree): values are
 * escaped exactly as jansson's compact dump escapes them, and times
 * in the common fixed-width forms are read and written by hand, falling
 * back to strptime/timegm for everything else (which then decides); the
 * date of the last time read and written is kept for the next row's. */
#include "worker/exec/prepare.h"

#include "common/csv.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Moves per row that sort_records spends before it hands a source far from
 * event-time order to qsort. */
#define SORT_MOVES_PER_ROW 32

typedef struct {
    size_t at; /* of its value in `values` or, scanned, the row's number among
                  the data rows; rises in file order, so it also breaks ties
                  for a stable sort */
    int64_t timestamp;
} record_t;

/* The dates of the last time read and written: rows near in time share
 * them, and working a date out is most of a time's conversion. */
typedef struct {
    bool read;             /* read_days holds the day of read_date (Y, m, d) */
    int read_date[3];      /* as parse_fixed read them; an existing date */
    int64_t read_days;     /* since 1970-01-01 */
    bool written;          /* written_date holds the day written_days */
    int64_t written_days;  /* since 1970-01-01; of a year 0-9999 */
    char written_date[11]; /* "YYYY-MM-DD " */
} dates_t;

struct _sx_prepare_t {
    record_t *records;
    size_t count, capacity;
    char *values; /* every record's JSON, NUL-terminated, in file order; when
                     scanned, the last row's only */
    size_t used, size;
    bool scanned; /* sx_prepare_scan: values are made again by sx_prepare_each */
    dates_t dates;
};

/* ---- civil time --------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * algorithm), as timegm counts them. */
static int64_t days_from_civil(int64_t year, int month, int day)
{
    year -= month <= 2;
    int64_t era = (year >= 0 ? year : year - 399) / 400;
    int64_t year_of_era = year - era * 400;
    int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    int64_t day_of_era =
        year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;
}

/* The inverse, as gmtime splits a day count. */
static void civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t day_of_era = days - era * 146097;
    int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t shifted_month = (5 * day_of_year + 2) / 153;
    *day = (int)(day_of_year - (153 * shifted_month + 2) / 5 + 1);
    *month = (int)(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
    *year = year_of_era + era * 400 + (*month <= 2);
}

static int days_in_month(int64_t year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

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

/* Whether year-month-day exists; if so dates->read_days is its day. */
static bool read_date(dates_t *dates, int year, int month, int day)
{
    int *last = dates->read_date;
    if (dates->read && last[0] == year && last[1] == month && last[2] == day)
        return true;
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
        return false;
    dates->read = true;
    last[0] = year;
    last[1] = month;
    last[2] = day;
    dates->read_days = days_from_civil(year, month, day);
    return true;
}

/* Reads exactly `width` digits; -1 when any is missing. */
static int fixed_digits(const char **p, int width)
{
    int value = 0;
    for (int i = 0; i < width; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        value = value * 10 + (**p - '0');
    }
    return value;
}

/* The fast path of parse_pattern: a pattern of %Y %m %d %H %M %S, at most one
 * %f, spaces and other bytes, over a text with every field at full width (4
 * digits for %Y, 2 for the others, 1-9 for %f), one space for each space and
 * every other byte equal, naming an existing time of seconds 0-59. There
 * strptime would read the same fields and timegm would not normalize, so
 * the result is theirs. Returns 1 (done), or 0 when the text or pattern is
 * not of that form: strptime then decides. */
static int parse_fixed(const char *text, const char *pattern, dates_t *dates, int64_t *ms)
{
    int year = -1, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
    bool fraction = false;
    const char *p = text;
    for (const char *f = pattern; *f; f++) {
        if (isspace((unsigned char)*f)) {
            /* strptime lets it match any run of white space: here one ' '. */
            if (*f != ' ' || *p != ' ' || isspace((unsigned char)p[1]))
                return 0;
            p++;
            continue;
        }
        if (*f != '%') {
            if (*p++ != *f)
                return 0;
            continue;
        }
        f++;
        int value = 0;
        switch (*f) {
        case 'Y':
            value = year = fixed_digits(&p, 4);
            break;
        case 'm':
            value = month = fixed_digits(&p, 2);
            break;
        case 'd':
            value = day = fixed_digits(&p, 2);
            break;
        case 'H':
            value = hour = fixed_digits(&p, 2);
            break;
        case 'M':
            value = minute = fixed_digits(&p, 2);
            break;
        case 'S':
            value = second = fixed_digits(&p, 2);
            break;
        case 'f': {
            const char *start = p;
            while (*p >= '0' && *p <= '9')
                p++;
            if (fraction || p == start || p - start > 9)
                return 0;
            for (int i = 0; i < 3; i++)
                millis = millis * 10 + (start + i < p ? start[i] - '0' : 0);
            fraction = true;
            break;
        }
        default:
            return 0;
        }
        if (value < 0)
            return 0;
    }
    if (*p != '\0' || year < 0 || hour > 23 || minute > 59 || second > 59 ||
        !read_date(dates, year, month, day))
        return 0;
    int64_t seconds = dates->read_days * 86400 + hour * 3600 + minute * 60 + second;
    *ms = seconds * 1000 + millis;
    return 1;
}

/* Reads `text` with a strptime pattern (plus %f) as UTC epoch ms. The whole
 * text must match and the date must exist. */
static int parse_pattern(const char *text, const char *pattern, dates_t *dates,
                         int64_t *ms)
{
    if (parse_fixed(text, pattern, dates, ms))
        return 0;
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

static int parse_time(const sx_column_t *column, const char *text, dates_t *dates,
                      int64_t *ms)
{
    switch (column->time_from) {
    case SX_TIME_EPOCH_S:
        return parse_epoch(text, 1000, ms);
    case SX_TIME_EPOCH_MS:
        return parse_epoch(text, 1, ms);
    case SX_TIME_STRFTIME:
        return parse_pattern(text, column->time_pattern, dates, ms);
    default:
        return -1;
    }
}

static char *put_digits(char *out, int64_t value, int width)
{
    for (int i = width - 1; i >= 0; i--, value /= 10)
        out[i] = (char)('0' + value % 10);
    return out + width;
}

/* Whether `days` falls in the years 0-9999; if so dates->written_date is
 * its "YYYY-MM-DD ". */
static bool write_date(dates_t *dates, int64_t days)
{
    if (dates->written && dates->written_days == days)
        return true;
    int64_t year;
    int month, day;
    civil_from_days(days, &year, &month, &day);
    if (year < 0 || year > 9999)
        return false;
    char *p = put_digits(dates->written_date, year, 4);
    *p++ = '-';
    p = put_digits(p, month, 2);
    *p++ = '-';
    p = put_digits(p, day, 2);
    *p = ' ';
    dates->written = true;
    dates->written_days = days;
    return true;
}

/* "YYYY-MM-DD HH:MM:SS[.fff]" (NUL-terminated, at most 24 bytes) for epoch
 * ms, as gmtime splits it: returns its length, or -1 outside years 0-9999. */
static int format_sql(int64_t ms, dates_t *dates, char *out)
{
    int64_t seconds = ms / 1000 - (ms % 1000 < 0);
    int64_t millis = ms - seconds * 1000;
    int64_t days = seconds / 86400 - (seconds % 86400 < 0);
    int64_t second_of_day = seconds - days * 86400;
    if (!write_date(dates, days))
        return -1;
    memcpy(out, dates->written_date, sizeof dates->written_date);
    char *p = out + sizeof dates->written_date;
    p = put_digits(p, second_of_day / 3600, 2);
    *p++ = ':';
    p = put_digits(p, second_of_day / 60 % 60, 2);
    *p++ = ':';
    p = put_digits(p, second_of_day % 60, 2);
    if (millis != 0) {
        *p++ = '.';
        p = put_digits(p, millis, 3);
    }
    *p = '\0';
    return (int)(p - out);
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
    char **keys;    /* per output column: its JSON key and ':' (',' before) */
    size_t *key_lengths;
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

/* ---- writing records ---------------------------------------------------- */

/* Room for `more` bytes at the end of the values. */
static char *reserve(sx_prepare_t *self, size_t more)
{
    if (self->used + more > self->size) {
        size_t size = self->size ? self->size : 1 << 16;
        while (size < self->used + more)
            size *= 2;
        self->values = sx_realloc(self->values, size, 1);
        self->size = size;
    }
    return self->values + self->used;
}

static void put(sx_prepare_t *self, const char *bytes, size_t length)
{
    memcpy(reserve(self, length), bytes, length);
    self->used += length;
}

/* Length of the UTF-8 sequence at text (at most `left` bytes), or 0 when it
 * is not valid UTF-8: overlong forms, surrogates and code points above
 * U+10FFFF are refused, as jansson refuses them. */
static size_t utf8_length(const unsigned char *text, size_t left)
{
    unsigned char c = text[0];
    size_t length = c < 0x80   ? 1
                    : c < 0xC2 ? 0
                    : c < 0xE0 ? 2
                    : c < 0xF0 ? 3
                    : c < 0xF5 ? 4
                               : 0;
    if (length <= 1 || length > left)
        return length > left ? 0 : length;
    uint32_t point = c & (0x7F >> length);
    for (size_t i = 1; i < length; i++) {
        if ((text[i] & 0xC0) != 0x80)
            return 0;
        point = point << 6 | (text[i] & 0x3F);
    }
    if ((length == 3 && (point < 0x800 || (point >= 0xD800 && point <= 0xDFFF))) ||
        (length == 4 && (point < 0x10000 || point > 0x10FFFF)))
        return 0;
    return length;
}

/* A JSON string of the text, escaped as jansson's dump escapes it without
 * flags: '"', '\\' and the control characters, the short forms where JSON
 * has them; every other byte as it is. -1 when the text is not UTF-8. */
static int put_string(sx_prepare_t *self, const char *text, size_t length)
{
    /* Each byte grows to at most 6 ("\u001F"), plus the quotes. */
    char *out = reserve(self, 6 * length + 2), *start = out;
    *out++ = '"';
    for (size_t i = 0; i < length;) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { /* most bytes */
            *out++ = (char)c;
            i++;
            continue;
        }
        size_t n = utf8_length((const unsigned char *)text + i, length - i);
        if (n == 0)
            return -1;
        if (n > 1 || (c >= 0x20 && c != '"' && c != '\\')) {
            memcpy(out, text + i, n);
            out += n;
            i += n;
            continue;
        }
        static const char hex[] = "0123456789ABCDEF";
        const char *shortcut = strchr("\"\\\b\f\n\r\t", c);
        *out++ = '\\';
        if (c != '\0' && shortcut) {
            *out++ = "\"\\bfnrt"[shortcut - "\"\\\b\f\n\r\t"];
        } else {
            memcpy(out, "u00", 3);
            out[3] = hex[c >> 4];
            out[4] = hex[c & 15];
            out += 5;
        }
        i++;
    }
    *out++ = '"';
    self->used += (size_t)(out - start);
    return 0;
}

/* Writes the JSON value of one output column of a row; *timestamp receives
 * the converted time of a time column, *null whether the value is null. */
static int convert_field(sx_prepare_t *self, const context_t *ctx,
                         const sx_csv_record_t *record, size_t column, int64_t *timestamp,
                         bool *null, sx_error_t *err)
{
    const sx_column_t *c = &ctx->source->columns[column];
    const char *text = record->fields[ctx->field_of[column]];
    size_t length = record->lengths[ctx->field_of[column]];
    *null = length == 0;
    if (length == 0) {
        put(self, "null", 4);
        return 0;
    }
    if (c->time_from == SX_TIME_NONE)
        return put_string(self, text, length) == 0
                   ? 0
                   : row_error(ctx, record, column, "is not valid UTF-8", err);
    if (strlen(text) != length || parse_time(c, text, &self->dates, timestamp) != 0) {
        char why[300];
        snprintf(why, sizeof why, "does not convert from time format %s",
                 time_from_text(c));
        return row_error(ctx, record, column, why, err);
    }
    char number[32];
    if (c->time_to == SX_TIME_TO_EPOCH_MS) {
        put(self, number,
            (size_t)snprintf(number, sizeof number, "%lld", (long long)*timestamp));
        return 0;
    }
    char sql[32];
    int written = format_sql(*timestamp, &self->dates, sql + 1);
    if (written < 0)
        return row_error(ctx, record, column, "is outside the years 0000-9999", err);
    sql[0] = sql[written + 1] = '"';
    put(self, sql, (size_t)written + 2);
    return 0;
}

/* Writes one data row's value at the end of the values: the compact JSON
 * object of the output columns in projection order, NUL-terminated; and
 * its event time into *event_ms (0 for a static source). */
static int convert_value(sx_prepare_t *self, const context_t *ctx,
                         const sx_csv_record_t *record, int64_t *event_ms,
                         sx_error_t *err)
{
    if (record->count != ctx->width)
        return sx_error_set(err, "task %s: %s:%zu: %zu fields where the header has %zu",
                            ctx->task_id, ctx->source->file, record->line, record->count,
                            ctx->width);
    *event_ms = 0;
    put(self, "{", 1);
    for (size_t i = 0; i < ctx->source->column_count; i++) {
        int64_t timestamp = 0;
        bool null;
        put(self, ctx->keys[i], ctx->key_lengths[i]);
        if (convert_field(self, ctx, record, i, &timestamp, &null, err) != 0)
            return -1;
        if ((long)i == ctx->event_column && null)
            return row_error(ctx, record, i, "is NULL, but it is the event time", err);
        if ((long)i == ctx->event_column)
            *event_ms = timestamp;
    }
    put(self, "}", 2); /* with its NUL */
    return 0;
}

/* Appends one data row's record. Scanned, its value is checked and then
 * dropped: only its row number and event time stay. */
static int convert_row(sx_prepare_t *self, const context_t *ctx,
                       const sx_csv_record_t *record, sx_error_t *err)
{
    if (self->count == self->capacity) {
        self->capacity = self->capacity ? 2 * self->capacity : 1024;
        self->records = sx_realloc(self->records, self->capacity, sizeof *self->records);
    }
    record_t *out = &self->records[self->count];
    *out = (record_t){.at = self->scanned ? self->count : self->used};
    if (self->scanned)
        self->used = 0;
    if (convert_value(self, ctx, record, &out->timestamp, err) != 0)
        return -1;
    self->count++;
    return 0;
}

/* ",\"NAME\":" (without the comma for the first column) and its length;
 * names come from task.json, which jansson has read as UTF-8. */
static char *json_key(const char *name, bool comma, size_t *length)
{
    sx_prepare_t scratch = {0};
    if (comma)
        put(&scratch, ",", 1);
    put_string(&scratch, name, strlen(name));
    put(&scratch, ":", 2); /* with its NUL */
    *length = scratch.used - 1;
    return scratch.values;
}

/* Maps every output column to its CSV field and finds the event time. */
static int build_context(context_t *ctx, const sx_csv_record_t *header, sx_error_t *err)
{
    const sx_source_t *source = ctx->source;
    ctx->width = header->count;
    ctx->event_column = -1;
    ctx->field_of = sx_alloc(source->column_count, sizeof(long));
    ctx->keys = sx_alloc(source->column_count, sizeof(char *));
    ctx->key_lengths = sx_alloc(source->column_count, sizeof(size_t));
    for (size_t i = 0; i < source->column_count; i++) {
        const sx_column_t *c = &source->columns[i];
        ctx->keys[i] = json_key(c->name, i > 0, &ctx->key_lengths[i]);
        ctx->field_of[i] = sx_csv_record_index(header, c->from);
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
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Sorts the records by event time, stably (compare_records breaks ties on
 * the row). A live source is mostly in event-time order, its rows a few
 * places off: an insertion sort moves each row only as far as it stands from
 * its place, about n steps in all, and needs no second array the size of
 * the records, which qsort's merge sort takes. A source far from order
 * spends a budget of moves, and qsort sorts the rest. */
static void sort_records(record_t *records, size_t count)
{
    size_t budget = SORT_MOVES_PER_ROW * count;
    for (size_t i = 1; i < count; i++) {
        record_t row = records[i];
        size_t at = i;
        for (; at > 0 && compare_records(&records[at - 1], &row) > 0; at--, budget--) {
            if (budget == 0) {
                records[at] = row;
                qsort(records, count, sizeof *records, compare_records);
                return;
            }
            records[at] = records[at - 1];
        }
        records[at] = row;
    }
}

/* One preparation as the CSV reader hands it rows. The first error is kept
 * in `failed` and the reading goes on without converting: an error of the
 * CSV itself further down (quoting) still wins, as when the file was read
 * whole before any row was converted. */
typedef struct {
    sx_prepare_t *self;
    context_t ctx;
    bool header_seen;
    bool failed;
    sx_error_t error;
} preparing_t;

static int on_csv_record(const sx_csv_record_t *record, void *arg, sx_error_t *err)
{
    (void)err;
    preparing_t *p = arg;
    if (p->failed)
        return 0;
    if (!p->header_seen) {
        p->header_seen = true;
        p->failed = build_context(&p->ctx, record, &p->error) != 0;
    } else if (record->count > 0) { /* a blank line is skipped, as pandas does */
        p->failed = convert_row(p->self, &p->ctx, record, &p->error) != 0;
    }
    return 0;
}

static void context_clear(context_t *ctx)
{
    for (size_t i = 0; ctx->keys && i < ctx->source->column_count; i++)
        free(ctx->keys[i]);
    free(ctx->keys);
    free(ctx->key_lengths);
    free(ctx->field_of);
}

/* The whole preparation, keeping the values or (scanned) not. */
static sx_prepare_t *prepare(const char *task_id, const sx_source_t *source, bool scanned,
                             sx_error_t *err)
{
    preparing_t p = {.self = sx_new(sx_prepare_t),
                     .ctx = {.task_id = task_id, .source = source}};
    p.self->scanned = scanned;
    int rc = sx_csv_read_each(source->path, on_csv_record, &p, err);
    if (rc != 0)
        sx_error_prefix(err, "task %s: source %s", task_id, source->name);
    else if (!p.header_seen)
        rc = sx_error_set(err, "task %s: %s: no header", task_id, source->file);
    else if (p.failed)
        rc = sx_error_set(err, "%s", p.error.msg);
    context_clear(&p.ctx);
    sx_prepare_t *self = p.self;
    if (rc == 0 && source->kind == SX_SOURCE_LIVE)
        sort_records(self->records, self->count);
    if (rc != 0)
        sx_prepare_destroy(&self);
    return self;
}

sx_prepare_t *sx_prepare_new(const char *task_id, const sx_source_t *source,
                             sx_error_t *err)
{
    return prepare(task_id, source, false, err);
}

sx_prepare_t *sx_prepare_scan(const char *task_id, const sx_source_t *source,
                              sx_error_t *err)
{
    return prepare(task_id, source, true, err);
}

/* ---- streaming the records ---------------------------------------------- */

/* A value converted ahead of its turn, waiting in the reorder heap. */
typedef struct {
    size_t rank; /* its place in replay order */
    int64_t timestamp;
    char *value;
    size_t length; /* of value, without its NUL */
} pending_t;

/* The second reading of a scanned source: rows converted in file order,
 * handed to `each` in replay order. rank[n] is the replay place of data
 * row n (NULL: file order is replay order); a row converted before its
 * turn waits in a min-heap on rank, so memory grows with how far rows
 * stand from their place, not with the file. */
typedef struct {
    const sx_prepare_t *scan;
    sx_prepare_t value; /* scratch: the current row's value */
    context_t ctx;
    size_t *rank;
    size_t row;  /* data rows converted */
    size_t next; /* the replay place handed next */
    pending_t *heap;
    size_t waiting, room;
    sx_prepare_fn *each;
    void *arg;
    bool header_seen;
    bool told; /* err is complete (the file changed, or each's own) */
} streaming_t;

static void heap_push(streaming_t *s, pending_t item)
{
    if (s->waiting == s->room) {
        s->room = s->room ? 2 * s->room : 64;
        s->heap = sx_realloc(s->heap, s->room, sizeof *s->heap);
    }
    size_t at = s->waiting++;
    for (; at > 0 && s->heap[(at - 1) / 2].rank > item.rank; at = (at - 1) / 2)
        s->heap[at] = s->heap[(at - 1) / 2];
    s->heap[at] = item;
}

static pending_t heap_pop(streaming_t *s)
{
    pending_t top = s->heap[0], last = s->heap[--s->waiting];
    size_t at = 0;
    for (;;) {
        size_t child = 2 * at + 1;
        if (child >= s->waiting)
            break;
        if (child + 1 < s->waiting && s->heap[child + 1].rank < s->heap[child].rank)
            child++;
        if (s->heap[child].rank >= last.rank)
            break;
        s->heap[at] = s->heap[child];
        at = child;
    }
    if (s->waiting > 0)
        s->heap[at] = last;
    return top;
}

/* Hands over the value of replay place `next` and every waiting one after. */
static int hand_over(streaming_t *s, const char *value, size_t length, int64_t timestamp,
                     sx_error_t *err)
{
    int rc = s->each(value, length, timestamp, s->arg, err);
    s->next++;
    while (rc == 0 && s->waiting > 0 && s->heap[0].rank == s->next) {
        pending_t item = heap_pop(s);
        rc = s->each(item.value, item.length, item.timestamp, s->arg, err);
        free(item.value);
        s->next++;
    }
    return rc;
}

/* The file must convert as it did when scanned: the same rows with the same
 * event times (it changed otherwise, and the records would not be the
 * scanned ones). */
static int on_stream_record(const sx_csv_record_t *record, void *arg, sx_error_t *err)
{
    streaming_t *s = arg;
    if (!s->header_seen) {
        s->header_seen = true;
        s->told = build_context(&s->ctx, record, err) != 0;
        return s->told ? -1 : 0;
    }
    if (record->count == 0) /* blank, skipped as the scan skipped it */
        return 0;
    const sx_prepare_t *scan = s->scan;
    size_t row = s->row++, rank = s->rank && row < scan->count ? s->rank[row] : row;
    int64_t timestamp = 0;
    s->value.used = 0;
    if (row >= scan->count ||
        convert_value(&s->value, &s->ctx, record, &timestamp, err) != 0 ||
        timestamp != scan->records[rank].timestamp) {
        s->told = true;
        return sx_error_set(err, "task %s: %s:%zu: the file changed since it was read",
                            s->ctx.task_id, s->ctx.source->file, record->line);
    }
    size_t length = s->value.used - 1; /* without its NUL */
    if (rank == s->next) {
        int rc = hand_over(s, s->value.values, length, timestamp, err);
        s->told = rc != 0;
        return rc;
    }
    heap_push(s,
              (pending_t){rank, timestamp, sx_strndup(s->value.values, length), length});
    return 0;
}

/* Where each data row goes in replay order, or NULL when it stays in file
 * order (a static source, or a live one already sorted). */
static size_t *replay_ranks(const sx_prepare_t *self)
{
    bool moved = false;
    for (size_t i = 0; i < self->count && !moved; i++)
        moved = self->records[i].at != i;
    if (!moved)
        return NULL;
    size_t *rank = sx_alloc(self->count + 1, sizeof *rank);
    for (size_t i = 0; i < self->count; i++)
        rank[self->records[i].at] = i;
    return rank;
}

/* Record `index` of a source kept in memory (not scanned). */
static const char *kept_value(const sx_prepare_t *self, size_t index)
{
    return self->values + self->records[index].at;
}

int sx_prepare_each(const sx_prepare_t *self, const char *task_id,
                    const sx_source_t *source, sx_prepare_fn *each, void *arg,
                    sx_error_t *err)
{
    sx_error_clear(err);
    if (!self->scanned) {
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < self->count; i++) {
            const char *value = kept_value(self, i);
            rc = each(value, strlen(value), self->records[i].timestamp, arg, err);
        }
        return rc;
    }
    streaming_t s = {.scan = self,
                     .ctx = {.task_id = task_id, .source = source},
                     .rank = replay_ranks(self),
                     .each = each,
                     .arg = arg};
    int rc = sx_csv_read_each(source->path, on_stream_record, &s, err);
    if (rc == 0 && s.next != self->count)
        rc = sx_error_set(err, "task %s: %s: the file changed since it was read", task_id,
                          source->file);
    else if (rc != 0 && !s.told)
        sx_error_prefix(err, "task %s: source %s", task_id, source->name);
    while (s.waiting > 0)
        free(heap_pop(&s).value);
    free(s.heap);
    free(s.rank);
    free(s.value.values);
    context_clear(&s.ctx);
    return rc;
}

void sx_prepare_destroy(sx_prepare_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_prepare_t *self = *self_p;
    free(self->records);
    free(self->values);
    free(self);
    *self_p = NULL;
}

size_t sx_prepare_count(const sx_prepare_t *self)
{
    return self->count;
}

const char *sx_prepare_value(const sx_prepare_t *self, size_t index)
{
    return index < self->count && !self->scanned ? kept_value(self, index) : NULL;
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

/* Appends a handed-over record as a "timestamp value" line. */
static int join_record(const char *value, size_t length, int64_t timestamp, void *arg,
                       sx_error_t *err)
{
    (void)err;
    char *got = arg;
    size_t used = strlen(got);
    SX_CHECK(length == strlen(value));
    snprintf(got + used, 2048 - used, "%lld %s\n", (long long)timestamp, value);
    return 0;
}

/* Prepares (kept, or scanned and handed over) and joins "timestamp value"
 * lines, or returns the error. */
static void prepare_joined(const sx_source_t *source, bool scanned, char got[2048])
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_prepare_t *prepared = scanned ? sx_prepare_scan("t7", source, &err)
                                     : sx_prepare_new("t7", source, &err);
    got[0] = '\0';
    if (!prepared || sx_prepare_each(prepared, "t7", source, join_record, got, &err) != 0)
        snprintf(got, 2048, "%s", err.msg);
    for (size_t i = 0; prepared && i < sx_prepare_count(prepared); i++)
        SX_CHECK(strstr(got, sx_prepare_value(prepared, i) ? sx_prepare_value(prepared, i)
                                                           : "") != NULL);
    SX_CHECK(!prepared || sx_prepare_value(prepared, sx_prepare_count(prepared)) == NULL);
    SX_CHECK(!prepared || !scanned || sx_prepare_value(prepared, 0) == NULL);
    sx_prepare_destroy(&prepared);
    sx_prepare_destroy(&prepared);
}

/* The records kept and the records scanned then handed over alike. */
static void check_prepare(const char *csv, sx_source_kind_t kind, sx_column_t *columns,
                          size_t count, const char *event_time, const char *expected)
{
    fixture_t f;
    fixture_init(&f, csv, kind, columns, count, event_time);
    for (int scanned = 0; scanned < 2; scanned++) {
        char got[2048];
        prepare_joined(&f.source, scanned, got);
        if (strcmp(got, expected) != 0)
            fprintf(stderr, "prepare%s: got\n%s\nexpected\n%s\n",
                    scanned ? " (scanned)" : "", got, expected);
        SX_CHECK(strcmp(got, expected) == 0);
    }
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
        sx_selftest_random_text(value, length, alphabet, &state);
        value[length] = '\0';
        int64_t ms = 0;
        dates_t dates = {0};
        if (parse_time(&columns[round % 4], value, &dates, &ms) == 0 &&
            format_sql(ms, &dates, sql) > 0)
            SX_CHECK(strlen(sql) == 19 || strlen(sql) == 23);
    }
}

/* The dates remembered from one time to the next change no conversion: a
 * run of times across days, months, a leap day, a date that does not exist
 * and the years' ends reads and writes as each time alone. */
static void test_remembered_dates_change_nothing(void)
{
    static const char *const texts[] = {
        "2024-02-28 23:59:59", "2024-02-29 00:00:00", "2024-02-29 13:00:00",
        "2023-02-29 13:00:00", "2024-02-29 13:00:01", "2024-02-30 00:00:00",
        "2024-03-01 00:00:00", "0000-01-01 00:00:00", "9999-12-31 23:59:59",
        "2024-13-01 00:00:00", "2024-03-01 00:00:59"};
    static const int64_t times[] = {1709164799000,   1709164800001,   -62167219200000,
                                    -62167219200001, -62167219199999, 253402300799999,
                                    253402300800000, 1709164800000};
    const sx_column_t column =
        TIME("t", "t", SX_TIME_STRFTIME, "%Y-%m-%d %H:%M:%S", SX_TIME_TO_SQL);
    dates_t run = {0};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        dates_t alone = {0};
        int64_t ms = 0, ms_alone = 0;
        int rc = parse_time(&column, texts[i], &run, &ms);
        SX_CHECK(rc == parse_time(&column, texts[i], &alone, &ms_alone) &&
                 ms == ms_alone);
        SX_CHECK(rc == (i == 3 || i == 5 || i == 9 ? -1 : 0));
    }
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        dates_t alone = {0};
        char sql[32], sql_alone[32];
        int length = format_sql(times[i], &run, sql);
        SX_CHECK(length == format_sql(times[i], &alone, sql_alone));
        SX_CHECK(length < 0 ? i == 3 || i == 6 : strcmp(sql, sql_alone) == 0);
    }
}

/* sort_records orders as qsort does: rows a few places off, in order,
 * reversed (past the budget of moves: qsort sorts the rest), with ties. */
static void test_sort_records_as_qsort(void)
{
    enum { ROWS = 1000 };
    static record_t sorted[ROWS], expected[ROWS];
    for (int shape = 0; shape < 3; shape++) {
        for (size_t i = 0; i < ROWS; i++) {
            int64_t near = (int64_t)(i / 4 + (i * 2654435761u >> 8) % 13);
            int64_t time = shape == 0   ? near
                           : shape == 1 ? (int64_t)i
                                        : (int64_t)(ROWS - i) / 3;
            expected[i] = sorted[i] = (record_t){.at = i, .timestamp = time};
        }
        qsort(expected, ROWS, sizeof *expected, compare_records);
        sort_records(sorted, ROWS);
        SX_CHECK(memcmp(sorted, expected, sizeof sorted) == 0);
    }
}

void sx_prepare_test(bool verbose)
{
    test_remembered_dates_change_nothing();
    test_sort_records_as_qsort();
    test_random_times_never_crash();
    (void)verbose;
    test_projection_nulls_and_order();
    test_time_conversions();
    test_bad_rows_name_the_place();
    test_unreadable_csv_names_task_and_source();
}
