/* config.c: what a pair's configuration decides, before any process runs
 * (see pair.h and pair_int.h): the ports of a pair index, the defaults
 * and limits of its settings, the versions of its engine, the paths of
 * its folder, the Kafka server.properties and Flink config.yaml generated
 * for it, and the command line of each of its JVMs. The memory flags of the
 * JVMs and config.yaml are computed here together so that they agree. */
#include "worker/pair/pair_int.h"

#include "common/files.h"
#include "common/install.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

const char *const sx_pair_names[SX_PAIR_COMPONENTS] = {"kafka", "jobmanager",
                                                       "taskmanager", "gateway"};

/* TaskManager memory besides task heap and managed memory (MiB): what Flink's
 * scripts would compute for the JVM flags, fixed here to keep the flags and
 * config.yaml consistent. */
#define TM_FRAMEWORK_HEAP_MB 128
#define TM_FRAMEWORK_OFF_HEAP_MB 128
#define TM_NETWORK_MB 64
#define FLINK_METASPACE_MB 256
#define JM_OFF_HEAP_MB 128
/* The largest small file the pair reads (pid files, /proc). */
#define SMALL_FILE_MAX (1 << 20)

/* ---- ports, config --------------------------------------------------- */

int sx_pair_port(int index, sx_pair_port_t which)
{
    return SX_PAIR_PORT_BASE + SX_PAIR_PORT_STRIDE * index + (int)which;
}

const char *sx_pair_port_name(sx_pair_port_t which)
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

void sx_pair_config_defaults(sx_pair_config_t *config, int index)
{
    *config = (sx_pair_config_t){
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

int sx_pair_config_validate(const sx_pair_config_t *c, sx_error_t *err)
{
    if (check_range("the worker index", c->index, 0, SX_PAIR_MAX_INDEX, err) ||
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
    if (sx_engine_selector_check(c->flink, err) != 0)
        return -1;
    int given = (c->kafka_bootstrap != NULL) + (c->flink_gateway != NULL) +
                (c->flink_rest != NULL);
    if (given != 0 && given != 3)
        return sx_error_set(err, "an external pair needs all of --kafka-bootstrap, "
                                 "--flink-gateway and --flink-rest");
    if (given == 3 && c->flink && c->flink[0])
        return sx_error_set(err, "--flink picks an installed engine: an external pair "
                                 "(--kafka-bootstrap ...) runs its own");
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

/* ---- small files and strings --------------------------------------------- */

char *sx_pair_read_text(const char *path)
{
    size_t size = 0;
    return sx_file_read(path, SMALL_FILE_MAX, &size, NULL);
}

int sx_pair_write_text(const char *path, const char *text, sx_error_t *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sx_error_set(err, "cannot write %s: %s", path, strerror(errno));
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : sx_error_set(err, "cannot write %s: %s", path, strerror(errno));
}

/* ---- the engine -------------------------------------------------------- */

int sx_pair_need_engine(const sx_pair_t *self, sx_error_t *err)
{
    if (self->has_engine)
        return 0;
    if (err)
        *err = self->engine_err;
    return -1;
}

int sx_pair_describe_install(const char *runtime_dir, char *out, size_t out_size)
{
    char *dir = sx_install_runtime_dir(runtime_dir);
    sx_engine_t e;
    sx_error_t err;
    if (sx_engine_resolve(dir, NULL, &e, &err) != 0) {
        snprintf(out, out_size, "%s", err.msg);
        free(dir);
        return -1;
    }
    char versions[SX_ENGINE_TEXT], series[32];
    sx_engine_versions(&e, versions, sizeof versions);
    size_t used = (size_t)snprintf(out, out_size, "%s in %s", versions, dir);
    sx_engine_t engines[SX_ENGINE_MAX];
    size_t count = sx_engine_list(dir, engines, SX_ENGINE_MAX);
    for (size_t i = 0; i < count && used < out_size; i++) {
        if (engines[i].is_default)
            continue;
        sx_engine_versions(&engines[i], versions, sizeof versions);
        sx_engine_series(&engines[i], series, sizeof series);
        used += (size_t)snprintf(out + used, out_size - used, "; also --flink %s: %s",
                                 series, versions);
    }
    free(dir);
    return 0;
}

int sx_pair_versions(const sx_pair_t *self, char *out, size_t out_size, sx_error_t *err)
{
    if (self->external)
        return sx_error_set(err, "an existing pair: its versions are not known here");
    if (sx_pair_need_engine(self, err) != 0)
        return -1;
    sx_engine_versions(&self->engine, out, out_size);
    return 0;
}

/* ---- paths of one pair ------------------------------------------------ */

void sx_pair_path(const sx_pair_t *self, char *out, size_t size, const char *fmt, ...)
{
    char rel[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(out, size, "%s/%s", self->pair_dir, rel);
}

void sx_pair_log_path(const sx_pair_t *self, component_t c, char *out, size_t size)
{
    sx_pair_path(self, out, size, "logs/%s.log", sx_pair_names[c]);
}

void sx_pair_pid_path(const sx_pair_t *self, component_t c, char *out, size_t size)
{
    sx_pair_path(self, out, size, "pids/%s.pid", sx_pair_names[c]);
}

void sx_pair_stop_marker_path(const sx_pair_t *self, char *out, size_t size)
{
    sx_pair_path(self, out, size, "pids/%s", "stop-requested");
}

/* ---- generated configuration ----------------------------------------- */

static char *kafka_properties(const sx_pair_t *self)
{
    int i = self->config.index;
    int broker = sx_pair_port(i, SX_PORT_KAFKA);
    int controller = sx_pair_port(i, SX_PORT_KAFKA_CONTROLLER);
    return sx_format(
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

static char *flink_config(const sx_pair_t *self)
{
    const sx_pair_config_t *c = &self->config;
    int i = c->index;
    return sx_format(
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
        i, sx_pair_port(i, SX_PORT_JOBMANAGER_RPC), c->jobmanager_heap_mb, JM_OFF_HEAP_MB,
        FLINK_METASPACE_MB, c->slots, c->slots, sx_pair_port(i, SX_PORT_TASKMANAGER_RPC),
        sx_pair_port(i, SX_PORT_TASKMANAGER_DATA), TM_FRAMEWORK_HEAP_MB,
        c->taskmanager_heap_mb, c->taskmanager_managed_mb, TM_NETWORK_MB, TM_NETWORK_MB,
        TM_FRAMEWORK_OFF_HEAP_MB, FLINK_METASPACE_MB, sx_pair_port(i, SX_PORT_BLOB),
        sx_pair_port(i, SX_PORT_FLINK_REST), sx_pair_port(i, SX_PORT_GATEWAY),
        self->pair_dir, self->pair_dir, self->pair_dir);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    return ftw->level == 0 ? 0 : remove(path);
}

int sx_pair_clear_tmp(const sx_pair_t *self, sx_error_t *err)
{
    char path[PATH_MAX];
    sx_pair_path(self, path, sizeof path, "%s", "flink-tmp");
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == -1 && errno != ENOENT)
        return sx_error_set(err, "cannot empty %s: %s", path, strerror(errno));
    return 0;
}

int sx_pair_write_config(const sx_pair_t *self, sx_error_t *err)
{
    static const char *const dirs[] = {"conf", "kafka-data", "flink-tmp", "logs", "pids"};
    char path[PATH_MAX];
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        sx_pair_path(self, path, sizeof path, "%s", dirs[d]);
        if (sx_mkdirs(path, err) != 0)
            return -1;
    }
    char *kafka = kafka_properties(self);
    char *flink = flink_config(self);
    sx_pair_path(self, path, sizeof path, "conf/%s", "server.properties");
    int rc = sx_pair_write_text(path, kafka, err);
    if (rc == 0) {
        sx_pair_path(self, path, sizeof path, "conf/%s", "config.yaml");
        rc = sx_pair_write_text(path, flink, err);
    }
    free(kafka);
    free(flink);
    return rc;
}

/* ---- argument vectors ------------------------------------------------- */

static void argv_add_owned(sx_pair_argv_t *v, char *item)
{
    if (v->count + 2 > v->cap) {
        v->cap = v->cap ? v->cap * 2 : 32;
        v->items = sx_realloc(v->items, v->cap, sizeof *v->items);
    }
    v->items[v->count++] = item;
    v->items[v->count] = NULL;
}

void sx_pair_argv_add(sx_pair_argv_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    argv_add_owned(v, sx_vformat(fmt, ap));
    va_end(ap);
}

void sx_pair_argv_free(sx_pair_argv_t *v)
{
    for (size_t i = 0; i < v->count; i++)
        free(v->items[i]);
    free(v->items);
    *v = (sx_pair_argv_t){0};
}

/* Adds one argument per line of `path` (the Java 17 options of Flink). */
static int argv_add_lines(sx_pair_argv_t *v, const char *path, sx_error_t *err)
{
    char *text = sx_pair_read_text(path);
    if (!text)
        return sx_error_set(err, "cannot read %s: run scripts/setup-runtime.sh", path);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (line[0])
            argv_add_owned(v, sx_strdup(line));
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

/* ---- JVM command lines ------------------------------------------------ */

/* How much the JIT compiles. On a 2-core machine the C2 compiler's threads
 * were the largest single cost of small tasks: every job brings new code
 * (Janino's classes, its operators' paths) that turns warm and is compiled
 * again, and the control plane's code takes hundreds of tasks to settle.
 * Kafka, the JobManager and the Gateway serve requests, not records: they
 * stop at C1, whose code was enough for them (1M rows replayed and read back
 * as fast). The TaskManager runs the queries' records: it keeps C2, but only
 * for code 20 times hotter than the JVM's default thresholds, which a
 * million-row job's per-record paths reach in its first moments and the
 * per-job setup code never does. Measured with bench/fixedcost, bench/scale
 * and bench/heavy (docs/execution.md, "The JVMs' compilers", says why;
 * docs/internals/measurements.md gives the figures). */
static void add_jit_flags(sx_pair_argv_t *v, component_t c)
{
    if (c != TASKMANAGER) {
        sx_pair_argv_add(v, "-XX:TieredStopAtLevel=1");
        return;
    }
    sx_pair_argv_add(v, "-XX:Tier4InvocationThreshold=100000");
    sx_pair_argv_add(v, "-XX:Tier4MinInvocationThreshold=12000");
    sx_pair_argv_add(v, "-XX:Tier4CompileThreshold=300000");
    sx_pair_argv_add(v, "-XX:Tier4BackEdgeThreshold=800000");
}

/* java, the marker properties, the heap and JIT flags every JVM of a pair
 * gets. */
static void add_jvm_head(const sx_pair_t *self, sx_pair_argv_t *v, component_t c,
                         const char *name, int heap_mb)
{
    char java[PATH_MAX];
    sx_pair_argv_add(v, "%s", java_binary(java, sizeof java));
    sx_pair_argv_add(v, "-Dsx.pair=%s", self->pair_dir);
    sx_pair_argv_add(v, "-Dsx.component=%s", name);
    if (self->has_engine)
        sx_pair_argv_add(v, "-Dsx.engine=%s", self->engine_label);
    sx_pair_argv_add(v, "-Xmx%dm", heap_mb);
    sx_pair_argv_add(v, "-Xms%dm", heap_mb);
    sx_pair_argv_add(v, "-XX:+UseG1GC");
    add_jit_flags(v, c);
    sx_pair_argv_add(v, "-Djava.awt.headless=true");
}

void sx_pair_kafka_command(const sx_pair_t *self, sx_pair_argv_t *v,
                           const char *main_class)
{
    add_jvm_head(self, v, KAFKA, main_class == NULL ? "kafka" : "kafka-format",
                 self->config.kafka_heap_mb);
    sx_pair_argv_add(v, "-XX:MaxGCPauseMillis=20");
    sx_pair_argv_add(v, "-Dlog4j.configuration=file:%s/conf/log4j-kafka.properties",
                     self->runtime_dir);
    sx_pair_argv_add(v, "-Dkafka.logs.dir=%s/logs", self->pair_dir);
    sx_pair_argv_add(v, "-cp");
    sx_pair_argv_add(v, "%s/kafka/libs/*", self->runtime_dir);
    sx_pair_argv_add(v, "%s", main_class ? main_class : "kafka.Kafka");
    if (!main_class)
        sx_pair_argv_add(v, "%s/conf/server.properties", self->pair_dir);
}

int sx_pair_flink_command(const sx_pair_t *self, component_t c, sx_pair_argv_t *v,
                          sx_error_t *err)
{
    const sx_pair_config_t *cfg = &self->config;
    if (sx_pair_need_engine(self, err) != 0)
        return -1;
    int heap = c == JOBMANAGER    ? cfg->jobmanager_heap_mb
               : c == TASKMANAGER ? TM_FRAMEWORK_HEAP_MB + cfg->taskmanager_heap_mb
                                  : cfg->gateway_heap_mb;
    add_jvm_head(self, v, c, sx_pair_names[c], heap);
    char path[PATH_MAX + 32];
    /* Flink's own JVM options differ by engine: each has its list. */
    snprintf(path, sizeof path, "%s/java-opts.txt", self->engine.dir);
    if (argv_add_lines(v, path, err) != 0)
        return -1;
    sx_pair_argv_add(v, "-XX:MaxMetaspaceSize=%dm", FLINK_METASPACE_MB);
    if (c == JOBMANAGER)
        sx_pair_argv_add(v, "-XX:MaxDirectMemorySize=%dm", JM_OFF_HEAP_MB);
    if (c == TASKMANAGER)
        sx_pair_argv_add(v, "-XX:MaxDirectMemorySize=%dm",
                         TM_FRAMEWORK_OFF_HEAP_MB + TM_NETWORK_MB);
    sx_pair_argv_add(v, "-Dlog4j.configurationFile=file:%s/conf/log4j-flink.properties",
                     self->runtime_dir);
    /* Flink unpacks its planner and RPC jars (60 MiB) into java.io.tmpdir and
     * leaves them behind when killed: keep them in the pair, emptied on start. */
    sx_pair_argv_add(v, "-Djava.io.tmpdir=%s/flink-tmp", self->pair_dir);
    sx_pair_argv_add(v, "-cp");
    sx_pair_argv_add(v, "%s/conf:%s/lib/*", self->pair_dir, self->engine.dir);
    int metrics_port =
        sx_pair_port(cfg->index, c == JOBMANAGER ? SX_PORT_JOBMANAGER_METRICS
                                                 : SX_PORT_TASKMANAGER_METRICS);
    if (c == GATEWAY) {
        /* The gateway reads config.yaml through FLINK_CONF_DIR (see sx_pair_env). */
        sx_pair_argv_add(v, "org.apache.flink.table.gateway.SqlGateway");
        return 0;
    }
    sx_pair_argv_add(
        v, "%s",
        c == JOBMANAGER
            ? "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
            : "org.apache.flink.runtime.taskexecutor.TaskManagerRunner");
    sx_pair_argv_add(v, "--configDir");
    sx_pair_argv_add(v, "%s/conf", self->pair_dir);
    /* One config.yaml for both: each process gets its own metric query port. */
    sx_pair_argv_add(v, "-D");
    sx_pair_argv_add(v, "metrics.internal.query-service.port=%d", metrics_port);
    return 0;
}

/* Built before fork: the child only execs. */
void sx_pair_env(const sx_pair_t *self, sx_pair_argv_t *env)
{
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "FLINK_CONF_DIR=", 15) != 0)
            sx_pair_argv_add(env, "%s", *e);
    sx_pair_argv_add(env, "FLINK_CONF_DIR=%s/conf", self->pair_dir);
}

/* ---- self-test -------------------------------------------------------- */

static void test_ports(void)
{
    SX_CHECK(sx_pair_port(0, SX_PORT_KAFKA) == 21000);
    SX_CHECK(sx_pair_port(0, SX_PORT_GATEWAY) == 21003);
    SX_CHECK(sx_pair_port(2, SX_PORT_FLINK_REST) == 21042);
    SX_CHECK(sx_pair_port(10, SX_PORT_KAFKA_CONTROLLER) == 21201);
    /* Pairs never share a port, and the highest stays below the ephemeral range. */
    SX_CHECK(SX_PORT_COUNT <= SX_PAIR_PORT_STRIDE);
    SX_CHECK(sx_pair_port(SX_PAIR_MAX_INDEX, SX_PORT_COUNT - 1) < 32768);
    SX_CHECK(strcmp(sx_pair_port_name(SX_PORT_GATEWAY), "SQL Gateway") == 0);
}

static void test_config_validation(void)
{
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 3);
    SX_CHECK(sx_pair_config_validate(&c, &err) == 0);
    c.index = SX_PAIR_MAX_INDEX + 1;
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "worker index") != NULL);
    sx_pair_config_defaults(&c, 0);
    c.slots = 0;
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "slots") != NULL);
    sx_pair_config_defaults(&c, 0);
    c.taskmanager_heap_mb = 64;
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "TaskManager heap") != NULL &&
             strstr(err.msg, "64") != NULL);
    sx_pair_config_defaults(&c, 0);
    c.kafka_bootstrap = "kafka:9092";
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "all of") != NULL);
    c.flink_gateway = "localhost:8083";
    c.flink_rest = "http://localhost:8081";
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
    SX_CHECK(strstr(err.msg, "--flink-gateway") != NULL);
    c.flink_gateway = "http://localhost:8083";
    SX_CHECK(sx_pair_config_validate(&c, &err) == 0);
    c.kafka_bootstrap = "kafka";
    SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
}

/* Each bounded setting takes both of its ends and refuses one past either,
 * naming itself and its range. */
static void test_config_ranges(void)
{
    static const struct {
        size_t field;
        const char *what;
        int low, high;
    } ranges[] = {
        {offsetof(sx_pair_config_t, index), "the worker index", 0, SX_PAIR_MAX_INDEX},
        {offsetof(sx_pair_config_t, slots), "TaskManager slots", 1, 256},
        {offsetof(sx_pair_config_t, kafka_heap_mb), "the Kafka heap (MiB)", 128, 65536},
        {offsetof(sx_pair_config_t, jobmanager_heap_mb), "the JobManager heap (MiB)", 128,
         65536},
        {offsetof(sx_pair_config_t, taskmanager_heap_mb), "the TaskManager heap (MiB)",
         128, 65536},
        {offsetof(sx_pair_config_t, taskmanager_managed_mb),
         "the TaskManager managed memory (MiB)", 0, 65536},
        {offsetof(sx_pair_config_t, gateway_heap_mb), "the SQL Gateway heap (MiB)", 128,
         65536},
        {offsetof(sx_pair_config_t, start_timeout_s), "the start timeout (s)", 1, 3600},
        {offsetof(sx_pair_config_t, stop_grace_s), "the stop grace period (s)", 0, 600},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        int values[] = {ranges[i].low, ranges[i].high, ranges[i].low - 1,
                        ranges[i].high + 1};
        for (size_t k = 0; k < 4; k++) {
            sx_pair_config_t c;
            sx_error_t err;
            sx_pair_config_defaults(&c, 0);
            *(int *)((char *)&c + ranges[i].field) = values[k];
            if (k < 2) {
                SX_CHECK(sx_pair_config_validate(&c, &err) == 0);
                continue;
            }
            SX_CHECK(sx_pair_config_validate(&c, &err) == -1);
            char expected[SX_ERROR_MAX];
            snprintf(expected, sizeof expected, "%s must be between %d and %d, got %d",
                     ranges[i].what, ranges[i].low, ranges[i].high, values[k]);
            SX_CHECK(strcmp(err.msg, expected) == 0);
        }
    }
}

static void test_generated_config(void)
{
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 1);
    c.runtime_dir = "/rt";
    c.slots = 3;
    c.taskmanager_heap_mb = 700;
    sx_pair_t *rt = sx_pair_new(&c, &err);
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
    sx_pair_destroy(&rt);
}

static bool argv_has(const sx_pair_argv_t *v, const char *arg)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->items[i], arg) == 0)
            return true;
    return false;
}

void sx_pair_test_engines(const char *dir)
{
    static const struct {
        const char *folder, *marker, *opts;
    } engines[] = {
        {"flink", "installed.env",
         "--add-opens=java.base/java.lang=ALL-UNNAMED\n"
         "--add-exports=java.base/sun.net.util=ALL-UNNAMED\n"},
        {"flink-2.2", "flink-2.2/installed.env",
         "--add-opens=java.base/java.lang=ALL-UNNAMED\n"},
    };
    static const char *const markers[] = {
        "SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\n"
        "SX_KAFKA_VERSION=3.9.1\n",
        "SX_FLINK_VERSION=2.2.1\nSX_FLINK_KAFKA_CONNECTOR_VERSION=5.0.0-2.2\n"
        "SX_KAFKA_VERSION=3.9.1\n"};
    char path[PATH_MAX];
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, engines[i].folder);
        SX_CHECK(sx_mkdirs(path, NULL) == 0);
        snprintf(path, sizeof path, "%s/%s/java-opts.txt", dir, engines[i].folder);
        SX_CHECK(sx_pair_write_text(path, engines[i].opts, NULL) == 0);
        snprintf(path, sizeof path, "%s/%s", dir, engines[i].marker);
        SX_CHECK(sx_pair_write_text(path, markers[i], NULL) == 0);
    }
}

void sx_pair_test_remove(const char *dir)
{
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    SX_CHECK(system(command) == 0);
}

/* Each JVM's JIT flags: C1 alone for Kafka, the JobManager and the Gateway;
 * C2 kept for the TaskManager, on hotter code only. */
static void test_jit_flags(void)
{
    char dir[] = "/tmp/sx_pair_jit_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_pair_test_engines(dir);
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 1);
    c.runtime_dir = dir;
    sx_pair_t *rt = sx_pair_new(&c, &err);
    for (int k = KAFKA; k <= GATEWAY; k++) {
        sx_pair_argv_t v = {0};
        if (k == KAFKA)
            sx_pair_kafka_command(rt, &v, NULL);
        else
            SX_CHECK(sx_pair_flink_command(rt, (component_t)k, &v, &err) == 0);
        bool c1_only = argv_has(&v, "-XX:TieredStopAtLevel=1");
        bool hot_c2 = argv_has(&v, "-XX:Tier4InvocationThreshold=100000");
        SX_CHECK(c1_only == (k != TASKMANAGER));
        SX_CHECK(hot_c2 == (k == TASKMANAGER));
        SX_CHECK(argv_has(&v, "--add-opens=java.base/java.lang=ALL-UNNAMED") ==
                 (k != KAFKA));
        sx_pair_argv_free(&v);
    }
    sx_pair_destroy(&rt);
    sx_pair_test_remove(dir);
}

/* Which engine a pair runs decides its Flink JVMs' class path, Flink's own
 * Java options and the marker that tells a running pair's engine, and the
 * versions the result cache keys on: each from the engine's own folder and
 * marker, never the default's for another engine. */
static void test_engine_commands(void)
{
    char dir[] = "/tmp/sx_pair_engine_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_pair_test_engines(dir);
    static const struct {
        const char *flink, *folder, *label, *versions;
        bool add_exports;
    } cases[] = {
        {NULL, "flink", "flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1",
         "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1", true},
        {"2.2", "flink-2.2", "flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1",
         "Flink 2.2.1 (Kafka connector 5.0.0-2.2), Kafka 3.9.1", false},
    };
    char want[PATH_MAX], text[SX_ENGINE_TEXT];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sx_pair_config_t c;
        sx_error_t err;
        sx_pair_config_defaults(&c, 1);
        c.runtime_dir = dir;
        c.flink = cases[i].flink;
        sx_pair_t *rt = sx_pair_new(&c, &err);
        SX_CHECK(rt != NULL);
        sx_pair_argv_t v = {0};
        SX_CHECK(sx_pair_flink_command(rt, JOBMANAGER, &v, &err) == 0);
        snprintf(want, sizeof want, "%s/pairs/1/conf:%s/%s/lib/*", dir, dir,
                 cases[i].folder);
        SX_CHECK(argv_has(&v, want));
        snprintf(want, sizeof want, "-Dsx.engine=%s", cases[i].label);
        SX_CHECK(argv_has(&v, want));
        SX_CHECK(argv_has(&v, "--add-exports=java.base/sun.net.util=ALL-UNNAMED") ==
                 cases[i].add_exports);
        sx_pair_argv_free(&v);
        sx_pair_kafka_command(rt, &v, NULL);
        SX_CHECK(argv_has(&v, want)); /* the broker belongs to the pair too */
        sx_pair_argv_free(&v);
        SX_CHECK(sx_pair_versions(rt, text, sizeof text, &err) == 0);
        SX_CHECK(strcmp(text, cases[i].versions) == 0);
        sx_pair_describe(rt, text, sizeof text);
        SX_CHECK(strcmp(text, cases[i].label) == 0);
        sx_pair_destroy(&rt);
    }
    /* An engine that is not installed is refused when the pair is made. */
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 1);
    c.runtime_dir = dir;
    c.flink = "2.1";
    SX_CHECK(sx_pair_new(&c, &err) == NULL);
    snprintf(want, sizeof want,
             "Flink 2.1 is not installed in %s: run scripts/setup-runtime.sh --flink 2.1 "
             "(installed: 1.20.3, 2.2.1)",
             dir);
    SX_CHECK(strcmp(err.msg, want) == 0);
    c.flink = "two";
    SX_CHECK(sx_pair_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "--flink 'two': expected a Flink version X.Y or X.Y.Z, "
                             "e.g. 2.2") == 0);
    c.flink = "2.2";
    c.kafka_bootstrap = "kafka:9092";
    c.flink_gateway = "http://gw:8083";
    c.flink_rest = "http://jm:8081";
    SX_CHECK(sx_pair_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "--flink picks an installed engine: an external pair "
                             "(--kafka-bootstrap ...) runs its own") == 0);
    sx_pair_test_remove(dir);
}

static void test_describe_install(void)
{
    char dir[] = "/tmp/sx_pair_install_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    char text[512], want[1024];
    SX_CHECK(sx_pair_describe_install(dir, text, sizeof text) == -1);
    SX_CHECK(strstr(text, "not installed: run scripts/setup-runtime.sh") == text);
    sx_pair_test_engines(dir);
    SX_CHECK(sx_pair_describe_install(dir, text, sizeof text) == 0);
    snprintf(want, sizeof want,
             "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1 in %s; also --flink "
             "2.2: Flink 2.2.1 (Kafka connector 5.0.0-2.2), Kafka 3.9.1",
             dir);
    SX_CHECK(strcmp(text, want) == 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/installed.env", dir);
    SX_CHECK(sx_pair_write_text(path, "SX_FLINK_VERSION=1.20.3\n", NULL) == 0);
    SX_CHECK(sx_pair_describe_install(dir, text, sizeof text) == -1);
    sx_pair_test_remove(dir);
}

static void test_clear_flink_tmp(void)
{
    char dir[] = "/tmp/sx_pair_tmp_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 1);
    c.runtime_dir = dir;
    sx_pair_t *rt = sx_pair_new(&c, &err);
    char path[PATH_MAX];
    SX_CHECK(sx_pair_clear_tmp(rt, &err) == 0); /* no folder yet: nothing to do */
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/blobStore-1/job", dir);
    SX_CHECK(sx_mkdirs(path, &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/blobStore-1/job/x.jar", dir);
    SX_CHECK(sx_pair_write_text(path, "jar", &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp/planner.jar", dir);
    SX_CHECK(sx_pair_write_text(path, "jar", &err) == 0);
    SX_CHECK(sx_pair_clear_tmp(rt, &err) == 0);
    snprintf(path, sizeof path, "%s/pairs/1/flink-tmp", dir);
    SX_CHECK(access(path, F_OK) == 0);
    SX_CHECK(rmdir(path) == 0); /* only an empty folder can go */
    snprintf(path, sizeof path, "%s/pairs/1", dir);
    SX_CHECK(rmdir(path) == 0);
    snprintf(path, sizeof path, "%s/pairs", dir);
    SX_CHECK(rmdir(path) == 0);
    SX_CHECK(rmdir(dir) == 0);
    sx_pair_destroy(&rt);
}

void sx_pair_config_test(bool verbose)
{
    (void)verbose;
    test_ports();
    test_jit_flags();
    test_engine_commands();
    test_config_ranges();
    test_config_validation();
    test_generated_config();
    test_describe_install();
    test_clear_flink_tmp();
}
