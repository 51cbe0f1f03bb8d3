/* tests/unit/engine.c: which engine a selector picks in a runtime folder
 * (worker/pair/engine.c's self-test), and that the result cache keeps the
 * engines apart: an entry a Flink 2.2 pair stored is never served to a pair
 * of the default engine on the same machine, and the reverse, with the keys
 * fed exactly as a worker feeds them (worker/backend.c: the pair's
 * sx_pair_versions, read from the engine's own marker). */
#include "worker/pair/engine.h"

#include "common/files.h"
#include "common/selftest.h"
#include "worker/pair/pair.h"
#include "worker/resultcache.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, text, strlen(text), NULL) == 0);
}

/* What a worker's result cache is keyed on for a pair of `flink` in rt. */
static void pair_versions(const char *rt, const char *flink, char *out, size_t size)
{
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 0);
    c.runtime_dir = rt;
    c.flink = flink;
    sx_pair_t *pair = sx_pair_new(&c, &err);
    SX_CHECK(pair != NULL);
    SX_CHECK(sx_pair_versions(pair, out, size, &err) == 0);
    sx_pair_destroy(&pair);
}

static void test_cache_keeps_engines_apart(void)
{
    char rt[] = "/tmp/sx_engine_cache_XXXXXX";
    SX_CHECK(mkdtemp(rt) != NULL);
    write_file(rt, "installed.env",
               "SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\n"
               "SX_KAFKA_VERSION=3.9.1\n");
    write_file(rt, "flink-2.2/installed.env",
               "SX_FLINK_VERSION=2.2.1\nSX_FLINK_KAFKA_CONNECTOR_VERSION=5.0.0-2.2\n"
               "SX_KAFKA_VERSION=3.9.1\n");
    char v120[SX_ENGINE_TEXT], v22[SX_ENGINE_TEXT];
    pair_versions(rt, NULL, v120, sizeof v120);
    pair_versions(rt, "2.2", v22, sizeof v22);
    SX_CHECK(strcmp(v120, "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1") == 0);
    SX_CHECK(strcmp(v22, "Flink 2.2.1 (Kafka connector 5.0.0-2.2), Kafka 3.9.1") == 0);

    char cache_dir[PATH_MAX], csv[PATH_MAX], out[PATH_MAX];
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", rt);
    snprintf(csv, sizeof csv, "%s/final.csv", rt);
    snprintf(out, sizeof out, "%s/served.csv", rt);
    write_file(rt, "final.csv", "symbol,vwap\nA,1.5\n");
    sx_msg_file_t files[] = {
        {"tasks/t1/task.json", "0123456789abcdef0123456789abcdef01234567", 10}};
    const char *sql = "INSERT INTO sink SELECT * FROM src";
    sx_error_t err;
    sx_resultcache_t *on22 = sx_resultcache_open(cache_dir, v22, &err);
    sx_resultcache_t *on120 = sx_resultcache_open(cache_dir, v120, &err);
    SX_CHECK(on22 && on120);
    char key22[41], key120[41];
    sx_resultcache_key(on22, "t1", 0, sql, files, 1, key22);
    sx_resultcache_key(on120, "t1", 0, sql, files, 1, key120);
    SX_CHECK(strcmp(key22, key120) != 0);
    /* The 2.2 pair stores its final CSV; the 1.20 run, asking for the same
     * task and candidate, misses; the 2.2 pair hits. */
    sx_changelog_counts_t changelog = {0};
    SX_CHECK(sx_resultcache_put(on22, key22, csv, &changelog, &err) == 0);
    SX_CHECK(sx_resultcache_get(on120, key120, out, &changelog, &err) == 0);
    SX_CHECK(!sx_file_exists(out));
    SX_CHECK(sx_resultcache_get(on22, key22, out, &changelog, &err) == 1);
    SX_CHECK(sx_file_exists(out));
    sx_resultcache_destroy(&on22);
    sx_resultcache_destroy(&on120);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", rt);
    SX_CHECK(system(command) == 0);
}

int main(void)
{
    sx_engine_test(getenv("SX_TEST_VERBOSE") != NULL);
    test_cache_keeps_engines_apart();
    printf("test_engine: OK\n");
    return 0;
}
