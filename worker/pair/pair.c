/* pair.c: the life cycle of one worker's Kafka + Flink pair (see
 * pair.h): the object, start (install and port checks, config files,
 * Kafka's one-time storage format, the JVMs in order, health, a warm-up
 * job), stop, the watchdog that restarts dead components, and what tells a
 * pair that stayed whole from one that changed under a task. What the
 * configuration decides is in config.c, the processes in process.c, the
 * health checks in health.c (pair_int.h ties them together). */
#include "worker/pair/pair_int.h"

#include "common/files.h"
#include "common/install.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/signals.h"
#include "worker/clients/gateway.h"

#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often the watchdog may bring one component back before giving up. */
#define MAX_RESTARTS 5
/* Lines of a component's log quoted in an error. */
#define LOG_TAIL_LINES 20

/* A deadline `seconds` from now, on zclock_usecs's clock. */
static int64_t deadline_after(int seconds)
{
    return zclock_usecs() + (int64_t)seconds * 1000000;
}

/* ---- life cycle ------------------------------------------------------- */

sx_pair_t *sx_pair_new(const sx_pair_config_t *config, sx_error_t *err)
{
    if (sx_pair_config_validate(config, err) != 0)
        return NULL;
    sx_pair_t *self = sx_new(sx_pair_t);
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&self->lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    self->config = *config;
    self->runtime_dir = sx_install_runtime_dir(config->runtime_dir);
    self->external = config->kafka_bootstrap != NULL;
    int index = config->index;
    if (self->external) {
        self->bootstrap = sx_strdup(config->kafka_bootstrap);
        self->gateway_url = sx_strdup(config->flink_gateway);
        self->rest_url = sx_strdup(config->flink_rest);
        self->pair_dir = sx_strdup("");
    } else {
        self->pair_dir = sx_format("%s/pairs/%d", self->runtime_dir, index);
        self->bootstrap = sx_format("127.0.0.1:%d", sx_pair_port(index, SX_PORT_KAFKA));
        self->gateway_url =
            sx_format("http://127.0.0.1:%d", sx_pair_port(index, SX_PORT_GATEWAY));
        self->rest_url =
            sx_format("http://127.0.0.1:%d", sx_pair_port(index, SX_PORT_FLINK_REST));
    }
    /* The engine is resolved once: an engine asked for by name (--flink or
     * $SX_FLINK) must be installed now; the default may be missing until
     * the pair starts. */
    const char *selector = sx_engine_selector(config->flink);
    bool named = selector != NULL;
    self->has_engine =
        !self->external && sx_engine_resolve(self->runtime_dir, selector, &self->engine,
                                             &self->engine_err) == 0;
    if (!self->external && !self->has_engine && named) {
        if (err)
            *err = self->engine_err;
        sx_pair_destroy(&self);
        return NULL;
    }
    if (self->has_engine)
        sx_engine_label(&self->engine, self->engine_label, sizeof self->engine_label);
    self->config.runtime_dir = self->runtime_dir;
    self->config.flink = NULL; /* the engine above is what counts */
    self->config.kafka_bootstrap = self->external ? self->bootstrap : NULL;
    self->config.flink_gateway = self->external ? self->gateway_url : NULL;
    self->config.flink_rest = self->external ? self->rest_url : NULL;
    return self;
}

void sx_pair_destroy(sx_pair_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_pair_t *self = *self_p;
    if (self->started && !self->config.detached) {
        sx_error_t err;
        if (sx_pair_stop(self, &err) != 0)
            sx_warn("pair %d: %s", self->config.index, err.msg);
    }
    sx_kafka_destroy(&self->kafka);
    pthread_mutex_destroy(&self->lock);
    free(self->runtime_dir);
    free(self->pair_dir);
    free(self->bootstrap);
    free(self->gateway_url);
    free(self->rest_url);
    free(self);
    *self_p = NULL;
}

const char *sx_pair_bootstrap(const sx_pair_t *self)
{
    return self->bootstrap;
}

const char *sx_pair_gateway_url(const sx_pair_t *self)
{
    return self->gateway_url;
}

const char *sx_pair_rest_url(const sx_pair_t *self)
{
    return self->rest_url;
}

bool sx_pair_owned(const sx_pair_t *self)
{
    return !self->external && self->started;
}

const char *sx_pair_dir(const sx_pair_t *self)
{
    return self->external ? NULL : self->pair_dir;
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

/* Waits until c answers its health check, its process dies or the deadline
 * (zclock_usecs). */
static int wait_healthy(sx_pair_t *self, component_t c, int64_t deadline, sx_error_t *err)
{
    const char *name = sx_pair_names[c];
    for (;;) {
        if (sx_pair_healthy(self, c))
            return 0;
        if (!self->external && !sx_pair_alive(self->pids[c])) {
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
        if (zclock_usecs() > deadline) {
            sx_error_set(err, "%s%s at %s not ready after %d s",
                         self->external ? "external " : "", name,
                         sx_pair_endpoint(self, c), self->config.start_timeout_s);
            break;
        }
        zclock_sleep(250);
    }
    if (!self->external) {
        char log[PATH_MAX];
        sx_pair_log_path(self, c, log, sizeof log);
        append_log_tail(err, log);
    }
    return -1;
}

/* ---- start ------------------------------------------------------------ */

static int check_ports_free(const sx_pair_t *self, sx_error_t *err)
{
    for (int p = 0; p < SX_PORT_COUNT; p++) {
        int port = sx_pair_port(self->config.index, (sx_pair_port_t)p);
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
                                sx_pair_port_name((sx_pair_port_t)p), strerror(code),
                                self->config.index);
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
static int format_kafka_once(sx_pair_t *self, sx_error_t *err)
{
    char meta[PATH_MAX], log[PATH_MAX];
    sx_pair_path(self, meta, sizeof meta, "kafka-data/%s", "meta.properties");
    if (access(meta, F_OK) == 0)
        return 0;
    char id[23];
    if (new_cluster_id(id, err) != 0)
        return -1;
    sx_pair_argv_t argv = {0};
    sx_pair_kafka_command(self, &argv, "kafka.tools.StorageTool");
    sx_pair_argv_add(&argv, "format");
    sx_pair_argv_add(&argv, "-t");
    sx_pair_argv_add(&argv, "%s", id);
    sx_pair_argv_add(&argv, "-c");
    sx_pair_argv_add(&argv, "%s/conf/server.properties", self->pair_dir);
    sx_pair_path(self, log, sizeof log, "logs/%s", "kafka-format.log");
    pid_t pid = sx_pair_spawn(self, argv.items, log, true, err);
    sx_pair_argv_free(&argv);
    if (pid <= 0)
        return -1;
    int status = -1;
    int64_t deadline = deadline_after(self->config.start_timeout_s);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (zclock_usecs() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            status = -1;
            break;
        }
        zclock_sleep(100);
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

/* The first job of a fresh pair pays for loading the planner and the task
 * classes, many times what the next job costs (tests/e2e/runtime.sh prints
 * both; docs/internals/measurements.md): a trivial bounded job at start
 * keeps that cost out of the first task's timeout, and proves the pair runs
 * jobs. */
static int warm_up(sx_pair_t *self, sx_error_t *err)
{
    int64_t deadline = deadline_after(self->config.start_timeout_s);
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
        if (sx_signals_caught() || zclock_usecs() > deadline) {
            rc = sx_error_set(err, "job %s not finished after %d s", job,
                              self->config.start_timeout_s);
            sx_gateway_job_cancel(gw, job, NULL);
            break;
        }
        zclock_sleep(250);
        rc = sx_gateway_job_state(gw, job, &state, err);
    }
    if (rc == 0 && state != SX_JOB_FINISHED)
        rc = sx_error_set(err, "job %s failed or was cancelled", job);
    sx_gateway_destroy(&gw);
    if (rc != 0 && self->external) {
        sx_error_prefix(err, "external pair: warm-up job");
    } else if (rc != 0) {
        sx_error_prefix(err, "pair %d: warm-up job", self->config.index);
        char log[PATH_MAX];
        sx_pair_log_path(self, TASKMANAGER, log, sizeof log);
        append_log_tail(err, log);
    }
    return rc;
}

/* An external pair may be starting with the worker (a compose file, a Helm
 * release): wait until each service answers, a TaskManager included (a job
 * submitted before one registers waits for a slot inside the task's own
 * timeout), then warm it up like a pair of our own. */
static int start_external(sx_pair_t *self, sx_error_t *err)
{
    int64_t deadline = deadline_after(self->config.start_timeout_s);
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++)
        if (wait_healthy(self, (component_t)c, deadline, err) != 0)
            return -1;
    return warm_up(self, err);
}

/* The first component of the pair that runs, 0 when none does. */
static pid_t first_running(const sx_pair_t *self, component_t *which)
{
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++) {
        pid_t pid = sx_pair_find(self, (component_t)c);
        if (pid > 0) {
            *which = (component_t)c;
            return pid;
        }
    }
    return 0;
}

int sx_pair_check_running_engine(sx_pair_t *self, sx_error_t *err)
{
    component_t c = KAFKA;
    pid_t pid = self->external ? 0 : first_running(self, &c);
    if (pid == 0)
        return 0;
    char running[SX_ENGINE_TEXT];
    sx_pair_process_engine(pid, running, sizeof running);
    if (strcmp(running, self->engine_label) == 0)
        return 0;
    return sx_error_set(err,
                        "pair %d runs %s (%s pid %d), not %s: stop it with 'streamex "
                        "runtime down --index %d' or use another pair index",
                        self->config.index, running, sx_pair_names[c], (int)pid,
                        self->has_engine ? self->engine_label : "the default engine",
                        self->config.index);
}

static int start_local(sx_pair_t *self, sx_error_t *err)
{
    if (sx_pair_need_engine(self, err) != 0)
        return -1;
    component_t c = KAFKA;
    pid_t pid = first_running(self, &c);
    if (pid > 0) {
        char running[SX_ENGINE_TEXT];
        sx_pair_process_engine(pid, running, sizeof running);
        return sx_error_set(
            err,
            "pair %d already runs (%s pid %d, engine %s): use it, or stop "
            "it with 'streamex runtime down --index %d'",
            self->config.index, sx_pair_names[c], (int)pid, running, self->config.index);
    }
    char marker[PATH_MAX];
    sx_pair_stop_marker_path(self, marker, sizeof marker);
    if (check_ports_free(self, err) != 0 || sx_pair_clear_tmp(self, err) != 0 ||
        sx_pair_write_config(self, err) != 0 || format_kafka_once(self, err) != 0)
        return -1;
    unlink(marker);
    int64_t deadline = deadline_after(self->config.start_timeout_s);
    /* The TaskManager and the Gateway need the JobManager; Kafka starts alongside. */
    if (sx_pair_launch(self, KAFKA, true, err) != 0 ||
        sx_pair_launch(self, JOBMANAGER, true, err) != 0 ||
        wait_healthy(self, JOBMANAGER, deadline, err) != 0 ||
        sx_pair_launch(self, TASKMANAGER, true, err) != 0 ||
        sx_pair_launch(self, GATEWAY, true, err) != 0)
        return -1;
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++)
        if (wait_healthy(self, (component_t)c, deadline, err) != 0)
            return -1;
    if (warm_up(self, err) != 0)
        return -1;
    sx_info("pair %d up: %s, Kafka at %s, gateway %s", self->config.index,
            self->engine_label, self->bootstrap, self->gateway_url);
    return 0;
}

int sx_pair_start(sx_pair_t *self, sx_error_t *err)
{
    if (self->external)
        return start_external(self, err);
    if (start_local(self, err) == 0)
        return 0;
    if (self->started) {
        sx_error_t stop_err;
        if (sx_pair_stop(self, &stop_err) != 0)
            sx_warn("pair %d: %s", self->config.index, stop_err.msg);
    }
    return -1;
}

/* ---- stop ------------------------------------------------------------- */

int sx_pair_stop(sx_pair_t *self, sx_error_t *err)
{
    if (self->external)
        return 0;
    char marker[PATH_MAX];
    sx_pair_stop_marker_path(self, marker, sizeof marker);
    /* Tells a watchdog in another process not to bring the JVMs back. */
    if (access(self->pair_dir, F_OK) == 0) {
        char pids_dir[PATH_MAX];
        sx_pair_path(self, pids_dir, sizeof pids_dir, "%s", "pids");
        if (sx_mkdirs(pids_dir, NULL) == 0)
            sx_pair_write_text(marker, "stop\n", NULL);
    }
    if (sx_pair_terminate(self, err) != 0)
        return -1;
    self->started = false;
    return 0;
}

/* ---- watchdog and status ---------------------------------------------- */

/* A pair `streamex runtime down` stopped stays stopped for every watch, not
 * only the first: the tasks after it end at once, rather than each waiting
 * out the Kafka and gateway timeouts of a pair that is gone. */
static int watch_components(sx_pair_t *self, sx_error_t *err)
{
    if (self->external)
        return 0;
    char marker[PATH_MAX];
    sx_pair_stop_marker_path(self, marker, sizeof marker);
    if (access(marker, F_OK) == 0) {
        self->started = false;
        return sx_error_set(err, "pair %d was stopped (streamex runtime down)",
                            self->config.index);
    }
    if (!self->started)
        return 0;
    int restarted = 0;
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++) {
        component_t c = (component_t)i;
        if (sx_pair_alive(self->pids[c]))
            continue;
        const char *name = sx_pair_names[c];
        if (++self->restarts[c] > MAX_RESTARTS) {
            sx_error_set(err, "pair %d: %s died %d times: giving up", self->config.index,
                         name, self->restarts[c]);
            char log[PATH_MAX];
            sx_pair_log_path(self, c, log, sizeof log);
            append_log_tail(err, log);
            return -1;
        }
        sx_warn("pair %d: %s (pid %d) died: restarting it (restart %d)",
                self->config.index, name, (int)self->pids[c], self->restarts[c]);
        int64_t deadline = deadline_after(self->config.start_timeout_s);
        if (sx_pair_launch(self, c, false, err) != 0 ||
            wait_healthy(self, c, deadline, err) != 0)
            return -1;
        restarted++;
    }
    /* A component that survived may need the restarted one (the TaskManager
     * registers again with a new JobManager): the pair is whole only when
     * every component answers. */
    for (int c = 0; restarted > 0 && c < SX_PAIR_COMPONENTS; c++)
        if (wait_healthy(self, (component_t)c,
                         deadline_after(self->config.start_timeout_s), err) != 0)
            return -1;
    return restarted;
}

int sx_pair_watch(sx_pair_t *self, sx_error_t *err)
{
    pthread_mutex_lock(&self->lock);
    int rc = watch_components(self, err);
    pthread_mutex_unlock(&self->lock);
    return rc;
}

/* An external pair: each service answers (the TaskManager through the
 * JobManager's count of registered ones). */
static int external_intact(sx_pair_t *self, sx_error_t *err)
{
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++)
        if (!sx_pair_healthy(self, (component_t)c))
            return sx_error_set(err, "external %s at %s does not answer",
                                sx_pair_names[c], sx_pair_endpoint(self, (component_t)c));
    return 0;
}

static int components_intact(sx_pair_t *self, const sx_pair_identity_t *since,
                             sx_error_t *err)
{
    if (self->external)
        return external_intact(self, err);
    sx_pair_identity_t now;
    sx_pair_identify(self, &now);
    for (int c = 0; c < SX_PAIR_COMPONENTS; c++) {
        const char *name = sx_pair_names[c];
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

int sx_pair_intact(sx_pair_t *self, const sx_pair_identity_t *since, sx_error_t *err)
{
    pthread_mutex_lock(&self->lock);
    int rc = components_intact(self, since, err);
    pthread_mutex_unlock(&self->lock);
    return rc;
}

int sx_pair_status(sx_pair_t *self, sx_pair_status_t *status, sx_error_t *err)
{
    (void)err;
    memset(status, 0, sizeof *status);
    status->external = self->external;
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++) {
        component_t c = (component_t)i;
        sx_pair_component_t *out = &status->components[i];
        out->name = sx_pair_names[c];
        out->restarts = self->restarts[c];
        out->pid = self->external ? 0 : sx_pair_find(self, c);
        out->running = out->pid > 0;
        out->rss_kb = out->running ? sx_pair_resident_kb(out->pid) : 0;
        out->healthy = (self->external || out->running) &&
                       !(self->external && c == TASKMANAGER) && sx_pair_healthy(self, c);
    }
    return 0;
}

/* ---- self-test -------------------------------------------------------- */

static void test_paths_and_endpoints(void)
{
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 7);
    c.runtime_dir = "/nonexistent/rt";
    sx_pair_t *rt = sx_pair_new(&c, &err);
    SX_CHECK(rt != NULL);
    SX_CHECK(strcmp(sx_pair_dir(rt), "/nonexistent/rt/pairs/7") == 0);
    SX_CHECK(strcmp(sx_pair_bootstrap(rt), "127.0.0.1:21140") == 0);
    SX_CHECK(strcmp(sx_pair_rest_url(rt), "http://127.0.0.1:21142") == 0);
    SX_CHECK(strcmp(sx_pair_gateway_url(rt), "http://127.0.0.1:21143") == 0);
    /* Starting without an install fails at once and says what to run. */
    SX_CHECK(sx_pair_start(rt, &err) == -1);
    SX_CHECK(strstr(err.msg, "scripts/setup-runtime.sh") != NULL);
    /* Nothing runs: stopping and watching are harmless. */
    SX_CHECK(sx_pair_stop(rt, &err) == 0);
    SX_CHECK(sx_pair_watch(rt, &err) == 0);
    sx_pair_status_t status;
    SX_CHECK(sx_pair_status(rt, &status, &err) == 0);
    SX_CHECK(!status.components[0].running && !status.components[3].running);
    SX_CHECK(strcmp(status.components[1].name, "jobmanager") == 0);
    sx_pair_destroy(&rt);
    SX_CHECK(rt == NULL);
    sx_pair_destroy(&rt);

    c.kafka_bootstrap = "broker:9092";
    c.flink_gateway = "http://gw:8083";
    c.flink_rest = "http://jm:8081";
    rt = sx_pair_new(&c, &err);
    SX_CHECK(rt != NULL);
    SX_CHECK(sx_pair_dir(rt) == NULL);
    SX_CHECK(strcmp(sx_pair_bootstrap(rt), "broker:9092") == 0);
    SX_CHECK(strcmp(sx_pair_gateway_url(rt), "http://gw:8083") == 0);
    sx_pair_destroy(&rt);
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

    char path[] = "/tmp/sx_pair_test_XXXXXX";
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

/* A stand-in for one component: a shell blocked on a read, with the pair's
 * markers on its command line as a JVM of the pair would have them, and its
 * pid file written as sx_pair_launch writes it. */
static pid_t spawn_fake_component(sx_pair_t *rt, component_t c, const char *engine)
{
    char *pair = sx_format("-Dsx.pair=%s", rt->pair_dir);
    char *comp = sx_format("-Dsx.component=%s", sx_pair_names[c]);
    char *eng = sx_format("-Dsx.engine=%s", engine ? engine : "");
    pid_t pid = fork();
    SX_CHECK(pid >= 0);
    if (pid == 0) {
        /* Its stdin a pipe whose write end it holds itself: the read never ends. */
        int pipefd[2];
        if (pipe(pipefd) == 0)
            dup2(pipefd[0], STDIN_FILENO);
        execl("/bin/sh", "sh", "-c", "read x", pair, comp, engine ? eng : NULL,
              (char *)NULL);
        _exit(127);
    }
    free(pair);
    free(comp);
    free(eng);
    /* The command line is the shell's only once it has exec'd. */
    int64_t deadline = deadline_after(10);
    while (!sx_pair_process_is(rt, pid, sx_pair_names[c]) && zclock_usecs() < deadline)
        zclock_sleep(5);
    SX_CHECK(sx_pair_process_is(rt, pid, sx_pair_names[c]));
    char path[PATH_MAX], text[32];
    sx_pair_pid_path(rt, c, path, sizeof path);
    snprintf(text, sizeof text, "%d\n", (int)pid);
    SX_CHECK(sx_pair_write_text(path, text, NULL) == 0);
    return pid;
}

static void kill_fake_component(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A pair stopped by `streamex runtime down` (its marker written, its
 * components gone) fails every watch after, not only the first; the
 * watchdog restarts nothing. */
static void test_stopped_pair_watched(sx_pair_t *rt)
{
    char marker[PATH_MAX];
    sx_pair_stop_marker_path(rt, marker, sizeof marker);
    SX_CHECK(sx_pair_write_text(marker, "stop\n", NULL) == 0);
    rt->started = true;
    sx_error_t err;
    for (int watch = 0; watch < 2; watch++) {
        SX_CHECK(sx_pair_watch(rt, &err) == -1);
        SX_CHECK(strcmp(err.msg, "pair 7 was stopped (streamex runtime down)") == 0);
        SX_CHECK(!rt->started);
    }
    SX_CHECK(unlink(marker) == 0);
    SX_CHECK(sx_pair_watch(rt, &err) == 0);
}

/* A component killed, or killed and started again, is a pair that changed
 * under a task: sx_pair_intact says which and how. A pair that never ran
 * is not intact either. */
static void test_identity(void)
{
    char dir[] = "/tmp/sx_pair_identity_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_pair_config_t c;
    sx_pair_config_defaults(&c, 7);
    c.runtime_dir = dir;
    sx_error_t err;
    sx_pair_t *rt = sx_pair_new(&c, &err);
    SX_CHECK(rt);
    sx_pair_identity_t before;
    sx_pair_identify(rt, &before);
    SX_CHECK(before.pid[KAFKA] == 0 && before.pid[GATEWAY] == 0);
    SX_CHECK(sx_pair_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, "pair 7: kafka is not running") == 0);

    char pids_dir[PATH_MAX];
    sx_pair_path(rt, pids_dir, sizeof pids_dir, "%s", "pids");
    SX_CHECK(sx_mkdirs(pids_dir, &err) == 0);
    pid_t pids[SX_PAIR_COMPONENTS];
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++)
        pids[i] = spawn_fake_component(rt, (component_t)i, NULL);
    sx_pair_identify(rt, &before);
    for (int i = 0; i < SX_PAIR_COMPONENTS; i++)
        SX_CHECK(before.pid[i] == pids[i] && before.started[i] > 0);
    SX_CHECK(sx_pair_intact(rt, &before, &err) == 0);

    kill_fake_component(pids[TASKMANAGER]);
    char want[256];
    snprintf(want, sizeof want, "pair 7: taskmanager (pid %d) is not running",
             (int)pids[TASKMANAGER]);
    SX_CHECK(sx_pair_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, want) == 0);
    pid_t again = spawn_fake_component(rt, TASKMANAGER, NULL);
    snprintf(want, sizeof want, "pair 7: taskmanager was restarted (pid %d, now %d)",
             (int)pids[TASKMANAGER], (int)again);
    SX_CHECK(sx_pair_intact(rt, &before, &err) == -1);
    SX_CHECK(strcmp(err.msg, want) == 0);
    pids[TASKMANAGER] = again;
    sx_pair_identify(rt, &before);
    SX_CHECK(sx_pair_intact(rt, &before, &err) == 0);

    for (int i = 0; i < SX_PAIR_COMPONENTS; i++)
        kill_fake_component(pids[i]);
    test_stopped_pair_watched(rt);
    sx_pair_destroy(&rt);
    char command[PATH_MAX + 16];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    SX_CHECK(system(command) == 0);
}

/* A running pair tells its engine (-Dsx.engine on its JVMs' command lines):
 * a pair of that engine may use it, one of another engine is refused, and
 * starting over it names the engine it runs. */
static void test_running_engine(void)
{
    char dir[] = "/tmp/sx_pair_running_XXXXXX";
    SX_CHECK(mkdtemp(dir) != NULL);
    sx_pair_test_engines(dir);
    sx_pair_config_t c;
    sx_error_t err;
    sx_pair_config_defaults(&c, 7);
    c.runtime_dir = dir;
    sx_pair_t *on120 = sx_pair_new(&c, &err);
    c.flink = "2.2";
    sx_pair_t *on22 = sx_pair_new(&c, &err);
    SX_CHECK(on120 && on22);
    /* Nothing runs: either may start it. */
    SX_CHECK(sx_pair_check_running_engine(on120, &err) == 0);
    char pids_dir[PATH_MAX];
    sx_pair_path(on22, pids_dir, sizeof pids_dir, "%s", "pids");
    SX_CHECK(sx_mkdirs(pids_dir, &err) == 0);
    pid_t kafka = spawn_fake_component(on22, KAFKA, on22->engine_label);
    SX_CHECK(sx_pair_check_running_engine(on22, &err) == 0);
    SX_CHECK(sx_pair_check_running_engine(on120, &err) == -1);
    char want[SX_ERROR_MAX];
    snprintf(
        want, sizeof want,
        "pair 7 runs flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1 (kafka pid %d), "
        "not flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1: stop it with "
        "'streamex runtime down --index 7' or use another pair index",
        (int)kafka);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_pair_start(on120, &err) == -1);
    snprintf(want, sizeof want,
             "pair 7 already runs (kafka pid %d, engine flink-2.2.1/kafka-connector-"
             "5.0.0-2.2/kafka-3.9.1): use it, or stop it with 'streamex runtime down "
             "--index 7'",
             (int)kafka);
    SX_CHECK(strcmp(err.msg, want) == 0);
    kill_fake_component(kafka);
    /* One started by a streamex that marked no engine. */
    kafka = spawn_fake_component(on22, KAFKA, NULL);
    SX_CHECK(sx_pair_check_running_engine(on22, &err) == -1);
    SX_CHECK(strncmp(err.msg, "pair 7 runs unknown (kafka pid ", 31) == 0);
    kill_fake_component(kafka);
    sx_pair_destroy(&on120);
    sx_pair_destroy(&on22);
    sx_pair_test_remove(dir);
}

void sx_pair_test(bool verbose)
{
    sx_pair_config_test(verbose);
    test_paths_and_endpoints();
    test_cluster_id_and_log_tail();
    test_identity();
    test_running_engine();
}
