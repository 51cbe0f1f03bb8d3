/* fuzz_frame.c: the pandas-style CSV reader (common/ex/frame.c) over any bytes:
 * it reads a frame or refuses with a message; every column of a frame has
 * row_count values of a kind its dtype allows, and strings lie inside it. */
#include "common/ex/frame.h"

#include <stdlib.h>

static void check_column(const sx_frame_column_t *column, size_t rows)
{
    for (size_t r = 0; r < rows; r++) {
        const sx_value_t *v = &column->values[r];
        if (v->kind > SX_VALUE_STR)
            abort();
        if (v->kind == SX_VALUE_STR) {
            volatile unsigned char sum = 0; /* ASan sees a string outside the frame */
            for (const char *p = v->str; *p; p++)
                sum += (unsigned char)*p;
            (void)sum;
        }
        if (column->dtype == SX_DTYPE_INT64 && v->kind != SX_VALUE_INT)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_frame_t *frame = sx_frame_parse("fuzz.csv", data, size, &err);
    if (!frame) {
        if (!sx_error_is_set(&err))
            abort();
        return 0;
    }
    size_t rows = sx_frame_row_count(frame);
    for (size_t c = 0; c < sx_frame_column_count(frame); c++)
        check_column(sx_frame_column(frame, c), rows);
    sx_frame_destroy(&frame);
    return 0;
}
