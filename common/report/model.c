/* model.c: the per-task material of the report model (model.h), read one
 * task at a time while the page is written: a CSV's first rows, the task's
 * question and answer policy, its gold file, a miss's diff. A missing bench
 * leaves them out (NULL), it is not an error. */
#include "common/report/model.h"

#include "common/ex/score.h"
#include "common/files.h"
#include "common/mem.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a CSV read for its preview: enough for the first rows. */
#define PREVIEW_BYTES 65536

void sx_report_preview_read(const char *root, const char *path,
                            sx_report_preview_t *preview)
{
    memset(preview, 0, sizeof *preview);
    if (!path) {
        snprintf(preview->error, sizeof preview->error, "no CSV");
        return;
    }
    sx_error_t err;
    size_t size = 0;
    bool cut = false;
    char *data = sx_file_read_head(root, path, PREVIEW_BYTES, &size, &cut, &err);
    /* A cut file is parsed up to its last whole line. */
    while (data && cut && size > 0 && data[size - 1] != '\n')
        size--;
    sx_csv_table_t *table = data ? sx_csv_parse(path, data, size, 0, &err) : NULL;
    free(data);
    if (!table) {
        snprintf(preview->error, sizeof preview->error, "%s", err.msg);
        return;
    }
    size_t keep = SX_REPORT_PREVIEW_ROWS + 1; /* the header too */
    preview->more = cut || table->count > keep;
    for (size_t i = keep; i < table->count; i++) {
        for (size_t f = 0; f < table->records[i].count; f++)
            free(table->records[i].fields[f]);
        free(table->records[i].fields);
        free(table->records[i].lengths);
        free(table->records[i].quoted);
    }
    if (table->count > keep)
        table->count = keep;
    preview->table = table;
}

void sx_report_preview_clear(sx_report_preview_t *preview)
{
    sx_csv_table_destroy(&preview->table);
}

char *sx_report_gold_path(const sx_report_t *report, const char *task_id)
{
    return report->bench ? sx_bench_gold_path(report->bench, task_id) : NULL;
}

json_t *sx_report_diff(const sx_report_t *report, const char *method, const char *task_id)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/diff/%s.json", report->out_dir, method, task_id);
    json_t *diff = json_load_file(path, 0, NULL);
    if (diff && !json_is_object(diff))
        json_decref(diff), diff = NULL;
    return diff;
}

char *sx_report_question(const sx_report_t *report, const char *task_id)
{
    if (!report->bench)
        return NULL;
    json_t *task = sx_task_json_read(sx_bench_dir(report->bench), task_id, NULL);
    const char *question = json_string_value(json_object_get(task, "question"));
    char *copy = sx_strdup_or_null(question);
    json_decref(task);
    return copy;
}

char *sx_report_policy(const sx_report_t *report, const char *task_id)
{
    char *path = report->bench ? sx_bench_evaluation_path(report->bench, task_id) : NULL;
    sx_error_t err;
    sx_evaluation_t *e = path ? sx_evaluation_load(path, &err) : NULL;
    free(path);
    char *text = NULL;
    if (!e)
        return report->bench ? sx_strdup(err.msg) : NULL;
    char columns[256] = "all gold columns";
    for (size_t i = 0, n = 0; i < e->condition_count && n < sizeof columns - 24; i++)
        n += (size_t)snprintf(columns + n, sizeof columns - n, "%s%ld",
                              i ? ", " : "gold columns ", e->condition_cols[i]);
    const char *order = e->ignore_order ? "any row order" : "row order counts";
    if (e->kind == SX_ANSWER_ANY_ONE_ARGMAX)
        text = sx_format("any_one_argmax: any one gold row is the answer; %s; %s",
                         columns, order);
    else if (e->kind == SX_ANSWER_ANY_K_FROM_TIE_SET)
        text = sx_format("any_k_from_tie_set: k = %ld, the first %ld gold rows are "
                         "mandatory, the rest a tie set; %s; %s",
                         e->k, e->mandatory_rows, columns, order);
    else
        text = sx_format("ordinary; %s; %s", columns, order);
    sx_evaluation_destroy(&e);
    return text;
}
