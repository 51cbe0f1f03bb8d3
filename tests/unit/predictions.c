/* tests/unit/predictions.c: the predictions file loader (its table of bad lines
 * and the exact error of each lives in sx_predictions_test) and the sample
 * field it shares with submissions (sx_sample_test), plus the
 * fixture's predictions.jsonl against the fixture bench. */
#include "common/bench/predictions.h"
#include "common/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_predictions_test(verbose);
    sx_sample_test(verbose);

    const char *source_dir = getenv("SX_SOURCE_DIR");
    if (!source_dir)
        source_dir = SX_SOURCE_DIR;
    char bench_dir[512], path[600];
    snprintf(bench_dir, sizeof bench_dir, "%s/tests/data/mini-bench", source_dir);
    snprintf(path, sizeof path, "%s/predictions.jsonl", bench_dir);
    sx_error_t err;
    sx_bench_t *bench = sx_bench_open(bench_dir, &err);
    SX_CHECK(bench);
    sx_predictions_t *predictions = sx_predictions_load(path, bench, &err);
    SX_CHECK(predictions);
    SX_CHECK(sx_predictions_count(predictions) == 2);
    SX_CHECK(strncmp(sx_predictions_sql(predictions, "join_max"), "SELECT b.auction",
                     16) == 0);
    SX_CHECK(sx_predictions_sql(predictions, "clicks_top") == NULL); /* missing */
    sx_predictions_destroy(&predictions);
    sx_bench_destroy(&bench);
    printf("test_predictions: OK\n");
    return 0;
}
