/* test_executor.c: self-test of the task executor's outcomes that need no
 * Kafka or Flink (missing prediction, rejected SQL, broken task). The steps
 * on a live pair are covered by e2e_exec.sh. */
#include "worker/executor.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_executor_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_executor: OK\n");
    return 0;
}
