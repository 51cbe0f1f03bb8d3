/* tests/unit/ddl.c: filling ${topic}/${bootstrap} into registered DDL and
 * enforcing bounded reading on source tables. */
#include "worker/sql/ddl.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_ddl_test(verbose);
    printf("test_ddl: OK\n");
    return 0;
}
