/* test_coordinator.c: self-tests of the journal and the coordinator (sharding,
 * credit, heartbeat death and requeue, retry budget, idempotent late results,
 * resume, malformed messages, CURVE allow-list) with fake workers and agents
 * running the simulated executor, and the merge of --shard outputs. */
#include "coordinator/coordinator.h"
#include "coordinator/journal.h"
#include "coordinator/merge.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_journal_test(verbose);
    sx_coordinator_test(verbose);
    sx_merge_test(verbose);
    printf("test_coordinator: OK\n");
    return 0;
}
