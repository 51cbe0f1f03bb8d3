/* fuzz_predictions.c: predictions loading (common/bench/predictions.c). Each input
 * is written as a predictions file checked against a tmpfs bench whose
 * task_ids.txt lists the IDs of every bench in the tests, so the seeds (their
 * predictions.jsonl files) are valid. The file is always read; every
 * prediction kept is for a distinct task of the bench. */
#include "common/bench/predictions.h"

#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>

static sx_bench_t *s_bench;
static char *s_path;

/* Appends a file's bytes to the memory stream `out`. */
static void append_file(FILE *out, const char *path)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        abort();
    int c;
    while ((c = fgetc(in)) != EOF)
        fputc(c, out);
    fclose(in);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char *ids = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&ids, &size);
    append_file(out, SX_SOURCE_DIR "/tests/data/mini-bench/task_ids.txt");
    append_file(out, SX_SOURCE_DIR "/tests/data/e2e-bench/task_ids.txt");
    append_file(out, SX_SOURCE_DIR "/examples/sample-bench/task_ids.txt");
    fclose(out);
    scratch_write("task_ids.txt", ids, size);
    free(ids);
    sx_error_t err;
    s_bench = sx_bench_open(scratch_dir(), &err);
    if (!s_bench) {
        fprintf(stderr, "fuzz_predictions: %s\n", err.msg);
        abort();
    }
    s_path = scratch_path("predictions.jsonl");
    return 0;
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
    scratch_write("predictions.jsonl", data, size);
    sx_problems_t *problems = sx_problems_new();
    sx_predictions_t *predictions = sx_predictions_check(s_path, s_bench, problems);
    /* At most one prediction per (task, sample), every sample below n. */
    if (!predictions || sx_predictions_samples(predictions) < 1 ||
        sx_predictions_samples(predictions) > SX_SAMPLES_DEFAULT ||
        sx_predictions_count(predictions) >
            sx_bench_task_count(s_bench) * (size_t)sx_predictions_samples(predictions))
        abort();
    for (size_t i = 0; i < sx_bench_task_count(s_bench); i++)
        for (int k = 0; k < sx_predictions_samples(predictions); k++)
            (void)sx_predictions_sample_sql(predictions, sx_bench_task_id(s_bench, i), k);
    sx_predictions_destroy(&predictions);
    sx_problems_destroy(&problems);
    return 0;
}
