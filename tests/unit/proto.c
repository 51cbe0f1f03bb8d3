/* tests/unit/proto.c: self-tests of the wire messages and their validation (proto/). */
#include "proto/proto.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_proto_test(verbose);
    printf("test_proto: OK\n");
    return 0;
}
