/* test_runtime.c: self-test of the runtime's unit parts (port and folder
 * derivation, config validation, generated configs, install description in
 * worker/pairconf.c; health checks in worker/health.c; the life cycle's log
 * tails, cluster IDs and process identity in worker/runtime.c); the real
 * pair is exercised by tests/e2e_runtime.sh. */
#include "worker/runtime.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_runtime_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_runtime: OK\n");
    return 0;
}
