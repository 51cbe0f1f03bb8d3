/* test_score.c: self-tests of EX scoring: the pandas-style reader (frame),
 * Python float repr and isclose (pyrepr), the Spider 2.0 comparison
 * (compare), the strict row-aligned verdict (strict), the tie adapter (tie)
 * and the evaluation/score entry points. */
#include "common/compare.h"
#include "common/frame.h"
#include "common/pyrepr.h"
#include "common/score.h"
#include "common/strict.h"
#include "common/tie.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_pyrepr_test(verbose);
    sx_frame_test(verbose);
    sx_compare_test(verbose);
    sx_strict_test(verbose);
    sx_tie_test(verbose);
    sx_score_test(verbose);
    printf("test_score: OK\n");
    return 0;
}
