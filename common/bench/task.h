/* task.h: the benchmark model of docs/benchmark.md. A bench is a folder with
 * task_ids.txt (the denominator, in order), tasks/ID/task.json and its source
 * CSVs, plus gold/ and evaluation/ which only scoring may open. Loading
 * validates everything a later stage relies on, so the worker and the
 * coordinator can trust a loaded sx_task_t. Every error names the file and
 * line or the task ID and what is wrong.
 *
 * Rules beyond docs/benchmark.md, decided here (`streamex check` enforces them):
 * - task_ids.txt: one ID a line, LF or CRLF endings, the last line may lack
 *   its newline. Blank lines, leading/trailing whitespace and duplicates are
 *   errors. An ID is 1-128 characters of [A-Za-z0-9_.-], not starting with
 *   '.', because it names a folder and files (sx_name_is_safe).
 * - task.json: unknown fields are errors at every level (a typo must not
 *   silently drop a setting); `question` is an optional string; `sources` and
 *   `output_schema` are non-empty; source and sink names follow the ID rule
 *   (they end up in topic names) and are all distinct; output column names
 *   are unique per source and in output_schema; every DDL is a non-empty
 *   string holding ${topic}, since topics are unique per run, task and
 *   attempt (docs/execution.md). `timeout_s` is an integer in 1..SX_TASK_TIMEOUT_MAX,
 *   SX_TASK_TIMEOUT_DEFAULT when absent.
 * - Every file of the task folder (names starting with '.' aside) is
 *   shipped to workers, so each follows the input rule of files.h: a
 *   regular file, inside the task folder once links are resolved, within
 *   its kind's size limit (by name: .csv, .json, or any other). task_ids.txt
 *   stays in BENCH; gold/ID.csv and evaluation/ID.json in their folders.
 *   Every name in the task folder follows the ID rule below, since only
 *   such names are shipped (sx_name_is_safe).
 * - A source `file` is relative to the task folder, with no ".." component;
 *   its header (first record) holds every `from` column exactly once. Data rows are not
 * checked here: converting them is the preparer's job (a row that does not convert is
 * input_error), which `streamex check` runs on every source.
 * - A live source needs `event_time`, naming one of its output columns that
 *   has a `time` conversion; a static source must not have one.
 * - `time` needs both `from` and `to`. `from` is "epoch_s", "epoch_ms" or a
 *   pattern with at least one conversion, each one of SX_TIME_CONVERSIONS:
 *   the date and time conversions of strptime(3) that timegm(3) honours (not
 *   %j, %U, %W: strptime reads them but they do not set the date), plus %f,
 *   an extension for fractional seconds (1-9 digits, as Python's strptime
 *   reads them; strptime has none, so the preparer must read %f itself).
 *   Time zones (%z %Z), %s (use epoch_s), the E/O modifiers and every other
 *   conversion are rejected: times are read as UTC. */
#ifndef SX_TASK_H
#define SX_TASK_H

#include "common/error.h"
#include "common/bench/problems.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SX_TASK_TIMEOUT_DEFAULT 120
#define SX_TASK_TIMEOUT_MAX 3600

/* The conversion letters a time.from pattern may use after '%'. */
#define SX_TIME_CONVERSIONS "aAbBdDefFhHImMnpRStTyY%"

/* How a source column's time value is parsed (`time.from`). */
typedef enum {
    SX_TIME_NONE = 0, /* not a time column */
    SX_TIME_STRFTIME, /* time_pattern is a strftime pattern, read as UTC */
    SX_TIME_EPOCH_S,
    SX_TIME_EPOCH_MS,
} sx_time_from_t;

/* How it is written for Kafka (`time.to`). */
typedef enum {
    SX_TIME_TO_SQL = 0, /* YYYY-MM-DD HH:MM:SS[.fff] */
    SX_TIME_TO_EPOCH_MS,
} sx_time_to_t;

typedef struct {
    char *name; /* output column name */
    char *from; /* source CSV column (defaults to name) */
    sx_time_from_t time_from;
    char *time_pattern; /* for SX_TIME_STRFTIME, else NULL */
    sx_time_to_t time_to;
} sx_column_t;

typedef enum { SX_SOURCE_LIVE = 0, SX_SOURCE_STATIC } sx_source_kind_t;

typedef struct {
    char *name;
    sx_source_kind_t kind;
    char *file; /* as written in task.json, relative to the task folder */
    char *path; /* resolved path of the CSV */
    sx_column_t *columns;
    size_t column_count;
    char *event_time; /* output column holding event time (live), or NULL */
    char *ddl;        /* with ${topic} and ${bootstrap} still in it */
} sx_source_t;

typedef enum {
    SX_CHANGELOG_UPSERT = 0,
    SX_CHANGELOG_DEBEZIUM,
    SX_CHANGELOG_APPEND,
} sx_changelog_t;

typedef struct {
    char *name;
    char *type; /* Flink SQL type as written, e.g. "BIGINT" */
} sx_field_t;

typedef struct {
    char *task_id;
    char *dir; /* BENCH/tasks/ID */
    sx_source_t *sources;
    size_t source_count;
    char *sink_name;
    sx_changelog_t sink_changelog;
    char *sink_ddl;
    sx_field_t *output_schema;
    size_t output_column_count;
    int timeout_s;
} sx_task_t;

/* Loads and validates BENCH/tasks/ID/task.json, checking that each source
 * file exists and has every column the projection takes. Never opens gold/
 * or evaluation/. err receives the first problem found. */
sx_task_t *sx_task_load(const char *bench_dir, const char *task_id, sx_error_t *err);
/* The same, adding every problem found to `problems`; NULL when there is any. */
sx_task_t *sx_task_check(const char *bench_dir, const char *task_id,
                         sx_problems_t *problems);
void sx_task_destroy(sx_task_t **self_p);
/* BENCH/tasks/ID/task.json parsed, unchecked, for a look at one field (the
 * coordinator's timeout, the report's question): read under the input rule
 * of files.h like everything else, so never a FIFO nor a file out of the
 * task folder. NULL with err set when it cannot be read or is not JSON. */
json_t *sx_task_json_read(const char *bench_dir, const char *task_id, sx_error_t *err);

const char *sx_changelog_name(sx_changelog_t changelog);

/* True for a name safe as a file name and in a topic name: 1-128 characters
 * of [A-Za-z0-9_.-], not starting with '.'. Task IDs, source and sink names,
 * and every name in a task folder (the only names shipped to workers). */
bool sx_name_is_safe(const char *name);

/* Bytes of a name or line a message shows, and the room they take. */
#define SX_SHOWN_MAX 64
#define SX_SHOWN_SIZE (4 * SX_SHOWN_MAX + 8)
/* Copies text for a message, cut to SX_SHOWN_MAX bytes and "...", with
 * every byte outside printable ASCII as \xNN: a bad name cannot garble the
 * terminal or split a message, and an invisible byte (a UTF-8 BOM, a NUL)
 * shows where it is. out holds SX_SHOWN_SIZE bytes. */
void sx_text_show(char *out, size_t size, const char *text, size_t length);

/* Validates a time.from strftime pattern (see the rules above); err says
 * which conversion is wrong, e.g. "unknown conversion %Q". */
int sx_time_pattern_check(const char *pattern, sx_error_t *err);

void sx_task_test(bool verbose);

#endif
