/* predictions.c: reading a method's predictions file (see predictions.h for
 * the rules). Each line is parsed on its own with jansson, so a bad line is
 * reported with its number and the next lines are still checked; the SQL of
 * the good lines is kept by (task, sample). */
#include "common/bench/predictions.h"

#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <czmq.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One kept prediction. */
typedef struct {
    size_t line; /* where it was read, for a second one's error */
    char *sql;
} entry_t;

struct _sx_predictions_t {
    zhashx_t *entries; /* "SAMPLE/TASK_ID" -> entry_t (owned) */
    int samples;       /* 1 + the largest sample number kept */
};

/* What reading one file needs at every line. */
typedef struct {
    const char *path;
    const sx_bench_t *bench;
    int max_samples;
    sx_problems_t *problems;
    sx_predictions_t *predictions;
} reader_t;

static void free_entry(void **item_p)
{
    entry_t *entry = *item_p;
    if (entry)
        free(entry->sql);
    free(entry);
    *item_p = NULL;
}

static sx_predictions_t *predictions_new(void)
{
    sx_predictions_t *self = sx_new(sx_predictions_t);
    self->entries = zhashx_new();
    zhashx_set_destructor(self->entries, free_entry);
    self->samples = 1;
    return self;
}

void sx_predictions_destroy(sx_predictions_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy(&(*self_p)->entries);
    free(*self_p);
    *self_p = NULL;
}

/* The table key of a (task, sample): a task ID is a safe name, never holding
 * a '/', so the key is unambiguous. */
static void entry_key(char *key, size_t size, const char *task_id, int sample)
{
    snprintf(key, size, "%d/%s", sample, task_id);
}

static bool is_blank_line(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (!strchr(" \t\r\n", text[i]))
            return false;
    return true;
}

/* Checks the fields of one parsed line; the ID, SQL and sample when all are
 * good. */
static bool line_fields(reader_t *rd, size_t line, const json_t *object, const char **id,
                        const char **sql, int *sample)
{
    bool good = true;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)object, key, value)
    {
        if (strcmp(key, "task_id") != 0 && strcmp(key, "sql") != 0 &&
            strcmp(key, SX_SAMPLE_FIELD) != 0) {
            sx_problems_add(
                rd->problems,
                "%s:%zu: unknown field '%s' (a prediction has task_id and sql)", rd->path,
                line, key);
            good = false;
        }
    }
    static const char *const required[] = {"task_id", "sql"};
    const char **values[] = {id, sql};
    for (size_t i = 0; i < 2; i++) {
        const json_t *field = json_object_get(object, required[i]);
        *values[i] = json_string_value(field);
        if (!field)
            sx_problems_add(rd->problems, "%s:%zu: missing %s", rd->path, line,
                            required[i]);
        else if (!*values[i])
            sx_problems_add(rd->problems, "%s:%zu: %s must be a string", rd->path, line,
                            required[i]);
        good = good && *values[i];
    }
    sx_error_t err;
    if (sx_sample_get(object, rd->max_samples, sample, &err) != 0) {
        sx_problems_add(rd->problems, "%s:%zu: %s", rd->path, line, err.msg);
        good = false;
    }
    return good;
}

/* Keeps one prediction unless its task is unknown or the (task, sample)
 * already predicted. */
static void keep(reader_t *rd, size_t line, const char *id, const char *sql, int sample)
{
    if (sx_bench_index_of(rd->bench, id) < 0) {
        sx_problems_add(rd->problems, "%s:%zu: task ID '%s' is not in task_ids.txt",
                        rd->path, line, id);
        return;
    }
    char key[160]; /* a task ID is at most 128 bytes */
    entry_key(key, sizeof key, id, sample);
    const entry_t *first = zhashx_lookup(rd->predictions->entries, key);
    char which[48] = "";
    if (sample > 0)
        snprintf(which, sizeof which, ", sample %d", sample);
    if (first) {
        sx_problems_add(rd->problems,
                        "%s:%zu: second prediction for task '%s'%s (first on line %zu)",
                        rd->path, line, id, which, first->line);
        return;
    }
    entry_t *entry = sx_new(entry_t);
    entry->line = line;
    entry->sql = sx_strdup(sql);
    zhashx_insert(rd->predictions->entries, key, entry);
    if (sample >= rd->predictions->samples)
        rd->predictions->samples = sample + 1;
}

static void read_line(reader_t *rd, size_t line, const char *text, size_t length)
{
    if (is_blank_line(text, length))
        return;
    /* A line comes without its '\n' (sx_lines_next); a CRLF line's '\r' goes
     * too, so that an error's column is within the line. */
    while (length > 0 && text[length - 1] == '\r')
        length--;
    json_error_t error;
    json_t *object = json_loadb(text, length, JSON_REJECT_DUPLICATES, &error);
    const char *id = NULL, *sql = NULL;
    int sample = 0;
    if (!object)
        sx_problems_add(rd->problems, "%s:%zu: not JSON (column %d): %s", rd->path, line,
                        error.column, error.text);
    else if (!json_is_object(object))
        sx_problems_add(rd->problems, "%s:%zu: not a JSON object", rd->path, line);
    else if (line_fields(rd, line, object, &id, &sql, &sample))
        keep(rd, line, id, sql, sample);
    json_decref(object);
}

static sx_predictions_t *check_samples(const char *path, const sx_bench_t *bench,
                                       int max_samples, sx_problems_t *problems)
{
    sx_error_t err;
    size_t size = 0;
    char *data = sx_file_load(NULL, path, SX_FILE_JSONL, &size, &err);
    if (!data) {
        sx_problems_add(problems, "%s", err.msg);
        return NULL;
    }
    reader_t rd = {.path = path,
                   .bench = bench,
                   .max_samples = max_samples,
                   .problems = problems,
                   .predictions = predictions_new()};
    sx_lines_t lines;
    sx_lines_init(&lines, path, data, size);
    char *line;
    size_t length;
    int more;
    while ((more = sx_lines_next(&lines, &line, &length, &err)) != 0) {
        if (more < 0)
            sx_problems_add(problems, "%s", err.msg);
        else
            read_line(&rd, lines.number, line, length);
    }
    free(data);
    return rd.predictions;
}

sx_predictions_t *sx_predictions_check(const char *path, const sx_bench_t *bench,
                                       sx_problems_t *problems)
{
    return check_samples(path, bench, SX_SAMPLES_DEFAULT, problems);
}

sx_predictions_t *sx_predictions_load_samples(const char *path, const sx_bench_t *bench,
                                              int max_samples, sx_error_t *err)
{
    sx_problems_t *problems = sx_problems_new();
    sx_predictions_t *self = check_samples(path, bench, max_samples, problems);
    if (sx_problems_count(problems) > 0) {
        sx_problems_to_error(problems, 0, err);
        sx_predictions_destroy(&self);
    }
    sx_problems_destroy(&problems);
    return self;
}

sx_predictions_t *sx_predictions_load(const char *path, const sx_bench_t *bench,
                                      sx_error_t *err)
{
    return sx_predictions_load_samples(path, bench, SX_SAMPLES_DEFAULT, err);
}

const char *sx_predictions_sample_sql(const sx_predictions_t *self, const char *task_id,
                                      int sample)
{
    char key[160]; /* a task ID is at most 128 bytes */
    entry_key(key, sizeof key, task_id, sample);
    const entry_t *entry = zhashx_lookup(self->entries, key);
    return entry ? entry->sql : NULL;
}

const char *sx_predictions_sql(const sx_predictions_t *self, const char *task_id)
{
    return sx_predictions_sample_sql(self, task_id, 0);
}

int sx_predictions_samples(const sx_predictions_t *self)
{
    return self->samples;
}

size_t sx_predictions_count(const sx_predictions_t *self)
{
    return zhashx_size(self->entries);
}

/* --- self-test --------------------------------------------------------- */

static void write_file(const char *path, const char *content)
{
    FILE *out = fopen(path, "w");
    SX_CHECK(out);
    SX_CHECK(fputs(content, out) >= 0);
    SX_CHECK(fclose(out) == 0);
}

static void test_good_file(const char *path, const sx_bench_t *bench)
{
    /* Blank lines anywhere, CRLF, any key order, an empty SQL string kept. */
    write_file(path, "{\"task_id\": \"t1\", \"sql\": \"SELECT 1\"}\r\n"
                     "\n   \n"
                     "{\"sql\": \"\", \"task_id\": \"t3\"}\n\n");
    sx_error_t err;
    sx_predictions_t *predictions = sx_predictions_load(path, bench, &err);
    SX_CHECK(predictions);
    SX_CHECK(sx_predictions_count(predictions) == 2);
    SX_CHECK(strcmp(sx_predictions_sql(predictions, "t1"), "SELECT 1") == 0);
    SX_CHECK(sx_predictions_sql(predictions, "t2") == NULL);
    SX_CHECK(strcmp(sx_predictions_sql(predictions, "t3"), "") == 0);
    sx_predictions_destroy(&predictions);
    SX_CHECK(predictions == NULL);
    sx_predictions_destroy(&predictions);

    write_file(path, "");
    predictions = sx_predictions_load(path, bench, &err);
    SX_CHECK(predictions && sx_predictions_count(predictions) == 0);
    SX_CHECK(sx_predictions_samples(predictions) == 1);
    sx_predictions_destroy(&predictions);
}

/* Several samples: n is 1 + the largest sample number, a (task, sample)
 * without a line is missing, sample 0 is the line without "sample"; the
 * bound is --max-samples. */
static void test_samples(const char *path, const sx_bench_t *bench)
{
    write_file(path, "{\"task_id\": \"t1\", \"sql\": \"a0\"}\n"
                     "{\"task_id\": \"t1\", \"sql\": \"a2\", \"sample\": 2}\n"
                     "{\"task_id\": \"t2\", \"sql\": \"b1\", \"sample\": 1}\n"
                     "{\"task_id\": \"t2\", \"sql\": \"b0\", \"sample\": 0}\n");
    sx_error_t err;
    sx_predictions_t *predictions = sx_predictions_load(path, bench, &err);
    SX_CHECK(predictions);
    SX_CHECK(sx_predictions_samples(predictions) == 3);
    SX_CHECK(sx_predictions_count(predictions) == 4);
    SX_CHECK(strcmp(sx_predictions_sql(predictions, "t1"), "a0") == 0);
    SX_CHECK(sx_predictions_sample_sql(predictions, "t1", 1) == NULL);
    SX_CHECK(strcmp(sx_predictions_sample_sql(predictions, "t1", 2), "a2") == 0);
    SX_CHECK(strcmp(sx_predictions_sample_sql(predictions, "t2", 0), "b0") == 0);
    SX_CHECK(strcmp(sx_predictions_sample_sql(predictions, "t2", 1), "b1") == 0);
    SX_CHECK(sx_predictions_sample_sql(predictions, "t2", 2) == NULL);
    SX_CHECK(sx_predictions_sample_sql(predictions, "t3", 0) == NULL);
    sx_predictions_destroy(&predictions);

    /* A lower bound refuses what the default takes, naming it. */
    SX_CHECK(sx_predictions_load_samples(path, bench, 2, &err) == NULL);
    char want[600];
    snprintf(want, sizeof want, "%s:2: sample 2 is not below --max-samples 2", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
    predictions = sx_predictions_load_samples(path, bench, 3, &err);
    SX_CHECK(predictions && sx_predictions_samples(predictions) == 3);
    sx_predictions_destroy(&predictions);
}

/* The table of bad lines and the exact error of each ("P" = the path). */
static void test_bad_lines(const char *path, const sx_bench_t *bench, bool verbose)
{
    static const struct {
        const char *content;
        const char *error; /* after "PATH:" */
    } cases[] = {
        {"SELECT 1\n", "1: not JSON (column 6): '[' or '{' expected near 'SELECT'"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\"\n",
         "1: not JSON (column 28): '}' expected near end of file"},
        /* CRLF: the column is the line's, not one past its "\r" */
        {"{\"task_id\": \"t1\", \"sql\": \"x\"\r\n",
         "1: not JSON (column 28): '}' expected near end of file"},
        {"\n[\"t1\", \"x\"]\n", "2: not a JSON object"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\"} {}\n",
         "1: not JSON (column 31): end of file expected near '{'"},
        {"{\"task_id\": \"t1\"}\n", "1: missing sql"},
        {"{\"sql\": \"x\"}\n", "1: missing task_id"},
        {"{\"task_id\": 1, \"sql\": \"x\"}\n", "1: task_id must be a string"},
        {"{\"task_id\": \"t1\", \"sql\": null}\n", "1: sql must be a string"},
        {"{\"task_id\": \"t1\", \"SQL\": \"x\"}\n",
         "1: unknown field 'SQL' (a prediction has task_id and sql)"},
        {"{\"task_id\": \"t9\", \"sql\": \"x\"}\n",
         "1: task ID 't9' is not in task_ids.txt"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\"}\n\n{\"task_id\": \"t1\", \"sql\": "
         "\"y\"}\n",
         "3: second prediction for task 't1' (first on line 1)"},
        {"{\"task_id\": \"t1\", \"task_id\": \"t2\", \"sql\": \"x\"}\n",
         "1: not JSON (column 27): duplicate object key near '\"task_id\"'"},
        /* sample numbers: an integer in [0, --max-samples) */
        {"{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": -1}\n",
         "1: sample -1 is negative"},
        {"\n{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": 1.5}\n",
         "2: sample must be an integer, not 1.5"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": \"1\"}\n",
         "1: sample must be an integer, not \"1\""},
        {"{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": true}\n",
         "1: sample must be an integer, not true"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": 100}\n",
         "1: sample 100 is not below --max-samples 100"},
        {"{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": 2}\n"
         "{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": 1}\n"
         "{\"sample\": 2, \"task_id\": \"t1\", \"sql\": \"y\"}\n",
         "3: second prediction for task 't1', sample 2 (first on line 1)"},
        /* no "sample" is sample 0 */
        {"{\"task_id\": \"t1\", \"sql\": \"x\"}\n"
         "{\"task_id\": \"t1\", \"sql\": \"x\", \"sample\": 0}\n",
         "2: second prediction for task 't1' (first on line 1)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(path, cases[i].content);
        sx_error_t err;
        sx_error_clear(&err);
        sx_predictions_t *predictions = sx_predictions_load(path, bench, &err);
        char want[1024];
        snprintf(want, sizeof want, "%s:%s", path, cases[i].error);
        if (verbose || strcmp(err.msg, want) != 0)
            fprintf(stderr,
                    "predictions case %zu: got  '%s'\n                    want '%s'\n", i,
                    err.msg, want);
        SX_CHECK(predictions == NULL);
        SX_CHECK(strcmp(err.msg, want) == 0);
    }
}

/* Checking goes on after a bad line and keeps the good ones; every unknown
 * field of a line is named. */
static void test_check_collects_every_problem(const char *path, const sx_bench_t *bench)
{
    write_file(path, "{\"task_id\": \"t1\", \"sql\": \"a\"}\n"
                     "oops\n"
                     "{\"task_id\": \"t2\", \"sql\": \"b\"}\n"
                     "{\"task_id\": \"t2\", \"sql\": \"c\"}\n"
                     "{\"task_id\": \"t3\", \"sql\": \"d\", \"x\": 1, \"y\": 2}\n");
    sx_problems_t *problems = sx_problems_new();
    sx_predictions_t *predictions = sx_predictions_check(path, bench, problems);
    SX_CHECK(predictions);
    SX_CHECK(sx_problems_count(problems) == 4);
    char want[600];
    snprintf(want, sizeof want,
             "%s:5: unknown field 'y' (a prediction has task_id and sql)", path);
    SX_CHECK(strcmp(sx_problems_get(problems, 3), want) == 0);
    SX_CHECK(sx_predictions_count(predictions) == 2);
    SX_CHECK(strcmp(sx_predictions_sql(predictions, "t2"), "b") == 0);
    sx_predictions_destroy(&predictions);
    sx_problems_destroy(&problems);
}

/* A NUL byte is reported with its line, and the lines after it are still
 * read (a line cut at the NUL would hide them); a FIFO is refused at once. */
static void test_hostile_files(const char *path, const sx_bench_t *bench)
{
    static const char text[] = "{\"task_id\": \"t1\", \"sql\": \"a\"}\n"
                               "{\"task_id\": \"t2\", \"sql\": \"b\0\"}\n"
                               "{\"task_id\": \"t3\", \"sql\": \"c\"}\n";
    FILE *out = fopen(path, "wb");
    SX_CHECK(out && fwrite(text, 1, sizeof text - 1, out) == sizeof text - 1);
    SX_CHECK(fclose(out) == 0);
    sx_problems_t *problems = sx_problems_new();
    sx_predictions_t *predictions = sx_predictions_check(path, bench, problems);
    char want[600];
    snprintf(want, sizeof want, "%s:2: a NUL byte at column 28 (a JSONL line is text)",
             path);
    SX_CHECK(predictions && sx_problems_count(problems) == 1);
    SX_CHECK(strcmp(sx_problems_get(problems, 0), want) == 0);
    SX_CHECK(sx_predictions_count(predictions) == 2);
    SX_CHECK(strcmp(sx_predictions_sql(predictions, "t3"), "c") == 0);
    sx_predictions_destroy(&predictions);
    sx_problems_destroy(&problems);

    SX_CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    sx_error_t err;
    SX_CHECK(sx_predictions_load(path, bench, &err) == NULL);
    snprintf(want, sizeof want, "%s: a FIFO, not a regular file", path);
    SX_CHECK(strcmp(err.msg, want) == 0);
}

void sx_predictions_test(bool verbose)
{
    char dir[] = "/tmp/sx-predictions-test-XXXXXX";
    SX_CHECK(mkdtemp(dir));
    char ids[512], path[512];
    snprintf(ids, sizeof ids, "%s/task_ids.txt", dir);
    snprintf(path, sizeof path, "%s/predictions.jsonl", dir);
    write_file(ids, "t1\nt2\nt3\n");
    sx_error_t err;
    sx_bench_t *bench = sx_bench_open(dir, &err);
    SX_CHECK(bench);

    test_good_file(path, bench);
    test_samples(path, bench);
    test_bad_lines(path, bench, verbose);
    test_check_collects_every_problem(path, bench);
    test_hostile_files(path, bench);

    SX_CHECK(unlink(path) == 0);
    SX_CHECK(sx_predictions_load(path, bench, &err) == NULL);
    char want[600];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    SX_CHECK(strcmp(err.msg, want) == 0);

    sx_bench_destroy(&bench);
    SX_CHECK(unlink(ids) == 0);
    SX_CHECK(rmdir(dir) == 0);
}
