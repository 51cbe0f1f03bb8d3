/* tests/unit/runtime.c: self-test of the runtime's unit parts (port and folder
 * derivation, config validation, generated configs, install description in
 * worker/pair/config.c; health checks in worker/pair/health.c against the fake Flink of
 * tests/kit; the life cycle's log tails, cluster IDs and process identity in
 * worker/pair/pair.c); the real pair is exercised by tests/e2e/runtime.sh. */
#include "worker/pair/pair.h"

#include "common/selftest.h"
#include "tests/kit/fakeflink.h"
#include "worker/pair/pair_int.h" /* the health checks are private to the pair */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only an HTTP 200 is healthy: a service that answers something else (the
 * fake Flink knows neither /overview nor /v1/info) is not, and an external
 * pair's Flink version is then unknown. */
static void test_health_needs_200(void)
{
    sx_fakeflink_script_t script = {0};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake);
    sx_pair_config_t c;
    sx_pair_config_defaults(&c, 0);
    c.kafka_bootstrap = "127.0.0.1:1";
    c.flink_gateway = sx_fakeflink_url(fake);
    c.flink_rest = sx_fakeflink_url(fake);
    sx_error_t err;
    sx_pair_t *rt = sx_pair_new(&c, &err);
    SX_CHECK(rt);
    SX_CHECK(!sx_pair_healthy(rt, JOBMANAGER) && !sx_pair_healthy(rt, TASKMANAGER));
    SX_CHECK(!sx_pair_healthy(rt, GATEWAY));
    SX_CHECK(sx_fakeflink_count(fake, "GET /overview") == 2);
    SX_CHECK(sx_fakeflink_count(fake, "GET /v1/info") == 1);
    SX_CHECK(strcmp(sx_pair_endpoint(rt, KAFKA), "127.0.0.1:1") == 0);
    SX_CHECK(strcmp(sx_pair_endpoint(rt, TASKMANAGER), sx_fakeflink_url(fake)) == 0);
    char text[256];
    sx_pair_describe(rt, text, sizeof text);
    SX_CHECK(strcmp(text, "flink-unknown/external (Kafka at 127.0.0.1:1)") == 0);
    sx_pair_destroy(&rt);
    sx_fakeflink_destroy(&fake);
}

int main(void)
{
    sx_pair_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_health_needs_200();
    printf("test_runtime: OK\n");
    return 0;
}
