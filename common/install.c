/* install.c: where streamex finds its own files (see install.h). The build
 * folder, the source tree and the share folder's path relative to the binary's
 * folder are compile-time definitions (CMakeLists.txt); which of them applies
 * is decided once per process from /proc/self/exe. */
#include "common/install.h"

#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SX_BUILD_DIR
#define SX_BUILD_DIR SX_SOURCE_DIR "/build"
#endif
#ifndef SX_SHARE_RELATIVE
#define SX_SHARE_RELATIVE "../share/streamex"
#endif

typedef struct {
    bool in_build_tree;
    char share_dir[PATH_MAX];
} layout_t;

static layout_t s_layout;
static pthread_once_t s_layout_once = PTHREAD_ONCE_INIT;

/* Whether `path` is `dir` or inside it, both with their links resolved. */
static bool path_under(const char *path, const char *dir)
{
    char real_dir[PATH_MAX];
    if (!realpath(dir, real_dir))
        return false;
    size_t n = strlen(real_dir);
    return strncmp(path, real_dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The layout of a binary at `exe` (links resolved): the source tree when it
 * lies in build_dir, else exe's folder joined with `relative`, resolved when
 * that folder exists. */
static void locate(const char *exe, const char *build_dir, const char *source_dir,
                   const char *relative, layout_t *out)
{
    out->in_build_tree = path_under(exe, build_dir);
    if (out->in_build_tree) {
        snprintf(out->share_dir, sizeof out->share_dir, "%s", source_dir);
        return;
    }
    const char *slash = strrchr(exe, '/');
    int dir_len = slash ? (int)(slash - exe) : 0;
    char joined[PATH_MAX];
    snprintf(joined, sizeof joined, "%.*s/%s", dir_len, exe, relative);
    if (!realpath(joined, out->share_dir))
        snprintf(out->share_dir, sizeof out->share_dir, "%s", joined);
}

static void locate_self(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { /* no /proc: only a build-tree binary can know its files */
        s_layout.in_build_tree = true;
        snprintf(s_layout.share_dir, sizeof s_layout.share_dir, "%s", SX_SOURCE_DIR);
        return;
    }
    exe[n] = '\0';
    locate(exe, SX_BUILD_DIR, SX_SOURCE_DIR, SX_SHARE_RELATIVE, &s_layout);
}

bool sx_install_in_build_tree(void)
{
    pthread_once(&s_layout_once, locate_self);
    return s_layout.in_build_tree;
}

const char *sx_install_share_dir(void)
{
    pthread_once(&s_layout_once, locate_self);
    return s_layout.share_dir;
}

/* $XDG_DATA_HOME/streamex/runtime, else HOME/.local/share/streamex/runtime. */
static char *user_runtime_dir(void)
{
    const char *data = getenv("XDG_DATA_HOME");
    if (data && data[0] == '/')
        return sx_format("%s/streamex/runtime", data);
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/tmp";
    }
    return sx_format("%s/.local/share/streamex/runtime", home);
}

char *sx_install_runtime_dir(const char *given)
{
    if (given && given[0])
        return sx_strdup(given);
    const char *env = getenv("SX_RUNTIME_DIR");
    if (env && env[0])
        return sx_strdup(env);
    if (sx_install_in_build_tree())
        return sx_strdup(SX_SOURCE_DIR "/.runtime");
    return user_runtime_dir();
}

/* The value of `name` in versions.env text: NAME=${NAME:-VALUE} or
 * NAME=VALUE on a line of its own; "" when absent. */
static void pinned_value(const char *text, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    size_t name_len = strlen(name);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, name_len) != 0 || line[name_len] != '=')
            continue;
        const char *value = line + name_len + 1;
        size_t len = strcspn(value, "\n");
        const char *fallback = memmem(value, len, ":-", 2);
        if (value[0] == '$' && fallback && value[len - 1] == '}') {
            len = (size_t)(value + len - 1 - (fallback + 2));
            value = fallback + 2;
        }
        snprintf(out, size, "%.*s", (int)len, value);
        return;
    }
}

static int versions_from_text(const char *text, const char *path,
                              sx_install_versions_t *versions, sx_error_t *err)
{
    pinned_value(text, "SX_FLINK_VERSION", versions->flink, sizeof versions->flink);
    pinned_value(text, "SX_FLINK_KAFKA_CONNECTOR_VERSION", versions->connector,
                 sizeof versions->connector);
    pinned_value(text, "SX_KAFKA_VERSION", versions->kafka, sizeof versions->kafka);
    if (!versions->flink[0] || !versions->kafka[0])
        return sx_error_set(err, "%s names no Flink or Kafka version", path);
    return 0;
}

int sx_install_pinned_versions(sx_install_versions_t *versions, sx_error_t *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/runtime/versions.env", sx_install_share_dir());
    FILE *f = fopen(path, "r");
    if (!f)
        return sx_error_set(err, "cannot read %s", path);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return versions_from_text(text, path, versions, err);
}

/* ---- self-test -------------------------------------------------------- */

void sx_install_test(bool verbose)
{
    if (verbose)
        printf(" * install: ");
    char tmp[] = "/tmp/sx-install-XXXXXX";
    SX_CHECK(mkdtemp(tmp) != NULL);
    char build[128], share[128], bin[128];
    snprintf(build, sizeof build, "%s/build", tmp);
    snprintf(bin, sizeof bin, "%s/prefix/bin", tmp);
    snprintf(share, sizeof share, "%s/prefix/share/streamex", tmp);
    char tests[160];
    snprintf(tests, sizeof tests, "%s/tests", build);
    SX_CHECK(sx_mkdirs(tests, NULL) == 0 && sx_mkdirs(bin, NULL) == 0 &&
             sx_mkdirs(share, NULL) == 0);

    /* A binary inside the build folder (or below it) reads the source tree. */
    layout_t layout;
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/streamex", build);
    locate(exe, build, "/src", "../share/streamex", &layout);
    SX_CHECK(layout.in_build_tree && strcmp(layout.share_dir, "/src") == 0);
    snprintf(exe, sizeof exe, "%s/tests/test_x", build);
    locate(exe, build, "/src", "../share/streamex", &layout);
    SX_CHECK(layout.in_build_tree);
    /* A sibling folder whose name starts with the build folder's is not in it. */
    snprintf(exe, sizeof exe, "%s-asan/streamex", build);
    locate(exe, build, "/src", "../share/streamex", &layout);
    SX_CHECK(!layout.in_build_tree);
    /* An installed binary finds share/streamex beside its bin/, resolved. */
    snprintf(exe, sizeof exe, "%s/streamex", bin);
    locate(exe, build, "/src", "../share/streamex", &layout);
    SX_CHECK(!layout.in_build_tree && strcmp(layout.share_dir, share) == 0);
    /* A build folder that is gone: installed, unresolved path kept. */
    locate(exe, "/nonexistent/build", "/src", "../lib/nothing", &layout);
    SX_CHECK(!layout.in_build_tree && strstr(layout.share_dir, "/bin/../lib/nothing"));

    /* versions.env as the repository writes it, and plain assignments. */
    sx_install_versions_t v;
    sx_error_t err;
    SX_CHECK(versions_from_text("# pins\nSX_FLINK_VERSION=${SX_FLINK_VERSION:-1.20.3}\n"
                                "SX_FLINK_KAFKA_CONNECTOR_VERSION=${SX_FLINK_KAFKA_"
                                "CONNECTOR_VERSION:-3.4.0-1.20}\n"
                                "SX_KAFKA_VERSION=${SX_KAFKA_VERSION:-3.9.1}\n",
                                "v.env", &v, &err) == 0);
    SX_CHECK(strcmp(v.flink, "1.20.3") == 0 && strcmp(v.connector, "3.4.0-1.20") == 0 &&
             strcmp(v.kafka, "3.9.1") == 0);
    SX_CHECK(versions_from_text("SX_KAFKA_VERSION=4.0.0\nSX_FLINK_VERSION=2.0.0", "v.env",
                                &v, &err) == 0);
    SX_CHECK(strcmp(v.flink, "2.0.0") == 0 && strcmp(v.kafka, "4.0.0") == 0 &&
             v.connector[0] == '\0');
    SX_CHECK(versions_from_text("SX_FLINK_VERSIONS=1\n", "v.env", &v, &err) == -1);
    SX_CHECK(strcmp(err.msg, "v.env names no Flink or Kafka version") == 0);

    /* This test program lies in its build folder: the source tree's files. */
    SX_CHECK(sx_install_in_build_tree());
    SX_CHECK(strcmp(sx_install_share_dir(), SX_SOURCE_DIR) == 0);
    SX_CHECK(sx_install_pinned_versions(&v, &err) == 0 && v.flink[0] && v.kafka[0]);

    /* The runtime folder: given, then $SX_RUNTIME_DIR, then the default. */
    const char *saved = getenv("SX_RUNTIME_DIR");
    char *saved_copy = sx_strdup_or_null(saved);
    char *dir = sx_install_runtime_dir("/given");
    SX_CHECK(dir && strcmp(dir, "/given") == 0);
    free(dir);
    setenv("SX_RUNTIME_DIR", "/from-env", 1);
    dir = sx_install_runtime_dir("");
    SX_CHECK(dir && strcmp(dir, "/from-env") == 0);
    free(dir);
    unsetenv("SX_RUNTIME_DIR");
    dir = sx_install_runtime_dir(NULL);
    SX_CHECK(dir && strcmp(dir, SX_SOURCE_DIR "/.runtime") == 0);
    free(dir);
    /* An installed binary's default: per user, under XDG_DATA_HOME or HOME. */
    const char *saved_xdg = getenv("XDG_DATA_HOME");
    char *saved_xdg_copy = sx_strdup_or_null(saved_xdg);
    setenv("XDG_DATA_HOME", "/data", 1);
    dir = user_runtime_dir();
    SX_CHECK(dir && strcmp(dir, "/data/streamex/runtime") == 0);
    free(dir);
    setenv("XDG_DATA_HOME", "relative", 1); /* the XDG spec ignores a relative one */
    dir = user_runtime_dir();
    SX_CHECK(dir && strstr(dir, "/.local/share/streamex/runtime") != NULL &&
             dir[0] == '/');
    free(dir);
    if (saved_xdg_copy)
        setenv("XDG_DATA_HOME", saved_xdg_copy, 1);
    else
        unsetenv("XDG_DATA_HOME");
    if (saved_copy)
        setenv("SX_RUNTIME_DIR", saved_copy, 1);
    free(saved_xdg_copy);
    free(saved_copy);

    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    SX_CHECK(system(cmd) == 0);
    if (verbose)
        printf("OK\n");
}
