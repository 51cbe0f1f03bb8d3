/* tests/unit/oracle.c: self-test of the BATCH oracle's DDL rewriting
 * (worker/check/oracle.c); the oracle itself runs in tests/e2e/doctor.sh. */
#include "worker/check/oracle.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_oracle_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_oracle: OK\n");
    return 0;
}
