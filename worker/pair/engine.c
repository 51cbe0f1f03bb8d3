/* engine.c: the engines of a runtime folder and the one a selector picks
 * (see engine.h). The default engine is RT/flink with the top-level marker;
 * any other is a folder RT/flink-X.Y with a marker of its own. */
#include "worker/pair/engine.h"

#include "common/files.h"
#include "common/install.h"
#include "common/selftest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest marker read. */
#define MARKER_MAX (64 << 10)

/* The value of `key` on a line KEY=VALUE of text, "" when absent. */
static void read_env_value(const char *text, const char *key, char *out, size_t size)
{
    size_t key_len = strlen(key);
    out[0] = '\0';
    for (const char *line = text; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, key, key_len) == 0 && line[key_len] == '=') {
            const char *value = line + key_len + 1;
            size_t n = strcspn(value, "\n");
            snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), value);
            return;
        }
    }
}

/* Fills the engine of folder `dir` marked by `marker`: 0, or -1 with err
 * naming what is missing. */
static int read_engine(const char *dir, const char *marker, bool is_default,
                       sx_engine_t *e, sx_error_t *err)
{
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s", dir);
    snprintf(e->marker, sizeof e->marker, "%s", marker);
    e->is_default = is_default;
    size_t size = 0;
    char *text = sx_file_read(marker, MARKER_MAX, &size, NULL);
    if (!text)
        return sx_error_set(err, "not installed: run scripts/setup-runtime.sh (no %s)",
                            marker);
    read_env_value(text, "SX_FLINK_VERSION", e->flink, sizeof e->flink);
    read_env_value(text, "SX_FLINK_KAFKA_CONNECTOR_VERSION", e->connector,
                   sizeof e->connector);
    read_env_value(text, "SX_KAFKA_VERSION", e->kafka, sizeof e->kafka);
    free(text);
    if (!e->flink[0] || !e->kafka[0])
        return sx_error_set(err,
                            "not installed: %s names no Flink or Kafka version; run "
                            "scripts/setup-runtime.sh",
                            marker);
    return 0;
}

static int read_default(const char *rt, sx_engine_t *e, sx_error_t *err)
{
    char dir[4096], marker[4096];
    snprintf(dir, sizeof dir, "%s/flink", rt);
    snprintf(marker, sizeof marker, "%s/installed.env", rt);
    return read_engine(dir, marker, true, e, err);
}

static int by_dir(const void *a, const void *b)
{
    return strcmp(((const sx_engine_t *)a)->dir, ((const sx_engine_t *)b)->dir);
}

/* The engines of folder rt (already resolved). */
static size_t list_in(const char *rt, sx_engine_t *engines, size_t max)
{
    size_t count = 0;
    if (max > 0 && read_default(rt, &engines[0], NULL) == 0)
        count++;
    size_t first_other = count;
    DIR *folder = opendir(rt);
    struct dirent *entry;
    while (folder && count < max && (entry = readdir(folder)) != NULL) {
        if (strncmp(entry->d_name, "flink-", 6) != 0)
            continue;
        char dir[4096], marker[4200];
        snprintf(dir, sizeof dir, "%s/%s", rt, entry->d_name);
        snprintf(marker, sizeof marker, "%s/installed.env", dir);
        if (read_engine(dir, marker, false, &engines[count], NULL) == 0)
            count++;
    }
    if (folder)
        closedir(folder);
    qsort(engines + first_other, count - first_other, sizeof *engines, by_dir);
    return count;
}

size_t sx_engine_list(const char *runtime_dir, sx_engine_t *engines, size_t max)
{
    char *rt = sx_install_runtime_dir(runtime_dir);
    size_t count = list_in(rt, engines, max);
    free(rt);
    return count;
}

const char *sx_engine_selector(const char *given)
{
    if (given && given[0])
        return given;
    const char *env = getenv("SX_FLINK");
    return env && env[0] ? env : NULL;
}

int sx_engine_selector_check(const char *selector, sx_error_t *err)
{
    if (!selector || !selector[0])
        return 0;
    /* Two or three dot-separated numbers, nothing else. */
    int parts = 0;
    bool good = true;
    for (const char *p = selector; good; p++) {
        size_t digits = strspn(p, "0123456789");
        good = digits > 0 && digits <= 4 && ++parts <= 3;
        p += digits;
        if (!good || *p == '\0')
            break;
        good = *p == '.';
    }
    if (good && parts >= 2)
        return 0;
    return sx_error_set(
        err, "--flink '%s': expected a Flink version X.Y or X.Y.Z, e.g. 2.2", selector);
}

/* Whether version (e.g. "2.2.1") is the selector or starts with it and a dot. */
static bool picks(const char *selector, const char *version)
{
    size_t n = strlen(selector);
    return strncmp(version, selector, n) == 0 &&
           (version[n] == '\0' || version[n] == '.');
}

void sx_engine_series(const sx_engine_t *e, char *out, size_t size)
{
    size_t first = strcspn(e->flink, ".");
    size_t second = e->flink[first] ? strcspn(e->flink + first + 1, ".") : 0;
    snprintf(out, size, "%.*s", (int)(first + (second ? second + 1 : 0)), e->flink);
}

/* The X.Y of a selector X.Y[.Z]. */
static void selector_series(const char *selector, char *out, size_t size)
{
    const char *dot = strchr(selector, '.');
    size_t n =
        dot ? (size_t)(dot - selector) + 1 + strcspn(dot + 1, ".") : strlen(selector);
    snprintf(out, size, "%.*s", (int)n, selector);
}

static int resolve_in(const char *rt, const char *selector, sx_engine_t *engine,
                      sx_error_t *err)
{
    if (sx_engine_selector_check(selector, err) != 0)
        return -1;
    if (!selector || !selector[0])
        return read_default(rt, engine, err);
    sx_engine_t engines[SX_ENGINE_MAX];
    size_t count = list_in(rt, engines, SX_ENGINE_MAX);
    for (size_t i = 0; i < count; i++)
        if (picks(selector, engines[i].flink)) {
            *engine = engines[i];
            return 0;
        }
    char series[32], installed[512] = "";
    selector_series(selector, series, sizeof series);
    for (size_t i = 0, used = 0; i < count && used < sizeof installed; i++)
        used += (size_t)snprintf(installed + used, sizeof installed - used, "%s%s",
                                 i ? ", " : "", engines[i].flink);
    return sx_error_set(err,
                        "Flink %s is not installed in %s: run scripts/setup-runtime.sh "
                        "--flink %s (installed: %s)",
                        selector, rt, series, count ? installed : "none");
}

int sx_engine_resolve(const char *runtime_dir, const char *selector, sx_engine_t *engine,
                      sx_error_t *err)
{
    char *rt = sx_install_runtime_dir(runtime_dir);
    int rc = resolve_in(rt, selector, engine, err);
    free(rt);
    return rc;
}

void sx_engine_label(const sx_engine_t *e, char *out, size_t size)
{
    snprintf(out, size, "flink-%s/kafka-connector-%s/kafka-%s", e->flink,
             e->connector[0] ? e->connector : "unknown", e->kafka);
}

void sx_engine_versions(const sx_engine_t *e, char *out, size_t size)
{
    snprintf(out, size, "Flink %s (Kafka connector %s), Kafka %s", e->flink,
             e->connector[0] ? e->connector : "unknown", e->kafka);
}

/* ---- self-test -------------------------------------------------------- */

static void write_marker(const char *dir, const char *text)
{
    char path[4200];
    SX_CHECK(sx_mkdirs(dir, NULL) == 0);
    snprintf(path, sizeof path, "%s/installed.env", dir);
    SX_CHECK(sx_file_write_atomic(path, text, strlen(text), NULL) == 0);
}

static void test_selectors(void)
{
    static const struct {
        const char *selector;
        bool good;
    } cases[] = {{"", true},      {"1.20", true},  {"2.2", true},    {"2.2.1", true},
                 {"2", false},    {"2.", false},   {"2.2.", false},  {"2.2.1.0", false},
                 {"a.b", false},  {"2.x", false},  {".2", false},    {"2..2", false},
                 {" 2.2", false}, {"2.2 ", false}, {"latest", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sx_error_t err;
        SX_CHECK((sx_engine_selector_check(cases[i].selector, &err) == 0) ==
                 cases[i].good);
        if (!cases[i].good) {
            char want[SX_ERROR_MAX];
            snprintf(want, sizeof want,
                     "--flink '%s': expected a Flink version X.Y or X.Y.Z, e.g. 2.2",
                     cases[i].selector);
            SX_CHECK(strcmp(err.msg, want) == 0);
        }
    }
    SX_CHECK(sx_engine_selector_check(NULL, NULL) == 0);
    /* --flink, else $SX_FLINK, else the default. */
    const char *saved = getenv("SX_FLINK");
    char *copy = saved ? strdup(saved) : NULL;
    unsetenv("SX_FLINK");
    SX_CHECK(sx_engine_selector(NULL) == NULL && sx_engine_selector("") == NULL);
    SX_CHECK(strcmp(sx_engine_selector("2.2"), "2.2") == 0);
    setenv("SX_FLINK", "2.2", 1);
    SX_CHECK(strcmp(sx_engine_selector(NULL), "2.2") == 0);
    SX_CHECK(strcmp(sx_engine_selector("1.20"), "1.20") == 0);
    setenv("SX_FLINK", "", 1);
    SX_CHECK(sx_engine_selector("") == NULL);
    if (copy)
        setenv("SX_FLINK", copy, 1);
    else
        unsetenv("SX_FLINK");
    free(copy);
}

/* A runtime folder with the default engine 1.20.3 and 2.2.1 beside it, as
 * scripts/setup-runtime.sh lays them out, and what each selector picks. */
static void test_resolve(void)
{
    char rt[] = "/tmp/sx_engine_XXXXXX";
    SX_CHECK(mkdtemp(rt) != NULL);
    sx_engine_t e;
    sx_error_t err;
    char want[SX_ERROR_MAX], dir[4096], text[SX_ENGINE_TEXT];

    /* Nothing installed: the default names its marker, another engine the
     * command that installs it. */
    SX_CHECK(sx_engine_resolve(rt, NULL, &e, &err) == -1);
    snprintf(want, sizeof want,
             "not installed: run scripts/setup-runtime.sh (no %s/installed.env)", rt);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_engine_resolve(rt, "2.2", &e, &err) == -1);
    snprintf(want, sizeof want,
             "Flink 2.2 is not installed in %s: run scripts/setup-runtime.sh --flink 2.2 "
             "(installed: none)",
             rt);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_engine_list(rt, &e, 1) == 0);

    write_marker(rt,
                 "SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\n"
                 "SX_KAFKA_VERSION=3.9.1\n");
    snprintf(dir, sizeof dir, "%s/flink-2.2", rt);
    write_marker(dir,
                 "SX_FLINK_VERSION=2.2.1\nSX_FLINK_KAFKA_CONNECTOR_VERSION=5.0.0-2.2\n"
                 "SX_KAFKA_VERSION=3.9.1\n");
    /* A folder without a marker (an install cut short) is no engine. */
    snprintf(dir, sizeof dir, "%s/flink-2.1", rt);
    SX_CHECK(sx_mkdirs(dir, NULL) == 0);

    static const struct {
        const char *selector;
        const char *flink;
        const char *folder;
    } picked[] = {{NULL, "1.20.3", "flink"},     {"", "1.20.3", "flink"},
                  {"1.20", "1.20.3", "flink"},   {"1.20.3", "1.20.3", "flink"},
                  {"2.2", "2.2.1", "flink-2.2"}, {"2.2.1", "2.2.1", "flink-2.2"}};
    for (size_t i = 0; i < sizeof picked / sizeof picked[0]; i++) {
        SX_CHECK(sx_engine_resolve(rt, picked[i].selector, &e, &err) == 0);
        SX_CHECK(strcmp(e.flink, picked[i].flink) == 0);
        snprintf(dir, sizeof dir, "%s/%s", rt, picked[i].folder);
        SX_CHECK(strcmp(e.dir, dir) == 0);
        SX_CHECK(e.is_default == (strcmp(picked[i].folder, "flink") == 0));
    }
    /* Each engine's label and versions come from its own marker: 2.2's
     * never from the top-level one. */
    SX_CHECK(sx_engine_resolve(rt, "2.2", &e, &err) == 0);
    sx_engine_label(&e, text, sizeof text);
    SX_CHECK(strcmp(text, "flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1") == 0);
    sx_engine_versions(&e, text, sizeof text);
    SX_CHECK(strcmp(text, "Flink 2.2.1 (Kafka connector 5.0.0-2.2), Kafka 3.9.1") == 0);
    sx_engine_series(&e, text, sizeof text);
    SX_CHECK(strcmp(text, "2.2") == 0);
    SX_CHECK(sx_engine_resolve(rt, "", &e, &err) == 0);
    sx_engine_label(&e, text, sizeof text);
    SX_CHECK(strcmp(text, "flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1") == 0);
    sx_engine_series(&e, text, sizeof text);
    SX_CHECK(strcmp(text, "1.20") == 0);

    /* Not installed: 2.2.0 (another patch release) and 2.1 (no marker). */
    SX_CHECK(sx_engine_resolve(rt, "2.2.0", &e, &err) == -1);
    snprintf(
        want, sizeof want,
        "Flink 2.2.0 is not installed in %s: run scripts/setup-runtime.sh --flink 2.2 "
        "(installed: 1.20.3, 2.2.1)",
        rt);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_engine_resolve(rt, "2.1", &e, &err) == -1);
    SX_CHECK(strstr(err.msg, "--flink 2.1 (installed: 1.20.3, 2.2.1)") != NULL);
    /* "2.2" does not pick a 2.20 engine, nor "1.2" the 1.20 one. */
    SX_CHECK(sx_engine_resolve(rt, "1.2", &e, &err) == -1);

    sx_engine_t all[SX_ENGINE_MAX];
    SX_CHECK(sx_engine_list(rt, all, SX_ENGINE_MAX) == 2);
    SX_CHECK(all[0].is_default && strcmp(all[0].flink, "1.20.3") == 0);
    SX_CHECK(!all[1].is_default && strcmp(all[1].flink, "2.2.1") == 0);
    SX_CHECK(sx_engine_list(rt, all, 1) == 1);

    /* A default marker without versions is not an install. */
    write_marker(rt, "SX_FLINK_VERSION=1.20.3\n");
    SX_CHECK(sx_engine_resolve(rt, NULL, &e, &err) == -1);
    snprintf(want, sizeof want,
             "not installed: %s/installed.env names no Flink or Kafka version; run "
             "scripts/setup-runtime.sh",
             rt);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_engine_list(rt, all, SX_ENGINE_MAX) == 1);
    SX_CHECK(strcmp(all[0].flink, "2.2.1") == 0);

    char command[4200];
    snprintf(command, sizeof command, "rm -rf '%s'", rt);
    SX_CHECK(system(command) == 0);
}

void sx_engine_test(bool verbose)
{
    if (verbose)
        printf(" * engine: ");
    test_selectors();
    test_resolve();
    if (verbose)
        printf("OK\n");
}
