/* bench.c: the benchmark folder's task list, BENCH/task_ids.txt (docs/
 * benchmark.md): the fixed task IDs in order, the denominator of every EX figure. The
 * file is read line by line and every bad line is reported (see bench.h for
 * the rules); the IDs kept are valid and distinct, indexed for look-ups. The
 * paths of gold/ and evaluation/ files are built here but never opened. */
#include "common/bench/bench.h"
#include "common/bench/task.h"

#include "common/digest.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LENGTH 128

struct _sx_bench_t {
    char *dir;
    char **ids;    /* in task_ids.txt order */
    size_t *lines; /* line of each ID in task_ids.txt */
    size_t count;
    size_t capacity;
    zhashx_t *positions; /* ID -> position + 1 (so that 0 means absent) */
};

static bool name_bytes_are_safe(const char *name, size_t length)
{
    if (length == 0 || length > NAME_MAX_LENGTH || name[0] == '.')
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        if (!ok)
            return false;
    }
    return true;
}

bool sx_name_is_safe(const char *name)
{
    return name && name_bytes_are_safe(name, strlen(name));
}

void sx_text_show(char *out, size_t size, const char *text, size_t length)
{
    size_t used = 0;
    for (size_t i = 0; i < length && used + 8 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (i == SX_SHOWN_MAX) {
            used += (size_t)snprintf(out + used, size - used, "...");
            break;
        }
        if (c < 0x20 || c >= 0x7f)
            used += (size_t)snprintf(out + used, size - used, "\\x%02x", c);
        else
            out[used++] = (char)c;
    }
    out[used] = '\0';
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static sx_bench_t *bench_new(const char *dir)
{
    sx_bench_t *self = sx_new(sx_bench_t);
    self->dir = sx_strdup(dir);
    self->positions = zhashx_new();
    return self;
}

void sx_bench_destroy(sx_bench_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_bench_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++)
        free(self->ids[i]);
    free(self->ids);
    free(self->lines);
    zhashx_destroy(&self->positions);
    free(self->dir);
    free(self);
    *self_p = NULL;
}

/* Keeps an ID that check_id_line found new. */
static void bench_add(sx_bench_t *self, const char *id, size_t line)
{
    if (self->count == self->capacity) {
        self->capacity = self->capacity ? 2 * self->capacity : 64;
        self->ids = sx_realloc(self->ids, self->capacity, sizeof *self->ids);
        self->lines = sx_realloc(self->lines, self->capacity, sizeof *self->lines);
    }
    char *copy = sx_strdup(id);
    zhashx_insert(self->positions, copy, (void *)(uintptr_t)(self->count + 1));
    self->ids[self->count] = copy;
    self->lines[self->count++] = line;
}

/* Validates one line of task_ids.txt (without its line ending) and keeps
 * the ID when it is good. */
static void check_id_line(sx_bench_t *self, const char *path, size_t line, const char *id,
                          size_t length, sx_problems_t *problems)
{
    char shown[SX_SHOWN_SIZE];
    sx_text_show(shown, sizeof shown, id, length);
    if (length == 0) {
        sx_problems_add(problems, "%s:%zu: empty line (each line holds one task ID)",
                        path, line);
        return;
    }
    if (is_blank(id[0]) || is_blank(id[length - 1])) {
        sx_problems_add(problems, "%s:%zu: task ID '%s' has leading or trailing space",
                        path, line, shown);
        return;
    }
    if (!name_bytes_are_safe(id, length)) {
        sx_problems_add(problems,
                        "%s:%zu: task ID '%s' is not a safe file name (1-128 characters "
                        "of [A-Za-z0-9_.-], not starting with '.')",
                        path, line, shown);
        return;
    }
    long first = sx_bench_index_of(self, id);
    if (first >= 0) {
        sx_problems_add(problems, "%s:%zu: duplicate task ID '%s' (first on line %zu)",
                        path, line, shown, self->lines[first]);
        return;
    }
    bench_add(self, id, line);
}

/* Reads every line of task_ids.txt (loaded, opened as a stream) into self. */
static void read_ids(sx_bench_t *self, FILE *in, const char *path,
                     sx_problems_t *problems)
{
    char *text = NULL;
    size_t capacity = 0;
    size_t line = 0;
    ssize_t got;
    while ((got = getline(&text, &capacity, in)) >= 0) {
        size_t length = (size_t)got;
        line++;
        if (length > 0 && text[length - 1] == '\n')
            length--;
        if (length > 0 && text[length - 1] == '\r') /* CRLF */
            length--;
        text[length] = '\0';
        check_id_line(self, path, line, text, length, problems);
    }
    if (ferror(in))
        sx_problems_add(problems, "%s: read error: %s", path, strerror(errno));
    free(text);
}

sx_bench_t *sx_bench_check(const char *dir, sx_problems_t *problems)
{
    char *path = sx_format("%s/task_ids.txt", dir);
    sx_error_t err;
    size_t size = 0;
    char *data = sx_file_load(dir, path, SX_FILE_LIST, &size, &err);
    FILE *in = data ? fmemopen(data, size, "r") : NULL;
    sx_bench_t *self = NULL;
    if (!data)
        sx_problems_add(problems, "%s", err.msg);
    else if (size == 0)
        sx_problems_add(problems, "%s: no task IDs (the file is empty)", path);
    else if (!in)
        sx_problems_add(problems, "%s: out of memory", path);
    else
        read_ids(self = bench_new(dir), in, path, problems);
    if (in)
        fclose(in);
    free(data);
    free(path);
    if (self && self->count == 0)
        sx_bench_destroy(&self);
    return self;
}

sx_bench_t *sx_bench_open(const char *dir, sx_error_t *err)
{
    sx_problems_t *problems = sx_problems_new();
    sx_bench_t *self = sx_bench_check(dir, problems);
    if (sx_problems_count(problems) > 0) {
        sx_problems_to_error(problems, 0, err);
        sx_bench_destroy(&self);
    }
    sx_problems_destroy(&problems);
    return self;
}

const char *sx_bench_dir(const sx_bench_t *self)
{
    return self->dir;
}

size_t sx_bench_task_count(const sx_bench_t *self)
{
    return self->count;
}

const char *sx_bench_task_id(const sx_bench_t *self, size_t index)
{
    return index < self->count ? self->ids[index] : NULL;
}

long sx_bench_index_of(const sx_bench_t *self, const char *task_id)
{
    uintptr_t position = (uintptr_t)zhashx_lookup(self->positions, task_id);
    return position == 0 ? -1 : (long)(position - 1);
}

static char *bench_path(const sx_bench_t *self, const char *folder, const char *task_id,
                        const char *extension)
{
    return sx_format("%s/%s/%s%s", self->dir, folder, task_id, extension);
}

char *sx_bench_gold_path(const sx_bench_t *self, const char *task_id)
{
    return bench_path(self, "gold", task_id, ".csv");
}

char *sx_bench_evaluation_path(const sx_bench_t *self, const char *task_id)
{
    return bench_path(self, "evaluation", task_id, ".json");
}

int sx_bench_file_check(const sx_bench_t *self, const char *rel, sx_error_t *err)
{
    /* The folder rel belongs to: tasks/ID, gold, evaluation, or the bench. */
    const char *end = strchr(rel, '/');
    if (end && strncmp(rel, "tasks/", 6) == 0)
        end = strchr(end + 1, '/');
    char *root = sx_format("%s/%.*s", self->dir, end ? (int)(end - rel) : 0, rel);
    char *path = sx_format("%s/%s", self->dir, rel);
    int rc = sx_file_check(root, path, sx_file_kind_of(rel), NULL, err);
    free(root);
    free(path);
    return rc;
}

static int by_bytes(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* A walk of one task folder: whom it tells, and the folders it is in. */
typedef struct {
    const sx_bench_t *bench;
    const char *root; /* BENCH/tasks/ID */
    sx_bench_file_fn *visit;
    void *arg;
} walk_t;

typedef struct walk_folder {
    dev_t dev;
    ino_t ino;
    const struct walk_folder *up; /* the folder holding it, NULL above root */
} walk_folder_t;

static bool walk_is_in(const walk_folder_t *folder, const struct stat *st)
{
    for (; folder; folder = folder->up)
        if (folder->dev == st->st_dev && folder->ino == st->st_ino)
            return true;
    return false;
}

static void visit_tree(const walk_t *walk, const char *rel, const walk_folder_t *up)
{
    char *abs = sx_format("%s/%s", walk->bench->dir, rel);
    struct stat st;
    if (stat(abs, &st) != 0) {
        free(abs);
        return;
    }
    walk_folder_t here = {st.st_dev, st.st_ino, up};
    struct dirent **names = NULL;
    int count = scandir(abs, &names, NULL, by_bytes);
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        if (sx_name_is_safe(name)) {
            char *child = sx_format("%s/%s", rel, name);
            char *child_abs = sx_format("%s/%s", abs, name);
            bool found = stat(child_abs, &st) == 0;
            if (found && S_ISDIR(st.st_mode)) {
                if (!walk_is_in(&here, &st) &&
                    sx_path_check_inside(walk->root, child_abs, NULL) == 0)
                    visit_tree(walk, child, &here);
            } else if (found && S_ISREG(st.st_mode)) {
                walk->visit(child, walk->arg);
            }
            free(child);
            free(child_abs);
        }
        free(names[i]);
    }
    free(names);
    free(abs);
}

void sx_bench_task_files(const sx_bench_t *self, const char *task_id,
                         sx_bench_file_fn *visit, void *arg)
{
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "tasks/%s", task_id);
    char *root = sx_format("%s/%s", self->dir, rel);
    walk_t walk = {self, root, visit, arg};
    visit_tree(&walk, rel, NULL);
    free(root);
    snprintf(rel, sizeof rel, "gold/%s.csv", task_id);
    visit(rel, arg);
    snprintf(rel, sizeof rel, "evaluation/%s.json", task_id);
    visit(rel, arg);
}

typedef struct {
    const sx_bench_t *bench;
    sx_digest_t *digest;
} fingerprint_t;

/* One line of the fingerprint: "HASH PATH", or why there is none. */
static void list_file(const char *rel, void *arg)
{
    fingerprint_t *f = arg;
    char path[PATH_MAX], hex[41];
    sx_error_t err;
    snprintf(path, sizeof path, "%s/%s", f->bench->dir, rel);
    if (!sx_file_exists(path))
        sx_digest_line(f->digest, "missing %s", rel);
    else if (sx_bench_file_check(f->bench, rel, &err) != 0 ||
             sx_hash_file(path, hex, NULL, &err) != 0)
        sx_digest_line(f->digest, "refused %s", rel);
    else
        sx_digest_file(f->digest, hex, rel);
}

void sx_bench_fingerprint(const sx_bench_t *self, char hex[41])
{
    fingerprint_t f = {self, sx_digest_new()};
    list_file("task_ids.txt", &f);
    for (size_t i = 0; i < self->count; i++)
        sx_bench_task_files(self, self->ids[i], list_file, &f);
    sx_digest_hex(f.digest, hex);
    sx_digest_destroy(&f.digest);
}

/* --- self-test --------------------------------------------------------- */

static void write_ids(const char *dir, const char *content, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/task_ids.txt", dir);
    FILE *out = fopen(path, "wb");
    SX_CHECK(out);
    SX_CHECK(fwrite(content, 1, size, out) == size);
    SX_CHECK(fclose(out) == 0);
}

/* Opening dir fails with "DIR/task_ids.txt" followed by `expected`. */
static void expect_error(const char *dir, const char *expected, bool verbose)
{
    sx_error_t err;
    sx_error_clear(&err);
    sx_bench_t *bench = sx_bench_open(dir, &err);
    char want[1024];
    snprintf(want, sizeof want, "%s/task_ids.txt%s", dir, expected);
    if (verbose || strcmp(err.msg, want) != 0)
        fprintf(stderr, "task_ids.txt case: got  '%s'\n                   want '%s'\n",
                err.msg, want);
    SX_CHECK(bench == NULL);
    SX_CHECK(strcmp(err.msg, want) == 0);
}

static void test_good_list(const char *dir)
{
    /* CRLF endings and a last line without its newline are both fine. */
    const char text[] = "t1\r\nb-2.x\r\nlast_one";
    write_ids(dir, text, sizeof text - 1);
    sx_error_t err;
    sx_bench_t *bench = sx_bench_open(dir, &err);
    SX_CHECK(bench);
    SX_CHECK(sx_bench_task_count(bench) == 3);
    SX_CHECK(strcmp(sx_bench_task_id(bench, 1), "b-2.x") == 0);
    SX_CHECK(sx_bench_task_id(bench, 3) == NULL);
    SX_CHECK(sx_bench_index_of(bench, "last_one") == 2);
    SX_CHECK(sx_bench_index_of(bench, "t2") == -1);
    SX_CHECK(strcmp(sx_bench_dir(bench), dir) == 0);
    char *gold = sx_bench_gold_path(bench, "t1");
    char *evaluation = sx_bench_evaluation_path(bench, "t1");
    char want[512];
    snprintf(want, sizeof want, "%s/gold/t1.csv", dir);
    SX_CHECK(strcmp(gold, want) == 0);
    snprintf(want, sizeof want, "%s/evaluation/t1.json", dir);
    SX_CHECK(strcmp(evaluation, want) == 0);
    free(gold);
    free(evaluation);
    sx_bench_destroy(&bench);
    SX_CHECK(bench == NULL);
    sx_bench_destroy(&bench);
}

/* sx_bench_check reports every bad line and keeps the good IDs. */
static void test_check_collects_every_problem(const char *dir)
{
    const char text[] = "a\n\na\n../x\nb\n";
    write_ids(dir, text, sizeof text - 1);
    sx_problems_t *problems = sx_problems_new();
    sx_bench_t *bench = sx_bench_check(dir, problems);
    SX_CHECK(bench);
    SX_CHECK(sx_bench_task_count(bench) == 2);
    SX_CHECK(strcmp(sx_bench_task_id(bench, 1), "b") == 0);
    SX_CHECK(sx_problems_count(problems) == 3);
    char want[512];
    snprintf(want, sizeof want,
             "%s/task_ids.txt:3: duplicate task ID 'a' (first on line 1)", dir);
    SX_CHECK(strcmp(sx_problems_get(problems, 1), want) == 0);
    sx_bench_destroy(&bench);
    sx_problems_destroy(&problems);
}

/* The table of bad task_ids.txt files and the exact error of each. */
static void test_bad_lists(const char *dir, bool verbose)
{
    static const char unsafe[] = "is not a safe file name (1-128 characters of "
                                 "[A-Za-z0-9_.-], not starting with '.')";
    static const struct {
        const char *content;
        size_t size;
        const char *error; /* after "DIR/task_ids.txt" */
    } cases[] = {
        {"t1\n\nt2\n", 7, ":2: empty line (each line holds one task ID)"},
        {"t1\nt2\n\n", 7, ":3: empty line (each line holds one task ID)"},
        {"\r\n", 2, ":1: empty line (each line holds one task ID)"},
        {"t1\n t2\n", 7, ":2: task ID ' t2' has leading or trailing space"},
        {"t1\t\n", 4, ":1: task ID 't1\\x09' has leading or trailing space"},
        {"t1\nt2\nt1\n", 9, ":3: duplicate task ID 't1' (first on line 1)"},
        {"", 0, ": no task IDs (the file is empty)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_ids(dir, cases[i].content, cases[i].size);
        expect_error(dir, cases[i].error, verbose);
    }
    static const struct {
        const char *content;
        size_t size;
        const char *shown;
    } unsafe_cases[] = {
        {"../x\n", 5, "../x"},
        {"a/b\n", 4, "a/b"},
        {".git\n", 5, ".git"},
        {"a\0b\n", 4, "a\\x00b"},
        {"\xef\xbb\xbft1\n", 6, "\\xef\\xbb\\xbft1"},
    };
    for (size_t i = 0; i < sizeof unsafe_cases / sizeof unsafe_cases[0]; i++) {
        write_ids(dir, unsafe_cases[i].content, unsafe_cases[i].size);
        char error[256];
        snprintf(error, sizeof error, ":1: task ID '%s' %s", unsafe_cases[i].shown,
                 unsafe);
        expect_error(dir, error, verbose);
    }
}

/* What may be shipped to a worker: each file checked against its folder. */
static void test_file_check(const char *dir)
{
    char path[512], want[1200];
    snprintf(path, sizeof path, "%s/tasks/t1/sources", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    snprintf(path, sizeof path, "%s/gold", dir);
    SX_CHECK(sx_mkdirs(path, NULL) == 0);
    snprintf(path, sizeof path, "%s/tasks/t1/sources/a.csv", dir);
    SX_CHECK(sx_file_write_atomic(path, "a\n", 2, NULL) == 0);
    snprintf(path, sizeof path, "%s/tasks/t1/notes.txt", dir);
    SX_CHECK(symlink("/etc/passwd", path) == 0);
    snprintf(path, sizeof path, "%s/gold/t1.csv", dir);
    SX_CHECK(symlink("../tasks/t1/sources/a.csv", path) == 0);
    write_ids(dir, "t1\n", 3);
    sx_bench_t *bench = sx_bench_open(dir, NULL);
    SX_CHECK(bench);
    sx_error_t err;
    SX_CHECK(sx_bench_file_check(bench, "task_ids.txt", NULL) == 0);
    SX_CHECK(sx_bench_file_check(bench, "tasks/t1/sources/a.csv", NULL) == 0);
    SX_CHECK(sx_bench_file_check(bench, "tasks/t1/notes.txt", &err) == -1);
    snprintf(want, sizeof want,
             "%s/tasks/t1/notes.txt: a link to /etc/passwd, outside %s/tasks/t1 (links "
             "must stay inside the folder)",
             dir, dir);
    SX_CHECK(strcmp(err.msg, want) == 0);
    SX_CHECK(sx_bench_file_check(bench, "gold/t1.csv", &err) == -1);
    snprintf(
        want, sizeof want,
        "%s/gold/t1.csv: a link to %s/tasks/t1/sources/a.csv, outside %s/gold (links "
        "must stay inside the folder)",
        dir, dir, dir);
    SX_CHECK(strcmp(err.msg, want) == 0);
    sx_bench_destroy(&bench);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s/tasks' '%s/gold'", dir, dir);
    SX_CHECK(system(command) == 0);
}

static void collect_file(const char *rel, void *arg)
{
    FILE *out = arg;
    fprintf(out, "%s;", rel);
}

static void write_bench_file(const char *dir, const char *rel, const char *content)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    SX_CHECK(sx_mkdirs_for(path, NULL) == 0);
    SX_CHECK(sx_file_write_atomic(path, content, strlen(content), NULL) == 0);
}

/* A task's files in byte order, subfolders included, hidden names skipped;
 * the fingerprint follows every byte of them and of task_ids.txt, and
 * names a missing file, but not where the bench lies. */
static void test_task_files_and_fingerprint(const char *dir)
{
    write_ids(dir, "t1\n", 3);
    write_bench_file(dir, "tasks/t1/task.json", "{}");
    write_bench_file(dir, "tasks/t1/sources/b.csv", "b\n");
    write_bench_file(dir, "tasks/t1/sources/a.csv", "a\n");
    write_bench_file(dir, "tasks/t1/.hidden", "x");
    write_bench_file(dir, "gold/t1.csv", "x\n1\n");
    sx_bench_t *bench = sx_bench_open(dir, NULL);
    char *listing = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&listing, &size);
    sx_bench_task_files(bench, "t1", collect_file, out);
    fclose(out);
    SX_CHECK(strcmp(listing, "tasks/t1/sources/a.csv;tasks/t1/sources/b.csv;"
                             "tasks/t1/task.json;gold/t1.csv;evaluation/t1.json;") == 0);
    free(listing);
    char first[41], again[41], other[41];
    sx_bench_fingerprint(bench, first);
    SX_CHECK(strlen(first) == 40);
    sx_bench_fingerprint(bench, again);
    SX_CHECK(strcmp(first, again) == 0);
    write_bench_file(dir, "tasks/t1/.hidden", "y"); /* not part of the task */
    sx_bench_fingerprint(bench, again);
    SX_CHECK(strcmp(first, again) == 0);
    write_bench_file(dir, "gold/t1.csv", "x\n2\n");
    sx_bench_fingerprint(bench, other);
    SX_CHECK(strcmp(first, other) != 0);
    write_bench_file(dir, "gold/t1.csv", "x\n1\n");
    write_bench_file(dir, "evaluation/t1.json", "{}");
    sx_bench_fingerprint(bench, other);
    SX_CHECK(strcmp(first, other) != 0);
    sx_bench_destroy(&bench);
    /* The same content elsewhere has the same fingerprint. */
    char copy[600], command[1400];
    snprintf(copy, sizeof copy, "%s-copy", dir);
    snprintf(command, sizeof command, "cp -r '%s' '%s' && rm '%s/evaluation/t1.json'",
             dir, copy, copy);
    SX_CHECK(system(command) == 0);
    bench = sx_bench_open(copy, NULL);
    sx_bench_fingerprint(bench, other);
    SX_CHECK(strcmp(first, other) == 0);
    sx_bench_destroy(&bench);
    snprintf(command, sizeof command, "rm -rf '%s' '%s/tasks' '%s/gold' '%s/evaluation'",
             copy, dir, dir, dir);
    SX_CHECK(system(command) == 0);
}

void sx_bench_test(bool verbose)
{
    SX_CHECK(sx_name_is_safe("t0001"));
    SX_CHECK(sx_name_is_safe("a.b-c_D"));
    SX_CHECK(!sx_name_is_safe(""));
    SX_CHECK(!sx_name_is_safe(".hidden"));
    SX_CHECK(!sx_name_is_safe("../x"));
    SX_CHECK(!sx_name_is_safe("a/b"));
    SX_CHECK(!sx_name_is_safe("a b"));
    SX_CHECK(!sx_name_is_safe(NULL));
    char long_name[NAME_MAX_LENGTH + 2];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    SX_CHECK(!sx_name_is_safe(long_name));
    long_name[NAME_MAX_LENGTH] = '\0';
    SX_CHECK(sx_name_is_safe(long_name));

    char dir[] = "/tmp/sx-bench-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    test_good_list(dir);
    test_file_check(dir);
    test_task_files_and_fingerprint(dir);
    test_check_collects_every_problem(dir);
    test_bad_lists(dir, verbose);
    char path[512];
    snprintf(path, sizeof path, "%s/task_ids.txt", dir);
    SX_CHECK(unlink(path) == 0);
    expect_error(dir, ": cannot open: No such file or directory", verbose);
    SX_CHECK(rmdir(dir) == 0);
}
