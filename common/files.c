/* files.c: the input rule (regular files, inside their folder, within a size
 * limit), line splitting for JSONL readers, output folder checks, atomic
 * durable writes and mkdir -p (see files.h). */
#include "common/files.h"

#include "common/mem.h"
#include "common/selftest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- size limits --------------------------------------------------------- */

static const struct {
    const char *variable;
    const char *what; /* in messages: "over the limit ... for WHAT" */
    size_t fallback;
} s_kinds[SX_FILE_KIND_COUNT] = {
    [SX_FILE_LIST] = {"SX_MAX_LIST_BYTES", "task lists", (size_t)64 << 20},
    [SX_FILE_JSON] = {"SX_MAX_JSON_BYTES", "JSON files", (size_t)64 << 20},
    [SX_FILE_CSV] = {"SX_MAX_CSV_BYTES", "CSV files", (size_t)4 << 30},
    [SX_FILE_JSONL] = {"SX_MAX_JSONL_BYTES", "JSONL files", (size_t)1 << 30},
    [SX_FILE_EXTRA] = {"SX_MAX_EXTRA_BYTES", "task files", (size_t)64 << 20},
};

/* "123", "4K", "64M", "4G", "1T" (powers of 1024) into *bytes. */
static bool parse_size(const char *text, size_t *bytes)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || text[0] == '-' || text[0] == '+')
        return false;
    static const char units[] = "KMGT";
    const char *unit = *end ? strchr(units, *end) : NULL;
    if (*end && (!unit || end[1] != '\0'))
        return false;
    for (const char *u = units; unit && u <= unit; u++) {
        if (value > ULLONG_MAX / 1024)
            return false;
        value *= 1024;
    }
    if (value > SIZE_MAX)
        return false;
    *bytes = (size_t)value;
    return true;
}

static bool ends_with(const char *name, const char *end)
{
    size_t length = strlen(name), tail = strlen(end);
    return length >= tail && strcmp(name + length - tail, end) == 0;
}

sx_file_kind_t sx_file_kind_of(const char *name)
{
    return ends_with(name, ".csv")             ? SX_FILE_CSV
           : ends_with(name, ".json")          ? SX_FILE_JSON
           : ends_with(name, ".jsonl")         ? SX_FILE_JSONL
           : strcmp(name, "task_ids.txt") == 0 ? SX_FILE_LIST
                                               : SX_FILE_EXTRA;
}

int sx_file_limit(sx_file_kind_t kind, size_t *limit_p, sx_error_t *err)
{
    const char *text = getenv(s_kinds[kind].variable);
    *limit_p = s_kinds[kind].fallback;
    if (text && !parse_size(text, limit_p))
        return sx_error_set(err, "%s='%s': not a size in bytes (e.g. 4G, 512M, 1000)",
                            s_kinds[kind].variable, text);
    return 0;
}

int sx_file_limits_check(sx_error_t *err)
{
    size_t limit;
    for (int kind = 0; kind < SX_FILE_KIND_COUNT; kind++)
        if (sx_file_limit((sx_file_kind_t)kind, &limit, err) != 0)
            return -1;
    return 0;
}

static int over_limit(const char *path, sx_file_kind_t kind, size_t limit,
                      sx_error_t *err)
{
    return sx_error_set(
        err, "%s: larger than the limit of %zu bytes for %s (set %s to raise it)", path,
        limit, s_kinds[kind].what, s_kinds[kind].variable);
}

/* --- the input rule ------------------------------------------------------ */

static const char *type_name(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

int sx_path_check_inside(const char *root, const char *path, sx_error_t *err)
{
    char *real_root = realpath(root, NULL);
    int root_errno = errno; /* the next realpath may change it */
    char *real = realpath(path, NULL);
    bool inside = false;
    if (!real_root)
        sx_error_set(err, "%s: cannot resolve: %s", root, strerror(root_errno));
    else if (!real)
        sx_error_set(err, "%s: cannot resolve: %s", path, strerror(errno));
    else {
        size_t length = strlen(real_root);
        inside =
            strncmp(real, real_root, length) == 0 &&
            (real[length] == '/' || real[length] == '\0' || strcmp(real_root, "/") == 0);
        if (!inside)
            sx_error_set(
                err, "%s: a link to %s, outside %s (links must stay inside the folder)",
                path, real, root);
    }
    free(real_root);
    free(real);
    return inside ? 0 : -1;
}

/* The checks of the rule that need no reading; *st receives what path
 * leads to, *limit_p the kind's limit. */
static int inspect(const char *root, const char *path, sx_file_kind_t kind,
                   struct stat *st, size_t *limit_p, sx_error_t *err)
{
    if (sx_file_limit(kind, limit_p, err) != 0)
        return -1;
    if (stat(path, st) != 0)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    if (root && sx_path_check_inside(root, path, err) != 0)
        return -1;
    if (!S_ISREG(st->st_mode))
        return sx_error_set(err, "%s: %s, not a regular file", path,
                            type_name(st->st_mode));
    if ((uintmax_t)st->st_size > (uintmax_t)*limit_p)
        return over_limit(path, kind, *limit_p, err);
    return 0;
}

int sx_file_check(const char *root, const char *path, sx_file_kind_t kind, size_t *size_p,
                  sx_error_t *err)
{
    struct stat st;
    size_t limit;
    if (inspect(root, path, kind, &st, &limit, err) != 0)
        return -1;
    if (size_p)
        *size_p = (size_t)st.st_size;
    return 0;
}

/* Reads at most `limit` bytes of the open fd (whose stat is st) and closes
 * it. Returns the data or NULL with err set; *too_big when there was more
 * than `limit`, and then the data only with `head` (the first `limit`
 * bytes). */
static char *read_fd(int fd, const char *path, const struct stat *st, size_t limit,
                     bool head, size_t *size_p, bool *too_big, sx_error_t *err)
{
    *too_big = false;
    /* The stated size is a hint: a file may grow, and is cut at limit + 1. */
    size_t capacity = (size_t)st->st_size < limit ? (size_t)st->st_size + 1 : limit + 1;
    char *data = sx_alloc(capacity + 1, 1);
    size_t used = 0;
    for (;;) {
        if (used == capacity) {
            if (capacity > limit)
                break;
            capacity = capacity > limit / 2 ? limit + 1 : 2 * capacity;
            data = sx_realloc(data, capacity + 1, 1);
        }
        ssize_t got = read(fd, data + used, capacity - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            sx_error_set(err, "%s: read error: %s", path, strerror(errno));
            free(data);
            close(fd);
            return NULL;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    if (used > limit) {
        *too_big = true;
        if (!head) {
            free(data);
            return NULL;
        }
        used = limit;
    }
    data[used] = '\0';
    *size_p = used;
    return data;
}

/* Opens the regular file `seen` (the one checked) for reading, never
 * anything that blocks on open; *st receives its stat. -1 with err set. */
static int open_regular(const char *path, const struct stat *seen, struct stat *st,
                        sx_error_t *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != seen->st_dev ||
        st->st_ino != seen->st_ino) {
        close(fd);
        return sx_error_set(err, "%s: changed while being opened", path);
    }
    return fd;
}

/* read_fd of a regular file checked as `seen`. */
static char *read_regular(const char *path, const struct stat *seen, size_t limit,
                          bool head, size_t *size_p, bool *too_big, sx_error_t *err)
{
    *too_big = false;
    struct stat st;
    int fd = open_regular(path, seen, &st, err);
    if (fd < 0)
        return NULL;
    return read_fd(fd, path, &st, limit, head, size_p, too_big, err);
}

/* Fills buf with up to `room` bytes of fd: fewer only at its end. */
static ssize_t read_full(int fd, char *buf, size_t room)
{
    size_t used = 0;
    while (used < room) {
        ssize_t got = read(fd, buf + used, room - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        used += (size_t)got;
    }
    return (ssize_t)used;
}

int sx_file_read_chunks(const char *root, const char *path, sx_file_kind_t kind,
                        size_t chunk, sx_file_chunk_fn *each, void *arg, sx_error_t *err)
{
    struct stat seen, st;
    size_t limit, total = 0;
    if (inspect(root, path, kind, &seen, &limit, err) != 0)
        return -1;
    int fd = open_regular(path, &seen, &st, err);
    if (fd < 0)
        return -1;
    char *buf = sx_alloc(chunk, 1);
    int rc = 0;
    for (;;) {
        ssize_t got = read_full(fd, buf, chunk);
        if (got < 0)
            rc = sx_error_set(err, "%s: read error: %s", path, strerror(errno));
        else if ((total += (size_t)got) > limit)
            rc = over_limit(path, kind, limit, err);
        else if (got > 0)
            rc = each(buf, (size_t)got, arg, err);
        if (rc != 0 || got < (ssize_t)chunk)
            break;
    }
    free(buf);
    close(fd);
    return rc;
}

char *sx_file_load(const char *root, const char *path, sx_file_kind_t kind,
                   size_t *size_p, sx_error_t *err)
{
    struct stat st;
    size_t limit;
    bool too_big;
    if (inspect(root, path, kind, &st, &limit, err) != 0)
        return NULL;
    char *data = read_regular(path, &st, limit, false, size_p, &too_big, err);
    if (too_big)
        over_limit(path, kind, limit, err);
    return data;
}

char *sx_file_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sx_strdup(".");
    return sx_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* sx_file_read, or with `head` its first max_bytes (*cut_p: there was more);
 * with a root, only inside it, as sx_file_load checks. */
static char *read_file(const char *root, const char *path, size_t max_bytes, bool head,
                       size_t *size_p, bool *cut_p, sx_error_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
    if (root && sx_path_check_inside(root, path, err) != 0)
        return NULL;
    if (!S_ISREG(st.st_mode))
        return sx_error_set(err, "%s: %s, not a regular file", path,
                            type_name(st.st_mode)),
               NULL;
    char *data = read_regular(path, &st, max_bytes, head, size_p, cut_p, err);
    if (*cut_p && !head)
        sx_error_set(err, "%s: larger than %zu bytes", path, max_bytes);
    return data;
}

char *sx_file_read(const char *path, size_t max_bytes, size_t *size_p, sx_error_t *err)
{
    bool too_big;
    return read_file(NULL, path, max_bytes, false, size_p, &too_big, err);
}

char *sx_file_read_head(const char *root, const char *path, size_t max_bytes,
                        size_t *size_p, bool *cut_p, sx_error_t *err)
{
    return read_file(root, path, max_bytes, true, size_p, cut_p, err);
}

char *sx_file_read_stream(const char *path, size_t max_bytes, size_t *size_p,
                          sx_error_t *err)
{
    int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return sx_error_set(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        close(fd);
        return sx_error_set(err, "%s: a folder, not a file", path), NULL;
    }
    bool too_big;
    char *data = read_fd(fd, path, &st, max_bytes, false, size_p, &too_big, err);
    if (too_big)
        sx_error_set(err, "%s: larger than %zu bytes", path, max_bytes);
    return data;
}

/* --- lines of JSONL files ------------------------------------------------ */

void sx_lines_init(sx_lines_t *self, const char *path, char *data, size_t size)
{
    self->path = path;
    self->next = data;
    self->end = data + size;
    self->number = 0;
}

int sx_lines_next(sx_lines_t *self, char **line_p, size_t *length_p, sx_error_t *err)
{
    if (self->next >= self->end)
        return 0;
    char *line = self->next;
    char *newline = memchr(line, '\n', (size_t)(self->end - line));
    size_t length = newline ? (size_t)(newline - line) : (size_t)(self->end - line);
    self->next = newline ? newline + 1 : self->end;
    line[length] = '\0'; /* the '\n', or the terminator sx_file_load added */
    self->number++;
    *line_p = line;
    *length_p = length;
    /* strchr/strlen would end the line at a NUL and silently drop the rest. */
    const char *nul = memchr(line, '\0', length);
    if (nul)
        return sx_error_set(err,
                            "%s:%zu: a NUL byte at column %zu (a JSONL line is text)",
                            self->path, self->number, (size_t)(nul - line) + 1);
    return 1;
}

int sx_lines_next_filled(sx_lines_t *self, char **line_p, sx_error_t *err)
{
    size_t length;
    int more;
    while ((more = sx_lines_next(self, line_p, &length, err)) == 1 &&
           strspn(*line_p, " \t\r") == length)
        ;
    return more;
}

int sx_lines_each(const char *path, char *data, size_t size, sx_line_fn *fn, void *arg,
                  sx_error_t *err)
{
    sx_lines_t lines;
    sx_lines_init(&lines, path, data, size);
    char *line;
    int rc = 0, more;
    while (rc == 0 && (more = sx_lines_next_filled(&lines, &line, err)) != 0) {
        if (more < 0)
            return -1;
        rc = fn(line, lines.number, arg, err);
        if (rc != 0)
            sx_error_prefix(err, "%s:%zu", path, lines.number);
    }
    return rc;
}

/* --- output folders ------------------------------------------------------ */

/* Can this process create a file in an existing folder? Tried, not guessed
 * from mode bits (root, read-only file systems, ACLs). */
static int probe_writable(const char *folder, const char *path, sx_error_t *err)
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.sx-probe-XXXXXX", folder) >= (int)sizeof probe)
        return sx_error_set(err, "output %s: path too long", path);
    int fd = mkstemp(probe);
    if (fd < 0)
        return sx_error_set(err, "output %s: cannot write in %s: %s", path, folder,
                            strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

int sx_output_path_check(const char *path, sx_error_t *err)
{
    if (!path || !path[0])
        return sx_error_set(err, "the output path is empty");
    size_t length = strlen(path);
    if (length > PATH_MAX - SX_OUTPUT_PATH_ROOM)
        return sx_error_set(err,
                            "output path of %zu bytes is too long (at most %d, leaving "
                            "room below PATH_MAX for the files written in it)",
                            length, PATH_MAX - SX_OUTPUT_PATH_ROOM);
    for (const char *part = path; *part;) {
        size_t n = strcspn(part, "/");
        if (n > NAME_MAX)
            return sx_error_set(err, "output %.40s...: a name of %zu bytes (at most %d)",
                                path, n, NAME_MAX);
        part += n + (part[n] == '/');
    }
    /* The folder itself when it exists, else its nearest existing parent. */
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    struct stat st;
    while (stat(folder, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return sx_error_set(err, "output %s: %s: %s", path, folder, strerror(errno));
        char *slash = strrchr(folder, '/');
        while (slash && slash > folder && slash[1] == '\0') { /* "a/b/" */
            *slash = '\0';
            slash = strrchr(folder, '/');
        }
        if (!slash)
            snprintf(folder, sizeof folder, ".");
        else
            slash[slash == folder] = '\0'; /* keeps "/" of "/x" */
    }
    if (!S_ISDIR(st.st_mode))
        return sx_error_set(err, "output %s: %s is not a folder", path, folder);
    return probe_writable(folder, path, err);
}

/* --- writing ------------------------------------------------------------- */

/* One file of a batch: written under `tmp`, its descriptor open until it
 * is synced; `stream` (on fd) when the caller writes it. */
typedef struct {
    char *path, *tmp;
    int fd;
    FILE *stream;
} batch_file_t;

struct _sx_file_batch_t {
    batch_file_t *files;
    size_t count, cap;
};

sx_file_batch_t *sx_file_batch_new(void)
{
    return sx_alloc(1, sizeof(sx_file_batch_t));
}

size_t sx_file_batch_count(const sx_file_batch_t *self)
{
    return self->count;
}

/* Closes and removes what is still temporary, and forgets every file. */
static void batch_clear(sx_file_batch_t *self)
{
    for (size_t i = 0; i < self->count; i++) {
        batch_file_t *f = &self->files[i];
        if (f->stream)
            fclose(f->stream);
        else if (f->fd >= 0)
            close(f->fd);
        if (f->tmp)
            unlink(f->tmp);
        free(f->tmp);
        free(f->path);
    }
    self->count = 0;
}

void sx_file_batch_destroy(sx_file_batch_t **self_p)
{
    sx_file_batch_t *self = *self_p;
    if (!self)
        return;
    batch_clear(self);
    free(self->files);
    free(self);
    *self_p = NULL;
}

/* The batch's next file: path's temporary file, created; NULL with err set
 * when it cannot be. */
static batch_file_t *add_file(sx_file_batch_t *self, const char *path, sx_error_t *err)
{
    /* A name of its own per call: threads of one process (a worker's slots
     * filling one result cache entry, run's workers) may write one path at
     * once, and a shared temporary file would mix or lose their bytes. */
    static atomic_uint calls;
    char *tmp =
        sx_format("%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&calls, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        sx_error_set(err, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return NULL;
    }
    if (self->count == self->cap) {
        self->cap = self->cap ? 2 * self->cap : 16;
        self->files = sx_realloc(self->files, self->cap, sizeof *self->files);
    }
    batch_file_t *f = &self->files[self->count++];
    *f = (batch_file_t){sx_strdup(path), tmp, fd, NULL};
    return f;
}

/* Takes the last file added out of the batch again, removed. */
static void drop_last(sx_file_batch_t *self)
{
    batch_file_t *f = &self->files[--self->count];
    if (f->stream)
        fclose(f->stream);
    else
        close(f->fd);
    unlink(f->tmp);
    free(f->tmp);
    free(f->path);
}

int sx_file_batch_add(sx_file_batch_t *self, const char *path, const void *data,
                      size_t size, sx_error_t *err)
{
    batch_file_t *f = add_file(self, path, err);
    if (!f)
        return -1;
    const char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t wrote = write(f->fd, p, left);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0) {
            sx_error_set(err, "%s: write failed: %s", f->tmp, strerror(errno));
            drop_last(self);
            return -1;
        }
        p += wrote;
        left -= (size_t)wrote;
    }
    return 0;
}

FILE *sx_file_batch_stream(sx_file_batch_t *self, const char *path, sx_error_t *err)
{
    batch_file_t *f = add_file(self, path, err);
    if (!f)
        return NULL;
    f->stream = fdopen(f->fd, "w");
    if (!f->stream) {
        sx_error_set(err, "%s: cannot write: %s", f->tmp, strerror(errno));
        drop_last(self);
        return NULL;
    }
    return f->stream;
}

/* At most this many fsyncs at once: the disk takes concurrent ones
 * together, where one after another each waits for the one before. */
#define SYNC_THREADS 16

typedef struct {
    int *fds, *errnos;
    size_t count;
    atomic_size_t next;
} sync_work_t;

static void *sync_some(void *arg)
{
    sync_work_t *work = arg;
    size_t i;
    while ((i = atomic_fetch_add(&work->next, 1)) < work->count)
        work->errnos[i] = fsync(work->fds[i]) == 0 ? 0 : errno;
    return NULL;
}

/* fsync of every descriptor, concurrently; errnos[i] is 0 or why fds[i]
 * failed. */
static void sync_all(int *fds, int *errnos, size_t count)
{
    sync_work_t work = {fds, errnos, count, 0};
    pthread_t threads[SYNC_THREADS];
    size_t started = 0;
    while (count > 1 && started < count && started < SYNC_THREADS &&
           pthread_create(&threads[started], NULL, sync_some, &work) == 0)
        started++;
    sync_some(&work); /* this thread too, and alone when none could start */
    for (size_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}

/* The folder of path, opened for fsync (-1 when it cannot be). */
static int open_folder_of(const char *path)
{
    char *dir = sx_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int fd = open(slash ? (*dir ? dir : "/") : ".", O_RDONLY | O_DIRECTORY);
    free(dir);
    return fd;
}

/* Syncs the folder of every file once, concurrently. A folder that cannot
 * be synced is not an error: the files in it are whole either way. */
static void sync_folders(sx_file_batch_t *self)
{
    int *fds = sx_alloc(self->count + 1, sizeof *fds);
    int *errnos = sx_alloc(self->count + 1, sizeof *errnos);
    struct stat *seen = sx_alloc(self->count + 1, sizeof *seen);
    size_t count = 0;
    for (size_t i = 0; i < self->count; i++) {
        int fd = open_folder_of(self->files[i].path);
        struct stat st;
        bool again = fd < 0 || fstat(fd, &st) != 0;
        for (size_t j = 0; j < count && !again; j++)
            again = seen[j].st_ino == st.st_ino && seen[j].st_dev == st.st_dev;
        if (again) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        seen[count] = st;
        fds[count++] = fd;
    }
    sync_all(fds, errnos, count);
    for (size_t i = 0; i < count; i++)
        close(fds[i]);
    free(fds);
    free(errnos);
    free(seen);
}

/* Why a written stream's bytes may not all be in its file (0: they are). */
static int stream_failed(FILE *stream)
{
    errno = 0;
    if (fflush(stream) == 0 && !ferror(stream))
        return 0;
    return errno ? errno : EIO;
}

int sx_file_batch_commit(sx_file_batch_t *self, sx_error_t *err)
{
    int *fds = sx_alloc(self->count + 1, sizeof *fds);
    int *errnos = sx_alloc(self->count + 1, sizeof *errnos);
    int rc = 0;
    for (size_t i = 0; i < self->count && rc == 0; i++) {
        batch_file_t *f = &self->files[i];
        int failed = f->stream ? stream_failed(f->stream) : 0;
        if (failed)
            rc = sx_error_set(err, "%s: write failed: %s", f->tmp, strerror(failed));
        fds[i] = f->fd;
    }
    if (rc == 0)
        sync_all(fds, errnos, self->count);
    for (size_t i = 0; i < self->count && rc == 0; i++) {
        batch_file_t *f = &self->files[i];
        int closed = f->stream ? fclose(f->stream) : close(f->fd);
        f->stream = NULL;
        f->fd = -1;
        int failed = errnos[i] ? errnos[i] : closed != 0 ? errno : 0;
        if (failed)
            rc = sx_error_set(err, "%s: fsync failed: %s", f->tmp, strerror(failed));
    }
    for (size_t i = 0; i < self->count && rc == 0; i++) {
        batch_file_t *f = &self->files[i];
        if (rename(f->tmp, f->path) != 0)
            rc = sx_error_set(err, "%s: cannot rename into place: %s", f->path,
                              strerror(errno));
        else {
            free(f->tmp);
            f->tmp = NULL;
        }
    }
    if (rc == 0)
        sync_folders(self);
    free(fds);
    free(errnos);
    batch_clear(self);
    return rc;
}

int sx_file_write_atomic(const char *path, const void *data, size_t size, sx_error_t *err)
{
    sx_file_batch_t *batch = sx_file_batch_new();
    int rc = sx_file_batch_add(batch, path, data, size, err) == 0
                 ? sx_file_batch_commit(batch, err)
                 : -1;
    sx_file_batch_destroy(&batch);
    return rc;
}

int sx_mkdirs(const char *path, sx_error_t *err)
{
    /* Mostly the folder or its parent is there: one call, not one per
     * component of the path. */
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", path);
    for (char *p = buffer + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
            return sx_error_set(err, "%s: cannot create folder: %s", buffer,
                                strerror(errno));
        *p = '/';
    }
    if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
        return sx_error_set(err, "%s: cannot create folder: %s", buffer, strerror(errno));
    return 0;
}

int sx_mkdirs_for(const char *path, sx_error_t *err)
{
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", path);
    char *slash = strrchr(buffer, '/');
    if (!slash || slash == buffer)
        return 0;
    *slash = '\0';
    return sx_mkdirs(buffer, err);
}

bool sx_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* --- self-test --------------------------------------------------------- */

static void expect_error(int rc, const sx_error_t *err, const char *want, bool verbose)
{
    if (verbose || rc == 0 || strcmp(err->msg, want) != 0)
        fprintf(stderr, "files: got  '%s'\n       want '%s'\n", rc ? err->msg : "(ok)",
                want);
    SX_CHECK(rc != 0 && strcmp(err->msg, want) == 0);
}

static void test_sizes(void)
{
    static const struct {
        const char *text;
        size_t bytes;
    } good[] = {{"0", 0},
                {"1000", 1000},
                {"4K", 4096},
                {"64M", (size_t)64 << 20},
                {"4G", (size_t)4 << 30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t bytes = 1;
        SX_CHECK(parse_size(good[i].text, &bytes) && bytes == good[i].bytes);
    }
    static const char *const bad[] = {"",    "x",  "-1", "+1",
                                      "4KB", "4k", "1 ", "99999999999T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t bytes;
        SX_CHECK(!parse_size(bad[i], &bytes));
    }
    size_t limit = 0;
    SX_CHECK(unsetenv("SX_MAX_CSV_BYTES") == 0);
    SX_CHECK(sx_file_limit(SX_FILE_CSV, &limit, NULL) == 0 && limit == (size_t)4 << 30);
    SX_CHECK(sx_file_limits_check(NULL) == 0);
    SX_CHECK(setenv("SX_MAX_CSV_BYTES", "lots", 1) == 0);
    sx_error_t err;
    expect_error(sx_file_limits_check(&err), &err,
                 "SX_MAX_CSV_BYTES='lots': not a size in bytes (e.g. 4G, 512M, 1000)",
                 false);
    expect_error(sx_file_limit(SX_FILE_CSV, &limit, &err), &err,
                 "SX_MAX_CSV_BYTES='lots': not a size in bytes (e.g. 4G, 512M, 1000)",
                 false);
    SX_CHECK(unsetenv("SX_MAX_CSV_BYTES") == 0);
}

/* The input rule on a FIFO, a device behind a link, links that leave the
 * folder or stay in it, and a file over its limit. */
static void test_input_rule(const char *dir, bool verbose)
{
    char root[300], path[400], want[1200];
    snprintf(root, sizeof root, "%s/task", dir);
    SX_CHECK(sx_mkdirs(root, NULL) == 0);
    sx_error_t err;
    size_t size = 0;

    snprintf(path, sizeof path, "%s/fifo.csv", root);
    SX_CHECK(mkfifo(path, 0600) == 0);
    snprintf(want, sizeof want, "%s: a FIFO, not a regular file", path);
    expect_error(sx_file_load(root, path, SX_FILE_CSV, &size, &err) != NULL ? 0 : -1,
                 &err, want, verbose);

    snprintf(path, sizeof path, "%s/zero.csv", dir);
    SX_CHECK(symlink("/dev/zero", path) == 0);
    snprintf(want, sizeof want, "%s: a character device, not a regular file", path);
    expect_error(sx_file_load(NULL, path, SX_FILE_CSV, &size, &err) ? 0 : -1, &err, want,
                 verbose);

    snprintf(path, sizeof path, "%s/notes.txt", root);
    SX_CHECK(symlink("/etc/passwd", path) == 0);
    snprintf(want, sizeof want,
             "%s: a link to /etc/passwd, outside %s (links must stay inside the folder)",
             path, root);
    expect_error(sx_file_check(root, path, SX_FILE_EXTRA, NULL, &err), &err, want,
                 verbose);
    SX_CHECK(sx_file_check(NULL, path, SX_FILE_EXTRA, NULL, NULL) == 0);

    /* A link that stays inside is followed. */
    snprintf(path, sizeof path, "%s/real.csv", root);
    SX_CHECK(sx_file_write_atomic(path, "a\n1\n", 4, NULL) == 0);
    snprintf(path, sizeof path, "%s/alias.csv", root);
    SX_CHECK(symlink("real.csv", path) == 0);
    char *data = sx_file_load(root, path, SX_FILE_CSV, &size, &err);
    SX_CHECK(data && size == 4 && strcmp(data, "a\n1\n") == 0);
    free(data);
    SX_CHECK(sx_file_check(root, path, SX_FILE_CSV, &size, NULL) == 0 && size == 4);

    SX_CHECK(setenv("SX_MAX_CSV_BYTES", "3", 1) == 0);
    snprintf(
        want, sizeof want,
        "%s: larger than the limit of 3 bytes for CSV files (set SX_MAX_CSV_BYTES to "
        "raise it)",
        path);
    expect_error(sx_file_load(root, path, SX_FILE_CSV, &size, &err) ? 0 : -1, &err, want,
                 verbose);
    SX_CHECK(setenv("SX_MAX_CSV_BYTES", "4", 1) == 0);
    data = sx_file_load(root, path, SX_FILE_CSV, &size, &err);
    SX_CHECK(data && size == 4);
    free(data);
    SX_CHECK(unsetenv("SX_MAX_CSV_BYTES") == 0);

    /* The limit holds for the bytes read, not the size stated: a procfs file
     * states 0 bytes and holds more, as a file that grows after its stat. */
    SX_CHECK(setenv("SX_MAX_EXTRA_BYTES", "0", 1) == 0);
    expect_error(
        sx_file_load(NULL, "/proc/self/status", SX_FILE_EXTRA, &size, &err) ? 0 : -1,
        &err,
        "/proc/self/status: larger than the limit of 0 bytes for task files (set "
        "SX_MAX_EXTRA_BYTES to raise it)",
        verbose);
    SX_CHECK(unsetenv("SX_MAX_EXTRA_BYTES") == 0);

    snprintf(want, sizeof want, "%s: a folder, not a regular file", root);
    expect_error(sx_file_check(NULL, root, SX_FILE_JSON, NULL, &err), &err, want,
                 verbose);
}

/* sx_lines_each: lines in order with their numbers, blank ones skipped; a
 * refused line stops the walk and its error names the file and line. */
static int take_line(char *line, size_t number, void *arg, sx_error_t *err)
{
    char *seen = arg;
    if (strcmp(line, "stop") == 0)
        return sx_error_set(err, "refused");
    snprintf(seen + strlen(seen), 64 - strlen(seen), "%zu=%s ", number, line);
    return 0;
}

static void test_lines_each(bool verbose)
{
    char seen[64] = "", data[] = "a\n\n b\nstop\nc\n";
    sx_error_t err;
    expect_error(sx_lines_each("h.jsonl", data, sizeof data - 1, take_line, seen, &err),
                 &err, "h.jsonl:4: refused", verbose);
    SX_CHECK(strcmp(seen, "1=a 3= b ") == 0);
    char fine[] = "a\n\nb";
    seen[0] = '\0';
    SX_CHECK(sx_lines_each("i.jsonl", fine, sizeof fine - 1, take_line, seen, &err) ==
                 0 &&
             strcmp(seen, "1=a 3=b ") == 0);
}

static void test_lines(bool verbose)
{
    char text[] = "a\n\nb\0c\nd";
    sx_lines_t lines;
    sx_lines_init(&lines, "f.jsonl", text, sizeof text - 1);
    char *line;
    size_t length;
    sx_error_t err;
    SX_CHECK(sx_lines_next(&lines, &line, &length, &err) == 1 && strcmp(line, "a") == 0);
    SX_CHECK(sx_lines_next(&lines, &line, &length, &err) == 1 && length == 0);
    expect_error(sx_lines_next(&lines, &line, &length, &err), &err,
                 "f.jsonl:3: a NUL byte at column 2 (a JSONL line is text)", verbose);
    SX_CHECK(sx_lines_next(&lines, &line, &length, &err) == 1 && strcmp(line, "d") == 0 &&
             lines.number == 4);
    SX_CHECK(sx_lines_next(&lines, &line, &length, &err) == 0);
    /* Past the blank lines: "b" after two of them, the NUL line an error. */
    char filled[] = "a\n \t\r\n\nb\n\x01\0\n\r";
    sx_lines_init(&lines, "g.jsonl", filled, sizeof filled - 1);
    SX_CHECK(sx_lines_next_filled(&lines, &line, &err) == 1 && strcmp(line, "a") == 0);
    SX_CHECK(sx_lines_next_filled(&lines, &line, &err) == 1 && strcmp(line, "b") == 0 &&
             lines.number == 4);
    expect_error(sx_lines_next_filled(&lines, &line, &err), &err,
                 "g.jsonl:5: a NUL byte at column 2 (a JSONL line is text)", verbose);
    SX_CHECK(sx_lines_next_filled(&lines, &line, &err) == 0 && lines.number == 6);
    test_lines_each(verbose);
}

static void test_output_paths(const char *dir, bool verbose)
{
    sx_error_t err;
    expect_error(sx_output_path_check("", &err), &err, "the output path is empty",
                 verbose);
    char path[PATH_MAX + 8];
    memset(path, 'a', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    char want[PATH_MAX + 600];
    snprintf(want, sizeof want,
             "output path of %zu bytes is too long (at most %d, leaving room below "
             "PATH_MAX for the files written in it)",
             strlen(path), PATH_MAX - SX_OUTPUT_PATH_ROOM);
    expect_error(sx_output_path_check(path, &err), &err, want, verbose);
    path[NAME_MAX + 1] = '\0';
    snprintf(want, sizeof want, "output %.40s...: a name of %d bytes (at most %d)", path,
             NAME_MAX + 1, NAME_MAX);
    expect_error(sx_output_path_check(path, &err), &err, want, verbose);

    snprintf(path, sizeof path, "%s/task/real.csv/out", dir);
    snprintf(want, sizeof want, "output %s: %s/task/real.csv is not a folder", path, dir);
    expect_error(sx_output_path_check(path, &err), &err, want, verbose);
    /* procfs takes no new file, even from root (its errno varies by kernel). */
    SX_CHECK(open("/proc/self/sx-probe", O_WRONLY | O_CREAT, 0600) < 0);
    snprintf(want, sizeof want, "output /proc/self/out: cannot write in /proc/self: %s",
             strerror(errno));
    expect_error(sx_output_path_check("/proc/self/out", &err), &err, want, verbose);
    snprintf(path, sizeof path, "%s/new/deeper/", dir);
    SX_CHECK(sx_output_path_check(path, NULL) == 0);
    SX_CHECK(sx_output_path_check(dir, NULL) == 0);
    SX_CHECK(access(path, F_OK) != 0); /* checked, not created */
    /* With stdin closed the probe's file gets descriptor 0, a good one. */
    int saved = dup(0);
    SX_CHECK(saved > 0 && close(0) == 0);
    int rc = sx_output_path_check(dir, &err);
    SX_CHECK(dup2(saved, 0) == 0 && close(saved) == 0);
    SX_CHECK(rc == 0);
}

/* Threads writing one path at once each succeed, and the file ends whole:
 * one writer's bytes, never a mix or a failed rename. */
typedef struct {
    const char *path;
    char fill;
    int failures;
} writer_t;

#define WRITER_BYTES 65536

static void *write_many(void *arg)
{
    writer_t *writer = arg;
    char *data = sx_alloc(WRITER_BYTES, 1);
    memset(data, writer->fill, WRITER_BYTES);
    for (int i = 0; i < 100; i++)
        writer->failures +=
            sx_file_write_atomic(writer->path, data, WRITER_BYTES, NULL) != 0;
    free(data);
    return NULL;
}

static void test_concurrent_writers(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/shared.bin", dir);
    writer_t writers[2] = {{path, 'a', 0}, {path, 'b', 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        SX_CHECK(pthread_create(&threads[i], NULL, write_many, &writers[i]) == 0);
    for (int i = 0; i < 2; i++)
        SX_CHECK(pthread_join(threads[i], NULL) == 0);
    SX_CHECK(writers[0].failures == 0 && writers[1].failures == 0);
    size_t size = 0;
    char *data = sx_file_read(path, 2 * WRITER_BYTES, &size, NULL);
    SX_CHECK(data && size == WRITER_BYTES);
    for (size_t i = 1; data && i < size; i++)
        SX_CHECK(data[i] == data[0]);
    free(data);
}

/* The number of entries of folder dir (. and .. aside). */
static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    size_t count = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return count;
}

/* A batch leaves nothing behind until committed, and every file, whole,
 * once committed; one file that cannot be written is refused alone. */
static void test_batch(const char *dir)
{
    char a[256], b[256], c[256], folder[256];
    snprintf(folder, sizeof folder, "%s/batch", dir);
    snprintf(a, sizeof a, "%s/batch/one/a.csv", dir);
    snprintf(b, sizeof b, "%s/batch/one/b.csv", dir);
    snprintf(c, sizeof c, "%s/batch/two/c.csv", dir);
    SX_CHECK(sx_mkdirs_for(a, NULL) == 0 && sx_mkdirs_for(c, NULL) == 0);
    sx_file_batch_t *batch = sx_file_batch_new();
    SX_CHECK(sx_file_batch_add(batch, a, "a\n", 2, NULL) == 0);
    SX_CHECK(sx_file_batch_add(batch, c, "c\n", 2, NULL) == 0);
    SX_CHECK(sx_file_batch_count(batch) == 2);
    sx_file_batch_destroy(&batch); /* uncommitted: nothing stays */
    snprintf(folder, sizeof folder, "%s/batch/one", dir);
    SX_CHECK(count_entries(folder) == 0);
    batch = sx_file_batch_new();
    sx_error_t err;
    char missing[300];
    snprintf(missing, sizeof missing, "%s/batch/none/x.csv", dir);
    SX_CHECK(sx_file_batch_add(batch, a, "a\n", 2, NULL) == 0);
    SX_CHECK(sx_file_batch_add(batch, missing, "x\n", 2, &err) == -1 &&
             strstr(err.msg, ": cannot create: No such file or directory"));
    SX_CHECK(sx_file_batch_add(batch, b, "bb\n", 3, NULL) == 0);
    SX_CHECK(sx_file_batch_add(batch, c, "c\n", 2, NULL) == 0);
    SX_CHECK(!sx_file_exists(a) && sx_file_batch_count(batch) == 3);
    SX_CHECK(sx_file_batch_commit(batch, NULL) == 0 && sx_file_batch_count(batch) == 0);
    size_t size = 0;
    char *data = sx_file_read(b, 10, &size, NULL);
    SX_CHECK(data && size == 3 && memcmp(data, "bb\n", 3) == 0);
    free(data);
    SX_CHECK(sx_file_exists(a) && sx_file_exists(c));
    SX_CHECK(count_entries(folder) == 2); /* no temporary file left */
    snprintf(folder, sizeof folder, "%s/batch/two", dir);
    SX_CHECK(count_entries(folder) == 1);
    SX_CHECK(sx_file_batch_commit(batch, NULL) == 0); /* an empty one */

    /* A streamed file lands whole; one whose writes failed (here the file
     * size limit gives EFBIG where a full disk gives ENOSPC) fails the
     * commit, and nothing of the batch is renamed into place. */
    char d[256];
    snprintf(d, sizeof d, "%s/batch/two/d.csv", dir);
    FILE *out = sx_file_batch_stream(batch, d, NULL);
    SX_CHECK(out && fputs("d,e\n", out) >= 0);
    SX_CHECK(sx_file_batch_commit(batch, NULL) == 0);
    data = sx_file_read(d, 10, &size, NULL);
    SX_CHECK(data && size == 4 && memcmp(data, "d,e\n", 4) == 0);
    free(data);
    SX_CHECK(unlink(d) == 0);
    SX_CHECK(sx_file_batch_add(batch, d, "d\n", 2, NULL) == 0);
    out = sx_file_batch_stream(batch, b, NULL);
    struct rlimit saved_limit, small;
    SX_CHECK(getrlimit(RLIMIT_FSIZE, &saved_limit) == 0);
    small = saved_limit;
    small.rlim_cur = 1000;
    void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    SX_CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    for (int i = 0; out && i < 1000; i++)
        fputs("0123456789\n", out);
    int rc = sx_file_batch_commit(batch, &err);
    SX_CHECK(setrlimit(RLIMIT_FSIZE, &saved_limit) == 0);
    signal(SIGXFSZ, saved_handler);
    SX_CHECK(out && rc == -1 && strstr(err.msg, ": write failed: File too large"));
    SX_CHECK(!sx_file_exists(d) && count_entries(folder) == 1);
    data = sx_file_read(b, 10, &size, NULL); /* the old one */
    SX_CHECK(data && size == 3);
    free(data);
    sx_file_batch_destroy(&batch);
}

/* sx_file_read_stream takes what `--sql <(...)` gives: a pipe. */
/* Collects the pieces of sx_file_read_chunks; "stop" in one stops it. */
static int collect_piece(const char *data, size_t size, void *arg, sx_error_t *err)
{
    char *all = arg;
    size_t used = strlen(all);
    memcpy(all + used, data, size);
    all[used + size] = '|';
    all[used + size + 1] = '\0';
    return memmem(data, size, "stop", 4) ? sx_error_set(err, "stopped") : 0;
}

/* Pieces of the chunk size, the last one shorter, under the input rule. */
static void test_read_chunks(const char *dir)
{
    char path[256], all[64] = "";
    sx_error_t err;
    snprintf(path, sizeof path, "%s/pieces.csv", dir);
    SX_CHECK(sx_file_write_atomic(path, "abcdefghij", 10, NULL) == 0);
    SX_CHECK(sx_file_read_chunks(NULL, path, SX_FILE_CSV, 4, collect_piece, all, &err) ==
             0);
    SX_CHECK(strcmp(all, "abcd|efgh|ij|") == 0);
    all[0] = '\0';
    SX_CHECK(sx_file_read_chunks(NULL, path, SX_FILE_CSV, 5, collect_piece, all, &err) ==
             0);
    SX_CHECK(strcmp(all, "abcde|fghij|") == 0);
    SX_CHECK(sx_file_write_atomic(path, "ab stop cd ef", 13, NULL) == 0);
    all[0] = '\0';
    SX_CHECK(sx_file_read_chunks(NULL, path, SX_FILE_CSV, 8, collect_piece, all, &err) ==
             -1);
    SX_CHECK(strcmp(all, "ab stop |") == 0 && strcmp(err.msg, "stopped") == 0);
    SX_CHECK(setenv("SX_MAX_CSV_BYTES", "12", 1) == 0);
    char want[600];
    snprintf(
        want, sizeof want,
        "%s: larger than the limit of 12 bytes for CSV files (set SX_MAX_CSV_BYTES to "
        "raise it)",
        path);
    expect_error(
        sx_file_read_chunks(NULL, path, SX_FILE_CSV, 4, collect_piece, all, &err), &err,
        want, false);
    SX_CHECK(unsetenv("SX_MAX_CSV_BYTES") == 0);
    snprintf(want, sizeof want, "%s: a folder, not a regular file", dir);
    expect_error(sx_file_read_chunks(NULL, dir, SX_FILE_CSV, 4, collect_piece, all, &err),
                 &err, want, false);
    /* A file that passes every check but cannot be opened (no descriptor
     * left) is that error, never read from a bad descriptor. */
    struct rlimit saved, none;
    SX_CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    none = (struct rlimit){0, saved.rlim_max};
    SX_CHECK(setrlimit(RLIMIT_NOFILE, &none) == 0);
    int chunks =
        sx_file_read_chunks(NULL, path, SX_FILE_CSV, 4, collect_piece, all, &err);
    sx_error_t load_err;
    size_t size = 0;
    char *data = sx_file_load(NULL, path, SX_FILE_CSV, &size, &load_err);
    SX_CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(EMFILE));
    expect_error(chunks, &err, want, false);
    expect_error(data ? 0 : -1, &load_err, want, false);
    free(data);
}

static void test_read_stream(const char *dir)
{
    int fds[2];
    SX_CHECK(pipe(fds) == 0);
    SX_CHECK(write(fds[1], "SELECT 1", 8) == 8);
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    size_t size = 0;
    sx_error_t err;
    char *data = sx_file_read_stream(path, 100, &size, &err);
    SX_CHECK(data && size == 8 && strcmp(data, "SELECT 1") == 0);
    free(data);
    close(fds[0]);
    SX_CHECK(sx_file_read_stream(dir, 100, &size, &err) == NULL &&
             strstr(err.msg, "a folder"));
}

void sx_files_test(bool verbose)
{
    char dir[] = "/tmp/sx-files-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/a/b/c.txt", dir);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, "hello", 5, NULL) == 0);
    SX_CHECK(sx_file_exists(path));
    size_t size = 0;
    errno = EINTR; /* left by an earlier call: no read of this one was interrupted */
    char *data = sx_file_read(path, 100, &size, NULL);
    SX_CHECK(data && size == 5 && strcmp(data, "hello") == 0);
    free(data);
    sx_error_t err;
    SX_CHECK(sx_file_read(path, 4, &size, &err) == NULL && strstr(err.msg, "larger"));
    SX_CHECK(sx_file_write_atomic(path, "", 0, NULL) == 0);
    data = sx_file_read(path, 100, &size, NULL);
    SX_CHECK(data && size == 0);
    free(data);
    test_read_stream(dir);
    test_read_chunks(dir);
    test_concurrent_writers(dir);
    test_batch(dir);
    test_sizes();
    SX_CHECK(sx_file_kind_of("a/b.csv") == SX_FILE_CSV);
    SX_CHECK(sx_file_kind_of("task.json") == SX_FILE_JSON);
    SX_CHECK(sx_file_kind_of("task_ids.txt") == SX_FILE_LIST);
    SX_CHECK(sx_file_kind_of("notes.txt") == SX_FILE_EXTRA);
    char *folder = sx_file_folder("a/b/c.csv");
    SX_CHECK(strcmp(folder, "a/b") == 0);
    free(folder);
    folder = sx_file_folder("/c.csv");
    SX_CHECK(strcmp(folder, "/") == 0);
    free(folder);
    folder = sx_file_folder("c.csv");
    SX_CHECK(strcmp(folder, ".") == 0);
    free(folder);
    test_input_rule(dir, verbose);
    test_lines(verbose);
    test_output_paths(dir, verbose);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    SX_CHECK(system(cmd) == 0);
}
