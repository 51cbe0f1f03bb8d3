/* fakeflink.c: the scripted fake Flink of self-tests (see fakeflink.h). One
 * thread accepts one connection at a time and answers one request on it
 * (Connection: close), which is all libcurl needs. State that the test reads
 * (the request log) is guarded by a mutex. */
#include "tests/kit/fakeflink.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_OPERATIONS 64
#define MAX_REQUEST (1 << 20)
#define MAX_TABLES 16

struct _sx_fakeflink_t {
    const sx_fakeflink_script_t *script;
    int listener;
    char url[64];
    pthread_t thread;
    volatile bool stop;
    pthread_mutex_t lock;
    char **log; /* "METHOD PATH" of every request */
    size_t log_count;
    /* The session's catalog and job name; guarded by lock (the test reads
     * them). The session is unknown after sx_fakeflink_forget_session. */
    char tables[MAX_TABLES][64];
    size_t table_count;
    char pipeline[256];
    char job_name[256]; /* the pipeline name of the last INSERT */
    bool session_lost;
    /* Server-thread state, of the current job. */
    bool is_insert[MAX_OPERATIONS];
    int operations;
    int state_polls;
    int cancelled_polls; /* state polls since a cancel was accepted */
    bool cancelled;
    bool inserted;
    int overview_polls; /* server thread: GET /overview answered */
};

/* The cluster's jobs: a task's job of an earlier run still running, one that
 * finished, the pair's warm-up job and someone else's. */
static const char s_overview[] =
    "{\"jobs\":[{\"jid\":\"" SX_FAKEFLINK_JOB "\",\"name\":\"streamex old t1 attempt 1\","
    "\"state\":\"RUNNING\"},{\"jid\":\"0b0b\",\"name\":\"streamex old t2 attempt 1\","
    "\"state\":\"FINISHED\"},{\"jid\":\"0c0c\",\"name\":\"streamex-warm-up\","
    "\"state\":\"FINISHED\"},{\"jid\":\"0d0d\",\"name\":\"other\",\"state\":"
    "\"RUNNING\"}]}";

/* ---- one request --------------------------------------------------------- */

typedef struct {
    char method[16];
    char path[512];
    char *body; /* NUL-terminated, "" when none */
} request_t;

/* Reads one request: headers, then Content-Length bytes of body. */
static int read_request(int fd, request_t *request)
{
    char *data = sx_alloc(MAX_REQUEST + 1, 1);
    size_t size = 0;
    char *body = NULL;
    long length = 0;
    while (size < MAX_REQUEST) {
        ssize_t n = read(fd, data + size, MAX_REQUEST - size);
        if (n <= 0)
            break;
        size += (size_t)n;
        data[size] = '\0';
        if (!body && (body = strstr(data, "\r\n\r\n")) != NULL) {
            body += 4;
            char *header = strcasestr(data, "\r\ncontent-length:");
            if (header && header < body)
                length = strtol(header + 17, NULL, 10);
        }
        if (body && (long)(size - (size_t)(body - data)) >= length)
            break;
    }
    int rc = -1;
    if (body && sscanf(data, "%15s %511s", request->method, request->path) == 2) {
        request->body = sx_strdup(body);
        rc = 0;
    }
    free(data);
    return rc;
}

static void respond(int fd, int status, const char *json)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, strlen(json));
    if (write(fd, head, (size_t)n) != n || write(fd, json, strlen(json)) < 0)
        return; /* the client went away: nothing to tell it */
}

/* An error answer as Flink gives it: "errors" holds the trace. */
static void respond_error(int fd, int status, const char *trace)
{
    json_t *answer = json_pack("{s:[s,s]}", "errors", "Internal server error.", trace);
    char *text = json_dumps(answer, JSON_COMPACT);
    respond(fd, status, text);
    free(text);
    json_decref(answer);
}

/* The n-th state of the comma-separated list, the last one repeated. */
static void nth_state(const char *states, int n, char *out, size_t size)
{
    const char *p = states;
    for (int i = 0; i < n && strchr(p, ','); i++)
        p = strchr(p, ',') + 1;
    size_t len = strcspn(p, ",");
    snprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), p);
}

static bool statement_is_insert(const char *body)
{
    json_t *root = json_loads(body, 0, NULL);
    const char *statement = json_string_value(json_object_get(root, "statement"));
    bool insert = statement && strncasecmp(statement, "INSERT", 6) == 0;
    json_decref(root);
    return insert;
}

static void serve_statement(sx_fakeflink_t *self, int fd, const request_t *request)
{
    if (self->operations >= MAX_OPERATIONS)
        return respond_error(fd, 500, "fake: too many statements");
    int op = self->operations++;
    self->is_insert[op] = statement_is_insert(request->body);
    if (self->is_insert[op]) { /* a new job */
        self->state_polls = self->cancelled_polls = 0;
        self->cancelled = self->inserted = false;
        pthread_mutex_lock(&self->lock);
        snprintf(self->job_name, sizeof self->job_name, "%s", self->pipeline);
        pthread_mutex_unlock(&self->lock);
    }
    char answer[64];
    snprintf(answer, sizeof answer, "{\"operationHandle\":\"op%d\"}", op);
    respond(fd, 200, answer);
}

/* ---- the session's catalog (configure-session) --------------------------- */

/* The table name after "TABLE [IF [NOT] EXISTS] ", without backticks. */
static void table_name(const char *p, char *out, size_t size)
{
    p = strcasestr(p, "TABLE ") + 6;
    if (strncasecmp(p, "IF NOT EXISTS ", 14) == 0)
        p += 14;
    else if (strncasecmp(p, "IF EXISTS ", 10) == 0)
        p += 10;
    p += *p == '`';
    size_t n = strcspn(p, "` (");
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
}

static int find_table(const sx_fakeflink_t *self, const char *name)
{
    for (size_t i = 0; i < self->table_count; i++)
        if (strcmp(self->tables[i], name) == 0)
            return (int)i;
    return -1;
}

/* CREATE TABLE [IF NOT EXISTS]: refused when the table exists, as Flink's
 * catalog does, unless IF NOT EXISTS keeps the old one. */
static void create_table(sx_fakeflink_t *self, int fd, const char *statement)
{
    char name[64];
    table_name(statement, name, sizeof name);
    int found = find_table(self, name);
    if (found < 0 && self->table_count < MAX_TABLES) {
        snprintf(self->tables[self->table_count++], sizeof self->tables[0], "%s", name);
    } else if (found >= 0 && !strcasestr(statement, "IF NOT EXISTS")) {
        return respond_error(fd, 500,
                             "org.apache.flink.table.api.ValidationException: Could not "
                             "execute CreateTable\nCaused by: org.apache.flink.table."
                             "catalog.exceptions.TableAlreadyExistException: Table (or "
                             "view) exists.\n");
    }
    respond(fd, 200, "{}");
}

static void serve_configure(sx_fakeflink_t *self, int fd, const request_t *request)
{
    json_t *root = json_loads(request->body, 0, NULL);
    const char *statement = json_string_value(json_object_get(root, "statement"));
    pthread_mutex_lock(&self->lock);
    if (!statement)
        respond_error(fd, 400, "fake: no statement");
    else if (strncasecmp(statement, "CREATE ", 7) == 0 && self->script->ddl_error)
        respond_error(fd, 500, self->script->ddl_error);
    else if (strncasecmp(statement, "CREATE ", 7) == 0)
        create_table(self, fd, statement);
    else
        respond_error(fd, 500, "fake: configure-session takes no such statement");
    pthread_mutex_unlock(&self->lock);
    json_decref(root);
}

static void serve_result(sx_fakeflink_t *self, int fd, int op)
{
    const sx_fakeflink_script_t *script = self->script;
    if (op < 0 || op >= self->operations)
        return respond_error(fd, 404, "fake: no such operation");
    if (!self->is_insert[op]) {
        if (script->ddl_error)
            return respond_error(fd, 500, script->ddl_error);
        return respond(
            fd, 200,
            "{\"resultType\":\"EOS\",\"results\":{\"columns\":[{\"name\":"
            "\"result\"}],\"data\":[{\"kind\":\"INSERT\",\"fields\":[\"OK\"]}]}}");
    }
    if (script->insert_error)
        return respond_error(fd, 500, script->insert_error);
    if (script->no_job_id)
        return respond(fd, 200, "{\"resultType\":\"EOS\"}");
    if (!self->inserted && script->on_insert)
        script->on_insert(script->arg);
    self->inserted = true;
    respond(fd, 200, "{\"resultType\":\"PAYLOAD\",\"jobID\":\"" SX_FAKEFLINK_JOB "\"}");
}

static void serve_state(sx_fakeflink_t *self, int fd)
{
    const sx_fakeflink_script_t *script = self->script;
    char state[32];
    if (self->cancelled && script->after_cancel)
        nth_state(script->after_cancel, self->cancelled_polls++, state, sizeof state);
    else
        nth_state(script->states ? script->states : "RUNNING", self->state_polls++, state,
                  sizeof state);
    if (strcmp(state, "500") == 0)
        return respond_error(fd, 500, "fake: the JobManager is not there");
    char answer[64];
    snprintf(answer, sizeof answer, "{\"status\":\"%s\"}", state);
    respond(fd, 200, answer);
}

/* The cluster's overview: its TaskManager slots, the script's next. */
static void serve_cluster_overview(sx_fakeflink_t *self, int fd)
{
    char slots[32];
    nth_state(self->script->slots, self->overview_polls++, slots, sizeof slots);
    int total = 0, available = 0;
    sscanf(slots, "%d/%d", &total, &available);
    char answer[128];
    snprintf(answer, sizeof answer,
             "{\"taskmanagers\":1,\"slots-total\":%d,\"slots-available\":%d}", total,
             available);
    respond(fd, 200, answer);
}

static void serve_exceptions(sx_fakeflink_t *self, int fd)
{
    const sx_fakeflink_script_t *script = self->script;
    int status = script->exceptions_status ? script->exceptions_status : 200;
    if (status != 200)
        return respond_error(fd, status, "fake: exceptions unavailable");
    json_t *answer = json_pack("{s:s?}", "root-exception", script->root_exception);
    char *text = json_dumps(answer, JSON_COMPACT);
    respond(fd, 200, text);
    free(text);
    json_decref(answer);
}

static void serve_job(sx_fakeflink_t *self, int fd)
{
    if (self->script->job_status)
        return respond_error(fd, self->script->job_status, "fake: job unavailable");
    const char *state =
        self->script->vertex_state ? self->script->vertex_state : "RUNNING";
    char answer[256];
    snprintf(answer, sizeof answer,
             "{\"jid\":\"" SX_FAKEFLINK_JOB "\",\"vertices\":[{\"name\":\"Source\","
             "\"status\":\"%s\"}]}",
             state);
    respond(fd, 200, answer);
}

/* A new session starts with an empty catalog; its pipeline.name property
 * names its jobs. */
static void open_session(sx_fakeflink_t *self, int fd, const request_t *request)
{
    json_t *root = json_loads(request->body, 0, NULL);
    const char *name = json_string_value(
        json_object_get(json_object_get(root, "properties"), "pipeline.name"));
    pthread_mutex_lock(&self->lock);
    self->session_lost = false;
    self->table_count = 0;
    snprintf(self->pipeline, sizeof self->pipeline, "%s", name ? name : "");
    pthread_mutex_unlock(&self->lock);
    json_decref(root);
    respond(fd, 200, "{\"sessionHandle\":\"fake-session\"}");
}

/* The session's catalog goes with it. */
static void close_session(sx_fakeflink_t *self, int fd)
{
    pthread_mutex_lock(&self->lock);
    self->session_lost = true;
    self->table_count = 0;
    pthread_mutex_unlock(&self->lock);
    respond(fd, 200, "{}");
}

static bool session_lost(sx_fakeflink_t *self)
{
    pthread_mutex_lock(&self->lock);
    bool lost = self->session_lost;
    pthread_mutex_unlock(&self->lock);
    return lost;
}

static void serve(sx_fakeflink_t *self, int fd, const request_t *request)
{
    const char *m = request->method, *p = request->path;
    int op = -1;
    if (strcmp(m, "POST") == 0 && strcmp(p, "/v1/sessions") == 0 &&
        self->script->session_status)
        respond_error(fd, self->script->session_status, "fake: no session");
    else if (strcmp(m, "POST") == 0 && strcmp(p, "/v1/sessions") == 0)
        open_session(self, fd, request);
    else if (strstr(p, "/fake-session") && session_lost(self))
        respond_error(fd, 500,
                      "org.apache.flink.table.gateway.api.utils.SqlGatewayException: "
                      "Session 'fake-session' does not exist.\n");
    else if (strcmp(m, "POST") == 0 && strstr(p, "/configure-session"))
        serve_configure(self, fd, request);
    else if (strcmp(m, "POST") == 0 && strstr(p, "/statements"))
        serve_statement(self, fd, request);
    else if (strcmp(m, "GET") == 0 &&
             sscanf(p, "/v1/sessions/fake-session/operations/op%d", &op) == 1)
        serve_result(self, fd, op);
    else if (strcmp(m, "DELETE") == 0 && strcmp(p, "/v1/sessions/fake-session") == 0)
        close_session(self, fd);
    else if (strcmp(m, "DELETE") == 0 && strncmp(p, "/v1/sessions/", 13) == 0)
        respond(fd, 200, "{}");
    else if (strcmp(m, "GET") == 0 && strcmp(p, "/jobs/" SX_FAKEFLINK_JOB "/status") == 0)
        serve_state(self, fd);
    else if (strcmp(m, "PATCH") == 0 && strncmp(p, "/jobs/" SX_FAKEFLINK_JOB, 38) == 0) {
        int status = self->script->cancel_status ? self->script->cancel_status : 202;
        self->cancelled = self->cancelled || status == 202;
        respond(fd, status, "{}");
    } else if (strcmp(m, "GET") == 0 &&
               strcmp(p, "/jobs/" SX_FAKEFLINK_JOB "/exceptions") == 0)
        serve_exceptions(self, fd);
    else if (strcmp(m, "GET") == 0 && strcmp(p, "/jobs/" SX_FAKEFLINK_JOB) == 0)
        serve_job(self, fd);
    else if (strcmp(m, "GET") == 0 && strcmp(p, "/jobs/overview") == 0)
        respond(fd, 200, s_overview);
    else if (strcmp(m, "GET") == 0 && strcmp(p, "/overview") == 0 && self->script->slots)
        serve_cluster_overview(self, fd);
    else
        respond_error(fd, 404, "fake: not found");
}

/* ---- the server ---------------------------------------------------------- */

static void log_request(sx_fakeflink_t *self, const request_t *request)
{
    size_t size = strlen(request->method) + strlen(request->path) + 2;
    char *line = sx_alloc(size, 1);
    snprintf(line, size, "%s %s", request->method, request->path);
    pthread_mutex_lock(&self->lock);
    self->log = sx_realloc(self->log, self->log_count + 1, sizeof *self->log);
    self->log[self->log_count++] = line;
    pthread_mutex_unlock(&self->lock);
}

static void *server_thread(void *arg)
{
    sx_fakeflink_t *self = arg;
    while (!self->stop) {
        struct pollfd pfd = {self->listener, POLLIN, 0};
        if (poll(&pfd, 1, 50) != 1)
            continue;
        int fd = accept(self->listener, NULL, NULL);
        if (fd < 0)
            continue;
        request_t request;
        if (read_request(fd, &request) == 0) {
            log_request(self, &request);
            serve(self, fd, &request);
            free(request.body);
        }
        close(fd);
    }
    return NULL;
}

sx_fakeflink_t *sx_fakeflink_new(const sx_fakeflink_script_t *script)
{
    sx_fakeflink_t *self = sx_new(sx_fakeflink_t);
    self->script = script;
    pthread_mutex_init(&self->lock, NULL);
    self->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (self->listener < 0 || bind(self->listener, (struct sockaddr *)&addr, len) != 0 ||
        listen(self->listener, 16) != 0 ||
        getsockname(self->listener, (struct sockaddr *)&addr, &len) != 0 ||
        pthread_create(&self->thread, NULL, server_thread, self) != 0) {
        if (self->listener >= 0)
            close(self->listener);
        pthread_mutex_destroy(&self->lock);
        free(self);
        return NULL;
    }
    snprintf(self->url, sizeof self->url, "http://127.0.0.1:%d", ntohs(addr.sin_port));
    return self;
}

void sx_fakeflink_destroy(sx_fakeflink_t **self_p)
{
    sx_fakeflink_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    self->stop = true;
    pthread_join(self->thread, NULL);
    close(self->listener);
    for (size_t i = 0; i < self->log_count; i++)
        free(self->log[i]);
    free(self->log);
    pthread_mutex_destroy(&self->lock);
    free(self);
    *self_p = NULL;
}

const char *sx_fakeflink_url(const sx_fakeflink_t *self)
{
    return self->url;
}

int sx_fakeflink_count(sx_fakeflink_t *self, const char *prefix)
{
    int count = 0;
    pthread_mutex_lock(&self->lock);
    for (size_t i = 0; i < self->log_count; i++)
        count += strncmp(self->log[i], prefix, strlen(prefix)) == 0;
    pthread_mutex_unlock(&self->lock);
    return count;
}

size_t sx_fakeflink_tables(sx_fakeflink_t *self)
{
    pthread_mutex_lock(&self->lock);
    size_t count = self->table_count;
    pthread_mutex_unlock(&self->lock);
    return count;
}

void sx_fakeflink_job_name(sx_fakeflink_t *self, char *out, size_t size)
{
    pthread_mutex_lock(&self->lock);
    snprintf(out, size, "%s", self->job_name);
    pthread_mutex_unlock(&self->lock);
}

void sx_fakeflink_forget_session(sx_fakeflink_t *self)
{
    pthread_mutex_lock(&self->lock);
    self->session_lost = true;
    pthread_mutex_unlock(&self->lock);
}

/* ---- self-test: the fake answers as the client expects ------------------- */

void sx_fakeflink_test(bool verbose)
{
    (void)verbose;
    char state[32];
    nth_state("RUNNING,500,FAILED", 0, state, sizeof state);
    SX_CHECK(strcmp(state, "RUNNING") == 0);
    nth_state("RUNNING,500,FAILED", 1, state, sizeof state);
    SX_CHECK(strcmp(state, "500") == 0);
    nth_state("RUNNING,500,FAILED", 9, state, sizeof state);
    SX_CHECK(strcmp(state, "FAILED") == 0);
    SX_CHECK(statement_is_insert("{\"statement\":\"insert into x select 1\"}"));
    SX_CHECK(!statement_is_insert("{\"statement\":\"CREATE TABLE x\"}"));
    sx_fakeflink_script_t script = {.states = "RUNNING"};
    sx_fakeflink_t *fake = sx_fakeflink_new(&script);
    SX_CHECK(fake && strncmp(sx_fakeflink_url(fake), "http://127.0.0.1:", 17) == 0);
    SX_CHECK(sx_fakeflink_count(fake, "GET") == 0);
    sx_fakeflink_destroy(&fake);
    SX_CHECK(fake == NULL);
    sx_fakeflink_destroy(&fake);
}
