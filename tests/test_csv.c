/* test_csv.c: self-test of the CSV reader and writer (common/csv.c). */
#include "common/csv.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_csv_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_csv: OK\n");
    return 0;
}
