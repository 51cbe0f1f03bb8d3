/* tests/unit/score.c: self-tests of EX scoring: the pandas-style reader (frame),
 * Python float repr and isclose (pyrepr), the Spider 2.0 comparison
 * (compare), the strict row-aligned verdict (strict), the tie adapter (tie)
 * and the evaluation/score entry points; sx_score_task on a throw-away bench. */
#include "common/ex/compare.h"
#include "common/ex/diff.h"
#include "common/ex/frame.h"
#include "common/ex/pyrepr.h"
#include "common/ex/score.h"
#include "common/ex/strict.h"
#include "common/ex/tie.h"
#include "common/files.h"
#include "common/selftest.h"
#include "tests/kit/testbench.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>

/* sx_score_task finds gold and evaluation in the bench: a match, then the
 * bench, the gold or the evaluation that cannot be read is eval_error with
 * the reason in detail. */
static void test_score_task(void)
{
    char *bench = sx_testbench_make(2, NULL);
    char pred[PATH_MAX], path[PATH_MAX], want[2 * PATH_MAX];
    snprintf(pred, sizeof pred, "%s/pred.csv", bench);
    SX_CHECK(sx_file_write_atomic(pred, "x\n1\n", 4, NULL) == 0);
    sx_profile_t p = SX_PROFILE_SPIDER2_LITE_2025_11;
    char detail[2 * PATH_MAX];
    int strict = -1;
    SX_CHECK(sx_score_task(bench, "t001", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_MATCH);
    SX_CHECK(strict == 1 && strcmp(detail, "") == 0);
    SX_CHECK(sx_score_task(bench, "t002", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_MISMATCH);
    SX_CHECK(strict == 0);
    snprintf(path, sizeof path, "%s/nowhere", bench);
    strict = -1;
    SX_CHECK(sx_score_task(path, "t001", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    snprintf(want, sizeof want, "%s/task_ids.txt: cannot open: No such file or directory",
             path);
    SX_CHECK(strict == 0 && strcmp(detail, want) == 0);
    snprintf(path, sizeof path, "%s/evaluation/t002.json", bench);
    const char *extra = "{\"extra\": 1}\n";
    SX_CHECK(sx_file_write_atomic(path, extra, strlen(extra), NULL) == 0);
    SX_CHECK(sx_score_task(bench, "t002", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    snprintf(want, sizeof want, "%s: unknown field 'extra'", path);
    SX_CHECK(strcmp(detail, want) == 0);
    SX_CHECK(unlink(path) == 0);
    SX_CHECK(sx_score_task(bench, "t002", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    SX_CHECK(strcmp(detail, want) == 0);
    snprintf(path, sizeof path, "%s/gold/t001.csv", bench);
    SX_CHECK(unlink(path) == 0);
    SX_CHECK(sx_score_task(bench, "t001", pred, p, &strict, detail, sizeof detail) ==
             SX_STATUS_EVAL_ERROR);
    snprintf(want, sizeof want,
             "cannot read gold: %s: cannot open: No such file or directory", path);
    SX_CHECK(strcmp(detail, want) == 0);
    sx_testbench_remove(&bench);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_pyrepr_test(verbose);
    sx_frame_test(verbose);
    sx_compare_test(verbose);
    sx_strict_test(verbose);
    sx_tie_test(verbose);
    sx_score_test(verbose);
    sx_diff_test(verbose);
    test_score_task();
    printf("test_score: OK\n");
    return 0;
}
