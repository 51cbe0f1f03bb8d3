/* fuzz_csv.c: the CSV reader and writer (common/csv.c). Any bytes are read
 * or refused with a message, with and without the strict width rule. What
 * is read must survive a round trip: writing its records (blank lines have
 * no fields to write) and reading that back gives the same records, field
 * by field, and no blank ones. */
#include "common/csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_nul(const sx_csv_record_t *record)
{
    for (size_t f = 0; f < record->count; f++)
        if (strlen(record->fields[f]) != record->lengths[f])
            return true;
    return false;
}

/* The records of `table` that hold fields, as CSV text (heap). */
static char *write_table(const sx_csv_table_t *table, size_t *size_p)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, size_p);
    if (!out)
        abort();
    for (size_t r = 0; r < table->count; r++) {
        const sx_csv_record_t *record = &table->records[r];
        if (record->count > 0 &&
            sx_csv_write_record(out, (const char *const *)record->fields,
                                record->count) != 0)
            abort();
    }
    fclose(out);
    return text;
}

static bool same_record(const sx_csv_record_t *a, const sx_csv_record_t *b)
{
    if (a->count != b->count)
        return false;
    for (size_t f = 0; f < a->count; f++)
        if (a->lengths[f] != b->lengths[f] ||
            memcmp(a->fields[f], b->fields[f], a->lengths[f]) != 0)
            return false;
    return true;
}

static void check_round_trip(const sx_csv_table_t *table)
{
    for (size_t r = 0; r < table->count; r++)
        if (has_nul(&table->records[r]))
            return; /* the writer takes C strings: a NUL byte cannot be written */
    size_t size = 0;
    char *text = write_table(table, &size);
    sx_error_t err;
    sx_csv_table_t *back = sx_csv_parse("written.csv", text, size, 0, &err);
    if (!back) {
        fprintf(stderr, "written CSV not readable: %s\n", err.msg);
        abort();
    }
    size_t b = 0;
    for (size_t r = 0; r < table->count; r++) {
        if (table->records[r].count == 0)
            continue;
        if (b >= back->count || !same_record(&table->records[r], &back->records[b])) {
            fprintf(stderr, "record %zu (line %zu) changed in a write and read\n", r,
                    table->records[r].line);
            abort();
        }
        b++;
    }
    if (b != back->count) {
        fprintf(stderr, "%zu records written, %zu read back\n", b, back->count);
        abort();
    }
    sx_csv_table_destroy(&back);
    free(text);
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_csv_table_t *strict =
        sx_csv_parse("fuzz.csv", data, size, SX_CSV_STRICT_WIDTH, &err);
    sx_csv_table_destroy(&strict);
    sx_error_clear(&err);
    sx_csv_table_t *table = sx_csv_parse("fuzz.csv", data, size, 0, &err);
    if (!table) {
        if (!sx_error_is_set(&err))
            abort();
        return 0;
    }
    check_round_trip(table);
    sx_csv_table_destroy(&table);
    return 0;
}
