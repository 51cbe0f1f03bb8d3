/* result.h: one task's outcome for one method, and the output files built
 * from them (docs/outputs.md): OUT/NAME/results.jsonl, OUT/NAME/submission.jsonl
 * and OUT/summary.json. The JSON field names live only in result.c, so they
 * can follow the official evaluator's exactly. Every writer here takes the
 * results of every task ID in task_ids.txt order: the denominator is never
 * anything else. With several samples per task (common/sample.h) a result is
 * one (task, sample) and a method's results run task by task, each task's n
 * samples in ascending order: n is 1 + the largest sample number among them. Files are
 * written to a temporary name, fsync'ed and renamed, so a crash never leaves a
 * half-written output. */
#ifndef SX_RESULT_H
#define SX_RESULT_H

#include "common/error.h"
#include "common/results/figures.h"
#include "common/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Seconds spent in each step of executing one task (docs/execution.md), as
 * the worker measured them; they travel with the result to the coordinator
 * and are kept in results.jsonl ("steps"). */
typedef struct {
    double prepare, replay, submit, run, materialize, score, cleanup;
} sx_timings_t;

/* The steps in the order they run, by index: their names as results.jsonl
 * writes them, and a pointer to each one's seconds. */
#define SX_STEP_COUNT 7
const char *sx_step_name(int step);
double *sx_step_slot(sx_timings_t *timings, int step);
double sx_step_seconds(const sx_timings_t *timings, int step);

/* The kinds of records in a sink changelog, as counted while it is
 * materialized (worker/exec/materialize.h says which record is which kind for
 * each sink.changelog), in the order results.jsonl writes them. */
typedef enum {
    SX_CHANGE_INSERT = 0,
    SX_CHANGE_UPDATE_BEFORE,
    SX_CHANGE_UPDATE_AFTER,
    SX_CHANGE_DELETE,
    SX_CHANGE_TOMBSTONE,
    SX_CHANGE_KINDS,
} sx_change_kind_t;

/* "insert", "update_before", "update_after", "delete", "tombstone". */
const char *sx_change_kind_name(sx_change_kind_t kind);

/* A task's changelog figures (results.jsonl "changelog"): its sink
 * changelog's records by kind and the rows of the final relation made from
 * it. known is false when no changelog was folded into a final CSV here
 * (the task did not run, its job did not finish, its changelog did not fold,
 * or its CSV came from the result cache): the field is then left out. */
typedef struct {
    bool known;
    uint64_t records[SX_CHANGE_KINDS];
    uint64_t rows;
} sx_changelog_counts_t;

typedef struct {
    char *task_id;
    int sample; /* which candidate of the task (0 when the method has one) */
    sx_status_t status;
    int score;    /* 1 for match, else 0: the frozen EX verdict */
    int strict;   /* the strict verdict beside it (common/ex/strict.h): 0|1, 0 unless
                     status is match or mismatch; sx_result_init sets 0 */
    char *detail; /* human-readable reason; may be empty, never NULL */
    int attempts;
    double seconds;
    char *worker;       /* who executed it ("" for score-only) */
    char *engine;       /* what computed it: the worker's engine, the first word of
                           its HELLO's runtime (e.g. "flink-2.2.1/kafka-connector-
                           5.0.0-2.2/kafka-3.9.1"); NULL or "" when no worker did */
    char *csv;          /* absolute path of the final CSV, or NULL */
    sx_timings_t steps; /* all 0: not executed (scored only, no prediction) */
    bool cached;        /* the final CSV came from the worker's result cache (scored
                           again, not executed); results.jsonl says so only when true */
    bool repeated;      /* --repeat compared its runs ("stable" is written) */
    bool unstable;      /* and some run gave another final relation */
    sx_changelog_counts_t changelog; /* known only for an executed task */
} sx_result_t;

/* Fills every field (copies the strings); score follows from status,
 * strict is 0 until the caller sets it. */
void sx_result_init(sx_result_t *result, const char *task_id, sx_status_t status,
                    const char *detail, const char *csv);
void sx_result_clear(sx_result_t *result);

/* One results.jsonl line (no newline) as a heap string, and back. Parsing
 * validates every field and names what is wrong. "sample" is written when
 * it is not 0 (sx_results_write writes it on every line of a method with
 * several samples); a line without it is sample 0. */
char *sx_result_to_json(const sx_result_t *result);
int sx_result_from_json(const char *line, sx_result_t *result, sx_error_t *err);

/* A whole results.jsonl (at most 1 GiB) into *results (*count of them;
 * heap: sx_results_free), every line checked as sx_result_from_json checks
 * it; an error names the file and line. Blank lines are skipped. */
int sx_results_read(const char *path, sx_result_t **results, size_t *count,
                    sx_error_t *err);
void sx_results_free(sx_result_t **results, size_t *count);

/* One submission.jsonl line, {"task_id": ID, "csv": PATH|null}, and back.
 * Parsing also takes the optional "sample" (common/sample.h: 0 when absent,
 * below max_samples) and rejects other fields, a missing csv field and wrong
 * types; *csv is NULL for null. Both strings are heap copies. */
char *sx_submission_entry_to_json(const char *task_id, const char *csv);
int sx_submission_entry_from_json(const char *line, int max_samples, char **task_id,
                                  int *sample, char **csv, sx_error_t *err);

/* How many tasks whose verdicts differ the printed summary names; the rest
 * are in results.jsonl (lines where "strict" differs from "score"). */
#define SX_SUMMARY_LISTED 20

/* One sample's tallies, of a method with several. */
typedef struct {
    size_t correct, strict_correct;
} sx_sample_tally_t;

/* Per-method tallies for summary.json and the printed EX lines. With n
 * samples, correct, strict_correct and the other counts are over every
 * (task, sample), and EX is correct / (total * n): the mean of the
 * samples' EX. */
typedef struct {
    char *method;
    size_t total;   /* the denominator: every task ID, or the --tasks subset */
    size_t samples; /* n: candidates per task (1, or 0 when unset: 1) */
    sx_sample_tally_t *per_sample; /* n entries when n > 1 (heap), else NULL */
    size_t bench_tasks;            /* set when total counts a --tasks subset: the bench's
                                      task IDs; 0 = total is every task ID */
    size_t correct;
    size_t by_status[SX_STATUS_COUNT];
    size_t strict_correct;
    size_t ex_not_strict; /* score 1, strict 0 */
    size_t strict_not_ex; /* score 0, strict 1 */
    size_t cached;        /* results served by a worker's result cache */
    size_t unstable;      /* --repeat: tasks whose runs gave different relations */
    size_t repeats;       /* --repeat N: N (0 = not repeated) */
    struct {
        char task_id[160]; /* "ID", or "ID sample K" with several samples */
        char detail[256];  /* says why the verdicts differ */
    } differing[SX_SUMMARY_LISTED];
    size_t listed;
    /* Per task ID, in the results' order (total entries, heap; NULL when
     * the summary was not tallied from results): how many of its samples
     * are right, frozen and strict. Their shares are the values the
     * statistics resample; the counts give pass@k. */
    unsigned *task_correct, *task_strict;
    /* The 95 % intervals of ex and ex_strict, once sx_summary_write has
     * computed them (has_ci: with --bootstrap B > 0 and tasks), and with
     * n > 1 samples pass@k for k = 1..n (heap, n entries). */
    bool has_ci;
    sx_stats_interval_t ex_ci, strict_ci;
    double *pass_at_k;
    /* maj@n (sx_summary_majority): the tasks whose majority relation's
     * sample is right. */
    bool has_majority;
    size_t maj_correct;
} sx_method_summary_t;

/* Writes OUT/NAME/results.jsonl and OUT/NAME/submission.jsonl from results
 * already in task_ids.txt order, and tallies them into *summary (whose
 * method, per_sample and per-task counts are heap copies:
 * sx_method_summary_clear). With n > 1 samples (results in task then sample
 * order, count = tasks * n, else an error), submission.jsonl is sample 0's
 * and OUT/NAME/samples/K/submission.jsonl is sample K's, for every K. */
int sx_results_write(const char *out_dir, const char *method, const sx_result_t *results,
                     size_t count, sx_method_summary_t *summary, sx_error_t *err);
/* What summary.json says about the run beside the tallies (its "run"
 * object), so that OUT alone is enough to write OUT/report.html again
 * (common/report/report.h). Every field may be unknown: NULL, 0. */
typedef struct {
    const char *command; /* "run", "coordinator", "score", "merge" */
    const char *bench;   /* the bench folder (made absolute when written) */
    size_t task_count;   /* IDs in task_ids.txt */
    const char *profile;
    /* Each method's input file: predictions (run, coordinator) or
     * submission (score); method_files[m] goes with method m of the
     * summaries (NULL = none, as after a merge). */
    const char *const *method_files;
    const char *inputs_kind;       /* "predictions" or "submission" */
    double started, ended;         /* Unix time in seconds */
    const char *bench_fingerprint; /* sx_bench_fingerprint of the bench */
    /* The workers whose results count and what each executes on (HELLO's
     * runtime): worker_runtimes[i] goes with worker_names[i]. */
    const char *const *worker_names;
    const char *const *worker_runtimes;
    size_t worker_count;
    /* The intervals' bootstrap ("bootstrap": {"resamples", "seed"}, said
     * only when resamples > 0); {0}: no intervals. */
    sx_bootstrap_t bootstrap;
    /* The engines that computed the results, "; "-joined, each once
     * (sx_engines_add); NULL when none did. */
    const char *engine;
} sx_run_info_t;

/* Adds engine (NULL or "": nothing) to joined, a heap string of engines
 * joined by "; " each once (NULL: none yet); returns the new string. */
char *sx_engines_add(char *joined, const char *engine);

/* Unix time now, in seconds with a fraction, for sx_run_info_t. */
double sx_run_clock(void);

/* Writes OUT/summary.json for all methods of the run; run (may be NULL)
 * becomes its "run" object. When their total counts a --tasks subset, a
 * top-level "subset" object says so (`merge` reads it). With run's
 * bootstrap, each method's ex_ci and ex_strict_ci are computed into its
 * summary (has_ci, for sx_summary_print) and written; "comparisons" holds
 * every pair of methods tallied from results (figures.h), EX and strict. */
int sx_summary_write(const char *out_dir, sx_method_summary_t *summaries, size_t count,
                     const sx_run_info_t *run, sx_error_t *err);
/* "NAME: EX = correct/total = 0.xxxx" (followed by " over a subset: N of M
 * task IDs (--tasks)" for a subset; with n samples, correct and total count
 * every (task, sample) and " (mean over n samples of T task IDs)" follows;
 * then ", 95% CI [low, high]" when the summary has its intervals), with n
 * samples a line per sample, "NAME: sample K: EX = c/T = 0.xxxx, strict EX =
 * s/T = 0.xxxx", and "NAME: pass@1 = x, ..., pass@n = y; maj@n = z"; then the
 * strict figure on a line of its own (with its interval), "NAME: N of M
 * results from the result cache ..." when any was, "NAME: N of M tasks not
 * stable over R runs: ID ..." after --repeat, then the tasks where the
 * verdicts differ, with the reason. */
void sx_summary_print(FILE *out, const sx_method_summary_t *summary);
void sx_method_summary_clear(sx_method_summary_t *summary);
/* maj@n of a method with n > 1 samples, from the results sx_results_write
 * took (task then sample) and ignore_order[t], task t's (common/ex/score.h
 * sx_task_ignores_order): per task the sample figures.h's
 * sx_majority_sample picks, its frozen verdict counted into maj_correct
 * (has_majority; summary.json's "maj_at_n" = maj_correct / total). Nothing
 * with one sample. -1 with err, naming the task, when a final CSV cannot be
 * read. */
int sx_summary_majority(sx_method_summary_t *summary, const sx_result_t *results,
                        size_t count, const bool *ignore_order, sx_error_t *err);

void sx_result_test(bool verbose);

#endif
