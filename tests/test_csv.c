/* test_csv.c: self-test of the CSV reader and writer (common/csv.c), and the
 * round trip the final CSV depends on: every one-column edge written by
 * sx_csv_write_record reads back, the way pandas reads it (common/frame.c),
 * as the same relation (docs/benchmark.md: NULL and the empty string both read
 * as NaN, and no row vanishes as a blank line). */
#include "common/csv.h"
#include "common/frame.h"
#include "common/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        SX_CHECK(value->str.len == strlen(edge->text) &&
                 memcmp(value->str.s, edge->text, value->str.len) == 0);
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

int main(void)
{
    sx_csv_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_one_column_edges_read_back_as_written();
    test_gold_quoted_empty_is_one_nan_row();
    printf("test_csv: OK\n");
    return 0;
}
