/* test_agent.c: self-tests of the worker side of the distributed run: the
 * result spool, the simulated executor and the agent (files by hash, spool
 * resend after the coordinator vanishes, reconnect, final goodbye). */
#include "worker/agent.h"
#include "worker/resultcache.h"
#include "worker/simexec.h"
#include "worker/spool.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_spool_test(verbose);
    sx_resultcache_test(verbose);
    sx_simexec_test(verbose);
    sx_agent_test(verbose);
    printf("test_agent: OK\n");
    return 0;
}
