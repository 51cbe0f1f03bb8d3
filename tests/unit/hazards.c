/* tests/unit/hazards.c: self-test of the Flink streaming hazards found in task
 * inputs (worker/check/hazards.c). */
#include "worker/check/hazards.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_hazards_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_hazards: OK\n");
    return 0;
}
