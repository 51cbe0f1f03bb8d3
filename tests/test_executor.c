/* test_executor.c: self-test of the task executor: outcomes that need no
 * Kafka or Flink (missing prediction, rejected SQL, broken task), and every
 * verdict decided on the cluster against librdkafka's mock Kafka and the
 * scripted fake Flink of worker/fakeflink.c (whose own self-test runs first).
 * The same steps on a live pair: e2e_exec.sh and e2e_chaos.sh. */
#include "worker/executor.h"
#include "worker/fakeflink.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_fakeflink_test(verbose);
    sx_executor_test(verbose);
    printf("test_executor: OK\n");
    return 0;
}
