/* test_backend.c: self-test of the executor behind an agent
 * (worker/backend.c) with the simulated executor; the real pair behind it
 * is exercised by the cli_ and e2e_ tests of run and worker. */
#include "worker/backend.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_backend_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_backend: OK\n");
    return 0;
}
