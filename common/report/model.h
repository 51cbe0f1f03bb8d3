/* model.h: what OUT/report.html is made of (common/report/report.h): report.c
 * gathers it from OUT and the bench, html.c writes it as HTML and only reads
 * it, model.c reads the per-task material. Per-task material (question, answer policy,
 * CSV previews) is read one task at a time while writing, so a 402-task run with 10
 * methods never holds every CSV in memory. */
#ifndef SX_REPORT_MODEL_H
#define SX_REPORT_MODEL_H

#include "common/csv.h"
#include "common/bench/predictions.h"
#include "common/results/result.h"
#include "common/bench/bench.h"
#include "common/bench/task.h"

#include <jansson.h>
#include <stdio.h>

/* Rows a task view shows of each final CSV and of gold. */
#define SX_REPORT_PREVIEW_ROWS 8

typedef struct {
    char *name;
    json_t *tally;         /* its summary.json object (borrowed) */
    sx_result_t *results;  /* task_count x samples entries, task_ids.txt order,
                              each task's samples in order (sx_report_result) */
    size_t samples;        /* n: candidates per task (1 unless sampled) */
    sx_predictions_t *sql; /* candidate SQL, when the file is still there */
} sx_report_method_t;

/* A method's result of one task's sample (sample 0: the official index's). */
static inline const sx_result_t *sx_report_result(const sx_report_method_t *m,
                                                  size_t task, size_t sample)
{
    return &m->results[task * m->samples + sample];
}

typedef struct {
    const char *out_dir;
    json_t *summary;   /* OUT/summary.json */
    json_t *run;       /* its "run" object, or NULL */
    sx_bench_t *bench; /* NULL when the bench is gone */
    char **task_ids;   /* from the first method's results.jsonl */
    size_t task_count;
    sx_report_method_t *methods;
    size_t method_count;
} sx_report_t;

/* The first rows of a CSV: header (record 0) and up to
 * SX_REPORT_PREVIEW_ROWS data records; error says why there are none. */
typedef struct {
    sx_csv_table_t *table;
    bool more; /* the file holds rows past those shown */
    char error[SX_ERROR_MAX];
} sx_report_preview_t;

/* root: the folder path belongs to (gold/ for gold), as for sx_file_check,
 * or NULL for a final CSV, which has none. */
void sx_report_preview_read(const char *root, const char *path,
                            sx_report_preview_t *preview);
void sx_report_preview_clear(sx_report_preview_t *preview);

/* The task's question from task.json (heap, NULL when there is none). */
char *sx_report_question(const sx_report_t *report, const char *task_id);
/* The answer policy and comparison options of a task, in words (heap). */
char *sx_report_policy(const sx_report_t *report, const char *task_id);
/* BENCH/gold/ID.csv (heap), or NULL without a bench. */
char *sx_report_gold_path(const sx_report_t *report, const char *task_id);
/* OUT/NAME/diff/ID.json, the diff of a miss (coordinator/diffs.h), or NULL
 * when the task has none (or none readable). */
json_t *sx_report_diff(const sx_report_t *report, const char *method,
                       const char *task_id);

#endif
