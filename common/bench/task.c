/* task.c: loading and validating one task, BENCH/tasks/ID/task.json (docs/
 * benchmark.md; the rules decided beyond it are listed in task.h).
 * Validation never stops at the first problem: every check adds a message to
 * an sx_problems_t ("task ID: sources[0].kind: ..."), so `streamex check` can
 * list them all, and sx_task_load reports the first. Each JSON object is
 * first checked against a table of its fields (unknown, missing, mistyped),
 * then its values are validated and copied into the model. Only task.json
 * and the source CSVs (for their headers) are read: never gold/ or
 * evaluation/. */
#include "common/bench/task.h"

#include "common/csv.h"
#include "common/files.h"
#include "common/mem.h"
#include "common/selftest.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* JSON paths in messages, e.g. "sources[12].columns[3].time.from". */
#define WHERE_MAX 128
/* How much of a source header a message lists. */
#define HEADER_SHOWN_MAX 200

typedef struct {
    const char *task_id;
    sx_problems_t *problems;
} loader_t;

/* Adds "task ID: WHERE: message". */
__attribute__((format(printf, 3, 4))) static void problem(loader_t *ld, const char *where,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = sx_vformat(fmt, ap);
    va_end(ap);
    sx_problems_add(ld->problems, "task %s: %s: %s", ld->task_id, where, message);
    free(message);
}

/* out = where.key (just key at the top level), cut with "..." when long:
 * unknown keys come from the file and may be of any length. */
static void join(char *out, const char *where, const char *key)
{
    int length = snprintf(out, WHERE_MAX, "%s%s%s", where, where[0] ? "." : "", key);
    if (length >= WHERE_MAX)
        memcpy(out + WHERE_MAX - 4, "...", 4);
}

/* out = where.key[index], e.g. "sources[0].columns[2]". */
static void join_item(char *out, const char *where, const char *key, size_t index)
{
    char item[64];
    snprintf(item, sizeof item, "%.40s[%zu]", key, index);
    join(out, where, item);
}

/* --- field tables ------------------------------------------------------ */

typedef enum {
    FIELD_TEXT,   /* non-empty string */
    FIELD_STRING, /* any string */
    FIELD_ARRAY,
    FIELD_OBJECT,
    FIELD_INTEGER,
} field_type_t;

typedef struct {
    const char *name;
    field_type_t type;
    bool required;
} field_t;

static const field_t s_task_fields[] = {
    {"task_id", FIELD_TEXT, true},        {"question", FIELD_STRING, false},
    {"sources", FIELD_ARRAY, true},       {"sink", FIELD_OBJECT, true},
    {"output_schema", FIELD_ARRAY, true}, {"timeout_s", FIELD_INTEGER, false},
};
static const field_t s_source_fields[] = {
    {"name", FIELD_TEXT, true},        {"kind", FIELD_TEXT, true},
    {"file", FIELD_TEXT, true},        {"columns", FIELD_ARRAY, true},
    {"event_time", FIELD_TEXT, false}, {"ddl", FIELD_TEXT, true},
};
static const field_t s_column_fields[] = {
    {"name", FIELD_TEXT, true},
    {"from", FIELD_TEXT, false},
    {"time", FIELD_OBJECT, false},
};
static const field_t s_time_fields[] = {
    {"from", FIELD_TEXT, true},
    {"to", FIELD_TEXT, true},
};
static const field_t s_sink_fields[] = {
    {"name", FIELD_TEXT, true},
    {"changelog", FIELD_TEXT, true},
    {"ddl", FIELD_TEXT, true},
};
static const field_t s_schema_fields[] = {
    {"name", FIELD_TEXT, true},
    {"type", FIELD_TEXT, true},
};
#define FIELDS(table) table, sizeof table / sizeof table[0]

static const char *type_wanted(field_type_t type)
{
    static const char *names[] = {"a non-empty string", "a string", "an array",
                                  "an object", "an integer"};
    return names[type];
}

static bool type_matches(field_type_t type, const json_t *value)
{
    switch (type) {
    case FIELD_TEXT:
        return json_is_string(value) && json_string_length(value) > 0;
    case FIELD_STRING:
        return json_is_string(value);
    case FIELD_ARRAY:
        return json_is_array(value);
    case FIELD_OBJECT:
        return json_is_object(value);
    case FIELD_INTEGER:
        return json_is_integer(value);
    }
    return false;
}

static void unknown_field(loader_t *ld, const char *path, const field_t *fields,
                          size_t count)
{
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < count && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                 fields[i].name);
    problem(ld, path, "unknown field (expected %s)", names);
}

/* Reports unknown, missing and mistyped fields of `object` (at JSON path
 * `where`). Returns false when `object` is not an object at all. */
static bool check_fields(loader_t *ld, const char *where, const json_t *object,
                         const field_t *fields, size_t count)
{
    if (!json_is_object(object)) {
        problem(ld, where[0] ? where : "task.json", "must be an object");
        return false;
    }
    char path[WHERE_MAX];
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)object, key, value)
    {
        join(path, where, key);
        size_t i = 0;
        while (i < count && strcmp(fields[i].name, key) != 0)
            i++;
        if (i == count)
            unknown_field(ld, path, fields, count);
        else if (!type_matches(fields[i].type, value))
            problem(ld, path, "must be %s", type_wanted(fields[i].type));
    }
    for (size_t i = 0; i < count; i++) {
        if (fields[i].required && !json_object_get(object, fields[i].name)) {
            join(path, where, fields[i].name);
            problem(ld, path, "missing");
        }
    }
    return true;
}

/* The string value of a field, or NULL when it is absent or not a string
 * (check_fields has reported that already). */
static const char *text_of(const json_t *object, const char *key)
{
    return json_string_value(json_object_get(object, key));
}

/* The elements of an array field that must not be empty; 0 when it is absent
 * or not an array (reported by check_fields) or empty (reported here). */
static size_t items_of(loader_t *ld, const char *where, const json_t *object,
                       const char *key)
{
    const json_t *array = json_object_get(object, key);
    if (!json_is_array(array))
        return 0;
    if (json_array_size(array) == 0) {
        char path[WHERE_MAX];
        join(path, where, key);
        problem(ld, path, "must not be empty");
    }
    return json_array_size(array);
}

/* Finds a keyword in a table of names; -1 when it is not there. */
static int keyword_index(const char *word, const char *const *names, int count)
{
    for (int i = 0; word && i < count; i++)
        if (strcmp(word, names[i]) == 0)
            return i;
    return -1;
}

/* --- names, time conversions, DDL -------------------------------------- */

static void check_name(loader_t *ld, const char *where, const char *name)
{
    if (name && name[0] && !sx_name_is_safe(name))
        problem(ld, where,
                "'%s' is not a safe name (1-128 characters of [A-Za-z0-9_.-], not "
                "starting with '.'; it becomes part of topic names)",
                name);
}

static void check_ddl(loader_t *ld, const char *where, const char *ddl)
{
    if (ddl && ddl[0] && !strstr(ddl, "${topic}"))
        problem(ld, where,
                "has no ${topic} (every run, task and attempt gets its own topic)");
}

int sx_time_pattern_check(const char *pattern, sx_error_t *err)
{
    size_t reads = 0; /* conversions that read a value */
    for (const char *p = pattern; *p; p++) {
        if (*p != '%')
            continue;
        char c = *++p;
        if (c == '\0')
            return sx_error_set(err, "'%s' ends with a lone %%", pattern);
        if (c == 'z' || c == 'Z')
            return sx_error_set(err,
                                "'%s': %%%c: time zones are not supported (times "
                                "are read as UTC)",
                                pattern, c);
        if (c == 's')
            return sx_error_set(err, "'%s': %%s is not supported (use \"epoch_s\")",
                                pattern);
        if (!strchr(SX_TIME_CONVERSIONS, c))
            return sx_error_set(err,
                                "'%s': unknown conversion %%%c (accepted: "
                                "%%Y %%y %%m %%d %%e %%b %%B %%h %%a %%A %%H %%I %%p "
                                "%%M %%S %%f %%F %%T %%D %%R %%n %%t %%%%)",
                                pattern, c);
        if (!strchr("nt%", c))
            reads++;
    }
    if (reads == 0)
        return sx_error_set(err,
                            "'%s' has no conversion such as %%Y or %%H (a strftime "
                            "pattern, \"epoch_s\" or \"epoch_ms\")",
                            pattern);
    return 0;
}

static void load_time(loader_t *ld, const char *where, const json_t *time,
                      sx_column_t *column)
{
    if (!check_fields(ld, where, time, FIELDS(s_time_fields)))
        return;
    char path[WHERE_MAX];
    const char *from = text_of(time, "from");
    join(path, where, "from");
    /* A time column even when its pattern is bad (that is reported once). */
    column->time_from = SX_TIME_STRFTIME;
    sx_error_t err;
    if (!from || !from[0])
        ; /* missing or mistyped: reported by check_fields */
    else if (strcmp(from, "epoch_s") == 0)
        column->time_from = SX_TIME_EPOCH_S;
    else if (strcmp(from, "epoch_ms") == 0)
        column->time_from = SX_TIME_EPOCH_MS;
    else if (sx_time_pattern_check(from, &err) != 0)
        problem(ld, path, "%s", err.msg);
    else
        column->time_pattern = sx_strdup_or_null(from);

    static const char *const to_names[] = {"sql", "epoch_ms"};
    const char *to = text_of(time, "to");
    int to_index = keyword_index(to, to_names, 2);
    join(path, where, "to");
    if (to_index < 0 && to && to[0])
        problem(ld, path, "must be \"sql\" or \"epoch_ms\", not '%s'", to);
    column->time_to = to_index == 1 ? SX_TIME_TO_EPOCH_MS : SX_TIME_TO_SQL;
}

/* --- sources ------------------------------------------------------------ */

static void load_column(loader_t *ld, const char *where, const json_t *json,
                        sx_column_t *column)
{
    if (!check_fields(ld, where, json, FIELDS(s_column_fields)))
        return;
    const char *name = text_of(json, "name");
    const char *from = text_of(json, "from");
    column->name = sx_strdup_or_null(name);
    column->from = sx_strdup_or_null(from ? from : name);
    const json_t *time = json_object_get(json, "time");
    if (json_is_object(time)) { /* a mistyped one is reported by check_fields */
        char path[WHERE_MAX];
        join(path, where, "time");
        load_time(ld, path, time, column);
    }
}

static void load_columns(loader_t *ld, const char *where, const json_t *json,
                         sx_source_t *source)
{
    size_t count = items_of(ld, where, json, "columns");
    if (count == 0)
        return;
    source->columns = sx_alloc(count, sizeof *source->columns);
    source->column_count = count;
    const json_t *array = json_object_get(json, "columns");
    for (size_t i = 0; i < count; i++) {
        char path[WHERE_MAX];
        join_item(path, where, "columns", i);
        sx_column_t *column = &source->columns[i];
        load_column(ld, path, json_array_get(array, i), column);
        for (size_t j = 0; column->name && j < i; j++) {
            if (source->columns[j].name &&
                strcmp(source->columns[j].name, column->name) == 0) {
                char name_path[WHERE_MAX];
                join(name_path, path, "name");
                problem(ld, name_path, "'%s' is already the name of columns[%zu]",
                        column->name, j);
                break;
            }
        }
    }
}

static const sx_column_t *column_named(const sx_source_t *source, const char *name)
{
    for (size_t i = 0; i < source->column_count; i++)
        if (source->columns[i].name && strcmp(source->columns[i].name, name) == 0)
            return &source->columns[i];
    return NULL;
}

/* `present`: the source object has an event_time field (maybe mistyped, which
 * check_fields reported). */
static void check_event_time(loader_t *ld, const char *where, const sx_source_t *source,
                             bool present)
{
    char path[WHERE_MAX];
    join(path, where, "event_time");
    if (source->kind == SX_SOURCE_STATIC) {
        if (present)
            problem(ld, path, "only live sources have an event time");
        return;
    }
    if (!present) {
        problem(ld, path, "missing (a live source is replayed in event-time order)");
        return;
    }
    if (!source->event_time || !source->event_time[0])
        return;
    const sx_column_t *column = column_named(source, source->event_time);
    if (!column)
        problem(ld, path, "'%s' is not one of the source's columns", source->event_time);
    else if (column->time_from == SX_TIME_NONE)
        problem(ld, path, "column '%s' has no time conversion", source->event_time);
}

/* True when a relative path has no ".." component. */
static bool stays_inside(const char *file)
{
    for (const char *part = file; part; part = strchr(part, '/')) {
        if (*part == '/')
            part++;
        if (strncmp(part, "..", 2) == 0 && (part[2] == '/' || part[2] == '\0'))
            return false;
    }
    return true;
}

/* Resolves and checks a source's `file`; the path of the CSV, or NULL. */
static char *resolve_file(loader_t *ld, const char *where, const char *dir,
                          const char *file)
{
    if (!file || !file[0])
        return NULL;
    if (file[0] == '/') {
        problem(ld, where, "'%s' must be a path relative to the task folder", file);
        return NULL;
    }
    if (!stays_inside(file)) {
        problem(ld, where, "'%s' leaves the task folder (..)", file);
        return NULL;
    }
    char *path = sx_format("%s/%s", dir, file);
    sx_error_t err;
    if (sx_file_check(dir, path, SX_FILE_CSV, NULL, &err) == 0)
        return path;
    problem(ld, where, "%s", err.msg);
    free(path);
    return NULL;
}

/* "a, b, c" for a message, cut near HEADER_SHOWN_MAX bytes; out holds at
 * least HEADER_SHOWN_MAX + 8. */
static void describe_header(char *out, size_t size, const sx_csv_record_t *header)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < header->count; i++) {
        const char *separator = i ? ", " : "";
        if (used + strlen(separator) + strlen(header->fields[i]) > HEADER_SHOWN_MAX) {
            snprintf(out + used, size - used, "%s...", separator);
            return;
        }
        used += (size_t)snprintf(out + used, size - used, "%s%s", separator,
                                 header->fields[i]);
    }
}

/* Every `from` column must appear exactly once in the CSV's first record. */
static void check_header(loader_t *ld, const char *where, const sx_source_t *source)
{
    char path[WHERE_MAX];
    join(path, where, "file");
    sx_error_t err;
    sx_csv_table_t *table = sx_csv_read_first(source->path, &err);
    if (!table) {
        problem(ld, path, "%s", err.msg);
        return;
    }
    if (table->count == 0 || table->records[0].count == 0) {
        problem(ld, path, "%s has no header line", source->file);
        sx_csv_table_destroy(&table);
        return;
    }
    const sx_csv_record_t *header = &table->records[0];
    char listed[HEADER_SHOWN_MAX + 64];
    describe_header(listed, sizeof listed, header);
    for (size_t i = 0; i < source->column_count; i++) {
        const char *from = source->columns[i].from;
        if (!from || !from[0])
            continue;
        size_t seen = 0;
        for (size_t j = 0; j < header->count; j++)
            seen += strcmp(header->fields[j], from) == 0;
        join_item(path, where, "columns", i);
        if (seen == 0)
            problem(ld, path, "takes '%s' but %s has no such column (header: %s)", from,
                    source->file, listed);
        else if (seen > 1)
            problem(ld, path, "takes '%s' but %s has it %zu times in its header", from,
                    source->file, seen);
    }
    sx_csv_table_destroy(&table);
}

static void load_source(loader_t *ld, const char *where, const json_t *json,
                        const char *dir, sx_source_t *source)
{
    if (!check_fields(ld, where, json, FIELDS(s_source_fields)))
        return;
    char path[WHERE_MAX];
    source->name = sx_strdup_or_null(text_of(json, "name"));
    join(path, where, "name");
    check_name(ld, path, source->name);

    static const char *const kind_names[] = {"live", "static"};
    const char *kind = text_of(json, "kind");
    int kind_index = keyword_index(kind, kind_names, 2);
    join(path, where, "kind");
    if (kind_index < 0 && kind && kind[0])
        problem(ld, path, "must be \"live\" or \"static\", not '%s'", kind);
    source->kind = kind_index == 1 ? SX_SOURCE_STATIC : SX_SOURCE_LIVE;

    source->ddl = sx_strdup_or_null(text_of(json, "ddl"));
    join(path, where, "ddl");
    check_ddl(ld, path, source->ddl);

    load_columns(ld, where, json, source);
    source->event_time = sx_strdup_or_null(text_of(json, "event_time"));
    if (kind_index >= 0)
        check_event_time(ld, where, source, json_object_get(json, "event_time") != NULL);

    source->file = sx_strdup_or_null(text_of(json, "file"));
    join(path, where, "file");
    source->path = resolve_file(ld, path, dir, source->file);
    if (source->path)
        check_header(ld, where, source);
}

/* --- the task ----------------------------------------------------------- */

static void load_sources(loader_t *ld, const json_t *json, sx_task_t *task)
{
    size_t count = items_of(ld, "", json, "sources");
    if (count == 0)
        return;
    task->sources = sx_alloc(count, sizeof *task->sources);
    task->source_count = count;
    const json_t *array = json_object_get(json, "sources");
    for (size_t i = 0; i < count; i++) {
        char where[WHERE_MAX];
        join_item(where, "", "sources", i);
        sx_source_t *source = &task->sources[i];
        load_source(ld, where, json_array_get(array, i), task->dir, source);
        for (size_t j = 0; source->name && j < i; j++) {
            if (task->sources[j].name &&
                strcmp(task->sources[j].name, source->name) == 0) {
                char path[WHERE_MAX];
                join(path, where, "name");
                problem(ld, path, "'%s' is already the name of sources[%zu]",
                        source->name, j);
                break;
            }
        }
    }
}

static void load_sink(loader_t *ld, const json_t *json, sx_task_t *task)
{
    const json_t *sink = json_object_get(json, "sink");
    /* A missing or mistyped sink is reported by check_fields. */
    if (!json_is_object(sink) || !check_fields(ld, "sink", sink, FIELDS(s_sink_fields)))
        return;
    task->sink_name = sx_strdup_or_null(text_of(sink, "name"));
    check_name(ld, "sink.name", task->sink_name);
    for (size_t i = 0; task->sink_name && i < task->source_count; i++) {
        const char *source = task->sources[i].name;
        if (source && strcmp(source, task->sink_name) == 0)
            problem(ld, "sink.name", "'%s' is already the name of sources[%zu]", source,
                    i);
    }
    static const char *const changelog_names[] = {"upsert", "debezium", "append"};
    const char *changelog = text_of(sink, "changelog");
    int index = keyword_index(changelog, changelog_names, 3);
    if (index < 0 && changelog && changelog[0])
        problem(ld, "sink.changelog",
                "must be \"upsert\", \"debezium\" or \"append\", not '%s'", changelog);
    task->sink_changelog = index < 0 ? SX_CHANGELOG_UPSERT : (sx_changelog_t)index;
    task->sink_ddl = sx_strdup_or_null(text_of(sink, "ddl"));
    check_ddl(ld, "sink.ddl", task->sink_ddl);
}

static void load_output_schema(loader_t *ld, const json_t *json, sx_task_t *task)
{
    size_t count = items_of(ld, "", json, "output_schema");
    if (count == 0)
        return;
    task->output_schema = sx_alloc(count, sizeof *task->output_schema);
    task->output_column_count = count;
    const json_t *array = json_object_get(json, "output_schema");
    for (size_t i = 0; i < count; i++) {
        char where[WHERE_MAX];
        join_item(where, "", "output_schema", i);
        const json_t *item = json_array_get(array, i);
        if (!check_fields(ld, where, item, FIELDS(s_schema_fields)))
            continue;
        sx_field_t *field = &task->output_schema[i];
        field->name = sx_strdup_or_null(text_of(item, "name"));
        field->type = sx_strdup_or_null(text_of(item, "type"));
        for (size_t j = 0; field->name && j < i; j++) {
            const char *other = task->output_schema[j].name;
            if (other && strcmp(other, field->name) == 0) {
                char path[WHERE_MAX];
                join(path, where, "name");
                problem(ld, path, "'%s' is already the name of output_schema[%zu]",
                        field->name, j);
                break;
            }
        }
    }
}

static void load_task(loader_t *ld, const json_t *json, sx_task_t *task)
{
    if (!check_fields(ld, "", json, FIELDS(s_task_fields)))
        return;
    const char *id = text_of(json, "task_id");
    if (id && id[0] && strcmp(id, task->task_id) != 0)
        problem(ld, "task_id", "is '%s' but the folder is tasks/%s", id, task->task_id);
    load_sources(ld, json, task);
    load_sink(ld, json, task);
    load_output_schema(ld, json, task);
    const json_t *timeout = json_object_get(json, "timeout_s");
    task->timeout_s = SX_TASK_TIMEOUT_DEFAULT;
    if (json_is_integer(timeout)) {
        json_int_t seconds = json_integer_value(timeout);
        if (seconds < 1 || seconds > SX_TASK_TIMEOUT_MAX)
            problem(ld, "timeout_s", "must be 1 to %d seconds, not %" JSON_INTEGER_FORMAT,
                    SX_TASK_TIMEOUT_MAX, seconds);
        else
            task->timeout_s = (int)seconds;
    }
}

/* DIR/task.json parsed, read under the input rule with DIR as its root;
 * NULL with err set, *syntax_p telling bad JSON from a file that cannot be
 * read. */
static json_t *task_json_in(const char *dir, bool *syntax_p, sx_error_t *err)
{
    char *path = sx_format("%s/task.json", dir);
    size_t size = 0;
    char *text = sx_file_load(dir, path, SX_FILE_JSON, &size, err);
    json_error_t error;
    json_t *json = text ? json_loadb(text, size, JSON_REJECT_DUPLICATES, &error) : NULL;
    *syntax_p = text && !json;
    if (*syntax_p)
        sx_error_set(err, "%s:%d: invalid JSON at column %d: %s", path, error.line,
                     error.column, error.text);
    free(text);
    free(path);
    return json;
}

json_t *sx_task_json_read(const char *bench_dir, const char *task_id, sx_error_t *err)
{
    char *dir = sx_format("%s/tasks/%s", bench_dir, task_id);
    bool syntax;
    json_t *json = task_json_in(dir, &syntax, err);
    free(dir);
    return json;
}

/* Parses task.json, reporting a missing folder or file and JSON syntax. */
static json_t *read_task_json(loader_t *ld, const sx_task_t *task)
{
    struct stat st;
    if (stat(task->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        problem(ld, task->dir, "no such folder");
        return NULL;
    }
    sx_error_t err;
    bool syntax = false;
    json_t *json = task_json_in(task->dir, &syntax, &err);
    if (!json && syntax)
        sx_problems_add(ld->problems, "%s", err.msg);
    else if (!json)
        sx_problems_add(ld->problems, "task %s: %s", ld->task_id, err.msg);
    return json;
}

/* --- every file of the task folder --------------------------------------- */

/* True when path is task.json or a source's file, which are checked (and
 * reported) where they are read. */
static bool checked_elsewhere(const sx_task_t *task, const char *path)
{
    size_t length = strlen(task->dir);
    const char *rel = path + length + 1;
    if (strcmp(rel, "task.json") == 0)
        return true;
    for (size_t i = 0; i < task->source_count; i++)
        if (task->sources[i].file && strcmp(task->sources[i].file, rel) == 0)
            return true;
    return false;
}

/* Every file under `folder` (the task folder or one below it) is shipped
 * to the workers as it is, so each one follows the input rule of files.h,
 * the task folder being its root, and has a name the workers can be sent
 * (sx_name_is_safe). Names starting with '.' are neither shipped nor
 * checked; a linked folder is checked, never walked (a link to "." would
 * never end). */
static void check_task_files(loader_t *ld, const sx_task_t *task, const char *folder)
{
    DIR *dir = opendir(folder);
    if (!dir) {
        problem(ld, folder, "cannot list: %s", strerror(errno));
        return;
    }
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        if (!sx_name_is_safe(entry->d_name)) {
            char shown[SX_SHOWN_SIZE];
            sx_text_show(shown, sizeof shown, entry->d_name, strlen(entry->d_name));
            sx_problems_add(ld->problems,
                            "task %s: %s/%s: not a safe file name (1-128 characters of "
                            "[A-Za-z0-9_.-]), so it cannot be shipped to workers",
                            ld->task_id, folder, shown);
            continue;
        }
        char *path = sx_format("%s/%s", folder, entry->d_name);
        struct stat st;
        sx_error_t err;
        bool is_link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (sx_path_check_inside(task->dir, path, &err) != 0)
                sx_problems_add(ld->problems, "task %s: %s", ld->task_id, err.msg);
            else if (!is_link)
                check_task_files(ld, task, path);
        } else if (!checked_elsewhere(task, path) &&
                   sx_file_check(task->dir, path, sx_file_kind_of(entry->d_name), NULL,
                                 &err) != 0) {
            sx_problems_add(ld->problems, "task %s: %s", ld->task_id, err.msg);
        }
        free(path);
    }
    closedir(dir);
}

sx_task_t *sx_task_check(const char *bench_dir, const char *task_id,
                         sx_problems_t *problems)
{
    loader_t ld = {.task_id = task_id, .problems = problems};
    size_t before = sx_problems_count(problems);
    if (!sx_name_is_safe(task_id)) {
        sx_problems_add(problems, "task '%s': not a safe task ID", task_id);
        return NULL;
    }
    sx_task_t *task = sx_new(sx_task_t);
    task->task_id = sx_strdup(task_id);
    task->dir = sx_format("%s/tasks/%s", bench_dir, task_id);
    json_t *json = read_task_json(&ld, task);
    if (json) {
        load_task(&ld, json, task);
        check_task_files(&ld, task, task->dir);
    }
    json_decref(json);
    if (sx_problems_count(problems) > before)
        sx_task_destroy(&task);
    return task;
}

sx_task_t *sx_task_load(const char *bench_dir, const char *task_id, sx_error_t *err)
{
    sx_problems_t *problems = sx_problems_new();
    sx_task_t *task = sx_task_check(bench_dir, task_id, problems);
    if (!task)
        sx_problems_to_error(problems, 0, err);
    sx_problems_destroy(&problems);
    return task;
}

static void source_free(sx_source_t *source)
{
    for (size_t i = 0; i < source->column_count; i++) {
        free(source->columns[i].name);
        free(source->columns[i].from);
        free(source->columns[i].time_pattern);
    }
    free(source->columns);
    free(source->name);
    free(source->file);
    free(source->path);
    free(source->event_time);
    free(source->ddl);
}

void sx_task_destroy(sx_task_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sx_task_t *self = *self_p;
    for (size_t i = 0; i < self->source_count; i++)
        source_free(&self->sources[i]);
    free(self->sources);
    for (size_t i = 0; i < self->output_column_count; i++) {
        free(self->output_schema[i].name);
        free(self->output_schema[i].type);
    }
    free(self->output_schema);
    free(self->sink_name);
    free(self->sink_ddl);
    free(self->task_id);
    free(self->dir);
    free(self);
    *self_p = NULL;
}

const char *sx_changelog_name(sx_changelog_t changelog)
{
    switch (changelog) {
    case SX_CHANGELOG_UPSERT:
        return "upsert";
    case SX_CHANGELOG_DEBEZIUM:
        return "debezium";
    case SX_CHANGELOG_APPEND:
        return "append";
    }
    return "unknown";
}

/* --- self-test --------------------------------------------------------- */

static void test_time_patterns(bool verbose)
{
    static const char *const good[] = {
        "%Y-%m-%d %H:%M:%S",
        "%d/%m/%Y %H:%M:%S.%f",
        "%Y-%m-%dT%H:%M:%SZ",
        "%F %T",
        "%a, %d %b %Y %I:%M %p",
        "%Y%%%m",
        "%H",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        SX_CHECK(sx_time_pattern_check(good[i], NULL) == 0);
    static const struct {
        const char *pattern;
        const char *error;
    } bad[] = {
        {"%Y-%m-%d %Q", "'%Y-%m-%d %Q': unknown conversion %Q (accepted: %Y %y %m %d %e "
                        "%b %B %h %a %A %H %I %p %M %S %f %F %T %D %R %n %t %%)"},
        {"%Y-%j", "'%Y-%j': unknown conversion %j (accepted: %Y %y %m %d %e %b %B %h %a "
                  "%A %H %I %p %M %S %f %F %T %D %R %n %t %%)"},
        {"%Y-%m-%d %", "'%Y-%m-%d %' ends with a lone %"},
        {"%Y %z", "'%Y %z': %z: time zones are not supported (times are read as UTC)"},
        {"%s", "'%s': %s is not supported (use \"epoch_s\")"},
        {"%Ey", "'%Ey': unknown conversion %E (accepted: %Y %y %m %d %e %b %B %h %a %A "
                "%H %I %p %M %S %f %F %T %D %R %n %t %%)"},
        {"epoch", "'epoch' has no conversion such as %Y or %H (a strftime pattern, "
                  "\"epoch_s\" or \"epoch_ms\")"},
        {"%n%%%t", "'%n%%%t' has no conversion such as %Y or %H (a strftime pattern, "
                   "\"epoch_s\" or \"epoch_ms\")"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sx_error_t err;
        SX_CHECK(sx_time_pattern_check(bad[i].pattern, &err) == -1);
        if (verbose || strcmp(err.msg, bad[i].error) != 0)
            fprintf(stderr, "time pattern: got  '%s'\n              want '%s'\n", err.msg,
                    bad[i].error);
        SX_CHECK(strcmp(err.msg, bad[i].error) == 0);
    }
}

static void test_stays_inside(void)
{
    SX_CHECK(stays_inside("sources/a.csv"));
    SX_CHECK(stays_inside("a..b/..c"));
    SX_CHECK(stays_inside("./a.csv"));
    SX_CHECK(!stays_inside(".."));
    SX_CHECK(!stays_inside("../gold/t1.csv"));
    SX_CHECK(!stays_inside("sources/../../gold/t1.csv"));
    SX_CHECK(!stays_inside("sources/.."));
}

void sx_task_test(bool verbose)
{
    test_time_patterns(verbose);
    test_stays_inside();
    SX_CHECK(strcmp(sx_changelog_name(SX_CHANGELOG_UPSERT), "upsert") == 0);
    SX_CHECK(strcmp(sx_changelog_name(SX_CHANGELOG_DEBEZIUM), "debezium") == 0);
    SX_CHECK(strcmp(sx_changelog_name(SX_CHANGELOG_APPEND), "append") == 0);

    sx_error_t err;
    SX_CHECK(sx_task_load("/nonexistent", "../t1", &err) == NULL);
    SX_CHECK(strcmp(err.msg, "task '../t1': not a safe task ID") == 0);
    SX_CHECK(sx_task_load("/nonexistent", "t1", &err) == NULL);
    SX_CHECK(strcmp(err.msg, "task t1: /nonexistent/tasks/t1: no such folder") == 0);
    sx_task_t *task = NULL;
    sx_task_destroy(&task);
}
