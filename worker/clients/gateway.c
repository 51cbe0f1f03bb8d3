/* gateway.c: SQL Gateway and Flink REST calls (see gateway.h). Every call is
 * one blocking HTTP request on a reused curl handle, bounded by timeout_ms.
 * The statement API is asynchronous: POST returns an operation handle and
 * the result (or the error, with the whole Java stack trace) comes from
 * polling its first result page, which is where the job ID of an INSERT
 * shows up. The trace helpers turn those traces into one readable line. */
#include "worker/clients/gateway.h"

#include "common/log.h"
#include "common/mem.h"
#include "common/selftest.h"
#include "common/signals.h"
#include "worker/clients/http.h"

#include <czmq.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MS 100
/* How long a statement may take to be accepted (an INSERT: planned and its
 * job submitted). The job's own run time is bounded by the task timeout. */
#define STATEMENT_WAIT_MS 120000
/* How long a failed job's exception may take to show in Flink's REST cache. */
#define EXCEPTION_WAIT_MS 5000

struct _sx_gateway_t {
    char *gateway_url;
    char *rest_url;
    int timeout_ms;
    CURL *curl;
    char session[128]; /* open session handle, "" when none */
};

/* ---- trace reading: pure, tested on canned traces ------------------------ */

/* If line (after an optional "Caused by: ") starts with a Java class name
 * followed by ':' or the end of the line, returns where that class starts;
 * *caused tells whether it was a "Caused by:" line. */
static const char *exception_class(const char *line, size_t *class_len, bool *caused)
{
    const char *p = line;
    if (*p == '<')
        p++;
    *caused = strncmp(p, "Caused by: ", 11) == 0;
    if (*caused)
        p += 11;
    size_t n = 0, dots = 0;
    for (; p[n] &&
           strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.",
                  p[n]);
         n++)
        dots += p[n] == '.';
    if (n == 0 || dots == 0 || (p[n] != ':' && p[n] != '\n' && p[n] != '\0'))
        return NULL;
    *class_len = n;
    return p;
}

static bool class_is_table_api(const char *cls, size_t len)
{
    static const char prefix[] = "org.apache.flink.table.api.";
    return len > sizeof prefix - 1 && strncmp(cls, prefix, sizeof prefix - 1) == 0;
}

/* Copies the rest of the line at p into out, trimmed of spaces and a
 * trailing '>' (the REST API wraps server-side traces in <...>). */
static void copy_line(const char *p, char *out, size_t out_size)
{
    size_t n = strcspn(p, "\r\n");
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '>'))
        n--;
    snprintf(out, out_size, "%.*s", (int)n, p);
}

void sx_gateway_summarize_trace(const char *trace, char *out, size_t out_size)
{
    const char *first = NULL, *innermost = NULL, *table_api = NULL;
    for (const char *line = trace; line && *line;) {
        size_t len = 0;
        bool caused = false;
        const char *cls = exception_class(line, &len, &caused);
        if (cls) {
            /* A table.api exception whose message is just a wrapper says nothing. */
            bool wrapper = strncmp(cls + len, ": Failed to execute sql", 23) == 0;
            if (!first)
                first = cls;
            if (caused)
                innermost = cls;
            if (class_is_table_api(cls, len) && !wrapper)
                table_api = cls;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    const char *best = table_api ? table_api : innermost ? innermost : first;
    if (best)
        copy_line(best, out, out_size);
    else
        copy_line(trace ? trace : "", out, out_size);
}

bool sx_gateway_trace_is_infra(const char *trace)
{
    static const char *const markers[] = {
        "JobSubmissionException",
        "java.net.ConnectException",
        "NoResourceAvailableException",
        "Could not find any factory for identifier", /* a connector jar is missing */
        "SqlGatewayException: Session '",            /* the session itself vanished */
        /* The broker unreachable from the job ("Timeout of 60000ms expired
         * before the position for partition ... could be determined"): the
         * topics are the worker's, so no query can cause these. */
        "org.apache.kafka.common.errors.TimeoutException",
        "org.apache.kafka.common.errors.NetworkException",
        "org.apache.kafka.common.errors.DisconnectException",
        /* A lost TaskManager: "TaskManager with id X is no longer reachable",
         * "Heartbeat of TaskManager with id X timed out". */
        "TaskManager with id ",
    };
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++)
        if (strstr(trace, markers[i]))
            return true;
    return false;
}

/* True when the trace shows Flink's SQL layer refusing the statement (as
 * opposed to the gateway failing on its own). */
static bool trace_is_sql(const char *trace)
{
    static const char *const layers[] = {
        "org.apache.flink.table.api.", "org.apache.flink.table.planner.",
        "org.apache.flink.sql.parser.", "org.apache.calcite."};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        if (strstr(trace, layers[i]))
            return true;
    return false;
}

/* The "errors" array of a REST error answer joined by newlines (heap). */
static char *errors_text(const json_t *response)
{
    json_t *errors = json_object_get(response, "errors");
    size_t total = 1, i;
    json_t *item;
    json_array_foreach(errors, i, item)
    {
        if (json_is_string(item))
            total += json_string_length(item) + 1;
    }
    char *text = sx_alloc(total, 1);
    json_array_foreach(errors, i, item)
    {
        if (json_is_string(item)) {
            strcat(text, json_string_value(item));
            strcat(text, "\n");
        }
    }
    return text;
}

/* Classifies an HTTP error answer to a statement call and fills err with
 * its one-line reason. */
static sx_gateway_rc_t classify_failure(const json_t *response, long status,
                                        const char *what, sx_error_t *err)
{
    char *text = errors_text(response);
    if (!*text) {
        free(text);
        sx_error_set(err, "%s: HTTP %ld with no error message", what, status);
        return SX_GATEWAY_INFRA_ERROR;
    }
    char line[1024];
    sx_gateway_summarize_trace(text, line, sizeof line);
    sx_gateway_rc_t rc = !sx_gateway_trace_is_infra(text) && trace_is_sql(text)
                             ? SX_GATEWAY_SQL_ERROR
                             : SX_GATEWAY_INFRA_ERROR;
    free(text);
    if (rc == SX_GATEWAY_SQL_ERROR)
        sx_error_set(err, "%s", line);
    else
        sx_error_set(err, "%s: HTTP %ld: %s", what, status, line);
    return rc;
}

/* The job ID in a statement's first result page: the "jobID" field of
 * recent gateways, else the single "job id" column of an INSERT's result. */
static void result_job_id(const json_t *page, char *job_id)
{
    job_id[0] = '\0';
    const char *direct = json_string_value(json_object_get(page, "jobID"));
    if (direct) {
        snprintf(job_id, SX_JOB_ID_SIZE, "%s", direct);
        return;
    }
    json_t *results = json_object_get(page, "results");
    json_t *column = json_array_get(json_object_get(results, "columns"), 0);
    const char *name = json_string_value(json_object_get(column, "name"));
    json_t *row = json_array_get(json_object_get(results, "data"), 0);
    const char *value =
        json_string_value(json_array_get(json_object_get(row, "fields"), 0));
    if (name && strcmp(name, "job id") == 0 && value)
        snprintf(job_id, SX_JOB_ID_SIZE, "%s", value);
}

static int job_state_parse(const char *name, sx_job_state_t *state)
{
    if (!name)
        return -1;
    if (strcmp(name, "FINISHED") == 0)
        *state = SX_JOB_FINISHED;
    else if (strcmp(name, "FAILED") == 0)
        *state = SX_JOB_FAILED;
    else if (strcmp(name, "CANCELED") == 0)
        *state = SX_JOB_CANCELED;
    else
        *state = SX_JOB_RUNNING;
    return 0;
}

/* The root exception's trace in a /jobs/ID/exceptions answer. */
static const char *exceptions_trace(const json_t *answer)
{
    const char *root = json_string_value(json_object_get(answer, "root-exception"));
    if (root)
        return root;
    json_t *entries =
        json_object_get(json_object_get(answer, "exceptionHistory"), "entries");
    return json_string_value(json_object_get(json_array_get(entries, 0), "stacktrace"));
}

/* ---- HTTP ---------------------------------------------------------------- */

/* One request. Returns 0 with *status and *response (parsed JSON, or NULL
 * for an empty or non-JSON body), or -1 when no HTTP answer came at all. */
static int http(sx_gateway_t *self, const char *method, const char *url,
                const json_t *body, long *status, json_t **response, sx_error_t *err)
{
    *response = NULL;
    char *payload = body ? json_dumps(body, JSON_COMPACT) : NULL;
    sx_http_answer_t answer;
    int rc =
        sx_http_request(self->curl, method, url, payload, self->timeout_ms, &answer, err);
    free(payload);
    if (rc != 0)
        return -1;
    *status = answer.status;
    *response = json_loads(answer.body, 0, NULL);
    free(answer.body);
    return 0;
}

/* A request that must succeed with a JSON answer (2xx); anything else is
 * infra trouble described in err. */
static json_t *http_ok(sx_gateway_t *self, const char *method, const char *url,
                       const json_t *body, sx_error_t *err)
{
    long status = 0;
    json_t *response = NULL;
    if (http(self, method, url, body, &status, &response, err) != 0)
        return NULL;
    if (status / 100 == 2 && response)
        return response;
    char *what = sx_format("%s %s", method, url);
    classify_failure(response, status, what, err);
    free(what);
    json_decref(response);
    return NULL;
}

sx_gateway_t *sx_gateway_new(const char *gateway_url, const char *rest_url,
                             int timeout_ms, sx_error_t *err)
{
    if (!gateway_url || !rest_url || timeout_ms <= 0) {
        sx_error_set(err, "gateway client needs both URLs and a positive timeout");
        return NULL;
    }
    sx_gateway_t *self = sx_new(sx_gateway_t);
    self->gateway_url = sx_strdup(gateway_url);
    self->rest_url = sx_strdup(rest_url);
    self->timeout_ms = timeout_ms;
    self->curl = sx_http_handle();
    if (!self->curl) {
        sx_error_set(err, "out of memory"); /* curl_easy_init fails on nothing else */
        sx_gateway_destroy(&self);
    }
    return self;
}

void sx_gateway_destroy(sx_gateway_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_gateway_t *self = *self_p;
    if (self->session[0] && self->curl) {
        sx_error_t err;
        if (sx_gateway_close_session(self, &err) != 0)
            sx_warn("%s", err.msg);
    }
    if (self->curl)
        curl_easy_cleanup(self->curl);
    free(self->gateway_url);
    free(self->rest_url);
    free(self);
    *self_p = NULL;
}

int sx_gateway_check(sx_gateway_t *self, sx_error_t *err)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/v1/info", self->gateway_url);
    json_t *answer = http_ok(self, "GET", url, NULL, err);
    if (!answer)
        return sx_error_prefix(err, "Flink SQL Gateway"), -1;
    json_decref(answer);
    snprintf(url, sizeof url, "%s/overview", self->rest_url);
    answer = http_ok(self, "GET", url, NULL, err);
    if (!answer)
        return sx_error_prefix(err, "Flink REST API"), -1;
    json_decref(answer);
    return 0;
}

int sx_gateway_open_session(sx_gateway_t *self, const char *pipeline_name,
                            sx_error_t *err)
{
    if (self->session[0] && sx_gateway_close_session(self, err) != 0)
        return -1;
    json_t *body =
        json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "properties",
                  "execution.runtime-mode", "streaming",
                  "table.dynamic-table-options.enabled", "false", "parallelism.default",
                  "1", "restart-strategy.type", "none", "table.local-time-zone", "UTC",
                  "pipeline.name", pipeline_name ? pipeline_name : "streamex");
    char url[1024];
    snprintf(url, sizeof url, "%s/v1/sessions", self->gateway_url);
    json_t *answer = http_ok(self, "POST", url, body, err);
    json_decref(body);
    if (!answer)
        return sx_error_prefix(err, "opening a SQL Gateway session"), -1;
    const char *handle = json_string_value(json_object_get(answer, "sessionHandle"));
    int rc =
        handle ? 0 : sx_error_set(err, "POST %s: no sessionHandle in the answer", url);
    if (handle)
        snprintf(self->session, sizeof self->session, "%s", handle);
    json_decref(answer);
    return rc;
}

int sx_gateway_close_session(sx_gateway_t *self, sx_error_t *err)
{
    if (!self->session[0])
        return 0;
    char url[1024];
    snprintf(url, sizeof url, "%s/v1/sessions/%s", self->gateway_url, self->session);
    self->session[0] = '\0';
    json_t *answer = http_ok(self, "DELETE", url, NULL, err);
    if (!answer)
        return sx_error_prefix(err, "closing SQL Gateway session"), -1;
    json_decref(answer);
    return 0;
}

const char *sx_gateway_session(const sx_gateway_t *self)
{
    return self->session;
}

void sx_gateway_detach_session(sx_gateway_t *self)
{
    self->session[0] = '\0';
}

/* Polls the operation's first result page until it is ready. */
static sx_gateway_rc_t await_result(sx_gateway_t *self, const char *operation,
                                    char *job_id, sx_error_t *err)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/v1/sessions/%s/operations/%s/result/0",
             self->gateway_url, self->session, operation);
    int64_t deadline = zclock_mono() + STATEMENT_WAIT_MS;
    /* DDL is ready within milliseconds, an INSERT within a second or two:
     * start polling fast and back off to POLL_MS. */
    int pause_ms = 5;
    for (;;) {
        long status = 0;
        json_t *page = NULL;
        if (http(self, "GET", url, NULL, &status, &page, err) != 0)
            return SX_GATEWAY_INFRA_ERROR;
        if (status != 200 || !page) {
            sx_gateway_rc_t rc = classify_failure(page, status, "statement result", err);
            json_decref(page);
            return rc;
        }
        const char *type = json_string_value(json_object_get(page, "resultType"));
        if (!type || strcmp(type, "NOT_READY") != 0) {
            result_job_id(page, job_id);
            json_decref(page);
            return SX_GATEWAY_OK;
        }
        json_decref(page);
        if (sx_signals_caught()) {
            sx_error_set(err, "interrupted by signal %d", sx_signals_caught());
            return SX_GATEWAY_INFRA_ERROR;
        }
        if (zclock_mono() > deadline) {
            sx_error_set(err, "statement not accepted within %d s",
                         STATEMENT_WAIT_MS / 1000);
            return SX_GATEWAY_INFRA_ERROR;
        }
        zclock_sleep(pause_ms);
        pause_ms = pause_ms * 2 < POLL_MS ? pause_ms * 2 : POLL_MS;
    }
}

static void close_operation(sx_gateway_t *self, const char *operation)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/v1/sessions/%s/operations/%s/close", self->gateway_url,
             self->session, operation);
    sx_error_t err;
    json_t *answer = http_ok(self, "DELETE", url, NULL, &err);
    if (!answer)
        sx_debug("closing operation %s: %s", operation, err.msg);
    json_decref(answer);
}

/* POSTs {"statement": ...} to `call` (e.g. "v1/.../statements") of the open
 * session: 0 with the HTTP status and answer, -1 (err set) without a
 * session or without an answer. */
static int post_statement(sx_gateway_t *self, const char *version, const char *call,
                          const char *statement, long *status, json_t **answer,
                          sx_error_t *err)
{
    if (!self->session[0])
        return sx_error_set(err, "no SQL Gateway session is open");
    char url[1024];
    snprintf(url, sizeof url, "%s/%s/sessions/%s/%s", self->gateway_url, version,
             self->session, call);
    json_t *body = json_pack("{s:s}", "statement", statement);
    int sent = http(self, "POST", url, body, status, answer, err);
    json_decref(body);
    return sent;
}

sx_gateway_rc_t sx_gateway_execute(sx_gateway_t *self, const char *statement,
                                   char *job_id, sx_error_t *err)
{
    char ignored[SX_JOB_ID_SIZE];
    job_id = job_id ? job_id : ignored;
    job_id[0] = '\0';
    long status = 0;
    json_t *answer = NULL;
    if (post_statement(self, "v1", "statements", statement, &status, &answer, err) != 0)
        return SX_GATEWAY_INFRA_ERROR;
    const char *operation = json_string_value(json_object_get(answer, "operationHandle"));
    if (status != 200 || !operation) {
        sx_gateway_rc_t rc =
            classify_failure(answer, status, "submitting a statement", err);
        json_decref(answer);
        return rc;
    }
    char op[128];
    snprintf(op, sizeof op, "%s", operation);
    json_decref(answer);
    sx_gateway_rc_t rc = await_result(self, op, job_id, err);
    close_operation(self, op);
    return rc;
}

sx_gateway_rc_t sx_gateway_configure(sx_gateway_t *self, const char *statement,
                                     sx_error_t *err)
{
    /* Answered once the statement has run: one request, where a statement
     * takes three (submit, fetch the result, close the operation). */
    long status = 0;
    json_t *answer = NULL;
    if (post_statement(self, "v2", "configure-session", statement, &status, &answer,
                       err) != 0)
        return SX_GATEWAY_INFRA_ERROR;
    sx_gateway_rc_t rc =
        status == 200 ? SX_GATEWAY_OK
                      : classify_failure(answer, status, "configuring the session", err);
    json_decref(answer);
    return rc;
}

int sx_gateway_job_state(sx_gateway_t *self, const char *job_id, sx_job_state_t *state,
                         sx_error_t *err)
{
    /* /jobs/ID/status asks the dispatcher; /jobs/ID is served from a cache
     * refreshed every web.refresh-interval (3 s), which would add up to 3 s
     * to every task. */
    char url[1024];
    snprintf(url, sizeof url, "%s/jobs/%s/status", self->rest_url, job_id);
    json_t *answer = http_ok(self, "GET", url, NULL, err);
    if (!answer)
        return -1;
    const char *name = json_string_value(json_object_get(answer, "status"));
    int rc = job_state_parse(name, state) == 0
                 ? 0
                 : sx_error_set(err, "GET %s: no job state in the answer", url);
    json_decref(answer);
    return rc;
}

int sx_gateway_job_cancel(sx_gateway_t *self, const char *job_id, sx_error_t *err)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/jobs/%s?mode=cancel", self->rest_url, job_id);
    long status = 0;
    json_t *answer = NULL;
    if (http(self, "PATCH", url, NULL, &status, &answer, err) != 0)
        return -1;
    json_decref(answer);
    /* 202 accepted; 409 and 404 mean it is no longer running: fine too. */
    if (status / 100 == 2 || status == 404 || status == 409)
        return 0;
    return sx_error_set(err, "PATCH %s: HTTP %ld", url, status);
}

int sx_gateway_job_waiting(sx_gateway_t *self, const char *job_id, char *waiting,
                           size_t size, sx_error_t *err)
{
    static const char *const waiting_states[] = {"CREATED", "SCHEDULED", "DEPLOYING",
                                                 "INITIALIZING"};
    snprintf(waiting, size, "%s", "");
    char url[1024];
    snprintf(url, sizeof url, "%s/jobs/%s", self->rest_url, job_id);
    json_t *answer = http_ok(self, "GET", url, NULL, err);
    if (!answer)
        return -1;
    size_t i;
    json_t *vertex;
    json_array_foreach(json_object_get(answer, "vertices"), i, vertex)
    {
        const char *state = json_string_value(json_object_get(vertex, "status"));
        for (size_t k = 0; state && !waiting[0] && k < 4; k++)
            if (strcmp(state, waiting_states[k]) == 0)
                snprintf(waiting, size, "%s", state);
    }
    json_decref(answer);
    return 0;
}

int sx_gateway_running_jobs(sx_gateway_t *self, const char *name_prefix,
                            char (**ids)[SX_JOB_ID_SIZE], size_t *count, sx_error_t *err)
{
    *ids = NULL;
    *count = 0;
    char url[1024];
    snprintf(url, sizeof url, "%s/jobs/overview", self->rest_url);
    json_t *answer = http_ok(self, "GET", url, NULL, err);
    if (!answer)
        return -1;
    json_t *jobs = json_object_get(answer, "jobs");
    *ids = sx_alloc(json_array_size(jobs) + 1, sizeof **ids);
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        const char *id = json_string_value(json_object_get(job, "jid"));
        const char *name = json_string_value(json_object_get(job, "name"));
        sx_job_state_t state;
        if (!id || !name || strncmp(name, name_prefix, strlen(name_prefix)) != 0 ||
            job_state_parse(json_string_value(json_object_get(job, "state")), &state) !=
                0 ||
            state != SX_JOB_RUNNING)
            continue;
        snprintf((*ids)[(*count)++], SX_JOB_ID_SIZE, "%s", id);
    }
    json_decref(answer);
    return 0;
}

int sx_gateway_job_root_cause(sx_gateway_t *self, const char *job_id, char *out,
                              size_t out_size, bool *infra, sx_error_t *err)
{
    *infra = false;
    /* This endpoint is cached (see sx_gateway_job_state): right after the
     * job failed it may still show no exception, so ask again for a while. */
    char url[1024];
    snprintf(url, sizeof url, "%s/jobs/%s/exceptions", self->rest_url, job_id);
    int64_t deadline = zclock_mono() + EXCEPTION_WAIT_MS;
    for (;;) {
        json_t *answer = http_ok(self, "GET", url, NULL, err);
        if (!answer)
            return -1;
        const char *trace = exceptions_trace(answer);
        if (trace) {
            sx_gateway_summarize_trace(trace, out, out_size);
            *infra = sx_gateway_trace_is_infra(trace);
        }
        json_decref(answer);
        if (trace)
            return 0;
        if (zclock_mono() > deadline) {
            snprintf(out, out_size, "job %s failed; Flink recorded no exception", job_id);
            return 0;
        }
        zclock_sleep(POLL_MS * 2);
    }
}

/* ---- self-test: canned answers of Flink 1.20, and an unreachable gateway -- */

static const char s_parse_error[] =
    "<Exception on server side:\n"
    "org.apache.flink.table.gateway.api.utils.SqlGatewayException: "
    "org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to "
    "fetchResults.\n"
    "\tat org.apache.flink.table.gateway.rest.handler.statement.FetchResultsHandler."
    "handleRequest(FetchResultsHandler.java:91)\n"
    "Caused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: "
    "Failed to execute the operation 1b2c.\n"
    "\tat org.apache.flink.table.gateway.service.operation.OperationManager$Operation."
    "processThrowable(OperationManager.java:414)\n"
    "Caused by: org.apache.flink.table.api.SqlParserException: SQL parse failed. "
    "Encountered \"FROMM\" at line 1, column 28.\n"
    "Was expecting one of:\n"
    "    <EOF> \n"
    "\tat "
    "org.apache.flink.table.planner.parse.CalciteParser.parseSqlList(CalciteParser.java:"
    "81)\n"
    "Caused by: org.apache.flink.sql.parser.impl.ParseException: Encountered \"FROMM\" "
    "at "
    "line 1, column 28.\n"
    "\t... 12 more\n"
    "\nEnd of exception on server side>";

static const char s_validation_error[] =
    "org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to "
    "execute "
    "the operation x.\n"
    "Caused by: org.apache.flink.table.api.ValidationException: SQL validation failed. "
    "From "
    "line 1, column 8 to line 1, column 12: Column 'nope' not found in any table\n"
    "\tat org.apache.flink.table.planner.calcite.FlinkPlannerImpl.validate(X.java:1)\n"
    "Caused by: org.apache.calcite.runtime.CalciteContextException: From line 1, column "
    "8 to "
    "line 1, column 12: Column 'nope' not found in any table\n"
    "Caused by: org.apache.calcite.sql.validate.SqlValidatorException: Column 'nope' not "
    "found in any table\n";

static const char s_job_failure[] =
    "org.apache.flink.runtime.JobException: Recovery is suppressed by "
    "NoRestartBackoffTimeStrategy\n"
    "\tat "
    "org.apache.flink.runtime.executiongraph.failover.ExecutionFailureHandler.x(X.java:1)"
    "\n"
    "Caused by: java.lang.NumberFormatException: For input string: \"abc\". Invalid "
    "character found.\n"
    "\tat "
    "org.apache.flink.table.data.binary.BinaryStringDataUtil.numberFormatExceptionFor("
    "BinaryStringDataUtil.java:585)\n";

static const char s_submit_failure[] =
    "org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to "
    "execute "
    "the operation y.\n"
    "Caused by: org.apache.flink.table.api.TableException: Failed to execute sql\n"
    "Caused by: org.apache.flink.util.FlinkException: Failed to execute job 'q'.\n"
    "Caused by: org.apache.flink.runtime.client.JobSubmissionException: Failed to submit "
    "JobGraph.\n"
    "Caused by: java.net.ConnectException: Connection refused\n";

static void test_summaries(void)
{
    char line[512];
    sx_gateway_summarize_trace(s_parse_error, line, sizeof line);
    SX_CHECK(strcmp(line,
                    "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                    "Encountered \"FROMM\" at line 1, column 28.") == 0);
    sx_gateway_summarize_trace(s_validation_error, line, sizeof line);
    SX_CHECK(strncmp(line,
                     "org.apache.flink.table.api.ValidationException: SQL validation",
                     62) == 0);
    SX_CHECK(strstr(line, "Column 'nope' not found in any table") != NULL);
    sx_gateway_summarize_trace(s_job_failure, line, sizeof line);
    SX_CHECK(strcmp(line, "java.lang.NumberFormatException: For input string: \"abc\". "
                          "Invalid character found.") == 0);
    sx_gateway_summarize_trace(s_submit_failure, line, sizeof line);
    SX_CHECK(strcmp(line, "java.net.ConnectException: Connection refused") == 0);
    sx_gateway_summarize_trace("something odd happened\nat line 2", line, sizeof line);
    SX_CHECK(strcmp(line, "something odd happened") == 0);
    sx_gateway_summarize_trace(s_parse_error, line, 20);
    SX_CHECK(strlen(line) == 19);
    SX_CHECK(!sx_gateway_trace_is_infra(s_parse_error));
    SX_CHECK(!sx_gateway_trace_is_infra(s_validation_error));
    SX_CHECK(sx_gateway_trace_is_infra(s_submit_failure));
    SX_CHECK(!sx_gateway_trace_is_infra(s_job_failure));
    /* A job that never got a slot, a session the gateway lost: not the query. */
    SX_CHECK(sx_gateway_trace_is_infra(
        "org.apache.flink.runtime.JobException: Recovery is suppressed\nCaused by: "
        "org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: "
        "Could not acquire the minimum required resources.\n"));
    SX_CHECK(sx_gateway_trace_is_infra(
        "org.apache.flink.table.gateway.api.utils.SqlGatewayException: Session "
        "'0a1b' does not exist.\n"));
    /* The broker killed under a running job (issue 12), a TaskManager lost. */
    SX_CHECK(sx_gateway_trace_is_infra(
        "org.apache.flink.runtime.JobException: Recovery is suppressed\nCaused by: "
        "org.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired "
        "before the position for partition sx.r.sb10_vwap.1.trades-0 could be "
        "determined\n"));
    /* The same on Flink 2.2, whose Kafka connector (5.0.0-2.2) shades the
     * client (docs/internals/flink-2.md). */
    SX_CHECK(sx_gateway_trace_is_infra(
        "org.apache.flink.runtime.JobException: Recovery is suppressed\nCaused by: "
        "org.apache.flink.kafka.shaded.org.apache.kafka.common.errors.TimeoutException: "
        "Timeout of 60000ms expired before the position for partition "
        "sx.r.sb10_vwap.1.trades-0 could be determined\n"));
    SX_CHECK(sx_gateway_trace_is_infra(
        "org.apache.flink.runtime.JobException: Recovery is suppressed\nCaused by: "
        "org.apache.flink.runtime.jobmaster.JobMasterException: TaskManager with id "
        "127.0.0.1:21046-5b3f1c is no longer reachable.\n"));
    SX_CHECK(sx_gateway_trace_is_infra(
        "Caused by: java.util.concurrent.TimeoutException: Heartbeat of TaskManager with "
        "id 127.0.0.1:21046-5b3f1c timed out.\n"));
}

static json_t *errors_answer(const char *trace)
{
    return json_pack("{s:[s,s]}", "errors", "Internal server error.", trace);
}

static void test_classification(void)
{
    sx_error_t err;
    json_t *answer = errors_answer(s_validation_error);
    SX_CHECK(classify_failure(answer, 500, "x", &err) == SX_GATEWAY_SQL_ERROR);
    SX_CHECK(strstr(err.msg, "Column 'nope'") && !strstr(err.msg, "\tat "));
    json_decref(answer);
    answer = errors_answer(s_submit_failure);
    SX_CHECK(classify_failure(answer, 500, "statement result", &err) ==
             SX_GATEWAY_INFRA_ERROR);
    SX_CHECK(strstr(err.msg, "statement result: HTTP 500: java.net.ConnectException"));
    json_decref(answer);
    /* The gateway failing on its own (no SQL layer in the trace) is infra. */
    answer =
        errors_answer("org.apache.flink.table.gateway.api.utils.SqlGatewayException: "
                      "Failed to getSession.\n");
    SX_CHECK(classify_failure(answer, 500, "x", &err) == SX_GATEWAY_INFRA_ERROR);
    json_decref(answer);
    SX_CHECK(classify_failure(NULL, 502, "x", &err) == SX_GATEWAY_INFRA_ERROR);
    SX_CHECK(strstr(err.msg, "HTTP 502"));
}

static void test_result_pages(void)
{
    char job[SX_JOB_ID_SIZE];
    json_t *page = json_loads(
        "{\"results\":{\"columns\":[{\"name\":\"job id\",\"logicalType\":{\"type\":"
        "\"VARCHAR\"}}],\"data\":[{\"kind\":\"INSERT\",\"fields\":"
        "[\"3f1bb8a1c0de4e7b9a4c2b1f00000001\"]}]},\"resultType\":\"PAYLOAD\"}",
        0, NULL);
    SX_CHECK(page);
    result_job_id(page, job);
    SX_CHECK(strcmp(job, "3f1bb8a1c0de4e7b9a4c2b1f00000001") == 0);
    json_object_set_new(page, "jobID", json_string("feedfeedfeedfeedfeedfeedfeedfeed"));
    result_job_id(page, job);
    SX_CHECK(strcmp(job, "feedfeedfeedfeedfeedfeedfeedfeed") == 0);
    json_decref(page);
    page = json_loads(
        "{\"results\":{\"columns\":[{\"name\":\"result\"}],\"data\":[{\"kind\":"
        "\"INSERT\",\"fields\":[\"OK\"]}]},\"resultType\":\"EOS\"}",
        0, NULL);
    result_job_id(page, job);
    SX_CHECK(job[0] == '\0');
    json_decref(page);
    sx_job_state_t state = SX_JOB_FAILED;
    SX_CHECK(job_state_parse("RUNNING", &state) == 0 && state == SX_JOB_RUNNING);
    SX_CHECK(job_state_parse("FINISHED", &state) == 0 && state == SX_JOB_FINISHED);
    SX_CHECK(job_state_parse("FAILED", &state) == 0 && state == SX_JOB_FAILED);
    SX_CHECK(job_state_parse("CANCELED", &state) == 0 && state == SX_JOB_CANCELED);
    SX_CHECK(job_state_parse(NULL, &state) == -1);
    json_t *answer = json_pack("{s:{s:[{s:s}]}}", "exceptionHistory", "entries",
                               "stacktrace", s_job_failure);
    SX_CHECK(exceptions_trace(answer) &&
             strstr(exceptions_trace(answer), "NumberFormatException"));
    json_decref(answer);
}

/* Nothing listens on port 1: every call fails fast as infra trouble. */
static void test_unreachable(void)
{
    sx_error_t err;
    sx_gateway_t *gateway =
        sx_gateway_new("http://127.0.0.1:1", "http://127.0.0.1:1", 2000, &err);
    SX_CHECK(gateway);
    SX_CHECK(sx_gateway_check(gateway, &err) == -1);
    SX_CHECK(strstr(err.msg, "Flink SQL Gateway") && strstr(err.msg, "127.0.0.1:1"));
    SX_CHECK(sx_gateway_open_session(gateway, "t", &err) == -1);
    char job[SX_JOB_ID_SIZE];
    SX_CHECK(sx_gateway_execute(gateway, "SELECT 1", job, &err) ==
             SX_GATEWAY_INFRA_ERROR);
    SX_CHECK(strstr(err.msg, "no SQL Gateway session"));
    sx_job_state_t state;
    SX_CHECK(sx_gateway_job_state(gateway, "abc", &state, &err) == -1);
    SX_CHECK(sx_gateway_job_cancel(gateway, "abc", &err) == -1);
    sx_gateway_destroy(&gateway);
    SX_CHECK(gateway == NULL);
    sx_gateway_destroy(&gateway);
    SX_CHECK(sx_gateway_new(NULL, "x", 1, &err) == NULL);
}

void sx_gateway_test(bool verbose)
{
    (void)verbose;
    test_summaries();
    test_classification();
    test_result_pages();
    test_unreachable();
}
