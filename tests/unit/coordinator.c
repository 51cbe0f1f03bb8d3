/* tests/unit/coordinator.c: the journal's self-test, then the coordinator's tests
 * (sharding, credit, heartbeat death and requeue, retry budget, idempotent
 * late results, resume, malformed messages, CURVE allow-list). They live here
 * rather than in coordinator/, because they need test code (the throw-away
 * bench of tests/kit/testbench.h) that the program must not carry. It runs a
 * real coordinator on a thread against scripted fake workers (raw
 * DEALER sockets, so each test controls exactly what a worker says and when)
 * and against real agents with the simulated executor. Heartbeats are fast
 * (BEAT_MS, a worker dead after DEAD_MS: 100 ms and 1.5 s) so the whole
 * test takes seconds. */
#include "coordinator/coordinator.h"
#include "coordinator/journal.h"

#include "common/log.h"
#include "common/mem.h"
#include "common/results/result.h"
#include "common/selftest.h"
#include "tests/kit/logfile.h"
#include "tests/kit/testbench.h"
#include "common/files.h"
#include "proto/proto.h"
#include "worker/agent.h"
#include "worker/simexec.h"

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BEAT_MS 100
#define DEAD_MS                                                                          \
    1500 /* well above BEAT_MS, so a loaded machine does not kill a live fake */
/* How long a test waits for a message that must come. Generous, because a
 * loaded machine delays threads; a message that comes returns at once. */
#define WAIT_MS 10000

/* ---- what fsync made durable -------------------------------------------- */

/* This program's fsync, which the coordinator's journal and file batches
 * call instead of the C library's: the real one, and a record of what it
 * made durable, so a test can tell whether an acknowledgement came after
 * the fsync holding its result. For the watched journal: how many fsyncs
 * and how many bytes of it were durable at the last one; for other files:
 * the inodes synced (the CSVs, renamed into place after). */
#define SYNCED_MAX 256
static struct {
    pthread_mutex_t lock;
    dev_t journal_dev;
    ino_t journal_ino; /* 0 = no journal watched */
    int journal_syncs;
    off_t journal_durable;
    size_t synced_count;
    struct stat synced[SYNCED_MAX];
    const char *hold;  /* a file whose path holds this waits in fsync ... */
    atomic_bool freed; /* ... until this is set (or 2 * WAIT_MS) */
} s_sync = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Waits while fd's file is the held one (s_sync.hold). */
static void wait_if_held(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = s_sync.hold ? readlink(link, path, sizeof path - 1) : -1;
    if (n < 0)
        return;
    path[n] = '\0';
    for (int64_t end = zclock_mono() + 2 * WAIT_MS;
         strstr(path, s_sync.hold) && !atomic_load(&s_sync.freed) && zclock_mono() < end;)
        zclock_sleep(5);
}

int fsync(int fd)
{
    wait_if_held(fd);
    struct stat st;
    bool known = fstat(fd, &st) == 0; /* what the fsync covers: all before it */
    int rc = (int)syscall(SYS_fsync, fd);
    if (rc != 0 || !known || !S_ISREG(st.st_mode))
        return rc;
    pthread_mutex_lock(&s_sync.lock);
    if (st.st_ino == s_sync.journal_ino && st.st_dev == s_sync.journal_dev) {
        s_sync.journal_syncs++;
        s_sync.journal_durable = st.st_size;
    } else if (s_sync.journal_ino && s_sync.synced_count < SYNCED_MAX)
        s_sync.synced[s_sync.synced_count++] = st;
    pthread_mutex_unlock(&s_sync.lock);
    return rc;
}

/* Watches the journal at path (NULL: stops watching), from no fsync on. */
static void sync_watch(const char *path)
{
    struct stat st = {0};
    SX_CHECK(!path || stat(path, &st) == 0);
    pthread_mutex_lock(&s_sync.lock);
    s_sync.journal_dev = st.st_dev;
    s_sync.journal_ino = path ? st.st_ino : 0;
    s_sync.journal_syncs = 0;
    s_sync.journal_durable = 0;
    s_sync.synced_count = 0;
    pthread_mutex_unlock(&s_sync.lock);
}

static int journal_syncs(void)
{
    pthread_mutex_lock(&s_sync.lock);
    int count = s_sync.journal_syncs;
    pthread_mutex_unlock(&s_sync.lock);
    return count;
}

/* Whether an fsync of the journal covered all of the record of task_id, and
 * one of the file now at csv_path covered its bytes. */
static bool durable_now(const char *journal, const char *task_id, const char *csv_path)
{
    size_t size = 0;
    char *data = sx_file_read(journal, 1 << 20, &size, NULL);
    char needle[64];
    snprintf(needle, sizeof needle, "\"task_id\":\"%s\"", task_id);
    const char *at = data ? strstr(data, needle) : NULL;
    const char *end = at ? strchr(at, '\n') : NULL;
    off_t record_end = end ? (off_t)(end - data) + 1 : -1;
    free(data);
    struct stat csv;
    bool have_csv = stat(csv_path, &csv) == 0;
    pthread_mutex_lock(&s_sync.lock);
    bool durable = record_end > 0 && s_sync.journal_durable >= record_end && have_csv;
    bool csv_synced = false;
    for (size_t i = 0; i < s_sync.synced_count && !csv_synced; i++)
        csv_synced = s_sync.synced[i].st_ino == csv.st_ino &&
                     s_sync.synced[i].st_dev == csv.st_dev &&
                     s_sync.synced[i].st_size == csv.st_size;
    pthread_mutex_unlock(&s_sync.lock);
    return durable && csv_synced;
}

/* ---- a coordinator on a thread ----------------------------------------- */

typedef struct {
    sx_coordinator_t *coordinator;
    int rc;
    sx_error_t err;
} coord_run_t;

static void coordinator_actor(zsock_t *pipe, void *arg)
{
    coord_run_t *run = arg;
    zsock_signal(pipe, 0);
    sx_error_clear(&run->err);
    run->rc = sx_coordinator_run(run->coordinator, pipe, &run->err);
    if (run->rc < 0)
        fprintf(stderr, "coordinator: %s\n", run->err.msg);
    zstr_send(pipe, "done");
}

typedef struct {
    char *bench;
    char out[PATH_MAX];
    char endpoint[256];
    char preds[PATH_MAX];
    coord_run_t run;
    zactor_t *actor;
} harness_t;

static sx_coordinator_config_t base_config(harness_t *h, const char *const *names,
                                           const char *const *files)
{
    sx_coordinator_config_t c = {0};
    c.bench_dir = h->bench;
    c.method_names = names;
    c.prediction_files = files;
    c.method_count = 1;
    c.out_dir = h->out;
    c.endpoint = "tcp://127.0.0.1:*";
    c.shard_size = 2;
    c.heartbeat_ms = BEAT_MS;
    c.dead_after_ms = DEAD_MS;
    c.retry_budget = 3;
    return c;
}

static void harness_start(harness_t *h, const sx_coordinator_config_t *config)
{
    sx_error_t err;
    h->run.coordinator = sx_coordinator_new(config, &err);
    if (!h->run.coordinator)
        fprintf(stderr, "%s\n", err.msg);
    SX_CHECK(h->run.coordinator);
    snprintf(h->endpoint, sizeof h->endpoint, "%s",
             sx_coordinator_endpoint(h->run.coordinator));
    h->actor = zactor_new(coordinator_actor, &h->run);
}

static void harness_stop(harness_t *h)
{
    zactor_destroy(&h->actor);
    sx_coordinator_destroy(&h->run.coordinator);
}

static harness_t *harness_new(size_t tasks, const char *const *markers)
{
    harness_t *h = sx_alloc(1, sizeof *h);
    h->bench = sx_testbench_make(tasks, markers);
    snprintf(h->out, sizeof h->out, "%s/out", h->bench);
    snprintf(h->preds, sizeof h->preds, "%s/preds.jsonl", h->bench);
    return h;
}

static void harness_destroy(harness_t **h_p)
{
    harness_t *h = *h_p;
    harness_stop(h);
    sx_testbench_remove(&h->bench);
    free(h);
    *h_p = NULL;
}

/* The results.jsonl line of a task, parsed. */
static bool read_result(harness_t *h, const char *method, const char *task_id,
                        sx_result_t *out)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", h->out, method);
    size_t size = 0;
    char *data = sx_file_read(path, 1 << 24, &size, NULL);
    bool found = false;
    char *save = NULL;
    for (char *line = data ? strtok_r(data, "\n", &save) : NULL; line && !found;
         line = strtok_r(NULL, "\n", &save)) {
        sx_result_t r;
        memset(&r, 0, sizeof r);
        if (sx_result_from_json(line, &r, NULL) == 0 && strcmp(r.task_id, task_id) == 0) {
            *out = r;
            found = true;
        } else
            sx_result_clear(&r);
    }
    free(data);
    return found;
}

/* ---- a scripted fake worker -------------------------------------------- */

typedef struct {
    zsock_t *sock;
    char name[64];
    int64_t last_beat;
    bool silent; /* beats only while the test waits on it (fake_go_silent) */
} fake_t;

/* The live fakes. While the test waits on one of them, or on the
 * coordinator, all but the silent ones beat: a worker the test means alive
 * must never die of the time the test spends on another (a loaded machine
 * stretches that time past dead-after). */
#define FAKES_MAX 8
static fake_t *s_fakes[FAKES_MAX];

static void fakes_add(fake_t *f)
{
    for (size_t i = 0; i < FAKES_MAX; i++)
        if (!s_fakes[i]) {
            s_fakes[i] = f;
            return;
        }
    SX_CHECK(!"more than FAKES_MAX fakes at once");
}

static void fakes_remove(fake_t *f)
{
    for (size_t i = 0; i < FAKES_MAX; i++)
        if (s_fakes[i] == f)
            s_fakes[i] = NULL;
}

/* A worker that stops beating unless the test waits on it: the coordinator
 * declares it dead after dead-after. */
static void fake_go_silent(fake_t *f)
{
    f->silent = true;
}

/* A fake worker that says HELLO with capacity, slots and runtime (none
 * when capacity is 0). */
static fake_t *fake_new_as(const char *endpoint, const char *name, int capacity,
                           int slots, const char *runtime)
{
    fake_t *f = sx_alloc(1, sizeof *f);
    f->sock = zsock_new_dealer(endpoint);
    zsock_set_sndtimeo(f->sock, 100); /* a refused CURVE peer must not block the test */
    snprintf(f->name, sizeof f->name, "%s", name);
    fakes_add(f);
    if (capacity > 0) {
        sx_msg_t *hello = sx_msg_hello(name, capacity, slots, runtime);
        SX_CHECK(sx_msg_send(hello, f->sock, NULL, NULL) == 0);
        sx_msg_destroy(&hello);
    }
    return f;
}

static fake_t *fake_new_slots(const char *endpoint, const char *name, int capacity,
                              int slots)
{
    return fake_new_as(endpoint, name, capacity, slots, "test runtime");
}

static fake_t *fake_new(const char *endpoint, const char *name, int capacity)
{
    return fake_new_slots(endpoint, name, capacity, 1);
}

static void fake_destroy(fake_t **f_p)
{
    fakes_remove(*f_p);
    zsock_destroy(&(*f_p)->sock);
    free(*f_p);
    *f_p = NULL;
}

static void fake_beat(fake_t *f)
{
    if (zclock_mono() - f->last_beat < BEAT_MS)
        return;
    sx_msg_t *beat = sx_msg_new(SX_MSG_HEARTBEAT);
    sx_msg_send(beat, f->sock, NULL, NULL);
    sx_msg_destroy(&beat);
    f->last_beat = zclock_mono();
}

/* Beats for every live fake but the silent ones, and for f. */
static void fakes_beat(fake_t *f)
{
    for (size_t i = 0; i < FAKES_MAX; i++)
        if (s_fakes[i] && (s_fakes[i] == f || !s_fakes[i]->silent))
            fake_beat(s_fakes[i]);
}

/* Waits for the coordinator to finish by itself, the live fakes beating;
 * false on timeout. */
static bool harness_wait(harness_t *h, int timeout_ms)
{
    zpoller_t *poller = zpoller_new(h->actor, NULL);
    void *which = NULL;
    for (int64_t end = zclock_mono() + timeout_ms; !which && zclock_mono() < end;) {
        fakes_beat(NULL);
        which = zpoller_wait(poller, 20);
    }
    zpoller_destroy(&poller);
    if (which) {
        char *done = zstr_recv(h->actor);
        zstr_free(&done);
    }
    return which != NULL;
}

/* The next message the fake gets, whatever its type, heartbeating while
 * waiting; NULL after timeout_ms. */
static sx_msg_t *fake_next(fake_t *f, int timeout_ms)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    while (zclock_mono() < deadline) {
        fakes_beat(f);
        zpoller_t *poller = zpoller_new(f->sock, NULL);
        void *which = zpoller_wait(poller, 20);
        zpoller_destroy(&poller);
        sx_msg_t *msg = which ? sx_msg_recv(f->sock, NULL, NULL) : NULL;
        if (msg)
            return msg;
    }
    return NULL;
}

/* The next message of `type` within timeout_ms; others are dropped. */
static sx_msg_t *fake_expect(fake_t *f, sx_msg_type_t type, int timeout_ms)
{
    int64_t deadline = zclock_mono() + timeout_ms;
    for (int64_t left = timeout_ms; left > 0; left = deadline - zclock_mono()) {
        sx_msg_t *msg = fake_next(f, (int)left);
        if (msg && msg->type == type)
            return msg;
        sx_msg_destroy(&msg);
    }
    return NULL;
}

static void fake_result(fake_t *f, const sx_msg_task_t *task, sx_status_t status)
{
    sx_msg_t *msg = sx_msg_new(SX_MSG_RESULT);
    msg->method = sx_strdup(task->method);
    sx_result_init(&msg->result, task->task_id, status, "scripted", NULL);
    msg->result.attempts = task->attempt;
    msg->token = task->token;
    free(msg->result.worker);
    msg->result.worker = sx_strdup(f->name);
    if (status == SX_STATUS_MATCH)
        sx_msg_set_data(msg, "x\n1\n", 4);
    SX_CHECK(sx_msg_send(msg, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&msg);
}

/* Answers every task of a shard with `status`. */
static void fake_answer(fake_t *f, const sx_msg_t *assign, sx_status_t status)
{
    for (size_t i = 0; i < assign->task_count; i++)
        fake_result(f, &assign->tasks[i], status);
}

static const char *const s_names[] = {"m1"};

/* ---- the cases --------------------------------------------------------- */

/* Group commit: the results that come while the journal's fsync runs (a
 * slow disk: SX_JOURNAL_FSYNC_DELAY_MS) are journaled together by the next
 * one, and no result is acknowledged before the fsync holding its record,
 * nor before its CSV's: 8 results, the first alone, the 7 others sent while
 * its fsync is under way, make exactly 2 fsyncs of the journal. */
static void test_ack_waits_for_its_fsync(void)
{
    harness_t *h = harness_new(8, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    SX_CHECK(setenv("SX_JOURNAL_FSYNC_DELAY_MS", "300", 1) == 0);
    harness_start(h, &c);
    SX_CHECK(unsetenv("SX_JOURNAL_FSYNC_DELAY_MS") == 0);
    char journal[PATH_MAX + 64];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", h->out);
    sync_watch(journal);
    fake_t *f = fake_new(h->endpoint, "fw", 4);
    sx_msg_t *assigns[4];
    const sx_msg_task_t *tasks[8];
    for (int i = 0; i < 4; i++) {
        assigns[i] = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(assigns[i] && assigns[i]->task_count == 2);
        tasks[2 * i] = &assigns[i]->tasks[0];
        tasks[2 * i + 1] = &assigns[i]->tasks[1];
    }
    fake_result(f, tasks[0], SX_STATUS_MATCH);
    /* Its record is written: the journal's fsync (300 ms) is under way. */
    struct stat st = {0};
    for (int64_t end = zclock_mono() + WAIT_MS;
         (stat(journal, &st) != 0 || st.st_size == 0) && zclock_mono() < end;)
        zclock_sleep(1);
    SX_CHECK(st.st_size > 0 && journal_syncs() == 0);
    for (int i = 1; i < 8; i++)
        fake_result(f, tasks[i], SX_STATUS_MATCH);
    for (int acked = 0; acked < 8; acked++) {
        sx_msg_t *ack = fake_expect(f, SX_MSG_ACK, WAIT_MS);
        SX_CHECK(ack);
        char csv[PATH_MAX + 128];
        snprintf(csv, sizeof csv, "%s/m1/csv/%s.csv", h->out, ack->result.task_id);
        SX_CHECK(durable_now(journal, ack->result.task_id, csv));
        sx_msg_destroy(&ack);
    }
    SX_CHECK(journal_syncs() == 2 && sx_testbench_count_lines(journal) == 8);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sync_watch(NULL);
    for (int i = 0; i < 4; i++)
        sx_msg_destroy(&assigns[i]);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* The workers hear the run ended before the outputs are written (a large
 * run's take longer than a worker waits for a silent coordinator): here
 * results.jsonl's fsync waits until the worker got its final GOODBYE. */
static void test_final_goodbye_before_outputs(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 2);
    s_sync.hold = "results.jsonl";
    atomic_store(&s_sync.freed, false);
    fake_answer(f, assign, SX_STATUS_MATCH);
    sx_msg_t *bye = fake_expect(f, SX_MSG_GOODBYE, WAIT_MS);
    atomic_store(&s_sync.freed, true);
    SX_CHECK(bye && bye->final);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    s_sync.hold = NULL;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 2);
    sx_msg_destroy(&bye);
    sx_msg_destroy(&assign);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* A worker never holds more shards than its capacity; finishing one frees credit. */
static void test_credit_limits_shards(void)
{
    harness_t *h = harness_new(6, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw1", 1);
    sx_msg_t *first = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && first->task_count == 2);
    /* The shard ships what the worker needs: task folder, gold, evaluation. */
    bool has_gold = false;
    for (size_t i = 0; i < first->file_count; i++)
        has_gold |= strncmp(first->files[i].path, "gold/", 5) == 0;
    SX_CHECK(has_gold);
    SX_CHECK(fake_expect(f, SX_MSG_ASSIGN, 300) == NULL);
    fake_answer(f, first, SX_STATUS_MATCH);
    sx_msg_t *second = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(second && strcmp(second->tasks[0].task_id, first->tasks[0].task_id) != 0);
    fake_answer(f, second, SX_STATUS_MISMATCH);
    sx_msg_t *third = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(third);
    fake_answer(f, third, SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 6);
    snprintf(path, sizeof path, "%s/m1/csv/%s.csv", h->out, first->tasks[0].task_id);
    SX_CHECK(sx_file_exists(path));
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    sx_msg_destroy(&third);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* A silent worker is declared dead; its shard goes to another worker, the
 * unit it was running (the first) as attempt 2, the other unspent; its late
 * result is dropped. A repeated result is ACKed and dropped too. */
static void test_dead_worker_requeued_and_late_results_dropped(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *silent = fake_new(h->endpoint, "silent", 1);
    sx_msg_t *lost = fake_expect(silent, SX_MSG_ASSIGN, WAIT_MS);
    fake_go_silent(silent);
    SX_CHECK(lost && lost->task_count == 2);
    fake_t *alive = fake_new(h->endpoint, "alive", 1);
    sx_msg_t *again = fake_expect(alive, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(again && again->task_count == 2 && again->tasks[0].attempt == 2 &&
             again->tasks[1].attempt == 1);
    SX_CHECK(strcmp(again->tasks[0].task_id, lost->tasks[0].task_id) == 0);
    /* The dead worker wakes up: it is unknown now and is told to say hello. */
    fake_result(silent, &lost->tasks[0], SX_STATUS_MISMATCH);
    sx_msg_t *bye = fake_expect(silent, SX_MSG_GOODBYE, WAIT_MS);
    SX_CHECK(bye && !bye->final);
    fake_result(alive, &again->tasks[0], SX_STATUS_MATCH);
    sx_msg_t *ack = fake_expect(alive, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack);
    sx_msg_destroy(&ack);
    fake_result(alive, &again->tasks[0], SX_STATUS_MISMATCH);
    ack = fake_expect(alive, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack); /* a duplicate is still acknowledged, so the spool empties */
    fake_result(alive, &again->tasks[1], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", again->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 2 &&
             strcmp(r.worker, "alive") == 0);
    sx_result_clear(&r);
    sx_msg_destroy(&ack);
    sx_msg_destroy(&bye);
    sx_msg_destroy(&lost);
    sx_msg_destroy(&again);
    fake_destroy(&silent);
    fake_destroy(&alive);
    harness_destroy(&h);
}

/* infra_error moves to another worker and is terminal after the budget; a
 * wrong query (flink_error) is never retried. */
static void test_retry_budget_on_other_worker(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.retry_budget = 2;
    harness_start(h, &c);
    fake_t *a = fake_new(h->endpoint, "wa", 1);
    sx_msg_t *first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    sx_msg_t *other = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(other);
    fake_result(b, &other->tasks[0], SX_STATUS_FLINK_ERROR);
    zclock_sleep(50);
    fake_result(a, &first->tasks[0], SX_STATUS_INFRA_ERROR);
    /* The retry must go to b even though a has credit again. */
    sx_msg_t *retry = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(retry && strcmp(retry->tasks[0].task_id, first->tasks[0].task_id) == 0);
    SX_CHECK(retry->tasks[0].attempt == 2);
    fake_result(b, &retry->tasks[0], SX_STATUS_INFRA_ERROR);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", first->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_INFRA_ERROR && r.attempts == 2);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", other->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_FLINK_ERROR && r.attempts == 1);
    sx_result_clear(&r);
    sx_msg_destroy(&first);
    sx_msg_destroy(&other);
    sx_msg_destroy(&retry);
    fake_destroy(&a);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* Appends to OUT/journal.jsonl a second record of its first task, turned
 * into a mismatch, and a record of a task the bench does not have; `task`
 * gets the first task's quoted ID, "task_id":"t00N". */
static void journal_add_noise(harness_t *h, char *task, size_t size)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/journal.jsonl", h->out);
    FILE *in = fopen(path, "r");
    SX_CHECK(in);
    char line[65536];
    SX_CHECK(fgets(line, sizeof line, in));
    fclose(in);
    json_t *record = json_loads(line, 0, NULL);
    json_t *result = json_object_get(record, "result");
    SX_CHECK(result);
    snprintf(task, size, "\"task_id\":\"%s\"",
             json_string_value(json_object_get(result, "task_id")));
    SX_CHECK(json_object_set_new(result, "status", json_string("mismatch")) == 0);
    SX_CHECK(json_object_set_new(result, "score", json_integer(0)) == 0);
    SX_CHECK(json_object_set_new(result, "strict", json_integer(0)) == 0);
    char *twice = json_dumps(record, JSON_COMPACT);
    SX_CHECK(json_object_set_new(result, "task_id", json_string("t99")) == 0);
    char *foreign = json_dumps(record, JSON_COMPACT);
    FILE *out = fopen(path, "a");
    SX_CHECK(out && fprintf(out, "%s\n%s\n", twice, foreign) > 0 && fclose(out) == 0);
    free(twice);
    free(foreign);
    json_decref(record);
}

/* How many lines of a results.jsonl hold both texts. */
static long count_lines_with(const char *path, const char *text, const char *other)
{
    FILE *in = fopen(path, "r");
    SX_CHECK(in);
    char line[65536];
    long count = 0;
    while (fgets(line, sizeof line, in))
        count += strstr(line, text) && strstr(line, other);
    fclose(in);
    return count;
}

/* A stopped run resumes from its journal and executes only what is unsettled. */
static void test_resume_skips_settled(void)
{
    harness_t *h = harness_new(4, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *first = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && first->task_count == 2);
    fake_answer(f, first, SX_STATUS_MATCH);
    sx_msg_t *ack = fake_expect(f, SX_MSG_ACK, WAIT_MS);
    sx_msg_destroy(&ack);
    ack = fake_expect(f, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack);
    sx_msg_destroy(&ack);
    harness_stop(h); /* Ctrl-C */
    fake_destroy(&f);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(!sx_file_exists(path));

    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL && strstr(err.msg, "--resume"));
    char task[64];
    journal_add_noise(h, task, sizeof task);
    c.resume = true;
    harness_start(h, &c);
    f = fake_new(h->endpoint, "fw", 2);
    sx_msg_t *rest = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(rest && rest->task_count == 2);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++)
            SX_CHECK(strcmp(rest->tasks[i].task_id, first->tasks[j].task_id) != 0);
    fake_answer(f, rest, SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    /* The journal's last verdict of a task stands (a --rerun appends the
     * new one), a foreign task is not counted: the bench's four tasks, one
     * match, three mismatches. */
    SX_CHECK(sx_testbench_count_lines(path) == 4);
    SX_CHECK(count_lines_with(path, task, "\"status\":\"mismatch\"") == 1);
    SX_CHECK(count_lines_with(path, "\"task_id\":\"t00", "\"status\":\"match\"") == 1);
    SX_CHECK(count_lines_with(path, "\"task_id\":\"t00", "\"status\":\"mismatch\"") == 3);
    sx_msg_destroy(&first);
    sx_msg_destroy(&rest);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* Garbage and out-of-order messages are rejected; the coordinator goes on. */
static void test_malformed_messages_rejected(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 0);
    zstr_send(f->sock, "not msgpack");
    zstr_sendm(f->sock, "two");
    zstr_send(f->sock, "frames");
    sx_msg_t *ack = sx_msg_new(SX_MSG_ACK); /* a coordinator's message */
    ack->method = sx_strdup("m1");
    ack->result.task_id = sx_strdup("t001");
    ack->result.attempts = 1;
    sx_msg_send(ack, f->sock, NULL, NULL);
    sx_msg_destroy(&ack);
    sx_msg_task_t unasked = {"m1", "t001", NULL, 1, 1, 0};
    fake_result(f, &unasked, SX_STATUS_MATCH); /* before HELLO */
    sx_msg_t *bye = fake_expect(f, SX_MSG_GOODBYE, WAIT_MS);
    SX_CHECK(bye && !bye->final);
    sx_msg_destroy(&bye);
    sx_msg_t *hello = sx_msg_hello("fw", 1, 1, "test runtime");
    sx_msg_send(hello, f->sock, NULL, NULL);
    sx_msg_destroy(&hello);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->tasks[0].attempt == 1);
    fake_answer(f, assign, SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&assign);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* Sends HELLO on the fake's socket (again, maybe under another name). */
static void fake_hello(fake_t *f, const char *name, int capacity)
{
    sx_msg_t *hello = sx_msg_hello(name, capacity, 1, "test runtime");
    SX_CHECK(sx_msg_send(hello, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&hello);
}

/* Asks for a file by hash; true when the coordinator sends it. */
static bool fake_fetch(fake_t *f, const char *hash, int timeout_ms)
{
    sx_msg_t *request = sx_msg_new(SX_MSG_FILE_REQUEST);
    request->hash = sx_strdup(hash);
    SX_CHECK(sx_msg_send(request, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&request);
    sx_msg_t *file = fake_expect(f, SX_MSG_FILE, timeout_ms);
    bool got = file && strcmp(file->hash, hash) == 0;
    sx_msg_destroy(&file);
    return got;
}

static const char *gold_hash(const sx_msg_t *assign)
{
    for (size_t i = 0; i < assign->file_count; i++)
        if (strncmp(assign->files[i].path, "gold/", 5) == 0)
            return assign->files[i].hash;
    return NULL;
}

/* The forger forges once more, then says HELLO again: the coordinator ends
 * its session saying once how many of its messages it dropped (the first
 * was logged, the next ones only counted). The ACK of a RESULT sent after
 * the HELLO proves the HELLO was handled; the forger's result for its own
 * task, just sent, is ACKed first. */
static void forger_leaves_counted(harness_t *h, fake_t *forger, const sx_msg_t *forged)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/noise.log", h->bench);
    sx_logfile_t caught;
    sx_logfile_start(&caught, log, SX_LOG_INFO);
    fake_result(forger, &forged->tasks[0], SX_STATUS_MATCH);
    fake_hello(forger, "forger", 2);
    fake_result(forger, &forged->tasks[0], SX_STATUS_MATCH);
    for (int i = 0; i < 3; i++) { /* its own task's result's, the forgeries' */
        sx_msg_t *ack = fake_expect(forger, SX_MSG_ACK, WAIT_MS);
        SX_CHECK(ack);
        sx_msg_destroy(&ack);
    }
    sx_logfile_stop(&caught);
    char *logged = sx_logfile_messages(&caught);
    SX_CHECK(strstr(logged, "worker forger: 2 of its results or released tasks "
                            "answered no current attempt: dropped"));
    free(logged);
}

/* Protocol noise and a hostile peer change nothing: repeated HELLOs under
 * other names spend no attempt; a stale infra_error (an older token of the
 * same unit) is dropped and the unit is not queued twice; a RESULT from a
 * peer that does not hold the unit is dropped even with the right token; a
 * file is served only to a peer holding a shard that needs it. */
static void test_noise_and_forgery_change_nothing(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.retry_budget = 2;
    harness_start(h, &c);
    fake_t *a = fake_new(h->endpoint, "wa", 1);
    sx_msg_t *first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && first->tasks[0].attempt == 1);
    sx_msg_t *latest = NULL;
    const char *names[] = {"wa-x", "wa-y", "wa-x", "wa"};
    for (int i = 0; i < 4; i++) {
        fake_hello(a, names[i], 1);
        sx_msg_destroy(&latest);
        latest = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(latest && latest->tasks[0].attempt == 1);
        SX_CHECK(strcmp(latest->tasks[0].task_id, first->tasks[0].task_id) == 0);
        SX_CHECK(latest->tasks[0].token != first->tasks[0].token);
    }
    /* The answer to the first dispatch comes late: dropped, acknowledged. */
    fake_result(a, &first->tasks[0], SX_STATUS_INFRA_ERROR);
    sx_msg_t *ack = fake_expect(a, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack && ack->token == first->tasks[0].token);
    sx_msg_destroy(&ack);
    /* Not queued again: the only other worker gets the other task only. */
    fake_t *forger = fake_new(h->endpoint, "forger", 2);
    sx_msg_t *other = fake_expect(forger, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(other && strcmp(other->tasks[0].task_id, first->tasks[0].task_id) != 0);
    SX_CHECK(fake_expect(forger, SX_MSG_ASSIGN, 300) == NULL);
    /* The forger knows a's current token, but does not hold that unit. */
    fake_result(forger, &latest->tasks[0], SX_STATUS_MATCH);
    ack = fake_expect(forger, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack);
    sx_msg_destroy(&ack);
    SX_CHECK(!fake_fetch(forger, gold_hash(latest), 300));
    SX_CHECK(fake_fetch(forger, gold_hash(other), WAIT_MS));
    fake_result(forger, &other->tasks[0], SX_STATUS_MISMATCH);
    forger_leaves_counted(h, forger, latest);
    fake_result(a, &latest->tasks[0], SX_STATUS_FLINK_ERROR);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", latest->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_FLINK_ERROR && r.attempts == 1 &&
             strcmp(r.worker, "wa") == 0);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", other->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MISMATCH && strcmp(r.worker, "forger") == 0);
    sx_result_clear(&r);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 2);
    snprintf(path, sizeof path, "%s/journal.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 2);
    sx_msg_destroy(&first);
    sx_msg_destroy(&latest);
    sx_msg_destroy(&other);
    fake_destroy(&a);
    fake_destroy(&forger);
    harness_destroy(&h);
}

/* Asks for the file `hash`, then answers the shard with eval_error: the
 * RESULT's ACK is the next thing answered (heartbeats aside), so the request
 * was handled and sent nothing. Returns what the coordinator logged
 * meanwhile (heap). */
static char *request_refused(harness_t *h, fake_t *f, const sx_msg_t *assign,
                             const char *hash)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/file.log", h->bench);
    sx_logfile_t caught;
    sx_logfile_start(&caught, log, SX_LOG_INFO);
    sx_msg_t *request = sx_msg_new(SX_MSG_FILE_REQUEST);
    request->hash = sx_strdup(hash);
    SX_CHECK(sx_msg_send(request, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&request);
    fake_answer(f, assign, SX_STATUS_EVAL_ERROR);
    sx_msg_t *first = fake_next(f, WAIT_MS);
    while (first && first->type == SX_MSG_HEARTBEAT) {
        sx_msg_destroy(&first);
        first = fake_next(f, WAIT_MS);
    }
    SX_CHECK(first && first->type == SX_MSG_ACK);
    sx_msg_destroy(&first);
    sx_logfile_stop(&caught);
    return sx_logfile_messages(&caught);
}

/* A file is served only if its FILE message fits the protocol's limit with
 * room for the message around it: a gold file 1 KB short of the limit (a
 * sparse file: no disk, and a refusal reads none of it) is refused with an
 * error naming it. */
static void test_file_too_large_for_a_message_refused(void)
{
    harness_t *h = harness_new(1, NULL);
    char gold[PATH_MAX + 32];
    snprintf(gold, sizeof gold, "%s/gold/t001.csv", h->bench);
    SX_CHECK(truncate(gold, (off_t)SX_PROTO_MAX_BYTES - 1024) == 0);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && gold_hash(assign));
    char *logged = request_refused(h, f, assign, gold_hash(assign));
    char *expected = sx_format("file for worker fw: %s: larger than %u bytes: not sent",
                               gold, SX_PROTO_MAX_BYTES - 4096);
    SX_CHECK(strstr(logged, expected));
    free(expected);
    free(logged);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&assign);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* The input rule holds when a file is read to be sent, not only when its
 * shard's manifest was made: gold replaced after the ASSIGN by a link into
 * the sibling folder gold2/ (whose name starts with gold's), or rewritten,
 * is refused at the request and none of its bytes are sent. */
static void test_file_replaced_after_assign_not_sent(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    for (int round = 0; round < 2; round++) {
        sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(assign && gold_hash(assign));
        char gold[PATH_MAX + 64], other[PATH_MAX + 64], want[3 * PATH_MAX];
        snprintf(gold, sizeof gold, "%s/gold/%s.csv", h->bench, assign->tasks[0].task_id);
        snprintf(other, sizeof other, "%s/gold2/%s.csv", h->bench,
                 assign->tasks[0].task_id);
        SX_CHECK(sx_mkdirs_for(other, NULL) == 0 &&
                 sx_file_write_atomic(other, "x\nSECRET\n", 9, NULL) == 0);
        if (round == 0) {
            char target[64];
            snprintf(target, sizeof target, "../gold2/%s.csv", assign->tasks[0].task_id);
            SX_CHECK(unlink(gold) == 0 && symlink(target, gold) == 0);
            char *real = realpath(other, NULL);
            SX_CHECK(real);
            snprintf(want, sizeof want,
                     "file for worker fw: %s: a link to %s, outside %s/gold (links must "
                     "stay inside the folder): not sent",
                     gold, real, h->bench);
            free(real);
        } else {
            SX_CHECK(rename(other, gold) == 0);
            snprintf(want, sizeof want,
                     "file for worker fw: %s: changed since it was hashed for the shard: "
                     "not sent",
                     gold);
        }
        char *logged = request_refused(h, f, assign, gold_hash(assign));
        if (!strstr(logged, want))
            fprintf(stderr, "logged: %s\nwanted: %s\n", logged, want);
        SX_CHECK(strstr(logged, want));
        free(logged);
        sx_msg_destroy(&assign);
    }
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* The stall: a worker paused past dead-after while its task fails
 * with infra_error. Its late infra_error must not requeue the unit a second
 * time, and a worker killed after settling must not unsettle anything. */
static void test_paused_worker_late_infra_error(void)
{
    harness_t *h = harness_new(3, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.dead_after_ms = 1000; /* the issue's; a loaded machine must not kill b */
    harness_start(h, &c);
    fake_t *a = fake_new(h->endpoint, "wa", 1);
    sx_msg_t *held = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(held);
    /* a pauses (sends nothing) while b works: a is declared dead. */
    fake_go_silent(a);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    sx_msg_t *mine = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(mine);
    fake_result(b, &mine->tasks[0], SX_STATUS_MATCH);
    sx_msg_t *taken = NULL;
    for (int i = 0; i < 3 && !taken; i++) {
        sx_msg_t *next = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(next);
        if (strcmp(next->tasks[0].task_id, held->tasks[0].task_id) == 0)
            taken = next;
        else {
            fake_result(b, &next->tasks[0], SX_STATUS_MATCH);
            sx_msg_destroy(&next);
        }
    }
    SX_CHECK(taken && taken->tasks[0].attempt == 2);
    /* a wakes up with its infra_error: it is unknown now, told to say hello. */
    fake_result(a, &held->tasks[0], SX_STATUS_INFRA_ERROR);
    sx_msg_t *bye = fake_expect(a, SX_MSG_GOODBYE, WAIT_MS);
    SX_CHECK(bye && !bye->final);
    sx_msg_destroy(&bye);
    fake_hello(a, "wa", 1);
    fake_result(a, &held->tasks[0], SX_STATUS_INFRA_ERROR);
    SX_CHECK(fake_expect(a, SX_MSG_ASSIGN, 300) == NULL); /* nothing queued twice */
    fake_result(b, &taken->tasks[0], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    /* b dies after the end: nothing changes. */
    fake_destroy(&b);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 3);
    snprintf(path, sizeof path, "%s/journal.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 3);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", held->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 2 &&
             strcmp(r.worker, "wb") == 0);
    sx_result_clear(&r);
    sx_msg_destroy(&held);
    sx_msg_destroy(&mine);
    sx_msg_destroy(&taken);
    fake_destroy(&a);
    harness_destroy(&h);
}

/* The coordinator's own thread stops for stall_ms once the test arms it, as
 * a stopped process, a slow disk or a starved thread stops it: the progress
 * callback runs inside its loop. */
typedef struct {
    atomic_bool armed;
    atomic_bool over;
    int stall_ms;
} stall_t;

static void stall_once(const char *json, void *arg)
{
    (void)json;
    stall_t *stall = arg;
    if (atomic_exchange(&stall->armed, false)) {
        zclock_sleep(stall->stall_ms); /* the stall itself, not a wait */
        atomic_store(&stall->over, true);
    }
}

/* The coordinator stalls for twice dead-after while its two workers keep
 * beating: their beats wait in its queue. Waking up, it does not count the
 * time it stood still as their silence: a coordinator that read one message
 * and then expired would drop whichever worker's beat came second, put its
 * task back in the queue with an attempt spent, and never end the run. */
static void test_coordinator_stall_kills_nobody(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    stall_t stall = {.stall_ms = 2 * DEAD_MS};
    c.progress = stall_once;
    c.progress_arg = &stall;
    c.progress_ms = 10;
    harness_start(h, &c);
    fake_t *a = fake_new(h->endpoint, "wa", 1);
    sx_msg_t *for_a = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    sx_msg_t *for_b = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(for_a && for_b);
    atomic_store(&stall.armed, true);
    for (int64_t end = zclock_mono() + WAIT_MS;
         !atomic_load(&stall.over) && zclock_mono() < end;) {
        fakes_beat(NULL);
        zclock_sleep(10);
    }
    SX_CHECK(atomic_load(&stall.over));
    fake_result(a, &for_a->tasks[0], SX_STATUS_MATCH);
    fake_result(b, &for_b->tasks[0], SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", for_a->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 1 &&
             strcmp(r.worker, "wa") == 0);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", for_b->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MISMATCH && r.attempts == 1 &&
             strcmp(r.worker, "wb") == 0);
    sx_result_clear(&r);
    sx_msg_destroy(&for_a);
    sx_msg_destroy(&for_b);
    fake_destroy(&a);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* A worker that heartbeats but never answers loses the unit at its deadline
 * (timeout_s 1 + grace); the attempt is spent and another worker takes it. */
static void test_attempt_deadline(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.attempt_grace_ms = 200;
    harness_start(h, &c);
    int64_t given = zclock_mono(); /* no later than the dispatch */
    fake_t *hang = fake_new(h->endpoint, "hang", 1);
    sx_msg_t *held = fake_expect(hang, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(held);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    sx_msg_t *taken = NULL;
    while (!taken && zclock_mono() - given < WAIT_MS) {
        fake_beat(hang); /* alive all along */
        taken = fake_expect(b, SX_MSG_ASSIGN, 50);
    }
    SX_CHECK(taken && taken->tasks[0].attempt == 2 && zclock_mono() - given >= 1200);
    fake_result(hang, &held->tasks[0], SX_STATUS_MATCH); /* too late: dropped */
    fake_result(b, &taken->tasks[0], SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", "t001", &r));
    SX_CHECK(r.status == SX_STATUS_MISMATCH && r.attempts == 2);
    sx_result_clear(&r);
    sx_msg_destroy(&held);
    sx_msg_destroy(&taken);
    fake_destroy(&hang);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* The disk fills up: files may grow to `bytes` and no further (the file
 * size limit stands in for a full disk: EFBIG where ENOSPC would come).
 * Returns the limit to put back with disk_restore. */
static struct rlimit disk_full_at(off_t bytes)
{
    struct rlimit saved, small;
    SX_CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    small = saved;
    small.rlim_cur = (rlim_t)bytes;
    signal(SIGXFSZ, SIG_IGN);
    SX_CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    return saved;
}

static void disk_restore(const struct rlimit *saved)
{
    SX_CHECK(setrlimit(RLIMIT_FSIZE, saved) == 0);
    signal(SIGXFSZ, SIG_DFL);
}

/* A journal that cannot take a record stops the run (1, the error names the
 * journal and errno), stays a valid prefix, and --resume completes the run. */
static void test_journal_failure_stops_and_resumes(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 2);
    fake_result(f, &assign->tasks[0], SX_STATUS_MATCH);
    sx_msg_t *ack = fake_expect(f, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack);
    sx_msg_destroy(&ack);
    char journal[PATH_MAX + 64];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", h->out);
    struct stat st;
    SX_CHECK(stat(journal, &st) == 0);
    struct rlimit saved = disk_full_at(st.st_size + 20);
    fake_result(f, &assign->tasks[1], SX_STATUS_MISMATCH);
    bool ended = harness_wait(h, WAIT_MS);
    disk_restore(&saved);
    SX_CHECK(ended && h->run.rc == 1);
    char want[PATH_MAX + 192];
    snprintf(want, sizeof want,
             "cannot settle m1/%s: %s: cannot append a record (errno 27: File too large)",
             assign->tasks[1].task_id, journal);
    SX_CHECK(strcmp(h->run.err.msg, want) == 0);
    SX_CHECK(sx_testbench_count_lines(journal) == 1);
    harness_stop(h);
    fake_destroy(&f);
    c.resume = true;
    harness_start(h, &c);
    f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *rest = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(rest && rest->task_count == 1 &&
             strcmp(rest->tasks[0].task_id, assign->tasks[1].task_id) == 0);
    fake_answer(f, rest, SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    SX_CHECK(sx_testbench_count_lines(journal) == 2);
    sx_msg_destroy(&assign);
    sx_msg_destroy(&rest);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* A verdict the coordinator settles itself stops the run too when it cannot
 * be journaled: a missing prediction, settled at start-up (no coordinator
 * is made), and a last attempt's infra_error (the run ends with 1, and
 * the result is not acknowledged). Either way the error names the journal
 * and errno, and the journal stays empty. */
static void test_local_settle_failures_stop_the_run(void)
{
    const char *markers[] = {"", "-"};
    harness_t *h = harness_new(2, markers);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    char journal[PATH_MAX + 64], want[PATH_MAX + 128];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", h->out);
    snprintf(want, sizeof want, "%s: cannot append a record (errno 27: File too large)",
             journal);
    sx_error_t err;
    struct rlimit saved = disk_full_at(0);
    sx_coordinator_t *refused = sx_coordinator_new(&c, &err);
    disk_restore(&saved);
    SX_CHECK(refused == NULL && strcmp(err.msg, want) == 0);
    SX_CHECK(sx_testbench_count_lines(journal) == 0);
    harness_destroy(&h);

    h = harness_new(1, NULL);
    files[0] = h->preds;
    c = base_config(h, s_names, files);
    c.retry_budget = 1;
    snprintf(journal, sizeof journal, "%s/journal.jsonl", h->out);
    snprintf(want, sizeof want, "%s: cannot append a record (errno 27: File too large)",
             journal);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 1);
    saved = disk_full_at(0);
    fake_result(f, &assign->tasks[0], SX_STATUS_INFRA_ERROR);
    bool ended = harness_wait(h, WAIT_MS);
    disk_restore(&saved);
    SX_CHECK(ended && h->run.rc == 1 && strcmp(h->run.err.msg, want) == 0);
    SX_CHECK(sx_testbench_count_lines(journal) == 0);
    /* Not durable, so not acknowledged: the worker keeps it spooled. */
    SX_CHECK(fake_expect(f, SX_MSG_ACK, 300) == NULL);
    sx_msg_destroy(&assign);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* A final CSV that cannot be stored stops the run like a journal that
 * cannot take the verdict: nothing is journaled and no CSV is left. */
static void test_csv_that_cannot_be_stored_stops_the_run(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 1);
    struct rlimit saved = disk_full_at(0);
    fake_result(f, &assign->tasks[0], SX_STATUS_MATCH);
    bool ended = harness_wait(h, WAIT_MS);
    disk_restore(&saved);
    SX_CHECK(ended && h->run.rc == 1);
    char path[PATH_MAX + 64], want[PATH_MAX + 192];
    snprintf(path, sizeof path, "%s/m1/csv/%s.csv", h->out, assign->tasks[0].task_id);
    /* The temporary name is PATH.tmp.PID.N, N counting this process's
     * atomic writes. */
    snprintf(want, sizeof want, "cannot settle m1/%s: %s.tmp.%d.",
             assign->tasks[0].task_id, path, (int)getpid());
    SX_CHECK(strncmp(h->run.err.msg, want, strlen(want)) == 0);
    const char *n = h->run.err.msg + strlen(want);
    size_t digits = strspn(n, "0123456789");
    SX_CHECK(digits > 0 && strcmp(n + digits, ": write failed: File too large") == 0);
    SX_CHECK(!sx_file_exists(path));
    snprintf(path, sizeof path, "%s/journal.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 0);
    sx_msg_destroy(&assign);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* --repeat 2 compares the second run of each task with a final CSV to the
 * first, which keeps its verdict: a run that gives no CSV where the first
 * gave one makes the task unstable; an infra_error, even a terminal one,
 * proves nothing and leaves it stable. */
static void test_repeat_marks_unstable_runs(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.repeat = 2;
    c.retry_budget = 1;
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *first = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && first->task_count == 2);
    fake_answer(f, first, SX_STATUS_MATCH);
    sx_msg_t *second = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(second && second->task_count == 2);
    fake_result(f, &second->tasks[0], SX_STATUS_FLINK_ERROR);
    fake_result(f, &second->tasks[1], SX_STATUS_INFRA_ERROR);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", second->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.repeated && r.unstable);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", second->tasks[1].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.repeated && !r.unstable);
    sx_result_clear(&r);
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* --resume with a changed candidate re-executes exactly that unit. */
static void test_resume_reruns_changed_candidates(void)
{
    harness_t *h = harness_new(3, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 3;
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 3);
    fake_answer(f, assign, SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    harness_stop(h);
    fake_destroy(&f);
    const char *preds = "{\"task_id\": \"t001\", \"sql\": \"SELECT 1 \"}\n"
                        "{\"task_id\": \"t002\", \"sql\": \"SELECT 'changed'\"}\n"
                        "{\"task_id\": \"t003\", \"sql\": \"SELECT 3 \"}\n";
    SX_CHECK(sx_file_write_atomic(h->preds, preds, strlen(preds), NULL) == 0);
    c.resume = true;
    harness_start(h, &c);
    f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *again = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(again && again->task_count == 1 &&
             strcmp(again->tasks[0].task_id, "t002") == 0);
    SX_CHECK(strcmp(again->tasks[0].sql, "SELECT 'changed'") == 0);
    fake_answer(f, again, SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", "t002", &r) && r.status == SX_STATUS_MISMATCH);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", "t001", &r) && r.status == SX_STATUS_MATCH);
    sx_result_clear(&r);
    sx_msg_destroy(&assign);
    sx_msg_destroy(&again);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* Resumes c's run with the given rerun statuses; when `expect` is non-NULL,
 * the one shard it dispatches holds exactly those tasks (in order) and is
 * answered with `answers`. Returns the coordinator's count of infra_errors. */
static size_t resume_with(harness_t *h, sx_coordinator_config_t *c,
                          const sx_status_t *rerun, size_t rerun_count,
                          const char *const *expect, const sx_status_t *answers,
                          size_t count)
{
    c->resume = true;
    memset(c->rerun, 0, sizeof c->rerun);
    for (size_t i = 0; i < rerun_count; i++)
        c->rerun[rerun[i]] = true;
    harness_start(h, c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    if (count) {
        sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(assign && assign->task_count == count);
        for (size_t i = 0; i < count; i++) {
            SX_CHECK(strcmp(assign->tasks[i].task_id, expect[i]) == 0);
            SX_CHECK(assign->tasks[i].attempt == 1); /* a fresh retry budget */
            fake_result(f, &assign->tasks[i], answers[i]);
        }
        sx_msg_destroy(&assign);
    }
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    size_t infra = sx_coordinator_infra_errors(h->run.coordinator);
    harness_stop(h);
    fake_destroy(&f);
    return infra;
}

static void check_result(harness_t *h, const char *task_id, sx_status_t status,
                         bool has_csv)
{
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", task_id, &r) && r.status == status);
    SX_CHECK(has_csv ? r.csv && sx_file_exists(r.csv) : r.csv == NULL);
    sx_result_clear(&r);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/csv/%s.csv", h->out, task_id);
    SX_CHECK(sx_file_exists(path) == has_csv); /* no CSV left behind by an old verdict */
}

/* --rerun executes the settled units of its statuses again with a fresh
 * budget; their new verdicts replace the old in every output while the
 * journal keeps both; the last record for the current inputs holds on the
 * next resume; a CSV replaced behind a record's back is never paired with
 * its verdict (the unit runs again). */
static void test_rerun_replaces_verdicts_journal_keeps_history(void)
{
    harness_t *h = harness_new(3, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 3;
    c.retry_budget = 1;
    c.rerun[SX_STATUS_INFRA_ERROR] = true;
    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL &&
             strstr(err.msg, "--rerun needs --resume"));
    c.rerun[SX_STATUS_INFRA_ERROR] = false;
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(assign && assign->task_count == 3);
    fake_result(f, &assign->tasks[0], SX_STATUS_MATCH);
    fake_result(f, &assign->tasks[1], SX_STATUS_TIMEOUT);
    fake_result(f, &assign->tasks[2], SX_STATUS_INFRA_ERROR);
    sx_msg_destroy(&assign);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    SX_CHECK(sx_coordinator_infra_errors(h->run.coordinator) == 1);
    harness_stop(h);
    fake_destroy(&f);
    check_result(h, "t001", SX_STATUS_MATCH, true);
    check_result(h, "t003", SX_STATUS_INFRA_ERROR, false);

    const sx_status_t rerun[] = {SX_STATUS_MATCH, SX_STATUS_TIMEOUT,
                                 SX_STATUS_INFRA_ERROR};
    const char *const all[] = {"t001", "t002", "t003"};
    const sx_status_t now[] = {SX_STATUS_MISMATCH, SX_STATUS_MATCH, SX_STATUS_MATCH};
    SX_CHECK(resume_with(h, &c, rerun, 3, all, now, 3) == 0);
    check_result(h, "t001", SX_STATUS_MISMATCH, false);
    check_result(h, "t002", SX_STATUS_MATCH, true);
    check_result(h, "t003", SX_STATUS_MATCH, true);
    char journal[PATH_MAX + 64];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(journal) == 6);

    /* Resuming again: the last records hold, nothing runs. */
    SX_CHECK(resume_with(h, &c, NULL, 0, NULL, NULL, 0) == 0);
    check_result(h, "t001", SX_STATUS_MISMATCH, false);
    check_result(h, "t003", SX_STATUS_MATCH, true);
    SX_CHECK(sx_testbench_count_lines(journal) == 6);

    /* A CSV that is not the one journaled with its verdict: run again. */
    char csv[PATH_MAX + 64];
    snprintf(csv, sizeof csv, "%s/m1/csv/t002.csv", h->out);
    SX_CHECK(sx_file_write_atomic(csv, "x\n2\n", 4, NULL) == 0);
    const char *const t002[] = {"t002"};
    const sx_status_t timeout[] = {SX_STATUS_TIMEOUT};
    SX_CHECK(resume_with(h, &c, NULL, 0, t002, timeout, 1) == 0);
    check_result(h, "t002", SX_STATUS_TIMEOUT, false);
    SX_CHECK(sx_testbench_count_lines(journal) == 7);
    harness_destroy(&h);
}

/* --tasks runs exactly the subset, every output counts it; an unknown ID is
 * an error naming it, and --tasks with --shard is refused. Units are queued
 * task by task, a task's methods together: a shard of two holds one task's m1 and
 * m2 (its files and sources go to one worker, not to one per method), the
 * tasks in task_ids.txt order; results.jsonl keeps each method's tasks in
 * that order. */
static void test_tasks_subset(void)
{
    harness_t *h = harness_new(4, NULL);
    const char *names[] = {"m1", "m2"};
    const char *files[] = {h->preds, h->preds};
    sx_coordinator_config_t c = base_config(h, names, files);
    const char *const unknown[] = {"t002", "t009", "x"};
    c.tasks = unknown;
    c.task_count = 3;
    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strstr(err.msg, "--tasks: 2 ID(s) not in ") &&
             strstr(err.msg, "task_ids.txt: 't009', 'x'"));
    const char *const subset[] = {"t004", "t002"};
    c.tasks = subset;
    c.task_count = 2;
    c.subset_count = 2;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL &&
             strstr(err.msg, "--shard and --tasks cannot be combined"));
    c.subset_count = 0;
    c.method_count = 2;
    harness_start(h, &c);
    fake_t *f = fake_new(h->endpoint, "fw", 1);
    const char *want[] = {"t002", "t004"}; /* task_ids.txt order */
    for (int i = 0; i < 2; i++) {
        sx_msg_t *assign = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(assign && assign->task_count == 2);
        SX_CHECK(strcmp(assign->tasks[0].task_id, want[i]) == 0 &&
                 strcmp(assign->tasks[1].task_id, want[i]) == 0 &&
                 strcmp(assign->tasks[0].method, "m1") == 0 &&
                 strcmp(assign->tasks[1].method, "m2") == 0);
        fake_answer(f, assign, SX_STATUS_MATCH);
        sx_msg_destroy(&assign);
    }
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    harness_stop(h);
    fake_destroy(&f);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/m1/results.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 2);
    snprintf(path, sizeof path, "%s/m2/results.jsonl", h->out);
    size_t size = 0;
    char *text = sx_file_read(path, 1 << 20, &size, NULL);
    char *t2 = text ? strstr(text, "\"t002\"") : NULL;
    char *t4 = text ? strstr(text, "\"t004\"") : NULL;
    SX_CHECK(t2 && t4 && t2 < t4);
    free(text);
    snprintf(path, sizeof path, "%s/summary.json", h->out);
    text = sx_file_read(path, 1 << 20, &size, NULL);
    SX_CHECK(text && strstr(text, "\"correct\": 2,\n      \"total\": 2,\n") &&
             strstr(text, "\"subset\": {\n    \"selected_by\": \"--tasks\",\n    "
                          "\"tasks\": 2,\n    \"bench_tasks\": 4,"));
    free(text);
    harness_destroy(&h);
}

/* Method names that would land on a file of the OUT layout are refused. */
static void test_method_names_colliding_with_out(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *bad[] = {"journal.jsonl", "summary.json", "summary.json.tmp",
                         "report.html"};
    for (size_t i = 0; i < 4; i++) {
        const char *names[] = {bad[i]};
        const char *files[] = {h->preds};
        sx_coordinator_config_t c = base_config(h, names, files);
        sx_error_t err;
        SX_CHECK(sx_coordinator_new(&c, &err) == NULL && strstr(err.msg, "collides"));
    }
    const char *twice[] = {"m1", "m1"};
    const char *files[] = {h->preds, h->preds};
    sx_coordinator_config_t c = base_config(h, twice, files);
    c.method_count = 2;
    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL && strstr(err.msg, "twice"));
    harness_destroy(&h);
}

/* A configuration the coordinator cannot run with is refused before it
 * binds, each with its reason. */
static void test_config_refused(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    const char *unsafe[] = {"../m1"};
    sx_coordinator_config_t c = base_config(h, unsafe, files);
    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "method name '../m1' is not a safe folder name") == 0);
    c = base_config(h, s_names, files);
    c.subset_index = 2;
    c.subset_count = 2;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "--shard 2/2: I must be below N") == 0);
    c = base_config(h, s_names, files);
    c.cert_path = "/nonexistent/coordinator.cert";
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "--cert needs --allow DIR of worker public keys") == 0);
    c.allow_dir = h->bench;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "/nonexistent/coordinator.cert: cannot load the CURVE "
                             "certificate (and its _secret file)") == 0);
    c = base_config(h, s_names, files);
    c.out_dir = NULL;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg,
                    "coordinator needs --bench, --method, --output and an endpoint") ==
             0);
    const char *unreadable[] = {"/nonexistent/preds.jsonl"};
    c = base_config(h, s_names, unreadable);
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strcmp(err.msg, "method m1: /nonexistent/preds.jsonl: cannot open: No such "
                             "file or directory") == 0);
    c = base_config(h, s_names, files);
    c.endpoint = "ipc:///nonexistent/coordinator.sock";
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL);
    SX_CHECK(strncmp(err.msg, "cannot bind ipc:///nonexistent/coordinator.sock: ", 49) ==
             0);
    harness_destroy(&h);
}

/* A peer that says HELLO again does not get back the unit it let go while
 * another worker is connected: it cannot hold a unit forever that way. */
static void test_rehello_does_not_keep_the_unit(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *greedy = fake_new(h->endpoint, "greedy", 1);
    sx_msg_t *held = fake_expect(greedy, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(held);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    SX_CHECK(fake_expect(b, SX_MSG_ASSIGN, 300) == NULL);
    fake_hello(greedy, "greedy2", 1);
    sx_msg_t *taken = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(taken && taken->tasks[0].attempt == 1);
    SX_CHECK(fake_expect(greedy, SX_MSG_ASSIGN, 300) == NULL);
    fake_result(b, &taken->tasks[0], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&held);
    sx_msg_destroy(&taken);
    fake_destroy(&greedy);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* A unit that failed on one worker and was let go by the other (HELLO
 * again) still goes to one of them: shunning both never stalls it. */
static void test_shunned_everywhere_still_dispatched(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.retry_budget = 10;
    harness_start(h, &c);
    fake_t *a = fake_new(h->endpoint, "wa", 1);
    sx_msg_t *first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first);
    fake_t *b = fake_new(h->endpoint, "wb", 1);
    fake_beat(b);
    zclock_sleep(200); /* b is in before a fails */
    fake_result(a, &first->tasks[0], SX_STATUS_INFRA_ERROR);
    sx_msg_t *second = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(second && second->tasks[0].attempt == 2);
    fake_hello(b, "wb", 1);
    sx_msg_t *third = NULL;
    fake_t *taker = NULL;
    for (int64_t end = zclock_mono() + WAIT_MS; !third && zclock_mono() < end;) {
        taker = a;
        third = fake_expect(a, SX_MSG_ASSIGN, 50);
        if (!third) {
            taker = b;
            third = fake_expect(b, SX_MSG_ASSIGN, 50);
        }
    }
    SX_CHECK(third && third->tasks[0].attempt == 2);
    fake_result(taker, &third->tasks[0], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    sx_msg_destroy(&third);
    fake_destroy(&a);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* Workers that fail everything at once (a full disk) cannot spend a unit's
 * budget between them: once it failed on both, it waits for the third. */
static void test_broken_workers_do_not_take_a_unit_back(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.retry_budget = 10;
    harness_start(h, &c);
    fake_t *healthy = fake_new(h->endpoint, "healthy", 1);
    sx_msg_t *busy = fake_expect(healthy, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(busy);
    fake_t *broken[2] = {fake_new(h->endpoint, "broken0", 1), NULL};
    sx_msg_t *unit = fake_expect(broken[0], SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(unit);
    broken[1] = fake_new(h->endpoint, "broken1", 1);
    fake_result(broken[0], &unit->tasks[0], SX_STATUS_INFRA_ERROR);
    sx_msg_t *retry = fake_expect(broken[1], SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(retry && retry->tasks[0].attempt == 2);
    fake_result(broken[1], &retry->tasks[0], SX_STATUS_INFRA_ERROR);
    for (int i = 0; i < 2; i++)
        SX_CHECK(fake_expect(broken[i], SX_MSG_ASSIGN, 300) == NULL);
    fake_result(healthy, &busy->tasks[0], SX_STATUS_MATCH);
    sx_msg_t *last = fake_expect(healthy, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(last && last->tasks[0].attempt == 3 &&
             strcmp(last->tasks[0].task_id, unit->tasks[0].task_id) == 0);
    fake_result(healthy, &last->tasks[0], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&busy);
    sx_msg_destroy(&unit);
    sx_msg_destroy(&retry);
    sx_msg_destroy(&last);
    fake_destroy(&healthy);
    for (int i = 0; i < 2; i++)
        fake_destroy(&broken[i]);
    harness_destroy(&h);
}

/* A RELEASE from w listing `count` tasks (method m1) under their tokens. */
static void fake_release(fake_t *f, const sx_msg_task_t *const *tasks, size_t count)
{
    sx_msg_t *release = sx_msg_new(SX_MSG_RELEASE);
    for (size_t i = 0; i < count; i++)
        sx_msg_add_task(release, tasks[i]->method, tasks[i]->task_id, NULL, 0,
                        tasks[i]->token);
    SX_CHECK(sx_msg_send(release, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&release);
}

/* The demo: a worker stuck on a slow first task holds the rest of
 * its shards while another has nothing to run. Once one is idle (and the
 * queue empty, not before), the busy ones are recalled; the units the slow
 * one gives back go to the idle worker unspent, under new tokens, and its
 * late RESULT under an old token is dropped. A RELEASE nobody asked for,
 * and in an answer the entries naming a wrong token, a unit outside the run,
 * a unit of another worker or one already listed, change nothing. */
static void test_idle_worker_gets_unstarted_units(void)
{
    harness_t *h = harness_new(9, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 3;
    harness_start(h, &c);
    fake_t *slow = fake_new(h->endpoint, "slow", 2);
    sx_msg_t *first = fake_expect(slow, SX_MSG_ASSIGN, WAIT_MS);
    sx_msg_t *second = fake_expect(slow, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && first->task_count == 3 && second && second->task_count == 3);
    fake_t *other = fake_new(h->endpoint, "other", 1);
    sx_msg_t *own = fake_expect(other, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(own && own->task_count == 3);
    SX_CHECK(fake_expect(slow, SX_MSG_RECALL, 300) == NULL); /* nobody idle yet */
    /* Unasked, even with the right tokens: ignored. The coordinator reads a
     * worker's messages in order: once the file comes, it was applied. */
    const sx_msg_task_t *unasked[] = {&first->tasks[1], &first->tasks[2]};
    fake_release(slow, unasked, 2);
    SX_CHECK(fake_fetch(slow, gold_hash(first), WAIT_MS));

    /* quick joins idle: the busy ones are recalled, once each. */
    fake_t *quick = fake_new(h->endpoint, "quick", 2);
    sx_msg_t *recall = fake_expect(slow, SX_MSG_RECALL, WAIT_MS);
    SX_CHECK(recall);
    sx_msg_destroy(&recall);
    recall = fake_expect(other, SX_MSG_RECALL, WAIT_MS); /* other never answers */
    SX_CHECK(recall);
    SX_CHECK(fake_expect(slow, SX_MSG_RECALL, 300) == NULL);
    sx_msg_task_t wrong_token = first->tasks[1];
    wrong_token.token++;
    sx_msg_task_t unknown = {"m1", "t999", NULL, 1, first->tasks[2].token, 0};
    const sx_msg_task_t *answer[] = {
        &wrong_token,      &unknown,          &own->tasks[1],    &first->tasks[2],
        &second->tasks[0], &second->tasks[1], &second->tasks[2], &first->tasks[2]};
    fake_release(slow, answer, 8);
    const sx_msg_task_t *const *released = answer + 3; /* these four, in order */
    sx_msg_t *taken[2] = {fake_expect(quick, SX_MSG_ASSIGN, WAIT_MS),
                          fake_expect(quick, SX_MSG_ASSIGN, WAIT_MS)};
    SX_CHECK(taken[0] && taken[1] && taken[0]->task_count == 3 &&
             taken[1]->task_count == 1);
    for (size_t i = 0; i < 4; i++) {
        const sx_msg_task_t *task = &taken[i / 3]->tasks[i % 3];
        SX_CHECK(strcmp(task->task_id, released[i]->task_id) == 0);
        SX_CHECK(task->attempt == 1 && task->token != released[i]->token);
    }
    SX_CHECK(fake_expect(slow, SX_MSG_ASSIGN, 300) == NULL);

    /* slow reports a unit it gave back, under the old token: dropped. */
    fake_result(slow, &first->tasks[2], SX_STATUS_MATCH);
    sx_msg_t *ack = fake_expect(slow, SX_MSG_ACK, WAIT_MS);
    SX_CHECK(ack && ack->token == first->tasks[2].token);
    sx_msg_destroy(&ack);
    fake_result(slow, &first->tasks[0], SX_STATUS_MATCH);
    fake_result(slow, &first->tasks[1], SX_STATUS_MATCH); /* still its own */
    fake_answer(other, own, SX_STATUS_MATCH);
    for (int i = 0; i < 2; i++)
        fake_answer(quick, taken[i], SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/journal.jsonl", h->out);
    SX_CHECK(sx_testbench_count_lines(path) == 9);
    sx_result_t r;
    for (size_t i = 0; i < 2; i++) {
        SX_CHECK(read_result(h, "m1", first->tasks[i].task_id, &r));
        SX_CHECK(r.status == SX_STATUS_MATCH && strcmp(r.worker, "slow") == 0);
        sx_result_clear(&r);
    }
    SX_CHECK(read_result(h, "m1", own->tasks[1].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 1 &&
             strcmp(r.worker, "other") == 0);
    sx_result_clear(&r);
    for (size_t i = 0; i < 4; i++) {
        SX_CHECK(read_result(h, "m1", released[i]->task_id, &r));
        SX_CHECK(r.status == SX_STATUS_MISMATCH && r.attempts == 1 &&
                 strcmp(r.worker, "quick") == 0);
        sx_result_clear(&r);
    }
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    sx_msg_destroy(&own);
    sx_msg_destroy(&recall);
    for (int i = 0; i < 2; i++)
        sx_msg_destroy(&taken[i]);
    fake_destroy(&slow);
    fake_destroy(&other);
    fake_destroy(&quick);
    harness_destroy(&h);
}

/* A worker running three units at once gets shards past its capacity (1)
 * while a slot would have nothing to run, and no more once it holds a unit
 * per slot. When it goes silent, the units it may have been running (its
 * first three) spend an attempt, the one after them does not. */
static void test_slots_credit_and_loss(void)
{
    harness_t *h = harness_new(6, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    harness_start(h, &c);
    fake_t *wide = fake_new_slots(h->endpoint, "wide", 1, 3);
    sx_msg_t *lost[2] = {fake_expect(wide, SX_MSG_ASSIGN, WAIT_MS),
                         fake_expect(wide, SX_MSG_ASSIGN, WAIT_MS)};
    SX_CHECK(lost[0] && lost[1] && lost[0]->task_count == 2 && lost[1]->task_count == 2);
    SX_CHECK(fake_expect(wide, SX_MSG_ASSIGN, 300) == NULL);
    fake_go_silent(wide);
    fake_t *alive = fake_new(h->endpoint, "alive", 3);
    sx_msg_t *own = fake_expect(alive, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(own && own->task_count == 2);
    /* wide stays silent: dead after DEAD_MS, its units come to alive. */
    sx_msg_t *back[2] = {fake_expect(alive, SX_MSG_ASSIGN, WAIT_MS),
                         fake_expect(alive, SX_MSG_ASSIGN, WAIT_MS)};
    SX_CHECK(back[0] && back[1] && back[0]->task_count == 2 && back[1]->task_count == 2);
    for (size_t i = 0; i < 4; i++) {
        const sx_msg_task_t *was = &lost[i / 2]->tasks[i % 2];
        const sx_msg_task_t *now = &back[i / 2]->tasks[i % 2];
        SX_CHECK(strcmp(now->task_id, was->task_id) == 0);
        SX_CHECK(now->attempt == (i < 3 ? 2 : 1));
    }
    fake_answer(alive, own, SX_STATUS_MATCH);
    for (int i = 0; i < 2; i++)
        fake_answer(alive, back[i], SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", lost[1]->tasks[0].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 2 &&
             strcmp(r.worker, "alive") == 0);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", lost[1]->tasks[1].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 1);
    sx_result_clear(&r);
    for (int i = 0; i < 2; i++) {
        sx_msg_destroy(&lost[i]);
        sx_msg_destroy(&back[i]);
    }
    sx_msg_destroy(&own);
    fake_destroy(&wide);
    fake_destroy(&alive);
    harness_destroy(&h);
}

/* A free slot makes a worker idle: two workers of two slots hold three
 * units each, and nobody is recalled while every slot has a unit; once one
 * finishes two, the other is recalled, and the unit it had not started
 * moves to the free slot, unspent. */
static void test_free_slot_counts_as_idle(void)
{
    harness_t *h = harness_new(6, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 3;
    harness_start(h, &c);
    fake_t *a = fake_new_slots(h->endpoint, "a", 1, 2);
    sx_msg_t *held = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(held && held->task_count == 3);
    fake_t *b = fake_new_slots(h->endpoint, "b", 1, 2);
    sx_msg_t *own = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(own && own->task_count == 3);
    SX_CHECK(fake_expect(a, SX_MSG_RECALL, 300) == NULL);
    fake_result(b, &own->tasks[0], SX_STATUS_MATCH);
    fake_result(b, &own->tasks[1], SX_STATUS_MATCH);
    sx_msg_t *recall = fake_expect(a, SX_MSG_RECALL, WAIT_MS);
    SX_CHECK(recall);
    const sx_msg_task_t *unstarted[] = {&held->tasks[2]};
    fake_release(a, unstarted, 1);
    sx_msg_t *moved = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(moved && moved->task_count == 1 && moved->tasks[0].attempt == 1 &&
             strcmp(moved->tasks[0].task_id, held->tasks[2].task_id) == 0);
    SX_CHECK(fake_expect(a, SX_MSG_ASSIGN, 300) == NULL);
    fake_result(a, &held->tasks[0], SX_STATUS_MATCH);
    fake_result(a, &held->tasks[1], SX_STATUS_MATCH);
    fake_result(b, &own->tasks[2], SX_STATUS_MATCH);
    fake_answer(b, moved, SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", held->tasks[2].task_id, &r));
    SX_CHECK(r.status == SX_STATUS_MISMATCH && r.attempts == 1 &&
             strcmp(r.worker, "b") == 0);
    sx_result_clear(&r);
    sx_msg_destroy(&held);
    sx_msg_destroy(&own);
    sx_msg_destroy(&recall);
    sx_msg_destroy(&moved);
    fake_destroy(&a);
    fake_destroy(&b);
    harness_destroy(&h);
}

/* ---- real agents with the simulated executor --------------------------- */

typedef struct {
    sx_agent_t *agent;
    int rc;
} agent_run_t;

static void agent_actor(zsock_t *pipe, void *arg)
{
    agent_run_t *run = arg;
    zsock_signal(pipe, 0);
    run->rc = sx_agent_run(run->agent, pipe, NULL);
    zstr_send(pipe, "done");
}

/* Two agents (one slot and two slots), several methods, every kind of
 * verdict: every task ID ends up exactly once in each method's results,
 * flaky tasks recover on attempt 2. */
static void test_agents_complete_run(void)
{
    const char *markers[] = {
        "", "/*sim:mismatch*/", "/*sim:flaky*/", "-", "", "/*sim:flink_error*/",
        "", "/*sim:timeout*/"};
    harness_t *h = harness_new(8, markers);
    const char *names[] = {"m1", "m2"};
    const char *files[] = {h->preds, h->preds};
    sx_coordinator_config_t c = base_config(h, names, files);
    c.method_count = 2;
    harness_start(h, &c);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=5", NULL);
    agent_run_t runs[2];
    zactor_t *actors[2];
    for (int i = 0; i < 2; i++) {
        char dir[PATH_MAX + 32], name[16];
        snprintf(dir, sizeof dir, "%s/worker%d", h->bench, i);
        snprintf(name, sizeof name, "w%d", i);
        sx_agent_config_t ac = {.endpoint = h->endpoint,
                                .name = name,
                                .capacity = 2,
                                .slots = i + 1,
                                .work_dir = dir,
                                .exec = sx_simexec_run,
                                .exec_ctx = sim,
                                .heartbeat_ms = BEAT_MS,
                                .dead_after_ms = DEAD_MS};
        runs[i].agent = sx_agent_new(&ac, NULL);
        SX_CHECK(runs[i].agent);
        actors[i] = zactor_new(agent_actor, &runs[i]);
    }
    SX_CHECK(harness_wait(h, 10000) && h->run.rc == 0);
    for (int i = 0; i < 2; i++) {
        /* The final goodbye ends each agent by itself. */
        zpoller_t *poller = zpoller_new(actors[i], NULL);
        SX_CHECK(zpoller_wait(poller, 3000) == actors[i]);
        zpoller_destroy(&poller);
        zactor_destroy(&actors[i]);
        SX_CHECK(runs[i].rc == 0);
        sx_agent_destroy(&runs[i].agent);
    }
    sx_simexec_destroy(&sim);
    const char *methods[] = {"m1", "m2"};
    for (int m = 0; m < 2; m++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s/results.jsonl", h->out, methods[m]);
        SX_CHECK(sx_testbench_count_lines(path) == 8);
        snprintf(path, sizeof path, "%s/%s/submission.jsonl", h->out, methods[m]);
        SX_CHECK(sx_testbench_count_lines(path) == 8);
        sx_result_t r;
        SX_CHECK(read_result(h, methods[m], "t003", &r));
        SX_CHECK(r.status == SX_STATUS_MATCH && r.attempts == 2);
        sx_result_clear(&r);
        SX_CHECK(read_result(h, methods[m], "t004", &r));
        SX_CHECK(r.status == SX_STATUS_MISSING_PREDICTION && !r.csv);
        sx_result_clear(&r);
        SX_CHECK(read_result(h, methods[m], "t006", &r));
        SX_CHECK(r.status == SX_STATUS_FLINK_ERROR && r.attempts == 1);
        sx_result_clear(&r);
        SX_CHECK(read_result(h, methods[m], "t001", &r));
        SX_CHECK(r.status == SX_STATUS_MATCH && r.csv && sx_file_exists(r.csv));
        sx_result_clear(&r);
    }
    char summary[PATH_MAX + 32];
    snprintf(summary, sizeof summary, "%s/summary.json", h->out);
    SX_CHECK(sx_file_exists(summary));
    harness_destroy(&h);
}

/* ---- engines ------------------------------------------------------------ */

#define E120 "flink-1.20.3/kafka-connector-3.4.0-1.20/kafka-3.9.1"
#define E22 "flink-2.2.1/kafka-connector-5.0.0-2.2/kafka-3.9.1"

/* summary.json's run.engine. */
static char *summary_engine(harness_t *h)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary.json", h->out);
    json_t *root = json_load_file(path, 0, NULL);
    const char *engine =
        json_string_value(json_object_get(json_object_get(root, "run"), "engine"));
    char *copy = sx_strdup_or_null(engine);
    json_decref(root);
    return copy;
}

/* f says goodbye, then HELLO as `name` on `runtime` on the same socket, so
 * the coordinator takes the HELLO after the goodbye. */
static void fake_leave_and_hello(fake_t *f, const char *name, const char *runtime)
{
    sx_msg_t *bye = sx_msg_new(SX_MSG_GOODBYE);
    bye->reason = sx_strdup("worker stopping");
    sx_msg_t *hello = sx_msg_hello(name, 1, 1, runtime);
    SX_CHECK(sx_msg_send(bye, f->sock, NULL, NULL) == 0 &&
             sx_msg_send(hello, f->sock, NULL, NULL) == 0);
    sx_msg_destroy(&bye);
    sx_msg_destroy(&hello);
    snprintf(f->name, sizeof f->name, "%s", name);
}

/* The GOODBYE a refused fake gets, before any ASSIGN: final, with the
 * reason `want`. */
static void expect_refused(fake_t *f, const char *want)
{
    sx_msg_t *bye = fake_next(f, WAIT_MS);
    SX_CHECK(bye && bye->type == SX_MSG_GOODBYE && bye->final);
    if (strcmp(bye->reason, want) != 0)
        fprintf(stderr, "refused with '%s'\nnot '%s'\n", bye->reason, want);
    SX_CHECK(strcmp(bye->reason, want) == 0);
    sx_msg_destroy(&bye);
    SX_CHECK(fake_expect(f, SX_MSG_ASSIGN, 300) == NULL);
}

/* A worker whose HELLO names another engine (the runtime's first word) than
 * a connected worker's is refused before any task goes to it; one of the
 * same engine joins whatever its runtime's details, and one that left
 * holds the run to nothing. Resumed, the results
 * the journal holds keep the run to their engine. Every result, the
 * journaled ones too, and summary.json's run say the engine. */
static void test_mixed_engines_refused(void)
{
    harness_t *h = harness_new(4, NULL);
    const char *files[] = {h->preds};
    const char *subset[] = {"t001", "t002"};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.tasks = subset;
    c.task_count = 2;
    harness_start(h, &c);
    /* A worker that left holds no engine: one on E22 takes t001 and says
     * goodbye, and the next HELLO on its socket (so after the goodbye), on
     * E120, is taken. */
    fake_t *a = fake_new_as(h->endpoint, "fgone", 1, 1, E22);
    sx_msg_t *first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && strcmp(first->tasks[0].task_id, "t001") == 0);
    sx_msg_destroy(&first);
    fake_leave_and_hello(a, "fa", E120);
    first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && strcmp(first->tasks[0].task_id, "t001") == 0);
    fake_t *b = fake_new_as(h->endpoint, "fb", 1, 1, E22 " (detail)");
    expect_refused(b,
                   "refused: worker fb runs " E22 ", but worker fa of this run runs " E120
                   "; a mixed EX describes no engine (the coordinator's "
                   "--allow-mixed-engines mixes them)");
    fake_t *same = fake_new_as(h->endpoint, "fsame", 1, 1, E120 " (another host)");
    sx_msg_t *second = fake_expect(same, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(second);
    fake_answer(a, first, SX_STATUS_MATCH);
    fake_answer(same, second, SX_STATUS_MISMATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    char *engine = summary_engine(h);
    SX_CHECK(engine && strcmp(engine, E120) == 0);
    free(engine);
    harness_stop(h);

    /* Resumed over every task: t001 and t002 are the journal's. */
    c.tasks = NULL;
    c.task_count = 0;
    c.resume = true;
    harness_start(h, &c);
    fake_t *c22 = fake_new_as(h->endpoint, "fc", 1, 1, E22);
    expect_refused(c22,
                   "refused: worker fc runs " E22 ", but this run's result of "
                   "m1/t001 was computed on " E120 "; a mixed EX describes no engine "
                   "(the coordinator's --allow-mixed-engines mixes them)");
    fake_t *d = fake_new_as(h->endpoint, "fd", 2, 1, E120);
    for (int shards = 0; shards < 2; shards++) {
        sx_msg_t *rest = fake_expect(d, SX_MSG_ASSIGN, WAIT_MS);
        SX_CHECK(rest);
        fake_answer(d, rest, SX_STATUS_MATCH);
        sx_msg_destroy(&rest);
    }
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "t%03d", i);
        sx_result_t r;
        SX_CHECK(read_result(h, "m1", id, &r));
        SX_CHECK(r.engine && strcmp(r.engine, E120) == 0);
        sx_result_clear(&r);
    }
    engine = summary_engine(h);
    SX_CHECK(engine && strcmp(engine, E120) == 0);
    free(engine);
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    fake_destroy(&a);
    fake_destroy(&b);
    fake_destroy(&same);
    fake_destroy(&c22);
    fake_destroy(&d);
    harness_destroy(&h);
}

/* A result keeps the run to its engine after its worker left: fgone (E120)
 * settles t001 and says goodbye, and the next HELLO on its socket (so after
 * both), on E22, is refused for that result. */
static void test_settled_result_holds_engine(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    harness_start(h, &c);
    fake_t *f = fake_new_as(h->endpoint, "fgone", 1, 1, E120);
    sx_msg_t *first = fake_expect(f, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && strcmp(first->tasks[0].task_id, "t001") == 0);
    fake_answer(f, first, SX_STATUS_MATCH);
    sx_msg_destroy(&first);
    fake_leave_and_hello(f, "fb", E22);
    sx_msg_t *msg = fake_next(f, WAIT_MS);
    while (msg && msg->type != SX_MSG_GOODBYE) { /* its ACK, t002's ASSIGN */
        sx_msg_destroy(&msg);
        msg = fake_next(f, WAIT_MS);
    }
    SX_CHECK(msg && msg->final &&
             strcmp(msg->reason,
                    "refused: worker fb runs " E22 ", but this run's result of m1/t001 "
                    "was computed on " E120 "; a mixed EX describes no engine (the "
                    "coordinator's --allow-mixed-engines mixes them)") == 0);
    sx_msg_destroy(&msg);
    fake_destroy(&f);
    harness_destroy(&h);
}

/* With --allow-mixed-engines both engines work; each result names its own
 * and summary.json's run names both. A real agent turned away by the
 * coordinator stops with the reason. */
static void test_mixed_engines_allowed_and_agent_refused(void)
{
    harness_t *h = harness_new(2, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.shard_size = 1;
    c.allow_mixed_engines = true;
    harness_start(h, &c);
    fake_t *a = fake_new_as(h->endpoint, "fa", 1, 1, E120);
    sx_msg_t *first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    fake_t *b = fake_new_as(h->endpoint, "fb", 1, 1, E22);
    sx_msg_t *second = fake_expect(b, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first && second);
    fake_answer(a, first, SX_STATUS_MATCH);
    fake_answer(b, second, SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_result_t r;
    SX_CHECK(read_result(h, "m1", first->tasks[0].task_id, &r));
    SX_CHECK(strcmp(r.engine, E120) == 0);
    sx_result_clear(&r);
    SX_CHECK(read_result(h, "m1", second->tasks[0].task_id, &r));
    SX_CHECK(strcmp(r.engine, E22) == 0);
    sx_result_clear(&r);
    char *engine = summary_engine(h);
    char want[512];
    bool first_is_t1 = strcmp(first->tasks[0].task_id, "t001") == 0;
    snprintf(want, sizeof want, "%s; %s", first_is_t1 ? E120 : E22,
             first_is_t1 ? E22 : E120);
    SX_CHECK(engine && strcmp(engine, want) == 0);
    free(engine);
    sx_msg_destroy(&first);
    sx_msg_destroy(&second);
    fake_destroy(&a);
    fake_destroy(&b);
    harness_destroy(&h);

    h = harness_new(2, NULL);
    files[0] = h->preds;
    c = base_config(h, s_names, files);
    c.shard_size = 1;
    harness_start(h, &c);
    a = fake_new_as(h->endpoint, "fa", 1, 1, E120);
    first = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(first);
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/worker", h->bench);
    sx_simexec_t *sim = sx_simexec_new("delay_ms=5", NULL);
    sx_agent_config_t ac = {.endpoint = h->endpoint,
                            .name = "w22",
                            .capacity = 1,
                            .slots = 1,
                            .work_dir = dir,
                            .runtime = E22,
                            .exec = sx_simexec_run,
                            .exec_ctx = sim,
                            .heartbeat_ms = BEAT_MS,
                            .dead_after_ms = DEAD_MS};
    sx_error_t err;
    sx_agent_t *agent = sx_agent_new(&ac, &err);
    SX_CHECK(agent);
    SX_CHECK(sx_agent_run(agent, NULL, &err) == -1);
    SX_CHECK(strcmp(err.msg, "the coordinator refused: worker w22 runs " E22
                             ", but worker fa of this run runs " E120
                             "; a mixed EX describes no engine (the coordinator's "
                             "--allow-mixed-engines mixes them)") == 0);
    sx_agent_destroy(&agent);
    sx_simexec_destroy(&sim);
    fake_answer(a, first, SX_STATUS_MATCH);
    sx_msg_t *next = fake_expect(a, SX_MSG_ASSIGN, WAIT_MS);
    SX_CHECK(next);
    fake_answer(a, next, SX_STATUS_MATCH);
    SX_CHECK(harness_wait(h, WAIT_MS) && h->run.rc == 0);
    sx_msg_destroy(&first);
    sx_msg_destroy(&next);
    fake_destroy(&a);
    harness_destroy(&h);
}

/* ---- security ---------------------------------------------------------- */

static void test_plain_tcp_refused_off_loopback(void)
{
    harness_t *h = harness_new(1, NULL);
    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.endpoint = "tcp://*:0";
    sx_error_t err;
    SX_CHECK(sx_coordinator_new(&c, &err) == NULL && strstr(err.msg, "--insecure"));
    harness_destroy(&h);
}

static char *make_cert(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.cert", dir, name);
    zcert_t *cert = zcert_new();
    SX_CHECK(zcert_save(cert, path) == 0);
    zcert_destroy(&cert);
    return sx_strdup(path);
}

/* Only a worker whose public key is in the allow-list gets work. */
static void test_curve_allow_list(void)
{
    harness_t *h = harness_new(2, NULL);
    char keys[PATH_MAX + 32], allow[PATH_MAX + 32];
    snprintf(keys, sizeof keys, "%s/keys", h->bench);
    snprintf(allow, sizeof allow, "%s/allow", h->bench);
    SX_CHECK(sx_mkdirs(keys, NULL) == 0 && sx_mkdirs(allow, NULL) == 0);
    char *server = make_cert(keys, "coordinator");
    char *good = make_cert(keys, "good");
    char *bad = make_cert(keys, "bad");
    zcert_t *good_cert = zcert_load(good);
    char allowed[PATH_MAX + 64];
    snprintf(allowed, sizeof allowed, "%s/good.cert", allow);
    zcert_save_public(good_cert, allowed);
    zcert_destroy(&good_cert);

    const char *files[] = {h->preds};
    sx_coordinator_config_t c = base_config(h, s_names, files);
    c.cert_path = server;
    c.allow_dir = allow;
    c.shard_size = 1;
    harness_start(h, &c);
    zcert_t *server_cert = zcert_load(server);
    const char *certs[] = {bad, good};
    sx_msg_t *got[2] = {NULL, NULL};
    fake_t *fakes[2];
    for (int i = 0; i < 2; i++) {
        fakes[i] = fake_new(NULL, i ? "good" : "bad", 0);
        zcert_t *mine = zcert_load(certs[i]);
        zcert_apply(mine, fakes[i]->sock);
        zcert_destroy(&mine);
        zsock_set_curve_serverkey(fakes[i]->sock, zcert_public_txt(server_cert));
        SX_CHECK(zsock_connect(fakes[i]->sock, "%s", h->endpoint) == 0);
        sx_msg_t *hello = sx_msg_hello(fakes[i]->name, 1, 1, "test runtime");
        sx_msg_send(hello, fakes[i]->sock, NULL, NULL);
        sx_msg_destroy(&hello);
    }
    got[1] = fake_expect(fakes[1], SX_MSG_ASSIGN, WAIT_MS);
    got[0] = fake_expect(fakes[0], SX_MSG_ASSIGN, 500);
    SX_CHECK(got[1] && !got[0]);
    zcert_destroy(&server_cert);
    sx_msg_destroy(&got[1]);
    for (int i = 0; i < 2; i++)
        fake_destroy(&fakes[i]);
    free(server);
    free(good);
    free(bad);
    harness_destroy(&h);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_journal_test(verbose);
    sx_log_level_t saved = sx_log_level();
    sx_log_set_level(verbose ? SX_LOG_DEBUG : SX_LOG_OFF);
    test_credit_limits_shards();
    test_ack_waits_for_its_fsync();
    test_final_goodbye_before_outputs();
    test_dead_worker_requeued_and_late_results_dropped();
    test_retry_budget_on_other_worker();
    test_resume_skips_settled();
    test_malformed_messages_rejected();
    test_noise_and_forgery_change_nothing();
    test_file_too_large_for_a_message_refused();
    test_file_replaced_after_assign_not_sent();
    test_paused_worker_late_infra_error();
    test_coordinator_stall_kills_nobody();
    test_attempt_deadline();
    test_journal_failure_stops_and_resumes();
    test_local_settle_failures_stop_the_run();
    test_repeat_marks_unstable_runs();
    test_csv_that_cannot_be_stored_stops_the_run();
    test_resume_reruns_changed_candidates();
    test_rerun_replaces_verdicts_journal_keeps_history();
    test_tasks_subset();
    test_method_names_colliding_with_out();
    test_config_refused();
    test_broken_workers_do_not_take_a_unit_back();
    test_rehello_does_not_keep_the_unit();
    test_shunned_everywhere_still_dispatched();
    test_idle_worker_gets_unstarted_units();
    test_slots_credit_and_loss();
    test_free_slot_counts_as_idle();
    test_agents_complete_run();
    test_mixed_engines_refused();
    test_settled_result_holds_engine();
    test_mixed_engines_allowed_and_agent_refused();
    test_plain_tcp_refused_off_loopback();
    test_curve_allow_list();
    sx_log_set_level(saved);
    printf("test_coordinator: OK\n");
    return 0;
}
