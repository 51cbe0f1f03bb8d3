/* tests/unit/common.c: self-tests of the small common modules (errors, log, status,
 * files, signals, the crash report, the stall clock, digests, the allocator, JSON
 * numbers, UTF-8 sequences). */
#include "common/clock.h"
#include "common/crash.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/files.h"
#include "common/results/jsonout.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/signals.h"
#include "common/status.h"
#include "common/utf8.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_error_test(verbose);
    sx_mem_test(verbose);
    sx_log_test(verbose);
    sx_status_test(verbose);
    sx_files_test(verbose);
    sx_jsonout_test(verbose);
    sx_digest_test(verbose);
    sx_signals_test(verbose);
    sx_crash_test(verbose);
    sx_clock_test(verbose);
    sx_utf8_test(verbose);
    printf("test_common: OK\n");
    return 0;
}
