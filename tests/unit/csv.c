/* tests/unit/csv.c: self-test of the CSV reader and writer (common/csv.c), and the
 * round trip the final CSV depends on: every one-column edge written by
 * sx_csv_write_record reads back, the way pandas reads it (common/ex/frame.c),
 * as the same relation (docs/benchmark.md: NULL and the empty string both read
 * as NaN, and no row vanishes as a blank line). */
#include "common/csv.h"
#include "common/ex/frame.h"
#include "common/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *field; /* NULL: a SQL NULL */
    sx_value_kind_t kind;
    const char *text; /* for SX_VALUE_STR */
} edge_t;

static const edge_t s_edges[] = {
    {NULL, SX_VALUE_NAN, NULL},     {"", SX_VALUE_NAN, NULL},
    {"\"\"", SX_VALUE_STR, "\"\""}, {" ", SX_VALUE_STR, " "},
    {"\t", SX_VALUE_STR, "\t"},     {" \t ", SX_VALUE_STR, " \t "},
    {"NULL", SX_VALUE_NAN, NULL},   {"x,\"y\"\n", SX_VALUE_STR, "x,\"y\"\n"},
};
#define EDGE_COUNT (sizeof s_edges / sizeof s_edges[0])

/* Writes the header "a" and the given fields as one-column rows. */
static char *write_column(const char *const *fields, size_t count, size_t *size)
{
    char *buffer = NULL;
    FILE *out = open_memstream(&buffer, size);
    SX_CHECK(out);
    const char *header = "a";
    SX_CHECK(sx_csv_write_record(out, &header, 1) == 0);
    for (size_t i = 0; i < count; i++)
        SX_CHECK(sx_csv_write_record(out, &fields[i], 1) == 0);
    SX_CHECK(fclose(out) == 0);
    return buffer;
}

static void check_value(const sx_value_t *value, const edge_t *edge)
{
    if (value->kind != edge->kind)
        fprintf(stderr, "edge '%s': read as kind %d\n",
                edge->field ? edge->field : "NULL", (int)value->kind);
    SX_CHECK(value->kind == edge->kind);
    if (edge->kind == SX_VALUE_STR)
        SX_CHECK(strcmp(value->str, edge->text) == 0);
}

/* Each edge alone, then all of them in one column: one row per field. */
static void test_one_column_edges_read_back_as_written(void)
{
    for (size_t i = 0; i <= EDGE_COUNT; i++) {
        bool all = i == EDGE_COUNT;
        const char *fields[EDGE_COUNT];
        size_t count = all ? EDGE_COUNT : 1;
        for (size_t k = 0; k < count; k++)
            fields[k] = s_edges[all ? k : i].field;
        size_t size = 0;
        char *text = write_column(fields, count, &size);
        sx_error_t err;
        sx_error_clear(&err);
        sx_frame_t *frame = sx_frame_parse("edge.csv", text, size, &err);
        SX_CHECK(frame && sx_frame_column_count(frame) == 1);
        SX_CHECK(sx_frame_row_count(frame) == count);
        const sx_frame_column_t *column = sx_frame_column(frame, 0);
        for (size_t k = 0; k < count; k++)
            check_value(&column->values[k], &s_edges[all ? k : i]);
        sx_frame_destroy(&frame);
        sx_csv_table_t *table = sx_csv_parse("edge.csv", text, size, 0, &err);
        SX_CHECK(table && table->count == count + 1);
        for (size_t k = 0; k < count; k++) {
            const char *want = fields[k] ? fields[k] : "";
            SX_CHECK(table->records[k + 1].count == 1);
            SX_CHECK(strcmp(table->records[k + 1].fields[0], want) == 0);
        }
        sx_csv_table_destroy(&table);
        free(text);
    }
}

/* A gold file written by Python's csv or pandas.to_csv holds "" for a lone
 * NULL: pandas reads one NaN row, a blank line reads as no row at all. */
static void test_gold_quoted_empty_is_one_nan_row(void)
{
    static const struct {
        const char *text;
        size_t rows;
        sx_value_kind_t last; /* kind of the last row's value */
    } cases[] = {
        {"a\n\"\"\n", 1, SX_VALUE_NAN},
        {"a\n1\n\"\"\n", 2, SX_VALUE_NAN},
        {"a\n1\n\n", 1, SX_VALUE_INT},
        {"a\r\n\"\"\r\n\r\n", 1, SX_VALUE_NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sx_error_t err;
        sx_error_clear(&err);
        sx_frame_t *frame =
            sx_frame_parse("gold.csv", cases[i].text, strlen(cases[i].text), &err);
        SX_CHECK(frame && sx_frame_row_count(frame) == cases[i].rows);
        const sx_frame_column_t *column = sx_frame_column(frame, 0);
        SX_CHECK(column->values[cases[i].rows - 1].kind == cases[i].last);
        sx_frame_destroy(&frame);
    }
}

/* What sx_csv_parse_each hands over, one record at a time, is what
 * sx_csv_parse keeps: fields, lengths, quoting, lines, blank lines; errors
 * are the same (records before the error have been handed over by then);
 * sx_csv_parse_each stops on its callback's return. */
typedef struct {
    const sx_csv_table_t *table;
    size_t seen;
    size_t stop_at;
} replay_check_t;

static int check_record(const sx_csv_record_t *record, void *arg, sx_error_t *err)
{
    replay_check_t *check = arg;
    if (!check->table)
        return 0; /* the input is malformed further down */
    SX_CHECK(check->seen < check->table->count);
    const sx_csv_record_t *kept = &check->table->records[check->seen++];
    SX_CHECK(record->count == kept->count && record->line == kept->line);
    for (size_t i = 0; i < record->count; i++)
        SX_CHECK(record->lengths[i] == kept->lengths[i] &&
                 memcmp(record->fields[i], kept->fields[i], record->lengths[i] + 1) ==
                     0 &&
                 record->quoted[i] == kept->quoted[i]);
    return check->seen == check->stop_at ? sx_error_set(err, "stopped") : 0;
}

static void test_parse_each_hands_over_what_parse_keeps(void)
{
    static const char *const inputs[] = {
        "\xEF\xBB\xBF"
        "a,b\r\n1,\"x\ny\"\r\n\r\n\n\"\",\"\"\"\"\n, \n",
        "a\n\"open\n",
        "a,b\n1,2\n3,\"x\"y\n",
        "a\nx\0y\n",
        "",
        "a,b",
        "\n\n",
        "h1,h2,h3\nlong field with spaces ,\"q,\"\"\",\n"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t size = i == 3 ? 8 : strlen(inputs[i]);
        sx_error_t table_err, each_err;
        sx_csv_table_t *table = sx_csv_parse("in.csv", inputs[i], size, 0, &table_err);
        replay_check_t check = {.table = table, .stop_at = (size_t)-1};
        int rc =
            sx_csv_parse_each("in.csv", inputs[i], size, check_record, &check, &each_err);
        SX_CHECK((rc == 0) == (table != NULL));
        if (table)
            SX_CHECK(check.seen == table->count);
        else
            SX_CHECK(strcmp(table_err.msg, each_err.msg) == 0);
        if (table && table->count > 1) {
            check = (replay_check_t){.table = table, .stop_at = 1};
            SX_CHECK(sx_csv_parse_each("in.csv", inputs[i], size, check_record, &check,
                                       &each_err) == -1);
            SX_CHECK(check.seen == 1 && strcmp(each_err.msg, "stopped") == 0);
        }
        sx_csv_table_destroy(&table);
    }
}

/* sx_csv_read_first keeps the header alone, yet finds a file malformed
 * anywhere, with or without quotes before the fault, and a NUL byte with or
 * without quotes; a quoteless file is parsed no further than its header. */
static void test_read_first_keeps_the_header_and_checks_the_rest(void)
{
    static const char *const inputs[] = {"a,b\n1,2\n3,4\n",   "a,\"b\"\n1,2\n3,\"x\"y\n",
                                         "a,b\n1,2\n3,\"4\n", "a,b\n1,2\n\"3\"\"\",4\n",
                                         "\n\na,b\n",         "",
                                         "a,b\n1,2\nx\0y\n",  "a,\"b\"\n1,2\nx\0y\n"};
    static const char *const expected[] = {"a|b",
                                           "/rows.csv:3: malformed quoting",
                                           "/rows.csv:4: malformed quoting",
                                           "a|b",
                                           "",
                                           "none",
                                           "/rows.csv:3: a NUL byte (a CSV",
                                           "/rows.csv:3: a NUL byte (a CSV"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        char dir[] = "/tmp/sx_test_csv_XXXXXX", path[64];
        SX_CHECK(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/rows.csv", dir);
        FILE *out = fopen(path, "wb");
        size_t size = strlen(inputs[i]) + (i >= 6 ? 3 : 0); /* past a NUL byte */
        SX_CHECK(out && fwrite(inputs[i], 1, size, out) == size && fclose(out) == 0);
        sx_error_t err;
        sx_csv_table_t *table = sx_csv_read_first(path, &err);
        char got[256] = "none";
        if (!table) /* up to libcsv's own words */
            snprintf(got, sizeof got, "%.30s", strstr(err.msg, "/rows.csv:"));
        else if (table->count == 1) {
            got[0] = '\0';
            for (size_t f = 0; f < table->records[0].count; f++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
                         f ? "|" : "", table->records[0].fields[f]);
        }
        if (strcmp(got, expected[i]) != 0)
            fprintf(stderr, "input %zu: got %s\n", i, got);
        SX_CHECK(strcmp(got, expected[i]) == 0);
        SX_CHECK(!table || table->count <= 1);
        sx_csv_table_destroy(&table);
        unlink(path);
        rmdir(dir);
    }
}

int main(void)
{
    test_parse_each_hands_over_what_parse_keeps();
    test_read_first_keeps_the_header_and_checks_the_rest();
    sx_csv_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_one_column_edges_read_back_as_written();
    test_gold_quoted_empty_is_one_nan_row();
    printf("test_csv: OK\n");
    return 0;
}
