/* tests/unit/install.c: self-test of where streamex finds its own files
 * (common/install.c): build tree or installed prefix, the runtime folder's
 * order of choice, and the pinned versions of runtime/versions.env. */
#include "common/install.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_install_test(verbose);
    printf("test_install: OK\n");
    return 0;
}
