/* frame.c: pandas 2.x `read_csv` with default options, reproduced (see frame.h).
 * Three stages, each following what pandas does rather than what a CSV
 * should mean: (1) the whole file must decode as UTF-8, as pandas decodes it
 * before parsing; (2) pandas' tokenizer state machine turns bytes into rows
 * of fields, with its blank-line skipping, quote handling, row padding and
 * "Expected N fields" error; (3) each column is converted the way pandas'
 * TextReader tries dtypes: int64, uint64 (on int64 overflow), float64 (with
 * pandas' own precise_xstrtod, which is not correctly rounded, and its inf
 * spellings), bool (true/false in any case), else strings. libcsv (csv.c)
 * is not used here because its handling of stray quotes differs from pandas'.
 * Known gap: pandas tokenizes in 256 KiB chunks and converts in row chunks
 * (low_memory); the chunk boundaries are not reproduced, which only matters
 * for CR-only files with whitespace-led lines or for columns whose type
 * changes after ~2^19/width rows. */
#include "common/ex/frame.h"

#include "common/files.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct _sx_frame_t {
    size_t column_count;
    size_t row_count;
    sx_frame_column_t *columns;
    char **names;  /* the header's field texts, one per column */
    char *storage; /* NUL-terminated field texts the string values point into */
};

/* ---- stage 1: UTF-8 as Python's strict decoder accepts it ---------------- */

static size_t utf8_sequence_length(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    /* Overlong forms, surrogates and code points above U+10FFFF. */
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
        (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

static int check_utf8(const char *name, const char *data, size_t size, sx_error_t *err)
{
    const unsigned char *s = (const unsigned char *)data;
    for (size_t i = 0; i < size;) {
        size_t n = utf8_sequence_length(s + i, size - i);
        if (n == 0)
            return sx_error_set(err,
                                "%s: 'utf-8' codec can't decode byte 0x%02x in "
                                "position %zu",
                                name, s[i], i);
        i += n;
    }
    return 0;
}

/* ---- stage 2: the tokenizer ---------------------------------------------- */

typedef enum {
    START_RECORD,
    START_FIELD,
    IN_FIELD,
    IN_QUOTED_FIELD,
    QUOTE_IN_QUOTED_FIELD,
    EAT_CRNL,
    EAT_CRNL_NOP,
    WHITESPACE_LINE,
} tok_state_t;

typedef struct {
    const char *name;
    char *chars; /* field bytes, each field followed by a NUL */
    size_t chars_len, chars_cap;
    size_t *words; /* offset of each field in chars */
    size_t words_len, words_cap;
    size_t *line_start; /* first word of each line */
    size_t *line_fields;
    size_t lines, lines_cap;
    size_t file_lines;
    sx_error_t *err;
} tokens_t;

static void grow(void **items, size_t *cap, size_t needed, size_t size)
{
    if (needed <= *cap)
        return;
    size_t next = *cap ? *cap : 16;
    while (next < needed)
        next *= 2;
    *items = sx_realloc(*items, next, size);
    *cap = next;
}

static void tokens_free(tokens_t *t)
{
    free(t->chars);
    free(t->words);
    free(t->line_start);
    free(t->line_fields);
}

static void push_bytes(tokens_t *t, const char *bytes, size_t n)
{
    grow((void **)&t->chars, &t->chars_cap, t->chars_len + n, 1);
    memcpy(t->chars + t->chars_len, bytes, n);
    t->chars_len += n;
}

static void push_char(tokens_t *t, char c)
{
    push_bytes(t, &c, 1);
}

/* Length of the run at data[from..size) holding none of the bytes that
 * matter in the current state, copied in one go (long fields stay fast). */
static size_t plain_run(const char *data, size_t from, size_t size, bool quoted)
{
    size_t j = from;
    if (quoted) {
        const char *q = memchr(data + from, '"', size - from);
        return q ? (size_t)(q - data) - from : size - from;
    }
    while (j < size && data[j] != ',' && data[j] != '\r' && data[j] != '\n')
        j++;
    return j - from;
}

/* Ends the current field: a NUL follows its bytes and words[] records where
 * the next field starts, so field i begins at words[i-1] (0 for the first). */
static void end_field(tokens_t *t)
{
    grow((void **)&t->words, &t->words_cap, t->words_len + 1, sizeof *t->words);
    push_char(t, '\0');
    t->words[t->words_len++] = t->chars_len;
    t->line_fields[t->lines]++;
}

static const char *word_text(const tokens_t *t, size_t word)
{
    return t->chars + (word ? t->words[word - 1] : 0);
}

/* Room for the line after the current one in line_start and line_fields. */
static void ensure_line(tokens_t *t)
{
    size_t old_cap = t->lines_cap;
    grow((void **)&t->line_start, &t->lines_cap, t->lines + 2, sizeof *t->line_start);
    if (t->lines_cap != old_cap || !t->line_fields)
        t->line_fields = sx_realloc(t->line_fields, t->lines_cap, sizeof *t->line_fields);
}

/* A finished row: the second data row on may not be wider than the row
 * before it; narrower rows are padded with empty fields. */
static int end_line(tokens_t *t)
{
    size_t fields = t->line_fields[t->lines];
    if (t->lines > 0) {
        size_t expected = t->line_fields[t->lines - 1];
        if (t->lines > 1 && fields > expected)
            return sx_error_set(t->err,
                                "%s: Error tokenizing data. C error: Expected %zu "
                                "fields in line %zu, saw %zu",
                                t->name, expected, t->file_lines + 1, fields);
        for (; fields < expected; fields++)
            end_field(t);
    }
    t->file_lines++;
    t->lines++;
    ensure_line(t);
    t->line_start[t->lines] = t->line_start[t->lines - 1] + fields;
    t->line_fields[t->lines] = 0;
    return 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Runs the state machine over data[*pos..size). With line_limit > 0 it stops
 * once that many rows exist, leaving *pos where the next call resumes (pandas
 * first tokenizes the header and one data row, then the rest). */
static int tokenize(tokens_t *t, tok_state_t *state, const char *data, size_t size,
                    size_t *pos, size_t line_limit)
{
    size_t start = *pos;          /* how far back a whitespace line may backtrack */
    size_t rewound_to = SIZE_MAX; /* where the last backtrack went */
    for (size_t i = start; i < size; i++) {
        char c = data[i];
        bool line_ended = false;
        int rc = 0;
        switch (*state) {
        case WHITESPACE_LINE:
            if (c == '\n') {
                t->file_lines++;
                *state = START_RECORD;
            } else if (c == '\r') {
                t->file_lines++;
                *state = EAT_CRNL_NOP;
            } else if (!is_blank(c)) {
                /* Not blank after all: re-read it from its line start, or
                 * from where this call began if no LF precedes it. */
                size_t p = i + 1;
                do
                    p--;
                while (p > start && data[p] != '\n');
                if (data[p] == '\n')
                    p++;
                /* With CR line ends that rewind can reach the same place
                 * (the call's start or the last LF) again and again: pandas
                 * then repeats rows until its buffer overflows; refused
                 * here rather than looping for ever. */
                if (p == rewound_to && line_limit == 0)
                    return sx_error_set(t->err,
                                        "%s: a CR-ended line before a whitespace-led "
                                        "line makes pandas' tokenizer re-read rows; "
                                        "not reproduced",
                                        t->name);
                rewound_to = p;
                i = p - 1;
                *state = START_FIELD;
            }
            break;
        case START_RECORD:
            if (c == '\n') {
                t->file_lines++;
                break;
            } else if (c == '\r') {
                t->file_lines++;
                *state = EAT_CRNL_NOP;
                break;
            } else if (is_blank(c)) {
                *state = WHITESPACE_LINE;
                break;
            }
            *state = START_FIELD;
            /* fall through */
        case START_FIELD:
            if (c == '\n') {
                end_field(t);
                rc = end_line(t);
                *state = START_RECORD;
                line_ended = true;
            } else if (c == '\r') {
                end_field(t);
                *state = EAT_CRNL;
            } else if (c == '"') {
                *state = IN_QUOTED_FIELD;
            } else if (c == ',') {
                end_field(t);
            } else {
                push_char(t, c);
                *state = IN_FIELD;
            }
            break;
        case IN_FIELD:
            if (c == '\n') {
                end_field(t);
                rc = end_line(t);
                *state = START_RECORD;
                line_ended = true;
            } else if (c == '\r') {
                end_field(t);
                *state = EAT_CRNL;
            } else if (c == ',') {
                end_field(t);
                *state = START_FIELD;
            } else {
                size_t n = plain_run(data, i, size, false);
                push_bytes(t, data + i, n);
                i += n - 1;
            }
            break;
        case IN_QUOTED_FIELD:
            if (c == '"') {
                *state = QUOTE_IN_QUOTED_FIELD;
            } else {
                size_t n = plain_run(data, i, size, true);
                push_bytes(t, data + i, n);
                i += n - 1;
            }
            break;
        case QUOTE_IN_QUOTED_FIELD:
            if (c == '"') {
                push_char(t, c);
                *state = IN_QUOTED_FIELD;
            } else if (c == ',') {
                end_field(t);
                *state = START_FIELD;
            } else if (c == '\n') {
                end_field(t);
                rc = end_line(t);
                *state = START_RECORD;
                line_ended = true;
            } else if (c == '\r') {
                end_field(t);
                *state = EAT_CRNL;
            } else {
                push_char(t, c);
                *state = IN_FIELD;
            }
            break;
        case EAT_CRNL:
            if (c == '\n') {
                rc = end_line(t);
                *state = START_RECORD;
            } else if (c == ',') {
                /* A CR-ended row followed by a row starting with a comma. */
                if ((rc = end_line(t)) == 0)
                    end_field(t);
                *state = START_FIELD;
            } else {
                rc = end_line(t);
                *state = START_RECORD;
                i--; /* read this character again as a record start */
            }
            line_ended = true;
            break;
        case EAT_CRNL_NOP:
            *state = START_RECORD;
            if (c != '\n' && c != ',')
                i--;
            break;
        }
        if (rc != 0)
            return -1;
        if (line_ended && line_limit > 0 && t->lines >= line_limit) {
            *pos = i + 1;
            return 0;
        }
    }
    *pos = size;
    return 0;
}

static int tokenize_eof(tokens_t *t, tok_state_t state)
{
    switch (state) {
    case START_RECORD:
    case WHITESPACE_LINE:
    case EAT_CRNL_NOP:
        return 0;
    case IN_QUOTED_FIELD:
        return sx_error_set(t->err,
                            "%s: Error tokenizing data. C error: EOF inside string "
                            "starting at row %zu",
                            t->name, t->file_lines);
    case IN_FIELD:
    case START_FIELD:
    case QUOTE_IN_QUOTED_FIELD:
        end_field(t);
        break;
    case EAT_CRNL:
        break;
    }
    return end_line(t);
}

static int tokenize_all(tokens_t *t, const char *data, size_t size)
{
    ensure_line(t);
    t->line_start[0] = 0;
    t->line_fields[0] = 0;
    /* Fields never hold more bytes than the file plus their NULs. */
    grow((void **)&t->chars, &t->chars_cap, size + 64, 1);
    size_t pos = 0;
    if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    tok_state_t state = START_RECORD;
    if (tokenize(t, &state, data, size, &pos, 2) != 0)
        return -1;
    if (pos < size && tokenize(t, &state, data, size, &pos, 0) != 0)
        return -1;
    return tokenize_eof(t, state);
}

/* ---- stage 3: column conversion ------------------------------------------ */

static bool is_space_ascii(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_na(const char *s)
{
    static const char *const tokens[] = {
        "",     "#N/A",   "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
        "-nan", "1.#IND", "1.#QNAN",  "<NA>", "N/A",     "NA",       "NULL",
        "NaN",  "None",   "n/a",      "nan",  "null",
    };
    /* Most fields start with a digit or a letter no token starts with, and
     * no token is longer than 8 bytes: decide those without the list. */
    if (!strchr("#-1<Nn", s[0]) || strnlen(s, 9) > 8)
        return s[0] == '\0';
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++)
        if (strcmp(s, tokens[i]) == 0)
            return true;
    return false;
}

typedef enum { PARSE_OK, PARSE_INVALID, PARSE_OVERFLOW } parse_t;

static parse_t parse_int64(const char *s, int64_t *out)
{
    while (is_space_ascii(*s))
        s++;
    bool negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!is_digit(*s))
        return PARSE_INVALID;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t n = 0;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (n > (limit - d) / 10)
            return PARSE_OVERFLOW;
        n = n * 10 + d;
    }
    while (is_space_ascii(*s))
        s++;
    if (*s)
        return PARSE_INVALID;
    *out = negative ? (int64_t)(0 - n) : (int64_t)n;
    return PARSE_OK;
}

/* pandas' str_to_uint64: a leading '-' is not an error but is remembered. */
static parse_t parse_uint64(const char *s, uint64_t *out, bool *negative)
{
    while (is_space_ascii(*s))
        s++;
    if (*s == '-') {
        *negative = true;
        return PARSE_OK;
    }
    if (*s == '+')
        s++;
    if (!is_digit(*s))
        return PARSE_INVALID;
    uint64_t n = 0;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (n > (UINT64_MAX - d) / 10)
            return PARSE_OVERFLOW;
        n = n * 10 + d;
    }
    while (is_space_ascii(*s))
        s++;
    if (*s)
        return PARSE_INVALID;
    *out = n;
    return PARSE_OK;
}

/* 10^0 .. 10^308, each the literal 1eN as the compiler writes it: a
 * constant table, since a table filled on first use is raced on by the
 * threads that score at once (a worker's slots, run's workers). */
#define POW10_ROW(d)                                                                     \
    1e##d##0, 1e##d##1, 1e##d##2, 1e##d##3, 1e##d##4, 1e##d##5, 1e##d##6, 1e##d##7,      \
        1e##d##8, 1e##d##9
static const double powers[309] = {
    POW10_ROW(),   POW10_ROW(1),  POW10_ROW(2),  POW10_ROW(3),  POW10_ROW(4),
    POW10_ROW(5),  POW10_ROW(6),  POW10_ROW(7),  POW10_ROW(8),  POW10_ROW(9),
    POW10_ROW(10), POW10_ROW(11), POW10_ROW(12), POW10_ROW(13), POW10_ROW(14),
    POW10_ROW(15), POW10_ROW(16), POW10_ROW(17), POW10_ROW(18), POW10_ROW(19),
    POW10_ROW(20), POW10_ROW(21), POW10_ROW(22), POW10_ROW(23), POW10_ROW(24),
    POW10_ROW(25), POW10_ROW(26), POW10_ROW(27), POW10_ROW(28), POW10_ROW(29),
    1e300,         1e301,         1e302,         1e303,         1e304,
    1e305,         1e306,         1e307,         1e308};

/* pandas 2.x precise_xstrtod: up to 17 significant digits accumulated in a
 * double, then scaled by a power of ten; deliberately not correctly rounded
 * (so "0.30000000000000004" reads as 0.3). Returns false where pandas
 * reports an error or leaves characters unread. */
static bool parse_double_pandas(const char *s, double *out)
{
    const char *p = s;
    while (is_space_ascii(*p))
        p++;
    bool negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    double number = 0;
    int exponent = 0, digits = 0, decimals = 0;
    for (; is_digit(*p); p++) {
        if (digits < 17) {
            number = number * 10. + (*p - '0');
            digits++;
        } else {
            exponent++;
        }
    }
    if (*p == '.') {
        p++;
        for (; digits < 17 && is_digit(*p); p++, digits++, decimals++)
            number = number * 10. + (*p - '0');
        while (is_digit(*p))
            p++;
        exponent -= decimals;
    }
    if (digits == 0)
        return false;
    if (negative)
        number = -number;
    if (*p == 'e' || *p == 'E') {
        const char *mark = p++;
        bool exp_negative = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        /* At most 17 exponent digits are read (more are left over, so the
         * field is not a number), into a 32-bit int that wraps as pandas'
         * does. */
        uint32_t n = 0;
        int exp_digits = 0;
        for (; exp_digits < 17 && is_digit(*p); p++, exp_digits++)
            n = n * 10u + (uint32_t)(*p - '0');
        uint32_t wrapped = (uint32_t)exponent;
        wrapped = exp_negative ? wrapped - n : wrapped + n;
        if (exp_digits == 0)
            p = mark;
        else
            exponent = (int32_t)wrapped;
    }
    if (exponent > 308)
        return false;
    if (exponent > 0) {
        number *= powers[exponent];
    } else if (exponent < -308) {
        /* pandas zeroes below 1e-616 (its table has no smaller entry). */
        number = exponent < -616 ? 0. : number / powers[-308 - exponent] / powers[308];
    } else {
        number /= powers[-exponent];
    }
    if (number == HUGE_VAL || number == -HUGE_VAL)
        return false;
    while (is_space_ascii(*p))
        p++;
    if (*p)
        return false;
    *out = number;
    return true;
}

static bool parse_float_word(const char *s, double *out)
{
    if (parse_double_pandas(s, out))
        return true;
    static const char *const pos_inf[] = {"inf", "+inf", "infinity", "+infinity"};
    static const char *const neg_inf[] = {"-inf", "-infinity"};
    for (size_t i = 0; i < 4; i++)
        if (strcasecmp(s, pos_inf[i]) == 0) {
            *out = INFINITY;
            return true;
        }
    for (size_t i = 0; i < 2; i++)
        if (strcasecmp(s, neg_inf[i]) == 0) {
            *out = -INFINITY;
            return true;
        }
    return false;
}

typedef struct {
    const char **words; /* the column's cells, NUL-terminated */
    size_t count;
    sx_frame_column_t *column;
} column_job_t;

static sx_value_t str_value(const char *s)
{
    sx_value_t v = {.kind = SX_VALUE_STR};
    v.str = s;
    return v;
}

static sx_value_t nan_value(void)
{
    sx_value_t v = {.kind = SX_VALUE_NAN};
    v.f = NAN;
    return v;
}

/* Returns 1 when the column is int64 (filled), 0 when not, 2 on overflow.
 * With missing values pandas still parses as int64, marks them with the
 * int64 minimum and then upcasts to float64: the ints become doubles (not
 * re-read by the float parser) and a real -9223372036854775808 turns NaN. */
static int try_int64(column_job_t *job)
{
    bool any_na = false;
    for (size_t r = 0; r < job->count; r++) {
        if (is_na(job->words[r])) {
            any_na = true;
            job->column->values[r] = nan_value();
            continue;
        }
        int64_t n;
        parse_t rc = parse_int64(job->words[r], &n);
        if (rc == PARSE_OVERFLOW)
            return 2;
        if (rc != PARSE_OK)
            return 0;
        job->column->values[r] = (sx_value_t){.kind = SX_VALUE_INT, .i = n};
    }
    job->column->dtype = any_na ? SX_DTYPE_FLOAT64 : SX_DTYPE_INT64;
    for (size_t r = 0; any_na && r < job->count; r++) {
        sx_value_t *v = &job->column->values[r];
        if (v->kind == SX_VALUE_INT)
            *v = v->i == INT64_MIN
                     ? nan_value()
                     : (sx_value_t){.kind = SX_VALUE_FLOAT, .f = (double)v->i};
    }
    return 1;
}

/* After an int64 overflow. Returns 1 for uint64, 0 to go on with float,
 * 2 when pandas falls back to strings (a value beyond uint64), 3 when it
 * falls back to the raw texts, missing values included (negative or missing
 * values next to huge ones). */
static int try_uint64(column_job_t *job)
{
    bool seen_negative = false, seen_null = false;
    for (size_t r = 0; r < job->count; r++) {
        if (is_na(job->words[r])) {
            seen_null = true;
            continue;
        }
        uint64_t n = 0;
        parse_t rc = parse_uint64(job->words[r], &n, &seen_negative);
        if (rc == PARSE_OVERFLOW)
            return 2;
        if (rc != PARSE_OK)
            return 0;
        job->column->values[r] = (sx_value_t){.kind = SX_VALUE_UINT, .u = n};
    }
    if (seen_negative || seen_null)
        return 3;
    job->column->dtype = SX_DTYPE_UINT64;
    return 1;
}

static bool try_float(column_job_t *job)
{
    for (size_t r = 0; r < job->count; r++) {
        sx_value_t *v = &job->column->values[r];
        if (is_na(job->words[r])) {
            *v = nan_value();
            continue;
        }
        double d;
        if (!parse_float_word(job->words[r], &d))
            return false;
        *v = (sx_value_t){.kind = SX_VALUE_FLOAT, .f = d};
    }
    job->column->dtype = SX_DTYPE_FLOAT64;
    return true;
}

/* A bool column with missing values becomes object (True/False/NaN). */
static bool try_bool(column_job_t *job)
{
    bool any_na = false;
    for (size_t r = 0; r < job->count; r++) {
        sx_value_t *v = &job->column->values[r];
        const char *s = job->words[r];
        if (is_na(s)) {
            *v = nan_value();
            any_na = true;
        } else if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
            *v = (sx_value_t){.kind = SX_VALUE_BOOL, .b = strcasecmp(s, "true") == 0};
        } else {
            return false;
        }
    }
    job->column->dtype = any_na ? SX_DTYPE_OBJECT : SX_DTYPE_BOOL;
    return true;
}

static void as_strings(column_job_t *job, bool filter_na)
{
    for (size_t r = 0; r < job->count; r++) {
        const char *s = job->words[r];
        job->column->values[r] = filter_na && is_na(s) ? nan_value() : str_value(s);
    }
    job->column->dtype = SX_DTYPE_OBJECT;
}

static void convert_column(column_job_t *job)
{
    if (job->count == 0) {
        job->column->dtype = SX_DTYPE_OBJECT; /* pandas: no rows, no inference */
        return;
    }
    int as_int = try_int64(job);
    if (as_int == 1)
        return;
    if (as_int == 2) {
        int as_uint = try_uint64(job);
        if (as_uint != 0) {
            if (as_uint != 1)
                as_strings(job, as_uint == 2);
            return;
        }
    }
    if (try_float(job) || try_bool(job))
        return;
    as_strings(job, true);
}

/* ---- the frame ----------------------------------------------------------- */

void sx_frame_destroy(sx_frame_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_frame_t *self = *self_p;
    for (size_t c = 0; c < self->column_count; c++) {
        free(self->columns[c].values);
        free(self->names[c]);
    }
    free(self->columns);
    free(self->names);
    free(self->storage);
    free(self);
    *self_p = NULL;
}

static void build_columns(sx_frame_t *frame, tokens_t *t)
{
    size_t header = t->line_fields[0];
    size_t width = t->lines > 1 ? t->line_fields[1] : header;
    size_t leading = width > header ? width - header : 0; /* implicit index */
    frame->column_count = header;
    frame->row_count = t->lines - 1;
    frame->columns = sx_alloc(header, sizeof *frame->columns);
    frame->names = sx_alloc(header, sizeof *frame->names);
    for (size_t c = 0; c < header; c++)
        frame->names[c] = sx_strdup(word_text(t, t->line_start[0] + c));
    const char **words = sx_alloc(frame->row_count + 1, sizeof *words);
    for (size_t c = 0; c < header; c++) {
        sx_frame_column_t *col = &frame->columns[c];
        col->values = sx_alloc(frame->row_count + 1, sizeof *col->values);
        for (size_t r = 0; r < frame->row_count; r++)
            words[r] = word_text(t, t->line_start[r + 1] + leading + c);
        column_job_t job = {words, frame->row_count, col};
        convert_column(&job);
    }
    free(words);
}

static bool has_object_column(const sx_frame_t *frame)
{
    for (size_t c = 0; c < frame->column_count; c++)
        if (frame->columns[c].dtype == SX_DTYPE_OBJECT)
            return true;
    return false;
}

sx_frame_t *sx_frame_parse(const char *name, const char *data, size_t size,
                           sx_error_t *err)
{
    if (check_utf8(name, data, size, err) != 0)
        return NULL;
    tokens_t t = {.name = name, .err = err};
    sx_frame_t *frame = NULL;
    if (tokenize_all(&t, data, size) != 0)
        goto done;
    if (t.lines == 0) {
        sx_error_set(err, "%s: No columns to parse from file", name);
        goto done;
    }
    frame = sx_new(sx_frame_t);
    build_columns(frame, &t);
    /* String values point into the field texts: kept only when a column
     * may hold strings (an object column), else gone with the tokens. */
    if (has_object_column(frame)) {
        frame->storage = t.chars;
        t.chars = NULL;
    }
done:
    tokens_free(&t);
    return frame;
}

sx_frame_t *sx_frame_read(const char *root, const char *path, sx_error_t *err)
{
    size_t size = 0;
    char *data = sx_file_load(root, path, SX_FILE_CSV, &size, err);
    if (!data)
        return NULL;
    sx_frame_t *frame = sx_frame_parse(path, data, size, err);
    free(data);
    return frame;
}

size_t sx_frame_column_count(const sx_frame_t *self)
{
    return self->column_count;
}

size_t sx_frame_row_count(const sx_frame_t *self)
{
    return self->row_count;
}

const sx_frame_column_t *sx_frame_column(const sx_frame_t *self, size_t index)
{
    return index < self->column_count ? &self->columns[index] : NULL;
}

const char *sx_frame_column_name(const sx_frame_t *self, size_t index)
{
    return index < self->column_count ? self->names[index] : NULL;
}

/* ---- self-test ----------------------------------------------------------- */

static sx_frame_t *parse(const char *text, sx_error_t *err)
{
    sx_error_clear(err);
    return sx_frame_parse("t.csv", text, strlen(text), err);
}

/* One column read from `text`: its dtype and the kind of its first value. */
static void check_first(const char *text, sx_dtype_t dtype, sx_value_kind_t kind)
{
    sx_error_t err;
    sx_frame_t *f = parse(text, &err);
    if (!f)
        fprintf(stderr, "%s\n", err.msg);
    SX_CHECK(f);
    const sx_frame_column_t *col = sx_frame_column(f, sx_frame_column_count(f) - 1);
    if (col->dtype != dtype || col->values[0].kind != kind)
        fprintf(stderr, "case %s: dtype %d kind %d\n", text, col->dtype,
                col->values[0].kind);
    SX_CHECK(col->dtype == dtype && col->values[0].kind == kind);
    sx_frame_destroy(&f);
}

static void test_type_inference_follows_pandas(void)
{
    check_first("a\n1\n2", SX_DTYPE_INT64, SX_VALUE_INT);
    check_first("a\n1\n2.0", SX_DTYPE_FLOAT64, SX_VALUE_FLOAT);
    check_first("a\n1\n\n", SX_DTYPE_INT64, SX_VALUE_INT);
    check_first("a\n1\nNA", SX_DTYPE_FLOAT64, SX_VALUE_FLOAT);
    check_first("a\n 007 \n1", SX_DTYPE_INT64, SX_VALUE_INT);
    check_first("a\ntRUE\nfalse", SX_DTYPE_BOOL, SX_VALUE_BOOL);
    check_first("a\nTrue\nNA", SX_DTYPE_OBJECT, SX_VALUE_BOOL);
    check_first("a\nTrue \nFalse", SX_DTYPE_OBJECT, SX_VALUE_STR);
    check_first("a\n9223372036854775808", SX_DTYPE_UINT64, SX_VALUE_UINT);
    check_first("a\n18446744073709551616", SX_DTYPE_OBJECT, SX_VALUE_STR);
    check_first("a\nNA\n18446744073709551616", SX_DTYPE_OBJECT, SX_VALUE_NAN);
    check_first("a\n-9223372036854775808\nNA", SX_DTYPE_FLOAT64, SX_VALUE_NAN);
    check_first("a\n1.5\n18446744073709551616", SX_DTYPE_FLOAT64, SX_VALUE_FLOAT);
    check_first("a\nNA\n9223372036854775808", SX_DTYPE_OBJECT, SX_VALUE_STR);
    check_first("a\n-Infinity\n1", SX_DTYPE_FLOAT64, SX_VALUE_FLOAT);
    check_first("a\n1e400\n1", SX_DTYPE_OBJECT, SX_VALUE_STR);
    check_first("a\n1e000000000000000005", SX_DTYPE_OBJECT, SX_VALUE_STR);
    check_first("a\n1e2147483648", SX_DTYPE_FLOAT64, SX_VALUE_FLOAT); /* wraps: 0.0 */
    check_first("a\n\"NA\"\n1", SX_DTYPE_FLOAT64, SX_VALUE_NAN);
    check_first("a,b\n1,2,3", SX_DTYPE_INT64, SX_VALUE_INT); /* implicit index */
    check_first("a\n\"ab\"c\n1", SX_DTYPE_OBJECT, SX_VALUE_STR);
}

static void test_values_and_rows(void)
{
    sx_error_t err;
    sx_frame_t *f = parse("\xEF\xBB\xBF"
                          "a,b\r\n"
                          "0.30000000000000004, x \r\n"
                          "   \r\n"
                          "\"1e5\",\"q\"\"r\"s\n"
                          "-1e-400\n",
                          &err);
    SX_CHECK(f && sx_frame_row_count(f) == 3 && sx_frame_column_count(f) == 2);
    const sx_frame_column_t *a = sx_frame_column(f, 0), *b = sx_frame_column(f, 1);
    SX_CHECK(a->dtype == SX_DTYPE_FLOAT64);
    SX_CHECK(a->values[0].f == 0.3); /* pandas' parser, not strtod */
    SX_CHECK(a->values[1].f == 1e5);
    SX_CHECK(a->values[2].f == 0 && signbit(a->values[2].f));
    SX_CHECK(strcmp(b->values[0].str, " x ") == 0);
    SX_CHECK(strcmp(b->values[1].str, "q\"rs") == 0);
    SX_CHECK(b->values[2].kind == SX_VALUE_NAN); /* padded short row */
    sx_frame_destroy(&f);
    sx_frame_destroy(&f);
    /* CR-only file whose second data line starts with a space: pandas
     * re-reads from the start of its first tokenizer call. */
    f = parse("a\r 1\r2", &err);
    SX_CHECK(f && sx_frame_row_count(f) == 3);
    SX_CHECK(strcmp(sx_frame_column(f, 0)->values[0].str, "a") == 0);
    sx_frame_destroy(&f);
    /* pandas reads a field as a C string: a NUL byte ends it. */
    f = sx_frame_parse("n.csv", "a\n1\0x\n2", 8, &err);
    SX_CHECK(f && sx_frame_column(f, 0)->dtype == SX_DTYPE_INT64);
    sx_frame_destroy(&f);
    f = parse("a,b", &err);
    SX_CHECK(f && sx_frame_row_count(f) == 0 && sx_frame_column_count(f) == 2);
    sx_frame_destroy(&f);
    /* Where pandas' rewinding would repeat rows without end: an error. */
    SX_CHECK(!parse("a\r1\r2\r 3\r4", &err) && strstr(err.msg, "re-read rows"));
    /* The same after an LF (found by fuzz_frame: it looped for ever). */
    SX_CHECK(!parse("a\na\r\r\n\n2\r\r sx", &err) && strstr(err.msg, "re-read rows"));
    sx_frame_destroy(&f);
}

static void test_unreadable_files_fail_like_pandas(void)
{
    sx_error_t err;
    SX_CHECK(!parse("", &err) && strstr(err.msg, "No columns"));
    SX_CHECK(!parse("\n\n  \n", &err) && strstr(err.msg, "No columns"));
    SX_CHECK(!parse("a\n1\n2,3", &err) && strstr(err.msg, "Expected 1 fields in line 3"));
    SX_CHECK(!parse("a\n\"open", &err) && strstr(err.msg, "EOF inside string"));
    SX_CHECK(!parse("a\n\xff\n", &err) && strstr(err.msg, "position 2"));
    SX_CHECK(!parse("a\n\xed\xa0\x80\n", &err)); /* a surrogate */
    SX_CHECK(!sx_frame_read(NULL, "/nonexistent/p.csv", &err));
    SX_CHECK(strstr(err.msg, "/nonexistent/p.csv"));
}

/* The constant table holds exactly what strtod reads from each "1eN". */
static void test_powers_are_the_literals(void)
{
    for (int i = 0; i <= 308; i++) {
        char text[8];
        snprintf(text, sizeof text, "1e%d", i);
        SX_CHECK(powers[i] == strtod(text, NULL));
    }
}

/* Column names are the header's fields as written, a quoted one unquoted; an
 * implicit index (data rows wider than the header) takes no name. */
static void test_column_names_are_the_header(void)
{
    sx_error_t err;
    sx_frame_t *f = parse("\xEF\xBB\xBF"
                          "a,,\"x,y\",a\n1,2,3,4\n",
                          &err);
    SX_CHECK(f && sx_frame_column_count(f) == 4);
    SX_CHECK(strcmp(sx_frame_column_name(f, 0), "a") == 0 &&
             strcmp(sx_frame_column_name(f, 1), "") == 0 &&
             strcmp(sx_frame_column_name(f, 2), "x,y") == 0 &&
             strcmp(sx_frame_column_name(f, 3), "a") == 0 && !sx_frame_column_name(f, 4));
    sx_frame_destroy(&f);
    f = parse("k,v\n0,1,2\n", &err);
    SX_CHECK(f && sx_frame_column_count(f) == 2);
    SX_CHECK(strcmp(sx_frame_column_name(f, 1), "v") == 0);
    SX_CHECK(sx_frame_column(f, 1)->values[0].i == 2);
    sx_frame_destroy(&f);
}

void sx_frame_test(bool verbose)
{
    (void)verbose;
    test_column_names_are_the_header();
    test_powers_are_the_literals();
    test_type_inference_follows_pandas();
    test_values_and_rows();
    test_unreadable_files_fail_like_pandas();
}
