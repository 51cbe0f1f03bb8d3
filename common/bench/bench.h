/* bench.h: the benchmark folder BENCH (docs/benchmark.md): its task IDs in
 * task_ids.txt order, the denominator of every EX figure, the paths of its
 * files and its fingerprint. One task's task.json is task.h. */
#ifndef SX_BENCH_H
#define SX_BENCH_H

#include "common/bench/problems.h"
#include "common/error.h"

#include <stdbool.h>
#include <stddef.h>

/* The benchmark folder: task IDs in task_ids.txt order. */
typedef struct _sx_bench_t sx_bench_t;

/* Reads and validates task_ids.txt (no empty or duplicate IDs, IDs safe as
 * file names); does not load the tasks themselves. err receives the first
 * problem found. */
sx_bench_t *sx_bench_open(const char *dir, sx_error_t *err);
/* The same, adding every problem of task_ids.txt to `problems`. Returns the
 * bench of the valid, distinct IDs even when some lines are bad (so a check
 * can go on with them); NULL only when the file cannot be read or holds no
 * valid ID. */
sx_bench_t *sx_bench_check(const char *dir, sx_problems_t *problems);
void sx_bench_destroy(sx_bench_t **self_p);
const char *sx_bench_dir(const sx_bench_t *self);
size_t sx_bench_task_count(const sx_bench_t *self);
const char *sx_bench_task_id(const sx_bench_t *self, size_t index);
/* Position of an ID in task_ids.txt, or -1 when it is not a task. */
long sx_bench_index_of(const sx_bench_t *self, const char *task_id);
/* Heap-allocated paths of BENCH/gold/ID.csv and BENCH/evaluation/ID.json. */
char *sx_bench_gold_path(const sx_bench_t *self, const char *task_id);
char *sx_bench_evaluation_path(const sx_bench_t *self, const char *task_id);
/* Checks BENCH/rel under the input rule of files.h before it is shipped to a
 * worker, with the folder it belongs to as root: BENCH/tasks/ID for a
 * task's files, BENCH/gold, BENCH/evaluation, else BENCH. */
int sx_bench_file_check(const sx_bench_t *self, const char *rel, sx_error_t *err);
/* Calls visit with each file of one task as a path relative to BENCH: every
 * regular file under tasks/ID/ (subfolders too, names in byte order, names
 * sx_name_is_safe refuses skipped), then gold/ID.csv and
 * evaluation/ID.json, which may not exist. A linked folder is walked only
 * when it stays inside tasks/ID/ and is not a folder the walk is already in
 * (a link to "." or to a folder holding it): no file is listed twice under
 * one name, a loop never, a folder out of the task's never. The order is
 * the same on every machine, so a digest over it is too. */
typedef void(sx_bench_file_fn)(const char *rel, void *arg);
void sx_bench_task_files(const sx_bench_t *self, const char *task_id,
                         sx_bench_file_fn *visit, void *arg);
/* The bench's fingerprint, SHA-1 hex: task_ids.txt and each task's files
 * (sx_bench_task_files) by path and content hash, a missing or refused
 * file (sx_bench_file_check) named as such. Two benches with one
 * fingerprint give every candidate the same inputs, gold and evaluation. */
void sx_bench_fingerprint(const sx_bench_t *self, char hex[41]);

void sx_bench_test(bool verbose);

#endif
