/* task.h: the benchmark model of SPEC sections 1-3. A bench is a folder with
 * task_ids.txt (the denominator, in order), tasks/ID/task.json and its source
 * CSVs, plus gold/ and evaluation/ which only scoring may open. Loading
 * validates everything a later stage relies on, so the worker and the
 * coordinator can trust a loaded sx_task_t. Every error names the file and
 * line or the task ID and what is wrong. */
#ifndef SX_TASK_H
#define SX_TASK_H

#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

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
 * file exists and has every column the projection takes. */
sx_task_t *sx_task_load(const char *bench_dir, const char *task_id, sx_error_t *err);
void sx_task_destroy(sx_task_t **self_p);

const char *sx_changelog_name(sx_changelog_t changelog);

/* The benchmark folder: task IDs in task_ids.txt order. */
typedef struct _sx_bench_t sx_bench_t;

/* Reads and validates task_ids.txt (no empty or duplicate IDs, IDs safe as
 * file names); does not load the tasks themselves. */
sx_bench_t *sx_bench_open(const char *dir, sx_error_t *err);
void sx_bench_destroy(sx_bench_t **self_p);
const char *sx_bench_dir(const sx_bench_t *self);
size_t sx_bench_task_count(const sx_bench_t *self);
const char *sx_bench_task_id(const sx_bench_t *self, size_t index);
/* Position of an ID in task_ids.txt, or -1 when it is not a task. */
long sx_bench_index_of(const sx_bench_t *self, const char *task_id);
/* Heap-allocated paths of BENCH/gold/ID.csv and BENCH/evaluation/ID.json. */
char *sx_bench_gold_path(const sx_bench_t *self, const char *task_id);
char *sx_bench_evaluation_path(const sx_bench_t *self, const char *task_id);

void sx_task_test(bool verbose);

#endif
