/* pairopts.c: applies one `--name value` option of a pair to its config
 * (see pairopts.h): a table from option name to the config member it sets,
 * numbers parsed whole, strings kept by pointer. */
#include "cli/pairopts.h"

#include "cli/options.h"
#include "common/selftest.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A pair's numbers are counts, sizes and seconds: here only whole and not
 * negative; sx_pair_config_validate gives each its range. */
static int parse_int(const char *name, const char *value, int *out, sx_error_t *err)
{
    long n = 0;
    if (!value)
        return sx_error_set(err, "%s needs a value", name);
    if (sx_option_int(name + 2, value, 0, INT_MAX, &n, err) != 0)
        return -1;
    *out = (int)n;
    return 0;
}

int sx_pair_config_option(sx_pair_config_t *config, const char *name, const char *value,
                          sx_error_t *err)
{
    struct {
        const char *name;
        int *number;
        const char **text;
    } const options[] = {
        {"--index", &config->index, NULL},
        {"--slots", &config->slots, NULL},
        {"--kafka-heap-mb", &config->kafka_heap_mb, NULL},
        {"--jobmanager-heap-mb", &config->jobmanager_heap_mb, NULL},
        {"--taskmanager-heap-mb", &config->taskmanager_heap_mb, NULL},
        {"--taskmanager-managed-mb", &config->taskmanager_managed_mb, NULL},
        {"--gateway-heap-mb", &config->gateway_heap_mb, NULL},
        {"--start-timeout", &config->start_timeout_s, NULL},
        {"--runtime-dir", NULL, &config->runtime_dir},
        {"--flink", NULL, &config->flink},
        {"--kafka-bootstrap", NULL, &config->kafka_bootstrap},
        {"--flink-gateway", NULL, &config->flink_gateway},
        {"--flink-rest", NULL, &config->flink_rest},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (strcmp(name, options[i].name) != 0)
            continue;
        if (options[i].number)
            return parse_int(name, value, options[i].number, err) == 0 ? 1 : -1;
        if (!value || !value[0])
            return sx_error_set(err, "%s needs a value", name);
        *options[i].text = value;
        return 1;
    }
    return 0;
}

/* ---- self-test -------------------------------------------------------- */

static void test_options(void)
{
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 0);
    SX_CHECK(sx_pair_config_option(&c, "--index", "12", &err) == 1 && c.index == 12);
    SX_CHECK(sx_pair_config_option(&c, "--slots", "2", &err) == 1 && c.slots == 2);
    SX_CHECK(sx_pair_config_option(&c, "--flink-rest", "http://jm:8081", &err) == 1);
    SX_CHECK(strcmp(c.flink_rest, "http://jm:8081") == 0);
    SX_CHECK(sx_pair_config_option(&c, "--bench", "x", &err) == 0);
    SX_CHECK(sx_pair_config_option(&c, "--slots", "four", &err) == -1);
    SX_CHECK(strstr(err.msg, "--slots 'four': expected an integer in [0, ") != NULL);
    SX_CHECK(sx_pair_config_option(&c, "--slots", NULL, &err) == -1);
    SX_CHECK(strcmp(err.msg, "--slots needs a value") == 0);
    SX_CHECK(sx_pair_config_option(&c, "--slots", "-1", &err) == -1);
    SX_CHECK(sx_pair_config_option(&c, "--runtime-dir", "", &err) == -1);
    SX_CHECK(sx_pair_config_option(&c, "--index", "99999999999", &err) == -1);
    SX_CHECK(sx_pair_config_option(&c, "--flink", "2.2", &err) == 1);
    SX_CHECK(strcmp(c.flink, "2.2") == 0);
    SX_CHECK(sx_pair_config_option(&c, "--flink", "", &err) == -1);
    SX_CHECK(strcmp(err.msg, "--flink needs a value") == 0);
}

void sx_pairopts_test(bool verbose)
{
    (void)verbose;
    test_options();
}
