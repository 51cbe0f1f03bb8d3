/* gateway.h: the worker's client of the Flink SQL Gateway REST API (sessions,
 * statements) and of Flink's REST API (job state, cancel, exceptions), on
 * libcurl + jansson. Its main job besides the HTTP calls is to tell a wrong
 * query from a broken cluster: a statement Flink refuses is
 * SX_GATEWAY_SQL_ERROR with Flink's own one-line reason (e.g.
 * "org.apache.flink.table.api.ValidationException: SQL validation failed.
 * ... Column 'x' not found ..."), never a stack trace; an unreachable
 * service, an unexpected HTTP answer or a job submission failure is
 * SX_GATEWAY_INFRA_ERROR. One sx_gateway_t holds at most one open session. */
#ifndef SX_GATEWAY_H
#define SX_GATEWAY_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SX_GATEWAY_OK = 0,
    SX_GATEWAY_SQL_ERROR,   /* Flink rejected or failed the statement */
    SX_GATEWAY_INFRA_ERROR, /* the gateway or cluster could not do its part */
} sx_gateway_rc_t;

typedef enum {
    SX_JOB_RUNNING = 0, /* created, initializing, running, restarting ... */
    SX_JOB_FINISHED,
    SX_JOB_FAILED,
    SX_JOB_CANCELED,
} sx_job_state_t;

#define SX_JOB_ID_SIZE 64

typedef struct _sx_gateway_t sx_gateway_t;

/* gateway_url e.g. "http://127.0.0.1:21043", rest_url the Flink REST API;
 * timeout_ms bounds each HTTP request (not a whole job). */
sx_gateway_t *sx_gateway_new(const char *gateway_url, const char *rest_url,
                             int timeout_ms, sx_error_t *err);
/* Closes the open session, if any. */
void sx_gateway_destroy(sx_gateway_t **self_p);

/* 0 when both the gateway and the Flink REST API answer. */
int sx_gateway_check(sx_gateway_t *self, sx_error_t *err);

/* Opens a session in STREAMING mode with dynamic table options disabled,
 * parallelism 1, no restarts, UTC; pipeline_name names the jobs. Returns -1
 * (infra trouble) with err set on failure. */
int sx_gateway_open_session(sx_gateway_t *self, const char *pipeline_name,
                            sx_error_t *err);
/* Closes the session (a no-op without one). */
int sx_gateway_close_session(sx_gateway_t *self, sx_error_t *err);
/* The open session's handle, "" without one. */
const char *sx_gateway_session(const sx_gateway_t *self);
/* Forgets the open session without closing it, so it stays on the gateway
 * (until the gateway's idle timeout) for someone to inspect. */
void sx_gateway_detach_session(sx_gateway_t *self);

/* Runs one statement in the open session and waits for its result. For an
 * INSERT, job_id (SX_JOB_ID_SIZE bytes, may be NULL) receives the job ID of
 * the submitted job, else "". */
sx_gateway_rc_t sx_gateway_execute(sx_gateway_t *self, const char *statement,
                                   char *job_id, sx_error_t *err);

/* Runs one statement that changes the open session and returns no rows
 * (SET, RESET, CREATE TABLE, DROP TABLE ...; the gateway refuses others)
 * through the gateway's configure-session call, answered when it has run:
 * the same outcomes as sx_gateway_execute, in one request instead of three. */
sx_gateway_rc_t sx_gateway_configure(sx_gateway_t *self, const char *statement,
                                     sx_error_t *err);

int sx_gateway_job_state(sx_gateway_t *self, const char *job_id, sx_job_state_t *state,
                         sx_error_t *err);
/* Asks Flink to cancel the job (already finished is fine). */
int sx_gateway_job_cancel(sx_gateway_t *self, const char *job_id, sx_error_t *err);
/* Whether every task of the job got a slot and started: *waiting receives
 * the state of the first vertex still waiting (CREATED, SCHEDULED,
 * DEPLOYING, INITIALIZING), or "" when none is. */
int sx_gateway_job_waiting(sx_gateway_t *self, const char *job_id, char *waiting,
                           size_t size, sx_error_t *err);
/* The IDs of the jobs that still run (not finished, failed or cancelled)
 * whose name starts with name_prefix; a heap array, count in *count. */
int sx_gateway_running_jobs(sx_gateway_t *self, const char *name_prefix,
                            char (**ids)[SX_JOB_ID_SIZE], size_t *count, sx_error_t *err);

/* The failed job's root cause as one line (see sx_gateway_summarize_trace);
 * *infra tells whether the cluster rather than the query was at fault (e.g.
 * no slot for the job). */
int sx_gateway_job_root_cause(sx_gateway_t *self, const char *job_id, char *out,
                              size_t out_size, bool *infra, sx_error_t *err);

/* Reduces a Java stack trace to the one line that says what is wrong: the
 * innermost org.apache.flink.table.api exception (where Flink states SQL
 * errors with their position) if there is one, else the innermost
 * "Caused by:", else the first exception line; only its first line, trimmed. */
void sx_gateway_summarize_trace(const char *trace, char *out, size_t out_size);
/* True when a failed statement's trace shows the cluster, not the SQL, at
 * fault (job submission failed, connection refused, no resources ...). */
bool sx_gateway_trace_is_infra(const char *trace);

void sx_gateway_test(bool verbose);

#endif
