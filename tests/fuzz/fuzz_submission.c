/* fuzz_submission.c: the JSONL lines streamex reads back from its outputs
 * (common/results/result.c): submission.jsonl entries, which `streamex score` reads,
 * and results.jsonl lines (journal, merge). The input is split at each newline
 * (a NUL byte ends a line's text early, as it does for a C string). A line is parsed or
 * refused with a message; what parses is written again and that parses to the same line.
 */
#include "common/results/result.h"

#include <stdlib.h>
#include <string.h>

static void check_submission_line(const char *line)
{
    char *task_id = NULL, *csv = NULL;
    int sample = -1, sample_back = -1;
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_submission_entry_from_json(line, 100, &task_id, &sample, &csv, &err) != 0) {
        if (!sx_error_is_set(&err) || task_id || csv)
            abort();
        return;
    }
    if (sample < 0 || sample >= 100)
        abort();
    /* What is written again is the official index's line: no sample. */
    char *written = sx_submission_entry_to_json(task_id, csv);
    char *id_back = NULL, *csv_back = NULL;
    if (!written ||
        sx_submission_entry_from_json(written, 1, &id_back, &sample_back, &csv_back,
                                      &err) != 0 ||
        sample_back != 0)
        abort();
    if (strcmp(task_id, id_back) != 0 || (csv == NULL) != (csv_back == NULL) ||
        (csv && strcmp(csv, csv_back) != 0))
        abort();
    free(written);
    free(task_id);
    free(csv);
    free(id_back);
    free(csv_back);
}

static void check_result_line(const char *line)
{
    sx_result_t result, back;
    sx_error_t err;
    sx_error_clear(&err);
    if (sx_result_from_json(line, &result, &err) != 0) {
        if (!sx_error_is_set(&err))
            abort();
        return;
    }
    char *written = sx_result_to_json(&result);
    if (!written || sx_result_from_json(written, &back, &err) != 0)
        abort();
    char *again = sx_result_to_json(&back);
    if (!again || strcmp(written, again) != 0)
        abort();
    free(written);
    free(again);
    sx_result_clear(&result);
    sx_result_clear(&back);
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (char *line = text, *end = text + size; line <= end;) {
        char *newline = memchr(line, '\n', (size_t)(end - line));
        if (newline)
            *newline = '\0';
        check_submission_line(line);
        check_result_line(line);
        line = newline ? newline + 1 : end + 1;
    }
    free(text);
    return 0;
}
