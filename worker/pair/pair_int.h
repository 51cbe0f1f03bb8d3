/* pair_int.h: what the files of one worker's pair (pair.h) share, and
 * nothing outside worker/pair/ includes:
 *   pair.c     the life cycle: new/destroy, start, format, warm-up, stop,
 *              the watchdog, intact and status;
 *   config.c   what the configuration decides: ports, defaults and
 *              validation, the engine's versions, the pair's folder, its
 *              generated Kafka/Flink config files and the JVMs' command lines;
 *   process.c  the JVM processes: spawning, pid files, which process is
 *              which component, stopping them;
 *   health.c   the health checks over Kafka and HTTP. */
#ifndef SX_PAIR_INT_H
#define SX_PAIR_INT_H

#include "common/error.h"
#include "worker/clients/kafka.h"
#include "worker/pair/engine.h"
#include "worker/pair/pair.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The components, in start order; sx_pair_names holds their names. */
typedef enum { KAFKA = 0, JOBMANAGER, TASKMANAGER, GATEWAY } component_t;

extern const char *const sx_pair_names[SX_PAIR_COMPONENTS];

struct _sx_pair_t {
    sx_pair_config_t config; /* string members point into this object */
    char *runtime_dir;
    char *pair_dir;
    char *bootstrap;
    char *gateway_url;
    char *rest_url;
    bool external;
    /* The engine config.flink picks (not for an external pair); when it is
     * not installed, engine_err says so and starting fails with it. */
    bool has_engine;
    sx_engine_t engine;
    sx_error_t engine_err;
    char engine_label[SX_ENGINE_TEXT]; /* sx_engine_label, "" without one */
    bool started; /* this object launched the JVMs (stop on destroy) */
    pid_t pids[SX_PAIR_COMPONENTS];
    int restarts[SX_PAIR_COMPONENTS];
    sx_kafka_t *kafka; /* health-check client, made on first use */
    /* Held by the watchdog, identify and intact (recursive: intact
     * identifies): a worker's slots watch and check one pair from several
     * threads, and the watchdog rewrites pids[] and restarts[]. */
    pthread_mutex_t lock;
};

/* ---- config.c --------------------------------------------------------- */

/* A small file (a pid file, the install's notes, /proc); NULL when it
 * cannot be read. */
char *sx_pair_read_text(const char *path);
int sx_pair_write_text(const char *path, const char *text, sx_error_t *err);

/* 0 when the pair has its engine, else -1 with the reason (not installed). */
int sx_pair_need_engine(const sx_pair_t *self, sx_error_t *err);

/* PAIR_DIR/ followed by fmt with its arguments, e.g. ("logs/%s.log", "kafka"). */
void sx_pair_path(const sx_pair_t *self, char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sx_pair_log_path(const sx_pair_t *self, component_t c, char *out, size_t size);
void sx_pair_pid_path(const sx_pair_t *self, component_t c, char *out, size_t size);
/* The file `runtime down` leaves so that no watchdog brings the pair back. */
void sx_pair_stop_marker_path(const sx_pair_t *self, char *out, size_t size);

/* Empties the pair's temp folder: left-overs of JVMs that no longer run. */
int sx_pair_clear_tmp(const sx_pair_t *self, sx_error_t *err);
/* Makes the pair's folders and writes its Kafka and Flink config files. */
int sx_pair_write_config(const sx_pair_t *self, sx_error_t *err);

/* An argument vector (or environment) on the heap, NULL-terminated. */
typedef struct {
    char **items;
    size_t count;
    size_t cap;
} sx_pair_argv_t;

void sx_pair_argv_add(sx_pair_argv_t *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sx_pair_argv_free(sx_pair_argv_t *v);

/* The broker (main_class NULL) or one of Kafka's tools, e.g.
 * "kafka.tools.StorageTool" (its arguments are the caller's to add). */
void sx_pair_kafka_command(const sx_pair_t *self, sx_pair_argv_t *v,
                           const char *main_class);
/* The JobManager, the TaskManager or the SQL Gateway. */
int sx_pair_flink_command(const sx_pair_t *self, component_t c, sx_pair_argv_t *v,
                          sx_error_t *err);
/* The environment of a JVM: ours plus FLINK_CONF_DIR. */
void sx_pair_env(const sx_pair_t *self, sx_pair_argv_t *env);

/* ---- process.c ---------------------------------------------------------- */

/* Starts argv in its own session with stdout/stderr in log (truncated or
 * appended to), stdin from /dev/null. Unless detached, the child gets
 * SIGTERM when the calling thread dies. */
pid_t sx_pair_spawn(const sx_pair_t *self, char *const *argv, const char *log,
                    bool truncate, sx_error_t *err);
/* Starts component c and writes its pid file. */
int sx_pair_launch(sx_pair_t *self, component_t c, bool fresh_log, sx_error_t *err);
/* True while pid is a live process (a zombie counts as dead). */
bool sx_pair_alive(pid_t pid);
/* True when pid runs with this pair's marker for component `name`. */
bool sx_pair_process_is(const sx_pair_t *self, pid_t pid, const char *name);
/* The engine label on pid's command line (-Dsx.engine=LABEL) into out, or
 * "unknown" when it has none (a JVM started by an older streamex). */
void sx_pair_process_engine(pid_t pid, char *out, size_t size);
/* The live process of component c, 0 when none. */
pid_t sx_pair_find(const sx_pair_t *self, component_t c);
/* SIGTERM to every component found, SIGKILL after the grace period; removes
 * the pid files. */
int sx_pair_terminate(sx_pair_t *self, sx_error_t *err);
/* Resident memory of pid in KiB, 0 when unknown. */
long sx_pair_resident_kb(pid_t pid);

/* ---- health.c ----------------------------------------------------------- */

/* True when component c answers its health check. */
bool sx_pair_healthy(sx_pair_t *self, component_t c);
/* Where component c is checked: the bootstrap servers or a URL. */
const char *sx_pair_endpoint(const sx_pair_t *self, component_t c);

/* ---- self-tests, run by sx_pair_test ---------------------------------- */

void sx_pair_config_test(bool verbose);
/* A runtime folder DIR with two engines as scripts/setup-runtime.sh lays
 * them out: the default 1.20.3 in DIR/flink, 2.2.1 in DIR/flink-2.2, each
 * with its marker and its own Java options (2.2's lacks one --add-exports). */
void sx_pair_test_engines(const char *dir);
/* Removes DIR and everything in it. */
void sx_pair_test_remove(const char *dir);

#endif
