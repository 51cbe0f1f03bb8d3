/* fakeflink.h: a fake Flink for self-tests: one loopback HTTP server, run by
 * a thread on plain sockets, that answers the SQL Gateway and Flink REST
 * calls worker/clients/gateway.c makes (sessions, statements and their result pages,
 * job state, cancel, exceptions) from a script. It lets the executor's
 * verdict paths that a real cluster produces only by accident (a root cause
 * that cannot be read, failing state polls, a job cancelled by someone else,
 * a cancel that fails) be pinned by fast unit tests. It knows nothing of SQL:
 * a statement is an INSERT when it starts with INSERT, else DDL. */
#ifndef SX_FAKEFLINK_H
#define SX_FAKEFLINK_H

#include <stdbool.h>
#include <stddef.h>

/* The job ID the fake gives every INSERT. /jobs/overview lists it running
 * as "streamex old t1 attempt 1", beside finished and foreign jobs. */
#define SX_FAKEFLINK_JOB "fa4efa4efa4efa4efa4efa4efa4efa4e"

typedef struct {
    int session_status;       /* HTTP status of opening a session; 0 means 200 */
    const char *ddl_error;    /* Java trace of a refused DDL, or NULL */
    const char *insert_error; /* Java trace of a refused INSERT, or NULL */
    bool no_job_id;           /* an accepted INSERT whose result names no job */
    /* Job states answered in turn, comma-separated, the last one repeated;
     * "500" answers HTTP 500 instead. */
    const char *states;
    /* States once a cancel was accepted, answered in turn as `states` are
     * (e.g. "CANCELLING,CANCELED"); NULL: `states` go on. */
    const char *after_cancel;
    int cancel_status;     /* HTTP status of a cancel; 0 means 202 */
    int exceptions_status; /* HTTP status of /jobs/ID/exceptions; 0 means 200 */
    const char *root_exception;
    const char *vertex_state; /* the job's one vertex in /jobs/ID; NULL: RUNNING */
    int job_status;           /* HTTP status of /jobs/ID; 0 means 200 */
    /* TaskManager slots in /overview, "TOTAL/AVAILABLE" answered in turn as
     * `states` are (e.g. "4/3,4/4"); NULL: /overview is not found (404). */
    const char *slots;
    /* Called once, from the server thread, when the INSERT's result is
     * fetched (the moment the job starts): e.g. writes the sink topic. */
    void (*on_insert)(void *arg);
    void *arg;
} sx_fakeflink_script_t;

typedef struct _sx_fakeflink_t sx_fakeflink_t;

/* Listens on 127.0.0.1 (a free port) and serves `script` (kept by pointer)
 * until destroyed. NULL when no socket could be opened. */
sx_fakeflink_t *sx_fakeflink_new(const sx_fakeflink_script_t *script);
void sx_fakeflink_destroy(sx_fakeflink_t **self_p);

/* "http://127.0.0.1:PORT": the SQL Gateway and the Flink REST API alike. */
const char *sx_fakeflink_url(const sx_fakeflink_t *self);

/* How many requests "METHOD PATH" started with `prefix`, e.g. "PATCH /jobs/". */
int sx_fakeflink_count(sx_fakeflink_t *self, const char *prefix);

/* Tables in the session's catalog now (configure-session's CREATE TABLE,
 * refused as Flink refuses an existing table without IF NOT EXISTS; none
 * once the session is closed). */
size_t sx_fakeflink_tables(sx_fakeflink_t *self);
/* The job name (the session's pipeline.name) the last INSERT's job got. */
void sx_fakeflink_job_name(sx_fakeflink_t *self, char *out, size_t size);
/* The gateway forgets its session, as a restarted gateway does: every call
 * on it is refused ("Session ... does not exist") until one is opened. */
void sx_fakeflink_forget_session(sx_fakeflink_t *self);

void sx_fakeflink_test(bool verbose);

#endif
