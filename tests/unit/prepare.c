/* tests/unit/prepare.c: source preparation (projection, time conversion, replay
 * order, errors naming task/file/line/column); and, on random inputs, that
 * the hand-written paths give what the general ones give: JSON
 * values byte for byte as jansson's compact dump, fixed-width times as
 * strptime/timegm read them, SQL times as gmtime splits them, and live rows
 * in stable event-time order. */
#include "worker/exec/prepare.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned s_state = 2718;

static unsigned next_random(unsigned bound)
{
    s_state = s_state * 1103515245u + 12345u;
    return (s_state >> 8) % bound;
}

/* A scratch CSV and a source over it. */
typedef struct {
    char dir[64];
    char path[128];
    sx_source_t source;
} scratch_t;

static void scratch_write(scratch_t *s, const char *csv, size_t length,
                          sx_source_kind_t kind, sx_column_t *columns, size_t count,
                          const char *event_time)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/sx_test_prepare_XXXXXX");
    SX_CHECK(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/rows.csv", s->dir);
    FILE *out = fopen(s->path, "wb");
    SX_CHECK(out && fwrite(csv, 1, length, out) == length && fclose(out) == 0);
    s->source = (sx_source_t){.name = "rows",
                              .kind = kind,
                              .file = "sources/rows.csv",
                              .path = s->path,
                              .columns = columns,
                              .column_count = count,
                              .event_time = (char *)event_time};
}

static void scratch_clear(scratch_t *s)
{
    unlink(s->path);
    rmdir(s->dir);
}

/* ---- JSON strings ---------------------------------------------------------- */

/* Bytes that matter to a JSON string: controls, quotes, backslash, slash,
 * DEL, CSV specials, valid UTF-8 of 2-4 bytes and invalid sequences
 * (overlong, surrogate, above U+10FFFF, stray continuation, cut short). */
static const char *const s_pieces[] = {"a",
                                       "Z",
                                       " ",
                                       "\"",
                                       "\\",
                                       "/",
                                       "\x7f",
                                       ",",
                                       "\n",
                                       "\r",
                                       "\t",
                                       "\b",
                                       "\f",
                                       "\x01",
                                       "\x1f",
                                       "\x1b",
                                       "\xc3\xa9",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80",
                                       "\xef\xbb\xbf",
                                       "\xc2\x80",
                                       "\xed\x9f\xbf",
                                       "\xee\x80\x80",
                                       "\xf4\x8f\xbf\xbf"};
static const char *const s_invalid[] = {
    "\xc0\x80",         "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80",     "\xe2\x82",
    "\xf5\x80\x80\x80", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xc1\xbf", "\xff"};

static size_t random_text(char *out, size_t room, bool invalid)
{
    size_t n = 0, pieces = next_random(8);
    size_t bad_at = invalid ? next_random((unsigned)pieces + 1) : (size_t)-1;
    for (size_t i = 0; i <= pieces; i++) {
        const char *piece =
            i == bad_at  ? s_invalid[next_random(10)]
            : i < pieces ? s_pieces[next_random(sizeof s_pieces / sizeof *s_pieces)]
                         : "";
        size_t length = strlen(piece);
        SX_CHECK(n + length < room);
        memcpy(out + n, piece, length);
        n += length;
    }
    return n;
}

/* Appends text as a quoted CSV field. */
static void put_field(FILE *csv, const char *text, size_t length)
{
    fputc('"', csv);
    for (size_t i = 0; i < length; i++) {
        if (text[i] == '"')
            fputc('"', csv);
        fputc(text[i], csv);
    }
    fputc('"', csv);
}

/* jansson's compact dump of {"a": ..., "b": ...}, as prepare made it before;
 * NULL when a value is not UTF-8. */
static char *jansson_record(const char *a, size_t a_length, const char *b,
                            size_t b_length)
{
    json_t *object = json_object();
    json_t *x = a_length ? json_stringn(a, a_length) : json_null();
    json_t *y = b_length ? json_stringn(b, b_length) : json_null();
    char *dump = NULL;
    if (x && y) {
        json_object_set(object, "a", x);
        json_object_set(object, "b", y);
        dump = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(x);
    json_decref(y);
    json_decref(object);
    return dump;
}

#define COLUMN(name)                                                                     \
    {                                                                                    \
        (char *)(name), (char *)(name), SX_TIME_NONE, NULL, SX_TIME_TO_SQL               \
    }

/* Files of random valid strings give jansson's bytes record for record; a
 * row with an invalid one fails as jansson refused it. */
static void test_strings_are_escaped_as_jansson_did(void)
{
    sx_column_t columns[] = {COLUMN("a"), COLUMN("b")};
    for (int file = 0; file < 60; file++) {
        bool invalid = file % 3 == 2;
        size_t rows = invalid ? 1 : 1 + next_random(300);
        char *csv = NULL, **expected = sx_alloc(rows, sizeof *expected);
        size_t size = 0;
        FILE *out = open_memstream(&csv, &size);
        fputs("a,b\n", out);
        bool refused = false;
        for (size_t r = 0; r < rows; r++) {
            char a[128], b[128];
            size_t a_length = random_text(a, sizeof a, invalid);
            size_t b_length = random_text(b, sizeof b, false);
            put_field(out, a, a_length);
            fputc(',', out);
            put_field(out, b, b_length);
            fputs(r % 2 ? "\r\n" : "\n", out);
            expected[r] = jansson_record(a, a_length, b, b_length);
            refused = refused || !expected[r];
        }
        fclose(out);
        scratch_t s;
        scratch_write(&s, csv, size, SX_SOURCE_STATIC, columns, 2, NULL);
        sx_error_t err;
        sx_prepare_t *prepared = sx_prepare_new("t", &s.source, &err);
        if (refused) {
            SX_CHECK(!prepared && strstr(err.msg, "' is not valid UTF-8"));
        } else {
            SX_CHECK(prepared && sx_prepare_count(prepared) == rows);
            for (size_t r = 0; r < rows; r++) {
                if (strcmp(sx_prepare_value(prepared, r), expected[r]) != 0)
                    fprintf(stderr, "row %zu: got %s expected %s\n", r,
                            sx_prepare_value(prepared, r), expected[r]);
                SX_CHECK(strcmp(sx_prepare_value(prepared, r), expected[r]) == 0);
            }
        }
        for (size_t r = 0; r < rows; r++)
            free(expected[r]);
        free(expected);
        free(csv);
        sx_prepare_destroy(&prepared);
        scratch_clear(&s);
    }
}

/* ---- times ----------------------------------------------------------------- */

#define TIME(name, pattern, to)                                                          \
    {                                                                                    \
        (char *)(name), (char *)"t", SX_TIME_STRFTIME, (char *)(pattern), (to)           \
    }

/* A time text in `layout` (Y m d H M S f for fields, other bytes as they
 * are) with values near and past every limit, sometimes damaged. */
static void random_time(const char *layout, char *out, size_t room)
{
    static const char *const years[] = {"0000", "0001", "1899", "1900", "1969", "1970",
                                        "2000", "2023", "2024", "2100", "9999"};
    size_t n = 0;
    for (const char *l = layout; *l && n + 16 < room; l++) {
        int limit = 0;
        switch (*l) {
        case 'Y':
            n += (size_t)snprintf(out + n, room - n, "%s",
                                  next_random(3) ? years[next_random(11)] : "1234");
            continue;
        case 'm':
            limit = 14;
            break;
        case 'd':
            limit = 33;
            break;
        case 'H':
            limit = 26;
            break;
        case 'M':
            limit = 61;
            break;
        case 'S':
            limit = 62;
            break;
        case 'f':
            for (unsigned i = 0, digits = next_random(11); i < digits; i++)
                out[n++] = (char)('0' + next_random(10));
            continue;
        default:
            out[n++] = *l;
            continue;
        }
        n += (size_t)snprintf(out + n, room - n, "%02u", next_random((unsigned)limit));
    }
    out[n] = '\0';
    if (next_random(6) == 0 && n > 0) { /* damage: drop, replace or add a byte */
        static const char bytes[] = "0123456789 -:T.x";
        size_t at = next_random((unsigned)n);
        int how = (int)next_random(3);
        if (how == 0)
            memmove(out + at, out + at + 1, n - at);
        else if (how == 1)
            out[at] = bytes[next_random(sizeof bytes - 1)];
        else if (n + 1 < room) {
            memmove(out + at + 1, out + at, n - at + 1);
            out[at] = bytes[next_random(sizeof bytes - 1)];
        }
    }
}

/* One-row prepare of `text` under two columns (SQL and epoch ms) of a
 * pattern; the value or "error". */
static char *prepare_time(const char *text, const char *pattern)
{
    sx_column_t columns[] = {TIME("s", pattern, SX_TIME_TO_SQL),
                             TIME("e", pattern, SX_TIME_TO_EPOCH_MS)};
    char csv[128];
    int length = snprintf(csv, sizeof csv, "t\n%s\n", text);
    scratch_t s;
    scratch_write(&s, csv, (size_t)length, SX_SOURCE_STATIC, columns, 2, NULL);
    sx_error_t err;
    sx_prepare_t *prepared = sx_prepare_new("t", &s.source, &err);
    char *value = sx_strdup(prepared ? sx_prepare_value(prepared, 0) : "error");
    sx_prepare_destroy(&prepared);
    scratch_clear(&s);
    return value;
}

/* Each fixed-width pattern against the same pattern spelled with %F, %T or
 * %R, which only strptime reads: the same value, or both refuse. */
static void test_fixed_width_times_read_as_strptime_did(void)
{
    static const char *const cases[][3] = {
        {"Y-m-d H:M:S", "%Y-%m-%d %H:%M:%S", "%F %T"},
        {"Y-m-dTH:M:S.f", "%Y-%m-%dT%H:%M:%S.%f", "%FT%T.%f"},
        {"d/m/Y H:M", "%d/%m/%Y %H:%M", "%d/%m/%Y %R"},
        {"Y-m-d  H:M:S", "%Y-%m-%d %H:%M:%S", "%F %T"},
    };
    for (int round = 0; round < 2400; round++) {
        const char *const *c = cases[round % 4];
        char text[64];
        random_time(c[0], text, sizeof text);
        char *fixed = prepare_time(text, c[1]);
        char *general = prepare_time(text, c[2]);
        if (strcmp(fixed, general) != 0)
            fprintf(stderr, "'%s' as %s: %s, as %s: %s\n", text, c[1], fixed, c[2],
                    general);
        SX_CHECK(strcmp(fixed, general) == 0);
        free(fixed);
        free(general);
    }
}

/* SQL times of random epoch ms (years 0-9999, both sides of 1970) as gmtime
 * and "%04d-%02d-%02d %02d:%02d:%02d[.%03d]" wrote them. */
static void test_sql_times_format_as_gmtime_did(void)
{
    sx_column_t columns[] = {
        {(char *)"t", (char *)"t", SX_TIME_EPOCH_MS, NULL, SX_TIME_TO_SQL}};
    const int64_t low = -62167219200000, high = 253402300799999; /* years 0, 9999 */
    char *csv = NULL, (*expected)[32] = sx_alloc(2000, 32);
    size_t size = 0;
    FILE *out = open_memstream(&csv, &size);
    fputs("t\n", out);
    for (int i = 0; i < 2000; i++) {
        int64_t ms = i < 4 ? (int64_t[]){low, high, -1, 0}[i]
                           : low + (int64_t)(((uint64_t)next_random(1u << 24) << 24 |
                                              next_random(1u << 24)) %
                                             (uint64_t)(high - low));
        if (i % 3 == 0)
            ms -= ms % 1000;
        fprintf(out, "%lld\n", (long long)ms);
        int64_t seconds = ms / 1000 - (ms % 1000 < 0);
        time_t t = (time_t)seconds;
        struct tm tm;
        SX_CHECK(gmtime_r(&t, &tm));
        int n = snprintf(expected[i], 32, "{\"t\":\"%04d-%02d-%02d %02d:%02d:%02d",
                         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec);
        if (ms - seconds * 1000 != 0)
            n += snprintf(expected[i] + n, 32 - (size_t)n, ".%03d",
                          (int)(ms - seconds * 1000));
        snprintf(expected[i] + n, 32 - (size_t)n, "\"}");
    }
    fclose(out);
    scratch_t s;
    scratch_write(&s, csv, size, SX_SOURCE_STATIC, columns, 1, NULL);
    sx_error_t err;
    sx_prepare_t *prepared = sx_prepare_new("t", &s.source, &err);
    SX_CHECK(prepared && sx_prepare_count(prepared) == 2000);
    for (size_t i = 0; i < 2000; i++) {
        if (strcmp(sx_prepare_value(prepared, i), expected[i]) != 0)
            fprintf(stderr, "got %s expected %s\n", sx_prepare_value(prepared, i),
                    expected[i]);
        SX_CHECK(strcmp(sx_prepare_value(prepared, i), expected[i]) == 0);
    }
    sx_prepare_destroy(&prepared);
    scratch_clear(&s);
    free(csv);
    free(expected);
    const char *outside[] = {"t\n-62167219200001\n", "t\n253402300800000\n"};
    for (int i = 0; i < 2; i++) {
        scratch_write(&s, outside[i], strlen(outside[i]), SX_SOURCE_STATIC, columns, 1,
                      NULL);
        SX_CHECK(!sx_prepare_new("t", &s.source, &err));
        SX_CHECK(strstr(err.msg, "is outside the years 0000-9999"));
        scratch_clear(&s);
    }
}

/* ---- replay order ---------------------------------------------------------- */

/* What sx_prepare_each has handed over so far. */
typedef struct {
    size_t count, stop_at;
    const int64_t *times;
    const size_t *order;
} handed_t;

static int check_handed(const char *value, size_t length, int64_t timestamp, void *arg,
                        sx_error_t *err)
{
    handed_t *h = arg;
    if (h->count == h->stop_at)
        return sx_error_set(err, "refused at %zu", h->count);
    char expected[64];
    size_t row = h->order[h->count++];
    snprintf(expected, sizeof expected, "{\"id\":\"%zu\",\"t\":%lld}", row,
             (long long)h->times[row]);
    SX_CHECK(length == strlen(expected) && strcmp(value, expected) == 0);
    SX_CHECK(timestamp == h->times[row]);
    return 0;
}

/* A scan hands the same records over in the same order, converting them
 * again as the file is read; a refusal by the receiver stops it there. */
static void check_handed_in_order(const sx_source_t *source, size_t rows,
                                  const int64_t *times, const size_t *order)
{
    sx_error_t err;
    sx_prepare_t *scan = sx_prepare_scan("t", source, &err);
    SX_CHECK(scan && sx_prepare_count(scan) == rows && !sx_prepare_value(scan, 0));
    for (size_t i = 0; i < rows; i++)
        SX_CHECK(sx_prepare_timestamp(scan, i) == times[order[i]]);
    handed_t all = {.stop_at = rows, .times = times, .order = order};
    SX_CHECK(sx_prepare_each(scan, "t", source, check_handed, &all, &err) == 0);
    SX_CHECK(all.count == rows);
    handed_t part = {.stop_at = rows / 2, .times = times, .order = order};
    SX_CHECK(sx_prepare_each(scan, "t", source, check_handed, &part, &err) == -1);
    char refused[64];
    snprintf(refused, sizeof refused, "refused at %zu", rows / 2);
    SX_CHECK(part.count == rows / 2 && strcmp(err.msg, refused) == 0);
    sx_prepare_destroy(&scan);
}

/* Live rows, in order or not, with many ties: stable by event time, kept or
 * scanned and handed over. */
static void test_live_rows_sort_stably_by_event_time(void)
{
    sx_column_t columns[] = {
        COLUMN("id"),
        {(char *)"t", (char *)"t", SX_TIME_EPOCH_MS, NULL, SX_TIME_TO_EPOCH_MS}};
    for (int file = 0; file < 20; file++) {
        size_t rows = 1 + next_random(500);
        int64_t *times = sx_alloc(rows, sizeof *times);
        size_t *order = sx_alloc(rows, sizeof *order);
        char *csv = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&csv, &size);
        fputs("id,t\n", out);
        for (size_t r = 0; r < rows; r++) {
            times[r] = file % 2 ? (int64_t)r / 3 : (int64_t)next_random(40) - 20;
            fprintf(out, "%zu,%lld\n", r, (long long)times[r]);
            /* insertion sort: stable */
            size_t at = r;
            while (at > 0 && times[order[at - 1]] > times[r]) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = r;
        }
        fclose(out);
        scratch_t s;
        scratch_write(&s, csv, size, SX_SOURCE_LIVE, columns, 2, "t");
        sx_error_t err;
        sx_prepare_t *prepared = sx_prepare_new("t", &s.source, &err);
        SX_CHECK(prepared && sx_prepare_count(prepared) == rows);
        for (size_t i = 0; i < rows; i++) {
            char expected[64];
            snprintf(expected, sizeof expected, "{\"id\":\"%zu\",\"t\":%lld}", order[i],
                     (long long)times[order[i]]);
            SX_CHECK(strcmp(sx_prepare_value(prepared, i), expected) == 0);
            SX_CHECK(sx_prepare_timestamp(prepared, i) == times[order[i]]);
        }
        sx_prepare_destroy(&prepared);
        check_handed_in_order(&s.source, rows, times, order);
        scratch_clear(&s);
        free(csv);
        free(times);
        free(order);
    }
}

static int count_handed(const char *value, size_t length, int64_t timestamp, void *arg,
                        sx_error_t *err)
{
    (void)value, (void)length, (void)timestamp, (void)err;
    ++*(size_t *)arg;
    return 0;
}

/* The file is read again to hand the records over: one that no longer gives
 * the scanned rows and event times is an error naming task, file and line,
 * never other records. */
static void test_a_file_changed_after_the_scan_is_an_error(void)
{
    sx_column_t columns[] = {
        COLUMN("id"),
        {(char *)"t", (char *)"t", SX_TIME_EPOCH_MS, NULL, SX_TIME_TO_EPOCH_MS}};
    static const char scanned[] = "id,t\n1,10\n2,5\n3,20\n";
    static const struct {
        const char *now, *error;
    } cases[] = {
        {"id,t\n1,10\n2,6\n3,20\n",
         "task t: sources/rows.csv:3: the file changed since it was read"},
        {"id,t\n1,10\n2,5\n",
         "task t: sources/rows.csv: the file changed since it was read"},
        {"id,t\n1,10\n2,5\n3,20\n4,30\n",
         "task t: sources/rows.csv:5: the file changed since it was read"},
        {"id,t\n1,10\n2,x\n3,20\n",
         "task t: sources/rows.csv:3: the file changed since it was read"},
        {"id,u\n1,10\n", "task t: sources/rows.csv: no column t in the header"},
        {"id,t\n1,10\n\"2,5\n", "/rows.csv:4: malformed quoting"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scratch_t s;
        scratch_write(&s, scanned, strlen(scanned), SX_SOURCE_LIVE, columns, 2, "t");
        sx_error_t err;
        sx_prepare_t *scan = sx_prepare_scan("t", &s.source, &err);
        SX_CHECK(scan && sx_prepare_count(scan) == 3);
        FILE *out = fopen(s.path, "wb");
        SX_CHECK(out && fputs(cases[i].now, out) >= 0 && fclose(out) == 0);
        size_t handed = 0;
        SX_CHECK(sx_prepare_each(scan, "t", &s.source, count_handed, &handed, &err) ==
                 -1);
        bool exact = cases[i].error[0] == 't'; /* else the CSV reader's, prefixed */
        bool same = exact ? strcmp(err.msg, cases[i].error) == 0
                          : strncmp(err.msg, "task t: source rows: /tmp/", 26) == 0 &&
                                strstr(err.msg, cases[i].error) != NULL;
        if (!same)
            fprintf(stderr, "case %zu: got %s\n", i, err.msg);
        SX_CHECK(same);
        sx_prepare_destroy(&scan);
        scratch_clear(&s);
    }
}

/* Rows are converted as the CSV is read, yet a broken CSV further down is
 * still the error reported, as when the whole file was read first. */
static void test_csv_errors_win_over_earlier_row_errors(void)
{
    sx_column_t columns[] = {
        COLUMN("id"), {(char *)"t", (char *)"t", SX_TIME_EPOCH_S, NULL, SX_TIME_TO_SQL}};
    static const char *const inputs[] = {"id,t\n1,x\n2,3\n\"4,5\n", "id,u\n1,2\n\"3,4\n",
                                         "id,t\n1,x\n2,3\n"};
    static const char *const errors[] = {"/rows.csv:5: malformed quoting",
                                         "/rows.csv:4: malformed quoting",
                                         "sources/rows.csv:2: column t (as t): 'x' does "
                                         "not convert from time format epoch_s"};
    for (int i = 0; i < 3; i++) {
        scratch_t s;
        scratch_write(&s, inputs[i], strlen(inputs[i]), SX_SOURCE_LIVE, columns, 2, "t");
        sx_error_t err;
        SX_CHECK(!sx_prepare_new("t", &s.source, &err));
        if (!strstr(err.msg, errors[i]))
            fprintf(stderr, "got %s\n", err.msg);
        SX_CHECK(strstr(err.msg, errors[i]));
        scratch_clear(&s);
    }
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_prepare_test(verbose);
    test_strings_are_escaped_as_jansson_did();
    test_fixed_width_times_read_as_strptime_did();
    test_sql_times_format_as_gmtime_did();
    test_live_rows_sort_stably_by_event_time();
    test_csv_errors_win_over_earlier_row_errors();
    test_a_file_changed_after_the_scan_is_an_error();
    printf("test_prepare: OK\n");
    return 0;
}
