/* tests/unit/task.c: the benchmark loader. Runs the self-tests of the problem list,
 * task_ids.txt and task.json code, then loads the fixture bench
 * tests/data/mini-bench (three tasks: live and static sources, the three sink
 * kinds, strftime and epoch times) and checks the model, and finally walks a
 * table of bad inputs, each a small edit of one fixture file, with the exact
 * error each one gets, and a few hundred seeded random edits that must be
 * reported, never crash. The fixture is copied to a temporary folder first. */
#include "common/bench/problems.h"
#include "common/selftest.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char s_bench[256]; /* the temporary copy of the fixture */

static void run(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *format, ...)
{
    char command[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(command, sizeof command, format, ap);
    va_end(ap);
    SX_CHECK(system(command) == 0);
}

static char *slurp(const char *path)
{
    FILE *in = fopen(path, "rb");
    SX_CHECK(in);
    SX_CHECK(fseek(in, 0, SEEK_END) == 0);
    long size = ftell(in);
    SX_CHECK(size >= 0 && fseek(in, 0, SEEK_SET) == 0);
    char *text = malloc((size_t)size + 1);
    SX_CHECK(text && fread(text, 1, (size_t)size, in) == (size_t)size);
    text[size] = '\0';
    fclose(in);
    return text;
}

static void spill(const char *path, const char *text)
{
    FILE *out = fopen(path, "wb");
    SX_CHECK(out && fputs(text, out) >= 0 && fclose(out) == 0);
}

/* Replaces every "{B}" in pattern by the bench folder. */
static void expand(char *out, size_t size, const char *pattern)
{
    size_t used = 0;
    for (const char *p = pattern; *p && used + 1 < size;) {
        if (strncmp(p, "{B}", 3) == 0) {
            used += (size_t)snprintf(out + used, size - used, "%s", s_bench);
            p += 3;
        } else {
            out[used++] = *p++;
        }
    }
    out[used < size ? used : size - 1] = '\0';
}

static void test_fixture_model(void)
{
    sx_error_t err;
    sx_task_t *task = sx_task_load(s_bench, "join_max", &err);
    if (!task)
        fprintf(stderr, "join_max: %s\n", err.msg);
    SX_CHECK(task);
    SX_CHECK(strcmp(task->task_id, "join_max") == 0);
    SX_CHECK(task->source_count == 2 && task->output_column_count == 3);
    const sx_source_t *bids = &task->sources[0];
    SX_CHECK(strcmp(bids->name, "bids") == 0 && bids->kind == SX_SOURCE_LIVE);
    SX_CHECK(strcmp(bids->file, "sources/bids.csv") == 0);
    char want[512];
    snprintf(want, sizeof want, "%s/tasks/join_max/sources/bids.csv", s_bench);
    SX_CHECK(strcmp(bids->path, want) == 0);
    SX_CHECK(bids->column_count == 3);
    SX_CHECK(strcmp(bids->columns[0].name, "auction") == 0);
    SX_CHECK(strcmp(bids->columns[0].from, "auction_id") == 0);
    SX_CHECK(strcmp(bids->columns[1].from, "price") == 0); /* from defaults to name */
    SX_CHECK(bids->columns[1].time_from == SX_TIME_NONE);
    SX_CHECK(bids->columns[2].time_from == SX_TIME_STRFTIME);
    SX_CHECK(strcmp(bids->columns[2].time_pattern, "%Y-%m-%d %H:%M:%S") == 0);
    SX_CHECK(bids->columns[2].time_to == SX_TIME_TO_SQL);
    SX_CHECK(strcmp(bids->event_time, "bid_time") == 0);
    SX_CHECK(strstr(bids->ddl, "'topic'='${topic}'"));
    const sx_source_t *auctions = &task->sources[1];
    SX_CHECK(auctions->kind == SX_SOURCE_STATIC && auctions->event_time == NULL);
    SX_CHECK(strcmp(task->sink_name, "result") == 0);
    SX_CHECK(task->sink_changelog == SX_CHANGELOG_UPSERT);
    SX_CHECK(strcmp(task->output_schema[2].name, "max_price") == 0);
    SX_CHECK(strcmp(task->output_schema[2].type, "DOUBLE") == 0);
    SX_CHECK(task->timeout_s == 90);
    sx_task_destroy(&task);
    SX_CHECK(task == NULL);

    task = sx_task_load(s_bench, "clicks_top", &err);
    SX_CHECK(task);
    SX_CHECK(task->sources[0].columns[2].time_from == SX_TIME_EPOCH_MS);
    SX_CHECK(task->sources[0].columns[2].time_pattern == NULL);
    SX_CHECK(task->sources[0].columns[2].time_to == SX_TIME_TO_EPOCH_MS);
    SX_CHECK(task->sink_changelog == SX_CHANGELOG_APPEND);
    SX_CHECK(task->timeout_s == SX_TASK_TIMEOUT_DEFAULT);
    sx_task_destroy(&task);

    task = sx_task_load(s_bench, "trades_tie", &err);
    SX_CHECK(task);
    SX_CHECK(strcmp(task->sources[0].columns[2].time_pattern, "%d/%m/%Y %H:%M:%S.%f") ==
             0);
    SX_CHECK(task->sink_changelog == SX_CHANGELOG_DEBEZIUM);
    sx_task_destroy(&task);
}

/* One bad input: in tasks/TASK/FILE replace the first `old` by `new` (old
 * NULL: the whole file becomes `new`; both NULL: the file is removed), load
 * the task and expect `error` ({B} = the bench folder). */
typedef struct {
    const char *task;
    const char *file;
    const char *old;
    const char *new;
    const char *error;
} mutation_t;

#define J "join_max"
#define JSON "task.json"
#define BIDS "sources/bids.csv"
#define ACCEPTED                                                                         \
    "(accepted: %Y %y %m %d %e %b %B %h %a %A %H %I %p %M %S %f %F %T %D %R %n %t %%)"

static const mutation_t s_mutations[] = {
    /* task.json itself */
    {J, JSON, NULL, "[1, 2]\n", "task join_max: task.json: must be an object"},
    {J, JSON, NULL, NULL,
     "task join_max: {B}/tasks/join_max/task.json: cannot open: No such file or "
     "directory"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 90,",
     "{B}/tasks/join_max/task.json:22: invalid JSON at column 1: string or '}' expected "
     "near '}'"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 90, \"timeout_s\": 30",
     "{B}/tasks/join_max/task.json:21: invalid JSON at column 30: duplicate object key "
     "near '\"timeout_s\"'"},
    /* top-level fields */
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 90, \"timeout\": 5",
     "task join_max: timeout: unknown field (expected task_id, question, sources, sink, "
     "output_schema, timeout_s)"},
    {J, JSON, "\"task_id\": \"join_max\"", "\"task_id\": \"join_min\"",
     "task join_max: task_id: is 'join_min' but the folder is tasks/join_max"},
    {J, JSON, "\"task_id\": \"join_max\",", "", "task join_max: task_id: missing"},
    {J, JSON, "\"question\": \"For", "\"question\": null, \"q\": \"For",
     "task join_max: question: must be a string"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": \"90\"",
     "task join_max: timeout_s: must be an integer"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 90.0",
     "task join_max: timeout_s: must be an integer"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 0",
     "task join_max: timeout_s: must be 1 to 3600 seconds, not 0"},
    {J, JSON, "\"timeout_s\": 90", "\"timeout_s\": 3601",
     "task join_max: timeout_s: must be 1 to 3600 seconds, not 3601"},
    /* sources */
    {J, JSON, "{\"name\": \"bids\", \"kind\"", "{\"name\": \"my bids\", \"kind\"",
     "task join_max: sources[0].name: 'my bids' is not a safe name (1-128 characters of "
     "[A-Za-z0-9_.-], not starting with '.'; it becomes part of topic names)"},
    {J, JSON, "{\"name\": \"auctions\", \"kind\"", "{\"name\": \"bids\", \"kind\"",
     "task join_max: sources[1].name: 'bids' is already the name of sources[0]"},
    {J, JSON, "\"kind\": \"static\"", "\"kind\": \"stream\"",
     "task join_max: sources[1].kind: must be \"live\" or \"static\", not 'stream'"},
    {J, JSON, "\"kind\": \"static\",", "", "task join_max: sources[1].kind: missing"},
    {J, JSON, "\"event_time\": \"bid_time\",", "",
     "task join_max: sources[0].event_time: missing (a live source is replayed in "
     "event-time order)"},
    {J, JSON, "\"event_time\": \"bid_time\"", "\"event_time\": \"price\"",
     "task join_max: sources[0].event_time: column 'price' has no time conversion"},
    {J, JSON, "\"event_time\": \"bid_time\"", "\"event_time\": \"ts\"",
     "task join_max: sources[0].event_time: 'ts' is not one of the source's columns"},
    {J, JSON, "\"columns\": [{\"name\": \"id\"}",
     "\"event_time\": \"id\", \"columns\": [{\"name\": \"id\"}",
     "task join_max: sources[1].event_time: only live sources have an event time"},
    {J, JSON, "'topic'='${topic}'", "'topic'='bids'",
     "task join_max: sources[0].ddl: has no ${topic} (every run, task and attempt gets "
     "its own topic)"},
    {J, JSON, "\"file\": \"sources/auctions.csv\",", "\"url\": \"x\",",
     "task join_max: sources[1].url: unknown field (expected name, kind, file, columns, "
     "event_time, ddl)"},
    /* source files */
    {J, JSON, "\"sources/bids.csv\"", "\"sources/bid.csv\"",
     "task join_max: sources[0].file: {B}/tasks/join_max/sources/bid.csv: cannot open: "
     "No such file or directory"},
    {J, JSON, "\"sources/bids.csv\"", "\"../../gold/join_max.csv\"",
     "task join_max: sources[0].file: '../../gold/join_max.csv' leaves the task folder "
     "(..)"},
    {J, JSON, "\"sources/bids.csv\"", "\"/etc/passwd\"",
     "task join_max: sources[0].file: '/etc/passwd' must be a path relative to the task "
     "folder"},
    {J, JSON, "\"sources/bids.csv\"", "\"sources\"",
     "task join_max: sources[0].file: {B}/tasks/join_max/sources: a folder, not a "
     "regular file"},
    {J, BIDS, NULL, "",
     "task join_max: sources[0].file: sources/bids.csv has no header line"},
    {J, BIDS, "auction_id,bidder", "auction_id,auction_id",
     "task join_max: sources[0].columns[0]: takes 'auction_id' but sources/bids.csv has "
     "it "
     "2 times in its header"},
    {J, BIDS, "auction_id,bidder", "\"auction_id,bidder",
     "task join_max: sources[0].file: {B}/tasks/join_max/sources/bids.csv:6: malformed "
     "quoting (error parsing data while strict checking enabled)"},
    {J, JSON, "\"from\": \"ts\"", "\"from\": \"time\"",
     "task join_max: sources[0].columns[2]: takes 'time' but sources/bids.csv has no "
     "such "
     "column (header: auction_id, bidder, price, ts)"},
    /* columns and time conversions */
    {J, JSON, "{\"name\": \"price\"}", "\"price\"",
     "task join_max: sources[0].columns[1]: must be an object"},
    {J, JSON, "{\"name\": \"price\"}", "{\"name\": \"price\", \"type\": \"DOUBLE\"}",
     "task join_max: sources[0].columns[1].type: unknown field (expected name, from, "
     "time)"},
    {J, JSON, "{\"name\": \"price\"}", "{\"name\": \"auction\"}",
     "task join_max: sources[0].columns[1].name: 'auction' is already the name of "
     "columns[0]"},
    {J, JSON, "\"from\": \"auction_id\"", "\"from\": \"\"",
     "task join_max: sources[0].columns[0].from: must be a non-empty string"},
    {J, JSON, "[{\"name\": \"id\"}, {\"name\": \"seller\"}]", "[]",
     "task join_max: sources[1].columns: must not be empty"},
    {J, JSON, "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%Q",
     "task join_max: sources[0].columns[2].time.from: '%Y-%m-%d %H:%M:%Q': unknown "
     "conversion %Q " ACCEPTED},
    {J, JSON, "\"to\": \"sql\"", "\"to\": \"iso\"",
     "task join_max: sources[0].columns[2].time.to: must be \"sql\" or \"epoch_ms\", not "
     "'iso'"},
    {J, JSON, ", \"to\": \"sql\"", "",
     "task join_max: sources[0].columns[2].time.to: missing"},
    {J, JSON, "{\"from\": \"%Y-%m-%d %H:%M:%S\", \"to\": \"sql\"}", "\"sql\"",
     "task join_max: sources[0].columns[2].time: must be an object"},
    {"clicks_top", JSON, "\"from\": \"epoch_ms\"", "\"from\": \"epoch_us\"",
     "task clicks_top: sources[0].columns[2].time.from: 'epoch_us' has no conversion "
     "such "
     "as %Y or %H (a strftime pattern, \"epoch_s\" or \"epoch_ms\")"},
    /* sink and output schema */
    {J, JSON, "\"changelog\": \"upsert\"", "\"changelog\": \"retract\"",
     "task join_max: sink.changelog: must be \"upsert\", \"debezium\" or \"append\", not "
     "'retract'"},
    {J, JSON, "\"changelog\": \"upsert\"", "\"changelog\": \"\"",
     "task join_max: sink.changelog: must be a non-empty string"},
    {J, JSON, "\"sink\": {\"name\": \"result\"", "\"sink\": {\"name\": \"bids\"",
     "task join_max: sink.name: 'bids' is already the name of sources[0]"},
    {J, JSON, "\"sink\": {", "\"sink\": [], \"sinks\": {",
     "task join_max: sink: must be an object"},
    {J, JSON, "{\"name\": \"max_price\", \"type\": \"DOUBLE\"}",
     "{\"name\": \"seller\", \"type\": \"DOUBLE\"}",
     "task join_max: output_schema[2].name: 'seller' is already the name of "
     "output_schema[1]"},
    {J, JSON, "{\"name\": \"max_price\", \"type\": \"DOUBLE\"}",
     "{\"name\": \"max_price\"}", "task join_max: output_schema[2].type: missing"},
    {"trades_tie", JSON,
     "[{\"name\": \"symbol\", \"type\": \"STRING\"},\n"
     "                    {\"name\": \"volume\", \"type\": \"BIGINT\"}]",
     "[]", "task trades_tie: output_schema: must not be empty"},
};

static void apply_and_expect(const mutation_t *m, bool verbose)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tasks/%s/%s", s_bench, m->task, m->file);
    char *original = slurp(path);
    if (!m->old && !m->new) {
        SX_CHECK(unlink(path) == 0);
    } else if (!m->old) {
        spill(path, m->new);
    } else {
        char *at = strstr(original, m->old);
        if (!at)
            fprintf(stderr, "mutation: '%s' not found in %s\n", m->old, path);
        SX_CHECK(at);
        size_t head = (size_t)(at - original);
        size_t size = strlen(original) + strlen(m->new) + 1;
        char *changed = malloc(size);
        SX_CHECK(changed);
        snprintf(changed, size, "%.*s%s%s", (int)head, original, m->new,
                 at + strlen(m->old));
        spill(path, changed);
        free(changed);
    }
    sx_error_t err;
    sx_error_clear(&err);
    sx_task_t *task = sx_task_load(s_bench, m->task, &err);
    char want[1024];
    expand(want, sizeof want, m->error);
    if (verbose || strcmp(err.msg, want) != 0)
        fprintf(stderr, "mutation: got  '%s'\n          want '%s'\n", err.msg, want);
    SX_CHECK(task == NULL);
    SX_CHECK(strcmp(err.msg, want) == 0);
    spill(path, original);
    free(original);
}

/* sx_task_check goes on after a problem: several edits, every one reported. */
static void test_check_collects_every_problem(bool verbose)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tasks/join_max/task.json", s_bench);
    char *original = slurp(path);
    const char *edits[][2] = {
        {"\"kind\": \"static\"", "\"kind\": \"stream\""},
        {"\"from\": \"ts\"", "\"from\": \"time\""},
        {"\"changelog\": \"upsert\"", "\"changelog\": \"retract\""},
        {"\"timeout_s\": 90", "\"timeout_s\": 0, \"extra\": 1"},
    };
    char *text = strdup(original);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *at = strstr(text, edits[i][0]);
        SX_CHECK(at);
        char *next = NULL;
        SX_CHECK(asprintf(&next, "%.*s%s%s", (int)(at - text), text, edits[i][1],
                          at + strlen(edits[i][0])) > 0);
        free(text);
        text = next;
    }
    spill(path, text);
    free(text);
    sx_problems_t *problems = sx_problems_new();
    SX_CHECK(sx_task_check(s_bench, "join_max", problems) == NULL);
    for (size_t i = 0; verbose && i < sx_problems_kept(problems); i++)
        fprintf(stderr, "  collected: %s\n", sx_problems_get(problems, i));
    SX_CHECK(sx_problems_count(problems) == 5);
    sx_problems_destroy(&problems);
    spill(path, original);
    free(original);
}

/* A seeded xorshift generator, so the random edits are the same everywhere. */
static uint64_t s_random = 0x9e3779b97f4a7c15u;

static size_t random_below(size_t n)
{
    s_random ^= s_random << 13;
    s_random ^= s_random >> 7;
    s_random ^= s_random << 17;
    return n ? (size_t)(s_random % n) : 0;
}

/* One random edit of text (size bytes, room for 64 more): a byte changed, a
 * span deleted, or a JSON/CSV token inserted. Returns the new size. */
static size_t random_edit(char *text, size_t size)
{
    static const char *const tokens[] = {
        "{",      "}",      "[",        "]",           ",",       ":",    "\"",
        "\n",     "\r\n",   "null",     "-1",          "1e999",   "\"\"", "\"%\"",
        "\"..\"", "\"/x\"", "\"live\"", "\"epoch_s\"", "\\u0000", "\xff",
    };
    size_t at = random_below(size + 1);
    switch (random_below(3)) {
    case 0:
        if (at < size)
            text[at] = (char)random_below(256);
        return size;
    case 1: {
        size_t span = random_below(size - at < 16 ? size - at + 1 : 16);
        memmove(text + at, text + at + span, size - at - span);
        return size - span;
    }
    default: {
        const char *token = tokens[random_below(sizeof tokens / sizeof tokens[0])];
        size_t length = strlen(token);
        memmove(text + at + length, text + at, size - at);
        memcpy(text + at, token, length);
        return size + length;
    }
    }
}

/* Random edits of the fixture never crash the loaders, and a task is
 * returned exactly when no problem was found. */
static void test_random_edits_are_reported_not_crashed(void)
{
    static const char *const files[] = {
        "tasks/join_max/task.json", "tasks/join_max/sources/bids.csv", "task_ids.txt"};
    for (int round = 0; round < 600; round++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", s_bench, files[round % 3]);
        char *original = slurp(path);
        size_t size = strlen(original);
        char *text = malloc(size + 4 * 64 + 1);
        SX_CHECK(text);
        memcpy(text, original, size);
        for (size_t edits = 1 + random_below(4); edits > 0; edits--)
            size = random_edit(text, size);
        FILE *out = fopen(path, "wb");
        SX_CHECK(out && fwrite(text, 1, size, out) == size && fclose(out) == 0);
        free(text);

        sx_problems_t *problems = sx_problems_new();
        sx_bench_t *bench = sx_bench_check(s_bench, problems);
        size_t before = sx_problems_count(problems);
        sx_task_t *task = sx_task_check(s_bench, "join_max", problems);
        SX_CHECK((task != NULL) == (sx_problems_count(problems) == before));
        sx_task_destroy(&task);
        sx_bench_destroy(&bench);
        sx_problems_destroy(&problems);
        spill(path, original);
        free(original);
    }
}

/* Hostile files in a task folder: each `setup` runs in tasks/join_max (and
 * `undo` after), `limit` is SX_MAX_CSV_BYTES meanwhile (or unset); the task
 * must fail with `error` ({B} = the bench), or load when error is NULL. */
typedef struct {
    const char *setup;
    const char *undo;
    const char *limit;
    const char *error;
} hostile_t;

#define T "{B}/tasks/join_max"
#define KEEP_BIDS "cp sources/bids.csv ../bids.keep && "
#define BACK_BIDS "mv ../bids.keep sources/bids.csv"
#define OUTSIDE " (links must stay inside the folder)"

static const hostile_t s_hostile[] = {
    {"ln -s /etc/passwd notes.txt", "rm notes.txt", NULL,
     "task join_max: " T "/notes.txt: a link to /etc/passwd, outside " T OUTSIDE},
    {"ln -s ../../task_ids.txt ids.txt", "rm ids.txt", NULL,
     "task join_max: " T "/ids.txt: a link to {B}/task_ids.txt, outside " T OUTSIDE},
    {"ln -s /etc more", "rm more", NULL,
     "task join_max: " T "/more: a link to /etc, outside " T OUTSIDE},
    {"mkfifo pipe.csv", "rm pipe.csv", NULL,
     "task join_max: " T "/pipe.csv: a FIFO, not a regular file"},
    {"mv task.json ../task.keep && mkfifo task.json",
     "rm task.json && mv ../task.keep task.json", NULL,
     "task join_max: " T "/task.json: a FIFO, not a regular file"},
    {KEEP_BIDS "ln -sf /dev/zero sources/bids.csv", BACK_BIDS, NULL,
     "task join_max: sources[0].file: " T
     "/sources/bids.csv: a link to /dev/zero, outside " T OUTSIDE},
    {KEEP_BIDS "printf 'auction_id,bidder,price,ts\\n1,a\\0b,2,x\\n' >sources/bids.csv",
     BACK_BIDS, NULL,
     "task join_max: sources[0].file: " T "/sources/bids.csv:2: a NUL byte (a CSV field "
     "is text)"},
    {"true", "true", "100",
     "task join_max: sources[0].file: " T
     "/sources/bids.csv: larger than the limit of 100 "
     "bytes for CSV files (set SX_MAX_CSV_BYTES to raise it)"},
    /* Links that stay inside, a hidden file and a raised limit are fine. */
    {"ln -s sources/bids.csv alias.csv && ln -s sources more && ln -s /etc .hidden",
     "rm alias.csv more .hidden", "1M", NULL},
};

static void test_hostile_files(bool verbose)
{
    for (size_t i = 0; i < sizeof s_hostile / sizeof s_hostile[0]; i++) {
        const hostile_t *h = &s_hostile[i];
        run("cd '%s/tasks/join_max' && %s", s_bench, h->setup);
        if (h->limit)
            SX_CHECK(setenv("SX_MAX_CSV_BYTES", h->limit, 1) == 0);
        sx_error_t err;
        sx_error_clear(&err);
        sx_task_t *task = sx_task_load(s_bench, "join_max", &err);
        SX_CHECK(unsetenv("SX_MAX_CSV_BYTES") == 0);
        run("cd '%s/tasks/join_max' && %s", s_bench, h->undo);
        char want[1024] = "";
        if (h->error)
            expand(want, sizeof want, h->error);
        if (verbose || (task != NULL) != (h->error == NULL) || strcmp(err.msg, want) != 0)
            fprintf(stderr, "hostile %zu: got  '%s'\n           want '%s'\n", i, err.msg,
                    want);
        SX_CHECK((task != NULL) == (h->error == NULL));
        SX_CHECK(strcmp(err.msg, want) == 0);
        sx_task_destroy(&task);
    }
}

/* Workers load tasks without gold/ and evaluation/: they are not needed. */
static void test_loader_needs_no_evaluation_files(void)
{
    run("rm -rf '%s/gold' '%s/evaluation'", s_bench, s_bench);
    sx_error_t err;
    sx_task_t *task = sx_task_load(s_bench, "join_max", &err);
    SX_CHECK(task);
    sx_task_destroy(&task);
}

int main(void)
{
    bool verbose = getenv("SX_TEST_VERBOSE") != NULL;
    sx_problems_test(verbose);
    sx_bench_test(verbose);
    sx_task_test(verbose);

    const char *source_dir = getenv("SX_SOURCE_DIR");
    if (!source_dir)
        source_dir = SX_SOURCE_DIR;
    char temp[] = "/tmp/sx-test-task-XXXXXX";
    SX_CHECK(mkdtemp(temp));
    snprintf(s_bench, sizeof s_bench, "%s/mini-bench", temp);
    run("cp -R '%s/tests/data/mini-bench' '%s'", source_dir, s_bench);

    sx_error_t err;
    sx_bench_t *bench = sx_bench_open(s_bench, &err);
    SX_CHECK(bench && sx_bench_task_count(bench) == 3);
    sx_bench_destroy(&bench);
    test_fixture_model();
    for (size_t i = 0; i < sizeof s_mutations / sizeof s_mutations[0]; i++)
        apply_and_expect(&s_mutations[i], verbose);
    test_fixture_model(); /* every mutation was undone */
    test_check_collects_every_problem(verbose);
    test_hostile_files(verbose);
    test_fixture_model(); /* every hostile file was removed */
    test_random_edits_are_reported_not_crashed();
    test_loader_needs_no_evaluation_files();

    run("rm -rf '%s'%s", temp, "");
    printf("test_task: OK (%zu bad inputs)\n",
           sizeof s_mutations / sizeof s_mutations[0]);
    return 0;
}
