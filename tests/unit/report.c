/* tests/unit/report.c: self-test of OUT/report.html (common/report/report.c): escaping
 * of everything a run brings, every task and each method's EX on the page. */
#include "common/report/report.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sx_report_test(getenv("SX_TEST_VERBOSE") != NULL);
    printf("test_report: OK\n");
    return 0;
}
