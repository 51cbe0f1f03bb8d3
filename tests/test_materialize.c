/* test_materialize.c: the output changelog (upsert, debezium, append)
 * folded into the final relation and written as the final CSV. */
#include "worker/materialize.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_materialize_test(verbose);
    printf("test_materialize: OK\n");
    return 0;
}
