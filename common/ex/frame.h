/* frame.h: a CSV file read the way pandas 2.x `read_csv(path)` reads it with
 * default options, as typed column vectors of Python-like values. This is
 * what the Spider 2.0 comparison sees, so every rule here follows pandas, not
 * RFC 4180: pandas' tokenizer (blank and whitespace-only lines skipped,
 * `"ab"c` read as `abc`, short rows padded, an implicit index when the first
 * data row is wider than the header), its NA tokens, and its per-column type
 * inference (int64, then uint64, then float64 with pandas' own float parser,
 * then bool, else strings). The header row only names columns: it is dropped. */
#ifndef SX_FRAME_H
#define SX_FRAME_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One cell as Python sees it after DataFrame.values.tolist(). 16 bytes: a
 * string's length is not kept beside it (it is the strlen of its text, which
 * holds no NUL), since a large frame is mostly its cells. */
typedef enum {
    SX_VALUE_NAN = 0, /* float('nan'): a missing value */
    SX_VALUE_INT,     /* int from an int64 column */
    SX_VALUE_UINT,    /* int from a uint64 column (beyond int64) */
    SX_VALUE_FLOAT,
    SX_VALUE_BOOL,
    SX_VALUE_STR,
} sx_value_kind_t;

typedef struct {
    sx_value_kind_t kind;
    union {
        int64_t i;
        uint64_t u;
        double f;
        bool b;
        const char *str; /* UTF-8, NUL-terminated, in the frame's storage */
    };
} sx_value_t;

/* A column's pandas dtype; it decides how DataFrame.values mixes columns. */
typedef enum {
    SX_DTYPE_INT64 = 0,
    SX_DTYPE_UINT64,
    SX_DTYPE_FLOAT64,
    SX_DTYPE_BOOL,
    SX_DTYPE_OBJECT,
} sx_dtype_t;

typedef struct {
    sx_dtype_t dtype;
    sx_value_t *values; /* row_count values */
} sx_frame_column_t;

typedef struct _sx_frame_t sx_frame_t;

/* Reads a CSV as pandas would. Fails, with pandas' reason, where pandas
 * raises: unreadable file, empty file (no columns), invalid UTF-8, EOF inside
 * a quoted field, a row wider than the rows before it. The file is read
 * under the input rule of files.h (root: its folder, or NULL). */
sx_frame_t *sx_frame_read(const char *root, const char *path, sx_error_t *err);
/* The same over a buffer; `name` is used in messages. */
sx_frame_t *sx_frame_parse(const char *name, const char *data, size_t size,
                           sx_error_t *err);
void sx_frame_destroy(sx_frame_t **self_p);

size_t sx_frame_column_count(const sx_frame_t *self);
size_t sx_frame_row_count(const sx_frame_t *self);
const sx_frame_column_t *sx_frame_column(const sx_frame_t *self, size_t index);
/* A column's name: its header field as written (not pandas' name, which
 * makes "Unnamed: 0" of an empty one and "a.1" of a second "a"); it names
 * columns for people, the comparison never reads it. */
const char *sx_frame_column_name(const sx_frame_t *self, size_t index);

void sx_frame_test(bool verbose);

#endif
