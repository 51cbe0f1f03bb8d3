/* tests/unit/result.c: self-test of the output files (results.jsonl,
 * submission.jsonl, summary.json) written by common/results/result.c. */
#include "common/results/result.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_result_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_result: OK\n");
    return 0;
}
