/* tests/unit/figures.c: self-test of a run's statistics from per-task
 * verdicts (common/results/figures.c). */
#include "common/results/figures.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_figures_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_figures: OK\n");
    return 0;
}
