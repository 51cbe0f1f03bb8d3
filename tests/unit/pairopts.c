/* tests/unit/pairopts.c: self-test of the pair's command-line options
 * (cli/pairopts.c, compiled into this test: cli/ is not in sxcore). */
#include "cli/pairopts.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_pairopts_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_pairopts: OK\n");
    return 0;
}
