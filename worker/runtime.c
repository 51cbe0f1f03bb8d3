/* runtime.c: starts, watches and stops one worker's Kafka + Flink pair (see
 * runtime.h). The JVMs are launched directly (`java -cp ... MainClass`) from
 * the install of scripts/setup-runtime.sh, with a generated Kafka
 * server.properties and Flink config.yaml per pair. Every JVM runs in its own
 * session with stdout/stderr in the pair's logs/ folder and a pid file in
 * pids/; its command line carries -Dsx.pair=DIR -Dsx.component=NAME so a pid
 * file is only ever trusted for the process it was written for. */
#include "worker/runtime.h"

#include "common/install.h"
#include "common/log.h"
#include "common/selftest.h"
#include "common/signals.h"
#include "worker/gateway.h"
#include "worker/kafka.h"

#include <curl/curl.h>
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef enum { KAFKA = 0, JOBMANAGER, TASKMANAGER, GATEWAY } component_t;

static const char *const s_component_names[SX_RUNTIME_COMPONENTS] = {
    "kafka", "jobmanager", "taskmanager", "gateway"};

/* How often the watchdog may bring one component back before giving up. */
#define MAX_RESTARTS 5
/* Lines of a component's log quoted in an error. */
#define LOG_TAIL_LINES 20
/* TaskManager memory besides task heap and managed memory (MiB): what Flink's
 * scripts would compute for the JVM flags, fixed here to keep the flags and
 * config.yaml consistent. */
#define TM_FRAMEWORK_HEAP_MB 128
#define TM_FRAMEWORK_OFF_HEAP_MB 128
#define TM_NETWORK_MB 64
#define FLINK_METASPACE_MB 256
#define JM_OFF_HEAP_MB 128

struct _sx_runtime_t {
    sx_runtime_config_t config; /* string members point into this object */
    char *runtime_dir;
    char *pair_dir;
    char *bootstrap;
    char *gateway_url;
    char *rest_url;
    bool external;
    bool started; /* this object launched the JVMs (stop on destroy) */
    pid_t pids[SX_RUNTIME_COMPONENTS];
    int restarts[SX_RUNTIME_COMPONENTS];
    sx_kafka_t *kafka; /* health-check client, made on first use */
};

/* ---- ports, config --------------------------------------------------- */

int sx_runtime_port(int index, sx_runtime_port_t which)
{
    return SX_RUNTIME_PORT_BASE + SX_RUNTIME_PORT_STRIDE * index + (int)which;
}

const char *sx_runtime_port_name(sx_runtime_port_t which)
{
    static const char *const names[SX_PORT_COUNT] = {"Kafka broker",
                                                     "Kafka controller",
                                                     "Flink REST",
                                                     "SQL Gateway",
                                                     "JobManager RPC",
                                                     "Flink blob server",
                                                     "TaskManager RPC",
                                                     "TaskManager data",
                                                     "JobManager metric queries",
                                                     "TaskManager metric queries"};
    return which < SX_PORT_COUNT ? names[which] : "unknown";
}

void sx_runtime_config_defaults(sx_runtime_config_t *config, int index)
{
    *config = (sx_runtime_config_t){
        .index = index,
        .slots = 4,
        .kafka_heap_mb = 512,
        .jobmanager_heap_mb = 512,
        .taskmanager_heap_mb = 512,
        .taskmanager_managed_mb = 256,
        .gateway_heap_mb = 512,
        .start_timeout_s = 180,
        .stop_grace_s = 20,
    };
}

static int check_range(const char *what, int value, int low, int high, sx_error_t *err)
{
    if (value < low || value > high)
        return sx_error_set(err, "%s must be between %d and %d, got %d", what, low, high,
                            value);
    return 0;
}

static bool is_http_url(const char *url)
{
    return url && (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) &&
           strlen(url) > 8;
}

int sx_runtime_config_validate(const sx_runtime_config_t *c, sx_error_t *err)
{
    if (check_range("the worker index", c->index, 0, SX_RUNTIME_MAX_INDEX, err) ||
        check_range("TaskManager slots", c->slots, 1, 256, err) ||
        check_range("the Kafka heap (MiB)", c->kafka_heap_mb, 128, 65536, err) ||
        check_range("the JobManager heap (MiB)", c->jobmanager_heap_mb, 128, 65536,
                    err) ||
        check_range("the TaskManager heap (MiB)", c->taskmanager_heap_mb, 128, 65536,
                    err) ||
        check_range("the TaskManager managed memory (MiB)", c->taskmanager_managed_mb, 0,
                    65536, err) ||
        check_range("the SQL Gateway heap (MiB)", c->gateway_heap_mb, 128, 65536, err) ||
        check_range("the start timeout (s)", c->start_timeout_s, 1, 3600, err) ||
        check_range("the stop grace period (s)", c->stop_grace_s, 0, 600, err))
        return -1;
    int given = (c->kafka_bootstrap != NULL) + (c->flink_gateway != NULL) +
                (c->flink_rest != NULL);
    if (given != 0 && given != 3)
        return sx_error_set(err, "an external pair needs all of --kafka-bootstrap, "
                                 "--flink-gateway and --flink-rest");
    if (given == 3) {
        if (c->kafka_bootstrap[0] == '\0' || strchr(c->kafka_bootstrap, ':') == NULL)
            return sx_error_set(err, "--kafka-bootstrap '%s' is not host:port[,...]",
                                c->kafka_bootstrap);
        if (!is_http_url(c->flink_gateway))
            return sx_error_set(err, "--flink-gateway '%s' is not an http(s):// URL",
                                c->flink_gateway);
        if (!is_http_url(c->flink_rest))
            return sx_error_set(err, "--flink-rest '%s' is not an http(s):// URL",
                                c->flink_rest);
    }
    return 0;
}

static int parse_int(const char *name, const char *value, int *out, sx_error_t *err)
{
    char *end = NULL;
    errno = 0;
    long n = value ? strtol(value, &end, 10) : 0;
    if (!value || end == value || *end != '\0' || errno || n < INT_MIN || n > INT_MAX)
        return sx_error_set(err, "%s needs a whole number, got '%s'", name,
                            value ? value : "nothing");
    *out = (int)n;
    return 0;
}

int sx_runtime_config_option(sx_runtime_config_t *config, const char *name,
                             const char *value, sx_error_t *err)
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

/* ---- small helpers ---------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static char *resolve_runtime_dir(const char *given)
{
    return sx_install_runtime_dir(given);
}

static int make_dirs(const char *path, sx_error_t *err)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return sx_error_set(err, "path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) == -1 && errno != EEXIST)
            return sx_error_set(err, "cannot create %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) == -1 && errno != EEXIST)
        return sx_error_set(err, "cannot create %s: %s", buf, strerror(errno));
    return 0;
}

static int write_text(const char *path, const char *text, sx_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sx_error_set(err, "cannot write %s: %s", path, strerror(errno));
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : sx_error_set(err, "cannot write %s: %s", path, strerror(errno));
}

/* Reads a whole small file; NULL when it cannot. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    char chunk[4096];
    size_t n;
    while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(f);
    if (mem)
        fclose(mem);
    return text;
}

/* Appends the last lines of `log_path` to err's message: as many of the last
 * LOG_TAIL_LINES as fit, so the message always ends with the newest line. */
static void append_log_tail(sx_error_t *err, const char *log_path)
{
    if (!err)
        return;
    size_t used = strlen(err->msg);
    int n = snprintf(err->msg + used, sizeof err->msg - used, " (log %s", log_path);
    if (n < 0 || (size_t)n >= sizeof err->msg - used)
        return;
    used += (size_t)n;
    char tail[8192];
    size_t len = 0;
    FILE *f = fopen(log_path, "r");
    if (f) {
        if (fseek(f, 0, SEEK_END) == 0) {
            long size = ftell(f);
            long from = size > (long)sizeof tail - 1 ? size - (long)sizeof tail + 1 : 0;
            fseek(f, from, SEEK_SET);
            len = fread(tail, 1, sizeof tail - 1, f);
        }
        fclose(f);
    }
    while (len > 0 && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
        len--;
    tail[len] = '\0';
    size_t room = sizeof err->msg - used - 16;
    size_t start = len, lines = 0;
    while (start > 0 && lines < LOG_TAIL_LINES) {
        size_t prev = start - 1;
        while (prev > 0 && tail[prev - 1] != '\n')
            prev--;
        if (len - prev > room)
            break;
        start = prev;
        lines++;
    }
    if (lines == 0)
        snprintf(err->msg + used, sizeof err->msg - used, ": empty)");
    else
        snprintf(err->msg + used, sizeof err->msg - used, ", last %zu lines:\n%s)", lines,
                 tail + start);
}

/* ---- argument vectors ------------------------------------------------- */

typedef struct {
    char **items; /* NULL-terminated */
    size_t count;
    size_t cap;
    bool failed; /* an allocation failed: the vector is unusable */
} strv_t;

static void strv_add_owned(strv_t *v, char *item)
{
    if (!item || v->failed) {
        v->failed = true;
        free(item);
        return;
    }
    if (v->count + 2 > v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 32;
        char **items = realloc(v->items, cap * sizeof *items);
        if (!items) {
            v->failed = true;
            free(item);
            return;
        }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->count++] = item;
    v->items[v->count] = NULL;
}

static void strv_add(strv_t *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void strv_add(strv_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *item = NULL;
    if (vasprintf(&item, fmt, ap) < 0)
        item = NULL;
    va_end(ap);
    strv_add_owned(v, item);
}

static void strv_free(strv_t *v)
{
    for (size_t i = 0; i < v->count; i++)
        free(v->items[i]);
    free(v->items);
    *v = (strv_t){0};
}

/* Adds one argument per line of `path` (the Java 17 options of Flink). */
static int strv_add_lines(strv_t *v, const char *path, sx_error_t *err)
{
    char *text = read_text(path);
    if (!text)
        return sx_error_set(err, "cannot read %s: run scripts/setup-runtime.sh", path);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (line[0])
            strv_add(v, "%s", line);
    free(text);
    return 0;
}

static const char *java_binary(char *buf, size_t size)
{
    const char *home = getenv("JAVA_HOME");
    if (home && home[0]) {
        snprintf(buf, size, "%s/bin/java", home);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return "java";
}

/* ---- install ---------------------------------------------------------- */

typedef struct {
    char flink[32];
    char connector[32];
    char kafka[32];
} versions_t;

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

static int read_install(const char *runtime_dir, versions_t *v, sx_error_t *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/installed.env", runtime_dir);
    char *text = read_text(path);
    if (!text)
        return sx_error_set(err, "not installed: run scripts/setup-runtime.sh (no %s)",
                            path);
    read_env_value(text, "SX_FLINK_VERSION", v->flink, sizeof v->flink);
    read_env_value(text, "SX_FLINK_KAFKA_CONNECTOR_VERSION", v->connector,
                   sizeof v->connector);
    read_env_value(text, "SX_KAFKA_VERSION", v->kafka, sizeof v->kafka);
    free(text);
    if (!v->flink[0] || !v->kafka[0])
        return sx_error_set(err,
                            "not installed: %s names no Flink or Kafka version; run "
                            "scripts/setup-runtime.sh",
                            path);
    return 0;
}

/* "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1": one wording for
 * check, HELLO and the result cache's keys. */
typedef struct {
    char text[160];
} versions_text_t;

static versions_text_t format_versions(const versions_t *v)
{
    versions_text_t t;
    snprintf(t.text, sizeof t.text, "Flink %s (Kafka connector %s), Kafka %s", v->flink,
             v->connector[0] ? v->connector : "unknown", v->kafka);
    return t;
}

int sx_runtime_describe_install(const char *runtime_dir, char *out, size_t out_size)
{
    char *dir = resolve_runtime_dir(runtime_dir);
    if (!dir) {
        snprintf(out, out_size, "out of memory");
        return -1;
    }
    versions_t v;
    sx_error_t err;
    int rc = read_install(dir, &v, &err);
    if (rc == 0)
        snprintf(out, out_size, "%s in %s", format_versions(&v).text, dir);
    else
        snprintf(out, out_size, "%s", err.msg);
    free(dir);
    return rc;
}

int sx_runtime_versions(const sx_runtime_t *self, char *out, size_t out_size,
                        sx_error_t *err)
{
    if (self->external)
        return sx_error_set(err, "an existing pair: its versions are not known here");
    versions_t v;
    if (read_install(self->runtime_dir, &v, err) != 0)
        return -1;
    snprintf(out, out_size, "%s", format_versions(&v).text);
    return 0;
}

/* ---- paths of one pair ------------------------------------------------ */

static void pair_path(const sx_runtime_t *self, char *out, size_t size, const char *fmt,
                      const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, fmt, name);
    snprintf(out, size, "%s/%s", self->pair_dir, rel);
}

static void log_path(const sx_runtime_t *self, component_t c, char *out, size_t size)
{
    pair_path(self, out, size, "logs/%s.log", s_component_names[c]);
}

static void pid_path(const sx_runtime_t *self, component_t c, char *out, size_t size)
{
    pair_path(self, out, size, "pids/%s.pid", s_component_names[c]);
}

static void stop_marker_path(const sx_runtime_t *self, char *out, size_t size)
{
    pair_path(self, out, size, "pids/%s", "stop-requested");
}

/* ---- life cycle ------------------------------------------------------- */

sx_runtime_t *sx_runtime_new(const sx_runtime_config_t *config, sx_error_t *err)
{
    if (sx_runtime_config_validate(config, err) != 0)
        return NULL;
    sx_runtime_t *self = calloc(1, sizeof *self);
    if (!self) {
        sx_error_set(err, "out of memory");
        return NULL;
    }
    self->config = *config;
    self->external = config->kafka_bootstrap != NULL;
    int index = config->index;
    if (self->external) {
        self->bootstrap = strdup(config->kafka_bootstrap);
        self->gateway_url = strdup(config->flink_gateway);
        self->rest_url = strdup(config->flink_rest);
        self->runtime_dir = resolve_runtime_dir(config->runtime_dir);
        self->pair_dir = strdup("");
    } else {
        self->runtime_dir = resolve_runtime_dir(config->runtime_dir);
        self->pair_dir = self->runtime_dir
                             ? zsys_sprintf("%s/pairs/%d", self->runtime_dir, index)
                             : NULL;
        self->bootstrap =
            zsys_sprintf("127.0.0.1:%d", sx_runtime_port(index, SX_PORT_KAFKA));
        self->gateway_url =
            zsys_sprintf("http://127.0.0.1:%d", sx_runtime_port(index, SX_PORT_GATEWAY));
        self->rest_url = zsys_sprintf("http://127.0.0.1:%d",
                                      sx_runtime_port(index, SX_PORT_FLINK_REST));
    }
    if (!self->bootstrap || !self->gateway_url || !self->rest_url || !self->runtime_dir ||
        !self->pair_dir) {
        sx_runtime_destroy(&self);
        sx_error_set(err, "out of memory");
        return NULL;
    }
    self->config.runtime_dir = self->runtime_dir;
    self->config.kafka_bootstrap = self->external ? self->bootstrap : NULL;
    self->config.flink_gateway = self->external ? self->gateway_url : NULL;
    self->config.flink_rest = self->external ? self->rest_url : NULL;
    return self;
}

void sx_runtime_destroy(sx_runtime_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_runtime_t *self = *self_p;
    if (self->started && !self->config.detached) {
        sx_error_t err;
        if (sx_runtime_stop(self, &err) != 0)
            sx_warn("pair %d: %s", self->config.index, err.msg);
    }
    sx_kafka_destroy(&self->kafka);
    free(self->runtime_dir);
    free(self->pair_dir);
    free(self->bootstrap);
    free(self->gateway_url);
    free(self->rest_url);
    free(self);
    *self_p = NULL;
}

const char *sx_runtime_bootstrap(const sx_runtime_t *self)
{
    return self->bootstrap;
}

const char *sx_runtime_gateway_url(const sx_runtime_t *self)
{
    return self->gateway_url;
}

const char *sx_runtime_rest_url(const sx_runtime_t *self)
{
    return self->rest_url;
}

bool sx_runtime_owned(const sx_runtime_t *self)
{
    return !self->external && self->started;
}

const char *sx_runtime_pair_dir(const sx_runtime_t *self)
{
    return self->external ? NULL : self->pair_dir;
}

/* ---- generated configuration ----------------------------------------- */

static char *kafka_properties(const sx_runtime_t *self)
{
    int i = self->config.index;
    int broker = sx_runtime_port(i, SX_PORT_KAFKA);
    int controller = sx_runtime_port(i, SX_PORT_KAFKA_CONTROLLER);
    return zsys_sprintf(
        "# Generated by streamex for pair %d; rewritten on every start.\n"
        "process.roles=broker,controller\n"
        "node.id=1\n"
        "controller.quorum.voters=1@127.0.0.1:%d\n"
        "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d\n"
        "advertised.listeners=PLAINTEXT://127.0.0.1:%d\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        "log.dirs=%s/kafka-data\n"
        "num.partitions=1\n"
        "offsets.topic.replication.factor=1\n"
        "offsets.topic.num.partitions=1\n"
        "transaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\n"
        "transaction.state.log.num.partitions=1\n"
        "group.initial.rebalance.delay.ms=0\n"
        /* Topics are created by the worker only: a client asking for a
         * deleted one must not bring it back. */
        "auto.create.topics.enable=false\n",
        i, controller, broker, controller, broker, self->pair_dir);
}

static char *flink_config(const sx_runtime_t *self)
{
    const sx_runtime_config_t *c = &self->config;
    int i = c->index;
    return zsys_sprintf(
        "# Generated by streamex for pair %d; rewritten on every start.\n"
        "jobmanager.bind-host: 127.0.0.1\n"
        "jobmanager.rpc.address: 127.0.0.1\n"
        "jobmanager.rpc.port: %d\n"
        "jobmanager.memory.heap.size: %dm\n"
        "jobmanager.memory.off-heap.size: %dm\n"
        "jobmanager.memory.jvm-metaspace.size: %dm\n"
        "jobmanager.memory.jvm-overhead.min: 128m\n"
        "jobmanager.memory.jvm-overhead.max: 128m\n"
        "taskmanager.bind-host: 127.0.0.1\n"
        "taskmanager.host: 127.0.0.1\n"
        "taskmanager.numberOfTaskSlots: %d\n"
        "taskmanager.cpu.cores: %d\n"
        "taskmanager.rpc.port: %d\n"
        "taskmanager.data.port: %d\n"
        "taskmanager.memory.framework.heap.size: %dm\n"
        "taskmanager.memory.task.heap.size: %dm\n"
        "taskmanager.memory.managed.size: %dm\n"
        "taskmanager.memory.network.min: %dm\n"
        "taskmanager.memory.network.max: %dm\n"
        "taskmanager.memory.framework.off-heap.size: %dm\n"
        "taskmanager.memory.task.off-heap.size: 0m\n"
        "taskmanager.memory.jvm-metaspace.size: %dm\n"
        "taskmanager.memory.jvm-overhead.min: 192m\n"
        "taskmanager.memory.jvm-overhead.max: 192m\n"
        "blob.server.port: %d\n"
        "parallelism.default: 1\n"
        "execution.runtime-mode: streaming\n"
        "rest.address: 127.0.0.1\n"
        "rest.bind-address: 127.0.0.1\n"
        "rest.port: %d\n"
        "sql-gateway.endpoint.rest.address: 127.0.0.1\n"
        "sql-gateway.endpoint.rest.bind-address: 127.0.0.1\n"
        "sql-gateway.endpoint.rest.port: %d\n"
        "io.tmp.dirs: %s/flink-tmp\n"
        "web.tmpdir: %s/flink-tmp\n"
        "blob.storage.directory: %s/flink-tmp\n",
        i, sx_runtime_port(i, SX_PORT_JOBMANAGER_RPC), c->jobmanager_heap_mb,
        JM_OFF_HEAP_MB, FLINK_METASPACE_MB, c->slots, c->slots,
        sx_runtime_port(i, SX_PORT_TASKMANAGER_RPC),
        sx_runtime_port(i, SX_PORT_TASKMANAGER_DATA), TM_FRAMEWORK_HEAP_MB,
        c->taskmanager_heap_mb, c->taskmanager_managed_mb, TM_NETWORK_MB, TM_NETWORK_MB,
        TM_FRAMEWORK_OFF_HEAP_MB, FLINK_METASPACE_MB, sx_runtime_port(i, SX_PORT_BLOB),
        sx_runtime_port(i, SX_PORT_FLINK_REST), sx_runtime_port(i, SX_PORT_GATEWAY),
        self->pair_dir, self->pair_dir, self->pair_dir);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    return ftw->level == 0 ? 0 : remove(path);
}

/* Empties the pair's temp folder: left-overs of JVMs that no longer run. */
static int clear_flink_tmp(const sx_runtime_t *self, sx_error_t *err)
{
    char path[PATH_MAX];
    pair_path(self, path, sizeof path, "%s", "flink-tmp");
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == -1 && errno != ENOENT)
        return sx_error_set(err, "cannot empty %s: %s", path, strerror(errno));
    return 0;
}

static int write_pair_config(const sx_runtime_t *self, sx_error_t *err)
{
    static const char *const dirs[] = {"conf", "kafka-data", "flink-tmp", "logs", "pids"};
    char path[PATH_MAX];
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        pair_path(self, path, sizeof path, "%s", dirs[d]);
        if (make_dirs(path, err) != 0)
            return -1;
    }
    char *kafka = kafka_properties(self);
    char *flink = flink_config(self);
    int rc = -1;
    if (!kafka || !flink)
        sx_error_set(err, "out of memory");
    else {
        pair_path(self, path, sizeof path, "conf/%s", "server.properties");
        if (write_text(path, kafka, err) == 0) {
            pair_path(self, path, sizeof path, "conf/%s", "config.yaml");
            rc = write_text(path, flink, err);
        }
    }
    free(kafka);
    free(flink);
    return rc;
}

/* ---- JVM command lines ------------------------------------------------ */

/* java, the marker properties and the heap flags every JVM of a pair gets. */
static void add_jvm_head(const sx_runtime_t *self, strv_t *v, const char *name,
                         int heap_mb)
{
    char java[PATH_MAX];
    strv_add(v, "%s", java_binary(java, sizeof java));
    strv_add(v, "-Dsx.pair=%s", self->pair_dir);
    strv_add(v, "-Dsx.component=%s", name);
    strv_add(v, "-Xmx%dm", heap_mb);
    strv_add(v, "-Xms%dm", heap_mb);
    strv_add(v, "-XX:+UseG1GC");
    strv_add(v, "-Djava.awt.headless=true");
}

/* The broker (main_class NULL) or one of Kafka's tools. */
static void kafka_command(const sx_runtime_t *self, strv_t *v, const char *main_class)
{
    add_jvm_head(self, v, main_class == NULL ? "kafka" : "kafka-format",
                 self->config.kafka_heap_mb);
    strv_add(v, "-XX:MaxGCPauseMillis=20");
    strv_add(v, "-Dlog4j.configuration=file:%s/conf/log4j-kafka.properties",
             self->runtime_dir);
    strv_add(v, "-Dkafka.logs.dir=%s/logs", self->pair_dir);
    strv_add(v, "-cp");
    strv_add(v, "%s/kafka/libs/*", self->runtime_dir);
    strv_add(v, "%s", main_class ? main_class : "kafka.Kafka");
    if (!main_class)
        strv_add(v, "%s/conf/server.properties", self->pair_dir);
}

static int flink_command(const sx_runtime_t *self, component_t c, strv_t *v,
                         sx_error_t *err)
{
    const sx_runtime_config_t *cfg = &self->config;
    int heap = c == JOBMANAGER    ? cfg->jobmanager_heap_mb
               : c == TASKMANAGER ? TM_FRAMEWORK_HEAP_MB + cfg->taskmanager_heap_mb
                                  : cfg->gateway_heap_mb;
    add_jvm_head(self, v, s_component_names[c], heap);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/flink/java-opts.txt", self->runtime_dir);
    if (strv_add_lines(v, path, err) != 0)
        return -1;
    strv_add(v, "-XX:MaxMetaspaceSize=%dm", FLINK_METASPACE_MB);
    if (c == JOBMANAGER)
        strv_add(v, "-XX:MaxDirectMemorySize=%dm", JM_OFF_HEAP_MB);
    if (c == TASKMANAGER)
        strv_add(v, "-XX:MaxDirectMemorySize=%dm",
                 TM_FRAMEWORK_OFF_HEAP_MB + TM_NETWORK_MB);
    strv_add(v, "-Dlog4j.configurationFile=file:%s/conf/log4j-flink.properties",
             self->runtime_dir);
    /* Flink unpacks its planner and RPC jars (60 MiB) into java.io.tmpdir and
     * leaves them behind when killed: keep them in the pair, emptied on start. */
    strv_add(v, "-Djava.io.tmpdir=%s/flink-tmp", self->pair_dir);
    strv_add(v, "-cp");
    strv_add(v, "%s/conf:%s/flink/lib/*", self->pair_dir, self->runtime_dir);
    int metrics_port =
        sx_runtime_port(cfg->index, c == JOBMANAGER ? SX_PORT_JOBMANAGER_METRICS
                                                    : SX_PORT_TASKMANAGER_METRICS);
    if (c == GATEWAY) {
        /* The gateway reads config.yaml through FLINK_CONF_DIR (see spawn). */
        strv_add(v, "org.apache.flink.table.gateway.SqlGateway");
        return 0;
    }
    strv_add(
        v, "%s",
        c == JOBMANAGER
            ? "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
            : "org.apache.flink.runtime.taskexecutor.TaskManagerRunner");
    strv_add(v, "--configDir");
    strv_add(v, "%s/conf", self->pair_dir);
    /* One config.yaml for both: each process gets its own metric query port. */
    strv_add(v, "-D");
    strv_add(v, "metrics.internal.query-service.port=%d", metrics_port);
    return 0;
}

/* The environment of a JVM: ours plus FLINK_CONF_DIR, built before fork. */
static void build_env(const sx_runtime_t *self, strv_t *env)
{
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "FLINK_CONF_DIR=", 15) != 0)
            strv_add(env, "%s", *e);
    strv_add(env, "FLINK_CONF_DIR=%s/conf", self->pair_dir);
}

/* ---- processes -------------------------------------------------------- */

/* Starts argv in its own session with stdout/stderr appended to log, stdin
 * from /dev/null. Unless detached, the child gets SIGTERM when we die. */
static pid_t spawn(const sx_runtime_t *self, char *const *argv, const char *log,
                   bool truncate, sx_error_t *err)
{
    strv_t env = {0};
    build_env(self, &env);
    if (env.failed) {
        strv_free(&env);
        sx_error_set(err, "out of memory");
        return -1;
    }
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND);
    int out = open(log, flags, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = {-1, -1};
    if (out == -1 || in == -1 || pipe2(report, O_CLOEXEC) == -1) {
        sx_error_set(err, "cannot open %s: %s", log, strerror(errno));
        if (out != -1)
            close(out);
        if (in != -1)
            close(in);
        strv_free(&env);
        return -1;
    }
    pid_t parent = getpid();
    bool tie = !self->config.detached;
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (tie && (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != parent))
            _exit(127);
        /* A blocked or ignored SIGTERM would survive exec and make the JVM
         * deaf to `runtime down`; our callers may have set either. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        static const int reset[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
        for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
            signal(reset[i], SIG_DFL);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        if (chdir(self->pair_dir) == 0)
            execvpe(argv[0], argv, env.items);
        int code = errno;
        if (write(report[1], &code, sizeof code) < 0)
            code = 0;
        _exit(127);
    }
    int fork_errno = errno;
    close(report[1]);
    close(out);
    close(in);
    strv_free(&env);
    if (pid == -1) {
        close(report[0]);
        sx_error_set(err, "cannot fork: %s", strerror(fork_errno));
        return -1;
    }
    /* The pipe closes on exec; a number on it means exec failed. */
    int code = 0;
    ssize_t n = read(report[0], &code, sizeof code);
    close(report[0]);
    if (n == (ssize_t)sizeof code) {
        waitpid(pid, NULL, 0);
        sx_error_set(err, "cannot run %s: %s", argv[0], strerror(code));
        return -1;
    }
    return pid;
}

/* True while `pid` is a live process (a zombie counts as dead; our own dead
 * children are reaped here). */
static bool process_alive(pid_t pid)
{
    if (pid <= 0)
        return false;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
        return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *stat = read_text(path);
    if (!stat)
        return false;
    const char *end = strrchr(stat, ')');
    bool alive = end && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
    free(stat);
    return alive;
}

/* The kernel's start time of `pid` (clock ticks since boot), 0 when unknown. */
static unsigned long long process_start_time(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *stat = read_text(path);
    const char *p = stat ? strrchr(stat, ')') : NULL;
    /* Field 22, counted from field 3 (the state) right after the ") ". */
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    unsigned long long started = p ? strtoull(p + 1, NULL, 10) : 0;
    free(stat);
    return started;
}

/* True when `pid` runs with this pair's marker for component `name`. */
static bool process_is(const sx_runtime_t *self, pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char *pair = zsys_sprintf("-Dsx.pair=%s", self->pair_dir);
    char *comp = zsys_sprintf("-Dsx.component=%s", name);
    bool pair_seen = false, comp_seen = false;
    char *arg = NULL;
    size_t cap = 0;
    while (pair && comp && getdelim(&arg, &cap, '\0', f) > 0) {
        pair_seen = pair_seen || strcmp(arg, pair) == 0;
        comp_seen = comp_seen || strcmp(arg, comp) == 0;
    }
    free(arg);
    free(pair);
    free(comp);
    fclose(f);
    return pair_seen && comp_seen;
}

/* The live process of component c: ours, or the one its pid file names
 * (either checked against its command line, in case the pid was reused). */
static pid_t find_component(const sx_runtime_t *self, component_t c)
{
    if (self->pids[c] > 0 && process_alive(self->pids[c]) &&
        process_is(self, self->pids[c], s_component_names[c]))
        return self->pids[c];
    char path[PATH_MAX];
    pid_path(self, c, path, sizeof path);
    char *text = read_text(path);
    long pid = text ? strtol(text, NULL, 10) : 0;
    free(text);
    if (pid > 0 && process_alive((pid_t)pid) &&
        process_is(self, (pid_t)pid, s_component_names[c]))
        return (pid_t)pid;
    return 0;
}

static int launch(sx_runtime_t *self, component_t c, bool fresh_log, sx_error_t *err)
{
    strv_t argv = {0};
    int rc = 0;
    if (c == KAFKA)
        kafka_command(self, &argv, NULL);
    else
        rc = flink_command(self, c, &argv, err);
    if (rc == 0 && argv.failed)
        rc = sx_error_set(err, "out of memory");
    char log[PATH_MAX], pidfile[PATH_MAX];
    log_path(self, c, log, sizeof log);
    pid_path(self, c, pidfile, sizeof pidfile);
    pid_t pid = rc == 0 ? spawn(self, argv.items, log, fresh_log, err) : -1;
    strv_free(&argv);
    if (pid <= 0) {
        sx_error_prefix(err, "pair %d: starting %s", self->config.index,
                        s_component_names[c]);
        return -1;
    }
    self->pids[c] = pid;
    self->started = true;
    char text[32];
    snprintf(text, sizeof text, "%d\n", (int)pid);
    sx_debug("pair %d: %s started, pid %d", self->config.index, s_component_names[c],
             (int)pid);
    return write_text(pidfile, text, err);
}

/* ---- health checks ---------------------------------------------------- */

static size_t collect_body(char *data, size_t size, size_t count, void *user)
{
    FILE *mem = user;
    return fwrite(data, size, count, mem);
}

/* GETs url; on HTTP 200 returns the body (caller frees), else NULL. */
static char *http_get(const char *url)
{
    CURL *curl = curl_easy_init();
    if (!curl)
        return NULL;
    char *body = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&body, &size);
    long code = 0;
    if (mem) {
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, mem);
        if (curl_easy_perform(curl) == CURLE_OK)
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        fclose(mem);
    }
    curl_easy_cleanup(curl);
    if (code != 200) {
        free(body);
        return NULL;
    }
    return body;
}

/* Flink REST /overview as JSON (caller decrefs); NULL when it does not answer. */
static json_t *flink_overview(const sx_runtime_t *self)
{
    char url[512];
    snprintf(url, sizeof url, "%s/overview", self->rest_url);
    char *body = http_get(url);
    json_t *root = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    return root;
}

/* Number of TaskManagers Flink REST /overview reports; -1 when it does not answer. */
static int registered_taskmanagers(const sx_runtime_t *self)
{
    json_t *root = flink_overview(self);
    json_t *count = json_object_get(root, "taskmanagers");
    int n = json_is_integer(count) ? (int)json_integer_value(count) : -1;
    json_decref(root);
    return n;
}

void sx_runtime_describe(const sx_runtime_t *self, char *out, size_t out_size)
{
    if (self->external) {
        json_t *root = flink_overview(self);
        const char *flink = json_string_value(json_object_get(root, "flink-version"));
        snprintf(out, out_size, "external: Flink %s, Kafka at %s",
                 flink ? flink : "unknown", self->bootstrap);
        json_decref(root);
        return;
    }
    sx_error_t err;
    if (sx_runtime_versions(self, out, out_size, &err) != 0)
        snprintf(out, out_size, "unknown (%s)", err.msg);
}

static bool component_healthy(sx_runtime_t *self, component_t c)
{
    switch (c) {
    case KAFKA:
        if (!self->kafka)
            self->kafka = sx_kafka_new(self->bootstrap, 2000, NULL);
        return self->kafka && sx_kafka_check(self->kafka, NULL) == 0;
    case JOBMANAGER:
        return registered_taskmanagers(self) >= 0;
    case TASKMANAGER:
        /* A local pair has one TaskManager: two registered means the
         * JobManager still counts a killed one (until its heartbeat times
         * out) and may ask it for slots, which stalls the next job for
         * minutes. */
        return self->external ? registered_taskmanagers(self) >= 1
                              : registered_taskmanagers(self) == 1;
    case GATEWAY: {
        char url[512];
        snprintf(url, sizeof url, "%s/v1/info", self->gateway_url);
        char *body = http_get(url);
        free(body);
        return body != NULL;
    }
    }
    return false;
}

static const char *component_endpoint(const sx_runtime_t *self, component_t c)
{
    return c == KAFKA     ? self->bootstrap
           : c == GATEWAY ? self->gateway_url
                          : self->rest_url;
}

/* Waits until c answers its health check, its process dies or the deadline. */
static int wait_healthy(sx_runtime_t *self, component_t c, double deadline,
                        sx_error_t *err)
{
    const char *name = s_component_names[c];
    for (;;) {
        if (component_healthy(self, c))
            return 0;
        if (!self->external && !process_alive(self->pids[c])) {
            self->pids[c] = 0;
            sx_error_set(err, "pair %d: %s exited before it was ready",
                         self->config.index, name);
            break;
        }
        if (sx_signals_caught()) {
            sx_error_set(err, "pair %d: %s: interrupted by signal %d", self->config.index,
                         name, sx_signals_caught());
            break;
        }
        if (now_s() > deadline) {
            sx_error_set(err, "%s%s at %s not ready after %d s",
                         self->external ? "external " : "", name,
                         component_endpoint(self, c), self->config.start_timeout_s);
            break;
        }
        sleep_ms(250);
    }
    if (!self->external) {
        char log[PATH_MAX];
        log_path(self, c, log, sizeof log);
        append_log_tail(err, log);
    }
    return -1;
}

/* ---- start ------------------------------------------------------------ */

static int check_ports_free(const sx_runtime_t *self, sx_error_t *err)
{
    for (int p = 0; p < SX_PORT_COUNT; p++) {
        int port = sx_runtime_port(self->config.index, (sx_runtime_port_t)p);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd == -1)
            return sx_error_set(err, "cannot create a socket: %s", strerror(errno));
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in addr = {.sin_family = AF_INET,
                                   .sin_port = htons((uint16_t)port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
        int code = errno;
        close(fd);
        if (rc == -1)
            return sx_error_set(err,
                                "pair %d: port %d (%s) is taken: %s; another program or "
                                "pair uses it (streamex runtime status --index %d)",
                                self->config.index, port,
                                sx_runtime_port_name((sx_runtime_port_t)p),
                                strerror(code), self->config.index);
    }
    return 0;
}

/* 16 random bytes, base64url without padding. */
static int random_cluster_id(char out[23], sx_error_t *err)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char bytes[18] = {0};
    FILE *f = fopen("/dev/urandom", "r");
    bool ok = f && fread(bytes, 1, 16, f) == 16;
    if (f)
        fclose(f);
    if (!ok)
        return sx_error_set(err, "cannot read /dev/urandom");
    for (int i = 0, o = 0; i < 18; i += 3) {
        unsigned v =
            (unsigned)bytes[i] << 16 | (unsigned)bytes[i + 1] << 8 | bytes[i + 2];
        for (int k = 3; k >= 0 && o < 22; k--)
            out[o++] = alphabet[(v >> (6 * k)) & 63];
    }
    out[22] = '\0';
    return 0;
}

/* 16 random bytes, base64url without padding: the form Kafka's cluster IDs
 * take. Never starting with '-', like Kafka's own Uuid.randomUuid: the
 * storage tool's argument parser would read such an ID as an option. */
static int new_cluster_id(char out[23], sx_error_t *err)
{
    do {
        if (random_cluster_id(out, err) != 0)
            return -1;
    } while (out[0] == '-');
    return 0;
}

/* Kafka in KRaft mode needs its storage formatted once with a cluster ID. */
static int format_kafka_once(sx_runtime_t *self, sx_error_t *err)
{
    char meta[PATH_MAX], log[PATH_MAX];
    pair_path(self, meta, sizeof meta, "kafka-data/%s", "meta.properties");
    if (access(meta, F_OK) == 0)
        return 0;
    char id[23];
    if (new_cluster_id(id, err) != 0)
        return -1;
    strv_t argv = {0};
    kafka_command(self, &argv, "kafka.tools.StorageTool");
    strv_add(&argv, "format");
    strv_add(&argv, "-t");
    strv_add(&argv, "%s", id);
    strv_add(&argv, "-c");
    strv_add(&argv, "%s/conf/server.properties", self->pair_dir);
    pair_path(self, log, sizeof log, "logs/%s", "kafka-format.log");
    pid_t pid = argv.failed ? -1 : spawn(self, argv.items, log, true, err);
    strv_free(&argv);
    if (pid <= 0)
        return -1;
    int status = -1;
    double deadline = now_s() + self->config.start_timeout_s;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            status = -1;
            break;
        }
        sleep_ms(100);
    }
    if (status != 0) {
        sx_error_set(err, "pair %d: formatting Kafka's storage failed",
                     self->config.index);
        append_log_tail(err, log);
        return -1;
    }
    sx_info("pair %d: formatted Kafka storage, cluster ID %s", self->config.index, id);
    return 0;
}

static int start_external(sx_runtime_t *self, sx_error_t *err)
{
    double deadline = now_s() + self->config.start_timeout_s;
    static const component_t checked[] = {KAFKA, JOBMANAGER, GATEWAY};
    for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++)
        if (wait_healthy(self, checked[i], deadline, err) != 0)
            return -1;
    return 0;
}

/* The first job of a fresh pair pays for loading the planner and the task
 * classes (20-60 s on a busy 2-core host, 2 s for the next job): a trivial
 * bounded job at start keeps that cost out of the first task's timeout, and
 * proves the pair runs jobs. */
static int warm_up(sx_runtime_t *self, sx_error_t *err)
{
    double deadline = now_s() + self->config.start_timeout_s;
    sx_gateway_t *gw = sx_gateway_new(self->gateway_url, self->rest_url, 60000, err);
    char job[SX_JOB_ID_SIZE] = "";
    sx_job_state_t state = SX_JOB_RUNNING;
    int rc = gw ? sx_gateway_open_session(gw, "streamex-warm-up", err) : -1;
    if (rc == 0 && sx_gateway_execute(gw,
                                      "CREATE TEMPORARY TABLE warm_up (x INT) "
                                      "WITH ('connector' = 'blackhole')",
                                      NULL, err) != SX_GATEWAY_OK)
        rc = -1;
    if (rc == 0 && sx_gateway_execute(gw, "INSERT INTO warm_up VALUES (1)", job, err) !=
                       SX_GATEWAY_OK)
        rc = -1;
    while (rc == 0 && state == SX_JOB_RUNNING) {
        if (sx_signals_caught() || now_s() > deadline) {
            rc = sx_error_set(err, "job %s not finished after %d s", job,
                              self->config.start_timeout_s);
            sx_gateway_job_cancel(gw, job, NULL);
            break;
        }
        sleep_ms(250);
        rc = sx_gateway_job_state(gw, job, &state, err);
    }
    if (rc == 0 && state != SX_JOB_FINISHED)
        rc = sx_error_set(err, "job %s failed or was cancelled", job);
    sx_gateway_destroy(&gw);
    if (rc != 0) {
        sx_error_prefix(err, "pair %d: warm-up job", self->config.index);
        char log[PATH_MAX];
        log_path(self, TASKMANAGER, log, sizeof log);
        append_log_tail(err, log);
    }
    return rc;
}

static int start_local(sx_runtime_t *self, sx_error_t *err)
{
    versions_t versions;
    if (read_install(self->runtime_dir, &versions, err) != 0)
        return -1;
    for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++) {
        pid_t pid = find_component(self, (component_t)c);
        if (pid > 0)
            return sx_error_set(err,
                                "pair %d already runs (%s pid %d): use it, or stop it "
                                "with 'streamex runtime down --index %d'",
                                self->config.index, s_component_names[c], (int)pid,
                                self->config.index);
    }
    char marker[PATH_MAX];
    stop_marker_path(self, marker, sizeof marker);
    if (check_ports_free(self, err) != 0 || clear_flink_tmp(self, err) != 0 ||
        write_pair_config(self, err) != 0 || format_kafka_once(self, err) != 0)
        return -1;
    unlink(marker);
    double deadline = now_s() + self->config.start_timeout_s;
    /* The TaskManager and the Gateway need the JobManager; Kafka starts alongside. */
    if (launch(self, KAFKA, true, err) != 0 || launch(self, JOBMANAGER, true, err) != 0 ||
        wait_healthy(self, JOBMANAGER, deadline, err) != 0 ||
        launch(self, TASKMANAGER, true, err) != 0 ||
        launch(self, GATEWAY, true, err) != 0)
        return -1;
    for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++)
        if (wait_healthy(self, (component_t)c, deadline, err) != 0)
            return -1;
    if (warm_up(self, err) != 0)
        return -1;
    sx_info("pair %d up: Flink %s, Kafka %s at %s, gateway %s", self->config.index,
            versions.flink, versions.kafka, self->bootstrap, self->gateway_url);
    return 0;
}

int sx_runtime_start(sx_runtime_t *self, sx_error_t *err)
{
    if (self->external)
        return start_external(self, err);
    if (start_local(self, err) == 0)
        return 0;
    if (self->started) {
        sx_error_t stop_err;
        if (sx_runtime_stop(self, &stop_err) != 0)
            sx_warn("pair %d: %s", self->config.index, stop_err.msg);
    }
    return -1;
}

/* ---- stop ------------------------------------------------------------- */

int sx_runtime_stop(sx_runtime_t *self, sx_error_t *err)
{
    if (self->external)
        return 0;
    char marker[PATH_MAX];
    stop_marker_path(self, marker, sizeof marker);
    /* Tells a watchdog in another process not to bring the JVMs back. */
    if (access(self->pair_dir, F_OK) == 0) {
        char pids_dir[PATH_MAX];
        pair_path(self, pids_dir, sizeof pids_dir, "%s", "pids");
        if (make_dirs(pids_dir, NULL) == 0)
            write_text(marker, "stop\n", NULL);
    }
    pid_t pids[SX_RUNTIME_COMPONENTS];
    for (int c = SX_RUNTIME_COMPONENTS - 1; c >= 0; c--) {
        pids[c] = find_component(self, (component_t)c);
        if (pids[c] > 0 && kill(-pids[c], SIGTERM) == -1)
            kill(pids[c], SIGTERM);
    }
    double deadline = now_s() + self->config.stop_grace_s;
    bool killed = false;
    for (;;) {
        int alive = 0;
        for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++)
            alive += pids[c] > 0 && process_alive(pids[c]);
        if (alive == 0)
            break;
        if (now_s() > deadline) {
            if (killed)
                return sx_error_set(err, "pair %d: %d JVM(s) survived SIGKILL",
                                    self->config.index, alive);
            for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++)
                if (pids[c] > 0 && process_alive(pids[c])) {
                    sx_warn("pair %d: %s ignored SIGTERM for %d s: killing it",
                            self->config.index, s_component_names[c],
                            self->config.stop_grace_s);
                    kill(-pids[c], SIGKILL);
                    kill(pids[c], SIGKILL);
                }
            killed = true;
            deadline = now_s() + 10;
        }
        sleep_ms(100);
    }
    for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++) {
        char path[PATH_MAX];
        pid_path(self, (component_t)c, path, sizeof path);
        unlink(path);
        self->pids[c] = 0;
    }
    self->started = false;
    return 0;
}

/* ---- watchdog and status ---------------------------------------------- */

int sx_runtime_watch(sx_runtime_t *self, sx_error_t *err)
{
    if (self->external || !self->started)
        return 0;
    int restarted = 0;
    for (int i = 0; i < SX_RUNTIME_COMPONENTS; i++) {
        component_t c = (component_t)i;
        if (process_alive(self->pids[c]))
            continue;
        char marker[PATH_MAX];
        stop_marker_path(self, marker, sizeof marker);
        if (access(marker, F_OK) == 0) {
            self->started = false;
            return sx_error_set(err, "pair %d was stopped (streamex runtime down)",
                                self->config.index);
        }
        const char *name = s_component_names[c];
        if (++self->restarts[c] > MAX_RESTARTS) {
            sx_error_set(err, "pair %d: %s died %d times: giving up", self->config.index,
                         name, self->restarts[c]);
            char log[PATH_MAX];
            log_path(self, c, log, sizeof log);
            append_log_tail(err, log);
            return -1;
        }
        sx_warn("pair %d: %s (pid %d) died: restarting it (restart %d)",
                self->config.index, name, (int)self->pids[c], self->restarts[c]);
        double deadline = now_s() + self->config.start_timeout_s;
        if (launch(self, c, false, err) != 0 || wait_healthy(self, c, deadline, err) != 0)
            return -1;
        restarted++;
    }
    /* A component that survived may need the restarted one (the TaskManager
     * registers again with a new JobManager): the pair is whole only when
     * every component answers. */
    for (int c = 0; restarted > 0 && c < SX_RUNTIME_COMPONENTS; c++)
        if (wait_healthy(self, (component_t)c, now_s() + self->config.start_timeout_s,
                         err) != 0)
            return -1;
    return restarted;
}

void sx_runtime_identify(sx_runtime_t *self, sx_runtime_identity_t *identity)
{
    memset(identity, 0, sizeof *identity);
    for (int c = 0; c < SX_RUNTIME_COMPONENTS && !self->external; c++) {
        identity->pid[c] = find_component(self, (component_t)c);
        identity->started[c] =
            identity->pid[c] > 0 ? process_start_time(identity->pid[c]) : 0;
    }
}

/* An external pair: each service answers (the TaskManager through the
 * JobManager's count of registered ones). */
static int external_intact(sx_runtime_t *self, sx_error_t *err)
{
    for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++)
        if (!component_healthy(self, (component_t)c))
            return sx_error_set(err, "external %s at %s does not answer",
                                s_component_names[c],
                                component_endpoint(self, (component_t)c));
    return 0;
}

int sx_runtime_intact(sx_runtime_t *self, const sx_runtime_identity_t *since,
                      sx_error_t *err)
{
    if (self->external)
        return external_intact(self, err);
    sx_runtime_identity_t now;
    sx_runtime_identify(self, &now);
    for (int c = 0; c < SX_RUNTIME_COMPONENTS; c++) {
        const char *name = s_component_names[c];
        if (now.pid[c] == 0)
            return since->pid[c] > 0
                       ? sx_error_set(err, "pair %d: %s (pid %d) is not running",
                                      self->config.index, name, (int)since->pid[c])
                       : sx_error_set(err, "pair %d: %s is not running",
                                      self->config.index, name);
        if (now.pid[c] != since->pid[c] || now.started[c] != since->started[c])
            return sx_error_set(err, "pair %d: %s was restarted (pid %d, now %d)",
                                self->config.index, name, (int)since->pid[c],
                                (int)now.pid[c]);
    }
    return 0;
}

static long resident_kb(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *text = read_text(path);
    const char *line = text ? strstr(text, "VmRSS:") : NULL;
    long kb = line ? strtol(line + 6, NULL, 10) : 0;
    free(text);
    return kb;
}

int sx_runtime_status(sx_runtime_t *self, sx_runtime_status_t *status, sx_error_t *err)
{
    (void)err;
    memset(status, 0, sizeof *status);
    status->external = self->external;
    for (int i = 0; i < SX_RUNTIME_COMPONENTS; i++) {
        component_t c = (component_t)i;
        sx_runtime_component_t *out = &status->components[i];
        out->name = s_component_names[c];
        out->restarts = self->restarts[c];
        out->pid = self->external ? 0 : find_component(self, c);
        out->running = out->pid > 0;
        out->rss_kb = out->running ? resident_kb(out->pid) : 0;
        out->healthy = (self->external || out->running) &&
                       !(self->external && c == TASKMANAGER) &&
                       component_healthy(self, c);
    }
    return 0;
}

/* ---- self-test -------------------------------------------------------- */

static void test_ports(void)
{
    SX_CHECK(sx_runtime_port(0, SX_PORT_KAFKA) == 21000);
    SX_CHECK(sx_runtime_port(0, SX_PORT_GATEWAY) == 21003);
    SX_CHECK(sx_runtime_port(2, SX_PORT_FLINK_REST) == 21042);
    SX_CHECK(sx_runtime_port(10, SX_PORT_KAFKA_CONTROLLER) == 21201);
    /* Pairs never share a port, and the highest stays below the ephemeral range. */
    SX_CHECK(SX_PORT_COUNT <= SX_RUNTIME_PORT_STRIDE);
    SX_CHECK(sx_runtime_port(SX_RUNTIME_MAX_INDEX, SX_PORT_COUNT - 1) < 32768);
    SX_CHECK(strcmp(sx_runtime_port_name(SX_PORT_GATEWAY), "SQL Gateway") == 0);
}

static void test_config_validation(void)
{
    sx_runtime_config_t c;
    sx_error_t err;
    sx_runtime_config_defaults(&c, 3);
    SX_CHECK(sx_runtime_config_validate(&c, &err) == 0);
    c.index = SX_RUNTIME_MAX_INDEX + 1;
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "worker index") != NULL);
    sx_runtime_config_defaults(&c, 0);
    c.slots = 0;
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "slots") != NULL);
    sx_runtime_config_defaults(&c, 0);
    c.taskmanager_heap_mb = 64;
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "TaskManager heap") != NULL &&
             strstr(err.msg, "64") != NULL);
    sx_runtime_config_defaults(&c, 0);
    c.kafka_bootstrap = "kafka:9092";
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "all of") != NULL);
    c.flink_gateway = "localhost:8083";
    c.flink_rest = "http://localhost:8081";
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "--flink-gateway") != NULL);
    c.flink_gateway = "http://localhost:8083";
    SX_CHECK(sx_runtime_config_validate(&c, &err) == 0);
    c.kafka_bootstrap = "kafka";
    SX_CHECK(sx_runtime_config_validate(&c, &err) == -1);
}

static void test_options(void)
{
    sx_runtime_config_t c;
    sx_error_t err;
    sx_runtime_config_defaults(&c, 0);
    SX_CHECK(sx_runtime_config_option(&c, "--index", "12", &err) == 1 && c.index == 12);
    SX_CHECK(sx_runtime_config_option(&c, "--slots", "2", &err) == 1 && c.slots == 2);
    SX_CHECK(sx_runtime_config_option(&c, "--flink-rest", "http://jm:8081", &err) == 1);
    SX_CHECK(strcmp(c.flink_rest, "http://jm:8081") == 0);
    SX_CHECK(sx_runtime_config_option(&c, "--bench", "x", &err) == 0);
    SX_CHECK(sx_runtime_config_option(&c, "--slots", "four", &err) == -1);
    SX_CHECK(strstr(err.msg, "--slots needs a whole number, got 'four'") != NULL);
    SX_CHECK(sx_runtime_config_option(&c, "--slots", NULL, &err) == -1);
    SX_CHECK(sx_runtime_config_option(&c, "--runtime-dir", "", &err) == -1);
    SX_CHECK(sx_runtime_config_option(&c, "--index", "99999999999", &err) == -1);
}

static void test_paths_and_endpoints(void)
{
    sx_runtime_config_t c;
    sx_error_t err;
    sx_runtime_config_defaults(&c, 7);
    c.runtime_dir = "/nonexistent/rt";
    sx_runtime_t *rt = sx_runtime_new(&c, &err);
    SX_CHECK(rt != NULL);
    SX_CHECK(strcmp(sx_runtime_pair_dir(rt), "/nonexistent/rt/pairs/7") == 0);
    SX_CHECK(strcmp(sx_runtime_bootstrap(rt), "127.0.0.1:21140") == 0);
    SX_CHECK(strcmp(sx_runtime_rest_url(rt), "http://127.0.0.1:21142") == 0);
    SX_CHECK(strcmp(sx_runtime_gateway_url(rt), "http://127.0.0.1:21143") == 0);
    /* Starting without an install fails at once and says what to run. */
    SX_CHECK(sx_runtime_start(rt, &err) == -1);
    SX_CHECK(strstr(err.msg, "scripts/setup-runtime.sh") != NULL);
    /* Nothing runs: stopping and watching are harmless. */
    SX_CHECK(sx_runtime_stop(rt, &err) == 0);
    SX_CHECK(sx_runtime_watch(rt, &err) == 0);
    sx_runtime_status_t status;
    SX_CHECK(sx_runtime_status(rt, &status, &err) == 0);
    SX_CHECK(!status.components[0].running && !status.components[3].running);
    SX_CHECK(strcmp(status.components[1].name, "jobmanager") == 0);
    sx_runtime_destroy(&rt);
    SX_CHECK(rt == NULL);
    sx_runtime_destroy(&rt);

    c.kafka_bootstrap = "broker:9092";
    c.flink_gateway = "http://gw:8083";
    c.flink_rest = "http://jm:8081";
    rt = sx_runtime_new(&c, &err);
    SX_CHECK(rt != NULL);
    SX_CHECK(sx_runtime_pair_dir(rt) == NULL);
    SX_CHECK(strcmp(sx_runtime_bootstrap(rt), "broker:9092") == 0);
    SX_CHECK(strcmp(sx_runtime_gateway_url(rt), "http://gw:8083") == 0);
    sx_runtime_destroy(&rt);
}

static void test_generated_config(void)
{
    sx_runtime_config_t c;
    sx_error_t err;
    sx_runtime_config_defaults(&c, 1);
    c.runtime_dir = "/rt";
    c.slots = 3;
    c.taskmanager_heap_mb = 700;
    sx_runtime_t *rt = sx_runtime_new(&c, &err);
    SX_CHECK(rt != NULL);
    char *kafka = kafka_properties(rt);
    SX_CHECK(strstr(kafka, "listeners=PLAINTEXT://127.0.0.1:21020,CONTROLLER://127.0.0.1:"
                           "21021\n") != NULL);
    SX_CHECK(strstr(kafka, "controller.quorum.voters=1@127.0.0.1:21021\n") != NULL);
    SX_CHECK(strstr(kafka, "log.dirs=/rt/pairs/1/kafka-data\n") != NULL);
    SX_CHECK(strstr(kafka, "auto.create.topics.enable=false\n") != NULL);
    char *flink = flink_config(rt);
    SX_CHECK(strstr(flink, "taskmanager.numberOfTaskSlots: 3\n") != NULL);
    SX_CHECK(strstr(flink, "taskmanager.memory.task.heap.size: 700m\n") != NULL);
    SX_CHECK(strstr(flink, "rest.port: 21022\n") != NULL);
    SX_CHECK(strstr(flink, "sql-gateway.endpoint.rest.port: 21023\n") != NULL);
    SX_CHECK(strstr(flink, "jobmanager.rpc.port: 21024\n") != NULL);
    SX_CHECK(strstr(flink, "io.tmp.dirs: /rt/pairs/1/flink-tmp\n") != NULL);
    free(kafka);
    free(flink);
    sx_runtime_destroy(&rt);
}

static void test_cluster_id_and_log_tail(void)
{
    char a[23], b[23];
    sx_error_t err;
    SX_CHECK(new_cluster_id(a, &err) == 0 && new_cluster_id(b, &err) == 0);
    SX_CHECK(strlen(a) == 22 && strcmp(a, b) != 0);
    /* One ID in 64 would start with '-' if nothing prevented it. */
    for (int i = 0; i < 2000; i++)
        SX_CHECK(new_cluster_id(b, &err) == 0 && b[0] != '-');
    SX_CHECK(
        strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
        22);

    char path[] = "/tmp/sx_runtime_test_XXXXXX";
    int fd = mkstemp(path);
    SX_CHECK(fd != -1);
    FILE *f = fdopen(fd, "w");
    for (int i = 1; i <= 50; i++)
        fprintf(f, "line %d\n", i);
    fclose(f);
    sx_error_set(&err, "kafka exited");
    append_log_tail(&err, path);
    SX_CHECK(strstr(err.msg, "kafka exited (log ") == err.msg);
    SX_CHECK(strstr(err.msg, "last 20 lines:\nline 31\n") != NULL);
    SX_CHECK(strstr(err.msg, "line 30\n") == NULL);
    SX_CHECK(strstr(err.msg, "line 50)") != NULL);
    /* A log of long lines is cut from the front to fit; never overflows. */
    f = fopen(path, "w");
    for (int i = 0; i < 40; i++)
        fprintf(f, "%0200d\n", i);
    fprintf(f, "the newest line\n");
    fclose(f);
    sx_error_set(&err, "x");
    append_log_tail(&err, path);
    SX_CHECK(strstr(err.msg, "the newest line)") != NULL);
    SX_CHECK(strlen(err.msg) < SX_ERROR_MAX);
    unlink(path);
    sx_error_set(&err, "y");
    append_log_tail(&err, path);
    SX_CHECK(strstr(err.msg, ": empty)") != NULL);
}

static void test_describe_install(void)
{
    char dir[] = "/tmp/sx_runtime_install_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    char text[512];
    SX_CHECK(sx_runtime_describe_install(dir, text, sizeof text) == -1);
    SX_CHECK(strstr(text, "not installed: run scripts/setup-runtime.sh") == text);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/installed.env", dir);
    SX_CHECK(write_text(
                 path,
                 "SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\n"
                 "SX_KAFKA_VERSION=3.9.1\n",
                 NULL) == 0);
    SX_CHECK(sx_runtime_describe_install(dir, text, sizeof text) == 0);
    SX_CHECK(strstr(text, "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1 in ") ==
             text);
    SX_CHECK(write_text(path, "SX_FLINK_VERSION=1.20.3\n", NULL) == 0);
    SX_CHECK(sx_runtime_describe_install(dir, text, sizeof text) == -1);
    unlink(path);
    rmdir(dir);
}

static void test_clear_flink_tmp(void)
{
    char dir[] = "/tmp/sx_runtime_tmp_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_runtime_config_t c;
    sx_error_t err;
    sx_runtime_config_defaults(&c, 1);
    c.runtime_dir = dir;
    sx_runtime_t *rt = sx_runtime_new(&c, &err);
    char path[PATH_MAX];
    SX_CHECK(clear_flink_tmp(rt, &err) == 0); /* no folder yet: nothing to do */
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/blobStore-1/job", dir);
    SX_CHECK(make_dirs(path, &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/blobStore-1/job/x.jar", dir);
    SX_CHECK(write_text(path, "jar", &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/planner.jar", dir);
    SX_CHECK(write_text(path, "jar", &err) == 0);
    SX_CHECK(clear_flink_tmp(rt, &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp", dir);
    SX_CHECK(access(path, F_OK) == 0);
    SX_CHECK(rmdir(path) == 0); /* only an empty folder can go */
    snprintf(path, sizeof path, "%s/pairs/1", dir);
    SX_CHECK(rmdir(path) == 0);
    snprintf(path, sizeof path, "%s/pairs", dir);
    SX_CHECK(rmdir(path) == 0);
    SX_CHECK(rmdir(dir) == 0);
    sx_runtime_destroy(&rt);
}

/* A stand-in for one component: a shell blocked on a read, with the pair's
 * markers on its command line as a JVM of the pair would have them, and its
 * pid file written as launch() writes it. */
static pid_t spawn_fake_component(sx_runtime_t *rt, component_t c)
{
    char *pair = zsys_sprintf("-Dsx.pair=%s", rt->pair_dir);
    char *comp = zsys_sprintf("-Dsx.component=%s", s_component_names[c]);
    pid_t pid = fork();
    SX_CHECK(pid >= 0);
    if (pid == 0) {
        /* Its stdin a pipe whose write end it holds itself: the read never ends. */
        int pipefd[2];
        if (pipe(pipefd) == 0)
            dup2(pipefd[0], STDIN_FILENO);
        execl("/bin/sh", "sh", "-c", "read x", pair, comp, (char *)NULL);
        _exit(127);
    }
    free(pair);
    free(comp);
    /* The command line is the shell's only once it has exec'd. */
    double deadline = now_s() + 10;
    while (!process_is(rt, pid, s_component_names[c]) && now_s() < deadline)
        sleep_ms(5);
    SX_CHECK(process_is(rt, pid, s_component_names[c]));
    char path[PATH_MAX], text[32];
    pid_path(rt, c, path, sizeof path);
    snprintf(text, sizeof text, "%d\n", (int)pid);
    SX_CHECK(write_text(path, text, NULL) == 0);
    return pid;
}

static void kill_fake_component(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A component killed, or killed and started again, is a pair that changed
 * under a task: sx_runtime_intact says which and how. A pair that never ran
 * is not intact either. */
static void test_identity(void)
{
    char dir[] = "/tmp/sx_runtime_identity_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_runtime_config_t c;
    sx_runtime_config_defaults(&c, 7);
    c.runtime_dir = dir;
    sx_error_t err;
    sx_runtime_t *rt = sx_runtime_new(&c, &err);
    SX_CHECK(rt);
    sx_runtime_identity_t before;
    sx_runtime_identify(rt, &before);
    SX_CHECK(before.pid[KAFKA] == 0 && before.pid[GATEWAY] == 0);
    SX_CHECK(sx_runtime_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, "pair 7: kafka is not running") == 0);

    char pids_dir[PATH_MAX];
    pair_path(rt, pids_dir, sizeof pids_dir, "%s", "pids");
    SX_CHECK(make_dirs(pids_dir, &err) == 0);
    pid_t pids[SX_RUNTIME_COMPONENTS];
    for (int i = 0; i < SX_RUNTIME_COMPONENTS; i++)
        pids[i] = spawn_fake_component(rt, (component_t)i);
    sx_runtime_identify(rt, &before);
    for (int i = 0; i < SX_RUNTIME_COMPONENTS; i++)
        SX_CHECK(before.pid[i] == pids[i] && before.started[i] > 0);
    SX_CHECK(sx_runtime_intact(rt, &before, &err) == 0);

    kill_fake_component(pids[TASKMANAGER]);
    char want[256];
    snprintf(want, sizeof want, "pair 7: taskmanager (pid %d) is not running",
             (int)pids[TASKMANAGER]);
    SX_CHECK(sx_runtime_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, want) == 0);
    pid_t again = spawn_fake_component(rt, TASKMANAGER);
    snprintf(want, sizeof want, "pair 7: taskmanager was restarted (pid %d, now %d)",
             (int)pids[TASKMANAGER], (int)again);
    SX_CHECK(sx_runtime_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, want) == 0);
    pids[TASKMANAGER] = again;
    sx_runtime_identify(rt, &before);
    SX_CHECK(sx_runtime_intact(rt, &before, &err) == 0);

    for (int i = 0; i < SX_RUNTIME_COMPONENTS; i++)
        kill_fake_component(pids[i]);
    sx_runtime_destroy(&rt);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    SX_CHECK(system(command) == 0);
}

void sx_runtime_test(bool verbose)
{
    (void)verbose;
    test_ports();
    test_config_validation();
    test_options();
    test_paths_and_endpoints();
    test_generated_config();
    test_cluster_id_and_log_tail();
    test_describe_install();
    test_clear_flink_tmp();
    test_identity();
}
