/* pair.h: one worker's own Kafka + Flink pair (docs/install.md). The pair
 * is four JVMs started from the install of scripts/setup-runtime.sh (no
 * Flink or Kafka shell scripts): a one-node KRaft Kafka broker, a Flink
 * JobManager (standalone session cluster), a TaskManager and the SQL Gateway.
 * Each pair has its own ports and its own folder .runtime/pairs/INDEX/ (conf,
 * Kafka data, logs, pid files), both derived from the worker index, so
 * several pairs run side by side on one host. A pair can also be external:
 * the worker then only checks the Kafka bootstrap servers, SQL Gateway and
 * Flink REST it was given and starts nothing. This header is the room's
 * public face; inside worker/pair/: pair.c (the life cycle), config.c
 * (configuration and generated files), process.c (the JVM processes),
 * health.c (health checks), tied by pair_int.h, which only they include;
 * engine.c (engine.h) says which Flink engine of the install a pair runs.
 *
 * Port layout (other modules and people rely on it): base = 21000 + 20*index;
 * Kafka broker base+0, KRaft controller base+1, Flink REST base+2, SQL Gateway
 * base+3, JobManager RPC base+4, blob server base+5, TaskManager RPC base+6,
 * TaskManager data base+7, metric query services base+8 and base+9. */
#ifndef SX_PAIR_H
#define SX_PAIR_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SX_PAIR_PORT_BASE 21000
#define SX_PAIR_PORT_STRIDE 20
/* Keeps every pair's ports below 25000, clear of the kernel's ephemeral range. */
#define SX_PAIR_MAX_INDEX 199

typedef enum {
    SX_PORT_KAFKA = 0,
    SX_PORT_KAFKA_CONTROLLER,
    SX_PORT_FLINK_REST,
    SX_PORT_GATEWAY,
    SX_PORT_JOBMANAGER_RPC,
    SX_PORT_BLOB,
    SX_PORT_TASKMANAGER_RPC,
    SX_PORT_TASKMANAGER_DATA,
    SX_PORT_JOBMANAGER_METRICS,
    SX_PORT_TASKMANAGER_METRICS,
    SX_PORT_COUNT
} sx_pair_port_t;

/* The port `which` of pair `index` (see the layout above). */
int sx_pair_port(int index, sx_pair_port_t which);
/* What a port is for, e.g. "Flink REST". */
const char *sx_pair_port_name(sx_pair_port_t which);

typedef struct {
    int index;               /* worker index: ports and folder */
    const char *runtime_dir; /* NULL: the default of common/install.h */
    /* The engine (worker/pair/engine.h): NULL or "" the one in effect
     * ($SX_FLINK, else the default), else a Flink version X.Y[.Z] (`--flink
     * 2.2`). An external pair runs its own. */
    const char *flink;
    int slots; /* TaskManager slots */
    /* JVM heaps in MiB. The TaskManager also gets 128 MiB framework heap,
     * managed memory, 64 MiB network buffers and 256 MiB metaspace. */
    int kafka_heap_mb;
    int jobmanager_heap_mb;
    int taskmanager_heap_mb;
    int taskmanager_managed_mb;
    int gateway_heap_mb;
    int start_timeout_s; /* bound on starting (or restarting) the pair */
    int stop_grace_s;    /* SIGTERM, then SIGKILL after this */
    /* false: the JVMs get SIGTERM when the process that started them dies
     * (no orphans; PR_SET_PDEATHSIG, which fires when the *thread* that
     * called sx_pair_start ends, so call it from a thread that lives as
     * long as the pair); true: they outlive it (`runtime up --detach`). */
    bool detached;
    /* External pair: all three or none. Nothing is started then. */
    const char *kafka_bootstrap; /* "host:port[,...]" */
    const char *flink_gateway;   /* "http://host:port" */
    const char *flink_rest;      /* "http://host:port" */
} sx_pair_config_t;

/* Defaults for a 24 GiB machine shared by several pairs: 4 slots, Kafka
 * 512 MiB, JobManager 512 MiB, TaskManager 512 MiB task heap + 256 MiB
 * managed, Gateway 512 MiB, 180 s to start, 20 s to stop. */
void sx_pair_config_defaults(sx_pair_config_t *config, int index);
/* 0 when the values are usable; else err names the bad one. */
int sx_pair_config_validate(const sx_pair_config_t *config, sx_error_t *err);

/* One component's state as sx_pair_status sees it. */
typedef struct {
    const char *name; /* "kafka", "jobmanager", "taskmanager", "gateway" */
    pid_t pid;        /* 0 when not running (or external) */
    bool running;     /* a live process of this pair (always false if external) */
    bool healthy;     /* answered its health check */
    long rss_kb;      /* resident memory, 0 when unknown */
    int restarts;     /* restarts done by this object's watchdog */
} sx_pair_component_t;

#define SX_PAIR_COMPONENTS 4

typedef struct {
    sx_pair_component_t components[SX_PAIR_COMPONENTS];
    bool external;
} sx_pair_status_t;

typedef struct _sx_pair_t sx_pair_t;

/* Checks the config and resolves folders, endpoints and the engine; starts
 * nothing. An engine asked for by config->flink that is not installed is
 * refused here (err names the setup command); the default engine may be
 * missing until the pair starts (status and stop need no install). */
sx_pair_t *sx_pair_new(const sx_pair_config_t *config, sx_error_t *err);
/* Stops the pair if this object started it and it is not detached. */
void sx_pair_destroy(sx_pair_t **self_p);

/* Starts the pair and returns once every component passed its health check
 * (Kafka metadata through librdkafka, Flink REST /overview with a registered
 * TaskManager, SQL Gateway /v1/info) and a trivial warm-up job finished
 * (so the first task does not pay Flink's cold start). Checks the install, refuses a pair
 * that already runs (naming the engine it runs) or a port in use, formats
 * Kafka's storage on the first start. Every JVM carries -Dsx.engine=LABEL
 * (sx_engine_label), so a running pair tells its engine. On failure stops
 * what it started; err names the component and holds the tail of its log.
 * For an external pair: only the health checks. */
int sx_pair_start(sx_pair_t *self, sx_error_t *err);

/* Stops every JVM of the pair, whoever started it (found through the pid
 * files, checked against each process's command line): SIGTERM, then
 * SIGKILL after the grace period. A pair that does not run is fine. */
int sx_pair_stop(sx_pair_t *self, sx_error_t *err);

/* sx_pair_watch, sx_pair_identify and sx_pair_intact may be called
 * from several threads at once (a worker's slots share one pair); each
 * holds the pair's lock, the watchdog for as long as a restart takes.
 *
 * The watchdog: restarts every component this object started that has died
 * and, when it restarted any, waits until the whole pair is healthy again (a
 * restarted JobManager is only useful once the TaskManager registered with
 * it). Returns the number restarted, or -1
 * when a restart failed (err says which and why). Call it periodically. */
int sx_pair_watch(sx_pair_t *self, sx_error_t *err);

/* Which process each component of a pair is: its pid and the start time the
 * kernel gives it (so a pid reused by another process is not taken for the
 * same one). pid 0: not running, or an external pair (no processes seen). */
typedef struct {
    pid_t pid[SX_PAIR_COMPONENTS];
    unsigned long long started[SX_PAIR_COMPONENTS]; /* clock ticks since boot */
} sx_pair_identity_t;

/* Records the current process of every component. */
void sx_pair_identify(sx_pair_t *self, sx_pair_identity_t *identity);

/* 0 when the pair is whole and unchanged since `since` was recorded: every
 * component alive and the very process it was then. An external pair has no
 * processes to compare: every service must answer its health check. Else -1
 * and err names the first component that is not, e.g. "pair 40: kafka (pid
 * 123) is not running" or "pair 40: jobmanager was restarted (pid 123, now
 * 456)". A failure seen then is the pair's, not the query's. */
int sx_pair_intact(sx_pair_t *self, const sx_pair_identity_t *since, sx_error_t *err);

/* Fills *status: each component's process and health. */
int sx_pair_status(sx_pair_t *self, sx_pair_status_t *status, sx_error_t *err);

/* Endpoints for the executor. */
const char *sx_pair_bootstrap(const sx_pair_t *self);   /* "127.0.0.1:21000" */
const char *sx_pair_gateway_url(const sx_pair_t *self); /* "http://127.0.0.1:21003" */
const char *sx_pair_rest_url(const sx_pair_t *self);    /* "http://127.0.0.1:21002" */
/* True when this object started the pair's JVMs (so nobody else uses it). */
bool sx_pair_owned(const sx_pair_t *self);
/* The pair's folder (conf, kafka-data, logs, pids); NULL for an external pair. */
const char *sx_pair_dir(const sx_pair_t *self);

/* Describes the install in runtime_dir (NULL: the default), for `streamex
 * check`: "Flink 1.20.3 (Kafka connector 3.4.0-1.20), Kafka 3.9.1 in DIR"
 * and 0, followed by "; also --flink 2.2: Flink 2.2.1 (...), Kafka 3.9.1"
 * for each other engine installed; or "not installed: run
 * scripts/setup-runtime.sh (...)" and -1. */
int sx_pair_describe_install(const char *runtime_dir, char *out, size_t out_size);
/* What this pair runs, for the worker's HELLO (its "runtime"): first the
 * engine that computes its results, one word, then any detail after a
 * space. A pair started from the install: its engine's label,
 * "flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1"; an external pair:
 * the Flink version its REST API reports, "flink-1.20.3/external (Kafka at
 * HOST:PORT)" (streamex cannot vouch for its connector). */
void sx_pair_describe(const sx_pair_t *self, char *out, size_t out_size);

/* The versions of a pair started from the install, "Flink 1.20.3 (Kafka
 * connector 3.4.0-1.20), Kafka 3.9.1", read from its own engine's marker
 * (what the result cache keys on, so an entry of one engine never serves
 * another); -1 for an external pair, whose versions streamex cannot vouch
 * for, and for an engine not installed. */
int sx_pair_versions(const sx_pair_t *self, char *out, size_t out_size, sx_error_t *err);

/* 0 when none of the pair's components runs or those that run carry this
 * object's engine; else -1 and err says which engine the running pair has
 * ("pair 3 runs flink-1.20.3/... (jobmanager pid 123), not flink-2.2.1/...:
 * ..."), so that a pair of one engine is never used for another. An
 * external pair: 0. */
int sx_pair_check_running_engine(sx_pair_t *self, sx_error_t *err);

void sx_pair_test(bool verbose);

#endif
