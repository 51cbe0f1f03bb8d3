/* merge.h: combining the outputs of `--shard I/N` runs (CI matrices with no
 * coordinator) into one OUT, as if one run had made it. Every method found
 * in any input gets every task ID of task_ids.txt exactly once: a task in
 * two inputs must have the same verdict there (else the merge is refused,
 * naming both), a task in no input is reported and scored zero
 * (infra_error, "missing from every shard output"). With several samples
 * per task this holds per (task, sample): a method has n = 1 + the largest
 * sample number of any input samples per task. Final CSVs are copied
 * into OUT so submission.jsonl points inside it, with the diffs of the
 * misses (OUT/NAME/diff/, diffs.h) the shards wrote. An input made by a --tasks
 * run (its summary.json has "subset") is refused unless allow_subset: its
 * figures count a hand-picked subset, and a merge would present them as a
 * run of the whole bench. Inputs computed on different engines (their
 * summary.json's run.engine) are refused, naming both, unless allowed: a
 * mixed EX describes no engine. */
#ifndef SX_MERGE_H
#define SX_MERGE_H

#include "common/error.h"
#include "common/results/figures.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t methods;
    size_t tasks;   /* per method: the denominator */
    size_t missing; /* (method, task, sample) units in no input */
} sx_merge_report_t;

/* What sx_merge's `allow` lets through (true is SX_MERGE_ALLOW_SUBSET). */
#define SX_MERGE_ALLOW_SUBSET 1u        /* --allow-subset */
#define SX_MERGE_ALLOW_MIXED_ENGINES 2u /* --allow-mixed-engines */

/* bootstrap: the merged summary.json's intervals (figures.h; {0}: none). */
int sx_merge(const char *bench_dir, const char *const *inputs, size_t input_count,
             const char *out_dir, unsigned allow, const sx_bootstrap_t *bootstrap,
             sx_merge_report_t *report, sx_error_t *err);

#endif
