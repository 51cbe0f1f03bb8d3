/* tests/unit/sqlcheck.c: the shared SQL lexer and the candidate check of
 * docs/predictions.md (accepted statements and exact rejection reasons). */
#include "worker/sql/sqlcheck.h"
#include "worker/sql/sqllex.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_sqllex_test(verbose);
    sx_sqlcheck_test(verbose);
    printf("test_sqlcheck: OK\n");
    return 0;
}
