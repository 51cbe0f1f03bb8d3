/* test_http.c: self-test of the worker's HTTP request (worker/http.c)
 * against the fake Flink of worker/fakeflink.c. */
#include "worker/http.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_http_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_http: OK\n");
    return 0;
}
