/* tests/unit/stats.c: self-tests of the statistics core (common/results/stats.h): the
 * generator, the bootstrap interval, McNemar's exact p-value, pass@k and
 * maj@n's vote. tests/cli/stats_reference.sh holds the same functions to
 * scipy, numpy and brute force. */
#include "common/results/stats.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_stats_test(verbose);
    printf("test_stats: OK\n");
    return 0;
}
