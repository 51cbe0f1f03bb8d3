/* test_prepare.c: source preparation (projection, time conversion, replay
 * order, errors naming task/file/line/column). */
#include "worker/prepare.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_prepare_test(verbose);
    printf("test_prepare: OK\n");
    return 0;
}
