/* test_gateway.c: self-test of the SQL Gateway / Flink REST client: trace
 * summaries and the SQL-versus-infra split on canned Flink 1.20 answers,
 * result pages, and fast failure against an address where nothing listens.
 * The live gateway is covered by e2e_exec.sh. */
#include "worker/gateway.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_gateway_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_gateway: OK\n");
    return 0;
}
