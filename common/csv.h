/* csv.h: CSV files in and out, on libcsv. Reading keeps what later stages need
 * to reproduce other readers exactly: the physical line each record starts on,
 * whether each field was quoted, and blank lines (reported as records with no
 * fields, so a caller can skip them like pandas does or count them). A UTF-8
 * BOM is dropped, CRLF and LF both end records, quoted fields may hold commas,
 * quotes and newlines. Writing quotes only what needs it and writes a NULL
 * (a NULL pointer) as an empty field, except that a record of one field that
 * is NULL, empty or only spaces and tabs is quoted (`""`): pandas would skip
 * it as a blank line (docs/benchmark.md). */
#ifndef SX_CSV_H
#define SX_CSV_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    char **fields; /* NUL-terminated copies (a CSV with a NUL byte is refused) */
    size_t *lengths;
    bool *quoted; /* the field was written in double quotes */
    size_t count; /* 0 for a blank line */
    size_t line;  /* 1-based physical line where the record starts */
} sx_csv_record_t;

typedef struct {
    sx_csv_record_t *records; /* in file order, header included */
    size_t count;
} sx_csv_table_t;

/* Flags for sx_csv_read. */
#define SX_CSV_STRICT_WIDTH                                                              \
    1u /* a record whose field count differs from the                                    \
          first record's is an error naming its line */

/* Reads a whole file. Errors name the path (and line where one applies):
 * unreadable file, a NUL byte, malformed quoting, ragged record under
 * SX_CSV_STRICT_WIDTH.
 * The file is read under the input rule of files.h, as a CSV with no folder:
 * a source CSV is checked against its task folder when the task is loaded. */
sx_csv_table_t *sx_csv_read(const char *path, unsigned flags, sx_error_t *err);
/* The same over a buffer already in memory; `name` is used in messages. */
sx_csv_table_t *sx_csv_parse(const char *name, const char *data, size_t size,
                             unsigned flags, sx_error_t *err);
void sx_csv_table_destroy(sx_csv_table_t **self_p);

/* Index of the header field equal to `name` in record 0, or -1. */
long sx_csv_column_index(const sx_csv_table_t *table, const char *name);
/* Index of the field of `record` equal to `name`, or -1. */
long sx_csv_record_index(const sx_csv_record_t *record, const char *name);

/* The same reading, each record (the header first, blank lines as records
 * of no fields) handed to `each` as it ends instead of kept: the record and
 * its fields are valid during the call only, so a large file costs no
 * memory per row. A non-zero return from `each` stops the reading and is
 * returned (`each` fills err). sx_csv_parse_each checks the whole input for
 * a NUL byte before the first record; sx_csv_read_each reads and parses the
 * file in pieces of 1 MB (never whole in memory) and checks each piece
 * before parsing it, so the records before a NUL byte's piece have been
 * handed over when it is the error. */
typedef int(sx_csv_record_fn)(const sx_csv_record_t *record, void *arg, sx_error_t *err);
int sx_csv_read_each(const char *path, sx_csv_record_fn *each, void *arg,
                     sx_error_t *err);
int sx_csv_parse_each(const char *name, const char *data, size_t size,
                      sx_csv_record_fn *each, void *arg, sx_error_t *err);
/* Reads and checks the whole file as sx_csv_read does, but keeps only its
 * first record (a table of 0 or 1 records): a header, for the memory of one
 * row. The file is read in pieces, first searched for a quote (and a NUL
 * byte): a file without a quote cannot be malformed, and is parsed no
 * further than its first record. */
sx_csv_table_t *sx_csv_read_first(const char *path, sx_error_t *err);

/* Writes one record; a NULL field is written as an empty field. Fields that
 * hold a comma, quote, CR, LF or start/end with a space are quoted, and so is
 * a lone field that is NULL, empty or blank (a NULL is then written `""`). */
int sx_csv_write_record(FILE *out, const char *const *fields, size_t count);

/* Whether two final CSVs hold the same relation: the same header and the
 * same records field for field, in the same order or, with ignore_order, as
 * multisets. Byte-level differences that change no field (quoting) do not
 * count. *same receives the answer; -1 when a file cannot be read. */
int sx_csv_same_relation(const char *a, const char *b, bool ignore_order, bool *same,
                         sx_error_t *err);

void sx_csv_test(bool verbose);

#endif
