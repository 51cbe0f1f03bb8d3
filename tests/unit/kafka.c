/* tests/unit/kafka.c: self-test of the worker's Kafka client (topics, idempotent
 * replay with delivery confirmation, whole-topic read-back) on librdkafka's
 * in-process mock cluster; the real broker is covered by tests/e2e/exec.sh. */
#include "worker/clients/kafka.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_kafka_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_kafka: OK\n");
    return 0;
}
