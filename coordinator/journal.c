/* journal.c: append-only, fsync'ed JSONL of settled results (see journal.h). */
#include "coordinator/journal.h"

#include "common/mem.h"
#include "common/selftest.h"
#include "common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct _sx_journal_t {
    char *path;
    int fd;
    off_t length;       /* of the valid prefix: every record appended in full */
    int fsync_delay_ms; /* SX_JOURNAL_FSYNC_DELAY_MS (journal.h) */
    char *batch;        /* records added, not yet committed: whole lines */
    size_t batch_size, batch_cap;
};

/* SX_JOURNAL_FSYNC_DELAY_MS: 0 unless set to a number of milliseconds. */
static int fsync_delay_from_env(void)
{
    const char *text = getenv("SX_JOURNAL_FSYNC_DELAY_MS");
    char *end = NULL;
    long ms = text ? strtol(text, &end, 10) : 0;
    return text && *end == '\0' && ms > 0 && ms <= 60000 ? (int)ms : 0;
}

/* fsync, after the injected delay of a slow disk, if any. */
static int sync_journal(const sx_journal_t *self)
{
    if (self->fsync_delay_ms > 0)
        usleep((useconds_t)self->fsync_delay_ms * 1000);
    return fsync(self->fd);
}

/* Parses one complete line into (method, result) and hands it to visit. */
static int replay_line(const char *path, size_t line_no, const char *line,
                       sx_journal_visit_fn *visit, void *arg, sx_error_t *err)
{
    json_error_t jerr;
    json_t *root = json_loads(line, 0, &jerr);
    const char *method = root ? json_string_value(json_object_get(root, "method")) : NULL;
    const char *inputs = root ? json_string_value(json_object_get(root, "inputs")) : NULL;
    const char *csv_sha1 =
        root ? json_string_value(json_object_get(root, "csv_sha1")) : NULL;
    json_t *inner = root ? json_object_get(root, "result") : NULL;
    if (!method || !json_is_object(inner)) {
        json_decref(root);
        return sx_error_set(err, "%s:%zu: not a journal record", path, line_no);
    }
    char *text = json_dumps(inner, JSON_COMPACT);
    sx_result_t result;
    memset(&result, 0, sizeof result);
    int rc = sx_result_from_json(text, &result, err);
    if (rc != 0)
        sx_error_prefix(err, "%s:%zu", path, line_no);
    else
        rc = visit(method, inputs, csv_sha1, &result, arg, err);
    sx_result_clear(&result);
    free(text);
    json_decref(root);
    return rc;
}

/* Replays complete lines; returns the length of the valid prefix in *keep. */
static int replay(const char *path, const char *data, size_t size,
                  sx_journal_visit_fn *visit, void *arg, size_t *keep, sx_error_t *err)
{
    size_t start = 0, line_no = 0;
    *keep = 0;
    while (start < size) {
        const char *nl = memchr(data + start, '\n', size - start);
        line_no++;
        if (!nl)
            break; /* torn last line: never acknowledged, so safe to drop */
        char *line = sx_strndup(data + start, (size_t)(nl - data - (long)start));
        int rc = visit ? replay_line(path, line_no, line, visit, arg, err) : 0;
        free(line);
        if (rc != 0)
            return -1;
        start = (size_t)(nl - data) + 1;
        *keep = start;
    }
    return 0;
}

sx_journal_t *sx_journal_open(const char *path, sx_journal_visit_fn *visit, void *arg,
                              sx_error_t *err)
{
    size_t keep = 0;
    if (sx_file_exists(path)) {
        size_t size = 0;
        char *data = sx_file_read(path, (size_t)1 << 34, &size, err);
        if (!data)
            return NULL;
        int rc = replay(path, data, size, visit, arg, &keep, err);
        free(data);
        if (rc != 0)
            return NULL;
        if (keep < size && truncate(path, (off_t)keep) != 0)
            return sx_error_set(err, "%s: cannot cut the torn last line: %s", path,
                                strerror(errno)),
                   NULL;
    }
    if (sx_mkdirs_for(path, err) != 0)
        return NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return sx_error_set(err, "%s: cannot open for appending: %s", path,
                            strerror(errno)),
               NULL;
    sx_journal_t *self = sx_alloc(1, sizeof *self);
    self->path = sx_strdup(path);
    self->fd = fd;
    self->length = lseek(fd, 0, SEEK_END);
    self->fsync_delay_ms = fsync_delay_from_env();
    return self;
}

/* Writes all of line; -1 with errno set (a short write goes on until the
 * system says why it cannot). */
static int write_all(int fd, const char *line, size_t len)
{
    while (len > 0) {
        ssize_t wrote = write(fd, line, len);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote < 0)
            return -1;
        if (wrote == 0)
            return errno = EIO, -1;
        line += wrote;
        len -= (size_t)wrote;
    }
    return 0;
}

void sx_journal_add(sx_journal_t *self, const char *method, const char *inputs,
                    const char *csv_sha1, const sx_result_t *result)
{
    json_t *record = json_object();
    json_object_set_new(record, "method", json_string(method));
    if (inputs)
        json_object_set_new(record, "inputs", json_string(inputs));
    if (csv_sha1)
        json_object_set_new(record, "csv_sha1", json_string(csv_sha1));
    char *head = json_dumps(record, JSON_COMPACT);
    json_decref(record);
    /* The result's own JSON goes in as it is, last: {HEAD,"result":INNER}. */
    char *inner = sx_result_to_json(result);
    size_t head_len = strlen(head) - 1, inner_len = strlen(inner);
    size_t len = head_len + strlen(",\"result\":") + inner_len + 2;
    if (self->batch_size + len > self->batch_cap) {
        self->batch_cap = 2 * (self->batch_size + len);
        self->batch = sx_realloc(self->batch, self->batch_cap, 1);
    }
    char *at = self->batch + self->batch_size;
    memcpy(at, head, head_len);
    at += head_len;
    memcpy(at, ",\"result\":", strlen(",\"result\":"));
    at += strlen(",\"result\":");
    memcpy(at, inner, inner_len);
    at += inner_len;
    memcpy(at, "}\n", 2);
    self->batch_size += len;
    free(head);
    free(inner);
}

int sx_journal_commit(sx_journal_t *self, sx_error_t *err)
{
    if (self->batch_size == 0)
        return 0;
    int rc =
        write_all(self->fd, self->batch, self->batch_size) == 0 && sync_journal(self) == 0
            ? 0
            : -1;
    size_t size = self->batch_size;
    self->batch_size = 0;
    if (rc == 0) {
        self->length += (off_t)size;
        return 0;
    }
    int saved = errno;
    /* Cut the batch off, so the journal stays a valid prefix; if even that
     * fails, opening it again drops the torn last line. */
    if (ftruncate(self->fd, self->length) != 0)
        sx_error_set(err, "%s: cannot append a record (errno %d: %s), nor cut it off: %s",
                     self->path, saved, strerror(saved), strerror(errno));
    else
        sx_error_set(err, "%s: cannot append a record (errno %d: %s)", self->path, saved,
                     strerror(saved));
    return -1;
}

void sx_journal_drop(sx_journal_t *self)
{
    self->batch_size = 0;
}

int sx_journal_append(sx_journal_t *self, const char *method, const char *inputs,
                      const char *csv_sha1, const sx_result_t *result, sx_error_t *err)
{
    sx_journal_add(self, method, inputs, csv_sha1, result);
    return sx_journal_commit(self, err);
}

void sx_journal_destroy(sx_journal_t **self_p)
{
    sx_journal_t *self = *self_p;
    if (!self)
        return;
    close(self->fd);
    free(self->path);
    free(self->batch);
    free(self);
    *self_p = NULL;
}

/* ---- self-test ---------------------------------------------------------- */

/* The descriptor open on path (the journal's own), found by its inode. */
static int fd_open_on(const char *path)
{
    struct stat want, st;
    SX_CHECK(stat(path, &want) == 0);
    for (int fd = 0; fd < 1024; fd++)
        if (fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
            return fd;
    return -1;
}

static int count_visit(const char *method, const char *inputs, const char *csv_sha1,
                       const sx_result_t *result, void *arg, sx_error_t *err)
{
    (void)err;
    /* The first record carries a CSV hash, the others none. */
    SX_CHECK(strcmp(result->task_id, "t1") == 0 ? csv_sha1 && strcmp(csv_sha1, "c1") == 0
                                                : csv_sha1 == NULL);
    SX_CHECK(strcmp(method, "m1") == 0);
    SX_CHECK(!inputs || strcmp(inputs, "abc") == 0);
    SX_CHECK(result->status == SX_STATUS_MATCH || result->status == SX_STATUS_TIMEOUT);
    (*(int *)arg)++;
    return 0;
}

void sx_journal_test(bool verbose)
{
    (void)verbose;
    char dir[] = "/tmp/sx-journal-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/out/journal.jsonl", dir);
    /* A new journal is a plain data file: rw-r--r-- under umask 022. */
    mode_t saved_umask = umask(022);
    sx_journal_t *journal = sx_journal_open(path, NULL, NULL, NULL);
    umask(saved_umask);
    SX_CHECK(journal);
    struct stat created;
    SX_CHECK(stat(path, &created) == 0 && (created.st_mode & 07777) == 0644);
    sx_result_t result;
    sx_result_init(&result, "t1", SX_STATUS_MATCH, "", "/x/t1.csv");
    SX_CHECK(sx_journal_append(journal, "m1", "abc", "c1", &result, NULL) == 0);
    sx_result_clear(&result);
    sx_result_init(&result, "t2", SX_STATUS_TIMEOUT, "after 120 s", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", "abc", NULL, &result, NULL) == 0);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);

    /* A crash in the middle of a third record leaves a torn line. */
    FILE *out = fopen(path, "a");
    fputs("{\"method\":\"m1\",\"res", out);
    fclose(out);
    int seen = 0;
    journal = sx_journal_open(path, count_visit, &seen, NULL);
    SX_CHECK(journal && seen == 2);
    sx_result_init(&result, "t3", SX_STATUS_MATCH, "", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", "abc", NULL, &result, NULL) == 0);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);
    seen = 0;
    journal = sx_journal_open(path, count_visit, &seen, NULL);
    SX_CHECK(journal && seen == 3);

    /* A record that cannot be written in full (here the file size limit
     * gives EFBIG where a full disk gives ENOSPC) is cut off again: the
     * journal stays a valid prefix and takes the next record once it can. */
    struct stat before, after;
    SX_CHECK(stat(path, &before) == 0);
    struct rlimit saved_limit, small;
    SX_CHECK(getrlimit(RLIMIT_FSIZE, &saved_limit) == 0);
    small = saved_limit;
    small.rlim_cur = (rlim_t)before.st_size + 10;
    void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    SX_CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    sx_error_t err;
    sx_result_init(&result, "t4", SX_STATUS_MATCH, "longer than ten bytes", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", "abc", NULL, &result, &err) == -1);
    SX_CHECK(setrlimit(RLIMIT_FSIZE, &saved_limit) == 0);
    signal(SIGXFSZ, saved_handler);
    SX_CHECK(strstr(err.msg, "journal.jsonl: cannot append a record (errno 27"));
    SX_CHECK(stat(path, &after) == 0 && after.st_size == before.st_size);
    SX_CHECK(sx_journal_append(journal, "m1", "abc", NULL, &result, NULL) == 0);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);
    seen = 0;
    journal = sx_journal_open(path, count_visit, &seen, NULL);
    SX_CHECK(journal && seen == 4);
    sx_journal_destroy(&journal);

    /* A bad line in the middle is an error naming the line and why: a
     * record whose verdict is not one, then a line that is no record. */
    SX_CHECK(stat(path, &before) == 0);
    out = fopen(path, "a");
    fputs("{\"method\":\"m1\",\"result\":{\"task_id\":\"t5\",\"score\":1,\"strict\":0,"
          "\"status\":\"timeout\",\"detail\":\"\",\"attempts\":1,\"seconds\":0,"
          "\"worker\":\"\"}}\n{}\n",
          out);
    fclose(out);
    seen = 0;
    SX_CHECK(sx_journal_open(path, count_visit, &seen, &err) == NULL && seen == 4);
    char want[400];
    snprintf(want, sizeof want,
             "%s:5: field \"score\" must be 1 for match and 0 otherwise", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(truncate(path, before.st_size) == 0);
    out = fopen(path, "a");
    fputs("garbage\n{}\n", out);
    fclose(out);
    seen = 0;
    SX_CHECK(sx_journal_open(path, count_visit, &seen, &err) == NULL && seen == 4);
    snprintf(want, sizeof want, "%s:5: not a journal record", path);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* A line with a method but no result, or a result that is no object,
     * is no record. */
    SX_CHECK(truncate(path, before.st_size) == 0);
    out = fopen(path, "a");
    fputs("{\"method\":\"m1\"}\n", out);
    fclose(out);
    seen = 0;
    SX_CHECK(sx_journal_open(path, count_visit, &seen, &err) == NULL && seen == 4);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(truncate(path, before.st_size) == 0);
    out = fopen(path, "a");
    fputs("{\"method\":\"m1\",\"result\":1}\n", out);
    fclose(out);
    seen = 0;
    SX_CHECK(sx_journal_open(path, count_visit, &seen, &err) == NULL && seen == 4);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* Without a visitor nothing is parsed, yet the torn last line is still
     * cut: the bad line above stays, the torn one goes. */
    out = fopen(path, "a");
    fputs("{\"method\":\"m1\",\"res", out);
    fclose(out);
    journal = sx_journal_open(path, NULL, NULL, &err);
    SX_CHECK(journal);
    sx_journal_destroy(&journal);
    SX_CHECK(stat(path, &after) == 0);
    SX_CHECK(after.st_size ==
             before.st_size + (off_t)strlen("{\"method\":\"m1\",\"result\":1}\n"));

    /* A record without inputs is written without them. */
    SX_CHECK(truncate(path, before.st_size) == 0);
    journal = sx_journal_open(path, NULL, NULL, &err);
    SX_CHECK(journal);
    sx_result_init(&result, "t5", SX_STATUS_TIMEOUT, "", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", NULL, NULL, &result, NULL) == 0);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);
    seen = 0;
    journal = sx_journal_open(path, count_visit, &seen, NULL);
    SX_CHECK(journal && seen == 5);
    sx_journal_destroy(&journal);
    FILE *in = fopen(path, "r");
    char line[1000] = "";
    while (fgets(line, sizeof line, in) && !strstr(line, "\"t5\""))
        ;
    fclose(in);
    SX_CHECK(strstr(line, "\"t5\"") && !strstr(line, "inputs"));

    /* A record written but not made durable is refused: a verdict the
     * coordinator acknowledges must survive a crash. The journal's descriptor
     * is swapped for /dev/null's, which takes the write but refuses fsync
     * (and ftruncate) with EINVAL, as a disk whose flush fails would. */
    journal = sx_journal_open(path, NULL, NULL, &err);
    int null_fd = open("/dev/null", O_WRONLY);
    SX_CHECK(journal && null_fd >= 0 && dup2(null_fd, fd_open_on(path)) >= 0);
    close(null_fd);
    sx_result_init(&result, "t6", SX_STATUS_MATCH, "", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", NULL, NULL, &result, &err) == -1);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);
    snprintf(want, sizeof want,
             "%s: cannot append a record (errno 22: Invalid argument), nor cut it off: "
             "Invalid argument",
             path);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* Only EINTR is retried: a write the system refuses (EPERM: the
     * descriptor is a memfd sealed against writes) is an error at once, not
     * a loop. */
    journal = sx_journal_open(path, NULL, NULL, &err);
    int sealed = memfd_create("journal", MFD_ALLOW_SEALING);
    SX_CHECK(journal && sealed >= 0 && fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE) == 0);
    SX_CHECK(dup2(sealed, fd_open_on(path)) >= 0);
    sx_result_init(&result, "t7", SX_STATUS_MATCH, "", NULL);
    SX_CHECK(sx_journal_append(journal, "m1", NULL, NULL, &result, &err) == -1);
    sx_result_clear(&result);
    sx_journal_destroy(&journal);
    close(sealed);
    snprintf(want, sizeof want,
             "%s: cannot append a record (errno 1: Operation not permitted)", path);
    SX_CHECK(strcmp(err.msg, want) == 0);

    /* Descriptor 0 is a descriptor like any other: a coordinator started
     * with its standard input closed gets it for the journal. (This test's
     * own standard input is put back after, if it had one.) */
    int saved_stdin = fcntl(0, F_DUPFD_CLOEXEC, 3);
    SX_CHECK(saved_stdin < 0 || close(0) == 0);
    journal = sx_journal_open(path, NULL, NULL, &err);
    SX_CHECK(journal && fd_open_on(path) == 0);
    sx_journal_destroy(&journal);
    SX_CHECK(saved_stdin < 0 || (dup2(saved_stdin, 0) == 0 && close(saved_stdin) == 0));

    /* A journal that cannot be opened: its folder cannot be made (below a
     * file), or its path is a folder. */
    snprintf(want, sizeof want, "%s/out/journal.jsonl/sub", dir);
    snprintf(line, sizeof line, "%s/x.jsonl", want);
    SX_CHECK(sx_journal_open(line, NULL, NULL, &err) == NULL);
    snprintf(line, sizeof line, "%s: cannot create folder: Not a directory", want);
    SX_CHECK(strcmp(err.msg, line) == 0);
    snprintf(want, sizeof want, "%s/out", dir);
    SX_CHECK(sx_journal_open(want, NULL, NULL, &err) == NULL);
    snprintf(line, sizeof line, "%s: cannot open for appending: Is a directory", want);
    SX_CHECK(strcmp(err.msg, line) == 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
