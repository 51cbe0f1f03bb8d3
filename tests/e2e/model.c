/* model.c: the model-based test of the distributed run (tests/cli/model.sh).
 * For each seed it builds a small bench whose SQL carries the simulated
 * executor's markers, so every task's verdict is known in advance, then runs
 * `streamex coordinator` and `streamex worker --simulate` processes under a
 * seeded random schedule: workers join, pause (SIGSTOP) beyond the dead-after
 * time and resume, are killed and restarted (spool resent), a hostile peer in
 * this process says HELLO under alternating names, replays stale and forged
 * RESULTs and asks for files it does not need, the coordinator is killed and
 * resumed, a coordinator or a worker runs out of disk (RLIMIT_FSIZE: writes
 * fail with EFBIG). After the schedule it checks that the run ended by
 * itself, every ID is in results.jsonl and submission.jsonl exactly once in
 * task_ids order with the expected status, and summary.json equals the
 * summary computed from the markers.
 *
 * usage: e2e_model STREAMEX [--seeds N] [--first S] [--keep] [--verbose]
 * Exits 0 when every seed passed; prints each failing seed.
 *        e2e_model --hostile ENDPOINT BENCH SECONDS
 * runs only the hostile peer against a run someone else started. */
#include "common/files.h"
#include "common/results/result.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"
#include "tests/kit/testbench.h"
#include "proto/proto.h"

#include <czmq.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BEAT_MS 100
#define DEAD_MS 600
#define RUN_DEADLINE_MS 90000
#define MAX_WORKERS 8

static const char *s_streamex;
static bool s_verbose;

typedef struct {
    pid_t pid;
    char name[32];
} proc_t;

typedef struct {
    unsigned seed, rng;
    char *bench;
    char out[PATH_MAX], endpoint[PATH_MAX + 16], log_dir[PATH_MAX];
    size_t tasks;
    sx_bench_t *ids; /* the bench's task IDs, for the hostile peer */
    const char **markers;
    proc_t coordinator;
    bool coordinator_done; /* it exited 0 by itself */
    proc_t workers[MAX_WORKERS];
    size_t worker_count, next_worker;
    zsock_t *forger;
    zlist_t *stale; /* sx_msg_task_t* the forger once held: answers to old tokens */
    int forger_names;
    int restarts, pauses, kills, forgeries, disk_full, coordinator_kills;
} model_t;

static unsigned next_rand(model_t *m)
{
    m->rng = m->rng * 1103515245u + 12345u;
    return (m->rng >> 16) & 0x7fff;
}

static int pick(model_t *m, int n)
{
    return (int)(next_rand(m) % (unsigned)n);
}

/* ---- processes --------------------------------------------------------- */

/* Starts streamex with argv; fsize > 0 limits the size of any file it
 * writes (a full disk as far as the process can tell). */
static pid_t spawn(model_t *m, const char *log_name, rlim_t fsize, char *const argv[])
{
    char log[PATH_MAX + 64];
    snprintf(log, sizeof log, "%s/%s.log", m->log_dir, log_name);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* no stray worker outlives this test */
        FILE *out = fopen(log, "a");
        if (out) {
            dup2(fileno(out), 1);
            dup2(fileno(out), 2);
        }
        if (fsize > 0) {
            signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
            struct rlimit limit = {fsize, fsize};
            setrlimit(RLIMIT_FSIZE, &limit);
        }
        execv(s_streamex, argv);
        _exit(127);
    }
    return pid;
}

static void start_coordinator(model_t *m, bool resume, rlim_t fsize)
{
    char method[PATH_MAX + 16];
    snprintf(method, sizeof method, "m=%s/preds.jsonl", m->bench);
    char shard[16];
    snprintf(shard, sizeof shard, "%d", 1 + (int)(m->seed % 3));
    char *argv[] = {(char *)s_streamex,
                    "coordinator",
                    "--bench",
                    m->bench,
                    "--method",
                    method,
                    "--output",
                    m->out,
                    "--bind",
                    m->endpoint,
                    "--shard-size",
                    shard,
                    "--heartbeat-ms",
                    "100",
                    "--dead-after-ms",
                    "600",
                    "--retries",
                    "100",
                    resume ? "--resume" : NULL,
                    NULL};
    m->coordinator.pid = spawn(m, "coordinator", fsize, argv);
    m->coordinator_done = false;
}

/* Workers run 1 + seed % 3 tasks at once (--slots), from the seed alone so
 * that the schedule a seed draws stays the same. */
static void start_worker(model_t *m, proc_t *w, rlim_t fsize)
{
    char dir[PATH_MAX + 64], delay[32], slots[16];
    snprintf(dir, sizeof dir, "%s/%s", m->log_dir, w->name);
    snprintf(delay, sizeof delay, "delay_ms=%d", pick(m, 40));
    snprintf(slots, sizeof slots, "%u", 1 + m->seed % 3);
    char *argv[] = {(char *)s_streamex,
                    "worker",
                    "--connect",
                    m->endpoint,
                    "--name",
                    w->name,
                    "--capacity",
                    (char *)(pick(m, 2) ? "1" : "2"),
                    "--slots",
                    slots,
                    "--work-dir",
                    dir,
                    "--simulate",
                    delay,
                    "--heartbeat-ms",
                    "100",
                    "--dead-after-ms",
                    "600",
                    NULL};
    w->pid = spawn(m, w->name, fsize, argv);
}

/* Exit status of a process that ended (-1: still running, after timeout_ms). */
static int wait_exit(pid_t pid, int timeout_ms)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    while (true) {
        int status = 0;
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (zclock_mono() >= deadline)
            return -1;
        zclock_sleep(10);
    }
}

static void kill_proc(proc_t *p)
{
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGKILL);
    wait_exit(p->pid, 5000);
    p->pid = 0;
}

/* ---- the hostile peer -------------------------------------------------- */

static void forger_send(model_t *m, sx_msg_t *msg)
{
    sx_msg_send(msg, m->forger, NULL, NULL);
    sx_msg_destroy(&msg);
}

static void forger_hello(model_t *m)
{
    char name[32];
    /* Alternating names, now and then one of an honest worker. */
    if (pick(m, 4) == 0 && m->next_worker > 0)
        snprintf(name, sizeof name, "w%d", pick(m, (int)m->next_worker));
    else
        snprintf(name, sizeof name, "forger%d", m->forger_names++ % 2);
    forger_send(
        m, sx_msg_hello(name, 1 + pick(m, 2), 1 + (int)(m->seed % 3), "forged runtime"));
}

static void forger_result(model_t *m, const char *task_id, uint64_t token, int attempt)
{
    static const sx_status_t statuses[] = {SX_STATUS_MATCH, SX_STATUS_INFRA_ERROR,
                                           SX_STATUS_MISMATCH};
    sx_msg_t *msg = sx_msg_new(SX_MSG_RESULT);
    msg->method = strdup("m");
    sx_result_init(&msg->result, task_id, statuses[pick(m, 3)], "forged", NULL);
    msg->result.attempts = attempt;
    msg->token = token;
    free(msg->result.worker);
    msg->result.worker = strdup("forger");
    sx_msg_set_data(msg, "x\n0\n", 4);
    forger_send(m, msg);
    m->forgeries++;
}

/* Reads what the coordinator sent; remembers the tasks it was given (their
 * tokens go stale at the next HELLO). */
static void forger_drain(model_t *m)
{
    while (zsock_events(m->forger) & ZMQ_POLLIN) {
        sx_msg_t *msg = sx_msg_recv(m->forger, NULL, NULL);
        if (msg && msg->type == SX_MSG_ASSIGN)
            for (size_t i = 0; i < msg->task_count; i++) {
                sx_msg_task_t *copy = calloc(1, sizeof *copy);
                copy->task_id = strdup(msg->tasks[i].task_id);
                copy->token = msg->tasks[i].token;
                copy->attempt = msg->tasks[i].attempt;
                zlist_append(m->stale, copy);
                if (zlist_size(m->stale) > 20) { /* replays of the last few */
                    sx_msg_task_t *old = zlist_pop(m->stale);
                    free(old->task_id);
                    free(old);
                }
            }
        sx_msg_destroy(&msg);
    }
}

/* One burst of hostility. Never a RESULT with a token the forger currently
 * holds (that would be a legitimate answer): only old tokens (after a new
 * HELLO), random ones, and tasks it never held. */
static void forger_act(model_t *m)
{
    if (!m->forger) {
        m->forger = zsock_new_dealer(m->endpoint);
        zsock_set_sndtimeo(m->forger, 100);
        zsock_set_linger(m->forger, 0);
    }
    forger_drain(m);
    forger_hello(m); /* every token it was given is stale from here on */
    for (sx_msg_task_t *t = zlist_first(m->stale); t; t = zlist_next(m->stale))
        if (pick(m, 2) == 0)
            forger_result(m, t->task_id, t->token, t->attempt);
    const char *id = sx_bench_task_id(m->ids, (size_t)pick(m, (int)m->tasks));
    forger_result(m, id, ((uint64_t)next_rand(m) << 32) | next_rand(m), 1 + pick(m, 3));
    sx_msg_t *request = sx_msg_new(SX_MSG_FILE_REQUEST);
    char path[PATH_MAX + 64], hash[41];
    uint64_t size = 0;
    snprintf(path, sizeof path, "%s/gold/%s.csv", m->bench, id);
    if (sx_hash_file(path, hash, &size, NULL) == 0) {
        request->hash = strdup(hash);
        forger_send(m, request);
    } else
        sx_msg_destroy(&request);
}

static void forger_leave(model_t *m)
{
    if (!m->forger)
        return;
    forger_drain(m);
    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = strdup("forger leaving");
    forger_send(m, bye);
    zsock_destroy(&m->forger);
}

/* ---- the schedule ------------------------------------------------------ */

static proc_t *live_worker(model_t *m)
{
    if (m->worker_count == 0)
        return NULL;
    proc_t *w = &m->workers[pick(m, (int)m->worker_count)];
    return w->pid > 0 ? w : NULL;
}

static void add_worker(model_t *m, rlim_t fsize)
{
    if (m->worker_count == MAX_WORKERS)
        return;
    proc_t *w = &m->workers[m->worker_count++];
    snprintf(w->name, sizeof w->name, "w%zu", m->next_worker++);
    start_worker(m, w, fsize);
}

static void trace(model_t *m, const char *event)
{
    if (s_verbose)
        fprintf(stderr, "  [%s] %s\n", m->log_dir, event);
}

/* The coordinator is restarted (resumed) whenever it is down. */
static void keep_coordinator(model_t *m)
{
    if (m->coordinator.pid <= 0)
        return;
    int rc = wait_exit(m->coordinator.pid, 0);
    if (rc < 0)
        return;
    m->coordinator.pid = 0;
    m->coordinator_done = rc == 0;
    if (rc == 0)
        return;
    trace(m, "coordinator ended early: resumed");
    start_coordinator(m, true, 0);
}

static void one_event(model_t *m)
{
    proc_t *w;
    switch (pick(m, 9)) {
    case 0:
        trace(m, "worker joins");
        add_worker(m, 0);
        break;
    case 1:
        if ((w = live_worker(m)) != NULL) {
            trace(m, "worker paused past dead-after");
            kill(w->pid, SIGSTOP);
            zclock_sleep(DEAD_MS + 200 + pick(m, 600));
            kill(w->pid, SIGCONT);
            m->pauses++;
        }
        break;
    case 2:
        if ((w = live_worker(m)) != NULL) {
            trace(m, "worker killed and restarted");
            kill_proc(w);
            zclock_sleep(pick(m, 300));
            start_worker(m, w, 0);
            m->kills++;
        }
        break;
    case 3:
    case 4:
        trace(m, "forger");
        forger_act(m);
        break;
    case 5:
        trace(m, "coordinator killed and resumed");
        kill_proc(&m->coordinator);
        start_coordinator(m, true, 0);
        m->coordinator_kills++;
        break;
    case 6: {
        trace(m, "coordinator's disk full");
        kill_proc(&m->coordinator);
        char journal[PATH_MAX + 32];
        snprintf(journal, sizeof journal, "%s/journal.jsonl", m->out);
        struct stat st;
        rlim_t size = stat(journal, &st) == 0 ? (rlim_t)st.st_size : 0;
        start_coordinator(m, true, size + 50 + (rlim_t)pick(m, 400));
        m->disk_full++;
        break;
    }
    case 7:
        trace(m, "worker with a full disk joins");
        add_worker(m, 1 + (rlim_t)pick(m, 64));
        m->disk_full++;
        break;
    default:
        trace(m, "quiet");
        break;
    }
    zclock_sleep(50 + pick(m, 400));
}

/* ---- the checks -------------------------------------------------------- */

static sx_status_t expected_status(const char *marker)
{
    if (strcmp(marker, "-") == 0)
        return SX_STATUS_MISSING_PREDICTION;
    static const struct {
        const char *marker;
        sx_status_t status;
    } table[] = {{"/*sim:mismatch*/", SX_STATUS_MISMATCH},
                 {"/*sim:flink_error*/", SX_STATUS_FLINK_ERROR},
                 {"/*sim:timeout*/", SX_STATUS_TIMEOUT}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(marker, table[i].marker) == 0)
            return table[i].status;
    return SX_STATUS_MATCH; /* plain, and flaky (infra_error once, then match) */
}

static int fail(model_t *m, const char *what, const char *detail)
{
    fprintf(stderr, "seed %u: %s%s%s (logs in %s)\n", m->seed, what, detail ? ": " : "",
            detail ? detail : "", m->log_dir);
    return 1;
}

/* Lines of OUT/m/NAME as JSON objects, each checked against the task in
 * task_ids order. */
static int check_lines(model_t *m, const char *name, size_t *status_counts)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m/%s", m->out, name);
    size_t size = 0;
    char *data = sx_file_read(path, 1 << 24, &size, NULL);
    if (!data)
        return fail(m, "missing", path);
    size_t line_no = 0;
    int rc = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line && rc == 0;
         line = strtok_r(NULL, "\n", &save), line_no++) {
        char want[32];
        snprintf(want, sizeof want, "t%03zu", line_no + 1);
        json_t *root = json_loads(line, 0, NULL);
        const char *id = json_string_value(json_object_get(root, "task_id"));
        if (line_no >= m->tasks || !id || strcmp(id, want) != 0)
            rc = fail(m, "results out of order, missing or repeated", line);
        else if (!json_object_get(root, "csv") && strcmp(name, "submission.jsonl") == 0)
            rc = fail(m, "submission line without csv", line);
        else if (status_counts) {
            sx_status_t status;
            const char *text = json_string_value(json_object_get(root, "status"));
            if (!text || sx_status_parse(text, &status) != 0 ||
                status != expected_status(m->markers[line_no]))
                rc = fail(m, "unexpected status", line);
            else
                status_counts[status]++;
        }
        json_decref(root);
    }
    if (rc == 0 && line_no != m->tasks)
        rc = fail(m, "wrong number of lines in", name);
    free(data);
    return rc;
}

static int check_outputs(model_t *m)
{
    size_t counts[64] = {0};
    if (check_lines(m, "results.jsonl", counts) != 0 ||
        check_lines(m, "submission.jsonl", NULL) != 0)
        return 1;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary.json", m->out);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *summary = json_object_get(json_object_get(root, "methods"), "m");
    size_t correct = 0;
    for (size_t i = 0; i < m->tasks; i++)
        correct += expected_status(m->markers[i]) == SX_STATUS_MATCH;
    int rc = 0;
    if (!summary ||
        json_integer_value(json_object_get(summary, "correct")) != (json_int_t)correct ||
        json_integer_value(json_object_get(summary, "total")) != (json_int_t)m->tasks)
        rc = fail(m, "summary.json: correct or total differ from the model", NULL);
    json_t *by_status = json_object_get(summary, "by_status");
    const char *key;
    json_t *value;
    json_object_foreach(by_status, key, value)
    {
        sx_status_t status;
        if (rc == 0 && (sx_status_parse(key, &status) != 0 ||
                        json_integer_value(value) != (json_int_t)counts[status]))
            rc = fail(m, "summary.json: a status count differs from the model", key);
    }
    json_decref(root);
    return rc;
}

/* ---- one seed ---------------------------------------------------------- */

static int run_seed(unsigned seed, bool keep)
{
    static const char *const kinds[] = {"",
                                        "",
                                        "",
                                        "/*sim:mismatch*/",
                                        "/*sim:flaky*/",
                                        "-",
                                        "/*sim:flink_error*/",
                                        "/*sim:timeout*/"};
    model_t model = {.seed = seed, .rng = seed};
    model_t *m = &model;
    m->tasks = 4 + (size_t)pick(m, 12);
    m->markers = calloc(m->tasks, sizeof *m->markers);
    for (size_t i = 0; i < m->tasks; i++)
        m->markers[i] = kinds[pick(m, (int)(sizeof kinds / sizeof kinds[0]))];
    m->bench = sx_testbench_make(m->tasks, m->markers);
    m->ids = sx_bench_open(m->bench, NULL);
    snprintf(m->out, sizeof m->out, "%s/out", m->bench);
    snprintf(m->log_dir, sizeof m->log_dir, "%s/run", m->bench);
    snprintf(m->endpoint, sizeof m->endpoint, "ipc://%s/coordinator.ipc", m->bench);
    sx_mkdirs(m->log_dir, NULL);
    m->stale = zlist_new();

    start_coordinator(m, false, 0);
    add_worker(m, 0);
    int events = 2 + pick(m, 8);
    for (int i = 0; i < events; i++) {
        one_event(m);
        keep_coordinator(m);
    }
    forger_leave(m);
    add_worker(m, 0); /* at least one healthy worker to the end */
    int rc = 0;
    int64_t deadline = zclock_mono() + RUN_DEADLINE_MS;
    int status = m->coordinator_done ? 0 : -1;
    while (status != 0 && zclock_mono() < deadline) {
        status = wait_exit(m->coordinator.pid, 100);
        if (status == 0)
            break;
        if (status > 0 && m->restarts == 10)
            break;
        if (status > 0) { /* a full disk stopped it: resume without the limit */
            m->coordinator.pid = 0;
            start_coordinator(m, true, 0);
            m->restarts++;
        }
    }
    if (status != 0) {
        rc = fail(m, "the run did not end by itself", NULL);
        kill_proc(&m->coordinator);
    }
    m->coordinator.pid = 0;
    for (size_t i = 0; i < m->worker_count; i++) {
        /* Workers end on the final goodbye; one that missed it (paused) is stopped. */
        if (m->workers[i].pid > 0 && wait_exit(m->workers[i].pid, 2000) < 0)
            kill_proc(&m->workers[i]);
    }
    if (rc == 0)
        rc = check_outputs(m);
    if (s_verbose || rc != 0)
        fprintf(stderr,
                "seed %u: %zu tasks, %d events: %zu workers, %d pauses, %d kills, %d "
                "coordinator kills, %d full disks, %d forged results: %s\n",
                seed, m->tasks, events, m->worker_count, m->pauses, m->kills,
                m->coordinator_kills, m->disk_full, m->forgeries, rc ? "FAILED" : "ok");
    sx_msg_task_t *task;
    while ((task = zlist_pop(m->stale)) != NULL) {
        free(task->task_id);
        free(task);
    }
    zlist_destroy(&m->stale);
    sx_bench_destroy(&m->ids);
    free(m->markers);
    if (rc == 0 && !keep)
        sx_testbench_remove(&m->bench);
    else
        free(m->bench);
    return rc;
}

/* Only the hostile peer, for SECONDS, against a run started by someone else
 * on ENDPOINT over BENCH: its HELLOs under alternating names must spend no
 * attempt of the tasks it holds. */
static int run_hostile(const char *endpoint, const char *bench, int seconds)
{
    model_t model = {.seed = 1, .rng = 1};
    model_t *m = &model;
    snprintf(m->endpoint, sizeof m->endpoint, "%s", endpoint);
    sx_error_t err;
    m->ids = sx_bench_open(bench, &err);
    if (!m->ids) {
        fprintf(stderr, "e2e_model: %s\n", err.msg);
        return 2;
    }
    m->bench = (char *)bench;
    m->tasks = sx_bench_task_count(m->ids);
    m->stale = zlist_new();
    int64_t end = zclock_mono() + (int64_t)seconds * 1000;
    int hellos = 0;
    while (zclock_mono() < end) {
        forger_act(m);
        hellos++;
        zclock_sleep(200);
    }
    forger_leave(m);
    printf("e2e_model: hostile peer: %d HELLOs, %d forged results\n", hellos,
           m->forgeries);
    sx_msg_task_t *task;
    while ((task = zlist_pop(m->stale)) != NULL) {
        free(task->task_id);
        free(task);
    }
    zlist_destroy(&m->stale);
    sx_bench_destroy(&m->ids);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: e2e_model STREAMEX [--seeds N] [--first S] [--keep] [--verbose]\n"
                "       e2e_model --hostile ENDPOINT BENCH SECONDS\n");
        return 2;
    }
    zsys_handler_set(NULL); /* Ctrl-C and SIGTERM end this program (and its children) */
    if (argc == 5 && strcmp(argv[1], "--hostile") == 0)
        return run_hostile(argv[2], argv[3], atoi(argv[4]));
    s_streamex = argv[1];
    unsigned seeds = 5, first = 1;
    bool keep = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
            first = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else if (strcmp(argv[i], "--verbose") == 0)
            s_verbose = true;
        else {
            fprintf(stderr, "e2e_model: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    zsys_init();
    zsys_set_linger(0);
    unsigned failed = 0;
    int64_t start = zclock_mono();
    for (unsigned seed = first; seed < first + seeds; seed++)
        failed += run_seed(seed, keep) != 0;
    printf("e2e_model: %u seeds from %u, %u failed, %.1f s\n", seeds, first, failed,
           (double)(zclock_mono() - start) / 1000.0);
    return failed ? 1 : 0;
}
