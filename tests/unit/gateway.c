/* tests/unit/gateway.c: self-test of the SQL Gateway / Flink REST client: trace
 * summaries and the SQL-versus-infra split on canned Flink 1.20 answers,
 * result pages, and fast failure against an address where nothing listens;
 * then, against the scripted fake Flink of tests/kit/fakeflink.h (test code,
 * so not in gateway.c's own self-test), the listing of running jobs.
 * The live gateway is covered by tests/e2e/exec.sh. */
#include "worker/clients/gateway.h"

#include "common/selftest.h"
#include "tests/kit/fakeflink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Of the fake cluster's jobs, only the running one named like a task's is
 * listed (what a sweep cancels). */
static void test_running_jobs(void)
{
    sx_fakeflink_script_t script = {.states = "RUNNING"};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_error_t err;
    sx_gateway_t *gw =
        sx_gateway_new(sx_fakeflink_url(fake), sx_fakeflink_url(fake), 5000, &err);
    SX_CHECK(gw);
    char(*ids)[SX_JOB_ID_SIZE] = NULL;
    size_t count = 0;
    SX_CHECK(sx_gateway_running_jobs(gw, "streamex ", &ids, &count, &err) == 0);
    SX_CHECK(count == 1 && strcmp(ids[0], SX_FAKEFLINK_JOB) == 0);
    free(ids);
    sx_gateway_destroy(&gw);
    sx_fakeflink_destroy(&fake);
}

int main(void)
{
    sx_gateway_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_running_jobs();
    printf("test_gateway: OK\n");
    return 0;
}
